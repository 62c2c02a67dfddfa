/* Tests of the recordings (src/core/record.c): the trace an engine records of its calls and
 * the files vmatch_save_recordings writes.
 *
 * A random run on each engine is written down twice: by the engine (trace.record=on) and by
 * the test, which builds the trace it expects call by call.  The saved file must read back
 * as the test's trace, and a replay of it on a fresh engine must give the answers the
 * engine gave.  Then the bounds (trace.cap), the paths (%r, %p, the launcher's rank), the
 * notes, files that cannot be written, and profiles read back (version 2: rank, program,
 * end), including those of another process count or program, truncated or empty. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "profile.h"
#include "replay.h"
#include "rng.h"
#include "trace.h"
#include "vmatch_inline.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { NOPS = 4000, NPROCS = 8 };

static char dir[64];

/* A path in the scratch folder.  The buffers hold the folder and the longest name a test
 * builds (a 200-byte want[]), so GCC's -Wformat-truncation, an error under -Werror, has no
 * case to report; a longer name stops the test instead of being cut. */
static const char *path_of(const char *name)
{
    static char p[2][sizeof dir + 256];
    static int turn;
    turn ^= 1;
    int n = snprintf(p[turn], sizeof p[turn], "%s/%s", dir, name);
    REQUIRE(n > 0 && (size_t)n < sizeof p[turn]);
    return p[turn];
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* ---- a random run, recorded by the engine and by the test ---- */

typedef struct run {
    vmatch_engine_t *e;
    vm_trace_t want;  /* what the engine should record */
    uint32_t *answer; /* per recorded operation: the id it matched, cancelled or removed */
    char req[NOPS], msg[NOPS];
    uint32_t nreq, nmsg, cls1, tcls1;
} run_t;

static uint32_t id_of(const run_t *r, const void *p, int is_msg)
{
    const char *base = is_msg ? r->msg : r->req;
    return p ? (uint32_t)((const char *)p - base) : VM_WL_NONE;
}

/* Receive fields: ctx 0 is point-to-point, ctx 1 an allreduce's class; a fifth wildcards. */
static void pick(uint32_t *ctx, int32_t *src, int32_t *tag, int wild)
{
    *ctx = rnd(2);
    *src = wild && rnd(5) == 0 ? VMATCH_ANY_SOURCE : (int32_t)rnd(8);
    *tag = wild && rnd(5) == 0 ? VMATCH_ANY_TAG : (int32_t)rnd(4);
}

static void expect(run_t *r, uint32_t answer)
{
    r->answer[r->want.n - 1] = answer;
}

static void one_op(run_t *r)
{
    uint32_t ctx;
    int32_t src, tag;
    vmatch_bits_t bits, care;
    void *got = NULL;
    unsigned what = rnd(100);
    int split = rnd(3) == 0;
    pick(&ctx, &src, &tag, what < 35 || (what >= 70 && what < 85));
    uint32_t cls = ctx ? r->cls1 : 0;
    uint16_t tc = ctx ? (uint16_t)r->tcls1 : 0;
    vmatch_mpi_recv(r->e, ctx, src, tag, &bits, &care);
    if (what < 35) { /* a post, or an improbe and its enqueue */
        void *req = &r->req[r->nreq];
        int rc = split ? vmatch_probe(r->e, bits, care, cls, 1, &got)
                       : vmatch_post(r->e, bits, care, cls, req, &got);
        if (split && rc == VMATCH_MATCHED) {
            vm_trace_probe(&r->want, ctx, src, tag, tc, 1);
            expect(r, id_of(r, got, 1));
            return;
        }
        if (split)
            rc = vmatch_enqueue_posted(r->e, bits, care, cls, req);
        REQUIRE(rc >= 0);
        vm_trace_post(&r->want, ctx, src, tag, tc);
        expect(r, rc == VMATCH_MATCHED ? id_of(r, got, 1) : VM_WL_NONE);
        r->nreq++;
    } else if (what < 70) { /* an arrival, or its two halves */
        src = (int32_t)rnd(8);
        tag = (int32_t)rnd(4);
        bits = vmatch_mpi_msg(r->e, ctx, src, tag);
        void *msg = &r->msg[r->nmsg];
        int rc = split ? vmatch_match_posted(r->e, bits, cls, &got)
                       : vmatch_arrive(r->e, bits, cls, msg, &got);
        if (split && rc == VMATCH_ENOTFOUND)
            rc = vmatch_enqueue_unexpected(r->e, bits, cls, msg);
        REQUIRE(rc >= 0);
        vm_trace_arrive(&r->want, ctx, src, tag, tc);
        expect(r, rc == VMATCH_MATCHED ? id_of(r, got, 0) : VM_WL_NONE);
        r->nmsg++;
    } else if (what < 85) { /* probe or improbe */
        int remove = what >= 78;
        int rc = vmatch_probe(r->e, bits, care, cls, remove, &got);
        REQUIRE(rc == VMATCH_MATCHED || rc == VMATCH_ENOTFOUND);
        vm_trace_probe(&r->want, ctx, src, tag, tc, remove);
        expect(r, rc == VMATCH_MATCHED ? id_of(r, got, 1) : VM_WL_NONE);
    } else if (what < 93 && r->nreq) { /* cancel a receive, perhaps one no longer queued */
        uint32_t i = rnd(r->nreq);
        if (vmatch_cancel(r->e, &r->req[i]) == VMATCH_OK) {
            vm_trace_cancel(&r->want, i);
            expect(r, i);
        }
    } else if (r->nmsg) {
        uint32_t j = rnd(r->nmsg);
        if (vmatch_remove_unexpected(r->e, &r->msg[j]) == VMATCH_OK) {
            vm_trace_remove(&r->want, j);
            expect(r, j);
        }
    }
}

/* Replay trace t on a fresh engine of spec: its answers must be r's. */
static void replay_agrees(const vm_trace_t *t, const uint32_t *answer, const char *spec)
{
    char full[512], err[256];
    vmatch_engine_t *e;
    REQUIRE(vmatch_create(vm_wl_engine_spec(t, spec, full, sizeof full), &e) == VMATCH_OK);
    vm_wl_backend_t b;
    vm_wl_prep_t p;
    vm_wl_vmatch_backend(e, &b);
    REQUIRE(vm_wl_prepare(&p, t, &b, err, sizeof err) == 0);
    uint32_t *out = malloc((t->n + 1) * sizeof *out);
    REQUIRE(out);
    int rc = vm_wl_run(&p, &b, 0, t->n, out, err, sizeof err);
    if (rc)
        fprintf(stderr, "test_record: replay on \"%s\": %s\n", spec, err);
    CHECK_EQ(rc, 0);
    size_t at = vm_wl_first_difference(out, answer, t->n);
    if (at != t->n)
        fprintf(stderr, "test_record: replay on \"%s\" differs at operation %zu\n", spec, at);
    CHECK_EQ(at, t->n);
    free(out);
    vm_wl_prep_free(&p);
    vmatch_destroy(e);
}

static void random_run(const char *spec, uint64_t seed)
{
    char full[512], err[256];
    run_t *r = calloc(1, sizeof *r);
    REQUIRE(r);
    r->answer = malloc(2 * NOPS * sizeof *r->answer);
    REQUIRE(r->answer);
    snprintf(full, sizeof full, "trace.record=on nprocs=%d %s", NPROCS, spec);
    int rc = vmatch_create(full, &r->e);
    if (rc)
        fprintf(stderr, "test_record: \"%s\": %s\n", full, vmatch_last_error());
    REQUIRE(rc == VMATCH_OK);
    rng_s = seed;
    vm_trace_init(&r->want);
    r->want.nprocs = NPROCS;
    r->cls1 = vmatch_coll_class(r->e, VMATCH_COLL_ALLREDUCE, 8, 8);
    r->tcls1 = vm_trace_class(&r->want, VMATCH_COLL_ALLREDUCE, 8, 8);
    while (r->nreq < NOPS - 1 && r->nmsg < NOPS - 1 && r->want.n < 2 * NOPS - 1)
        one_op(r);
    REQUIRE(!r->want.failed);

    uint64_t ops = 0, dropped = 1;
    CHECK(vmatch_stat(r->e, "trace.ops", &ops) == VMATCH_OK && ops == r->want.n);
    CHECK(vmatch_stat(r->e, "trace.dropped", &dropped) == VMATCH_OK && dropped == 0);
    const char *file = path_of("run.trace");
    REQUIRE(vmatch_trace_save(r->e, file) == VMATCH_OK);
    vm_trace_t got;
    vm_trace_init(&got);
    rc = vm_trace_load(&got, file, err, sizeof err);
    if (rc)
        fprintf(stderr, "test_record: %s\n", err);
    REQUIRE(rc == 0);
    size_t at = 0;
    int same = vm_trace_equal(&got, &r->want, &at);
    if (!same)
        fprintf(stderr, "test_record: \"%s\": the trace differs at operation %zu (%zu, %zu)\n",
                spec, at, got.n, r->want.n);
    CHECK(same);
    CHECK(got.ended && got.cut == 0 && got.has_layout);
    unsigned c, s, t;
    vmatch_layout(r->e, &c, &s, &t);
    CHECK(got.ctx_bits == c && got.src_bits == s && got.tag_bits == t);
    if (same) {
        replay_agrees(&got, r->answer, "");
        replay_agrees(&got, r->answer, "policy=single storage=ll");
    }
    vm_trace_free(&got);
    vm_trace_free(&r->want);
    vmatch_destroy(r->e);
    free(r->answer);
    free(r);
}

/* ---- the bound ---- */

static void test_cap(void)
{
    vmatch_engine_t *e;
    char err[256];
    static char tok[40];
    void *got;
    REQUIRE(vmatch_create("trace.record=on trace.cap=10", &e) == VMATCH_OK);
    for (int i = 0; i < 25; i++)
        REQUIRE(vmatch_post(e, (vmatch_bits_t)i, ~(vmatch_bits_t)0, 0, &tok[i], &got) ==
                VMATCH_QUEUED);
    CHECK(vmatch_cancel(e, &tok[20]) == VMATCH_OK); /* after the cap: counted, not kept */
    uint64_t ops, dropped;
    REQUIRE(vmatch_stat(e, "trace.ops", &ops) == VMATCH_OK);
    REQUIRE(vmatch_stat(e, "trace.dropped", &dropped) == VMATCH_OK);
    CHECK_EQ(ops, 10);
    CHECK_EQ(dropped, 16);
    REQUIRE(vmatch_trace_save(e, path_of("cap.trace")) == VMATCH_OK);
    const char *text = slurp(path_of("cap.trace"));
    CHECK(text && strstr(text, "stopped after 10 operations: the trace reached trace.cap"));
    CHECK(text && strstr(text, "\nend 10 cut 16\n"));
    vm_trace_t t;
    vm_trace_init(&t);
    CHECK_EQ(vm_trace_load(&t, path_of("cap.trace"), err, sizeof err), 0);
    CHECK(t.n == 10 && t.ended && t.cut == 16);
    vm_trace_free(&t);
    /* the engine's answers never depend on the recording */
    CHECK(vmatch_arrive(e, 24, 0, &tok[30], &got) == VMATCH_MATCHED && got == &tok[24]);
    vmatch_destroy(e);
}

/* A care that covers part of a field (a caller packing with another layout) stops the
 * recording: the trace could not say what it matches. */
static void test_partial_care(void)
{
    vmatch_engine_t *e;
    static char tok[4];
    void *got;
    REQUIRE(vmatch_create("trace.record=on", &e) == VMATCH_OK);
    vmatch_bits_t all = ~(vmatch_bits_t)0;
    CHECK(vmatch_post(e, 1, all, 0, &tok[0], &got) == VMATCH_QUEUED);
    CHECK(vmatch_post(e, 2, all & ~((vmatch_bits_t)0xf << 24), 0, &tok[1], &got) ==
          VMATCH_QUEUED); /* 4 of the source field's 24 bits */
    CHECK(vmatch_arrive(e, 2, 0, &tok[2], &got) == VMATCH_MATCHED && got == &tok[1]);
    uint64_t ops, dropped;
    CHECK(vmatch_stat(e, "trace.ops", &ops) == VMATCH_OK && ops == 1);
    CHECK(vmatch_stat(e, "trace.dropped", &dropped) == VMATCH_OK && dropped == 2);
    REQUIRE(vmatch_trace_save(e, path_of("partial.trace")) == VMATCH_OK);
    const char *text = slurp(path_of("partial.trace"));
    CHECK(text && strstr(text, "care covers part of a field") && strstr(text, "end 1 cut 2"));
    vmatch_destroy(e);
}

/* ---- what recording changes: the calls go through the library ---- */

static void test_inline_off(void)
{
    vmatch_engine_t *e;
    static char tok[4];
    void *got;
    REQUIRE(vmatch_inline_create("trace.record=on", &e) == VMATCH_OK);
    CHECK(vmatch_hot_(e) == NULL); /* every inline call is the library's */
    vmatch_bits_t bits, care;
    vmatch_inline_mpi_recv(e, 0, 1, 2, &bits, &care);
    CHECK(vmatch_inline_post(e, bits, care, 0, &tok[0], &got) == VMATCH_QUEUED);
    CHECK(vmatch_inline_arrive(e, bits, 0, &tok[1], &got) == VMATCH_MATCHED);
    uint64_t ops = 0;
    CHECK(vmatch_stat(e, "trace.ops", &ops) == VMATCH_OK && ops == 2);
    vmatch_destroy(e);
    REQUIRE(vmatch_create("", &e) == VMATCH_OK);
    CHECK(vmatch_stat(e, "trace.ops", &ops) == VMATCH_OK && ops == 0);
    CHECK(vmatch_trace_save(e, path_of("none.trace")) == VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "records no trace") != NULL);
    vmatch_destroy(e);
}

