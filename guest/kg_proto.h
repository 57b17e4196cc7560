/*
 * kg_proto.h - the two plain-text formats between ksmkit on the host and
 * ksmkit-guest inside a qemu guest: the job the host packs into the guest's
 * initramfs, and the results the guest writes to its second serial port.
 * Both sides include this header; it holds names and formats, no code.
 *
 * The job, in KG_JOB_DIR of the initramfs:
 *   job          "ksmkit-guest-job 1", then one option per line:
 *                "pages 0|1" (capture the page partition after every scan),
 *                "per-batch 0|1", "soft-dirty 0|1" (capture the pages written
 *                in every scan interval), then "workload INDEX NAME" per workload
 *                (NAME, the rest of the line, is the host's file name, used
 *                in every message so they read as on the host)
 *   INDEX.wl     that workload's text, exactly as the host read it
 *
 * The results, on the guest's second serial port (raw, no line discipline):
 *   ksmkit-guest 1
 *   release RELEASE           uname -r of the guest kernel
 *   nodes LIST                NUMA nodes with memory, as sysfs lists them
 *   note TEXT                 (any number) a backend note
 *   run INDEX                 one block per workload, in job order:
 *   status STATUS             the backend's KB_* status
 *   invalid N                 rows the backend marked invalid
 *   message TEXT              one line, empty when none
 *   trace BYTES               then exactly BYTES of trace CSV (trace.h)
 *   pages COUNT               then COUNT page lines, in runs:
 *     = SCAN PROC REGION PAGE   a run starts at this page ...
 *     PFN FLAGS                 ... one line per page, pages consecutive,
 *                               PFN and FLAGS (TRACE_PAGE_*) in hexadecimal
 *   dirty COUNT               then COUNT soft-dirty pages, one a line:
 *     SCAN PROC REGION PAGE     (struct kb_dirty_page)
 *   end INDEX
 *   done                      the guest finished every workload
 * A results file without "done" means the guest died or timed out.
 */
#ifndef KSMKIT_KG_PROTO_H
#define KSMKIT_KG_PROTO_H

#define KG_JOB_MAGIC "ksmkit-guest-job 1"
#define KG_RESULT_MAGIC "ksmkit-guest 1"
/* Where the job lives inside the guest. */
#define KG_JOB_DIR "/ksmkit"
/* The guest's program, inside the initramfs. */
#define KG_GUEST_PROGRAM "/bin/ksmkit-guest"

#endif
