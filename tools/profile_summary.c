/* profile_summary.c -- vmatch-profile summary: what each rank's trace did (operations,
 * wildcards, queue depths, entries inspected by a single list and by the default engine, the
 * sources it heard from) and what the static designs would build from it: pnp-static's
 * partners and policy=cluster's clusters, from the profile its replay records. */
#define _XOPEN_SOURCE 700 /* mkstemp, P_tmpdir */
#include "clusters.h"
#include "partners.h"
#include "profile_tool.h"
#include "vmatch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The keys' defaults: what pnp-static and cluster build from a profile when the spec says
 * no more (README, "Spec keys"). */
#define PNP_CAP     1   /* pnp.cap: at most floor(1 x sqrt(nprocs)) partners per side */
#define PNP_ALPHA   1.5 /* pnp.alpha (the fence metric only) */
#define CLUSTER_CAP 2   /* cluster.cap */

static double share(uint64_t part, uint64_t all)
{
    return all ? 100.0 * (double)part / (double)all : 0.0;
}

/** The lines every summary has: operations, wildcards, depths, inspected, sources. */
static int figures(FILE *f, const opts_t *o, const rank_t *r)
{
    static const char *const what[] = {"receives", "probes"};
    fprintf(f, "  operations %llu:", (unsigned long long)r->ops);
    for (int k = 0; k < VM_TRACE_NKINDS; k++)
        fprintf(f, "%s %s %llu", k ? "," : "", vm_trace_kind_name((vm_trace_kind_t)k),
                (unsigned long long)r->kind[k]);
    fprintf(f, "\n");
    for (int s = 0; s < 2; s++) {
        const uint64_t *w = r->wild[s];
        uint64_t all = w[0] + w[1] + w[2] + w[3];
        fprintf(f, "  %s %llu: ANY_SOURCE %llu, ANY_TAG %llu, both %llu (wildcards %.1f%%)\n",
                what[s], (unsigned long long)all, (unsigned long long)w[1],
                (unsigned long long)w[2], (unsigned long long)w[3], share(all - w[0], all));
    }
    uint64_t arrived = r->kind[VM_TRACE_ARRIVE];
    fprintf(f, "  arrivals %llu: %llu unexpected (%.1f%%)\n", (unsigned long long)arrived,
            (unsigned long long)r->unexpected, share(r->unexpected, arrived));
    for (int s = 0; s < 2; s++) {
        fprintf(f, "  %s depth: longest %llu", side_names[s], (unsigned long long)r->max[s]);
        if (r->max_at[s] >= 0)
            fprintf(f, " (rank %lld)", (long long)r->max_at[s]);
        fprintf(f, ", mean %.2f\n", r->ops ? r->sum[s] / (double)r->ops : 0.0);
    }
    double d = r->searches ? (double)r->searches : 1;
    fprintf(f,
            "  inspected per search (%llu searches): single list %.2f (%llu entries), default "
            "engine %.2f (%llu entries)\n",
            (unsigned long long)r->searches, (double)r->list / d, (unsigned long long)r->list,
            (double)r->eng / d, (unsigned long long)r->eng);
    src_count_t *v = srcmap_sorted(&r->src, 0);
    if (r->src.used && !v)
        return fail(EXIT_ERROR, "out of memory");
    fprintf(f, "  sources: %zu distinct%s\n", r->src.used, r->src.used ? "; the busiest:" : "");
    if (r->src.used)
        fprintf(f, "  %10s %10s %7s %10s\n", "source", "messages", "share", "unexpected");
    for (size_t i = 0; i < r->src.used && i < (size_t)o->top; i++)
        fprintf(f, "  %10lld %10llu %6.1f%% %10llu\n", (long long)v[i].src,
                (unsigned long long)v[i].arrived, share(v[i].arrived, arrived),
                (unsigned long long)v[i].unexpected);
    free(v);
    return 0;
}

