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

const vm_storage_t *vm_storage_at(unsigned i)
{
    for (unsigned m = 0; m < COUNT(modules); m++)
        for (const vm_storage_t *const *s = modules[m]->storages; s && *s; s++)
            if (i-- == 0)
                return *s;
    return NULL;
}

const vm_policy_t *vm_policy_at(unsigned i)
{
    for (unsigned m = 0; m < COUNT(modules); m++)
        for (const vm_policy_t *const *p = modules[m]->policies; p && *p; p++)
            if (i-- == 0)
                return *p;
    return NULL;
}

const vm_storage_t *vm_storage_find(const char *name)
{
    const vm_storage_t *s;
    for (unsigned i = 0; (s = vm_storage_at(i)) != NULL; i++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

const vm_policy_t *vm_policy_find(const char *name)
{
    const vm_policy_t *p;
    for (unsigned i = 0; (p = vm_policy_at(i)) != NULL; i++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

const vm_module_t *vm_module_of_storage(const vm_storage_t *storage)
{
    for (unsigned m = 0; m < COUNT(modules); m++)
        for (const vm_storage_t *const *s = modules[m]->storages; s && *s; s++)
            if (*s == storage)
                return modules[m];
    return NULL;
}

const vm_module_t *vm_module_of_policy(const vm_policy_t *policy)
{
    for (unsigned m = 0; m < COUNT(modules); m++)
        for (const vm_policy_t *const *p = modules[m]->policies; p && *p; p++)
            if (*p == policy)
                return modules[m];
    return NULL;
}
