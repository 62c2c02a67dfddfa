/* hash.c -- policy=hash: exact entries hashed into buckets of one cache line, which overflow
 * into queues of the storage.
 *
 * On the PRQ a receive whose care mask is all ones goes to the bucket of its match bits and
 * any other receive to the wildcard receives: the short vector, which a side with a table
 * does not use otherwise, while it has room and the wildcard queue is empty, else that
 * queue; an arriving message searches its bucket and, when there are wildcard receives,
 * theirs (the vector's first, the older), and takes the older (lower sequence number) of
 * the two first matches.  While the vector holds them all, slow is VMATCH_SLOW_WILD, and
 * vmatch_inline.h's arrivals search it with the line.  The UMQ is hashed, every message in its
 * bucket, or flat, one queue in arrival order, by what its searches cost (arrival.c).  Any care
 * mask works: only an all-ones mask is hashed, whatever the layout.
 *
 * The table starts with two buckets and doubles when its entries pass hash.small_load per
 * 100 buckets, hash.load once it has more than 512 (table.c), or has hash.buckets of them,
 * fixed.  An exact match on a bucket that has not overflowed, with no wildcard receive
 * queued, is the fast path: a hash, one cache line, no call.  The design and the
 * measurements behind the defaults are in docs/hash.md.
 */
#include "hash_impl.h"
#include "policy.h"

#include <string.h>

static int hash_create(vm_env_t *env, int side, vm_side_t **out)
{
    vm_hash_t *h = vm_mem_calloc(&env->mem, sizeof *h);
    if (!h)
        return VMATCH_ENOMEM;
    h->base = (vm_side_t){.ops = &vm_hash_policy, .env = env, .side = side};
    h->hc = vm_module_cfg(env->cfg, &vm_hash_module);
    h->base.nb = h->hc->buckets;
    h->grow = UINT64_MAX;
    h->end = h->base.check = UINT64_MAX;
    h->base.shortcap = (uint8_t)h->hc->shortcap;
    if (!h->base.nb) { /* a growing table starts with two buckets */
        h->base.nb = 2;
        h->grow = vm_hash_grow_at(h, 2);
    }
    vm_hash_sync(h);
    vm_hash_pair(h);
    *out = &h->base;
    return VMATCH_OK;
}

static void hash_destroy(vm_side_t *p)
{
    vm_hash_t *h = (vm_hash_t *)p;
    if (p->env->paired[p->side] == p)
        p->env->paired[p->side] = NULL;
    vm_hash_table_free(h);
    vm_mem_free(&p->env->mem, h, sizeof *h);
}

/* Paths off the per-call fast path: out of line, so the fast path saves no registers. */
#define VM_HASH_COLD __attribute__((noinline))

/* A wildcard receive on a PRQ with a table: into the vector while it has room and wild is
 * empty (the vector's are then the oldest), else into wild. */
static int wild_append(vm_hash_t *h, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                       uint64_t seq)
{
    if (h->base.nwild >= VMATCH_SHORT_MAX || (h->wild && h->wild->len))
        return vm_queue_append_new(h->base.env, VM_PRQ, &h->wild, bits, care, payload, seq);
    h->vec[h->base.nwild++] = (vmatch_short_entry_t){bits, care, payload, seq};
    return VMATCH_OK;
}

/* An append that is not a free way of a line: the side's first entry, a wildcard receive,
 * an overflow, a UMQ switching, or the append that makes the table grow. */
int vm_hash_append_other(vm_hash_t *h, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                         uint64_t seq)
{
    int made = !h->base.table;
    if (made && vm_hash_table_make(h) < 0)
        return VMATCH_ENOMEM;
    int rc;
    uint32_t i = UINT32_MAX; /* the bucket of an exact receive */
    if (h->base.side == VM_UMQ)
        rc = vm_hash_umq_append(h, bits, payload, seq);
    else if (care != ~(vmatch_bits_t)0)
        rc = wild_append(h, bits, care, payload, seq);
    else
        rc = vm_hash_slot_append(h, i = vm_hash_index(bits, h->base.nb), bits, care, payload,
                                 seq);
    if (rc < 0) {
        if (made)
            vm_hash_table_free(h);
        return rc;
    }
    if (h->base.side == VM_PRQ &&
        (++h->base.count > h->grow || (i != UINT32_MAX && vm_hash_crowded(h, i))))
        vm_hash_grow(h);
    return VMATCH_OK;
}

