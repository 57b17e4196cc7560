/*
 * cli_args.h - the command line of every ksmkit subcommand, declared as
 * data. A command lists its options once (struct cli_opt) and the rules
 * between them once (struct cli_rule: options that exclude each other, an
 * option that needs another, a listing that takes nothing else, an option
 * that changes the operands); cli_args_parse reads argv against that table
 * with getopt_long and refuses, with one message naming what is wrong and
 * exit status 2 (CLI_USAGE), everything the table does not allow: an unknown
 * option, a missing value, an option given twice (unless a rule lets it
 * repeat), --help among other
 * arguments, a broken rule, too few or too many operands. Nothing of the
 * command has run by then. The command takes the options in command-line
 * order with cli_args_next and interprets their values itself (a number's
 * range, a file's contents): what varies between commands is the table, not
 * the code that enforces it.
 */
#ifndef KSMKIT_CLI_ARGS_H
#define KSMKIT_CLI_ARGS_H

#include <stdbool.h>

/* One option of a command. A table of them ends with { NULL }. */
struct cli_opt {
	const char *name;   /* long name without "--": "csv", "output" */
	char letter;        /* short form ('o' for -o), or 0 */
	bool value;         /* takes a value: --output FILE, -o FILE, --output=FILE */
	int key;            /* what cli_args_next returns for it (unique in the table) */
};

enum cli_rule_kind {
	CLI_AT_MOST_ONE, /* at most one of @names: "csv json" */
	CLI_EXCLUDES,    /* the first of @names with none of the others: "sim-only guest force" */
	CLI_NEEDS,       /* the first of @names only with one of the others: "series print-workload" */
	CLI_ALONE,       /* each of @names takes no other option nor operand (a listing) */
	CLI_OPERANDS,    /* with the option @names, the operands are @min..@max, @operands */
	CLI_REPEATS,     /* each of @names may be given more than once: "set" */
};

/* A rule between the options of a command, by their long names. A table ends with { 0 }. */
struct cli_rule {
	enum cli_rule_kind kind;
	const char *names;    /* long option names, separated by spaces */
	const char *why;      /* CLI_AT_MOST_ONE, _EXCLUDES, _NEEDS: why, for the message; or NULL */
	int min, max;         /* CLI_OPERANDS: how many operands (max < 0: no limit) */
	const char *operands; /* CLI_OPERANDS: what they are, for messages */
};

/* A command's whole command line. */
struct cli_spec {
	const char *command;        /* as messages name it: "sim", "plot counters" */
	const char *help;           /* the command whose --help documents it ("plot"); NULL: command */
	const struct cli_opt *opts;
	const struct cli_rule *rules; /* NULL: none */
	int min, max;               /* operands without a CLI_OPERANDS rule (max < 0: no limit) */
	const char *operands;       /* what they are: "exactly one workload file" */
};

#define CLI_MAX_OPTS 24 /* options in one table */

/* What cli_args_parse found. */
struct cli_args {
	const struct cli_spec *spec;
	struct cli_given {
		const struct cli_opt *opt;
		const char *value;  /* its value (pointing into argv), or NULL */
		bool typed_short;   /* given as -x, not --name (messages say it as typed) */
	} given[CLI_MAX_OPTS];  /* in command-line order; each option at most once,
				 * but those of a CLI_REPEATS rule */
	int ngiven;
	int next;               /* cli_args_next's position */
	char **operand;         /* the operands, in order (into argv) */
	int noperands;
};

/*
 * Read @argc/@argv (argv[0] is the command's name) against @spec into @a.
 * Returns 0, or CLI_USAGE after printing "ksmkit: COMMAND: what is wrong"
 * on stderr. argv is permuted as getopt_long does (operands last).
 */
int cli_args_parse(const struct cli_spec *spec, int argc, char **argv, struct cli_args *a);

/*
 * The next option given, in command-line order: its key, with its value in
 * *@value (NULL for an option without one); -1 after the last.
 */
int cli_args_next(struct cli_args *a, const char **value);

/* Whether the option with @key was given. */
bool cli_args_has(const struct cli_args *a, int key);

/* The value given to the option with @key, or NULL when it was not given. */
const char *cli_args_value(const struct cli_args *a, int key);

/*
 * An option's value as a decimal number from @min to @max: 0, or CLI_USAGE
 * after "ksmkit: CMD: OPTION: 'TEXT' is not a number from MIN to MAX".
 */
int cli_number(const char *cmd, const char *option, const char *text, long min, long max,
	       long *out);

#endif
