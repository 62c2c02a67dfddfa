/* Tests of the partner / non-partner policies: the metrics on known counts, the partner
 * choice, the perfect hash, the c*sqrt(N) bound, which queues a search walks (seen through
 * the inspected counter), and pnp-static's profile: recorded, saved, read back, and rejected
 * when it does not fit the spec.  Matching results themselves are test_diff's job. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "pnp.h"
#include "pool.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PTR(i) ((void *)(uintptr_t)(((i) + 1) * 8))

static char dir[64];

static const char *path_of(const char *name)
{
    static char p[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

static void test_metrics(void)
{
    /* No zeros: 1 2 3 4.  Median at rank 1.5, Q1 at 0.75, Q3 at 2.25. */
    const uint64_t a[] = {1, 2, 3, 4};
    CHECK(near(vm_pnp_edge(a, 4, 4, VM_PNP_AVERAGE, 0), 2.5));
    CHECK(near(vm_pnp_edge(a, 4, 4, VM_PNP_MEDIAN, 0), 2.5));
    CHECK(near(vm_pnp_edge(a, 4, 4, VM_PNP_FENCE, 0), 3.25));
    CHECK(near(vm_pnp_edge(a, 4, 4, VM_PNP_FENCE, 1.5), 3.25 + 1.5 * (3.25 - 1.75)));
    /* 10 and 20 among 8 keys: six zeros.  Q3 at rank 5.25: between 0 and 10. */
    const uint64_t b[] = {10, 20};
    CHECK(near(vm_pnp_edge(b, 2, 8, VM_PNP_AVERAGE, 0), 30.0 / 8));
    CHECK(near(vm_pnp_edge(b, 2, 8, VM_PNP_MEDIAN, 0), 0));
    CHECK(near(vm_pnp_edge(b, 2, 8, VM_PNP_FENCE, 1), 5));
    CHECK(near(vm_pnp_edge(b, 2, 0, VM_PNP_AVERAGE, 0), 15)); /* pop below n: n */
    CHECK(near(vm_pnp_edge(NULL, 0, 0, VM_PNP_MEDIAN, 0), 0));

    /* Choice: above the edge, highest count first, ties by index, at most max. */
    const uint64_t c[] = {5, 1, 9, 5};
    uint64_t scratch[4];
    size_t out[4];
    double edge;
    CHECK_EQ(vm_pnp_choose(c, 4, 4, VM_PNP_AVERAGE, 0, 10, scratch, out, &edge), 1);
    CHECK(near(edge, 5));
    CHECK_EQ(out[0], 2);
    CHECK_EQ(vm_pnp_choose(c, 4, 4, VM_PNP_MEDIAN, 0, 10, scratch, out, NULL), 1);
    CHECK_EQ(vm_pnp_choose(c, 4, 100, VM_PNP_AVERAGE, 0, 10, scratch, out, NULL), 4);
    CHECK_EQ(out[0], 2);
    CHECK_EQ(out[1], 0);
    CHECK_EQ(out[2], 3);
    CHECK_EQ(out[3], 1);
    CHECK_EQ(vm_pnp_choose(c, 4, 100, VM_PNP_AVERAGE, 0, 2, scratch, out, NULL), 2);
    CHECK_EQ(out[1], 0);
    CHECK_EQ(vm_pnp_choose(c, 4, 4, VM_PNP_FENCE, 1.5, 10, scratch, out, NULL), 0);

    CHECK_EQ(vm_pnp_metric_parse("median", 6), VM_PNP_MEDIAN);
    CHECK_EQ(vm_pnp_metric_parse("medians", 7), -1);
    CHECK(strcmp(vm_pnp_metric_name(VM_PNP_FENCE), "fence") == 0);
    CHECK(vm_pnp_metric_name(7) == NULL);
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    return z ^ (z >> 27);
}