/* append_other, then the flag of the fast paths. */
VM_HASH_COLD static int append_slow(vm_hash_t *h, vmatch_bits_t bits, vmatch_bits_t care,
                                    void *payload, uint64_t seq)
{
    int rc = h->base.shortcap ? vm_hash_to_table(h, bits, care, payload, seq) /* full */
                              : vm_hash_append_other(h, bits, care, payload, seq);
    if (rc == VMATCH_OK && seq > h->base.check) /* after the append: a call that fails */
        vm_hash_check(h, seq);                  /* changes nothing */
    vm_hash_sync(h);
    return rc;
}

/* An append to the short vector past the side's check (shrink.c): the windows of the tables. */
VM_HASH_COLD static void short_checked(vm_hash_t *h, uint64_t seq)
{
    vm_hash_check(h, seq);
    vm_hash_sync(h);
}

/* Exact traffic: an exact entry into a free way of its line, on a side that may take the
 * fast path (room is 0 when it may not), when the table need not grow and its size need not
 * be checked (shrink.c).  1 when done. */
static inline int append_fast(vm_hash_t *h, uint32_t mixed, vmatch_bits_t bits, void *payload,
                              uint64_t seq)
{
    if (h->base.count >= h->base.room || seq > h->base.check)
        return 0;
    if (!vmatch_line_put(&h->base.table[vmatch_line_bucket(mixed, h->base.nb)], bits, payload,
                         seq))
        return 0;
    h->base.count++;
    return 1;
}

static int hash_append(vm_side_t *p, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                       void *payload, uint64_t seq)
{
    (void)cls;
    vm_hash_t *h = (vm_hash_t *)p;
    if (vm_hash_short_append(h, bits, care, payload, seq)) { /* a short side */
        if (seq > h->base.check)
            short_checked(h, seq);
        return VMATCH_OK;
    }
    if (care == ~(vmatch_bits_t)0 && append_fast(h, vmatch_line_mix(bits), bits, payload, seq))
        return VMATCH_OK;
    if (h->flat && !h->want_switch && seq <= h->base.check) /* a flat UMQ: its queue */
        return vm_hash_flat_append(h, bits, payload, seq);
    return append_slow(h, bits, care, payload, seq);
}

/* The PRQ's oldest wildcard receive that an arriving message matches: the vector's first
 * match (the vector's are older than wild's), else wild's.  1 with *hit (hit->where NULL
 * and hit->slot its place for the vector's), or 0. */
static int wild_find(vm_hash_t *h, vmatch_bits_t key, vm_hit_t *hit, uint64_t *inspected)
{
    unsigned compared;
    int i = vmatch_wild_find(&h->base.hot, key, &compared);
    *inspected += compared;
    if (i >= 0) {
        *hit = (vm_hit_t){.payload = h->vec[i].payload, .seq = h->vec[i].seq, .slot = i};
        return 1;
    }
    vm_queue_t *w = h->wild;
    return w && w->len && w->ops->find(w, key, ~(vmatch_bits_t)0, hit, inspected);
}

/* Remove the wildcard receive that wild_find or wild_payload returned. */
static void wild_remove(vm_hash_t *h, const vm_hit_t *hit)
{
    if (hit->where)
        h->wild->ops->remove(h->wild, hit);
    else
        vmatch_wild_drop(&h->base.hot, hit->slot);
    h->base.count--;
}

/* An arriving message on a hashed PRQ with wildcard receives queued: its bucket's first
 * match and the wildcard receives', the older of the two. */
