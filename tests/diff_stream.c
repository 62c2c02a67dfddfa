/* diff_stream.c -- test_diff's random operation stream (diff_stream.h): receives and
 * messages drawn from the traffic's shape, every operation run on the engine and on the
 * reference model, their answers and statistics compared, in phases that grow, steady and
 * drain the queues under allocation failures. */
#include "diff_stream.h"
#include "check.h"
#include "hooks.h"
#include "simd.h"
#include "vmatch_inline.h"
#include "vmatch_unified.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const int32_t hot_src[NHOT] = {0, 1, 37, 150};

/* Queue lengths stay near or below this so a pair costs seconds, not minutes, even for
 * storages that scan linearly; a few thousand entries span many blocks and slabs. */
#define QUEUE_CAP 3000
#define QUEUE_LOW 8 /* a drain phase ends when both sides are this short */

/* Percent of operations run with an allocation failure armed.  Pools take memory a slab
 * at a time, so a lone armed operation seldom meets an allocation; phases under memory
 * pressure arm every operation, and growth then runs into failures again and again. */
#define ENOMEM_PCT   2
#define PRESSURE_PCT 20 /* of phases */

static const char *const op_name[NOPS] = {"post",    "arrive", "probe",
                                          "improbe", "cancel", "remove_unexpected"};

/* Operation weights per phase (percent).  Growth phases tilt the post/arrive balance; the
 * drain phase removes through every path: matches, improbes, cancels and removes. */
static const unsigned phase_mix[NPHASES][NOPS] = {
    [PH_GROW_PRQ] = {50, 20, 8, 4, 9, 9},
    [PH_GROW_UMQ] = {20, 50, 8, 4, 9, 9},
    [PH_STEADY] = {35, 35, 10, 6, 7, 7},
    [PH_DRAIN] = {25, 25, 5, 15, 15, 15},
};

/** Next 64 random bits. */
static uint64_t rng_next(rng_t *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/** Nearly uniform in [0, n) (n > 0): multiply-shift, cheaper than a division. */
static uint32_t rng_below(rng_t *g, uint32_t n)
{
    return (uint32_t)(((rng_next(g) >> 32) * (uint64_t)n) >> 32);
}

/** True with probability pct percent. */
static int rng_pct(rng_t *g, unsigned pct)
{
    return rng_below(g, 100) < pct;
}

/** The payload pointer of id: unique, non-NULL and aligned like a real request. */
static void *payload_of(uint64_t id)
{
    return (void *)(uintptr_t)(id * 8 + 8);
}

/** Print a mismatch with everything needed to reproduce it; always returns 0. */
static int mismatch(const run_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int mismatch(const run_t *r, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "test_diff: MISMATCH spec=\"%s\" seed=0x%" PRIx64 " op=%" PRIu64 ": ",
            r->spec, r->seed, r->op);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr,
            "\n  (reproduce: VMATCH_SEED=0x%" PRIx64
            " VMATCH_DIFF_PAIR=%s%s%s VMATCH_DIFF_OPS=%" PRIu64 ")\n",
            r->seed, r->pair, r->simd ? " VMATCH_DIFF_SIMD=" : "", r->simd ? r->simd : "",
            (r->op + 1) * r->ops_div);
    return 0;
}

/** Class of traffic on context ctx: the last context carries a collective class, so class
 * routing in the policies is exercised; contexts never match across, as MPI promises. */
static uint32_t cls_of(const run_t *r, uint32_t ctx)
{
    return r->cls[ctx];
}

/** A context, skewed toward the first (MPI_COMM_WORLD carries most traffic); the last
 * share goes to context 2, or spreads over 2 .. nctx-1 when there are more. */
static uint32_t pick_ctx(run_t *r)
{
    unsigned p = rng_below(&r->g, 100);
    if (p >= 85 && r->nctx > NCTX)
        return 2 + rng_below(&r->g, r->nctx - 2);
    return p < 55 ? 0 : p < 85 ? 1 : 2;
}

