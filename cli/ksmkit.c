/*
 * ksmkit.c - the ksmkit program: finds the subcommand and runs it.
 *
 * Every subcommand answers --help from its usage text here, so `ksmkit X
 * --help` always tells the truth.
 */
#include "config.h"
#include "cli.h"
#include "cli_output.h"

#include <string.h>

static const char lint_usage[] =
	"usage: ksmkit lint [-q|--quiet] FILE.wl...\n"
	"\n"
	"Check workload files strictly and print each in normalized form (every key\n"
	"explicit; the output parses back to the same workload). The first problem\n"
	"in each file is reported as FILE:LINE: message.\n"
	"\n"
	"  -q, --quiet   only report problems; print nothing for good files\n"
	"\n"
	"Exit status: 0 all files are valid, 2 a file is invalid or unreadable.\n";

static const char sim_usage[] =
	"usage: ksmkit sim FILE.wl [--csv|--json] [--per-batch] [--walk-every-insert]\n"
	"                  [--costs FILE] [-o FILE] [-q|--quiet]\n"
	"\n"
	"Run a workload on the KSM simulator (the kernel's semantics as the workload's\n"
	"[global] kernel says: 6.18 by default) and print its trace: one row per full\n"
	"scan with every counter of /sys/kernel/mm/ksm and each process's ksm_stat,\n"
	"and (CSV and JSON) what each term of the cost model has charged to ksmd's\n"
	"CPU so far: a column cost_TERM_ns per term (visit, checksum, tree_level,\n"
	"merge, batch, scan, mm_slot, vma, rmap_alloc, ...; ksmkit calibrate lists\n"
	"them), which add up to ksmd_cpu_ns (to a ns a batch). Time in the trace is\n"
	"simulated.\n"
	"\n"
	"  --csv          the trace as CSV (readable back by ksmkit compare)\n"
	"  --json         the trace as JSON\n"
	"  --per-batch    also a row after every ksmd batch\n"
	"  --walk-every-insert\n"
	"                 walk the unstable tree at every insert; by default a full\n"
	"                 scan that rebuilds the last scan's tree as it was (memory\n"
	"                 at rest) charges each insert the walk it made then, in O(1)\n"
	"                 a page: the same trace either way, only slower\n"
	"  --costs FILE   the cost model's terms from FILE (ksmkit calibrate)\n"
	"  -o FILE        write the trace to FILE instead of standard output (never\n"
	"                 over the workload or the costs file)\n"
	"  -q, --quiet    no progress line on stderr\n"
	"\n"
	"Admission: before anything is allocated, the run's memory is bounded (44\n"
	"bytes a simulated page in every process, so 11 GiB for 1 TiB, 56 with\n"
	"detector = partial, plus stable nodes, written contents and trace rows)\n"
	"and the run is refused, with\n"
	"FILE:LINE of the size, scans, time or rate to change, when it needs more than\n"
	"MemAvailable (or KSMKIT_MEM_AVAILABLE, e.g. 64g), maps more than 2^31 - 2\n"
	"pages, schedules more than 1e12 page writes, or sets max_page_sharing above\n"
	"4194303 (a frame's mappings are 23 bits; the kernel takes up to 2^31 - 1).\n"
	"On a terminal a progress line on stderr shows the scan or simulated time\n"
	"against the workload's stop, page writes done and planned, and the time left.\n"
	"The workload's [expect] sections are checked on the trace (and the page\n"
	"partition): each failed check is said on stderr as FILE:LINE with its value.\n"
	"\n"
	"Exit status: 0 ok, 1 the run failed (a store answered otherwise than the\n"
	"workload expects, full scans stopped advancing, or an [expect] failed) or the\n"
	"trace could not be written, 2 bad usage or workload (refused by admission\n"
	"included).\n";

