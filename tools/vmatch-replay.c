/* vmatch-replay -- replay a matching trace against one or more vmatch engines, side by side.
 *
 *   vmatch-replay TRACE [--spec SPEC]... [--reps N]
 *   vmatch-replay --gen "WORKLOAD" [--write FILE] [--spec SPEC]... [--reps N]
 *   vmatch-replay --list
 *
 * TRACE is a file in the trace format of docs/workloads.md ("-" reads standard input); --gen
 * makes the trace with a workload generator instead ("gather P=1024 m=4 order=reverse"), and
 * --write saves it.  Each --spec is an engine (vmatch_create spec; none given: the library
 * default).  Every engine replays the whole trace --reps times (default 3, each on a new
 * engine, repetitions of the engines interleaved; CPU time of the replaying thread) and once
 * more, untimed, to sample memory at the peak.  The table shows per engine: ns per operation
 * (median and spread), entries inspected per search, the longest queues, queues allocated and
 * bytes held at the peak, and whether it matched exactly as the first engine did.  A progress
 * line goes to standard error when it is a terminal and the trace is long.
 *
 * Exit status: 0 when all engines agree, 1 on bad usage, an unreadable trace or an engine
 * that cannot be made, 2 when engines disagree.
 */
#include "gen.h"
#include "replay.h"
#include "trace.h"
#include "vmatch.h"
#include "vmatch_unified.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SPECS  16
#define MAX_REPS   1000
#define CHUNK      65536  /* operations between progress updates */
#define LONG_TRACE 200000 /* traces at least this long show progress */

typedef struct engine {
    const char *spec; /* as given */
    char full[512];   /* with nprocs in front */
    char described[1024];
    double ns[MAX_REPS]; /* ns per operation of each repetition */
    vm_wl_measure_t m;
    int agrees;
    size_t first_diff;
} engine_t;

static int g_progress; /* show progress on stderr */

static void usage(FILE *f)
{
    fputs("usage: vmatch-replay TRACE [--spec SPEC]... [--reps N]\n"
          "       vmatch-replay --gen WORKLOAD [--write FILE] [--spec SPEC]... [--reps N]\n"
          "       vmatch-replay --list\n"
          "Replays a matching trace (docs/workloads.md, \"Traces\") against vmatch engines\n"
          "and compares them.\n",
          f);
}

/** Print the generators and their parameters. */
static void list_generators(void)
{
    size_t n;
    const vm_wl_gen_info_t *g = vm_wl_generators(&n);
    for (size_t i = 0; i < n; i++)
        printf("%-18s %s\n%-18s   %s\n", g[i].name, g[i].models, "", g[i].params);
}

/** Replay the whole prepared trace on b, in chunks, with progress; returns ns per op or a
 * negative value with err set. */
static double timed_run(const vm_wl_prep_t *p, const vm_wl_backend_t *b, uint32_t *out,
                        const char *label, char *err, size_t errlen)
{
    size_t n = p->t->n;
    uint64_t ns = 0;
    for (size_t from = 0; from < n; from += CHUNK) {
        size_t to = n - from > CHUNK ? from + CHUNK : n;
        uint64_t t0 = vm_wl_cpu_ns();
        int rc = vm_wl_run(p, b, from, to, out, err, errlen);
        ns += vm_wl_cpu_ns() - t0;
        if (rc)
            return -1;
        if (g_progress)
            fprintf(stderr, "\r%s: %3.0f%%", label, 100.0 * (double)to / (double)n);
    }
    return n ? (double)ns / (double)n : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/** The q-quantile of v[0..n) (sorted copy, linear interpolation). */
static double quantile(const double *v, int n, double q)
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double pos = q * (n - 1);
    int i = (int)pos;
    return i + 1 < n ? s[i] + (pos - i) * (s[i + 1] - s[i]) : s[i];
}

/** Engine s's queues per collective class of trace t after its replay (policy=unified;
 * other policies keep none per class and print nothing): the profile and the levels. */
