/* table.c -- policy=hash: the bucket table of one side, its overflow queues and how it
 * grows.
 *
 * A bucket is a cache line holding its first entries (vm_line_t); the entries that
 * collide beyond them go to the overflow queue of the bucket's region, VM_HASH_REGION
 * consecutive buckets sharing one queue of the configured storage, and the line counts
 * them.  A search reads the line and, only when the bucket has overflowed, finds the first
 * entry with its bits in that queue (an entry of another bucket has other bits).  Overflow
 * queues are made at a region's first overflow and kept: a queue per bucket would be made
 * and given back at every collision, and with llv each costs a block from a pool.
 *
 * A growing table doubles when its entries pass hash.load per bucket; with multiply-shift
 * indexing (vm_hash_index) bucket i splits into buckets 2i and 2i + 1 and region r into
 * regions 2r and 2r + 1, so a new line takes the entries of one old line and a new
 * overflow queue those of one old queue, in their order; a queue whose entries all go one
 * way moves over whole.  Growing is best effort: when memory runs out the table stays as it
 * was, which is correct, only slower.
 */
#include "hash_impl.h"

#include <stdlib.h>
#include <string.h>

/* Most buckets of a growing table: 2^26 lines (4 GiB) per side. */
#define MAX_BUCKETS (1u << 26)

/* The overflow queue of bucket i. */
static inline vm_queue_t **over_of(const vm_hash_t *h, uint32_t i)
{
    return &h->over[i >> VM_HASH_REGION_SHIFT];
}

int vm_hash_slot_append(vm_hash_t *h, uint32_t i, vmatch_bits_t bits, vmatch_bits_t care,
                        void *payload, uint64_t seq)
{
    vm_line_t *s = &h->base.table[i];
    if (vmatch_line_put(s, bits, payload, seq))
        return VMATCH_OK;
    vm_queue_t **q = over_of(h, i);
    int made = !*q;
    int rc = vm_queue_append_new(h->base.env, h->base.side, q, bits, care, payload, seq);
    if (rc < 0)
        return rc;
    h->nover += made;
    s->fill += VMATCH_LINE_OVER1;
    return VMATCH_OK;
}

int vm_hash_slot_find(vm_hash_t *h, uint32_t i, vmatch_bits_t bits, vm_hit_t *hit,
                      uint64_t *inspected)
{
    const vm_line_t *s = &h->base.table[i];
    int w = vm_line_way(s, bits, ~(vmatch_bits_t)0, inspected);
    if (w >= 0) {
        *hit = (vm_hit_t){.payload = s->payload[w], .seq = s->seq[w], .slot = (uint32_t)w};
        return 1;
    }
    vm_queue_t *q = *over_of(h, i);
    return vm_line_over(s) && q->ops->find(q, bits, ~(vmatch_bits_t)0, hit, inspected);
}

void vm_hash_slot_remove(vm_hash_t *h, uint32_t i, const vm_hit_t *hit)
{
    vm_line_t *s = &h->base.table[i];
    h->base.count--;
    if (!hit->where) {
        vm_line_drop(s, (int)hit->slot);
        return;
    }
    vm_queue_t *q = *over_of(h, i);
    q->ops->remove(q, hit);
    s->fill -= VMATCH_LINE_OVER1;
}

__attribute__((noinline)) int vm_hash_over_take(vm_hash_t *h, uint32_t i, vmatch_bits_t bits,
                                                void **payload, uint64_t *inspected)
{
    if (!vm_queue_match(*over_of(h, i), bits, ~(vmatch_bits_t)0, 1, payload, inspected))
        return 0;
    h->base.table[i].fill -= VMATCH_LINE_OVER1;
    h->base.count--;
    return 1;
}

/* ---- every entry ---- */

void vm_hash_table_each(vm_hash_t *h, vm_each_fn *fn, void *arg)
{
    for (uint32_t i = 0; h->base.table && i < h->base.nb; i++) {
        const vm_line_t *s = &h->base.table[i];
        for (int k = 0; k < VM_LINE_WAYS; k++)
            if (s->payload[k])
                fn(arg, s->bits[k], ~(vmatch_bits_t)0, s->payload[k], s->seq[k]);
    }
    for (uint32_t r = 0; h->over && r < vm_hash_regions(h->base.nb); r++)
        if (h->over[r])
            h->over[r]->ops->each(h->over[r], fn, arg);
}

