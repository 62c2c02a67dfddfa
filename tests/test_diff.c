/* test_diff.c -- differential test: every registered (policy, storage) pair against the
 * reference model (ref.c) on long random operation streams.
 *
 * Environment:
 *   VMATCH_SEED       base seed (default below); each run's stream also depends on its spec
 *                     (pair and variant), so adding pairs leaves the other streams alone
 *   VMATCH_DIFF_OPS   operations per pair and seed (default 1,000,000)
 *   VMATCH_DIFF_PAIR  run only the pair "policy/storage", or every pair of one policy or
 *                     one storage when it is a bare name
 *   VMATCH_DIFF_SIMD  run storages with kernels (llv) with this kernel only (avx512, avx2,
 *                     scalar); by default with every kernel the CPU has, naming the others
 *   VMATCH_SOAK=1     20x the operations: four seeds of 5x each
 * A mismatch prints the spec, the seed and the operation index, and the environment that
 * reruns exactly that stream.
 */
/* clock_gettime is POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "engine.h"
#include "module.h"
#include "ref.h"
#include "simd.h"
#include "vmatch.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_SEED 0x5eed2024u
#define DEFAULT_OPS  1000000u
#define SOAK_SEEDS   4
#define SOAK_FACTOR  5 /* per seed: SOAK_SEEDS * SOAK_FACTOR = 20x the default */

/* Traffic shape.  Few contexts and a small tag range make receives and messages collide
 * often; a handful of hot sources carry most traffic, as in halo exchanges and
 * master/worker codes, while the long tail keeps per-source queues short and numerous. */
enum { NCTX = 3, NSRC = 200, NHOT = 4, NTAG = 8 };
static const int32_t hot_src[NHOT] = {0, 1, 37, 150};

/* Queue lengths stay near or below this so a pair costs seconds, not minutes, even for
 * storages that scan linearly; a few thousand entries span many blocks and slabs. */
#define QUEUE_CAP 3000
#define QUEUE_LOW 8 /* a drain phase ends when both sides are this short */

/* Percent of operations run with an allocation failure armed.  Pools take memory a slab
 * at a time, so a lone armed operation seldom meets an allocation; phases under memory
 * pressure arm every operation, and growth then runs into failures again and again. */
#define ENOMEM_PCT   2
#define PRESSURE_PCT 20 /* of phases */

/* Hard pressure fails every allocation, so a queue stays pinned at a slab or block edge and
 * failures meet it in many states; soft pressure lets one in ten through, so growth goes on
 * in small steps, each met by failures. */
enum pressure { PR_NONE, PR_SOFT, PR_HARD };

/* Each pair runs on the defaults and on shorter variants that move the boundaries: tiny lla
 * blocks (many block allocations and block edges), profile recording (an allocation that
 * can fail before the append), a layout that leaves the high bits unused; then blocks whose
 * bitmap spans several words with a partial last one, and the widest source and tag fields
 * the traffic generator can decode. */
static const struct {
    const char *extra;
    unsigned ops_div; /* the variant runs nops / ops_div operations */
    /* Added for llv only (so the other pairs keep their streams): the smallest blocks (a
     * block edge every 64 slots), and blocks of three bitmap words. */
    const char *llv_extra;
} variants[] = {
    {"", 1, ""},
    {"lla.block=4 profile.record=on layout.ctx=12 layout.src=20 layout.tag=20", 4,
     "llv.block=64"},
    {"lla.block=130 numa=off layout.ctx=2 layout.src=31 layout.tag=31", 4, "llv.block=192"},
};
#define NVARIANTS (sizeof variants / sizeof *variants)