static void print_classes(vmatch_engine_t *e, int s, const vm_trace_t *t)
{
    vmatch_class_stats_t cs;
    if (vmatch_class_stats(e, 0, &cs) != VMATCH_OK)
        return;
    printf("engine #%d: queues per class (PRQ | UMQ): point-to-point %llu | %llu queues; level "
           "queues %u | %u of %u; %llu | %llu entries left in the profiling queue\n",
           s + 1, (unsigned long long)cs.p2p_queues[0], (unsigned long long)cs.p2p_queues[1],
           cs.coll_queues[0], cs.coll_queues[1], cs.coll_cap[0],
           (unsigned long long)cs.profiling[0], (unsigned long long)cs.profiling[1]);
    for (size_t i = 1; i < t->nclasses; i++) {
        const vm_trace_class_t *c = &t->classes[i];
        uint32_t id = vmatch_coll_class(e, c->op, c->bytes, c->comm_size);
        if (vmatch_class_stats(e, id, &cs) != VMATCH_OK)
            continue;
        printf("  class %u (op %u, %llu bytes, %u ranks):", id, c->op,
               (unsigned long long)c->bytes, c->comm_size);
        for (int side = 0; side < 2; side++) {
            printf(" %s", side ? "| UMQ" : "PRQ");
            if (!cs.profiled[side]) {
                printf(" not profiled");
                continue;
            }
            printf(" %.1f inspected per search, wants %u; levels", cs.traversal[side],
                   cs.wanted[side]);
            for (uint32_t l = 0; l < cs.levels[side] && l < VMATCH_MAX_LEVELS; l++)
                printf(" %u", cs.level_queues[side][l]);
            if (!cs.levels[side])
                printf(" none");
        }
        printf("\n");
    }
}

/** Engine s's own figures after its replay (vmatch_stat): those of the keys below its policy
 * keeps, on one line; nothing for a policy that keeps none of them. */
static void print_figures(const vmatch_engine_t *e, int s)
{
    static const char *const keys[] = {"pnp.partners",   "pnp.levels", "hash.table_buckets",
                                       "hash.overflows", "hash.flat",  "unified.levels"};
    int shown = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        uint64_t v;
        if (vmatch_stat(e, keys[i], &v) != VMATCH_OK)
            continue;
        if (shown++)
            printf(",");
        else
            printf("engine #%d after its replay:", s + 1);
        printf(" %s %llu", keys[i], (unsigned long long)v);
    }
    if (shown)
        printf("\n");
}

/** Make an engine, or print why not. */
static vmatch_engine_t *make_engine(const engine_t *en)
{
    vmatch_engine_t *e = NULL;
    int rc = vmatch_create(en->full, &e);
    if (rc < 0) {
        fprintf(stderr, "vmatch-replay: --spec \"%s\": %s (%s)\n", en->spec,
                vmatch_strerror(rc), vmatch_last_error());
        return NULL;
    }
    return e;
}

/* Whether option a takes a value (the next argument). */
static int is_valued(const char *a)
{
    return !strcmp(a, "--spec") || !strcmp(a, "--reps") || !strcmp(a, "--gen") ||
           !strcmp(a, "--write");
}

