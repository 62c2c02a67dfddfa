/* threads.c -- engines called from many threads: threads=mutex and threads=multi
 * (threads.h, docs/threads.md).
 *
 * Why the results are linearizable.  Every change to the queues is made by the thread that
 * holds the engine (the mutex, or the busy word of a multi engine), so the operations take
 * effect one at a time, in the order in which they are applied; that order is the serial
 * order.  Each operation is applied between its call and its completion: a post, probe,
 * cancel or removal, and an arrival that takes the engine, before the call returns; an
 * arrival deferred into the inbox when a drain applies it, which is when its result is
 * delivered (the match callback, or nothing while it waits as an unexpected message).  A
 * thread's own operations keep their order: every operation that takes the engine drains
 * the inbox first, and the inbox holds the deferred arrivals in reservation order, a
 * thread's later reservation after its earlier one; and no arrival is left in the inbox once
 * every call has returned (the hand-off below).
 *
 * Memory orders.  Everything under the engine is plain memory ordered by the lock: taking it
 * is an acquire (mutex lock, or a seq_cst compare-exchange of busy), giving it back a release
 * (mutex unlock, or a seq_cst store of busy).  The inbox's orders are argued next to its code.
 */
/* sched_yield is POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L

#include "threads.h"
#include "error.h"

#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Busy-waits spin this many times with a pause before they yield the CPU: a holder that
 * runs finishes within a few hundred nanoseconds, one that was preempted needs the CPU. */
enum { SPINS_BEFORE_YIELD = 64 };

static void wait_step(unsigned *spins)
{
    if (++*spins < SPINS_BEFORE_YIELD) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield();
    }
}

/* ---- the inbox ---- */

int vm_inbox_push(vm_inbox_t *in, vmatch_bits_t bits, uint32_t cls, void *msg)
{
    /* Reserve (Algorithm 10, line 1).  seq_cst: the hand-off (arrive, below) needs this
     * reservation before the thread's later seq_cst load of busy in the single total order.
     * It is also an acquire that reads the consumer's flip (or a later reservation, which
     * carries the flip's release sequence on), so the consumer's reads of this slot in the
     * buffer's previous round and its reset of published[] happen before what we do next. */
    uint64_t r = atomic_fetch_add_explicit(&in->reserve, 1, memory_order_seq_cst);
    int b = (int)(r >> 63);
    uint64_t i = r & VM_INBOX_COUNT;
    int fits = i < in->cap;
    if (fits) /* a plain write: nobody reads the slot before our release below */
        in->buf[b][i] = (vm_inbox_slot_t){.bits = bits, .msg = msg, .cls = cls};
    /* Release the reservation, written or failed (lines 4 and 7).  release: the slot's
     * write happens before the consumer's acquire load that sees this count. */
    atomic_fetch_add_explicit(&in->published[b], 1, memory_order_release);
    return fits;
}

uint64_t vm_inbox_drain(vm_inbox_t *in, void (*fn)(void *arg, const vm_inbox_slot_t *s),
                        void *arg)
{
    /* Relaxed is enough to skip an empty buffer: the top bit is ours (only the consumer
     * changes it, and consumers follow each other through the engine's lock), and a
     * reservation this load misses is one made by another thread that has not completed:
     * its arrival takes effect after this drain, which its call allows. */
    uint64_t r = atomic_load_explicit(&in->reserve, memory_order_relaxed);
    if (!(r & VM_INBOX_COUNT))
        return 0;
    /* Flip (Algorithm 11, line 1; the thesis's afax): producers move to the other buffer,
     * whose count starts at 0.  An exchange does it because no one else changes the top bit.
     * acq_rel: the release hands our reads of the other buffer's slots and our reset of its
     * published count (previous round) to the producers that reserve after the flip. */
    uint64_t old = atomic_exchange_explicit(&in->reserve, (r & VM_INBOX_TOP) ^ VM_INBOX_TOP,
                                            memory_order_acq_rel);
    int b = (int)(old >> 63);
    uint64_t n = old & VM_INBOX_COUNT;
    /* Wait until every reservation is released (line 3).  acquire: pairs with each
     * producer's release increment (each later increment is an RMW, so the value we read
     * carries the release sequences of all of them): every slot write is visible. */
    unsigned spins = 0;
    while (atomic_load_explicit(&in->published[b], memory_order_acquire) != n)
        wait_step(&spins);
    uint64_t written = n < in->cap ? n : in->cap;
    for (uint64_t i = 0; i < written; i++)
        fn(arg, &in->buf[b][i]);
    /* Reset (line 5).  Relaxed: no producer touches published[b] until the next flip back,
     * whose release orders this store before their increments. */
    atomic_store_explicit(&in->published[b], 0, memory_order_relaxed);
    return n;
}

/* ---- holding the engine ---- */

/* multi: take busy if it is free.  seq_cst, for the hand-off argument; the relaxed look
 * first keeps waiters from bouncing the line with failed writes. */
