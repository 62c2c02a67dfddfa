/* profile_rank.c -- one pass over a rank's trace: the figures of its summary and the bins of
 * its pictures, gathered as the operations go (profile_tool.h). */
#include "profile_tool.h"

#include "vmatch.h"

#include <stdlib.h>
#include <string.h>

#define TIMELINE_Y 512 /* timeline: at most this many source rows */

/* ---- messages per source ---- */

static size_t src_hash(int64_t src, size_t cap)
{
    return (size_t)(((uint64_t)src * 0x9e3779b97f4a7c15u) >> 20) & (cap - 1);
}

int srcmap_add(srcmap_t *m, int64_t src, uint64_t arrived, uint64_t unexpected)
{
    if (3 * (m->used + 1) > 2 * m->cap) { /* at most two thirds full */
        size_t cap = m->cap ? 2 * m->cap : 64;
        src_count_t *slot = malloc(cap * sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < cap; i++)
            slot[i].src = -1;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->slot[i].src < 0)
                continue;
            size_t j = src_hash(m->slot[i].src, cap);
            while (slot[j].src >= 0)
                j = (j + 1) & (cap - 1);
            slot[j] = m->slot[i];
        }
        free(m->slot);
        m->slot = slot;
        m->cap = cap;
    }
    size_t j = src_hash(src, m->cap);
    while (m->slot[j].src >= 0 && m->slot[j].src != src)
        j = (j + 1) & (m->cap - 1);
    if (m->slot[j].src < 0) {
        m->slot[j] = (src_count_t){.src = src};
        m->used++;
    }
    m->slot[j].arrived += arrived;
    m->slot[j].unexpected += unexpected;
    return 0;
}

void srcmap_free(srcmap_t *m)
{
    free(m->slot);
    *m = (srcmap_t){0};
}

static int by_arrived(const void *a, const void *b)
{
    const src_count_t *x = a, *y = b;
    if (x->arrived != y->arrived)
        return x->arrived < y->arrived ? 1 : -1;
    return (x->src > y->src) - (x->src < y->src);
}

static int by_unexpected(const void *a, const void *b)
{
    const src_count_t *x = a, *y = b;
    if (x->unexpected != y->unexpected)
        return x->unexpected < y->unexpected ? 1 : -1;
    return by_arrived(a, b);
}

src_count_t *srcmap_sorted(const srcmap_t *m, int by_unexp)
{
    src_count_t *v = m->used ? malloc(m->used * sizeof *v) : NULL;
    size_t n = 0;
    for (size_t i = 0; v && i < m->cap; i++)
        if (m->slot[i].src >= 0)
            v[n++] = m->slot[i];
    if (v)
        qsort(v, n, sizeof *v, by_unexp ? by_unexpected : by_arrived);
    return v;
}

/* ---- a rank ---- */

int rank_load(const char *file, size_t pos, vm_trace_t *t, rank_t *r)
{
    char err[1024];
    *r = (rank_t){.file = file, .pos = pos, .label = (int64_t)pos, .max_at = {-1, -1}};
    vm_trace_init(t);
    if (vm_trace_load(t, file, err, sizeof err) < 0)
        return fail(EXIT_ERROR, "%s", err);
    r->nprocs = t->nprocs;
    if (t->rank >= 0) {
        r->label = t->rank;
        r->labelled = 1;
    }
    if (t->has_layout) {
        r->layout[0] = t->ctx_bits;
        r->layout[1] = t->src_bits;
        r->layout[2] = t->tag_bits;
    }
    r->cut = t->cut;
    return 0;
}

void rank_free(rank_t *r)
{
    srcmap_free(&r->src);
}

int rank_add(rank_t *tot, const rank_t *r)
{
    tot->ops += r->ops;
    tot->cut += r->cut;
    tot->ncut += r->cut > 0;
    tot->searches += r->searches;
    tot->list += r->list;
    tot->eng += r->eng;
    tot->unexpected += r->unexpected;
    tot->nprocs = r->nprocs > tot->nprocs ? r->nprocs : tot->nprocs;
    for (int k = 0; k < VM_TRACE_NKINDS; k++)
        tot->kind[k] += r->kind[k];
    for (int s = 0; s < 2; s++) {
        for (int w = 0; w < 4; w++)
            tot->wild[s][w] += r->wild[s][w];
        tot->sum[s] += r->sum[s];
        if (tot->max_at[s] < 0 || r->max[s] > tot->max[s]) {
            tot->max[s] = r->max[s];
            tot->max_at[s] = r->label;
        }
    }
    for (size_t i = 0; i < r->src.cap; i++) {
        const src_count_t *c = &r->src.slot[i];
        if (c->src >= 0 && srcmap_add(&tot->src, c->src, c->arrived, c->unexpected) < 0)
            return -1;
    }
    return 0;
}

/* ---- the pass ---- */

/* The pass's state: the rank's figures and the time column being filled. */
typedef struct collect {
    rank_t *r;
    rank_pics_t *pics;
    size_t n, nengines;
    int nomem;
    uint64_t dmax[2];  /* depth: longest in the column */
    double dsum[2];    /* depth: summed after each operation of the column */
    uint64_t searches; /* inspected: searches, entries in the column */
    uint64_t list, eng[SCAN_MAX_ENGINES];
    uint64_t *col; /* timeline: insertions per source row */
} collect_t;

