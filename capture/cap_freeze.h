/*
 * cap_freeze.h - stopping every thread of a process while its snapshot is
 * taken (--consistent), inside libksmcapture. cap_freeze stops them all or
 * none (it thaws what it stopped when it fails); cap_thaw lets them run as
 * they were. Between the two the caller must not wait for the process's
 * children itself: the threads' stops are waited for here (a leader that
 * died meanwhile was reaped here when it is the caller's child: its wait
 * status is in leader_status).
 */
#ifndef KSMKIT_CAP_FREEZE_H
#define KSMKIT_CAP_FREEZE_H

#include "cap_internal.h"

struct cap_freeze_thread {
	pid_t tid, leader;
	int signal;        /* a signal it stopped with, given back at the detach */
	bool gone;         /* it exited while being stopped */
	int leader_status; /* the leader's wait status when it was reaped here, else -1 */
};

struct cap_freeze {
	pid_t pid;
	struct cap_freeze_thread *thread;
	size_t n, cap;
	int leader_status; /* the process's wait status if reaped while stopping it, else -1 */
};

/* Stop every thread of @pid. 0, or -1 (nothing left stopped) with the reason. */
int cap_freeze(pid_t pid, struct cap_freeze *f, struct cap_error *err);

/* Let every thread cap_freeze stopped run again. */
void cap_thaw(struct cap_freeze *f);

#endif
