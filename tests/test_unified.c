/* test_unified.c -- policy=unified: what its profile asks for, the levels it opens, the caps,
 * the order across the profiling queue, levels and wildcard receives, and what a drained
 * class keeps.  test_diff runs it against the reference model on random traffic. */
#include "check.h"
#include "vmatch.h"
#include "vmatch_unified.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Each class its own tag, as MPI libraries give each collective one: classes never match. */
enum { TAG = 7 };

static vmatch_engine_t *make(const char *spec)
{
    vmatch_engine_t *e = NULL;
    int rc = vmatch_create(spec, &e);
    if (rc != VMATCH_OK)
        fprintf(stderr, "vmatch_create(\"%s\") = %d: %s\n", spec, rc, vmatch_last_error());
    REQUIRE(rc == VMATCH_OK);
    return e;
}

/* A distinct, aligned, non-NULL handle. */
static void *handle(uintptr_t id)
{
    return (void *)(id * 8 + 8);
}

static void post(vmatch_engine_t *e, uint32_t cls, int32_t src, void *req)
{
    vmatch_bits_t bits, care;
    void *got;
    vmatch_mpi_recv(e, 1, src, TAG + (int32_t)cls, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care, cls, req, &got), VMATCH_QUEUED);
}

/* A message from src; returns the receive it matched (NULL when it was queued). */
static void *arrive(vmatch_engine_t *e, uint32_t cls, int32_t src, void *msg)
{
    void *got = NULL;
    int rc = vmatch_arrive(e, vmatch_mpi_msg(e, 1, src, TAG + (int32_t)cls), cls, msg, &got);
    CHECK(rc == VMATCH_MATCHED || rc == VMATCH_QUEUED);
    return rc == VMATCH_MATCHED ? got : NULL;
}

/* One linear gather at the root of P ranks: receives posted in rank order, messages arriving
 * in reverse order (each search walks to the far end of what is left).  Returns the entries
 * the arrivals' searches compared. */
static uint64_t gather(vmatch_engine_t *e, uint32_t cls, int32_t P)
{
    vmatch_stats_t a, b;
    for (int32_t q = 1; q < P; q++)
        post(e, cls, q, handle((uintptr_t)q));
    vmatch_stats(e, &a);
    for (int32_t q = P - 1; q >= 1; q--)
        CHECK(arrive(e, cls, q, handle(100000 + (uintptr_t)q)) == handle((uintptr_t)q));
    vmatch_stats(e, &b);
    return b.inspected - a.inspected;
}

static void test_errors(void)
{
    vmatch_engine_t *e = NULL;
    vmatch_class_stats_t cs;
    CHECK_EQ(vmatch_create("policy=unified", &e), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "nprocs") != NULL);
    CHECK_EQ(vmatch_create("policy=unified nprocs=4 unified.p2p=list", &e), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create("policy=unified nprocs=4 unified.kc=0", &e), VMATCH_EINVAL);
    CHECK(e == NULL);
    e = make("policy=single");
    CHECK_EQ(vmatch_class_stats(e, 0, &cs), VMATCH_EUNSUPPORTED);
    CHECK(strstr(vmatch_last_error(), "unified.class") != NULL);
    CHECK_EQ(vmatch_class_stats(e, 0, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_class_stats(NULL, 0, &cs), VMATCH_EINVAL);
    uint64_t v = 3;
    CHECK_EQ(vmatch_stat(e, "unified.levels", &v), VMATCH_EUNSUPPORTED);
    CHECK_EQ(v, 3);
    vmatch_destroy(e);
}

/* vmatch_stat_struct's size rule: a caller's struct of a later version (larger) gets the
 * fields this library knows and zeros after them; a size below the first version is
 * refused and leaves the struct as it was. */