/* Keys a policy needs, per variant; alternatives separated by '|' are run one after the
 * other, each on its own stream.  pnp runs with thresholds of 2, 5 and 8 so that levels
 * and partners form early and often, with entries moved to new partners' queues (v0, v2)
 * and with the thesis's levels (v1), with every metric, and with caps that the traffic's
 * 600 source keys fill (nprocs=256: 16, 64 and 256 partners per side), so the full table is
 * met too.  pnp-static reads a profile the test records first (write_profile).  hash runs
 * with its growing table (one entry per bucket, three, so that overflow queues fill, and a
 * half) and with fixed tables of 1, 2 and 7 buckets, where buckets hold long runs of colliding
 * keys.  cluster runs with both algorithms, K from 1 (one queue: policy=single) to 128 (more
 * than the distinct counts) and the heuristic's cap at 0 (none), 1 and 2 (the default), on a
 * profile of the test's own traffic (write_profile) and, for the alternatives marked '@', on
 * one of unrelated traffic (write_unrelated): its answers must be right when the profile is
 * wrong. */
#define DIFF_NPROCS 256
static const struct {
    const char *policy;
    const char *extra[NVARIANTS];
    unsigned cap[NVARIANTS]; /* pnp.cap, for the partner bound */
} policy_extra[] = {
    {"pnp",
     {"nprocs=256 pnp.threshold=2 pnp.cap=4",
      "nprocs=256 pnp.threshold=5 pnp.metric=median pnp.move=off",
      "nprocs=256 pnp.threshold=8 pnp.cap=16 pnp.metric=fence pnp.alpha=0.5"},
     {4, 1, 16}},
    {"pnp-static",
     {"nprocs=256", "nprocs=256 pnp.cap=4 pnp.metric=median",
      "nprocs=256 pnp.cap=16 pnp.metric=fence pnp.alpha=0"},
     {1, 4, 16}},
    {"hash",
     {"|hash.buckets=1", "hash.buckets=2|hash.load=300", "hash.buckets=7|hash.load=50"},
     {0, 0, 0}},
    {"cluster",
     {"nprocs=256|nprocs=256 cluster.algo=kmeans cluster.k=4|@nprocs=256|nprocs=256 "
      "cluster.cap=0",
      "nprocs=256 cluster.algo=kmeans cluster.k=2|@nprocs=256 cluster.algo=kmeans "
      "cluster.k=64|nprocs=256 cluster.cap=1|@nprocs=256 cluster.cap=0",
      "nprocs=256 cluster.algo=kmeans cluster.k=128|nprocs=256 cluster.algo=kmeans "
      "cluster.k=1|@nprocs=256 cluster.algo=heuristic"},
     {0, 0, 0}},
};
#define NPOLICY_EXTRA (sizeof policy_extra / sizeof *policy_extra)

enum op_kind { OP_POST, OP_ARRIVE, OP_PROBE, OP_IMPROBE, OP_CANCEL, OP_REMOVE, NOPS };
static const char *const op_name[NOPS] = {"post",    "arrive", "probe",
                                          "improbe", "cancel", "remove_unexpected"};

enum phase { PH_GROW_PRQ, PH_GROW_UMQ, PH_STEADY, PH_DRAIN, NPHASES };

/* Operation weights per phase (percent).  Growth phases tilt the post/arrive balance; the
 * drain phase removes through every path: matches, improbes, cancels and removes. */
static const unsigned phase_mix[NPHASES][NOPS] = {
    [PH_GROW_PRQ] = {50, 20, 8, 4, 9, 9},
    [PH_GROW_UMQ] = {20, 50, 8, 4, 9, 9},
    [PH_STEADY] = {35, 35, 10, 6, 7, 7},
    [PH_DRAIN] = {25, 25, 5, 15, 15, 15},
};

/* splitmix64: tiny, full-period and good enough to drive test streams. */
typedef struct rng {
    uint64_t s;
} rng_t;

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

