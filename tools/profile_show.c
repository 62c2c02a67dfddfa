/* profile_show.c -- vmatch-profile's commands on profiles: show (the busiest sources and the
 * partners each metric of policy=pnp would choose), heatmap (of a profile, or of the profile
 * a trace's replay records) and record (the profile of a generated workload). */
#include "gen.h"
#include "partners.h"
#include "profile_tool.h"
#include "replay.h"
#include "vmatch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEAT_COLS    1024 /* heat map: at most this many source columns */
#define MAX_CTX_TICS 32   /* heat map: name the context of each row up to this many */

const char *const side_names[] = {"PRQ", "UMQ", "PRQ + UMQ"};

uint64_t side_count(const vm_profile_entry_t *e, int side)
{
    return side == SIDE_PRQ ? e->prq : side == SIDE_UMQ ? e->umq : e->prq + e->umq;
}

void print_keys(FILE *f, const vm_profile_t *p, const unsigned char *mark)
{
    const vm_profile_entry_t *e = p->entries;
    size_t last = 0, shown = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (!mark[i])
            continue;
        if (shown == 0 || e[last].ctx != e[i].ctx)
            fprintf(f, "%sctx %u: src ", shown ? "; " : "", e[i].ctx);
        else
            fprintf(f, ",");
        size_t j = i;
        while (j + 1 < p->n && mark[j + 1] && e[j + 1].ctx == e[i].ctx &&
               e[j + 1].src == e[j].src + 1)
            j++;
        fprintf(f, j > i ? "%u-%u" : "%u", e[i].src, e[j].src);
        shown += j - i + 1;
        last = i = j;
    }
    fprintf(f, "%s\n", shown ? "" : "none");
}

long choose_partners(const vm_profile_t *p, uint64_t nprocs, int side, int metric, double alpha,
                     size_t cap, unsigned char *mark, double *edge)
{
    size_t n = p->n ? p->n : 1;
    uint64_t *counts = malloc(2 * n * sizeof *counts);
    size_t *chosen = malloc(n * sizeof *chosen);
    uint32_t *idx = malloc(n * sizeof *idx), nctx;
    long k = -1;
    if (counts && chosen && idx) {
        size_t m = vm_profile_side(p, side, idx, counts, &nctx);
        k = (long)vm_pnp_choose(counts, m, nprocs * nctx, metric, alpha, cap, counts + n,
                                chosen, edge);
        memset(mark, 0, p->n);
        for (long j = 0; j < k; j++)
            mark[idx[chosen[j]]] = 1;
    }
    free(counts), free(chosen), free(idx);
    return k;
}

typedef struct ranked {
    uint64_t count;
    size_t i;
} ranked_t;

