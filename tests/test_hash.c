/* Tests of policy=hash: where entries go (the bucket index, its spread, the table and its
 * growth, the wildcard queue), the memory of an empty engine and of a bucket, and the two
 * modes of the unexpected messages (hashed and flat) switching back and forth under exact and
 * wildcard traffic while every answer agrees with the reference model and the structure
 * stays whole: every entry once, in its bucket, in order.  Long random streams over every
 * storage are test_diff's job. */
#include "check.h"
#include "hash_impl.h"
#include "hooks.h"
#include "ref.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PTR(i) ((void *)(uintptr_t)(((i) + 1) * 8))

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static vm_hash_t *side_of(vmatch_engine_t *e, int side)
{
    return (vm_hash_t *)vm_engine_side(e, side);
}

/* ---- the structure of one side ---- */

/* Every entry of a side once, where it belongs: a bucket's entries in its line, then in the
 * overflow lines chained from it (each with its ways in use first and none empty), all in
 * order, as many in the chain as the line counts, as many lines as nover says; on the PRQ
 * only exact receives in buckets and only others in the wildcard queue; a flat UMQ holds
 * everything, its table nothing.  Returns 1 when whole. */
static int whole(vm_hash_t *h)
{
    /* slow: 1 for the library's reasons, VMATCH_SLOW_WILD for wildcard receives that are
     * all in the vector, of a PRQ with a table, in order */
    int hard = h->flat || h->cost || h->want_switch || (h->wild && h->wild->len);
    int ok = h->base.slow == (hard ? 1 : h->base.nwild ? VMATCH_SLOW_WILD : 0);
    ok &= !h->base.nwild || (h->base.side == VM_PRQ && h->base.table && !h->base.shortcap &&
                             h->base.nwild <= VMATCH_SHORT_MAX);
    for (unsigned k = 0; k < h->base.nwild; k++)
        ok &= h->vec[k].care != ~(vmatch_bits_t)0 && (!k || h->vec[k].seq > h->vec[k - 1].seq);
    /* the inline calls' gate: room is the growth point while the side is fast, or the mark
     * while a watched window has not reached it */
    uint64_t room = h->mark && !h->busy && h->mark < h->grow ? h->mark : h->grow;
    ok &= h->base.room == (hard || !h->base.table ? 0 : room);
    /* the check is the earlier end of both sides' windows */
    vm_side_t *peer = h->base.env->paired[!h->base.side];
    uint64_t end =
        peer && ((vm_hash_t *)peer)->end < h->end ? ((vm_hash_t *)peer)->end : h->end;
    ok &= h->base.check == end;
    if (!h->base.table)
        return ok && h->base.count == vm_hash_wildcards(h) && !h->flat;
    uint64_t n = 0, lines = 0;
    for (uint32_t i = 0; i < h->base.nb; i++) {
        const vm_line_t *line = &h->base.table[i];
        uint64_t last = 0, chained = 0;
        for (const vm_line_t *s = line; s; s = (const vm_line_t *)(const void *)s->queue) {
            uint32_t used = vm_line_used(s);
            if (s != line) { /* an overflow line: counts nothing of its own, never empty */
                ok &= vm_line_over(s) == 0 && used > 0;
                chained += used;
                lines++;
            }
            for (int k = 0; k < VM_LINE_WAYS; k++) {
                /* the ways in use come first, and fill counts them */
                ok &= !s->payload[k] == (k >= (int)used);
                if (!s->payload[k])
                    continue;
                ok &= vm_hash_index(s->bits[k], h->base.nb) == i && s->seq[k] > last;
                last = s->seq[k];
                n++;
            }
        }
        ok &= chained == vm_line_over(line);
    }
    ok &= lines == h->nover;
    if (h->base.side == VM_PRQ)
        n += vm_hash_wildcards(h);
    if (h->flat)
        ok &= n == 0 && h->flat->len == h->base.count;
    else
        ok &= n == h->base.count;
    return ok;
}

/* ---- placement ---- */

