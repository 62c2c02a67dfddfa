/* vmatch-profile -- look at a profile written by vmatch_profile_save (docs/workloads.md,
 * "Profile files"), draw it, or record one from a generated workload without an MPI run. `show`
 * prints, for each partner metric of policy=pnp (src/pnp/partners.c), the edge point and the
 * partners it would choose; a queue's population is nprocs times the contexts that have an
 * insertion on it, absent keys counting zero.  The plots are drawn by gnuplot from OUT.dat
 * and OUT.gp, which are kept next to OUT.png so that a plot can be redrawn by hand.
 */
#define _POSIX_C_SOURCE 200809L
#include "gen.h"
#include "plot.h"
#include "pnp.h"
#include "profile.h"
#include "replay.h"
#include "trace.h"
#include "vmatch.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SIDE_PRQ, SIDE_UMQ, SIDE_BOTH };

#define MAX_NPROCS   1073741824.0 /* 2^30, the largest nprocs a spec or profile takes */
#define HEAT_COLS    1024         /* heat map: at most this many source columns */
#define TIMELINE_Y   512          /* timeline: at most this many source rows */
#define MAX_BINS     4096         /* timeline: at most this many time columns */
#define MAX_CTX_TICS 32           /* heat map: name the context of each row up to this many */

static const char *const side_names[] = {"PRQ", "UMQ", "PRQ + UMQ"};

static const char usage_text[] =
    "usage: vmatch-profile show FILE [--top N] [--nprocs N] [--alpha A] [--cap C]\n"
    "       vmatch-profile heatmap FILE -o OUT.png [--side prq|umq|both]\n"
    "       vmatch-profile record WORKLOAD -o FILE [--spec ENGINE_SPEC]\n"
    "       vmatch-profile timeline WORKLOAD -o OUT.png [--bins B]\n"
    "show: totals, the busiest sources and the partners each PNP metric (average, median,\n"
    "fence) would choose, for a profile written by vmatch_profile_save.  heatmap / timeline:\n"
    "queue insertions by (source, context) / by (operation, source), drawn by gnuplot from\n"
    "OUT.dat and OUT.gp.  record: replay a generated workload (\"gather P=64 m=8\") with\n"
    "profile.record=on and save the profile.\n"
    "  --top N      sources listed per queue (default 10)\n"
    "  --nprocs N   process count, for a profile that has none (nprocs 0)\n"
    "  --alpha A    fence = Q3 + A * (Q3 - Q1) (default 1.5)\n"
    "  --cap C      at most floor(C * sqrt(nprocs)) partners per queue (default: no cap)\n"
    "  --side S     draw prq, umq or both (their sum; the default)\n"
    "  --spec S     engine spec to record with (profile.record=on is added)\n"
    "  --bins B     time columns (default 100, at most 4096)\n"
    "exit status: 0 done, 1 error, 2 nprocs unknown, 3 gnuplot not found\n";

typedef struct opts {
    const char *cmd, *arg, *out, *spec;
    int side;
    double top, nprocs, bins, alpha, cap; /* nprocs 0: not given; cap < 0: none */
} opts_t;

