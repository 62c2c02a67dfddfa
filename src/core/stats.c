/* stats.c -- the engine's figures: vmatch_stats, and every figure by key (vmatch_stat,
 * vmatch_stat_struct) with the table of keys that docs/statistics.md shows. */
#include "engine.h"
#include "error.h"
#include "module.h"
#include "record.h"
#include "threads.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void vmatch_stats(const vmatch_engine_t *e, vmatch_stats_t *out)
{
    if (!out)
        return;
    *out = (vmatch_stats_t){0};
    if (!e)
        return;
    vm_engine_take(e);
    out->posted = e->side[VM_PRQ]->len;
    out->unexpected = e->side[VM_UMQ]->len;
    out->searches = e->searches;
    out->inspected = e->call.inspected;
    out->bytes = e->env.mem.bytes;
    for (int s = 0; s < 2; s++)
        e->side[s]->ops->stats(e->side[s], out);
    vm_engine_give(e);
}

/* ---- figures by key ---- */

/* The engine's own keys: the fields of vmatch_stats_t. */
static const vm_stat_key_t core_stat_keys[] = {
    {.name = "posted", .help = "posted receives queued now"},
    {.name = "unexpected", .help = "unexpected messages queued now"},
    {.name = "searches", .help = "queue walks: matching, probing, cancel, remove by handle"},
    {.name = "inspected", .help = "entries compared in those searches"},
    {.name = "queues", .help = "queues allocated now, both sides"},
    {.name = "bytes", .help = "bytes the engine holds now: blocks, slabs, tables, itself"},
    /* the recordings' (record.c), after the fields */
    {.name = "trace.ops", .help = "operations the trace recorded (trace.record=on)"},
    {.name = "trace.dropped",
     .help = "operations the trace left out: past trace.cap, or once memory ran out"},
};
static const size_t core_stat_off[] = {
    offsetof(vmatch_stats_t, posted),   offsetof(vmatch_stats_t, unexpected),
    offsetof(vmatch_stats_t, searches), offsetof(vmatch_stats_t, inspected),
    offsetof(vmatch_stats_t, queues),   offsetof(vmatch_stats_t, bytes),
};
enum { NFIELDS = sizeof core_stat_off / sizeof core_stat_off[0] };
_Static_assert(sizeof core_stat_keys / sizeof core_stat_keys[0] == NFIELDS + 2,
               "one offset per field, then the recordings' two");

const vm_stat_key_t *vm_stat_key_find(const char *name, const vm_module_t **owner)
{
    *owner = NULL;
    for (size_t i = 0; i < sizeof core_stat_keys / sizeof core_stat_keys[0]; i++)
        if (strcmp(core_stat_keys[i].name, name) == 0)
            return &core_stat_keys[i];
    const vm_module_t *m;
    for (unsigned i = 0; (m = vm_module_at(i)) != NULL; i++)
        for (unsigned j = 0; j < m->nstat_keys; j++)
            if (strcmp(m->stat_keys[j].name, name) == 0) {
                *owner = m;
                return &m->stat_keys[j];
            }
    return NULL;
}

/* Ask e's policy for module key k on both sides into out; VMATCH_OK, or
 * VMATCH_EUNSUPPORTED when it keeps no such figure. */
static int policy_stat(const vmatch_engine_t *e, const vm_stat_key_t *k, uint32_t arg,
                       void *out)
{
    const vm_policy_t *pol = e->cfg.policy;
    int known = 0;
    vm_engine_take(e);
    for (int s = 0; pol->stat && s < 2; s++)
        known |= pol->stat(e->side[s], k->name, arg, out);
    vm_engine_give(e);
    if (!known)
        return vm_fail(VMATCH_EUNSUPPORTED, "stat: policy=%s keeps no figure '%s'", pol->name,
                       k->name);
    return VMATCH_OK;
}