static void test_phash(void)
{
    vm_mem_t mem = {.numa = VM_NUMA_OFF, .fail_after = -1};
    vm_phash_t h;
    CHECK_EQ(vm_phash_build(&h, &mem, NULL, NULL, 0), VMATCH_OK);
    CHECK_EQ(vm_phash_find(&h, 0), -1);
    vm_phash_free(&h, &mem);

    /* Several densities: a few keys in a wide range, many in a narrow one, key 0. */
    static const struct {
        size_t n;
        uint64_t range;
    } cases[] = {{1, 1}, {5, 1000000}, {300, 4096}, {2000, 2048 * 4}, {64, 64}};
    uint64_t seed = 42;
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        size_t n = cases[t].n;
        uint64_t range = cases[t].range;
        uint64_t *keys = malloc(n * sizeof *keys);
        uint32_t *vals = malloc(n * sizeof *vals);
        unsigned char *in = calloc(range, 1);
        REQUIRE(keys && vals && in);
        for (size_t i = 0; i < n; i++) { /* distinct keys; the dense cases take every key */
            uint64_t k = n == range ? i : rnd(&seed) % range;
            while (in[k])
                k = (k + 1) % range;
            in[k] = 1;
            keys[i] = k;
            vals[i] = (uint32_t)(i * 7 + 3);
        }
        REQUIRE(vm_phash_build(&h, &mem, keys, vals, n) == VMATCH_OK);
        size_t found = 0, rejected = 0, wrong = 0, nonkeys = 0;
        for (size_t i = 0; i < n; i++)
            found += vm_phash_find(&h, keys[i]) == (int64_t)vals[i];
        for (uint64_t k = 0; k < range && k < 200000; k++)
            if (!in[k])
                nonkeys++, rejected += vm_phash_find(&h, k) == -1;
            else
                wrong += vm_phash_find(&h, k) < 0;
        for (int i = 0; i < 1000; i++) /* far outside the grid */
            rejected += vm_phash_find(&h, range + rnd(&seed) % (1ull << 40)) == -1;
        CHECK_EQ(found, n);
        CHECK_EQ(wrong, 0);
        CHECK_EQ(rejected, nonkeys + 1000);
        CHECK(h.nslots <= 4 * n + (1u << h.shift)); /* no runaway table */
        printf("test_pnp: perfect hash of %zu keys below %llu: %u slots\n", n,
               (unsigned long long)range, h.nslots);
        vm_phash_free(&h, &mem);
        free(keys);
        free(vals);
        free(in);
    }
    CHECK_EQ(mem.bytes, 0);
    /* Out of memory at each allocation: an error and nothing held. */
    uint64_t keys[] = {3, 17, 40, 41};
    uint32_t vals[] = {0, 1, 2, 3};
    for (int64_t f = 0; f < 4; f++) {
        mem.fail_after = f;
        int rc = vm_phash_build(&h, &mem, keys, vals, 4);
        mem.fail_after = -1;
        if (rc == VMATCH_OK)
            vm_phash_free(&h, &mem);
        else
            CHECK_EQ(rc, VMATCH_ENOMEM);
        CHECK_EQ(mem.bytes, 0);
    }
}

/* Queue n messages from (ctx 0, src, tags tag0..) on e; id counts payloads. */
static void arrive(vmatch_engine_t *e, int32_t src, int32_t tag0, int n, int *id)
{
    void *out;
    for (int i = 0; i < n; i++)
        CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, src, tag0 + i), 0, PTR((*id)++), &out),
                 VMATCH_QUEUED);
}

/* A figure of e by key (vmatch_stat), which e must keep. */
static uint64_t stat_of(const vmatch_engine_t *e, const char *key)
{
    uint64_t v = 0;
    int rc = vmatch_stat(e, key, &v);
    if (rc != VMATCH_OK)
        fprintf(stderr, "vmatch_stat(%s) = %d: %s\n", key, rc, vmatch_last_error());
    REQUIRE(rc == VMATCH_OK);
    return v;
}