static void test_struct_sizes(void)
{
    vmatch_engine_t *e = make("policy=unified nprocs=64");
    uint32_t g = vmatch_coll_class(e, VMATCH_COLL_GATHER, 8, 64);
    gather(e, g, 64);
    gather(e, g, 64);
    vmatch_class_stats_t cs;
    REQUIRE(vmatch_class_stats(e, g, &cs) == VMATCH_OK);
    CHECK_EQ(cs.op, VMATCH_COLL_GATHER);
    CHECK_EQ(cs.levels[0], 1);

    struct {
        vmatch_class_stats_t cs;
        uint64_t later[4]; /* fields a later header might add */
    } big;
    memset(&big, 0xab, sizeof big);
    CHECK_EQ(vmatch_stat_struct(e, "unified.class", g, &big, sizeof big), VMATCH_OK);
    CHECK(memcmp(&big.cs, &cs, sizeof cs) == 0);
    CHECK(big.later[0] == 0 && big.later[3] == 0);

    /* The first version ends with p2p_queues; one byte less is refused. */
    size_t v1 = offsetof(vmatch_class_stats_t, p2p_queues) + sizeof cs.p2p_queues;
    memset(&big, 0xcd, sizeof big);
    CHECK_EQ(vmatch_stat_struct(e, "unified.class", g, &big, v1 - 1), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "at least") != NULL);
    CHECK(big.cs.op == 0xcdcdcdcdu);
    CHECK_EQ(vmatch_stat_struct(e, "unified.class", g, &big, v1), VMATCH_OK);
    CHECK(memcmp(&big.cs, &cs, v1) == 0);

    /* The levels of every operation, by key. */
    uint64_t levels = 0;
    CHECK_EQ(vmatch_stat(e, "unified.levels", &levels), VMATCH_OK);
    CHECK_EQ(levels, cs.levels[0] + cs.levels[1]);
    /* The default point-to-point structure is hash: its keys answer, pnp's do not. */
    CHECK_EQ(vmatch_stat(e, "hash.overflows", &levels), VMATCH_OK);
    CHECK_EQ(vmatch_stat(e, "pnp.partners", &levels), VMATCH_EUNSUPPORTED);
    vmatch_destroy(e);
}

/* The first call is profiled; the second runs on the queues the profile asked for, so its
 * searches compare far fewer entries; a drained level keeps no queue. */
static void test_gather_levels(void)
{
    vmatch_engine_t *e = make("policy=unified nprocs=1024 unified.kc=32");
    uint32_t g = vmatch_coll_class(e, VMATCH_COLL_GATHER, 8, 256);
    vmatch_class_stats_t cs;
    vmatch_stats_t st, empty;
    vmatch_stats(e, &empty);

    uint64_t first = gather(e, g, 256);
    REQUIRE(vmatch_class_stats(e, g, &cs) == VMATCH_OK);
    CHECK_EQ(cs.op, VMATCH_COLL_GATHER);
    CHECK_EQ(cs.profiled[0], 1);
    /* Reverse order: the k-th arrival compares the 255 - k receives left, 128 on average. */
    CHECK(cs.traversal[0] > 100 && cs.traversal[0] < 140);
    CHECK_EQ(cs.wanted[0], (uint32_t)(cs.traversal[0] + 0.999));
    CHECK_EQ(cs.levels[0], 0);      /* a level opens at the class's next entry */
    CHECK_EQ(cs.coll_cap[0], 1024); /* 32 * sqrt(1024) */

    uint64_t second = gather(e, g, 256);
    REQUIRE(vmatch_class_stats(e, g, &cs) == VMATCH_OK);
    CHECK_EQ(cs.levels[0], 1);
    CHECK_EQ(cs.level_queues[0][0], cs.wanted[0]);
    CHECK_EQ(cs.coll_queues[0], cs.wanted[0]);
    CHECK(second * 20 < first); /* about one entry per search instead of 128 */
    vmatch_stats(e, &st);
    /* Drained: the level's queues hold no entry and no block, only their headers. */
    CHECK(st.queues <= empty.queues + 1 + cs.wanted[0] + cs.wanted[1]);
    uint64_t levels = 0;
    CHECK_EQ(vmatch_stat(e, "unified.levels", &levels), VMATCH_OK);
    CHECK_EQ(levels, 1);
    CHECK_EQ(st.posted + st.unexpected, 0);

    /* What the queues of a drained class took stays in the engine's pools for the next call
     * (as for every policy), so a third call takes nothing more. */
    vmatch_stats_t again;
    CHECK(gather(e, g, 256) * 20 < first);
    vmatch_stats(e, &again);
    CHECK_EQ(again.bytes, st.bytes);
    CHECK_EQ(again.queues, st.queues);

    /* The same operation at a larger size and more ranks wants more queues: a second level;
     * a smaller one does not open one. */
    uint32_t big = vmatch_coll_class(e, VMATCH_COLL_GATHER, 1 << 20, 1024);
    gather(e, big, 1024);
    gather(e, big, 1024);
    REQUIRE(vmatch_class_stats(e, big, &cs) == VMATCH_OK);
    CHECK_EQ(cs.levels[0], 2);
    CHECK(cs.level_queues[0][1] > cs.level_queues[0][0]);
    CHECK(cs.coll_queues[0] <= cs.coll_cap[0]);
    uint32_t small = vmatch_coll_class(e, VMATCH_COLL_GATHER, 8, 16);
    gather(e, small, 16);
    gather(e, small, 16);
    REQUIRE(vmatch_class_stats(e, small, &cs) == VMATCH_OK);
    CHECK_EQ(cs.levels[0], 2);
    /* The first class keeps running, on the newest level of its operation. */
    CHECK(gather(e, g, 256) * 10 < first);
    vmatch_destroy(e);
}