/* ---- paths and notes ---- */

static void clear_rank_env(void)
{
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMIX_RANK");
    unsetenv("PMI_RANK");
}

/* An engine of spec that records one queued receive and one message; its note in note. */
static int record_one(const char *spec, char *note, size_t len)
{
    vmatch_engine_t *e;
    static char tok[2];
    void *got;
    int rc = vmatch_create(spec, &e);
    if (rc < 0)
        return rc;
    vmatch_post(e, vmatch_mpi_msg(e, 0, 1, 2), ~(vmatch_bits_t)0, 0, &tok[0], &got);
    vmatch_arrive(e, vmatch_mpi_msg(e, 0, 3, 2), 0, &tok[1], &got);
    rc = vmatch_save_recordings(e, note, len);
    vmatch_destroy(e);
    return rc;
}

static void test_paths(void)
{
    char spec[512], note[512], want[200];
    clear_rank_env();
    snprintf(spec, sizeof spec, "nprocs=8 rank=3 profile.out=%s trace.out=%s", path_of("p.%r"),
             path_of("t.%r"));
    CHECK_EQ(record_one(spec, note, sizeof note), 2);
    snprintf(want, sizeof want, "profile %s (2 context-source pairs)", path_of("p.3"));
    CHECK(strstr(note, want) != NULL);
    snprintf(want, sizeof want, "trace %s (2 operations)", path_of("t.3"));
    CHECK(strstr(note, want) != NULL);
    CHECK(access(path_of("p.3"), R_OK) == 0 && access(path_of("t.3"), R_OK) == 0);
    const char *text = slurp(path_of("t.3"));
    CHECK(text && strstr(text, "\nrank 3\n") && strstr(text, "\nlayout 16 24 24\n"));

    /* the launcher's rank, the process id, a percent sign */
    setenv("PMI_RANK", "5", 1);
    snprintf(spec, sizeof spec, "trace.out=%s", path_of("t.%r.%p.%%"));
    CHECK_EQ(record_one(spec, note, sizeof note), 1);
    snprintf(want, sizeof want, "t.5.%ld.%%", (long)getpid());
    CHECK(access(path_of(want), R_OK) == 0);
    setenv("OMPI_COMM_WORLD_RANK", "6", 1); /* Open MPI's comes first */
    CHECK_EQ(record_one(spec, note, sizeof note), 1);
    snprintf(want, sizeof want, "t.6.%ld.%%", (long)getpid());
    CHECK(access(path_of(want), R_OK) == 0);
    clear_rank_env();

    /* refused at create: no rank for %r, an unknown %x, a bad rank */
    CHECK_EQ(record_one(spec, note, sizeof note), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "%r needs the rank") != NULL);
    CHECK_EQ(record_one("trace.out=/x/%q", note, sizeof note), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "unknown %q") != NULL);
    CHECK_EQ(record_one("trace.out=/x/%", note, sizeof note), VMATCH_EINVAL);
    CHECK_EQ(record_one("rank=-1", note, sizeof note), VMATCH_EINVAL);
    CHECK_EQ(record_one("rank=x trace.out=/x", note, sizeof note), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "rank=x") != NULL);

    /* nothing recorded: nothing written; no file asked: no note */
    vmatch_engine_t *e;
    snprintf(spec, sizeof spec, "rank=0 profile.out=%s trace.out=%s", path_of("np.%r"),
             path_of("nt.%r"));
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
    CHECK_EQ(vmatch_save_recordings(e, note, sizeof note), 0);
    CHECK(strstr(note, "profile: nothing recorded") && strstr(note, "trace: nothing recorded"));
    CHECK(access(path_of("np.0"), F_OK) != 0 && access(path_of("nt.0"), F_OK) != 0);
    vmatch_destroy(e);
    REQUIRE(vmatch_create("trace.record=on", &e) == VMATCH_OK);
    CHECK_EQ(vmatch_save_recordings(e, note, sizeof note), 0);
    CHECK(note[0] == '\0');
    CHECK_EQ(vmatch_save_recordings(e, NULL, 0), 0);
    vmatch_destroy(e);
    CHECK_EQ(vmatch_save_recordings(NULL, note, sizeof note), VMATCH_EINVAL);

    /* a directory that does not exist: refused at create (test_profile_refusals); one
     * removed during the run: an error and a note at the end, never a crash */
    snprintf(spec, sizeof spec, "rank=1 nprocs=8 profile.out=%s trace.out=%s",
             path_of("missing/p.%r"), path_of("missing/t.%r"));
    CHECK_EQ(record_one(spec, note, sizeof note), VMATCH_EIO);
    CHECK(strstr(vmatch_last_error(), "does not exist") != NULL);
    REQUIRE(mkdir(path_of("missing"), 0700) == 0);
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
    REQUIRE(rmdir(path_of("missing")) == 0);
    void *got;
    vmatch_post(e, vmatch_mpi_msg(e, 0, 1, 2), ~(vmatch_bits_t)0, 0, spec, &got);
    CHECK_EQ(vmatch_save_recordings(e, note, sizeof note), VMATCH_EIO);
    CHECK(strstr(note, "profile NOT written") && strstr(note, "trace NOT written"));
    vmatch_destroy(e);
}

