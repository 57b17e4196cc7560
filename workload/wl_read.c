/*
 * wl_read.c - phase one of parsing a workload: its lines, read with bounds,
 * into raw sections and key = value pairs with their line numbers.
 *
 * Lines come from a buffer or from a stream read in chunks, each line at most
 * WL_MAX_RAW_LINE bytes and the whole input at most WL_MAX_FILE_BYTES, so a
 * huge line or an endless file (/dev/zero) is refused at its first line
 * without reading further. Each line is checked for bytes a line of text may
 * not hold (NUL, a byte order mark anywhere but at the start of the file, a
 * carriage return that does not end the line), cleaned of its comment and
 * outer blanks, checked for syntax, and handed to libinih, which splits the
 * key from the value (in an [expect] section the comparison operator of a
 * line, "pages_shared >= 1", is taken off first: inih knows only '='). Section headers are parsed here, because inih reports
 * no header without keys. Duplicate sections and keys are found through hash
 * indexes, and the text of keys and values goes into large blocks, so reading
 * is linear in the size of the input. The first problem ends reading.
 */
#include "wl_internal.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>

static const char *const section_kind_name[] = {
	[SEC_GLOBAL] = "global", [SEC_REGION] = "region",
	[SEC_WRITER] = "writer", [SEC_EVENT] = "event", [SEC_EXPECT] = "expect",
};

static const char utf8_bom[] = "\xef\xbb\xbf";

/* --- the text of keys and values ------------------------------------------ */

/* Strings are copied into blocks that never move: a block per 64 KiB. */
#define STRINGS_BLOCK 65536

struct wl_strings {
	struct wl_strings *next;
	size_t used;
	char text[STRINGS_BLOCK];
};

/* A copy of @s in @r's blocks, or NULL when out of memory. */
static const char *keep_string(struct reader *r, const char *s)
{
	size_t n = strlen(s) + 1;
	struct wl_strings *b = r->strings;

	if (n > STRINGS_BLOCK)
		return NULL; /* lines are far shorter */
	if (!b || b->used + n > STRINGS_BLOCK) {
		b = malloc(sizeof(*b));
		if (!b)
			return NULL;
		b->next = r->strings;
		b->used = 0;
		r->strings = b;
	}
	memcpy(b->text + b->used, s, n);
	b->used += n;
	return b->text + b->used - n;
}

/* --- sources of lines --------------------------------------------------------- */

/* A stream is read this many bytes at a time (more than a line's bound). */
#define CHUNK_BYTES 65536

void wl_source_buffer(struct wl_source *src, const char *text, size_t len)
{
	memset(src, 0, sizeof(*src));
	src->text = text;
	src->len = len;
	src->at_eof = true;
}

void wl_source_stream(struct wl_source *src, FILE *stream)
{
	memset(src, 0, sizeof(*src));
	src->stream = stream;
}

/*
 * Make sure the unread bytes hold a newline or at least @want bytes, unless
 * the stream ends first: move what is left to the front of the chunk and read
 * more after it. Returns 0, or -1 on a read error (errno says which).
 */
static int fill_source(struct wl_source *src, size_t want)
{
	if (!src->chunk) {
		src->chunk = malloc(CHUNK_BYTES);
		if (!src->chunk)
			return -1;
		src->text = src->chunk;
	}
	while (!src->at_eof && src->len - src->pos < want &&
	       !memchr(src->text + src->pos, '\n', src->len - src->pos)) {
		size_t got;

		memmove(src->chunk, src->chunk + src->pos, src->len - src->pos);
		src->len -= src->pos;
		src->pos = 0;
		got = fread(src->chunk + src->len, 1, CHUNK_BYTES - src->len, src->stream);
		src->len += got;
		if (got == 0) {
			if (ferror(src->stream))
				return -1;
			src->at_eof = true;
		}
	}
	return 0;
}

/* One raw line: its bytes without the newline, and whether it was cut short. */
struct raw_line {
	const char *text;
	size_t len;
	bool too_long; /* no newline within WL_MAX_RAW_LINE + 1 bytes */
};

/*
 * The next line of @src. Returns 1 and fills @line, 0 at the end of the
 * input, -1 on a read error. A line longer than the bound is returned cut to
 * WL_MAX_RAW_LINE + 1 bytes with too_long set; reading should stop there.
 */
