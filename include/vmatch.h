/* vmatch.h -- fast MPI message matching: the posted-receive queue (PRQ) and the
 * unexpected-message queue (UMQ) of one process behind one small API.
 *
 * This header is the manual.  Read it top to bottom once.
 *
 * Semantics
 *   A receive is (bits, care): 64 match bits and the mask of bits that matter.  A message
 *   is 64 match bits.  They match when ((msg ^ recv.bits) & recv.care) == 0.  MPI's
 *   <context, source, tag> is packed into the bits by the engine's layout (see
 *   vmatch_mpi_pack); MPI_ANY_SOURCE / MPI_ANY_TAG clear the care bits of that field.
 *
 *   vmatch_post searches the UMQ and removes the OLDEST matching message; only if none
 *   matches is the receive appended to the PRQ.  vmatch_arrive searches the PRQ and removes
 *   the EARLIEST posted matching receive; only if none matches is the message appended to
 *   the UMQ.  Every engine, whatever its queue design, returns exactly what one ordered
 *   list would return (MPI's non-overtaking rule).
 *
 *   The class argument is 0 for point-to-point traffic or an id from vmatch_coll_class.
 *   The caller guarantees that receives and messages of different classes never match
 *   (MPI libraries keep collectives on their own context id); engines may use the class
 *   to pick a queue, never to match differently.
 *
 * Threads (spec key threads=, docs/threads.md)
 *   threads=off (the default): an engine is not thread-safe; serialize calls on one
 *   engine (MPICH holds the VCI lock around its receive queues).  It pays nothing for the
 *   other modes.  Different engines are independent.
 *   threads=mutex: every call may come from any thread; one mutex serializes them.  Results
 *   are exactly those of single.
 *   threads=multi: every call may come from any thread.  Once vmatch_on_match has set a
 *   callback, an arrival that finds the engine busy does not wait: it is left in a
 *   lock-free inbox, vmatch_arrive returns VMATCH_DEFERRED, and whichever thread holds the
 *   engine next matches it (before its own operation) and reports a match to the callback.
 *   Without a callback, multi arrivals wait for the engine like mutex ones.
 *   In both threaded modes the results are linearizable: every result is what one serial
 *   order of all the operations gives, an operation takes effect between its call and its
 *   completion (for a deferred arrival: when it is matched, or queued as unexpected), and
 *   each thread's own operations take effect in the order it made them.  A post, probe,
 *   cancel or removal made after a thread's deferred arrival sees that arrival.
 *
 * Errors
 *   Every function that returns int returns >= 0 on success and a negative VMATCH_E* code
 *   on failure.  A failed call changes nothing.  VMATCH_OK and VMATCH_QUEUED are the same
 *   value, 0: a post or an arrival that queued its entry succeeded like any other call.
 *   vmatch_strerror names a code; vmatch_last_error gives the detail of the calling
 *   thread's last failure.  VMATCH_ENOTFOUND (a probe, cancel or search that found
 *   nothing) is an answer, not a failure: it leaves that detail as it was.
 *
 * Compatibility
 *   From version 1.0 on, names are only added (a released function, constant or field keeps
 *   its name and meaning), and a program built against an older header of the same major
 *   version keeps running with a newer library.  Before 1.0 a minor version may change the
 *   ABI (0.2 moved the policies' figures out of vmatch_stats_t); the shared library's soname
 *   then carries major.minor (libvmatch.so.0.2), so rebuild what links it.  The structs the
 *   library fills grow by these rules:
 *   - vmatch_stats_t is fixed: vmatch_stats writes exactly its six fields, in every version.
 *     Further figures, of the engine or of one policy, become keys of vmatch_stat, never
 *     fields.
 *   - A struct of an extension header (vmatch_unified.h: the figures of one policy) only
 *     grows at its end and is filled by vmatch_stat_struct, which takes the caller's sizeof:
 *     the library fills what both it and the caller know, zeroes the caller's bytes past
 *     its own struct, and refuses a size below the struct's first version.  The extension
 *     header's own call passes the size for the caller.
 *   This header names no policy: what only one policy keeps comes by key (vmatch_stat,
 *   vmatch_stat_struct) or from that policy's extension header.
 */