static void test_index(void)
{
    uint64_t s = 1;
    const uint32_t sizes[] = {1, 2, 3, 7, 1000, 1021, 1024, 1u << 20};
    for (unsigned z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int k = 0; k < 2000; k++) {
            vmatch_bits_t b = rnd(&s);
            uint32_t i = vm_hash_index(b, sizes[z]), j = vm_hash_index(b, 2 * sizes[z]);
            CHECK(i < sizes[z]);
            CHECK(j / 2 == i); /* doubling splits bucket i into 2i and 2i + 1 */
        }
    /* MPI keys (context 3, sources 0..4095, tags 0..3) over 4096 buckets: the longest run
     * stays short, and keys that share a bucket do not share llv fingerprints more than
     * random ones would (the fingerprint hash must stay independent of the index). */
    enum { NB = 4096, NSRC = 4096, NTAG = 4 };
    static uint16_t count[NB];
    static uint32_t first_fp[NB];
    uint32_t longest = 0, same_fp = 0, pairs = 0;
    memset(count, 0, sizeof count);
    for (uint32_t src = 0; src < NSRC; src++)
        for (uint32_t tag = 0; tag < NTAG; tag++) {
            vmatch_bits_t b = (3ull << 48) | ((uint64_t)src << 24) | tag;
            uint32_t i = vm_hash_index(b, NB),
                     fp = (uint32_t)((b * 0x9E3779B97F4A7C15ull) >> 48);
            if (count[i]) {
                pairs++;
                same_fp += (fp >> 10) == (first_fp[i] >> 10); /* the top 6 bits */
            } else {
                first_fp[i] = fp;
            }
            if (++count[i] > longest)
                longest = count[i];
        }
    CHECK(longest <= 16);
    CHECK(pairs > 1000 && same_fp * 16 < pairs); /* random: 1 in 64 */
}

/* A set of MPI keys: every (context, source, tag) of the ranges below, packed where a
 * layout puts the fields (lowest bits and widths). */
typedef struct keyset {
    unsigned ctx_shift, src_shift, tag_shift, src_bits;
    uint32_t nctx, nsrc, src0, src_stride, ntag, tag0, tag_stride;
} keyset_t;

/* Per cent of the set's entries beyond their line's two ways, in the smallest table a
 * growing side holds them in (at most one entry per bucket, half that up to 512 buckets: the
 * table just before it doubles); -1 when a source does not fit the layout. */
static double overflow_pct(const keyset_t *k)
{
    uint64_t n = (uint64_t)k->nctx * k->nsrc * k->ntag, over = 0;
    if (k->src0 + (uint64_t)(k->nsrc - 1) * k->src_stride >= (1ull << k->src_bits))
        return -1;
    uint32_t nb = 1;
    while (nb < n || (nb <= 512 && n > nb / 2))
        nb *= 2;
    uint32_t *count = calloc(nb, sizeof *count);
    REQUIRE(count);
    for (uint32_t c = 0; c < k->nctx; c++)
        for (uint32_t a = 0; a < k->nsrc; a++)
            for (uint32_t t = 0; t < k->ntag; t++) {
                vmatch_bits_t b =
                    ((uint64_t)c << k->ctx_shift) |
                    ((uint64_t)(k->src0 + a * k->src_stride) << k->src_shift) |
                    ((uint64_t)((k->tag0 + t * k->tag_stride) & 0xffffff) << k->tag_shift);
                over += ++count[vm_hash_index(b, nb)] > VM_LINE_WAYS;
            }
    free(count);
    return 100.0 * (double)over / (double)n;
}

/* Structured MPI keys in the three named layouts (default; ompi-ucx, the tag on top;
 * mpich-ucx, 16 source bits): sources by tags of many shapes, runs of tags, strided sources
 * and tags, contexts.  A multiplier spreads such keys as a lattice does: most sets overflow
 * almost nothing, and a few strides pile up (random keys: about 8% on every set).  This one
 * gives 2.0% on average and 26.7% at worst (16384 sources of one tag, tag on top); the one
 * before it (0xD6E8FEB86659FD93) 5.0% and 42.5%, one tried on the way (0x8712B8BC076F3787)
 * 5.8% and 50% (tags strided by 3).  docs/hash.md, "The multiplier". */
