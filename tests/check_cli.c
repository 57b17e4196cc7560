/*
 * check_cli.c - Check suite for what every ksmkit command's command line
 * and output go through: cli/cli_args.c (each kind of rule of an option
 * table, the messages naming the options as typed, operands) and
 * cli/cli_output.c (outputs that are inputs by name, symlink or hard link;
 * write errors with their reason, in files and on standard output, also
 * after a library's own fflush has dropped stdio's buffer). The commands'
 * own tables are exercised by tests/cli.test and tests/mc-cli.test.
 */
#include "config.h"
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_args.h"
#include "cli_output.h"

/* ---- helpers ------------------------------------------------------------- */

static char captured[2048];

/* Send stderr to a temporary file, for what cli_error prints (tests fork). */
static FILE *capture_begin(void)
{
	FILE *f = tmpfile();

	ck_assert_ptr_nonnull(f);
	fflush(stderr);
	ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
	return f;
}

/* What was printed since capture_begin, NUL-terminated in captured[]. */
static const char *capture_end(FILE *f)
{
	size_t n;

	fflush(stderr);
	rewind(f);
	n = fread(captured, 1, sizeof(captured) - 1, f);
	captured[n] = '\0';
	return captured;
}

enum { K_CSV = 256, K_JSON, K_OUT, K_QUIET, K_LIST, K_SERIES, K_PRINT, K_SAVED, K_FORCE };

static const struct cli_opt opts[] = {
	{ "csv", 0, false, K_CSV },
	{ "json", 0, false, K_JSON },
	{ "output", 'o', true, K_OUT },
	{ "quiet", 'q', false, K_QUIET },
	{ "list", 0, false, K_LIST },
	{ "series", 0, true, K_SERIES },
	{ "print", 0, true, K_PRINT },
	{ "saved", 0, false, K_SAVED },
	{ "force", 0, false, K_FORCE },
	{ NULL, 0, false, 0 },
};

static const struct cli_rule rules[] = {
	{ CLI_ALONE, "list", NULL, 0, 0, NULL },
	{ CLI_AT_MOST_ONE, "csv json", NULL, 0, 0, NULL },
	{ CLI_EXCLUDES, "saved force quiet", "nothing runs", 0, 0, NULL },
	{ CLI_NEEDS, "series print", NULL, 0, 0, NULL },
	{ CLI_OPERANDS, "saved", NULL, 2, 2, "two saved files" },
	{ 0, NULL, NULL, 0, 0, NULL },
};

static const struct cli_spec spec = { "t", NULL, opts, rules, 1, 1, "exactly one file" };

/* Parse the NULL-terminated words (argv[0] "t" first); its status, stderr in captured[]. */
static int parse(struct cli_args *a, const char *const *words)
{
	static char *argv[32]; /* cli_args points into it */
	int argc = 0, rc;
	FILE *cap = capture_begin();

	while (words[argc]) {
		argv[argc] = (char *)words[argc];
		argc++;
	}
	argv[argc] = NULL;
	rc = cli_args_parse(&spec, argc, argv, a);
	capture_end(cap);
	fclose(cap);
	return rc;
}

#define PARSE(a, ...) parse(a, (const char *const[]){ "t", __VA_ARGS__, NULL })

static void refused(int rc, const char *message)
{
	ck_assert_int_eq(rc, CLI_USAGE);
	ck_assert_msg(strstr(captured, message), "stderr '%s' lacks '%s'", captured, message);
}

/* ---- cli_args ------------------------------------------------------------------ */

START_TEST(t01_options_come_back_in_order)
{
	struct cli_args a;
	const char *value;

	ck_assert_int_eq(PARSE(&a, "--json", "f", "-o", "out", "-q"), 0);
	ck_assert_int_eq(a.noperands, 1);
	ck_assert_str_eq(a.operand[0], "f");
	ck_assert_int_eq(cli_args_next(&a, &value), K_JSON);
	ck_assert_ptr_null(value);
	ck_assert_int_eq(cli_args_next(&a, &value), K_OUT);
	ck_assert_str_eq(value, "out");
	ck_assert_int_eq(cli_args_next(&a, &value), K_QUIET);
	ck_assert_int_eq(cli_args_next(&a, &value), -1);
	ck_assert(cli_args_has(&a, K_OUT) && !cli_args_has(&a, K_CSV));
	ck_assert_str_eq(cli_args_value(&a, K_OUT), "out");
	ck_assert_ptr_null(cli_args_value(&a, K_SERIES));
	ck_assert_str_eq(captured, "");
}
END_TEST

START_TEST(t02_at_most_one)
{
	struct cli_args a;

	refused(PARSE(&a, "--csv", "f", "--json"),
		"ksmkit: t: --csv and --json cannot be used together\n");
	refused(PARSE(&a, "--json", "--csv", "f"), "t: --json and --csv cannot be used together");
}
END_TEST

