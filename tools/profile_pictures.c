/* profile_pictures.c -- vmatch-profile's pictures of traces: depth (the queues over the run),
 * inspected (entries inspected per search over the run), matrix (messages by source and
 * receiving rank), timeline (queue insertions by operation and source) and all (the summary
 * and every picture of a recorded run into one folder). */
#include "gen.h"
#include "profile_tool.h"
#include "vmatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MATRIX_COLS   1024 /* matrix: at most this many source columns */
#define MATRIX_ROWS   512  /* matrix: at most this many rank rows */
#define LINE_BINS     1000 /* depth, inspected: time columns unless --bins */
#define GRID_BINS     100  /* timeline: time columns unless --bins */
#define MAX_LABEL_LEN 256
#define MAX_RANK_TICS 32 /* matrix: name each rank's row up to this many */

static const char *const dflt_spec[] = {""};

/** The engines of inspected and all: --spec, else the default engine. */
static const char *const *engines(const opts_t *o, size_t *n)
{
    *n = o->nspecs ? (size_t)o->nspecs : 1;
    return o->nspecs ? o->specs : dflt_spec;
}

int draw_depth(rank_pics_t *p, const char *name, size_t nops)
{
    static const char *const names[] = {"PRQ, longest", "UMQ, longest", "PRQ, mean",
                                        "UMQ, mean"};
    char title[512];
    snprintf(title, sizeof title, "queue depths: %s (%zu operations)", name, nops);
    return plot_lines(&p->depth, title, "operation", p->step, "entries queued", names, 4, 2);
}

int draw_inspected(rank_pics_t *p, const char *name, const char *const *specs)
{
    char labels[SCAN_MAX_ENGINES + 1][MAX_LABEL_LEN], title[512];
    const char *names[SCAN_MAX_ENGINES + 1];
    snprintf(labels[0], sizeof labels[0], "single list (policy=single storage=ll)");
    for (size_t k = 0; k < p->nspecs; k++)
        snprintf(labels[k + 1], sizeof labels[k + 1], *specs[k] ? "%s" : "default engine",
                 specs[k]);
    for (size_t k = 0; k <= p->nspecs; k++)
        names[k] = labels[k];
    snprintf(title, sizeof title, "entries inspected per search: %s", name);
    return plot_lines(&p->inspected, title, "operation", p->step, "entries per search", names,
                      p->nspecs + 1, p->nspecs + 1);
}

int draw_timeline(rank_pics_t *p, const char *name, size_t nops)
{
    char title[512];
    (void)nops;
    snprintf(title, sizeof title, "queue insertions over time: %s", name);
    return plot_grid(&p->timeline, title, "operation", p->tstep, p->tnx, "source", p->ystep,
                     p->ny, "", "insertions");
}

/** Load the one trace of a picture command and check that it has operations to draw. */
static int load_one(const opts_t *o, vm_trace_t *t, rank_t *r)
{
    if (o->nargs != 1)
        return fail(EXIT_ERROR, "%s draws one TRACE", o->cmd);
    int status = rank_load(o->args[0], 0, t, r);
    if (!status && t->n == 0)
        status = fail(EXIT_ERROR, "%s: no operations to draw", o->args[0]);
    return status;
}

int cmd_depth(const opts_t *o)
{
    vm_trace_t t;
    rank_t r;
    rank_pics_t p = {.bins = o->bins ? (uint64_t)o->bins : LINE_BINS, .tbins = 1};
    int status = load_one(o, &t, &r);
    if (!status)
        status =
            plot_open(&p.depth, o->out,
                      "operation, then per column of operations: longest PRQ, longest UMQ, "
                      "mean PRQ, mean UMQ (after each operation)");
    if (!status)
        status = rank_scan(&t, &r, dflt_spec, 1, NULL, &p);
    if (!status) {
        printf("%s: %zu operations; longest PRQ %llu, UMQ %llu; %zu bins of %llu operations\n",
               r.file, t.n, (unsigned long long)r.max[0], (unsigned long long)r.max[1], p.nx,
               (unsigned long long)p.step);
        status = draw_depth(&p, r.file, t.n);
    }
    plot_close(&p.depth);
    vm_trace_free(&t);
    rank_free(&r);
    return status;
}