static int try_take(vm_threads_t *t)
{
    int free_ = 0;
    return !atomic_load_explicit(&t->busy, memory_order_relaxed) &&
           atomic_compare_exchange_strong_explicit(&t->busy, &free_, 1, memory_order_seq_cst,
                                                   memory_order_seq_cst);
}

/* multi: take busy, waiting.  A few spins first (a running holder is done soon); then the
 * waiter queues on the mutex, so that one waiter spins and the others sleep in the kernel
 * instead of taking turns on the CPUs the holder needs (8 threads on 2 CPUs). */
static void take(vm_threads_t *t)
{
    for (unsigned i = 0; i < SPINS_BEFORE_YIELD; i++) {
        if (try_take(t))
            return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    pthread_mutex_lock(&t->mu);
    unsigned spins = 0;
    while (!try_take(t))
        wait_step(&spins);
    pthread_mutex_unlock(&t->mu);
}

/* Apply one deferred arrival, with the engine held. */
static void apply_deferred(void *arg, const vm_inbox_slot_t *s)
{
    vmatch_engine_t *e = arg;
    vm_threads_t *t = e->threads;
    void *req = NULL;
    if (t->hook)
        t->hook(t->hook_arg, s->msg);
    int rc = t->inner.arrive(e, s->bits, s->cls, s->msg, &req);
    t->drained++;
    if (!t->cb) /* cleared while arrivals were in flight, against vmatch_on_match's rule */
        return;
    if (rc == VMATCH_MATCHED)
        t->cb(t->cb_arg, rc, s->msg, req);
    else if (rc < 0) /* not queued: the caller gets its message back to arrive again */
        t->cb(t->cb_arg, rc, s->msg, NULL);
}

static void drain(vmatch_engine_t *e)
{
    vm_inbox_drain(&e->threads->inbox, apply_deferred, e);
}

void vm_threads_take(vmatch_engine_t *e)
{
    vm_threads_t *t = e->threads;
    if (t->mode == VM_THREADS_MUTEX) {
        pthread_mutex_lock(&t->mu);
        return;
    }
    take(t);
    drain(e);
}

/* The hand-off: no arrival is left in the inbox once every call has returned.  A producer
 * that deferred made its reservation R (seq_cst), then loaded busy (seq_cst) and saw 1, or
 * lost the compare-exchange (a seq_cst read of 1).  The holder H whose 1 it read gives the
 * engine back below with a seq_cst store of 0, which comes after that read in the single
 * total order S (or the producer would have read 0 or a later value), and then loads reserve
 * (seq_cst), after R in S: it sees R's count, or R was already flipped away by a drain, which
 * applies it.  Seeing a count, H takes the engine again and drains; if someone else took it
 * first, H's failed compare-exchange read that holder's 1, and the same argument makes that
 * holder see the count when it leaves. */
void vm_threads_give(vmatch_engine_t *e)
{
    vm_threads_t *t = e->threads;
    if (t->mode == VM_THREADS_MUTEX) {
        pthread_mutex_unlock(&t->mu);
        return;
    }
    for (;;) {
        atomic_store_explicit(&t->busy, 0, memory_order_seq_cst);
        if (!vm_inbox_pending(&t->inbox))
            return;
        int free_ = 0;
        if (!atomic_compare_exchange_strong_explicit(&t->busy, &free_, 1, memory_order_seq_cst,
                                                     memory_order_seq_cst))
            return;
        drain(e);
    }
}

/* The hook at an operation's linearization point, with the engine held. */
static inline void applied(vm_threads_t *t)
{
    if (t->hook)
        t->hook(t->hook_arg, NULL);
}

static int post(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                void *req, void **msg_out)
{
    vm_threads_take(e);
    applied(e->threads);
    int rc = e->threads->inner.post(e, bits, care, cls, req, msg_out);
    vm_threads_give(e);
    return rc;
}

/* An arrival that matches itself with the engine held (after the drain, when multi). */
static int arrive_held(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg,
                       void **req_out)
{
    applied(e->threads);
    int rc = e->threads->inner.arrive(e, bits, cls, msg, req_out);
    vm_threads_give(e);
    return rc;
}

static int arrive(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg,
                  void **req_out)
{
    vm_threads_t *t = e->threads;
    if (t->mode == VM_THREADS_MUTEX || !t->cb) { /* without a callback nothing defers */
        vm_threads_take(e);
        return arrive_held(e, bits, cls, msg, req_out);
    }
    if (try_take(t)) { /* the engine is free: drain, then match at once */
        drain(e);
        return arrive_held(e, bits, cls, msg, req_out);
    }
    if (!vm_inbox_push(&t->inbox, bits, cls, msg)) {
        /* Full: wait for the engine, as threads=mutex would.  The reservation is already
         * released, so the drain this waits for never waits for it. */
        vm_threads_take(e);
        return arrive_held(e, bits, cls, msg, req_out);
    }
    /* Deferred.  The hand-off (vm_threads_give): a holder that we see will see our
     * reservation; if we see none, we take the engine ourselves and drain. */
    if (atomic_load_explicit(&t->busy, memory_order_seq_cst))
        return VMATCH_DEFERRED;
    int free_ = 0;
    if (atomic_compare_exchange_strong_explicit(&t->busy, &free_, 1, memory_order_seq_cst,
                                                memory_order_seq_cst)) {
        drain(e);
        vm_threads_give(e);
    }
    return VMATCH_DEFERRED;
}

static int probe(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                 int remove, void **msg_out)
{
    vm_threads_take(e);
    applied(e->threads);
    int rc = e->threads->inner.probe(e, bits, care, cls, remove, msg_out);
    vm_threads_give(e);
    return rc;
}

static int remove_entry(vmatch_engine_t *e, int side, const void *payload)
{
    vm_threads_take(e);
    applied(e->threads);
    int rc = e->threads->inner.remove(e, side, payload);
    vm_threads_give(e);
    return rc;
}

/* The split calls take the engine as a probe does: they never defer (the test hook does not
 * see them, as before the calls table). */
static int match_posted(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void **req_out)
{
    vm_threads_take(e);
    int rc = e->threads->inner.match_posted(e, bits, cls, req_out);
    vm_threads_give(e);
    return rc;
}

static int enqueue(vmatch_engine_t *e, int side, vmatch_bits_t bits, vmatch_bits_t care,
                   uint32_t cls, void *payload)
{
    vm_threads_take(e);
    int rc = e->threads->inner.enqueue(e, side, bits, care, cls, payload);
    vm_threads_give(e);
    return rc;
}

static const vm_calls_t threaded_calls = {post,         arrive,       probe,
                                          remove_entry, match_posted, enqueue};

int vm_threads_create(vmatch_engine_t *e)
{
    vm_mem_t *m = &e->env.mem;
    vm_threads_t *t = vm_mem_alloc_line(m, sizeof *t);
    if (!t)
        return VMATCH_ENOMEM;
    memset(t, 0, sizeof *t);
    t->mode = (int)e->cfg.threads;
    if (t->mode == VM_THREADS_MULTI) {
        size_t bytes = e->cfg.inbox * sizeof(vm_inbox_slot_t);
        t->inbox.cap = e->cfg.inbox;
        for (int b = 0; b < 2; b++)
            if (!(t->inbox.buf[b] = vm_mem_alloc_line(m, bytes))) {
                if (b)
                    vm_mem_free_line(m, t->inbox.buf[0], bytes);
                vm_mem_free_line(m, t, sizeof *t);
                return VMATCH_ENOMEM;
            }
        atomic_init(&t->inbox.reserve, 0);
        atomic_init(&t->inbox.published[0], 0);
        atomic_init(&t->inbox.published[1], 0);
        atomic_init(&t->busy, 0);
    }
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        if (t->mode == VM_THREADS_MULTI)
            for (int b = 0; b < 2; b++)
                vm_mem_free_line(m, t->inbox.buf[b], e->cfg.inbox * sizeof(vm_inbox_slot_t));
        vm_mem_free_line(m, t, sizeof *t);
        return VMATCH_ENOMEM;
    }
    t->inner = e->calls;
    e->calls = threaded_calls;
    e->threads = t;
    return VMATCH_OK;
}

