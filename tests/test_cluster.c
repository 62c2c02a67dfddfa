/* test_cluster.c -- policy=cluster: Algorithm 3.1 on hand-computed inputs, K-means's
 * convergence and determinism, the map and its memory bound, the errors of vmatch_create, and
 * the wildcard order on a profiled engine.  test_diff checks the answers on random streams. */
#include "check.h"
#include "cluster.h"
#include "pool.h"
#include "vmatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static vm_mem_t mem = {.numa = VM_NUMA_OFF, .fail_after = -1};

/* ---- Algorithm 3.1 ---- */

/* pop = 8, three zeros: E = 16/8 = 2, SD^2 = (1 + 16 + 1 + 1 + 1 + 3 * 4)/8 = 4, so E + SD =
 * 4.  In ascending order 0 0 0 1 3 3 3 6: the 1 and the first 3 make exactly 4, which does
 * not pass E + SD, so the 3 joins the zeros' cluster; each later key would pass it and opens
 * a cluster of its own.  Equal counts go by index. */
static void heuristic_boundary(void)
{
    const uint64_t counts[] = {3, 6, 1, 3, 3};
    const uint32_t want[] = {0, 3, 0, 1, 2};
    uint32_t out[COUNT(counts)], ncl = 0;
    double mean, var;
    CHECK_EQ(vm_cluster_heuristic(&mem, counts, COUNT(counts), 8, out, &ncl, &mean, &var),
             VMATCH_OK);
    CHECK(mean == 2.0 && var == 4.0);
    CHECK_EQ(ncl, 4);
    for (size_t i = 0; i < COUNT(counts); i++)
        CHECK_EQ(out[i], want[i]);
}

/* One hot source among cold ones (FDS's rank 0): pop = 8, E = 102/8 = 12.75, SD about 32.7;
 * 0 0 0 0 0 1 1 stay together, the 100 would pass E + SD and is alone. */
static void heuristic_hot_alone(void)
{
    const uint64_t counts[] = {1, 100, 1};
    uint32_t out[3], ncl = 0;
    CHECK_EQ(vm_cluster_heuristic(&mem, counts, 3, 8, out, &ncl, NULL, NULL), VMATCH_OK);
    CHECK_EQ(ncl, 2);
    CHECK(out[0] == 0 && out[1] == 1 && out[2] == 0);
}

/* No zeros: 2 4 4 4 5 5 7 9 has E = 5, SD = 2, E + SD = 7: 2 4 (6) | 4 | 4 | 5 | 5 | 7 (7,
 * exactly the limit, alone) | 9 (passes on its own, alone). */
static void heuristic_no_zeros(void)
{
    const uint64_t counts[] = {9, 4, 5, 2, 7, 4, 5, 4};
    const uint32_t want[] = {6, 0, 3, 0, 5, 1, 4, 2};
    uint32_t out[COUNT(counts)], ncl = 0;
    CHECK_EQ(vm_cluster_heuristic(&mem, counts, COUNT(counts), 8, out, &ncl, NULL, NULL),
             VMATCH_OK);
    CHECK_EQ(ncl, 7);
    for (size_t i = 0; i < COUNT(counts); i++)
        CHECK_EQ(out[i], want[i]);
    /* Nothing to cluster: one cluster, the default. */
    CHECK_EQ(vm_cluster_heuristic(&mem, counts, 0, 100, out, &ncl, NULL, NULL), VMATCH_OK);
    CHECK_EQ(ncl, 1);
}

/* ---- K-means ---- */

