/* replay.h -- replay a trace against a queue implementation: a vmatch engine, a baseline of
 * the benchmarks, or the reference model of the tests, all behind one table of functions so
 * that every implementation runs the same loop.
 *
 * A replay first prepares the trace for the implementation's layout (every receive and
 * message packed into match bits, every collective class turned into the implementation's
 * class id), outside any timing.  vm_wl_run then replays a range of operations and records
 * what each returned: the id of the request or message it matched (or cancelled, removed),
 * or VM_WL_NONE.  Identical outcome arrays mean identical matching, so one implementation
 * (or the reference model) checks all the others.  vm_wl_analyze derives the queue lengths
 * from the outcomes alone; vm_wl_run_measured also samples memory at the peak.
 */
#ifndef VM_WL_REPLAY_H
#define VM_WL_REPLAY_H

#include "trace.h"
#include "vmatch.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Outcome of an operation that matched, cancelled or removed nothing. */
#define VM_WL_NONE UINT32_MAX

/* What an implementation reports between operations (untimed). */
typedef struct vm_wl_sample {
    uint64_t inspected; /* entries compared so far */
    uint64_t bytes;     /* bytes held now */
    uint64_t queues;    /* queues (lists, buckets, blocks: the implementation's unit) now */
} vm_wl_sample_t;

/* One implementation.  The calls have the contract of vmatch.h. */
typedef struct vm_wl_backend {
    void *self;
    unsigned ctx_bits, src_bits, tag_bits; /* the layout to pack <ctx, src, tag> with */
    /* Class id of a collective (NULL: every class is 0). */
    uint32_t (*coll_class)(void *self, uint32_t op, uint64_t bytes, uint32_t comm_size);
    int (*post)(void *self, uint64_t bits, uint64_t care, uint32_t cls, void *req,
                void **msg_out);
    int (*arrive)(void *self, uint64_t bits, uint32_t cls, void *msg, void **req_out);
    int (*probe)(void *self, uint64_t bits, uint64_t care, uint32_t cls, int remove,
                 void **msg_out);
    int (*cancel)(void *self, void *req);
    int (*remove)(void *self, void *msg);
    void (*sample)(void *self, vm_wl_sample_t *out);
} vm_wl_backend_t;

/* Fill b to drive engine e (its layout, vmatch_coll_class, vmatch_stats). */
void vm_wl_vmatch_backend(vmatch_engine_t *e, vm_wl_backend_t *b);

/* The spec to create an engine for trace t with: "nprocs=P " in front of spec when the trace
 * declares P processes, and "layout.ctx=C layout.src=S layout.tag=T " when it declares the
 * layout it was recorded with (later keys in spec still win).  Returns buf. */
const char *vm_wl_engine_spec(const vm_trace_t *t, const char *spec, char *buf, size_t len);

/* A trace prepared for one layout and class mapping. */
typedef struct vm_wl_prep {
    const vm_trace_t *t;
    uint64_t *bits, *care;   /* per operation (care: receives and probes) */
    uint32_t *cls;           /* per operation: the implementation's class id */
    uint32_t *class_ids;     /* per trace class */
    char *req_tok, *msg_tok; /* payloads: request i is &req_tok[i], message j &msg_tok[j] */
} vm_wl_prep_t;

/* Prepare t for backend b.  VMATCH_EINVAL when a context, source or tag does not fit b's
 * layout ("operation N: source S needs more than 24 bits"), VMATCH_ENOMEM. */
int vm_wl_prepare(vm_wl_prep_t *p, const vm_trace_t *t, const vm_wl_backend_t *b, char *err,
                  size_t errlen);
/* Register the trace's classes with a new instance of the same implementation (vmatch
 * hands out class ids per engine).  0, or VMATCH_EINVAL if it gives other ids than the
 * instance p was prepared with. */
int vm_wl_rebind(vm_wl_prep_t *p, const vm_wl_backend_t *b, char *err, size_t errlen);
void vm_wl_prep_free(vm_wl_prep_t *p);

/* Replay operations [from, to) of the prepared trace; out[i] receives operation i's outcome.
 * Returns 0, or the negative code with "operation N (kind): ..." in err when the
 * implementation fails or returns a payload that is not one of the trace's. */
int vm_wl_run(const vm_wl_prep_t *p, const vm_wl_backend_t *b, size_t from, size_t to,
              uint32_t *out, char *err, size_t errlen);

/* Queue lengths and sizes of one replay. */
typedef struct vm_wl_measure {
    uint64_t ops, searches;    /* operations; those that search a queue by match bits */
    uint64_t matched;          /* posts, arrivals and improbes that matched */
    uint64_t max_prq, max_umq; /* longest each queue got */
    uint64_t max_pending;      /* most entries queued at once (both sides) */
    uint64_t end_prq, end_umq; /* left queued at the end */
    double mean_search_len;    /* mean length of the queue a search looked at */
    /* vm_wl_run_measured only: */
    uint64_t inspected;               /* entries compared in the whole replay */
    uint64_t bytes_empty;             /* before the first operation */
    uint64_t bytes_peak, queues_peak; /* when max_pending was first reached */
    uint64_t bytes_max;               /* the most bytes seen in the samples */
} vm_wl_measure_t;

/* Queue figures of trace t from the outcomes of a replay (the sampled fields stay 0). */
void vm_wl_analyze(const vm_trace_t *t, const uint32_t *out, vm_wl_measure_t *m);

/* Replay the whole trace one operation at a time, sampling the implementation before the
 * first operation, whenever the entries queued reach a new maximum, every
 * VM_WL_SAMPLE_EVERY operations and at the end.  Not for timing.  Returns as vm_wl_run. */
#define VM_WL_SAMPLE_EVERY 256
int vm_wl_run_measured(const vm_wl_prep_t *p, const vm_wl_backend_t *b, uint32_t *out,
                       vm_wl_measure_t *m, char *err, size_t errlen);

/* Index of the first operation whose outcomes differ, or n when they agree. */
size_t vm_wl_first_difference(const uint32_t *a, const uint32_t *b, size_t n);

/* Monotonic clock in nanoseconds (wall time). */
uint64_t vm_wl_now_ns(void);
/* CPU time of the calling thread in nanoseconds: for timing replays, so that time the thread
 * spends descheduled on a busy machine is not counted. */
uint64_t vm_wl_cpu_ns(void);

#ifdef __cplusplus
}
#endif

#endif
