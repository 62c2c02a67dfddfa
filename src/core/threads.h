/* threads.h -- engines called from many threads (spec key threads=, docs/threads.md).
 *
 * threads=off costs nothing: its engines never reach this file.  threads=mutex puts one
 * pthread mutex around every call.  threads=multi lets arrivals that find the engine busy
 * leave themselves in a lock-free multi-producer inbox (below), which whoever holds the
 * engine next drains in order before its own operation; posts, probes, cancels and removals
 * take the engine and drain first.  Every queue change happens with the engine held, so the
 * order in which operations take the engine is a serial order that gives every result. */
#ifndef VM_THREADS_H
#define VM_THREADS_H

#include "engine.h"
#include "vmatch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct vm_side;

enum vm_threads_mode { VM_THREADS_OFF = 0, VM_THREADS_MUTEX = 1, VM_THREADS_MULTI = 2 };

/* ---- the inbox: one consumer, many producers (Rüfenacht 2020, chapter 6, Algorithms 10
 * and 11) ---- */

typedef struct vm_inbox_slot {
    vmatch_bits_t bits;
    void *msg;
    uint32_t cls;
} vm_inbox_slot_t;

/* Two buffers of cap slots.  reserve: the top bit names the buffer producers fill now, the
 * other bits count the slots reserved in it (failed reservations, past cap, included).
 * published[b]: reservations of buffer b released, written or failed (the thesis's S + F:
 * with one slot per reservation, the written ones are exactly those below cap).  Each
 * counter has its own cache line: producers hit reserve and published, the consumer reads
 * both, and none of them should share a line with the slots. */
typedef struct vm_inbox {
    _Alignas(64) _Atomic uint64_t reserve;
    _Alignas(64) _Atomic uint64_t published[2];
    _Alignas(64) vm_inbox_slot_t *buf[2];
    uint64_t cap;
} vm_inbox_t;

#define VM_INBOX_TOP   (1ull << 63)
#define VM_INBOX_COUNT (VM_INBOX_TOP - 1)

/* Producer: put (bits, cls, msg) in the inbox.  Returns 1 when it is in, 0 when the buffer
 * was full (the reservation is released; the caller must take the engine and match
 * directly).  Any thread, any time. */
int vm_inbox_push(vm_inbox_t *in, vmatch_bits_t bits, uint32_t cls, void *msg);

/* 1 when slots are reserved in the buffer producers fill now (some may still be being
 * written): a drain has work.  A seq_cst load, part of the hand-off argument in threads.c. */
static inline int vm_inbox_pending(vm_inbox_t *in)
{
    return (atomic_load_explicit(&in->reserve, memory_order_seq_cst) & VM_INBOX_COUNT) != 0;
}

/* Consumer (one at a time: the engine's holder): flip the buffers, wait until every
 * reservation of the old one is released, then call fn(arg, slot) for its written slots in
 * reservation order.  Returns the number of reservations the batch had (written or not). */
uint64_t vm_inbox_drain(vm_inbox_t *in, void (*fn)(void *arg, const vm_inbox_slot_t *s),
                        void *arg);

/* ---- an engine's thread state ---- */

typedef void vm_lin_hook_fn(void *arg, void *deferred_msg);

/* Read-mostly fields first; each lock word, written by every call, on a line of its own, so
 * that reading the mode or the callback does not pull a line another CPU is writing. */
typedef struct vm_threads {
    int mode;            /* VM_THREADS_MUTEX or VM_THREADS_MULTI */
    vmatch_match_fn *cb; /* vmatch_on_match; multi defers arrivals only once it is set */
    void *cb_arg;
    vm_lin_hook_fn *hook; /* test hook (vm_threads_set_hook), or NULL */
    void *hook_arg;
    vm_calls_t inner;                /* the single-threaded calls, run with the engine held */
    _Alignas(64) pthread_mutex_t mu; /* mutex: the engine's lock; multi: where waiters queue */
    _Alignas(64) _Atomic int busy; /* multi: the engine's lock (1: held), seq_cst (threads.c) */
    uint64_t drained;              /* multi: arrivals the drains applied (vmatch_progress) */
    vm_inbox_t inbox;              /* multi */
} vm_threads_t;

/* Make e's thread state for e->cfg.threads (not single) and put its calls in place of
 * e->calls, which it runs with the engine held.  VMATCH_OK or VMATCH_ENOMEM (e unchanged). */
int vm_threads_create(vmatch_engine_t *e);
/* Drain what is left (callbacks run) and free. */
void vm_threads_destroy(vmatch_engine_t *e);

/* Take / give back a threaded engine.  Taking drains the inbox first. */
void vm_threads_take(vmatch_engine_t *e);
void vm_threads_give(vmatch_engine_t *e);

/* Around a call off the matching paths (classes, statistics, the profile): a threaded engine
 * is taken and given back, a single one costs a test.  Holding changes nothing such a call
 * reports.  The matching calls go through e->calls instead. */
static inline void vm_engine_take(const vmatch_engine_t *e)
{
    if (e->threads)
        vm_threads_take((vmatch_engine_t *)e);
}

static inline void vm_engine_give(const vmatch_engine_t *e)
{
    if (e->threads)
        vm_threads_give((vmatch_engine_t *)e);
}

/* Test hook: fn(arg, deferred_msg) runs with the engine held at the moment each operation
 * takes effect, on the thread that applies it: deferred_msg is the handle of a deferred
 * arrival a drain applies, NULL for the calling thread's own operation.  The order of these
 * calls is the serial order the results follow (tests/test_threads.c replays it). */
void vm_threads_set_hook(vmatch_engine_t *e, vm_lin_hook_fn *fn, void *arg);
/* Test hook: take the engine of a multi engine without draining its inbox (vm_threads_give
 * gives it back), so that arrivals defer and the inbox fills. */
void vm_threads_take_undrained(vmatch_engine_t *e);

#endif