static int match_prq_wild(vm_hash_t *h, vmatch_bits_t key, int remove, void **payload,
                          uint64_t *inspected)
{
    uint32_t i = vm_hash_index(key, h->base.nb);
    vm_hit_t hb, hw;
    int fb =
        h->base.count > vm_hash_wildcards(h) && vm_hash_slot_find(h, i, key, &hb, inspected);
    int fw = wild_find(h, key, &hw, inspected);
    if (fw && (!fb || hw.seq < hb.seq)) {
        *payload = hw.payload;
        if (remove)
            wild_remove(h, &hw);
        return 1;
    }
    if (!fb)
        return 0;
    *payload = hb.payload;
    if (remove)
        vm_hash_slot_remove(h, i, &hb);
    return 1;
}

/* A match off the fast path: a probe, a wildcard search, a flat UMQ, or wildcard receives
 * queued. */
static int match_other(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, int remove,
                       void **payload, uint64_t *inspected)
{
    if (h->base.side == VM_UMQ)
        return vm_hash_umq_match(h, key, keycare, remove, payload, inspected);
    if (vm_hash_wildcards(h))
        return match_prq_wild(h, key, remove, payload, inspected);
    uint32_t i = vm_hash_index(key, h->base.nb);
    vm_hit_t hit;
    if (!vm_hash_slot_find(h, i, key, &hit, inspected))
        return 0;
    *payload = hit.payload;
    if (remove)
        vm_hash_slot_remove(h, i, &hit);
    return 1;
}

/* match_other, then the flag of the fast paths. */
VM_HASH_COLD static int match_slow(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare,
                                   int remove, void **payload, uint64_t *inspected)
{
    int found = match_other(h, key, keycare, remove, payload, inspected);
    vm_hash_sync(h);
    return found;
}

static int hash_match(vm_side_t *p, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                      int remove, void **payload, uint64_t *inspected)
{
    (void)cls;
    vm_hash_t *h = (vm_hash_t *)p;
    if (h->base.shortcap) /* a short side */
        return vm_hash_short_match(h, key, keycare, remove, payload, inspected);
    if (!h->base.count) /* most searches of a side with nothing queued */
        return 0;
    /* Exact traffic: the bucket alone, when no wildcard receive needs a look and the UMQ is
     * hashed with no switch to weigh. */
    if (remove && keycare == ~(vmatch_bits_t)0 && !h->base.slow)
        return vm_hash_slot_take(h, vm_hash_index(key, h->base.nb), key, payload, inspected);
    if (h->flat) /* a flat UMQ: its queue, without the frame of the slow path */
        return vm_hash_flat_match(h, key, keycare, remove, payload, inspected);
    return match_slow(h, key, keycare, remove, payload, inspected);
}

/* The exchange's cases off its fast path, out of line so that the fast path keeps no frame:
 * the generic exchange, and the append alone after a search that found nothing. */
VM_HASH_COLD static int exchange_slow(vm_side_t *sp, vm_side_t *qp, vmatch_bits_t bits,
                                      vmatch_bits_t care, void *payload, vm_call_t *c)
{
    return vm_exchange(sp, qp, bits, care, payload, c);
}

VM_HASH_COLD static int queue_slow(vm_side_t *qp, vmatch_bits_t bits, vmatch_bits_t care,
                                   void *payload, vm_call_t *c)
{
    int rc = vm_side_append(qp, bits, care, payload, c);
    return rc < 0 ? rc : VMATCH_QUEUED;
}

/* The exchange when a short side is in it: the search side's vector, or its table through
 * the generic exchange; then the append, into the queue side's vector while it is short and
 * has room at its end.  Every other case is a tail call: a table's search (the generic
 * exchange), an append to a table, a vector to close up or full, or an append past the
 * side's check (queue_slow, through hash_append). */
