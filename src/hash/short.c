/* short.c -- policy=hash: the short vector, where a side with no table keeps its entries, in
 * order, searched without hashing.
 *
 * Real programs' queues are mostly empty or a few entries long (HPCC: 0.1 to 0.2 entries
 * inspected per search), and there a table costs more than it saves: the bits mixed, a line
 * found, its ways closed up, and a wildcard receive sends every call to the library.  So a
 * side starts with a vector of hash.short entries (8 at most), any care mask, wildcard
 * receives included, searched from the oldest by comparing each.  The append that finds the
 * vector full moves its entries, in order, into a table made for them and goes on there: a
 * side that grew long is a table, with no vector in front that every search would compare
 * first.  When the quiet windows that would shrink the table (shrink.c) find it holding at
 * most hash.short entries (none of them a wildcard receive, the messages hashed), they go
 * back to the vector, in order, the table is given back, and the side is short again.
 * vmatch_inline.h's calls search, take and append the same way (vmatch_short_find, _drop,
 * _put).  docs/hash.md#short-sides has the design and the measurements.
 */
#include "hash_impl.h"

#include <string.h>

int vm_hash_short_append(vm_hash_t *h, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                         uint64_t seq)
{
    vm_side_t *b = &h->base;
    if (b->len >= b->shortcap) /* a hashed side (shortcap 0), or a full vector */
        return 0;
    if (b->head + b->len >= b->shortcap) /* the oldest went first: close up */
        vmatch_short_close_(&b->hot);
    vmatch_short_put(&b->hot, bits, care, payload, seq);
    return 1;
}

int vm_hash_short_match(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, int remove,
                        void **payload, uint64_t *inspected)
{
    unsigned compared;
    int i = vmatch_short_find(&h->base.hot, key, keycare, &compared);
    *inspected += compared;
    if (i < 0)
        return 0;
    *payload = h->vec[i].payload;
    if (remove)
        vmatch_short_drop(&h->base.hot, (unsigned)i);
    return 1;
}

int vm_hash_short_remove(vm_hash_t *h, const void *payload, uint64_t *inspected)
{
    vm_side_t *b = &h->base;
    for (unsigned i = b->head; i < b->head + b->len; i++)
        if (h->vec[i].payload == payload) {
            *inspected += i - b->head + 1;
            vmatch_short_drop(&b->hot, i);
            return 1;
        }
    *inspected += b->len;
    return 0;
}

int vm_hash_to_table(vm_hash_t *h, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                     uint64_t seq)
{
    vm_hash_t was = *h; /* no table, overflow, wildcard or flat queue: nothing to free */
    vm_env_mark_t mark; /* the pools' slabs, given back as they were on failure */
    vm_env_mark(h->base.env, &mark);
    vm_side_t *b = &h->base;
    unsigned from = b->head, to = b->head + (unsigned)b->len;
    int rc = VMATCH_OK;
    b->head = b->shortcap = 0;
    if (h->grow != UINT64_MAX) /* a growing table made for them at once, not doubled each */
        while (vm_hash_grow_at(h, b->nb) <= to - from)
            b->nb *= 2, h->grow = vm_hash_grow_at(h, b->nb);
    for (unsigned i = from; i < to && rc == VMATCH_OK; i++)
        rc = vm_hash_append_other(h, was.vec[i].bits, was.vec[i].care, was.vec[i].payload,
                                  was.vec[i].seq);
    if (rc == VMATCH_OK)
        rc = vm_hash_append_other(h, bits, care, payload, seq);
    if (rc < 0) { /* as it was: the vector, no table */
        vm_hash_table_free(h);
        vm_env_undo(h->base.env, &mark);
        *h = was;
        vm_hash_check(h, 0); /* the windows' checks of both sides, as they were */
    }
    return rc;
}

int vm_hash_to_short(vm_hash_t *h)
{
    vm_side_t *b = &h->base;
    uint64_t n = b->count;
    if (!h->hc->shortcap || n > h->hc->shortcap || h->flat || vm_hash_wildcards(h))
        return 0;
    vm_hash_entry_t *v = vm_hash_table_sorted(h, n);
    if (n && !v)
        return 0;
    for (uint64_t k = 0; k < n; k++)
        h->vec[k] =
            (vmatch_short_entry_t){v[k].bits, ~(vmatch_bits_t)0, v[k].payload, v[k].seq};
    vm_hash_entries_free(h, v, n);
    vm_hash_table_free(h);
    b->nb = VM_HASH_MIN;
    h->grow = vm_hash_grow_at(h, VM_HASH_MIN);
    h->cost = 0;
    h->want_switch = 0;
    b->count = 0;
    b->head = 0;
    b->shortcap = (uint8_t)h->hc->shortcap;
    vm_hash_sync(h);
    return 1;
}
