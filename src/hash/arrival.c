/* arrival.c -- policy=hash: the unexpected messages, hashed or flat.
 *
 * Hashed, every message sits in the bucket of its match bits, where an exact receive or
 * probe finds the oldest one with those bits (they all hash there, in arrival order).  A
 * search whose care mask has a wildcard could match a message of any bucket.  Flat, the
 * messages are one queue of the storage in arrival order, where every search is the
 * storage's: the vector kernels over llv, which compare 16-bit fingerprints for an exact
 * search and whole match bits for a wildcard one, never a walk of buckets.
 *
 * Keeping both at once (a bucket view and an arrival-order view, each message in both)
 * costs two appends per message, and every exact removal must find its message in the
 * arrival-order view too: a search of that queue from its head, as long as the flat
 * search it replaces (docs/hash.md has the figures).  So the side is one or the other, and
 * switches by what its searches cost, as in ski rental: hashed, a wildcard search walks
 * every bucket, and once those walks have cost about two copies of the side (less what the
 * exact searches saved meanwhile) it turns flat; flat, an exact search compares up to its
 * match, and once those compares have cost about a copy (less what the wildcard searches
 * saved) it turns hashed.  Either switch copies the messages once,
 * in arrival order (from buckets: merged by sequence number).  It happens only in a call
 * that succeeds, so a call that fails with VMATCH_ENOMEM still changes nothing (a search
 * that finds nothing leaves the switch to the next call), and is best effort: out of
 * memory, the side stays as it is, which is correct, only slower.
 */
#include "hash_impl.h"

/* The switches, in the units each side counts.  Flat: entries compared by exact searches
 * (a vector compare of fingerprints covers 16 of them); it turns hashed past FLAT_EXACT
 * times its entries plus FLAT_SLACK, about what the copy costs, and each wildcard search
 * takes back FLAT_WILD times (entries + buckets), what it would have cost hashed.  Hashed:
 * buckets visited by wildcard searches, plus the entries their queues compared; it turns
 * flat past HASHED_WILD times (entries + buckets), and each exact search takes back
 * 1/HASHED_EXACT of (entries + buckets), about what it saves against a flat search.  So a
 * side stays flat while more than about one search in 32 has a wildcard, and hashed while
 * fewer than about one in 64 have. */
#define FLAT_EXACT   8
#define FLAT_SLACK   256
#define FLAT_WILD    16
#define HASHED_WILD  2
#define HASHED_EXACT 32

/* Hashed -> flat: the buckets' messages merged by sequence number into one queue. */
static void to_flat(vm_hash_t *h)
{
    uint64_t n = h->base.count;
    vm_hash_entry_t *v = vm_hash_table_sorted(h, n);
    vm_env_t *env = h->base.env;
    vm_queue_t *q = NULL;
    if ((n && !v) || env->cfg->storage->create(env, VM_UMQ, &q) < 0) {
        vm_hash_entries_free(h, v, n);
        return;
    }
    int rc = VMATCH_OK;
    for (uint64_t k = 0; k < n && rc == VMATCH_OK; k++)
        rc = q->ops->append(q, v[k].bits, ~(vmatch_bits_t)0, v[k].payload, v[k].seq);
    vm_hash_entries_free(h, v, n);
    if (rc < 0) {
        q->ops->destroy(q);
        return;
    }
    vm_hash_table_clear(h);
    h->flat = q;
    h->cost = 0;
    h->want_switch = 0;
}

/* Flat -> hashed. */
static void to_hashed(vm_hash_t *h)
{
    if (vm_hash_table_fill(h, h->flat) < 0)
        return;
    h->flat->ops->destroy(h->flat);
    h->flat = NULL;
    h->cost = 0;
    h->want_switch = 0;
}

/* A call that may take memory: make the switch a search asked for. */
static void settle(vm_hash_t *h)
{
    if (!h->want_switch)
        return;
    if (h->flat)
        to_hashed(h);
    else
        to_flat(h);
}

int vm_hash_umq_append(vm_hash_t *h, vmatch_bits_t bits, void *payload, uint64_t seq)
{
    int rc;
    uint32_t i = 0;
    if (h->flat)
        rc = h->flat->ops->append(h->flat, bits, ~(vmatch_bits_t)0, payload, seq);
    else
        rc = vm_hash_slot_append(h, i = vm_hash_index(bits, h->base.nb), bits,
                                 ~(vmatch_bits_t)0, payload, seq);
    if (rc < 0)
        return rc;
    h->base.count++;
    if (!h->flat && (h->base.count > h->grow || vm_hash_crowded(h, i)))
        vm_hash_grow(h);
    settle(h);
    return VMATCH_OK;
}

int vm_hash_flat_match(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, int remove,
                       void **payload, uint64_t *inspected)
{
    uint64_t before = *inspected;
    int found = vm_queue_match(h->flat, key, keycare, remove, payload, inspected);
    if (found && remove)
        h->base.count--;
    if (keycare != ~(vmatch_bits_t)0) {
        uint64_t back = FLAT_WILD * (h->base.count + h->base.nb);
        h->cost -= h->cost < back ? h->cost : back;
        h->want_switch = 0;
    } else if ((h->cost += *inspected - before) > FLAT_EXACT * h->base.count + FLAT_SLACK) {
        h->want_switch = 1;
    }
    if (found && h->want_switch) {
        settle(h);
        vm_hash_sync(h);
    }
    return found;
}

int vm_hash_flat_append(vm_hash_t *h, vmatch_bits_t bits, void *payload, uint64_t seq)
{
    int rc = h->flat->ops->append(h->flat, bits, ~(vmatch_bits_t)0, payload, seq);
    if (rc == VMATCH_OK)
        h->base.count++;
    return rc;
}

int vm_hash_umq_match(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, int remove,
                      void **payload, uint64_t *inspected)
{
    if (h->flat)
        return vm_hash_flat_match(h, key, keycare, remove, payload, inspected);
    vm_hit_t hit;
    uint32_t i;
    if (keycare == ~(vmatch_bits_t)0) { /* the bucket of key holds every match */
        uint64_t back = (h->base.count + h->base.nb) / HASHED_EXACT + 1;
        h->cost -= h->cost < back ? h->cost : back;
        i = vm_hash_index(key, h->base.nb);
        if (!vm_hash_slot_find(h, i, key, &hit, inspected))
            return 0;
    } else { /* every line and overflow line, the oldest match */
        uint64_t before = *inspected;
        int found = vm_hash_scan(h, key, keycare, NULL, &hit, &i, inspected);
        h->cost += h->base.nb + (*inspected - before);
        if (h->cost > HASHED_WILD * (h->base.count + h->base.nb))
            h->want_switch = 1;
        if (!found)
            return 0;
    }
    *payload = hit.payload;
    if (remove)
        vm_hash_slot_remove(h, i, &hit);
    settle(h);
    return 1;
}

int vm_hash_umq_remove_payload(vm_hash_t *h, const void *payload, uint64_t *inspected)
{
    vm_hit_t hit;
    if (h->flat) {
        vm_queue_t *q = h->flat;
        if (!q->ops->find_payload(q, payload, &hit, inspected))
            return 0;
        q->ops->remove(q, &hit);
        h->base.count--;
        return 1;
    }
    uint32_t i;
    if (!vm_hash_scan(h, 0, 0, payload, &hit, &i, inspected))
        return 0;
    vm_hash_slot_remove(h, i, &hit);
    return 1;
}