#ifndef VMATCH_H
#define VMATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VMATCH_VERSION_MAJOR 0
#define VMATCH_VERSION_MINOR 2
#define VMATCH_VERSION_PATCH 0

typedef struct vmatch_engine vmatch_engine_t;
typedef uint64_t vmatch_bits_t;

/* Results: >= 0 success, < 0 error.  VMATCH_OK == VMATCH_QUEUED == 0. */
enum { VMATCH_OK = 0 };
enum { VMATCH_QUEUED = 0, VMATCH_MATCHED = 1, VMATCH_DEFERRED = 2 };
enum {
    VMATCH_EINVAL = -1,       /* bad argument, spec, value or file contents */
    VMATCH_ENOMEM = -2,       /* allocation failed; the engine is unchanged */
    VMATCH_ENOTFOUND = -3,    /* nothing matched / no such request or message */
    VMATCH_EUNSUPPORTED = -4, /* valid request this machine or build cannot serve */
    VMATCH_EIO = -5           /* a file could not be opened, read or written */
};

/* Name of a result code ("VMATCH_EINVAL: invalid argument"); never NULL.  0 is both
 * VMATCH_OK and VMATCH_QUEUED, and its text names both ("VMATCH_OK / VMATCH_QUEUED: ..."). */
const char *vmatch_strerror(int code);

/* Detail of the calling thread's last failure, for example "spec: unknown key 'polcy'":
 * every call that fails (a negative code other than VMATCH_ENOTFOUND) records one, on the
 * thread that made it.  A successful call does NOT clear it (that would cost the matching
 * paths a store), so it describes the last failure, however many calls succeeded since:
 * read it when a call has just returned an error.  Empty before the thread's first failure.
 * Under threads=multi, a deferred arrival that fails to queue (the callback's
 * VMATCH_ENOMEM) records its detail on the thread that drained it.  The text stays valid
 * until the thread's next failure. */
const char *vmatch_last_error(void);

/* Create an engine from a spec string: "key=value" words separated by blanks, for example
 * "policy=single storage=lla lla.block=32".  A key given twice takes its last value.
 * spec NULL: the environment variable VMATCH_SPEC is used if set, else the defaults; ""
 * means the defaults.  The keys are listed in README.md.
 * Returns VMATCH_OK and *out, or VMATCH_EINVAL (unknown key, bad value, layout wider than
 * 64 bits, NULL out), VMATCH_EUNSUPPORTED (the machine or build lacks what was asked for),
 * VMATCH_ENOMEM; on error *out is untouched and nothing is leaked. */
int vmatch_create(const char *spec, vmatch_engine_t **out);

/* Destroy an engine and everything it holds.  Entries still queued are dropped (their
 * payload pointers belong to the caller).  NULL is allowed. */
void vmatch_destroy(vmatch_engine_t *e);

/* The engine's resolved spec: the engine's own keys and the keys of its storage and policy,
 * each with its value in effect (keys left unset, such as nprocs, are left out), for example
 * "policy=single storage=lla simd=avx512 layout.ctx=16 ... lla.block=32".  It is itself a
 * spec that makes the same engine.  Owned by the engine. */
const char *vmatch_describe(const vmatch_engine_t *e);

/* The vector kernel the engine's queues search with: "avx512", "avx2" or "scalar" (spec key
 * simd=, resolved from auto at creation), or "none" when its storage has no kernels (ll, lla).
 * A NULL e gives "none". */
const char *vmatch_kernel(const vmatch_engine_t *e);

/* 1 when kernel ("auto", "avx512", "avx2", "scalar") can run in this build on this CPU and
 * operating system, 0 when not (vmatch_create with simd=kernel would return
 * VMATCH_EUNSUPPORTED), VMATCH_EINVAL for a NULL or unknown name. */
int vmatch_simd_available(const char *kernel);

/* Post a receive (bits, care) with class cls and request pointer req (not NULL).
 * Returns VMATCH_MATCHED with the oldest matching unexpected message in *msg_out (it is
 * removed from the UMQ), or VMATCH_QUEUED when the receive was appended to the PRQ. */
int vmatch_post(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                void *req, void **msg_out);

