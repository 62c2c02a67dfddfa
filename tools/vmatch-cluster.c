/* vmatch-cluster -- the clusters policy=cluster would make from a profile (src/cluster), per
 * side: how many, their sources and the traffic each carries, and with --png a picture of
 * every source's count coloured by its cluster, the view a user looks at to decide whether a
 * profile is worth using.  The picture is drawn by gnuplot from FILE.dat and FILE.gp, kept
 * next to FILE.png so that it can be redrawn by hand.
 */
#define _POSIX_C_SOURCE 200809L
#include "clusters.h"
#include "plot.h"
#include "profile.h"
#include "vmatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: vmatch-cluster PROFILE --algo heuristic|kmeans [--k K] [--cap C] [--nprocs N]\n"
    "                      [--png FILE]\n"
    "Prints, for the PRQ and the UMQ, the clusters policy=cluster makes from PROFILE with\n"
    "cluster.algo (and cluster.k, default 16, for kmeans; cluster.cap, default 2, for the\n"
    "heuristic): per cluster its sources (context:rank;\n"
    "the ranks the profile lacks are in cluster 0) and the insertions they carry.  --nprocs\n"
    "gives the job size when the profile has none.  --png draws every profiled source's count\n"
    "coloured by cluster (gnuplot; FILE.dat and FILE.gp are kept).\n"
    "exit status: 0 done, 1 error, 2 nprocs unknown, 3 gnuplot not found\n";

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("vmatch-cluster: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

typedef struct opts {
    const char *profile, *png;
    cl_opts_t cl; /* the cluster.* keys and nprocs */
} opts_t;

/* Draw both sides into png: each profiled source's count against its place in the
 * population (context index x nprocs + rank), coloured by cluster. */
static int draw(const opts_t *o, const vm_profile_t *p, const cl_side_t *sides)
{
    char dat[4096], gp[4096];
    int len = (int)strlen(o->png);
    if (strpbrk(o->png, "'\"\\\n") || len + 5 > (int)sizeof dat)
        return fail(EXIT_ERROR, "--png %s: too long, or has quotes, backslashes or newlines",
                    o->png);
    if (len > 4 && strcmp(o->png + len - 4, ".png") == 0)
        len -= 4;
    snprintf(dat, sizeof dat, "%.*s.dat", len, o->png);
    snprintf(gp, sizeof gp, "%.*s.gp", len, o->png);
    FILE *f = fopen(dat, "w");
    if (!f)
        return fail(EXIT_ERROR, "cannot write %s", dat);
    for (int w = 0; w < 2; w++) {
        const cl_side_t *s = &sides[w];
        fprintf(f, "# %s: place insertions cluster\n", s->name);
        uint32_t ci = 0;
        for (size_t i = 0; i < s->n; i++) {
            const vm_profile_entry_t *e = &p->entries[s->idx[i]];
            if (i && p->entries[s->idx[i - 1]].ctx != e->ctx)
                ci++;
            fprintf(f, "%llu %llu %u\n", (unsigned long long)ci * o->cl.nprocs + e->src,
                    (unsigned long long)s->counts[i], s->cl[i]);
        }
        fprintf(f, "\n\n"); /* a gnuplot data block per side */
    }
    if (ferror(f) | (fclose(f) != 0))
        return fail(EXIT_ERROR, "cannot write %s", dat);
    FILE *g = fopen(gp, "w");
    if (!g)
        return fail(EXIT_ERROR, "cannot write %s", gp);
    const char *algo = vm_cluster_algo_words[o->cl.algo];
    fprintf(g,
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "    set terminal pngcairo size 1000,800\n} else {\n"
            "    set terminal png size 1000,800\n}\n"
            "set output '%s'\nset multiplot layout 2,1\n"
            "set xlabel 'source (context index x nprocs + rank)'\nset ylabel 'insertions'\n"
            "set logscale y\nset cblabel 'cluster mod 8'\nset cbrange [-0.5:7.5]\nset cbtics "
            "1\nset palette maxcolors 8\n"
            "set palette defined (0 '#1b9e77', 1 '#d95f02', 2 '#7570b3', 3 '#e7298a', "
            "4 '#66a61e', 5 '#e6ab02', 6 '#a6761d', 7 '#666666')\n",
            o->png);
    for (int w = 0; w < 2; w++)
        fprintf(g,
                "set title '%s: %s, %u cluster(s) (colour: "
                "cluster mod 8)' noenhanced\n"
                "plot '%s' index %d using 1:2:(int($3) %% 8) with points pt 7 ps 0.6 lc "
                "palette notitle\n",
                sides[w].name, algo, sides[w].ncl, dat, w);
    fprintf(g, "unset multiplot\n");
    if (ferror(g) | (fclose(g) != 0))
        return fail(EXIT_ERROR, "cannot write %s", gp);
    return plot_run("vmatch-cluster", gp, dat, o->png);
}

/* A whole number from lo to hi, or -1. */
static int64_t number(const char *s, uint64_t lo, uint64_t hi)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    return *end || v < lo || v > hi ? -1 : (int64_t)v;
}

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.cl = {.algo = -1, .k = 16, .cap = 2}}; /* the engine's defaults */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t x;
        if (strcmp(a, "--algo") == 0) {
            o->cl.algo = !v                            ? -2
                         : strcmp(v, "heuristic") == 0 ? VM_CLUSTER_HEURISTIC
                         : strcmp(v, "kmeans") == 0    ? VM_CLUSTER_KMEANS
                                                       : -2;
            if (o->cl.algo == -2)
                return fail(EXIT_ERROR, "bad value for --algo: %s (heuristic or kmeans)",
                            v ? v : "none");
            i++;
        } else if (strcmp(a, "--k") == 0) {
            if ((x = number(v, 1, VM_CLUSTER_MAX_K)) < 0)
                return fail(EXIT_ERROR, "bad value for --k: %s (1 to %d)", v ? v : "none",
                            VM_CLUSTER_MAX_K);
            o->cl.k = (uint32_t)x;
            i++;
        } else if (strcmp(a, "--cap") == 0) {
            if ((x = number(v, 0, 1024)) < 0)
                return fail(EXIT_ERROR, "bad value for --cap: %s (0 to 1024)", v ? v : "none");
            o->cl.cap = (uint32_t)x;
            i++;
        } else if (strcmp(a, "--nprocs") == 0) {
            if ((x = number(v, 1, 1u << 30)) < 0)
                return fail(EXIT_ERROR, "bad value for --nprocs: %s", v ? v : "none");
            o->cl.nprocs = (uint32_t)x;
            i++;
        } else if (strcmp(a, "--png") == 0) {
            if (!v)
                return fail(EXIT_ERROR, "--png needs FILE");
            o->png = v;
            i++;
        } else if (a[0] == '-' && a[1]) {
            return fail(EXIT_ERROR, "unknown option %s", a);
        } else if (!o->profile) {
            o->profile = a;
        } else {
            return fail(EXIT_ERROR, "one PROFILE only (%s and %s)", o->profile, a);
        }
    }
    if (!o->profile)
        return fail(EXIT_ERROR, "no PROFILE (--help for usage)");
    if (o->cl.algo < 0)
        return fail(EXIT_ERROR, "--algo heuristic|kmeans is required");
    return 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    vm_profile_t p;
    if (vm_profile_load(o.profile, &p) < 0)
        return fail(EXIT_ERROR, "%s", vmatch_last_error());
    if (o.cl.nprocs && p.nprocs && o.cl.nprocs != p.nprocs)
        rc = fail(EXIT_ERROR, "--nprocs %u differs from the profile's nprocs %u", o.cl.nprocs,
                  p.nprocs);
    else if (!o.cl.nprocs && !p.nprocs)
        rc = fail(EXIT_NPROCS, "%s has no nprocs: give --nprocs N", o.profile);
    if (!o.cl.nprocs)
        o.cl.nprocs = p.nprocs;
    for (size_t i = 0; !rc && i < p.n; i++)
        if (p.entries[i].src >= o.cl.nprocs)
            rc = fail(EXIT_ERROR, "%s: source %u but nprocs is %u", o.profile, p.entries[i].src,
                      o.cl.nprocs);
    cl_side_t sides[2] = {{0}};
    if (!rc)
        printf("profile %s: layout %u/%u/%u, nprocs %u, %zu (context, source) entries\n",
               o.profile, p.ctx_bits, p.src_bits, p.tag_bits, o.cl.nprocs, p.n);
    for (int w = 0; w < 2 && !rc; w++) {
        if (w)
            printf("\n");
        if (cl_side_make(&o.cl, &p, w, &sides[w]) < 0)
            rc = fail(EXIT_ERROR, "out of memory");
        if (!rc) {
            cl_side_print_head(&o.cl, &sides[w]);
            cl_side_print(&p, &sides[w]);
        }
    }
    if (!rc && o.png) {
        printf("\n");
        rc = draw(&o, &p, sides);
    }
    for (int w = 0; w < 2; w++)
        cl_side_free(&sides[w]);
    vm_profile_free(&p);
    return rc;
}
