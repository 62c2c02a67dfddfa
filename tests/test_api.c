/* test_api.c -- the public API by hand: NULL arguments, error names, collective classes,
 * statistics and figures by key, the detail of the last failure, and the MPI ordering rules
 * on small scenarios. */
/* pthreads are POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "hooks.h"
#include "vmatch.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Distinct handles: only their addresses matter. */
static int r1, r2, r3, m1, m2, m3;

/** Create an engine from spec, which must work. */
static vmatch_engine_t *make(const char *spec)
{
    vmatch_engine_t *e = NULL;
    int rc = vmatch_create(spec, &e);
    if (rc != VMATCH_OK)
        fprintf(stderr, "vmatch_create(\"%s\") = %d: %s\n", spec, rc, vmatch_last_error());
    REQUIRE(rc == VMATCH_OK && e != NULL);
    return e;
}

/** Exact receive / message bits for <ctx 0, src, tag>. */
static void recv_of(vmatch_engine_t *e, int32_t src, int32_t tag, vmatch_bits_t *b,
                    vmatch_bits_t *c)
{
    REQUIRE(vmatch_mpi_pack(e, 0, src, tag, b, c) == VMATCH_OK);
}

/** Message bits for <ctx 0, src, tag>. */
static vmatch_bits_t msg_of(vmatch_engine_t *e, int32_t src, int32_t tag)
{
    vmatch_bits_t b = 0;
    REQUIRE(vmatch_mpi_pack(e, 0, src, tag, &b, NULL) == VMATCH_OK);
    return b;
}

/** True when e holds exactly np posted receives and nu unexpected messages. */
static int lengths_are(const vmatch_engine_t *e, uint64_t np, uint64_t nu)
{
    vmatch_stats_t st;
    vmatch_stats(e, &st);
    if (st.posted != np || st.unexpected != nu)
        fprintf(stderr, "stats posted=%llu unexpected=%llu, want %llu/%llu\n",
                (unsigned long long)st.posted, (unsigned long long)st.unexpected,
                (unsigned long long)np, (unsigned long long)nu);
    return st.posted == np && st.unexpected == nu;
}

/** Every call refuses a NULL engine. */
static void test_null_engine(void)
{
    vmatch_stats_t st;
    vmatch_bits_t b = 7, c = 9;
    void *out = &r3;
    CHECK_EQ(vmatch_post(NULL, 0, 0, 0, &r1, &out), VMATCH_EINVAL);
    CHECK_EQ(vmatch_arrive(NULL, 0, 0, &m1, &out), VMATCH_EINVAL);
    CHECK_EQ(vmatch_probe(NULL, 0, 0, 0, 0, &out), VMATCH_EINVAL);
    CHECK_EQ(vmatch_probe(NULL, 0, 0, 0, 1, &out), VMATCH_EINVAL);
    CHECK_EQ(vmatch_cancel(NULL, &r1), VMATCH_EINVAL);
    CHECK_EQ(vmatch_remove_unexpected(NULL, &m1), VMATCH_EINVAL);
    CHECK_EQ(vmatch_mpi_pack(NULL, 0, 0, 0, &b, &c), VMATCH_EINVAL);
    CHECK_EQ(vmatch_mpi_pack(NULL, 0, 0, 0, &b, NULL), VMATCH_EINVAL);
    CHECK(b == 7 && c == 9);
    CHECK(out == &r3);
    CHECK_EQ(vmatch_profile_save(NULL, "/tmp/vmatch-test-api.prof"), VMATCH_EINVAL);
    CHECK_EQ(vmatch_coll_class(NULL, VMATCH_COLL_BCAST, 64, 4), 0);
    CHECK(strstr(vmatch_last_error(), "coll_class") != NULL);
    uint32_t cls = 77;
    CHECK_EQ(vmatch_coll_class_get(NULL, VMATCH_COLL_BCAST, 64, 4, &cls), VMATCH_EINVAL);
    CHECK_EQ(cls, 0);
    uint64_t v = 5;
    CHECK_EQ(vmatch_stat(NULL, "posted", &v), VMATCH_EINVAL);
    CHECK_EQ(v, 5);
    CHECK_EQ(vmatch_stat_struct(NULL, "unified.class", 0, &st, sizeof st), VMATCH_EINVAL);
    memset(&st, 0xab, sizeof st);
    vmatch_stats(NULL, &st);
    CHECK(st.posted == 0 && st.unexpected == 0 && st.searches == 0 && st.inspected == 0);
    CHECK(st.queues == 0 && st.bytes == 0);
    vmatch_destroy(NULL);
    CHECK(vmatch_last_error()[0] != '\0');
}

