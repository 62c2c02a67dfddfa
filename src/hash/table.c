/* table.c -- policy=hash: the bucket table of one side, its queues and how it grows.
 *
 * A bucket is a cache line holding its first entries and, once more collide there, a queue
 * of the configured storage for the rest (vm_hash_slot_t).  A queue that empties is taken
 * away, and waits among a few spares for the next bucket that overflows.  A growing table
 * doubles when its entries pass hash.load per bucket; with multiply-shift indexing
 * (vm_hash_index) bucket i of the old table splits into buckets 2i and 2i + 1 of the new
 * one, so every new bucket gets the entries of one old bucket, in their order, and a queue
 * whose entries all go one way moves over whole.  Growing is best effort: when memory runs
 * out it leaves the table as it was, which is correct, only slower.
 */
#include "hash_impl.h"

#include <string.h>

/* Most buckets of a growing table: 2^26 lines (4 GiB) per side. */
#define MAX_BUCKETS (1u << 26)

int vm_hash_queue_get(vm_hash_t *h, vm_queue_t **out)
{
    if (h->nspare) {
        *out = h->spare[--h->nspare];
        return VMATCH_OK;
    }
    vm_env_t *env = h->base.env;
    return env->cfg->storage->create(env, h->base.side, out);
}

void vm_hash_queue_put(vm_hash_t *h, vm_queue_t *q)
{
    if (h->nspare < VM_HASH_SPARES)
        h->spare[h->nspare++] = q;
    else
        q->ops->destroy(q);
}

int vm_hash_slot_append(vm_hash_t *h, uint32_t i, vmatch_bits_t bits, vmatch_bits_t care,
                        void *payload, uint64_t seq)
{
    vm_hash_slot_t *s = &h->table[i];
    vm_queue_t *q = s->more;
    if (q)
        return q->ops->append(q, bits, care, payload, seq);
    for (int k = 0; k < VM_HASH_WAYS; k++)
        if (!s->payload[k]) {
            s->bits[k] = bits;
            s->payload[k] = payload;
            s->seq[k] = seq;
            return VMATCH_OK;
        }
    uint32_t spares = h->nspare;
    int rc = vm_hash_queue_get(h, &q);
    if (rc < 0)
        return rc;
    rc = q->ops->append(q, bits, care, payload, seq);
    if (rc < 0) { /* as it was: the spare back, or the new queue gone */
        if (spares != h->nspare)
            h->spare[h->nspare++] = q;
        else
            q->ops->destroy(q);
        return rc;
    }
    s->more = q;
    h->nmore++;
    return VMATCH_OK;
}

int vm_hash_slot_find(const vm_hash_slot_t *s, vmatch_bits_t key, vmatch_bits_t keycare,
                      const void *payload, vm_hit_t *hit, uint64_t *inspected)
{
    int w = -1;
    for (int k = 0; k < VM_HASH_WAYS; k++) {
        if (!s->payload[k])
            continue;
        *inspected += 1;
        if ((payload ? s->payload[k] == payload : ((s->bits[k] ^ key) & keycare) == 0) &&
            (w < 0 || s->seq[k] < s->seq[w]))
            w = k;
    }
    if (w >= 0) {
        *hit = (vm_hit_t){.payload = s->payload[w], .seq = s->seq[w], .slot = (uint32_t)w};
        return 1;
    }
    vm_queue_t *q = s->more;
    if (!q)
        return 0;
    return payload ? q->ops->find_payload(q, payload, hit, inspected)
                   : q->ops->find(q, key, keycare, hit, inspected);
}

__attribute__((noinline)) int vm_hash_more_take(vm_hash_t *h, vm_hash_slot_t *s,
                                                vmatch_bits_t bits, void **payload,
                                                uint64_t *inspected)
{
    vm_queue_t *q = s->more;
    if (!vm_queue_match(q, bits, ~(vmatch_bits_t)0, 1, payload, inspected))
        return 0;
    h->len--;
    if (!q->len) {
        s->more = NULL;
        h->nmore--;
        vm_hash_queue_put(h, q);
    }
    return 1;
}

