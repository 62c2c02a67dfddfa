/* gen_queue.c -- queue-depth workloads: one side of the queues filled to a given depth with
 * exact entries of one source, then emptied in posting order (forward: each search finds
 * its entry first) or in the reverse order (each search walks a list to its far end, as
 * UCX's test_ucp_tag_perf and the report's tag-perf section do), round after round.
 *
 * side=posted: `depth` receives (tags 0 .. depth-1) are posted, then their messages arrive;
 * side=unexpected: the messages arrive first, then the receives are posted.  order=forward
 * takes them in the order they were queued, order=reverse in the opposite order.  Every
 * round ends with both queues empty, so the rounds are the same work again: depth 1 is the
 * cost of a bare exact pair, depth 8 a short queue's, depth 4096 a long one's. */
#include "gen_internal.h"

#include "vmatch.h"

#include <stdio.h>

static const char *const side_names[] = {"posted", "unexpected", NULL};
static const char *const qorder_names[] = {"forward", "reverse", NULL};

enum { QU_DEPTH, QU_SIDE, QU_ORDER, QU_ROUNDS, QU_SRC, QU_P, QU_SEED, QU_N };
static const wl_pdef_t queue_params[QU_N] = {
    [QU_DEPTH] = {"depth", 8, 1, 1 << 20, NULL},
    [QU_SIDE] = {"side", 0, 0, 1, side_names},
    [QU_ORDER] = {"order", 0, 0, 1, qorder_names},
    [QU_ROUNDS] = {"rounds", 100, 1, 1 << 24, NULL},
    [QU_SRC] = {"src", 1, 0, (1 << 20) - 1, NULL},
    [QU_P] = {"P", 2, 2, 1 << 20, NULL},
    [QU_SEED] = {"seed", 1, 0, 1LL << 62, NULL}, /* unused: the trace is fixed; kept for
                                                    the spec's usual keys */
};

static int gen_queue(wl_gen_ctx_t *g, const wl_gen_t *self, const long long *v, char *err,
                     size_t errlen)
{
    (void)self;
    uint32_t depth = (uint32_t)v[QU_DEPTH], P = (uint32_t)v[QU_P];
    uint64_t rounds = (uint64_t)v[QU_ROUNDS];
    int32_t src = (int32_t)v[QU_SRC];
    if ((uint32_t)src >= P) {
        snprintf(err, errlen, "queue: src %d is not below P=%u", src, P);
        return VMATCH_EINVAL;
    }
    if (2 * (uint64_t)depth * rounds > VM_WL_MAX_OPS) {
        snprintf(err, errlen, "queue: 2*depth*rounds = %llu operations is too many",
                 (unsigned long long)(2 * (uint64_t)depth * rounds));
        return VMATCH_EINVAL;
    }
    int rc = wl_setup(g, (uint64_t)v[QU_SEED], P);
    if (rc)
        return rc;
    vm_trace_t *t = g->t;
    int unexpected = v[QU_SIDE] == 1, reverse = v[QU_ORDER] == 1;
    for (uint64_t r = 0; r < rounds; r++) {
        for (uint32_t i = 0; i < depth; i++)
            if (unexpected)
                vm_trace_arrive(t, VM_WL_CTX_P2P, src, (int32_t)i, 0);
            else
                vm_trace_post(t, VM_WL_CTX_P2P, src, (int32_t)i, 0);
        for (uint32_t k = 0; k < depth; k++) {
            int32_t tag = (int32_t)(reverse ? depth - 1 - k : k);
            if (unexpected)
                vm_trace_post(t, VM_WL_CTX_P2P, src, tag, 0);
            else
                vm_trace_arrive(t, VM_WL_CTX_P2P, src, tag, 0);
        }
    }
    return 0;
}

const wl_gen_t wl_queue_gens[] = {
    {"queue",
     "queue depth: depth exact entries of one source queued on one side, then matched in "
     "their order or the reverse, round after round",
     queue_params, QU_N, gen_queue, NULL},
};
const size_t wl_n_queue_gens = sizeof wl_queue_gens / sizeof *wl_queue_gens;
