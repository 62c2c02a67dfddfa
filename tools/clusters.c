/* clusters.c -- the clusters of policy=cluster from a profile (clusters.h). */
#include "clusters.h"

#include "vmatch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { LIST_SOURCES = 8 }; /* sources named per cluster; the rest are counted */

int cl_side_make(const cl_opts_t *o, const vm_profile_t *p, int which, cl_side_t *s)
{
    vm_mem_t mem = {.numa = VM_NUMA_OFF, .fail_after = -1};
    size_t room = p->n ? p->n : 1;
    *s = (cl_side_t){.name = which == VM_PRQ ? "PRQ" : "UMQ"};
    s->idx = malloc(room * sizeof *s->idx);
    s->counts = malloc(room * sizeof *s->counts);
    s->cl = malloc(room * sizeof *s->cl);
    if (!s->idx || !s->counts || !s->cl)
        return VMATCH_ENOMEM;
    s->n = vm_profile_side(p, which, s->idx, s->counts, &s->nctx);
    s->pop = (uint64_t)o->nprocs * s->nctx;
    return o->algo == VM_CLUSTER_KMEANS
               ? vm_cluster_kmeans(&mem, s->counts, s->n, s->pop, o->k, s->cl, &s->ncl,
                                   &s->info)
               : vm_cluster_heuristic_capped(&mem, s->counts, s->n, s->pop, o->cap, s->cl,
                                             &s->ncl, &s->mean, &s->var);
}

void cl_side_free(cl_side_t *s)
{
    free(s->idx);
    free(s->counts);
    free(s->cl);
    s->idx = NULL, s->counts = NULL, s->cl = NULL;
}

void cl_side_print_head(const cl_opts_t *o, const cl_side_t *s)
{
    printf("%s: %zu sources with insertions, population %llu (nprocs %u x %u context(s)); ",
           s->name, s->n, (unsigned long long)s->pop, o->nprocs, s->nctx);
    if (o->algo == VM_CLUSTER_KMEANS)
        printf("kmeans k=%u: %u cluster(s), %u iteration(s)%s, SSE %.6g\n", o->k, s->ncl,
               s->info.iters, s->info.converged ? "" : " (not converged)", s->info.sse);
    else
        printf("heuristic: E = %.6g, SD = %.6g, E + SD = %.6g, cap %u: %u cluster(s)\n",
               s->mean, sqrt(s->var), s->mean + sqrt(s->var), o->cap, s->ncl);
}

void cl_side_print(const vm_profile_t *p, const cl_side_t *s)
{
    uint64_t all = 0;
    for (size_t i = 0; i < s->n; i++)
        all += s->counts[i];
    printf("%8s %8s %12s %7s  %s\n", "cluster", "sources", "insertions", "share",
           "sources (context:rank)");
    for (uint32_t c = 0; c < s->ncl; c++) {
        uint64_t srcs = 0, traffic = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->cl[i] == c) {
                srcs++;
                traffic += s->counts[i];
            }
        uint64_t absent = c == 0 ? s->pop - s->n : 0;
        printf("%8u %8llu %12llu %6.1f%% ", c, (unsigned long long)(srcs + absent),
               (unsigned long long)traffic, all ? 100.0 * (double)traffic / (double)all : 0.0);
        unsigned listed = 0;
        for (size_t i = 0; i < s->n && listed < LIST_SOURCES; i++)
            if (s->cl[i] == c) {
                const vm_profile_entry_t *e = &p->entries[s->idx[i]];
                printf(" %u:%u", e->ctx, e->src);
                listed++;
            }
        if (srcs > listed)
            printf(" and %llu more", (unsigned long long)(srcs - listed));
        if (absent)
            printf("%s%llu not in the profile", srcs ? ", " : " ", (unsigned long long)absent);
        printf("\n");
    }
}
