/* vmatch-profile -- what a run did, from the traces and profiles it recorded: summary (per
 * rank: operations, wildcards, queue depths, entries inspected, sources, and what pnp-static
 * and cluster would build), pictures of traces (depth, inspected, matrix, timeline, heatmap,
 * or all of them into one folder), and the profile commands (show the partners each metric of
 * policy=pnp would choose, heatmap, record one from a generated workload without an MPI run).
 * The pictures are drawn by gnuplot from OUT.dat and OUT.gp, kept next to OUT.png so that a
 * picture can be redrawn by hand.  The commands live in profile_*.c (profile_tool.h).
 */
#include "profile_tool.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: vmatch-profile summary TRACE... [--top N]\n"
    "       vmatch-profile all TRACE... -o DIR [--spec S]... [--bins B] [--top N]\n"
    "       vmatch-profile depth TRACE -o OUT.png [--bins B]\n"
    "       vmatch-profile inspected TRACE -o OUT.png [--spec S]... [--bins B]\n"
    "       vmatch-profile matrix TRACE... -o OUT.png [--count arrived|unexpected]\n"
    "       vmatch-profile timeline TRACE|WORKLOAD -o OUT.png [--bins B]\n"
    "       vmatch-profile heatmap PROFILE|TRACE -o OUT.png [--side prq|umq|both]\n"
    "       vmatch-profile show PROFILE [--top N] [--nprocs N] [--alpha A] [--cap C]\n"
    "       vmatch-profile record WORKLOAD -o PROFILE [--spec ENGINE_SPEC]\n"
    "A TRACE is a file of one rank's matching traffic (trace.out=PATH of a run, or\n"
    "vmatch-replay --write); a PROFILE one written by vmatch_profile_save (profile.out=PATH);\n"
    "a WORKLOAD a generated one (\"gather P=64 m=8\", vmatch-replay --list).\n"
    "summary: per rank (and in all) the operations, the receives and probes with ANY_SOURCE\n"
    "and ANY_TAG, the longest and mean queues, the entries inspected per search by a single\n"
    "list (policy=single storage=ll) and the default engine, the busiest sources, and the\n"
    "partners pnp-static and the clusters policy=cluster would make from the rank's traffic.\n"
    "all: summary.txt, each rank's depth, inspected, timeline and heatmap pictures and its\n"
    "replayed profile (rLABEL-*.png, rLABEL.prof), and matrix.png, into DIR.\n"
    "depth: the PRQ and UMQ over the run.  inspected: entries inspected per search over the\n"
    "run, by the single list and each engine.  matrix: messages by source and receiving rank\n"
    "(the trace's rank line, else its place).  timeline / heatmap: queue insertions by\n"
    "(operation, source) / by (source, context).  show: totals, the busiest sources and the\n"
    "partners each PNP metric (average, median, fence) would choose.  record: replay a\n"
    "generated workload with profile.record=on and save the profile.\n"
    "  --top N      sources listed (default 10)\n"
    "  --nprocs N   process count, for a profile that has none (nprocs 0)\n"
    "  --alpha A    fence = Q3 + A * (Q3 - Q1) (default 1.5)\n"
    "  --cap C      at most floor(C * sqrt(nprocs)) partners per queue (default: no cap)\n"
    "  --side S     draw prq, umq or both (their sum; the default)\n"
    "  --spec S     an engine to replay on (inspected, all: up to 7; default: the default\n"
    "               engine); record: the engine to record with (profile.record=on is added)\n"
    "  --bins B     time columns (at most 4096; default 1000 for lines, 100 for timelines)\n"
    "  --count C    matrix colour: messages arrived (the default) or unexpected (queued)\n"
    "exit status: 0 done, 1 error, 2 nprocs unknown, 3 gnuplot not found\n";

int fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("vmatch-profile: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

/** Parse all of s as a plain decimal number (no hex, inf or nan; digits only when whole) in
 * [lo, hi]; 0, or -1 when it is not. */
static int parse_num(const char *s, double lo, double hi, int whole, double *v)
{
    char *end;
    if (s[strspn(s, whole ? "0123456789" : "0123456789.eE+-")])
        return -1;
    *v = strtod(s, &end);
    return end == s || *end || !(*v >= lo && *v <= hi) || (whole && *v != floor(*v)) ? -1 : 0;
}

/* The commands: the options each takes (between blanks), whether it takes several operands,
 * and what its operand is. */
static const struct cmd {
    const char *name, *options;
    int many;
    const char *operand;
    int (*run)(const opts_t *);
} cmds[] = {
    {"summary", " --top ", 1, "TRACE", cmd_summary},
    {"all", " -o --spec --bins --top ", 1, "TRACE", cmd_all},
    {"depth", " -o --bins ", 0, "TRACE", cmd_depth},
    {"inspected", " -o --spec --bins ", 0, "TRACE", cmd_inspected},
    {"matrix", " -o --count ", 1, "TRACE", cmd_matrix},
    {"timeline", " -o --bins ", 0, "TRACE or WORKLOAD spec", cmd_timeline},
    {"heatmap", " -o --side ", 0, "PROFILE or TRACE", cmd_heatmap},
    {"show", " --top --nprocs --alpha --cap ", 0, "PROFILE", cmd_show},
    {"record", " -o --spec ", 0, "WORKLOAD spec", cmd_record},
};
enum { NCMDS = sizeof cmds / sizeof cmds[0] };

/** Take option a with value v into o: 0, or the exit status of a bad one. */
static int option(opts_t *o, const char *a, const char *v)
{
    int bad = 0;
    if (!strcmp(a, "--top"))
        bad = parse_num(v, 0, 1e6, 1, &o->top);
    else if (!strcmp(a, "--nprocs"))
        bad = parse_num(v, 1, MAX_NPROCS, 1, &o->nprocs);
    else if (!strcmp(a, "--bins"))
        bad = parse_num(v, 1, MAX_BINS, 1, &o->bins);
    else if (!strcmp(a, "--alpha"))
        bad = parse_num(v, 0, 1e9, 0, &o->alpha);
    else if (!strcmp(a, "--cap"))
        bad = parse_num(v, 1e-9, 1e9, 0, &o->cap);
    else if (!strcmp(a, "--side"))
        bad = (o->side = !strcmp(v, "prq")    ? SIDE_PRQ
                         : !strcmp(v, "umq")  ? SIDE_UMQ
                         : !strcmp(v, "both") ? SIDE_BOTH
                                              : -1) < 0;
    else if (!strcmp(a, "--count"))
        bad = (o->count = !strcmp(v, "arrived")      ? COUNT_ARRIVED
                          : !strcmp(v, "unexpected") ? COUNT_UNEXPECTED
                                                     : -1) < 0;
    else if (!strcmp(a, "-o"))
        o->out = v;
    else if (o->nspecs == MAX_SPECS)
        return fail(EXIT_ERROR, "at most %d --spec", MAX_SPECS);
    else
        o->specs[o->nspecs++] = v;
    return bad ? fail(EXIT_ERROR, "bad value for %s: '%s'", a, v) : 0;
}

int main(int argc, char **argv)
{
    opts_t o = {.side = SIDE_BOTH, .top = 10, .alpha = 1.5, .cap = -1};
    size_t c = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage_text, stdout);
            return 0;
        }
    while (argc > 1 && c < NCMDS && strcmp(argv[1], cmds[c].name))
        c++;
    if (argc < 2 || c == NCMDS)
        return fail(EXIT_ERROR,
                    "%s%s: the commands are summary, all, depth, inspected, matrix, timeline, "
                    "heatmap, show and record (see --help)",
                    argc < 2 ? "no command" : "unknown command ", argc < 2 ? "" : argv[1]);
    o.cmd = argv[1];
    if (!(o.args = malloc((size_t)argc * sizeof *o.args)))
        return fail(EXIT_ERROR, "out of memory");
    int status = 0;
    for (int i = 2; i < argc && !status; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char key[16];
        if (a[0] != '-' || !a[1]) {
            if (o.nargs && !cmds[c].many)
                status = fail(EXIT_ERROR, "%s: one argument, not '%s' and '%s'", o.cmd,
                              o.args[0], a);
            o.args[o.nargs++] = a;
            continue;
        }
        snprintf(key, sizeof key, " %.13s ", a);
        if (strlen(a) > 13 || !strstr(cmds[c].options, key))
            status = fail(EXIT_ERROR, "%s does not take %s (see --help)", o.cmd, a);
        else if (!v)
            status = fail(EXIT_ERROR, "%s needs a value", a);
        else
            status = option(&o, a, v);
        i++;
    }
    if (!status && !o.nargs)
        status = fail(EXIT_ERROR, "%s needs a %s (see --help)", o.cmd, cmds[c].operand);
    if (!status && strstr(cmds[c].options, " -o ") && !o.out)
        status =
            fail(EXIT_ERROR, "%s needs -o %s", o.cmd, strcmp(o.cmd, "all") ? "FILE" : "DIR");
    if (!status)
        status = cmds[c].run(&o);
    free(o.args);
    return status;
}