/** NULL handles and result pointers are refused, and refusing changes nothing even when a
 * match was waiting. */
static void test_null_args(void)
{
    vmatch_engine_t *e = make("");
    vmatch_bits_t b, c, mb = msg_of(e, 3, 4), pb = 11, pc = 13;
    void *out = &r3;
    recv_of(e, 3, 4, &b, &c);

    /* One message waiting that a post would take. */
    CHECK_EQ(vmatch_arrive(e, mb, 0, &m1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_post(e, b, c, 0, NULL, &out), VMATCH_EINVAL);
    CHECK_EQ(vmatch_post(e, b, c, 0, &r1, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_probe(e, b, c, 0, 1, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_probe(e, b, c, 0, 0, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_remove_unexpected(e, NULL), VMATCH_EINVAL);
    CHECK(lengths_are(e, 0, 1));
    CHECK(out == &r3);

    /* One receive waiting that an arrival would take. */
    CHECK_EQ(vmatch_probe(e, b, c, 0, 1, &out), VMATCH_MATCHED);
    CHECK(out == &m1);
    out = &r3;
    CHECK_EQ(vmatch_post(e, b, c, 0, &r1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, mb, 0, NULL, &out), VMATCH_EINVAL);
    CHECK_EQ(vmatch_arrive(e, mb, 0, &m2, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_cancel(e, NULL), VMATCH_EINVAL);
    CHECK(lengths_are(e, 1, 0));
    CHECK(out == &r3);

    /* Still intact: the arrival takes the receive. */
    CHECK_EQ(vmatch_arrive(e, mb, 0, &m2, &out), VMATCH_MATCHED);
    CHECK(out == &r1);
    CHECK(lengths_are(e, 0, 0));

    CHECK_EQ(vmatch_mpi_pack(e, 0, 1, 1, NULL, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_mpi_pack(e, 0, 1, 1, NULL, &pc), VMATCH_EINVAL);
    CHECK(pb == 11 && pc == 13);
    CHECK_EQ(vmatch_profile_save(e, NULL), VMATCH_EINVAL);
    /* Any layout pointer may be NULL. */
    vmatch_layout(e, NULL, NULL, NULL);
    CHECK(vmatch_describe(e) != NULL && vmatch_describe(e)[0] != '\0');
    vmatch_destroy(e);
}

/** Every code has its own name, unknown codes too. */
static void test_strerror(void)
{
    const int codes[] = {VMATCH_OK,
                         VMATCH_EINVAL,
                         VMATCH_ENOMEM,
                         VMATCH_ENOTFOUND,
                         VMATCH_EUNSUPPORTED,
                         VMATCH_EIO,
                         -99};
    const char *const names[] = {NULL,           "EINVAL", "ENOMEM", "ENOTFOUND",
                                 "EUNSUPPORTED", "EIO",    NULL};
    const size_t n = sizeof codes / sizeof *codes;
    size_t i, j;
    for (i = 0; i < n; i++) {
        const char *s = vmatch_strerror(codes[i]);
        CHECK(s != NULL && s[0] != '\0');
        if (!s)
            continue;
        if (names[i])
            CHECK(strstr(s, names[i]) != NULL);
        for (j = 0; j < i; j++)
            CHECK(strcmp(s, vmatch_strerror(codes[j])) != 0);
    }
    /* 0 is VMATCH_OK and VMATCH_QUEUED both, and its text says so. */
    CHECK_EQ(VMATCH_QUEUED, VMATCH_OK);
    CHECK(strstr(vmatch_strerror(VMATCH_QUEUED), "VMATCH_OK") != NULL);
    CHECK(strstr(vmatch_strerror(VMATCH_QUEUED), "VMATCH_QUEUED") != NULL);
    CHECK(strstr(vmatch_strerror(VMATCH_MATCHED), "VMATCH_MATCHED") != NULL);
    CHECK(strstr(vmatch_strerror(VMATCH_DEFERRED), "VMATCH_DEFERRED") != NULL);
    CHECK(vmatch_strerror(12345) != NULL);
    CHECK(vmatch_strerror(INT32_MIN) != NULL);
}

/** Class ids: dense from 1 in first-seen order, stable, size classes by bit length. */
static void test_coll_class(void)
{
    vmatch_engine_t *e = make(""), *f = make("");
    uint32_t i;
    int dense = 1;
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 1000, 16), 1);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 1023, 16), 1);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 512, 16), 1);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 1024, 16), 2);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 511, 16), 3);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_REDUCE, 1000, 16), 4);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 1000, 17), 5);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 0, 16), 6);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 1, 16), 7);
    CHECK_EQ(vmatch_coll_class(e, 12345, UINT64_MAX, UINT32_MAX), 8);
    CHECK_EQ(vmatch_coll_class(e, 12345, (uint64_t)1 << 63, UINT32_MAX), 8);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 1000, 16), 1);
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 0, 16), 6);
    /* Engines keep their own tables. */
    CHECK_EQ(vmatch_coll_class(f, VMATCH_COLL_REDUCE, 1000, 16), 1);
    /* Many classes stay dense; the table grows. */
    for (i = 0; i < 2000; i++)
        dense &= vmatch_coll_class(f, VMATCH_COLL_ALLTOALL, 8, i + 1) == i + 2;
    CHECK(dense);
    CHECK_EQ(vmatch_coll_class(f, VMATCH_COLL_ALLTOALL, 15, 1000), 1001);
    vmatch_destroy(f);
    vmatch_destroy(e);
}

