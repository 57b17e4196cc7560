/*
 * wl_values.c - the workload language's value syntax: numbers, sizes, times,
 * KSM knob values (as the kernel accepts them) and the rules between knobs
 * that every reader of them shares (wl_knobs_check), page selections, offsets,
 * content values, group lists; their canonical text; and the helpers both
 * engines use to walk a page selection identically.
 *
 * Every parser takes the whole text (after inih trimmed it) and rejects
 * trailing garbage, overflow and empty input, saying what it expected.
 */
#include "wl_internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int why_set(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int why_set(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Parse leading digits of @text (decimal, or hex after 0x unless
 * @decimal_only); *end points past them, overflow or not. -1: no digits,
 * -2: more than 64 bits (*value is then meaningless).
 */
static int parse_digits(const char *text, bool decimal_only, uint64_t *value, const char **end)
{
	int base = 10, rc = 0;
	const char *p = text;
	uint64_t v = 0;

	if (!decimal_only && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    isxdigit((unsigned char)p[2])) {
		base = 16;
		p += 2;
	}
	if (!(base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)))
		return -1;
	for (; base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p); p++) {
		unsigned d = isdigit((unsigned char)*p) ? (unsigned)(*p - '0')
							: (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		if (v > (UINT64_MAX - d) / (uint64_t)base)
			rc = -2;
		v = v * (uint64_t)base + d;
	}
	*value = v;
	*end = p;
	return rc;
}

static int parse_u64_prefix(const char *text, uint64_t *value, const char **end)
{
	return parse_digits(text, false, value, end);
}

/* Turn -1 (not a number) and -2 (too large) into -1 with errno EINVAL or ERANGE. */
static int fail_errno(int rc)
{
	errno = rc == -2 ? ERANGE : EINVAL;
	return -1;
}

int wl_parse_u64(const char *text, uint64_t *value)
{
	const char *end;
	int rc = parse_u64_prefix(text, value, &end);

	if (rc == -1 || *end != '\0')
		return fail_errno(-1);
	return rc ? fail_errno(rc) : 0;
}

int wl_parse_u64_max(const char *text, uint64_t max, uint64_t *value, char *why, size_t whylen)
{
	if (wl_parse_u64(text, value) != 0)
		return errno == ERANGE ? wl_too_large(why, whylen, max, "") : -1;
	if (*value > max)
		return wl_too_large(why, whylen, max, "");
	return 0;
}

int wl_too_large(char *why, size_t whylen, uint64_t max, const char *unit)
{
	why_set(why, whylen, "too large (at most %llu%s)", (unsigned long long)max, unit);
	return -2;
}

struct unit {
	const char *suffix;
	uint64_t factor;
};

/*
 * Parse NUMBER[SUFFIX] with a case-insensitive suffix from @units into
 * NUMBER * factor, at most @max. 0, -1 (not such a number), or -2 (more than
 * @max: @why says the most there can be, in the unit @text used).
 */
static int parse_with_units(const char *text, const struct unit *units, uint64_t max,
			    uint64_t *out, char *why, size_t whylen)
{
	const char *end;
	uint64_t n;
	int rc = parse_u64_prefix(text, &n, &end);

	if (rc == -1)
		return -1;
	for (const struct unit *u = units; u->suffix; u++) {
		if (strcasecmp(end, u->suffix) != 0)
			continue;
		if (rc == -2 || n > max / u->factor)
			return wl_too_large(why, whylen, max / u->factor, end);
		*out = n * u->factor;
		return 0;
	}
	return -1;
}

static const struct unit size_units[] = {
	{ "", 1 }, { "b", 1 },
	{ "k", UINT64_C(1) << 10 }, { "kb", UINT64_C(1) << 10 }, { "kib", UINT64_C(1) << 10 },
	{ "m", UINT64_C(1) << 20 }, { "mb", UINT64_C(1) << 20 }, { "mib", UINT64_C(1) << 20 },
	{ "g", UINT64_C(1) << 30 }, { "gb", UINT64_C(1) << 30 }, { "gib", UINT64_C(1) << 30 },
	{ "t", UINT64_C(1) << 40 }, { "tb", UINT64_C(1) << 40 }, { "tib", UINT64_C(1) << 40 },
	{ NULL, 0 }
};