void vm_threads_destroy(vmatch_engine_t *e)
{
    vm_threads_t *t = e->threads;
    vm_mem_t *m = &e->env.mem;
    if (t->mode == VM_THREADS_MULTI) {
        if (t->cb) /* deliver what is left; no other thread may use e any more */
            drain(e);
        for (int b = 0; b < 2; b++)
            vm_mem_free_line(m, t->inbox.buf[b], e->cfg.inbox * sizeof(vm_inbox_slot_t));
    }
    pthread_mutex_destroy(&t->mu);
    vm_mem_free_line(m, t, sizeof *t);
    e->threads = NULL;
}

void vm_threads_set_hook(vmatch_engine_t *e, vm_lin_hook_fn *fn, void *arg)
{
    e->threads->hook = fn;
    e->threads->hook_arg = arg;
}

void vm_threads_take_undrained(vmatch_engine_t *e)
{
    take(e->threads);
}

/* ---- the public calls of threads.h's API (vmatch.h) ---- */

int vmatch_on_match(vmatch_engine_t *e, vmatch_match_fn *fn, void *arg)
{
    if (!e)
        return vm_fail(VMATCH_EINVAL, "on_match: NULL engine");
    if (!e->threads || e->threads->mode != VM_THREADS_MULTI)
        return VMATCH_OK; /* nothing defers on these engines: the callback never runs */
    vm_threads_take(e);
    e->threads->cb = fn;
    e->threads->cb_arg = arg;
    vm_threads_give(e);
    return VMATCH_OK;
}

int vmatch_progress(vmatch_engine_t *e)
{
    if (!e)
        return vm_fail(VMATCH_EINVAL, "progress: NULL engine");
    if (!e->threads || e->threads->mode != VM_THREADS_MULTI)
        return 0;
    vm_threads_take_undrained(e);
    uint64_t before = e->threads->drained;
    drain(e);
    uint64_t n = e->threads->drained - before;
    vm_threads_give(e);
    return n > INT_MAX ? INT_MAX : (int)n;
}
