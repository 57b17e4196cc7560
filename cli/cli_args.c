/*
 * cli_args.c - reading a command line against a command's declared options
 * and rules (cli_args.h): getopt_long does the splitting, this file the
 * refusing. Every refusal is one "ksmkit: COMMAND: ..." line naming the
 * options or the argument at fault, and exit status 2; the order of the
 * checks is the order a person would fix them in: what cannot be read at
 * all (unknown option, missing value), then repeats and --help, then the
 * rules, then the operands.
 */
#include "cli_args.h"
#include "cli.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define LONG_BASE 1000 /* getopt_long's answer for table entry i: LONG_BASE + i */
#define HELP_INDEX (CLI_MAX_OPTS) /* the implicit --help/-h, after the table */

/* --- names and messages ---------------------------------------------------- */

static const char *help_command(const struct cli_spec *spec)
{
	return spec->help ? spec->help : spec->command;
}

/* How messages name @o: as it was typed ("-o" or "--output"), else by its long name. */
static const char *display(const struct cli_args *a, const struct cli_opt *o, char *buf,
			   size_t len)
{
	bool typed_short = false;

	for (int i = 0; i < a->ngiven; i++)
		if (a->given[i].opt == o)
			typed_short = a->given[i].typed_short;
	if (typed_short)
		snprintf(buf, len, "-%c", o->letter);
	else
		snprintf(buf, len, "--%s", o->name);
	return buf;
}

static int usage_error(const struct cli_spec *spec, const char *what)
{
	cli_error("%s: %s (see ksmkit %s --help)", spec->command, what, help_command(spec));
	return CLI_USAGE;
}

/* --- the table --------------------------------------------------------------- */

static int count_opts(const struct cli_spec *spec)
{
	int n = 0;

	while (spec->opts[n].name)
		n++;
	assert(n <= CLI_MAX_OPTS);
	return n;
}

