/* levels.c -- the collective part of policy=unified: the profiling queue, each class's
 * profile (thesis Algorithm 5.1) and the levels of queues its operation gets (the search of
 * Algorithm 5.2).  unified.h says why the search order keeps MPI's. */
#include "unified.h"

#include <string.h>

/* ---- small helpers ---- */

/* x mod d for a 32-bit x without a division, magic = UINT64_MAX / d + 1 (Lemire, Kaser and
 * Kurz 2019); exact for every 32-bit x and d. */
static inline uint32_t fastmod(uint32_t x, uint64_t magic, uint32_t d)
{
    return (uint32_t)(((unsigned __int128)(magic * x) * d) >> 64);
}

static vm_mem_t *mem_of(vm_unified_t *s)
{
    return &s->base.env->mem;
}

/* The operation of class cls; 0 for an id vmatch_coll_class did not hand out (they share
 * the levels of operation 0, which is safe: classes never match each other). */
static uint32_t op_of(const vm_unified_t *s, uint32_t cls)
{
    const vm_env_t *env = s->base.env;
    return cls <= env->nclasses ? env->classes[cls - 1].op : 0;
}

/* Room in cls[] for class id cls.  OK or ENOMEM. */
static int track(vm_unified_t *s, uint32_t cls)
{
    if (cls < s->ncls)
        return VMATCH_OK;
    uint32_t n = s->ncls ? s->ncls : 16;
    while (n <= cls)
        n *= 2;
    vm_unified_class_t *grown = vm_mem_calloc(mem_of(s), n * sizeof *grown);
    if (!grown)
        return VMATCH_ENOMEM;
    if (s->ncls)
        memcpy(grown, s->cls, s->ncls * sizeof *grown);
    vm_mem_free(mem_of(s), s->cls, s->ncls * sizeof *grown);
    s->cls = grown;
    s->ncls = n;
    return VMATCH_OK;
}

/* ---- profiling ---- */

/* The class's first call is over: it wants as many queues as entries its searches compared
 * on average (the thesis: then a search compares about one). */
static void finish_profile(vm_unified_t *s, vm_unified_class_t *c)
{
    uint64_t avg = c->searches ? (c->inspected + c->searches - 1) / c->searches : 1;
    c->wanted = (uint32_t)(avg < 1 ? 1 : avg > UINT32_MAX ? UINT32_MAX : avg);
    c->state = UN_PROFILED;
    s->profiling--;
}

/* An entry of class c (NULL: of a class not known, a cancel's) left the profiling queue.
 * A class's first call ends when its last entry there leaves; when the queue empties, every
 * class still profiling ends too (a cancel may have taken its last entry unseen).  An empty
 * profiling queue is given back. */
static void left_pq(vm_unified_t *s, vm_unified_class_t *c)
{
    if (c && c->in_pq && --c->in_pq == 0 && c->state == UN_PROFILING)
        finish_profile(s, c);
    if (s->pq->len)
        return;
    for (uint32_t i = 0; s->profiling && i < s->ncls; i++)
        if (s->cls[i].state == UN_PROFILING)
            finish_profile(s, &s->cls[i]);
    for (uint32_t i = 0; i < s->ncls; i++)
        s->cls[i].in_pq = 0;
    s->pq->ops->destroy(s->pq);
    s->pq = NULL;
}

/* ---- levels ---- */

static vm_unified_group_t *group_of(vm_unified_t *s, const vm_unified_class_t *c)
{
    return c->group ? s->groups[c->group - 1] : NULL;
}

/* The group of operation op, made when make is set.  NULL when there is none (or no
 * memory). */
static uint32_t find_group(vm_unified_t *s, uint32_t op, int make)
{
    for (uint32_t i = 0; i < s->ngroups; i++)
        if (s->groups[i]->op == op)
            return i + 1;
    if (!make)
        return 0;
    if (s->ngroups == s->groups_cap) {
        uint32_t cap = s->groups_cap ? 2 * s->groups_cap : 4;
        vm_unified_group_t **grown = vm_mem_alloc(mem_of(s), cap * sizeof *grown);
        if (!grown)
            return 0;
        if (s->ngroups)
            memcpy(grown, s->groups, s->ngroups * sizeof *grown);
        vm_mem_free(mem_of(s), s->groups, s->groups_cap * sizeof *grown);
        s->groups = grown;
        s->groups_cap = cap;
    }
    vm_unified_group_t *g = vm_mem_calloc(mem_of(s), sizeof *g);
    if (!g)
        return 0;
    g->op = op;
    s->groups[s->ngroups++] = g;
    return s->ngroups;
}