int cmd_inspected(const opts_t *o)
{
    vm_trace_t t;
    rank_t r;
    size_t ns;
    const char *const *specs = engines(o, &ns);
    rank_pics_t p = {.bins = o->bins ? (uint64_t)o->bins : LINE_BINS, .tbins = 1, .nspecs = ns};
    int status = load_one(o, &t, &r);
    if (!status)
        status = plot_open(&p.inspected, o->out,
                           "operation, then per column of operations the entries inspected "
                           "per search by the single list and each engine, then the searches");
    if (!status)
        status = rank_scan(&t, &r, specs, ns, NULL, &p);
    if (!status) {
        double d = r.searches ? (double)r.searches : 1;
        printf("%s: %zu operations, %llu searches; inspected per search: single list %.2f, "
               "%s %.2f; %zu bins of %llu operations\n",
               r.file, t.n, (unsigned long long)r.searches, (double)r.list / d,
               *specs[0] ? specs[0] : "default engine", (double)r.eng / d, p.nx,
               (unsigned long long)p.step);
        status = draw_inspected(&p, r.file, specs);
    }
    plot_close(&p.inspected);
    vm_trace_free(&t);
    rank_free(&r);
    return status;
}

/* ---- timeline: of a trace file, or of a generated workload ---- */

int cmd_timeline(const opts_t *o)
{
    const char *arg = o->args[0];
    char err[512], name[600];
    vm_trace_t t;
    rank_t r;
    rank_pics_t p = {.bins = 1, .tbins = o->bins ? (uint64_t)o->bins : GRID_BINS};
    FILE *f = fopen(arg, "rb");
    int status = 0;
    if (f) { /* a file: a trace (what else it may be, the reader says) */
        fclose(f);
        status = rank_load(arg, 0, &t, &r);
    } else {
        snprintf(name, sizeof name, "\"%s\"", arg);
        r = (rank_t){.file = name, .max_at = {-1, -1}};
        vm_trace_init(&t);
        if (vm_wl_generate(arg, &t, NULL, 0, err, sizeof err))
            status = fail(EXIT_ERROR, "%s: neither a file nor a workload (%s)", arg, err);
    }
    if (!status)
        status = plot_open(&p.timeline, o->out, "x y insertions (empty cells left out)");
    if (!status)
        status = rank_scan(&t, &r, dflt_spec, 1, NULL, &p);
    if (!status)
        printf("%s: %zu operations; insertions PRQ %llu, UMQ %llu (%llu ANY_SOURCE receives, "
               "not drawn); %zu bins of %llu operations\n",
               arg, t.n, (unsigned long long)p.ins[0], (unsigned long long)p.ins[1],
               (unsigned long long)p.wild, p.tnx, (unsigned long long)p.tstep);
    if (!status && p.ins[0] + p.ins[1] == p.wild)
        status = fail(EXIT_ERROR, "%s: no insertions to draw", r.file);
    if (!status)
        status = draw_timeline(&p, r.file, t.n);
    plot_close(&p.timeline);
    vm_trace_free(&t);
    rank_free(&r);
    return status;
}

/* ---- matrix ---- */

static int by_label(const void *a, const void *b)
{
    const mrow_t *x = a, *y = b;
    return (x->label > y->label) - (x->label < y->label);
}