static void test_index_spread(void)
{
    static const unsigned lay[][4] = {{48, 24, 0, 24}, {0, 20, 40, 20}, {48, 32, 0, 16}};
    static const keyset_t shapes[] = {
        {0, 0, 0, 0, 1, 1023, 1, 1, 4, 0, 1},       {0, 0, 0, 0, 1, 4095, 1, 1, 4, 0, 1},
        {0, 0, 0, 0, 1, 255, 1, 1, 16, 0, 1},       {0, 0, 0, 0, 1, 64, 0, 1, 64, 0, 1},
        {0, 0, 0, 0, 1, 16384, 0, 1, 1, 0, 1},      {0, 0, 0, 0, 1, 2047, 1, 1, 10, 0, 1},
        {0, 0, 0, 0, 1, 1500, 0, 1, 3, 0, 1},       {0, 0, 0, 0, 1, 5000, 0, 1, 3, 0, 1},
        {0, 0, 0, 0, 1, 96, 0, 1, 40, 0, 1},        {0, 0, 0, 0, 1, 1, 0, 1, 32, 0, 1},
        {0, 0, 0, 0, 1, 1, 0, 1, 16, 1000, 1},      {0, 0, 0, 0, 1, 1, 9, 1, 4096, 0, 1},
        {0, 0, 0, 0, 1, 1, 9, 1, 8000, 100000, 1},  {0, 0, 0, 0, 1, 2048, 0, 8, 1, 0, 1},
        {0, 0, 0, 0, 1, 1000, 0, 64, 1, 0, 1},      {0, 0, 0, 0, 1, 3000, 0, 3, 2, 0, 1},
        {0, 0, 0, 0, 1, 1, 3, 1, 1024, 0, 3},       {0, 0, 0, 0, 1, 1, 3, 1, 1024, 0, 16},
        {0, 0, 0, 0, 1, 1, 3, 1, 1024, 0, 256},     {0, 0, 0, 0, 4, 1024, 0, 1, 1, 0, 1},
        {0, 0, 0, 0, 64, 1, 0, 1, 64, 0, 1},        {0, 0, 0, 0, 1, 2000, 33333, 1, 2, 0, 1},
        {0, 0, 0, 0, 1, 512, 0, 1, 8, 0xfffff8, 1}, {0, 0, 0, 0, 1, 60, 0, 5, 50, 0, 5},
    };
    double worst = 0, sum = 0;
    unsigned sets = 0;
    for (unsigned l = 0; l < 3; l++)
        for (unsigned i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            keyset_t k = shapes[i];
            k.ctx_shift = lay[l][0], k.src_shift = lay[l][1], k.tag_shift = lay[l][2];
            k.src_bits = lay[l][3];
            double p = overflow_pct(&k);
            if (p < 0)
                continue;
            sum += p, sets++;
            if (p > worst)
                worst = p;
            if (p > 15)
                fprintf(stderr, "layout %u, shape %u: %.1f%% overflow\n", l, i, p);
        }
    printf("index spread: %u key sets, %.1f%% of the entries overflow on average, %.1f%% at "
           "worst\n",
           sets, sum / sets, worst);
    CHECK(sets >= 70);
    CHECK(sum / sets <= 3.0 && worst <= 30);
}

static void test_placement(void)
{
    vmatch_engine_t *e;
    void *out;
    REQUIRE(vmatch_create("policy=hash storage=llv", &e) == VMATCH_OK);
    vm_hash_t *prq = side_of(e, VM_PRQ);
    vmatch_bits_t bits, care;
    /* Exact receives to buckets, the table growing with them; others to the wildcard
     * queue, also a mask that leaves out only bits no field uses. */
    for (int i = 0; i < 1000; i++) {
        vmatch_mpi_recv(e, 1, i % 300, i / 300, &bits, &care);
        CHECK_EQ(vmatch_post(e, bits, care, 0, PTR(i), &out), VMATCH_QUEUED);
    }
    CHECK(prq->wild == NULL);
    CHECK(prq->base.nb >= 1000 * 100 / prq->hc->load &&
          prq->base.nb <= 4 * 1000 * 100 / prq->hc->load);
    CHECK(whole(prq));
    vmatch_mpi_recv(e, 1, VMATCH_ANY_SOURCE, 5, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care, 0, PTR(1000), &out), VMATCH_QUEUED);
    vmatch_mpi_recv(e, 1, 7, 9, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care & ~(1ull << 63), 0, PTR(1001), &out), VMATCH_QUEUED);
    CHECK(prq->wild == NULL && prq->base.nwild == 2 && whole(prq)); /* in the vector */
    CHECK_EQ(prq->base.slow, VMATCH_SLOW_WILD);
    /* A message takes the older of its bucket's match and the wildcard queue's. */
    vmatch_bits_t m = vmatch_mpi_msg(e, 1, 7, 9);
    vmatch_mpi_recv(e, 1, 7, 9, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care, 0, PTR(1002), &out), VMATCH_QUEUED);
    CHECK_EQ(vmatch_arrive(e, m, 0, PTR(5000), &out), VMATCH_MATCHED);
    CHECK(out == PTR(1001));
    CHECK_EQ(vmatch_arrive(e, m, 0, PTR(5001), &out), VMATCH_MATCHED);
    CHECK(out == PTR(1002));
    CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 1, 299, 5), 0, PTR(5002), &out),
             VMATCH_MATCHED);
    CHECK(out == PTR(1000)); /* only the ANY_SOURCE receive has tag 5 */
    CHECK(whole(prq) && prq->base.nwild == 0 && prq->base.slow == 0);
    /* Past the vector's VMATCH_SHORT_MAX places wildcard receives go to the wildcard queue,
     * and while it holds any, new ones follow them there: arrivals take them in order. */
    for (int i = 0; i < VMATCH_SHORT_MAX + 2; i++) {
        vmatch_mpi_recv(e, 1, VMATCH_ANY_SOURCE, 77, &bits, &care);
        CHECK_EQ(vmatch_post(e, bits, care, 0, PTR(2000 + i), &out), VMATCH_QUEUED);
    }
    CHECK(prq->base.nwild == VMATCH_SHORT_MAX && prq->wild->len == 2 && whole(prq));
    for (int i = 0; i <= VMATCH_SHORT_MAX + 2; i++) {
        if (i == 1) { /* a place is free in the vector, but the queue is not empty */
            vmatch_mpi_recv(e, 1, VMATCH_ANY_SOURCE, 77, &bits, &care);
            CHECK_EQ(vmatch_post(e, bits, care, 0, PTR(2100), &out), VMATCH_QUEUED);
            CHECK(prq->base.nwild == VMATCH_SHORT_MAX - 1 && prq->wild->len == 3);
        }
        CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 1, i, 77), 0, PTR(6000), &out),
                 VMATCH_MATCHED);
        CHECK(out == PTR(i <= VMATCH_SHORT_MAX + 1 ? 2000 + i : 2100));
        CHECK(whole(prq));
    }
    CHECK(prq->base.nwild == 0 && prq->wild->len == 0 && prq->base.slow == 0);
    vmatch_destroy(e);

    /* A fixed table keeps its size; seven buckets hold long runs. */
    REQUIRE(vmatch_create("policy=hash storage=lla hash.buckets=7", &e) == VMATCH_OK);
    prq = side_of(e, VM_PRQ);
    for (int i = 0; i < 500; i++) {
        vmatch_mpi_recv(e, 0, i % 50, i, &bits, &care);
        CHECK_EQ(vmatch_post(e, bits, care, 0, PTR(i), &out), VMATCH_QUEUED);
    }
    /* a bucket's chain packs its overflow two to a line while nothing was taken */
    uint64_t lines = 0;
    for (uint32_t i = 0; i < 7; i++)
        lines += (vm_line_over(&prq->base.table[i]) + 1) / 2;
    CHECK(prq->base.nb == 7 && lines > 200 && prq->nover == lines && whole(prq));
    for (int i = 499; i >= 0; i--) { /* in reverse: each bucket's chain from its tail */
        CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, i % 50, i), 0, PTR(1000), &out),
                 VMATCH_MATCHED);
        CHECK(out == PTR(i));
    }
    CHECK(prq->base.count == 0 && prq->nover == 0 && whole(prq));
    vmatch_destroy(e);
}

