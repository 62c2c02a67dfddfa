/* test_layout.c -- MPI packing: field positions, boundaries, wildcards, care masks, matching
 * of packed messages against packed receives, and the unchecked shorthands, for the default
 * layout, unusual widths and the named layouts (layout=ompi-ucx, layout=mpich-ucx). */
#include "check.h"
#include "vmatch.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* What a failed pack must leave in its outputs. */
#define UNTOUCHED 0xdeadbeefcafef00dull

/* Widths, and for a named layout its name and each field's lowest bit (the default order
 * stacks tag, source and context from bit 0). */
typedef struct layout {
    unsigned c, s, t;
    const char *name;
    unsigned cs, ss, ts;
} layout_t;

/* The default, sums of exactly 64 at the extremes of each field, a zero-width context, a
 * layout that leaves high bits unused, and the named layouts as docs/layout.md gives them:
 * Open MPI's pml/ucx (tag 63..40, source 39..20, context 19..0) and MPICH's ch4/ucx
 * (context 63..48, rank 47..32, tag 31..0). */
static const layout_t layouts[] = {
    {16, 24, 24, NULL, 0, 0, 0},         {8, 20, 36, NULL, 0, 0, 0},
    {1, 31, 32, NULL, 0, 0, 0},          {0, 32, 32, NULL, 0, 0, 0},
    {0, 1, 63, NULL, 0, 0, 0},           {62, 1, 1, NULL, 0, 0, 0},
    {32, 16, 16, NULL, 0, 0, 0},         {4, 10, 10, NULL, 0, 0, 0},
    {31, 2, 31, NULL, 0, 0, 0},          {33, 30, 1, NULL, 0, 0, 0},
    {20, 20, 24, "ompi-ucx", 0, 20, 40}, {16, 16, 32, "mpich-ucx", 48, 32, 0},
};

/** The model of one layout: masks in place and the largest value each field holds. */
typedef struct model {
    layout_t l;
    vmatch_bits_t tag_mask, src_mask, ctx_mask;
    vmatch_bits_t tag_kept; /* tag bits a VMATCH_ANY_TAG receive still cares for */
    int32_t max_src, max_tag;
    uint32_t max_ctx;
} model_t;

/** Low n bits set (n < 64). */
static vmatch_bits_t ones(unsigned n)
{
    return ((vmatch_bits_t)1 << n) - 1;
}

/** Masks and maxima of layout l. */
static model_t model_of(layout_t l)
{
    model_t m;
    if (!l.name) {
        l.ts = 0;
        l.ss = l.t;
        l.cs = l.c ? l.s + l.t : 0;
    }
    m.l = l;
    m.tag_mask = ones(l.t) << l.ts;
    m.src_mask = ones(l.s) << l.ss;
    m.ctx_mask = l.c ? ones(l.c) << l.cs : 0;
    /* Open MPI keeps the tag's top bit (the sign of its negative collective tags) in every
     * mask: an ANY_TAG receive takes only tags below 2^23. */
    m.tag_kept = l.name && strcmp(l.name, "ompi-ucx") == 0 ? (vmatch_bits_t)1 << 63 : 0;
    /* The API takes int32 source and tag and uint32 context, so wide fields cap there. */
    m.max_tag = l.t >= 31 ? INT32_MAX : (int32_t)ones(l.t);
    m.max_src = l.s >= 31 ? INT32_MAX : (int32_t)ones(l.s);
    m.max_ctx = l.c >= 32 ? UINT32_MAX : (uint32_t)ones(l.c);
    return m;
}

/** The bits a message <ctx, src, tag> must pack to (values in range). */
static vmatch_bits_t expect_bits(const model_t *m, uint32_t ctx, int32_t src, int32_t tag)
{
    vmatch_bits_t b =
        ((vmatch_bits_t)(uint32_t)tag << m->l.ts) | ((vmatch_bits_t)(uint32_t)src << m->l.ss);
    if (m->l.c)
        b |= (vmatch_bits_t)ctx << m->l.cs;
    return b;
}

