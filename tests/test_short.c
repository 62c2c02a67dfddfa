/* test_short.c -- policy=hash's short vector (src/hash/short.c): a side with no table keeps
 * its entries, wildcard receives included, in order in a vector; the append that finds it
 * full moves them into a table.  MPI order across the move (wildcards first among them), no
 * table and no memory while a side stays short, the table given back after quiet traffic
 * with the side empty (and kept while an entry waits), the vector closed up when its oldest
 * entries went first, probes, cancels, and the same answers through vmatch_inline.h and the
 * library's calls.  test_diff, fuzz_ops and test_inline drive it on random streams. */
#include "check.h"
#include "vmatch_inline.h"

#include <stdio.h>

#define ALL (~(vmatch_bits_t)0)

/* One scenario's calls: the inline header's, or the library's. */
typedef struct calls {
    int inl;
    vmatch_engine_t *e;
} calls_t;

static int post(calls_t *c, vmatch_bits_t bits, vmatch_bits_t care, void *req, void **out)
{
    return c->inl ? vmatch_inline_post(c->e, bits, care, 0, req, out)
                  : vmatch_post(c->e, bits, care, 0, req, out);
}

static int arrive(calls_t *c, vmatch_bits_t bits, void *msg, void **out)
{
    return c->inl ? vmatch_inline_arrive(c->e, bits, 0, msg, out)
                  : vmatch_arrive(c->e, bits, 0, msg, out);
}

static int probe(calls_t *c, vmatch_bits_t bits, vmatch_bits_t care, int remove, void **out)
{
    return c->inl ? vmatch_inline_probe(c->e, bits, care, 0, remove, out)
                  : vmatch_probe(c->e, bits, care, 0, remove, out);
}

static uint64_t stat_of(vmatch_engine_t *e, const char *key)
{
    uint64_t v = 0;
    CHECK_EQ(vmatch_stat(e, key, &v), VMATCH_OK);
    return v;
}

static calls_t make(const char *spec, int inl)
{
    calls_t c = {inl, NULL};
    REQUIRE(vmatch_inline_create(spec, &c.e) == VMATCH_OK);
    return c;
}

/* While a side holds at most hash.short entries it makes no table and takes no memory; the
 * next entry makes the table. */
static void test_no_table(int inl)
{
    calls_t c = make("policy=hash", inl);
    vmatch_stats_t st0, st;
    int m[9];
    void *got;
    vmatch_stats(c.e, &st0);
    for (int i = 0; i < VMATCH_SHORT_MAX; i++)
        CHECK_EQ(arrive(&c, (vmatch_bits_t)i, &m[i], &got), VMATCH_QUEUED);
    vmatch_stats(c.e, &st);
    CHECK_EQ(st.unexpected, VMATCH_SHORT_MAX);
    CHECK_EQ(st.bytes, st0.bytes);
    CHECK_EQ(stat_of(c.e, "hash.table_buckets"), 0);
    CHECK_EQ(arrive(&c, 99, &m[8], &got), VMATCH_QUEUED);
    CHECK(stat_of(c.e, "hash.table_buckets") > 0);
    for (int i = VMATCH_SHORT_MAX - 1; i >= 0; i--) { /* newest first: any place */
        CHECK_EQ(post(&c, (vmatch_bits_t)i, ALL, &m[i], &got), VMATCH_MATCHED);
        CHECK(got == &m[i]);
    }
    CHECK_EQ(post(&c, 99, ALL, &m[0], &got), VMATCH_MATCHED);
    CHECK(got == &m[8]);
    vmatch_stats(c.e, &st);
    CHECK_EQ(st.unexpected + st.posted, 0);
    vmatch_destroy(c.e);
}

/* Entries moved into the table keep their order with the one that made it, and entries that
 * come once the table exists go there, after them: receives T and B match in that order. */
static void test_table_keeps_order(int inl)
{
    calls_t c = make("policy=hash", inl);
    int r[VMATCH_SHORT_MAX], t, b, m;
    void *got;
    for (int i = 0; i < VMATCH_SHORT_MAX; i++) /* the vector: bits 1 .. 8 */
        CHECK_EQ(post(&c, (vmatch_bits_t)i + 1, ALL, &r[i], &got), VMATCH_QUEUED);
    CHECK_EQ(post(&c, 50, ALL, &t, &got), VMATCH_QUEUED); /* the table */
    for (int i = 0; i < VMATCH_SHORT_MAX; i++) {
        CHECK_EQ(arrive(&c, (vmatch_bits_t)i + 1, &m, &got), VMATCH_MATCHED);
        CHECK(got == &r[i]);
    }
    CHECK_EQ(post(&c, 50, ALL, &b, &got), VMATCH_QUEUED); /* the table, after T */
    CHECK_EQ(arrive(&c, 50, &m, &got), VMATCH_MATCHED);
    CHECK(got == &t);
    CHECK_EQ(arrive(&c, 50, &m, &got), VMATCH_MATCHED);
    CHECK(got == &b);
    /* the table empty again: it stays until quiet windows pass (test_back_to_short) */
    uint64_t nb = stat_of(c.e, "hash.table_buckets");
    CHECK_EQ(post(&c, 51, ALL, &b, &got), VMATCH_QUEUED);
    CHECK_EQ(stat_of(c.e, "hash.table_buckets"), nb);
    CHECK_EQ(arrive(&c, 51, &m, &got), VMATCH_MATCHED);
    CHECK(got == &b);
    vmatch_destroy(c.e);
}