/** State of one pair's run. */
typedef struct run {
    const char *pair; /* "policy/storage" */
    const char *spec; /* the engine's spec: the pair, the variant and the kernel */
    const char *simd; /* the kernel (storages with kernels), else NULL */
    unsigned ops_div; /* this variant runs VMATCH_DIFF_OPS / ops_div operations */
    uint64_t seed;    /* base seed, as the user gives it */
    vmatch_engine_t *e;
    ref_model_t ref;
    rng_t g;
    uint64_t op;      /* index of the operation being run */
    uint64_t next_id; /* payload ids handed out so far; payloads are never reused */
    uint32_t cls[NCTX];
    unsigned src_bits, tag_bits;
    vmatch_bits_t outside; /* the bits the layout leaves out (above the context) */
    int32_t max_src, max_tag;
    int inject; /* an allocation failure is armed for this operation */
    enum phase ph;
    uint64_t ph_left;       /* operations left in the phase */
    enum pressure pressure; /* allocation failures armed in this phase */
    uint64_t last_searches, last_inspected;
    uint64_t partner_bound, max_partners, max_levels; /* stats: partners never pass the bound */
    uint64_t n_enomem, n_matched, max_prq, max_umq, n_ops[NOPS];
} run_t;

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

/** A context, skewed toward the first (MPI_COMM_WORLD carries most traffic). */
static uint32_t pick_ctx(run_t *r)
{
    unsigned p = rng_below(&r->g, 100);
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
                                  ? ((vmatch_bits_t)1 << r->tag_bits) - 1
                                  : (((vmatch_bits_t)1 << r->src_bits) - 1) << r->tag_bits;
        *care &= ~(field & rng_next(&r->g));
    }
    return 1;
}

/** Unpack the fields of a message's bits with the engine's layout. */
static void unpack_msg(const run_t *r, vmatch_bits_t bits, uint32_t *ctx, int32_t *src,
                       int32_t *tag)
{
    *tag = (int32_t)(bits & (((vmatch_bits_t)1 << r->tag_bits) - 1));
    *src = (int32_t)((bits >> r->tag_bits) & (((vmatch_bits_t)1 << r->src_bits) - 1));
    *ctx = (uint32_t)(bits >> (r->tag_bits + r->src_bits));
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
        ctx = (uint32_t)(p->bits >> (r->tag_bits + r->src_bits));
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
    rc = vmatch_post(r->e, bits, care, cls, req, &got);
    if (failed_alloc(r, rc))
        return 1;
    wrc = ref_post(&r->ref, bits, care, req, &want);
    if (agree(r, rc, got, wrc, want))
        return 1;
    snprintf(what, sizeof what, "post(bits=%#" PRIx64 " care=%#" PRIx64 " cls=%u req=%p)", bits,
             care, cls, req);
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
    rc = vmatch_arrive(r->e, bits, cls, msg, &got);
    if (failed_alloc(r, rc))
        return 1;
    wrc = ref_arrive(&r->ref, bits, msg, &want);
    if (agree(r, rc, got, wrc, want))
        return 1;
    snprintf(what, sizeof what, "arrive(bits=%#" PRIx64 " cls=%u msg=%p)", bits, cls, msg);
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
    rc = vmatch_probe(r->e, bits, care, cls, remove, &got);
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
    if (st.partners > r->partner_bound)
        return mismatch(r, "after %s: %" PRIu64 " partners, more than the bound %" PRIu64,
                        after, st.partners, r->partner_bound);
    r->last_searches = st.searches;
    r->last_inspected = st.inspected;
    r->max_partners = st.partners > r->max_partners ? st.partners : r->max_partners;
    r->max_levels = st.levels > r->max_levels ? st.levels : r->max_levels;
    return 1;
}

/** Start a random phase of random length, maybe under memory pressure. */
static void next_phase(run_t *r)
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
static void steer(run_t *r)
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
static int step(run_t *r)
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
static int drain_all(run_t *r)
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

/** FNV-1a of a pair name, to give each pair its own stream from one seed. */
static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3u;
    return h;
}

