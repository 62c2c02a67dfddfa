/* test_workloads.c -- the generators and the replay driver.
 *
 * Each generator runs at small sizes; its trace is replayed on the reference model (ref.c)
 * and must end with the queue lengths the pattern implies (every collective and every
 * exchange leaves both queues empty; a gather whose receives are all pre-posted never has an
 * unexpected message, ...), post as many receives as the algorithm does, and be the same for
 * the same seed.  Replays on vmatch engines must return what the reference returns, which
 * also checks the driver's packing against vmatch_mpi_pack.  Spec errors and preparation
 * errors are checked too.
 */
#include "check.h"
#include "gen.h"
#include "ref.h"
#include "replay.h"
#include "trace.h"
#include "vmatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reference model as a replay backend ---- */

static int ref_b_post(void *self, uint64_t bits, uint64_t care, uint32_t cls, void *req,
                      void **msg_out)
{
    (void)cls;
    return ref_post(self, bits, care, req, msg_out);
}

static int ref_b_arrive(void *self, uint64_t bits, uint32_t cls, void *msg, void **req_out)
{
    (void)cls;
    return ref_arrive(self, bits, msg, req_out);
}

static int ref_b_probe(void *self, uint64_t bits, uint64_t care, uint32_t cls, int remove,
                       void **msg_out)
{
    (void)cls;
    return ref_probe(self, bits, care, remove, msg_out);
}

static int ref_b_cancel(void *self, void *req)
{
    return ref_cancel(self, req);
}

static int ref_b_remove(void *self, void *msg)
{
    return ref_remove_unexpected(self, msg);
}

static void ref_backend(ref_model_t *r, vm_wl_backend_t *b)
{
    memset(b, 0, sizeof *b);
    b->self = r;
    b->ctx_bits = 16;
    b->src_bits = 24;
    b->tag_bits = 24;
    b->post = ref_b_post;
    b->arrive = ref_b_arrive;
    b->probe = ref_b_probe;
    b->cancel = ref_b_cancel;
    b->remove = ref_b_remove;
}

/* What a workload did on the reference model. */
typedef struct result {
    vm_wl_measure_t m;
    size_t kinds[VM_TRACE_NKINDS];
    size_t wild_src, wild_tag, wild_both; /* receives and probes by wildcard shape */
    size_t ctx_coll;                      /* operations on the collective context */
    uint32_t *out;                        /* outcomes (freed by the caller) */
} result_t;

