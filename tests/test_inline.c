/* test_inline.c -- vmatch_inline.h by hand: the version check (a header of another version is
 * refused at create and never read on a call), which engines run the inline part, MPI order
 * where inline and library calls meet (wildcards, overflowing buckets, the split calls), and
 * the same answers and statistics as the library's calls on one stream.  test_diff and
 * fuzz_ops drive the inline calls on their random streams too. */
#include "check.h"
#include "vmatch_inline.h"

#include <stdio.h>
#include <string.h>

#define ALL (~(vmatch_bits_t)0)

static vmatch_engine_t *make(const char *spec)
{
    vmatch_engine_t *e = NULL;
    int rc = vmatch_inline_create(spec, &e);
    if (rc != VMATCH_OK)
        fprintf(stderr, "vmatch_inline_create(\"%s\") = %d: %s\n", spec, rc,
                vmatch_last_error());
    REQUIRE(rc == VMATCH_OK && e != NULL);
    return e;
}

static vmatch_hot_t *hot(vmatch_engine_t *e)
{
    return (vmatch_hot_t *)(void *)e;
}

/* A header of another version: refused at create, with a message, and no engine. */
static void test_version(void)
{
    CHECK_EQ(vmatch_inline_abi(), VMATCH_INLINE_ABI);
    vmatch_engine_t *e = (vmatch_engine_t *)&e; /* must stay as it is */
    CHECK_EQ(vmatch_create_abi("", VMATCH_INLINE_ABI + 1, &e), VMATCH_EINVAL);
    CHECK(e == (vmatch_engine_t *)&e);
    CHECK(strstr(vmatch_last_error(), "vmatch_inline.h") != NULL);
    CHECK(strstr(vmatch_last_error(), "rebuild") != NULL);
    CHECK_EQ(vmatch_create_abi("policy=nope", VMATCH_INLINE_ABI, &e), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create_abi("", VMATCH_INLINE_ABI, NULL), VMATCH_EINVAL);
}

/* The inline part runs on a single-threaded policy=hash engine without profile.record; on
 * every other engine the first word says 0 and the inline calls are the library's. */
static void test_which_engines(void)
{
    static const char *const on[] = {"", "policy=hash storage=lla", "policy=hash storage=ll",
                                     "policy=hash hash.buckets=64", "policy=hash hash.short=0"};
    static const char *const off[] = {"threads=mutex", "threads=multi", "policy=single",
                                      "policy=single storage=llv", "profile.record=on"};
    for (size_t i = 0; i < sizeof on / sizeof *on; i++) {
        vmatch_engine_t *e = make(on[i]);
        CHECK_EQ(hot(e)->abi, VMATCH_INLINE_ABI);
        CHECK(hot(e)->side[0] != NULL && hot(e)->side[1] != NULL);
        vmatch_destroy(e);
    }
    for (size_t i = 0; i < sizeof off / sizeof *off; i++) {
        vmatch_engine_t *e = make(off[i]);
        CHECK_EQ(hot(e)->abi, 0);
        int r, m;
        void *got = NULL;
        CHECK_EQ(vmatch_inline_post(e, 5, ALL, 0, &r, &got), VMATCH_QUEUED);
        CHECK_EQ(vmatch_inline_match_posted(e, 6, 0, &got), VMATCH_ENOTFOUND);
        CHECK_EQ(vmatch_inline_enqueue_unexpected(e, 6, 0, &m), VMATCH_QUEUED);
        CHECK_EQ(vmatch_inline_arrive(e, 5, 0, &m, &got), VMATCH_MATCHED);
        CHECK(got == &r);
        CHECK_EQ(vmatch_inline_post(e, 6, ALL, 0, &r, &got), VMATCH_MATCHED);
        CHECK(got == &m);
        vmatch_destroy(e);
    }
}

/* An engine whose first word is not this header's version is never read further: its
 * published pointers are poisoned here, and the inline calls still answer right (through the
 * library). */
static void test_gate(void)
{
    vmatch_engine_t *e = make("");
    int r[4], m[4];
    void *got = NULL;
    for (int i = 0; i < 4; i++)
        CHECK_EQ(vmatch_inline_post(e, (vmatch_bits_t)i, ALL, 0, &r[i], &got), VMATCH_QUEUED);
    vmatch_hot_t saved = *hot(e);
    hot(e)->abi = VMATCH_INLINE_ABI + 1;
    hot(e)->side[0] = hot(e)->side[1] = NULL;
    for (int i = 3; i >= 0; i--) {
        CHECK_EQ(vmatch_inline_arrive(e, (vmatch_bits_t)i, 0, &m[i], &got), VMATCH_MATCHED);
        CHECK(got == &r[i]);
    }
    CHECK_EQ(vmatch_inline_enqueue_unexpected(e, 9, 0, &m[0]), VMATCH_QUEUED);
    CHECK_EQ(vmatch_inline_match_posted(e, 9, 0, &got), VMATCH_ENOTFOUND);
    hot(e)->abi = saved.abi;
    hot(e)->side[0] = saved.side[0];
    hot(e)->side[1] = saved.side[1];
    CHECK_EQ(vmatch_inline_post(e, 9, ALL, 0, &r[0], &got), VMATCH_MATCHED);
    CHECK(got == &m[0]);
    vmatch_destroy(e);
}