/** A source: mostly hot ones, a long tail, and rarely the widest value the field holds. */
static int32_t pick_src(run_t *r)
{
    unsigned p = rng_below(&r->g, 100);
    if (p < 60)
        return hot_src[rng_below(&r->g, NHOT)];
    if (p < 99)
        return (int32_t)rng_below(&r->g, NSRC);
    return r->max_src;
}

/** A tag from a small range, rarely the widest value. */
static int32_t pick_tag(run_t *r)
{
    return rng_pct(&r->g, 2) ? r->max_tag : (int32_t)rng_below(&r->g, NTAG);
}

/** Pack a message; a packing failure is a library bug, reported as a mismatch. */
static int pack_msg(run_t *r, uint32_t ctx, int32_t src, int32_t tag, vmatch_bits_t *bits)
{
    int rc = vmatch_mpi_pack(r->e, ctx, src, tag, bits, NULL);
    if (rc != VMATCH_OK)
        return mismatch(r, "vmatch_mpi_pack(msg %u,%d,%d) = %d", ctx, src, tag, rc);
    return 1;
}

/** Pack a receive for <ctx, src, tag> with a random wildcard shape: exact, ANY_TAG,
 * ANY_SOURCE, both, or (rarely) a care mask with arbitrary tag or source bits cleared,
 * which the manual allows and which no MPI packing produces. */
static int pack_recv(run_t *r, uint32_t ctx, int32_t src, int32_t tag, vmatch_bits_t *bits,
                     vmatch_bits_t *care)
{
    unsigned p = rng_below(&r->g, 100);
    int odd = 0;
    int rc;
    if (p < 55) {
        /* exact */
    } else if (p < 70) {
        tag = VMATCH_ANY_TAG;
    } else if (p < 85) {
        src = VMATCH_ANY_SOURCE;
    } else if (p < 95) {
        src = VMATCH_ANY_SOURCE;
        tag = VMATCH_ANY_TAG;
    } else {
        odd = 1;
    }
    /* Half through the checked packer, half through the shorthand, so both feed matching. */
    if (rng_pct(&r->g, 50)) {
        rc = vmatch_mpi_pack(r->e, ctx, src, tag, bits, care);
        if (rc != VMATCH_OK)
            return mismatch(r, "vmatch_mpi_pack(recv %u,%d,%d) = %d", ctx, src, tag, rc);
    } else {
        vmatch_mpi_recv(r->e, ctx, src, tag, bits, care);
    }
    /* Now and then clear bits the layout leaves out: a mask no MPI packing makes, which
     * matches as the full one does (no message sets those bits) but is not all ones.  No
     * draw at all when the layout fills 64 bits, so those streams stay as they were. */
    if (r->outside && rng_pct(&r->g, 5))
        *care &= ~(r->outside & rng_next(&r->g));
    if (odd) {
        /* Clear random bits of the tag or source field, never of the context, so classes
         * still cannot meet. */
        vmatch_bits_t field = rng_pct(&r->g, 50)
                                  ? (((vmatch_bits_t)1 << r->tag_bits) - 1) << r->tag_shift
                                  : (((vmatch_bits_t)1 << r->src_bits) - 1) << r->src_shift;
        *care &= ~(field & rng_next(&r->g));
    }
    return 1;
}

/** Unpack the fields of a message's bits with the engine's layout. */
static void unpack_msg(const run_t *r, vmatch_bits_t bits, uint32_t *ctx, int32_t *src,
                       int32_t *tag)
{
    *tag = (int32_t)((bits >> r->tag_shift) & (((vmatch_bits_t)1 << r->tag_bits) - 1));
    *src = (int32_t)((bits >> r->src_shift) & (((vmatch_bits_t)1 << r->src_bits) - 1));
    *ctx = (uint32_t)((bits >> r->ctx_shift) & (((vmatch_bits_t)1 << r->ctx_bits) - 1));
}

/** A receive (or probe) and its class.  With aim set and a message queued, it is built from
 * a random queued message so it surely matches something; otherwise it is random. */
