/* line.h -- the bucket line: one cache line holding the first VM_LINE_WAYS exact entries of
 * a bucket, for the policies that hash or index exact entries into buckets (hash: by the
 * match bits; unified: by the source).  The bucket's further entries go on past the line:
 * unified's into an overflow queue of the storage (queue), hash's into overflow lines
 * chained through the same field (src/hash/table.c).  An entry goes into the line only while
 * the bucket has nothing in overflow, so the line's entries are older than those; among
 * themselves their sequence numbers order them.  A PRQ bucket holds exact receives (care
 * all ones). */
#ifndef VM_LINE_H
#define VM_LINE_H

#include "queue.h"

#include <stdint.h>

#define VM_LINE_WAYS 2

/* The line is vmatch_inline.h's vmatch_line_t (bits, payloads -- NULL: the way is free,
 * payloads are never NULL --, sequence numbers, the bucket's entries in overflow, and the
 * owner's link to them: unified's overflow queue, hash's first overflow line, NULL until the
 * first overflow), so that the callers' inline calls and the library put and
 * take with the same code. */
typedef vmatch_line_t vm_line_t;

_Static_assert(sizeof(vm_line_t) == 64, "a bucket is one cache line");
_Static_assert(sizeof(((vm_line_t *)0)->payload) == VM_LINE_WAYS * sizeof(void *),
               "the published line has VM_LINE_WAYS ways");

/* vmatch_line_put and vmatch_line_take (vmatch_inline.h) put into and take from a line.
 * The ways in use come first, oldest first; fill counts them and the bucket's entries in
 * overflow. */

/* The ways of line s in use. */
static inline uint32_t vm_line_used(const vm_line_t *s)
{
    return (uint32_t)s->fill;
}

/* The entries of line s's bucket in overflow. */
static inline uint32_t vm_line_over(const vm_line_t *s)
{
    return (uint32_t)(s->fill >> 32);
}

/* Take way w (in use) out of line s: the ways after it move up, so that those in use stay
 * first and in order. */
static inline void vm_line_drop(vm_line_t *s, int w)
{
    for (int i = w; i + 1 < VM_LINE_WAYS; i++) {
        s->bits[i] = s->bits[i + 1];
        s->payload[i] = s->payload[i + 1];
        s->seq[i] = s->seq[i + 1];
    }
    s->payload[VM_LINE_WAYS - 1] = NULL;
    s->fill--;
}

/* The first (so the oldest) way of line s whose bits agree with key where mask is set, or
 * -1.  Adds the entries inspected to *inspected: the ways up to the match, or all in use. */
static inline int vm_line_way(const vm_line_t *s, vmatch_bits_t key, vmatch_bits_t mask,
                              uint64_t *inspected)
{
    uint32_t n = vm_line_used(s);
    for (uint32_t i = 0; i < n; i++)
        if (!((s->bits[i] ^ key) & mask)) {
            *inspected += i + 1;
            return (int)i;
        }
    *inspected += n;
    return -1;
}

#endif