/** Print "vmatch-profile: MESSAGE" on stderr; returns code. */
static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("vmatch-profile: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

/** Parse s as a number in [lo, hi] (a whole one when whole); 0, or -1 when it is not. */
static int parse_num(const char *s, double lo, double hi, int whole, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end == s || *end || !(*v >= lo && *v <= hi) || (whole && *v != floor(*v)) ? -1 : 0;
}

static uint64_t side_count(const vm_profile_entry_t *e, int side)
{
    return side == SIDE_PRQ ? e->prq : side == SIDE_UMQ ? e->umq : e->prq + e->umq;
}

/* ---- show ---- */

/** Print the keys of p with mark[i] set, as "ctx 0: src 1-5,9; ctx 1: src 3". */
static void print_keys(const vm_profile_t *p, const unsigned char *mark)
{
    const vm_profile_entry_t *e = p->entries;
    size_t last = 0, shown = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (!mark[i])
            continue;
        if (shown == 0 || e[last].ctx != e[i].ctx)
            printf("%sctx %u: src ", shown ? "; " : "", e[i].ctx);
        else
            printf(",");
        size_t j = i;
        while (j + 1 < p->n && mark[j + 1] && e[j + 1].ctx == e[i].ctx &&
               e[j + 1].src == e[j].src + 1)
            j++;
        printf(j > i ? "%u-%u" : "%u", e[i].src, e[j].src);
        shown += j - i + 1;
        last = i = j;
    }
    printf("%s\n", shown ? "" : "none");
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
static int show(const vm_profile_t *p, uint64_t nprocs, const opts_t *o)
{
    size_t n = p->n ? p->n : 1, ctxs = 0, nctx[2] = {0};
    uint64_t total[2] = {0};
    uint32_t last_ctx[2] = {0};
    ranked_t *rank = malloc(n * sizeof *rank);
    uint64_t *counts = malloc(2 * n * sizeof *counts), *scratch = counts + n;
    size_t *idx = malloc(2 * n * sizeof *idx), *chosen = idx + n;
    unsigned char *mark = malloc(n);
    if (!rank || !counts || !idx || !mark) {
        free(rank), free(counts), free(idx), free(mark);
        return fail(EXIT_ERROR, "out of memory");
    }
    /* Entries are sorted by context: count each context once per queue it has insertions on. */
    for (size_t i = 0; i < p->n; i++) {
        uint32_t ctx = p->entries[i].ctx;
        ctxs += i == 0 || ctx != p->entries[i - 1].ctx;
        for (int s = 0; s < 2; s++) {
            uint64_t c = side_count(&p->entries[i], s);
            if (c && (!nctx[s] || last_ctx[s] != ctx)) {
                nctx[s]++;
                last_ctx[s] = ctx;
            }
            total[s] += c;
        }
    }
    printf("profile %s\nlayout: ctx %u, src %u, tag %u bits\nnprocs: %llu%s\n", o->arg,
           p->ctx_bits, p->src_bits, p->tag_bits, (unsigned long long)nprocs,
           p->nprocs ? "" : " (from --nprocs)");
    printf("keys: %zu (context, source) in %zu context(s)\ninsertions: PRQ %llu, UMQ %llu\n",
           p->n, ctxs, (unsigned long long)total[0], (unsigned long long)total[1]);
    size_t cap = o->cap < 0 ? (size_t)-1 : (size_t)floor(o->cap * sqrt((double)nprocs));
    for (int s = 0; s < 2; s++) {
        size_t m = 0;
        for (size_t i = 0; i < p->n; i++)
            if ((counts[m] = side_count(&p->entries[i], s)) != 0) {
                rank[m] = (ranked_t){counts[m], i};
                idx[m++] = i;
            }
        qsort(rank, m, sizeof *rank, by_count_desc);
        printf("\n%s: top sources\n%8s %10s %12s %8s\n", side_names[s], "ctx", "src", "count",
               "share");
        for (size_t j = 0; j < m && j < (size_t)o->top; j++)
            printf("%8u %10u %12llu %7.1f%%\n", p->entries[rank[j].i].ctx,
                   p->entries[rank[j].i].src, (unsigned long long)rank[j].count,
                   100.0 * (double)rank[j].count / (double)total[s]);
        uint64_t pop = nprocs * nctx[s];
        printf("%s: partners (count > edge) in a population of %llu = nprocs %llu x %zu "
               "context(s), alpha %g, ",
               side_names[s], (unsigned long long)pop, (unsigned long long)nprocs, nctx[s],
               o->alpha);
        printf(o->cap < 0 ? "no cap\n" : "cap %zu\n", cap);
        for (int metric = VM_PNP_AVERAGE; metric <= VM_PNP_FENCE; metric++) {
            double edge;
            size_t k =
                vm_pnp_choose(counts, m, pop, metric, o->alpha, cap, scratch, chosen, &edge);
            memset(mark, 0, n);
            for (size_t j = 0; j < k; j++)
                mark[idx[chosen[j]]] = 1;
            printf("%s %-7s edge %.3f, partners %zu: ", side_names[s],
                   vm_pnp_metric_name(metric), edge, k);
            print_keys(p, mark);
        }
    }
    free(rank), free(counts), free(idx), free(mark);
    return 0;
}

static int cmd_show(const opts_t *o)
{
    vm_profile_t p;
    if (vm_profile_load(o->arg, &p) < 0)
        return fail(EXIT_ERROR, "%s", vmatch_last_error());
    uint64_t nprocs = p.nprocs ? p.nprocs : (uint64_t)o->nprocs;
    int status = 0;
    if (p.nprocs && o->nprocs && o->nprocs != p.nprocs)
        fail(0, "note: the profile has nprocs %u; --nprocs %.0f is not used", p.nprocs,
             o->nprocs);
    if (!nprocs)
        status = fail(EXIT_NPROCS, "%s has nprocs 0 (unknown); give --nprocs N", o->arg);
    for (size_t i = 0; !status && i < p.n; i++)
        if (p.entries[i].src >= nprocs)
            status = fail(EXIT_ERROR, "%s: source %u is not below --nprocs %llu", o->arg,
                          p.entries[i].src, (unsigned long long)nprocs);
    if (!status)
        status = show(&p, nprocs, o);
    vm_profile_free(&p);
    return status;
}

/* ---- plots: a grid of nx x ny cells, each xstep x ystep units; OUT.dat holds the cells that
 * are not empty as "x y count" (x and y where the cell starts) ---- */

typedef struct plot {
    const char *png;
    char dat[4096], gp[4096];
    FILE *f; /* the .dat, while it is written */
} plot_t;

/** Name OUT.dat and OUT.gp after png (its ".png" dropped) and open the .dat. */
static int plot_open(plot_t *pl, const char *png)
{
    int len = (int)strlen(png);
    pl->png = png;
    if (strpbrk(png, "'\"\\\n") || len + 5 > (int)sizeof pl->dat)
        return fail(EXIT_ERROR, "-o %s: too long, or has quotes, backslashes or newlines", png);
    if (len > 4 && strcmp(png + len - 4, ".png") == 0)
        len -= 4;
    snprintf(pl->dat, sizeof pl->dat, "%.*s.dat", len, png);
    snprintf(pl->gp, sizeof pl->gp, "%.*s.gp", len, png);
    if (!(pl->f = fopen(pl->dat, "w")))
        return fail(EXIT_ERROR, "cannot write %s", pl->dat);
    fprintf(pl->f, "# x y insertions (empty cells left out)\n");
    return 0;
}

/** Close the .dat, write the .gp (axes named xname, yname; ytics a gnuplot command or "")
 * and run gnuplot on it.  Returns the exit status. */
static int plot_draw(plot_t *pl, const char *title, const char *xname, uint64_t xstep,
                     size_t nx, const char *yname, uint64_t ystep, size_t ny, const char *ytics)
{
    int bad = ferror(pl->f) | (fclose(pl->f) != 0);
    pl->f = NULL;
    FILE *g = bad ? NULL : fopen(pl->gp, "w");
    if (!g)
        return fail(EXIT_ERROR, "cannot write %s", bad ? pl->dat : pl->gp);
    char t[256], xl[64], yl[64];
    size_t i = 0;
    for (; title[i] && i + 1 < sizeof t; i++) /* quotes would end the gnuplot string */
        t[i] = strchr("'\"\\\n", title[i]) ? ' ' : title[i];
    t[i] = '\0';
    snprintf(xl, sizeof xl, xstep > 1 ? "%s (bins of %llu)" : "%s", xname,
             (unsigned long long)xstep);
    snprintf(yl, sizeof yl, ystep > 1 ? "%s (bins of %llu)" : "%s", yname,
             (unsigned long long)ystep);
    double xs = (double)xstep, ys = (double)ystep;
    fprintf(g,
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "    set terminal pngcairo size 1000,640\n} else {\n"
            "    set terminal png size 1000,640\n}\n"
            "set output '%s'\nset title '%s' noenhanced\n"
            "set xlabel '%s'\nset ylabel '%s'\nset cblabel 'insertions'\n%s\n"
            "set style fill solid 1.0 noborder\nset cbrange [0:*]\n"
            "set palette defined (0 '#fff5eb', 1 '#fd8d3c', 2 '#a63603', 3 '#3f0000')\n"
            "set xrange [-0.5:%g]\nset yrange [-0.5:%g]\n"
            "plot '%s' using ($1+%g):($2+%g):(%g):(%g):3 with boxxyerror lc palette notitle\n",
            pl->png, t, xl, yl, ytics, (double)nx * xs - 0.5, (double)ny * ys - 0.5, pl->dat,
            (xs - 1) / 2, (ys - 1) / 2, xs / 2, ys / 2);
    if (ferror(g) | (fclose(g) != 0))
        return fail(EXIT_ERROR, "cannot write %s", pl->gp);
    return plot_run("vmatch-profile", pl->gp, pl->dat, pl->png);
}

static int cmd_heatmap(const opts_t *o)
{
    vm_profile_t p;
    if (vm_profile_load(o->arg, &p) < 0)
        return fail(EXIT_ERROR, "%s", vmatch_last_error());
    /* Rows: the contexts with insertions on the side drawn; columns: sources, binned. */
    uint64_t nsrc = p.nprocs;
    for (size_t i = 0; i < p.n; i++)
        nsrc = p.entries[i].src >= nsrc ? (uint64_t)p.entries[i].src + 1 : nsrc;
    uint64_t w = nsrc > HEAT_COLS ? (nsrc + HEAT_COLS - 1) / HEAT_COLS : 1;
    size_t rows = 0;
    char tics[MAX_CTX_TICS * 24 + 16] = "set ytics (", *tp = tics + strlen(tics);
    plot_t pl = {0};
    int status = plot_open(&pl, o->out);
    for (size_t i = 0; !status && i < p.n;) {
        uint32_t ctx = p.entries[i].ctx;
        int used = 0;
        while (i < p.n && p.entries[i].ctx == ctx) {
            uint64_t col = p.entries[i].src / w, sum = 0;
            for (; i < p.n && p.entries[i].ctx == ctx && p.entries[i].src / w == col; i++)
                sum += side_count(&p.entries[i], o->side);
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
             o->arg);
    if (!status && rows == 0)
        status = fail(EXIT_ERROR, "%s: no %s insertions to draw", o->arg, side_names[o->side]);
    if (!status)
        status = plot_draw(&pl, title, "source", w, (size_t)((nsrc + w - 1) / w),
                           rows > MAX_CTX_TICS ? "context (row)" : "context", 1, rows,
                           rows > MAX_CTX_TICS ? "" : tics);
    if (pl.f)
        fclose(pl.f);
    vm_profile_free(&p);
    return status;
}

/* ---- record and timeline: a generated workload, replayed ---- */

/** Generate o->arg into t and replay it on an engine made from spec (nprocs added); *out
 * gets every operation's outcome.  Returns the engine, or NULL after printing why. */
static vmatch_engine_t *replay(const opts_t *o, const char *spec, vm_trace_t *t, uint32_t **out)
{
    char err[512], full[1024];
    vmatch_engine_t *e = NULL;
    vm_wl_prep_t prep = {0};
    vm_wl_backend_t b;
    int rc;
    *out = NULL;
    if (vm_wl_generate(o->arg, t, NULL, 0, err, sizeof err)) {
        fail(EXIT_ERROR, "workload \"%s\": %s", o->arg, err);
        return NULL;
    }
    vm_wl_engine_spec(t, spec, full, sizeof full);
    if ((rc = vmatch_create(full, &e)) < 0) {
        fail(EXIT_ERROR, "spec \"%s\": %s (%s)", spec, vmatch_strerror(rc),
             vmatch_last_error());
        return NULL;
    }
    vm_wl_vmatch_backend(e, &b);
    *out = malloc((t->n ? t->n : 1) * sizeof **out);
    if (!*out || vm_wl_prepare(&prep, t, &b, err, sizeof err) ||
        vm_wl_run(&prep, &b, 0, t->n, *out, err, sizeof err)) {
        fail(EXIT_ERROR, "replay of \"%s\": %s", o->arg, *out ? err : "out of memory");
        vmatch_destroy(e);
        free(*out);
        *out = NULL;
        e = NULL;
    }
    vm_wl_prep_free(&prep);
    return e;
}

static int cmd_record(const opts_t *o)
{
    char spec[1024];
    if (snprintf(spec, sizeof spec, "%s profile.record=on", o->spec ? o->spec : "") >=
        (int)sizeof spec)
        return fail(EXIT_ERROR, "--spec is too long");
    vm_trace_t t;
    uint32_t *out;
    vm_trace_init(&t);
    vmatch_engine_t *e = replay(o, spec, &t, &out);
    int status = e ? 0 : EXIT_ERROR;
    if (e && vmatch_profile_save(e, o->out) < 0)
        status = fail(EXIT_ERROR, "%s", vmatch_last_error());
    if (!status)
        printf("recorded %s: %zu operations; wrote %s\n", o->arg, t.n, o->out);
    vmatch_destroy(e);
    free(out);
    vm_trace_free(&t);
    return status;
}

static int cmd_timeline(const opts_t *o)
{
    vm_trace_t t;
    uint32_t *out;
    vm_trace_init(&t);
    vmatch_engine_t *e = replay(o, "", &t, &out);
    vmatch_destroy(e);
    uint64_t nsrc = t.nprocs, ins[2] = {0}, wild = 0, bins = (uint64_t)o->bins;
    for (size_t i = 0; i < t.n; i++)
        if (t.ops[i].src >= 0 && (uint64_t)t.ops[i].src >= nsrc)
            nsrc = (uint64_t)t.ops[i].src + 1;
    uint64_t ystep = nsrc > TIMELINE_Y ? (nsrc + TIMELINE_Y - 1) / TIMELINE_Y : 1;
    uint64_t xstep = t.n > bins ? (t.n + bins - 1) / bins : 1;
    size_t ny = (size_t)((nsrc + ystep - 1) / ystep), nx = (size_t)((t.n + xstep - 1) / xstep);
    uint64_t *col = e ? calloc(ny ? ny : 1, sizeof *col) : NULL;
    plot_t pl = {0};
    int status = !e ? EXIT_ERROR : col ? plot_open(&pl, o->out) : fail(EXIT_ERROR, "no memory");
    /* An arrive that queues is a UMQ insertion, a post that queues a PRQ one.  Operations are
     * in time order: count one column of sources, write it, go on. */
    for (size_t i = 0; !status && i < t.n; i++) {
        const vm_trace_op_t *op = &t.ops[i];
        if ((op->kind == VM_TRACE_POST || op->kind == VM_TRACE_ARRIVE) &&
            out[i] == VM_WL_NONE) {
            ins[op->kind == VM_TRACE_ARRIVE]++;
            if (op->src < 0)
                wild++;
            else
                col[(uint64_t)op->src / ystep]++;
        }
        for (size_t y = 0; y < ny && ((i + 1) % xstep == 0 || i + 1 == t.n); y++)
            if (col[y]) {
                fprintf(pl.f, "%llu %llu %llu\n", (unsigned long long)(i / xstep * xstep),
                        (unsigned long long)(y * ystep), (unsigned long long)col[y]);
                col[y] = 0;
            }
    }
    if (!status)
        printf("%s: %zu operations; insertions PRQ %llu, UMQ %llu (%llu ANY_SOURCE receives, "
               "not drawn); %zu bins of %llu operations\n",
               o->arg, t.n, (unsigned long long)ins[0], (unsigned long long)ins[1],
               (unsigned long long)wild, nx, (unsigned long long)xstep);
    if (!status && ins[0] + ins[1] == wild)
        status = fail(EXIT_ERROR, "\"%s\": no insertions to draw", o->arg);
    char title[256];
    snprintf(title, sizeof title, "queue insertions over time: %s", o->arg);
    if (!status)
        status = plot_draw(&pl, title, "operation", xstep, nx, "source", ystep, ny, "");
    if (pl.f)
        fclose(pl.f);
    free(col);
    free(out);
    vm_trace_free(&t);
    return status;
}

/* ---- arguments ---- */

int main(int argc, char **argv)
{
    static const struct {
        const char *name, *options; /* the options it takes, each between blanks */
        int (*run)(const opts_t *);
    } cmds[] = {{"show", " --top --nprocs --alpha --cap ", cmd_show},
                {"heatmap", " -o --side ", cmd_heatmap},
                {"record", " -o --spec ", cmd_record},
                {"timeline", " -o --bins ", cmd_timeline}};
    opts_t o = {.side = SIDE_BOTH, .top = 10, .bins = 100, .alpha = 1.5, .cap = -1};
    size_t c = 0, ncmds = sizeof cmds / sizeof cmds[0];
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage_text, stdout);
            return 0;
        }
    while (argc > 1 && c < ncmds && strcmp(argv[1], cmds[c].name))
        c++;
    if (argc < 2 || c == ncmds)
        return fail(EXIT_ERROR,
                    "%s%s: the commands are show, heatmap, record and timeline "
                    "(see --help)",
                    argc < 2 ? "no command" : "unknown command ", argc < 2 ? "" : argv[1]);
    o.cmd = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char key[16];
        int bad = 0;
        if (a[0] != '-' || !a[1]) {
            if (o.arg)
                return fail(EXIT_ERROR, "%s: one argument, not '%s' and '%s'", o.cmd, o.arg, a);
            o.arg = a;
            continue;
        }
        snprintf(key, sizeof key, " %.13s ", a);
        if (strlen(a) > 13 || !strstr(cmds[c].options, key))
            return fail(EXIT_ERROR, "%s does not take %s (see --help)", o.cmd, a);
        if (!v)
            return fail(EXIT_ERROR, "%s needs a value", a);
        i++;
        if (!strcmp(a, "--top"))
            bad = parse_num(v, 0, 1e6, 1, &o.top);
        else if (!strcmp(a, "--nprocs"))
            bad = parse_num(v, 1, MAX_NPROCS, 1, &o.nprocs);
        else if (!strcmp(a, "--bins"))
            bad = parse_num(v, 1, MAX_BINS, 1, &o.bins);
        else if (!strcmp(a, "--alpha"))
            bad = parse_num(v, 0, 1e9, 0, &o.alpha);
        else if (!strcmp(a, "--cap"))
            bad = parse_num(v, 1e-9, 1e9, 0, &o.cap);
        else if (!strcmp(a, "--side"))
            bad = (o.side = !strcmp(v, "prq")    ? SIDE_PRQ
                            : !strcmp(v, "umq")  ? SIDE_UMQ
                            : !strcmp(v, "both") ? SIDE_BOTH
                                                 : -1) < 0;
        else if (!strcmp(a, "-o"))
            o.out = v;
        else
            o.spec = v;
        if (bad)
            return fail(EXIT_ERROR, "bad value for %s: '%s'", a, v);
    }
    if (!o.arg)
        return fail(EXIT_ERROR, "%s needs a %s (see --help)", o.cmd,
                    c < 2 ? "profile FILE" : "WORKLOAD spec");
    if (strstr(cmds[c].options, " -o ") && !o.out)
        return fail(EXIT_ERROR, "%s needs -o FILE", o.cmd);
    return cmds[c].run(&o);
}
