/* pnp.c -- policy=pnp and policy=pnp-static: partner / non-partner queues (thesis ch. 4).
 *
 * Each side keeps a chain of non-partner queues, chain[0] (the initial queue) to
 * chain[nchain - 1] (the newest), one queue per partner, and a wildcard queue.  A source key
 * is the (context, source) field of the match bits: one rank in one communicator.
 *
 * Dynamic (pnp).  Entries of a non-partner go to the newest chain queue.  When that queue
 * holds pnp.threshold entries, its entries are counted per source key and the keys above
 * the metric's edge point become partners (at most pnp.cap * sqrt(nprocs) in all, highest
 * counts first), each with its own queue.  Table: open addressing over 1.5 slots per
 * partner (made with the first partners, doubling as more come, up to 1.5 times the partner
 * bound), so a lookup reads one or two slots.  Then, with pnp.move (the default), the
 * new partners' entries move to their queues, keeping their sequence numbers, so the chain
 * stays one queue and a partner's search is its own queue.  Without it (the thesis's levels),
 * they stay where they were and a fresh chain queue opens the next level: a search for a
 * partner walks chain[0 .. the level it joined at] and then its own queue, one for a
 * non-partner the whole chain.
 *
 * Static (pnp-static).  The partners come from a profile, in a perfect hash built once; one
 * chain queue holds every non-partner, and a partner's entries are all in its own queue.
 *
 * Order.  Every entry has the engine's sequence number and every queue is in sequence
 * order, so the oldest match is the one with the lowest sequence among the first matches of
 * the queues that can hold a match.  A receive that does not name its context and source
 * (ANY_SOURCE, or any other care mask that leaves a bit of that field out) goes to the
 * wildcard queue, which every arriving message also searches.  Until the first partner
 * exists everything, wildcards included, goes to chain[0]: the design is then policy=single.
 * With levels, chain[0] takes no more entries once the first one opens, so anything found
 * there is older than every entry elsewhere and the search stops.
 */
#include "pnp_impl.h"

#include "error.h"
#include "profile.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t src_key(const vm_pnp_t *s, vmatch_bits_t bits)
{
    return vm_source_key(&s->key, bits);
}

/* The slot where key's probe starts. */
static inline size_t home(const vm_pnp_t *s, uint64_t key)
{
    uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> 32;
    return (h * s->nslots) >> 32;
}

/* The slot after i, wrapping around (linear probing). */
static inline size_t next_slot(const vm_pnp_t *s, size_t i)
{
    return i + 1 < s->nslots ? i + 1 : 0;
}

/* The free slot where key goes (the table always has one). */
static size_t free_slot(const vm_pnp_t *s, uint64_t key)
{
    size_t i = home(s, key);
    while (s->table[i].key)
        i = next_slot(s, i);
    return i;
}

static size_t table_bytes(const vm_pnp_t *s)
{
    return (size_t)s->nslots * sizeof *s->table;
}

/* The partner of key: its queue index, and in *last the last chain index to search first;
 * -1 for a non-partner. */
static inline int64_t partner(const vm_pnp_t *s, uint64_t key, int32_t *last)
{
    if (s->is_static) {
        uint64_t ctx = key >> s->src_bits, src = key & ((1ull << s->src_bits) - 1);
        for (uint32_t i = 0; i < s->nctx && src < s->nprocs; i++)
            if (s->ctxs[i] == ctx) {
                int64_t q = vm_phash_find(&s->ph, src + (uint64_t)s->nprocs * i);
                if (q >= 0)
                    *last = -1;
                return q;
            }
        return -1;
    }
    if (!s->nslots) /* no partner yet: no table */
        return -1;
    /* The table always has a free slot, so the probe ends. */
    for (size_t i = home(s, key);; i = next_slot(s, i)) {
        const vm_pnp_slot_t *t = &s->table[i];
        if (t->key == key + 1) {
            *last = (int32_t)t->last;
            return t->queue;
        }
        if (!t->key)
            return -1;
    }
}

/* The first closed chain queue at or after c that may hold entries, or UINT32_MAX. */
static inline uint32_t next_closed(const vm_pnp_t *s, uint32_t c)
{
    uint32_t w = c / 64;
    if (w >= s->closed_words)
        return UINT32_MAX;
    uint64_t m = s->closed[w] & (~0ull << (c % 64));
    while (!m) {
        if (++w >= s->closed_words)
            return UINT32_MAX;
        m = s->closed[w];
    }
    return w * 64 + (uint32_t)__builtin_ctzll(m);
}

