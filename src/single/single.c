/* single.c -- policy=single: one storage queue per side, the plain MPI design. */
#include "module.h"

extern const vm_policy_t vm_single_policy;

typedef struct vm_single {
    vm_side_t base;
    vm_queue_t *q;
} vm_single_t;

static int single_create(vm_env_t *env, int side, vm_side_t **out)
{
    vm_single_t *s = vm_mem_alloc(&env->mem, sizeof *s);
    if (!s)
        return VMATCH_ENOMEM;
    s->base = (vm_side_t){.ops = &vm_single_policy, .env = env, .side = side};
    int rc = env->cfg->storage->create(env, side, &s->q);
    if (rc < 0) {
        vm_mem_free(&env->mem, s, sizeof *s);
        return rc;
    }
    s->base.sole = s->q;
    s->base.sole_until = UINT64_MAX;
    *out = &s->base;
    return VMATCH_OK;
}

static void single_destroy(vm_side_t *p)
{
    vm_single_t *s = (vm_single_t *)p;
    s->q->ops->destroy(s->q);
    vm_mem_free(&p->env->mem, s, sizeof *s);
}

static int single_append(vm_side_t *p, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                         void *payload, uint64_t seq)
{
    (void)cls;
    vm_queue_t *q = ((vm_single_t *)p)->q;
    return q->ops->append(q, bits, care, payload, seq);
}

static int single_match(vm_side_t *p, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                        int remove, void **payload, uint64_t *inspected)
{
    (void)cls;
    return vm_queue_match(((vm_single_t *)p)->q, key, keycare, remove, payload, inspected);
}

static int single_remove_payload(vm_side_t *p, const void *payload, uint64_t *inspected)
{
    vm_queue_t *q = ((vm_single_t *)p)->q;
    vm_hit_t hit;
    if (!q->ops->find_payload(q, payload, &hit, inspected))
        return 0;
    q->ops->remove(q, &hit);
    return 1;
}

static void single_stats(const vm_side_t *p, vmatch_stats_t *acc)
{
    (void)p;
    acc->queues += 1;
}

const vm_policy_t vm_single_policy = {
    .name = "single", .create = single_create, VM_POLICY_CALLS(single)};

static const vm_policy_t *const single_policies[] = {&vm_single_policy, NULL};

const vm_module_t vm_single_module = {.policies = single_policies};
