/*
 * mc_ini.h - configuration files as raw sections: every [section] header and
 * key = value pair with its line number, read strictly through libinih in
 * the workload language's style (docs/workload.md, "File syntax"). What the
 * keys mean is mc_config.c's business. Not installed.
 */
#ifndef KSMKIT_MC_INI_H
#define KSMKIT_MC_INI_H

#include <stdbool.h>
#include <stddef.h>

#include "mc.h"

struct mc_ini_kv {
	char *key, *value;
	unsigned line;
	bool used;          /* set by the interpreter: unknown keys are the rest */
};

struct mc_ini_section {
	char kind[16];      /* "check", "region" */
	char name[64];      /* "" for [check] */
	char title[96];     /* "[region a]", for messages */
	unsigned line;
	struct mc_ini_kv *kv;
	size_t nkv;
};

struct mc_ini {
	const char *path;   /* for messages */
	struct mc_ini_section *sec;
	size_t nsec;
};

/*
 * Split @len bytes of @text into sections. Syntax errors (a key outside a
 * section, a header without ']', a duplicate key or section, an over-long
 * line, a NUL byte) fail with "PATH:LINE: message" in @err.
 */
int mc_ini_read(const char *text, size_t len, const char *path, struct mc_ini *out,
		struct mc_error *err);
void mc_ini_free(struct mc_ini *ini);

/* Record "PATH:LINE: message" (line 0: "PATH: message"); returns -1. */
int mc_fail(struct mc_error *err, const char *path, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