static void kmeans_small(void)
{
    /* Two groups far apart. */
    const uint64_t a[] = {101, 1, 2, 100, 3, 102};
    uint32_t out[COUNT(a)], ncl = 0;
    vm_kmeans_info_t info;
    CHECK_EQ(vm_cluster_kmeans(&mem, a, COUNT(a), COUNT(a), 2, out, &ncl, &info), VMATCH_OK);
    CHECK_EQ(ncl, 2);
    CHECK(info.converged && info.iters < VM_KMEANS_MAX_ITERS);
    for (size_t i = 0; i < COUNT(a); i++)
        CHECK_EQ(out[i], a[i] >= 100);
    /* The zeros of the population form the lowest cluster: the default. */
    const uint64_t b[] = {50};
    CHECK_EQ(vm_cluster_kmeans(&mem, b, 1, 100, 2, out, &ncl, &info), VMATCH_OK);
    CHECK(ncl == 2 && out[0] == 1);
    /* K at least the distinct counts: one cluster per count (zero, 5, 9). */
    const uint64_t c[] = {9, 5, 5};
    CHECK_EQ(vm_cluster_kmeans(&mem, c, 3, 4, 8, out, &ncl, &info), VMATCH_OK);
    CHECK(ncl == 3 && out[0] == 2 && out[1] == 1 && out[2] == 1 && info.converged);
    /* K = 1: everything in the default cluster. */
    CHECK_EQ(vm_cluster_kmeans(&mem, a, COUNT(a), 10, 1, out, &ncl, &info), VMATCH_OK);
    CHECK_EQ(ncl, 1);
    for (size_t i = 0; i < COUNT(a); i++)
        CHECK_EQ(out[i], 0);
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* Random skewed profiles: K-means converges, gives the same clusters for the keys in any
 * order, numbers clusters by count (a larger count is never in a lower cluster), leaves none
 * empty and uses at most K; its SSE is no worse than one cluster's. */
static void kmeans_random(void)
{
    enum { N = 600, ROUNDS = 40 };
    static uint64_t counts[N], shuffled[N];
    static uint32_t out[N], out2[N], perm[N], seen[VM_CLUSTER_MAX_K];
    uint64_t s = 12345;
    const uint32_t ks[] = {2, 4, 16, 64, 128};
    uint32_t reseeded = 0;
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = 1 + lcg(&s) % N;
        for (size_t i = 0; i < n; i++) {
            uint64_t x = lcg(&s) % 1000;
            counts[i] = 1 + (x * x * x) / 10000000; /* mostly small, a few large */
            perm[i] = (uint32_t)i;
        }
        for (size_t i = n; i-- > 1;) {
            size_t j = lcg(&s) % (i + 1);
            uint32_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (size_t i = 0; i < n; i++)
            shuffled[i] = counts[perm[i]];
        uint32_t k = ks[r % COUNT(ks)], ncl = 0, ncl2 = 0;
        uint64_t pop = n + lcg(&s) % 1000;
        vm_kmeans_info_t info, info2, one;
        CHECK_EQ(vm_cluster_kmeans(&mem, counts, n, pop, k, out, &ncl, &info), VMATCH_OK);
        CHECK_EQ(vm_cluster_kmeans(&mem, shuffled, n, pop, k, out2, &ncl2, &info2), VMATCH_OK);
        CHECK(info.converged && info.iters < VM_KMEANS_MAX_ITERS);
        CHECK(ncl == ncl2 && ncl <= k && info.iters == info2.iters && info.sse == info2.sse);
        memset(seen, 0, sizeof seen);
        for (size_t i = 0; i < n; i++) {
            CHECK_EQ(out2[i], out[perm[i]]);
            CHECK(out[i] < ncl);
            seen[out[i]] = 1;
            for (size_t j = 0; j < n; j++)
                if (counts[j] > counts[i])
                    CHECK(out[j] >= out[i]);
        }
        uint32_t used = pop > n; /* the zeros' cluster 0 may hold no key */
        for (uint32_t j = used; j < ncl; j++)
            CHECK(seen[j]);
        uint32_t one_ncl;
        CHECK_EQ(vm_cluster_kmeans(&mem, counts, n, pop, 1, out2, &one_ncl, &one), VMATCH_OK);
        CHECK(info.sse <= one.sse + 1e-6 * one.sse);
        reseeded += info.reseeded;
    }
    printf("test_cluster: K-means reseeded %u empty cluster(s) over %d profiles\n", reseeded,
           ROUNDS);
}

/* Out of memory: an error and every byte given back. */
static void algo_enomem(void)
{
    const uint64_t counts[] = {3, 6, 1, 3, 3};
    uint32_t out[5], ncl;
    for (int64_t f = 0; f < 2; f++) {
        vm_mem_t m = {.numa = VM_NUMA_OFF, .fail_after = f};
        int rk = vm_cluster_kmeans(&m, counts, 5, 8, 2, out, &ncl, NULL);
        m.fail_after = f;
        int rh = vm_cluster_heuristic(&m, counts, 5, 8, out, &ncl, NULL, NULL);
        CHECK(rk == VMATCH_ENOMEM || rk == VMATCH_OK);
        CHECK(rh == VMATCH_ENOMEM || rh == VMATCH_OK);
        CHECK_EQ(m.bytes, 0);
    }
}

/* ---- the map ---- */

static void map_lookup_and_bytes(void)
{
    enum { N = 1000 };
    static uint64_t keys[N];
    static uint32_t vals[N];
    for (uint32_t i = 0; i < N; i++) {
        keys[i] = (uint64_t)(i % 3) << 24 | (i * 7919u % 100003u); /* three contexts */
        vals[i] = 1 + i % 50;
    }
    for (size_t n = 0; n <= N; n = n ? n * 10 : 1) {
        vm_mem_t m = {.numa = VM_NUMA_OFF, .fail_after = -1};
        vm_cluster_map_t map;
        CHECK_EQ(vm_cluster_map_build(&map, &m, keys, vals, n, 0, 24), VMATCH_OK);
        /* 12 bytes a slot, n + n/2 + 1 slots: the bound docs/cluster.md states. */
        CHECK_EQ(m.bytes, n ? 12 * (n + n / 2 + 1) : 0);
        CHECK_EQ(m.bytes, vm_cluster_map_bytes(n));
        for (size_t i = 0; i < N; i++)
            CHECK_EQ(vm_cluster_map_find(&map, keys[i]), i < n ? vals[i] : 0);
        CHECK_EQ(vm_cluster_map_find(&map, (uint64_t)7 << 24), 0);
        vm_cluster_map_free(&map, &m);
        CHECK_EQ(m.bytes, 0);
    }
    vm_mem_t m = {.numa = VM_NUMA_OFF, .fail_after = 0};
    vm_cluster_map_t map;
    CHECK_EQ(vm_cluster_map_build(&map, &m, keys, vals, 10, 0, 24), VMATCH_ENOMEM);
    CHECK(m.bytes == 0 && map.nslots == 0);
    /* Dense where it is smaller: n of the 2 x 1000 ranks of two contexts named.  The ranks
     * are sparse (few named), dense (most named) or past nprocs (never dense). */
    enum { P = 1000 };
    static uint64_t dkeys[2 * P];
    static uint32_t dvals[2 * P];
    for (unsigned every = 1; every <= 64; every *= 4) {
        size_t n = 0;
        for (uint32_t c = 0; c < 2; c++)
            for (uint32_t r = 0; r < P; r += every) {
                dkeys[n] = (uint64_t)(5 + c) << 24 | r;
                dvals[n++] = 1 + (r * 31 + c) % 40000;
            }
        for (int past = 0; past < 2; past++) {
            vm_mem_t md = {.numa = VM_NUMA_OFF, .fail_after = -1};
            CHECK_EQ(vm_cluster_map_build(&map, &md, dkeys, dvals, n, past ? P / 2 : P, 24),
                     VMATCH_OK);
            int dense = !past && vm_cluster_map_dense_bytes(2, P) < vm_cluster_map_bytes(n);
            CHECK_EQ(map.dense != NULL, dense);
            CHECK_EQ(md.bytes,
                     dense ? vm_cluster_map_dense_bytes(2, P) : vm_cluster_map_bytes(n));
            for (size_t i = 0; i < n; i++)
                CHECK_EQ(vm_cluster_map_find(&map, dkeys[i]), dvals[i]);
            for (uint32_t r = 0; r < P + 5; r++) /* unnamed ranks, other contexts */
                if (r % every || r >= P)
                    CHECK_EQ(vm_cluster_map_find(&map, (uint64_t)5 << 24 | r), 0);
            CHECK_EQ(vm_cluster_map_find(&map, (uint64_t)P), 0);
            CHECK_EQ(vm_cluster_map_find(&map, (uint64_t)7 << 24 | 3), 0);
            vm_cluster_map_free(&map, &md);
            CHECK_EQ(md.bytes, 0);
        }
        vm_mem_t mf = {.numa = VM_NUMA_OFF, .fail_after = 0};
        CHECK_EQ(vm_cluster_map_build(&map, &mf, dkeys, dvals, n, P, 24), VMATCH_ENOMEM);
        CHECK(mf.bytes == 0 && map.nslots == 0 && !map.dense);
    }
}

/* ---- engines ---- */

static const char *write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs(text, f);
    REQUIRE(fclose(f) == 0);
    return path;
}

