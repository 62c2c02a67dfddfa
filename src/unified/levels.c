/* levels.c -- the collective part of policy=unified: the profiling queue, each class's
 * profile (thesis Algorithm 5.1) and the levels of queues its operation gets (the search of
 * Algorithm 5.2).  unified.h says why the search order keeps MPI's. */
#include "unified.h"

#include <string.h>

/* ---- small helpers ---- */

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

/* The class's first call is over.  It wants as many queues as entries its searches compared
 * on average (the thesis: then a search compares about one), and at least enough that its
 * largest burst fits the lines of its buckets (a bucket's line holds VM_LINE_WAYS
 * entries; past them, entries go to the bucket's overflow queue, a slower path). */
static void finish_profile(vm_unified_t *s, vm_unified_class_t *c)
{
    uint64_t avg = c->searches ? (c->inspected + c->searches - 1) / c->searches : 1;
    uint64_t fit = (c->peak + VM_LINE_WAYS - 1) / VM_LINE_WAYS;
    uint64_t want = avg > fit ? avg : fit;
    c->wanted = (uint32_t)(want < 1 ? 1 : want > UINT32_MAX ? UINT32_MAX : want);
    c->state = UN_PROFILED;
    s->profiling--;
}

/* An entry of class c (NULL: of a class not known, a cancel's) left the profiling queue.
 * A class's first call ends when its last entry there leaves; when the queue empties, every
 * class still profiling ends too (a cancel may have taken its last entry unseen). */
static void left_pq(vm_unified_t *s, vm_unified_class_t *c)
{
    if (c && c->in_profq && --c->in_profq == 0 && c->state == UN_PROFILING)
        finish_profile(s, c);
    if (s->profq->len || !s->profiling)
        return;
    for (uint32_t i = 0; i < s->ncls; i++) {
        if (s->cls[i].state == UN_PROFILING)
            finish_profile(s, &s->cls[i]);
        s->cls[i].in_profq = 0;
    }
}

/* ---- levels ---- */

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

/* Open a level of nq queues at the end of operation op's group (made when it has none).
 * Returns the group, or NULL when memory runs out (nothing changed). */
static vm_unified_group_t *open_level(vm_unified_t *s, uint32_t op, uint32_t nq)
{
    uint32_t gi = find_group(s, op, 0);
    vm_line_t *b = vm_mem_alloc_line(mem_of(s), nq * sizeof *b);
    if (!b || (!gi && !(gi = find_group(s, op, 1)))) {
        if (b)
            vm_mem_free_line(mem_of(s), b, nq * sizeof *b);
        return NULL;
    }
    memset(b, 0, nq * sizeof *b);
    vm_unified_group_t *g = s->groups[gi - 1];
    g->level[g->nlevels++] =
        (vm_unified_level_t){.b = b, .nq = nq, .magic = UINT64_MAX / nq + 1};
    s->queues += nq;
    return g;
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
    if (nq > newest && (!g || g->nlevels < VMATCH_MAX_LEVELS) && !(g = open_level(s, op, nq)))
        return VMATCH_ENOMEM;
    c->group = g;
    c->state = UN_PLACED;
    return VMATCH_OK;
}

/* The overflow queues of g's newest level l hold more than an entry per 8 buckets: its
 * classes bring more at once than their profiles saw (peers running further ahead), so g
 * opens a level of twice the queues, as far as the cap leaves room (the thesis opens a level
 * when a new profile asks for more queues). */
static void grow(vm_unified_t *s, vm_unified_group_t *g, vm_unified_level_t *l)
{
    uint32_t room = s->cap - s->queues, nq = l->nq < room / 2 ? 2 * l->nq : room;
    if (nq > l->nq && g->nlevels < VMATCH_MAX_LEVELS)
        open_level(s, g->op, nq); /* without memory, the level stays as it is */
}

/* The oldest match in level l (which holds entries).  An exact search of a known source
 * reads its bucket's line, then its overflow queue; the rest is buckets.c's. */
static inline int level_match(vm_unified_t *s, vm_unified_level_t *l, vmatch_bits_t key,
                              vmatch_bits_t keycare, int remove, void **payload,
                              uint64_t *inspected)
{
    int prq = s->base.side == VM_PRQ;
    if ((l->wild && l->wild->len) || (!prq && (keycare & s->src_care) != s->src_care))
        return vm_unified_level_match_any(s, l, key, keycare, remove, payload, inspected);
    vm_line_t *b = vm_unified_bucket(s, l, key);
    int w = vm_line_way(b, key, prq ? ~(vmatch_bits_t)0 : keycare, inspected);
    if (w >= 0) {
        *payload = b->payload[w];
        if (remove)
            vm_line_drop(b, w);
    } else if (!vm_line_over(b) ||
               !vm_queue_match(b->queue, key, keycare, remove, payload, inspected)) {
        return 0;
    } else if (remove) {
        b->fill -= VMATCH_LINE_OVER1;
        l->over--;
    }
    if (remove && --l->len == 0 && l->nq > VM_UNIFIED_KEEP)
        vm_unified_level_release(s, l);
    return 1;
}