static const struct cli_opt *find_long(const struct cli_spec *spec, const char *name, size_t len)
{
	for (const struct cli_opt *o = spec->opts; o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

static int index_of_letter(const struct cli_spec *spec, int letter)
{
	for (int i = 0; spec->opts[i].name; i++)
		if (spec->opts[i].letter == letter)
			return i;
	return letter == 'h' ? HELP_INDEX : -1;
}

/* getopt_long's tables for @spec: every option, then --help. */
static void build_getopt(const struct cli_spec *spec, int n, struct option *longopts,
			 char *shortopts)
{
	char *s = shortopts;

	*s++ = ':'; /* a missing value answers ':', not '?' */
	for (int i = 0; i < n; i++) {
		const struct cli_opt *o = &spec->opts[i];

		longopts[i] = (struct option){ o->name, o->value ? required_argument : no_argument,
					       NULL, LONG_BASE + i };
		if (o->letter) {
			*s++ = o->letter;
			if (o->value)
				*s++ = ':';
		}
	}
	longopts[n] = (struct option){ "help", no_argument, NULL, LONG_BASE + HELP_INDEX };
	longopts[n + 1] = (struct option){ NULL, 0, NULL, 0 };
	*s++ = 'h';
	*s = '\0';
}

/* --- options as given --------------------------------------------------------- */

static bool given(const struct cli_args *a, const struct cli_opt *o)
{
	for (int i = 0; i < a->ngiven; i++)
		if (a->given[i].opt == o)
			return true;
	return false;
}

/* getopt's complaint about argv[optind - 1], as a message. */
static int unreadable(const struct cli_spec *spec, int c, char **argv)
{
	const char *text = argv[optind - 1];
	char what[200];

	if (c == ':' && optopt >= LONG_BASE && optopt - LONG_BASE < CLI_MAX_OPTS)
		snprintf(what, sizeof(what), "--%s needs a value", spec->opts[optopt - LONG_BASE].name);
	else if (c == ':')
		snprintf(what, sizeof(what), "-%c needs a value", optopt);
	else if (optopt >= LONG_BASE && optopt - LONG_BASE < CLI_MAX_OPTS)
		snprintf(what, sizeof(what), "--%s takes no value, not '%.60s'",
			 spec->opts[optopt - LONG_BASE].name, text);
	else if (optopt && optopt < LONG_BASE)
		snprintf(what, sizeof(what), "unknown option '-%c'", optopt);
	else
		snprintf(what, sizeof(what), "unknown option '%.100s'", text);
	return usage_error(spec, what);
}

static bool listed(const struct cli_spec *spec, const char *names, int from,
		   const struct cli_opt *o);

/* Whether a CLI_REPEATS rule of @spec lets @o be given again. */
static bool repeats(const struct cli_spec *spec, const struct cli_opt *o)
{
	for (const struct cli_rule *r = spec->rules; r && r->names; r++)
		if (r->kind == CLI_REPEATS && listed(spec, r->names, 0, o))
			return true;
	return false;
}

static int add_given(struct cli_args *a, const struct cli_opt *o, const char *value,
		     bool typed_short)
{
	char what[96];

	if (a->ngiven == CLI_MAX_OPTS)
		return usage_error(a->spec, "too many options");
	if (given(a, o) && !repeats(a->spec, o)) {
		if (typed_short)
			snprintf(what, sizeof(what), "-%c given twice", o->letter);
		else
			snprintf(what, sizeof(what), "--%s given twice", o->name);
		return usage_error(a->spec, what);
	}
	a->given[a->ngiven++] = (struct cli_given){ o, value, typed_short };
	return 0;
}

static int read_options(const struct cli_spec *spec, int argc, char **argv, struct cli_args *a)
{
	struct option longopts[CLI_MAX_OPTS + 2];
	char shortopts[3 * CLI_MAX_OPTS + 4];
	int n = count_opts(spec), c;

	build_getopt(spec, n, longopts, shortopts);
	optind = 0; /* glibc: start afresh, whoever parsed before */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		int i = c >= LONG_BASE ? c - LONG_BASE : index_of_letter(spec, c);

		if (c == '?' || c == ':' || i < 0)
			return unreadable(spec, c, argv);
		if (i == HELP_INDEX)
			return usage_error(spec, "--help takes no other arguments");
		if (add_given(a, &spec->opts[i], spec->opts[i].value ? optarg : NULL,
			      c < LONG_BASE) != 0)
			return CLI_USAGE;
	}
	a->operand = argv + optind;
	a->noperands = argc - optind;
	return 0;
}

/* --- rules -------------------------------------------------------------------------- */

/* The @n-th name of a rule's list as an option of @spec (NULL past the end). */
static const struct cli_opt *rule_opt(const struct cli_spec *spec, const char *names, int n)
{
	const char *p = names;

	for (;;) {
		size_t len;

		p += strspn(p, " ");
		len = strcspn(p, " ");
		if (!len)
			return NULL;
		if (n-- == 0) {
			const struct cli_opt *o = find_long(spec, p, len);

			assert(o); /* a rule names an option of its own table */
			return o;
		}
		p += len;
	}
}

/* Whether @o is in the rule's list, from its @from-th name on. */
static bool listed(const struct cli_spec *spec, const char *names, int from,
		   const struct cli_opt *o)
{
	const struct cli_opt *x;

	for (int i = from; (x = rule_opt(spec, names, i)); i++)
		if (x == o)
			return true;
	return false;
}

static int together(const struct cli_args *a, const struct cli_opt *first,
		    const struct cli_opt *second, const char *why)
{
	char n1[64], n2[64];

	cli_error("%s: %s and %s cannot be used together%s%s", a->spec->command,
		  display(a, first, n1, sizeof(n1)), display(a, second, n2, sizeof(n2)),
		  why ? ": " : "", why ? why : "");
	return CLI_USAGE;
}

/*
 * Two options that a rule keeps apart, named in command-line order:
 * CLI_AT_MOST_ONE, any two of the list; CLI_EXCLUDES, the first and another.
 */
static int check_apart(const struct cli_args *a, const struct cli_rule *r)
{
	const struct cli_opt *head = rule_opt(a->spec, r->names, 0), *first = NULL;

	for (int g = 0; g < a->ngiven; g++) {
		const struct cli_opt *o = a->given[g].opt;
		bool counts = r->kind == CLI_AT_MOST_ONE ? listed(a->spec, r->names, 0, o)
			: o == head || (given(a, head) && listed(a->spec, r->names, 1, o));

		if (!counts)
			continue;
		if (!first)
			first = o;
		else
			return together(a, first, o, r->why);
	}
	return 0;
}

static int check_needs(const struct cli_args *a, const struct cli_rule *r)
{
	const struct cli_opt *o = rule_opt(a->spec, r->names, 0), *other;
	char what[300], list[200] = "", name[64];

	if (!given(a, o))
		return 0;
	for (int i = 1; (other = rule_opt(a->spec, r->names, i)); i++) {
		if (given(a, other))
			return 0;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i > 1 ? " or " : "", display(a, other, name, sizeof(name)));
	}
	snprintf(what, sizeof(what), "%s needs %s%s%s", display(a, o, name, sizeof(name)), list,
		 r->why ? ": " : "", r->why ? r->why : "");
	return usage_error(a->spec, what);
}