int wl_parse_size_max(const char *text, uint64_t max, uint64_t *bytes, char *why, size_t whylen)
{
	return parse_with_units(text, size_units, max, bytes, why, whylen);
}

int wl_parse_size(const char *text, uint64_t *bytes)
{
	char why[64];
	int rc = wl_parse_size_max(text, UINT64_MAX, bytes, why, sizeof(why));

	return rc ? fail_errno(rc) : 0;
}

const char *wl_bytes_text(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	size_t u = 0;

	if (bytes == UINT64_MAX)
		return snprintf(buf, len, "more than 16 EiB"), buf;
	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

#define NS_PER_US UINT64_C(1000)
#define NS_PER_MS UINT64_C(1000000)
#define NS_PER_S UINT64_C(1000000000)

static const struct unit time_units[] = {
	{ "", NS_PER_S }, { "s", NS_PER_S }, { "ns", 1 }, { "us", NS_PER_US },
	{ "ms", NS_PER_MS }, { "m", 60 * NS_PER_S }, { "h", 3600 * NS_PER_S },
	{ NULL, 0 }
};

int wl_parse_time_max(const char *text, uint64_t max, uint64_t *ns, char *why, size_t whylen)
{
	return parse_with_units(text, time_units, max, ns, why, whylen);
}

int wl_parse_time(const char *text, uint64_t *ns)
{
	char why[64];
	int rc = wl_parse_time_max(text, UINT64_MAX, ns, why, sizeof(why));

	return rc ? fail_errno(rc) : 0;
}

const char *wl_time_format(uint64_t ns, char *buf, size_t len)
{
	static const struct unit units[] = {
		{ "h", 3600 * NS_PER_S }, { "m", 60 * NS_PER_S }, { "s", NS_PER_S },
		{ "ms", NS_PER_MS }, { "us", NS_PER_US }, { "ns", 1 }, { NULL, 0 }
	};
	const struct unit *u = units;

	while (ns != 0 && ns % u->factor != 0)
		u++;
	if (ns == 0)
		u = &units[2];
	snprintf(buf, len, "%llu%s", (unsigned long long)(ns / u->factor), u->suffix);
	return buf;
}

/* --- KSM knobs ---------------------------------------------------------- */

#define INT_MAX_U UINT64_C(0x7fffffff)
#define UINT_MAX_U UINT64_C(0xffffffff)

static const struct wl_knob_info knob_table[WL_KNOB_COUNT] = {
	[WL_KNOB_PAGES_TO_SCAN] = { "pages_to_scan", WL_KNOB_UINT, 100, 0, UINT_MAX_U,
		"pages ksmd processes per batch" },
	[WL_KNOB_SLEEP_MILLISECS] = { "sleep_millisecs", WL_KNOB_UINT, 20, 0, UINT_MAX_U,
		"ksmd's sleep between batches, ms" },
	[WL_KNOB_MAX_PAGE_SHARING] = { "max_page_sharing", WL_KNOB_UINT, 256, 2, INT_MAX_U,
		"most mappings one KSM page may have before a new dup is made" },
	[WL_KNOB_MERGE_ACROSS_NODES] = { "merge_across_nodes", WL_KNOB_UINT, 1, 0, 1,
		"0: one stable and unstable tree per NUMA node" },
	[WL_KNOB_USE_ZERO_PAGES] = { "use_zero_pages", WL_KNOB_BOOL, 0, 0, 1,
		"merge zero-filled pages with the kernel's zero page" },
	[WL_KNOB_SMART_SCAN] = { "smart_scan", WL_KNOB_BOOL, 1, 0, 1,
		"skip pages that did not merge for a growing number of scans" },
	[WL_KNOB_STABLE_NODE_CHAINS_PRUNE_MILLISECS] = { "stable_node_chains_prune_millisecs",
		WL_KNOB_UINT, 2000, 0, UINT_MAX_U, "how often stale dups of a chain are pruned, ms" },
	[WL_KNOB_ADVISOR_MODE] = { "advisor_mode", WL_KNOB_ADVISOR, WL_ADVISOR_NONE, 0, 1,
		"none, or scan-time: ksmd tunes pages_to_scan itself" },
	[WL_KNOB_ADVISOR_MAX_CPU] = { "advisor_max_cpu", WL_KNOB_UINT, 70, 0, UINT64_MAX,
		"advisor: most ksmd CPU, percent" },
	[WL_KNOB_ADVISOR_MIN_PAGES_TO_SCAN] = { "advisor_min_pages_to_scan", WL_KNOB_UINT, 500, 0,
		UINT64_MAX, "advisor: pages_to_scan it starts from and never goes below" },
	[WL_KNOB_ADVISOR_MAX_PAGES_TO_SCAN] = { "advisor_max_pages_to_scan", WL_KNOB_UINT, 30000, 0,
		UINT64_MAX, "advisor: most pages_to_scan" },
	[WL_KNOB_ADVISOR_TARGET_SCAN_TIME] = { "advisor_target_scan_time", WL_KNOB_UINT, 200, 1,
		UINT64_MAX, "advisor: wanted duration of a full scan, s" },
};

const struct wl_knob_info *wl_knob_info(enum wl_knob knob)
{
	return (unsigned)knob < WL_KNOB_COUNT ? &knob_table[knob] : NULL;
}

int wl_knob_lookup(const char *name)
{
	for (int k = 0; k < WL_KNOB_COUNT; k++)
		if (strcmp(knob_table[k].name, name) == 0)
			return k;
	return -1;
}

/* kstrtobool: the first character decides (y/t/e/1, n/f/d/0); "on"/"of" need the second. */
static int parse_kernel_bool(const char *text, uint64_t *value)
{
	switch (text[0]) {
	case 'y': case 'Y': case 't': case 'T': case 'e': case 'E': case '1':
		*value = 1;
		return 0;
	case 'n': case 'N': case 'f': case 'F': case 'd': case 'D': case '0':
		*value = 0;
		return 0;
	case 'o': case 'O':
		if (text[1] == 'n' || text[1] == 'N') {
			*value = 1;
			return 0;
		}
		if (text[1] == 'f' || text[1] == 'F') {
			*value = 0;
			return 0;
		}
		return -1;
	default:
		return -1;
	}
}

/* kstrtoul-style: an optional '+', then decimal digits only (base 10). */
static int parse_kernel_decimal(const char *text, uint64_t *value)
{
	const char *end;
	int rc = parse_digits(text + (text[0] == '+'), true, value, &end);

	return rc == 0 && *end ? -1 : rc;
}

int wl_knob_parse(enum wl_knob knob, const char *text, uint64_t *value, char *why, size_t whylen)
{
	const struct wl_knob_info *info = wl_knob_info(knob);
	uint64_t v;
	int rc;

	switch (info->kind) {
	case WL_KNOB_BOOL:
		if (parse_kernel_bool(text, value) != 0) {
			why_set(why, whylen, "expected 0 or 1 (the kernel says EINVAL)");
			return EINVAL;
		}
		return 0;
	case WL_KNOB_ADVISOR:
		if (strcmp(text, "none") == 0) {
			*value = WL_ADVISOR_NONE;
		} else if (strcmp(text, "scan-time") == 0) {
			*value = WL_ADVISOR_SCAN_TIME;
		} else {
			why_set(why, whylen, "expected none or scan-time (the kernel says EINVAL)");
			return EINVAL;
		}
		return 0;
	case WL_KNOB_UINT:
		break;
	}
	rc = parse_kernel_decimal(text, &v);
	if (rc == -1) {
		why_set(why, whylen, "expected a decimal number (the kernel says EINVAL)");
		return EINVAL;
	}
	if (rc == -2 || v > info->max) {
		/*
		 * Two stores pass the parser's own ERANGE through: kstrtoint for
		 * max_page_sharing (above INT_MAX), kstrtoul for merge_across_nodes
		 * (above ULONG_MAX); the others turn every error into EINVAL.
		 */
		rc = knob == WL_KNOB_MAX_PAGE_SHARING ||
		     (knob == WL_KNOB_MERGE_ACROSS_NODES && rc == -2) ? ERANGE : EINVAL;
		why_set(why, whylen, "at most %llu (the kernel says %s)",
			(unsigned long long)info->max, rc == ERANGE ? "ERANGE" : "EINVAL");
		return rc;
	}
	if (v < info->min) {
		why_set(why, whylen, "at least %llu (the kernel says EINVAL)",
			(unsigned long long)info->min);
		return EINVAL;
	}
	*value = v;
	return 0;
}

const char *wl_knob_format(enum wl_knob knob, uint64_t value, char *buf, size_t len)
{
	if (knob == WL_KNOB_ADVISOR_MODE)
		snprintf(buf, len, "%s", value == WL_ADVISOR_SCAN_TIME ? "scan-time" : "none");
	else
		snprintf(buf, len, "%llu", (unsigned long long)value);
	return buf;
}

/* The pages ksmd scans per batch at the start: the advisor's own start under scan-time. */
static uint64_t first_batch(const uint64_t *knobs)
{
	return knobs[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_SCAN_TIME
		       ? knobs[WL_KNOB_ADVISOR_MIN_PAGES_TO_SCAN] : knobs[WL_KNOB_PAGES_TO_SCAN];
}

enum wl_knob_rule wl_knobs_check(enum wl_kernel kernel, const uint64_t *knobs, const bool *given,
				 bool awaits_scans, enum wl_knob *knob, char *why, size_t whylen)
{
	for (int k = 0; k < WL_KNOB_COUNT; k++) {
		const char *since;

		if (!given[k] || wl_kernel_exports(kernel, knob_table[k].name, &since))
			continue;
		*knob = (enum wl_knob)k;
		why_set(why, whylen, "%s: kernel %s has no such knob (it came in %s)",
			knob_table[k].name, wl_kernel_name(kernel), since);
		return WL_KNOBS_NOT_IN_KERNEL;
	}
	if (knobs[WL_KNOB_ADVISOR_MODE] == WL_ADVISOR_SCAN_TIME && given[WL_KNOB_PAGES_TO_SCAN]) {
		*knob = WL_KNOB_PAGES_TO_SCAN;
		why_set(why, whylen, "pages_to_scan cannot be set while advisor_mode = scan-time "
			"(the kernel answers EINVAL; the advisor starts from "
			"advisor_min_pages_to_scan)");
		return WL_KNOBS_ADVISOR_OWNS;
	}
	if (awaits_scans && first_batch(knobs) == 0) {
		*knob = WL_KNOB_PAGES_TO_SCAN;
		why_set(why, whylen, "pages_to_scan = 0: ksmd would never complete a scan");
		return WL_KNOBS_NEVER_SCANS;
	}
	return WL_KNOBS_OK;
}

enum wl_knob_rule wl_knob_store_check(enum wl_knob knob, uint64_t value, bool advisor_on,
				      bool awaits_scans)
{
	if (knob != WL_KNOB_PAGES_TO_SCAN)
		return WL_KNOBS_OK;
	if (awaits_scans && value == 0)
		return WL_KNOBS_NEVER_SCANS;
	return advisor_on ? WL_KNOBS_ADVISOR_OWNS : WL_KNOBS_OK;
}

/* --- names, values, offsets --------------------------------------------- */

int wl_parse_name(const char *text, char *why, size_t whylen)
{
	size_t n = strlen(text);

	if (n == 0)
		return why_set(why, whylen, "a name is needed");
	if (n > WL_NAME_MAX)
		return why_set(why, whylen, "name longer than %d characters", WL_NAME_MAX);
	for (const char *p = text; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			return why_set(why, whylen, "names use only letters, digits, '_' and '-'");
	return 0;
}

int wl_parse_value(const char *text, struct wl_value *value, bool allow_fresh, char *why,
		   size_t whylen)
{
	uint64_t v;

	if (allow_fresh && strcmp(text, "fresh") == 0) {
		value->fresh = true;
		value->value = 0;
		return 0;
	}
	if (wl_parse_u64(text, &v) != 0) {
		if (errno == ERANGE)
			return why_set(why, whylen, "too large (at most %llu: the upper half of 64 "
				       "bits is reserved for fresh values)",
				       (unsigned long long)WL_VALUE_LIMIT - 1);
		return why_set(why, whylen, allow_fresh ? "expected fresh or a number" :
							  "expected a number");
	}
	if (v >= WL_VALUE_LIMIT)
		return why_set(why, whylen, "values must be below 2^63 (the upper half is "
					    "reserved for fresh values)");
	value->fresh = false;
	value->value = v;
	return 0;
}

const char *wl_value_format(const struct wl_value *value, char *buf, size_t len)
{
	if (value->fresh)
		snprintf(buf, len, "fresh");
	else
		snprintf(buf, len, "%llu", (unsigned long long)value->value);
	return buf;
}

static int parse_offset_number(const char *text, const char **end, uint32_t *offset)
{
	uint64_t v;

	if (parse_u64_prefix(text, &v, end) != 0 || v > CONTENT_MAX_OFFSET)
		return -1;
	*offset = (uint32_t)v;
	return 0;
}

int wl_parse_offset(const char *text, struct wl_offset *offset, char *why, size_t whylen)
{
	static const char expected[] = "expected a byte offset 0-4088 or random:LO-HI";
	const char *p = text, *end;

	if (strncmp(p, "random:", 7) == 0) {
		p += 7;
		if (parse_offset_number(p, &end, &offset->lo) != 0 || *end != '-')
			return why_set(why, whylen, expected);
		if (parse_offset_number(end + 1, &end, &offset->hi) != 0 || *end)
			return why_set(why, whylen, expected);
		if (offset->lo >= offset->hi)
			return why_set(why, whylen, "random:LO-HI needs LO < HI");
		return 0;
	}
	if (parse_offset_number(p, &end, &offset->lo) != 0 || *end)
		return why_set(why, whylen, expected);
	offset->hi = offset->lo;
	return 0;
}

const char *wl_offset_format(const struct wl_offset *offset, char *buf, size_t len)
{
	if (offset->lo == offset->hi)
		snprintf(buf, len, "%u", offset->lo);
	else
		snprintf(buf, len, "random:%u-%u", offset->lo, offset->hi);
	return buf;
}

uint32_t wl_offset_pick(const struct wl_offset *offset, struct wl_rng *rng)
{
	if (offset->lo == offset->hi)
		return offset->lo;
	return offset->lo + (uint32_t)wl_rng_below(rng, (uint64_t)offset->hi - offset->lo + 1);
}

/* How many times @c occurs in @s. */
static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

int wl_parse_groups(const char *text, struct wl_group **groups, size_t *ngroups, char *why,
		    size_t whylen)
{
	static const char expected[] = "expected COPIESxVALUE[,COPIESxVALUE...], e.g. 300x1,50x0";
	struct wl_group *g;
	size_t n = 0;
	const char *p = text;

	/* one allocation: there are at most as many groups as commas + 1 */
	g = malloc((count_char(text, ',') + 1) * sizeof(*g));
	if (!g)
		return why_set(why, whylen, "out of memory");
	for (;;) {
		uint64_t copies, value;
		const char *end;
		int rc;

		/* decimal copies: "0x2" is 0 copies of 2, not hex */
		rc = parse_digits(p, true, &copies, &end);
		if (rc == -1 || *end != 'x')
			goto bad;
		if (rc == -2 || copies > WL_MAX_REGION_PAGES) {
			why_set(why, whylen, "group %zu: too many copies (at most %llu)", n + 1,
				(unsigned long long)WL_MAX_REGION_PAGES);
			goto fail;
		}
		if (copies == 0) {
			why_set(why, whylen, "group %zu has 0 copies", n + 1);
			goto fail;
		}
		rc = parse_u64_prefix(end + 1, &value, &end);
		if (rc == -1 || (*end && *end != ','))
			goto bad;
		if (rc == -2 || value >= WL_VALUE_LIMIT) {
			why_set(why, whylen, "values must be below 2^63 (the upper half is "
					     "reserved for fresh values)");
			goto fail;
		}
		g[n++] = (struct wl_group){ copies, value };
		if (*end == '\0')
			break;
		p = end + 1;
	}
	*groups = g;
	*ngroups = n;
	return 0;
bad:
	why_set(why, whylen, expected);
fail:
	free(g);
	return -1;
}

const char *wl_groups_format(const struct wl_group *groups, size_t n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%llux%llu", i ? "," : "",
					 (unsigned long long)groups[i].copies,
					 (unsigned long long)groups[i].value);
	return buf;
}

int wl_parse_after_scan(const char *text, uint64_t *scan, char *why, size_t whylen)
{
	if (strncmp(text, "after-scan:", 11) != 0)
		return why_set(why, whylen, "expected after-scan:N");
	if (wl_parse_u64(text + 11, scan) != 0) {
		if (errno == ERANGE)
			return wl_too_large(why, whylen, WL_MAX_SCANS - 1, "");
		return why_set(why, whylen, "expected after-scan:N");
	}
	if (*scan >= WL_MAX_SCANS)
		return why_set(why, whylen, "N must be below %llu",
			       (unsigned long long)WL_MAX_SCANS);
	return 0;
}

int wl_parse_rate(const char *text, uint64_t *rate, char *why, size_t whylen)
{
	char buf[64];
	size_t n = strlen(text);

	if (n >= sizeof(buf))
		return why_set(why, whylen, "expected page writes per second, e.g. 1000 or 1000/s");
	memcpy(buf, text, n + 1);
	if (n > 2 && strcmp(buf + n - 2, "/s") == 0)
		buf[n - 2] = '\0';
	if (wl_parse_u64(buf, rate) != 0) {
		if (errno == ERANGE)
			return wl_too_large(why, whylen, 1000000000, " page writes per second");
		return why_set(why, whylen, "expected page writes per second, e.g. 1000 or 1000/s");
	}
	if (*rate == 0 || *rate > UINT64_C(1000000000))
		return why_set(why, whylen, "rate must be 1 to 1000000000 page writes per second");
	return 0;
}

/* --- page selections ------------------------------------------------------ */

void wl_pagesel_free(struct wl_pagesel *sel)
{
	free(sel->ranges);
	sel->ranges = NULL;
	sel->nranges = 0;
}

int wl_pagesel_copy(struct wl_pagesel *dst, const struct wl_pagesel *src)
{
	*dst = *src;
	dst->ranges = NULL;
	if (src->nranges == 0)
		return 0;
	dst->ranges = malloc(src->nranges * sizeof(*src->ranges));
	if (!dst->ranges)
		return -1;
	memcpy(dst->ranges, src->ranges, src->nranges * sizeof(*src->ranges));
	return 0;
}

bool wl_pagesel_equal(const struct wl_pagesel *a, const struct wl_pagesel *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case WL_SEL_ALL:
		return true;
	case WL_SEL_EVERY:
		return a->step == b->step && a->start == b->start;
	case WL_SEL_RANDOM:
		return a->count == b->count;
	case WL_SEL_LIST:
		return a->nranges == b->nranges &&
		       memcmp(a->ranges, b->ranges, a->nranges * sizeof(*a->ranges)) == 0;
	}
	return false;
}

static int range_cmp(const void *pa, const void *pb)
{
	const struct wl_range *a = pa, *b = pb;

	return a->first < b->first ? -1 : a->first > b->first;
}

/* "every:K" or "every:K+J" */
static int parse_every(const char *p, uint64_t npages, struct wl_pagesel *sel, char *why,
		       size_t whylen)
{
	const char *end;
	int step_rc, start_rc = 0;

	step_rc = parse_u64_prefix(p, &sel->step, &end);
	if (step_rc == -1 || (step_rc == 0 && sel->step == 0))
		return why_set(why, whylen, "expected every:K or every:K+J with K >= 1");
	sel->start = 0;
	if (*end == '+' && (start_rc = parse_u64_prefix(end + 1, &sel->start, &end)) == -1)
		return why_set(why, whylen, "expected every:K or every:K+J with K >= 1");
	if (*end)
		return why_set(why, whylen, "expected every:K or every:K+J with K >= 1");
	if (step_rc == -2)
		return why_set(why, whylen, "K too large (at most %llu)",
			       (unsigned long long)UINT64_MAX);
	if (start_rc == -2)
		return why_set(why, whylen, "J too large (the region's last page is %llu)",
			       (unsigned long long)npages - 1);
	if (sel->start >= npages)
		return why_set(why, whylen, "every:%llu+%llu starts past the region's last page %llu",
			       (unsigned long long)sel->step, (unsigned long long)sel->start,
			       (unsigned long long)npages - 1);
	sel->kind = WL_SEL_EVERY;
	return 0;
}

static int parse_random(const char *p, uint64_t npages, struct wl_pagesel *sel, char *why,
			size_t whylen)
{
	if (wl_parse_u64(p, &sel->count) != 0) {
		if (errno == ERANGE)
			return why_set(why, whylen, "random:%s: too large (the region has %llu "
				       "pages)", p, (unsigned long long)npages);
		return why_set(why, whylen, "expected random:N with N >= 1");
	}
	if (sel->count == 0)
		return why_set(why, whylen, "expected random:N with N >= 1");
	if (sel->count > npages)
		return why_set(why, whylen, "random:%llu picks more pages than the region's %llu",
			       (unsigned long long)sel->count, (unsigned long long)npages);
	sel->kind = WL_SEL_RANDOM;
	return 0;
}

/*
 * Parse "N" or "A-B" at *p, advancing it past the item. -1: not such an item;
 * -2: a page number over 64 bits, whose digits *@big and *@biglen point to.
 */
static int parse_range_item(const char **p, struct wl_range *r, const char **big,
			    size_t *biglen)
{
	const char *start = *p, *end;
	int rc = parse_u64_prefix(start, &r->first, &end), rc2 = 0;

	if (rc == -1)
		return -1;
	if (rc == -2) {
		*big = start;
		*biglen = (size_t)(end - start);
	}
	r->last = r->first;
	if (*end == '-') {
		start = end + 1;
		rc2 = parse_u64_prefix(start, &r->last, &end);
		if (rc2 == -1)
			return -1;
		if (rc2 == -2 && rc == 0) {
			*big = start;
			*biglen = (size_t)(end - start);
		}
	}
	if (*end && *end != ',')
		return -1;
	*p = end;
	return rc == -2 || rc2 == -2 ? -2 : 0;
}

/* "N" for a single page, "A-B" otherwise. */
static const char *range_format(const struct wl_range *r, char *buf, size_t len)
{
	if (r->first == r->last)
		snprintf(buf, len, "%llu", (unsigned long long)r->first);
	else
		snprintf(buf, len, "%llu-%llu", (unsigned long long)r->first,
			 (unsigned long long)r->last);
	return buf;
}

static int check_ranges(struct wl_pagesel *sel, uint64_t npages, char *why, size_t whylen)
{
	for (size_t i = 0; i < sel->nranges; i++) {
		const struct wl_range *r = &sel->ranges[i];

		if (r->first > r->last)
			return why_set(why, whylen, "range %llu-%llu runs backwards",
				       (unsigned long long)r->first, (unsigned long long)r->last);
		if (r->last >= npages)
			return why_set(why, whylen, "page %llu is past the region's last page %llu",
				       (unsigned long long)r->last, (unsigned long long)npages - 1);
	}
	qsort(sel->ranges, sel->nranges, sizeof(*sel->ranges), range_cmp);
	for (size_t i = 1; i < sel->nranges; i++)
		if (sel->ranges[i].first <= sel->ranges[i - 1].last) {
			char a[48], b[48];

			return why_set(why, whylen, "pages %s and %s overlap",
				       range_format(&sel->ranges[i - 1], a, sizeof(a)),
				       range_format(&sel->ranges[i], b, sizeof(b)));
		}
	return 0;
}

static int parse_list(const char *text, uint64_t npages, struct wl_pagesel *sel, char *why,
		      size_t whylen)
{
	const char *p = text, *big = NULL;
	size_t biglen = 0;

	sel->kind = WL_SEL_LIST;
	/* one allocation: there are at most as many ranges as commas + 1 */
	sel->ranges = malloc((count_char(text, ',') + 1) * sizeof(*sel->ranges));
	if (!sel->ranges)
		return why_set(why, whylen, "out of memory");
	for (;;) {
		struct wl_range r;
		int rc = parse_range_item(&p, &r, &big, &biglen);

		if (rc == -1)
			return why_set(why, whylen, "expected all, N, A-B[,...], every:K[+J] "
						    "or random:N");
		if (rc == -2)
			return why_set(why, whylen, "page %.*s is too large (the region's last "
				       "page is %llu)", (int)biglen, big,
				       (unsigned long long)npages - 1);
		sel->ranges[sel->nranges++] = r;
		if (*p == '\0')
			break;
		p++;
	}
	return check_ranges(sel, npages, why, whylen);
}

int wl_parse_pagesel(const char *text, uint64_t npages, struct wl_pagesel *sel, char *why,
		     size_t whylen)
{
	int rc;

	memset(sel, 0, sizeof(*sel));
	if (strcmp(text, "all") == 0) {
		sel->kind = WL_SEL_ALL;
		return 0;
	}
	if (strncmp(text, "every:", 6) == 0)
		return parse_every(text + 6, npages, sel, why, whylen);
	if (strncmp(text, "random:", 7) == 0)
		return parse_random(text + 7, npages, sel, why, whylen);
	rc = parse_list(text, npages, sel, why, whylen);
	if (rc != 0)
		wl_pagesel_free(sel);
	return rc;
}

const char *wl_pagesel_format(const struct wl_pagesel *sel, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	switch (sel->kind) {
	case WL_SEL_ALL:
		snprintf(buf, len, "all");
		break;
	case WL_SEL_EVERY:
		if (sel->start)
			snprintf(buf, len, "every:%llu+%llu", (unsigned long long)sel->step,
				 (unsigned long long)sel->start);
		else
			snprintf(buf, len, "every:%llu", (unsigned long long)sel->step);
		break;
	case WL_SEL_RANDOM:
		snprintf(buf, len, "random:%llu", (unsigned long long)sel->count);
		break;
	case WL_SEL_LIST:
		for (size_t i = 0; i < sel->nranges && used < len; i++) {
			char item[48];

			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
						 range_format(&sel->ranges[i], item, sizeof(item)));
		}
		break;
	}
	return buf;
}

