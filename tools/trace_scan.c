/* trace_scan.c -- a trace through engines side by side, with each operation's figures
 * (trace_scan.h). */
#include "trace_scan.h"

#include "replay.h"
#include "vmatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Payloads: request or message id + 1 (never NULL); the engines only compare them. */
#define TOKEN(id) ((void *)(uintptr_t)((uintptr_t)(id) + 1))
#define ID(p)     ((uint32_t)((uintptr_t)(p)-1))

/* The ids queued on one side.  Entries join a side in id order (requests and messages are
 * numbered as they come), which is a single list's order, so an entry's place in the list
 * is the number of queued ids below its own: a bit per id, and a Fenwick tree over the
 * population of each 64-bit word for the count below a word in log time. */
typedef struct live {
    uint64_t *bits;
    uint32_t *tree; /* 1-based: tree[k] counts the ids of words (k - lowbit(k), k] */
    size_t words;
    uint64_t len;
} live_t;

static int live_init(live_t *l, uint32_t ids)
{
    l->words = (size_t)ids / 64 + 1;
    l->len = 0;
    l->bits = calloc(l->words, sizeof *l->bits);
    l->tree = calloc(l->words + 1, sizeof *l->tree);
    return l->bits && l->tree ? 0 : -1;
}

static void live_free(live_t *l)
{
    free(l->bits);
    free(l->tree);
}

static int live_has(const live_t *l, uint32_t id)
{
    return id / 64 < l->words && (l->bits[id / 64] >> (id % 64) & 1);
}

/** Queue (d = 1) or take out (d = -1) id, which is not / is queued. */
static void live_set(live_t *l, uint32_t id, int d)
{
    l->bits[id / 64] ^= (uint64_t)1 << (id % 64);
    l->len += (uint64_t)(int64_t)d;
    for (size_t k = id / 64 + 1; k <= l->words; k += k & -k)
        l->tree[k] += (uint32_t)d;
}

/** How many queued ids are below id: the entries a list walk passes before reaching it. */
static uint64_t live_below(const live_t *l, uint32_t id)
{
    uint64_t n =
        (uint64_t)__builtin_popcountll(l->bits[id / 64] & (((uint64_t)1 << (id % 64)) - 1));
    for (size_t k = id / 64; k > 0; k -= k & -k)
        n += l->tree[k];
    return n;
}

/** Entries a walk of side l inspects looking for id: its place, or all of them. */
static uint64_t walk(const live_t *l, uint32_t id)
{
    return id != SCAN_NONE && live_has(l, id) ? live_below(l, id) + 1 : l->len;
}

/* One engine of the pass. */
typedef struct eng {
    vmatch_engine_t *e;
    uint32_t *cls; /* the engine's class id of each trace class */
    uint64_t inspected;
} eng_t;