static const char run_usage[] =
	"usage: ksmkit run FILE.wl [--csv|--json] [-o FILE] [-q|--quiet] [--force]\n"
	"                  [--per-batch] [--pages FILE] [--soft-dirty FILE]\n"
	"                  [--measure merge|cow|unmerge|thp]\n"
	"       ksmkit run --guest nodes=N[,kernel=6.1|6.12|6.12+NAME][,mem=SIZE]\n"
	"                  [,timeout=TIME]\n"
	"                  FILE.wl [--csv|--json] [-o FILE] [--per-batch] [--pages FILE]\n"
	"       ksmkit run --cmd [--scans N] [--duration T] [--knob NAME=VALUE,...]\n"
	"                  [--pages-to-scan N] [--sleep-millisecs N] [--capture FILE]\n"
	"                  [--csv|--json] [-o FILE] [-q] [--force] -- CMD [ARGS...]\n"
	"\n"
	"Run a workload on this machine's kernel KSM (as root) in lockstep with ksmd's\n"
	"full scans and print its trace: one row per full scan with every counter of\n"
	"/sys/kernel/mm/ksm, each process's ksm_stat, ksmd's CPU time and the time.\n"
	"\n"
	"With --guest the same backend runs inside a qemu guest (TCG, no KVM) with N\n"
	"NUMA nodes (1 to 8) and one of Debian's kernels (docs/guest.md): the way to\n"
	"see per-node trees (merge_across_nodes = 0) on a one-node machine, and two\n"
	"more real kernels. kernel= picks one: 6.1 (the default: Debian 12's own, with\n"
	"the older semantics, stable search before the checksum) or 6.12, or 6.12+NAME:\n"
	"a kernel `make kernel` built from Debian's 6.12 source with the patch\n"
	"patches/...-NAME.patch (6.12+upstream: none; docs/guest.md). mem= is the\n"
	"RAM per node (default: enough for the workload), timeout= bounds the whole\n"
	"guest (default: 60 s plus the workload's timeout). The guest is prepared by\n"
	"`make guest` in the build tree (or KSMKIT_GUEST_DIR names a prepared\n"
	"directory); its memory is never mergeable on the host (mem-merge=off,\n"
	"checked), so the host's KSM and its knobs are not touched. Guest times\n"
	"measure the emulator, not KSM: --measure is refused there. --soft-dirty works\n"
	"there (Debian's kernels track soft-dirty bits, where this host's may not).\n"
	"\n"
	"A region with thp = always must be huge pages after setup, on a host as in a\n"
	"guest: the run is refused, naming the first 2 MiB range that is not, rather\n"
	"than measuring another workload.\n"
	"\n"
	"  --csv, --json      the trace as CSV or JSON (default: a table of the main\n"
	"                     counters)\n"
	"  -o, --output FILE  write the output to FILE instead of stdout (no output\n"
	"                     file may be the workload, nor another output)\n"
	"  -q, --quiet        no progress line (shown on a terminal after 2 s)\n"
	"  --force            run although other processes use KSM (their pages then\n"
	"                     count in every global counter)\n"
	"  --per-batch        also a row after every ksmd batch\n"
	"  --pages FILE       after every scan, write each region page's frame and KSM\n"
	"                     flag to FILE (CSV): which pages share a physical page\n"
	"  --soft-dirty FILE  write the pages written in each scan interval (soft-dirty\n"
	"                     bits) to FILE (CSV); this write-protects the workload's\n"
	"                     pages at every scan end\n"
	"  --measure WHAT     print a ksm_tests measurement instead of the trace:\n"
	"                     merge (-P: MADV_MERGEABLE until 2 full scans, MiB/s),\n"
	"                     cow (-C: the first write event, merged vs never merged),\n"
	"                     unmerge (-D: MADV_UNMERGEABLE), thp (-H: merge with THP)\n"
	"\n"
	"With --cmd, no workload: CMD runs with PR_SET_MEMORY_MERGE set between fork\n"
	"and exec (as systemd's MemoryKSM= does: all of its private memory is\n"
	"mergeable), its standard output and error going to ksmkit's standard error,\n"
	"and the same rows are taken at every full scan, without pausing ksmd (a row\n"
	"read after ksmd moved on is marked invalid); the process column is \"cmd\"\n"
	"(docs/live.md). The run ends after --scans N full scans, after --duration T\n"
	"(a last batch row shows where ksmd stood), or when CMD exits, whichever comes\n"
	"first; CMD and its process group are killed then (and on every other exit\n"
	"path: a signal, a SIGKILL of ksmkit), and ksmd drops their items before the\n"
	"knobs are restored.\n"
	"  --cmd              run the command after -- (which must be given)\n"
	"  --scans N          stop after N full scans\n"
	"  --duration T       stop after T (30s, 2m)\n"
	"  --knob LIST        KSM knobs for the run, NAME=VALUE,... under their sysfs\n"
	"                     names (checked as a workload's [global]; the others\n"
	"                     keep the kernel's defaults)\n"
	"  --pages-to-scan N, --sleep-millisecs N\n"
	"                     the same for those two knobs\n"
	"  --capture FILE     also capture CMD's memory at every full scan (the format\n"
	"                     of ksmkit capture; ksmkit capture --info FILE reads it)\n"
	"\n"
	"Every writable knob of /sys/kernel/mm/ksm is saved first and restored however\n"
	"the run ends, within seconds of a SIGKILL of any of its processes: this\n"
	"process restores when the runner or a workload process dies, a sentinel in\n"
	"its own session when this process (or its process group) is killed; a run\n"
	"killed whole is restored by the next run or `ksmkit restore`. The run's\n"
	"pages are unmerged. It refuses to start while other processes use KSM\n"
	"(unless --force) or when the workload needs more than 80% of MemAvailable,\n"
	"and one run waits for another (/run/ksmkit/backend.lock). A workload's\n"
	"smart_scan_policy other than upstream is the simulator's: it is refused (bad\n"
	"input) unless the kernel was built with it (its release ends in +NAME, as a\n"
	"guest kernel 6.12+phased does).\n"
	"\n"
	"The workload's [expect] sections are checked on the trace (the page partition\n"
	"is captured at every scan when one counts duplicates); each failed check is\n"
	"said on stderr as FILE:LINE with its value, and a check of a counter this\n"
	"kernel lacks is noted, not failed.\n"
	"\n"
	"Exit status: 0 ok, 1 the run failed or was refused (or the guest failed or\n"
	"timed out, or an [expect] failed), 2 bad usage or input, 77 skipped (not root, no KSM, no such NUMA\n"
	"node, THP off for a thp = always region; with --guest no qemu, no prepared\n"
	"guest or not the kernel asked for; the reason is printed).\n";

static const char compare_usage[] =
	"usage: ksmkit compare FILE.wl [--json] [-o FILE] [-q] [--force]\n"
	"       ksmkit compare --guest nodes=N[,kernel=6.1|6.12|6.12+NAME][,mem=SIZE]\n"
	"                      [,timeout=TIME] FILE.wl [--json] [-o FILE] [-q]\n"
	"       ksmkit compare --sim-only A.csv B.csv [--json] [-o FILE]\n"
	"\n"
	"Run a workload on this kernel's KSM (as root; see ksmkit run), or with --guest\n"
	"on the kernel (6.1, 6.12, or 6.12+NAME built by make kernel) of a qemu guest\n"
	"with N NUMA nodes (see ksmkit run), then on the simulator, and compare them\n"
	"scan by scan: every counter of every row, each process's ksm_stat, and the\n"
	"page partition (which pages share one physical page, from pagemap). The\n"
	"simulator follows the semantics of the kernel that actually ran (6.1, 6.10,\n"
	"6.11 to 6.13 as 6.12, 6.14 and later as 6.18), whatever the workload's kernel\n"
	"key says (a note says so); a kernel built with a patch is its base release\n"
	"plus the settings of its row (KG_PATCHES in guest/guest.h: 6.12+phased is\n"
	"6.12 with smart_scan_policy = phased). Counters that kernel lacks are left\n"
	"out. pages_scanned and pages_skipped, which the kernel never resets, are\n"
	"compared as changes since scan 0; time is not compared. The table shows\n"
	"sim|kernel per scan (* marks a difference) and names the first divergence. A\n"
	"workload that cannot be deterministic (continuous writers, a time stop) is\n"
	"compared within 25%, over the scans both runs have, without the partition.\n"
	"The workload's [expect] sections are checked on both sides: the table shows\n"
	"each check's value on each, and a failed check is said on stderr, naming the\n"
	"side.\n"
	"\n"
	"  --json         the report as JSON\n"
	"  -o FILE        write the report to FILE\n"
	"  -q, --quiet    no notes on stderr\n"
	"  --force        run the kernel side although others use KSM\n"
	"  --guest SPEC   the kernel side in a qemu NUMA guest; no scan speed is\n"
	"                 reported from it (its times measure the emulator)\n"
	"  --sim-only     compare two saved traces (CSV, as ksmkit sim/run --csv\n"
	"                 write them) instead of running anything\n"
	"\n"
	"Exit status: 0 identical (every [expect] holding on both sides), 1 different,\n"
	"an [expect] failed or a run failed, 2 bad usage or input,\n"
	"77 the kernel side could not run here (the simulator's trace is printed\n"
	"and the reason given).\n";

