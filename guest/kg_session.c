/*
 * kg_session.c - kg_run(): one guest session from the checks to the
 * results, in the order that fails early and cleans up always:
 *
 *   1. the request: node count, and every region's node inside the guest;
 *   2. this machine: the prepared assets (the kernel asked for, the base
 *      initramfs) and qemu, or a skip that says how to get them;
 *   3. a temporary directory with the session's initramfs (kg_initrd.c);
 *   4. qemu (kg_qemu.c), bounded by the deadline and watched for mergeable
 *      memory;
 *   5. the results (kg_results.c), then the temporary directory is removed
 *      (kept on request, for its console log).
 * Also the --guest argument's parser, the defaults, the kernels' names and
 * the rows of the kernels built from their source (KG_PATCHES).
 */
#include "config.h"
#include "kg_internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (UINT64_C(1) << 20)
/* RAM per node beyond the workloads: the kernel, the initramfs, the rest. */
#define NODE_BASE_MEM (256 * MIB)
/* Booting and powering off, on top of the workloads' own timeouts. */
#define BOOT_ALLOWANCE_NS (60 * KG_NSEC)
#define QEMU_NAME "qemu-system-x86_64"

#define KERNEL_ROW_(id, name, package) [KG_KERNEL_##id] = { name, package },
static const struct {
	const char *name;
	const char *package;
} kernels[] = { KG_KERNELS(KERNEL_ROW_) };
#undef KERNEL_ROW_

#define PATCH_ROW_(id, name, base, patch, settings, doc)                                \
	[KG_PATCH_##id] = { name, KG_KERNEL_##base, patch, settings, doc },
static const struct kg_patch_row patches[KG_PATCH_COUNT] = { KG_PATCHES(PATCH_ROW_) };
#undef PATCH_ROW_

const char *kg_kernel_name(enum kg_kernel k)
{
	return kernels[k].name;
}

const char *kg_kernel_package(enum kg_kernel k)
{
	return kernels[k].package;
}

const struct kg_patch_row *kg_patch_row(enum kg_patch p)
{
	return &patches[p];
}

const char *kg_kernel_dir_name(enum kg_kernel k, enum kg_patch p, char *buf, size_t len)
{
	if (p == KG_PATCH_NONE)
		snprintf(buf, len, "%s", kernels[k].name);
	else
		snprintf(buf, len, "%s+%s", kernels[patches[p].base].name, patches[p].name);
	return buf;
}

enum kg_patch kg_patch_from_release(const char *release)
{
	size_t len = release ? strlen(release) : 0;

	for (int p = KG_PATCH_NONE + 1; p < KG_PATCH_COUNT; p++) {
		size_t n = strlen(patches[p].name);

		if (len > n && release[len - n - 1] == '+' &&
		    strcmp(release + len - n, patches[p].name) == 0)
			return (enum kg_patch)p;
	}
	return KG_PATCH_NONE;
}

/* "6.1, 6.12, 6.12+upstream or 6.12+phased": every kernel, for messages. */
static void kernel_choices(char *out, size_t len)
{
	int total = KG_KERNEL_COUNT + KG_PATCH_COUNT - 1;
	size_t used = 0;
	char name[64];

	out[0] = '\0';
	for (int i = 0; i < total && used < len; i++) {
		if (i < KG_KERNEL_COUNT)
			kg_kernel_dir_name((enum kg_kernel)i, KG_PATCH_NONE, name, sizeof name);
		else
			kg_kernel_dir_name(0, (enum kg_patch)(i - KG_KERNEL_COUNT + 1), name,
					   sizeof name);
		used += (size_t)snprintf(out + used, len - used, "%s%s",
					 i == 0 ? "" : i == total - 1 ? " or " : ", ", name);
	}
}

void kg_options_init(struct kg_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->nodes = 1;
	opt->kernel = KG_KERNEL_6_1;
}

const char *kg_default_dir(const char *fallback)
{
	const char *env = getenv("KSMKIT_GUEST_DIR");

	return env && *env ? env : fallback;
}

void kg_session_free(struct kg_session *s)
{
	for (size_t i = 0; i < s->nruns; i++)
		kb_result_free(&s->run[i].result);
	free(s->run);
	memset(s, 0, sizeof *s);
}

/* kernel=NAME: one of Debian's kernels, or one built from a base's source. */
static int parse_kernel(const char *name, struct kg_options *opt, char *why, size_t whylen)
{
	char choices[256], known[64];

	for (int k = 0; k < KG_KERNEL_COUNT; k++)
		if (strcmp(name, kernels[k].name) == 0) {
			opt->kernel = (enum kg_kernel)k;
			opt->patch = KG_PATCH_NONE;
			return 0;
		}
	for (int p = KG_PATCH_NONE + 1; p < KG_PATCH_COUNT; p++)
		if (strcmp(name, kg_kernel_dir_name(0, (enum kg_patch)p, known, sizeof known)) == 0) {
			opt->kernel = patches[p].base;
			opt->patch = (enum kg_patch)p;
			return 0;
		}
	kernel_choices(choices, sizeof choices);
	return kg_fail(why, whylen, "kernel=%s: expected %s", name, choices);
}

int kg_parse_spec(const char *spec, struct kg_options *opt, char *why, size_t whylen)
{
	char *copy = strdup(spec), *save = NULL, *item;
	bool have_nodes = false;
	int rc = -1;

	if (!copy)
		return kg_fail(why, whylen, "out of memory");
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), *end;
		uint64_t v;

		if (!eq) {
			kg_fail(why, whylen, "'%s': expected KEY=VALUE (nodes=N, kernel=NAME, "
				"mem=SIZE, timeout=TIME)", item);
			goto out;
		}
		*eq++ = '\0';
		if (strcmp(item, "nodes") == 0) {
			v = strtoull(eq, &end, 10);
			if (!isdigit((unsigned char)*eq) || *end || v < 1 || v > KG_MAX_NODES) {
				kg_fail(why, whylen, "nodes=%s: expected 1 to %d", eq, KG_MAX_NODES);
				goto out;
			}
			opt->nodes = (unsigned)v;
			have_nodes = true;
		} else if (strcmp(item, "kernel") == 0) {
			if (parse_kernel(eq, opt, why, whylen) != 0)
				goto out;
		} else if (strcmp(item, "mem") == 0) {
			if (wl_parse_size(eq, &v) != 0 || v < 64 * MIB || v > (UINT64_C(64) << 30)) {
				kg_fail(why, whylen, "mem=%s: expected a size per node, 64m to 64g", eq);
				goto out;
			}
			opt->node_mem = v;
		} else if (strcmp(item, "timeout") == 0) {
			if (wl_parse_time(eq, &v) != 0 || v == 0) {
				kg_fail(why, whylen, "timeout=%s: expected a time such as 90s or 5m", eq);
				goto out;
			}
			opt->timeout_ns = v;
		} else {
			kg_fail(why, whylen, "unknown key '%s' (nodes, kernel, mem, timeout)", item);
			goto out;
		}
	}
	if (!have_nodes) {
		kg_fail(why, whylen, "'%s': nodes=N is required", spec);
		goto out;
	}
	rc = 0;
