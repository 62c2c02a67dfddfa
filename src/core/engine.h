/* engine.h -- internals of the engine shared with profile.c, spec.c and the tests. */
#ifndef VM_ENGINE_H
#define VM_ENGINE_H

#include "queue.h"

#include <stdarg.h>

/* Record a failure for vmatch_last_error and return code (printf-style message). */
int vm_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* vm_fail's "cannot queue" for an append that failed with rc (a policy's exchange says it
 * with this).  Returns rc. */
int vm_enqueue_failed(int rc);

/* The general exchange (vm_policy_t.exchange), for the cases a policy's own exchange leaves
 * to it: search's match (keycare = care), then on a miss vm_exchange_queue.  Same returns. */
int vm_exchange_slow(vm_pq_t *search, vm_pq_t *queue, vmatch_bits_t bits, vmatch_bits_t care,
                     void *payload, void **out);
/* An exchange's append alone, through queue's append, after a search that found nothing:
 * VMATCH_QUEUED, or vm_enqueue_failed's error. */
int vm_exchange_queue(vm_pq_t *queue, vmatch_bits_t bits, vmatch_bits_t care, void *payload);

/* Parse spec into *cfg (defaults first).  VMATCH_OK, with *cfg to release with vm_spec_free,
 * or an error with vm_fail's message and nothing to release. */
int vm_spec_parse(const char *spec, vm_config_t *cfg);
/* Release what a parsed config holds (the profile path). */
void vm_spec_free(vm_config_t *cfg);
/* Write the resolved spec of cfg into buf (terminated when len > 0): the engine's keys and
 * those of its storage's and policy's modules.  Returns the length it needs, as snprintf. */
size_t vm_spec_describe(const vm_config_t *cfg, char *buf, size_t len);

/* Per-(context, source) insertion counts, recorded when profile.record=on. */
typedef struct vm_prof_slot {
    uint64_t key;      /* (ctx << src_bits) | src (vm_source_key) */
    uint64_t count[2]; /* PRQ, UMQ insertions */
} vm_prof_slot_t;

typedef struct vm_prof_table {
    vm_prof_slot_t *slots; /* open addressing; a slot with zero counts is free */
    uint64_t cap, used;
} vm_prof_table_t;

/* Make room for one more key (call before the append it will count).  Returns 1 when the
 * table grew, with the old one in *undo, 0 when it had room, or VMATCH_ENOMEM.  After the
 * append, vm_prof_settle(grew, kept) frees the old table (kept: the append succeeded) or
 * puts it back, so a failed call leaves the table as it was. */
int vm_prof_reserve(vm_prof_table_t *t, vm_mem_t *m, vm_prof_table_t *undo);
void vm_prof_settle(vm_prof_table_t *t, vm_mem_t *m, vm_prof_table_t *undo, int grew, int kept);
/* Count one insertion of key on side (after vm_prof_reserve succeeded). */
void vm_prof_count(vm_prof_table_t *t, uint64_t key, int side);
void vm_prof_free(vm_prof_table_t *t, vm_mem_t *m);

/* A profile read back from a file (the format is in docs/workloads.md, "Profile files"). */
typedef struct vm_profile_entry {
    uint32_t ctx, src;
    uint64_t prq, umq;
} vm_profile_entry_t;

typedef struct vm_profile {
    unsigned ctx_bits, src_bits, tag_bits;
    uint32_t nprocs;
    vm_profile_entry_t *entries; /* sorted by (ctx, src) */
    size_t n;
} vm_profile_t;

/* Read a profile.  VMATCH_OK, VMATCH_EIO (cannot open or read) or VMATCH_EINVAL (malformed;
 * vmatch_last_error names the line).  On error *out is left empty. */
int vm_profile_load(const char *path, vm_profile_t *out);
void vm_profile_free(vm_profile_t *p);
/* Read cfg->profile for a static policy (named in the messages) and check it against the
 * spec: the same layout, the same nprocs when both give one, one of them giving it, every
 * source below it.  VMATCH_OK with *out to free and the nprocs in effect in *nprocs, or an
 * error (EINVAL, EIO, ENOMEM) with vm_fail's message and *out empty. */
/* The entries of p with a count on side (VM_PRQ or VM_UMQ), in p's order: their indices into
 * p->entries in idx and their counts in counts (room for p->n each).  Returns how many, with
 * the number of contexts among them in *nctx. */
size_t vm_profile_side(const vm_profile_t *p, int side, uint32_t *idx, uint64_t *counts,
                       uint32_t *nctx);
int vm_profile_load_for(const vm_config_t *cfg, const char *policy, vm_profile_t *out,
                        uint32_t *nprocs);

/* The layout as masks and shifts, worked out once: vmatch_mpi_msg / _recv run on every
 * operation of a port. */
typedef struct vm_packing {
    uint64_t tag_mask, src_mask, ctx_mask;    /* each field's width, in the low bits */
    unsigned tag_shift, src_shift, ctx_shift; /* each field's lowest bit (cfg's) */
    vmatch_bits_t tag_wild; /* the tag bits VMATCH_ANY_TAG clears: all of the field, or
                               all but its top bit for layout=ompi-ucx (Open MPI keeps that
                               bit in every mask, so that ANY_TAG never takes the negative
                               tags of its collectives) */
} vm_packing_t;

struct vmatch_engine {
    vm_config_t cfg;
    vm_packing_t packing;
    vm_env_t env;
    vm_pq_t *side[2]; /* VM_PRQ, VM_UMQ */
    /* The policy's exchange (vm_policy_t), NULL when it has none or profile.record is on. */
    int (*exchange)(vm_pq_t *, vm_pq_t *, vmatch_bits_t, vmatch_bits_t, void *, void **);
    uint64_t searches; /* the lengths, sequence numbers and entries inspected are in env */
    struct vm_threads *threads; /* threads=mutex or multi (threads.h); NULL for single */
    vm_prof_table_t prof;
    char *describe; /* vmatch_describe's text */
    size_t describe_bytes;
};

/* The API calls without their argument checks and without taking a threaded engine: what
 * threads.c runs with the engine held. */
int vm_engine_post(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                   void *req, void **msg_out);
int vm_engine_arrive(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg,
                     void **req_out);
int vm_engine_probe(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                    int remove, void **msg_out);
int vm_engine_remove(vmatch_engine_t *e, int side, const void *payload);

/* Test hook: the engine's memory, to make allocations fail (fail_after). */
static inline vm_mem_t *vm_engine_mem(vmatch_engine_t *e)
{
    return &e->env.mem;
}

#endif