/** Seconds on a monotonic clock. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/** Write a profile for pnp-static with the layout of spec (a variant's keys): per context,
 * the hot sources post and send about 40 entries each, ranks below 30 three, the other ranks
 * below 200 one, so every metric finds more partners than the smallest cap lets in.  Recorded
 * by an engine and saved, as a user would.  Returns 1. */
static int write_profile(const char *spec, const char *path)
{
    static char obj[1];
    char rec[320];
    vmatch_engine_t *e;
    snprintf(rec, sizeof rec, "profile.record=on nprocs=%d %s", DIFF_NPROCS, spec);
    int rc = vmatch_create(rec, &e);
    if (rc != VMATCH_OK) {
        fprintf(stderr, "test_diff: vmatch_create(\"%s\") = %d: %s\n", rec, rc,
                vmatch_last_error());
        return 0;
    }
    for (uint32_t ctx = 0; ctx < NCTX; ctx++)
        for (int32_t src = 0; src < NSRC; src++) {
            int n = src < 30 ? 3 : 1;
            for (int h = 0; h < NHOT; h++)
                n += src == hot_src[h] ? 39 : 0;
            for (int i = 0; i < n; i++) { /* tags 1 and 2 never match each other */
                vmatch_bits_t bits, care;
                void *out;
                vmatch_mpi_recv(e, ctx, src, 1, &bits, &care);
                CHECK_EQ(vmatch_post(e, bits, care, 0, obj, &out), VMATCH_QUEUED);
                CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, ctx, src, 2), 0, obj, &out),
                         VMATCH_QUEUED);
            }
        }
    rc = vmatch_profile_save(e, path);
    vmatch_destroy(e);
    CHECK_EQ(rc, VMATCH_OK);
    return rc == VMATCH_OK;
}

/** Write a profile that has nothing to do with the test's traffic, with the layout of spec:
 * the contexts 1 and 3 (3 is one the traffic never uses), every third rank up to 255 (ranks
 * from 200 never send), counts rising with the rank on the PRQ and falling on the UMQ, so
 * the test's hot sources share clusters with idle ones.  Returns 1. */
static int write_unrelated(const char *spec, const char *path)
{
    static char obj[1];
    char rec[320];
    vmatch_engine_t *e;
    snprintf(rec, sizeof rec, "profile.record=on nprocs=%d %s", DIFF_NPROCS, spec);
    int rc = vmatch_create(rec, &e);
    if (rc != VMATCH_OK) {
        fprintf(stderr, "test_diff: vmatch_create(\"%s\") = %d: %s\n", rec, rc,
                vmatch_last_error());
        return 0;
    }
    for (uint32_t ctx = 1; ctx <= 3; ctx += 2)
        for (int32_t src = 0; src < DIFF_NPROCS; src += 3) {
            void *out;
            vmatch_bits_t bits, care;
            for (int i = 0; i < 1 + src / 16; i++) {
                vmatch_mpi_recv(e, ctx, src, 1, &bits, &care);
                CHECK_EQ(vmatch_post(e, bits, care, 0, obj, &out), VMATCH_QUEUED);
            }
            for (int i = 0; i < 1 + (DIFF_NPROCS - 1 - src) / 8; i++)
                CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, ctx, src, 2), 0, obj, &out),
                         VMATCH_QUEUED);
        }
    rc = vmatch_profile_save(e, path);
    vmatch_destroy(e);
    CHECK_EQ(rc, VMATCH_OK);
    return rc == VMATCH_OK;
}

/** Run one pair in variant v, with the policy's keys alt (one alternative of the variant's,
 * printed when named), for nops operations from seed, with kernel simd (NULL for a storage
 * without kernels), adding the allocation failures it saw to *enomem.  Returns 1 when the
 * engine agreed throughout (or the pair cannot run here), 0 on the first mismatch. */