static int say(const char *prog, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Print "PROG: NAME: MESSAGE" on stderr; returns 1. */
static int say(const char *prog, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: %s: ", prog, name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/** Make engine g from spec for trace t (engine 0 recording a profile when record). */
static int eng_make(const char *prog, const scan_job_t *job, const char *spec, int record,
                    eng_t *g)
{
    const vm_trace_t *t = job->t;
    size_t len = strlen(spec) + 256;
    char *full = malloc(len);
    if (!full)
        return say(prog, job->name, "out of memory");
    vm_wl_engine_spec(t, spec, full, len);
    if (record)
        strcat(full, " profile.record=on");
    if (record && job->rank >= 0) /* the rank the profile names */
        snprintf(full + strlen(full), len - strlen(full), " rank=%lld", (long long)job->rank);
    int rc = vmatch_create(full, &g->e);
    free(full);
    if (rc < 0)
        return say(prog, job->name, "spec \"%s\": %s (%s)", spec, vmatch_strerror(rc),
                   vmatch_last_error());
    if (!(g->cls = malloc(t->nclasses * sizeof *g->cls)))
        return say(prog, job->name, "out of memory");
    for (size_t c = 0; c < t->nclasses; c++) {
        const vm_trace_class_t *k = &t->classes[c];
        g->cls[c] = c ? vmatch_coll_class(g->e, k->op, k->bytes, k->comm_size) : 0;
    }
    return 0;
}

/** Apply op to engine g: its outcome in *res.  0; 1 when its fields do not fit the engine's
 * layout; or the negative code of the call. */
static int eng_step(eng_t *g, const vm_trace_op_t *op, uint32_t *res)
{
    vmatch_bits_t bits, care;
    void *out = NULL;
    int rc = 0, kind = op->kind;
    uint32_t cls = g->cls[op->cls];
    *res = SCAN_NONE;
    if (kind <= VM_TRACE_IMPROBE && vmatch_mpi_pack(g->e, op->ctx, op->src, op->tag, &bits,
                                                    kind == VM_TRACE_ARRIVE ? NULL : &care) < 0)
        return 1;
    switch (kind) {
    case VM_TRACE_POST:
        rc = vmatch_post(g->e, bits, care, cls, TOKEN(op->id), &out);
        break;
    case VM_TRACE_ARRIVE:
        rc = vmatch_arrive(g->e, bits, cls, TOKEN(op->id), &out);
        break;
    case VM_TRACE_PROBE:
    case VM_TRACE_IMPROBE:
        rc = vmatch_probe(g->e, bits, care, cls, kind == VM_TRACE_IMPROBE, &out);
        break;
    case VM_TRACE_CANCEL:
        rc = vmatch_cancel(g->e, TOKEN(op->id));
        break;
    default:
        rc = vmatch_remove_unexpected(g->e, TOKEN(op->id));
        break;
    }
    if (rc == VMATCH_ENOTFOUND)
        return 0;
    if (rc < 0)
        return rc;
    if (kind >= VM_TRACE_CANCEL)
        *res = op->id;
    else if (rc == VMATCH_MATCHED)
        *res = ID(out);
    return 0;
}

/** Say that op's fields do not fit e's layout. */
static int misfit(const char *prog, const char *name, size_t i, const vm_trace_op_t *op,
                  const vmatch_engine_t *e)
{
    unsigned c, s, g;
    vmatch_layout(e, &c, &s, &g);
    return say(prog, name,
               "operation %zu (%s): context %u, source %d or tag %d does not fit the layout "
               "(ctx %u, src %u, tag %u bits)",
               i, vm_trace_kind_name((vm_trace_kind_t)op->kind), op->ctx, op->src, op->tag, c,
               s, g);
}

/** The single list's side of op (and the depths): its inspected count, then the change. */
static void list_step(live_t side[2], const vm_trace_op_t *op, scan_step_t *st)
{
    uint32_t got = st->outcome;
    switch (op->kind) {
    case VM_TRACE_POST:
    case VM_TRACE_ARRIVE: {
        int mine = op->kind == VM_TRACE_ARRIVE; /* the side it joins: PRQ 0, UMQ 1 */
        st->list = walk(&side[!mine], got);
        st->search = 1;
        if (got != SCAN_NONE)
            live_set(&side[!mine], got, -1);
        else
            live_set(&side[mine], op->id, 1);
        st->queued = got == SCAN_NONE;
        break;
    }
    case VM_TRACE_PROBE:
    case VM_TRACE_IMPROBE:
        st->list = walk(&side[1], got);
        st->search = 1;
        if (got != SCAN_NONE && op->kind == VM_TRACE_IMPROBE)
            live_set(&side[1], got, -1);
        break;
    default: {
        live_t *l = &side[op->kind == VM_TRACE_REMOVE];
        st->list = walk(l, op->id);
        if (got != SCAN_NONE)
            live_set(l, got, -1);
    }
    }
    st->depth[0] = side[0].len;
    st->depth[1] = side[1].len;
}

/** Does outcome got agree with what the single list holds? */
static int list_agrees(const live_t side[2], const vm_trace_op_t *op, uint32_t got)
{
    switch (op->kind) {
    case VM_TRACE_POST:
    case VM_TRACE_PROBE:
    case VM_TRACE_IMPROBE:
        return got == SCAN_NONE || live_has(&side[1], got);
    case VM_TRACE_ARRIVE:
        return got == SCAN_NONE || live_has(&side[0], got);
    default:
        return (got != SCAN_NONE) == live_has(&side[op->kind == VM_TRACE_REMOVE], op->id);
    }
}

int scan_trace(const char *prog, const scan_job_t *job)
{
    const vm_trace_t *t = job->t;
    size_t ne = job->nspecs;
    eng_t eng[SCAN_MAX_ENGINES] = {{0}};
    live_t side[2] = {{0}};
    int status = 0;
    if (ne < 1 || ne > SCAN_MAX_ENGINES)
        return say(prog, job->name, "%zu engines (1 to %d)", ne, SCAN_MAX_ENGINES);
    if (live_init(&side[0], t->nreq) || live_init(&side[1], t->nmsg))
        status = say(prog, job->name, "out of memory");
    for (size_t k = 0; !status && k < ne; k++)
        status = eng_make(prog, job, job->specs[k], k == 0 && job->profile_out, &eng[k]);
    for (size_t i = 0; !status && i < t->n; i++) {
        const vm_trace_op_t *op = &t->ops[i];
        scan_step_t st = {.i = i, .op = op};
        for (size_t k = 0; !status && k < ne; k++) {
            uint32_t res;
            const char *what = vm_trace_kind_name((vm_trace_kind_t)op->kind);
            int rc = eng_step(&eng[k], op, &res);
            if (rc > 0)
                status = misfit(prog, job->name, i, op, eng[k].e);
            else if (rc < 0)
                status = say(prog, job->name, "operation %zu (%s): %s (%s)", i, what,
                             vmatch_strerror(rc), vmatch_last_error());
            else if (k == 0)
                st.outcome = res;
            else if (res != st.outcome)
                status = say(prog, job->name,
                             "operation %zu (%s): engine \"%s\" matched otherwise than \"%s\"",
                             i, what, job->specs[k], job->specs[0]);
            if (!status) {
                vmatch_stats_t s;
                vmatch_stats(eng[k].e, &s);
                st.inspected[k] = s.inspected - eng[k].inspected;
                eng[k].inspected = s.inspected;
            }
        }
        if (!status && !list_agrees(side, op, st.outcome))
            status =
                say(prog, job->name,
                    "operation %zu (%s): engine \"%s\" matched an entry that is not queued", i,
                    vm_trace_kind_name((vm_trace_kind_t)op->kind), job->specs[0]);
        if (status)
            break;
        list_step(side, op, &st);
        job->fn(job->arg, &st);
    }
    if (!status && job->profile_out && vmatch_profile_save(eng[0].e, job->profile_out) < 0)
        status = say(prog, job->name, "%s", vmatch_last_error());
    for (size_t k = 0; k < ne; k++) {
        vmatch_destroy(eng[k].e);
        free(eng[k].cls);
    }
    live_free(&side[0]);
    live_free(&side[1]);
    return status;
}
