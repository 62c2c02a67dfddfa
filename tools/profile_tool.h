/* profile_tool.h -- what the files of vmatch-profile share: its options and messages, the
 * commands, the partner choice of show, the plots, and the figures one pass over a trace
 * gathers (per rank: the summary's figures and the pictures' bins). */
#ifndef VM_TOOLS_PROFILE_TOOL_H
#define VM_TOOLS_PROFILE_TOOL_H

#include "plot.h"
#include "profile.h"
#include "trace.h"
#include "trace_scan.h"

#include <stdint.h>
#include <stdio.h>

enum { SIDE_PRQ, SIDE_UMQ, SIDE_BOTH };
enum { COUNT_ARRIVED, COUNT_UNEXPECTED }; /* what matrix colours */

#define MAX_NPROCS 1073741824.0           /* 2^30, the largest nprocs a spec or profile takes */
#define MAX_BINS   4096                   /* time columns at most */
#define MAX_SPECS  (SCAN_MAX_ENGINES - 1) /* --spec given to inspected and all */

extern const char *const side_names[]; /* "PRQ", "UMQ", "PRQ + UMQ" */

typedef struct opts {
    const char *cmd, *out;
    const char **args; /* the operands: FILE, WORKLOAD or TRACE... */
    int nargs;
    const char *specs[MAX_SPECS];
    int nspecs;
    int side, count;
    double top, nprocs, bins, alpha, cap; /* nprocs 0: not given; cap < 0: none */
} opts_t;

/* Print "vmatch-profile: MESSAGE" on stderr; returns code. */
int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The commands: each returns the exit status. */
int cmd_show(const opts_t *o);
int cmd_heatmap(const opts_t *o);
int cmd_record(const opts_t *o);
int cmd_timeline(const opts_t *o);
int cmd_summary(const opts_t *o);
int cmd_depth(const opts_t *o);
int cmd_inspected(const opts_t *o);
int cmd_matrix(const opts_t *o);
int cmd_all(const opts_t *o);

/* ---- show (profile_show.c) ---- */

/* Insertions of entry e on side (SIDE_PRQ, SIDE_UMQ or SIDE_BOTH). */
uint64_t side_count(const vm_profile_entry_t *e, int side);
/* Print the keys of p with mark[i] set to f, as "ctx 0: src 1-5,9; ctx 1: src 3" ("none"). */
void print_keys(FILE *f, const vm_profile_t *p, const unsigned char *mark);
/* The partners pnp-static chooses on side (SIDE_PRQ or SIDE_UMQ) of p with metric, alpha and
 * at most cap of them, over nprocs x the contexts with insertions on that side: sets mark[i]
 * (p->n bytes) of each, returns how many (or -1: out of memory), the edge in *edge. */
long choose_partners(const vm_profile_t *p, uint64_t nprocs, int side, int metric, double alpha,
                     size_t cap, unsigned char *mark, double *edge);
/* Draw profile p (read from name) as the heat map of (source, context) into o->out. */
int draw_heatmap(const opts_t *o, const char *name, const vm_profile_t *p);
/* Is path a trace (its first bytes "vmatch-trace")?  0 when it cannot be read. */
int is_trace(const char *path);

/* ---- plots (profile_plot.c): OUT.dat and OUT.gp next to OUT.png ---- */

typedef struct plot {
    const char *png;
    char dat[4096], gp[4096];
    FILE *f; /* the .dat, while it is written */
} plot_t;

/* Name OUT.dat and OUT.gp after png (its ".png" dropped), open the .dat and write header (a
 * comment line).  0, or EXIT_ERROR after saying why. */
int plot_open(plot_t *pl, const char *png, const char *header);
/* Close the .dat (if open) without drawing. */
void plot_close(plot_t *pl);
/* A heat map: the .dat holds "x y count" for the cells that are not empty, on a grid of nx
 * x ny cells each xstep x ystep units; axes xname and yname, colour cname, ytics a gnuplot
 * command or "".  Closes the .dat, writes the .gp and runs gnuplot: the exit status. */
int plot_grid(plot_t *pl, const char *title, const char *xname, uint64_t xstep, size_t nx,
              const char *yname, uint64_t ystep, size_t ny, const char *ytics,
              const char *cname);
/* Lines: the .dat holds a row per bin, x then ncols columns, drawn as lines titled names[]
 * (dashed from names[dashed] on; ncols for none), x axis xname in bins of xstep. */
int plot_lines(plot_t *pl, const char *title, const char *xname, uint64_t xstep,
               const char *yname, const char *const *names, size_t ncols, size_t dashed);
/* From now on write the .gp but do not run gnuplot: plot_grid and plot_lines return
 * EXIT_NO_GNUPLOT silently (all, once gnuplot was found missing). */
void plot_skip_gnuplot(void);

/* ---- one pass over a trace (profile_rank.c) ---- */