/* An engine that has queued nothing holds at most 4 KiB; a bucket costs its line and
 * nothing more until it overflows.  A fixed table is at most 2^20 lines a side (issue 37:
 * hash.buckets=16777216 made a two-message program hold 2.15 GB). */
static void test_memory(void)
{
    vmatch_engine_t *e;
    vmatch_stats_t st, st2;
    void *out;
    CHECK_EQ(vmatch_create("hash.buckets=1048577", &e), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "hash.buckets") != NULL);
    REQUIRE(vmatch_create("hash.buckets=1048576", &e) == VMATCH_OK);
    vmatch_stats(e, &st);
    CHECK(st.bytes <= 4096); /* the table comes with the first entry */
    vmatch_destroy(e);
    REQUIRE(vmatch_create("policy=hash storage=llv nprocs=4096", &e) == VMATCH_OK);
    vmatch_stats(e, &st);
    CHECK(st.bytes <= 4096);
    CHECK_EQ(st.queues, 0);
    vmatch_destroy(e);
    REQUIRE(vmatch_create("policy=hash storage=llv hash.buckets=1021 hash.short=0", &e) ==
            VMATCH_OK);
    vmatch_stats(e, &st);
    CHECK(st.bytes <= 4096); /* the table comes with the first entry (test_short: with the
                                short vector, with the first entry past it) */
    CHECK_EQ(vmatch_arrive(e, 12345, 0, PTR(0), &out), VMATCH_QUEUED);
    vmatch_stats(e, &st2);
    CHECK_EQ(st2.bytes - st.bytes, 1021 * sizeof(vm_line_t) + VM_LINE_PAD);
    vmatch_destroy(e);
}

/* ---- the two modes of the UMQ against the reference ---- */

typedef struct run {
    vmatch_engine_t *e;
    ref_model_t ref;
    uint64_t s, id;
    int wild_pct; /* of receives and probes */
    unsigned to_flat, to_hashed;
} run_t;

static void recv_of(run_t *r, vmatch_bits_t *bits, vmatch_bits_t *care)
{
    uint32_t ctx = (uint32_t)(rnd(&r->s) % 2);
    int32_t src = (int32_t)(rnd(&r->s) % 40), tag = (int32_t)(rnd(&r->s) % 6);
    if ((int)(rnd(&r->s) % 100) < r->wild_pct) {
        switch (rnd(&r->s) % 4) {
        case 0:
            src = VMATCH_ANY_SOURCE;
            break;
        case 1:
            tag = VMATCH_ANY_TAG;
            break;
        case 2:
            src = VMATCH_ANY_SOURCE, tag = VMATCH_ANY_TAG;
            break;
        default: /* an arbitrary mask: low tag and source bits cleared */
            vmatch_mpi_recv(r->e, ctx, src, tag, bits, care);
            *care &= ~(rnd(&r->s) & 0x0300000003ull);
            return;
        }
    }
    vmatch_mpi_recv(r->e, ctx, src, tag, bits, care);
}