static const char check_usage[] =
	"usage: ksmkit check CONFIG [--json] [--mutant NAME] [--bfs|--dfs DEPTH|none]\n"
	"                    [-j|--workers N] [--bitstate LOG2BITS]\n"
	"                    [--set KEY=VALUE] [-o COUNTEREXAMPLE.wl] [--max-states N]\n"
	"                    [-q|--quiet]\n"
	"       ksmkit check --list-invariants | --list-mutants\n"
	"\n"
	"Model-check the simulator on a small configuration (docs/model-checking.md;\n"
	"mc/configs/ has examples): explore every interleaving of the configured user\n"
	"actions with ksmd's steps, checking the invariants after every step (data\n"
	"integrity, KSM pages read-only, tree shapes, max_page_sharing, counters, NUMA,\n"
	"volatility, deadlock with ksm_thread_mutex as state, bounded liveness). Prints\n"
	"the states generated and distinct, the depth, the time and states/s; on a\n"
	"violation first the shortest trace (breadth-first) step by step with the\n"
	"counters.\n"
	"\n"
	"Visited states are kept as 64-bit XXH3 fingerprints: two distinct states share\n"
	"one with probability 2^-64, so a search over n states skips one wrongly with\n"
	"probability at most about n^2/2^65 (printed with the statistics).\n"
	"\n"
	"  --json              statistics, verdict and trace as JSON\n"
	"  --mutant NAME       check a simulator with a seeded bug (--list-mutants)\n"
	"  --set KEY=VALUE     read the [check] key KEY = VALUE in place of CONFIG's\n"
	"                      own (repeatable, each key once): --set smart_scan=1\n"
	"                      --set smart_scan_policy=phased checks a configuration\n"
	"                      under the fixed smart scan\n"
	"  --bfs               breadth-first: a shortest counterexample (the default,\n"
	"                      unless the configuration says search = dfs)\n"
	"  --dfs DEPTH|none    depth-first, exploring DEPTH steps from the start at most;\n"
	"                      none: no bound, each state expanded once (SPIN's search:\n"
	"                      the same states and counts as breadth-first, faster)\n"
	"  -j, --workers N     a breadth-first search, or one depth-first with --dfs\n"
	"                      none, on N threads (1 to 8): the same states and counts\n"
	"                      (breadth-first: another shortest trace maybe); a bounded\n"
	"                      or bitstate depth-first search runs on one\n"
	"  --bitstate LOG2BITS bitstate hashing (SPIN's supertrace): depth-first, with\n"
	"                      2^LOG2BITS bits (20 to 36) in place of the fingerprints,\n"
	"                      two a state; not exhaustive: the coverage is estimated\n"
	"  -o FILE.wl          write the counterexample as a workload for ksmkit sim and\n"
	"                      ksmkit run (when its user actions fall between full scans;\n"
	"                      never over CONFIG)\n"
	"  --max-states N      stop after N distinct states (then not exhaustive)\n"
	"  -q, --quiet         no progress line on stderr\n"
	"  --list-invariants   what each invariant checks, exactly\n"
	"  --list-mutants      the seeded bugs --mutant selects\n"
	"\n"
	"The configuration's knobs obey the rules ksmkit lint applies to a workload's\n"
	"(pages_to_scan = 0 is refused, for one).\n"
	"\n"
	"Exit status: 0 every invariant holds in every state explored, 1 a violation\n"
	"(or no room to finish, or a write error), 2 bad usage or configuration.\n";

static const char plot_usage[] =
	"usage: ksmkit plot counters TRACE.csv [TRACE2.csv] [-c COUNTER[,COUNTER...]]\n"
	"                            -o OUT.png|OUT.svg [--title T] [--size WxH]\n"
	"       ksmkit plot sweep RESULTS.csv -o OUT.png|OUT.svg [--title T]\n"
	"                         [--xlabel X] [--ylabel Y] [--logx] [--logy] [--bars]\n"
	"                         [--size WxH]\n"
	"\n"
	"Draw a chart with GNU libplot. The image type follows the output name:\n"
	".png or .svg; the size is 800x500 pixels unless --size says otherwise.\n"
	"\n"
	"counters: KSM counters after every full scan of a trace (ksmkit sim --csv or\n"
	"ksmkit run --csv; batch rows are left out), x = full scans. With two traces\n"
	"(say the simulator's and the kernel's) the second is dashed on top of the\n"
	"first and each series is named after its trace's engine (\"sim pages_sharing\",\n"
	"\"kernel pages_sharing\").\n"
	"  -c, --counters LIST  counters under their sysfs names, comma-separated\n"
	"                       (default pages_shared,pages_sharing,pages_unshared,\n"
	"                       pages_volatile)\n"
	"\n"
	"sweep: benchmark results, a CSV file whose first line (after '#' comments\n"
	"and blank lines) is the header\n"
	"    series,x,min,median,max\n"
	"followed by one line per point: series name (legend text; no comma or\n"
	"quote), x, and the min, median and max of the repeated measurements of y,\n"
	"e.g. 'kernel,0.25,180.2,181.0,183.9'. Lines may come in any order; one\n"
	"point per series and x. Each series is a line through its medians (in\n"
	"increasing x) with error bars from min to max.\n"
	"  --bars               grouped bars instead: a group per x value, a bar per\n"
	"                       series, error bars from min to max\n"
	"  --logx, --logy       log10 axis (its values must be > 0)\n"
	"  --xlabel X           x axis label (default 'x')\n"
	"  --ylabel Y           y axis label (default 'median, error bars min to max')\n"
	"\n"
	"  -o, --output FILE    the image to write (.png or .svg)\n"
	"  --title T            the chart's title (default 'KSM counters per full\n"
	"                       scan: WORKLOAD', or the results file's name)\n"
	"  --size WxH           the image size in pixels (200 to 8000 each)\n"
	"\n"
	"Exit status: 0 ok, 1 the image could not be written, 2 bad usage or input\n"
	"(FILE:LINE: message), 77 skipped: ksmkit was built without GNU libplot.\n";

