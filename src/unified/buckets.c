/* buckets.c -- the queues of one level of policy=unified: nq cache-line buckets indexed by
 * source rank, each with an overflow queue of the storage, and a wildcard queue.  The exact
 * calls of a known source take levels.c's inline paths; this file has the rest. */
#include "unified.h"

#include <string.h>

static vm_mem_t *mem_of(vm_unified_t *s)
{
    return &s->base.env->mem;
}

int vm_unified_level_append(vm_unified_t *s, vm_unified_level_t *l, vmatch_bits_t bits,
                            vmatch_bits_t care, void *payload, uint64_t seq)
{
    vm_env_t *env = s->base.env;
    if ((care & s->src_care) != s->src_care) {
        int rc = vm_queue_append_new(env, VM_PRQ, &l->wild, bits, care, payload, seq);
        l->len += rc == VMATCH_OK;
        return rc;
    }
    if (!l->b) { /* a level that gave its buckets back when it drained */
        l->b = vm_mem_alloc_line(mem_of(s), l->nq * sizeof *l->b);
        if (!l->b)
            return VMATCH_ENOMEM;
        memset(l->b, 0, l->nq * sizeof *l->b);
    }
    vm_line_t *b = vm_unified_bucket(s, l, bits);
    if ((s->base.side == VM_UMQ || care == ~(vmatch_bits_t)0) &&
        vmatch_line_put(b, bits, payload, seq)) {
        l->len++;
        return VMATCH_OK;
    }
    int rc = vm_queue_append_new(env, s->base.side, &b->queue, bits, care, payload, seq);
    if (rc == VMATCH_OK) {
        b->fill += VMATCH_LINE_OVER1;
        l->len++;
        l->over++;
    } else if (!l->len) { /* the buckets were made for this entry */
        vm_unified_level_release(s, l);
    }
    return rc;
}

/* A candidate of a search: a way of a bucket, or a hit in a queue. */
typedef struct cand {
    vm_line_t *b; /* the bucket it is in (NULL: the wildcard queue) */
    int way;      /* its way, or -1: in queue q at hit */
    vm_queue_t *q;
    vm_hit_t hit;
    uint64_t seq;
} cand_t;

/* The oldest match of bucket b into c (when older than what c holds): 1 when it found one.
 * The ways are older than the overflow queue. */
static int bucket_first(vm_unified_t *s, vm_line_t *b, vmatch_bits_t key, vmatch_bits_t keycare,
                        cand_t *c, int *found, uint64_t *inspected)
{
    vmatch_bits_t m = s->base.side == VM_PRQ ? ~(vmatch_bits_t)0 : keycare;
    int w = vm_line_way(b, key, m, inspected);
    vm_hit_t hit;
    uint64_t seq;
    if (w >= 0)
        seq = b->seq[w];
    else if (vm_line_over(b) && b->queue->ops->find(b->queue, key, keycare, &hit, inspected))
        seq = hit.seq;
    else
        return 0;
    if (*found && c->seq <= seq)
        return 1;
    *c = (cand_t){.b = b, .way = w, .q = w >= 0 ? NULL : b->queue, .seq = seq};
    if (w < 0)
        c->hit = hit;
    *found = 1;
    return 1;
}

int vm_unified_level_match_any(vm_unified_t *s, vm_unified_level_t *l, vmatch_bits_t key,
                               vmatch_bits_t keycare, int remove, void **payload,
                               uint64_t *inspected)
{
    cand_t c;
    int found = 0;
    if (!l->b) { /* given back: the level holds wildcard receives alone */
    } else if (s->base.side == VM_PRQ || (keycare & s->src_care) == s->src_care) {
        bucket_first(s, vm_unified_bucket(s, l, key), key, keycare, &c, &found, inspected);
    } else {
        for (uint32_t i = 0; i < l->nq; i++)
            bucket_first(s, &l->b[i], key, keycare, &c, &found, inspected);
    }
    vm_hit_t hit;
    if (l->wild && l->wild->len && l->wild->ops->find(l->wild, key, keycare, &hit, inspected) &&
        (!found || hit.seq < c.seq)) {
        c = (cand_t){.b = NULL, .way = -1, .q = l->wild, .hit = hit, .seq = hit.seq};
        found = 1;
    }
    if (!found)
        return 0;
    *payload = c.way >= 0 ? c.b->payload[c.way] : c.hit.payload;
    if (!remove)
        return 1;
    if (c.way >= 0) {
        vm_line_drop(c.b, c.way);
    } else {
        c.q->ops->remove(c.q, &c.hit);
        if (c.b) {
            c.b->fill -= VMATCH_LINE_OVER1;
            l->over--;
        }
    }
    if (--l->len == 0)
        vm_unified_level_release(s, l);
    return 1;
}

int vm_unified_level_remove(vm_unified_t *s, vm_unified_level_t *l, const void *payload,
                            uint64_t *inspected)
{
    vm_hit_t hit;
    int found = 0;
    if (l->wild && l->wild->len &&
        l->wild->ops->find_payload(l->wild, payload, &hit, inspected)) {
        l->wild->ops->remove(l->wild, &hit);
        found = 1;
    }
    for (uint32_t i = 0; !found && l->b && i < l->nq; i++) {
        vm_line_t *b = &l->b[i];
        for (int w = 0; !found && w < (int)vm_line_used(b); w++)
            if (b->payload[w] == payload) {
                vm_line_drop(b, w);
                found = 1;
            }
        if (!found && vm_line_over(b) &&
            b->queue->ops->find_payload(b->queue, payload, &hit, inspected)) {
            b->queue->ops->remove(b->queue, &hit);
            b->fill -= VMATCH_LINE_OVER1;
            l->over--;
            found = 1;
        }
    }
    if (found && --l->len == 0)
        vm_unified_level_release(s, l);
    return found;
}

/* Give back the buckets and queues of a level without entries, or of any level (all). */
static void drop(vm_unified_t *s, vm_unified_level_t *l)
{
    for (uint32_t i = 0; l->b && i < l->nq; i++)
        if (l->b[i].queue)
            l->b[i].queue->ops->destroy(l->b[i].queue);
    if (l->b)
        vm_mem_free_line(mem_of(s), l->b, l->nq * sizeof *l->b);
    if (l->wild)
        l->wild->ops->destroy(l->wild);
    l->b = NULL;
    l->wild = NULL;
}

void vm_unified_level_release(vm_unified_t *s, vm_unified_level_t *l)
{
    if (!l->len && l->nq > VM_UNIFIED_KEEP)
        drop(s, l);
}

void vm_unified_level_free(vm_unified_t *s, vm_unified_level_t *l)
{
    drop(s, l);
}

uint64_t vm_unified_level_queues(const vm_unified_level_t *l)
{
    uint64_t n = l->wild != NULL;
    for (uint32_t i = 0; l->b && i < l->nq; i++)
        n += 1 + (l->b[i].queue != NULL);
    return n;
}