typedef struct collector {
    vm_hash_entry_t *v;
    uint64_t n;
} collector_t;

static int collect(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                   uint64_t seq)
{
    (void)care;
    collector_t *c = arg;
    c->v[c->n++] = (vm_hash_entry_t){bits, payload, seq};
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = ((const vm_hash_entry_t *)a)->seq, y = ((const vm_hash_entry_t *)b)->seq;
    return (x > y) - (x < y);
}

vm_hash_entry_t *vm_hash_table_sorted(vm_hash_t *h, uint64_t n)
{
    collector_t c = {.v = n ? vm_mem_alloc(&h->base.env->mem, n * sizeof *c.v) : NULL};
    if (!c.v)
        return NULL;
    vm_hash_table_each(h, collect, &c);
    qsort(c.v, c.n, sizeof *c.v, by_seq);
    return c.v;
}

void vm_hash_entries_free(vm_hash_t *h, vm_hash_entry_t *v, uint64_t n)
{
    if (v)
        vm_mem_free(&h->base.env->mem, v, n * sizeof *v);
}

typedef struct seeker {
    uint64_t seq;
    vmatch_bits_t bits;
} seeker_t;

static int seek_seq(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                    uint64_t seq)
{
    (void)care, (void)payload;
    seeker_t *s = arg;
    if (seq != s->seq)
        return 0;
    s->bits = bits;
    return 1;
}

int vm_hash_scan(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, const void *payload,
                 vm_hit_t *hit, uint32_t *bucket, uint64_t *inspected)
{
    int found = 0;
    int64_t region = -1;
    for (uint32_t i = 0; i < h->base.nb; i++) {
        const vm_line_t *s = &h->base.table[i];
        for (int k = 0; k < VM_LINE_WAYS; k++) {
            if (!s->payload[k])
                continue;
            *inspected += 1;
            if ((payload ? s->payload[k] == payload : ((s->bits[k] ^ key) & keycare) == 0) &&
                (!found || s->seq[k] < hit->seq)) {
                *hit =
                    (vm_hit_t){.payload = s->payload[k], .seq = s->seq[k], .slot = (uint32_t)k};
                *bucket = i;
                found = 1;
            }
        }
    }
    for (uint32_t r = 0; r < vm_hash_regions(h->base.nb); r++) {
        vm_queue_t *q = h->over[r];
        vm_hit_t got;
        if (q && q->len &&
            (payload ? q->ops->find_payload(q, payload, &got, inspected)
                     : q->ops->find(q, key, keycare, &got, inspected)) &&
            (!found || got.seq < hit->seq)) {
            *hit = got;
            region = r;
            found = 1;
        }
    }
    if (found && hit->where) { /* in an overflow queue: its bucket, from its bits */
        seeker_t sk = {.seq = hit->seq};
        h->over[region]->ops->each(h->over[region], seek_seq, &sk);
        *bucket = vm_hash_index(sk.bits, h->base.nb);
    }
    return found;
}

/* ---- making, emptying, filling ---- */

/* A zeroed table of nb buckets on cache lines, or NULL. */
static vm_line_t *table_new(vm_hash_t *h, uint32_t nb)
{
    size_t bytes = (size_t)nb * sizeof(vm_line_t);
    vm_line_t *t = vm_mem_alloc_line(&h->base.env->mem, bytes);
    if (t)
        memset(t, 0, bytes);
    return t;
}

static void table_del(vm_hash_t *h, vm_line_t *t, uint32_t nb)
{
    vm_mem_free_line(&h->base.env->mem, t, (size_t)nb * sizeof *t);
}

static vm_queue_t **over_new(vm_hash_t *h, uint32_t nb)
{
    return vm_mem_calloc(&h->base.env->mem, vm_hash_regions(nb) * sizeof(vm_queue_t *));
}

static void over_del(vm_hash_t *h, vm_queue_t **o, uint32_t nb)
{
    vm_mem_free(&h->base.env->mem, o, vm_hash_regions(nb) * sizeof *o);
}

int vm_hash_table_make(vm_hash_t *h)
{
    h->base.table = table_new(h, h->base.nb);
    h->over = h->base.table ? over_new(h, h->base.nb) : NULL;
    if (!h->over && h->base.table) {
        table_del(h, h->base.table, h->base.nb);
        h->base.table = NULL;
    }
    vm_hash_sync(h);
    return h->over ? VMATCH_OK : VMATCH_ENOMEM;
}

