/* trace_scan.h -- one pass of a trace through vmatch engines side by side, reporting what each
 * operation did: what it matched, the queue depths after it, and the entries each engine and a
 * single linked list inspected for it.  The single list is MPICH's (policy=single storage=ll):
 * it holds each queue in posting order and walks it from the head, so its count follows from
 * the outcomes alone (the matched entry's place in its queue, or the whole queue on a miss) and
 * costs no list walk.  Nothing is kept per operation: a caller bins what it needs as the pass
 * goes, so a trace of millions of operations takes the memory of the trace and the queues. */
#ifndef VM_TOOLS_TRACE_SCAN_H
#define VM_TOOLS_TRACE_SCAN_H

#include "trace.h"

#include <stddef.h>
#include <stdint.h>

/* Most engines one pass drives. */
#define SCAN_MAX_ENGINES 8

/* Outcome of an operation that matched, cancelled or removed nothing. */
#define SCAN_NONE UINT32_MAX

/* What one operation did. */
typedef struct scan_step {
    size_t i;                /* its index in the trace */
    const vm_trace_op_t *op; /* the operation */
    uint32_t outcome;  /* post: message taken; arrive: request; probe, improbe: message found;
                          cancel, remove: the id when it was queued; else SCAN_NONE */
    int queued;        /* a post or an arrival appended to its queue */
    int search;        /* a search by match bits (post, arrive, probe, improbe): the
                          denominator of "inspected per search", as vmatch-replay counts */
    uint64_t depth[2]; /* PRQ, UMQ entries after it */
    uint64_t list;     /* entries the single list inspected for it */
    uint64_t inspected[SCAN_MAX_ENGINES]; /* entries each engine inspected for it */
} scan_step_t;

/* Called after each operation. */
typedef void scan_fn(void *arg, const scan_step_t *st);

/* What to run. */
typedef struct scan_job {
    const char *name; /* the trace's file (or workload), for messages */
    const vm_trace_t *t;
    const char *const *specs; /* engine specs ("" the library default); at least one */
    size_t nspecs;            /* 1 .. SCAN_MAX_ENGINES */
    const char *profile_out; /* not NULL: engine 0 records (profile.record=on) and saves here */
    int64_t rank;            /* >= 0: the rank the saved profile names (the spec's rank key) */
    scan_fn *fn;
    void *arg;
} scan_job_t;

/* Replay job->t on an engine per spec, each made with the trace's nprocs (vm_wl_engine_spec),
 * calling fn after every operation; engine 0's answers are the outcomes, and every other
 * engine must give the same.  Returns 0, or 1 after printing one line on stderr,
 * "PROG: NAME: ...": an engine that cannot be made, a value that does not fit its layout, a
 * failed call, engines that disagree, a profile that cannot be written. */
int scan_trace(const char *prog, const scan_job_t *job);

#endif
