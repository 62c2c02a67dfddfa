/* test_crowded.c -- policy=hash's small tables double when a bucket's line overflows
 * (src/hash/hash_impl.h, vm_hash_crowded): on either side, while the table holds an entry or
 * more for every 4 buckets; not for equal keys past that bound, not with a wildcard receive
 * queued, never for a fixed table.  Every answer is checked against the order of the calls
 * (the keys are distinct but for the equal-key case, which takes its entries oldest first). */
#include "check.h"
#include "vmatch_inline.h"

#include <stdint.h>

#define ALL    (~(vmatch_bits_t)0)
#define PTR(i) ((void *)(uintptr_t)(((i) + 1) * 8))
#define MAXK   64

typedef struct run {
    vmatch_engine_t *e;
    int side;              /* the side the keys queue on: VMATCH_PRQ (posts) or arrivals */
    vmatch_bits_t k[MAXK]; /* the keys queued, in order */
    int n;
} run_t;

static uint64_t table_buckets(vmatch_engine_t *e)
{
    uint64_t nb = 0;
    CHECK_EQ(vmatch_stat(e, "hash.table_buckets", &nb), VMATCH_OK);
    return nb;
}

static int queue_key(run_t *r, vmatch_bits_t bits)
{
    void *got;
    int rc = r->side == 0 ? vmatch_post(r->e, bits, ALL, 0, PTR(r->n), &got)
                          : vmatch_arrive(r->e, bits, 0, PTR(r->n), &got);
    r->k[r->n++] = bits;
    return rc;
}

/* How many of the keys queued fall into bucket b of nb buckets. */
static int in_bucket(const run_t *r, uint32_t b, uint32_t nb)
{
    int c = 0;
    for (int i = 0; i < r->n; i++)
        c += vmatch_line_bucket(vmatch_line_mix(r->k[i]), nb) == b;
    return c;
}

/* n keys of distinct sources, none making a bucket of the table's current size hold three
 * (so that no overflow makes it double); 1 when done. */
static int fill(run_t *r, int n)
{
    for (int32_t src = 0; r->n < n && src < 100000; src++) {
        vmatch_bits_t bits = vmatch_mpi_msg(r->e, 1, src, 0);
        uint32_t nb = (uint32_t)table_buckets(r->e);
        if (nb && in_bucket(r, vmatch_line_bucket(vmatch_line_mix(bits), nb), nb) >= 2)
            continue;
        if (queue_key(r, bits) != VMATCH_QUEUED)
            return 0;
    }
    return r->n == n;
}

/* Three keys (tag 5, sources from 200000 on) whose bucket among nb is one the keys queued do
 * not use. */
static int triple(const run_t *r, uint32_t nb, vmatch_bits_t out[3])
{
    int found = 0;
    for (int32_t src = 200000; src < 400000; src++) {
        vmatch_bits_t bits = vmatch_mpi_msg(r->e, 1, src, 5);
        uint32_t b = vmatch_line_bucket(vmatch_line_mix(bits), nb);
        if (in_bucket(r, b, nb))
            continue;
        if (found && vmatch_line_bucket(vmatch_line_mix(out[0]), nb) != b)
            continue;
        out[found++] = bits;
        if (found == 3)
            return 1;
    }
    return 0;
}

/* Every key queued, taken back in the order queued: each must find its own entry. */
static void drain(run_t *r)
{
    for (int i = 0; i < r->n; i++) {
        void *got = NULL;
        int rc = r->side == 0 ? vmatch_arrive(r->e, r->k[i], 0, PTR(1000), &got)
                              : vmatch_post(r->e, r->k[i], ALL, 0, PTR(1000), &got);
        CHECK(rc == VMATCH_MATCHED && got == PTR(i));
    }
}

/* 10 keys, then three into one empty bucket: the third overflows it, and the table (13
 * entries, below its load's bound) doubles; with a wildcard receive queued (wild, side 0) it
 * does not. */
static void test_double(int side, int wild)
{
    run_t r = {.side = side};
    REQUIRE(vmatch_create("policy=hash storage=llv hash.short=0", &r.e) == VMATCH_OK);
    void *got;
    vmatch_bits_t wb, wc, t[3];
    if (wild) { /* ANY_SOURCE in context 2: matches none of the keys */
        vmatch_mpi_recv(r.e, 2, VMATCH_ANY_SOURCE, 9, &wb, &wc);
        REQUIRE(vmatch_post(r.e, wb, wc, 0, PTR(999), &got) == VMATCH_QUEUED);
    }
    REQUIRE(fill(&r, 10));
    uint32_t nb = (uint32_t)table_buckets(r.e);
    CHECK_EQ(nb, 32); /* 10 entries: the load's doublings from 2 buckets */
    REQUIRE(triple(&r, nb, t));
    CHECK_EQ(queue_key(&r, t[0]), VMATCH_QUEUED);
    CHECK_EQ(queue_key(&r, t[1]), VMATCH_QUEUED);
    CHECK_EQ(table_buckets(r.e), nb);
    CHECK_EQ(queue_key(&r, t[2]), VMATCH_QUEUED);
    CHECK_EQ(table_buckets(r.e), wild ? nb : 2 * nb);
    drain(&r);
    vmatch_destroy(r.e);
}

/* 40 equal keys: they share a bucket at every size; the table stops doubling once it has
 * more than 4 buckets an entry (without the rule the load alone gives 128). */
static void test_equal(void)
{
    run_t r = {.side = 0};
    REQUIRE(vmatch_create("policy=hash storage=llv hash.short=0", &r.e) == VMATCH_OK);
    vmatch_bits_t bits = vmatch_mpi_msg(r.e, 1, 3, 4);
    for (int i = 0; i < 40; i++)
        CHECK_EQ(queue_key(&r, bits), VMATCH_QUEUED);
    uint64_t nb = table_buckets(r.e);
    CHECK(nb > 4 * 40 && nb <= 8 * 40);
    drain(&r);
    vmatch_destroy(r.e);
}

/* A fixed table keeps its size. */
static void test_fixed(void)
{
    run_t r = {.side = 0};
    REQUIRE(vmatch_create("policy=hash storage=llv hash.short=0 hash.buckets=8", &r.e) ==
            VMATCH_OK);
    vmatch_bits_t t[3];
    REQUIRE(triple(&r, 8, t));
    for (int i = 0; i < 3; i++)
        CHECK_EQ(queue_key(&r, t[i]), VMATCH_QUEUED);
    CHECK_EQ(table_buckets(r.e), 8);
    drain(&r);
    vmatch_destroy(r.e);
}

int main(void)
{
    test_double(0, 0);
    test_double(0, 1);
    test_double(1, 0);
    test_equal();
    test_fixed();
    return check_report("test_crowded");
}