/* A message with match bits `bits` arrives; msg (not NULL) is its handle.
 * Returns VMATCH_MATCHED with the earliest posted matching receive in *req_out (removed
 * from the PRQ), or VMATCH_QUEUED when the message was appended to the UMQ.
 * threads=multi with a vmatch_on_match callback also returns VMATCH_DEFERRED (*req_out
 * untouched): the engine was busy and the message waits in the inbox.  Treat it as
 * VMATCH_QUEUED (keep the payload where an unexpected message's payload goes; msg must stay
 * valid); if the message matches a posted receive, the callback gets (msg, req), at the
 * latest when the thread holding the engine gives it back, possibly before this call
 * returns; if it matches none, it becomes an unexpected message that later posts and
 * probes find as usual. */
int vmatch_arrive(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg,
                  void **req_out);

/* The callback of deferred arrivals (threads=multi): rc is VMATCH_MATCHED with the receive
 * req the message msg matched (removed from the PRQ, as vmatch_arrive would have), or a
 * negative code (VMATCH_ENOMEM) when the message could not be queued as unexpected: it is
 * in neither queue, req is NULL, and the caller arrives it again later.  It runs on
 * whichever thread drains the inbox, inside one of its vmatch_* calls on e, with e held:
 * it must not call into e (that would wait for itself); it may call other engines and take
 * the caller's own locks (none of vmatch's is held but e's). */
typedef void vmatch_match_fn(void *arg, int rc, void *msg, void *req);

/* Set (fn) or clear (NULL) the callback of deferred arrivals of a threads=multi engine;
 * set it before other threads use e.  Arrivals defer only while one is set.  On a single
 * or mutex engine nothing defers and this does nothing.  VMATCH_OK, or VMATCH_EINVAL for a
 * NULL e. */
int vmatch_on_match(vmatch_engine_t *e, vmatch_match_fn *fn, void *arg);

/* Apply the deferred arrivals waiting in a threads=multi engine's inbox now (their
 * matches go to the callback).  Never needed for correctness: every call on e does it
 * first, and the thread that gives e back does it for arrivals deferred meanwhile.  Useful
 * to have everything matched at a point of the caller's choosing.  Returns how many it
 * applied (0 for single and mutex engines), or VMATCH_EINVAL for a NULL e. */
int vmatch_progress(vmatch_engine_t *e);

/* Probe the UMQ for the oldest message matching (bits, care) (MPI_Iprobe when remove is
 * 0, MPI_Improbe when remove is 1).  Returns VMATCH_MATCHED with the message in *msg_out,
 * or VMATCH_ENOTFOUND. */
int vmatch_probe(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                 int remove, void **msg_out);

/* Remove the posted receive whose request pointer is req.  VMATCH_OK or VMATCH_ENOTFOUND. */
int vmatch_cancel(vmatch_engine_t *e, void *req);

/* Remove the unexpected message whose handle is msg.  VMATCH_OK or VMATCH_ENOTFOUND. */
int vmatch_remove_unexpected(vmatch_engine_t *e, void *msg);

/* The two halves of vmatch_arrive and of vmatch_post, for a caller that makes the handle
 * of a message only when no receive takes it (UCX makes a receive descriptor then):
 * vmatch_match_posted removes and returns in *req_out the earliest posted receive that a
 * message with bits matches (VMATCH_MATCHED) or finds none (VMATCH_ENOTFOUND);
 * vmatch_enqueue_unexpected then appends the message to the UMQ without a search.
 * vmatch_probe with remove=1 and vmatch_enqueue_posted are the halves of a post.  An
 * enqueue returns VMATCH_QUEUED or an error (VMATCH_EINVAL, VMATCH_ENOMEM) and must follow
 * its search with nothing in between: otherwise the queues keep an entry that the other
 * side already holds a match for, and the answers are no longer the single list's.  On a
 * threads=mutex or multi engine each call is safe from any thread and takes the engine as a
 * probe does (never deferred), but "nothing in between" is the caller's: hold one lock
 * across a search and its enqueue (UCX holds the worker). */
int vmatch_match_posted(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void **req_out);
int vmatch_enqueue_unexpected(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg);
int vmatch_enqueue_posted(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care,
                          uint32_t cls, void *req);

