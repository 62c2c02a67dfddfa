/* registry.c -- the storages and policies an engine can be made of.  Add one line here
 * when a new one lands; the first of each list is listed first in error messages. */
#include "queue.h"

#include <string.h>

extern const vm_storage_t vm_ll_storage, vm_lla_storage, vm_llv_storage;
extern const vm_policy_t vm_single_policy, vm_pnp_policy, vm_pnp_static_policy;

static const vm_storage_t *const storages[] = {&vm_ll_storage, &vm_lla_storage,
                                               &vm_llv_storage};
static const vm_policy_t *const policies[] = {&vm_single_policy, &vm_pnp_policy,
                                              &vm_pnp_static_policy};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const vm_storage_t *vm_storage_at(unsigned i)
{
    return i < COUNT(storages) ? storages[i] : NULL;
}

const vm_policy_t *vm_policy_at(unsigned i)
{
    return i < COUNT(policies) ? policies[i] : NULL;
}

const vm_storage_t *vm_storage_find(const char *name)
{
    for (unsigned i = 0; i < COUNT(storages); i++)
        if (strcmp(storages[i]->name, name) == 0)
            return storages[i];
    return NULL;
}

const vm_policy_t *vm_policy_find(const char *name)
{
    for (unsigned i = 0; i < COUNT(policies); i++)
        if (strcmp(policies[i]->name, name) == 0)
            return policies[i];
    return NULL;
}