static int exchange_short(vm_hash_t *s, vm_hash_t *q, vmatch_bits_t bits, vmatch_bits_t care,
                          void *payload, vm_call_t *c)
{
    unsigned compared = 0;
    if (s->base.shortcap) {
        int i = vmatch_short_find(&s->base.hot, bits, care, &compared);
        c->inspected += compared;
        if (i >= 0) {
            *c->out = s->vec[i].payload;
            vmatch_short_drop(&s->base.hot, (unsigned)i);
            return vm_side_counted(&s->base, &q->base, VMATCH_MATCHED);
        }
    } else if (s->base.count) {
        return exchange_slow(&s->base, &q->base, bits, care, payload, c);
    }
    if (q->base.head + q->base.len >= q->base.shortcap || c->seq > q->base.check)
        return queue_slow(&q->base, bits, care, payload, c);
    vmatch_short_put(&q->base.hot, bits, care, payload, c->seq);
    return vm_side_counted(&s->base, &q->base, VMATCH_QUEUED);
}

/* The engine's post or arrival.  Exact traffic on hashed sides with no wildcard receive
 * queued is the fast path, which calls nothing (every other case is a tail call with its
 * arguments): the bits mixed once for the other side's line and, when that holds no
 * match and has not overflowed, a free way of this side's line. */
static int hash_exchange(vm_call_t *c, vmatch_bits_t bits, vmatch_bits_t care, vm_side_t *sp,
                         void *payload, vm_side_t *qp)
{
    vm_hash_t *s = (vm_hash_t *)sp, *q = (vm_hash_t *)qp;
    if (s->base.shortcap | q->base.shortcap)
        return exchange_short(s, q, bits, care, payload, c);
    if (care != ~(vmatch_bits_t)0 || s->base.slow)
        return exchange_slow(sp, qp, bits, care, payload, c);
    uint32_t mixed = vmatch_line_mix(bits);
    if (__builtin_expect(s->base.count != 0, 1)) {
        vm_line_t *l = &s->base.table[vmatch_line_bucket(mixed, s->base.nb)];
        unsigned compared;
        if (vmatch_line_take(l, bits, c->out, &compared)) {
            s->base.count--;
            c->inspected += compared;
            return vm_side_counted(sp, qp, VMATCH_MATCHED);
        }
        if (vm_line_over(l)) /* the bucket goes on in its overflow lines */
            return exchange_slow(sp, qp, bits, care, payload, c);
        c->inspected += compared;
    }
    if (!append_fast(q, mixed, bits, payload, c->seq))
        return queue_slow(qp, bits, care, payload, c);
    return vm_side_counted(sp, qp, VMATCH_QUEUED);
}

/* The PRQ's oldest wildcard receive with this payload, as wild_find. */
static int wild_payload(vm_hash_t *h, const void *payload, vm_hit_t *hit, uint64_t *inspected)
{
    for (unsigned k = 0; k < h->base.nwild; k++)
        if (h->vec[k].payload == payload) {
            *inspected += k + 1;
            *hit = (vm_hit_t){.payload = h->vec[k].payload, .seq = h->vec[k].seq, .slot = k};
            return 1;
        }
    *inspected += h->base.nwild;
    vm_queue_t *w = h->wild;
    return w && w->len && w->ops->find_payload(w, payload, hit, inspected);
}

/* A cancel or a removal by handle: the oldest entry with the payload. */
static int remove_payload(vm_hash_t *h, const void *payload, uint64_t *inspected)
{
    vm_hit_t hit, hw;
    if (!h->base.count)
        return 0;
    if (h->base.side == VM_UMQ)
        return vm_hash_umq_remove_payload(h, payload, inspected);
    /* On the PRQ: the wildcard receives and every bucket. */
    int fw = wild_payload(h, payload, &hw, inspected);
    uint32_t i;
    int fb = vm_hash_scan(h, 0, 0, payload, &hit, &i, inspected);
    if (fw && (!fb || hw.seq < hit.seq)) {
        wild_remove(h, &hw);
    } else if (fb) {
        vm_hash_slot_remove(h, i, &hit);
    } else {
        return 0;
    }
    return 1;
}