int main(int argc, char **argv)
{
    const char *trace_path = NULL, *gen = NULL, *write_path = NULL;
    engine_t *engines = calloc(MAX_SPECS, sizeof *engines);
    int nspec = 0, reps = 3;
    if (!engines)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--list")) {
            list_generators();
            return 0;
        } else if (is_valued(a) && i + 1 >= argc) {
            fprintf(stderr, "vmatch-replay: %s needs a value (vmatch-replay --help)\n", a);
            return 1;
        } else if (!strcmp(a, "--spec")) {
            if (nspec == MAX_SPECS) {
                fprintf(stderr, "vmatch-replay: at most %d --spec\n", MAX_SPECS);
                return 1;
            }
            engines[nspec++].spec = argv[++i];
        } else if (!strcmp(a, "--reps")) {
            const char *v = argv[++i];
            char *end;
            long r = strtol(v, &end, 10);
            if (!*v || *end || v[strspn(v, "0123456789")] || r < 1 || r > MAX_REPS) {
                fprintf(stderr, "vmatch-replay: --reps '%s': a whole number from 1 to %d\n", v,
                        MAX_REPS);
                return 1;
            }
            reps = (int)r;
        } else if (!strcmp(a, "--gen") || !strcmp(a, "--write")) {
            const char *v = argv[++i];
            if (!*v) {
                fprintf(stderr, "vmatch-replay: %s needs a value, not an empty one\n", a);
                return 1;
            }
            *(a[2] == 'g' ? &gen : &write_path) = v;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "vmatch-replay: unknown option %s (vmatch-replay --help)\n", a);
            return 1;
        } else if (!trace_path) {
            trace_path = a;
        } else {
            fprintf(stderr, "vmatch-replay: one trace at a time (%s and %s)\n", trace_path, a);
            return 1;
        }
    }
    if (!trace_path == !gen) {
        fprintf(stderr, "vmatch-replay: %s\n",
                gen ? "a TRACE or --gen, not both" : "no trace given (a TRACE or --gen TEXT)");
        usage(stderr);
        return 1;
    }
    if (nspec == 0)
        engines[nspec++].spec = "";

    vm_trace_t t;
    char err[512], desc[512] = "";
    vm_trace_init(&t);
    int rc = gen ? vm_wl_generate(gen, &t, desc, sizeof desc, err, sizeof err)
                 : vm_trace_load(&t, trace_path, err, sizeof err);
    if (rc) {
        fprintf(stderr, "vmatch-replay: %s\n", err);
        return 1;
    }
    if (write_path && vm_trace_save(&t, write_path, desc, err, sizeof err)) {
        fprintf(stderr, "vmatch-replay: %s\n", err);
        return 1;
    }
    g_progress = isatty(STDERR_FILENO) && t.n >= LONG_TRACE;

    size_t kinds[VM_TRACE_NKINDS] = {0};
    for (size_t i = 0; i < t.n; i++)
        kinds[t.ops[i].kind]++;
    printf("trace: %s\n", gen ? desc : trace_path);
    printf("  %zu operations: %zu post, %zu arrive, %zu probe, %zu improbe, %zu cancel, %zu "
           "remove; nprocs %u, %zu collective class(es)\n",
           t.n, kinds[VM_TRACE_POST], kinds[VM_TRACE_ARRIVE], kinds[VM_TRACE_PROBE],
           kinds[VM_TRACE_IMPROBE], kinds[VM_TRACE_CANCEL], kinds[VM_TRACE_REMOVE], t.nprocs,
           t.nclasses - 1);

    /* Prepare every engine and make its untimed, measured pass; the first one's outcomes
     * are the yardstick for the others. */
    vm_wl_prep_t *preps = calloc((size_t)nspec, sizeof *preps);
    uint32_t *first = malloc((t.n ? t.n : 1) * sizeof *first);
    uint32_t *out = malloc((t.n ? t.n : 1) * sizeof *out);
    if (!preps || !first || !out) {
        fprintf(stderr, "vmatch-replay: out of memory\n");
        return 1;
    }
    int status = 0;
    for (int s = 0; s < nspec; s++) {
        engine_t *en = &engines[s];
        vm_wl_engine_spec(&t, en->spec, en->full, sizeof en->full);
        vmatch_engine_t *e = make_engine(en);
        if (!e)
            return 1;
        snprintf(en->described, sizeof en->described, "%s", vmatch_describe(e));
        vm_wl_backend_t b;
        vm_wl_vmatch_backend(e, &b);
        if ((rc = vm_wl_prepare(&preps[s], &t, &b, err, sizeof err)) ||
            (rc =
                 vm_wl_run_measured(&preps[s], &b, s ? out : first, &en->m, err, sizeof err))) {
            fprintf(stderr, "vmatch-replay: engine %d (%s): %s\n", s + 1, en->spec, err);
            return 1;
        }
        print_figures(e, s);
        print_classes(e, s, &t);
        vmatch_destroy(e);
        en->first_diff = s ? vm_wl_first_difference(first, out, t.n) : t.n;
        en->agrees = en->first_diff == t.n;
        if (!en->agrees)
            status = 2;
    }
    /* Timed repetitions, the engines interleaved. */
    for (int r = 0; r < reps; r++)
        for (int s = 0; s < nspec; s++) {
            engine_t *en = &engines[s];
            vmatch_engine_t *e = make_engine(en);
            vm_wl_backend_t b;
            char label[64];
            if (!e)
                return 1;
            vm_wl_vmatch_backend(e, &b);
            snprintf(label, sizeof label, "engine %d/%d, repetition %d/%d", s + 1, nspec, r + 1,
                     reps);
            if (vm_wl_rebind(&preps[s], &b, err, sizeof err) ||
                (en->ns[r] = timed_run(&preps[s], &b, out, label, err, sizeof err)) < 0) {
                fprintf(stderr, "%svmatch-replay: engine %d: %s\n", g_progress ? "\n" : "",
                        s + 1, err);
                return 1;
            }
            vmatch_destroy(e);
        }
    if (g_progress)
        fprintf(stderr, "\r%60s\r", "");

    const vm_wl_measure_t *m0 = &engines[0].m;
    printf("  queues: longest PRQ %llu, UMQ %llu, %llu entries at the peak; mean length "
           "searched %.1f; %llu left at the end\n\n",
           (unsigned long long)m0->max_prq, (unsigned long long)m0->max_umq,
           (unsigned long long)m0->max_pending, m0->mean_search_len,
           (unsigned long long)(m0->end_prq + m0->end_umq));
    printf("engines:\n");
    for (int s = 0; s < nspec; s++)
        printf("  #%d  %s\n", s + 1, engines[s].described);
    printf("\n%-26s", "");
    for (int s = 0; s < nspec; s++) {
        char h[16];
        snprintf(h, sizeof h, "#%d", s + 1);
        printf(" %12s", h);
    }
    printf("\n");
    /* One row: a label, then fmt applied to expr for each engine `en`. */
