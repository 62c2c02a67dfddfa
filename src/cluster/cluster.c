/* cluster.c -- policy=cluster: the sources of each side grouped by a profile's counts, a
 * queue per group (thesis chapter 3).
 *
 * Made once, from profile=PATH: each side's sources are clustered (cluster.algo, algo.c) and
 * the sources outside cluster 0 go into a map; every other source, named by the profile or
 * not, is in cluster 0.  An entry goes to the queue of its source key's cluster, made on its
 * first append (a cluster that never sees traffic costs a pointer).  A receive that does not
 * name its context and source (ANY_SOURCE, or any care mask leaving a bit of that field out)
 * goes to the wildcard queue, PRQ_ANY in the thesis.  Every entry carries the engine's
 * sequence number: an arriving message takes the older of its cluster's first match and the
 * wildcard queue's, and a search with ANY_SOURCE looks at every cluster and takes the
 * oldest first match.  A side with one cluster is one queue, wildcards included, which the
 * engine then matches on directly: the design is policy=single.
 */
#include "cluster.h"

#include "error.h"
#include "module.h"
#include "policy.h"
#include "profile.h"

#include <string.h>

extern const vm_module_t vm_cluster_module;

typedef struct vm_cluster {
    vm_side_t base;
    const vm_cluster_config_t *cc;
    vm_source_key_t key; /* what a source key is made of (key.care: a care mask covering
                            it is keyed) */
    vm_cluster_map_t map;
    vm_queue_t **q; /* per cluster, NULL until its first append */
    uint32_t nq, made;
    uint32_t keep; /* added to mem.keep_more */
    vm_queue_t *wild;
} vm_cluster_t;

static inline uint64_t src_key(const vm_cluster_t *s, vmatch_bits_t bits)
{
    return vm_source_key(&s->key, bits);
}

/* ---- making the clusters ---- */

/* Cluster this side's sources of prof and build the map and the queue array. */
static int build(vm_cluster_t *s, const vm_profile_t *prof, uint32_t nprocs)
{
    vm_mem_t *mem = &s->base.env->mem;
    const vm_config_t *cfg = s->base.env->cfg;
    size_t n = prof->n, bytes = n * (2 * sizeof(uint64_t) + sizeof(uint32_t));
    uint64_t *counts = vm_mem_alloc(mem, bytes ? bytes : 1);
    if (!counts)
        return VMATCH_ENOMEM;
    uint64_t *keys = counts + n;
    uint32_t *cl = (uint32_t *)(keys + n), nctx, ncl = 1;
    /* The keys with a count on this side (cl holds their entries' indices until the
     * clustering writes it). */
    size_t u = vm_profile_side(prof, s->base.side, cl, counts, &nctx);
    for (size_t i = 0; i < u; i++) {
        const vm_profile_entry_t *e = &prof->entries[cl[i]];
        keys[i] = (uint64_t)e->ctx << cfg->src_bits | e->src;
    }
    uint64_t pop = (uint64_t)nprocs * nctx;
    int rc = s->cc->algo == VM_CLUSTER_KMEANS
                 ? vm_cluster_kmeans(mem, counts, u, pop, s->cc->k, cl, &ncl, NULL)
                 : vm_cluster_heuristic_capped(mem, counts, u, pop, s->cc->cap, cl, &ncl, NULL,
                                               NULL);
    /* The map holds the keys outside cluster 0, packed to the front. */
    size_t m = 0;
    for (size_t i = 0; rc == VMATCH_OK && i < u; i++)
        if (cl[i]) {
            keys[m] = keys[i];
            cl[m++] = cl[i];
        }
    if (rc == VMATCH_OK)
        rc = vm_cluster_map_build(&s->map, mem, keys, cl, m, nprocs, cfg->src_bits);
    if (rc == VMATCH_OK) {
        s->q = vm_mem_calloc(mem, ncl * sizeof *s->q);
        s->nq = s->q ? ncl : 0;
        rc = s->q ? VMATCH_OK : VMATCH_ENOMEM;
    }
    vm_mem_free(mem, counts, bytes ? bytes : 1);
    return rc;
}