static int gen_recv(run_t *r, int aim, vmatch_bits_t *bits, vmatch_bits_t *care, uint32_t *cls)
{
    uint32_t ctx;
    int32_t src, tag;
    if (aim && r->ref.umq.n) {
        const ref_entry_t *m = &r->ref.umq.v[rng_below(&r->g, (uint32_t)r->ref.umq.n)];
        unpack_msg(r, m->bits, &ctx, &src, &tag);
    } else {
        ctx = pick_ctx(r);
        src = pick_src(r);
        tag = pick_tag(r);
    }
    *cls = cls_of(r, ctx);
    return pack_recv(r, ctx, src, tag, bits, care);
}

/** A message and its class.  With aim set and a receive posted, the bits are taken from a
 * random posted receive where it cares and random elsewhere, so it surely matches. */
static int gen_msg(run_t *r, int aim, vmatch_bits_t *bits, uint32_t *cls)
{
    uint32_t ctx = pick_ctx(r);
    int32_t src = pick_src(r), tag = pick_tag(r);
    const ref_entry_t *p = NULL;
    if (aim && r->ref.prq.n) {
        p = &r->ref.prq.v[rng_below(&r->g, (uint32_t)r->ref.prq.n)];
        ctx = (uint32_t)((p->bits >> r->ctx_shift) & (((vmatch_bits_t)1 << r->ctx_bits) - 1));
    }
    if (!pack_msg(r, ctx, src, tag, bits))
        return 0;
    if (p)
        *bits = (*bits & ~p->care) | (p->bits & p->care);
    *cls = cls_of(r, ctx);
    return 1;
}

/** True when the engine's status and payload are the model's (counting matches). */
static int agree(run_t *r, int got, const void *got_p, int want, const void *want_p)
{
    if (got != want || (want == VMATCH_MATCHED && got_p != want_p))
        return 0;
    r->n_matched += want == VMATCH_MATCHED;
    return 1;
}

/** Report a disagreement of the call described by what; always returns 0. */
static int disagree(run_t *r, const char *what, int got, const void *got_p, int want,
                    const void *want_p)
{
    if (got != want)
        return mismatch(r, "%s: engine returned %d (%s), reference %d (%s)", what, got,
                        vmatch_strerror(got), want, vmatch_strerror(want));
    return mismatch(r, "%s: engine matched payload %p, reference %p", what, got_p, want_p);
}

/** True when the engine's result is an armed allocation failure, which the model must not
 * see: the manual promises that a failed call changes nothing. */
static int failed_alloc(run_t *r, int rc)
{
    if (r->inject && rc == VMATCH_ENOMEM) {
        r->n_enomem++;
        return 1;
    }
    return 0;
}

/** Which path an operation takes, from its index alone (the stream's random numbers stay
 * as they were): 0 the library's call, 1 vmatch_inline.h's, 2 (arrivals) the split calls as
 * UCX makes them, vmatch_inline_match_posted then vmatch_inline_enqueue_unexpected.  Inline
 * calls run inline on the default engine (policy=hash, threads off) and fall through to the
 * library everywhere else; both paths meet on every engine.  Probes take the inline call on
 * paths 1 and 2. */
static unsigned path_of(const run_t *r)
{
    return (unsigned)(((r->op * 0x9E3779B97F4A7C15ull) >> 32) % 3);
}

static uint64_t searches_of(const run_t *r)
{
    vmatch_stats_t st;
    vmatch_stats(r->e, &st);
    return st.searches;
}

/** A post or arrival counts one search on whichever path it took (the inline calls count as
 * the library does): 1, or 0 on a mismatch. */
static int one_search(run_t *r, uint64_t before, const char *what)
{
    uint64_t now = searches_of(r);
    if (now == before + 1)
        return 1;
    return mismatch(r, "%s (path %u): searches went from %" PRIu64 " to %" PRIu64, what,
                    path_of(r), before, now);
}

/** A post on the path path_of gives (2: the split calls as UCX makes them, a removing probe
 * then vmatch_inline_enqueue_posted). */
static int post_by_path(run_t *r, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                        void *req, void **got)
{
    switch (path_of(r)) {
    case 1:
        return vmatch_inline_post(r->e, bits, care, cls, req, got);
    case 2: {
        int rc = vmatch_inline_probe(r->e, bits, care, cls, 1, got);
        return rc == VMATCH_ENOTFOUND ? vmatch_inline_enqueue_posted(r->e, bits, care, cls, req)
                                      : rc;
    }
    default:
        return vmatch_post(r->e, bits, care, cls, req, got);
    }
}