static int run_pair(const char *policy, const char *storage, const char *simd, unsigned v,
                    const char *alt, int named, uint64_t seed, uint64_t nops, uint64_t *enomem)
{
    const char *extra = variants[v].extra;
    char spec[768], pair[128], label[512], pextra[400] = "", profile[64] = "";
    unsigned ctx_bits;
    run_t r;
    double t0 = now();
    int rc, ok = 1;
    uint64_t i;

    memset(&r, 0, sizeof r);
    int unrelated = alt[0] == '@'; /* the profile of unrelated traffic */
    alt += unrelated;
    snprintf(pair, sizeof pair, "%s/%s", policy, storage);
    for (unsigned p = 0; p < NPOLICY_EXTRA; p++)
        if (strcmp(policy, policy_extra[p].policy) == 0) {
            snprintf(pextra, sizeof pextra, "%s%s", *alt ? " " : "", alt);
            r.partner_bound = 2 * (uint64_t)policy_extra[p].cap[v] * 16; /* c sqrt(256) */
        }
    if (strcmp(policy, "pnp-static") == 0 || strcmp(policy, "cluster") == 0) {
        snprintf(profile, sizeof profile, "test_diff-v%u%s.profile", v, unrelated ? "u" : "");
        if (!(unrelated ? write_unrelated(extra, profile) : write_profile(extra, profile)))
            return 0;
        snprintf(pextra + strlen(pextra), sizeof pextra - strlen(pextra), " profile=%s",
                 profile);
    }
    snprintf(spec, sizeof spec, "policy=%s storage=%s%s%s%s", policy, storage,
             *extra ? " " : "", extra, pextra);
    if (simd) /* the kernel's keys go last, so the text before is the same as without */
        snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s%s simd=%s",
                 *variants[v].llv_extra ? " " : "", variants[v].llv_extra, simd);
    snprintf(label, sizeof label, "%s%s%s%s%s%s", pair, simd ? "/" : "", simd ? simd : "",
             named && *alt ? " " : "", named ? alt : "",
             unrelated ? " (unrelated profile)" : "");
    r.pair = pair;
    r.simd = simd;
    r.spec = spec;
    r.ops_div = variants[v].ops_div;
    r.seed = seed;
    r.g.s = seed ^ hash_name(spec);
    rc = vmatch_create(spec, &r.e);
    if (rc == VMATCH_EUNSUPPORTED) {
        printf("test_diff: %s skipped: %s\n", pair, vmatch_last_error());
        return 1;
    }
    if (rc != VMATCH_OK) {
        fprintf(stderr, "test_diff: vmatch_create(\"%s\") = %d: %s\n", spec, rc,
                vmatch_last_error());
        return 0;
    }
    vmatch_layout(r.e, &ctx_bits, &r.src_bits, &r.tag_bits);
    /* Decoding messages back into fields needs widths below 32 bits; the traffic needs room
     * for its contexts, sources and tags. */
    if (r.src_bits >= 32 || r.tag_bits >= 32 || ctx_bits < 2 || (1u << r.src_bits) < NSRC ||
        (1u << r.tag_bits) < NTAG) {
        fprintf(stderr, "test_diff: layout %u/%u/%u of \"%s\" does not suit the traffic\n",
                ctx_bits, r.src_bits, r.tag_bits, spec);
        vmatch_destroy(r.e);
        return 0;
    }
    if (ctx_bits + r.src_bits + r.tag_bits < 64)
        r.outside = ~(vmatch_bits_t)0 << (ctx_bits + r.src_bits + r.tag_bits);
    r.max_src = (int32_t)((1u << r.src_bits) - 1);
    r.max_tag = (int32_t)((1u << r.tag_bits) - 1);
    r.cls[0] = 0;
    r.cls[1] = 0;
    r.cls[2] = vmatch_coll_class(r.e, VMATCH_COLL_ALLREDUCE, 4096, 64);
    ref_init(&r.ref);
    /* Start growing under pressure: the first allocations of every table and queue fail. */
    next_phase(&r);
    r.ph = PH_STEADY;
    r.pressure = PR_SOFT;

    for (i = 0; i < nops && ok; i++) {
        r.op = i;
        steer(&r);
        ok = step(&r);
    }
    if (ok)
        ok = drain_all(&r);
    /* pnp must have formed what it is tested for, partners and (dynamic) levels, unless the
     * run was cut short (VMATCH_DIFF_OPS). */
    if (ok && r.partner_bound && nops >= 50000 &&
        (r.max_partners == 0 || (strcmp(policy, "pnp") == 0 && r.max_levels == 0))) {
        fprintf(stderr, "test_diff: %s: only %" PRIu64 " partners and %" PRIu64 " levels\n",
                spec, r.max_partners, r.max_levels);
        ok = 0;
    }
    if (profile[0])
        remove(profile);
    char ptext[96] = "";
    if (r.partner_bound)
        snprintf(ptext, sizeof ptext, "; at most %" PRIu64 " partners, %" PRIu64 " levels",
                 r.max_partners, r.max_levels);

    printf("test_diff: %-23s v%u seed=0x%" PRIx64 " %s after %" PRIu64 " ops in %.2f s"
           " (post %" PRIu64 ", arrive %" PRIu64 ", probe %" PRIu64 ", improbe %" PRIu64
           ", cancel %" PRIu64 ", remove %" PRIu64 "; %" PRIu64 " matched, %" PRIu64
           " ENOMEM, max PRQ %" PRIu64 ", max UMQ %" PRIu64 "%s)\n",
           label, v, seed, ok ? "agreed" : "DISAGREED", i, now() - t0, r.n_ops[OP_POST],
           r.n_ops[OP_ARRIVE], r.n_ops[OP_PROBE], r.n_ops[OP_IMPROBE], r.n_ops[OP_CANCEL],
           r.n_ops[OP_REMOVE], r.n_matched, r.n_enomem, r.max_prq, r.max_umq, ptext);
    *enomem += r.n_enomem;
    ref_fini(&r.ref);
    vmatch_destroy(r.e);
    return ok;
}

