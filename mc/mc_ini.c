/*
 * mc_ini.c - reading a model-checker configuration into raw sections with
 * libinih, the way workload/workload.c reads workloads: a line reader feeds
 * inih one cleaned line at a time (no BOM, CR, inline comment or outer
 * blanks), counts lines, and notes section headers itself (inih reports none
 * without keys); inih splits keys from values. Duplicates and syntax errors
 * are refused with the file and line. Interpretation is in mc_config.c.
 */
#include "mc_ini.h"
#include "workload.h"

#include <ctype.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MC_MAX_LINE 197 /* as the workload language */

struct reader {
	const char *text;
	size_t len, pos;
	unsigned line;
	struct mc_ini *ini;
	struct mc_error *err;
	bool failed;
};

int mc_fail(struct mc_error *err, const char *path, unsigned line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err->line = line;
	if (line)
		snprintf(err->text, sizeof(err->text), "%s:%u: %s", path, line, msg);
	else
		snprintf(err->text, sizeof(err->text), "%s: %s", path, msg);
	return -1;
}

static void fail(struct reader *r, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct reader *r, unsigned line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mc_fail(r->err, r->ini->path, line, "%s", msg);
}

static int add_section(struct reader *r, const char *inner)
{
	struct mc_ini *ini = r->ini;
	struct mc_ini_section *grown, *sec;
	size_t klen = strcspn(inner, " \t");
	const char *name = inner + klen;

	while (isspace((unsigned char)*name))
		name++;
	if (klen == 0 || klen >= sizeof(sec->kind) || strlen(name) >= sizeof(sec->name)) {
		fail(r, r->line, "bad section header [%s]", inner);
		return -1;
	}
	for (size_t i = 0; i < ini->nsec; i++)
		if (strncmp(ini->sec[i].kind, inner, klen) == 0 && ini->sec[i].kind[klen] == '\0' &&
		    strcmp(ini->sec[i].name, name) == 0) {
			fail(r, r->line, "duplicate section %s (first at line %u)", ini->sec[i].title,
			     ini->sec[i].line);
			return -1;
		}
	grown = realloc(ini->sec, (ini->nsec + 1) * sizeof(*grown));
	if (!grown) {
		fail(r, r->line, "%s", "out of memory");
		return -1;
	}
	ini->sec = grown;
	sec = &ini->sec[ini->nsec++];
	memset(sec, 0, sizeof(*sec));
	memcpy(sec->kind, inner, klen);
	snprintf(sec->name, sizeof(sec->name), "%s", name);
	snprintf(sec->title, sizeof(sec->title), "[%s%s%s]", sec->kind, *name ? " " : "", name);
	sec->line = r->line;
	return 0;
}

static void note_header(struct reader *r, const char *line)
{
	const char *close = strchr(line, ']');
	char inner[MC_MAX_LINE + 1];
	size_t n;

	if (!close)
		return; /* inih reports it */
	if (close[1] != '\0') {
		fail(r, r->line, "%s", "unexpected text after ']' in section header");
		return;
	}
	n = (size_t)(close - line - 1);
	memcpy(inner, line + 1, n);
	inner[n] = '\0';
	wl_trim(inner);
	add_section(r, inner);
}

static char *feed_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	char line[4 * MC_MAX_LINE + 1];
	size_t start = r->pos, n;

	if (r->pos >= r->len)
		return NULL;
	while (r->pos < r->len && r->text[r->pos] != '\n')
		r->pos++;
	n = r->pos - start;
	if (r->pos < r->len)
		r->pos++;
	r->line++;
	if (memchr(r->text + start, '\0', n))
		fail(r, r->line, "%s", "NUL byte in line");
	if (n >= sizeof(line)) {
		fail(r, r->line, "line too long (at most %d characters)", MC_MAX_LINE);
		n = 0;
	}
	memcpy(line, r->text + start, n);
	line[n] = '\0';
	if (r->line == 1 && strncmp(line, "\xef\xbb\xbf", 3) == 0)
		memmove(line, line + 3, strlen(line + 3) + 1);
	n = strlen(line);
	if (n && line[n - 1] == '\r')
		line[n - 1] = '\0';
	wl_strip_comment(line);
	wl_trim(line);
	if (strlen(line) > MC_MAX_LINE) {
		fail(r, r->line, "line too long (at most %d characters)", MC_MAX_LINE);
		line[0] = '\0';
	}
	if (line[0] == '[')
		note_header(r, line);
	snprintf(str, (size_t)num, "%s\n", line);
	return str;
}

static int add_key(void *user, const char *section, const char *key, const char *value)
{
	struct reader *r = user;
	struct mc_ini_section *sec;
	struct mc_ini_kv *grown;

	(void)section;
	if (r->failed)
		return 1;
	if (!r->ini->nsec) {
		fail(r, r->line, "'%s' is outside any section (start with [check])", key);
		return 1;
	}
	sec = &r->ini->sec[r->ini->nsec - 1];
	for (size_t i = 0; i < sec->nkv; i++)
		if (strcmp(sec->kv[i].key, key) == 0) {
			fail(r, r->line, "duplicate key '%s' in %s (first at line %u)", key, sec->title,
			     sec->kv[i].line);
			return 1;
		}
	grown = realloc(sec->kv, (sec->nkv + 1) * sizeof(*grown));
	if (!grown) {
		fail(r, r->line, "%s", "out of memory");
		return 1;
	}
	sec->kv = grown;
	grown[sec->nkv] = (struct mc_ini_kv){ strdup(key), strdup(value), r->line, false };
	if (!grown[sec->nkv].key || !grown[sec->nkv].value)
		fail(r, r->line, "%s", "out of memory");
	sec->nkv++;
	return 1;
}

int mc_ini_read(const char *text, size_t len, const char *path, struct mc_ini *out,
		struct mc_error *err)
{
	struct reader r = { .text = text, .len = len, .ini = out, .err = err };
	int rc;

	memset(out, 0, sizeof(*out));
	out->path = path;
	rc = ini_parse_stream(feed_line, &r, add_key, &r);
	if (rc > 0 && !r.failed)
		fail(&r, (unsigned)rc, "%s", "expected 'key = value' or '[section]'");
	else if (rc < 0 && !r.failed)
		fail(&r, 0, "%s", "out of memory");
	if (r.failed) {
		mc_ini_free(out);
		out->path = path;
		return -1;
	}
	return 0;
}

void mc_ini_free(struct mc_ini *ini)
{
	for (size_t i = 0; i < ini->nsec; i++) {
		for (size_t j = 0; j < ini->sec[i].nkv; j++) {
			free(ini->sec[i].kv[j].key);
			free(ini->sec[i].kv[j].value);
		}
		free(ini->sec[i].kv);
	}
	free(ini->sec);
	memset(ini, 0, sizeof(*ini));
}