uint64_t wl_pagesel_count(const struct wl_pagesel *sel, uint64_t npages)
{
	uint64_t n = 0;

	switch (sel->kind) {
	case WL_SEL_ALL:
		return npages;
	case WL_SEL_EVERY:
		return sel->start < npages ? (npages - sel->start - 1) / sel->step + 1 : 0;
	case WL_SEL_RANDOM:
		return sel->count < npages ? sel->count : npages;
	case WL_SEL_LIST:
		for (size_t i = 0; i < sel->nranges; i++)
			n += sel->ranges[i].last - sel->ranges[i].first + 1;
		return n;
	}
	return 0;
}

void wl_page_iter_init(struct wl_page_iter *it, const struct wl_pagesel *sel, uint64_t npages,
		       struct wl_rng *rng)
{
	memset(it, 0, sizeof(*it));
	it->sel = sel;
	it->npages = npages;
	it->rng = rng;
	if (sel->kind == WL_SEL_EVERY)
		it->next = sel->start;
	if (sel->kind == WL_SEL_LIST && sel->nranges)
		it->next = sel->ranges[0].first;
	it->wanted = wl_pagesel_count(sel, npages);
}

/* Selection sampling (Knuth's algorithm S): distinct pages in increasing order. */
static bool next_random_page(struct wl_page_iter *it, uint64_t *page)
{
	while (it->wanted && it->next < it->npages) {
		uint64_t left = it->npages - it->next;
		uint64_t p = it->next++;

		if (wl_rng_below(it->rng, left) < it->wanted) {
			it->wanted--;
			*page = p;
			return true;
		}
	}
	return false;
}

static bool next_list_page(struct wl_page_iter *it, uint64_t *page)
{
	const struct wl_pagesel *sel = it->sel;

	while (it->range < sel->nranges) {
		const struct wl_range *r = &sel->ranges[it->range];

		if (it->next <= r->last && it->next < it->npages) {
			*page = it->next++;
			return true;
		}
		if (++it->range < sel->nranges)
			it->next = sel->ranges[it->range].first;
	}
	return false;
}

bool wl_page_iter_next(struct wl_page_iter *it, uint64_t *page)
{
	switch (it->sel->kind) {
	case WL_SEL_ALL:
		if (it->next >= it->npages)
			return false;
		*page = it->next++;
		return true;
	case WL_SEL_EVERY:
		if (it->next >= it->npages)
			return false;
		*page = it->next;
		it->next = it->npages - it->next > it->sel->step ? it->next + it->sel->step
								  : it->npages;
		return true;
	case WL_SEL_RANDOM:
		return next_random_page(it, page);
	case WL_SEL_LIST:
		return next_list_page(it, page);
	}
	return false;
}
