/* line.h -- the bucket line: one cache line holding the first VM_LINE_WAYS exact entries of
 * a bucket, for the policies that hash or index exact entries into buckets (hash: by the
 * match bits; unified: by the source).  The bucket's further entries go to an overflow
 * queue of the storage: one per bucket (queue), or one shared by a region of buckets
 * (hash's).  An entry goes into the line only while the bucket has nothing in overflow, so
 * the line's entries are older than those; among themselves their sequence numbers order
 * them.  A PRQ bucket holds exact receives (care all ones). */
#ifndef VM_LINE_H
#define VM_LINE_H

#include "queue.h"

#include <stdint.h>

#define VM_LINE_WAYS 2

/* The line is vmatch_inline.h's vmatch_line_t (bits, payloads -- NULL: the way is free,
 * payloads are never NULL --, sequence numbers, the bucket's entries in its overflow queue,
 * and the bucket's own overflow queue, NULL until its first overflow or when the owner keeps
 * one per region of buckets), so that the callers' inline calls and the library put and
 * take with the same code. */
typedef vmatch_line_t vm_line_t;

_Static_assert(sizeof(vm_line_t) == 64, "a bucket is one cache line");
_Static_assert(sizeof(((vm_line_t *)0)->payload) == VM_LINE_WAYS * sizeof(void *),
               "the published line has VM_LINE_WAYS ways");

/* vmatch_line_put and vmatch_line_take (vmatch_inline.h) put into and take from a line. */

/* The way of line s with the oldest entry whose bits agree with key where mask is set, or
 * -1.  Adds the ways in use to *inspected. */
static inline int vm_line_way(const vm_line_t *s, vmatch_bits_t key, vmatch_bits_t mask,
                              uint64_t *inspected)
{
    int w = -1;
    uint64_t n = 0; /* counted here, added once: *inspected may alias the line */
    for (int i = 0; i < VM_LINE_WAYS; i++)
        if (s->payload[i]) {
            n++;
            if (!((s->bits[i] ^ key) & mask) && (w < 0 || s->seq[i] < s->seq[w]))
                w = i;
        }
    *inspected += n;
    return w;
}

#endif
