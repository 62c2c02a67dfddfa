/* trace.h -- traces of one process's matching traffic: the in-memory form, the text format
 * (docs/workloads.md, "Traces"), its writer (trace.c, in the library, which records traces:
 * record.c) and its reader (workloads/trace_read.c).
 *
 * A trace is a sequence of operations on the two queues of one MPI process, in MPI terms:
 * post a receive, a message arrives, probe, improbe, cancel a receive, remove an unexpected
 * message.  Receives and messages carry <context, source, tag> and a class: point-to-point,
 * or a collective described by (operation, message bytes, communicator size), which a
 * replay turns into the engine's class id with vmatch_coll_class.  Requests and messages are
 * numbered in the order they appear (request 0 is the first post, message 0 the first
 * arrival), which is how cancel and remove name them.
 */
#ifndef VM_TRACE_H
#define VM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Operation kinds (the format's keywords, in this order). */
typedef enum vm_trace_kind {
    VM_TRACE_POST,    /* post REQ CTX SRC TAG CLASS     MPI_Irecv */
    VM_TRACE_ARRIVE,  /* arrive MSG CTX SRC TAG CLASS   a message comes in */
    VM_TRACE_PROBE,   /* probe CTX SRC TAG CLASS        MPI_Iprobe */
    VM_TRACE_IMPROBE, /* improbe CTX SRC TAG CLASS      MPI_Improbe (removes the match) */
    VM_TRACE_CANCEL,  /* cancel REQ                     MPI_Cancel of a posted receive */
    VM_TRACE_REMOVE,  /* remove MSG                     drop an unexpected message */
    VM_TRACE_NKINDS
} vm_trace_kind_t;

/* Keyword of a kind ("post", ...). */
const char *vm_trace_kind_name(vm_trace_kind_t k);

/* Wildcard source or tag (MPI_ANY_SOURCE / MPI_ANY_TAG); written '*'. */
#define VM_TRACE_ANY (-1)

/* Largest source, tag and id a trace holds. */
#define VM_TRACE_MAX_FIELD 0x7fffffff
/* Classes one trace may use (class ids are 16 bits in an operation). */
#define VM_TRACE_MAX_CLASSES 65535

/* A class: op 0 is point-to-point (bytes and comm_size 0), else a vmatch collective
 * operation (VMATCH_COLL_* or any other number >= 1) with message bytes and communicator
 * size >= 1. */
typedef struct vm_trace_class {
    uint32_t op;
    uint64_t bytes;
    uint32_t comm_size;
} vm_trace_class_t;

/* One operation. */
typedef struct vm_trace_op {
    uint8_t kind;     /* vm_trace_kind_t */
    uint16_t cls;     /* index into the trace's classes; 0 is point-to-point */
    uint32_t ctx;     /* context id */
    int32_t src, tag; /* VM_TRACE_ANY allowed in post, probe and improbe */
    uint32_t id;      /* post: request id; arrive: message id; cancel: request; remove:
                         message; unused by probes */
} vm_trace_op_t;

typedef struct vm_trace {
    vm_trace_op_t *ops;
    size_t n, cap;
    vm_trace_class_t *classes; /* classes[0] is point-to-point */
    size_t nclasses, classes_cap;
    uint32_t *class_index; /* open-addressing hash of classes: index + 1, 0 when empty */
    size_t index_cap;      /* a power of two, at least twice nclasses */
    uint32_t nprocs;       /* processes of the job, 0 when not declared; sources are below it */
    uint32_t nreq, nmsg;   /* posts and arrivals so far: the next ids */
    int failed;            /* an append ran out of memory (the builders' sticky error) */
    /* The recording engine's field widths (a `layout C S T` line), when has_layout. */
    int has_layout;
    unsigned ctx_bits, src_bits, tag_bits;
    int64_t rank; /* the recording process's rank (a `rank R` line), -1 when not given */
    int ended;    /* an `end N` line closed the trace (the writer always writes one) */
    uint64_t cut; /* operations left out after it (`end N cut M`): a recording's cap */
} vm_trace_t;

/* An empty trace (no operations, the point-to-point class only). */
void vm_trace_init(vm_trace_t *t);
/* Free everything; the trace may be initialised again. */
void vm_trace_free(vm_trace_t *t);

/* ---- building (generators) ----
 * The builders never fail loudly: on allocation failure they set t->failed and return 0;
 * check t->failed once at the end.  They do not validate: generators produce valid traces,
 * and vm_trace_check verifies it. */

/* Index of class (op, bytes, comm_size), added if new; op 0 gives 0 (point-to-point). */
uint16_t vm_trace_class(vm_trace_t *t, uint32_t op, uint64_t bytes, uint32_t comm_size);
/* Append a post; returns its request id. */
uint32_t vm_trace_post(vm_trace_t *t, uint32_t ctx, int32_t src, int32_t tag, uint16_t cls);
/* Append an arrival; returns its message id. */
uint32_t vm_trace_arrive(vm_trace_t *t, uint32_t ctx, int32_t src, int32_t tag, uint16_t cls);
/* Append a probe (improbe when remove is non-zero). */
void vm_trace_probe(vm_trace_t *t, uint32_t ctx, int32_t src, int32_t tag, uint16_t cls,
                    int remove);
/* Append a cancel of request req / a removal of message msg. */
void vm_trace_cancel(vm_trace_t *t, uint32_t req);
void vm_trace_remove(vm_trace_t *t, uint32_t msg);

/* Check the rules the reader enforces (ids in order, references to earlier ids, no
 * wildcard in an arrival, sources below nprocs, fields in range).  Returns 0, or
 * VMATCH_EINVAL with "operation N: ..." in err. */
int vm_trace_check(const vm_trace_t *t, char *err, size_t errlen);

/* 1 when a and b hold the same operations (classes compared by value, not by index), else 0
 * with *at (may be NULL) the first operation that differs, or 0 when their counts differ. */
int vm_trace_equal(const vm_trace_t *a, const vm_trace_t *b, size_t *at);

/* ---- the text format ---- */

/* Parse text (len bytes, need not end in NUL) into t, which must be freshly initialised.
 * name labels error messages ("NAME:LINE: expected ..., got ...").  Returns 0,
 * VMATCH_EINVAL (malformed; t holds the operations before the bad line) or VMATCH_ENOMEM. */
int vm_trace_parse(vm_trace_t *t, const char *text, size_t len, const char *name, char *err,
                   size_t errlen);
/* Read a whole file ("-": standard input) and parse it.  VMATCH_EIO when it cannot be
 * read.  What cannot be a trace is refused while it is read, with VMATCH_EINVAL and t left
 * empty: a NUL byte, a line longer than 4 KiB, more than 2 GiB (trace.c says why). */
int vm_trace_load(vm_trace_t *t, const char *path, char *err, size_t errlen);
/* Write t in the text format, with an optional comment line (NULL: none): the header, the
 * nprocs, layout and rank lines t declares, the operations and the trailer `end N` (`end N
 * cut M` when t->cut).  0 or VMATCH_EIO. */
int vm_trace_write(const vm_trace_t *t, FILE *f, const char *comment);
/* Write to a file (created or truncated).  0 or VMATCH_EIO with the reason in err. */
int vm_trace_save(const vm_trace_t *t, const char *path, const char *comment, char *err,
                  size_t errlen);

/* Name of a collective operation ("allreduce"), or NULL for numbers without a name. */
const char *vm_trace_op_name(uint32_t op);

#ifdef __cplusplus
}
#endif

#endif
