/* table.c -- policy=hash: the bucket table of one side, its overflow lines and how it
 * grows.
 *
 * A bucket is a cache line holding its first entries (vm_line_t); the entries that collide
 * beyond them go on in overflow lines of the bucket's own, chained from it, and the line
 * counts them.  The bucket's entries are in order: its line's ways, then each overflow
 * line's ways; an entry goes into the line only while the bucket has nothing in overflow,
 * and into the last overflow line (or a new one after it) otherwise.  A search reads the
 * line and, only when the bucket has overflowed, its chain: at one entry per bucket about 1
 * bucket in 12 has one, of one line.  An overflow line is a vm_line_t too, from the engine's
 * pool of cache lines, given back when it empties; a bucket whose line lost an entry takes
 * the oldest of its chain back into it (settle), so that the callers' inline take finds
 * what it can in the line.  This replaced one queue of the storage per region of 64 buckets
 * (docs/hash.md#overflow-lines): a queue cost a call and a block of the storage, about
 * 1 100-1 600 bytes per region at a burst's peak, 17-25 bytes per entry.
 *
 * A growing table doubles when its entries pass hash.load per 100 buckets (hash.small_load
 * while it has at most VM_HASH_SMALL); with multiply-shift indexing (vm_hash_index) bucket
 * i splits into buckets 2i and 2i + 1, so each new bucket takes the entries of one old
 * bucket, in their order.  Growing is best effort: when memory runs out the table stays as
 * it was, which is correct, only slower.
 */
#include "hash_impl.h"

#include <stdlib.h>
#include <string.h>

/* Most buckets of a growing table: 2^26 lines (4 GiB) per side. */
#define MAX_BUCKETS (1u << 26)

/* The next overflow line after line s (a bucket's line or an overflow line), or NULL.  Under
 * policy=hash a line's queue field holds no queue: it links the chain. */
static inline vm_line_t *next_of(const vm_line_t *s)
{
    return (vm_line_t *)(void *)s->queue;
}

static inline void set_next(vm_line_t *s, vm_line_t *n)
{
    s->queue = (struct vm_queue *)(void *)n;
}

/* An empty overflow line, or NULL when memory runs out. */
static vm_line_t *line_new(vm_hash_t *h)
{
    if (!h->lines)
        h->lines = vm_env_pool(h->base.env, sizeof(vm_line_t));
    vm_line_t *l = h->lines ? vm_pool_get(h->lines) : NULL;
    if (!l)
        return NULL;
    memset(l, 0, sizeof *l);
    h->nover++;
    return l;
}

static void line_del(vm_hash_t *h, vm_line_t *l)
{
    vm_pool_put(h->lines, l); /* set: l came from it */
    h->nover--;
}

/* Append an entry to the chain of bucket line s (whose line takes no more).  VMATCH_OK, or
 * VMATCH_ENOMEM with nothing changed. */
static int chain_append(vm_hash_t *h, vm_line_t *s, vmatch_bits_t bits, void *payload,
                        uint64_t seq)
{
    vm_line_t *last = s;
    while (next_of(last))
        last = next_of(last);
    if (last == s || !vmatch_line_put(last, bits, payload, seq)) {
        vm_line_t *n = line_new(h);
        if (!n)
            return VMATCH_ENOMEM;
        vmatch_line_put(n, bits, payload, seq);
        set_next(last, n);
    }
    s->fill += VMATCH_LINE_OVER1;
    return VMATCH_OK;
}

/* Drop way w of overflow line c of bucket line s; c goes back to the pool when it empties. */
static void chain_drop(vm_hash_t *h, vm_line_t *s, vm_line_t *c, int w)
{
    vm_line_drop(c, w);
    s->fill -= VMATCH_LINE_OVER1;
    if (vm_line_used(c))
        return;
    vm_line_t *p = s;
    while (next_of(p) != c)
        p = next_of(p);
    set_next(p, next_of(c));
    line_del(h, c);
}

/* Fill the free ways of bucket line s from the front of its chain (the next oldest). */
static void settle(vm_hash_t *h, vm_line_t *s)
{
    vm_line_t *c;
    while (vm_line_used(s) < VM_LINE_WAYS && (c = next_of(s)) != NULL) {
        uint32_t w = vm_line_used(s);
        s->bits[w] = c->bits[0];
        s->payload[w] = c->payload[0];
        s->seq[w] = c->seq[0];
        s->fill++;
        chain_drop(h, s, c, 0);
    }
}

/* Put an entry into bucket line s: its line, or its chain.  The ways a take of the fast
 * paths freed while the bucket had a chain are filled first (the take does not look). */