/** The care mask a receive must have over the layout's bits. */
static vmatch_bits_t expect_care(const model_t *m, int32_t src, int32_t tag)
{
    return m->ctx_mask | (src == VMATCH_ANY_SOURCE ? 0 : m->src_mask) |
           (tag == VMATCH_ANY_TAG ? m->tag_kept : m->tag_mask);
}

/** Create an engine with layout l. */
static vmatch_engine_t *make(layout_t l)
{
    char spec[96];
    vmatch_engine_t *e = NULL;
    int rc;
    if (l.name)
        snprintf(spec, sizeof spec, "layout=%s", l.name);
    else
        snprintf(spec, sizeof spec, "layout.ctx=%u layout.src=%u layout.tag=%u", l.c, l.s, l.t);
    rc = vmatch_create(spec, &e);
    if (rc != VMATCH_OK)
        fprintf(stderr, "vmatch_create(\"%s\") = %d: %s\n", spec, rc, vmatch_last_error());
    REQUIRE(rc == VMATCH_OK);
    return e;
}

/** Pack a message that must succeed with the expected bits; the shorthand must agree. */
static void good_msg(vmatch_engine_t *e, const model_t *m, uint32_t ctx, int32_t src,
                     int32_t tag)
{
    vmatch_bits_t bits = UNTOUCHED;
    int rc = vmatch_mpi_pack(e, ctx, src, tag, &bits, NULL);
    if (rc != VMATCH_OK || bits != expect_bits(m, ctx, src, tag))
        fprintf(stderr, "layout %u/%u/%u: msg <%u,%d,%d>: rc %d bits %#llx want %#llx\n",
                m->l.c, m->l.s, m->l.t, ctx, src, tag, rc, (unsigned long long)bits,
                (unsigned long long)expect_bits(m, ctx, src, tag));
    CHECK_EQ(rc, VMATCH_OK);
    CHECK(bits == expect_bits(m, ctx, src, tag));
    CHECK(vmatch_mpi_msg(e, ctx, src, tag) == expect_bits(m, ctx, src, tag));
}

/** Pack a receive that must succeed: care covers exactly the fields that are not wild, the
 * cared-for bits hold the values, and the shorthand agrees on both. */
static void good_recv(vmatch_engine_t *e, const model_t *m, uint32_t ctx, int32_t src,
                      int32_t tag)
{
    vmatch_bits_t bits = UNTOUCHED, care = UNTOUCHED, sbits = 0, scare = 0;
    vmatch_bits_t used = m->ctx_mask | m->src_mask | m->tag_mask;
    vmatch_bits_t want_care = expect_care(m, src, tag);
    vmatch_bits_t want_bits =
        expect_bits(m, ctx, src < 0 ? 0 : src, tag < 0 ? 0 : tag) & want_care;
    int rc = vmatch_mpi_pack(e, ctx, src, tag, &bits, &care);
    CHECK_EQ(rc, VMATCH_OK);
    /* Bits above the layout are never set in a message, so care may go either way there. */
    if ((care & used) != want_care || (bits & care & used) != want_bits)
        fprintf(stderr,
                "layout %u/%u/%u: recv <%u,%d,%d>: bits %#llx care %#llx, want care %#llx"
                " bits %#llx\n",
                m->l.c, m->l.s, m->l.t, ctx, src, tag, (unsigned long long)bits,
                (unsigned long long)care, (unsigned long long)want_care,
                (unsigned long long)want_bits);
    CHECK((care & used) == want_care);
    CHECK((bits & care & used) == want_bits);
    /* A value that is cared for but lies above the layout would match no message. */
    CHECK((bits & care & ~used) == 0);
    vmatch_mpi_recv(e, ctx, src, tag, &sbits, &scare);
    CHECK(sbits == bits && scare == care);
}