/* A listing's option (the first given, in command-line order) with anything else. */
static int check_alone(const struct cli_args *a, const struct cli_rule *r)
{
	const struct cli_opt *alone = NULL;
	char why[96], what[300], name[64];

	for (int g = 0; g < a->ngiven && !alone; g++)
		if (listed(a->spec, r->names, 0, a->given[g].opt))
			alone = a->given[g].opt;
	if (!alone)
		return 0;
	snprintf(why, sizeof(why), "%s takes no other arguments",
		 display(a, alone, name, sizeof(name)));
	for (int g = 0; g < a->ngiven; g++)
		if (a->given[g].opt != alone)
			return alone == a->given[0].opt ? together(a, alone, a->given[g].opt, why)
							: together(a, a->given[0].opt, alone, why);
	if (a->noperands) {
		snprintf(what, sizeof(what), "%s, not '%.100s'", why, a->operand[0]);
		return usage_error(a->spec, what);
	}
	return 0;
}

static int check_rules(const struct cli_args *a)
{
	const struct cli_rule *r;
	int rc = 0;

	/* listings first: "--list-mutants and --json" says more than any other rule */
	for (r = a->spec->rules; r && r->names && !rc; r++)
		if (r->kind == CLI_ALONE)
			rc = check_alone(a, r);
	for (r = a->spec->rules; r && r->names && !rc; r++)
		if (r->kind == CLI_AT_MOST_ONE || r->kind == CLI_EXCLUDES)
			rc = check_apart(a, r);
		else if (r->kind == CLI_NEEDS)
			rc = check_needs(a, r);
	return rc;
}

/* --- operands ------------------------------------------------------------------------ */

static int check_operands(const struct cli_args *a)
{
	const struct cli_spec *spec = a->spec;
	int min = spec->min, max = spec->max;
	const char *what = spec->operands;
	char msg[300];

	for (const struct cli_rule *r = spec->rules; r && r->names; r++) {
		for (int i = 0; r->kind == CLI_ALONE && rule_opt(spec, r->names, i); i++)
			if (given(a, rule_opt(spec, r->names, i)))
				return 0; /* checked: nothing else */
		if (r->kind == CLI_OPERANDS && given(a, rule_opt(spec, r->names, 0))) {
			min = r->min;
			max = r->max;
			what = r->operands;
		}
	}
	if (a->noperands < min) {
		snprintf(msg, sizeof(msg), "expected %s", what);
		return usage_error(spec, msg);
	}
	if (max >= 0 && a->noperands > max) {
		snprintf(msg, sizeof(msg), "unexpected argument '%.100s' (expected %s)",
			 a->operand[max], what);
		return usage_error(spec, msg);
	}
	return 0;
}

/* --- entry points ----------------------------------------------------------------------- */

int cli_args_parse(const struct cli_spec *spec, int argc, char **argv, struct cli_args *a)
{
	memset(a, 0, sizeof(*a));
	a->spec = spec;
	if (read_options(spec, argc, argv, a) != 0 || check_rules(a) != 0 ||
	    check_operands(a) != 0)
		return CLI_USAGE;
	return 0;
}

int cli_args_next(struct cli_args *a, const char **value)
{
	if (a->next >= a->ngiven)
		return -1;
	*value = a->given[a->next].value;
	return a->given[a->next++].opt->key;
}

bool cli_args_has(const struct cli_args *a, int key)
{
	for (int i = 0; i < a->ngiven; i++)
		if (a->given[i].opt->key == key)
			return true;
	return false;
}

const char *cli_args_value(const struct cli_args *a, int key)
{
	for (int i = 0; i < a->ngiven; i++)
		if (a->given[i].opt->key == key)
			return a->given[i].value;
	return NULL;
}

int cli_number(const char *cmd, const char *option, const char *text, long min, long max,
	       long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	/* strtol would take blanks first */
	if (errno || end == text || *end || v < min || v > max ||
	    !(isdigit((unsigned char)text[0]) || text[0] == '-')) {
		cli_error("%s: %s: '%s' is not a number from %ld to %ld", cmd, option, text, min, max);
		return CLI_USAGE;
	}
	*out = v;
	return 0;
}
