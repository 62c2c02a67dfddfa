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
#include "diff_stream.h"
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

/* Each pair runs on the defaults and on shorter variants that move the boundaries: tiny lla
 * blocks (many block allocations and block edges), profile recording (an allocation that
 * can fail before the append) and a trace recorded up to its cap (every call through the
 * recording calls, which must change no answer), a layout that leaves the high bits unused;
 * then blocks whose
 * bitmap spans several words with a partial last one, and the widest source and tag fields
 * the traffic generator can decode; then a named layout. */
static const struct {
    const char *extra;
    unsigned ops_div; /* the variant runs nops / ops_div operations */
    /* Added for llv only (so the other pairs keep their streams): the smallest blocks (a
     * block edge every 64 slots), and blocks of three bitmap words. */
    const char *llv_extra;
} variants[] = {
    {"", 1, ""},
    {"lla.block=4 profile.record=on trace.record=on trace.cap=3000 layout.ctx=12 layout.src=20 "
     "layout.tag=20",
     4, "llv.block=64"},
    {"lla.block=130 numa=off layout.ctx=2 layout.src=31 layout.tag=31", 4, "llv.block=192"},
    /* Open MPI's UCX tags: fields in another order, ANY_TAG keeping the tag's top bit */
    {"layout=ompi-ucx", 8, ""},
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
 * keys; with its short vector of 8 entries (the default), of 1 and 3, and without one; two of
 * the growing tables are watched in windows of 64 and 16 operations, so that they shrink after
 * every quiet spell (a steady phase after a drain) and grow again, memory failures included.
 * cluster runs with both algorithms, K from 1 (one queue: policy=single) to 128 (more than the
 * distinct counts) and the heuristic's cap at 0 (none), 1 and 2 (the default), on a profile of
 * the test's own traffic (write_profile) and, for the alternatives marked '@', on one of
 * unrelated traffic (write_unrelated): its answers must be right when the profile is wrong. */
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
     {"hash.shrink=64|hash.buckets=1|hash.short=0 hash.buckets=2",
      "hash.buckets=2|hash.load=300 hash.small_load=200 hash.shrink=16|hash.short=1 "
      "hash.buckets=7",
      "hash.buckets=7|hash.load=50|hash.short=3 hash.shrink=64"},
     {0, 0, 0}},
    {"cluster",
     {"nprocs=256|nprocs=256 cluster.algo=kmeans cluster.k=4|@nprocs=256|nprocs=256 "
      "cluster.cap=0",
      "nprocs=256 cluster.algo=kmeans cluster.k=2|@nprocs=256 cluster.algo=kmeans "
      "cluster.k=64|nprocs=256 cluster.cap=1|@nprocs=256 cluster.cap=0",
      "nprocs=256 cluster.algo=kmeans cluster.k=128|nprocs=256 cluster.algo=kmeans "
      "cluster.k=1|@nprocs=256 cluster.algo=heuristic"},
     {0, 0, 0}},
    /* unified: its collective share spread over six classes of four operations (two with
     * two sizes each, so an operation opens levels for several classes), caps from one
     * queue (nprocs=1) to 128 and partner caps of 1 and 4; point-to-point through hash, pnp
     * and single. */
    {"unified",
     {"nprocs=256 unified.kc=1|nprocs=256 unified.p2p=pnp unified.kp=1 unified.kc=8",
      "nprocs=16 unified.kc=1 unified.p2p=single|nprocs=1 unified.kc=1",
      "nprocs=256 unified.p2p=pnp unified.kp=4 unified.kc=2|nprocs=4 unified.kc=64"},
     {1, 0, 4}},
};
#define NPOLICY_EXTRA (sizeof policy_extra / sizeof *policy_extra)

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

/** An engine recording a profile, with DIFF_NPROCS and the layout of spec, or NULL (said). */
static vmatch_engine_t *recorder(const char *spec)
{
    char rec[320];
    vmatch_engine_t *e;
    snprintf(rec, sizeof rec, "profile.record=on nprocs=%d %s", DIFF_NPROCS, spec);
    int rc = vmatch_create(rec, &e);
    if (rc != VMATCH_OK) {
        fprintf(stderr, "test_diff: vmatch_create(\"%s\") = %d: %s\n", rec, rc,
                vmatch_last_error());
        return NULL;
    }
    return e;
}

/** Save the profile e recorded to path and destroy e.  Returns 1 when it was saved. */
static int save(vmatch_engine_t *e, const char *path)
{
    int rc = vmatch_profile_save(e, path);
    vmatch_destroy(e);
    CHECK_EQ(rc, VMATCH_OK);
    return rc == VMATCH_OK;
}

/** Write a profile for pnp-static with the layout of spec (a variant's keys): per context,
 * the hot sources post and send about 40 entries each, ranks below 30 three, the other ranks
 * below 200 one, so every metric finds more partners than the smallest cap lets in.  Recorded
 * by an engine and saved, as a user would.  Returns 1. */