/** Generate spec, check it, replay it on the reference model; fills *r, returns the trace. */
static vm_trace_t run_ref(const char *spec, result_t *r)
{
    vm_trace_t t;
    char err[256], desc[512];
    vm_trace_init(&t);
    memset(r, 0, sizeof *r);
    int rc = vm_wl_generate(spec, &t, desc, sizeof desc, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s: %s\n", spec, err);
    REQUIRE(rc == 0);
    rc = vm_trace_check(&t, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s: %s\n", spec, err);
    CHECK_EQ(rc, 0);
    ref_model_t ref;
    vm_wl_backend_t b;
    vm_wl_prep_t p;
    ref_init(&ref);
    ref_backend(&ref, &b);
    REQUIRE(vm_wl_prepare(&p, &t, &b, err, sizeof err) == 0);
    r->out = malloc((t.n ? t.n : 1) * sizeof *r->out);
    REQUIRE(r->out);
    rc = vm_wl_run(&p, &b, 0, t.n, r->out, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s: %s\n", spec, err);
    CHECK_EQ(rc, 0);
    vm_wl_analyze(&t, r->out, &r->m);
    /* The driver's bookkeeping agrees with the model's own queues. */
    CHECK_EQ(r->m.end_prq, ref_posted(&ref));
    CHECK_EQ(r->m.end_umq, ref_unexpected(&ref));
    for (size_t i = 0; i < t.n; i++) {
        const vm_trace_op_t *o = &t.ops[i];
        r->kinds[o->kind]++;
        r->ctx_coll += o->ctx == VM_WL_CTX_COLL;
        if (o->kind == VM_TRACE_POST || o->kind == VM_TRACE_PROBE ||
            o->kind == VM_TRACE_IMPROBE) {
            r->wild_both += o->src < 0 && o->tag < 0;
            r->wild_src += o->src < 0 && o->tag >= 0;
            r->wild_tag += o->src >= 0 && o->tag < 0;
        }
    }
    vm_wl_prep_free(&p);
    ref_fini(&ref);
    return t;
}

/** Both queues end empty and every message was taken by exactly one receive. */
static void check_drained(const char *spec, const result_t *r)
{
    if (r->m.end_prq || r->m.end_umq)
        fprintf(stderr, "%s: ends with prq %llu umq %llu\n", spec,
                (unsigned long long)r->m.end_prq, (unsigned long long)r->m.end_umq);
    CHECK_EQ(r->m.end_prq, 0);
    CHECK_EQ(r->m.end_umq, 0);
    /* Without improbes and removals, every message needs a receive of its own. */
    if (!r->kinds[VM_TRACE_IMPROBE] && !r->kinds[VM_TRACE_REMOVE])
        CHECK_EQ(r->kinds[VM_TRACE_POST], r->kinds[VM_TRACE_ARRIVE]);
}

/* ---- generators ---- */

static void test_gather(void)
{
    result_t r;
    vm_trace_t t;
    /* All receives pre-posted, in reverse: the PRQ holds all 21, nothing is unexpected, and
     * the first receive posted is for the last message. */
    t = run_ref("gather P=8 m=3 order=reverse early=0 interleave=0", &r);
    check_drained("gather pre-posted", &r);
    CHECK_EQ(r.m.max_prq, 21);
    CHECK_EQ(r.m.max_umq, 0);
    CHECK_EQ(r.m.matched, 21);
    CHECK(t.ops[0].kind == VM_TRACE_POST && t.ops[0].src == 7 && t.ops[0].tag == 2);
    CHECK(t.ops[21].kind == VM_TRACE_ARRIVE && t.ops[21].src == 1 && t.ops[21].tag == 0);
    /* Reverse order: every arrival searches the whole PRQ (mean length (21+1)/2 over the
     * arrivals, 0 over the posts). */
    CHECK(r.m.mean_search_len > 5.4 && r.m.mean_search_len < 5.6);
    CHECK_EQ(t.nprocs, 8);
    free(r.out);
    vm_trace_free(&t);
    /* All messages early: the UMQ holds all of them, the PRQ none. */
    t = run_ref("gather P=8 m=3 order=rr early=100", &r);
    check_drained("gather all early", &r);
    CHECK_EQ(r.m.max_umq, 21);
    CHECK_EQ(r.m.max_prq, 0);
    /* Round robin: tag 0 of peers 1..7 first. */
    CHECK(t.ops[21].kind == VM_TRACE_POST && t.ops[21].src == 1 && t.ops[21].tag == 0);
    CHECK(t.ops[22].src == 2 && t.ops[22].tag == 0);
    free(r.out);
    vm_trace_free(&t);
    /* Mixed arrivals: both queues are used, everything matches. */
    t = run_ref("gather P=64 m=4 order=random early=30 interleave=1 seed=3", &r);
    check_drained("gather mixed", &r);
    CHECK(r.m.max_umq >= 76); /* the 30% early ones at least */
    CHECK(r.m.max_prq > 0);
    CHECK_EQ(r.kinds[VM_TRACE_POST], 63 * 4);
    free(r.out);
    vm_trace_free(&t);
    /* Repeated: three gathers, each drained before the next; the first is the one above. */
    vm_trace_t once = run_ref("gather P=64 m=4 order=random early=30 interleave=1 seed=3", &r);
    free(r.out);
    t = run_ref("gather P=64 m=4 order=random early=30 interleave=1 iters=3 seed=3", &r);
    check_drained("gather repeated", &r);
    CHECK_EQ(r.kinds[VM_TRACE_POST], 3 * 63 * 4);
    CHECK(r.m.max_umq <= 63 * 4);
    int same = t.n == 3 * once.n;
    for (size_t i = 0; same && i < once.n; i++)
        same = t.ops[i].kind == once.ops[i].kind && t.ops[i].src == once.ops[i].src &&
               t.ops[i].tag == once.ops[i].tag;
    CHECK(same);
    free(r.out);
    vm_trace_free(&t);
    vm_trace_free(&once);
}

static void test_neighbours(void)
{
    result_t r;
    vm_trace_t t;
    /* 4x4x4 torus: 6, 18 and 26 distinct partners; receives per step = partners * msgs. */
    static const struct {
        const char *spec;
        size_t posts;
    } cases[] = {
        {"neighbours P=64 k=6 msgs=2 steps=10", 6 * 2 * 10},
        {"neighbours P=64 k=18 msgs=1 steps=5", 18 * 5},
        {"neighbours P=64 k=26 msgs=3 steps=4 skew=200", 26 * 3 * 4},
        {"neighbours P=100 k=12 topo=random msgs=2 steps=6", 12 * 2 * 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t = run_ref(cases[i].spec, &r);
        check_drained(cases[i].spec, &r);
        CHECK_EQ(r.kinds[VM_TRACE_POST], cases[i].posts);
        /* Short to medium queues: at most a step and a half of receives queued. */
        CHECK(r.m.max_prq <= cases[i].posts / (i == 2 ? 4 : i == 1 ? 5 : i == 0 ? 10 : 6) * 2);
        free(r.out);
        vm_trace_free(&t);
    }
    /* A small grid wraps onto the same neighbours: duplicates are dropped. */
    t = run_ref("neighbours P=8 k=26 msgs=1 steps=2", &r);
    check_drained("neighbours P=8", &r);
    CHECK_EQ(r.kinds[VM_TRACE_POST], 7 * 2);
    free(r.out);
    vm_trace_free(&t);
}

static void test_master(void)
{
    result_t r;
    vm_trace_t t = run_ref("master P=16 tasks=3000 depth=8 status=40 seed=5", &r);
    check_drained("master", &r);
    CHECK(r.m.max_prq <= 8);
    CHECK(r.m.max_umq > 0);
    CHECK_EQ(r.kinds[VM_TRACE_ARRIVE], 3000);
    /* Every shape of receive, probes of both kinds, cancels and removes at shutdown. */
    CHECK(r.wild_src > 0 && r.wild_tag > 0 && r.wild_both > 0);
    CHECK(r.kinds[VM_TRACE_PROBE] > 0 && r.kinds[VM_TRACE_IMPROBE] > 0);
    CHECK(r.kinds[VM_TRACE_CANCEL] > 0 && r.kinds[VM_TRACE_REMOVE] > 0);
    /* Every cancel and every remove finds its entry (they name what is still queued). */
    for (size_t i = 0; i < t.n; i++)
        if (t.ops[i].kind == VM_TRACE_CANCEL || t.ops[i].kind == VM_TRACE_REMOVE)
            CHECK(r.out[i] == t.ops[i].id);
    free(r.out);
    vm_trace_free(&t);
}

static void test_mixed(void)
{
    result_t r;
    vm_trace_t t = run_ref("mixed P=64 k=6 steps=12 bcast=3 any=50", &r);
    check_drained("mixed", &r);
    CHECK(r.ctx_coll > 0 && r.ctx_coll < t.n);
    CHECK(r.wild_src > 0);
    CHECK_EQ(t.nclasses, 3); /* p2p, allreduce, bcast */
    size_t plain = t.n;
    free(r.out);
    vm_trace_free(&t);

    /* With a linear gather every 4 steps (3 calls, 63 receives each at the root) and a linear
     * alltoall every 6 (2 calls, 63 receives each): two more classes, the same queues
     * drained. */
    t = run_ref("mixed P=64 k=6 steps=12 bcast=3 any=50 gather=4 alltoall=6", &r);
    check_drained("mixed with gathers and alltoalls", &r);
    CHECK_EQ(t.nclasses, 5);
    CHECK_EQ(t.n, plain + 2 * (3 + 2) * 63);
    free(r.out);
    vm_trace_free(&t);
}

/* Queue depth: one side filled to depth, matched forward or in reverse, round after round. */
static void test_queue(void)
{
    result_t r;
    vm_trace_t t = run_ref("queue depth=8 side=posted order=forward rounds=3", &r);
    check_drained("queue posted forward", &r);
    CHECK_EQ(r.m.max_prq, 8);
    CHECK_EQ(r.m.max_umq, 0);
    CHECK_EQ(r.m.matched, 24);
    CHECK_EQ(t.n, 48);
    /* Receives tags 0..7, then their messages in the same order; round 2 starts at 16. */
    CHECK(t.ops[0].kind == VM_TRACE_POST && t.ops[0].src == 1 && t.ops[0].tag == 0);
    CHECK(t.ops[8].kind == VM_TRACE_ARRIVE && t.ops[8].tag == 0);
    CHECK(t.ops[15].kind == VM_TRACE_ARRIVE && t.ops[15].tag == 7);
    CHECK(t.ops[16].kind == VM_TRACE_POST && t.ops[16].tag == 0);
    double forward = r.m.mean_search_len;
    free(r.out);
    vm_trace_free(&t);
    /* Messages first, receives in the reverse order: the UMQ holds them all. */
    t = run_ref("queue depth=8 side=unexpected order=reverse rounds=3 src=5 P=6", &r);
    check_drained("queue unexpected reverse", &r);
    CHECK_EQ(r.m.max_umq, 8);
    CHECK_EQ(r.m.max_prq, 0);
    CHECK(t.ops[0].kind == VM_TRACE_ARRIVE && t.ops[0].src == 5 && t.ops[0].tag == 0);
    CHECK(t.ops[8].kind == VM_TRACE_POST && t.ops[8].tag == 7);
    CHECK(t.ops[15].kind == VM_TRACE_POST && t.ops[15].tag == 0);
    CHECK(r.m.mean_search_len == forward); /* the same queue lengths, the other side */
    CHECK_EQ(t.nprocs, 6);
    free(r.out);
    vm_trace_free(&t);
}

/* Each collective: receives per call as the algorithm posts them, drained queues. */
static void test_collectives(void)
{
    static const struct {
        const char *spec;
        size_t posts_per_call;
    } cases[] = {
        {"gather-linear P=8", 7},
        {"gather-linear P=8 rank=3", 0},
        {"gather-binomial P=8", 3},
        {"gather-binomial P=8 rank=4", 2},
        {"bcast-binomial P=8", 1},
        {"bcast-binomial P=8 rank=0", 0},
        {"bcast-pipeline P=4 bytes=65536 seg=8192", 8},
        {"bcast-pipeline P=4 bytes=65537 seg=8192", 9},
        {"allreduce-rd P=8", 3},
        {"allreduce-rd P=6 rank=1", 3}, /* odd below 2*rem: the pre-step and log2(4) */
        {"allreduce-rd P=6 rank=0", 1}, /* folded away: only the result */
        {"allreduce-rd P=6 rank=5", 2},
        {"allreduce-ring P=5", 8},
        {"allreduce-rab P=8", 6},
        {"allreduce-rab P=6 rank=1", 5},
        {"allreduce-rm P=64 k=7", 14},       /* 8 x 8: two stages of 7 peers */
        {"allreduce-rm P=27 k=2", 6},        /* 3 x 3 x 3: three stages of 2 */
        {"allreduce-rm P=11 k=7 rank=1", 6}, /* 10 = 5 x 2 after folding one pair */
        {"allreduce-rm P=11 k=7 rank=0", 1},
        {"allreduce-rm P=16 k=1", 4}, /* k=1 is recursive doubling */
        {"allgather-bruck P=8", 3},
        {"allgather-bruck P=9", 4},
        {"allgather-ring P=7", 6},
        {"alltoall-linear P=8", 7},
        {"alltoall-pairwise P=8", 7},
        {"barrier-flat P=8", 7},
        {"barrier-flat P=8 rank=2", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char spec[128];
        snprintf(spec, sizeof spec, "%s calls=3", cases[i].spec);
        result_t r;
        vm_trace_t t = run_ref(spec, &r);
        check_drained(spec, &r);
        if (r.kinds[VM_TRACE_POST] != 3 * cases[i].posts_per_call)
            fprintf(stderr, "%s: %zu receives\n", spec, r.kinds[VM_TRACE_POST]);
        CHECK_EQ(r.kinds[VM_TRACE_POST], 3 * cases[i].posts_per_call);
        CHECK_EQ(r.ctx_coll, t.n); /* all on the collective context */
        CHECK(t.n == 0 || t.nclasses == 2);
        free(r.out);
        vm_trace_free(&t);
    }
    /* The linear alltoall posts P-1 receives before its first message can arrive late: the
     * PRQ reaches P-1 when peers are not skewed. */
    result_t r;
    vm_trace_t t = run_ref("alltoall-linear P=32 calls=2 skew=0", &r);
    CHECK(r.m.max_prq >= 20);
    free(r.out);
    vm_trace_free(&t);
    /* Recursive multiplying with skew leaves messages unexpected. */
    t = run_ref("allreduce-rm P=64 k=7 calls=8 skew=300", &r);
    CHECK(r.m.max_umq >= 2);
    free(r.out);
    vm_trace_free(&t);
}

/* Same spec, same trace; another seed, another trace. */
static void test_determinism(void)
{
    static const char *const specs[] = {"gather P=32 m=2", "master P=8 tasks=200",
                                        "allreduce-rm P=30 calls=4", "mixed P=27 steps=4"};
    /* (queue takes no randomness: its seed changes nothing, so it is not among these) */
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        vm_trace_t a, b, c;
        char spec2[128];
        vm_trace_init(&a);
        vm_trace_init(&b);
        vm_trace_init(&c);
        REQUIRE(vm_wl_generate(specs[i], &a, NULL, 0, NULL, 0) == 0);
        REQUIRE(vm_wl_generate(specs[i], &b, NULL, 0, NULL, 0) == 0);
        snprintf(spec2, sizeof spec2, "%s seed=99", specs[i]);
        REQUIRE(vm_wl_generate(spec2, &c, NULL, 0, NULL, 0) == 0);
        CHECK(a.n == b.n && memcmp(a.ops, b.ops, a.n * sizeof *a.ops) == 0);
        CHECK(a.n != c.n || memcmp(a.ops, c.ops, a.n * sizeof *a.ops) != 0);
        vm_trace_free(&a);
        vm_trace_free(&b);
        vm_trace_free(&c);
    }
}

/* Spec parsing: descriptions, defaults, errors. */
static void test_specs(void)
{
    vm_trace_t t;
    char err[512], desc[512];
    vm_trace_init(&t);
    CHECK_EQ(vm_wl_generate("  gather   P=4 m=1\torder=reverse ", &t, desc, sizeof desc, err,
                            sizeof err),
             0);
    CHECK(strcmp(desc, "gather P=4 m=1 order=reverse early=0 interleave=1 iters=1 seed=1") ==
          0);
    vm_trace_free(&t);

    static const struct {
        const char *spec, *want;
    } bad[] = {
        {"", "unknown workload '' (known: gather neighbours master mixed gather-linear"},
        {"gathr P=4", "unknown workload 'gathr'"},
        {"gather Q=4",
         "gather: unknown parameter 'Q' (known: P m order early interleave iters seed)"},
        {"gather P", "gather: expected key=value, got 'P'"},
        {"gather P=1", "gather: P must be a number from 2 to 1048576, got '1'"},
        {"gather P=x", "gather: P must be a number from 2 to 1048576, got 'x'"},
        {"gather P=", "got ''"},
        {"gather P=99999999999999999999999", "gather: P must be a number"},
        {"gather order=sideways", "gather: order must be one of reverse, random, rr, got "
                                  "'sideways'"},
        {"gather P=1048576 m=100000",
         "gather: (P-1)*m*iters = 104857500000 messages is too many"},
        {"neighbours k=7", "neighbours: topo=stencil takes k=6, 18 or 26 (got 7)"},
        {"neighbours P=8 rank=8", "neighbours: rank 8 is not below P=8"},
        {"mixed k=5", "mixed: topo=stencil takes k=6, 18 or 26 (got 5)"},
        {"allreduce-rd P=4 rank=4", "allreduce-rd: rank 4 is not below P=4"},
        {"allreduce-rm k=9", "allreduce-rm: k must be a number from 1 to 8, got '9'"},
        {"alltoall-linear P=20000 calls=1000", "more than 16777216 operations"},
        {"queue src=2 P=2", "queue: src 2 is not below P=2"},
        {"queue side=both", "queue: side must be one of posted, unexpected, got 'both'"},
        {"queue depth=1048576 rounds=16", "queue: 2*depth*rounds = 33554432 operations"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        vm_trace_init(&t);
        int rc = vm_wl_generate(bad[i].spec, &t, NULL, 0, err, sizeof err);
        CHECK_EQ(rc, VMATCH_EINVAL);
        if (!strstr(err, bad[i].want)) {
            fprintf(stderr, "spec '%s': error '%s'\n  does not contain '%s'\n", bad[i].spec,
                    err, bad[i].want);
            CHECK(0);
        }
        vm_trace_free(&t);
    }
    size_t n;
    const vm_wl_gen_info_t *info = vm_wl_generators(&n);
    CHECK_EQ(n, 18);
    CHECK(strcmp(info[0].name, "gather") == 0);
    CHECK(strstr(info[0].params, "order=random|reverse|rr") != NULL);
}

/* Replays on vmatch engines return what the reference returns. */
static void test_engines(void)
{
    static const char *const specs[] = {"master P=32 tasks=2000", "mixed P=64 steps=8",
                                        "allreduce-rm P=24 calls=4 skew=300",
                                        "gather P=32 m=4 early=40"};
    static const char *const engines[] = {"policy=single storage=ll",
                                          "policy=single storage=lla lla.block=4",
                                          "layout.ctx=8 layout.src=12 layout.tag=12"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        result_t r;
        vm_trace_t t = run_ref(specs[i], &r);
        for (size_t j = 0; j < sizeof engines / sizeof *engines; j++) {
            char spec[256], err[256];
            vmatch_engine_t *e;
            REQUIRE(vmatch_create(vm_wl_engine_spec(&t, engines[j], spec, sizeof spec), &e) ==
                    0);
            CHECK(strstr(vmatch_describe(e), "nprocs=") != NULL);
            vm_wl_backend_t b;
            vm_wl_prep_t p;
            vm_wl_vmatch_backend(e, &b);
            REQUIRE(vm_wl_prepare(&p, &t, &b, err, sizeof err) == 0);
            uint32_t *out = malloc(t.n * sizeof *out);
            vm_wl_measure_t m;
            REQUIRE(out);
            int rc = vm_wl_run_measured(&p, &b, out, &m, err, sizeof err);
            if (rc)
                fprintf(stderr, "%s on %s: %s\n", specs[i], engines[j], err);
            CHECK_EQ(rc, 0);
            size_t d = vm_wl_first_difference(out, r.out, t.n);
            if (d < t.n)
                fprintf(stderr, "%s on %s: differs from the reference at operation %zu\n",
                        specs[i], engines[j], d);
            CHECK_EQ(d, t.n);
            CHECK_EQ(m.max_pending, r.m.max_pending);
            CHECK(m.bytes_peak >= m.bytes_empty && m.inspected > 0);
            /* A second engine instance gets the same class ids. */
            vmatch_engine_t *e2;
            REQUIRE(vmatch_create(spec, &e2) == 0);
            vm_wl_backend_t b2;
            vm_wl_vmatch_backend(e2, &b2);
            CHECK_EQ(vm_wl_rebind(&p, &b2, err, sizeof err), 0);
            vmatch_destroy(e2);
            free(out);
            vm_wl_prep_free(&p);
            vmatch_destroy(e);
        }
        free(r.out);
        vm_trace_free(&t);
    }
}

/* Preparation and replay errors. */
static void test_replay_errors(void)
{
    vm_trace_t t;
    char err[256];
    vm_trace_init(&t);
    REQUIRE(vm_wl_generate("gather P=64 m=1 order=rr interleave=0", &t, NULL, 0, NULL, 0) == 0);
    vmatch_engine_t *e;
    REQUIRE(vmatch_create("layout.src=4", &e) == 0);
    vm_wl_backend_t b;
    vm_wl_prep_t p;
    vm_wl_vmatch_backend(e, &b);
    CHECK_EQ(vm_wl_prepare(&p, &t, &b, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "source 16 does not fit the layout's 4 bits") != NULL);
    vmatch_destroy(e);
    vm_trace_free(&t);

    /* A backend that returns a foreign pointer, or fails, is caught. */
    vm_trace_init(&t);
    vm_trace_post(&t, 0, 1, 1, 0);
    vm_trace_arrive(&t, 0, 1, 1, 0);
    ref_model_t ref;
    ref_init(&ref);
    ref_backend(&ref, &b);
    REQUIRE(vm_wl_prepare(&p, &t, &b, err, sizeof err) == 0);
    uint32_t out[2];
    int other;
    void *got;
    ref_post(&ref, p.bits[0], p.care[0], &other, &got); /* a receive the trace did not post */
    CHECK_EQ(vm_wl_run(&p, &b, 0, 2, out, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 1 (arrive): returned") && strstr(err, "no request"));
    vm_wl_prep_free(&p);
    ref_fini(&ref);
    vm_trace_free(&t);

    /* vmatch's own error on a bad call surfaces with the operation. */
    vm_trace_init(&t);
    vm_trace_post(&t, 0, 1, 1, 0);
    REQUIRE(vmatch_create("", &e) == 0);
    vm_wl_vmatch_backend(e, &b);
    REQUIRE(vm_wl_prepare(&p, &t, &b, err, sizeof err) == 0);
    b.self = NULL; /* vmatch_post(NULL, ...) is VMATCH_EINVAL */
    CHECK_EQ(vm_wl_run(&p, &b, 0, 1, out, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 0 (post): VMATCH_EINVAL") != NULL);
    vm_wl_prep_free(&p);
    vmatch_destroy(e);
    vm_trace_free(&t);
}

int main(void)
{
    test_gather();
    test_neighbours();
    test_master();
    test_mixed();
    test_collectives();
    test_queue();
    test_determinism();
    test_specs();
    test_engines();
    test_replay_errors();
    return check_report("test_workloads");
}