static int hash_remove_payload(vm_side_t *p, const void *payload, uint64_t *inspected)
{
    vm_hash_t *h = (vm_hash_t *)p;
    if (h->base.shortcap) /* a short side */
        return vm_hash_short_remove(h, payload, inspected);
    int found = remove_payload(h, payload, inspected);
    vm_hash_sync(h);
    return found;
}

static void hash_stats(const vm_side_t *p, vmatch_stats_t *acc)
{
    const vm_hash_t *h = (const vm_hash_t *)p;
    acc->queues += (h->flat != NULL) + (h->wild != NULL);
}

/* hash.table_buckets, hash.overflows, hash.shrinks and hash.flat (hash_stat_keys). */
static int hash_stat(const vm_side_t *p, const char *key, uint32_t arg, void *out)
{
    const vm_hash_t *h = (const vm_hash_t *)p;
    (void)arg;
    if (strcmp(key, "hash.table_buckets") == 0)
        *(uint64_t *)out += h->base.table ? h->base.nb : 0;
    else if (strcmp(key, "hash.overflows") == 0)
        *(uint64_t *)out += h->nover;
    else if (strcmp(key, "hash.flat") == 0)
        *(uint64_t *)out += h->flat != NULL;
    else if (strcmp(key, "hash.shrinks") == 0)
        *(uint64_t *)out += h->shrinks;
    else
        return 0;
    return 1;
}

const vm_policy_t vm_hash_policy = {.name = "hash",
                                    .create = hash_create,
                                    VM_POLICY_CALLS(hash),
                                    .exchange = hash_exchange,
                                    .stat = hash_stat,
                                    .hot = 1};

/* ---- keys ---- */

/* Defaults: measured in docs/hash.md. */
static const vm_hash_config_t hash_default = {
    .buckets = 0, .load = 100, .small = 50, .shrink = 4096, .shortcap = VMATCH_SHORT_MAX};

#define FIELD(f) offsetof(vm_hash_config_t, f)

static const vm_key_t hash_keys[] = {
    {"hash.buckets", VM_KEY_UINT, FIELD(buckets), 0, 1u << 20,
     .help = "`hash`: fixed buckets per side, at most 2^20 (64 MiB of lines, made with the "
             "side's first entry); 0: a growing table"},
    {"hash.load", VM_KEY_UINT, FIELD(load), 10, 100000,
     .help = "`hash`: entries per 100 buckets past which a growing table over 512 buckets "
             "doubles"},
    {"hash.small_load", VM_KEY_UINT, FIELD(small), 10, 100000,
     .help = "`hash`: the same for a table of at most 512"},
    {"hash.shrink", VM_KEY_UINT, FIELD(shrink), 0, 1u << 30,
     .help = "`hash`: operations per window; two quiet windows shrink a table; 0: never"},
    {"hash.short", VM_KEY_UINT, FIELD(shortcap), 0, VMATCH_SHORT_MAX,
     .help = "`hash`: a side's entries kept in a vector, no table, up to N; 0: none"},
};

static const vm_stat_key_t hash_stat_keys[] = {
    {.name = "hash.table_buckets",
     .help = "`hash`: buckets in the two sides' tables now (a side makes its table at its "
             "first entry)"},
    {.name = "hash.overflows",
     .help = "`hash`: overflow lines held, both sides (64 bytes each, chained from the "
             "buckets that overflowed)"},
    {.name = "hash.shrinks",
     .help = "`hash`: times a side's table shrank after quiet traffic, both sides "
             "(docs/hash.md#giving-memory-back)"},
    {.name = "hash.flat",
     .help = "`hash`: 1 while the unexpected messages are kept flat, in one queue in arrival "
             "order; 0 while hashed"},
};

static const vm_policy_t *const hash_policies[] = {&vm_hash_policy, NULL};

const vm_module_t vm_hash_module = {.prefix = "hash",
                                    VM_MODULE_KEYS(hash_keys),
                                    VM_MODULE_STATS(hash_stat_keys),
                                    VM_MODULE_CFG(hash_default),
                                    .policies = hash_policies};
