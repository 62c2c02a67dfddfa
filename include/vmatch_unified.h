/* vmatch_unified.h -- the figures of policy=unified (docs/unified.md), an extension of
 * vmatch.h: include it for the queues of each collective class.  Its scalar figures are keys
 * of vmatch_stat ("unified.levels"); this header adds the per-class struct.
 *
 * vmatch_class_stats_t follows vmatch.h's rule for extension structs: fields are only added
 * at its end, and vmatch_class_stats passes sizeof(vmatch_class_stats_t) as this header
 * declares it, so a program built against this header keeps working with a later library
 * (the fields that library added stay unseen) and with an earlier one of the same version
 * line (fields that library lacks read 0).
 */
#ifndef VMATCH_UNIFIED_H
#define VMATCH_UNIFIED_H

#include "vmatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many levels per collective operation and side: policy=unified opens no more
 * (a class then keeps the levels there are), so level_queues below lists every level. */
#define VMATCH_MAX_LEVELS 16

/* The queues of one class under policy=unified, per side: index 0 is the PRQ, 1 the UMQ.  A
 * collective class's first call runs through the profiling queue that all classes share; its
 * profile then asks for `wanted` queues, and its operation's levels hold them (a level opens
 * when a class of the operation wants more queues than the newest one has and the cap leaves
 * room). */
typedef struct {
    uint32_t op;          /* the class's operation; 0 for class 0 and unknown ids */
    uint32_t profiled[2]; /* 1 once its first call has been profiled */
    double traversal[2];  /* entries inspected per search of it in the profiling queue */
    uint32_t wanted[2];   /* queues its profile asks for */
    uint32_t levels[2];   /* levels of its operation, searched in this order */
    uint32_t level_queues[2][VMATCH_MAX_LEVELS]; /* queues of each level */
    uint32_t coll_queues[2]; /* queues of every level of the side, all operations */
    uint32_t coll_cap[2];    /* their cap: unified.kc * sqrt(nprocs) */
    uint64_t profiling[2];   /* entries in the profiling queue now, all classes */
    uint64_t p2p_queues[2];  /* queues of the point-to-point structure (class 0) */
} vmatch_class_stats_t;

/* Fill *out for class cls (0: point-to-point; the per-class fields stay zero):
 * vmatch_stat_struct with key "unified.class".  VMATCH_OK, VMATCH_EINVAL (NULL argument), or
 * VMATCH_EUNSUPPORTED when the engine's policy is not unified (no other keeps queues per
 * class). */
static inline int vmatch_class_stats(const vmatch_engine_t *e, uint32_t cls,
                                     vmatch_class_stats_t *out)
{
    return vmatch_stat_struct(e, "unified.class", cls, out, sizeof *out);
}

#ifdef __cplusplus
}
#endif

#endif /* VMATCH_UNIFIED_H */