/* ---- the collective part of the policy ---- */

/* An append that is not to an existing queue of a placed class's newest level. */
static __attribute__((noinline)) int append_other(vm_unified_t *s, vmatch_bits_t bits,
                                                  vmatch_bits_t care, uint32_t cls,
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
        vm_unified_group_t *g = c->group;
        if (c->state == UN_PLACED && g && g->nlevels) {
            vm_unified_level_t *l = &g->level[g->nlevels - 1];
            rc = vm_unified_level_append(s, l, bits, care, payload, seq);
            if (rc == VMATCH_OK && l->over > l->nq / 8 + 1)
                grow(s, g, l);
            return rc;
        }
    }
    int rc =
        vm_queue_append_new(s->base.env, s->base.side, &s->profq, bits, care, payload, seq);
    if (rc < 0 || !c)
        return rc;
    c->in_profq++;
    if (c->state == UN_NEW) {
        c->state = UN_PROFILING;
        s->profiling++;
    }
    if (c->state == UN_PROFILING) {
        c->peak = c->in_profq > c->peak ? c->in_profq : c->peak;
        /* Calls that overlap (peers running ahead) may never leave the queue empty: a call
         * at one rank appends about comm_size entries at most, so that many end it too. */
        uint32_t n = cls <= s->base.env->nclasses ? s->base.env->classes[cls - 1].comm_size : 0;
        if (++c->appends > (uint64_t)n + 1 && n)
            finish_profile(s, c);
    }
    return VMATCH_OK;
}

/* A search whose class may have entries in the profiling queue, or is not tracked. */
static __attribute__((noinline)) int match_pq(vm_unified_t *s, vmatch_bits_t key,
                                              vmatch_bits_t keycare, uint32_t cls, int remove,
                                              void **payload, uint64_t *inspected)
{
    vm_unified_class_t *c = cls < s->ncls ? &s->cls[cls] : NULL;
    if (!c && cls < VM_UNIFIED_MAX_CLASSES)
        return 0; /* never queued on this side */
    if (s->profq && (!c || c->in_profq)) {
        uint64_t before = *inspected;
        int found = vm_queue_match(s->profq, key, keycare, remove, payload, inspected);
        if (c && c->state == UN_PROFILING) {
            c->searches++;
            c->inspected += *inspected - before;
        }
        if (found && remove)
            left_pq(s, c);
        if (found)
            return 1;
    }
    vm_unified_group_t *g = c ? c->group : NULL;
    for (uint32_t i = 0; g && i < g->nlevels; i++)
        if (g->level[i].len &&
            level_match(s, &g->level[i], key, keycare, remove, payload, inspected))
            return 1;
    return 0;
}

static inline int coll_append(vm_unified_t *s, vmatch_bits_t bits, vmatch_bits_t care,
                              uint32_t cls, void *payload, uint64_t seq)
{
    vm_unified_class_t *c = cls < s->ncls ? &s->cls[cls] : NULL;
    vm_unified_group_t *g = c && c->state == UN_PLACED ? c->group : NULL;
    vm_unified_level_t *l = g && g->nlevels ? &g->level[g->nlevels - 1] : NULL;
    if (l && l->b && (s->base.side == VM_UMQ || care == ~(vmatch_bits_t)0) &&
        vmatch_line_put(vm_unified_bucket(s, l, bits), bits, payload, seq)) {
        l->len++;
        return VMATCH_OK;
    }
    return append_other(s, bits, care, cls, payload, seq);
}

static inline int coll_match(vm_unified_t *s, vmatch_bits_t key, vmatch_bits_t keycare,
                             uint32_t cls, int remove, void **payload, uint64_t *inspected)
{
    vm_unified_class_t *c = cls < s->ncls ? &s->cls[cls] : NULL;
    if (!c || c->in_profq)
        return match_pq(s, key, keycare, cls, remove, payload, inspected);
    vm_unified_group_t *g = c->group;
    for (uint32_t i = 0; g && i < g->nlevels; i++)
        if (g->level[i].len &&
            level_match(s, &g->level[i], key, keycare, remove, payload, inspected))
            return 1;
    return 0;
}

int vm_unified_append(vm_unified_t *s, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                      void *payload, uint64_t seq)
{
    return coll_append(s, bits, care, cls, payload, seq);
}

