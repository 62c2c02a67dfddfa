/* engine.h -- the engine's private state, for src/core's engine.c, threads.c, profile.c,
 * stats.c and record.c alone: policies, storages, tools and tests see none of it (they
 * include queue.h, policy.h, module.h, error.h, spec.h, profile.h or hooks.h for what they
 * use). */
#ifndef VM_ENGINE_H
#define VM_ENGINE_H

#include "profile.h"
#include "queue.h"

/* The layout as masks and shifts, worked out once (vmatch_inline.h's vmatch_hot_pack_t):
 * vmatch_mpi_msg / _recv run on every operation of a port. */
typedef vmatch_hot_pack_t vm_packing_t;

/* The matching calls of an engine (arguments checked by the API), picked once at create:
 * engine.c's for a single-threaded engine, as its policy and profile.record want; threads.c
 * wraps them for threads=mutex and multi (vm_threads_create). */
typedef struct vm_calls {
    int (*post)(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                void *req, void **msg_out);
    int (*arrive)(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg,
                  void **req_out);
    int (*probe)(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                 int remove, void **msg_out);
    int (*remove)(vmatch_engine_t *e, int side, const void *payload);
    /* The split calls (vmatch_match_posted, vmatch_enqueue_*). */
    int (*match_posted)(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void **req_out);
    int (*enqueue)(vmatch_engine_t *e, int side, vmatch_bits_t bits, vmatch_bits_t care,
                   uint32_t cls, void *payload);
} vm_calls_t;

struct vmatch_engine {
    /* The call in progress (first: a pointer to the engine is one to it, which the policy's
     * exchange takes as its first argument): its entry's sequence number (the engine's, one
     * more for every call that may queue), every entry compared so far, where a match goes,
     * its class, and the engine's inline version (below). */
    vm_call_t call;
    /* With call, the engine's first bytes are vmatch_hot_t (vmatch_inline.h), which the
     * callers' inline calls read and count on, in the order it gives them (engine.c asserts
     * it): call.abi (VMATCH_INLINE_ABI while they may run, 0 when every call must be the
     * library's: another policy, threads, profile.record), the searches and the sides'
     * published part (vm_side_t.hot; NULL while call.abi is 0). */
    uint64_t searches; /* searches made */
    vmatch_hot_side_t *hot[2];
    vm_packing_t packing;
    vm_calls_t calls;
    vm_config_t cfg;
    vm_env_t env;
    vm_side_t *side[2]; /* VM_PRQ, VM_UMQ; each counts its entries (vm_side_t.len) */
    /* The policy's exchange (vm_policy_t), NULL when it has none; fast: the same while the
     * API calls it directly (a single-threaded engine, profile.record off), else NULL. */
    int (*exchange)(vm_call_t *, vmatch_bits_t, vmatch_bits_t, vm_side_t *, void *,
                    vm_side_t *);
    int (*fast)(vm_call_t *, vmatch_bits_t, vmatch_bits_t, vm_side_t *, void *, vm_side_t *);
    struct vm_threads *threads; /* threads=mutex or multi (threads.h); NULL for threads=off */
    vm_prof_table_t prof;
    struct vm_rec *rec; /* the trace and the files to write (record.c); NULL when none */
    char *describe;     /* vmatch_describe's text */
    size_t describe_bytes;
};

#endif
