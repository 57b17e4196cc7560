/*
 * sweep_internal.h - what sweep.c and sweep_defs.c share inside libksmsweep
 * and nobody outside needs: the one way they report an error.
 */
#ifndef KSMKIT_SWEEP_INTERNAL_H
#define KSMKIT_SWEEP_INTERNAL_H

#include <stddef.h>

/* Format a message into @err (@errlen bytes; nothing when 0); returns -1. */
int sweep_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