int matrix_draw(const opts_t *o, mrow_t *rows, size_t n, const char *png, const char *what)
{
    int64_t nsrc = 0, nrank = 0;
    uint64_t all = 0;
    qsort(rows, n, sizeof *rows, by_label);
    for (size_t i = 0; i < n; i++) {
        nrank = rows[i].label + 1 > nrank ? rows[i].label + 1 : nrank;
        for (size_t j = 0; j < rows[i].src.cap; j++)
            if (rows[i].src.slot[j].src + 1 > nsrc)
                nsrc = rows[i].src.slot[j].src + 1;
    }
    uint64_t xs =
        (uint64_t)nsrc > MATRIX_COLS ? ((uint64_t)nsrc + MATRIX_COLS - 1) / MATRIX_COLS : 1;
    uint64_t ys =
        (uint64_t)nrank > MATRIX_ROWS ? ((uint64_t)nrank + MATRIX_ROWS - 1) / MATRIX_ROWS : 1;
    size_t nx = (size_t)(((uint64_t)nsrc + xs - 1) / xs);
    uint64_t *col = calloc(nx ? nx : 1, sizeof *col);
    plot_t pl = {0};
    int status =
        col ? plot_open(&pl, png,
                        o->count == COUNT_ARRIVED ? "source receiving-rank messages-arrived"
                                                  : "source receiving-rank messages-unexpected")
            : fail(EXIT_ERROR, "out of memory");
    /* Rows in label order: sum the ranks of one row bin, write it, go on. */
    for (size_t i = 0; !status && i < n; i++) {
        for (size_t j = 0; j < rows[i].src.cap; j++) {
            const src_count_t *c = &rows[i].src.slot[j];
            uint64_t v = o->count == COUNT_ARRIVED ? c->arrived : c->unexpected;
            if (c->src >= 0 && v) {
                col[(uint64_t)c->src / xs] += v;
                all += v;
            }
        }
        uint64_t y = (uint64_t)rows[i].label / ys;
        if (i + 1 < n && (uint64_t)rows[i + 1].label / ys == y)
            continue;
        for (size_t x = 0; x < nx; x++)
            if (col[x])
                fprintf(pl.f, "%llu %llu %llu\n", (unsigned long long)(x * xs),
                        (unsigned long long)(y * ys), (unsigned long long)col[x]);
        memset(col, 0, nx * sizeof *col);
    }
    free(col);
    const char *count = o->count == COUNT_ARRIVED ? "messages" : "unexpected messages";
    if (!status && !all)
        status = fail(EXIT_ERROR, "%s: no %s to draw", what, count);
    if (!status)
        printf("matrix: %zu rank(s), sources 0 to %lld, %llu %s; %zu x %llu cells\n", n,
               (long long)nsrc - 1, (unsigned long long)all, count, nx,
               (unsigned long long)((uint64_t)(nrank + (int64_t)ys - 1) / ys));
    char title[512], tics[MAX_RANK_TICS * 48 + 16] = "";
    snprintf(title, sizeof title, "%s by (source, receiving rank): %s", count, what);
    if (n <= MAX_RANK_TICS && ys == 1) { /* a tic on each rank's row, and only there */
        char *tp = tics + sprintf(tics, "set ytics (");
        for (size_t i = 0; i < n; i++)
            tp += sprintf(tp, "%s'%lld' %lld", i ? ", " : "", (long long)rows[i].label,
                          (long long)rows[i].label);
        strcpy(tp, ")");
    }
    if (!status)
        status = plot_grid(&pl, title, "source rank", xs, nx, "receiving rank", ys,
                           (size_t)(((uint64_t)nrank + ys - 1) / ys), tics, count);
    plot_close(&pl);
    return status;
}

int cmd_matrix(const opts_t *o)
{
    mrow_t *rows = calloc((size_t)o->nargs, sizeof *rows);
    int status = rows ? 0 : fail(EXIT_ERROR, "out of memory");
    for (int a = 0; a < o->nargs && !status; a++) {
        vm_trace_t t;
        rank_t r;
        status = rank_load(o->args[a], (size_t)a, &t, &r);
        if (!status)
            status = rank_scan(&t, &r, dflt_spec, 1, NULL, NULL);
        rows[a].label = r.label;
        rows[a].src = r.src; /* the row keeps the counts */
        vm_trace_free(&t);
    }
    char what[64];
    snprintf(what, sizeof what, "%d trace(s)", o->nargs);
    if (!status)
        status = matrix_draw(o, rows, (size_t)o->nargs, o->out, what);
    for (int a = 0; rows && a < o->nargs; a++)
        srcmap_free(&rows[a].src);
    free(rows);
    return status;
}

/* ---- all: the summary and every picture of a recorded run into one folder ---- */

/* What all is at: the folder, its summary, and how the pictures went. */
typedef struct run {
    const opts_t *o;
    const char *dir;
    FILE *summary;
    int nognuplot; /* a picture found gnuplot missing: the rest are not drawn */
} run_t;

/** Account a picture's exit status: 0 when all may go on. */
static int picture(run_t *run, int rc)
{
    if (rc == EXIT_NO_GNUPLOT && !run->nognuplot) {
        run->nognuplot = 1;
        plot_skip_gnuplot();
    }
    return rc == EXIT_NO_GNUPLOT ? 0 : rc;
}

/** The folder's name for the files of rank r: "DIR/rLABEL", "DIR/rLABEL-POS" when another
 * trace took the label. */
static void rank_prefix(const run_t *run, const mrow_t *rows, const rank_t *r, char *buf,
                        size_t len)
{
    int taken = 0;
    for (size_t i = 0; i < r->pos; i++)
        taken |= rows[i].label == r->label;
    if (taken)
        snprintf(buf, len, "%s/r%lld-%zu", run->dir, (long long)r->label, r->pos);
    else
        snprintf(buf, len, "%s/r%lld", run->dir, (long long)r->label);
}

