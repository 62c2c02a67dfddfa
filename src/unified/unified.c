/* unified.c -- policy=unified: point-to-point traffic (class 0) in a side of hash, pnp or
 * single, collective classes in the profiling queue and the levels of levels.c.  Its keys
 * and statistics. */
#include "unified.h"

#include "error.h"
#include "pnp.h"
#include "policy.h"

#include <stddef.h>
#include <string.h>

extern const vm_policy_t vm_unified_policy;

static vm_unified_t *of(vm_side_t *p)
{
    return (vm_unified_t *)p;
}

static void unified_destroy(vm_side_t *p)
{
    vm_unified_t *s = of(p);
    vm_mem_t *mem = &p->env->mem;
    if (s->p2p)
        s->p2p->ops->destroy(s->p2p);
    if (s->profq)
        s->profq->ops->destroy(s->profq);
    vm_unified_free_levels(s);
    vm_mem_free(mem, s->cls, s->ncls * sizeof *s->cls);
    vm_mem_free(mem, s, sizeof *s);
}

static int unified_create(vm_env_t *env, int side, vm_side_t **out)
{
    const vm_config_t *cfg = env->cfg;
    const vm_unified_config_t *uc = vm_module_cfg(cfg, &vm_unified_module);
    if (!cfg->nprocs)
        return vm_fail(VMATCH_EINVAL, "spec: policy=unified needs nprocs=N (its queues are "
                                      "bounded by unified.kc * sqrt(N))");
    vm_unified_t *s = vm_mem_calloc(&env->mem, sizeof *s);
    if (!s)
        return VMATCH_ENOMEM;
    s->base = (vm_side_t){.ops = &vm_unified_policy, .env = env, .side = side};
    s->cap = (uint32_t)vm_isqrt((uint64_t)uc->kc * uc->kc * cfg->nprocs);
    s->src_shift = cfg->src_shift; /* where the layout puts the source field */
    s->src_mask = cfg->src_bits >= 64 ? ~0ull : (1ull << cfg->src_bits) - 1;
    s->src_care = s->src_mask << s->src_shift;
    int rc = uc->p2p == VM_UNIFIED_PNP ? vm_pnp_create_capped(env, side, uc->kp, &s->p2p)
             : uc->p2p == VM_UNIFIED_SINGLE
                 ? vm_policy_find("single")->create(env, side, &s->p2p)
                 : vm_policy_find("hash")->create(env, side, &s->p2p);
    if (rc < 0) {
        s->p2p = NULL;
        unified_destroy(&s->base);
        return rc;
    }
    *out = &s->base;
    return VMATCH_OK;
}

static int unified_append(vm_side_t *p, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                          void *payload, uint64_t seq)
{
    vm_unified_t *s = of(p);
    if (!cls) {
        vm_call_t c = {.seq = seq};
        return vm_side_append(s->p2p, bits, care, payload, &c);
    }
    return vm_unified_append(s, bits, care, cls, payload, seq);
}

static int unified_match(vm_side_t *p, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                         int remove, void **payload, uint64_t *inspected)
{
    vm_unified_t *s = of(p);
    if (!cls)
        return vm_side_match(s->p2p, key, keycare, 0, remove, payload, inspected);
    return vm_unified_match(s, key, keycare, cls, remove, payload, inspected);
}

/* Point-to-point traffic takes the exchange of its structure (which counts on its sides),
 * collective traffic levels.c's (which counts nothing). */
static int unified_exchange(vm_call_t *c, vmatch_bits_t bits, vmatch_bits_t care, vm_side_t *sp,
                            void *payload, vm_side_t *qp)
{
    int rc = c->cls ? vm_unified_exchange(of(sp), of(qp), bits, care, payload, c)
                    : vm_side_exchange(of(sp)->p2p, of(qp)->p2p, bits, care, payload, c);
    return vm_side_counted(sp, qp, rc);
}

static int unified_remove_payload(vm_side_t *p, const void *payload, uint64_t *inspected)
{
    vm_unified_t *s = of(p);
    return vm_side_remove(s->p2p, payload, inspected) ||
           vm_unified_remove(s, payload, inspected);
}

/* Queues made now (the profiling queue, level queues that hold entries) and the
 * point-to-point structure's. */
static void unified_stats(const vm_side_t *p, vmatch_stats_t *acc)
{
    const vm_unified_t *s = (const vm_unified_t *)p;
    s->p2p->ops->stats(s->p2p, acc);
    acc->queues += s->profq != NULL;
    for (uint32_t gi = 0; gi < s->ngroups; gi++) {
        const vm_unified_group_t *g = s->groups[gi];
        for (uint32_t li = 0; li < g->nlevels; li++)
            acc->queues += vm_unified_level_queues(&g->level[li]);
    }
}