/* At the cap no level opens; the classes that find no room stay in the profiling queue and
 * still match in order. */
static void test_cap(void)
{
    vmatch_engine_t *e = make("policy=unified nprocs=64 unified.kc=1"); /* 8 queues */
    uint32_t a = vmatch_coll_class(e, VMATCH_COLL_ALLTOALL, 8, 64);
    uint32_t b = vmatch_coll_class(e, VMATCH_COLL_BCAST, 8, 64);
    vmatch_class_stats_t cs;
    gather(e, a, 64);
    gather(e, a, 64);
    REQUIRE(vmatch_class_stats(e, a, &cs) == VMATCH_OK);
    CHECK_EQ(cs.levels[0], 1);
    CHECK_EQ(cs.level_queues[0][0], 8); /* it wanted about 32: the cap took the rest */
    CHECK(cs.wanted[0] > 8);
    gather(e, b, 64);
    gather(e, b, 64);
    REQUIRE(vmatch_class_stats(e, b, &cs) == VMATCH_OK);
    CHECK_EQ(cs.profiled[0], 1);
    CHECK_EQ(cs.levels[0], 0);
    CHECK_EQ(cs.coll_queues[0], 8);
    post(e, b, 3, handle(1));
    post(e, b, 3, handle(2));
    REQUIRE(vmatch_class_stats(e, b, &cs) == VMATCH_OK);
    CHECK_EQ(cs.profiling[0], 2);
    CHECK(arrive(e, b, 3, handle(9)) == handle(1));
    CHECK(arrive(e, b, 3, handle(9)) == handle(2));
    vmatch_destroy(e);
}

/* A class's receives in an older level are matched before its newer ones in the newest
 * level, and a wildcard receive between them keeps its place. */
static void test_order_across_levels(void)
{
    vmatch_engine_t *e = make("policy=unified nprocs=4096 unified.kc=8");
    uint32_t a = vmatch_coll_class(e, VMATCH_COLL_GATHER, 8, 64);
    uint32_t b = vmatch_coll_class(e, VMATCH_COLL_GATHER, 8, 2048);
    vmatch_bits_t bits, care;
    void *got;
    gather(e, a, 64);
    post(e, a, 5, handle(1)); /* a is placed now: level 1 */
    vmatch_mpi_recv(e, 1, VMATCH_ANY_SOURCE, TAG + (int32_t)a, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care, a, handle(2), &got), VMATCH_QUEUED); /* wild, level 1 */
    gather(e, b, 2048);
    gather(e, b, 2048);       /* b opens level 2 */
    post(e, a, 5, handle(3)); /* level 2 */
    vmatch_class_stats_t cs;
    REQUIRE(vmatch_class_stats(e, a, &cs) == VMATCH_OK);
    CHECK_EQ(cs.levels[0], 2);
    CHECK(arrive(e, a, 5, handle(10)) == handle(1));
    CHECK(arrive(e, a, 6, handle(11)) == handle(2));
    CHECK(arrive(e, a, 6, handle(12)) == NULL); /* unexpected now */
    CHECK(arrive(e, a, 5, handle(13)) == handle(3));
    /* A probe with ANY_SOURCE finds the unexpected message, and a cancel misses. */
    CHECK_EQ(vmatch_probe(e, bits, care, a, 1, &got), VMATCH_MATCHED);
    CHECK(got == handle(12));
    CHECK_EQ(vmatch_cancel(e, handle(3)), VMATCH_ENOTFOUND);
    vmatch_destroy(e);
}