/** Pack must fail with EINVAL and leave its outputs alone, as message and as receive (or
 * only as message when as_recv is 0, for wildcards that only receives may use). */
static void bad_pack(vmatch_engine_t *e, const model_t *m, uint32_t ctx, int32_t src,
                     int32_t tag, int as_recv)
{
    vmatch_bits_t bits = UNTOUCHED, care = UNTOUCHED;
    int rc = vmatch_mpi_pack(e, ctx, src, tag, &bits, NULL);
    if (rc != VMATCH_EINVAL)
        fprintf(stderr, "layout %u/%u/%u: msg <%u,%d,%d> packed (rc %d)\n", m->l.c, m->l.s,
                m->l.t, ctx, src, tag, rc);
    CHECK_EQ(rc, VMATCH_EINVAL);
    CHECK(bits == UNTOUCHED);
    if (!as_recv)
        return;
    rc = vmatch_mpi_pack(e, ctx, src, tag, &bits, &care);
    if (rc != VMATCH_EINVAL)
        fprintf(stderr, "layout %u/%u/%u: recv <%u,%d,%d> packed (rc %d)\n", m->l.c, m->l.s,
                m->l.t, ctx, src, tag, rc);
    CHECK_EQ(rc, VMATCH_EINVAL);
    CHECK(bits == UNTOUCHED && care == UNTOUCHED);
}

/** Field boundaries: the largest values fit, one more and negatives do not. */
static void test_bounds(vmatch_engine_t *e, const model_t *m)
{
    const int32_t wild[2] = {0, -1};
    int i, j;
    good_msg(e, m, 0, 0, 0);
    good_msg(e, m, m->max_ctx, m->max_src, m->max_tag);
    good_msg(e, m, m->max_ctx, 0, 0);
    good_msg(e, m, 0, m->max_src, 0);
    good_msg(e, m, 0, 0, m->max_tag);
    good_msg(e, m, m->max_ctx / 2, m->max_src / 2 + 1, m->max_tag / 3);
    for (i = 0; i < 2; i++)
        for (j = 0; j < 2; j++) {
            int32_t src = wild[i] ? VMATCH_ANY_SOURCE : m->max_src;
            int32_t tag = wild[j] ? VMATCH_ANY_TAG : m->max_tag;
            good_recv(e, m, m->max_ctx, src, tag);
            good_recv(e, m, 0, wild[i] ? src : 0, wild[j] ? tag : 0);
            good_recv(e, m, m->max_ctx / 2, wild[i] ? src : 5 & m->max_src, tag);
        }
    if (m->l.c < 32)
        bad_pack(e, m, m->max_ctx + 1, 0, 0, 1);
    if (m->l.c < 31)
        bad_pack(e, m, UINT32_MAX, 0, 0, 1);
    if (m->l.s < 31)
        bad_pack(e, m, 0, m->max_src + 1, 0, 1);
    if (m->l.t < 31)
        bad_pack(e, m, 0, 0, m->max_tag + 1, 1);
    if (m->l.s < 30)
        bad_pack(e, m, 0, INT32_MAX, 0, 1);
    if (m->l.t < 30)
        bad_pack(e, m, 0, 0, INT32_MAX, 1);
    bad_pack(e, m, 0, -2, 0, 1);
    bad_pack(e, m, 0, 0, -2, 1);
    bad_pack(e, m, 0, INT32_MIN, 0, 1);
    bad_pack(e, m, 0, 0, INT32_MIN, 1);
    bad_pack(e, m, 0, VMATCH_ANY_SOURCE, -7, 1);
    bad_pack(e, m, 0, -7, VMATCH_ANY_TAG, 1);
    /* Wildcards belong to receives only. */
    bad_pack(e, m, 0, VMATCH_ANY_SOURCE, 0, 0);
    bad_pack(e, m, 0, 0, VMATCH_ANY_TAG, 0);
    bad_pack(e, m, 0, VMATCH_ANY_SOURCE, VMATCH_ANY_TAG, 0);
}