/** MPI ordering on hand-made cases. */
static void test_order(void)
{
    vmatch_engine_t *e = make("");
    vmatch_bits_t b, c, wb, wc, mb = msg_of(e, 5, 9);
    void *out = NULL;
    recv_of(e, 5, 9, &b, &c);
    REQUIRE(vmatch_mpi_pack(e, 0, VMATCH_ANY_SOURCE, 9, &wb, &wc) == VMATCH_OK);

    /* Two receives that match one message: the earlier one wins, wildcard or not. */
    CHECK_EQ(vmatch_post(e, wb, wc, 0, &r1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_post(e, b, c, 0, &r2, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, mb, 0, &m1, &out), VMATCH_MATCHED);
    CHECK(out == &r1);
    CHECK_EQ(vmatch_arrive(e, mb, 0, &m2, &out), VMATCH_MATCHED);
    CHECK(out == &r2);
    CHECK(lengths_are(e, 0, 0));

    /* Two messages that match one receive: the older one wins. */
    CHECK_EQ(vmatch_arrive(e, mb, 0, &m1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, msg_of(e, 6, 9), 0, &m2, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_post(e, wb, wc, 0, &r1, &out), VMATCH_MATCHED);
    CHECK(out == &m1);
    /* A probe without remove leaves the message; with remove it takes it. */
    CHECK_EQ(vmatch_probe(e, wb, wc, 0, 0, &out), VMATCH_MATCHED);
    CHECK(out == &m2);
    CHECK(lengths_are(e, 0, 1));
    CHECK_EQ(vmatch_probe(e, b, c, 0, 0, &out), VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_probe(e, wb, wc, 0, 1, &out), VMATCH_MATCHED);
    CHECK(out == &m2);
    CHECK(lengths_are(e, 0, 0));
    CHECK_EQ(vmatch_probe(e, wb, wc, 0, 1, &out), VMATCH_ENOTFOUND);

    /* A cancelled receive takes nothing: the message goes to the UMQ. */
    CHECK_EQ(vmatch_post(e, b, c, 0, &r3, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_cancel(e, &r3), VMATCH_OK);
    CHECK_EQ(vmatch_cancel(e, &r3), VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_arrive(e, mb, 0, &m3, &out), VMATCH_QUEUED);
    CHECK(lengths_are(e, 0, 1));
    /* Handles are looked up on their own side only. */
    CHECK_EQ(vmatch_cancel(e, &m3), VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_remove_unexpected(e, &m3), VMATCH_OK);
    CHECK_EQ(vmatch_remove_unexpected(e, &m3), VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_post(e, b, c, 0, &r3, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_remove_unexpected(e, &r3), VMATCH_ENOTFOUND);
    CHECK(lengths_are(e, 1, 0));

    /* A tag that differs does not match; the receive stays. */
    CHECK_EQ(vmatch_arrive(e, msg_of(e, 5, 10), 0, &m1, &out), VMATCH_QUEUED);
    CHECK(lengths_are(e, 1, 1));
    CHECK_EQ(vmatch_cancel(e, &r3), VMATCH_OK);
    CHECK_EQ(vmatch_remove_unexpected(e, &m1), VMATCH_OK);
    CHECK(lengths_are(e, 0, 0));
    vmatch_destroy(e);
}

/** Matching on raw bits and masks, with no MPI layout involved. */
static void test_raw_bits(void)
{
    vmatch_engine_t *e = make("");
    void *out = NULL;
    /* A receive that cares about the high nibble of the low byte only. */
    CHECK_EQ(vmatch_post(e, 0xf0, 0xf0, 0, &r1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, 0x0f, 0, &m1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, 0xff, 0, &m2, &out), VMATCH_MATCHED);
    CHECK(out == &r1);
    /* Bits outside care may differ anywhere, up to bit 63. */
    CHECK_EQ(vmatch_post(e, 0x100, 0x100, 0, &r2, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, 0x8000000000000100ull, 0, &m3, &out), VMATCH_MATCHED);
    CHECK(out == &r2);
    /* care 0 matches anything: the oldest message. */
    CHECK_EQ(vmatch_probe(e, 0x1234, 0, 0, 0, &out), VMATCH_MATCHED);
    CHECK(out == &m1);
    /* Bit 63 alone tells these apart. */
    CHECK_EQ(vmatch_probe(e, 0x8000000000000000ull, 0x8000000000000000ull, 0, 0, &out),
             VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_post(e, 0, ~0ull, 0, &r3, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_post(e, 0x0f, ~0ull, 0, &r1, &out), VMATCH_MATCHED);
    CHECK(out == &m1);
    CHECK(lengths_are(e, 1, 0));
    vmatch_destroy(e);
}

/** Collective classes route traffic without changing what matches. */
static void test_classes(void)
{
    vmatch_engine_t *e = make("");
    uint32_t k = vmatch_coll_class(e, VMATCH_COLL_ALLREDUCE, 8, 4);
    vmatch_bits_t b, c, mb;
    void *out = NULL;
    REQUIRE(k >= 1);
    REQUIRE(vmatch_mpi_pack(e, 7, 2, 3, &b, &c) == VMATCH_OK);
    REQUIRE(vmatch_mpi_pack(e, 7, 2, 3, &mb, NULL) == VMATCH_OK);
    CHECK_EQ(vmatch_post(e, b, c, k, &r1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, mb, k, &m1, &out), VMATCH_MATCHED);
    CHECK(out == &r1);
    CHECK_EQ(vmatch_arrive(e, mb, k, &m2, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_probe(e, b, c, k, 0, &out), VMATCH_MATCHED);
    CHECK(out == &m2);
    CHECK_EQ(vmatch_remove_unexpected(e, &m2), VMATCH_OK);
    CHECK_EQ(vmatch_post(e, b, c, k, &r2, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_cancel(e, &r2), VMATCH_OK);
    CHECK(lengths_are(e, 0, 0));
    vmatch_destroy(e);
}

/** The cumulative counters grow with the work done; bytes cover a live engine. */
static void test_counters(void)
{
    vmatch_engine_t *e = make("");
    vmatch_stats_t a, z;
    vmatch_bits_t b, c;
    void *out = NULL;
    int i;
    static int msgs[16];
    vmatch_stats(e, &a);
    CHECK(a.bytes > 0);
    CHECK(a.posted == 0 && a.unexpected == 0);
    for (i = 0; i < 16; i++)
        CHECK_EQ(vmatch_arrive(e, msg_of(e, i, 1), 0, &msgs[i], &out), VMATCH_QUEUED);
    recv_of(e, 15, 1, &b, &c);
    /* Finding the youngest of 16 messages compares against all of them. */
    CHECK_EQ(vmatch_probe(e, b, c, 0, 0, &out), VMATCH_MATCHED);
    CHECK(out == &msgs[15]);
    vmatch_stats(e, &z);
    CHECK(z.searches > a.searches);
    CHECK(z.inspected > a.inspected);
    CHECK(z.bytes > 0);
    CHECK(lengths_are(e, 0, 16));
    a = z;
    CHECK_EQ(vmatch_remove_unexpected(e, &msgs[7]), VMATCH_OK);
    CHECK_EQ(vmatch_cancel(e, &msgs[8]), VMATCH_ENOTFOUND);
    vmatch_stats(e, &z);
    CHECK(z.searches > a.searches);
    CHECK(z.inspected >= a.inspected);
    CHECK(lengths_are(e, 0, 15));
    vmatch_destroy(e);
}

/** An allocation failure leaves the engine as it was, and it works after. */
static void test_enomem(void)
{
    vmatch_engine_t *e = make("");
    vmatch_stats_t before, after;
    vmatch_bits_t b, c;
    void *out = NULL;
    int rc, i, failed = 0;
    static int reqs[4096];
    recv_of(e, 1, 2, &b, &c);
    /* Queue receives with every allocation failing until one fails (a pool may serve the
     * first ones from memory it took at creation). */
    vm_engine_mem(e)->fail_after = 0;
    for (i = 0; i < 4096 && !failed; i++) {
        vmatch_stats(e, &before);
        rc = vmatch_post(e, b, c, 0, &reqs[i], &out);
        CHECK(rc == VMATCH_QUEUED || rc == VMATCH_ENOMEM);
        failed = rc == VMATCH_ENOMEM;
    }
    vm_engine_mem(e)->fail_after = -1;
    CHECK(failed);
    /* Nothing was taken for the refused entry. */
    vmatch_stats(e, &after);
    CHECK_EQ(after.bytes, before.bytes);
    CHECK(lengths_are(e, (uint64_t)(i - 1), 0));
    /* The refused request was not queued, and the engine works again. */
    CHECK_EQ(vmatch_cancel(e, &reqs[i - 1]), VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_post(e, b, c, 0, &reqs[i - 1], &out), VMATCH_QUEUED);
    CHECK(lengths_are(e, (uint64_t)i, 0));
    CHECK_EQ(vmatch_arrive(e, msg_of(e, 1, 2), 0, &m1, &out), VMATCH_MATCHED);
    CHECK(out == &reqs[0]);
    vmatch_destroy(e);
}

/** A class table that cannot grow gives 0 (point-to-point), says why, and closes: every new
 * key gets 0 from then on, keys with an id keep it, so a key never gets two answers. */
static void test_coll_class_enomem(void)
{
    vmatch_engine_t *e = make("policy=unified nprocs=16");
    uint32_t ids[16], cls = 99;
    /* The table's first allocation holds 16 classes. */
    for (uint32_t i = 0; i < 16; i++)
        ids[i] = vmatch_coll_class(e, VMATCH_COLL_BCAST, 8, i + 1);
    CHECK_EQ(ids[0], 1);
    CHECK_EQ(ids[15], 16);
    vm_engine_mem(e)->fail_after = 0;
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BARRIER, 0, 8), 0);
    CHECK(strstr(vmatch_last_error(), "coll_class") != NULL);
    CHECK(strstr(vmatch_last_error(), "out of memory") != NULL);
    vm_engine_mem(e)->fail_after = -1;
    /* Memory is back; the key still gets 0, and the variant says why. */
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BARRIER, 0, 8), 0);
    CHECK_EQ(vmatch_coll_class_get(e, VMATCH_COLL_BARRIER, 0, 8, &cls), VMATCH_ENOMEM);
    CHECK_EQ(cls, 0);
    CHECK(strstr(vmatch_last_error(), "closed") != NULL);
    CHECK_EQ(vmatch_coll_class_get(e, VMATCH_COLL_REDUCE, 4, 2, &cls), VMATCH_ENOMEM);
    CHECK_EQ(cls, 0);
    /* Keys handed out before keep their ids; the variant succeeds on them. */
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_BCAST, 8, 16), 16);
    CHECK_EQ(vmatch_coll_class_get(e, VMATCH_COLL_BCAST, 8, 1, &cls), VMATCH_OK);
    CHECK_EQ(cls, ids[0]);
    CHECK_EQ(vmatch_coll_class_get(e, VMATCH_COLL_BCAST, 8, 1, NULL), VMATCH_EINVAL);
    /* The fallback class matches what it should: a receive and its message, both class 0. */
    vmatch_bits_t b, c;
    void *out = NULL;
    uint32_t k = vmatch_coll_class(e, VMATCH_COLL_BARRIER, 0, 8);
    recv_of(e, 1, 2, &b, &c);
    CHECK_EQ(vmatch_post(e, b, c, k, &r1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, msg_of(e, 1, 2), vmatch_coll_class(e, VMATCH_COLL_BARRIER, 0, 8),
                           &m1, &out),
             VMATCH_MATCHED);
    CHECK(out == &r1);
    vmatch_destroy(e);

    /* An engine whose table never grew: the first class already fails, and stays 0. */
    e = make("");
    vm_engine_mem(e)->fail_after = 0;
    CHECK_EQ(vmatch_coll_class_get(e, VMATCH_COLL_SCAN, 1, 2, &cls), VMATCH_ENOMEM);
    vm_engine_mem(e)->fail_after = -1;
    CHECK_EQ(vmatch_coll_class(e, VMATCH_COLL_SCAN, 1, 2), 0);
    vmatch_destroy(e);
}

/** Figures by key: the engine's keys are vmatch_stats's fields; a policy answers its own
 * keys; an unknown key is EINVAL, another policy's EUNSUPPORTED; errors leave *value. */
static void test_stat_keys(void)
{
    vmatch_engine_t *e = make("policy=pnp nprocs=64 pnp.threshold=4");
    vmatch_stats_t st;
    uint64_t v;
    void *out = NULL;
    static int reqs[12];
    vmatch_bits_t b, c;
    for (int i = 0; i < 12; i++) {
        recv_of(e, 3, i, &b, &c);
        CHECK_EQ(vmatch_post(e, b, c, 0, &reqs[i], &out), VMATCH_QUEUED);
    }
    vmatch_stats(e, &st);
    const char *const keys[] = {"posted",    "unexpected", "searches",
                                "inspected", "queues",     "bytes"};
    const uint64_t want[] = {st.posted,    st.unexpected, st.searches,
                             st.inspected, st.queues,     st.bytes};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        v = 12345;
        CHECK_EQ(vmatch_stat(e, keys[i], &v), VMATCH_OK);
        CHECK_EQ(v, want[i]);
    }
    CHECK_EQ(want[0], 12);
    /* Twelve receives from source 3, threshold 4: source 3 became a partner. */
    v = 0;
    CHECK_EQ(vmatch_stat(e, "pnp.partners", &v), VMATCH_OK);
    CHECK_EQ(v, 1);
    v = 0;
    CHECK_EQ(vmatch_stat(e, "pnp.levels", &v), VMATCH_OK);
    CHECK_EQ(v, 1);

    v = 777;
    CHECK_EQ(vmatch_stat(e, "pnp.partner", &v), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "unknown key 'pnp.partner'") != NULL);
    CHECK_EQ(vmatch_stat(e, "", &v), VMATCH_EINVAL);
    /* A spec key is no figure. */
    CHECK_EQ(vmatch_stat(e, "pnp.threshold", &v), VMATCH_EINVAL);
    CHECK_EQ(vmatch_stat(e, "unified.levels", &v), VMATCH_EUNSUPPORTED);
    CHECK(strstr(vmatch_last_error(), "policy=pnp") != NULL);
    CHECK(strstr(vmatch_last_error(), "unified.levels") != NULL);
    CHECK_EQ(vmatch_stat(e, "hash.flat", &v), VMATCH_EUNSUPPORTED);
    /* A struct's key through the number call, and the other way round. */
    CHECK_EQ(vmatch_stat(e, "unified.class", &v), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "vmatch_stat_struct") != NULL);
    CHECK_EQ(vmatch_stat_struct(e, "pnp.partners", 0, &st, sizeof st), VMATCH_EINVAL);
    CHECK_EQ(vmatch_stat_struct(e, "unified.class", 0, &st, sizeof st), VMATCH_EUNSUPPORTED);
    CHECK_EQ(vmatch_stat(e, NULL, &v), VMATCH_EINVAL);
    CHECK_EQ(vmatch_stat(e, "posted", NULL), VMATCH_EINVAL);
    CHECK_EQ(v, 777);
    vmatch_destroy(e);

    /* policy=single keeps no figure of its own. */
    e = make("policy=single");
    CHECK_EQ(vmatch_stat(e, "pnp.partners", &v), VMATCH_EUNSUPPORTED);
    CHECK_EQ(vmatch_stat(e, "queues", &v), VMATCH_OK);
    CHECK_EQ(v, 2);
    vmatch_destroy(e);

    /* policy=hash: its table buckets appear with its first entries (past the short vector's:
     * test_short). */
    e = make("policy=hash hash.buckets=64 hash.short=0");
    v = 1;
    CHECK_EQ(vmatch_stat(e, "hash.table_buckets", &v), VMATCH_OK);
    CHECK_EQ(v, 0);
    recv_of(e, 3, 1, &b, &c);
    CHECK_EQ(vmatch_post(e, b, c, 0, &reqs[0], &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_stat(e, "hash.table_buckets", &v), VMATCH_OK);
    CHECK_EQ(v, 64);
    CHECK_EQ(vmatch_stat(e, "hash.flat", &v), VMATCH_OK);
    CHECK(v <= 1);
    CHECK_EQ(vmatch_stat(e, "pnp.partners", &v), VMATCH_EUNSUPPORTED);
    vmatch_destroy(e);
}