/** The summary's figures of one operation. */
static void figures(collect_t *c, const scan_step_t *st)
{
    rank_t *r = c->r;
    const vm_trace_op_t *op = st->op;
    r->ops++;
    r->kind[op->kind]++;
    if (op->kind == VM_TRACE_POST || op->kind == VM_TRACE_PROBE || op->kind == VM_TRACE_IMPROBE)
        r->wild[op->kind != VM_TRACE_POST][(op->src < 0) | (op->tag < 0) << 1]++;
    r->searches += (uint64_t)st->search;
    r->list += st->list;
    r->eng += st->inspected[0];
    if (op->kind == VM_TRACE_ARRIVE) {
        r->unexpected += (uint64_t)st->queued;
        if (srcmap_add(&r->src, op->src, 1, (uint64_t)st->queued) < 0)
            c->nomem = 1;
    }
    for (int s = 0; s < 2; s++) {
        r->max[s] = st->depth[s] > r->max[s] ? st->depth[s] : r->max[s];
        r->sum[s] += (double)st->depth[s];
    }
}

/** Add one operation to the time column, and write the column out at its end. */
static void columns(collect_t *c, const scan_step_t *st)
{
    rank_pics_t *p = c->pics;
    const vm_trace_op_t *op = st->op;
    int end = (st->i + 1) % p->step == 0 || st->i + 1 == c->n;
    unsigned long long x = (unsigned long long)(st->i / p->step * p->step);
    uint64_t in = st->i % p->step + 1; /* operations in the column so far */
    for (int s = 0; s < 2; s++) {
        c->dmax[s] = st->depth[s] > c->dmax[s] ? st->depth[s] : c->dmax[s];
        c->dsum[s] += (double)st->depth[s];
    }
    if (end && p->depth.f) {
        fprintf(p->depth.f, "%llu %llu %llu %.3f %.3f\n", x, (unsigned long long)c->dmax[0],
                (unsigned long long)c->dmax[1], c->dsum[0] / (double)in,
                c->dsum[1] / (double)in);
    }
    c->searches += (uint64_t)st->search;
    c->list += st->list;
    for (size_t k = 0; k < c->nengines; k++)
        c->eng[k] += st->inspected[k];
    if (end && p->inspected.f) {
        double d = c->searches ? (double)c->searches : 1;
        fprintf(p->inspected.f, "%llu %.3f", x, (double)c->list / d);
        for (size_t k = 0; k < c->nengines; k++)
            fprintf(p->inspected.f, " %.3f", (double)c->eng[k] / d);
        fprintf(p->inspected.f, " %llu\n", (unsigned long long)c->searches);
    }
    /* An arrival that queues is a UMQ insertion, a post that queues a PRQ one. */
    int tend = (st->i + 1) % p->tstep == 0 || st->i + 1 == c->n;
    unsigned long long tx = (unsigned long long)(st->i / p->tstep * p->tstep);
    if (st->queued) {
        p->ins[op->kind == VM_TRACE_ARRIVE]++;
        if (op->src < 0)
            p->wild++;
        else
            c->col[(uint64_t)op->src / p->ystep]++;
    }
    for (size_t y = 0; tend && p->timeline.f && y < p->ny; y++)
        if (c->col[y])
            fprintf(p->timeline.f, "%llu %llu %llu\n", tx, (unsigned long long)(y * p->ystep),
                    (unsigned long long)c->col[y]);
    if (tend)
        memset(c->col, 0, p->ny * sizeof *c->col);
    if (end) {
        memset(c->dmax, 0, sizeof c->dmax);
        memset(c->dsum, 0, sizeof c->dsum);
        c->searches = c->list = 0;
        memset(c->eng, 0, sizeof c->eng);
    }
}

static void collect(void *arg, const scan_step_t *st)
{
    collect_t *c = arg;
    figures(c, st);
    if (c->pics)
        columns(c, st);
}

int rank_scan(const vm_trace_t *t, rank_t *r, const char *const *specs, size_t nspecs,
              const char *profile_out, rank_pics_t *pics)
{
    collect_t c = {.r = r, .pics = pics, .n = t->n, .nengines = nspecs};
    if (pics) {
        uint64_t nsrc = t->nprocs;
        for (size_t i = 0; i < t->n; i++)
            if (t->ops[i].src >= 0 && (uint64_t)t->ops[i].src >= nsrc)
                nsrc = (uint64_t)t->ops[i].src + 1;
        pics->ystep = nsrc > TIMELINE_Y ? (nsrc + TIMELINE_Y - 1) / TIMELINE_Y : 1;
        pics->ny = (size_t)((nsrc + pics->ystep - 1) / pics->ystep);
        pics->step = t->n > pics->bins ? (t->n + pics->bins - 1) / pics->bins : 1;
        pics->nx = (size_t)((t->n + pics->step - 1) / pics->step);
        pics->tstep = t->n > pics->tbins ? (t->n + pics->tbins - 1) / pics->tbins : 1;
        pics->tnx = (size_t)((t->n + pics->tstep - 1) / pics->tstep);
        pics->ins[0] = pics->ins[1] = pics->wild = 0;
        if (!(c.col = calloc(pics->ny ? pics->ny : 1, sizeof *c.col)))
            return fail(EXIT_ERROR, "out of memory");
    }
    scan_job_t job = {.name = r->file,
                      .t = t,
                      .specs = specs,
                      .nspecs = nspecs,
                      .profile_out = profile_out,
                      .rank = r->labelled ? r->label : -1,
                      .fn = collect,
                      .arg = &c};
    int status = scan_trace("vmatch-profile", &job);
    free(c.col);
    if (!status && c.nomem)
        status = fail(EXIT_ERROR, "%s: out of memory", r->file);
    return status;
}
