/* gen.h -- seeded workload generators: traces of the receive queues of one chosen rank of a
 * P-process job, for tests, tools and benchmarks alike.
 *
 * A workload is named by a spec: a generator name and key=value parameters, for example
 * "gather P=1024 m=4 order=reverse" or "allreduce-rm P=64 k=7 calls=20".  Every parameter
 * has a default; the same spec (seed included) always gives the same trace.  docs/workloads.md
 * ("Workloads") lists the generators and what each models.
 *
 * Timing model.  Traffic is laid out on a clock: the chosen rank posts its receives in its
 * program order, a few ticks apart, and waits where the algorithm waits; each peer runs
 * ahead of or behind it by a random offset per call (the `skew` parameter, in percent of
 * one algorithm step), so some messages arrive before their receive is posted (unexpected)
 * and some after (expected).  Messages from one source arrive in the order they were sent.
 * Point-to-point traffic uses context 0 and class p2p; collective traffic uses context 1
 * and the class (operation, bytes, P).
 */
#ifndef VM_WL_GEN_H
#define VM_WL_GEN_H

#include "trace.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Contexts of the generated traffic. */
#define VM_WL_CTX_P2P  0
#define VM_WL_CTX_COLL 1

/* Largest trace a generator makes (operations). */
#define VM_WL_MAX_OPS (16u * 1024 * 1024)

/* One generator, for listings. */
typedef struct vm_wl_gen_info {
    const char *name;   /* "gather" */
    const char *models; /* one line: what traffic it models */
    const char *params; /* "P=64 m=8 order=reverse|random|rr ..." with the defaults */
} vm_wl_gen_info_t;

/* The generators, in listing order; *n gets their number. */
const vm_wl_gen_info_t *vm_wl_generators(size_t *n);

/* Generate the workload `spec` into t (freshly initialised).  desc (may be NULL) receives
 * the spec with every parameter resolved, e.g. "gather P=1024 m=4 order=reverse early=0
 * interleave=0 seed=1".  Returns 0, VMATCH_EINVAL (unknown generator or parameter, a value
 * out of range, a trace larger than VM_WL_MAX_OPS; the reason in err) or VMATCH_ENOMEM. */
int vm_wl_generate(const char *spec, vm_trace_t *t, char *desc, size_t desclen, char *err,
                   size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