START_TEST(t03_excludes_keeps_the_head_apart_only)
{
	struct cli_args a;

	refused(PARSE(&a, "--force", "--saved", "a", "b"),
		"t: --force and --saved cannot be used together: nothing runs");
	ck_assert_int_eq(PARSE(&a, "--force", "-q", "f"), 0); /* two of the others: fine */
}
END_TEST

START_TEST(t04_needs)
{
	struct cli_args a;

	refused(PARSE(&a, "--series", "1", "f"), "t: --series needs --print");
	ck_assert_int_eq(PARSE(&a, "--series", "1", "--print", "2", "f"), 0);
}
END_TEST

START_TEST(t05_alone)
{
	struct cli_args a;

	ck_assert_int_eq(PARSE(&a, "--list"), 0); /* and no operand needed */
	refused(PARSE(&a, "--json", "--list"),
		"t: --json and --list cannot be used together: --list takes no other arguments");
	refused(PARSE(&a, "--list", "f"), "t: --list takes no other arguments, not 'f'");
}
END_TEST

START_TEST(t06_operands)
{
	struct cli_args a;

	refused(PARSE(&a, "-q"), "t: expected exactly one file (see ksmkit t --help)");
	refused(PARSE(&a, "f", "g"), "t: unexpected argument 'g' (expected exactly one file)");
	ck_assert_int_eq(PARSE(&a, "--saved", "f", "g"), 0);
	refused(PARSE(&a, "--saved", "f"), "t: expected two saved files");
	ck_assert_int_eq(PARSE(&a, "--", "-f"), 0); /* "--" ends the options */
	ck_assert_str_eq(a.operand[0], "-f");
}
END_TEST

START_TEST(t07_what_cannot_be_read)
{
	struct cli_args a;

	refused(PARSE(&a, "-o", "x", "--output", "y", "f"), "t: --output given twice");
	refused(PARSE(&a, "f", "--output"), "t: --output needs a value");
	refused(PARSE(&a, "f", "-o"), "t: -o needs a value");
	refused(PARSE(&a, "--csv=1", "f"), "t: --csv takes no value");
	refused(PARSE(&a, "--frob", "f"), "t: unknown option '--frob'");
	refused(PARSE(&a, "-x", "f"), "t: unknown option '-x'");
	refused(PARSE(&a, "f", "--help"), "t: --help takes no other arguments");
	refused(PARSE(&a, "-h"), "t: --help takes no other arguments");
}
END_TEST