static const char calibrate_usage[] =
	"usage: ksmkit calibrate [-o FILE] [--pages N] [--repeats N] [--runs N] [--no-kernel]\n"
	"                        [--force] [-q]\n"
	"\n"
	"Measure the simulator's cost model on this machine and write it to FILE\n"
	"(default ksmkit-costs.ini), for ksmkit sim, compare, demo and sweep --costs\n"
	"FILE. Userspace microbenchmarks time xxh64 and memcmp of 4 KiB pages, a\n"
	"sampled checksum (16 words a page, on pages not in the cache) against a\n"
	"page's, which makes a sampled word's cost that share of a checksum's, and,\n"
	"through /proc/self/clear_refs, a PTE bit test and test-and-clear with its\n"
	"TLB flush. Then (as root) ksmd runs twenty-four calibration workloads, none\n"
	"of them shipped (N pages, default 65536, at rest, a quarter of them, in\n"
	"small batches, unique, volatile in 4 KiB pages and in THPs, equal but their\n"
	"last bytes, mostly discarded, exec'd after every scan, empty with\n"
	"use_zero_pages, rewritten after each scan and left at rest on the zero page,\n"
	"and half forked before the first scan; 4096 pages at the default knobs; tiny\n"
	"hosts of 64 pages in one process, 32 processes, 32 mappings, 8 batches a\n"
	"scan, and of 8 pages; and busy, with sleep_millisecs 0, 64 pages in one\n"
	"process, in 32 and in 8 batches a scan, 8 pages, 4096 pages, and 4096 unique\n"
	"pages with smart scan), each --repeats times (the five tiny hosts after\n"
	"sleeps and the forked one four times as often, their equations weighed to\n"
	"count as one run's); the simulator counts the work of each cost term\n"
	"(sim.h's SIM_COST_TERMS) in each scan, and a non-negative least-squares fit\n"
	"of ksmd's CPU time per scan (every scan of every repeat one equation, a busy\n"
	"host's 250 scans one, weighed by its size: relative errors) gives each\n"
	"fitted term's cost with its standard error: a visit (4 KiB page, THP\n"
	"subpage), the extra of one of a batch's first 256 visits after a sleep, a\n"
	"visit in a busy batch, a checksum, a memcmp byte, a tree level, a merge and\n"
	"the page it frees (apart on a forked host), a zero-page merge, a batch after\n"
	"a sleep and a busy one, a full scan's start and an mm_slot in either, a\n"
	"mapping, an address with no page, an rmap_item allocated and freed, a\n"
	"smart-scan skip beside its visit; the wall clock gives the real length of a\n"
	"sleep. ksmd's CPU time is read from a perf task-clock event on it (exact),\n"
	"else from its schedstat. Two costs are not measured and keep their defaults:\n"
	"a THP split and a dup looked at by a chain prune, which no calibration run\n"
	"isolates (debugfs's split_huge_pages would, but kernel lockdown closes it on\n"
	"the test machine). The fit's error per scan is printed. Run it on a quiet\n"
	"machine: other load inflates ksmd's CPU time.\n"
	"\n"
	"  -o FILE        where the costs go\n"
	"  --pages N      pages per calibration workload (1000 to 10000000)\n"
	"  --repeats N    kernel runs of each calibration workload (1 to 20, default 3)\n"
	"  --runs N       microbenchmark repetitions (the median is taken)\n"
	"  --no-kernel    microbenchmarks only\n"
	"  --force        run the kernel part although others use KSM\n"
	"  -q, --quiet    no progress notes\n"
	"\n"
	"Exit status: 0 ok, 1 failure, 2 bad usage, 77 the kernel part could not run\n"
	"here (the file then holds microbenchmark costs only; the reason is printed).\n";