static uint64_t engine_bytes(const char *spec)
{
    vmatch_engine_t *e;
    vmatch_stats_t st;
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
    vmatch_stats(e, &st);
    vmatch_destroy(e);
    return st.bytes;
}

/* A job of 2^20 ranks where this one hears from three: the map holds the two that leave the
 * default cluster, not an array of a million entries per context. */
static void map_memory_bound(void)
{
    write_file("test_cluster-big.profile", "vmatch-profile 1\nlayout 16 24 24\nnprocs 1048576\n"
                                           "0 5 1000 1000\n0 900000 10 10\n1 77 4000 4000\n");
    uint64_t single = engine_bytes("policy=single nprocs=1048576");
    uint64_t heur = engine_bytes("policy=cluster profile=test_cluster-big.profile");
    uint64_t km = engine_bytes("policy=cluster cluster.algo=kmeans cluster.k=4 "
                               "profile=test_cluster-big.profile");
    printf("test_cluster: 2^20 ranks, 3 profiled: single %llu bytes, cluster heuristic %llu, "
           "kmeans %llu\n",
           (unsigned long long)single, (unsigned long long)heur, (unsigned long long)km);
    CHECK(heur < single + 1024 && km < single + 1024);
    remove("test_cluster-big.profile");
}

/* Each spec fails with code and a message containing what. */
static void create_fails(const char *spec, int code, const char *what)
{
    vmatch_engine_t *e = (vmatch_engine_t *)&mem; /* must stay untouched */
    int rc = vmatch_create(spec, &e);
    CHECK_EQ(rc, code);
    CHECK(e == (vmatch_engine_t *)&mem);
    if (!strstr(vmatch_last_error(), what)) {
        fprintf(stderr, "test_cluster: \"%s\" said \"%s\", not \"%s\"\n", spec,
                vmatch_last_error(), what);
        CHECK(0);
    }
}