out:
	free(copy);
	return rc;
}

/* ---- 1. the request --------------------------------------------------------- */

/* Nodes the guest has, and what a guest run cannot take (capture regions). */
static int check_nodes(const struct workload *const *wls, size_t n, unsigned nodes, char *msg,
		       size_t len)
{
	for (size_t w = 0; w < n; w++)
		for (size_t i = 0; i < wls[w]->nregions; i++) {
			const struct wl_region *r = &wls[w]->regions[i];

			/* the job carries the workload files, not the captures they name */
			if (r->capture)
				return kg_fail(msg, len,
					       "%s:%u: [region %s] fill = capture: a guest run does "
					       "not carry the capture file in yet; replay it on this "
					       "machine's kernel (no --guest)",
					       wls[w]->path, r->line, r->name);
			if (r->node >= 0 && (unsigned)r->node >= nodes)
				return kg_fail(msg, len,
					       "%s:%u: [region %s] node = %d: the guest has %u NUMA "
					       "node%s (ask for more with --guest nodes=%d)",
					       wls[w]->path, r->line, r->name, r->node, nodes,
					       nodes == 1 ? "" : "s", r->node + 1);
		}
	return 0;
}

/* RAM per node: the most any one workload places on one node, plus a base. */
static uint64_t node_mem_for(const struct workload *const *wls, size_t n, unsigned nodes)
{
	uint64_t most = 0;

	for (size_t w = 0; w < n; w++) {
		uint64_t on[KG_MAX_NODES] = { 0 };

		for (size_t i = 0; i < wls[w]->nregions; i++) {
			const struct wl_region *r = &wls[w]->regions[i];

			if (r->fill != WL_FILL_NONE)
				on[r->node < 0 ? 0 : r->node] += r->pages * WL_PAGE_SIZE;
		}
		for (unsigned k = 0; k < nodes; k++)
			if (on[k] > most)
				most = on[k];
	}
	/* twice: fork children and unmerging copy pages */
	return (NODE_BASE_MEM + 2 * most + 63 * MIB) / (64 * MIB) * (64 * MIB);
}