/** The unchecked shorthands cut values to their field instead of spilling into the next. */
static void test_cut(vmatch_engine_t *e, const model_t *m)
{
    uint32_t ctx = m->max_ctx;
    int32_t src = m->max_src, tag = m->max_tag;
    vmatch_bits_t want = expect_bits(m, ctx, src, tag);
    vmatch_bits_t bits = 0, care = 0;
    if (m->l.s < 31 && m->l.t < 31 && m->l.c < 32) {
        CHECK(vmatch_mpi_msg(e, ctx * 2 + 1, src * 2 + 1, tag * 2 + 1) == want);
        CHECK(vmatch_mpi_msg(e, ctx + 1, src + 1, tag + 1) == 0);
        vmatch_mpi_recv(e, ctx * 2 + 1, src * 2 + 1, tag * 2 + 1, &bits, &care);
        CHECK((bits & care) == want);
    }
}

/** splitmix64 step, for the random round trips. */
static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/** A field value: mostly from a tiny set so that pairs collide, sometimes the extremes. */
static uint64_t pick(uint64_t *s, uint64_t max)
{
    uint64_t r = rnd(s) % 8;
    if (r == 0)
        return max;
    if (r == 1)
        return rnd(s) % (max + 1);
    return (r - 2) % 3 > max ? max : (r - 2) % 3;
}

/** Packed messages match packed receives exactly when the non-wild fields are equal. */
static void test_round_trip(vmatch_engine_t *e, const model_t *m)
{
    uint64_t s = 0x1a40u + m->l.c * 4096u + m->l.s * 64u + m->l.t;
    unsigned bad = 0, i;
    for (i = 0; i < 20000; i++) {
        uint32_t mc = (uint32_t)pick(&s, m->max_ctx), rc_ = (uint32_t)pick(&s, m->max_ctx);
        int32_t ms = (int32_t)pick(&s, (uint64_t)m->max_src);
        int32_t mt = (int32_t)pick(&s, (uint64_t)m->max_tag);
        int32_t rs =
            rnd(&s) % 4 == 0 ? VMATCH_ANY_SOURCE : (int32_t)pick(&s, (uint64_t)m->max_src);
        int32_t rt =
            rnd(&s) % 4 == 0 ? VMATCH_ANY_TAG : (int32_t)pick(&s, (uint64_t)m->max_tag);
        vmatch_bits_t mb = 0, rb = 0, rcare = 0;
        int want, got;
        if (vmatch_mpi_pack(e, mc, ms, mt, &mb, NULL) != VMATCH_OK ||
            vmatch_mpi_pack(e, rc_, rs, rt, &rb, &rcare) != VMATCH_OK) {
            bad++;
            continue;
        }
        want = mc == rc_ && (rs == VMATCH_ANY_SOURCE || rs == ms) &&
               (rt == VMATCH_ANY_TAG ? !(expect_bits(m, 0, 0, mt) & m->tag_kept) : rt == mt);
        got = ((mb ^ rb) & rcare) == 0;
        if (got != want) {
            if (bad < 5)
                fprintf(stderr,
                        "layout %u/%u/%u: msg <%u,%d,%d> recv <%u,%d,%d>: match %d, want %d\n",
                        m->l.c, m->l.s, m->l.t, mc, ms, mt, rc_, rs, rt, got, want);
            bad++;
        }
    }
    CHECK_EQ(bad, 0);
}