/* One random call on the engine and, unless it failed with VMATCH_ENOMEM while a failure
 * was armed, on the model.  Returns 1 when they agree, 0 when not, -1 for a failed call. */
static int step(run_t *r, int armed)
{
    vmatch_bits_t bits, care;
    void *got = NULL, *want = NULL, *h = NULL;
    int rc, wrc = 0, k = (int)(rnd(&r->s) % 100), remove = k < 83;
    int umqside = k < 95;
    vm_hash_t *umq = side_of(r->e, VM_UMQ);
    int flat = umq->flat != NULL;
    void *id = PTR(r->id++);
    if (k < 35 || (k >= 75 && k < 90))
        recv_of(r, &bits, &care);
    if (k >= 35 && k < 75)
        bits = vmatch_mpi_msg(r->e, (uint32_t)(rnd(&r->s) % 2), (int32_t)(rnd(&r->s) % 40),
                              (int32_t)(rnd(&r->s) % 6));
    if (k >= 90) {
        const ref_list_t *l = umqside ? &r->ref.umq : &r->ref.prq;
        h = l->n && rnd(&r->s) % 4 ? l->v[rnd(&r->s) % l->n].payload
                                   : PTR(rnd(&r->s) % (r->id + 1));
    }
    if (armed)
        vm_engine_mem(r->e)->fail_after = (int64_t)(rnd(&r->s) % 3);
    if (k < 35)
        rc = vmatch_post(r->e, bits, care, 0, id, &got);
    else if (k < 75)
        rc = vmatch_arrive(r->e, bits, 0, id, &got);
    else if (k < 90)
        rc = vmatch_probe(r->e, bits, care, 0, remove, &got);
    else
        rc = umqside ? vmatch_remove_unexpected(r->e, h) : vmatch_cancel(r->e, h);
    vm_engine_mem(r->e)->fail_after = -1;
    if (armed && rc == VMATCH_ENOMEM)
        return -1;
    if (k < 35)
        wrc = ref_post(&r->ref, bits, care, id, &want);
    else if (k < 75)
        wrc = ref_arrive(&r->ref, bits, id, &want);
    else if (k < 90)
        wrc = ref_probe(&r->ref, bits, care, remove, &want);
    else
        wrc = umqside ? ref_remove_unexpected(&r->ref, h) : ref_cancel(&r->ref, h);
    r->to_flat += !flat && umq->flat;
    r->to_hashed += flat && !umq->flat;
    return rc == wrc && got == want;
}

static void test_modes(const char *spec)
{
    run_t r = {.s = 7};
    REQUIRE(vmatch_create(spec, &r.e) == VMATCH_OK);
    ref_init(&r.ref);
    int ok = 1;
    /* Phases of exact traffic (the UMQ turns hashed) and of wildcard traffic (it turns
     * flat), with the queues kept a few hundred long. */
    for (int phase = 0; phase < 40 && ok; phase++) {
        r.wild_pct = phase % 2 ? 40 : phase % 4 ? 0 : 1;
        for (int i = 0; i < 3000 && ok; i++) {
            ok = step(&r, 0) == 1;
            if (i % 500 == 0)
                ok &= whole(side_of(r.e, VM_PRQ)) && whole(side_of(r.e, VM_UMQ));
        }
    }
    CHECK(ok);
    CHECK(r.to_flat >= 5 && r.to_hashed >= 5);
    vmatch_stats_t st;
    vmatch_stats(r.e, &st);
    CHECK_EQ(st.posted, r.ref.prq.n);
    CHECK_EQ(st.unexpected, r.ref.umq.n);
    ref_fini(&r.ref);
    vmatch_destroy(r.e);
}

/* Allocation failures in every state: a call that fails changed nothing (bytes and queues
 * included); the switches and the growth that could not be made leave the side as it was,
 * and the answers stay right. */
