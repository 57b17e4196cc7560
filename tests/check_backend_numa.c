/*
 * check_backend_numa.c - ksm_tests -N on the real kernel: identical pages on
 * two NUMA nodes stay apart with merge_across_nodes = 0 and merge with 1.
 *
 * It needs root, KSM, libnuma in the build and two NUMA nodes with memory;
 * anywhere else it exits 77 saying which is missing (check_backend checks
 * that a run of the same workload there is skipped with the reason).
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "suite_lock.h"
#include "trace.h"
#include "workload.h"

static struct workload *numa_workload(bool across)
{
	char path[512], *text;
	struct workload *wl;
	struct wl_error err;
	long len;
	FILE *f;

	snprintf(path, sizeof path, "%s/workloads/selftests/ksm_tests-N-m0-t0.wl", SRCDIR);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 64);
	ck_assert_int_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	if (across) {
		char *knob = strstr(text, "merge_across_nodes = 0");

		ck_assert_ptr_nonnull(knob);
		knob[strlen("merge_across_nodes = ")] = '1';
	}
	ck_assert_msg(wl_parse_buffer(text, strlen(text), path, &wl, &err) == 0, "%s", err.text);
	free(text);
	return wl;
}

static const struct trace_row *scan_row(const struct trace *t, uint64_t scan)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->row[i].kind == TRACE_ROW_SCAN && t->row[i].scan == scan)
			return &t->row[i];
	ck_abort_msg("no row for scan %llu", (unsigned long long)scan);
	return NULL;
}

/* loop index 0: merge_across_nodes = 0 (the shipped file), 1: = 1 */
START_TEST(test_numa_N)
{
	struct workload *wl = numa_workload(_i == 1);
	struct kb_knob_set before, after;
	struct kb_options opt;
	struct kb_result res;
	char msg[1024];

	ck_assert_int_eq(kb_knobs_save_idle(&before, 600 * UINT64_C(1000000000), msg, sizeof msg), 0);
	kb_options_init(&opt);
	switch (kb_run(wl, &opt, &res, msg, sizeof msg)) {
	case KB_OK:
		break;
	case KB_SKIPPED: /* node 1 exists but has no memory */
		printf("# %s\n", msg);
		wl_free(wl);
		return;
	default:
		ck_abort_msg("%s", msg);
	}
	for (uint64_t scan = 2; scan <= 3; scan++) {
		const struct trace_row *row = scan_row(res.trace, scan);

		ck_assert(row->valid);
		ck_assert_int_eq(row->counter[TRACE_PAGES_SHARED], _i == 1 ? 1 : 0);
		ck_assert_int_eq(row->counter[TRACE_PAGES_SHARING], _i == 1 ? 1 : 0);
		ck_assert_int_eq(row->counter[TRACE_PAGES_UNSHARED], _i == 1 ? 0 : 2);
	}
	ck_assert_int_eq(kb_knobs_save_idle(&after, 600 * UINT64_C(1000000000), msg, sizeof msg), 0);
	for (size_t i = 0; i < before.n; i++)
		ck_assert_str_eq(kb_knobs_get(&after, before.knob[i].name), before.knob[i].value);
	kb_result_free(&res);
	wl_free(wl);
}
END_TEST

static int nodes_with_memory(void)
{
	int n = 0;

	for (int node = 0; node < 1024; node++) {
		char path[128];

		snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", node);
		if (access(path, F_OK) == 0)
			n++;
	}
	return n;
}

int main(void)
{
	SRunner *sr;
	Suite *s;
	TCase *tc;
	int failed, nodes, lock;

#ifndef HAVE_NUMA
	printf("SKIP: check_backend_numa: NUMA placement not built (configured --without-numa)\n");
	return 77;
#endif
	if (geteuid() != 0 || access("/sys/kernel/mm/ksm/run", F_OK) != 0) {
		printf("SKIP: check_backend_numa: needs root and KSM\n");
		return 77;
	}
	nodes = nodes_with_memory();
	if (nodes < 2) {
		printf("SKIP: check_backend_numa: ksm_tests -N needs two NUMA nodes with memory; "
		       "this machine has %d\n",
		       nodes);
		return 77;
	}
	lock = lock_kernel_suites();
	if (lock < 0) {
		printf("check_backend_numa: cannot lock the suites\n");
		return 99;
	}
	s = suite_create("backend_numa");
	tc = tcase_create("ksm_tests_N");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_numa_N, 0, 2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