/* Entries a non-removing probe for (src, tag) compares; found is what it must return. */
static uint64_t probe_cost(vmatch_engine_t *e, int32_t src, int32_t tag, int found)
{
    vmatch_stats_t a, b;
    vmatch_bits_t bits, care;
    void *out;
    vmatch_stats(e, &a);
    vmatch_mpi_recv(e, 0, src, tag, &bits, &care);
    CHECK_EQ(vmatch_probe(e, bits, care, 0, 0, &out),
             found ? VMATCH_MATCHED : VMATCH_ENOTFOUND);
    vmatch_stats(e, &b);
    return b.inspected - a.inspected;
}

/* The dynamic design on a small script, for every metric: source 0 sends 8 messages and
 * sources 1 and 2 one each; at the threshold (10) source 0 alone is above the edge point of
 * every metric (average 2.5, median 1, fence 5.75 over nprocs=4) and becomes a partner.
 * With pnp.move=off its 8 entries stay in the initial queue and level 1 opens; with
 * pnp.move=on they move to its queue.  Then the searches walk exactly the queues the design
 * says.  The same with the named layouts: pnp keys by the source and context fields where
 * the layout puts them (keyed by other bits, source 0's tags would split it into many
 * keys, none above the edge point, and the costs would differ). */
static void test_dynamic(const char *metric, int move, const char *layout)
{
    char spec[200];
    snprintf(spec, sizeof spec,
             "policy=pnp storage=ll nprocs=4 pnp.threshold=10 pnp.metric=%s pnp.move=%s %s",
             metric, move ? "on" : "off", layout);
    vmatch_engine_t *e;
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
    vmatch_stats_t st;
    int id = 0;
    arrive(e, 0, 0, 4, &id);
    arrive(e, 1, 0, 1, &id);
    arrive(e, 0, 4, 4, &id);
    vmatch_stats(e, &st);
    CHECK_EQ(stat_of(e, "pnp.partners"),
             0); /* 9 entries: below the threshold, one queue a side */
    CHECK_EQ(st.queues, 2);
    CHECK_EQ(probe_cost(e, 1, 0, 1), 5); /* single-list order: the 5th entry */
    arrive(e, 2, 0, 1, &id);             /* the 10th: the split */
    vmatch_stats(e, &st);
    CHECK_EQ(stat_of(e, "pnp.partners"), 1);
    CHECK_EQ(stat_of(e, "pnp.levels"), 1);
    /* PRQ: 1; UMQ: the partner's and the initial queue, and without move a level-1 queue */
    CHECK_EQ(st.queues, move ? 3 : 4);
    arrive(e, 0, 100, 9, &id); /* to the partner's queue */
    arrive(e, 1, 100, 3, &id); /* to the newest shared queue */
    /* Entries a probe compares: for a partner, a non-partner, another non-partner and
     * ANY_SOURCE, each missing; then hits on (0, 105), (1, 101), (0, 5) and (ANY, 5).
     * Without move: a partner walks the initial queue (10) then its own (9); a non-partner
     * the chain (10 + 3); ANY_SOURCE every queue (10 + 3 + 9); a hit in the initial queue
     * stops the search.  With move: the partner's queue holds its 17 entries; the shared
     * queue the other 5 (sources 1 and 2 in order); ANY_SOURCE looks at both. */
    static const uint64_t cost[2][8] = {{19, 13, 13, 22, 16, 12, 7, 7},
                                        {17, 5, 5, 22, 14, 4, 6, 11}};
    const uint64_t *want = cost[move];
    CHECK_EQ(probe_cost(e, 0, 999, 0), want[0]);
    CHECK_EQ(probe_cost(e, 1, 999, 0), want[1]);
    CHECK_EQ(probe_cost(e, 3, 999, 0), want[2]);
    CHECK_EQ(probe_cost(e, VMATCH_ANY_SOURCE, 999, 0), want[3]);
    CHECK_EQ(probe_cost(e, 0, 105, 1), want[4]);
    CHECK_EQ(probe_cost(e, 1, 101, 1), want[5]);
    CHECK_EQ(probe_cost(e, 0, 5, 1), want[6]);
    CHECK_EQ(probe_cost(e, VMATCH_ANY_SOURCE, 5, 1), want[7]);
    vmatch_destroy(e);
}