static void test_enomem(const char *spec)
{
    run_t r = {.s = 99};
    int ok = 1;
    unsigned failed = 0;
    /* Fresh engines, so that tables, queues and pools are made (and fail) again and again;
     * exact and wildcard phases, so that the switches are tried under failures too. */
    for (int round = 0; round < 40 && ok; round++) {
        REQUIRE(vmatch_create(spec, &r.e) == VMATCH_OK);
        ref_init(&r.ref);
        for (int i = 0; i < 3000 && ok; i++) {
            r.wild_pct = (i / 500) % 2 ? 40 : 0;
            vmatch_stats_t before, after;
            vmatch_stats(r.e, &before);
            int rc = step(&r, rnd(&r.s) % 3 == 0);
            if (rc < 0) {
                vmatch_stats(r.e, &after);
                failed++;
                ok = after.bytes == before.bytes && after.queues == before.queues &&
                     after.posted == before.posted && after.unexpected == before.unexpected;
            } else {
                ok = rc;
            }
            if (i % 250 == 0)
                ok &= whole(side_of(r.e, VM_PRQ)) && whole(side_of(r.e, VM_UMQ));
        }
        ref_fini(&r.ref);
        vmatch_destroy(r.e);
    }
    printf("test_hash: %s: %u calls failed as armed, %u to flat, %u to hashed\n", spec, failed,
           r.to_flat, r.to_hashed);
    CHECK(ok);
    CHECK(failed > 20);
    CHECK(r.to_flat > 0 && r.to_hashed > 0);
}

/* ---- giving memory back ---- */

static uint64_t buckets(vmatch_engine_t *e, int side)
{
    vm_hash_t *h = side_of(e, side);
    return h->base.table ? h->base.nb : 0;
}

static uint64_t bytes_of(vmatch_engine_t *e)
{
    vmatch_stats_t st;
    vmatch_stats(e, &st);
    return st.bytes;
}

/* n entries of 1023 sources x 4 tags on side (posted receives, or messages), queued in a
 * random order and matched in another, each answer checked against the model. */
static int burst(run_t *r, int side, int n)
{
    int *o = malloc((size_t)n * sizeof *o), ok = 1;
    REQUIRE(o);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++)
            o[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(rnd(&r->s) % (uint64_t)(i + 1)), t = o[i];
            o[i] = o[j], o[j] = t;
        }
        for (int i = 0; i < n && ok; i++) {
            vmatch_bits_t bits, care;
            void *got = NULL, *want = NULL, *id = PTR(r->id++);
            int queue = pass == 0 ? side : !side, rc, wrc;
            vmatch_mpi_recv(r->e, 1, 1 + o[i] / 4, o[i] % 4, &bits, &care);
            if (queue == VM_PRQ) {
                rc = vmatch_post(r->e, bits, care, 0, id, &got);
                wrc = ref_post(&r->ref, bits, care, id, &want);
            } else {
                rc = vmatch_arrive(r->e, bits, 0, id, &got);
                wrc = ref_arrive(&r->ref, bits, id, &want);
            }
            ok = rc == wrc && got == want;
        }
    }
    free(o);
    return ok;
}

/* n quiet exact pairs on 8 sources (a post, then its message, or the other way round). */
static int quiet(run_t *r, int n, int armed)
{
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        vmatch_bits_t bits, care;
        void *got = NULL, *want = NULL, *a = PTR(r->id++), *b = PTR(r->id++);
        vmatch_mpi_recv(r->e, 2, i % 8, i % 3, &bits, &care);
        int first = (i / 100) % 2 ? VM_UMQ : VM_PRQ;
        int rc = VMATCH_ENOMEM;
        for (int arm = armed; rc == VMATCH_ENOMEM && arm >= 0; arm--) {
            /* armed, a call that needs memory fails (and changed nothing: called again
             * unarmed); one that finds a free way succeeds, and its shrink fails */
            vm_engine_mem(r->e)->fail_after = arm ? 0 : -1;
            rc = first == VM_PRQ ? vmatch_post(r->e, bits, care, 0, a, &got)
                                 : vmatch_arrive(r->e, bits, 0, a, &got);
            vm_engine_mem(r->e)->fail_after = -1;
        }
        int wrc = first == VM_PRQ ? ref_post(&r->ref, bits, care, a, &want)
                                  : ref_arrive(&r->ref, bits, a, &want);
        ok = rc == wrc && got == want;
        rc = first == VM_PRQ ? vmatch_arrive(r->e, bits, 0, b, &got)
                             : vmatch_post(r->e, bits, care, 0, b, &got);
        wrc = first == VM_PRQ ? ref_arrive(&r->ref, bits, b, &want)
                              : ref_post(&r->ref, bits, care, b, &want);
        ok &= rc == wrc && got == want;
    }
    return ok && whole(side_of(r->e, VM_PRQ)) && whole(side_of(r->e, VM_UMQ));
}

/* A burst's table shrinks after quiet traffic, on either side (the side that stays quiet is
 * checked by the other's appends), keeping what it still holds in order; bursts that come
 * back within a window keep it; a shrink that runs out of memory keeps the old table. */
