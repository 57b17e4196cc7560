/*
 * wl_message.c - the parser's error messages: recording the first one, making
 * the input they quote safe to print, "did you mean?" for a mistyped key, and
 * the list of choices a key accepts ("checksum, dirty or hybrid").
 *
 * A message quotes the input (a value, a section header, a key) and goes to a
 * terminal, so every byte a terminal would act on is escaped as \xNN: C0 and
 * C1 control characters, DEL, and anything that is not valid UTF-8. Text in
 * other languages passes unchanged. Suggestions use the optimal string
 * alignment distance (Levenshtein with swaps of neighbours), computed only
 * between short words, so they cost nothing measurable.
 */
#include "wl_internal.h"

#include <stdarg.h>
#include <string.h>

void wl_fail(struct wl_ctx *ctx, unsigned line, const char *fmt, ...)
{
	char msg[512], text[1024];
	va_list ap;

	if (ctx->failed)
		return;
	ctx->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->err->line = line;
	if (line)
		snprintf(text, sizeof(text), "%s:%u: %s", ctx->wl->path, line, msg);
	else
		snprintf(text, sizeof(text), "%s: %s", ctx->wl->path, msg);
	wl_escape(ctx->err->text, sizeof(ctx->err->text), text);
}

/* --- escaping ----------------------------------------------------------------- */

static bool is_continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/*
 * Length of the valid UTF-8 character at @s that a terminal prints as text
 * (not a control), or 0 for a byte to escape.
 */
static size_t printable_char_length(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf; /* bounds of the second byte */

	if (c < 0x80)
		return c >= 0x20 && c != 0x7f;
	if (c == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 0; /* a C1 control, U+0080 to U+009F */
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* no overlong forms */
		if (c == 0xed)
			hi = 0x9f; /* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f; /* nothing above U+10FFFF */
	} else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (!is_continuation(s[i]))
			return 0; /* also stops at the terminating NUL */
	return n;
}

void wl_escape(char *dst, size_t cap, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t used = 0;

	while (*s) {
		size_t n = printable_char_length(s);

		if (n) {
			if (used + n >= cap)
				break;
			memcpy(dst + used, s, n);
			used += n;
			s += n;
			continue;
		}
		if (used + 4 >= cap)
			break;
		dst[used++] = '\\';
		dst[used++] = 'x';
		dst[used++] = hex[*s >> 4];
		dst[used++] = hex[*s & 15];
		s++;
	}
	dst[used] = '\0';
}

/* --- did you mean? ---------------------------------------------------------- */

/* Words longer than this are never typos of a key worth suggesting. */
#define SUGGEST_MAX 64

/* Optimal string alignment distance between @a and @b (both <= SUGGEST_MAX). */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned d[SUGGEST_MAX + 1][SUGGEST_MAX + 1];

	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned best = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

void wl_suggest_init(struct wl_suggest *s, const char *typed)
{
	s->typed = typed;
	s->best = NULL;
	s->distance = ~0u;
}

void wl_suggest_consider(struct wl_suggest *s, const char *word)
{
	unsigned d;

	if (strlen(s->typed) > SUGGEST_MAX || strlen(word) > SUGGEST_MAX)
		return;
	d = edit_distance(s->typed, word);
	if (d < s->distance) {
		s->distance = d;
		s->best = word;
	}
}

const char *wl_suggest_result(const struct wl_suggest *s)
{
	unsigned allowed = strlen(s->typed) >= 5 ? 2 : 1;

	return s->best && s->distance > 0 && s->distance <= allowed ? s->best : NULL;
}

/* --- listing the choices ------------------------------------------------------ */

const char *wl_choices_text(const char *const *names, char *buf, size_t len)
{
	size_t n = 0, at = 0;

	while (names[n])
		n++;
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
		int w = snprintf(buf + at, len - at, "%s%s", sep, names[i]);

		at = w < 0 ? len : at + (size_t)w;
	}
	return buf;
}