/** A message's arrival on the path path_of gives. */
static int arrive_by_path(run_t *r, vmatch_bits_t bits, uint32_t cls, void *msg, void **got)
{
    switch (path_of(r)) {
    case 1:
        return vmatch_inline_arrive(r->e, bits, cls, msg, got);
    case 2: {
        int rc = vmatch_inline_match_posted(r->e, bits, cls, got);
        return rc == VMATCH_ENOTFOUND ? vmatch_inline_enqueue_unexpected(r->e, bits, cls, msg)
                                      : rc;
    }
    default:
        return vmatch_arrive(r->e, bits, cls, msg, got);
    }
}

/** One post on both sides. */
static int op_post(run_t *r, int aim)
{
    vmatch_bits_t bits, care;
    uint32_t cls;
    void *req = payload_of(r->next_id++), *got = NULL, *want = NULL;
    char what[128];
    int rc, wrc;
    if (!gen_recv(r, aim, &bits, &care, &cls))
        return 0;
    uint64_t before = searches_of(r);
    rc = post_by_path(r, bits, care, cls, req, &got);
    snprintf(what, sizeof what, "post(bits=%#" PRIx64 " care=%#" PRIx64 " cls=%u req=%p)", bits,
             care, cls, req);
    if (!one_search(r, before, what))
        return 0;
    if (failed_alloc(r, rc))
        return 1;
    wrc = ref_post(&r->ref, bits, care, req, &want);
    if (agree(r, rc, got, wrc, want))
        return 1;
    return disagree(r, what, rc, got, wrc, want);
}

/** One message arrival on both sides. */
static int op_arrive(run_t *r, int aim)
{
    vmatch_bits_t bits;
    uint32_t cls;
    void *msg = payload_of(r->next_id++), *got = NULL, *want = NULL;
    char what[128];
    int rc, wrc;
    if (!gen_msg(r, aim, &bits, &cls))
        return 0;
    uint64_t before = searches_of(r);
    rc = arrive_by_path(r, bits, cls, msg, &got);
    snprintf(what, sizeof what, "arrive(bits=%#" PRIx64 " cls=%u msg=%p)", bits, cls, msg);
    if (!one_search(r, before, what))
        return 0;
    if (failed_alloc(r, rc))
        return 1;
    wrc = ref_arrive(&r->ref, bits, msg, &want);
    if (agree(r, rc, got, wrc, want))
        return 1;
    return disagree(r, what, rc, got, wrc, want);
}

/** One probe (remove 0: MPI_Iprobe, 1: MPI_Improbe) on both sides. */
static int op_probe(run_t *r, int aim, int remove)
{
    vmatch_bits_t bits, care;
    uint32_t cls;
    void *got = NULL, *want = NULL;
    char what[128];
    int rc, wrc;
    if (!gen_recv(r, aim, &bits, &care, &cls))
        return 0;
    rc = path_of(r) ? vmatch_inline_probe(r->e, bits, care, cls, remove, &got)
                    : vmatch_probe(r->e, bits, care, cls, remove, &got);
    if (failed_alloc(r, rc))
        return 1;
    wrc = ref_probe(&r->ref, bits, care, remove, &want);
    if (agree(r, rc, got, wrc, want))
        return 1;
    snprintf(what, sizeof what, "probe(bits=%#" PRIx64 " care=%#" PRIx64 " cls=%u remove=%d)",
             bits, care, cls, remove);
    return disagree(r, what, rc, got, wrc, want);
}

/** A payload for cancel / remove: one queued on the side asked for (when aim), one queued
 * on the other side (must not be found), or any id handed out so far or soon (mostly
 * gone already; the model knows). */
static void *pick_handle(run_t *r, const ref_list_t *own, const ref_list_t *other, int aim)
{
    unsigned p = rng_below(&r->g, 100);
    if (own->n && (aim || p < 50))
        return own->v[rng_below(&r->g, (uint32_t)own->n)].payload;
    if (other->n && p < 75)
        return other->v[rng_below(&r->g, (uint32_t)other->n)].payload;
    return payload_of(rng_below(&r->g, (uint32_t)(r->next_id + 16)));
}

