/* module.h -- what a storage or policy folder gives the engine: its storages and policies,
 * its spec keys, its configuration and its vector kernels.
 *
 * A module owns every key that starts with its prefix and a dot ("pnp.cap" belongs to the
 * module with prefix "pnp") and one config struct, kept inside vm_config_t.  The engine
 * parses its own keys (policy, storage, simd, nprocs, layout.*, numa, profile*), hands every
 * other "<prefix>.key" to the module of that prefix, and builds vmatch_describe and the
 * README's key table from the same key tables.  registry.c lists the modules: adding one is
 * its folder and its name there.
 */
#ifndef VM_MODULE_H
#define VM_MODULE_H

#include "queue.h"
#include "simd.h"

#include <stddef.h>
#include <stdint.h>

enum vm_key_kind {
    VM_KEY_UINT,  /* a uint32_t from min to max, a multiple of step when step > 1 */
    VM_KEY_BOOL,  /* a uint32_t: on = 1, off = 0 */
    VM_KEY_WORD,  /* a uint32_t: the index of the value in words[] */
    VM_KEY_REAL,  /* a double from min to max */
    VM_KEY_PATH,  /* a char *, owned by the config (vm_spec_free): a path the system takes */
    VM_KEY_CUSTOM /* parse and print do the work */
};

/* Key flags. */
enum {
    VM_KEY_UNSET0 = 1, /* UINT: 0 means "not set": left out of vmatch_describe */
    VM_KEY_QUIET = 2   /* left out of vmatch_describe at its default value */
};

typedef struct vm_key {
    const char *name; /* the whole key, "pnp.cap" */
    enum vm_key_kind kind;
    size_t off; /* the field in the owner's config struct */
    double min, max;
    uint32_t step, flags;
    const char *const *words; /* VM_KEY_WORD: the names, NULL-terminated */
    const char *help;         /* one line for the README's key table */
    /* VM_KEY_CUSTOM: read the n bytes at v into the config (VMATCH_OK, or an error with
     * vm_fail's message); write the value into buf, or "" to leave the key out of
     * vmatch_describe; write the README's "values" text (default first) into buf. */
    int (*parse)(void *cfg, const char *v, size_t n);
    void (*print)(const void *cfg, char *buf, size_t len);
    void (*values)(char *buf, size_t len);
} vm_key_t;

/* A figure a module's policies keep (vmatch_stat, vmatch_stat_struct; vm_policy_t.stat
 * gives its value). */
typedef struct vm_stat_key {
    const char *name; /* the whole key, "pnp.partners", under the module's prefix */
    size_t size;      /* 0: a number (vmatch_stat); otherwise the size in this build of the
                         struct of the module's extension header that vmatch_stat_struct
                         fills, at most VM_STAT_STRUCT_BYTES */
    size_t min_size;  /* a struct's size in its first version: the least a caller may pass */
    const char *help; /* one line for the README's statistics table */
} vm_stat_key_t;

/* Room the engine gives a policy's figures struct (vm_stat_key_t.size). */
#define VM_STAT_STRUCT_BYTES 1024

typedef struct vm_module {
    const char *prefix; /* owns "<prefix>.*"; NULL when the module has no keys */
    const vm_key_t *keys;
    unsigned nkeys;
    const vm_stat_key_t *stat_keys; /* its figures (NULL: none) */
    unsigned nstat_keys;
    size_t cfg_size;         /* its config struct (at most VM_MODULE_CFG_BYTES for all) */
    const void *cfg_default; /* the defaults of that struct */
    /* What it provides, each list NULL-terminated (NULL: none). */
    const vm_storage_t *const *storages;
    const vm_policy_t *const *policies;
    /* The vector kernels its storages run, each with the simd= value that picks it and the
     * CPU features it needs (simd.h): the spec parser checks simd= and resolves auto from
     * these lists. */
    const vm_kernel_t *const *kernels;
} vm_module_t;

/* The .keys and .nkeys of a vm_module_t from its key table k, an array. */
#define VM_MODULE_KEYS(k) .keys = (k), .nkeys = sizeof(k) / sizeof((k)[0])
/* The same for the statistics keys and the config struct's defaults. */
#define VM_MODULE_STATS(k) .stat_keys = (k), .nstat_keys = sizeof(k) / sizeof((k)[0])
#define VM_MODULE_CFG(d)   .cfg_size = sizeof(d), .cfg_default = &(d)

/* The module's config inside cfg: the defaults, then what the spec set. */
const void *vm_module_cfg(const vm_config_t *cfg, const vm_module_t *m);
void *vm_module_cfg_mut(vm_config_t *cfg, const vm_module_t *m);
/* Bytes the configs of all modules take in vm_config_t.mod (the spec parser refuses to run
 * when they pass VM_MODULE_CFG_BYTES). */
size_t vm_module_cfg_bytes(void);

/* floor(sqrt(x)), in integers (no libm): the c·sqrt(nprocs) bounds of pnp and cluster. */
static inline uint64_t vm_isqrt(uint64_t x)
{
    uint64_t r = 0;
    for (uint64_t bit = 1ull << 62; bit; bit >>= 2) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
    }
    return r;
}

/* Registry (registry.c).  NULL past the end / for an unknown name or one not registered.
 * The first storage and the first policy are the defaults.  Storages and policies are looked
 * up the same way, as items of a kind: each starts with its name. */
enum vm_item_kind { VM_ITEM_STORAGE, VM_ITEM_POLICY };
/* The i-th item of a kind in registry order, with its module in *owner (when not NULL). */
const void *vm_item_at(int kind, unsigned i, const vm_module_t **owner);
/* The item of a kind with this name. */
const void *vm_item_find(int kind, const char *name);
/* An item's name (the first member of vm_storage_t and vm_policy_t). */
static inline const char *vm_item_name(const void *item)
{
    return *(const char *const *)item;
}
const vm_module_t *vm_module_at(unsigned i);
const vm_module_t *vm_module_find(const char *prefix, size_t n);
const vm_module_t *vm_module_of_storage(const vm_storage_t *s);
const vm_module_t *vm_module_of_policy(const vm_policy_t *p);
const vm_storage_t *vm_storage_at(unsigned i);
const vm_policy_t *vm_policy_at(unsigned i);
const vm_storage_t *vm_storage_find(const char *name);
const vm_policy_t *vm_policy_find(const char *name);

/* The engine's own keys (spec.c), for the key table. */
extern const vm_module_t vm_core_module;

/* Write the README's key table (markdown, one row per key of the engine and of every
 * module) into buf; returns the length it needs, as snprintf does. */
size_t vm_spec_table(char *buf, size_t len);

/* The statistics key of that name, with its module in *owner (NULL for the engine's own
 * keys, "posted" ...), or NULL when no module has it. */
const vm_stat_key_t *vm_stat_key_find(const char *name, const vm_module_t **owner);

/* Write the README's statistics table (markdown: the engine's keys, then every module's)
 * into buf; returns the length it needs, as snprintf does. */
size_t vm_stat_table(char *buf, size_t len);

#endif