static void create_errors(void)
{
    write_file("test_cluster-ok.profile", "vmatch-profile 1\nlayout 16 24 24\nnprocs 64\n"
                                          "0 1 10 10\n0 2 20 5\n");
    write_file("test_cluster-bad.profile", "vmatch-profile 1\nlayout 16 24 24\nnprocs 64\n"
                                           "0 1 10\n");
    write_file("test_cluster-noprocs.profile", "vmatch-profile 1\nlayout 16 24 24\nnprocs 0\n");
    create_fails("policy=cluster", VMATCH_EINVAL, "policy=cluster needs profile=PATH");
    create_fails("policy=cluster profile=test_cluster-missing.profile", VMATCH_EIO,
                 "cannot open");
    create_fails("policy=cluster profile=test_cluster-bad.profile", VMATCH_EINVAL,
                 "test_cluster-bad.profile:4");
    create_fails("policy=cluster profile=test_cluster-ok.profile layout.src=20", VMATCH_EINVAL,
                 "recorded under layout=default");
    create_fails("policy=cluster profile=test_cluster-ok.profile nprocs=128", VMATCH_EINVAL,
                 "recorded with nprocs 64, the spec's nprocs is 128");
    create_fails("policy=cluster profile=test_cluster-noprocs.profile", VMATCH_EINVAL,
                 "no nprocs");
    create_fails("policy=cluster profile=test_cluster-ok.profile cluster.k=0", VMATCH_EINVAL,
                 "cluster.k");
    create_fails("policy=cluster profile=test_cluster-ok.profile cluster.k=4097", VMATCH_EINVAL,
                 "cluster.k");
    create_fails("policy=cluster profile=test_cluster-ok.profile cluster.algo=dbscan",
                 VMATCH_EINVAL, "cluster.algo");
    vmatch_engine_t *e;
    CHECK_EQ(vmatch_create("policy=cluster profile=test_cluster-ok.profile cluster.k=4096", &e),
             VMATCH_OK);
    vmatch_destroy(e);
    remove("test_cluster-ok.profile");
    remove("test_cluster-bad.profile");
    remove("test_cluster-noprocs.profile");
}

