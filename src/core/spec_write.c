/* spec_write.c -- specs written back: vmatch_describe's resolved spec and the README's key
 * table, from the same key tables spec.c reads with. */
/* PATH_MAX is POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L

#include "module.h"
#include "spec.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The longest value vmatch_describe prints: a path the system takes. */
enum { VALUE_MAX = PATH_MAX + 16 };

/* ---- writing keys ---- */

typedef struct out {
    char *buf;
    size_t len, need; /* need: what has been written or would have been */
} out_t;

static void put(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_t *o, const char *fmt, ...)
{
    size_t room = o->need < o->len ? o->len - o->need : 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(room ? o->buf + o->need : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->need += (size_t)n;
}

/* The value of key k in its owner's config cfg; "" when the key is not set. */
static void value(const void *cfg, const vm_key_t *k, char *buf, size_t len)
{
    const void *field = (const char *)cfg + k->off;
    switch (k->kind) {
    case VM_KEY_UINT: {
        uint32_t x = *(const uint32_t *)field;
        if (x == 0 && (k->flags & VM_KEY_UNSET0))
            buf[0] = '\0';
        else
            snprintf(buf, len, "%u", x);
        return;
    }
    case VM_KEY_BOOL:
        snprintf(buf, len, "%s", *(const uint32_t *)field ? "on" : "off");
        return;
    case VM_KEY_WORD:
        snprintf(buf, len, "%s", k->words[*(const uint32_t *)field]);
        return;
    case VM_KEY_REAL: {
        /* the shortest text that reads back as the same number, without an exponent (the
         * spec's number grammar takes none): a tiny value in as many decimals as it needs */
        double x = *(const double *)field;
        for (int digits = 6; digits <= 17; digits++) {
            snprintf(buf, len, "%.*g", digits, x);
            if (strtod(buf, NULL) == x)
                break;
        }
        if (!strpbrk(buf, "eE"))
            return;
        for (int decimals = 1; decimals <= 1100; decimals++) {
            snprintf(buf, len, "%.*f", decimals, x);
            if (strtod(buf, NULL) == x)
                break;
        }
        return;
    }
    case VM_KEY_PATH: {
        const char *path = *(char *const *)field;
        snprintf(buf, len, "%s", path ? path : "");
        return;
    }
    case VM_KEY_CUSTOM:
        k->print(cfg, buf, len);
        return;
    }
}

/* Every key of m that is set, as " key=value". */
static void describe_module(out_t *o, const vm_module_t *m, const void *cfg)
{
    char v[VALUE_MAX], d[64];
    for (unsigned i = 0; i < m->nkeys; i++) {
        const vm_key_t *k = &m->keys[i];
        value(cfg, k, v, sizeof v);
        if (k->flags & VM_KEY_QUIET) {
            value(m->cfg_default, k, d, sizeof d);
            if (strcmp(v, d) == 0)
                continue;
        }
        if (v[0])
            put(o, "%s%s=%s", o->need ? " " : "", k->name, v);
    }
}

size_t vm_spec_describe(const vm_config_t *cfg, char *buf, size_t len)
{
    out_t o = {buf, len, 0};
    if (len)
        buf[0] = '\0';
    describe_module(&o, &vm_core_module, cfg);
    /* The keys of the modules in use: one module may provide both (or several policies). */
    const vm_module_t *s = vm_module_of_storage(cfg->storage);
    const vm_module_t *p = vm_module_of_policy(cfg->policy);
    if (s)
        describe_module(&o, s, vm_module_cfg(cfg, s));
    if (p && p != s)
        describe_module(&o, p, vm_module_cfg(cfg, p));
    return o.need;
}

/* A bound for the key table: 2^k from 2^16 up, so 1073741824 reads as 2^30. */
static void bound(char *buf, size_t len, double x)
{
    uint64_t u = (uint64_t)x;
    if (u >= 65536 && (u & (u - 1)) == 0)
        snprintf(buf, len, "2^%d", __builtin_ctzll(u));
    else
        snprintf(buf, len, "%g", x);
}

/* The README's "values" cell of key k, whose owner's defaults are def. */
static void values(const vm_key_t *k, const void *def, char *buf, size_t len)
{
    char d[64], lo[24], hi[24];
    if (k->kind == VM_KEY_CUSTOM) {
        k->values(buf, len);
        return;
    }
    if (k->kind == VM_KEY_PATH) {
        snprintf(buf, len, "a path");
        return;
    }
    value(def, k, d, sizeof d);
    bound(lo, sizeof lo, k->min);
    bound(hi, sizeof hi, k->max);
    switch (k->kind) {
    case VM_KEY_UINT:
    case VM_KEY_REAL:
        snprintf(buf, len, d[0] ? "`%s`, %s … %s" : "%snot set, %s … %s", d, lo, hi);
        if (k->step > 1)
            snprintf(buf + strlen(buf), len - strlen(buf), ", a multiple of %u", k->step);
        return;
    case VM_KEY_BOOL:
        snprintf(buf, len, "`%s`, `%s`", d, strcmp(d, "on") ? "on" : "off");
        return;
    case VM_KEY_WORD:
        snprintf(buf, len, "`%s`", d);
        for (unsigned i = 0; k->words[i]; i++)
            if (strcmp(k->words[i], d) != 0)
                snprintf(buf + strlen(buf), len - strlen(buf), ", `%s`", k->words[i]);
        return;
    case VM_KEY_PATH:
    case VM_KEY_CUSTOM:
        return;
    }
}

static void table_module(out_t *o, const vm_module_t *m, const void *def)
{
    char v[256];
    for (unsigned i = 0; i < m->nkeys; i++) {
        values(&m->keys[i], def, v, sizeof v);
        put(o, "| `%s` | %s | %s |\n", m->keys[i].name, v, m->keys[i].help);
    }
}

size_t vm_spec_table(char *buf, size_t len)
{
    out_t o = {buf, len, 0};
    if (len)
        buf[0] = '\0';
    put(&o, "| key | values (default first) | meaning |\n|---|---|---|\n");
    table_module(&o, &vm_core_module, vm_core_module.cfg_default);
    const vm_module_t *m;
    for (unsigned i = 0; (m = vm_module_at(i)) != NULL; i++)
        table_module(&o, m, m->cfg_default);
    return o.need;
}
