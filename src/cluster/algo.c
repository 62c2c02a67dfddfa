/* algo.c -- the clustering of policy=cluster (thesis chapter 3): Algorithm 3.1, K-means on
 * the counts, and the source-to-cluster map.  Runs once per side when an engine is made. */
#include "cluster.h"
#include "module.h"

#include <stdlib.h>
#include <string.h>

/* A key's count and its index in the caller's arrays. */
typedef struct item {
    uint64_t count;
    uint64_t idx;
} item_t;

/* Ascending count, then ascending index: the order both algorithms take keys in, so equal
 * counts always land the same way. */
static int cmp_item(const void *a, const void *b)
{
    const item_t *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* counts[0..n) as items sorted by cmp_item, in *out (n items from mem).  OK or ENOMEM. */
static int sorted_items(vm_mem_t *mem, const uint64_t *counts, size_t n, item_t **out)
{
    item_t *it = vm_mem_alloc(mem, (n ? n : 1) * sizeof *it);
    if (!it)
        return VMATCH_ENOMEM;
    for (size_t i = 0; i < n; i++)
        it[i] = (item_t){counts[i], i};
    qsort(it, n, sizeof *it, cmp_item);
    *out = it;
    return VMATCH_OK;
}

/* ---- Algorithm 3.1 ---- */

/* Algorithm 3.1 with clusters allowed to carry max(E + SD, total / maxcl); maxcl 0: E + SD. */
static int heuristic(vm_mem_t *mem, const uint64_t *counts, size_t n, uint64_t pop,
                     uint64_t maxcl, uint32_t *out, uint32_t *nclusters, double *mean_out,
                     double *var_out)
{
    if (pop < n)
        pop = n;
    /* Two passes: the deviations from the mean, so that large counts lose no precision to
     * the difference of two large sums. */
    double sum = 0, dev = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)counts[i];
    double mean = pop ? sum / (double)pop : 0;
    for (size_t i = 0; i < n; i++)
        dev += ((double)counts[i] - mean) * ((double)counts[i] - mean);
    dev += (double)(pop - n) * mean * mean; /* the zeros */
    double var = pop ? dev / (double)pop : 0;
    item_t *it;
    if (sorted_items(mem, counts, n, &it) < 0)
        return VMATCH_ENOMEM;
    /* The zeros come first and add nothing, so they stay in cluster 0 (the default).  A key
     * that would take the total past E + SD opens the next cluster, alone when it passes on
     * its own; a total of exactly E + SD stays.  (The thesis's pseudo-code closes a cluster
     * after the key that passes, which leaves that key, the hottest of its cluster, with the
     * cold ones; its text says a cluster never exceeds E + SD, and that is what is done.) */
    uint32_t k = 0;
    uint64_t total = 0, members = pop - n;
    double floor = maxcl ? sum / (double)maxcl : 0; /* the cap's share of the total */
    for (size_t i = 0; i < n; i++) {
        /* total + count > E + SD, without a square root (the library needs no libm), and
         * past the cap's share. */
        double with = (double)(total + it[i].count), over = with - mean;
        if (members && over > 0 && over * over > var && with > floor) {
            k++;
            total = members = 0;
        }
        out[it[i].idx] = k;
        members++;
        total += it[i].count;
    }
    vm_mem_free(mem, it, (n ? n : 1) * sizeof *it);
    *nclusters = k + 1;
    if (mean_out)
        *mean_out = mean;
    if (var_out)
        *var_out = var;
    return VMATCH_OK;
}

int vm_cluster_heuristic(vm_mem_t *mem, const uint64_t *counts, size_t n, uint64_t pop,
                         uint32_t *out, uint32_t *nclusters, double *mean, double *var)
{
    return heuristic(mem, counts, n, pop, 0, out, nclusters, mean, var);
}

int vm_cluster_heuristic_capped(vm_mem_t *mem, const uint64_t *counts, size_t n, uint64_t pop,
                                uint32_t cap, uint32_t *out, uint32_t *nclusters, double *mean,
                                double *var)
{
    uint64_t maxcl = 0;
    if (cap) {
        uint64_t root = vm_isqrt(pop > n ? pop : n);
        maxcl = (uint64_t)cap * (root ? root : 1);
    }
    return heuristic(mem, counts, n, pop, maxcl, out, nclusters, mean, var);
}

/* ---- K-means ---- */

/* The working set of K-means: d distinct counts v[] with weights w[] and clusters a[], k
 * centres c[] with the sums of their members. */
typedef struct km {
    size_t d;
    uint32_t k;
    uint64_t *v, *w;
    uint32_t *a, *distinct; /* distinct: per key (sorted order), its index in v[] */
    double *c, *sw, *sv, *far;
    uint64_t *nmem; /* distinct counts in each cluster */
} km_t;

static double sq(double x)
{
    return x * x;
}

/* |x|, without libm. */
static double dist(double x)
{
    return x < 0 ? -x : x;
}

/* Farthest-first seeding: the smallest count, then again and again the count farthest from
 * every seed so far (ties: the smaller).  Deterministic, and it gives outliers (a hot source)
 * a centre of their own from the start.  far[] is each point's distance to its nearest seed. */