void vm_hash_slot_remove(vm_hash_t *h, uint32_t i, const vm_hit_t *hit)
{
    vm_hash_slot_t *s = &h->table[i];
    h->len--;
    if (!hit->where) {
        s->payload[hit->slot] = NULL;
        return;
    }
    vm_queue_t *q = s->more;
    q->ops->remove(q, hit);
    if (!q->len) {
        s->more = NULL;
        h->nmore--;
        vm_hash_queue_put(h, q);
    }
}

/* A zeroed table of nb buckets on cache lines, or NULL. */
static vm_hash_slot_t *table_new(vm_hash_t *h, uint32_t nb)
{
    size_t bytes = (size_t)nb * sizeof(vm_hash_slot_t);
    vm_hash_slot_t *t = vm_mem_alloc_line(&h->base.env->mem, bytes);
    if (t)
        memset(t, 0, bytes);
    return t;
}

static void table_del(vm_hash_t *h, vm_hash_slot_t *t, uint32_t nb)
{
    vm_mem_free_line(&h->base.env->mem, t, (size_t)nb * sizeof *t);
}

int vm_hash_table_make(vm_hash_t *h)
{
    h->table = table_new(h, h->nb);
    return h->table ? VMATCH_OK : VMATCH_ENOMEM;
}

void vm_hash_table_free(vm_hash_t *h)
{
    vm_queue_t *qs[] = {h->flat, h->wild};
    for (unsigned i = 0; i < sizeof qs / sizeof *qs; i++)
        if (qs[i])
            qs[i]->ops->destroy(qs[i]);
    for (uint32_t i = 0; h->table && i < h->nb; i++)
        if (h->table[i].more)
            h->table[i].more->ops->destroy(h->table[i].more);
    while (h->nspare) {
        vm_queue_t *q = h->spare[--h->nspare];
        q->ops->destroy(q);
    }
    if (h->table)
        table_del(h, h->table, h->nb);
    h->flat = h->wild = NULL;
    h->table = NULL;
    h->nmore = 0;
}

/* ---- emptying and filling (the UMQ's modes, arrival.c) ---- */

void vm_hash_table_clear(vm_hash_t *h)
{
    for (uint32_t i = 0; i < h->nb; i++) {
        vm_hash_slot_t *s = &h->table[i];
        if (s->more)
            s->more->ops->destroy(s->more);
        *s = (vm_hash_slot_t){0};
    }
    h->nmore = 0;
}

typedef struct placer {
    vm_hash_t *h;
    int rc;
} placer_t;

static int place_one(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                     uint64_t seq)
{
    placer_t *pl = arg;
    pl->rc =
        vm_hash_slot_append(pl->h, vm_hash_index(bits, pl->h->nb), bits, care, payload, seq);
    return pl->rc < 0;
}

/* The bucket count of a growing table for n entries: twice what the load needs. */
static uint32_t size_for(const vm_hash_t *h, uint64_t n)
{
    uint64_t need = 2 * n / h->hc->load + 1;
    uint32_t nb = h->nb;
    while (nb < need && nb < MAX_BUCKETS)
        nb *= 2;
    return nb;
}

int vm_hash_table_fill(vm_hash_t *h, vm_queue_t *q)
{
    if (h->grow_at != UINT64_MAX && q->len > h->grow_at) {
        uint32_t nb = size_for(h, q->len);
        vm_hash_slot_t *t = table_new(h, nb);
        if (!t)
            return VMATCH_ENOMEM;
        table_del(h, h->table, h->nb);
        h->table = t;
        h->nb = nb;
        h->grow_at = (uint64_t)nb * h->hc->load;
    }
    placer_t pl = {h, VMATCH_OK};
    q->ops->each(q, place_one, &pl);
    if (pl.rc < 0)
        vm_hash_table_clear(h);
    return pl.rc;
}

/* ---- doubling ---- */

