/* test_threads.c -- threads=mutex and threads=multi, deterministically: the inbox alone
 * (order, the double buffer's wrap-around, a full buffer), a multi engine whose inbox fills
 * while a test holds the engine (deferred arrivals, the callback, the fallback of a full
 * inbox), the spec keys and API calls, and test_diff's random operation streams on threaded
 * engines (one thread: every result must be threads=off's, statistics included), and the split
 * calls from several threads at once.
 * test_threads_stress checks many threads at once. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "diff_stream.h"
#include "module.h"
#include "ref.h"
#include "threads.h"
#include "vmatch.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the inbox alone ---- */

typedef struct seen {
    uintptr_t msg[64];
    unsigned n;
} seen_t;

static void collect(void *arg, const vm_inbox_slot_t *s)
{
    seen_t *v = arg;
    if (v->n < 64)
        v->msg[v->n] = (uintptr_t)s->msg;
    v->n++;
}

static void test_inbox(void)
{
    vm_inbox_slot_t a[3], b[3];
    vm_inbox_t in = {.buf = {a, b}, .cap = 3};
    atomic_init(&in.reserve, 0);
    atomic_init(&in.published[0], 0);
    atomic_init(&in.published[1], 0);
    seen_t v = {0};

    /* Empty: no flip, nothing called. */
    CHECK_EQ(vm_inbox_pending(&in), 0);
    CHECK_EQ(vm_inbox_drain(&in, collect, &v), 0);
    CHECK_EQ(atomic_load(&in.reserve), 0);

    /* Many rounds: the buffers take turns (the top bit flips each drain), the slots are
     * reused from 0, and each batch comes out in the order it went in. */
    uintptr_t next = 1;
    for (int round = 0; round < 10; round++) {
        unsigned k = 1 + (unsigned)round % 3;
        for (unsigned i = 0; i < k; i++)
            CHECK_EQ(vm_inbox_push(&in, next + i, (uint32_t)i, (void *)(next + i)), 1);
        CHECK_EQ(vm_inbox_pending(&in), 1);
        CHECK_EQ(atomic_load(&in.reserve) >> 63, (uint64_t)(round & 1));
        v.n = 0;
        CHECK_EQ(vm_inbox_drain(&in, collect, &v), k);
        CHECK_EQ(v.n, k);
        for (unsigned i = 0; i < k && i < v.n; i++)
            CHECK_EQ(v.msg[i], next + i);
        CHECK_EQ(atomic_load(&in.reserve), (uint64_t)((round & 1) ? 0 : VM_INBOX_TOP));
        CHECK_EQ(atomic_load(&in.published[round & 1]), 0);
        CHECK_EQ(vm_inbox_pending(&in), 0);
        next += k;
    }

    /* Full: the fourth and fifth reservations fail, are released at once (the drain does
     * not wait for them), and are left out of the batch. */
    for (uintptr_t i = 1; i <= 5; i++)
        CHECK_EQ(vm_inbox_push(&in, i, 0, (void *)(100 + i)), i <= 3);
    CHECK_EQ(atomic_load(&in.reserve) & VM_INBOX_COUNT, 5);
    v.n = 0;
    CHECK_EQ(vm_inbox_drain(&in, collect, &v), 5);
    CHECK_EQ(v.n, 3);
    CHECK_EQ(v.msg[0], 101);
    CHECK_EQ(v.msg[2], 103);
    /* and the next round starts empty */
    CHECK_EQ(vm_inbox_push(&in, 9, 0, (void *)9), 1);
    v.n = 0;
    CHECK_EQ(vm_inbox_drain(&in, collect, &v), 1);
    CHECK_EQ(v.msg[0], 9);
}

/* ---- a multi engine held by the test while another thread arrives ---- */

enum { CAP = 4 };

typedef struct cb_log {
    void *msg[16], *req[16];
    int rc[16];
    unsigned n;
} cb_log_t;

static void log_match(void *arg, int rc, void *msg, void *req)
{
    cb_log_t *l = arg;
    if (l->n < 16) {
        l->msg[l->n] = msg;
        l->req[l->n] = req;
        l->rc[l->n] = rc;
    }
    l->n++;
}

