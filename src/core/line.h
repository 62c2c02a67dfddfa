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

typedef struct vm_line {
    vmatch_bits_t bits[VM_LINE_WAYS];
    void *payload[VM_LINE_WAYS]; /* NULL: the way is free (payloads are never NULL) */
    uint64_t seq[VM_LINE_WAYS];
    uint64_t over;     /* the bucket's entries in its overflow queue */
    vm_queue_t *queue; /* the bucket's own overflow queue, NULL until its first overflow (or
                          when the owner keeps one per region of buckets) */
} vm_line_t;

_Static_assert(sizeof(vm_line_t) == 64, "a bucket is one cache line");

/* Put an entry into a free way of line s when the bucket has nothing in overflow (else the
 * entry must go after those): 1 when it did, 0 when not. */
static inline int vm_line_put(vm_line_t *s, vmatch_bits_t bits, void *payload, uint64_t seq)
{
    _Static_assert(VM_LINE_WAYS == 2, "the ways are tested without branches, two of them");
    unsigned used0 = s->payload[0] != NULL, used1 = s->payload[1] != NULL;
    if ((s->over != 0) | (used0 & used1)) /* one branch: which way is free varies */
        return 0;
    unsigned w = used0;
    s->bits[w] = bits;
    s->payload[w] = payload;
    s->seq[w] = seq;
    return 1;
}

/* Take the older of the line's ways that hold exactly these bits: 1 with *payload, or 0;
 * *compared gets the ways in use (the entries inspected). */
static inline int vm_line_take(vm_line_t *s, vmatch_bits_t bits, void **payload,
                               unsigned *compared)
{
    /* Which way holds the entry is data, not a pattern a branch predictor learns: the ways
     * are compared with flags and the older match picked with a conditional move. */
    unsigned used0 = s->payload[0] != NULL, used1 = s->payload[1] != NULL;
    unsigned m = (used0 & (s->bits[0] == bits)) | (used1 & (s->bits[1] == bits)) << 1;
    *compared = used0 + used1;
    if (!m) /* one branch on both ways: the way that holds the entry varies */
        return 0;
    unsigned w = (m >> 1) & (((m & 1) ^ 1) | (s->seq[1] < s->seq[0]));
    *payload = s->payload[w];
    s->payload[w] = NULL;
    return 1;
}

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