static int next_line(struct wl_source *src, struct raw_line *line)
{
	const size_t bound = WL_MAX_RAW_LINE + 1;
	const char *start, *nl;
	size_t avail;

	if (src->stream && fill_source(src, bound) != 0)
		return -1;
	if (src->pos >= src->len)
		return 0;
	start = src->text + src->pos;
	avail = src->len - src->pos;
	nl = memchr(start, '\n', avail < bound ? avail : bound);
	line->text = start;
	line->too_long = false;
	if (nl) {
		line->len = (size_t)(nl - start);
		src->pos += line->len + 1;
	} else if (avail <= WL_MAX_RAW_LINE) {
		line->len = avail; /* the last line, without a newline */
		src->pos += avail;
	} else {
		line->len = bound;
		line->too_long = true;
		src->pos += bound;
	}
	src->consumed += line->len + (nl != NULL);
	return 1;
}

/* --- checks of one line ---------------------------------------------------- */

void wl_strip_comment(char *s)
{
	for (char *p = s; *p; p++)
		if ((*p == '#' || *p == ';') && (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
}

void wl_trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
}

/* Whether the @n bytes at @s hold a UTF-8 byte order mark. */
static bool has_bom(const char *s, size_t n)
{
	for (size_t i = 0; i + 3 <= n; i++)
		if (s[i] == utf8_bom[0] && memcmp(s + i, utf8_bom, 3) == 0)
			return true;
	return false;
}

/*
 * Refuse bytes no line of a workload may hold, in the order they matter to a
 * reader: NUL (not a text file), a byte order mark after the file's start
 * (files pasted together), a carriage return that is not the last byte (old
 * Mac line ends), then the length. Returns 0 or -1 (recorded).
 */
static int check_raw_line(struct reader *r, const struct raw_line *line, size_t skip)
{
	const char *s = line->text + skip;
	size_t n = line->len - skip;
	const char *cr;

	if (memchr(s, '\0', n)) {
		wl_fail(r->ctx, r->line, "NUL byte in line");
		return -1;
	}
	if (has_bom(s, n)) {
		wl_fail(r->ctx, r->line, "a UTF-8 byte order mark (BOM) in the middle of the file "
			"(one is allowed only as the file's first bytes)");
		return -1;
	}
	cr = memchr(s, '\r', n);
	if (cr && (line->too_long || cr != s + n - 1)) {
		wl_fail(r->ctx, r->line, "carriage return (\\r) inside a line: lines must end in "
			"\\n or \\r\\n (is this a file with old Mac line ends?)");
		return -1;
	}
	if (line->too_long || n > WL_MAX_RAW_LINE) {
		wl_fail(r->ctx, r->line, "line too long (at most %d characters)", WL_MAX_LINE);
		return -1;
	}
	return 0;
}

/* --- sections and keys ------------------------------------------------------ */

struct section_key {
	enum section_kind kind;
	const char *name;
};

static bool same_section(const void *ctx, size_t pos, const void *key)
{
	const struct reader *r = ctx;
	const struct section_key *k = key;

	return r->sec[pos].kind == k->kind && strcmp(r->sec[pos].name, k->name) == 0;
}

/* A key of the current section, with its comparison: an [expect] section may
 * bound one counter from both sides (pages_shared >= 1, pages_shared <= 5). */
struct key_op {
	const char *key, *op;
};

static bool same_key(const void *ctx, size_t pos, const void *key)
{
	const struct reader *r = ctx;
	const struct key_op *k = key;

	/* keys are indexed per section: only the current one is looked in */
	return pos >= r->sec[r->nsec - 1].first_kv && strcmp(r->kv[pos].key, k->key) == 0 &&
	       strcmp(r->kv[pos].op, k->op) == 0;
}

/*
 * @array (of *@cap elements, @count used) with room for one more: the same,
 * or moved and doubled. NULL when out of memory (@array is left as it was).
 */
static void *reserve(void *array, size_t *cap, size_t count, size_t size)
{
	size_t want = *cap ? 2 * *cap : 16;
	void *grown;

	if (count < *cap)
		return array;
	grown = realloc(array, want * size);
	if (grown)
		*cap = want;
	return grown;
}

static int add_section(struct reader *r, enum section_kind kind, const char *name)
{
	struct section_key key = { kind, name };
	uint32_t hash = wl_index_hash(kind, name);
	long old = wl_index_find(&r->sections, hash, same_section, r, &key);
	struct raw_section *sec;

	if (old >= 0) {
		wl_fail(r->ctx, r->line, "duplicate section %s (first at line %u)", r->sec[old].title,
			r->sec[old].line);
		return -1;
	}
	sec = reserve(r->sec, &r->sec_cap, r->nsec, sizeof(*r->sec));
	if (!sec || wl_index_add(&r->sections, hash, r->nsec) != 0) {
		wl_fail(r->ctx, r->line, "out of memory");
		return -1;
	}
	r->sec = sec;
	sec = &r->sec[r->nsec++];
	memset(sec, 0, sizeof(*sec));
	sec->kind = kind;
	sec->line = r->line;
	sec->first_kv = r->nkv;
	snprintf(sec->name, sizeof(sec->name), "%s", name);
	if (kind == SEC_GLOBAL)
		snprintf(sec->title, sizeof(sec->title), "[global]");
	else
		snprintf(sec->title, sizeof(sec->title), "[%s %s]", section_kind_name[kind], name);
	r->in_section = true;
	return 0;
}

/* "[KIND NAME]" without its brackets, trimmed. */
static int parse_section_title(struct reader *r, const char *inner)
{
	char kind[16] = "", why[128];
	const char *name;
	size_t klen = strcspn(inner, " \t");
	int k;

	if (klen < sizeof(kind))
		memcpy(kind, inner, klen);
	for (k = SEC_GLOBAL; k <= SEC_EXPECT; k++)
		if (strcmp(kind, section_kind_name[k]) == 0)
			break;
	if (k > SEC_EXPECT) {
		wl_fail(r->ctx, r->line, "unknown section [%s] (expected [global], [region NAME], "
			"[writer NAME], [event NAME] or [expect NAME])", inner);
		return -1;
	}
	name = inner + klen;
	while (isspace((unsigned char)*name))
		name++;
	if (k == SEC_GLOBAL && *name) {
		wl_fail(r->ctx, r->line, "[global] takes no name");
		return -1;
	}
	if (k != SEC_GLOBAL && wl_parse_name(name, why, sizeof(why)) != 0) {
		wl_fail(r->ctx, r->line, "[%s%s%s]: %s", section_kind_name[k], *name ? " " : "",
			name, why);
		return -1;
	}
	return add_section(r, (enum section_kind)k, name);
}

/* A cleaned line starting with '[': the header must end at its ']'. */
static int read_section_header(struct reader *r, const char *line)
{
	const char *close = strchr(line, ']');
	char inner[WL_MAX_LINE + 1];
	size_t n;

	if (!close) {
		wl_fail(r->ctx, r->line, "section header without closing ']'");
		return -1;
	}
	if (close[1] != '\0') {
		wl_fail(r->ctx, r->line, "unexpected text after ']' in section header");
		return -1;
	}
	n = (size_t)(close - line - 1);
	memcpy(inner, line + 1, n);
	inner[n] = '\0';
	wl_trim(inner);
	return parse_section_title(r, inner);
}

/* inih's handler: one key = value of the current section. */
static int add_key(void *user, const char *section, const char *key, const char *value)
{
	struct reader *r = user;
	uint32_t hash;
	long old;
	struct raw_kv *kv;

	(void)section; /* sections are tracked by read_section_header() */
	if (r->ctx->failed)
		return 1;
	if (!r->in_section) {
		wl_fail(r->ctx, r->line, "'%s' is outside any section (start with [global])", key);
		return 1;
	}
	/* the operator is part of the key: "=" everywhere but in [expect] */
	hash = wl_index_hash(r->nsec, key) ^ wl_index_hash(0, r->op);
	old = wl_index_find(&r->keys, hash, same_key, r, &(struct key_op){ key, r->op });
	if (old >= 0) {
		if (strcmp(r->op, "=") == 0)
			wl_fail(r->ctx, r->line, "duplicate key '%s' in %s (first at line %u)", key,
				r->sec[r->nsec - 1].title, r->kv[old].line);
		else
			wl_fail(r->ctx, r->line, "duplicate check '%s %s' in %s (first at line %u)",
				key, r->op, r->sec[r->nsec - 1].title, r->kv[old].line);
		return 1;
	}
	kv = reserve(r->kv, &r->kv_cap, r->nkv, sizeof(*r->kv));
	if (!kv || wl_index_add(&r->keys, hash, r->nkv) != 0) {
		wl_fail(r->ctx, r->line, "out of memory");
		return 1;
	}
	r->kv = kv;
	kv = &r->kv[r->nkv];
	kv->key = keep_string(r, key);
	kv->value = keep_string(r, value);
	kv->line = r->line;
	memcpy(kv->op, r->op, sizeof(kv->op));
	if (!kv->key || !kv->value) {
		wl_fail(r->ctx, r->line, "out of memory");
		return 1;
	}
	r->nkv++;
	r->sec[r->nsec - 1].nkv++;
	return 1;
}

static bool in_expect_section(const struct reader *r)
{
	return r->in_section && r->nsec && r->sec[r->nsec - 1].kind == SEC_EXPECT;
}

/*
 * An [expect] line compares: KEY = V, KEY != V, KEY < V, KEY <= V, KEY > V,
 * KEY >= V (or KEY: V). Take the operator off @line into r->op and leave
 * "KEY=V" for inih. 0, or -1 for a '!' that is not "!=".
 */
static int split_comparison(struct reader *r, char *line)
{
	size_t k = strcspn(line, "=:<>!"), oplen = 1;
	char key[WL_MAX_LINE + 1], *value;

	if (!line[k] || line[k] == '=' || line[k] == ':')
		return 0;
	if (line[k] == '!' && line[k + 1] != '=') {
		wl_fail(r->ctx, r->line, "expected a comparison: =, !=, <, <=, > or >=");
		return -1;
	}
	if (line[k + 1] == '=')
		oplen = 2;
	memcpy(r->op, line + k, oplen);
	r->op[oplen] = '\0';
	memcpy(key, line, k);
	key[k] = '\0';
	wl_trim(key);
	value = line + k + oplen;
	while (isspace((unsigned char)*value))
		value++;
	memmove(line + strlen(key) + 1, value, strlen(value) + 1);
	memcpy(line, key, strlen(key));
	line[strlen(key)] = '=';
	return 0;
}

/*
 * Turn the raw line into what inih sees (no BOM, CR, comment or outer
 * blanks) in @out, checking it on the way; headers are read here. Returns
 * 0, or -1 with the problem recorded.
 */
static int clean_line(struct reader *r, const struct raw_line *line, char *out)
{
	size_t skip = 0, n;

	if (r->line == 1 && line->len >= 3 && memcmp(line->text, utf8_bom, 3) == 0)
		skip = 3; /* the one BOM allowed */
	if (check_raw_line(r, line, skip) != 0)
		return -1;
	n = line->len - skip;
	memcpy(out, line->text + skip, n);
	out[n] = '\0';
	if (n && out[n - 1] == '\r')
		out[n - 1] = '\0';
	wl_strip_comment(out);
	wl_trim(out);
	if (strlen(out) > WL_MAX_LINE) {
		wl_fail(r->ctx, r->line, "line too long (at most %d characters)", WL_MAX_LINE);
		return -1;
	}
	snprintf(r->op, sizeof(r->op), "=");
	if (out[0] == '[')
		return read_section_header(r, out);
	if (in_expect_section(r) && split_comparison(r, out) != 0)
		return -1;
	if (out[0] && !strpbrk(out, "=:")) {
		wl_fail(r->ctx, r->line, "expected 'key = value' or '[section]'");
		return -1;
	}
	return 0;
}

/*
 * inih's fgets-style reader: hands over one checked, cleaned line at a time,
 * and ends the input at the first problem.
 */
static char *feed_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	char line[WL_MAX_RAW_LINE + 2];
	struct raw_line raw;
	int got;

	if (r->ctx->failed)
		return NULL;
	got = next_line(r->src, &raw);
	if (got < 0) {
		wl_fail(r->ctx, 0, "cannot read: %s", strerror(errno));
		return NULL;
	}
	if (got == 0)
		return NULL;
	r->line++;
	if (r->src->consumed > WL_MAX_FILE_BYTES) {
		wl_fail(r->ctx, r->line, "the file is larger than %llu MiB, the limit for a "
			"workload", (unsigned long long)(WL_MAX_FILE_BYTES >> 20));
		return NULL;
	}
	if (clean_line(r, &raw, line) != 0)
		return NULL;
	snprintf(str, (size_t)num, "%s\n", line);
	return str;
}

/* Point every section at its keys, now that the key array stopped moving. */
static void attach_keys(struct reader *r)
{
	for (size_t i = 0; i < r->nsec; i++)
		r->sec[i].kv = r->sec[i].nkv ? r->kv + r->sec[i].first_kv : NULL;
}

int wl_read(struct reader *r, struct wl_source *src)
{
	int rc;

	r->src = src;
	rc = ini_parse_stream(feed_line, r, add_key, r);
	/* feed_line() reports every syntax error inih would, and first */
	if (rc > 0)
		wl_fail(r->ctx, (unsigned)rc, "expected 'key = value' or '[section]'");
	else if (rc < 0)
		wl_fail(r->ctx, 0, "out of memory");
	free(src->chunk);
	src->chunk = NULL;
	src->text = NULL;
	attach_keys(r);
	return r->ctx->failed ? -1 : 0;
}

void wl_read_free(struct reader *r)
{
	while (r->strings) {
		struct wl_strings *next = r->strings->next;

		free(r->strings);
		r->strings = next;
	}
	free(r->sec);
	free(r->kv);
	wl_index_free(&r->sections);
	wl_index_free(&r->keys);
}
