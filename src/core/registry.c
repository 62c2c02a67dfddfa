/* registry.c -- the modules an engine can be made of (module.h).  A new storage or policy
 * is its folder and its name in VM_MODULES.  Order matters: the first storage and the first
 * policy listed are the defaults, and error messages and the README list them in this order. */
#include "module.h"

#include <string.h>

#define VM_MODULES(X) X(llv) X(lla) X(ll) X(hash) X(single) X(pnp) X(cluster) X(unified)

#define DECLARE(name) extern const vm_module_t vm_##name##_module;
#define ADDRESS(name) &vm_##name##_module,
VM_MODULES(DECLARE)
static const vm_module_t *const modules[] = {VM_MODULES(ADDRESS)};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const vm_module_t *vm_module_at(unsigned i)
{
    return i < COUNT(modules) ? modules[i] : NULL;
}

const vm_module_t *vm_module_find(const char *prefix, size_t n)
{
    for (unsigned i = 0; i < COUNT(modules); i++) {
        const char *p = modules[i]->prefix;
        if (p && strlen(p) == n && memcmp(p, prefix, n) == 0)
            return modules[i];
    }
    return NULL;
}

/* Where m's config starts in vm_config_t.mod: the configs of the modules before it, each
 * rounded up to 16 bytes.  The spec parser checks that they all fit. */
static size_t cfg_offset(const vm_module_t *m)
{
    size_t off = 0;
    for (unsigned i = 0; i < COUNT(modules) && modules[i] != m; i++)
        off += (modules[i]->cfg_size + 15) & ~(size_t)15;
    return off;
}

size_t vm_module_cfg_bytes(void)
{
    return cfg_offset(NULL);
}

const void *vm_module_cfg(const vm_config_t *cfg, const vm_module_t *m)
{
    return cfg->mod + cfg_offset(m);
}

void *vm_module_cfg_mut(vm_config_t *cfg, const vm_module_t *m)
{
    return cfg->mod + cfg_offset(m);
}

/* The j-th item of a kind that module m lists, or NULL past its last. */
static const void *listed(const vm_module_t *m, int kind, unsigned j)
{
    if (kind == VM_ITEM_POLICY)
        return m->policies ? (const void *)m->policies[j] : NULL;
    return m->storages ? (const void *)m->storages[j] : NULL;
}

const void *vm_item_at(int kind, unsigned i, const vm_module_t **owner)
{
    const void *item;
    for (unsigned m = 0; m < COUNT(modules); m++)
        for (unsigned j = 0; (item = listed(modules[m], kind, j)) != NULL; j++)
            if (i-- == 0) {
                if (owner)
                    *owner = modules[m];
                return item;
            }
    return NULL;
}

const void *vm_item_find(int kind, const char *name)
{
    const void *item;
    for (unsigned i = 0; (item = vm_item_at(kind, i, NULL)) != NULL; i++)
        if (strcmp(vm_item_name(item), name) == 0)
            return item;
    return NULL;
}

/* The module that lists item, an item of a kind. */
static const vm_module_t *module_of(int kind, const void *item)
{
    const vm_module_t *m = NULL;
    const void *at;
    for (unsigned i = 0; (at = vm_item_at(kind, i, &m)) != NULL; i++)
        if (at == item)
            return m;
    return NULL;
}

const vm_storage_t *vm_storage_at(unsigned i)
{
    return vm_item_at(VM_ITEM_STORAGE, i, NULL);
}

const vm_policy_t *vm_policy_at(unsigned i)
{
    return vm_item_at(VM_ITEM_POLICY, i, NULL);
}

const vm_storage_t *vm_storage_find(const char *name)
{
    return vm_item_find(VM_ITEM_STORAGE, name);
}

const vm_policy_t *vm_policy_find(const char *name)
{
    return vm_item_find(VM_ITEM_POLICY, name);
}

const vm_module_t *vm_module_of_storage(const vm_storage_t *storage)
{
    return module_of(VM_ITEM_STORAGE, storage);
}

const vm_module_t *vm_module_of_policy(const vm_policy_t *policy)
{
    return module_of(VM_ITEM_POLICY, policy);
}