/** One cancel (PRQ) or remove_unexpected (UMQ) on both sides. */
static int op_remove(run_t *r, int aim, int umq)
{
    const ref_list_t *own = umq ? &r->ref.umq : &r->ref.prq;
    const ref_list_t *other = umq ? &r->ref.prq : &r->ref.umq;
    void *h = pick_handle(r, own, other, aim);
    char what[64];
    int rc, wrc;
    rc = umq ? vmatch_remove_unexpected(r->e, h) : vmatch_cancel(r->e, h);
    if (failed_alloc(r, rc))
        return 1;
    wrc = umq ? ref_remove_unexpected(&r->ref, h) : ref_cancel(&r->ref, h);
    if (agree(r, rc, NULL, wrc, NULL))
        return 1;
    snprintf(what, sizeof what, "%s(%p)", umq ? "remove_unexpected" : "cancel", h);
    return disagree(r, what, rc, NULL, wrc, NULL);
}

/** The level queues of every side stay within their cap, whichever class is asked. */
static int check_classes(run_t *r, const char *after)
{
    uint64_t profiled = 0;
    for (unsigned ctx = 0; ctx < r->nctx; ctx++) {
        vmatch_class_stats_t cs;
        int rc = vmatch_class_stats(r->e, r->cls[ctx], &cs);
        if (rc != VMATCH_OK)
            return mismatch(r, "after %s: vmatch_class_stats = %d", after, rc);
        for (int s = 0; s < 2; s++) {
            uint32_t sum = 0;
            for (uint32_t l = 0; l < cs.levels[s] && l < VMATCH_MAX_LEVELS; l++)
                sum += cs.level_queues[s][l];
            if (cs.coll_queues[s] > cs.coll_cap[s] || sum > cs.coll_queues[s] ||
                cs.levels[s] > VMATCH_MAX_LEVELS)
                return mismatch(r,
                                "after %s: side %d: %u level queues (class %u: %u in %u "
                                "levels), cap %u",
                                after, s, cs.coll_queues[s], r->cls[ctx], sum, cs.levels[s],
                                cs.coll_cap[s]);
            if (cs.coll_queues[s] > r->max_coll_queues)
                r->max_coll_queues = cs.coll_queues[s];
            profiled += cs.profiled[s];
        }
    }
    r->n_profiled = profiled;
    return 1;
}

/** Figure k's value by key, or 0 when the engine's policy keeps none (VMATCH_EUNSUPPORTED).
 * Whether the engine keeps it is asked once per run (r->figures), so that the calls after
 * every operation do not each make an error message. */
static uint64_t figure(run_t *r, unsigned k, const char *key)
{
    unsigned asked = 1u << (2 * k + 1), kept = 1u << (2 * k);
    uint64_t v = 0;
    if (!(r->figures & asked)) {
        r->figures |= asked;
        if (vmatch_stat(r->e, key, &v) != VMATCH_OK)
            return 0;
        r->figures |= kept;
        return v;
    }
    return (r->figures & kept) && vmatch_stat(r->e, key, &v) == VMATCH_OK ? v : 0;
}

/** Engine queue lengths against the model's, and the cumulative counters never fall. */
static int check_stats(run_t *r, const char *after)
{
    vmatch_stats_t st;
    vmatch_stats(r->e, &st);
    if (st.posted != ref_posted(&r->ref) || st.unexpected != ref_unexpected(&r->ref))
        return mismatch(
            r, "after %s: stats posted=%" PRIu64 " unexpected=%" PRIu64 ", reference %zu / %zu",
            after, st.posted, st.unexpected, ref_posted(&r->ref), ref_unexpected(&r->ref));
    if (st.searches < r->last_searches || st.inspected < r->last_inspected)
        return mismatch(r, "after %s: searches/inspected went down", after);
    if (st.bytes == 0)
        return mismatch(r, "after %s: stats bytes == 0 for a live engine", after);
    /* pnp's partners (with unified.p2p=pnp too), pnp's rounds and unified's levels */
    uint64_t partners = figure(r, 0, "pnp.partners");
    uint64_t levels = figure(r, 1, "pnp.levels") + figure(r, 2, "unified.levels");
    if (partners > r->partner_bound)
        return mismatch(r, "after %s: %" PRIu64 " partners, more than the bound %" PRIu64,
                        after, partners, r->partner_bound);
    if (r->class_stats && !check_classes(r, after))
        return 0;
    r->last_searches = st.searches;
    r->last_inspected = st.inspected;
    r->max_partners = partners > r->max_partners ? partners : r->max_partners;
    r->max_levels = levels > r->max_levels ? levels : r->max_levels;
    return 1;
}