/* ---- profiles read back ---- */

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "w");
    REQUIRE(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* A spec reading profile file name (in dir) with policy and extra keys. */
static int read_back(const char *policy, const char *name, const char *extra)
{
    char spec[512];
    vmatch_engine_t *e;
    snprintf(spec, sizeof spec, "policy=%s profile=%s %s", policy, path_of(name), extra);
    int rc = vmatch_create(spec, &e);
    if (rc == VMATCH_OK)
        vmatch_destroy(e);
    return rc;
}

static void test_profiles(void)
{
    char spec[512], note[512], mine[64];
    clear_rank_env();
    /* each rank's profile, read back through %r */
    for (int rank = 0; rank < 2; rank++) {
        snprintf(spec, sizeof spec, "nprocs=8 rank=%d profile.out=%s", rank, path_of("r.%r"));
        CHECK_EQ(record_one(spec, note, sizeof note), 1);
    }
    vm_profile_t p;
    REQUIRE(vm_profile_load(path_of("r.1"), &p) == VMATCH_OK);
    FILE *f = fopen("/proc/self/comm", "r");
    mine[0] = '\0';
    if (f) {
        if (!fgets(mine, sizeof mine, f))
            mine[0] = '\0';
        fclose(f);
    }
    mine[strcspn(mine, "\n")] = '\0';
    CHECK(p.version == 2 && p.rank == 1 && p.nprocs == 8 && p.n == 2);
    CHECK(strcmp(p.program, mine) == 0);
    vm_profile_free(&p);
    const char *policies[] = {"pnp-static", "cluster"};
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(read_back(policies[i], "r.%r", "rank=1"), VMATCH_OK);
        CHECK_EQ(read_back(policies[i], "r.%r", "rank=0 nprocs=8"), VMATCH_OK);
        /* another process count */
        CHECK_EQ(read_back(policies[i], "r.%r", "rank=1 nprocs=16"), VMATCH_EINVAL);
        CHECK(strstr(vmatch_last_error(), "a profile of another process count") != NULL);
        /* a rank whose file is not there */
        CHECK_EQ(read_back(policies[i], "r.%r", "rank=7"), VMATCH_EIO);
        CHECK(strstr(vmatch_last_error(), "r.7") != NULL);
    }

    /* another program: refused, unless profile.program=any */
    const char *text = slurp(path_of("r.1"));
    REQUIRE(text);
    char other[4096];
    const char *at = strstr(text, "program ");
    REQUIRE(at);
    snprintf(other, sizeof other, "%.*sprogram some-other-app%s", (int)(at - text), text,
             strchr(at, '\n'));
    write_text("other.prof", other);
    CHECK_EQ(read_back("cluster", "other.prof", ""), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "recorded by program 'some-other-app'") != NULL);
    CHECK_EQ(read_back("cluster", "other.prof", "profile.program=any"), VMATCH_OK);

    /* truncated: the end line cut off, or cut in the middle of an entry */
    snprintf(other, sizeof other, "%.*s", (int)(strstr(text, "end ") - text), text);
    write_text("cut.prof", other);
    CHECK_EQ(read_back("pnp-static", "cut.prof", ""), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "truncated") != NULL);
    snprintf(other, sizeof other, "%.*s", (int)(strstr(text, "end ") - text - 3), text);
    write_text("cut2.prof", other);
    CHECK_EQ(read_back("pnp-static", "cut2.prof", ""), VMATCH_EINVAL);
    /* an edited count, empty, a trace given as a profile */
    snprintf(other, sizeof other, "%.*send 5\n", (int)(strstr(text, "end ") - text), text);
    write_text("edit.prof", other);
    CHECK_EQ(read_back("cluster", "edit.prof", ""), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "cut or edited") != NULL);
    write_text("empty.prof", "");
    CHECK_EQ(read_back("cluster", "empty.prof", "nprocs=8"), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "empty") != NULL);
    write_text("trace.prof", "vmatch-trace 1\nend 0\n");
    CHECK_EQ(read_back("cluster", "trace.prof", "nprocs=8"), VMATCH_EINVAL);
}

