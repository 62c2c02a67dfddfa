/* hash_impl.h -- the state of policy=hash, shared by hash.c (the policy), table.c (the
 * bucket table) and arrival.c (the two modes of the unexpected messages).  Not for use
 * outside src/hash.  The design is in docs/hash.md. */
#ifndef VM_HASH_IMPL_H
#define VM_HASH_IMPL_H

#include "module.h"

#include <stdint.h>

extern const vm_module_t vm_hash_module;
extern const vm_policy_t vm_hash_policy;

/* The hash.* keys (hash.c). */
typedef struct vm_hash_config {
    uint32_t buckets; /* a fixed bucket count; 0: the table grows with the load */
    uint32_t load;    /* growing table: entries per bucket above which it doubles */
} vm_hash_config_t;

/* A bucket: a cache line holding its first entries (VM_HASH_WAYS of them) and, once more
 * collide there, a queue of the configured storage for the rest.  An exact match at low
 * load then reads one line, and a bucket costs 64 bytes until a third entry meets two in
 * it.  The entries in the line are older than every entry of the queue: one goes into the
 * line only while the bucket has no queue.  Among themselves they are ordered by their
 * sequence numbers.  A PRQ bucket holds exact receives (care all ones). */
#define VM_HASH_WAYS 2

typedef struct vm_hash_slot {
    vmatch_bits_t bits[VM_HASH_WAYS];
    void *payload[VM_HASH_WAYS]; /* NULL: the way is free (payloads are never NULL) */
    uint64_t seq[VM_HASH_WAYS];
    vm_queue_t *more; /* the bucket's later entries; NULL when it has none */
    uint64_t unused;  /* pads the bucket to a cache line */
} vm_hash_slot_t;

_Static_assert(sizeof(vm_hash_slot_t) == 64, "a bucket is one cache line");

/* Empty queues a side keeps for the next bucket that overflows its slot, instead of
 * destroying them: a bucket that overflows and drains again costs two pointer moves. */
#define VM_HASH_SPARES 8

typedef struct vm_hash {
    vm_pq_t base;
    const vm_hash_config_t *hc;
    /* nb buckets (NULL until the side's first entry).  On the PRQ the exact receives (care
     * all ones), on the UMQ every message while it is hashed. */
    vm_hash_slot_t *table;
    uint32_t nb;
    uint32_t nspare;
    vm_queue_t *spare[VM_HASH_SPARES];
    uint64_t len;     /* entries of the side */
    uint64_t nmore;   /* buckets with a queue */
    uint64_t grow_at; /* len above which the table doubles; UINT64_MAX: fixed */
    vm_queue_t *wild; /* PRQ: the receives with any other care mask; NULL until one */
    /* UMQ, flat: every message in arrival order, the table empty; NULL while hashed. */
    vm_queue_t *flat;
    uint64_t cost;   /* UMQ: search work the other mode would have saved, since the switch */
    int want_switch; /* UMQ: switch at the next call allowed to take memory */
} vm_hash_t;

/* The bucket of match bits among nb: the top 32 bits of a multiplicative hash scaled to
 * nb (multiply-shift, no division), so that doubling nb splits bucket i into 2i and 2i + 1.
 * The multiplier differs from llv's fingerprint hash (the top 16 bits of bits times the
 * golden ratio), so the entries of one bucket keep distinct fingerprints. */
static inline uint32_t vm_hash_index(vmatch_bits_t bits, uint32_t nb)
{
    uint64_t h = bits * 0xD6E8FEB86659FD93ull;
    return (uint32_t)(((h >> 32) * nb) >> 32);
}

/* ---- table.c ---- */

/* Append to bucket i.  VMATCH_OK, or VMATCH_ENOMEM with the table as it was. */
int vm_hash_slot_append(vm_hash_t *h, uint32_t i, vmatch_bits_t bits, vmatch_bits_t care,
                        void *payload, uint64_t seq);
/* The first entry of bucket s that matches: ((bits ^ key) & keycare) == 0 (the entries of
 * the line are exact), or whose payload is `payload` when that is not NULL.  Returns 1
 * with *hit (hit->where NULL: way hit->slot of the line), or 0. */
int vm_hash_slot_find(const vm_hash_slot_t *s, vmatch_bits_t key, vmatch_bits_t keycare,
                      const void *payload, vm_hit_t *hit, uint64_t *inspected);
/* Remove the entry of bucket i that a find just returned. */
void vm_hash_slot_remove(vm_hash_t *h, uint32_t i, const vm_hit_t *hit);
/* Take the oldest entry with exactly these bits from bucket i: 1 with *payload, or 0. */
static inline int vm_hash_slot_take(vm_hash_t *h, uint32_t i, vmatch_bits_t bits,
                                    void **payload, uint64_t *inspected);
/* vm_hash_slot_take past the line: the queue of bucket s. */
int vm_hash_more_take(vm_hash_t *h, vm_hash_slot_t *s, vmatch_bits_t bits, void **payload,
                      uint64_t *inspected);
/* A new empty queue of the side: a spare, else a new one.  OK or ENOMEM. */
int vm_hash_queue_get(vm_hash_t *h, vm_queue_t **out);
/* Give back an empty queue: to the spares, or destroyed when they are full. */
void vm_hash_queue_put(vm_hash_t *h, vm_queue_t *q);
/* Empty every bucket: drop its entries (they live elsewhere now) and its queue. */
void vm_hash_table_clear(vm_hash_t *h);
/* Fill the (empty) table with the entries of q, in its order, first growing it to the
 * load of q's entries.  VMATCH_OK, or ENOMEM with the table empty again. */
int vm_hash_table_fill(vm_hash_t *h, vm_queue_t *q);
/* Make the empty table of nb buckets.  OK or ENOMEM. */
int vm_hash_table_make(vm_hash_t *h);
/* Double the table (best effort: on ENOMEM it stays as it was). */
void vm_hash_grow(vm_hash_t *h);
/* Destroy every queue and the table. */
void vm_hash_table_free(vm_hash_t *h);
/* The entry with the lowest sequence among the first matches of every bucket
 * (vm_hash_slot_find's rules).  Returns its bucket with *best, or -1. */
int64_t vm_hash_scan(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare,
                     const void *payload, vm_hit_t *best, uint64_t *inspected);

static inline int vm_hash_slot_take(vm_hash_t *h, uint32_t i, vmatch_bits_t bits,
                                    void **payload, uint64_t *inspected)
{
    vm_hash_slot_t *s = &h->table[i];
    int w = -1;
    for (int k = 0; k < VM_HASH_WAYS; k++) {
        if (!s->payload[k])
            continue;
        *inspected += 1;
        if (s->bits[k] == bits && (w < 0 || s->seq[k] < s->seq[w]))
            w = k;
    }
    if (w >= 0) {
        *payload = s->payload[w];
        s->payload[w] = NULL;
        h->len--;
        return 1;
    }
    return s->more ? vm_hash_more_take(h, s, bits, payload, inspected) : 0;
}

/* ---- arrival.c: the UMQ's search, removal and append off the fast path ---- */

int vm_hash_umq_match(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, int remove,
                      void **payload, uint64_t *inspected);
int vm_hash_umq_remove_payload(vm_hash_t *h, const void *payload, uint64_t *inspected);
/* Append a message off the fast path.  VMATCH_OK or ENOMEM (nothing changed). */
int vm_hash_umq_append(vm_hash_t *h, vmatch_bits_t bits, void *payload, uint64_t seq);

#endif