/** An unsigned number from the environment, or def when unset or empty. */
static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *s = getenv(name);
    char *end;
    uint64_t v;
    if (!s || !*s)
        return def;
    v = strtoull(s, &end, 0);
    if (*end) {
        fprintf(stderr, "test_diff: %s=%s is not a number\n", name, s);
        exit(2);
    }
    return v;
}

/** The kernels a storage with kernels runs with here: each one the CPU has (or the one
 * VMATCH_DIFF_SIMD names), best first, into names; the others are printed as not run.
 * Returns how many. */
static unsigned kernels_to_run(const char *storage, const char **names)
{
    const char *want = getenv("VMATCH_DIFF_SIMD");
    unsigned n = 0;
    for (int s = VM_SIMD_COUNT - 1; s > VM_SIMD_AUTO; s--) {
        if (want && *want && strcmp(want, vm_simd_name(s)) != 0)
            continue;
        if (vm_simd_available(s))
            names[n++] = vm_simd_name(s);
        else
            printf("test_diff: %s with simd=%s NOT RUN: %s\n", storage, vm_simd_name(s),
                   vm_simd_why_not(s));
    }
    if (want && *want && vm_simd_parse(want, strlen(want)) <= VM_SIMD_AUTO) {
        fprintf(stderr, "test_diff: VMATCH_DIFF_SIMD=%s is not a kernel\n", want);
        exit(2);
    }
    return n;
}

/** The keys policy needs in variant v ('|' between alternatives), or "". */
static const char *policy_keys(const char *policy, unsigned v)
{
    for (unsigned p = 0; p < NPOLICY_EXTRA; p++)
        if (strcmp(policy, policy_extra[p].policy) == 0)
            return policy_extra[p].extra[v];
    return "";
}

