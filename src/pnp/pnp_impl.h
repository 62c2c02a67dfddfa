/* pnp_impl.h -- the state of policy=pnp and pnp-static, shared by pnp.c (the policy and its
 * dynamic partners) and static.c (partners from a profile).  Not for use outside src/pnp. */
#ifndef VM_PNP_IMPL_H
#define VM_PNP_IMPL_H

#include "module.h"
#include "pnp.h"

extern const vm_module_t vm_pnp_module;

/* A partner: its source key + 1 (0: a free slot), its queue in partner[] and the last chain
 * index its searches walk. */
typedef struct vm_pnp_slot {
    uint64_t key;
    uint32_t queue, last;
} vm_pnp_slot_t;

typedef struct vm_pnp {
    vm_side_t base;
    const vm_pnp_config_t *pc; /* the pnp.* keys */
    int is_static;
    vm_source_key_t key; /* what a source key is made of (key.care: a care mask covering
                            it is keyed) */
    vm_queue_t **chain, **partner, *wild;
    vm_queue_t *newest; /* chain[nchain - 1] */
    uint32_t nchain, npartners, chain_cap, partner_cap;
    uint32_t rounds; /* extraction rounds that took partners (levels, without pnp.move) */
    /* Bit c: chain[c] is closed (c < nchain - 1) and may hold entries.  Closed queues only
     * drain, so a search clears the bit of one it finds empty and never looks at it again. */
    uint64_t *closed;
    uint32_t closed_words;
    uint32_t limit; /* most partners: floor(pnp.cap * sqrt(nprocs)) */
    uint64_t retry; /* newest chain queue length that triggers an extraction */
    /* dynamic */
    /* The partner table: nslots slots with linear probing, never more than 2/3 full, so a
     * lookup (on every routed call) reads one slot or two of one cache line; NULL and 0
     * until the first partners. */
    struct vm_pnp_slot *table;
    uint32_t nslots;
    /* Forgetting (quiet.c, dynamic only): windows of operations, a window busy when the
     * side held mark entries at its start or end or an extraction ran in it; after
     * two quiet ones the partners are forgotten as the side next empties (due). */
    uint64_t end;  /* sequence number at which the window ends; 0: starts at the next append;
                      UINT64_MAX: never (pnp-static) */
    uint64_t mark; /* the side's length that makes a window busy: pnp.threshold / 16, >= 2 */
    uint32_t busy, quiet, due;
    uint64_t forgets; /* pnp.forgets */
    /* static */
    vm_phash_t ph;
    uint32_t *ctxs, nctx; /* contexts of the partners, index = mapped context */
    size_t ctxs_bytes;
    uint32_t nprocs, src_bits;
} vm_pnp_t;

/* Room for need queue pointers in *arr (capacity *cap, doubled as needed).  OK or ENOMEM. */
int vm_pnp_grow(vm_mem_t *mem, vm_queue_t ***arr, uint32_t *cap, uint32_t need);
/* Make queue i of arr (arr has room).  OK or ENOMEM. */
int vm_pnp_add_queue(vm_pnp_t *s, vm_queue_t **arr, uint32_t i);
/* pnp-static: read the profile, check it against the spec and make the partners' queues.
 * OK, or an error with vm_fail's message. */
int vm_pnp_load_profile(vm_pnp_t *s);

/* quiet.c: the end of a window, at the append with partners and sequence number seq past
 * it, and the forgetting of every partner (their queues and the table), for a side that is
 * empty. */
void vm_pnp_window(vm_pnp_t *s, uint64_t seq);
void vm_pnp_forget(vm_pnp_t *s);

#endif