static void cluster_destroy(vm_side_t *p)
{
    vm_cluster_t *s = (vm_cluster_t *)p;
    vm_mem_t *mem = &p->env->mem;
    for (uint32_t i = 0; i < s->nq; i++)
        if (s->q[i])
            s->q[i]->ops->destroy(s->q[i]);
    if (s->wild)
        s->wild->ops->destroy(s->wild);
    if (s->q)
        vm_mem_free(mem, s->q, s->nq * sizeof *s->q);
    mem->keep_more -= s->keep;
    vm_cluster_map_free(&s->map, mem);
    vm_mem_free(mem, s, sizeof *s);
}

static int cluster_create(vm_env_t *env, int side, vm_side_t **out)
{
    const vm_config_t *cfg = env->cfg;
    vm_profile_t prof;
    uint32_t nprocs;
    int rc = vm_profile_load_for(cfg, "cluster", &prof, &nprocs);
    if (rc < 0)
        return rc;
    vm_cluster_t *s = vm_mem_calloc(&env->mem, sizeof *s);
    if (!s) {
        vm_profile_free(&prof);
        return VMATCH_ENOMEM;
    }
    s->base = (vm_side_t){.ops = &vm_cluster_policy, .env = env, .side = side};
    s->cc = vm_module_cfg(cfg, &vm_cluster_module);
    s->key = vm_source_key_of(cfg);
    rc = build(s, &prof, nprocs);
    vm_profile_free(&prof);
    /* One cluster: one queue for everything, which the engine uses directly. */
    if (rc == VMATCH_OK && s->nq == 1) {
        rc = cfg->storage->create(env, side, &s->q[0]);
        s->made = rc == VMATCH_OK;
        s->base.sole = s->q[0];
        s->base.sole_until = UINT64_MAX;
    }
    /* A few clusters, each emptying and refilling on every match on short queues: their
     * first blocks stay, rather than going back to the pool and out again each time. */
    if (rc == VMATCH_OK && s->nq > 1) {
        s->keep = s->nq + 1 < VM_CLUSTER_KEEP ? s->nq + 1 : VM_CLUSTER_KEEP;
        env->mem.keep_more += s->keep;
    }
    if (rc < 0) {
        cluster_destroy(&s->base);
        return rc;
    }
    *out = &s->base;
    return VMATCH_OK;
}

/* ---- the policy ---- */

static int cluster_append(vm_side_t *p, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                          void *payload, uint64_t seq)
{
    (void)cls;
    vm_cluster_t *s = (vm_cluster_t *)p;
    vm_queue_t **q = &s->q[0];
    if (s->nq == 1)
        return (*q)->ops->append(*q, bits, care, payload, seq);
    if ((care & s->key.care) != s->key.care)
        q = &s->wild;
    else
        q = &s->q[vm_cluster_map_find(&s->map, src_key(s, bits))];
    int made = !*q;
    int rc = vm_queue_append_new(p->env, p->side, q, bits, care, payload, seq);
    if (rc == VMATCH_OK && made && q != &s->wild)
        s->made++;
    return rc;
}

static int cluster_match(vm_side_t *p, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                         int remove, void **payload, uint64_t *inspected)
{
    (void)cls;
    vm_cluster_t *s = (vm_cluster_t *)p;
    vm_best_t best = {0};
    if (s->nq == 1)
        return vm_queue_match(s->q[0], key, keycare, remove, payload, inspected);
    if (p->side == VM_PRQ || (keycare & s->key.care) == s->key.care) {
        /* Every match of this source key is in its cluster's queue or the wildcard queue
         * (only the PRQ has one). */
        vm_queue_t *q = s->q[vm_cluster_map_find(&s->map, src_key(s, key))];
        if (!s->wild || !s->wild->len) /* find and remove in one walk */
            return q ? vm_queue_match(q, key, keycare, remove, payload, inspected) : 0;
        vm_best_consider(&best, q, key, keycare, inspected);
        vm_best_consider(&best, s->wild, key, keycare, inspected);
    } else { /* a wildcard search of the UMQ: every cluster, the oldest first match */
        for (uint32_t i = 0; i < s->nq; i++)
            vm_best_consider(&best, s->q[i], key, keycare, inspected);
    }
    return vm_best_take(&best, remove, payload);
}

/* The queue of side s for the entries of (bits, care): its source's cluster; NULL for a
 * receive that does not name its source (cluster_append and the generic exchange handle
 * the wildcard queue) and for a cluster not made yet. */
