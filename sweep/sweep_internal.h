/*
 * sweep_internal.h - what sweep.c and sweep_defs.c share inside libksmsweep
 * and nobody outside needs: the one way they report an error.
 */
#ifndef KSMKIT_SWEEP_INTERNAL_H
#define KSMKIT_SWEEP_INTERNAL_H

#include <stddef.h>

#include "sweep.h"

/* Format a message into @err (@errlen bytes; nothing when 0); returns -1. */
int sweep_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The min, median and max of @v[0..n), NAN entries left out. Sorts @v. */
struct sweep_stat sweep_stat_of(double *v, unsigned n);

#endif