static int write_profile(const char *spec, const char *path)
{
    static char obj[1];
    vmatch_engine_t *e = recorder(spec);
    if (!e)
        return 0;
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
    return save(e, path);
}

/** Write a profile that has nothing to do with the test's traffic, with the layout of spec:
 * the contexts 1 and 3 (3 is one the traffic never uses), every third rank up to 255 (ranks
 * from 200 never send), counts rising with the rank on the PRQ and falling on the UMQ, so
 * the test's hot sources share clusters with idle ones.  Returns 1. */
static int write_unrelated(const char *spec, const char *path)
{
    static char obj[1];
    vmatch_engine_t *e = recorder(spec);
    if (!e)
        return 0;
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
    return save(e, path);
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
            /* c sqrt(256); a variant without keys of its own has v0's */
            r.partner_bound =
                2 * (uint64_t)policy_extra[p].cap[policy_extra[p].extra[v] ? v : 0] * 16;
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
    vmatch_layout(r.e, &r.ctx_bits, &r.src_bits, &r.tag_bits);
    vmatch_layout_shifts(r.e, &r.ctx_shift, &r.src_shift, &r.tag_shift);
    /* Decoding messages back into fields needs widths below 32 bits; the traffic needs room
     * for its contexts, sources and tags. */
    if (r.src_bits >= 32 || r.tag_bits >= 32 || r.ctx_bits < 2 || (1u << r.src_bits) < NSRC ||
        (1u << r.tag_bits) < NTAG) {
        fprintf(stderr, "test_diff: layout %u/%u/%u of \"%s\" does not suit the traffic\n",
                r.ctx_bits, r.src_bits, r.tag_bits, spec);
        vmatch_destroy(r.e);
        return 0;
    }
    if (r.ctx_bits + r.src_bits + r.tag_bits < 64)
        r.outside = ~(vmatch_bits_t)0 << (r.ctx_bits + r.src_bits + r.tag_bits);
    r.max_src = (int32_t)((1u << r.src_bits) - 1);
    r.max_tag = (int32_t)((1u << r.tag_bits) - 1);
    r.nctx = NCTX;
    r.cls[0] = 0;
    r.cls[1] = 0;
    r.cls[2] = vmatch_coll_class(r.e, VMATCH_COLL_ALLREDUCE, 4096, 64);
    if (strcmp(policy, "unified") == 0) {
        static const struct {
            uint32_t op;
            uint64_t bytes;
        } coll[NCTX_MAX - 3] = {{VMATCH_COLL_ALLREDUCE, 8},
                                {VMATCH_COLL_GATHER, 1024},
                                {VMATCH_COLL_GATHER, 1 << 20},
                                {VMATCH_COLL_BCAST, 64},
                                {VMATCH_COLL_ALLTOALL, 8}};
        r.nctx = r.ctx_bits >= 3 ? NCTX_MAX : 1u << r.ctx_bits; /* what the layout holds */
        r.class_stats = 1;
        for (unsigned c = 3; c < NCTX_MAX; c++)
            r.cls[c] = vmatch_coll_class(r.e, coll[c - 3].op, coll[c - 3].bytes, 256);
    }
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
    int want_partners = r.partner_bound && (!r.class_stats || strstr(alt, "p2p=pnp"));
    if (ok && want_partners && nops >= 50000 &&
        (r.max_partners == 0 || (strcmp(policy, "pnp") == 0 && r.max_levels == 0))) {
        fprintf(stderr, "test_diff: %s: only %" PRIu64 " partners and %" PRIu64 " levels\n",
                spec, r.max_partners, r.max_levels);
        ok = 0;
    }
    /* unified must have profiled classes and opened levels. */
    if (ok && r.class_stats && nops >= 50000 && (r.n_profiled == 0 || r.max_levels == 0)) {
        fprintf(stderr, "test_diff: %s: %" PRIu64 " classes profiled, %" PRIu64 " levels\n",
                spec, r.n_profiled, r.max_levels);
        ok = 0;
    }
    if (profile[0])
        remove(profile);
    char ptext[96] = "";
    if (r.partner_bound)
        snprintf(ptext, sizeof ptext, "; at most %" PRIu64 " partners, %" PRIu64 " levels",
                 r.max_partners, r.max_levels);
    if (r.class_stats)
        snprintf(ptext + strlen(ptext), sizeof ptext - strlen(ptext),
                 "; %" PRIu64 " level queues at most, %" PRIu64 " levels", r.max_coll_queues,
                 r.max_levels);

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

/** The keys policy needs in variant v ('|' between alternatives), or "".  A variant the
 * table leaves out (the named layout's) takes v0's. */
static const char *policy_keys(const char *policy, unsigned v)
{
    for (unsigned p = 0; p < NPOLICY_EXTRA; p++)
        if (strcmp(policy, policy_extra[p].policy) == 0)
            return policy_extra[p].extra[v] ? policy_extra[p].extra[v]
                                            : policy_extra[p].extra[0];
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