/* Collective operations, for vmatch_coll_class.  Any other op value is accepted too. */
enum {
    VMATCH_COLL_BARRIER = 1,
    VMATCH_COLL_BCAST,
    VMATCH_COLL_GATHER,
    VMATCH_COLL_SCATTER,
    VMATCH_COLL_ALLGATHER,
    VMATCH_COLL_REDUCE,
    VMATCH_COLL_ALLREDUCE,
    VMATCH_COLL_REDUCE_SCATTER,
    VMATCH_COLL_ALLTOALL,
    VMATCH_COLL_SCAN
};

/* A small class id (>= 1) for collective traffic of operation op, message size msg_bytes
 * and communicator size comm_size.  Sizes fall into power-of-two classes (the bit length
 * of msg_bytes), so 1000 and 1023 bytes share a class.  Ids are dense, handed out in
 * first-seen order.
 *
 * Every key (op, size class, comm_size) gets one answer for the engine's lifetime, failure
 * included, so a caller may compute the class afresh for each post and each arrival:
 * receives and messages of the same traffic always agree.  On failure the answer is 0, the
 * point-to-point class, which matches exactly as the key's own class would (engines route
 * by class, never match by it; collectives keep their own context id), only without the
 * collective routing.  Failure is: e NULL (VMATCH_EINVAL), or no room for a new class: an
 * allocation failed or 65535 classes exist (VMATCH_ENOMEM).  After the first failure for
 * want of room the table is closed: keys that have an id keep it, every new key gets 0,
 * even once memory is back (otherwise a key could get 0 for a receive and an id for its
 * message).  Each failure records its detail for vmatch_last_error; vmatch_coll_class_get
 * returns the code. */
uint32_t vmatch_coll_class(vmatch_engine_t *e, uint32_t op, uint64_t msg_bytes,
                           uint32_t comm_size);

/* vmatch_coll_class with its failure as a code: VMATCH_OK with the id (>= 1) in *cls, or
 * VMATCH_EINVAL (NULL e or cls) / VMATCH_ENOMEM (no room, see above) with 0 in *cls (unless
 * cls is NULL): the class to use anyway. */
int vmatch_coll_class_get(vmatch_engine_t *e, uint32_t op, uint64_t msg_bytes,
                          uint32_t comm_size, uint32_t *cls);

/* MPI packing with the engine's layout: spec keys layout.ctx / layout.src / layout.tag (bit
 * widths; the tag takes the low bits, the source the next, the context the top), or a named
 * layout (layout=ompi-ucx, layout=mpich-ucx: the fields where Open MPI's pml/ucx and MPICH's
 * ch4/ucx put them in UCX tags; docs/layout.md). */
#define VMATCH_ANY_SOURCE (-1)
#define VMATCH_ANY_TAG    (-1)

/* Pack <ctx, src, tag>.  With care == NULL it packs a message (no wildcards allowed);
 * otherwise a receive, where VMATCH_ANY_SOURCE / VMATCH_ANY_TAG clear the care bits of that
 * field.  Returns VMATCH_OK, or VMATCH_EINVAL when a value does not fit its field (or is a
 * negative other than the wildcard), leaving *bits and *care untouched. */
int vmatch_mpi_pack(const vmatch_engine_t *e, uint32_t ctx, int32_t src, int32_t tag,
                    vmatch_bits_t *bits, vmatch_bits_t *care);

/* Unchecked shorthands for vmatch_mpi_pack.  Values wider than their field are cut to the
 * field width, so check bounds first (vmatch_mpi_pack or vmatch_layout) when the values
 * come from outside. */
vmatch_bits_t vmatch_mpi_msg(const vmatch_engine_t *e, uint32_t ctx, int32_t src, int32_t tag);
void vmatch_mpi_recv(const vmatch_engine_t *e, uint32_t ctx, int32_t src, int32_t tag,
                     vmatch_bits_t *bits, vmatch_bits_t *care);

/* The engine's field widths in bits; any pointer may be NULL. */
void vmatch_layout(const vmatch_engine_t *e, unsigned *ctx_bits, unsigned *src_bits,
                   unsigned *tag_bits);
/* Where each field starts: its lowest bit; any pointer may be NULL.  The fields never
 * overlap; without a context field (layout.ctx=0) ctx_shift is 0. */
void vmatch_layout_shifts(const vmatch_engine_t *e, unsigned *ctx_shift, unsigned *src_shift,
                          unsigned *tag_shift);