typedef struct arriver {
    vmatch_engine_t *e;
    int rc[CAP + 1];
    void *out[CAP + 1];
    _Atomic int done; /* arrivals returned */
} arriver_t;

static int tag_msg[CAP + 1], reqs[CAP + 1];

static void *arrive_all(void *arg)
{
    arriver_t *a = arg;
    for (int i = 0; i <= CAP; i++) {
        a->rc[i] =
            vmatch_arrive(a->e, vmatch_mpi_msg(a->e, 0, 1, i), 0, &tag_msg[i], &a->out[i]);
        atomic_fetch_add(&a->done, 1);
    }
    return NULL;
}

static void *arrive_one(void *arg)
{
    arriver_t *a = arg;
    a->rc[0] = vmatch_arrive(a->e, vmatch_mpi_msg(a->e, 0, 1, 9), 0, &tag_msg[0], &a->out[0]);
    return NULL;
}

static void test_deferred(void)
{
    char spec[64];
    snprintf(spec, sizeof spec, "threads=multi threads.inbox=%d", CAP);
    vmatch_engine_t *e;
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
    cb_log_t log = {0};
    CHECK_EQ(vmatch_on_match(e, log_match, &log), VMATCH_OK);
    /* Receives for tags 0 .. CAP-1 (tag CAP has none). */
    vmatch_bits_t bits, care;
    void *out;
    for (int i = 0; i < CAP; i++) {
        vmatch_mpi_recv(e, 0, 1, i, &bits, &care);
        CHECK_EQ(vmatch_post(e, bits, care, 0, &reqs[i], &out), VMATCH_QUEUED);
    }
    /* Held: the first CAP arrivals defer, the last finds the inbox full and waits. */
    vm_threads_take_undrained(e);
    arriver_t a = {.e = e};
    atomic_init(&a.done, 0);
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, arrive_all, &a) == 0);
    vm_inbox_t *in = &e->threads->inbox;
    while (atomic_load(&in->published[0]) < CAP + 1 || atomic_load(&a.done) < CAP)
        sched_yield();            /* all reserved and released, the deferred ones returned */
    for (int i = 0; i < 100; i++) /* the full one is still waiting */
        sched_yield();
    CHECK_EQ(atomic_load(&a.done), CAP);
    CHECK_EQ(log.n, 0);
    vm_threads_give(e); /* its leave drains, or the waiting arrival's enter does */
    pthread_join(th, NULL);
    for (int i = 0; i < CAP; i++)
        CHECK_EQ(a.rc[i], VMATCH_DEFERRED);
    CHECK_EQ(a.rc[CAP], VMATCH_QUEUED); /* the full inbox's arrival: matched at once */
    CHECK_EQ(log.n, CAP);
    for (unsigned i = 0; i < CAP && i < log.n; i++) {
        CHECK_EQ(log.rc[i], VMATCH_MATCHED);
        CHECK(log.msg[i] == &tag_msg[i]);
        CHECK(log.req[i] == &reqs[i]);
    }
    vmatch_stats_t st;
    vmatch_stats(e, &st);
    CHECK_EQ(st.posted, 0);
    CHECK_EQ(st.unexpected, 1);
    CHECK_EQ(vmatch_progress(e), 0);

    /* A deferred arrival with no receive becomes unexpected (no callback); the next post
     * finds it.  Its thread has returned before the engine is given back. */
    vm_threads_take_undrained(e);
    arriver_t one = {.e = e};
    atomic_init(&one.done, 0);
    REQUIRE(pthread_create(&th, NULL, arrive_one, &one) == 0);
    pthread_join(th, NULL);
    CHECK_EQ(one.rc[0], VMATCH_DEFERRED);
    vm_threads_give(e); /* the hand-off: the holder finds it and applies it */
    CHECK_EQ(vm_inbox_pending(&e->threads->inbox), 0);
    CHECK_EQ(e->threads->drained, CAP + 1);
    CHECK_EQ(log.n, CAP);
    vmatch_stats(e, &st);
    CHECK_EQ(st.unexpected, 2);
    vmatch_mpi_recv(e, 0, 1, 9, &bits, &care);
    CHECK_EQ(vmatch_post(e, bits, care, 0, &reqs[0], &out), VMATCH_MATCHED);
    CHECK(out == &tag_msg[0]);
    vmatch_destroy(e);
}