/* A wildcard receive is older than the exact ones after it, in the vector and once moved into
 * the table (where it goes to the wildcard queue). */
static void test_wildcards(int inl)
{
    calls_t c = make("policy=hash", inl);
    int w, r[VMATCH_SHORT_MAX], m;
    void *got;
    CHECK_EQ(post(&c, 0, 0, &w, &got), VMATCH_QUEUED); /* matches every message */
    for (int i = 0; i < VMATCH_SHORT_MAX; i++)         /* the last moves them all */
        CHECK_EQ(post(&c, 7, ALL, &r[i], &got), VMATCH_QUEUED);
    CHECK(stat_of(c.e, "hash.table_buckets") > 0);
    CHECK_EQ(arrive(&c, 7, &m, &got), VMATCH_MATCHED);
    CHECK(got == &w);
    for (int i = 0; i < VMATCH_SHORT_MAX; i++) {
        CHECK_EQ(arrive(&c, 7, &m, &got), VMATCH_MATCHED);
        CHECK(got == &r[i]);
    }
    CHECK_EQ(arrive(&c, 7, &m, &got), VMATCH_QUEUED);
    /* a wildcard post takes the oldest message of a short side */
    int m2;
    CHECK_EQ(arrive(&c, 8, &m2, &got), VMATCH_QUEUED);
    CHECK_EQ(post(&c, 8, 0, &w, &got), VMATCH_MATCHED);
    CHECK(got == &m);
    CHECK_EQ(post(&c, 0, 0, &w, &got), VMATCH_MATCHED);
    CHECK(got == &m2);
    vmatch_destroy(c.e);
}

/* Probes that leave the message queued and that take it, exact and wildcard; a cancel from
 * the middle of the vector. */
static void test_probe_cancel(int inl)
{
    calls_t c = make("policy=hash", inl);
    int m[3], r[3];
    void *got;
    vmatch_bits_t bits[3] = {3, 4, 3};
    for (int i = 0; i < 3; i++)
        CHECK_EQ(arrive(&c, bits[i], &m[i], &got), VMATCH_QUEUED);
    CHECK_EQ(probe(&c, 3, ALL, 0, &got), VMATCH_MATCHED);
    CHECK(got == &m[0]);
    CHECK_EQ(probe(&c, 9, ALL, 0, &got), VMATCH_ENOTFOUND);
    CHECK_EQ(probe(&c, 4, 0, 0, &got), VMATCH_MATCHED); /* any: the oldest */
    CHECK(got == &m[0]);
    CHECK_EQ(probe(&c, 3, ALL, 1, &got), VMATCH_MATCHED);
    CHECK(got == &m[0]);
    CHECK_EQ(probe(&c, 3, ALL, 1, &got), VMATCH_MATCHED);
    CHECK(got == &m[2]);
    CHECK_EQ(probe(&c, 0, 0, 1, &got), VMATCH_MATCHED);
    CHECK(got == &m[1]);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(post(&c, 6, ALL, &r[i], &got), VMATCH_QUEUED);
    CHECK_EQ(vmatch_cancel(c.e, &r[1]), VMATCH_OK);
    CHECK_EQ(vmatch_cancel(c.e, &r[1]), VMATCH_ENOTFOUND);
    CHECK_EQ(arrive(&c, 6, &m[0], &got), VMATCH_MATCHED);
    CHECK(got == &r[0]);
    CHECK_EQ(arrive(&c, 6, &m[0], &got), VMATCH_MATCHED);
    CHECK(got == &r[2]);
    vmatch_destroy(c.e);
}

/* A vector of three whose oldest entries went first is closed up, not left for the table;
 * hash.short=0 makes the table at the first entry; a bound past VMATCH_SHORT_MAX is
 * refused. */