/* Algorithm 5.1 for a profiled class: its operation opens a level of the queues the class
 * wants when that is more than the newest level has, as far as the cap leaves room (the
 * thesis opens none when the whole want does not fit; taking what fits keeps the cap and
 * uses it).  At the cap, or at VMATCH_MAX_LEVELS, the class uses the levels there are, or
 * the profiling queue when its operation has none.  OK or ENOMEM (nothing changed). */
static int place(vm_unified_t *s, vm_unified_class_t *c, uint32_t cls)
{
    uint32_t op = op_of(s, cls), room = s->cap - s->queues;
    uint32_t nq = c->wanted < room ? c->wanted : room;
    uint32_t gi = find_group(s, op, 0);
    vm_unified_group_t *g = gi ? s->groups[gi - 1] : NULL;
    uint32_t newest = g && g->nlevels ? g->level[g->nlevels - 1].nq : 0;
    if (nq > newest && (!g || g->nlevels < VMATCH_MAX_LEVELS)) {
        if (!g) {
            gi = find_group(s, op, 1);
            if (!gi)
                return VMATCH_ENOMEM;
            g = s->groups[gi - 1];
        }
        g->level[g->nlevels++] = (vm_unified_level_t){.nq = nq, .magic = UINT64_MAX / nq + 1};
        s->queues += nq;
    }
    c->group = gi;
    c->state = UN_PLACED;
    return VMATCH_OK;
}

static uint32_t src_of(const vm_unified_t *s, vmatch_bits_t bits)
{
    return (uint32_t)((bits >> s->src_shift) & s->src_mask);
}

/* Append to the newest level of g.  OK or an error (the level as it was). */
static int level_append(vm_unified_t *s, vm_unified_level_t *l, vmatch_bits_t bits,
                        vmatch_bits_t care, void *payload, uint64_t seq)
{
    if (!l->q && !(l->q = vm_mem_calloc(mem_of(s), l->nq * sizeof *l->q)))
        return VMATCH_ENOMEM;
    vm_queue_t **q = (care & s->src_care) != s->src_care
                         ? &l->wild
                         : &l->q[fastmod(src_of(s, bits), l->magic, l->nq)];
    int rc = vm_queue_append_new(s->base.env, s->base.side, q, bits, care, payload, seq);
    if (rc == VMATCH_OK)
        l->len++;
    else if (!l->len) {
        vm_mem_free(mem_of(s), l->q, l->nq * sizeof *l->q);
        l->q = NULL;
    }
    return rc;
}

/* After a removal from *q of level l: an empty queue is destroyed, an empty level gives
 * back its queue array. */
static void level_removed(vm_unified_t *s, vm_unified_level_t *l, vm_queue_t **q)
{
    if (!(*q)->len) {
        (*q)->ops->destroy(*q);
        *q = NULL;
    }
    if (--l->len == 0) {
        vm_mem_free(mem_of(s), l->q, l->nq * sizeof *l->q);
        l->q = NULL;
    }
}

/* Keep in *best the older of the hits so far and the first match in q. */
static void consider(vm_queue_t **q, vmatch_bits_t key, vmatch_bits_t keycare, vm_hit_t *best,
                     vm_queue_t ***where, uint64_t *inspected)
{
    vm_hit_t hit;
    if (*q && (*q)->len && (*q)->ops->find(*q, key, keycare, &hit, inspected) &&
        (!*where || hit.seq < best->seq)) {
        *best = hit;
        *where = q;
    }
}

/* The oldest match in level l.  A search that knows the source looks in that source's queue
 * (and, for an arrival, in the wildcard receives); one that does not looks in every queue. */
static int level_match(vm_unified_t *s, vm_unified_level_t *l, vmatch_bits_t key,
                       vmatch_bits_t keycare, int remove, void **payload, uint64_t *inspected)
{
    int arrival = s->base.side == VM_PRQ;
    vm_queue_t **where = NULL;
    vm_hit_t best;
    if (arrival || (keycare & s->src_care) == s->src_care) {
        vm_queue_t **q = &l->q[fastmod(src_of(s, key), l->magic, l->nq)];
        if (!l->wild) { /* one queue to look in: its own take, no sequence numbers */
            if (!*q || !vm_queue_match(*q, key, keycare, remove, payload, inspected))
                return 0;
            if (remove)
                level_removed(s, l, q);
            return 1;
        }
        consider(q, key, keycare, &best, &where, inspected);
        consider(&l->wild, key, keycare, &best, &where, inspected);
    } else {
        for (uint32_t i = 0; i < l->nq; i++)
            consider(&l->q[i], key, keycare, &best, &where, inspected);
    }
    if (!where)
        return 0;
    *payload = best.payload;
    if (remove) {
        (*where)->ops->remove(*where, &best);
        level_removed(s, l, where);
    }
    return 1;
}