static const char sweep_usage[] =
	"usage: ksmkit sweep NAME|all [-o DIR] [--runs N] [--sim-only] [--force]\n"
	"                    [--costs FILE] [--scale F] [--workloads DIR] [-q]\n"
	"       ksmkit sweep NAME --point I [--runs N] [...]\n"
	"       ksmkit sweep NAME --emit-jobs [--ksmkit CMD] [--scale F] [--costs FILE]\n"
	"       ksmkit sweep NAME --collect FILE... [-o DIR]\n"
	"       ksmkit sweep NAME --print-workload I [--series S] [--scale F]\n"
	"       ksmkit sweep --list\n"
	"\n"
	"Benchmark sweeps: one measurement over a range of a parameter, on this\n"
	"kernel's KSM (as root) and on the simulator, side by side in every\n"
	"repetition. Each point is measured --runs times (default 5) and reported as\n"
	"min, median and max; ratios between series (sim / kernel, dirty / checksum)\n"
	"are taken inside each repetition, then their median. Writes DIR/NAME.csv,\n"
	"DIR/NAME-ratios.csv (ksmkit plot sweep format), DIR/NAME.png and .svg\n"
	"(default DIR: ksmkit-sweeps) and DIR/NAME.txt, the summary table it also\n"
	"prints. Sweeps (--list): predict, smart-scan, volatile, nai-xia, detectors,\n"
	"detector-errors, merge, cow, numa, numa-ksm, numa-merged. smart-scan runs\n"
	"every smart_scan_policy and smart scan off on the validation workloads and\n"
	"smart-scan-mixed (docs/findings/smart-scan.md). Without root the kernel's\n"
	"series are left out and the reason is printed.\n"
	"\n"
	"  -o DIR             where the results go\n"
	"  --runs N           repetitions per point (1 to 1000; quote only medians of 5+)\n"
	"  --sim-only         the simulator's series only\n"
	"  --no-guest         numa*: no qemu guest series (a prepared guest, make guest,\n"
	"                     runs the kernel with 1, 2 or 4 NUMA nodes; counters only)\n"
	"  --force            run the kernel although others use KSM\n"
	"  --costs FILE       the simulator's costs (ksmkit calibrate)\n"
	"  --scale F          multiply region sizes by F (0.01 to 100)\n"
	"  --workloads DIR    predict, smart-scan: the shipped workloads (default\n"
	"                     ./workloads, else the installed set)\n"
	"  --point I          measure point I only and print its rows (CSV) on stdout\n"
	"  --emit-jobs        print one command per point running the simulator's\n"
	"                     series (the kernel's stay here), for GNU parallel:\n"
	"                       ksmkit sweep detectors --emit-jobs | parallel -k |\n"
	"                         ksmkit sweep detectors --collect -\n"
	"                     gives the same files as ksmkit sweep detectors --sim-only;\n"
	"                     parallel -S host1,host2 runs them on other machines\n"
	"                     (docs/parallel.md); a sweep of kernel series only is refused\n"
	"  --ksmkit CMD       the command --emit-jobs prints (default: this program by\n"
	"                     its absolute path)\n"
	"  --collect FILE...  read the rows of --point jobs (- is stdin; every point\n"
	"                     needs rows) and write the results, charts and summary;\n"
	"                     give it the --scale and --costs the jobs had\n"
	"  --print-workload I the workload point I runs, for series S (default 0)\n"
	"  -q, --quiet        no progress on stderr\n"
	"\n"
	"Exit status: 0 ok, 1 a run failed, 2 bad usage or input, 77 nothing could be\n"
	"measured here (a sweep of kernel series only, without root).\n";

static const char demo_usage[] =
	"usage: ksmkit demo [-o DIR] [-q] [--force] [--guest nodes=N[,...]] [FILE.wl...]\n"
	"\n"
	"The main job: run every workload (default: ./workloads, else the installed\n"
	"set) on this kernel's KSM (or with --guest all of them in one qemu guest with\n"
	"N NUMA nodes; see ksmkit run), then on the simulator in the semantics of the\n"
	"kernel that ran, and print one line each:\n"
	"match (every counter, every scan, every page partition), within 25% (a\n"
	"workload that cannot be deterministic), DIFFERS (with the first divergence),\n"
	"or sim only (the kernel side could not run here, and why). Traces (CSV) and\n"
	"a chart per workload (PNG, when built with GNU libplot) go to DIR (default\n"
	"ksmkit-demo). The kernel side needs root; see ksmkit run.\n"
	"\n"
	"  -o DIR         where traces and charts go\n"
	"  -q, --quiet    no \"running...\" line\n"
	"  --force        run the kernel side although others use KSM\n"
	"  --guest SPEC   the kernel side in one qemu NUMA guest (docs/guest.md)\n"
	"\n"
	"Exit status: 0 nothing differs, 1 a workload differs or failed, 2 bad usage.\n";

static const char selftest_usage[] =
	"usage: ksmkit selftest [-q] [--force | --guest nodes=N[,kernel=K] | --sim-only]\n"
	"                       [FILE.wl...]\n"
	"\n"
	"The kernel's own KSM selftests (ksm_functional_tests and the ksm_tests runs of\n"
	"run_vmtests.sh, as workloads: default ./workloads/selftests, else the\n"
	"installed set; docs/selftests.md), or the workloads named. Each runs on the\n"
	"simulator in its workload's kernel semantics, then on this kernel (root;\n"
	"without root every kernel test is skipped) or with --guest all of them in one\n"
	"qemu guest. Output is TAP 13, as kselftest prints it: a plan, \"ok N sim: NAME\"\n"
	"and \"ok N kernel: NAME\" lines, \"# SKIP reason\" where the kernel lacks what a\n"
	"test needs (PR_SET_MEMORY_MERGE, uffd-wp, a NUMA node, THP, a fixed behaviour\n"
	"the workload requires), and \"# Totals: pass:N fail:N xfail:0 xpass:0 skip:N\n"
	"error:N\". A kernel test passes when its [expect] sections hold and its run\n"
	"matches the simulator scan by scan and page by page (following the kernel that\n"
	"ran); otherwise the line names the first failed check or differing row. For\n"
	"ksm_tests -P, -H, -D and -C a run on this kernel also prints its MiB/s, beside\n"
	"ksm_tests' own when ksm_tests is on PATH (\"ksm_tests not found on PATH\"\n"
	"otherwise): information, not a verdict. Progress goes to stderr.\n"
	"\n"
	"  --guest SPEC   the kernel side in one qemu guest (docs/guest.md); a test\n"
	"                 needing more NUMA nodes than it has is skipped\n"
	"  --sim-only     the simulator only\n"
	"  --force        run on this kernel although others use KSM\n"
	"  -q, --quiet    no progress on stderr\n"
	"\n"
	"Exit status: 0 every test passed or was skipped, 1 a test failed or could\n"
	"not run, 2 bad usage or a bad workload.\n";