static void test_shrink(void)
{
    for (int side = 0; side < 2; side++) {
        run_t r = {.s = 5 + (uint64_t)side};
        REQUIRE(vmatch_create("policy=hash storage=llv", &r.e) == VMATCH_OK);
        ref_init(&r.ref);
        /* entries that stay queued through it all, on both sides */
        void *got;
        for (int i = 0; i < 6; i++) {
            vmatch_bits_t bits, care;
            vmatch_mpi_recv(r.e, 3, i % 2, 7, &bits, &care);
            void *id = PTR(r.id++);
            CHECK_EQ(i < 3 ? vmatch_post(r.e, bits, care, 0, id, &got)
                           : vmatch_arrive(r.e, vmatch_mpi_msg(r.e, 4, i % 2, 7), 0, id, &got),
                     VMATCH_QUEUED);
            if (i < 3)
                ref_post(&r.ref, bits, care, id, &got);
            else
                ref_arrive(&r.ref, vmatch_mpi_msg(r.e, 4, i % 2, 7), id, &got);
        }
        CHECK(burst(&r, side, 4092));
        uint64_t peak = buckets(r.e, side), drained = bytes_of(r.e);
        CHECK(peak >= 2048);
        /* bursts every 4000 operations: each window sees one, the table stays */
        for (int k = 0; k < 6; k++) {
            CHECK(burst(&r, side, 1000) && quiet(&r, 1000, 0));
            CHECK_EQ(buckets(r.e, side), peak);
        }
        CHECK(quiet(&r, 50000, 0));
        printf("test_hash: side %d: %llu buckets after the burst, %llu after quiet traffic; "
               "%llu bytes drained, %llu after\n",
               side, (unsigned long long)peak, (unsigned long long)buckets(r.e, side),
               (unsigned long long)drained, (unsigned long long)bytes_of(r.e));
        /* the six entries kept, with the pair's, reach the mark of 64 buckets */
        CHECK(buckets(r.e, side) <= 64);
        CHECK(bytes_of(r.e) <= 16384);
        /* the entries kept through the shrinks, matched in order */
        for (int i = 0; i < 6; i++) {
            vmatch_bits_t bits, care;
            void *want = NULL;
            got = NULL;
            vmatch_mpi_recv(r.e, 4, i % 2, 7, &bits, &care);
            int rc = i < 3
                         ? vmatch_arrive(r.e, vmatch_mpi_msg(r.e, 3, i % 2, 7), 0, PTR(0), &got)
                         : vmatch_post(r.e, bits, care, 0, PTR(0), &got);
            int wrc = i < 3
                          ? ref_arrive(&r.ref, vmatch_mpi_msg(r.e, 3, i % 2, 7), PTR(0), &want)
                          : ref_post(&r.ref, bits, care, PTR(0), &want);
            CHECK(rc == VMATCH_MATCHED && rc == wrc && got == want);
        }
        ref_fini(&r.ref);
        vmatch_destroy(r.e);
    }
    /* out of memory: every quiet append armed, so that each shrink fails; the table stays,
     * whole and right, and shrinks once memory is back (without the short vector: a side
     * that drained gives its table back with no memory at all, test_short) */
    run_t r = {.s = 11};
    REQUIRE(vmatch_create("policy=hash storage=llv hash.shrink=64 hash.short=0", &r.e) ==
            VMATCH_OK);
    ref_init(&r.ref);
    CHECK(burst(&r, VM_PRQ, 2000));
    uint64_t peak = buckets(r.e, VM_PRQ);
    CHECK(quiet(&r, 5000, 1));
    CHECK_EQ(buckets(r.e, VM_PRQ), peak);
    CHECK(quiet(&r, 5000, 0));
    CHECK(buckets(r.e, VM_PRQ) <= 4);
    CHECK_EQ(vmatch_stat(r.e, "hash.table_buckets", &peak), VMATCH_OK);
    ref_fini(&r.ref);
    vmatch_destroy(r.e);
    /* hash.shrink=0 and fixed tables keep their size */
    const char *keep[] = {"policy=hash hash.shrink=0", "policy=hash hash.buckets=1021"};
    for (int k = 0; k < 2; k++) {
        run_t q = {.s = 13};
        REQUIRE(vmatch_create(keep[k], &q.e) == VMATCH_OK);
        ref_init(&q.ref);
        CHECK(burst(&q, VM_PRQ, 4092));
        uint64_t nb = buckets(q.e, VM_PRQ);
        CHECK(quiet(&q, 20000, 0));
        CHECK_EQ(buckets(q.e, VM_PRQ), nb);
        ref_fini(&q.ref);
        vmatch_destroy(q.e);
    }
}

/* A pipeline on a short side: two receives queued, then round after round the oldest taken
 * by its message and one more receive queued, so that the vector's head walks to its end.
 * The inline append closes the vector up itself: no post or arrival reaches the policy's
 * exchange (its calls are counted here, and a library call is counted to show that they
 * are), and every answer is the reference model's. */
static unsigned policy_calls;
static vm_exchange_fn *policy_exchange;