static void test_bounds(int inl)
{
    calls_t c = make("policy=hash hash.short=3", inl);
    int r[5], m;
    void *got;
    for (int i = 0; i < 3; i++)
        CHECK_EQ(post(&c, (vmatch_bits_t)i, ALL, &r[i], &got), VMATCH_QUEUED);
    CHECK_EQ(arrive(&c, 0, &m, &got), VMATCH_MATCHED);
    CHECK_EQ(post(&c, 3, ALL, &r[3], &got), VMATCH_QUEUED); /* closed up */
    CHECK_EQ(stat_of(c.e, "hash.table_buckets"), 0);
    CHECK_EQ(post(&c, 4, ALL, &r[4], &got), VMATCH_QUEUED); /* the table */
    CHECK(stat_of(c.e, "hash.table_buckets") > 0);
    for (int i = 1; i < 5; i++) {
        CHECK_EQ(arrive(&c, (vmatch_bits_t)i, &m, &got), VMATCH_MATCHED);
        CHECK(got == &r[i]);
    }
    vmatch_destroy(c.e);
    c = make("policy=hash hash.short=0", inl);
    CHECK_EQ(post(&c, 1, ALL, &r[0], &got), VMATCH_QUEUED);
    CHECK(stat_of(c.e, "hash.table_buckets") > 0);
    vmatch_destroy(c.e);
    char spec[64];
    snprintf(spec, sizeof spec, "policy=hash hash.short=%d", VMATCH_SHORT_MAX + 1);
    vmatch_engine_t *e = NULL;
    CHECK_EQ(vmatch_create(spec, &e), VMATCH_EINVAL);
    CHECK(e == NULL);
}

/* A burst makes a table; after quiet traffic the table is given back (a shrink counted), the
 * entry that waited through it all moved to the vector in order, and memory is back where it
 * started; a side that keeps more than hash.short entries keeps a table. */
static void test_back_to_short(int inl)
{
    calls_t c = make("policy=hash hash.shrink=64", inl);
    vmatch_stats_t st0, st;
    static int r[600];
    int m, keep[VMATCH_SHORT_MAX + 1];
    void *got;
    vmatch_stats(c.e, &st0);
    for (int i = 0; i < 600; i++)
        CHECK_EQ(post(&c, (vmatch_bits_t)i, ALL, &r[i], &got), VMATCH_QUEUED);
    CHECK(stat_of(c.e, "hash.table_buckets") >= 512);
    for (int i = 0; i < 600; i++) {
        CHECK_EQ(arrive(&c, (vmatch_bits_t)i, &m, &got), VMATCH_MATCHED);
        CHECK(got == &r[i]);
    }
    for (int i = 0; i < 2000; i++) { /* quiet pairs on the short side */
        CHECK_EQ(post(&c, 7, ALL, &r[0], &got), VMATCH_QUEUED);
        CHECK_EQ(arrive(&c, 7, &m, &got), VMATCH_MATCHED);
        CHECK(got == &r[0]);
    }
    CHECK_EQ(stat_of(c.e, "hash.table_buckets"), 0);
    CHECK(stat_of(c.e, "hash.shrinks") >= 1);
    vmatch_stats(c.e, &st);
    CHECK(st.bytes <= st0.bytes + 4096);
    /* kept through a burst and quiet traffic: 1 entry goes to the vector, 9 keep a table */
    for (int kept = 1; kept <= VMATCH_SHORT_MAX + 1; kept += VMATCH_SHORT_MAX) {
        for (int i = 0; i < 600; i++)
            CHECK_EQ(post(&c, (vmatch_bits_t)i, ALL, &r[i], &got), VMATCH_QUEUED);
        for (int k = 0; k < kept; k++)
            CHECK_EQ(post(&c, 9999, ALL, &keep[k], &got), VMATCH_QUEUED);
        for (int i = 0; i < 600; i++)
            CHECK_EQ(arrive(&c, (vmatch_bits_t)i, &m, &got), VMATCH_MATCHED);
        for (int i = 0; i < 2000; i++) {
            CHECK_EQ(post(&c, 7, ALL, &r[0], &got), VMATCH_QUEUED);
            CHECK_EQ(arrive(&c, 7, &m, &got), VMATCH_MATCHED);
        }
        CHECK_EQ(stat_of(c.e, "hash.table_buckets") > 0, kept > VMATCH_SHORT_MAX);
        for (int k = 0; k < kept; k++) {
            CHECK_EQ(arrive(&c, 9999, &m, &got), VMATCH_MATCHED);
            CHECK(got == &keep[k]);
        }
    }
    vmatch_destroy(c.e);
}

int main(void)
{
    for (int inl = 0; inl < 2; inl++) {
        test_no_table(inl);
        test_table_keeps_order(inl);
        test_wildcards(inl);
        test_probe_cancel(inl);
        test_bounds(inl);
        test_back_to_short(inl);
    }
    return check_report("test_short");
}