/* The statistics key of that name and of the kind the call reads (a struct or a number),
 * with its module in *m; NULL with vm_fail's message (VMATCH_EINVAL) otherwise. */
static const vm_stat_key_t *stat_key(const char *call, const char *key, int is_struct,
                                     const vm_module_t **m)
{
    const vm_stat_key_t *k = vm_stat_key_find(key, m);
    if (!k) {
        vm_fail(VMATCH_EINVAL, "%s: unknown key '%s'", call, key);
    } else if ((k->size != 0) != is_struct) {
        vm_fail(VMATCH_EINVAL, "%s: '%s' is a %s: read it with %s", call, key,
                k->size ? "struct" : "number", k->size ? "vmatch_stat_struct" : "vmatch_stat");
        k = NULL;
    }
    return k;
}

int vmatch_stat(const vmatch_engine_t *e, const char *key, uint64_t *value)
{
    if (!e || !key || !value)
        return vm_fail(VMATCH_EINVAL, "stat: NULL argument");
    const vm_module_t *m;
    const vm_stat_key_t *k = stat_key("stat", key, 0, &m);
    if (!k)
        return VMATCH_EINVAL;
    size_t i = (size_t)(k - core_stat_keys);
    if (!m && i >= NFIELDS) {
        vm_engine_take(e);
        *value = vm_record_stat(e, (int)(i - NFIELDS));
        vm_engine_give(e);
        return VMATCH_OK;
    }
    if (!m) {
        vmatch_stats_t st;
        vmatch_stats(e, &st);
        memcpy(value, (const char *)&st + core_stat_off[i], sizeof *value);
        return VMATCH_OK;
    }
    uint64_t v = 0;
    int rc = policy_stat(e, k, 0, &v);
    if (rc == VMATCH_OK)
        *value = v;
    return rc;
}

int vmatch_stat_struct(const vmatch_engine_t *e, const char *key, uint32_t arg, void *out,
                       size_t size)
{
    if (!e || !key || !out)
        return vm_fail(VMATCH_EINVAL, "stat_struct: NULL argument");
    const vm_module_t *m;
    const vm_stat_key_t *k = stat_key("stat_struct", key, 1, &m);
    if (!k)
        return VMATCH_EINVAL;
    _Alignas(16) unsigned char buf[VM_STAT_STRUCT_BYTES] = {0};
    if (k->size > sizeof buf) /* a module's mistake, which its test meets */
        return vm_fail(VMATCH_EUNSUPPORTED, "stat_struct: '%s' is larger than %zu bytes", key,
                       sizeof buf);
    int rc = policy_stat(e, k, arg, buf);
    if (rc < 0)
        return rc;
    if (size < k->min_size)
        return vm_fail(VMATCH_EINVAL, "stat_struct: '%s' takes at least %zu bytes, not %zu",
                       key, k->min_size, size);
    size_t n = size < k->size ? size : k->size;
    memcpy(out, buf, n);
    if (size > n)
        memset((char *)out + n, 0, size - n);
    return VMATCH_OK;
}

/* Append printf-style text to buf at *at, counting what it needs in *at. */
static void stat_put(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void stat_put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*at < len ? buf + *at : NULL, *at < len ? len - *at : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at += (size_t)n;
}

static void stat_rows(char *buf, size_t len, size_t *at, const vm_stat_key_t *k, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        stat_put(buf, len, at, "| `%s` | %s | %s |\n", k[i].name,
                 k[i].size ? "struct (`vmatch_stat_struct`)" : "number", k[i].help);
}

size_t vm_stat_table(char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    stat_put(buf, len, &at, "| key | kind | meaning |\n|---|---|---|\n");
    stat_rows(buf, len, &at, core_stat_keys, sizeof core_stat_keys / sizeof core_stat_keys[0]);
    const vm_module_t *m;
    for (unsigned i = 0; (m = vm_module_at(i)) != NULL; i++)
        stat_rows(buf, len, &at, m->stat_keys, m->nstat_keys);
    return at;
}