/* A hot source in a cluster of its own: a receive with ANY_SOURCE posted before one naming
 * the source takes the source's first message (it is older), and a probe with ANY_SOURCE
 * finds the oldest message across clusters. */
static void wildcard_order(void)
{
    write_file("test_cluster-hot.profile", "vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n"
                                           "0 1 1 1\n0 2 1 1\n0 3 100 100\n");
    vmatch_engine_t *e;
    REQUIRE(vmatch_create("policy=cluster profile=test_cluster-hot.profile", &e) == VMATCH_OK);
    int r1, r2, m1, m2, m3;
    void *out;
    vmatch_bits_t bits, care;
    vmatch_mpi_recv(e, 0, VMATCH_ANY_SOURCE, 5, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care, 0, &r1, &out), VMATCH_QUEUED);
    vmatch_mpi_recv(e, 0, 3, 5, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care, 0, &r2, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, 3, 5), 0, &m1, &out), VMATCH_MATCHED);
    CHECK(out == &r1);
    CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, 3, 5), 0, &m1, &out), VMATCH_MATCHED);
    CHECK(out == &r2);
    /* Unexpected messages in three clusters (a source the profile lacks among them). */
    CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, 7, 9), 0, &m1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, 3, 9), 0, &m2, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, 1, 9), 0, &m3, &out), VMATCH_QUEUED);
    vmatch_stats_t st;
    vmatch_stats(e, &st);
    CHECK(st.queues >= 3);
    vmatch_mpi_recv(e, 0, VMATCH_ANY_SOURCE, 9, &bits, &care);
    CHECK_EQ(vmatch_probe(e, bits, care, 0, 1, &out), VMATCH_MATCHED);
    CHECK(out == &m1);
    CHECK_EQ(vmatch_probe(e, bits, care, 0, 1, &out), VMATCH_MATCHED);
    CHECK(out == &m2);
    vmatch_mpi_recv(e, 0, 1, 9, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care, 0, &r1, &out), VMATCH_MATCHED);
    CHECK(out == &m3);
    vmatch_destroy(e);
    remove("test_cluster-hot.profile");
}

int main(void)
{
    heuristic_boundary();
    heuristic_hot_alone();
    heuristic_no_zeros();
    kmeans_small();
    kmeans_random();
    algo_enomem();
    map_lookup_and_bytes();
    map_memory_bound();
    create_errors();
    wildcard_order();
    return check_report("test_cluster");
}