static int spy_exchange(vm_call_t *call, vmatch_bits_t bits, vmatch_bits_t care,
                        vm_side_t *search, void *payload, vm_side_t *queue)
{
    policy_calls++;
    return policy_exchange(call, bits, care, search, payload, queue);
}

static void test_short_pipeline(void)
{
    vmatch_engine_t *e;
    ref_model_t ref;
    void *got, *want;
    REQUIRE(vmatch_create("policy=hash", &e) == VMATCH_OK);
    ref_init(&ref);
    vm_side_t *prq = vm_engine_side(e, VM_PRQ);
    REQUIRE((policy_exchange = vm_engine_swap_exchange(e, spy_exchange)) != NULL);
    int head_moved = 0, closed = 0;
    for (int i = 0; i < 200; i++) {
        vmatch_bits_t bits, care;
        vmatch_mpi_recv(e, 0, 3, i, &bits, &care);
        CHECK_EQ(vmatch_inline_post(e, bits, care, 0, PTR(i), &got), VMATCH_QUEUED);
        CHECK_EQ(ref_post(&ref, bits, care, PTR(i), &want), VMATCH_QUEUED);
        if (i < 1)
            continue;
        head_moved |= prq->hot.head > 0;
        closed |= head_moved && prq->hot.head == 0;
        vmatch_bits_t m = vmatch_mpi_msg(e, 0, 3, i - 1);
        int rc = vmatch_inline_arrive(e, m, 0, PTR(1000 + i), &got);
        CHECK(rc == VMATCH_MATCHED && rc == ref_arrive(&ref, m, PTR(1000 + i), &want) &&
              got == want);
        CHECK_EQ(prq->hot.len, 1);
    }
    CHECK(head_moved && closed);
    CHECK_EQ(policy_calls, 0);
    vmatch_bits_t bits, care; /* the counting sees the library's calls */
    vmatch_mpi_recv(e, 0, 3, 500, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care, 0, PTR(500), &got), VMATCH_QUEUED);
    CHECK(policy_calls > 0);
    vm_engine_swap_exchange(e, policy_exchange);
    ref_fini(&ref);
    vmatch_destroy(e);
}

/* The two loads: hash.small_load for tables of at most 512 buckets, hash.load past them.
 * Exact receives of distinct tags, posted one after another: at small_load=10 a table of 100
 * entries has passed 512 buckets (51 entries), which the default's small tables (256 entries
 * at 512, and crowded ones double at 512 only from 128 entries) never reach; at
 * hash.load=400 a large table of 3000 entries stays at 1024 buckets (4096 entries), the
 * default's at 4096.  A table never holds more than its load. */
static void test_loads(void)
{
    static const struct {
        const char *spec;
        int n;
        uint64_t lo, hi; /* the buckets after n receives */
    } c[] = {
        {"policy=hash hash.short=0", 100, 256, 512},
        {"policy=hash hash.short=0 hash.small_load=10", 100, 1024, 1024},
        {"policy=hash hash.short=0", 3000, 4096, 4096},
        {"policy=hash hash.short=0 hash.load=400", 3000, 1024, 1024},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        vmatch_engine_t *e;
        void *got;
        REQUIRE(vmatch_create(c[k].spec, &e) == VMATCH_OK);
        for (int i = 0; i < c[k].n; i++) {
            vmatch_bits_t bits, care;
            vmatch_mpi_recv(e, 1, 5, i, &bits, &care);
            CHECK_EQ(vmatch_post(e, bits, care, 0, PTR(i + 1), &got), VMATCH_QUEUED);
        }
        uint64_t nb = buckets(e, VM_PRQ);
        if (nb < c[k].lo || nb > c[k].hi)
            fprintf(stderr, "%s, %d receives: %llu buckets, not %llu-%llu\n", c[k].spec, c[k].n,
                    (unsigned long long)nb, (unsigned long long)c[k].lo,
                    (unsigned long long)c[k].hi);
        CHECK(nb >= c[k].lo && nb <= c[k].hi);
        vmatch_destroy(e);
    }
}

int main(void)
{
    test_index();
    test_index_spread();
    test_placement();
    test_memory();
    test_shrink();
    test_loads();
    test_short_pipeline();
    test_modes("policy=hash storage=llv");
    test_modes("policy=hash storage=ll hash.buckets=2");
    test_modes("policy=hash storage=lla hash.buckets=7");
    test_modes("policy=hash storage=llv hash.buckets=1 simd=scalar");
    test_modes(
        "policy=hash storage=llv hash.load=300 layout.ctx=8 layout.src=20 layout.tag=20");
    test_enomem("policy=hash storage=llv hash.load=200");
    test_enomem("policy=hash storage=lla hash.buckets=3 lla.block=4");
    test_enomem("policy=hash storage=ll hash.buckets=1");
    return check_report("test_hash");
}