/* Destroy the overflow queues. */
static void over_drop(vm_hash_t *h)
{
    for (uint32_t r = 0; h->over && r < vm_hash_regions(h->base.nb); r++)
        if (h->over[r]) {
            h->over[r]->ops->destroy(h->over[r]);
            h->over[r] = NULL;
        }
    h->nover = 0;
}

void vm_hash_table_free(vm_hash_t *h)
{
    vm_queue_t *qs[] = {h->flat, h->wild};
    for (unsigned i = 0; i < sizeof qs / sizeof *qs; i++)
        if (qs[i])
            qs[i]->ops->destroy(qs[i]);
    over_drop(h);
    if (h->base.table) {
        table_del(h, h->base.table, h->base.nb);
        over_del(h, h->over, h->base.nb);
    }
    h->flat = h->wild = NULL;
    h->base.table = NULL;
    h->over = NULL;
    vm_hash_sync(h);
}

void vm_hash_table_clear(vm_hash_t *h)
{
    over_drop(h);
    memset(h->base.table, 0, (size_t)h->base.nb * sizeof *h->base.table);
}

int vm_hash_resize(vm_hash_t *h, uint32_t nb)
{
    /* the table's entries: on a flat UMQ none, on the PRQ all but the wildcard receives */
    uint64_t n = h->flat ? 0 : h->base.count - (h->wild ? h->wild->len : 0);
    vm_hash_entry_t *v = vm_hash_table_sorted(h, n);
    if (n && !v)
        return VMATCH_ENOMEM;
    vm_hash_t old = *h;
    h->base.nb = nb;
    h->nover = 0;
    int rc = vm_hash_table_make(h);
    for (uint64_t k = 0; k < n && rc == VMATCH_OK; k++)
        rc = vm_hash_slot_append(h, vm_hash_index(v[k].bits, nb), v[k].bits, ~(vmatch_bits_t)0,
                                 v[k].payload, v[k].seq);
    vm_hash_entries_free(h, v, n);
    vm_hash_t *drop = rc == VMATCH_OK ? &old : h; /* the table given back */
    if (drop->base.table) {
        over_drop(drop);
        table_del(drop, drop->base.table, drop->base.nb);
        over_del(drop, drop->over, drop->base.nb);
    }
    if (rc < 0) { /* the old table again */
        h->base.table = old.base.table;
        h->over = old.over;
        h->base.nb = old.base.nb;
        h->nover = old.nover;
        vm_hash_sync(h);
        return rc;
    }
    h->grow = vm_hash_grow_at(h, nb);
    vm_hash_sync(h);
    return VMATCH_OK;
}

typedef struct placer {
    vm_hash_t *h;
    int rc;
} placer_t;

static int place_one(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                     uint64_t seq)
{
    placer_t *pl = arg;
    pl->rc = vm_hash_slot_append(pl->h, vm_hash_index(bits, pl->h->base.nb), bits, care,
                                 payload, seq);
    return pl->rc < 0;
}

/* The bucket count of a growing table for n entries: twice what the load needs. */
static uint32_t size_for(const vm_hash_t *h, uint64_t n)
{
    uint64_t need = 200 * n / h->hc->load + 1;
    uint32_t nb = h->base.nb;
    while (nb < need && nb < MAX_BUCKETS)
        nb *= 2;
    return nb;
}