/** True when the VMATCH_DIFF_PAIR filter only (NULL or empty: none) selects the pair. */
static int selected(const char *only, const vm_policy_t *pol, const vm_storage_t *sto)
{
    char pair[128];
    if (!only || !*only)
        return 1;
    snprintf(pair, sizeof pair, "%s/%s", pol->name, sto->name);
    return strcmp(only, pair) == 0 || strcmp(only, pol->name) == 0 ||
           strcmp(only, sto->name) == 0;
}

int main(void)
{
    uint64_t seed = env_u64("VMATCH_SEED", DEFAULT_SEED);
    uint64_t nops = env_u64("VMATCH_DIFF_OPS", DEFAULT_OPS);
    int soak = env_u64("VMATCH_SOAK", 0) != 0;
    const char *only = getenv("VMATCH_DIFF_PAIR");
    const char *kernels[VM_SIMD_COUNT];
    unsigned nseeds = soak ? SOAK_SEEDS : 1, npairs = 0, nruns = 0, nk, i, j, k, v, x;
    uint64_t enomem;
    int ok;
    const vm_policy_t *pol;
    const vm_storage_t *sto;

    if (soak)
        nops *= SOAK_FACTOR;
    printf("test_diff: seed=0x%" PRIx64 ", %" PRIu64
           " operations per pair and seed, %u seed(s)%s\n",
           seed, nops, nseeds, soak ? " (soak)" : "");
    for (v = 0; v < NVARIANTS; v++)
        printf("test_diff: variant v%u: \"%s\", %" PRIu64 " operations\n", v, variants[v].extra,
               nops / variants[v].ops_div);
    printf("test_diff: pairs:");
    for (i = 0; (pol = vm_policy_at(i)) != NULL; i++)
        for (j = 0; (sto = vm_storage_at(j)) != NULL; j++)
            if (selected(only, pol, sto))
                printf(" %s/%s", pol->name, sto->name);
    printf("\n");
    fflush(stdout);

    for (i = 0; (pol = vm_policy_at(i)) != NULL; i++) {
        for (j = 0; (sto = vm_storage_at(j)) != NULL; j++) {
            if (!selected(only, pol, sto))
                continue;
            npairs++;
            /* A storage with kernels runs once per kernel (kernels[x]); others once. */
            nk = sto->simd ? kernels_to_run(sto->name, kernels) : 1;
            for (x = 0; x < nk; x++) {
                const char *simd = sto->simd ? kernels[x] : NULL;
                ok = 1;
                enomem = 0;
                nruns++;
                for (k = 0; k < nseeds && ok; k++) {
                    for (v = 0; v < NVARIANTS && ok; v++) {
                        /* The policy's keys of this variant: each '|' alternative a run. */
                        const char *keys = policy_keys(pol->name, v);
                        int named = strchr(keys, '|') != NULL;
                        for (;;) {
                            char alt[320];
                            size_t n = strcspn(keys, "|");
                            snprintf(alt, sizeof alt, "%.*s", (int)n, keys);
                            ok = run_pair(pol->name, sto->name, simd, v, alt, named, seed + k,
                                          nops / variants[v].ops_div, &enomem);
                            CHECK(ok);
                            if (!ok || keys[n] != '|')
                                break;
                            keys += n + 1;
                        }
                    }
                }
                /* The injection must have bitten, or the ENOMEM paths went untested. */
                if (ok && nops >= 200000 && enomem == 0)
                    fprintf(stderr,
                            "test_diff: %s/%s%s%s: no allocation failure was ever returned\n",
                            pol->name, sto->name, simd ? " simd=" : "", simd ? simd : "");
                if (ok && nops >= 200000)
                    CHECK(enomem > 0);
            }
        }
    }
    printf("test_diff: %u pair(s) ran, %u run(s) counting each kernel\n", npairs, nruns);
    REQUIRE(npairs > 0);
    return check_report("test_diff");
}