/* ---- 2. this machine -------------------------------------------------------- */

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* @name on PATH (or @name itself when it has a '/'), into @out. */
static bool find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL, *dir;
	bool found = false;

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(name, X_OK) == 0;
	}
	copy = strdup(path && *path ? path : "/usr/bin:/bin");
	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", dir, name);
		found = access(out, X_OK) == 0;
	}
	free(copy);
	return found;
}

/*
 * Why @dir has no kernel @k: guest/prepare's reason when it left one
 * (kernels/NAME/unavailable), else that it has not run.
 */
static void explain_missing_kernel(const char *dir, const struct kg_options *opt, char *msg,
				   size_t len)
{
	char path[512], reason[256] = "", name[64];
	const char *patch = opt->patch == KG_PATCH_NONE ? NULL : patches[opt->patch].patch;
	FILE *f;

	kg_kernel_dir_name(opt->kernel, opt->patch, name, sizeof name);
	snprintf(path, sizeof path, "%s/kernels/%s/unavailable", dir, name);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(reason, sizeof reason, f))
			reason[0] = '\0';
		reason[strcspn(reason, "\n")] = '\0';
		fclose(f);
	}
	if (reason[0])
		kg_fail(msg, len, "no %s kernel in the guest directory %s: %s; skipped", name, dir,
			reason);
	else if (opt->patch != KG_PATCH_NONE)
		kg_fail(msg, len, "no built kernel %s in the guest directory %s: run `make kernel%s%s` "
			"in ksmkit's build tree (it builds Debian's %s source%s); skipped", name, dir,
			patch ? " PATCHES=" : "", patch ? patch : "", kg_kernel_name(opt->kernel),
			patch ? " with that patch" : "");
	else
		kg_fail(msg, len, "no %s kernel in the guest directory %s: run `make guest` in "
			"ksmkit's build tree (it fetches Debian's %s package); skipped", name, dir,
			kg_kernel_package(opt->kernel));
}

/* ---- 3-5. the session ------------------------------------------------------------- */

struct paths {
	char dir[200];
	char initrd[256], console[256], results[256], log[256];
};

static int make_workdir(struct paths *p, char *msg, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(p->dir, sizeof p->dir, "%s/ksmkit-guest.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(p->dir))
		return kg_fail(msg, len, "cannot create a directory in %s: %s",
			       tmp && *tmp ? tmp : "/tmp", strerror(errno));
	snprintf(p->initrd, sizeof p->initrd, "%s/initrd.cpio", p->dir);
	snprintf(p->console, sizeof p->console, "%s/console.log", p->dir);
	snprintf(p->results, sizeof p->results, "%s/results", p->dir);
	snprintf(p->log, sizeof p->log, "%s/qemu.log", p->dir);
	return 0;
}

static void remove_workdir(const struct paths *p)
{
	unlink(p->initrd);
	unlink(p->console);
	unlink(p->results);
	unlink(p->log);
	rmdir(p->dir);
}

/* The last non-empty line of @path, printable characters only, into @out. */
static void last_line(const char *path, char *out, size_t len)
{
	char buf[2048];
	FILE *f = fopen(path, "re");
	size_t got = 0;
	long size;

	out[0] = '\0';
	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0) {
		fseek(f, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0, SEEK_SET);
		got = fread(buf, 1, sizeof buf - 1, f);
	}
	fclose(f);
	buf[got] = '\0';
	for (char *line = strtok(buf, "\r\n"); line; line = strtok(NULL, "\r\n")) {
		size_t k = 0;

		for (char *c = line; *c && k + 1 < len; c++)
			if (isprint((unsigned char)*c))
				out[k++] = *c;
		if (k)
			out[k] = '\0';
	}
}

