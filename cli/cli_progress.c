/*
 * cli_progress.c - the simulator's progress line on a terminal: how far a run
 * is (setup, scans against scans = N, or simulated time against time = T),
 * its page writes against those the workload schedules, and an ETA from the
 * host time so far against that progress. Redrawn in place with \r at most
 * four times a second, erased at the end, never written when stderr is not a
 * terminal (so never mixed into --csv or --json output, which go to stdout).
 */
#include "cli_sim.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define FIRST_AFTER_S 0.5 /* short runs draw nothing */
#define EVERY_S 0.25

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/* "00:03:12", or "2d 01:00:00" beyond a day; "--:--:--" when unknown. */
static const char *clock_text(double s, char *buf, size_t len)
{
	unsigned long long t;

	if (!(s >= 0) || s > 1e9) {
		snprintf(buf, len, "--:--:--");
		return buf;
	}
	t = (unsigned long long)(s + 0.5);
	if (t >= 86400)
		snprintf(buf, len, "%llud %02llu:%02llu:%02llu", t / 86400, t / 3600 % 24,
			 t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%02llu:%02llu:%02llu", t / 3600, t / 60 % 60, t % 60);
	return buf;
}

static double clamp01(double f)
{
	return f < 0 ? 0 : f > 1 ? 1 : f;
}

void cli_progress_format(const char *what, const struct sim_progress *sp, double elapsed,
			 double run_elapsed, size_t width, char *buf, size_t len)
{
	char head[128], writes[64] = "", tail[64], a[32], b[32];
	double f, spent = sp->setup ? elapsed : run_elapsed;

	if (sp->setup) {
		f = sp->setup_total ? (double)sp->setup_pages / (double)sp->setup_total : 0;
		snprintf(head, sizeof(head), "ksmkit: %s: setting up, %llu of %llu pages", what,
			 (unsigned long long)sp->setup_pages, (unsigned long long)sp->setup_total);
	} else if (sp->stop_scans) {
		uint64_t denom = sp->last_scan_pages ? sp->last_scan_pages : sp->mergeable_pages;
		double part = denom && !sp->scan_ended ? (double)sp->scan_pages / (double)denom : 0;

		f = ((double)sp->scans + (part > 0.999 ? 0.999 : part)) / (double)sp->stop_scans;
		/* the scan under way (the first is scan 1) */
		snprintf(head, sizeof(head), "ksmkit: %s: scan %llu/%llu", what,
			 (unsigned long long)(sp->scans < sp->stop_scans ? sp->scans + 1 : sp->scans),
			 (unsigned long long)sp->stop_scans);
	} else {
		f = sp->stop_ns ? (double)sp->now_ns / (double)sp->stop_ns : 0;
		snprintf(head, sizeof(head), "ksmkit: %s: %s of %s simulated, scan %llu", what,
			 clock_text((double)sp->now_ns / 1e9, a, sizeof(a)),
			 clock_text((double)sp->stop_ns / 1e9, b, sizeof(b)),
			 (unsigned long long)sp->scans);
	}
	f = clamp01(f);
	if (!sp->setup && sp->planned_writes != SIM_WRITES_UNKNOWN && sp->planned_writes)
		snprintf(writes, sizeof(writes), ", %.3g of %.3g page writes", (double)sp->writes,
			 (double)sp->planned_writes);
	else if (!sp->setup && sp->planned_writes == SIM_WRITES_UNKNOWN)
		/* a continuous writer in a scans stop: extrapolate from the progress */
		snprintf(writes, sizeof(writes), ", %.3g page writes of ~%.3g",
			 (double)sp->writes, f > 0 ? (double)sp->writes / f : 0);
	/* before 1% the rate so far says little (setup starts by zeroing arrays) */
	snprintf(tail, sizeof(tail), ", %.0f%%, %s left", f * 100,
		 clock_text(f >= 0.01 ? spent * (1 - f) / f : -1, a, sizeof(a)));
	/* too wide for the terminal: the writes go first, then the head is cut */
	if (width && strlen(head) + strlen(writes) + strlen(tail) > width)
		writes[0] = '\0';
	if (width && strlen(head) + strlen(tail) > width)
		head[width > strlen(tail) ? width - strlen(tail) : 0] = '\0';
	snprintf(buf, len, "%s%s%s", head, writes, tail);
}

void cli_progress_init(struct cli_progress *p, const char *what, bool quiet)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->enabled = !quiet && isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &p->start);
}

void cli_progress_hook(void *arg, const struct sim_progress *sp, const struct sim *s)
{
	struct cli_progress *p = arg;
	struct winsize ws;
	char line[200];
	double t;
	int n;

	(void)s;
	if (!p->enabled)
		return;
	if (!sp->setup && p->run.tv_sec == 0 && p->run.tv_nsec == 0)
		clock_gettime(CLOCK_MONOTONIC, &p->run);
	t = since(&p->start);
	if (t < FIRST_AFTER_S || (p->width && t - p->last < EVERY_S))
		return;
	/* a line that wraps cannot be redrawn with \r: keep to the terminal's width */
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col < 2)
		ws.ws_col = 0;
	cli_progress_format(p->what, sp, t, sp->setup ? t : since(&p->run),
			    ws.ws_col ? (size_t)ws.ws_col - 1 : 0, line, sizeof(line));
	n = (int)strlen(line);
	fprintf(stderr, "\r%s%*s", line, p->width > n ? p->width - n : 0, "");
	fflush(stderr);
	p->width = n > p->width ? n : p->width;
	p->last = t;
}

void cli_progress_done(struct cli_progress *p)
{
	if (p->width)
		fprintf(stderr, "\r%*s\r", p->width, "");
	p->width = 0;
}
