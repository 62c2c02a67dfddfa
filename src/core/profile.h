/* profile.h -- profiles: the insertion counts an engine records (profile.record=on) and the
 * files the static designs read back (profile=PATH).  The format is in docs/workloads.md. */
#ifndef VM_PROFILE_H
#define VM_PROFILE_H

#include "pool.h"
#include "queue.h"

#include <stddef.h>
#include <stdint.h>

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
    unsigned version; /* 1, or 2 (with rank, program and the closing `end N`) */
    unsigned ctx_bits, src_bits, tag_bits;
    uint32_t nprocs;
    int64_t rank;     /* of the process that recorded it, -1 when the file does not say */
    char program[64]; /* its program, "" when the file does not say */
    vm_profile_entry_t *entries; /* sorted by (ctx, src) */
    size_t n;
} vm_profile_t;

/* Read a profile.  VMATCH_OK, VMATCH_EIO (cannot open or read) or VMATCH_EINVAL (malformed;
 * vmatch_last_error names the line).  On error *out is left empty. */
int vm_profile_load(const char *path, vm_profile_t *out);
void vm_profile_free(vm_profile_t *p);
/* Read cfg->profile (%r and %p expanded) for a static policy (named in the messages) and
 * check it against the spec: the same layout, the same nprocs when both give one, one of
 * them giving it, every source below it, and (profile.program=check) this program's.
 * VMATCH_OK with *out to free and the nprocs in effect in *nprocs, or an error (EINVAL, EIO,
 * ENOMEM) with vm_fail's message and *out empty. */
/* The entries of p with a count on side (VM_PRQ or VM_UMQ), in p's order: their indices into
 * p->entries in idx and their counts in counts (room for p->n each).  Returns how many, with
 * the number of contexts among them in *nctx. */
size_t vm_profile_side(const vm_profile_t *p, int side, uint32_t *idx, uint64_t *counts,
                       uint32_t *nctx);
int vm_profile_load_for(const vm_config_t *cfg, const char *policy, vm_profile_t *out,
                        uint32_t *nprocs);

#endif