static int bucket_put(vm_hash_t *h, vm_line_t *s, vmatch_bits_t bits, void *payload,
                      uint64_t seq)
{
    settle(h, s);
    return vmatch_line_put(s, bits, payload, seq) ? VMATCH_OK
                                                  : chain_append(h, s, bits, payload, seq);
}

/* Give back the chains of table t's nb lines. */
static void chains_free(vm_hash_t *h, vm_line_t *t, uint32_t nb)
{
    for (uint32_t i = 0; i < nb; i++)
        for (vm_line_t *c = next_of(&t[i]), *n; c; c = n) {
            n = next_of(c);
            line_del(h, c);
        }
}

int vm_hash_slot_append(vm_hash_t *h, uint32_t i, vmatch_bits_t bits, vmatch_bits_t care,
                        void *payload, uint64_t seq)
{
    (void)care; /* a bucket holds exact entries */
    return bucket_put(h, &h->base.table[i], bits, payload, seq);
}

int vm_hash_slot_find(vm_hash_t *h, uint32_t i, vmatch_bits_t bits, vm_hit_t *hit,
                      uint64_t *inspected)
{
    const vm_line_t *s = &h->base.table[i];
    int w = vm_line_way(s, bits, ~(vmatch_bits_t)0, inspected);
    if (w < 0 && vm_line_over(s))
        for (s = next_of(s); s && (w = vm_line_way(s, bits, ~(vmatch_bits_t)0, inspected)) < 0;)
            s = next_of(s);
    if (w < 0)
        return 0;
    *hit = (vm_hit_t){.payload = s->payload[w],
                      .seq = s->seq[w],
                      .where = s == &h->base.table[i] ? NULL : (void *)(uintptr_t)s,
                      .slot = (uint32_t)w};
    return 1;
}

void vm_hash_slot_remove(vm_hash_t *h, uint32_t i, const vm_hit_t *hit)
{
    vm_line_t *s = &h->base.table[i];
    h->base.count--;
    if (!hit->where)
        vm_line_drop(s, (int)hit->slot);
    else
        chain_drop(h, s, hit->where, (int)hit->slot);
    settle(h, s);
}

__attribute__((noinline)) int vm_hash_over_take(vm_hash_t *h, uint32_t i, vmatch_bits_t bits,
                                                void **payload, uint64_t *inspected)
{
    vm_line_t *s = &h->base.table[i];
    for (vm_line_t *c = next_of(s); c; c = next_of(c)) {
        int w = vm_line_way(c, bits, ~(vmatch_bits_t)0, inspected);
        if (w >= 0) {
            *payload = c->payload[w];
            chain_drop(h, s, c, w);
            h->base.count--;
            settle(h, s);
            return 1;
        }
    }
    return 0;
}

/* ---- every entry ---- */