/* The engine's figures.  This struct is fixed (see Compatibility): vmatch_stats writes
 * these six fields in every version; further figures are keys of vmatch_stat. */
typedef struct {                  /* current and cumulative figures */
    uint64_t posted, unexpected;  /* entries queued now */
    uint64_t searches, inspected; /* searches made, entries compared in them */
    uint64_t queues, bytes;       /* queues allocated, bytes held now */
} vmatch_stats_t;                 /* policy-specific figures: by key, not in this struct */

/* Fill *out.  `searches` counts every queue walk (matching, probing, cancel and
 * remove-by-handle); `inspected` every entry compared in them.  `bytes` is all memory the
 * engine holds: queue blocks, pool slabs, tables and the engine itself.  A NULL e gives
 * zeros. */
void vmatch_stats(const vmatch_engine_t *e, vmatch_stats_t *out);

/* One figure by key, into *value.  The keys (docs/statistics.md lists them all):
 * the engine's, without a prefix: "posted", "unexpected", "searches", "inspected", "queues",
 * "bytes" (the fields of vmatch_stats_t); and a policy's, under its module's prefix, for
 * example "pnp.partners", "pnp.levels", "unified.levels", "hash.flat".  A policy that
 * builds on another answers that one's keys too (policy=unified unified.p2p=pnp answers
 * "pnp.partners").  Returns VMATCH_OK, VMATCH_EINVAL (NULL argument, a key no module has,
 * or a key that names a struct: use vmatch_stat_struct), or VMATCH_EUNSUPPORTED: a key of
 * a policy this engine does not run, so that a tool asking every engine the same keys can
 * tell a typo from a figure that does not apply.  *value is untouched on error. */
int vmatch_stat(const vmatch_engine_t *e, const char *key, uint64_t *value);

/* A policy's figures that come as a struct, declared in that policy's extension header
 * (key "unified.class": vmatch_class_stats_t of vmatch_unified.h, for class arg), which
 * also gives a call that wraps this one.  size is the caller's sizeof(*out): the library
 * fills what both know and zeroes the rest (see Compatibility).  The same returns as
 * vmatch_stat, and VMATCH_EINVAL for a size below the struct's first version (or a key
 * that names a number); *out is untouched on error. */
int vmatch_stat_struct(const vmatch_engine_t *e, const char *key, uint32_t arg, void *out,
                       size_t size);

/* Write the profile of the traffic seen so far to path (format in docs/workloads.md: a header
 * with the layout and nprocs, then one line per (context, source) with its PRQ and UMQ
 * insertion counts).  Recording must be on (spec key profile.record=on), otherwise
 * VMATCH_EINVAL.  VMATCH_EIO when the file cannot be written. */
int vmatch_profile_save(const vmatch_engine_t *e, const char *path);

/* Write the trace of the engine's matching calls so far to path, in the trace format of
 * docs/workloads.md (what tools/vmatch-replay and vmatch-profile read): one line per post,
 * arrival, probe, improbe, cancel or removal, with <context, source, tag> and the class.
 * Recording must be on (spec key trace.record=on, or trace.out=PATH), otherwise
 * VMATCH_EINVAL.  A recording stops at trace.cap operations (or when memory runs out) and
 * counts the rest (vmatch_stat "trace.dropped"); the file then says so.  Recording sends
 * every call through the library (the inline calls of vmatch_inline.h are off for the
 * engine); an engine that records nothing pays nothing.  VMATCH_EIO when the file cannot
 * be written. */
int vmatch_trace_save(const vmatch_engine_t *e, const char *path);

/* Write the files the spec names: the profile to profile.out and the trace to trace.out,
 * their %r (the rank: spec key rank, else the launcher's environment) and %p (the process
 * id) expanded when the engine was made.  A recording that holds nothing is not written.
 * For an MPI library to call at finalize.  Returns how many files it wrote, or the first
 * error (VMATCH_EIO) with vmatch_last_error's message.  note (NULL allowed) gets one line
 * for the user, "" when the spec named no file: what was written where, what was not and
 * why, and whether a trace stopped at its cap. */
int vmatch_save_recordings(const vmatch_engine_t *e, char *note, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VMATCH_H */