static const char estimate_usage[] =
	"usage: ksmkit estimate CAPTURE [OPTIONS]\n"
	"       ksmkit estimate -p PID[,PID...] [--every T] [--duration T] [--keep FILE]\n"
	"                       [--mergeable-only] [OPTIONS]\n"
	"       ksmkit estimate [--every T] [--duration T] [--keep FILE] [--mergeable-only]\n"
	"                       [OPTIONS] -- CMD [ARGS...]\n"
	"       ksmkit estimate CAPTURE --sweep SPEC [OPTIONS] --emit-jobs [--ksmkit CMD]\n"
	"       ksmkit estimate CAPTURE --sweep SPEC [OPTIONS] --point I\n"
	"       ksmkit estimate CAPTURE --sweep SPEC [OPTIONS] --collect FILE|-\n"
	"OPTIONS: [--knobs NAME=V,...] [--defaults] [--schedule time|scans]\n"
	"         [--time T | --scans N] [--kernel NAME] [--costs FILE]\n"
	"         [--sweep 'KNOB=V1,V2,...;KNOB=...'] [--max-cpu P%] [--chart FILE.png|.svg]\n"
	"         [--csv|--json] [-o FILE] [--print-workload] [-q|--quiet]\n"
	"\n"
	"Predict what KSM would save on real memory before it runs: pages_shared,\n"
	"pages_sharing, ksm_zero_pages and general_profit over time, the time to reach\n"
	"90% of the final saving, and ksmd's CPU. The memory is a capture (ksmkit\n"
	"capture, docs/capture.md), or processes (-p) or a command (after --)\n"
	"captured first: tokens only, every --every (default 1s), for --duration\n"
	"(default 10s with -p; a command until it exits); Ctrl-C ends the capture\n"
	"early and the estimate goes on with what it has. --keep FILE keeps that\n"
	"capture, else it is a temporary file, removed at the end. --mergeable-only\n"
	"captures only the memory already marked mergeable (MADV_MERGEABLE, as qemu's\n"
	"guest RAM with mem-merge=on): what KSM would merge if it were started now,\n"
	"rather than what PR_SET_MEMORY_MERGE would give it.\n"
	"\n"
	"The capture is replayed on the simulator in simulated time (fill = capture,\n"
	"every = time: each snapshot lands at its own time into the run), one process\n"
	"per captured process, all its private anonymous memory mergeable (merge =\n"
	"prctl, as PR_SET_MEMORY_MERGE, systemd's MemoryKSM= or qemu's mem-merge\n"
	"make it). --print-workload prints that workload (ksmkit sim runs it) and\n"
	"stops. The saving is pages_sharing + ksm_zero_pages pages; ksmd's CPU comes\n"
	"from the simulator's cost model (--costs FILE from ksmkit calibrate, else\n"
	"its defaults), as a share of one CPU over the run and over its last full\n"
	"scan (what ksmd keeps costing once the saving has settled).\n"
	"\n"
	"Knobs: this machine's, read from /sys/kernel/mm/ksm (never written), or the\n"
	"kernel's defaults with --defaults; --knobs NAME=VALUE,... changes some\n"
	"(parsed as the kernel would). --time T: how long to simulate (default: the\n"
	"capture's span plus four full scans at the knobs' rate, 10 s to 7 days).\n"
	"--schedule scans replays a capture taken while KSM ran (--every full-scan:\n"
	"each snapshot knows ksmd's full_scans) scan for scan instead: snapshot k\n"
	"after as many full scans as the real run had done (every = capture), for\n"
	"--scans N (default: the capture's span plus four); smart_scan's skips depend\n"
	"on that alignment, so this is how a live run (ksmkit vms) is checked.\n"
	"--kernel NAME: whose semantics (default 6.18; ksmkit lint --help lists them).\n"
	"\n"
	"--sweep 'pages_to_scan=100,1000,10000;sleep_millisecs=10,20' runs the\n"
	"estimate at every point of the grid (up to 4 knobs, 32 values each, 256\n"
	"points): a table of the saving against ksmd CPU, and with --max-cpu P%\n"
	"(a share of one CPU) the point it recommends: of those whose CPU over the\n"
	"last full scan is at most P, the one that saves the most, then the one\n"
	"that reaches 90% soonest, then the cheapest. --chart draws the saving over\n"
	"time (one estimate) or the saving against CPU (a sweep), PNG or SVG.\n"
	"\n"
	"A sweep of a capture file in pieces, for GNU parallel (docs/parallel.md):\n"
	"--emit-jobs prints one command line per point (this program, or --ksmkit\n"
	"CMD; the capture and --costs by absolute path; every knob, --kernel and the\n"
	"run's length written out, so a worker's own knobs do not enter); --point I\n"
	"computes point I alone and prints its row (every figure exactly, and what it\n"
	"ran at); --collect FILE (- for standard input) reads the rows back and, with\n"
	"the options of the sweep in one process (--max-cpu, --csv, --json, --chart,\n"
	"-o), prints the same bytes. Every point must have exactly one row, of this\n"
	"sweep: a missing, repeated, malformed or foreign one (other knobs, kernel,\n"
	"schedule, length or capture) is refused with FILE:LINE. The output options\n"
	"are --collect's, not the jobs'; -p and -- are refused (capture to a file\n"
	"first: the jobs all read it).\n"
	"    ksmkit estimate F.cap --sweep S --emit-jobs | parallel -k |\n"
	"        ksmkit estimate F.cap --sweep S --max-cpu 1% --collect -\n"
	"\n"
	"Output: a table for people, with ksmd's CPU by term of the cost model;\n"
	"--csv (one estimate: a row at every full scan and at the end; a sweep: a\n"
	"row per point), each with a column cost_TERM_ns per term (one estimate's:\n"
	"so far; a sweep's: over the run); or --json (costs_ns: the same). -o FILE\n"
	"instead of standard output. Progress on stderr when it is a terminal.\n"
	"\n"
	"Exit status: 0 ok; 1 the run or an output failed; 2 bad usage, an\n"
	"unreadable or damaged capture, a run too big for this machine's memory\n"
	"(admission, as ksmkit sim), or rows --collect refuses; 77 --chart without\n"
	"libplot.\n";