/* ---- keys and calls ---- */

static void test_api(void)
{
    vmatch_engine_t *e;
    CHECK_EQ(vmatch_create("threads=many", &e), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "off, mutex or multi") != NULL);
    CHECK_EQ(vmatch_create("threads.inbox=0", &e), VMATCH_EINVAL);
    const char *modes[] = {"threads=off", "threads=mutex", "threads=multi threads.inbox=7"};
    for (int m = 0; m < 3; m++) {
        REQUIRE(vmatch_create(modes[m], &e) == VMATCH_OK);
        CHECK(strstr(vmatch_describe(e), modes[m]) != NULL);
        CHECK_EQ(vmatch_on_match(e, log_match, NULL), VMATCH_OK);
        CHECK_EQ(vmatch_progress(e), 0);
        /* One thread never finds its engine busy: no arrival defers. */
        int msg = 0, req = 0;
        void *out;
        CHECK_EQ(vmatch_arrive(e, 5, 0, &msg, &out), VMATCH_QUEUED);
        CHECK_EQ(vmatch_post(e, 5, ~0ull, 0, &req, &out), VMATCH_MATCHED);
        CHECK(out == &msg);
        vmatch_destroy(e);
    }
    CHECK(strstr(vmatch_strerror(VMATCH_DEFERRED), "VMATCH_DEFERRED") != NULL);
    CHECK_EQ(vmatch_on_match(NULL, log_match, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_progress(NULL), VMATCH_EINVAL);
    /* The inbox counts in the engine's bytes. */
    vmatch_stats_t a, b;
    REQUIRE(vmatch_create("threads=off", &e) == VMATCH_OK);
    vmatch_stats(e, &a);
    vmatch_destroy(e);
    REQUIRE(vmatch_create("threads=multi threads.inbox=1024", &e) == VMATCH_OK);
    vmatch_stats(e, &b);
    vmatch_destroy(e);
    CHECK(b.bytes >= a.bytes + 2 * 1024 * sizeof(vm_inbox_slot_t));
}

/* ---- the split calls (ports/ucx) from many threads ---- */

enum { SPLIT_THREADS = 4, SPLIT_ROUNDS = 2000 };

typedef struct split_arg {
    vmatch_engine_t *e;
    unsigned id, bad;
} split_arg_t;

/* Each thread uses its own tag: whatever the others do, it must find its own entries. Thread
 * 0 also arrives through vmatch_arrive on a tag nobody posts, so multi engines defer. */
static void *split_worker(void *arg)
{
    split_arg_t *a = arg;
    vmatch_bits_t mine = (vmatch_bits_t)(a->id + 1) << 8;
    static int token[SPLIT_THREADS][2];
    for (unsigned i = 0; i < SPLIT_ROUNDS; i++) {
        void *out = NULL;
        if (vmatch_enqueue_posted(a->e, mine, ~0ull, 0, &token[a->id][0]) != VMATCH_QUEUED ||
            vmatch_match_posted(a->e, mine, 0, &out) != VMATCH_MATCHED ||
            out != &token[a->id][0])
            a->bad++;
        if (vmatch_enqueue_unexpected(a->e, mine, 0, &token[a->id][1]) != VMATCH_QUEUED ||
            vmatch_probe(a->e, mine, ~0ull, 0, 1, &out) != VMATCH_MATCHED ||
            out != &token[a->id][1])
            a->bad++;
        if (a->id == 0) {
            int rc = vmatch_arrive(a->e, 0xff, 0, &token[0][1], &out);
            if (rc != VMATCH_QUEUED && rc != VMATCH_DEFERRED)
                a->bad++;
        }
    }
    return NULL;
}