/* Messages from one source: that arrived, that were queued (unexpected). */
typedef struct src_count {
    int64_t src; /* -1: an empty slot */
    uint64_t arrived, unexpected;
} src_count_t;

typedef struct srcmap { /* open addressing by source */
    src_count_t *slot;
    size_t cap, used;
} srcmap_t;

/* Add to source src's counts.  0, or -1 out of memory. */
int srcmap_add(srcmap_t *m, int64_t src, uint64_t arrived, uint64_t unexpected);
void srcmap_free(srcmap_t *m);
/* The used slots, sorted by arrived (unexpected when by_unexpected) descending, then source
 * ascending: a new array of m->used (NULL when out of memory or empty). */
src_count_t *srcmap_sorted(const srcmap_t *m, int by_unexpected);

/* One rank's figures (or the totals over ranks). */
typedef struct rank {
    const char *file;
    size_t pos;         /* its place among the traces given */
    int64_t label;      /* the trace's rank line, else pos */
    int labelled;       /* label is the rank line's */
    uint32_t nprocs;    /* the trace's nprocs line, 0 when none */
    unsigned layout[3]; /* the trace's layout line (ctx, src, tag bits); 0 0 0 when none */
    uint64_t cut;       /* operations the recording left out (the end line's cut) */
    size_t ncut;        /* totals: the traces cut */
    uint64_t ops, kind[VM_TRACE_NKINDS];
    uint64_t wild[2][4]; /* receives, probes (both kinds): exact, ANY_SOURCE, ANY_TAG, both */
    uint64_t searches;   /* posts, arrivals, probes and improbes */
    uint64_t list, eng;  /* entries inspected: single list, default engine */
    uint64_t unexpected; /* arrivals queued */
    uint64_t max[2];     /* longest PRQ, UMQ */
    double sum[2];       /* their depths summed over the operations */
    int64_t max_at[2];   /* totals: the rank of the longest */
    srcmap_t src;
} rank_t;

/* The pictures one pass draws: each plot_t open (its .dat being written) or not. */
typedef struct rank_pics {
    plot_t depth, inspected, timeline;
    uint64_t bins, tbins; /* time columns asked for: depth and inspected, timeline */
    size_t nspecs;        /* inspected: the engines drawn besides the single list */
    /* rank_scan fills in: */
    uint64_t step, tstep;  /* operations per time column: depth and inspected, timeline */
    size_t nx, tnx;        /* time columns */
    uint64_t ystep;        /* timeline: sources per row */
    size_t ny;             /* timeline: rows */
    uint64_t ins[2], wild; /* timeline: PRQ, UMQ insertions; ANY_SOURCE receives among them */
} rank_pics_t;

/* Load trace file (the pos-th given) into t and start r.  0, or EXIT_ERROR after one line
 * naming the file (and line). */
int rank_load(const char *file, size_t pos, vm_trace_t *t, rank_t *r);
/* Replay t on specs (at least one; engine 0 gives the outcomes and, with profile_out, records
 * the profile saved there) gathering r's figures and the pictures of pics (NULL: none) whose
 * .dat is open.  The status. */
int rank_scan(const vm_trace_t *t, rank_t *r, const char *const *specs, size_t nspecs,
              const char *profile_out, rank_pics_t *pics);
/* Add r's figures to the totals tot. 0, or -1 out of memory. */
int rank_add(rank_t *tot, const rank_t *r);
void rank_free(rank_t *r);

/* ---- summary (profile_summary.c) ---- */

/* Print rank r's figures to f, and with prof (replayed from its trace; NULL: none) the
 * partners of pnp-static and the clusters of policy=cluster.  0, or EXIT_ERROR. */
int summary_rank(FILE *f, const opts_t *o, const rank_t *r, const vm_profile_t *prof);
/* Print the totals over n ranks.  0, or EXIT_ERROR. */
int summary_totals(FILE *f, const opts_t *o, const rank_t *tot, size_t n);
/* A temporary file's name to save a replayed profile to (created empty, to unlink):
 * 0, or EXIT_ERROR. */
int temp_profile(char *path, size_t len);

/* ---- pictures (profile_pictures.c) ---- */

/* One row of the matrix: a receiving rank and the messages from each source. */
typedef struct mrow {
    int64_t label;
    srcmap_t src;
} mrow_t;

/* Draw the matrix of rows[0..n) (sorted here) into png, titled with what. */
int matrix_draw(const opts_t *o, mrow_t *rows, size_t n, const char *png, const char *what);
/* Draw the depth, inspected and timeline pictures whose .dat pics holds, of trace name. */
int draw_depth(rank_pics_t *pics, const char *name, size_t nops);
int draw_inspected(rank_pics_t *pics, const char *name, const char *const *specs);
int draw_timeline(rank_pics_t *pics, const char *name, size_t nops);

#endif