START_TEST(t08_numbers)
{
	long v = 0;
	FILE *cap = capture_begin();

	ck_assert_int_eq(cli_number("t", "--n", "42", 1, 100, &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(cli_number("t", "--n", "3x", 1, 100, &v), CLI_USAGE);
	ck_assert_int_eq(cli_number("t", "--n", " 3", 1, 100, &v), CLI_USAGE);
	ck_assert_int_eq(cli_number("t", "--n", "101", 1, 100, &v), CLI_USAGE);
	ck_assert_int_eq(cli_number("t", "--n", "", 1, 100, &v), CLI_USAGE);
	capture_end(cap);
	fclose(cap);
	ck_assert(strstr(captured, "t: --n: '3x' is not a number from 1 to 100"));
}
END_TEST

/* ---- cli_output ---------------------------------------------------------------- */

static char dir[] = "/tmp/check_cli.XXXXXX";

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* A fresh directory for one test, removed when the test's process exits. */
static void remove_dir(void)
{
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void make_dir(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	atexit(remove_dir);
}

static char *in_dir(const char *name)
{
	static char paths[8][4200];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static int check_one(const char *out, const char *in)
{
	const struct cli_file o = { "-o", out }, i = { "the input", in };
	FILE *cap = capture_begin();
	int rc = cli_check_outputs("t", &o, 1, &i, 1);

	capture_end(cap);
	fclose(cap);
	return rc;
}

START_TEST(t09_an_output_that_is_an_input)
{
	char in[4200], cwd[4096];

	make_dir();
	snprintf(in, sizeof(in), "%s", in_dir("in.wl"));
	write_file(in, "input\n");
	ck_assert_int_eq(symlink("in.wl", in_dir("sym.wl")), 0);
	ck_assert_int_eq(link(in, in_dir("hard.wl")), 0);
	write_file(in_dir("other.wl"), "input\n"); /* equal bytes, another file */

	refused(check_one(in, in), "t: -o ");
	ck_assert(strstr(captured, "is the input ") && strstr(captured, "refusing to overwrite it"));
	refused(check_one(in_dir("sym.wl"), in), "refusing to overwrite it");
	refused(check_one(in_dir("hard.wl"), in), "refusing to overwrite it");
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	refused(check_one("./in.wl", in), "refusing to overwrite it");
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_int_eq(check_one(in_dir("other.wl"), in), 0);
	ck_assert_int_eq(check_one(in_dir("new.csv"), in), 0);
	ck_assert_int_eq(check_one(in_dir("new.csv"), in_dir("missing.wl")), 0);
	ck_assert_int_eq(check_one(in, NULL), 0);
}
END_TEST

START_TEST(t10_two_outputs_into_one_file)
{
	struct cli_file outs[2] = { { "--pages", NULL }, { "--soft-dirty", NULL } };
	char a[4200], b[4200];
	FILE *cap;
	int rc;

	make_dir();
	snprintf(a, sizeof(a), "%s", in_dir("a.csv"));
	snprintf(b, sizeof(b), "%s/./a.csv", dir); /* not there yet: one path all the same */
	outs[0].path = a;
	outs[1].path = b;
	cap = capture_begin();
	rc = cli_check_outputs("t", outs, 2, NULL, 0);
	capture_end(cap);
	fclose(cap);
	refused(rc, "are the same file");
	outs[1].path = in_dir("b.csv");
	ck_assert_int_eq(cli_check_outputs("t", outs, 2, NULL, 0), 0);
}
END_TEST

START_TEST(t11_a_full_file_says_why)
{
	FILE *f, *cap;
	int rc;

	if (access("/dev/full", W_OK) != 0)
		return; /* nothing to fill */
	cap = capture_begin();
	f = cli_output_open("t", "/dev/full");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 10000; i++) /* several buffers: the first failure is long gone */
		fprintf(f, "line %d of many\n", i);
	rc = cli_output_close("t", f, "/dev/full");
	capture_end(cap);
	fclose(cap);
	ck_assert_int_eq(rc, CLI_FAILED);
	ck_assert_msg(strstr(captured, "ksmkit: t: cannot write /dev/full: No space left on device"),
		      "got '%s'", captured);
}
END_TEST

START_TEST(t12_a_good_file_and_a_missing_directory)
{
	FILE *f, *cap;
	int rc;

	make_dir();
	f = cli_output_open("t", in_dir("ok.txt"));
	ck_assert_ptr_nonnull(f);
	fputs("fine\n", f);
	ck_assert_int_eq(cli_output_close("t", f, in_dir("ok.txt")), CLI_OK);
	cap = capture_begin();
	f = cli_output_open("t", in_dir("no/such.txt"));
	rc = cli_output_close("t", f, in_dir("no/such.txt"));
	capture_end(cap);
	fclose(cap);
	ck_assert_ptr_null(f);
	ck_assert_int_eq(rc, CLI_FAILED);
	ck_assert(strstr(captured, "No such file or directory"));
}
END_TEST

/* Standard output on /dev/full: @flush_first as a library's writer does, dropping the buffer. */
static void full_stdout(bool flush_first)
{
	int fd = open("/dev/full", O_WRONLY);
	FILE *cap;
	int rc;

	if (fd < 0)
		return; /* nothing to fill */
	ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
	cli_watch_stdout();
	printf("a trace\n");
	if (flush_first) {
		ck_assert_int_ne(fflush(stdout), 0);
		errno = ENOTTY; /* what isatty() leaves behind: no reason to trust */
	}
	cap = capture_begin();
	rc = cli_finish_stdout(CLI_OK);
	capture_end(cap);
	fclose(cap);
	ck_assert_int_eq(rc, CLI_FAILED);
	ck_assert_msg(strstr(captured, "ksmkit: writing standard output: No space left on device"),
		      "got '%s'", captured);
}

START_TEST(t13_a_full_stdout_at_exit)
{
	full_stdout(false);
}
END_TEST

START_TEST(t14_a_full_stdout_after_a_writer_flushed)
{
	full_stdout(true);
}
END_TEST

START_TEST(t15_usage_errors_stay_usage_errors)
{
	int fd = open("/dev/full", O_WRONLY);
	FILE *cap;

	if (fd < 0)
		return;
	ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
	cli_watch_stdout();
	printf("x\n");
	cap = capture_begin();
	ck_assert_int_eq(cli_finish_stdout(CLI_USAGE), CLI_USAGE);
	capture_end(cap);
	fclose(cap);
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("args");

	tcase_add_test(tc, t01_options_come_back_in_order);
	tcase_add_test(tc, t02_at_most_one);
	tcase_add_test(tc, t03_excludes_keeps_the_head_apart_only);
	tcase_add_test(tc, t04_needs);
	tcase_add_test(tc, t05_alone);
	tcase_add_test(tc, t06_operands);
	tcase_add_test(tc, t07_what_cannot_be_read);
	tcase_add_test(tc, t08_numbers);
	suite_add_tcase(s, tc);
	tc = tcase_create("output");
	tcase_add_test(tc, t09_an_output_that_is_an_input);
	tcase_add_test(tc, t10_two_outputs_into_one_file);
	tcase_add_test(tc, t11_a_full_file_says_why);
	tcase_add_test(tc, t12_a_good_file_and_a_missing_directory);
	tcase_add_test(tc, t13_a_full_stdout_at_exit);
	tcase_add_test(tc, t14_a_full_stdout_after_a_writer_flushed);
	tcase_add_test(tc, t15_usage_errors_stay_usage_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cli_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