static void seed(km_t *m)
{
    m->c[0] = (double)m->v[0];
    for (size_t i = 0; i < m->d; i++)
        m->far[i] = (double)m->v[i] - m->c[0];
    for (uint32_t j = 1; j < m->k; j++) {
        size_t best = 0;
        for (size_t i = 1; i < m->d; i++)
            if (m->far[i] > m->far[best])
                best = i;
        m->c[j] = (double)m->v[best];
        for (size_t i = 0; i < m->d; i++) {
            double dd = dist((double)m->v[i] - m->c[j]);
            m->far[i] = dd < m->far[i] ? dd : m->far[i];
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each point to its nearest centre (ties: the lower one).  Points and centres are both
 * ascending, so one sweep does it.  Returns 1 when an assignment changed. */
static int assign(km_t *m)
{
    int changed = 0;
    uint32_t j = 0;
    for (size_t i = 0; i < m->d; i++) {
        double x = (double)m->v[i];
        while (j + 1 < m->k && dist(x - m->c[j + 1]) < dist(x - m->c[j]))
            j++;
        changed |= m->a[i] != j;
        m->a[i] = j;
    }
    return changed;
}

/* Centres to the weighted means of their members; an empty cluster takes the point farthest
 * from its centre among clusters of two points or more (there is one: k < d), which lowers
 * the total distance.  Returns how many were reseeded. */
static uint32_t update(km_t *m)
{
    uint32_t reseeded = 0;
    memset(m->sw, 0, m->k * sizeof *m->sw);
    memset(m->sv, 0, m->k * sizeof *m->sv);
    memset(m->nmem, 0, m->k * sizeof *m->nmem);
    for (size_t i = 0; i < m->d; i++) {
        m->sw[m->a[i]] += (double)m->w[i];
        m->sv[m->a[i]] += (double)m->w[i] * (double)m->v[i];
        m->nmem[m->a[i]]++;
    }
    for (uint32_t j = 0; j < m->k; j++) {
        if (m->nmem[j])
            continue;
        size_t best = m->d;
        double bd = -1;
        for (size_t i = 0; i < m->d; i++) {
            uint32_t o = m->a[i];
            double dd = sq((double)m->v[i] - m->sv[o] / m->sw[o]);
            if (m->nmem[o] > 1 && dd > bd) {
                bd = dd;
                best = i;
            }
        }
        uint32_t o = m->a[best];
        m->sw[o] -= (double)m->w[best];
        m->sv[o] -= (double)m->w[best] * (double)m->v[best];
        m->nmem[o]--;
        m->a[best] = j;
        m->sw[j] = (double)m->w[best];
        m->sv[j] = (double)m->w[best] * (double)m->v[best];
        m->nmem[j] = 1;
        reseeded++;
    }
    for (uint32_t j = 0; j < m->k; j++)
        m->c[j] = m->sv[j] / m->sw[j];
    qsort(m->c, m->k, sizeof *m->c, cmp_double); /* a reseeded centre may be out of place */
    return reseeded;
}

int vm_cluster_kmeans(vm_mem_t *mem, const uint64_t *counts, size_t n, uint64_t pop, uint32_t k,
                      uint32_t *out, uint32_t *nclusters, vm_kmeans_info_t *info)
{
    vm_kmeans_info_t inf = {0};
    item_t *it;
    if (pop < n)
        pop = n;
    if (k == 0)
        k = 1;
    if (sorted_items(mem, counts, n, &it) < 0)
        return VMATCH_ENOMEM;
    size_t d = (pop > n) + n; /* at most: the zero and every count */
    size_t kk = k < d ? k : d;
    size_t bytes = d * (2 * sizeof(uint64_t) + sizeof(uint32_t) + sizeof(double)) +
                   n * sizeof(uint32_t) + kk * (3 * sizeof(double) + sizeof(uint64_t));
    km_t m = {0};
    m.v = bytes ? vm_mem_alloc(mem, bytes) : NULL;
    if (!m.v && bytes) {
        vm_mem_free(mem, it, (n ? n : 1) * sizeof *it);
        return VMATCH_ENOMEM;
    }
    m.w = m.v + d;
    m.c = (double *)(m.w + d);
    m.sw = m.c + kk;
    m.sv = m.sw + kk;
    m.far = m.sv + kk;
    m.nmem = (uint64_t *)(m.far + d);
    m.a = (uint32_t *)(m.nmem + kk);
    m.distinct = m.a + d;
    /* The distinct counts, ascending, with their weights. */
    if (pop > n) {
        m.v[0] = 0;
        m.w[0] = pop - n;
        m.d = 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!m.d || m.v[m.d - 1] != it[i].count) {
            m.v[m.d] = it[i].count;
            m.w[m.d++] = 0;
        }
        m.w[m.d - 1]++;
        m.distinct[i] = (uint32_t)(m.d - 1);
    }
    uint32_t ncl = 1;
    if (m.d && m.d <= k) { /* a cluster per distinct count: nothing to iterate */
        for (size_t i = 0; i < m.d; i++)
            m.a[i] = (uint32_t)i;
        ncl = (uint32_t)m.d;
        inf.converged = 1;
    } else if (m.d) {
        m.k = k;
        seed(&m);
        qsort(m.c, m.k, sizeof *m.c, cmp_double);
        for (size_t i = 0; i < m.d; i++)
            m.a[i] = UINT32_MAX;
        while (inf.iters < VM_KMEANS_MAX_ITERS) {
            int changed = assign(&m);
            inf.iters++;
            if (!changed) {
                inf.converged = 1;
                break;
            }
            inf.reseeded += update(&m);
        }
        for (size_t i = 0; i < m.d; i++)
            inf.sse += (double)m.w[i] * sq((double)m.v[i] - m.c[m.a[i]]);
        /* Number the clusters that have members, by centre: a[] ascends with the points. */
        uint32_t prev = m.a[0];
        ncl = 1;
        for (size_t i = 0; i < m.d; i++) {
            if (m.a[i] != prev) {
                prev = m.a[i];
                ncl++;
            }
            m.a[i] = ncl - 1;
        }
    }
    for (size_t i = 0; i < n; i++)
        out[it[i].idx] = m.a[m.distinct[i]];
    if (bytes)
        vm_mem_free(mem, m.v, bytes);
    vm_mem_free(mem, it, (n ? n : 1) * sizeof *it);
    *nclusters = ncl;
    if (info)
        *info = inf;
    return VMATCH_OK;
}

/* ---- the map ---- */

/* The dense map of n keys with nctx contexts (see vm_cluster_map_build). */
static int dense_build(vm_cluster_map_t *m, vm_mem_t *mem, const uint64_t *keys,
                       const uint32_t *vals, size_t n, uint32_t nctx, const uint64_t *ctxs)
{
    uint64_t *a = vm_mem_calloc(mem, vm_cluster_map_dense_bytes(nctx, m->nprocs));
    if (!a)
        return VMATCH_ENOMEM;
    m->ctxs = a;
    m->nctx = nctx;
    m->dense = (uint16_t *)(a + nctx);
    for (uint32_t i = 0; i < nctx; i++)
        a[i] = ctxs[i];
    for (size_t j = 0; j < n; j++) {
        uint64_t ctx = keys[j] >> m->src_bits, src = keys[j] & ((1ull << m->src_bits) - 1);
        uint32_t c = 0;
        while (ctxs[c] != ctx)
            c++;
        m->dense[(size_t)c * m->nprocs + src] = (uint16_t)vals[j];
    }
    return VMATCH_OK;
}

int vm_cluster_map_build(vm_cluster_map_t *m, vm_mem_t *mem, const uint64_t *keys,
                         const uint32_t *vals, size_t n, uint32_t nprocs, uint32_t src_bits)
{
    *m = (vm_cluster_map_t){.nprocs = nprocs, .src_bits = src_bits};
    if (!n)
        return VMATCH_OK;
    /* Dense when it can hold the keys in fewer bytes. */
    uint64_t ctxs[VM_CLUSTER_DENSE_CTX];
    uint32_t nctx = 0;
    int dense = nprocs > 0 && src_bits < 64;
    for (size_t j = 0; j < n && dense; j++) {
        uint64_t ctx = keys[j] >> src_bits, src = keys[j] & ((1ull << src_bits) - 1);
        uint32_t c = 0;
        while (c < nctx && ctxs[c] != ctx)
            c++;
        if (c == nctx && nctx < VM_CLUSTER_DENSE_CTX)
            ctxs[nctx++] = ctx;
        dense = c < nctx && src < nprocs && vals[j] <= UINT16_MAX;
    }
    if (dense && vm_cluster_map_dense_bytes(nctx, nprocs) < vm_cluster_map_bytes(n)) {
        int rc = dense_build(m, mem, keys, vals, n, nctx, ctxs);
        if (rc < 0)
            *m = (vm_cluster_map_t){0};
        return rc;
    }
    size_t bytes = vm_cluster_map_bytes(n), nslots = n + n / 2 + 1;
    m->key = vm_mem_calloc(mem, bytes);
    if (!m->key)
        return VMATCH_ENOMEM;
    m->val = (uint32_t *)(m->key + nslots);
    m->nslots = (uint32_t)nslots;
    for (size_t j = 0; j < n; j++) {
        size_t i = vm_cluster_map_home(m, keys[j]);
        while (m->key[i])
            i = i + 1 < nslots ? i + 1 : 0;
        m->key[i] = keys[j] + 1;
        m->val[i] = vals[j];
    }
    return VMATCH_OK;
}

void vm_cluster_map_free(vm_cluster_map_t *m, vm_mem_t *mem)
{
    if (m->dense)
        vm_mem_free(mem, m->ctxs, vm_cluster_map_dense_bytes(m->nctx, m->nprocs));
    if (m->key)
        vm_mem_free(mem, m->key, (size_t)m->nslots * (sizeof *m->key + sizeof *m->val));
    *m = (vm_cluster_map_t){0};
}
