/* ref.c -- the reference model (see ref.h). */
#include "ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ref_init(ref_model_t *r)
{
    memset(r, 0, sizeof *r);
}

void ref_fini(ref_model_t *r)
{
    free(r->prq.v);
    free(r->umq.v);
    memset(r, 0, sizeof *r);
}

/* Append at the tail.  The model has no failure path of its own: running out of memory in
 * a test harness is fatal, not a case to compare. */
static void list_push(ref_list_t *l, vmatch_bits_t bits, vmatch_bits_t care, void *payload)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        ref_entry_t *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "ref: out of memory\n");
            abort();
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].bits = bits;
    l->v[l->n].care = care;
    l->v[l->n].payload = payload;
    l->n++;
}

/* Remove index i, keeping the order of the rest. */
static void list_erase(ref_list_t *l, size_t i)
{
    memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
    l->n--;
}

/* Index of the oldest UMQ message matching the receive (bits, care), or n. */
static size_t umq_find(const ref_list_t *l, vmatch_bits_t bits, vmatch_bits_t care)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        if (((l->v[i].bits ^ bits) & care) == 0)
            break;
    return i;
}

/* Index of the first entry whose payload is p, or n. */
static size_t list_find_payload(const ref_list_t *l, const void *p)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        if (l->v[i].payload == p)
            break;
    return i;
}

int ref_post(ref_model_t *r, vmatch_bits_t bits, vmatch_bits_t care, void *req, void **msg_out)
{
    size_t i = umq_find(&r->umq, bits, care);
    if (i < r->umq.n) {
        *msg_out = r->umq.v[i].payload;
        list_erase(&r->umq, i);
        return VMATCH_MATCHED;
    }
    list_push(&r->prq, bits, care, req);
    return VMATCH_QUEUED;
}

int ref_arrive(ref_model_t *r, vmatch_bits_t bits, void *msg, void **req_out)
{
    size_t i;
    for (i = 0; i < r->prq.n; i++) {
        if (((bits ^ r->prq.v[i].bits) & r->prq.v[i].care) == 0) {
            *req_out = r->prq.v[i].payload;
            list_erase(&r->prq, i);
            return VMATCH_MATCHED;
        }
    }
    list_push(&r->umq, bits, ~(vmatch_bits_t)0, msg);
    return VMATCH_QUEUED;
}

int ref_probe(ref_model_t *r, vmatch_bits_t bits, vmatch_bits_t care, int remove,
              void **msg_out)
{
    size_t i = umq_find(&r->umq, bits, care);
    if (i == r->umq.n)
        return VMATCH_ENOTFOUND;
    *msg_out = r->umq.v[i].payload;
    if (remove)
        list_erase(&r->umq, i);
    return VMATCH_MATCHED;
}

int ref_cancel(ref_model_t *r, const void *req)
{
    size_t i = list_find_payload(&r->prq, req);
    if (i == r->prq.n)
        return VMATCH_ENOTFOUND;
    list_erase(&r->prq, i);
    return VMATCH_OK;
}

int ref_remove_unexpected(ref_model_t *r, const void *msg)
{
    size_t i = list_find_payload(&r->umq, msg);
    if (i == r->umq.n)
        return VMATCH_ENOTFOUND;
    list_erase(&r->umq, i);
    return VMATCH_OK;
}