/* Never more partners than floor(c * sqrt(N)) per side, whatever the traffic. */
static void test_bound(uint32_t nprocs, uint32_t cap)
{
    char spec[160];
    snprintf(spec, sizeof spec, "policy=pnp storage=lla nprocs=%u pnp.threshold=2 pnp.cap=%u",
             nprocs, cap);
    vmatch_engine_t *e;
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
    uint64_t bound = (uint64_t)floor(cap * sqrt((double)nprocs) + 1e-9), most = 0, partners = 0;
    vmatch_stats_t st;
    int id = 0;
    void *out;
    for (int round = 0; round < 4; round++)
        for (uint32_t src = 0; src < nprocs; src++) {
            CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, round % 2, (int32_t)src, round), 0,
                                   PTR(id++), &out),
                     VMATCH_QUEUED);
            partners = stat_of(e, "pnp.partners");
            CHECK(partners <= bound);
            most = partners > most ? partners : most;
        }
    CHECK_EQ(most, bound); /* the traffic has more keys than the table: it fills */
    uint64_t levels = stat_of(e, "pnp.levels");
    CHECK(levels >= 1 && levels <= bound);
    vmatch_stats(e, &st);
    printf("test_pnp: nprocs=%u pnp.cap=%u: %llu partners (bound %llu), %llu levels, %llu "
           "queues\n",
           nprocs, cap, (unsigned long long)partners, (unsigned long long)bound,
           (unsigned long long)levels, (unsigned long long)st.queues);
    vmatch_destroy(e);
}

/* Record a profile: on context 0, source 5 posts 30 receives and sends 30 messages that do
 * not match them, sources 0..15 one of each.  nprocs=16: the metrics pick source 5 alone. */
static const char *record_profile(const char *spec, const char *name)
{
    char full[200];
    snprintf(full, sizeof full, "profile.record=on %s", spec);
    vmatch_engine_t *e;
    REQUIRE(vmatch_create(full, &e) == VMATCH_OK);
    vmatch_bits_t b, c;
    void *out;
    int id = 0;
    for (int32_t src = 0; src < 16; src++)
        for (int i = 0; i < (src == 5 ? 30 : 1); i++) {
            vmatch_mpi_recv(e, 0, src, 1, &b, &c);
            CHECK_EQ(vmatch_post(e, b, c, 0, PTR(id++), &out), VMATCH_QUEUED);
            CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, src, 2), 0, PTR(id++), &out),
                     VMATCH_QUEUED);
        }
    const char *p = path_of(name);
    CHECK_EQ(vmatch_profile_save(e, p), VMATCH_OK);
    vmatch_destroy(e);
    return p;
}

/* A profile recorded and used with layout (the profile keys sources by their field wherever
 * the layout puts it): source 5 becomes a partner on each side, and searches cost what the
 * split says. */
static void test_static_layout(const char *layout)
{
    char spec[300];
    snprintf(spec, sizeof spec, "nprocs=16 %s", layout);
    const char *p = record_profile(spec, "pnp-layout.prof");
    vmatch_engine_t *e;
    snprintf(spec, sizeof spec, "policy=pnp-static storage=llv %s profile=%s", layout, p);
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
    CHECK_EQ(stat_of(e, "pnp.partners"), 2);
    int id = 0;
    arrive(e, 5, 0, 6, &id);
    arrive(e, 6, 0, 4, &id);
    CHECK_EQ(probe_cost(e, 5, 999, 0), 6);
    CHECK_EQ(probe_cost(e, 6, 999, 0), 4);
    CHECK_EQ(probe_cost(e, VMATCH_ANY_SOURCE, 999, 0), 10);
    vmatch_destroy(e);
}

