/* shrink.c -- policy=hash: a growing table gives its memory back once it has stayed far
 * larger than its entries for a while, and not while bursts keep refilling it.
 *
 * Time is counted in operations, so that the rule is deterministic: the engine's sequence
 * numbers (one per post and arrival, inline calls included).  A side whose growing table
 * has more than VM_HASH_MIN buckets is watched in windows of hash.shrink operations (4096
 * by default), or hash.shrink / 1024 per bucket (4) for tables of more than 1024 buckets, at
 * most 8 x hash.shrink.
 * A window is busy when the side's count reached its mark, a sixteenth of what the table
 * holds at its load (at its start, or when an append brought it there), and quiet
 * otherwise; after QUIET quiet windows in a row the table shrinks to an eighth (so that it
 * is at most half full at its load), the pools give back what they kept, and it is watched
 * again at its new size.  A table that drained and then saw no operation keeps its size:
 * memory is bounded by the peak until traffic shows that the peak is past.
 *
 * A table that holds at most hash.short entries then gives them to the side's short vector
 * and goes back whole (short.c).
 *
 * The price of a shrink is paid when a burst comes back: the table grows again in fresh
 * memory, about 50 ns per bucket of the old table on the machine of docs/hash.md (page
 * faults and zeroing), so the windows grow with the table: a burst that comes back within
 * about 8 operations per bucket never pays it, up to tables of 8192 buckets; larger tables
 * keep windows of 8 x hash.shrink operations (32768), so that even the largest burst's
 * table goes back within 100 000 quiet operations (issue 35's memory target).
 *
 * What it costs the fast paths: an append whose sequence number passes the side's check
 * (the earlier end of the two sides' windows) is the library's, once per window, which
 * checks after the append succeeded (a call that fails changes nothing); while a window is
 * quiet so far, the append that brings the count to the mark is the library's, once per
 * window (the side's room is the mark until then).
 */
#include "hash_impl.h"

#define QUIET        2u
#define SHRINK_SHIFT 3 /* a shrink divides the buckets by 8 */
#define MARK_SHIFT   4 /* the mark: a sixteenth of the entries at which the table grows */
#define WINDOW_MAX   8 /* windows of at most 8 x hash.shrink operations (32768) */

void vm_hash_pair(vm_hash_t *h)
{
    h->base.env->paired[h->base.side] = &h->base;
}

/* The other side of the engine, when it is a hash side too. */
static vm_hash_t *peer_of(const vm_hash_t *h)
{
    vm_side_t *p = h->base.env->paired[!h->base.side];
    return p && p->ops == &vm_hash_policy ? (vm_hash_t *)p : NULL;
}

/* A growing table above the smallest size. */
static int watchable(const vm_hash_t *h)
{
    return h->grow != UINT64_MAX && !h->hc->buckets && h->hc->shrink && h->base.table &&
           h->base.nb > VM_HASH_MIN;
}

static uint64_t mark_of(const vm_hash_t *h)
{
    uint64_t m = vm_hash_grow_at(h, h->base.nb) >> MARK_SHIFT;
    return m > 2 ? m : 2;
}

/* Both sides' checks: the earlier end of their windows. */
static void publish(vm_hash_t *h)
{
    vm_hash_t *p = peer_of(h);
    uint64_t c = h->end;
    if (p && p->end < c)
        c = p->end;
    h->base.check = c;
    vm_hash_sync(h);
    if (p) {
        p->base.check = c;
        vm_hash_sync(p);
    }
}

void vm_hash_watch(vm_hash_t *h)
{
    if (!watchable(h))
        return;
    h->mark = mark_of(h);
    h->busy = 1; /* it just grew: a busy window */
    h->quiet = 0;
    if (h->end == UINT64_MAX) {
        h->end = 0; /* the window starts at the next check */
        publish(h);
    }
}

/* Side s's window is over at sequence number seq: judge it, shrink if it was the last of
 * QUIET quiet ones, start the next. */
static void window_over(vm_hash_t *s, uint64_t seq)
{
    if (s->end) { /* a window ran (0: the first one starts now) */
        if (s->mark && s->base.count >= s->mark)
            s->busy = 1;
        s->quiet = s->busy ? 0 : s->quiet + 1;
        if (s->quiet >= QUIET && vm_hash_to_short(s)) { /* few entries: no table at all */
            s->quiet = 0;
            s->shrinks++;
            vm_env_trim(s->base.env);
        } else if (s->quiet >= QUIET) {
            uint32_t nb = s->base.nb >> SHRINK_SHIFT;
            /* out of memory the table stays: the next quiet windows try again */
            if (vm_hash_resize(s, nb > VM_HASH_MIN ? nb : VM_HASH_MIN) == VMATCH_OK) {
                s->quiet = 0;
                s->shrinks++;
                vm_env_trim(s->base.env); /* and what the pools kept for the next burst */
            }
        }
    }
    s->busy = 0;
    if (!watchable(s)) {
        s->end = UINT64_MAX;
        s->mark = 0;
        return;
    }
    s->mark = mark_of(s);
    s->busy = s->base.count >= s->mark; /* a window that starts at the mark is busy */
    uint64_t n = s->hc->shrink, per = n * s->base.nb / 1024;
    per = per < n ? n : per > WINDOW_MAX * n ? WINDOW_MAX * n : per;
    s->end = seq + per;
}

void vm_hash_check(vm_hash_t *h, uint64_t seq)
{
    vm_hash_t *p = peer_of(h);
    if (h->end < seq)
        window_over(h, seq);
    if (p && p->end < seq)
        window_over(p, seq);
    publish(h);
}