int vm_hash_table_fill(vm_hash_t *h, vm_queue_t *q)
{
    if (h->grow != UINT64_MAX && q->len > h->grow) {
        uint32_t nb = size_for(h, q->len);
        vm_line_t *t = table_new(h, nb);
        vm_queue_t **o = t ? over_new(h, nb) : NULL;
        if (!o) {
            if (t)
                table_del(h, t, nb);
            return VMATCH_ENOMEM;
        }
        table_del(h, h->base.table, h->base.nb);
        over_del(h, h->over, h->base.nb);
        h->base.table = t;
        h->over = o;
        h->base.nb = nb;
        h->grow = vm_hash_grow_at(h, nb);
        vm_hash_watch(h);
        vm_hash_sync(h);
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
    uint32_t nb;    /* the new table's size */
    int64_t child;  /* the first entry's region in the new table, -1 before it */
    int mixed;      /* entries go to both child regions */
    vm_queue_t **o; /* the new overflow queues */
    vm_line_t *t;   /* the new lines, whose overflow counts are made here */
    int rc;
} splitter_t;

static int see_child(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                     uint64_t seq)
{
    (void)care, (void)payload, (void)seq;
    splitter_t *s = arg;
    int64_t c = vm_hash_index(bits, s->nb) >> VM_HASH_REGION_SHIFT;
    if (s->child < 0)
        s->child = c;
    else if (c != s->child)
        s->mixed = 1;
    return s->mixed;
}

/* Copy an entry of a queue whose entries split to its child region's new queue. */
static int copy_to_child(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                         uint64_t seq)
{
    splitter_t *s = arg;
    vm_queue_t **q = &s->o[vm_hash_index(bits, s->nb) >> VM_HASH_REGION_SHIFT];
    vm_env_t *env = s->h->base.env;
    if (!*q)
        s->rc = env->cfg->storage->create(env, s->h->base.side, q);
    if (s->rc == VMATCH_OK)
        s->rc = (*q)->ops->append(*q, bits, care, payload, seq);
    return s->rc < 0;
}

static int count_over(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                      uint64_t seq)
{
    (void)care, (void)payload, (void)seq;
    splitter_t *s = arg;
    s->t[vm_hash_index(bits, s->nb)].fill += VMATCH_LINE_OVER1;
    return 0;
}

void vm_hash_grow(vm_hash_t *h)
{
    if (h->base.nb >= MAX_BUCKETS) {
        h->grow = UINT64_MAX;
        vm_hash_sync(h);
        return;
    }
    uint32_t nb = h->base.nb * 2, nr = vm_hash_regions(h->base.nb), nr2 = vm_hash_regions(nb);
    vm_line_t *t = table_new(h, nb);
    vm_queue_t **o = t ? over_new(h, nb) : NULL;
    if (!o) {
        if (t)
            table_del(h, t, nb);
        return;
    }
    /* First the copies of the queues that split, so that a failure leaves the old table
     * whole; then the lines and the queues that move over whole. */
    splitter_t sp = {.h = h, .nb = nb, .o = o, .t = t, .rc = VMATCH_OK};
    for (uint32_t r = 0; r < nr && sp.rc == VMATCH_OK; r++) {
        vm_queue_t *q = h->over[r];
        if (!q || !q->len)
            continue;
        sp.child = -1;
        sp.mixed = 0;
        q->ops->each(q, see_child, &sp);
        if (sp.mixed)
            q->ops->each(q, copy_to_child, &sp);
    }
    if (sp.rc < 0) {
        for (uint32_t r = 0; r < nr2; r++)
            if (o[r])
                o[r]->ops->destroy(o[r]);
        over_del(h, o, nb);
        table_del(h, t, nb);
        return;
    }
    for (uint32_t i = 0; i < h->base.nb;
         i++) { /* a line's entries, oldest first in the child */
        const vm_line_t *s = &h->base.table[i];
        for (int k = 0; k < VM_LINE_WAYS; k++) {
            vm_line_t *c = &t[vm_hash_index(s->bits[k], nb)];
            if (!s->payload[k])
                continue;
            uint32_t w = vm_line_used(c); /* a child line has one parent: never full */
            c->bits[w] = s->bits[k];
            c->payload[w] = s->payload[k];
            c->seq[w] = s->seq[k];
            c->fill++;
        }
    }
    for (uint32_t r = 0; r < nr; r++) {
        vm_queue_t *q = h->over[r];
        uint32_t c0 = 2 * r < nr2 ? 2 * r : 0, c1 = 2 * r + 1 < nr2 ? 2 * r + 1 : c0;
        if (!q)
            continue;
        if (o[c0] || o[c1]) { /* split: the copies replace it */
            q->ops->destroy(q);
            continue;
        }
        sp.child = -1;
        sp.mixed = 0;
        q->ops->each(q, see_child, &sp);
        o[sp.child < 0 ? c0 : (uint32_t)sp.child] = q;
    }
    uint32_t made = 0;
    for (uint32_t r = 0; r < nr2; r++)
        if (o[r]) {
            o[r]->ops->each(o[r], count_over, &sp);
            made++;
        }
    table_del(h, h->base.table, h->base.nb);
    over_del(h, h->over, h->base.nb);
    h->base.table = t;
    h->over = o;
    h->base.nb = nb;
    h->nover = made;
    h->grow = vm_hash_grow_at(h, nb);
    vm_hash_watch(h);
    vm_hash_sync(h);
}