/* ---- growing arrays ---- */

int vm_pnp_grow(vm_mem_t *mem, vm_queue_t ***arr, uint32_t *cap, uint32_t need)
{
    if (need <= *cap)
        return VMATCH_OK;
    uint32_t ncap = *cap ? *cap : 4;
    while (ncap < need)
        ncap *= 2;
    vm_queue_t **n = vm_mem_alloc(mem, ncap * sizeof *n);
    if (!n)
        return VMATCH_ENOMEM;
    if (*cap)
        memcpy(n, *arr, *cap * sizeof *n);
    vm_mem_free(mem, *arr, *cap * sizeof *n);
    *arr = n;
    *cap = ncap;
    return VMATCH_OK;
}

/* Room for bit `bit` in the closed-queue bitmap. */
static int grow_closed(vm_pnp_t *s, uint32_t bit)
{
    uint32_t need = bit / 64 + 1;
    if (need <= s->closed_words)
        return VMATCH_OK;
    vm_mem_t *mem = &s->base.env->mem;
    uint32_t n = need * 2;
    uint64_t *w = vm_mem_calloc(mem, n * sizeof *w);
    if (!w)
        return VMATCH_ENOMEM;
    if (s->closed_words)
        memcpy(w, s->closed, s->closed_words * sizeof *w);
    vm_mem_free(mem, s->closed, s->closed_words * sizeof *w);
    s->closed = w;
    s->closed_words = n;
    return VMATCH_OK;
}

int vm_pnp_add_queue(vm_pnp_t *s, vm_queue_t **arr, uint32_t i)
{
    return s->base.env->cfg->storage->create(s->base.env, s->base.side, &arr[i]);
}

/* ---- dynamic partner extraction ---- */

typedef struct collect {
    const vm_pnp_t *s;
    uint64_t *keys;
    size_t n;
} collect_t;