int vm_unified_match(vm_unified_t *s, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                     int remove, void **payload, uint64_t *inspected)
{
    return coll_match(s, key, keycare, cls, remove, payload, inspected);
}

/* The append of an exchange whose search found nothing. */
static __attribute__((noinline)) int queue_entry(vm_unified_t *q, vmatch_bits_t bits,
                                                 vmatch_bits_t care, void *payload,
                                                 const vm_call_t *c)
{
    int rc = coll_append(q, bits, care, c->cls, payload, c->seq);
    return rc < 0 ? rc : VMATCH_QUEUED;
}

/* The whole exchange, every case. */
static __attribute__((noinline)) int exchange_any(vm_unified_t *s, vm_unified_t *q,
                                                  vmatch_bits_t bits, vmatch_bits_t care,
                                                  void *payload, vm_call_t *c)
{
    if (s->base.len && coll_match(s, bits, care, c->cls, 1, c->out, &c->inspected))
        return VMATCH_MATCHED;
    return queue_entry(q, bits, care, payload, c);
}

/* The common case in few instructions: an exact entry whose class, on the side searched, has
 * no entry there or only entries in the lines of its levels' buckets (none in the profiling
 * queue, overflow or wildcard queues met on the way), and is placed on the side of the entry:
 * the search reads one bucket line per level holding entries, the append takes a free way of
 * one line.  Anything else goes to exchange_any, before anything is counted or changed. */
int vm_unified_exchange(vm_unified_t *s, vm_unified_t *q, vmatch_bits_t bits,
                        vmatch_bits_t care, void *payload, vm_call_t *c)
{
    uint32_t cls = c->cls;
    if (cls >= VM_UNIFIED_MAX_CLASSES || care != ~(vmatch_bits_t)0)
        return exchange_any(s, q, bits, care, payload, c);
    const vm_unified_class_t *cs = cls < s->ncls ? &s->cls[cls] : NULL;
    if (s->base.len && cs && cs->state != UN_NEW) { /* NEW: none of its entries */
        vm_unified_group_t *g = cs->group;
        if (!g || cs->in_profq)
            return exchange_any(s, q, bits, care, payload, c);
        for (uint32_t i = 0; i < g->nlevels; i++) {
            vm_unified_level_t *l = &g->level[i];
            if (!l->len)
                continue;
            vm_line_t *b = vm_unified_bucket(s, l, bits);
            if (l->wild || vm_line_over(b))
                return exchange_any(s, q, bits, care, payload, c);
            int w = vm_line_way(b, bits, ~(vmatch_bits_t)0, &c->inspected);
            if (w >= 0) {
                *c->out = b->payload[w];
                vm_line_drop(b, w);
                if (--l->len == 0 && l->nq > VM_UNIFIED_KEEP)
                    vm_unified_level_release(s, l);
                return VMATCH_MATCHED;
            }
        }
    }
    const vm_unified_class_t *cq = cls < q->ncls ? &q->cls[cls] : NULL;
    vm_unified_group_t *g = cq && cq->state == UN_PLACED ? cq->group : NULL;
    vm_unified_level_t *l = g && g->nlevels ? &g->level[g->nlevels - 1] : NULL;
    if (l && l->b && vmatch_line_put(vm_unified_bucket(q, l, bits), bits, payload, c->seq)) {
        l->len++;
        return VMATCH_QUEUED;
    }
    return queue_entry(q, bits, care, payload, c);
}

int vm_unified_remove(vm_unified_t *s, const void *payload, uint64_t *inspected)
{
    vm_hit_t hit;
    if (s->profq && s->profq->ops->find_payload(s->profq, payload, &hit, inspected)) {
        s->profq->ops->remove(s->profq, &hit);
        left_pq(s, NULL);
        return 1;
    }
    for (uint32_t gi = 0; gi < s->ngroups; gi++) {
        vm_unified_group_t *g = s->groups[gi];
        for (uint32_t li = 0; li < g->nlevels; li++)
            if (g->level[li].len &&
                vm_unified_level_remove(s, &g->level[li], payload, inspected))
                return 1;
    }
    return 0;
}

void vm_unified_free_levels(vm_unified_t *s)
{
    for (uint32_t gi = 0; gi < s->ngroups; gi++) {
        vm_unified_group_t *g = s->groups[gi];
        for (uint32_t li = 0; li < g->nlevels; li++)
            vm_unified_level_free(s, &g->level[li]);
        vm_mem_free(mem_of(s), g, sizeof *g);
    }
    vm_mem_free(mem_of(s), s->groups, s->groups_cap * sizeof *s->groups);
}