/* This side's part of vmatch_class_stats_t for class cls. */
static void class_stats(const vm_side_t *p, uint32_t cls, vmatch_class_stats_t *out)
{
    const vm_unified_t *s = (const vm_unified_t *)p;
    int side = p->side;
    vmatch_stats_t p2p = {0};
    s->p2p->ops->stats(s->p2p, &p2p);
    out->p2p_queues[side] = p2p.queues;
    out->coll_queues[side] = s->queues;
    out->coll_cap[side] = s->cap;
    out->profiling[side] = s->profq ? s->profq->len : 0;
    const vm_env_t *env = p->env;
    if (cls && cls <= env->nclasses)
        out->op = env->classes[cls - 1].op;
    if (!cls || cls >= s->ncls)
        return;
    const vm_unified_class_t *c = &s->cls[cls];
    out->profiled[side] = c->state >= UN_PROFILED;
    out->traversal[side] = c->searches ? (double)c->inspected / (double)c->searches : 0;
    out->wanted[side] = c->state >= UN_PROFILED ? c->wanted : 0;
    const vm_unified_group_t *g = c->group;
    out->levels[side] = g ? g->nlevels : 0;
    for (uint32_t i = 0; g && i < g->nlevels; i++)
        out->level_queues[side][i] = g->level[i].nq;
}

/* unified.levels and unified.class (unified_stat_keys); any other key goes to the
 * point-to-point structure's policy (pnp.partners with unified.p2p=pnp). */
static int unified_stat(const vm_side_t *p, const char *key, uint32_t arg, void *out)
{
    const vm_unified_t *s = (const vm_unified_t *)p;
    if (strcmp(key, "unified.levels") == 0) {
        for (uint32_t gi = 0; gi < s->ngroups; gi++)
            *(uint64_t *)out += s->groups[gi]->nlevels;
        return 1;
    }
    if (strcmp(key, "unified.class") == 0) {
        class_stats(p, arg, out);
        return 1;
    }
    return s->p2p->ops->stat && s->p2p->ops->stat(s->p2p, key, arg, out);
}

const vm_policy_t vm_unified_policy = {.name = "unified",
                                       .create = unified_create,
                                       VM_POLICY_CALLS(unified),
                                       .exchange = unified_exchange,
                                       .stat = unified_stat};

/* ---- keys ---- */

const char *const vm_unified_p2p_words[] = {"hash", "pnp", "single", NULL};

/* kp = 8: the thesis's choice (§5.3.3).  kc = 32, four times the thesis's 8: its queues were
 * lists, where a few entries per queue cost little; a bucket here is a cache line of two
 * entries, and past them a search takes the bucket's overflow queue, so a linear gather at
 * P = 2048 wants about P / 2 buckets (docs/unified.md, "Caps"). */
static const vm_unified_config_t unified_default = {.p2p = VM_UNIFIED_HASH, .kc = 32, .kp = 8};

#define FIELD(f) offsetof(vm_unified_config_t, f)

static const vm_key_t unified_keys[] = {
    {"unified.p2p", VM_KEY_WORD, FIELD(p2p), .words = vm_unified_p2p_words,
     .help = "`unified`: the structure point-to-point traffic (class 0) goes to"},
    {"unified.kc", VM_KEY_UINT, FIELD(kc), 1, 1024,
     .help = "`unified`: the levels of all collective classes hold at most ⌊kc·√nprocs⌋ "
             "queues per side"},
    {"unified.kp", VM_KEY_UINT, FIELD(kp), 1, 1024,
     .help = "`unified` with `unified.p2p=pnp`: at most ⌊kp·√nprocs⌋ partners per side "
             "(replaces `pnp.cap`)"},
};

/* The size of vmatch_class_stats_t's first version (vmatch_unified.h): its fields up to
 * p2p_queues.  Fields added later go after them, and this stays. */
#define CLASS_STATS_V1                                                                         \
    (offsetof(vmatch_class_stats_t, p2p_queues) + sizeof((vmatch_class_stats_t *)0)->p2p_queues)
_Static_assert(sizeof(vmatch_class_stats_t) <= VM_STAT_STRUCT_BYTES,
               "vmatch_stat_struct has room for vmatch_class_stats_t");

static const vm_stat_key_t unified_stat_keys[] = {
    {.name = "unified.levels",
     .help = "`unified`: levels of collective queues opened, all operations, both sides"},
    {.name = "unified.class",
     .size = sizeof(vmatch_class_stats_t),
     .min_size = CLASS_STATS_V1,
     .help = "`unified`: the queues of class `arg` (`vmatch_class_stats_t` of "
             "`vmatch_unified.h`, read with `vmatch_class_stats`)"},
};

static const vm_policy_t *const unified_policies[] = {&vm_unified_policy, NULL};

const vm_module_t vm_unified_module = {.prefix = "unified",
                                       VM_MODULE_KEYS(unified_keys),
                                       VM_MODULE_STATS(unified_stat_keys),
                                       VM_MODULE_CFG(unified_default),
                                       .policies = unified_policies};