/* A deferred arrival of thread 0 reports here: nobody posts its tag, so it queues. */
static void split_deferred(void *arg, int rc, void *msg, void *req)
{
    (void)msg;
    (void)req;
    if (rc != VMATCH_QUEUED)
        atomic_fetch_add((_Atomic unsigned *)arg, 1);
}

static void test_split_threads(void)
{
    static const char *const specs[] = {"policy=hash threads=mutex",
                                        "policy=hash threads=multi threads.inbox=4",
                                        "policy=single storage=llv threads=multi"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        vmatch_engine_t *e;
        REQUIRE(vmatch_create(specs[k], &e) == VMATCH_OK);
        _Atomic unsigned wrong = 0;
        vmatch_on_match(e, split_deferred, (void *)&wrong);
        pthread_t th[SPLIT_THREADS];
        split_arg_t args[SPLIT_THREADS];
        for (unsigned t = 0; t < SPLIT_THREADS; t++) {
            args[t] = (split_arg_t){.e = e, .id = t};
            REQUIRE(pthread_create(&th[t], NULL, split_worker, &args[t]) == 0);
        }
        for (unsigned t = 0; t < SPLIT_THREADS; t++) {
            pthread_join(th[t], NULL);
            CHECK_EQ(args[t].bad, 0);
        }
        vmatch_progress(e);
        CHECK_EQ(atomic_load(&wrong), 0);
        vmatch_stats_t st;
        vmatch_stats(e, &st);
        CHECK(st.posted == 0 && st.unexpected == SPLIT_ROUNDS); /* thread 0's arrivals */
        vmatch_destroy(e);
    }
}

/* ---- test_diff's streams on threaded engines ---- */

static void diff_run(const char *spec)
{
    run_t r;
    memset(&r, 0, sizeof r);
    r.pair = spec;
    r.spec = spec;
    r.ops_div = 1;
    r.seed = 0x7e1e4d5u;
    r.g.s = r.seed;
    if (strstr(spec, "policy=pnp")) /* pnp.cap=1: 1 * sqrt(nprocs) partners per side */
        r.partner_bound = 2 * 16;
    REQUIRE(vmatch_create(spec, &r.e) == VMATCH_OK);
    vmatch_on_match(r.e, log_match, NULL);
    unsigned ctx_bits;
    vmatch_layout(r.e, &ctx_bits, &r.src_bits, &r.tag_bits);
    r.outside = ~(vmatch_bits_t)0 << (ctx_bits + r.src_bits + r.tag_bits);
    r.max_src = (int32_t)((1u << r.src_bits) - 1);
    r.max_tag = (int32_t)((1u << r.tag_bits) - 1);
    r.cls[2] = vmatch_coll_class(r.e, VMATCH_COLL_ALLREDUCE, 4096, 64);
    ref_init(&r.ref);
    next_phase(&r);
    int ok = 1;
    for (r.op = 0; r.op < 30000 && ok; r.op++) {
        steer(&r);
        ok = step(&r);
    }
    if (ok)
        ok = drain_all(&r);
    CHECK(ok);
    printf("test_threads: %-50s %s after %llu ops\n", spec, ok ? "agreed" : "DISAGREED",
           (unsigned long long)r.op);
    ref_fini(&r.ref);
    vmatch_destroy(r.e);
}

static void test_diff_streams(void)
{
    static const char *const policies[] = {"hash", "single", "pnp"};
    const vm_storage_t *s;
    for (unsigned p = 0; p < 3; p++)
        for (unsigned j = 0; (s = vm_storage_at(j)) != NULL; j++)
            for (int m = 0; m < 2; m++) {
                char spec[160];
                snprintf(spec, sizeof spec,
                         "policy=%s storage=%s nprocs=256 layout.ctx=12 layout.src=20 "
                         "layout.tag=20 %s",
                         policies[p], s->name,
                         m ? "threads=multi threads.inbox=2" : "threads=mutex");
                diff_run(spec);
            }
}

int main(void)
{
    test_inbox();
    test_api();
    test_deferred();
    test_split_threads();
    test_diff_streams();
    return check_report("test_threads");
}