static void test_static(void)
{
    const char *p = record_profile("nprocs=16", "pnp.prof");
    char spec[300];
    vmatch_engine_t *e;
    vmatch_stats_t st;
    snprintf(spec, sizeof spec, "policy=pnp-static storage=llv profile=%s", p);
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK); /* nprocs from the profile */
    vmatch_stats(e, &st);
    CHECK_EQ(stat_of(e, "pnp.partners"), 2); /* source 5 on each side */
    CHECK_EQ(stat_of(e, "pnp.levels"), 0);
    CHECK_EQ(st.queues, 4);
    int id = 0;
    arrive(e, 5, 0, 6, &id);
    arrive(e, 6, 0, 4, &id);
    arrive(e, 20, 0, 2, &id); /* beyond nprocs: a non-partner */
    CHECK_EQ(probe_cost(e, 5, 999, 0), 6);
    CHECK_EQ(probe_cost(e, 6, 999, 0), 6);
    CHECK_EQ(probe_cost(e, 20, 1, 1), 6);
    CHECK_EQ(probe_cost(e, VMATCH_ANY_SOURCE, 999, 0), 12);
    vmatch_destroy(e);

    /* The upper fence (1 + 1.5 * 0 over fifteen 1s and one 30) picks source 5 too. */
    snprintf(spec, sizeof spec, "policy=pnp-static nprocs=16 pnp.metric=fence profile=%s", p);
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
    CHECK_EQ(stat_of(e, "pnp.partners"), 2);
    vmatch_destroy(e);

    /* Profiles that do not fit: an error with a reason, and no engine. */
    static const struct {
        const char *spec;
        int rc;
    } bad[] = {
        {"policy=pnp-static nprocs=32 profile=%s", VMATCH_EINVAL},     /* nprocs */
        {"policy=pnp-static layout.tag=20 profile=%s", VMATCH_EINVAL}, /* layout */
        {"policy=pnp-static profile=%s.missing", VMATCH_EIO},          /* no file */
        {"policy=pnp-static nprocs=16", VMATCH_EINVAL},                /* no path */
        {"policy=pnp-static profile=%s.src", VMATCH_EINVAL},           /* source */
        {"policy=pnp-static profile=%s.nonp", VMATCH_EINVAL},          /* no N */
        {"policy=pnp-static profile=%s.garbage", VMATCH_EINVAL},       /* format */
    };
    char alt[160];
    FILE *f;
    snprintf(alt, sizeof alt, "%s.src", p);
    REQUIRE((f = fopen(alt, "w")) != NULL);
    fputs("vmatch-profile 1\nlayout 16 24 24\nnprocs 16\n0 3 5 5\n0 16 1 1\n", f);
    fclose(f);
    snprintf(alt, sizeof alt, "%s.nonp", p);
    REQUIRE((f = fopen(alt, "w")) != NULL);
    fputs("vmatch-profile 1\nlayout 16 24 24\nnprocs 0\n0 3 5 5\n", f);
    fclose(f);
    snprintf(alt, sizeof alt, "%s.garbage", p);
    REQUIRE((f = fopen(alt, "w")) != NULL);
    fputs("vmatch-profile 1\nlayout 16 24 24\nnprocs 16\n0 3 five 5\n", f);
    fclose(f);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(spec, sizeof spec, bad[i].spec, p);
        e = (vmatch_engine_t *)PTR(1);
        CHECK_EQ(vmatch_create(spec, &e), bad[i].rc);
        CHECK(e == (vmatch_engine_t *)PTR(1));
        CHECK(strlen(vmatch_last_error()) > 10);
        printf("test_pnp: \"%s\": %s\n", spec, vmatch_last_error());
    }
}