static const char capture_usage[] =
	"usage: ksmkit capture -o FILE (-p PID[,PID...] | -- CMD [ARGS...])\n"
	"                      [--every DURATION|full-scan] [--count N | --duration D]\n"
	"                      [--consistent] [--bytes] [--mergeable-only] [-q|--quiet]\n"
	"       ksmkit capture --info FILE [--csv] [--strict]\n"
	"\n"
	"Take snapshots of the private anonymous memory of running processes (-p) or\n"
	"of a command started here (after --; its own memory, not its children's)\n"
	"into FILE (docs/capture.md; the format is docs/capture-format.md): for\n"
	"every page whether it is present, whether a THP maps it, and a 64-bit\n"
	"content token (XXH3-64 of its 4096 bytes; zero pages are marked as such),\n"
	"each snapshot stored as the changes since the one before. Shared,\n"
	"file-backed, hugetlb and device (VM_PFNMAP/VM_IO) mappings and the kernel's\n"
	"special ones ([vdso], [vsyscall]...) are left out. The processes are only\n"
	"read (/proc/PID/pagemap, /proc/PID/mem; /proc/kpageflags for THP where it is\n"
	"readable, as root; otherwise no page is marked THP and the file says so).\n"
	"The first snapshot is taken at once. FILE is written snapshot by snapshot\n"
	"and flushed to the disk after each: a capture that is stopped (Ctrl-C,\n"
	"SIGTERM, a full disk, a kill) leaves FILE valid up to its last complete\n"
	"snapshot. A process that exits or execs ends its stream, said on stderr;\n"
	"the capture goes on while any is left.\n"
	"\n"
	"  -o, --output FILE   the capture file to write (replaced)\n"
	"  -p, --pid LIST      the processes to capture, comma-separated (at most 64)\n"
	"  --every DURATION    the time between snapshots (default 1s: 500ms, 2s, 1m);\n"
	"                      full-scan: one at each new full scan of ksmd instead\n"
	"                      (/sys/kernel/mm/ksm/full_scans, read only; KSM must run)\n"
	"  --count N           stop after N snapshots\n"
	"  --duration D        stop once D has passed (the last snapshot is at D or\n"
	"                      before); without either, until every process has ended\n"
	"                      or a signal (SIGINT, SIGTERM) stops the capture\n"
	"  --consistent        stop each process (ptrace, every thread) while its\n"
	"                      snapshot is read and let it go as it was; the pauses\n"
	"                      are stored and their median and maximum said at the end\n"
	"  --bytes             also store the bytes of each distinct page once,\n"
	"                      zstd-compressed (for replaying on a real kernel)\n"
	"  --mergeable-only    only the VMAs KSM may merge now (VM_MERGEABLE: \"mg\" in\n"
	"                      /proc/PID/smaps VmFlags, from MADV_MERGEABLE or\n"
	"                      PR_SET_MEMORY_MERGE): a qemu guest's RAM, not qemu's heap\n"
	"  -q, --quiet         no progress line and no summary on stderr\n"
	"\n"
	"--info FILE checks all of FILE and prints its streams and one row per\n"
	"snapshot: pages in the VMAs, present, zero and THP pages, distinct tokens\n"
	"among the present non-zero pages, duplicates (present non-zero pages less\n"
	"distinct: the most KSM could free by merging them), pages changed.\n"
	"  --csv               only the rows, as CSV\n"
	"  --strict            refuse a file that does not end as a finished capture\n"
	"                      does (by default it is read up to its last whole\n"
	"                      snapshot, and where it stops is said)\n"
	"\n"
	"Exit status: 0 ok (the capture ended as asked, by a signal included), 1 the\n"
	"capture failed (FILE could not be written: it stays valid up to its last\n"
	"complete snapshot, as the message says), 2 bad usage, a process that is not\n"
	"ours to read or does not exist, a command that cannot run, or (--info) a\n"
	"damaged file, named with the byte offset where the damage is.\n";

static const char vms_usage[] =
	"usage: ksmkit vms [--guests N] [--runs R] [--mem SIZE] [--fill SIZE]\n"
	"                  [--kernel 6.1|6.12] [--duration T | --scans N]\n"
	"                  [--knob NAME=VALUE,...] [--pages-to-scan N]\n"
	"                  [--sleep-millisecs N] [-o DIR] [--chart FILE]\n"
	"                  [--no-capture] [--csv] [-q] [--force]\n"
	"       ksmkit vms --qemu [OPTIONS] -- QEMU [ARGS...]\n"
	"\n"
	"The seed's experiment on this machine's KSM (as root): N identical qemu\n"
	"guests side by side, their RAM mergeable on the host (qemu's mem-merge=on\n"
	"marks it MADV_MERGEABLE), the host's KSM counters measured at every full\n"
	"scan while a capture follows the qemu processes; repeated R times. Prints\n"
	"the final pages_shared and pages_sharing of each run and their mean and\n"
	"sample standard deviation, and draws pages_sharing over time, one line per\n"
	"run. Each guest boots the project's guest kernel and initramfs (`make\n"
	"guest`; TCG, one vCPU) and fills --fill MiB of its memory with pages that\n"
	"differ from each other but are the same in every guest, then waits. With\n"
	"--qemu the guests are your own qemu command line, run as it is, N times.\n"
	"The guests are this run's own processes: the refusal when another process\n"
	"has mergeable memory or pages are merged is checked before they start, and\n"
	"they are killed, and KSM restored, however the run ends (docs/live.md).\n"
	"\n"
	"  --guests N         guests side by side (default 2, at most 16)\n"
	"  --runs R           repetitions (default 1)\n"
	"  --mem SIZE         each guest's RAM (default 192m)\n"
	"  --fill SIZE        memory each guest fills alike (default 48m; at most\n"
	"                     --mem less 64m for its kernel)\n"
	"  --kernel NAME      the guest kernel: 6.1 (default) or 6.12\n"
	"  --duration T       each run's length from the guests' start (default 45s)\n"
	"  --scans N          or stop after N full scans\n"
	"  --knob LIST, --pages-to-scan N, --sleep-millisecs N\n"
	"                     KSM knobs, as for run --cmd (default pages_to_scan 1000,\n"
	"                     sleep_millisecs 10: a steady state in seconds)\n"
	"  -o, --output DIR   where every file goes (default ksmkit-vms): runR.csv\n"
	"                     (the trace), runR.cap (the capture), runR-vmI.console\n"
	"                     and runR-vmI.log, pages_sharing.png\n"
	"  --chart FILE       the chart elsewhere (.png or .svg)\n"
	"  --no-capture       no capture files\n"
	"  --csv              the table as CSV (one line per run)\n"
	"  -q, --quiet        no progress line\n"
	"  --force            run although others use KSM (their pages then count)\n"
	"  --qemu             the guests are the qemu command line after --\n"
	"\n"
	"Exit status: 0 ok, 1 a run failed (a guest died or did not finish its fill,\n"
	"the run was refused or interrupted), 2 bad usage, 77 skipped (not root, no\n"
	"KSM, no qemu-system-x86_64, no prepared guest).\n";

