/*
 * trace_json.c - a trace as JSON, for programs (ksmkit sim --json, run
 * --json): one object with the format and its version, the run's
 * description, the processes, the event outcomes and one object per row
 * with every counter and every process's ksm_stat (null while a process is
 * absent). Strings are escaped so the output is valid JSON whatever bytes a
 * file name holds. Written only: ksmkit reads traces back from CSV.
 */
#include "trace_internal.h"

#include <inttypes.h>

/*
 * Length of the well-formed UTF-8 sequence starting at @p (1 for ASCII), or 0
 * when the bytes there are not one. Stops at the string's NUL.
 */
static size_t utf8_sequence_length(const unsigned char *p)
{
	unsigned char second_min = 0x80, second_max = 0xBF;
	size_t len;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF) {
		len = 2;
	} else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
		len = 3;
		if (p[0] == 0xE0)
			second_min = 0xA0; /* overlong */
		if (p[0] == 0xED)
			second_max = 0x9F; /* surrogates */
	} else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
		len = 4;
		if (p[0] == 0xF0)
			second_min = 0x90; /* overlong */
		if (p[0] == 0xF4)
			second_max = 0x8F; /* beyond U+10FFFF */
	} else {
		return 0;
	}
	if (p[1] < second_min || p[1] > second_max)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return len;
}

/*
 * @s as a JSON string, or null for NULL. Control characters become \u00XX;
 * bytes that are not UTF-8 (a file name can hold anything) become U+FFFD, so
 * the output is always valid JSON.
 */
static int put_json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s)
		return trace_put(out, "null");
	if (trace_put_char(out, '"') < 0)
		return -1;
	while (*p) {
		size_t len = utf8_sequence_length(p);
		int rc;

		if (len == 0) {
			rc = trace_put(out, "\\ufffd");
			len = 1;
		} else if (*p == '"' || *p == '\\') {
			rc = trace_put(out, "\\%c", *p);
		} else if (*p < 0x20 || *p == 0x7f) {
			rc = trace_put(out, "\\u%04x", *p);
		} else {
			rc = trace_put(out, "%.*s", (int)len, (const char *)p);
		}
		if (rc < 0)
			return -1;
		p += len;
	}
	return trace_put_char(out, '"');
}

static int write_json_info(const struct trace *t, FILE *out)
{
	if (trace_put(out, "{\"format\":\"ksmkit-trace\",\"version\":%d,\"source\":",
		      TRACE_FORMAT_VERSION) < 0 ||
	    put_json_string(out, t->source) < 0 || trace_put(out, ",\"kernel\":") < 0 ||
	    put_json_string(out, t->kernel) < 0 || trace_put(out, ",\"detector\":") < 0 ||
	    put_json_string(out, t->detector) < 0 || trace_put(out, ",\"workload\":") < 0 ||
	    put_json_string(out, t->workload) < 0 ||
	    trace_put(out, ",\"time\":\"%s\",\n\"processes\":[",
		      t->time_simulated ? "simulated" : "measured") < 0)
		return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		if ((p && trace_put_char(out, ',') < 0) || put_json_string(out, t->proc_name[p]) < 0)
			return -1;
	return trace_put(out, "],\n");
}

static int write_json_outcomes(const struct trace *t, FILE *out)
{
	if (trace_put(out, "\"outcomes\":[") < 0)
		return -1;
	for (size_t i = 0; i < t->noutcomes; i++) {
		const struct trace_outcome *o = &t->outcome[i];

		if (trace_put(out, "%s{\"scan\":%" PRIu64 ",\"event\":", i ? ",\n" : "\n", o->scan) < 0 ||
		    put_json_string(out, o->event) < 0 || trace_put(out, ",\"error\":\"") < 0 ||
		    trace_put_error_token(out, o->error) < 0 || trace_put(out, "\"}") < 0)
			return -1;
	}
	return trace_put(out, "],\n");
}

static int write_json_proc(const char *name, const struct trace_proc_stat *ps, bool first,
			   FILE *out)
{
	if ((!first && trace_put_char(out, ',') < 0) || put_json_string(out, name) < 0 ||
	    trace_put_char(out, ':') < 0)
		return -1;
	if (!ps->present)
		return trace_put(out, "null");
	for (size_t f = 0; f < TRACE_PROC_FIELD_COUNT; f++)
		if (trace_put(out, "%c\"%s\":%" PRId64, f ? ',' : '{', trace_proc_field_name(f),
			      ps->field[f]) < 0)
			return -1;
	return trace_put_char(out, '}');
}

static int write_json_row(const struct trace *t, const struct trace_row *row, FILE *out)
{
	if (trace_put(out,
		      "{\"kind\":\"%s\",\"scan\":%" PRIu64 ",\"batch\":%" PRIu64
		      ",\"time_ns\":%" PRIu64 ",\"ksmd_cpu_ns\":%" PRIu64 ",\"valid\":%s,\"counters\":",
		      trace_row_kind_names[row->kind], row->scan, row->batch, row->time_ns,
		      row->ksmd_cpu_ns, row->valid ? "true" : "false") < 0)
		return -1;
	for (size_t c = 0; c < TRACE_COUNTER_COUNT; c++)
		if (trace_put(out, "%c\"%s\":%" PRId64, c ? ',' : '{', trace_counter_name(c),
			      row->counter[c]) < 0)
			return -1;
	if (trace_put(out, "},\"processes\":{") < 0)
		return -1;
	for (size_t p = 0; p < t->nprocs; p++)
		if (write_json_proc(t->proc_name[p], &row->proc[p], p == 0, out) < 0)
			return -1;
	if (trace_put(out, "}") < 0)
		return -1;
	for (size_t c = 0; c < t->ncosts; c++)
		if (trace_put(out, "%s\"%s\":%" PRIu64, c ? "," : ",\"costs_ns\":{", t->cost_name[c],
			      row->cost[c]) < 0 ||
		    (c + 1 == t->ncosts && trace_put_char(out, '}') < 0))
			return -1;
	return trace_put(out, "}");
}

int trace_write_json(const struct trace *t, FILE *out)
{
	if (write_json_info(t, out) < 0 || write_json_outcomes(t, out) < 0 ||
	    trace_put(out, "\"rows\":[") < 0)
		return -1;
	for (size_t i = 0; i < t->nrows; i++)
		if (trace_put(out, i ? ",\n" : "\n") < 0 || write_json_row(t, &t->row[i], out) < 0)
			return -1;
	if (trace_put(out, "]}\n") < 0)
		return -1;
	return trace_finish_output(out);
}