/** vmatch_last_error describes the last failure: a success does not clear it, an answer of
 * VMATCH_ENOTFOUND leaves it, the next failure replaces it. */
static void test_last_error_kept(void)
{
    vmatch_engine_t *e = make("");
    vmatch_bits_t b, c;
    void *out = NULL;
    char first[256];
    CHECK_EQ(vmatch_cancel(e, NULL), VMATCH_EINVAL);
    snprintf(first, sizeof first, "%s", vmatch_last_error());
    CHECK(strstr(first, "cancel") != NULL);
    /* Successes of every kind, and the answers that find nothing. */
    recv_of(e, 1, 1, &b, &c);
    CHECK_EQ(vmatch_post(e, b, c, 0, &r1, &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, msg_of(e, 1, 1), 0, &m1, &out), VMATCH_MATCHED);
    CHECK_EQ(vmatch_probe(e, b, c, 0, 0, &out), VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_cancel(e, &r1), VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_remove_unexpected(e, &m1), VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_match_posted(e, b, 0, &out), VMATCH_ENOTFOUND);
    CHECK(vmatch_coll_class(e, VMATCH_COLL_BCAST, 1, 2) >= 1);
    uint64_t v;
    CHECK_EQ(vmatch_stat(e, "posted", &v), VMATCH_OK);
    vmatch_engine_t *f = make("policy=single");
    vmatch_destroy(f);
    CHECK(strcmp(vmatch_last_error(), first) == 0);
    /* The next failure replaces it, whatever the call. */
    CHECK_EQ(vmatch_simd_available("avx9000"), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "avx9000") != NULL);
    CHECK_EQ(vmatch_stat(e, "no.such", &v), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "no.such") != NULL);
    vmatch_destroy(e);
}

/** Body of the thread that checks last_error is per thread. */
static void *fresh_thread(void *arg)
{
    *(int *)arg = vmatch_last_error()[0] == '\0';
    return NULL;
}

/** The detail of a failure belongs to the thread that failed. */
static void test_last_error_thread(void)
{
    pthread_t t;
    int clean = 0;
    CHECK_EQ(vmatch_cancel(NULL, &r1), VMATCH_EINVAL);
    CHECK(vmatch_last_error()[0] != '\0');
    REQUIRE(pthread_create(&t, NULL, fresh_thread, &clean) == 0);
    REQUIRE(pthread_join(t, NULL) == 0);
    CHECK(clean);
}

int main(void)
{
    test_null_engine();
    test_null_args();
    test_strerror();
    test_coll_class();
    test_order();
    test_raw_bits();
    test_classes();
    test_counters();
    test_enomem();
    test_coll_class_enomem();
    test_stat_keys();
    test_last_error_kept();
    test_last_error_thread();
    return check_report("test_api");
}
