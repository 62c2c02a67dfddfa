/* cluster.h -- the clustering of policy=cluster (algo.c), shared with the tests and
 * tools/vmatch-cluster.
 *
 * Thesis chapter 3.  A profile counts, per source key (one rank in one communicator), the
 * entries it added to a side.  The sources are grouped by that count alone, and each group
 * (cluster) gets one queue.  The population is every rank of every communicator the profile
 * names on the side, as Algorithm 3.1 takes all P processes: the keys the profile lacks count
 * zero.  Both algorithms number clusters by count, smallest first, so cluster 0 holds the
 * zeros: it is the default cluster, where every source the profile does not name goes.
 */
#ifndef VM_CLUSTER_H
#define VM_CLUSTER_H

#include "queue.h"

#include <stddef.h>
#include <stdint.h>

enum vm_cluster_algo { VM_CLUSTER_HEURISTIC, VM_CLUSTER_KMEANS };

/* The cluster.* keys (cluster.c). */
typedef struct vm_cluster_config {
    uint32_t algo; /* enum vm_cluster_algo */
    uint32_t k;    /* kmeans: clusters asked for */
    uint32_t cap;  /* heuristic: at most about cap * sqrt(sources) clusters; 0: no bound */
} vm_cluster_config_t;

/* Most clusters cluster.k asks K-means for.  Seeding costs K passes over the distinct counts,
 * and the thesis found nothing to gain past 16 to 128. */
#define VM_CLUSTER_MAX_K 4096
/* Lloyd iterations before K-means stops without having converged (1-D data settles in a few
 * dozen; the cap only bounds a pathological profile's cost). */
#define VM_KMEANS_MAX_ITERS 256
/* Most empty queues of a side that keep their first block (mem.keep_more; one per cluster
 * and the wildcard queue up to this).  A 1-entry queue then takes no block on each append;
 * the cost is at most this many first blocks (384 bytes each over llv) held while idle. */
#define VM_CLUSTER_KEEP 64

extern const vm_policy_t vm_cluster_policy;
extern const char *const vm_cluster_algo_words[];

/* Algorithm 3.1.  counts[0..n) are the non-zero counts of n keys in a population of pop >= n
 * keys (the other pop - n count zero).  E and SD are the mean and the population standard
 * deviation over all pop keys.  Keys are taken in ascending count (ties: lower index first,
 * zeros before all) into the current cluster; a key that would take the cluster's total past
 * E + SD (strictly) opens a new cluster instead, so no cluster holds more than E + SD unless
 * one key does alone.  Writes each key's cluster to out[i] and the number of clusters to
 * *nclusters; *mean and *var (either may be NULL) get E and SD^2.  The zeros are in cluster
 * 0.  VMATCH_OK, or VMATCH_ENOMEM (for the sort) with nothing written. */
int vm_cluster_heuristic(vm_mem_t *mem, const uint64_t *counts, size_t n, uint64_t pop,
                         uint32_t *out, uint32_t *nclusters, double *mean, double *var);

/* The heuristic with at most about cap * sqrt(pop) clusters (cap 0: no bound).  A cluster
 * may then carry max(E + SD, total / (cap * sqrt(pop))): with the keys' counts alike, where
 * E + SD is about one key's count and the heuristic makes a cluster per key, that makes
 * between cap * sqrt(pop) and twice as many (two neighbouring clusters carry more than the
 * share), each of many keys; a profile with a few hot keys keeps its clusters.  Same
 * returns as vm_cluster_heuristic. */
int vm_cluster_heuristic_capped(vm_mem_t *mem, const uint64_t *counts, size_t n, uint64_t pop,
                                uint32_t cap, uint32_t *out, uint32_t *nclusters, double *mean,
                                double *var);

/* What K-means did. */
typedef struct vm_kmeans_info {
    uint32_t iters;    /* Lloyd iterations run */
    int converged;     /* the last iteration changed no assignment */
    uint32_t reseeded; /* empty clusters given a new centre */
    double sse;        /* sum over keys of (count - centre)^2, zeros included */
} vm_kmeans_info_t;

