/* clusters.h -- the clusters policy=cluster makes from a profile, one side at a time
 * (src/cluster): what vmatch-cluster prints and draws and vmatch-profile's summary reports,
 * computed once here. */
#ifndef VM_TOOLS_CLUSTERS_H
#define VM_TOOLS_CLUSTERS_H

#include "cluster.h"
#include "profile.h"

#include <stddef.h>
#include <stdint.h>

/* The cluster.* keys a clustering is made with, and the job size. */
typedef struct cl_opts {
    int algo;     /* enum vm_cluster_algo */
    uint32_t k;   /* kmeans: clusters asked for */
    uint32_t cap; /* heuristic: cluster.cap */
    uint32_t nprocs;
} cl_opts_t;

/* One side's clustering. */
typedef struct cl_side {
    const char *name;      /* "PRQ", "UMQ" */
    size_t n;              /* profiled sources with insertions on this side */
    uint32_t *idx;         /* per source: its index into the profile's entries */
    uint64_t *counts;      /* per source: its insertions */
    uint32_t *cl;          /* per source: its cluster */
    uint32_t ncl, nctx;    /* clusters; contexts with insertions */
    uint64_t pop;          /* nprocs x nctx: the population, absent sources counting zero */
    double mean, var;      /* heuristic: E and SD^2 */
    vm_kmeans_info_t info; /* kmeans: what the iterations did */
} cl_side_t;

/* Cluster side which (VM_PRQ or VM_UMQ) of p as the engine would with o's keys.  Returns 0,
 * or VMATCH_ENOMEM with s to be freed all the same. */
int cl_side_make(const cl_opts_t *o, const vm_profile_t *p, int which, cl_side_t *s);
/* Free what cl_side_make allocated; s may be zeroed or half made. */
void cl_side_free(cl_side_t *s);
/* The side's header line: "PRQ: 5 sources with insertions, population 8 (...); heuristic:
 * E = 2, SD = 2, E + SD = 4, cap 0: 4 cluster(s)" (kmeans: its k, iterations and SSE). */
void cl_side_print_head(const cl_opts_t *o, const cl_side_t *s);
/* The table of the side's clusters: per cluster its sources (up to eight named, the rest
 * counted; cluster 0 also holds the ranks the profile lacks), insertions and share. */
void cl_side_print(const vm_profile_t *p, const cl_side_t *s);

#endif