typedef struct splitter {
    vm_hash_t *h;
    uint32_t nb;       /* the new table's size */
    int64_t child;     /* the first entry's bucket in the new table, -1 before it */
    int mixed;         /* entries go to both children */
    vm_hash_slot_t *t; /* the new table */
    int rc;
} splitter_t;

static int see_child(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                     uint64_t seq)
{
    (void)care, (void)payload, (void)seq;
    splitter_t *s = arg;
    int64_t c = vm_hash_index(bits, s->nb);
    if (s->child < 0)
        s->child = c;
    else if (c != s->child)
        s->mixed = 1;
    return s->mixed;
}

/* Copy an entry of a queue whose entries split to its child's queue in the new table. */
static int copy_to_child(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                         uint64_t seq)
{
    splitter_t *s = arg;
    vm_queue_t **q = &s->t[vm_hash_index(bits, s->nb)].more;
    if (!*q)
        s->rc = vm_hash_queue_get(s->h, q);
    if (s->rc == VMATCH_OK)
        s->rc = (*q)->ops->append(*q, bits, care, payload, seq);
    return s->rc < 0;
}

void vm_hash_grow(vm_hash_t *h)
{
    if (h->nb >= MAX_BUCKETS) {
        h->grow_at = UINT64_MAX;
        return;
    }
    uint32_t nb = h->nb * 2;
    vm_hash_slot_t *t = table_new(h, nb);
    if (!t)
        return;
    /* First the copies of the queues that split, so that a failure leaves the old table
     * whole; then the slots' entries and the queues that move over whole.  A child gets
     * either copies or a whole queue, never both, and the slot's entry, older than the
     * queue's, keeps its place in front of them. */
    splitter_t sp = {.h = h, .nb = nb, .t = t, .rc = VMATCH_OK};
    for (uint32_t i = 0; i < h->nb && sp.rc == VMATCH_OK; i++) {
        vm_queue_t *q = h->table[i].more;
        if (!q)
            continue;
        sp.child = -1;
        sp.mixed = 0;
        q->ops->each(q, see_child, &sp);
        if (sp.mixed)
            q->ops->each(q, copy_to_child, &sp);
    }
    if (sp.rc < 0) {
        for (uint32_t j = 0; j < nb; j++)
            if (t[j].more)
                t[j].more->ops->destroy(t[j].more);
        table_del(h, t, nb);
        return;
    }
    uint64_t nmore = 0;
    for (uint32_t i = 0; i < h->nb; i++) {
        vm_hash_slot_t *s = &h->table[i];
        vm_queue_t *q = s->more;
        for (int k = 0; k < VM_HASH_WAYS; k++) { /* first into the child's line */
            vm_hash_slot_t *c = &t[vm_hash_index(s->bits[k], nb)];
            int w = 0;
            if (!s->payload[k])
                continue;
            while (c->payload[w])
                w++;
            c->bits[w] = s->bits[k];
            c->payload[w] = s->payload[k];
            c->seq[w] = s->seq[k];
        }
        if (q && (t[2 * i].more || t[2 * i + 1].more)) { /* split: the copies replace it */
            q->ops->destroy(q);
        } else if (q) {
            sp.child = -1;
            sp.mixed = 0;
            q->ops->each(q, see_child, &sp);
            t[sp.child].more = q;
        }
        nmore += (t[2 * i].more != NULL) + (t[2 * i + 1].more != NULL);
    }
    table_del(h, h->table, h->nb);
    h->table = t;
    h->nb = nb;
    h->nmore = nmore;
    h->grow_at = (uint64_t)nb * h->hc->load;
}

/* ---- searching every bucket ---- */

int64_t vm_hash_scan(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare,
                     const void *payload, vm_hit_t *best, uint64_t *inspected)
{
    int64_t at = -1;
    for (uint32_t i = 0; h->table && i < h->nb; i++) {
        const vm_hash_slot_t *s = &h->table[i];
        vm_hit_t hit;
        if (vm_hash_slot_find(s, key, keycare, payload, &hit, inspected) &&
            (at < 0 || hit.seq < best->seq)) {
            *best = hit;
            at = i;
        }
    }
    return at;
}