/** Start a random phase of random length, maybe under memory pressure. */
void next_phase(run_t *r)
{
    r->ph = (enum phase)rng_below(&r->g, NPHASES);
    r->ph_left = 200 + rng_below(&r->g, 8000);
    r->pressure = !rng_pct(&r->g, PRESSURE_PCT) ? PR_NONE
                  : rng_pct(&r->g, 50)          ? PR_SOFT
                                                : PR_HARD;
}

/** Before each operation: drain when a side reaches the cap, and move on when a drain has
 * emptied the queues or a phase has run its length, so long and short queues both get
 * their share. */
void steer(run_t *r)
{
    size_t np = ref_posted(&r->ref), nu = ref_unexpected(&r->ref);
    if (np > r->max_prq)
        r->max_prq = np;
    if (nu > r->max_umq)
        r->max_umq = nu;
    if (np >= QUEUE_CAP || nu >= QUEUE_CAP) {
        if (r->ph != PH_DRAIN) {
            r->ph = PH_DRAIN;
            r->ph_left = 4 * QUEUE_CAP;
        }
    } else if (r->ph == PH_DRAIN && np < QUEUE_LOW && nu < QUEUE_LOW) {
        next_phase(r);
    } else if (r->ph_left-- == 0) {
        next_phase(r);
    }
}

/** Choose and run one operation on both sides; 0 on a mismatch. */
int step(run_t *r)
{
    const unsigned *mix = phase_mix[r->ph];
    unsigned p = rng_below(&r->g, 100), k = 0, acc = mix[0];
    int aim = r->ph == PH_DRAIN ? rng_pct(&r->g, 80) : rng_pct(&r->g, 15);
    int ok;
    while (p >= acc && k + 1 < NOPS)
        acc += mix[++k];
    if (r->pressure != PR_NONE) {
        r->inject = 1;
        vm_engine_mem(r->e)->fail_after = r->pressure == PR_HARD || rng_pct(&r->g, 90) ? 0 : 1;
    } else {
        r->inject = rng_pct(&r->g, ENOMEM_PCT);
        if (r->inject)
            vm_engine_mem(r->e)->fail_after = (int64_t)rng_below(&r->g, 4);
    }
    switch (k) {
    case OP_POST:
        ok = op_post(r, aim);
        break;
    case OP_ARRIVE:
        ok = op_arrive(r, aim);
        break;
    case OP_PROBE:
        ok = op_probe(r, aim, 0);
        break;
    case OP_IMPROBE:
        ok = op_probe(r, aim, 1);
        break;
    case OP_CANCEL:
        ok = op_remove(r, aim, 0);
        break;
    default:
        ok = op_remove(r, aim, 1);
        break;
    }
    if (r->inject)
        vm_engine_mem(r->e)->fail_after = -1;
    r->n_ops[k]++;
    return ok && check_stats(r, op_name[k]);
}

/** Remove everything left, through cancel and remove_unexpected in a random order, and
 * check that the engine ends empty; 0 on a mismatch. */
int drain_all(run_t *r)
{
    r->inject = 0;
    while (ref_posted(&r->ref) || ref_unexpected(&r->ref)) {
        int umq = ref_posted(&r->ref) == 0 || (ref_unexpected(&r->ref) && rng_pct(&r->g, 50));
        r->op++;
        if (!op_remove(r, 1, umq) || !check_stats(r, "final drain"))
            return 0;
    }
    return 1;
}