#define ROW(label, fmt, expr)                                                                  \
    do {                                                                                       \
        printf("%-26s", label);                                                                \
        for (int s = 0; s < nspec; s++) {                                                      \
            const engine_t *en = &engines[s];                                                  \
            printf(fmt, expr);                                                                 \
        }                                                                                      \
        printf("\n");                                                                          \
    } while (0)
    ROW("ns per operation", " %12.1f", quantile(en->ns, reps, 0.5));
    ROW("  spread (IQR / median)", " %11.0f%%",
        100 * (quantile(en->ns, reps, 0.75) - quantile(en->ns, reps, 0.25)) /
            quantile(en->ns, reps, 0.5));
    ROW("  vs #1 (> 1: faster)", " %12.2f",
        quantile(engines[0].ns, reps, 0.5) / quantile(en->ns, reps, 0.5));
    ROW("inspected per search", " %12.1f",
        en->m.searches ? (double)en->m.inspected / (double)en->m.searches : 0.0);
    ROW("longest PRQ", " %12llu", (unsigned long long)en->m.max_prq);
    ROW("longest UMQ", " %12llu", (unsigned long long)en->m.max_umq);
    ROW("queues at the peak", " %12llu", (unsigned long long)en->m.queues_peak);
    ROW("bytes at the peak", " %12llu", (unsigned long long)en->m.bytes_peak);
    ROW("bytes per queued entry", " %12.1f",
        en->m.max_pending
            ? (double)(en->m.bytes_peak - en->m.bytes_empty) / (double)en->m.max_pending
            : 0.0);
    ROW("matches as #1", " %12s", en->agrees ? "yes" : "NO");
    for (int s = 0; s < nspec; s++)
        if (!engines[s].agrees)
            printf("engine #%d first differs from #1 at operation %zu (%s)\n", s + 1,
                   engines[s].first_diff,
                   vm_trace_kind_name((vm_trace_kind_t)t.ops[engines[s].first_diff].kind));
    for (int s = 0; s < nspec; s++)
        vm_wl_prep_free(&preps[s]);
    free(preps);
    free(first);
    free(out);
    free(engines);
    vm_trace_free(&t);
    return status;
}