static inline vm_queue_t *route(vm_cluster_t *s, vmatch_bits_t bits, vmatch_bits_t care)
{
    if (s->nq == 1)
        return s->q[0];
    if ((care & s->key.care) != s->key.care)
        return NULL;
    return s->q[vm_cluster_map_find(&s->map, src_key(s, bits))];
}

/* Out of line: the exchange's common case keeps no frame for it. */
__attribute__((noinline)) static int exchange_slow(vm_side_t *sp, vm_side_t *qp,
                                                   vmatch_bits_t bits, vmatch_bits_t care,
                                                   void *payload, vm_call_t *c)
{
    return vm_exchange(sp, qp, bits, care, payload, c);
}

/* The engine's post or arrival in one call (vm_policy_t.exchange), without the policy's
 * match and append in between: a search of the other side's queue of the source when that
 * side holds entries and no wildcard receive waits there, then on a miss the append to the
 * source's queue on this side.  The rest is the generic exchange. */
static int cluster_exchange(vm_call_t *c, vmatch_bits_t bits, vmatch_bits_t care, vm_side_t *sp,
                            void *payload, vm_side_t *qp)
{
    vm_cluster_t *s = (vm_cluster_t *)sp, *q = (vm_cluster_t *)qp;
    if (sp->len) {
        if (s->nq > 1 && ((care & s->key.care) != s->key.care || (s->wild && s->wild->len)))
            return exchange_slow(sp, qp, bits, care, payload, c); /* several queues */
        vm_queue_t *sq = route(s, bits, care);
        if (sq && vm_queue_match(sq, bits, care, 1, c->out, &c->inspected))
            return vm_side_counted(sp, qp, VMATCH_MATCHED);
    }
    vm_queue_t *aq = route(q, bits, care);
    int rc = aq ? aq->ops->append(aq, bits, care, payload, c->seq)
                : cluster_append(qp, bits, care, c->cls, payload, c->seq);
    return vm_side_counted(sp, qp, rc < 0 ? rc : VMATCH_QUEUED);
}

static int cluster_remove_payload(vm_side_t *p, const void *payload, uint64_t *inspected)
{
    vm_cluster_t *s = (vm_cluster_t *)p;
    vm_hit_t hit;
    vm_queue_t *q = vm_queue_holding(s->wild, payload, &hit, inspected);
    for (uint32_t i = 0; !q && i < s->nq; i++)
        q = vm_queue_holding(s->q[i], payload, &hit, inspected);
    if (!q)
        return 0;
    q->ops->remove(q, &hit);
    return 1;
}

static void cluster_stats(const vm_side_t *p, vmatch_stats_t *acc)
{
    const vm_cluster_t *s = (const vm_cluster_t *)p;
    acc->queues += s->made + (s->wild != NULL);
}

const vm_policy_t vm_cluster_policy = {.name = "cluster",
                                       .create = cluster_create,
                                       VM_POLICY_CALLS(cluster),
                                       .exchange = cluster_exchange};

/* ---- keys ---- */

const char *const vm_cluster_algo_words[] = {"heuristic", "kmeans", NULL};

/* The heuristic by default: the thesis found it better than K-means on every application,
 * and it needs no K.  K = 16 is where the thesis's K-means stopped gaining (Figure 3.7). */
static const vm_cluster_config_t cluster_default = {
    .algo = VM_CLUSTER_HEURISTIC, .k = 16, .cap = 2};

#define FIELD(f) offsetof(vm_cluster_config_t, f)

static const vm_key_t cluster_keys[] = {
    {"cluster.algo", VM_KEY_WORD, FIELD(algo), .words = vm_cluster_algo_words,
     .help = "`cluster`: how sources are grouped by their profiled counts (thesis Algorithm "
             "3.1, or K-means)"},
    {"cluster.k", VM_KEY_UINT, FIELD(k), 1, VM_CLUSTER_MAX_K,
     .help = "`cluster` with `kmeans`: clusters per side (fewer when fewer counts differ)"},
    {"cluster.cap", VM_KEY_UINT, FIELD(cap), 0, 1024,
     .help = "`cluster`, `heuristic`: about cap·√sources clusters per side at most (0: no "
             "bound)"},
};

static const vm_policy_t *const cluster_policies[] = {&vm_cluster_policy, NULL};

const vm_module_t vm_cluster_module = {.prefix = "cluster",
                                       VM_MODULE_KEYS(cluster_keys),
                                       VM_MODULE_CFG(cluster_default),
                                       .policies = cluster_policies};