/* Profiles at the edges (issue 37): counts whose sum wraps past 2^64 - 1, which the tools
 * printed as a total of 2^64 - 2 with 100% for each source, and a folder given as the
 * profile, which said only "read error". */
static void test_profile_edges(void)
{
    vm_profile_t p;
    write_text("wrap.prof", "vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n"
                            "0 1 18446744073709551615 0\n0 2 18446744073709551615 0\n");
    CHECK_EQ(vm_profile_load(path_of("wrap.prof"), &p), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "PRQ counts sum past 2^64 - 1") != NULL);
    write_text("wrap-umq.prof", "vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n"
                                "0 1 0 18446744073709551615\n0 2 0 1\n");
    CHECK_EQ(vm_profile_load(path_of("wrap-umq.prof"), &p), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "UMQ counts sum past") != NULL);
    /* the largest sums that fit are read */
    write_text("max.prof", "vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n"
                           "0 1 18446744073709551614 0\n0 2 1 18446744073709551615\n");
    REQUIRE(vm_profile_load(path_of("max.prof"), &p) == VMATCH_OK);
    CHECK_EQ(p.n, 2);
    vm_profile_free(&p);
    REQUIRE(mkdir(path_of("folder.prof"), 0700) == 0);
    CHECK_EQ(vm_profile_load(path_of("folder.prof"), &p), VMATCH_EIO);
    CHECK(strstr(vmatch_last_error(), "is a directory") != NULL);
    CHECK(read_back("cluster", "folder.prof", "nprocs=8") < 0);
    CHECK(strstr(vmatch_last_error(), "is a directory") != NULL);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/vmatch-rec-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    REQUIRE(mkdtemp(dir) != NULL);
    const char *specs[] = {"",
                           "policy=single storage=ll",
                           "policy=single storage=llv",
                           "policy=pnp pnp.threshold=4",
                           "policy=hash threads=mutex",
                           "policy=hash threads=multi",
                           "policy=unified",
                           "layout=ompi-ucx profile.record=on"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
        random_run(specs[i], 0x5eed + i);
    test_cap();
    test_partial_care();
    test_inline_off();
    test_paths();
    test_profiles();
    test_profile_edges();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_record: could not remove %s\n", dir);
    return check_report("test_record");
}