/* MPI order where the inline calls meet the library's: a wildcard receive posted between
 * exact ones, a bucket that overflowed (a fixed table of one bucket), the split arrival. */
static void test_order(void)
{
    static const char *const specs[] = {"", "hash.buckets=1", "storage=lla hash.buckets=1",
                                        "hash.short=0", "hash.buckets=1 hash.short=0"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        vmatch_engine_t *e = make(specs[s]);
        int r[8], m[8];
        void *got = NULL;
        /* exact, wildcard (library), exact: messages take them in posting order */
        CHECK_EQ(vmatch_inline_post(e, 7, ALL, 0, &r[0], &got), VMATCH_QUEUED);
        CHECK_EQ(vmatch_post(e, 0, 0, 0, &r[1], &got), VMATCH_QUEUED);
        CHECK_EQ(vmatch_inline_post(e, 7, ALL, 0, &r[2], &got), VMATCH_QUEUED);
        for (int i = 0; i < 3; i++) {
            CHECK_EQ(vmatch_inline_arrive(e, 7, 0, &m[i], &got), VMATCH_MATCHED);
            CHECK(got == &r[i]);
        }
        /* more entries than a line holds, in one bucket or many: oldest first */
        for (int i = 0; i < 8; i++)
            CHECK_EQ(vmatch_inline_enqueue_unexpected(e, (vmatch_bits_t)(i & 1), 0, &m[i]),
                     VMATCH_QUEUED);
        for (int i = 0; i < 8; i++) {
            CHECK_EQ(vmatch_inline_post(e, (vmatch_bits_t)(i & 1), ALL, 0, &r[0], &got),
                     VMATCH_MATCHED);
            CHECK(got == &m[i]); /* m[i] is the oldest with bits i & 1 */
        }
        for (int i = 0; i < 8; i++)
            CHECK_EQ(vmatch_inline_post(e, 3, ALL, 0, &r[i], &got), VMATCH_QUEUED);
        for (int i = 0; i < 8; i++) {
            CHECK_EQ(vmatch_inline_match_posted(e, 3, 0, &got), VMATCH_MATCHED);
            CHECK(got == &r[i]);
        }
        CHECK_EQ(vmatch_inline_match_posted(e, 3, 0, &got), VMATCH_ENOTFOUND);
        vmatch_stats_t st;
        vmatch_stats(e, &st);
        CHECK_EQ(st.posted + st.unexpected, 0);
        vmatch_destroy(e);
    }
}

/* One stream through the inline calls on one engine and the library's on another: the same
 * answers, and the same statistics after every call. */
static void test_same_as_library(void)
{
    vmatch_engine_t *a = make(""), *b = make("");
    enum { N = 20000 };
    static char tok[N];
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        vmatch_bits_t bits = x % 61, care = x % 97 == 0 ? ALL << 4 : ALL;
        void *ga = NULL, *gb = NULL;
        int ra, rb;
        switch ((x >> 20) % 6) {
        case 0:
            ra = vmatch_inline_post(a, bits, care, 0, &tok[i], &ga);
            rb = vmatch_post(b, bits, care, 0, &tok[i], &gb);
            break;
        case 1:
            ra = vmatch_inline_arrive(a, bits, 0, &tok[i], &ga);
            rb = vmatch_arrive(b, bits, 0, &tok[i], &gb);
            break;
        case 2:
            ra = vmatch_inline_match_posted(a, bits, 0, &ga);
            rb = vmatch_match_posted(b, bits, 0, &gb);
            break;
        case 3:
            ra = vmatch_inline_enqueue_unexpected(a, bits, 0, &tok[i]);
            rb = vmatch_enqueue_unexpected(b, bits, 0, &tok[i]);
            break;
        case 4:
            ra = vmatch_inline_probe(a, bits, care, 0, (x >> 30) & 1, &ga);
            rb = vmatch_probe(b, bits, care, 0, (x >> 30) & 1, &gb);
            break;
        default:
            ra = vmatch_inline_enqueue_posted(a, bits, care, 0, &tok[i]);
            rb = vmatch_enqueue_posted(b, bits, care, 0, &tok[i]);
        }
        CHECK_EQ(ra, rb);
        CHECK(ga == gb);
        vmatch_stats_t sa, sb;
        vmatch_stats(a, &sa);
        vmatch_stats(b, &sb);
        if (memcmp(&sa, &sb, sizeof sa) != 0) {
            CHECK(!"the inline calls' statistics differ from the library's");
            break;
        }
    }
    vmatch_destroy(a);
    vmatch_destroy(b);
}