void vm_hash_table_each(vm_hash_t *h, vm_each_fn *fn, void *arg)
{
    for (uint32_t i = 0; h->base.table && i < h->base.nb; i++)
        for (const vm_line_t *s = &h->base.table[i]; s; s = next_of(s))
            for (uint32_t k = 0; k < vm_line_used(s); k++)
                fn(arg, s->bits[k], ~(vmatch_bits_t)0, s->payload[k], s->seq[k]);
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

int vm_hash_scan(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, const void *payload,
                 vm_hit_t *hit, uint32_t *bucket, uint64_t *inspected)
{
    int found = 0;
    for (uint32_t i = 0; i < h->base.nb; i++) {
        const vm_line_t *line = &h->base.table[i];
        for (const vm_line_t *s = line; s; s = next_of(s))
            for (uint32_t k = 0; k < vm_line_used(s); k++) {
                *inspected += 1;
                if ((payload ? s->payload[k] == payload
                             : ((s->bits[k] ^ key) & keycare) == 0) &&
                    (!found || s->seq[k] < hit->seq)) {
                    *hit = (vm_hit_t){.payload = s->payload[k],
                                      .seq = s->seq[k],
                                      .where = s == line ? NULL : (void *)(uintptr_t)s,
                                      .slot = k};
                    *bucket = i;
                    found = 1;
                }
            }
    }
    return found;
}

/* ---- making, emptying, filling ---- */

/* A table of nb buckets on cache lines, not zeroed, or NULL. */
static vm_line_t *table_raw(vm_hash_t *h, uint32_t nb)
{
    return vm_mem_alloc_line(&h->base.env->mem, (size_t)nb * sizeof(vm_line_t));
}

/* A zeroed table of nb buckets on cache lines, or NULL. */
static vm_line_t *table_new(vm_hash_t *h, uint32_t nb)
{
    vm_line_t *t = table_raw(h, nb);
    if (t)
        memset(t, 0, (size_t)nb * sizeof *t);
    return t;
}

/* Give back table t of nb buckets and its chains. */
static void table_del(vm_hash_t *h, vm_line_t *t, uint32_t nb)
{
    chains_free(h, t, nb);
    vm_mem_free_line(&h->base.env->mem, t, (size_t)nb * sizeof *t);
}

int vm_hash_table_make(vm_hash_t *h)
{
    h->base.table = table_new(h, h->base.nb);
    vm_hash_sync(h);
    return h->base.table ? VMATCH_OK : VMATCH_ENOMEM;
}

void vm_hash_table_free(vm_hash_t *h)
{
    vm_queue_t *qs[] = {h->flat, h->wild};
    for (unsigned i = 0; i < sizeof qs / sizeof *qs; i++)
        if (qs[i])
            qs[i]->ops->destroy(qs[i]);
    if (h->base.table)
        table_del(h, h->base.table, h->base.nb);
    h->flat = h->wild = NULL;
    h->base.table = NULL;
    h->base.nwild = 0;
    vm_hash_sync(h);
}

void vm_hash_table_clear(vm_hash_t *h)
{
    chains_free(h, h->base.table, h->base.nb);
    memset(h->base.table, 0, (size_t)h->base.nb * sizeof *h->base.table);
}

int vm_hash_resize(vm_hash_t *h, uint32_t nb)
{
    /* the table's entries: on a flat UMQ none, on the PRQ all but the wildcard receives */
    uint64_t n = h->flat ? 0 : h->base.count - vm_hash_wildcards(h);
    vm_hash_entry_t *v = vm_hash_table_sorted(h, n);
    if (n && !v)
        return VMATCH_ENOMEM;
    vm_line_t *t = table_new(h, nb);
    int rc = t ? VMATCH_OK : VMATCH_ENOMEM;
    for (uint64_t k = 0; k < n && rc == VMATCH_OK; k++)
        rc = bucket_put(h, &t[vm_hash_index(v[k].bits, nb)], v[k].bits, v[k].payload, v[k].seq);
    vm_hash_entries_free(h, v, n);
    if (rc < 0) { /* the old table stays */
        if (t)
            table_del(h, t, nb);
        return rc;
    }
    table_del(h, h->base.table, h->base.nb);
    h->base.table = t;
    h->base.nb = nb;
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

/* The bucket count of a growing table for n entries: twice what hash.load needs (at the
 * default loads, what a small table needs). */
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
        if (!t)
            return VMATCH_ENOMEM;
        table_del(h, h->base.table, h->base.nb);
        h->base.table = t;
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

/* Bucket line s's entries, in order, into their buckets of table t of nb buckets, whose
 * lines have no free way before a taken one (bucket_put's settle has nothing to do there).
 * VMATCH_OK, or VMATCH_ENOMEM. */
static int split(vm_hash_t *h, const vm_line_t *s, vm_line_t *t, uint32_t nb)
{
    for (; s; s = next_of(s))
        for (uint32_t k = 0; k < vm_line_used(s); k++) {
            vm_line_t *c = &t[vm_hash_index(s->bits[k], nb)];
            if (!vmatch_line_put(c, s->bits[k], s->payload[k], s->seq[k]) &&
                chain_append(h, c, s->bits[k], s->payload[k], s->seq[k]) < 0)
                return VMATCH_ENOMEM;
        }
    return VMATCH_OK;
}

void vm_hash_grow(vm_hash_t *h)
{
    if (h->base.nb >= MAX_BUCKETS) {
        h->grow = UINT64_MAX;
        vm_hash_sync(h);
        return;
    }
    uint32_t nb = h->base.nb * 2, i = 0;
    vm_line_t *t = table_raw(h, nb);
    if (!t)
        return;
    /* Under multiply-shift an old bucket i's entries go to buckets 2i and 2i + 1 of the
     * doubled table, and no other bucket's do: each pair of new lines is emptied and gets
     * bucket i's entries, in order, so the table is written once instead of zeroed first
     * (docs/hash.md#table-size). */
    for (; i < h->base.nb; i++) {
        memset(&t[2 * i], 0, 2 * sizeof *t);
        if (split(h, &h->base.table[i], t, nb) < 0)
            break;
    }
    if (i < h->base.nb) { /* out of memory: the old table stays */
        memset(&t[2 * i + 2], 0, (size_t)(nb - 2 * i - 2) * sizeof *t);
        table_del(h, t, nb);
        return;
    }
    table_del(h, h->base.table, h->base.nb);
    h->base.table = t;
    h->base.nb = nb;
    h->grow = vm_hash_grow_at(h, nb);
    vm_hash_watch(h);
    vm_hash_sync(h);
}