/* A class whose calls grow past what its profile saw overflows its buckets: its operation
 * opens levels of twice the queues, up to the cap, and the answers stay in order. */
static void test_growth(void)
{
    vmatch_engine_t *e = make("policy=unified nprocs=256 unified.kc=4"); /* 64 queues */
    uint32_t g = vmatch_coll_class(e, VMATCH_COLL_GATHER, 8, 256);
    vmatch_class_stats_t cs;
    gather(e, g, 9); /* 8 receives: wants 5 buckets (4.5 compared per search) */
    gather(e, g, 9);
    REQUIRE(vmatch_class_stats(e, g, &cs) == VMATCH_OK);
    CHECK_EQ(cs.levels[0], 1);
    CHECK_EQ(cs.level_queues[0][0], 5);
    gather(e, g, 200); /* arrivals and matches are checked inside */
    REQUIRE(vmatch_class_stats(e, g, &cs) == VMATCH_OK);
    CHECK(cs.levels[0] >= 3);
    for (uint32_t l = 1; l < cs.levels[0] && l < VMATCH_MAX_LEVELS; l++)
        CHECK(cs.level_queues[0][l] > cs.level_queues[0][l - 1]);
    CHECK(cs.coll_queues[0] <= cs.coll_cap[0]);
    CHECK_EQ(cs.coll_cap[0], 64);
    vmatch_destroy(e);
}

/* Ids no vmatch_coll_class handed out: below the tracking bound they are profiled and placed
 * like any class (operation 0); above it they stay in the profiling queue.  Both match in
 * order, and the big id costs no class table. */
static void test_made_up_ids(void)
{
    vmatch_engine_t *e = make("policy=unified nprocs=64");
    vmatch_stats_t before, after;
    vmatch_class_stats_t cs;
    vmatch_stats(e, &before);
    for (int round = 0; round < 3; round++) {
        gather(e, 50000, 40);
        gather(e, 7, 40);
    }
    vmatch_stats(e, &after);
    CHECK(after.bytes < before.bytes + 64 * 1024);
    REQUIRE(vmatch_class_stats(e, 7, &cs) == VMATCH_OK);
    CHECK_EQ(cs.op, 0);
    CHECK_EQ(cs.profiled[0], 1);
    CHECK_EQ(cs.levels[0], 1);
    REQUIRE(vmatch_class_stats(e, 50000, &cs) == VMATCH_OK);
    CHECK_EQ(cs.profiled[0], 0);
    CHECK_EQ(cs.levels[0], 0);
    vmatch_destroy(e);
}

/* Point-to-point traffic goes to the point-to-point structure: pnp's partners, within kp. */
static void test_p2p(void)
{
    vmatch_engine_t *e = make("policy=unified nprocs=64 unified.p2p=pnp unified.kp=1 "
                              "pnp.threshold=4");
    uint64_t partners = 0;
    vmatch_class_stats_t cs;
    for (int round = 0; round < 20; round++)
        for (int32_t src = 0; src < 16; src++)
            post(e, 0, src, handle((uintptr_t)(round * 16 + src + 1)));
    /* unified answers the keys of its point-to-point policy. */
    CHECK_EQ(vmatch_stat(e, "pnp.partners", &partners), VMATCH_OK);
    CHECK(partners > 0 && partners <= 2 * 8); /* 1 * sqrt(64) per side */
    REQUIRE(vmatch_class_stats(e, 0, &cs) == VMATCH_OK);
    CHECK(cs.p2p_queues[0] > 1);
    CHECK_EQ(cs.levels[0], 0);
    for (int round = 0; round < 20; round++)
        for (int32_t src = 0; src < 16; src++)
            CHECK(arrive(e, 0, src, handle(9999)) == handle((uintptr_t)(round * 16 + src + 1)));
    vmatch_destroy(e);
}

int main(void)
{
    test_errors();
    test_struct_sizes();
    test_gather_levels();
    test_cap();
    test_order_across_levels();
    test_growth();
    test_made_up_ids();
    test_p2p();
    return check_report("test_unified");
}