/* ---- the collective part of the policy ---- */

int vm_unified_append(vm_unified_t *s, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                      void *payload, uint64_t seq)
{
    vm_unified_class_t *c = NULL;
    if (cls < VM_UNIFIED_MAX_CLASSES) {
        int rc = track(s, cls);
        if (rc < 0)
            return rc;
        c = &s->cls[cls];
        if (c->state == UN_PROFILED && (rc = place(s, c, cls)) < 0)
            return rc;
        vm_unified_group_t *g = group_of(s, c);
        if (c->state == UN_PLACED && g && g->nlevels)
            return level_append(s, &g->level[g->nlevels - 1], bits, care, payload, seq);
    }
    int rc = vm_queue_append_new(s->base.env, s->base.side, &s->pq, bits, care, payload, seq);
    if (rc < 0 || !c)
        return rc;
    c->in_pq++;
    if (c->state == UN_NEW) {
        c->state = UN_PROFILING;
        s->profiling++;
    }
    return VMATCH_OK;
}

int vm_unified_match(vm_unified_t *s, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                     int remove, void **payload, uint64_t *inspected)
{
    vm_unified_class_t *c = cls < s->ncls ? &s->cls[cls] : NULL;
    if (!c && cls < VM_UNIFIED_MAX_CLASSES)
        return 0; /* never queued on this side */
    if (s->pq && (!c || c->in_pq)) {
        uint64_t before = *inspected;
        int found = vm_queue_match(s->pq, key, keycare, remove, payload, inspected);
        if (c && c->state == UN_PROFILING) {
            c->searches++;
            c->inspected += *inspected - before;
        }
        if (found && remove)
            left_pq(s, c);
        if (found)
            return 1;
    }
    vm_unified_group_t *g = c ? group_of(s, c) : NULL;
    for (uint32_t i = 0; g && i < g->nlevels; i++)
        if (g->level[i].len &&
            level_match(s, &g->level[i], key, keycare, remove, payload, inspected))
            return 1;
    return 0;
}

int vm_unified_remove(vm_unified_t *s, const void *payload, uint64_t *inspected)
{
    vm_hit_t hit;
    if (s->pq && s->pq->ops->find_payload(s->pq, payload, &hit, inspected)) {
        s->pq->ops->remove(s->pq, &hit);
        left_pq(s, NULL);
        return 1;
    }
    for (uint32_t gi = 0; gi < s->ngroups; gi++) {
        vm_unified_group_t *g = s->groups[gi];
        for (uint32_t li = 0; li < g->nlevels; li++) {
            vm_unified_level_t *l = &g->level[li];
            for (uint32_t i = 0; l->len && i <= l->nq; i++) {
                vm_queue_t **q = i < l->nq ? &l->q[i] : &l->wild;
                if (*q && (*q)->ops->find_payload(*q, payload, &hit, inspected)) {
                    (*q)->ops->remove(*q, &hit);
                    level_removed(s, l, q);
                    return 1;
                }
            }
        }
    }
    return 0;
}

void vm_unified_free_levels(vm_unified_t *s)
{
    for (uint32_t gi = 0; gi < s->ngroups; gi++) {
        vm_unified_group_t *g = s->groups[gi];
        for (uint32_t li = 0; li < g->nlevels; li++) {
            vm_unified_level_t *l = &g->level[li];
            for (uint32_t i = 0; l->q && i < l->nq; i++)
                if (l->q[i])
                    l->q[i]->ops->destroy(l->q[i]);
            if (l->wild)
                l->wild->ops->destroy(l->wild);
            if (l->q)
                vm_mem_free(mem_of(s), l->q, l->nq * sizeof *l->q);
        }
        vm_mem_free(mem_of(s), g, sizeof *g);
    }
    vm_mem_free(mem_of(s), s->groups, s->groups_cap * sizeof *s->groups);
}