/** One trace: its summary, its profile (PREFIX.prof), its pictures. */
static int all_rank(run_t *run, mrow_t *rows, rank_t *tot, size_t a)
{
    const opts_t *o = run->o;
    char pre[4096], png[4][4200], prof_path[4200];
    static const char *const kinds[] = {"depth", "inspected", "timeline", "heatmap"};
    vm_trace_t t;
    rank_t r;
    vm_profile_t prof = {0};
    size_t ns;
    const char *const *specs = engines(o, &ns);
    rank_pics_t p = {.bins = o->bins ? (uint64_t)o->bins : LINE_BINS,
                     .tbins = o->bins ? (uint64_t)o->bins : GRID_BINS,
                     .nspecs = ns};
    int status = rank_load(o->args[a], a, &t, &r);
    rows[a].label = r.label;
    if (!status) {
        rank_prefix(run, rows, &r, pre, sizeof pre);
        for (int k = 0; k < 4; k++)
            snprintf(png[k], sizeof png[k], "%s-%s.png", pre, kinds[k]);
        snprintf(prof_path, sizeof prof_path, "%s.prof", pre);
    }
    if (!status && t.n)
        status = plot_open(&p.depth, png[0],
                           "operation, longest PRQ, longest UMQ, mean PRQ, "
                           "mean UMQ (per column of operations)");
    if (!status && t.n)
        status = plot_open(&p.inspected, png[1],
                           "operation, then entries inspected per search by the single list "
                           "and each engine, then the searches (per column of operations)");
    if (!status && t.n)
        status = plot_open(&p.timeline, png[2], "x y insertions (empty cells left out)");
    if (!status)
        status = rank_scan(&t, &r, specs, ns, prof_path, &p);
    if (!status && vm_profile_load(prof_path, &prof) < 0)
        status = fail(EXIT_ERROR, "%s", vmatch_last_error());
    if (!status) {
        if (a)
            fprintf(run->summary, "\n");
        status = summary_rank(run->summary, o, &r, &prof);
    }
    if (!status && t.n)
        status = picture(run, draw_depth(&p, r.file, t.n));
    if (!status && t.n)
        status = picture(run, draw_inspected(&p, r.file, specs));
    if (!status && p.ins[0] + p.ins[1] > p.wild)
        status = picture(run, draw_timeline(&p, r.file, t.n));
    if (!status && prof.n) {
        opts_t h = *o;
        h.out = png[3];
        h.side = SIDE_BOTH;
        status = picture(run, draw_heatmap(&h, r.file, &prof));
    }
    plot_close(&p.depth), plot_close(&p.inspected), plot_close(&p.timeline);
    if (!status && rank_add(tot, &r) < 0)
        status = fail(EXIT_ERROR, "out of memory");
    rows[a].src = r.src; /* the matrix's row keeps the counts */
    vm_profile_free(&prof);
    vm_trace_free(&t);
    return status;
}

int cmd_all(const opts_t *o)
{
    run_t run = {.o = o, .dir = o->out};
    char path[4200];
    struct stat sb;
    if (mkdir(run.dir, 0777) < 0 && errno != EEXIST)
        return fail(EXIT_ERROR, "cannot make %s: %s", run.dir, strerror(errno));
    if (stat(run.dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
        return fail(EXIT_ERROR, "%s is not a folder", run.dir);
    snprintf(path, sizeof path, "%s/summary.txt", run.dir);
    if (!(run.summary = fopen(path, "w")))
        return fail(EXIT_ERROR, "cannot write %s", path);
    mrow_t *rows = calloc((size_t)o->nargs, sizeof *rows);
    rank_t tot = {.file = "all", .max_at = {-1, -1}};
    int status = rows ? 0 : fail(EXIT_ERROR, "out of memory");
    for (int a = 0; a < o->nargs && !status; a++)
        status = all_rank(&run, rows, &tot, (size_t)a);
    if (!status && o->nargs > 1) {
        fprintf(run.summary, "\n");
        status = summary_totals(run.summary, o, &tot, (size_t)o->nargs);
    }
    if ((ferror(run.summary) | (fclose(run.summary) != 0)) && !status)
        status = fail(EXIT_ERROR, "cannot write %s", path);
    if (!status)
        printf("wrote %s\n", path);
    char what[64];
    snprintf(what, sizeof what, "%d trace(s)", o->nargs);
    snprintf(path, sizeof path, "%s/matrix.png", run.dir);
    if (!status && tot.kind[VM_TRACE_ARRIVE])
        status = picture(&run, matrix_draw(o, rows, (size_t)o->nargs, path, what));
    for (int a = 0; rows && a < o->nargs; a++)
        srcmap_free(&rows[a].src);
    free(rows);
    rank_free(&tot);
    return status ? status : run.nognuplot ? EXIT_NO_GNUPLOT : 0;
}