static int by_count_desc(const void *a, const void *b)
{
    const ranked_t *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

/** Print the header, then per queue the busiest sources and each metric's partners. */
static int show(const vm_profile_t *p, const char *name, uint64_t nprocs, const opts_t *o)
{
    size_t n = p->n ? p->n : 1, ctxs = 0;
    uint64_t total[2] = {0};
    uint32_t nctx[2];
    ranked_t *rank = malloc(n * sizeof *rank);
    uint32_t *idx = malloc(n * sizeof *idx);
    uint64_t *counts = malloc(n * sizeof *counts);
    unsigned char *mark = malloc(n);
    if (!rank || !idx || !counts || !mark) {
        free(rank), free(idx), free(counts), free(mark);
        return fail(EXIT_ERROR, "out of memory");
    }
    for (size_t i = 0; i < p->n; i++) {
        ctxs += i == 0 || p->entries[i].ctx != p->entries[i - 1].ctx;
        for (int s = 0; s < 2; s++)
            total[s] += side_count(&p->entries[i], s);
    }
    printf("profile %s\nlayout: ctx %u, src %u, tag %u bits\nnprocs: %llu%s\n", name,
           p->ctx_bits, p->src_bits, p->tag_bits, (unsigned long long)nprocs,
           p->nprocs ? "" : " (from --nprocs)");
    printf("keys: %zu (context, source) in %zu context(s)\ninsertions: PRQ %llu, UMQ %llu\n",
           p->n, ctxs, (unsigned long long)total[0], (unsigned long long)total[1]);
    size_t cap = o->cap < 0 ? (size_t)-1 : (size_t)floor(o->cap * sqrt((double)nprocs));
    int status = 0;
    for (int s = 0; s < 2 && !status; s++) {
        size_t m = vm_profile_side(p, s, idx, counts, &nctx[s]);
        for (size_t j = 0; j < m; j++)
            rank[j] = (ranked_t){counts[j], idx[j]};
        qsort(rank, m, sizeof *rank, by_count_desc);
        printf("\n%s: top sources\n%8s %10s %12s %8s\n", side_names[s], "ctx", "src", "count",
               "share");
        for (size_t j = 0; j < m && j < (size_t)o->top; j++)
            printf("%8u %10u %12llu %7.1f%%\n", p->entries[rank[j].i].ctx,
                   p->entries[rank[j].i].src, (unsigned long long)rank[j].count,
                   100.0 * (double)rank[j].count / (double)total[s]);
        printf("%s: partners (count > edge) in a population of %llu = nprocs %llu x %u "
               "context(s), alpha %g, ",
               side_names[s], (unsigned long long)(nprocs * nctx[s]),
               (unsigned long long)nprocs, nctx[s], o->alpha);
        printf(o->cap < 0 ? "no cap\n" : "cap %zu\n", cap);
        for (int metric = VM_PNP_AVERAGE; metric <= VM_PNP_FENCE && !status; metric++) {
            double edge;
            long k = choose_partners(p, nprocs, s, metric, o->alpha, cap, mark, &edge);
            if (k < 0) {
                status = fail(EXIT_ERROR, "out of memory");
                break;
            }
            printf("%s %-7s edge %.3f, partners %ld: ", side_names[s],
                   vm_pnp_metric_name(metric), edge, k);
            print_keys(stdout, p, mark);
        }
    }
    free(rank), free(idx), free(counts), free(mark);
    return status;
}

int cmd_show(const opts_t *o)
{
    vm_profile_t p;
    const char *name = o->args[0];
    if (vm_profile_load(name, &p) < 0)
        return fail(EXIT_ERROR, "%s", vmatch_last_error());
    uint64_t nprocs = p.nprocs ? p.nprocs : (uint64_t)o->nprocs;
    int status = 0;
    if (p.nprocs && o->nprocs && o->nprocs != p.nprocs)
        fail(0, "note: the profile has nprocs %u; --nprocs %.0f is not used", p.nprocs,
             o->nprocs);
    if (!nprocs)
        status = fail(EXIT_NPROCS, "%s has nprocs 0 (unknown); give --nprocs N", name);
    for (size_t i = 0; !status && i < p.n; i++)
        if (p.entries[i].src >= nprocs)
            status = fail(EXIT_ERROR, "%s: source %u is not below --nprocs %llu", name,
                          p.entries[i].src, (unsigned long long)nprocs);
    if (!status)
        status = show(&p, name, nprocs, o);
    vm_profile_free(&p);
    return status;
}

/* ---- heatmap ---- */

int draw_heatmap(const opts_t *o, const char *name, const vm_profile_t *p)
{
    /* Rows: the contexts with insertions on the side drawn; columns: sources, binned. */
    uint64_t nsrc = p->nprocs;
    for (size_t i = 0; i < p->n; i++)
        nsrc = p->entries[i].src >= nsrc ? (uint64_t)p->entries[i].src + 1 : nsrc;
    uint64_t w = nsrc > HEAT_COLS ? (nsrc + HEAT_COLS - 1) / HEAT_COLS : 1;
    size_t rows = 0;
    char tics[MAX_CTX_TICS * 24 + 16] = "set ytics (", *tp = tics + strlen(tics);
    plot_t pl = {0};
    int status = plot_open(&pl, o->out, "x y insertions (empty cells left out)");
    for (size_t i = 0; !status && i < p->n;) {
        uint32_t ctx = p->entries[i].ctx;
        int used = 0;
        while (i < p->n && p->entries[i].ctx == ctx) {
            uint64_t col = p->entries[i].src / w, sum = 0;
            for (; i < p->n && p->entries[i].ctx == ctx && p->entries[i].src / w == col; i++)
                sum += side_count(&p->entries[i], o->side);
            if (sum)
                fprintf(pl.f, "%llu %zu %llu\n", (unsigned long long)(col * w), rows,
                        (unsigned long long)sum);
            used |= sum != 0;
        }
        if (used && rows < MAX_CTX_TICS)
            tp += sprintf(tp, "%s'%u' %zu", rows ? ", " : "", ctx, rows);
        rows += used;
    }
    strcpy(tp, ")");
    char title[256];
    snprintf(title, sizeof title, "%s insertions by (source, context): %s", side_names[o->side],
             name);
    if (!status && rows == 0)
        status = fail(EXIT_ERROR, "%s: no %s insertions to draw", name, side_names[o->side]);
    if (!status)
        status = plot_grid(&pl, title, "source", w, (size_t)((nsrc + w - 1) / w),
                           rows > MAX_CTX_TICS ? "context (row)" : "context", 1, rows,
                           rows > MAX_CTX_TICS ? "" : tics, "insertions");
    plot_close(&pl);
    return status;
}

int is_trace(const char *path)
{
    static const char magic[] = "vmatch-trace";
    char head[sizeof magic - 1];
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    return got == sizeof head && memcmp(head, magic, sizeof head) == 0;
}

int cmd_heatmap(const opts_t *o)
{
    const char *name = o->args[0];
    vm_profile_t p;
    if (is_trace(name)) {
        /* The profile its replay records, as profile.record=on would have saved it. */
        vm_trace_t t;
        rank_t r;
        char path[4096];
        int status = rank_load(name, 0, &t, &r);
        if (!status && !(status = temp_profile(path, sizeof path))) {
            static const char *const dflt[] = {""};
            status = rank_scan(&t, &r, dflt, 1, path, NULL);
            if (!status && vm_profile_load(path, &p) < 0)
                status = fail(EXIT_ERROR, "%s", vmatch_last_error());
            unlink(path);
        }
        vm_trace_free(&t);
        rank_free(&r);
        if (status)
            return status;
    } else if (vm_profile_load(name, &p) < 0) {
        return fail(EXIT_ERROR, "%s", vmatch_last_error());
    }
    int status = draw_heatmap(o, name, &p);
    vm_profile_free(&p);
    return status;
}

/* ---- record ---- */

static void ignore(void *arg, const scan_step_t *st)
{
    (void)arg, (void)st;
}

int cmd_record(const opts_t *o)
{
    const char *wl = o->args[0], *spec = o->nspecs ? o->specs[0] : "";
    char err[512], name[600];
    vm_trace_t t;
    vm_trace_init(&t);
    int status = 0;
    if (o->nspecs > 1)
        status = fail(EXIT_ERROR, "record takes one --spec");
    else if (vm_wl_generate(wl, &t, NULL, 0, err, sizeof err))
        status = fail(EXIT_ERROR, "workload \"%s\": %s", wl, err);
    snprintf(name, sizeof name, "workload \"%s\"", wl);
    scan_job_t job = {.name = name,
                      .t = &t,
                      .specs = &spec,
                      .nspecs = 1,
                      .profile_out = o->out,
                      .rank = -1,
                      .fn = ignore};
    if (!status)
        status = scan_trace("vmatch-profile", &job);
    if (!status)
        printf("recorded %s: %zu operations; wrote %s\n", wl, t.n, o->out);
    vm_trace_free(&t);
    return status;
}