/* K-means (Lloyd) on the counts, one dimension, the same inputs as the heuristic.  The points
 * are the distinct counts weighted by how many keys have them (the zeros among them).  Seeds
 * are chosen farthest-first from the smallest count, so a profile always gives the same
 * clusters whatever the order of its keys; a cluster left empty takes the point farthest
 * from its centre.  At most k clusters, fewer when there are fewer distinct counts.  Writes
 * each key's cluster to out[i] (clusters numbered by centre, smallest first), their number to
 * *nclusters and what the iterations did to *info (may be NULL).  VMATCH_OK, or
 * VMATCH_ENOMEM with nothing written. */
int vm_cluster_kmeans(vm_mem_t *mem, const uint64_t *counts, size_t n, uint64_t pop, uint32_t k,
                      uint32_t *out, uint32_t *nclusters, vm_kmeans_info_t *info);

/* The source-to-cluster map of the keys outside the default cluster (cluster 0).  Hashed:
 * open addressing, keys and values in separate arrays (12 bytes a slot), n + n/2 + 1 slots
 * so that it is never more than two thirds full and a lookup reads one slot or two.  Dense,
 * when that takes fewer bytes (many of a few communicators' ranks named): one 16-bit
 * cluster per rank below nprocs of each of at most VM_CLUSTER_DENSE_CTX contexts, found by
 * the context's place in ctxs[].  A key it lacks is in cluster 0. */
typedef struct vm_cluster_map {
    uint64_t *key; /* hashed: per slot, key + 1, 0 when empty */
    uint32_t *val; /* hashed: per slot, in the same allocation as key[] */
    uint32_t nslots;
    uint32_t nctx, nprocs, src_bits; /* dense: its contexts, ranks and the key's source bits */
    uint64_t *ctxs;                  /* dense: the contexts, then the clusters (dense[]) */
    uint16_t *dense;                 /* dense: nctx x nprocs clusters, in the same allocation */
} vm_cluster_map_t;

#define VM_CLUSTER_DENSE_CTX 8

/* Bytes of a hashed map for n keys. */
static inline size_t vm_cluster_map_bytes(size_t n)
{
    return n ? (n + n / 2 + 1) * (sizeof(uint64_t) + sizeof(uint32_t)) : 0;
}

/* Bytes of a dense map for nctx contexts of nprocs ranks. */
static inline size_t vm_cluster_map_dense_bytes(uint32_t nctx, uint32_t nprocs)
{
    return (size_t)nctx * (sizeof(uint64_t) + (size_t)nprocs * sizeof(uint16_t));
}

/* Build the map of n distinct keys ((context << src_bits) | source) with their clusters
 * (each > 0): dense when every source is below nprocs (0: never dense), the clusters fit 16
 * bits, there are at most VM_CLUSTER_DENSE_CTX contexts and the dense map is smaller, else
 * hashed.  VMATCH_OK or VMATCH_ENOMEM (m left empty). */
int vm_cluster_map_build(vm_cluster_map_t *m, vm_mem_t *mem, const uint64_t *keys,
                         const uint32_t *vals, size_t n, uint32_t nprocs, uint32_t src_bits);
void vm_cluster_map_free(vm_cluster_map_t *m, vm_mem_t *mem);

/* The slot where key's probe starts: Fibonacci hashing, then a multiply-shift onto the slots
 * (consecutive ranks, the common key set, spread evenly). */
static inline size_t vm_cluster_map_home(const vm_cluster_map_t *m, uint64_t key)
{
    uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> 32;
    return (size_t)((h * m->nslots) >> 32);
}

/* The cluster of key (0 for a key the map lacks). */
static inline uint32_t vm_cluster_map_find(const vm_cluster_map_t *m, uint64_t key)
{
    if (m->dense) {
        uint64_t src = key & ((1ull << m->src_bits) - 1), ctx = key >> m->src_bits;
        for (uint32_t i = 0; i < m->nctx && src < m->nprocs; i++)
            if (m->ctxs[i] == ctx)
                return m->dense[(size_t)i * m->nprocs + src];
        return 0;
    }
    if (!m->nslots)
        return 0;
    /* The table always has a free slot, so the probe ends. */
    for (size_t i = vm_cluster_map_home(m, key);; i = i + 1 < m->nslots ? i + 1 : 0) {
        if (m->key[i] == key + 1)
            return m->val[i];
        if (!m->key[i])
            return 0;
    }
}

#endif