/* Wildcard receives waiting in a table's vector (VMATCH_SLOW_WILD): exact arrivals and
 * posted-receive takes through the inline calls on one engine and the library's on
 * another, with the posted receives kept long enough for a table: the same answers and
 * statistics, the older of a line's match and the vector's taken, and a bucket that
 * overflowed left to the library (one bucket). */
static void test_wild_vector(void)
{
    static const char *const specs[] = {"", "hash.buckets=1", "hash.short=0"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        vmatch_engine_t *a = make(specs[s]), *b = make(specs[s]);
        enum { N = 20000 };
        static char tok[N];
        uint64_t x = 2463534242ull + s, inline_wild = 0;
        for (int i = 0; i < N; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            vmatch_bits_t bits = (x >> 8) % 23;
            vmatch_stats_t sa, sb;
            vmatch_stats(a, &sa);
            unsigned k = (unsigned)(x % 16), longq = sa.posted > 40;
            void *ga = NULL, *gb = NULL;
            int ra, rb;
            if (k < 6 - 2 * longq) { /* exact receives */
                ra = vmatch_inline_post(a, bits, ALL, 0, &tok[i], &ga);
                rb = vmatch_post(b, bits, ALL, 0, &tok[i], &gb);
            } else if (k < 8 - 2 * longq) { /* wildcards: any bits, or the low 3 */
                vmatch_bits_t care = (x >> 20) % 3 ? ALL << 3 : 0;
                ra = vmatch_inline_post(a, bits, care, 0, &tok[i], &ga);
                rb = vmatch_post(b, bits, care, 0, &tok[i], &gb);
            } else {
                inline_wild += hot(a)->side[0]->slow == VMATCH_SLOW_WILD;
                if (k < 13) {
                    ra = vmatch_inline_arrive(a, bits, 0, &tok[i], &ga);
                    rb = vmatch_arrive(b, bits, 0, &tok[i], &gb);
                } else {
                    ra = vmatch_inline_match_posted(a, bits, 0, &ga);
                    rb = vmatch_match_posted(b, bits, 0, &gb);
                }
            }
            CHECK_EQ(ra, rb);
            CHECK(ga == gb);
            vmatch_stats(a, &sa);
            vmatch_stats(b, &sb);
            if (memcmp(&sa, &sb, sizeof sa) != 0) {
                CHECK(!"the inline calls' statistics differ from the library's");
                break;
            }
        }
        printf("test_inline: %s: %llu exact searches with wildcard receives in the vector\n",
               specs[s], (unsigned long long)inline_wild);
        CHECK(inline_wild > 1000);
        vmatch_destroy(a);
        vmatch_destroy(b);
    }
}

/* The inline packing is the library's, for every layout, wildcards included. */
static void test_packing(void)
{
    static const char *const specs[] = {"", "layout=ompi-ucx", "layout=mpich-ucx",
                                        "layout.ctx=12 layout.src=20 layout.tag=28"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        vmatch_engine_t *e = NULL;
        if (vmatch_inline_create(specs[s], &e) != VMATCH_OK) {
            CHECK(!"a layout of the packing test was refused");
            fprintf(stderr, "  \"%s\": %s\n", specs[s], vmatch_last_error());
            continue;
        }
        uint64_t x = 0x9E3779B97F4A7C15ull * (s + 1);
        for (int i = 0; i < 4000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t ctx = (uint32_t)(x & 0xffff);
            int32_t src = i % 7 == 0 ? VMATCH_ANY_SOURCE : (int32_t)((x >> 16) & 0xfffff);
            int32_t tag = i % 5 == 0 ? VMATCH_ANY_TAG : (int32_t)((x >> 36) & 0x7ffffff);
            vmatch_bits_t b1, c1, b2, c2;
            vmatch_inline_mpi_recv(e, ctx, src, tag, &b1, &c1);
            vmatch_mpi_recv(e, ctx, src, tag, &b2, &c2);
            CHECK(b1 == b2 && c1 == c2);
            CHECK(vmatch_inline_mpi_msg(e, ctx, src & 0xfffff, tag & 0x7ffffff) ==
                  vmatch_mpi_msg(e, ctx, src & 0xfffff, tag & 0x7ffffff));
        }
        vmatch_destroy(e);
    }
}

int main(void)
{
    test_version();
    test_which_engines();
    test_gate();
    test_order();
    test_same_as_library();
    test_wild_vector();
    test_packing();
    return check_report("test_inline");
}
