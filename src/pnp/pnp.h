/* pnp.h -- partner selection and the partner tables of policy=pnp / pnp-static (pnp.c),
 * shared with the tests and policy=unified (the tools need only partners.h).
 *
 * Thesis chapter 4.  A source key names a rank in one communicator.  The metrics (§4.2.1)
 * compute an edge point over a population of keys, absent keys counting zero, as Algorithm
 * 4.1 does over all P processes; a key whose count exceeds the edge point is a partner.
 */
#ifndef VM_PNP_H
#define VM_PNP_H

#include "partners.h"
#include "queue.h"

#include <stddef.h>
#include <stdint.h>

/* The pnp.* keys (keys.c), for both policies. */
typedef struct vm_pnp_config {
    uint32_t threshold; /* t: a non-partner queue of t entries splits (pnp) */
    uint32_t cap;       /* c: at most floor(c * sqrt(nprocs)) partners per side */
    uint32_t metric;    /* enum vm_pnp_metric */
    uint32_t move;      /* move a new partner's entries to its queue (else: levels) */
    double alpha;       /* of the upper fence */
} vm_pnp_config_t;

extern const vm_policy_t vm_pnp_policy, vm_pnp_static_policy;

/* A side of policy=pnp with at most floor(cap * sqrt(nprocs)) partners instead of pnp.cap's
 * bound (policy=unified's unified.kp).  Same returns as the policy's create. */
int vm_pnp_create_capped(vm_env_t *env, int side, uint32_t cap, vm_side_t **out);

/* A perfect hash by row displacement (thesis §4.2.2): key k sits in row k >> shift, column
 * k & (m - 1) of an m x m grid (m a power of two with m * m > the largest key); each row is
 * shifted right by disp[row] so that no two keys share a column, and the grid collapses into
 * one array of slots.  A lookup is two shifts, a mask and one compare. */
typedef struct vm_phash {
    uint32_t shift, rows; /* m = 1 << shift; rows = the rows that hold a key */
    uint32_t *disp;       /* per row (bytes: its size) */
    uint64_t *key;        /* per slot: key + 1, 0 when empty */
    uint32_t *val;        /* per slot, in the same allocation as key[] */
    uint32_t nslots;
    size_t bytes;
} vm_phash_t;

/* Bytes a table holds. */
static inline size_t vm_phash_bytes(const vm_phash_t *h)
{
    return h->bytes + h->nslots * (sizeof *h->key + sizeof *h->val);
}

/* Build the table of n distinct keys with their values.  VMATCH_OK or VMATCH_ENOMEM (h left
 * empty). */
int vm_phash_build(vm_phash_t *h, vm_mem_t *mem, const uint64_t *keys, const uint32_t *vals,
                   size_t n);
void vm_phash_free(vm_phash_t *h, vm_mem_t *mem);

/* The value of key, or -1 when key is not in the table. */
static inline int64_t vm_phash_find(const vm_phash_t *h, uint64_t key)
{
    uint64_t row = key >> h->shift;
    if (row >= h->rows)
        return -1;
    uint64_t slot = h->disp[row] + (key & ((1ull << h->shift) - 1));
    return slot < h->nslots && h->key[slot] == key + 1 ? (int64_t)h->val[slot] : -1;
}

#endif