/** The packed values drive a real engine the same way. */
static void test_engine(vmatch_engine_t *e, const model_t *m)
{
    vmatch_bits_t rb, rcare, mb;
    void *out = NULL;
    int req, miss, hit; /* their addresses are the handles */
    vmatch_mpi_recv(e, m->max_ctx, VMATCH_ANY_SOURCE, m->max_tag, &rb, &rcare);
    CHECK_EQ(vmatch_post(e, rb, rcare, 0, &req, &out), VMATCH_QUEUED);
    /* Another tag misses; the right one matches whatever the source. */
    mb = vmatch_mpi_msg(e, m->max_ctx, m->max_src, m->max_tag - 1);
    CHECK_EQ(vmatch_arrive(e, mb, 0, &miss, &out), VMATCH_QUEUED);
    mb = vmatch_mpi_msg(e, m->max_ctx, m->max_src, m->max_tag);
    CHECK_EQ(vmatch_arrive(e, mb, 0, &hit, &out), VMATCH_MATCHED);
    CHECK(out == &req);
    CHECK_EQ(vmatch_remove_unexpected(e, &miss), VMATCH_OK);
}

/** The layout key: a named layout sets the widths (layout.* may restate them, not change
 * them), an unknown name fails, and the described spec makes the same layout again. */
static void test_named_specs(void)
{
    static const char *const bad[] = {"layout=ompi", "layout=", "layout=ompi-ucx layout.ctx=16",
                                      "layout=mpich-ucx layout.tag=24", "layout=OMPI-UCX"};
    vmatch_engine_t *e = NULL, *again = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        e = NULL;
        CHECK_EQ(vmatch_create(bad[i], &e), VMATCH_EINVAL);
        CHECK(e == NULL);
    }
    /* widths given before the name are replaced by the name's; equal ones after it agree */
    REQUIRE(vmatch_create("layout.ctx=8 layout=ompi-ucx layout.src=20", &e) == VMATCH_OK);
    unsigned c, s, t, cs, ss, ts;
    vmatch_layout(e, &c, &s, &t);
    CHECK(c == 20 && s == 20 && t == 24);
    REQUIRE(vmatch_create(vmatch_describe(e), &again) == VMATCH_OK);
    vmatch_layout_shifts(again, &cs, &ss, &ts);
    CHECK(cs == 0 && ss == 20 && ts == 40);
    CHECK(vmatch_mpi_msg(again, 3, 5, 7) == vmatch_mpi_msg(e, 3, 5, 7));
    CHECK(strcmp(vmatch_describe(again), vmatch_describe(e)) == 0);
    vmatch_destroy(again);
    vmatch_destroy(e);
    /* layout=default keeps the widths it is given */
    REQUIRE(vmatch_create("layout.tag=20 layout=default", &e) == VMATCH_OK);
    vmatch_layout(e, &c, &s, &t);
    vmatch_layout_shifts(e, &cs, &ss, &ts);
    CHECK(c == 16 && s == 24 && t == 20 && ts == 0 && ss == 20 && cs == 44);
    vmatch_destroy(e);
    /* nprocs must fit the named layout's source field */
    CHECK_EQ(vmatch_create("layout=mpich-ucx nprocs=65537", &e), VMATCH_EINVAL);
    vmatch_layout_shifts(NULL, &cs, &ss, &ts);
    CHECK(cs == 0 && ss == 0 && ts == 0);
}

int main(void)
{
    test_named_specs();
    size_t i;
    for (i = 0; i < sizeof layouts / sizeof *layouts; i++) {
        model_t m = model_of(layouts[i]);
        vmatch_engine_t *e = make(layouts[i]);
        unsigned c = 99, s = 99, t = 99;
        vmatch_layout(e, &c, &s, &t);
        CHECK(c == m.l.c && s == m.l.s && t == m.l.t);
        vmatch_layout_shifts(e, &c, &s, &t);
        CHECK(c == m.l.cs && s == m.l.ss && t == m.l.ts);
        test_bounds(e, &m);
        test_cut(e, &m);
        test_round_trip(e, &m);
        test_engine(e, &m);
        vmatch_destroy(e);
    }
    return check_report("test_layout");
}