static void test_spec(void)
{
    static const char *const bad[] = {
        "policy=pnp", /* nprocs is needed for the bound */
        "policy=pnp nprocs=8 pnp.threshold=0",
        "policy=pnp nprocs=8 pnp.cap=0",
        "policy=pnp nprocs=8 pnp.cap=1025",
        "policy=pnp nprocs=8 pnp.metric=mean",
        "policy=pnp nprocs=8 pnp.alpha=-1",
        "policy=pnp nprocs=8 pnp.alpha=1.5x",
        "policy=pnp nprocs=8 pnp.alpha=nan",
        "policy=pnp nprocs=8 pnp.alpha=101",
        "policy=pnp nprocs=8 pnp.alpha=",
    };
    vmatch_engine_t *e;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_EQ(vmatch_create(bad[i], &e), VMATCH_EINVAL);
        CHECK(strstr(vmatch_last_error(), "pnp") != NULL);
    }
    /* The resolved spec names the pnp keys and is a valid spec again. */
    REQUIRE(vmatch_create("policy=pnp nprocs=64 pnp.alpha=0.25 pnp.metric=fence", &e) ==
            VMATCH_OK);
    const char *d = vmatch_describe(e);
    CHECK(
        strstr(d, "pnp.threshold=100 pnp.cap=1 pnp.metric=fence pnp.alpha=0.25 pnp.move=on") !=
        NULL);
    vmatch_engine_t *again;
    CHECK_EQ(vmatch_create(d, &again), VMATCH_OK);
    if (again) {
        CHECK(strcmp(vmatch_describe(again), d) == 0);
        vmatch_destroy(again);
    }
    vmatch_destroy(e);
    REQUIRE(vmatch_create("nprocs=64", &e) == VMATCH_OK); /* other policies: no pnp keys */
    CHECK(strstr(vmatch_describe(e), "pnp.") == NULL);
    vmatch_destroy(e);
}

/* Below the threshold pnp is one queue a side and walks exactly what single walks. */
static void test_short_is_single(void)
{
    vmatch_engine_t *e[2];
    REQUIRE(vmatch_create("policy=single storage=llv", &e[0]) == VMATCH_OK);
    REQUIRE(vmatch_create("policy=pnp storage=llv nprocs=64", &e[1]) == VMATCH_OK);
    uint64_t seed = 7;
    for (int i = 0; i < 1000; i++) { /* four keys: the queues stay well below 100 */
        uint64_t r = rnd(&seed);
        int32_t src = (int32_t)(r % 2), tag = (int32_t)((r >> 8) % 2);
        int wild = (r >> 16) % 5 == 0;
        vmatch_bits_t b, c;
        void *out[2];
        int rc[2];
        for (int k = 0; k < 2; k++) {
            if ((r >> 20) % 2) {
                vmatch_mpi_recv(e[k], 0, wild ? VMATCH_ANY_SOURCE : src, tag, &b, &c);
                rc[k] = vmatch_post(e[k], b, c, 0, PTR(i), &out[k]);
            } else {
                rc[k] =
                    vmatch_arrive(e[k], vmatch_mpi_msg(e[k], 0, src, tag), 0, PTR(i), &out[k]);
            }
        }
        CHECK_EQ(rc[0], rc[1]);
    }
    vmatch_stats_t s[2];
    vmatch_stats(e[0], &s[0]);
    vmatch_stats(e[1], &s[1]);
    CHECK_EQ(stat_of(e[1], "pnp.partners"), 0); /* never split */
    CHECK(s[1].posted + s[1].unexpected > 0);
    CHECK_EQ(s[0].inspected, s[1].inspected);
    CHECK_EQ(s[0].searches, s[1].searches);
    vmatch_destroy(e[0]);
    vmatch_destroy(e[1]);
}

/* ---- forgetting partners ---- */

/* A call of a pair: queue (src, tag) on side (a receive or a message) or, take, the other
 * side's entry for it, which must be the one queued for it. */