static const char restore_usage[] =
	"usage: ksmkit restore [-q|--quiet]\n"
	"\n"
	"Put back the KSM knobs a ksmkit run saved and did not restore, and say which\n"
	"ones changed. A run restores its own knobs however it ends: its guardian\n"
	"process does, or, when the guardian is killed (SIGKILL of it or of its\n"
	"process group included), its sentinel does within seconds and logs it to\n"
	"/run/ksmkit/rescues.log. Only when every process of a run died at once are\n"
	"the saved knobs (/run/ksmkit/saved-knobs) left for the next run, which\n"
	"restores them before it starts, or for this command. It waits up to 30 s for\n"
	"a running backend (or a sentinel still restoring) to finish, settles the\n"
	"kernel as a run does (ksmd drops the dead run's leftovers; run = 2 only when\n"
	"nobody else has pages merged), writes back every knob that differs, and\n"
	"removes the file. With nothing to restore it says so (and shows the last\n"
	"rescue a sentinel logged) and exits 0.\n"
	"\n"
	"  -q, --quiet   print nothing when there is nothing to restore\n"
	"\n"
	"Exit status: 0 restored, or nothing to restore; 1 a run is still going, a\n"
	"knob could not be written, or restoring needs root; 2 bad usage; 77 no KSM.\n";

static const char *const plot_charts[] = { "counters", "sweep", NULL };

const struct cli_command cli_commands[] = {
	{ "lint", cmd_lint, "check workload files and print them normalized", lint_usage, NULL },
	{ "sim", cmd_sim, "run a workload on the simulator and print its trace", sim_usage, NULL },
	{ "run", cmd_run, "run a workload on this kernel's KSM, safely", run_usage, NULL },
	{ "compare", cmd_compare, "compare the simulator with this kernel, scan by scan",
	  compare_usage, NULL },
	{ "demo", cmd_demo, "compare every default workload, save traces and charts",
	  demo_usage, NULL },
	{ "selftest", cmd_selftest, "the kernel's KSM selftests on the simulator and a kernel, as TAP",
	  selftest_usage, NULL },
	{ "check", cmd_check, "model-check the simulator on a small configuration", check_usage,
	  NULL },
	{ "plot", cmd_plot, "draw charts of traces and sweep results (PNG, SVG)", plot_usage,
	  plot_charts },
	{ "sweep", cmd_sweep, "benchmark sweeps: kernel and simulator side by side",
	  sweep_usage, NULL },
	{ "restore", cmd_restore, "restore the KSM knobs a killed run left changed", restore_usage,
	  NULL },
	{ "capture", cmd_capture, "snapshots of processes' memory as content tokens, for KSM",
	  capture_usage, NULL },
	{ "vms", cmd_vms, "identical qemu guests side by side on this host's KSM, run R times",
	  vms_usage, NULL },
	{ "estimate", cmd_estimate, "what KSM would save on a capture, how fast, at what CPU",
	  estimate_usage, NULL },
	{ "calibrate", cmd_calibrate, "measure the simulator's cost model on this machine",
	  calibrate_usage, NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static void print_main_usage(FILE *out)
{
	fprintf(out, "usage: ksmkit COMMAND [ARGS...]\n"
		     "       ksmkit COMMAND --help\n"
		     "       ksmkit plot counters|sweep --help\n"
		     "       ksmkit --version\n"
		     "\n"
		     "ksmkit is a lab for Linux KSM (Kernel Samepage Merging): one workload file\n"
		     "drives a simulator and the real kernel. Commands:\n\n");
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\nThe command line is strict: options that conflict, an option given twice,\n"
		     "extra arguments, and --help with anything but the command (or plot's\n"
		     "chart) are refused; no output path (-o) may name an input, even by a link.\n"
		     "\nExit status: 0 ok, 1 failure (a write error included, on standard output\n"
		     "too), 2 bad usage or input, 77 skipped (the reason is printed).\n");
}

static bool is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/*
 * `ksmkit CMD --help`, or for a command with subcommands `ksmkit CMD SUB
 * --help`: --help alone. Anywhere else, the command's own parser refuses it.
 */
static bool asks_for_help(const struct cli_command *c, int argc, char **argv)
{
	if (argc == 2 && is_help(argv[1]))
		return true;
	if (argc != 3 || !is_help(argv[2]) || !c->subcommands)
		return false;
	for (const char *const *sub = c->subcommands; *sub; sub++)
		if (strcmp(argv[1], *sub) == 0)
			return true;
	return false;
}

/* The top level's own options: --help and --version, each alone. */
static int top_level_option(int argc, char **argv)
{
	if (argc > 2) {
		cli_error("%s takes no arguments, not '%s' (see ksmkit --help)", argv[1], argv[2]);
		return CLI_USAGE;
	}
	if (is_help(argv[1]))
		print_main_usage(stdout);
	else
		printf("ksmkit %s\n", PACKAGE_VERSION);
	return CLI_OK;
}

static int run_command(int argc, char **argv)
{
	if (argc < 2) {
		print_main_usage(stderr);
		return CLI_USAGE;
	}
	if (is_help(argv[1]) || strcmp(argv[1], "--version") == 0)
		return top_level_option(argc, argv);
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		if (strcmp(argv[1], c->name) != 0)
			continue;
		if (asks_for_help(c, argc - 1, argv + 1)) {
			cli_print_usage(c, stdout);
			return CLI_OK;
		}
		return c->run(argc - 1, argv + 1);
	}
	cli_error("unknown command '%s' (see ksmkit --help)", argv[1]);
	return CLI_USAGE;
}

int main(int argc, char **argv)
{
	cli_watch_stdout();
	return cli_finish_stdout(run_command(argc, argv));
}