static int collect_key(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                       uint64_t seq)
{
    (void)payload, (void)seq;
    collect_t *c = arg;
    if ((care & c->s->key.care) == c->s->key.care) /* chain[0] may hold wildcards */
        c->keys[c->n++] = src_key(c->s, bits);
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* pnp.move: the entries of this round's new partners go from the shared queue to their own
 * queues, and (in the first round) wildcard receives to the wildcard queue; the rest go to
 * a fresh shared queue, *out.  Every entry keeps its sequence number, and each queue gets
 * its entries in their old order.  Nothing changes until the caller swaps *out in, so on an
 * error (ENOMEM) the caller drops the new queues and the old state stands. */
typedef struct mover {
    vm_pnp_t *s;
    vm_queue_t *rest, *wild;
    int rc;
} mover_t;

static int move_one(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                    uint64_t seq)
{
    mover_t *mv = arg;
    vm_pnp_t *s = mv->s;
    vm_queue_t *to = mv->rest;
    int32_t last;
    int64_t i;
    if ((care & s->key.care) != s->key.care)
        to = mv->wild;
    else if ((i = partner(s, src_key(s, bits), &last)) >= 0)
        to = s->partner[i];
    mv->rc = to->ops->append(to, bits, care, payload, seq);
    return mv->rc < 0;
}

static int move_entries(vm_pnp_t *s, vm_queue_t **out, vm_queue_t **wild)
{
    vm_queue_t *q = s->chain[0];
    mover_t mv = {.s = s, .wild = s->wild};
    int rc = vm_pnp_add_queue(s, &mv.rest, 0);
    if (rc == VMATCH_OK && !mv.wild)
        rc = vm_pnp_add_queue(s, &mv.wild, 0);
    if (rc == VMATCH_OK) {
        q->ops->each(q, move_one, &mv);
        rc = mv.rc;
    }
    /* A wildcard queue made here stays only when it got entries. */
    if (!s->wild && mv.wild && (rc < 0 || !mv.wild->len)) {
        mv.wild->ops->destroy(mv.wild);
        mv.wild = NULL;
    }
    if (rc < 0 && mv.rest) {
        mv.rest->ops->destroy(mv.rest);
        mv.rest = NULL;
    }
    *out = mv.rest;
    *wild = mv.wild;
    return rc;
}

/* Room in the partner table for n more partners: it grows by doubling from 16 slots while it
 * would be more than a third full, up to what the partner bound needs (1.5 slots per
 * partner, at most 2/3 full), so that a side holds slots for the partners it found, not for
 * pnp.cap's bound.  (Kept up to 2/3 full before the bound, the lookups' longer probes cost
 * 4% on the report's skewed neighbour row.)  VMATCH_OK, or VMATCH_ENOMEM with the table as
 * it was. */
static int table_room(vm_pnp_t *s, uint32_t n)
{
    uint64_t need = (uint64_t)(s->npartners + n) * 3 + 1, full = s->limit + s->limit / 2 + 1;
    if (need <= s->nslots)
        return VMATCH_OK;
    uint64_t ns = s->nslots ? s->nslots : 16;
    while (ns < need)
        ns *= 2;
    ns = ns < full ? ns : full;
    vm_mem_t *mem = &s->base.env->mem;
    vm_pnp_slot_t *t = vm_mem_calloc(mem, ns * sizeof *t), *old = s->table;
    if (!t)
        return VMATCH_ENOMEM;
    uint32_t on = s->nslots;
    s->table = t;
    s->nslots = (uint32_t)ns;
    for (uint32_t i = 0; i < on; i++)
        if (old[i].key)
            t[free_slot(s, old[i].key - 1)] = old[i];
    if (old)
        vm_mem_free(mem, old, on * sizeof *old);
    return VMATCH_OK;
}

/* A round of partner extraction on the newest shared queue: new partners, each with a
 * queue; then (pnp.move) their entries move there, or (thesis) a new level opens.  Best
 * effort: when no key qualifies, the table is full or memory runs out, the queues stay as
 * they are. */
static void extract(vm_pnp_t *s)
{
    s->busy = 1; /* the shared queue reached the threshold: this window is busy */
    vm_mem_t *mem = &s->base.env->mem;
    vm_queue_t *q = s->chain[s->nchain - 1];
    size_t n = q->len, bytes = n * (3 * sizeof(uint64_t) + sizeof(size_t));
    /* The next round, unless this one takes partners: out of memory, after pnp.threshold
     * more entries; no key qualifies or fits, when the queue has doubled (so such rounds cost
     * O(1) per append); the table is full, never. */
    uint64_t t = s->pc->threshold, more = q->len > t ? q->len : t;
    s->retry = s->npartners >= s->limit ? UINT64_MAX : q->len + t;
    if (s->npartners >= s->limit || n == 0)
        return;
    uint64_t *keys = vm_mem_alloc(mem, bytes);
    if (!keys)
        return;
    uint64_t *counts = keys + n, *scratch = counts + n;
    size_t *chosen = (size_t *)(scratch + n);
    collect_t c = {.s = s, .keys = keys};
    q->ops->each(q, collect_key, &c);
    qsort(keys, c.n, sizeof *keys, cmp_u64);
    /* Distinct keys with their counts, and the contexts among them (keys sort by context). */
    size_t u = 0, nctx = 0;
    for (size_t i = 0; i < c.n; i++) {
        if (u && keys[u - 1] == keys[i]) {
            counts[u - 1]++;
            continue;
        }
        if (!u || keys[u - 1] >> s->src_bits != keys[i] >> s->src_bits)
            nctx++;
        keys[u] = keys[i];
        counts[u++] = 1;
    }
    uint64_t pop = (uint64_t)s->nprocs * nctx;
    size_t m = vm_pnp_choose(counts, u, pop > u ? pop : u, (int)s->pc->metric, s->pc->alpha, u,
                             scratch, chosen, NULL);
    /* Highest count first into the table, up to the bound. */
    uint32_t fits = s->limit - s->npartners;
    if (table_room(s, m < fits ? (uint32_t)m : fits) < 0) {
        vm_mem_free(mem, keys, bytes);
        return;
    }
    uint32_t last = s->pc->move ? UINT32_MAX : s->nchain - 1, taken = 0;
    uint64_t *slots = scratch; /* scratch is free again */
    for (size_t j = 0; j < m && s->npartners + taken < s->limit; j++) {
        size_t i = free_slot(s, keys[chosen[j]]);
        s->table[i] = (vm_pnp_slot_t){keys[chosen[j]] + 1, s->npartners + taken, last};
        slots[taken++] = i;
    }
    uint32_t made = 0;
    int rc = taken ? VMATCH_OK : VMATCH_ENOTFOUND, new_chain = 0;
    vm_queue_t *rest = NULL, *wild = NULL;
    if (rc == VMATCH_OK && !s->pc->move)
        rc = vm_pnp_grow(mem, &s->chain, &s->chain_cap, s->nchain + 1);
    if (rc == VMATCH_OK && !s->pc->move)
        rc = grow_closed(s, s->nchain - 1);
    if (rc == VMATCH_OK)
        rc = vm_pnp_grow(mem, &s->partner, &s->partner_cap, s->npartners + taken);
    if (rc == VMATCH_OK && !s->pc->move &&
        (rc = vm_pnp_add_queue(s, s->chain, s->nchain)) == VMATCH_OK)
        new_chain = 1;
    while (rc == VMATCH_OK && made < taken &&
           (rc = vm_pnp_add_queue(s, s->partner, s->npartners + made)) == VMATCH_OK)
        made++;
    if (rc == VMATCH_OK && s->pc->move)
        rc = move_entries(s, &rest, &wild);
    if (rc == VMATCH_OK) {
        s->npartners += taken;
        s->rounds++;
        s->retry = t;
        if (s->pc->move) {
            q->ops->destroy(q);
            s->newest = s->chain[0] = rest;
            s->wild = wild;
            s->retry = rest->len + t;
        } else {
            s->closed[(s->nchain - 1) / 64] |= 1ull << ((s->nchain - 1) % 64);
            s->newest = s->chain[s->nchain++];
        }
    } else {
        /* Undo.  Clearing this round's slots in the reverse of their insertion leaves the
         * table as it was (no slot was filled after them), probe sequences included. */
        if (rc == VMATCH_ENOTFOUND)
            s->retry = q->len + more;
        while (made--)
            s->partner[s->npartners + made]->ops->destroy(s->partner[s->npartners + made]);
        if (new_chain)
            s->chain[s->nchain]->ops->destroy(s->chain[s->nchain]);
        for (uint32_t j = taken; j-- > 0;)
            s->table[slots[j]].key = 0;
    }
    vm_mem_free(mem, keys, bytes);
}

/* Without partners the side is one queue: the engine may match on it and append to it
 * directly, short of the append that reaches the extraction threshold. */
static void sync_sole(vm_pnp_t *s)
{
    s->base.sole = s->npartners ? NULL : s->newest;
    s->base.sole_until = s->retry;
}

/* ---- the policy ---- */

static void pnp_destroy(vm_side_t *p)
{
    vm_pnp_t *s = (vm_pnp_t *)p;
    vm_mem_t *mem = &p->env->mem;
    for (uint32_t i = 0; i < s->nchain; i++)
        s->chain[i]->ops->destroy(s->chain[i]);
    for (uint32_t i = 0; i < s->npartners; i++)
        s->partner[i]->ops->destroy(s->partner[i]);
    if (s->wild)
        s->wild->ops->destroy(s->wild);
    vm_mem_free(mem, s->chain, s->chain_cap * sizeof *s->chain);
    vm_mem_free(mem, s->partner, s->partner_cap * sizeof *s->partner);
    vm_mem_free(mem, s->closed, s->closed_words * sizeof *s->closed);
    if (s->table)
        vm_mem_free(mem, s->table, table_bytes(s));
    vm_phash_free(&s->ph, mem);
    if (s->ctxs)
        vm_mem_free(mem, s->ctxs, s->ctxs_bytes);
    vm_mem_free(mem, s, sizeof *s);
}

/* cap: c of the c * sqrt(nprocs) partner bound, 0 for pnp.cap (dynamic only). */
static int create(vm_env_t *env, int side, vm_side_t **out, int is_static, uint32_t cap)
{
    const vm_config_t *cfg = env->cfg;
    if (!is_static && !cfg->nprocs)
        return vm_fail(VMATCH_EINVAL,
                       "spec: policy=pnp needs nprocs=N (partners are bounded by pnp.cap * "
                       "sqrt(N))");
    vm_pnp_t *s = vm_mem_calloc(&env->mem, sizeof *s);
    if (!s)
        return VMATCH_ENOMEM;
    unsigned src_bits = cfg->src_bits;
    s->base = (vm_side_t){
        .ops = is_static ? &vm_pnp_static_policy : &vm_pnp_policy, .env = env, .side = side};
    s->pc = vm_module_cfg(cfg, &vm_pnp_module);
    s->is_static = is_static;
    s->src_bits = src_bits;
    s->key = vm_source_key_of(cfg);
    s->nprocs = cfg->nprocs;
    s->retry = s->pc->threshold;
    int rc = vm_pnp_grow(&env->mem, &s->chain, &s->chain_cap, 1);
    if (rc == VMATCH_OK && (rc = vm_pnp_add_queue(s, s->chain, 0)) == VMATCH_OK) {
        s->nchain = 1;
        s->newest = s->chain[0];
    }
    s->mark = s->pc->threshold / 16 > 2 ? s->pc->threshold / 16 : 2;
    if (rc == VMATCH_OK && is_static) {
        s->retry = UINT64_MAX; /* no extraction */
        s->end = UINT64_MAX;   /* no forgetting */
        rc = vm_pnp_load_profile(s);
    } else if (rc == VMATCH_OK) {
        uint64_t c = cap ? cap : s->pc->cap;
        s->limit = (uint32_t)vm_isqrt(c * c * cfg->nprocs); /* the table comes with partners */
    }
    if (rc < 0) {
        pnp_destroy(&s->base);
        return rc;
    }
    sync_sole(s);
    *out = &s->base;
    return VMATCH_OK;
}

static int pnp_create(vm_env_t *env, int side, vm_side_t **out)
{
    return create(env, side, out, 0, 0);
}

int vm_pnp_create_capped(vm_env_t *env, int side, uint32_t cap, vm_side_t **out)
{
    return create(env, side, out, 0, cap);
}

static int pnp_static_create(vm_env_t *env, int side, vm_side_t **out)
{
    return create(env, side, out, 1, 0);
}

/* Queue an entry once partners exist, or when it makes the shared queue reach the
 * threshold: out of line, so the path of an engine without partners stays short. */
static __attribute__((noinline)) int
append_routed(vm_pnp_t *s, vmatch_bits_t bits, vmatch_bits_t care, void *payload, uint64_t seq)
{
    vm_side_t *p = &s->base;
    if (s->npartners) {
        if (seq > s->end) /* the window's end (never for pnp-static) */
            vm_pnp_window(s, seq);
        if ((care & s->key.care) != s->key.care)
            return vm_queue_append_new(p->env, p->side, &s->wild, bits, care, payload, seq);
        int32_t last;
        int64_t i = partner(s, src_key(s, bits), &last);
        if (i >= 0)
            return s->partner[i]->ops->append(s->partner[i], bits, care, payload, seq);
    }
    vm_queue_t *q = s->newest;
    int rc = q->ops->append(q, bits, care, payload, seq);
    if (rc == VMATCH_OK && q->len >= s->retry) { /* never for pnp-static */
        extract(s);
        sync_sole(s);
    }
    return rc;
}

static int pnp_append(vm_side_t *p, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                      void *payload, uint64_t seq)
{
    (void)cls;
    vm_pnp_t *s = (vm_pnp_t *)p;
    vm_queue_t *q = s->newest; /* without partners, everything goes there */
    if (s->npartners || q->len + 1 >= s->retry)
        return append_routed(s, bits, care, payload, seq);
    return q->ops->append(q, bits, care, payload, seq);
}

/* vm_best_consider on chain queue c. */
static int consider(vm_pnp_t *s, uint32_t c, vmatch_bits_t key, vmatch_bits_t keycare,
                    vm_best_t *best, uint64_t *inspected)
{
    return vm_best_consider(best, s->chain[c], key, keycare, inspected);
}

/* A match once partners exist (out of line, as append_routed). */
static __attribute__((noinline)) int match_routed(vm_pnp_t *s, vmatch_bits_t key,
                                                  vmatch_bits_t keycare, int remove,
                                                  void **payload, uint64_t *inspected)
{
    vm_side_t *p = &s->base;
    vm_best_t best = {0};
    if (p->side == VM_PRQ || (keycare & s->key.care) == s->key.care) {
        /* The queues a match of this source key can be in, oldest first, then wildcards. */
        int32_t last = (int32_t)s->nchain - 1;
        int64_t i = partner(s, src_key(s, key), &last);
        for (uint32_t c = next_closed(s, 0); (int64_t)c <= last && !best.q;
             c = next_closed(s, c + 1))
            if (!consider(s, c, key, keycare, &best, inspected) && !s->chain[c]->len)
                s->closed[c / 64] &= ~(1ull << (c % 64));
        if (!best.q && last == (int32_t)s->nchain - 1)
            consider(s, last, key, keycare, &best, inspected);
        /* Only the partner's own queue left to search: find and remove in one walk. */
        if (!best.q && i >= 0 && !(s->wild && s->wild->len))
            return vm_queue_match(s->partner[i], key, keycare, remove, payload, inspected);
        if (!best.q && i >= 0)
            vm_best_consider(&best, s->partner[i], key, keycare, inspected);
        if (s->wild && !(best.q == s->chain[0] && s->nchain > 1))
            vm_best_consider(&best, s->wild, key, keycare, inspected);
    } else { /* a wildcard search: every queue, the oldest first match */
        uint32_t c = next_closed(s, 0);
        for (; c < s->nchain - 1 && !(best.q && best.q == s->chain[0]);
             c = next_closed(s, c + 1))
            if (!consider(s, c, key, keycare, &best, inspected) && !s->chain[c]->len)
                s->closed[c / 64] &= ~(1ull << (c % 64));
        if (!(best.q && best.q == s->chain[0] && s->nchain > 1)) {
            consider(s, s->nchain - 1, key, keycare, &best, inspected);
            for (uint32_t i = 0; i < s->npartners; i++)
                vm_best_consider(&best, s->partner[i], key, keycare, inspected);
            if (s->wild)
                vm_best_consider(&best, s->wild, key, keycare, inspected);
        }
    }
    return vm_best_take(&best, remove, payload);
}

/* match_routed once the side is due to forget its partners (quiet.c): it does as it takes
 * the side's last entry. */
static __attribute__((noinline)) int match_forget(vm_pnp_t *s, vmatch_bits_t key,
                                                  vmatch_bits_t keycare, int remove,
                                                  void **payload, uint64_t *inspected)
{
    int found = match_routed(s, key, keycare, remove, payload, inspected);
    if (found && remove && s->base.len == 1) {
        vm_pnp_forget(s);
        sync_sole(s);
    }
    return found;
}

static int pnp_match(vm_side_t *p, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                     int remove, void **payload, uint64_t *inspected)
{
    (void)cls;
    vm_pnp_t *s = (vm_pnp_t *)p;
    if (s->npartners && s->due)
        return match_forget(s, key, keycare, remove, payload, inspected);
    if (s->npartners)
        return match_routed(s, key, keycare, remove, payload, inspected);
    return vm_queue_match(s->newest, key, keycare, remove, payload, inspected); /* one queue */
}

static int pnp_remove_payload(vm_side_t *p, const void *payload, uint64_t *inspected)
{
    vm_pnp_t *s = (vm_pnp_t *)p;
    vm_hit_t hit;
    vm_queue_t *q = vm_queue_holding(s->wild, payload, &hit, inspected);
    for (uint32_t c = 0; !q && c < s->nchain; c++)
        q = vm_queue_holding(s->chain[c], payload, &hit, inspected);
    for (uint32_t i = 0; !q && i < s->npartners; i++)
        q = vm_queue_holding(s->partner[i], payload, &hit, inspected);
    if (!q)
        return 0;
    q->ops->remove(q, &hit);
    return 1;
}

static void pnp_stats(const vm_side_t *p, vmatch_stats_t *acc)
{
    const vm_pnp_t *s = (const vm_pnp_t *)p;
    acc->queues += s->nchain + s->npartners + (s->wild != NULL);
}

/* pnp.partners, pnp.levels and pnp.forgets (vm_pnp_stat_keys). */
static int pnp_stat(const vm_side_t *p, const char *key, uint32_t arg, void *out)
{
    const vm_pnp_t *s = (const vm_pnp_t *)p;
    (void)arg;
    if (strcmp(key, "pnp.partners") == 0)
        *(uint64_t *)out += s->npartners;
    else if (strcmp(key, "pnp.levels") == 0)
        *(uint64_t *)out += s->rounds;
    else if (strcmp(key, "pnp.forgets") == 0)
        *(uint64_t *)out += s->forgets;
    else
        return 0;
    return 1;
}

const vm_policy_t vm_pnp_policy = {
    .name = "pnp", .create = pnp_create, VM_POLICY_CALLS(pnp), .stat = pnp_stat};

const vm_policy_t vm_pnp_static_policy = {
    .name = "pnp-static", .create = pnp_static_create, VM_POLICY_CALLS(pnp), .stat = pnp_stat};