static int pair_call(vmatch_engine_t *e, int side, int32_t src, int32_t tag, int take)
{
    vmatch_bits_t bits, care;
    void *out = NULL, *mine = PTR((uint32_t)src << 12 | (uint32_t)tag << 1 | (side != 0)),
         *theirs = PTR((uint32_t)src << 12 | (uint32_t)tag << 1 | (side == 0));
    vmatch_mpi_recv(e, 0, src, tag, &bits, &care);
    int rc = side == 0 ? vmatch_post(e, bits, care, 0, mine, &out)
                       : vmatch_arrive(e, bits, 0, mine, &out);
    return take ? rc == VMATCH_MATCHED && out == theirs : rc == VMATCH_QUEUED;
}

/* A burst on side: 16 hot sources with 40 tags each and 200 others with one, queued, then
 * taken in the reverse order. */
static int pnp_burst(vmatch_engine_t *e, int side)
{
    int ok = 1;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < 16 * 40 + 200 && ok; k++) {
            int j = pass ? 16 * 40 + 200 - 1 - k : k;
            int32_t src = j < 16 * 40 ? 1 + j / 40 : 17 + (j - 16 * 40),
                    tag = j < 16 * 40 ? j % 40 : 0;
            ok = pair_call(e, pass ? !side : side, src, tag, pass);
        }
    return ok;
}

/* n quiet pairs on 8 sources, which side comes first switching every 100. */
static int pnp_quiet(vmatch_engine_t *e, int n)
{
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        int first = (i / 100) % 2;
        ok = pair_call(e, first, i % 8, 1000 + i % 3, 0) &&
             pair_call(e, !first, i % 8, 1000 + i % 3, 1);
    }
    return ok;
}

/* Partners forgotten after quiet traffic on either side, with and without pnp.move (every
 * queue, table and level given back), kept while bursts come back within a window, and
 * learned again from the next burst; every answer checked. */
static void test_forget(int move)
{
    char spec[160];
    snprintf(spec, sizeof spec,
             "policy=pnp storage=llv nprocs=256 pnp.cap=8 pnp.threshold=50 pnp.move=%s",
             move ? "on" : "off");
    for (int side = 0; side < 2; side++) {
        vmatch_engine_t *e;
        vmatch_stats_t st;
        REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
        CHECK(pnp_burst(e, side));
        uint64_t partners = stat_of(e, "pnp.partners");
        CHECK(partners > 0);
        for (int k = 0; k < 5; k++) /* a burst every 2000 pairs: remembered */
            CHECK(pnp_quiet(e, 1000) && pnp_burst(e, side));
        CHECK_EQ(stat_of(e, "pnp.forgets"), 0);
        CHECK(stat_of(e, "pnp.partners") >= partners);
        CHECK(pnp_quiet(e, 50000));
        vmatch_stats(e, &st);
        printf("test_pnp: move=%d side %d: %llu partners forgotten, %llu bytes after quiet "
               "traffic\n",
               move, side, (unsigned long long)partners, (unsigned long long)st.bytes);
        CHECK(stat_of(e, "pnp.forgets") >= 1);
        CHECK_EQ(stat_of(e, "pnp.partners"), 0);
        CHECK(st.bytes <= 16384);
        CHECK_EQ(st.queues, 2);
        CHECK(pnp_burst(e, side)); /* learned again */
        CHECK(stat_of(e, "pnp.partners") > 0);
        CHECK(pnp_quiet(e, 100));
        vmatch_destroy(e);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/vmatch-test-pnp-XXXXXX");
    REQUIRE(mkdtemp(dir) != NULL);
    test_metrics();
    test_phash();
    for (int move = 0; move < 2; move++) {
        test_dynamic("average", move, "");
        test_dynamic("median", move, "");
        test_dynamic("fence", move, "");
        test_dynamic("average", move, "layout=ompi-ucx");
        test_dynamic("fence", move, "layout=mpich-ucx");
    }
    test_bound(64, 1);
    test_bound(10, 1);
    test_bound(100, 3);
    test_static();
    test_static_layout("layout=ompi-ucx");
    test_static_layout("layout=mpich-ucx");
    test_spec();
    test_short_is_single();
    test_forget(1);
    test_forget(0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ(system(cmd), 0);
    return check_report("test_pnp");
}
