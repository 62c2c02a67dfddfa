/* ref.h -- the reference model of matching for the differential test.
 *
 * One ordered array per side, linear scans from the front, memmove on removal: the
 * single-list semantics of vmatch.h written as plainly as possible, so that any
 * disagreement with an engine points at the engine.  Speed is not a goal.  The class
 * argument of the API is absent on purpose: the caller never lets different classes match,
 * so a single list that ignores classes gives the answer every engine must give.
 */
#ifndef VM_REF_H
#define VM_REF_H

#include "vmatch.h"

#include <stddef.h>

typedef struct ref_entry {
    vmatch_bits_t bits, care; /* care is all ones on the UMQ side (unused there) */
    void *payload;
} ref_entry_t;

/* One side, oldest entry at index 0. */
typedef struct ref_list {
    ref_entry_t *v;
    size_t n, cap;
} ref_list_t;

typedef struct ref_model {
    ref_list_t prq, umq;
} ref_model_t;

/* Start with both queues empty. */
void ref_init(ref_model_t *r);
/* Free both queues; the model may be initialised again. */
void ref_fini(ref_model_t *r);

/* vmatch_post: VMATCH_MATCHED with the oldest matching UMQ message removed into *msg_out,
 * else VMATCH_QUEUED with (bits, care, req) appended to the PRQ. */
int ref_post(ref_model_t *r, vmatch_bits_t bits, vmatch_bits_t care, void *req, void **msg_out);
/* vmatch_arrive: VMATCH_MATCHED with the earliest matching PRQ receive removed into
 * *req_out, else VMATCH_QUEUED with the message appended to the UMQ. */
int ref_arrive(ref_model_t *r, vmatch_bits_t bits, void *msg, void **req_out);
/* vmatch_probe: VMATCH_MATCHED with the oldest matching UMQ message (removed when remove is
 * non-zero), else VMATCH_ENOTFOUND. */
int ref_probe(ref_model_t *r, vmatch_bits_t bits, vmatch_bits_t care, int remove,
              void **msg_out);
/* vmatch_cancel: VMATCH_OK when a PRQ entry with payload req was removed, else
 * VMATCH_ENOTFOUND. */
int ref_cancel(ref_model_t *r, const void *req);
/* vmatch_remove_unexpected: the same on the UMQ. */
int ref_remove_unexpected(ref_model_t *r, const void *msg);

/* Entries queued now on each side. */
static inline size_t ref_posted(const ref_model_t *r)
{
    return r->prq.n;
}
static inline size_t ref_unexpected(const ref_model_t *r)
{
    return r->umq.n;
}

#endif
