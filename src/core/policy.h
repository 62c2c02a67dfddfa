/* policy.h -- what every caller of a policy's side does the same way: the side's count, the
 * match and append of one side, and the generic exchange (search the other side, else
 * append to this one) for the policies without a fast path of their own.
 *
 * Calls go one way: the engine (or a policy that nests another, unified's point-to-point
 * side) calls these; they call the policy and the storage, never back into the engine.
 */
#ifndef VM_POLICY_H
#define VM_POLICY_H

#include "queue.h"

/* Count an exchange's result on its sides (vm_side_t.len): a match took one entry of search, a
 * queued entry is one more on queue, an error changed nothing.  Returns rc. */
static inline int vm_side_counted(vm_side_t *search, vm_side_t *queue, int rc)
{
    if (rc == VMATCH_MATCHED)
        search->len--;
    else if (rc == VMATCH_QUEUED)
        queue->len++;
    return rc;
}

/* The oldest entry of side p that matches (storage find rules), removed when remove is set:
 * straight to the storage when the policy keeps one queue.  Counts nothing.  Returns 1 with
 * *payload, or 0. */
static inline int vm_side_find(vm_side_t *p, vmatch_bits_t key, vmatch_bits_t keycare,
                               uint32_t cls, int remove, void **payload, uint64_t *inspected)
{
    if (p->sole)
        return vm_queue_match(p->sole, key, keycare, remove, payload, inspected);
    return p->ops->match(p, key, keycare, cls, remove, payload, inspected);
}

/* Append an entry to side p with call c's class and sequence number: straight to the
 * storage while the policy keeps one queue and need not see the append.  Counts nothing.
 * VMATCH_OK, or the error with p as it was. */
static inline int vm_side_put(vm_side_t *p, vmatch_bits_t bits, vmatch_bits_t care,
                              void *payload, const vm_call_t *c)
{
    if (p->sole && p->sole->len + 1 < p->sole_until)
        return p->sole->ops->append(p->sole, bits, care, payload, c->seq);
    return p->ops->append(p, bits, care, c->cls, payload, c->seq);
}

/* vm_side_find on a side that may be empty, the removal counted. */
static inline int vm_side_match(vm_side_t *p, vmatch_bits_t key, vmatch_bits_t keycare,
                                uint32_t cls, int remove, void **payload, uint64_t *inspected)
{
    if (!p->len) /* most searches of a side with nothing queued */
        return 0;
    int found = vm_side_find(p, key, keycare, cls, remove, payload, inspected);
    p->len -= (uint64_t)(found && remove);
    return found;
}

/* vm_side_put, counted. */
static inline int vm_side_append(vm_side_t *p, vmatch_bits_t bits, vmatch_bits_t care,
                                 void *payload, const vm_call_t *c)
{
    int rc = vm_side_put(p, bits, care, payload, c);
    if (rc >= 0)
        p->len++;
    return rc;
}

/* Remove the entry of side p with this payload, counted.  Returns 1, or 0. */
static inline int vm_side_remove(vm_side_t *p, const void *payload, uint64_t *inspected)
{
    if (!p->len || !p->ops->remove_payload(p, payload, inspected))
        return 0;
    p->len--;
    return 1;
}

/* The generic exchange (vm_policy_t.exchange's contract, counted): search's oldest match,
 * else the append of the entry to queue.  For the policies without an exchange of their own
 * and for the cases a policy's exchange leaves off its fast path. */
static inline int vm_exchange(vm_side_t *search, vm_side_t *queue, vmatch_bits_t bits,
                              vmatch_bits_t care, void *payload, vm_call_t *c)
{
    if (vm_side_match(search, bits, care, c->cls, 1, c->out, &c->inspected))
        return VMATCH_MATCHED;
    int rc = vm_side_append(queue, bits, care, payload, c);
    return rc < 0 ? rc : VMATCH_QUEUED;
}

/* An exchange on nested sides: the policy's own when it has one. */
static inline int vm_side_exchange(vm_side_t *search, vm_side_t *queue, vmatch_bits_t bits,
                                   vmatch_bits_t care, void *payload, vm_call_t *c)
{
    if (search->ops->exchange)
        return search->ops->exchange(c, bits, care, search, payload, queue);
    return vm_exchange(search, queue, bits, care, payload, c);
}

#endif