/** pnp-static's partners and cluster's clusters from prof, with the keys' defaults. */
static int designs(FILE *f, const vm_profile_t *prof)
{
    uint32_t nprocs = prof->nprocs;
    for (size_t i = 0; !prof->nprocs && i < prof->n; i++)
        nprocs = prof->entries[i].src >= nprocs ? prof->entries[i].src + 1 : nprocs;
    if (!prof->nprocs)
        fprintf(f, "  nprocs unknown: %u, the largest source + 1, for the static designs\n",
                nprocs);
    size_t cap = (size_t)floor(PNP_CAP * sqrt((double)nprocs));
    unsigned char *mark = malloc(prof->n ? prof->n : 1);
    if (!mark)
        return fail(EXIT_ERROR, "out of memory");
    for (int s = 0; s < 2; s++) {
        double edge;
        long k = choose_partners(prof, nprocs, s, VM_PNP_AVERAGE, PNP_ALPHA, cap, mark, &edge);
        if (k < 0) {
            free(mark);
            return fail(EXIT_ERROR, "out of memory");
        }
        fprintf(f, "  partners of pnp-static (average, cap %zu): %s %ld: ", cap, side_names[s],
                k);
        print_keys(f, prof, mark);
    }
    free(mark);
    cl_opts_t co = {
        .algo = VM_CLUSTER_HEURISTIC, .k = 16, .cap = CLUSTER_CAP, .nprocs = nprocs};
    cl_side_t side[2] = {{0}};
    int status = 0;
    for (int s = 0; s < 2 && !status; s++)
        if (cl_side_make(&co, prof, s, &side[s]) < 0)
            status = fail(EXIT_ERROR, "out of memory");
    if (!status)
        fprintf(f,
                "  clusters of policy=cluster (heuristic, cap %u): PRQ %u for %zu sources, UMQ "
                "%u for %zu sources\n",
                co.cap, side[0].ncl, side[0].n, side[1].ncl, side[1].n);
    cl_side_free(&side[0]);
    cl_side_free(&side[1]);
    return status;
}

int summary_rank(FILE *f, const opts_t *o, const rank_t *r, const vm_profile_t *prof)
{
    fprintf(f, "rank %lld (%s%s)\n", (long long)r->label, r->file,
            r->labelled ? "" : "; no rank line: its place among the traces");
    if (r->nprocs)
        fprintf(f, "  nprocs %u\n", r->nprocs);
    if (r->layout[0] + r->layout[1] + r->layout[2])
        fprintf(f, "  layout: ctx %u, src %u, tag %u bits\n", r->layout[0], r->layout[1],
                r->layout[2]);
    if (r->cut)
        fprintf(f,
                "  cut: the recording stopped at trace.cap; %llu more operations were not "
                "recorded, and the figures below leave them out\n",
                (unsigned long long)r->cut);
    int status = figures(f, o, r);
    if (!status && prof)
        status = designs(f, prof);
    return status;
}

int summary_totals(FILE *f, const opts_t *o, const rank_t *tot, size_t n)
{
    fprintf(f, "all %zu ranks\n", n);
    if (tot->cut)
        fprintf(f, "  cut: %llu operations were not recorded (trace.cap of %zu trace(s))\n",
                (unsigned long long)tot->cut, tot->ncut);
    return figures(f, o, tot);
}

int temp_profile(char *path, size_t len)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = P_tmpdir;
    if (snprintf(path, len, "%s/vmatch-profile.XXXXXX", dir) >= (int)len)
        return fail(EXIT_ERROR, "TMPDIR is too long");
    int fd = mkstemp(path);
    if (fd < 0)
        return fail(EXIT_ERROR, "cannot make a temporary file in %s", dir);
    close(fd);
    return 0;
}

int cmd_summary(const opts_t *o)
{
    static const char *const dflt[] = {""};
    rank_t tot = {.file = "all", .max_at = {-1, -1}};
    int status = 0;
    for (int a = 0; a < o->nargs && !status; a++) {
        vm_trace_t t;
        rank_t r;
        vm_profile_t prof;
        char path[4096];
        status = rank_load(o->args[a], (size_t)a, &t, &r);
        if (!status && !(status = temp_profile(path, sizeof path))) {
            status = rank_scan(&t, &r, dflt, 1, path, NULL);
            if (!status && vm_profile_load(path, &prof) < 0)
                status = fail(EXIT_ERROR, "%s", vmatch_last_error());
            unlink(path);
            if (!status) {
                if (a)
                    printf("\n");
                status = summary_rank(stdout, o, &r, &prof);
                vm_profile_free(&prof);
            }
        }
        if (!status && rank_add(&tot, &r) < 0)
            status = fail(EXIT_ERROR, "out of memory");
        vm_trace_free(&t);
        rank_free(&r);
    }
    if (!status && o->nargs > 1) {
        printf("\n");
        status = summary_totals(stdout, o, &tot, (size_t)o->nargs);
    }
    rank_free(&tot);
    return status;
}