/* Why the guest ended without finishing, from what it left behind. */
static void explain_end(const struct kg_qemu *q, const struct paths *p, uint64_t timeout_ns,
			char *msg, size_t len)
{
	char console[160], log[160];

	last_line(p->console, console, sizeof console);
	last_line(p->log, log, sizeof log);
	if (q->mergeable)
		kg_fail(msg, len, "qemu's memory showed the mergeable flag on the host (VM_MERGEABLE "
			"in its smaps) although it runs with mem-merge=off: the guest was stopped");
	else if (q->timed_out)
		kg_fail(msg, len, "the guest did not finish within %.1f s and was killed "
			"(raise it with --guest ...,timeout=TIME); its console's last line: '%s'",
			(double)timeout_ns / KG_NSEC, console);
	else if (WIFEXITED(q->status) && WEXITSTATUS(q->status) != 0)
		kg_fail(msg, len, "qemu failed (exit status %d): %s", WEXITSTATUS(q->status),
			log[0] ? log : console);
	else
		kg_fail(msg, len, "the guest stopped before finishing its workloads; its console's "
			"last line: '%s'", console);
}

int kg_run(const struct workload *const *wls, size_t n, const struct kg_options *opt,
	   struct kg_session *out, char *msg, size_t len)
{
	char kernel[512], base[512], qemu[512], rmsg[512] = "", name[64];
	const char *dir = opt->dir ? opt->dir : kg_default_dir(NULL);
	uint64_t node_mem, timeout_ns, t0;
	struct kg_qemu q;
	struct paths p;
	int done, status = KB_FAILED;

	memset(out, 0, sizeof *out);
	if (opt->nodes < 1 || opt->nodes > KG_MAX_NODES) {
		kg_fail(msg, len, "a guest has 1 to %d NUMA nodes, not %u", KG_MAX_NODES, opt->nodes);
		return KB_BAD_INPUT;
	}
	if (check_nodes(wls, n, opt->nodes, msg, len) != 0)
		return KB_BAD_INPUT;
	if (!dir) {
		kg_fail(msg, len, "no prepared guest: run `make guest` in ksmkit's build tree, or "
			"set KSMKIT_GUEST_DIR; skipped");
		return KB_SKIPPED;
	}
	snprintf(kernel, sizeof kernel, "%s/kernels/%s/kernel", dir,
		 kg_kernel_dir_name(opt->kernel, opt->patch, name, sizeof name));
	snprintf(base, sizeof base, "%s/initramfs.cpio", dir);
	if (!is_file(base)) {
		kg_fail(msg, len, "no prepared guest in %s (no initramfs.cpio there): run "
			"`make guest` in ksmkit's build tree (it needs qemu-system-x86, "
			"busybox-static, cpio and Debian's kernel packages); skipped", dir);
		return KB_SKIPPED;
	}
	if (!is_file(kernel)) {
		explain_missing_kernel(dir, opt, msg, len);
		return KB_SKIPPED;
	}
	if (!find_program(opt->qemu ? opt->qemu : QEMU_NAME, qemu, sizeof qemu)) {
		kg_fail(msg, len, "%s not found (apt-get install qemu-system-x86); skipped",
			opt->qemu ? opt->qemu : QEMU_NAME);
		return KB_SKIPPED;
	}
	node_mem = opt->node_mem ? opt->node_mem : node_mem_for(wls, n, opt->nodes);
	timeout_ns = opt->timeout_ns;
	if (!timeout_ns) {
		timeout_ns = BOOT_ALLOWANCE_NS;
		for (size_t i = 0; i < n; i++)
			timeout_ns += wls[i]->timeout_ns;
	}
	if (make_workdir(&p, msg, len) != 0)
		return KB_FAILED;
	if (kg_initrd_write(p.initrd, base, wls, n, opt, msg, len) != 0)
		goto out;
	t0 = kg_now_ns();
	if (kg_qemu_start(&q, qemu, kernel, p.initrd, opt->nodes, node_mem, p.console, p.results,
			  p.log, msg, len) != 0 ||
	    kg_qemu_wait(&q, t0 + timeout_ns, msg, len) != 0)
		goto out;
	out->wall_ns = kg_now_ns() - t0;
	done = kg_results_read(p.results, out, opt, rmsg, sizeof rmsg);
	if (done == 1 && out->nruns == n) {
		status = KB_OK;
	} else {
		explain_end(&q, &p, timeout_ns, msg, len);
		if (done < 0 && !q.timed_out && !q.mergeable)
			kg_fail(msg, len, "%s", rmsg);
	}
out:
	if (opt->keep) {
		snprintf(out->workdir, sizeof out->workdir, "%s", p.dir);
	} else {
		remove_workdir(&p);
	}
	return status;
}
