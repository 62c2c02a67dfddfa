/* spec.c -- the spec string: "key=value" words separated by blanks.  The engine's own keys
 * are here; every "<prefix>.key" goes to the module of that prefix (module.h), whose key
 * table says how to read it.  vmatch_describe and the README's key table come from the same
 * tables. */
/* PATH_MAX is POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L

#include "spec.h"
#include "error.h"
#include "module.h"
#include "record.h"
#include "simd.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static int is(const char *v, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(v, word, n) == 0;
}

/* Every number of a spec has one grammar, whatever its key: decimal digits, leading zeros
 * allowed (layout.tag=024 as llv.block=064), and for a real a point with digits on at least
 * one side (.5, 1.5, 2.); no sign, exponent, hex, inf or nan, which strtod alone would
 * take for some keys and not others. */

/* Parse the n bytes at v as a whole decimal number into *out; 0 when they are not one or
 * it exceeds 2^32 (beyond every key's bound, so no overflow). */
static int parse_uint(const char *v, size_t n, uint64_t *out)
{
    if (n == 0)
        return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)v[i]))
            return 0;
        x = x * 10 + (uint64_t)(v[i] - '0');
        if (x > UINT64_C(1) << 32)
            return 0;
    }
    *out = x;
    return 1;
}

/* Parse the n bytes at v as a plain decimal real into *out; 0 when they are not one. */
static int parse_real(const char *v, size_t n, double *out)
{
    while (n > 1 && v[0] == '0' && v[1] != '.') /* any number of leading zeros, as above */
        v++, n--;
    size_t digits = 0, points = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '.')
            points++;
        else if (isdigit((unsigned char)v[i]))
            digits++;
        else
            return 0;
    }
    if (digits == 0 || points > 1 || n >= 64)
        return 0;
    char buf[64];
    memcpy(buf, v, n);
    buf[n] = '\0';
    char *end;
    *out = strtod(buf, &end); /* the grammar above is a subset of strtod's, in the C locale */
    return end == buf + n;
}

/* How much of a word an error message shows: enough to find it in a long spec. */
static int shown(size_t n)
{
    return n < 80 ? (int)n : 80;
}

/* ---- the engine's own keys that are not plain numbers ---- */

/* The n bytes at v as a registry name in name[64]; 0 when they are too long for one (name
 * then holds their start, for the message). */
static int name_of(const char *v, size_t n, char name[64])
{
    snprintf(name, 64, "%.*s", (int)(n < 63 ? n : 63), v);
    return n < 64;
}

/* policy= and storage=: the registered item of the kind with the name in v, or NULL with
 * vm_fail's message (VMATCH_EINVAL). */
static const void *parse_item(int kind, const char *v, size_t n)
{
    char name[64];
    const void *item = name_of(v, n, name) ? vm_item_find(kind, name) : NULL;
    if (!item)
        vm_fail(VMATCH_EINVAL, "spec: unknown %s '%s'",
                kind == VM_ITEM_POLICY ? "policy" : "storage", name);
    return item;
}

/* The README's "values" of policy= or storage=: every item of the kind, the default first. */
static void values_item(int kind, char *buf, size_t len)
{
    const void *item;
    buf[0] = '\0';
    for (unsigned i = 0; (item = vm_item_at(kind, i, NULL)) != NULL; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s`%s`", i ? ", " : "",
                 vm_item_name(item));
}

static int parse_policy(void *cfg, const char *v, size_t n)
{
    const vm_policy_t *p = parse_item(VM_ITEM_POLICY, v, n);
    return p ? (((vm_config_t *)cfg)->policy = p, VMATCH_OK) : VMATCH_EINVAL;
}

static int parse_storage(void *cfg, const char *v, size_t n)
{
    const vm_storage_t *s = parse_item(VM_ITEM_STORAGE, v, n);
    return s ? (((vm_config_t *)cfg)->storage = s, VMATCH_OK) : VMATCH_EINVAL;
}

static void print_policy(const void *cfg, char *buf, size_t len)
{
    snprintf(buf, len, "%s", ((const vm_config_t *)cfg)->policy->name);
}

static void print_storage(const void *cfg, char *buf, size_t len)
{
    snprintf(buf, len, "%s", ((const vm_config_t *)cfg)->storage->name);
}

static void values_policy(char *buf, size_t len)
{
    values_item(VM_ITEM_POLICY, buf, len);
}

static void values_storage(char *buf, size_t len)
{
    values_item(VM_ITEM_STORAGE, buf, len);
}

static int parse_simd(void *cfg, const char *v, size_t n)
{
    int simd = vm_simd_parse(v, n);
    if (simd < 0)
        return vm_fail(VMATCH_EINVAL, "spec: simd=%.*s: expected auto, avx512, avx2 or scalar",
                       (int)(n < 63 ? n : 63), v);
    ((vm_config_t *)cfg)->simd = (uint32_t)simd;
    return VMATCH_OK;
}

static void print_simd(const void *cfg, char *buf, size_t len)
{
    snprintf(buf, len, "%s", vm_simd_name((int)((const vm_config_t *)cfg)->simd));
}

static void values_simd(char *buf, size_t len)
{
    snprintf(buf, len, "`auto`, `avx512`, `avx2`, `scalar`");
}

static int parse_numa(void *cfg, const char *v, size_t n)
{
    vm_config_t *c = cfg;
    uint64_t x;
    if (is(v, n, "off"))
        c->numa = VM_NUMA_OFF;
    else if (is(v, n, "local"))
        c->numa = VM_NUMA_LOCAL;
    else if (parse_uint(v, n, &x) && x < 1024)
        c->numa = (int)x;
    else
        return vm_fail(VMATCH_EINVAL, "spec: numa=%.*s: expected off, local or a node number",
                       (int)(n < 63 ? n : 63), v);
    return VMATCH_OK;
}

static void print_numa(const void *cfg, char *buf, size_t len)
{
    int numa = ((const vm_config_t *)cfg)->numa;
    if (numa == VM_NUMA_OFF)
        snprintf(buf, len, "off");
    else if (numa == VM_NUMA_LOCAL)
        snprintf(buf, len, "local");
    else
        snprintf(buf, len, "%d", numa);
}

static void values_numa(char *buf, size_t len)
{
    snprintf(buf, len, "`local`, `off`, node number");
}

/* rank=: a number, kept as int64_t so that "not set" (-1) differs from rank 0. */
static int parse_rank(void *cfg, const char *v, size_t n)
{
    uint64_t x;
    if (!parse_uint(v, n, &x) || x > INT32_MAX)
        return vm_fail(VMATCH_EINVAL, "spec: rank=%.*s: expected a number from 0 to %d",
                       shown(n), v, INT32_MAX);
    ((vm_config_t *)cfg)->rank = (int64_t)x;
    return VMATCH_OK;
}

static void print_rank(const void *cfg, char *buf, size_t len)
{
    int64_t rank = ((const vm_config_t *)cfg)->rank;
    if (rank < 0)
        buf[0] = '\0';
    else
        snprintf(buf, len, "%lld", (long long)rank);
}

static void values_rank(char *buf, size_t len)
{
    snprintf(buf, len, "not set, 0 … 2^31−1");
}

/* The named layouts (enum vm_layout): the widths each fixes and where each field starts.
 * default takes the widths of layout.ctx/src/tag and stacks the fields from the tag up. */
static const struct {
    const char *name;
    uint32_t ctx_bits, src_bits, tag_bits, ctx_shift, src_shift, tag_shift;
} layouts[] = {
    [VM_LAYOUT_DEFAULT] = {"default", 0, 0, 0, 0, 0, 0},
    /* Open MPI 4.1 pml/ucx (pml_ucx_request.h): tag 63..40, source 39..20, context 19..0 */
    [VM_LAYOUT_OMPI_UCX] = {"ompi-ucx", 20, 20, 24, 0, 20, 40},
    /* MPICH 4.0 ch4/ucx (ucx_types.h, 16 rank bits): context 63..48, rank 47..32, tag 31..0 */
    [VM_LAYOUT_MPICH_UCX] = {"mpich-ucx", 16, 16, 32, 48, 32, 0},
};
enum { NLAYOUTS = sizeof layouts / sizeof layouts[0] };

static int parse_layout(void *cfg, const char *v, size_t n)
{
    vm_config_t *c = cfg;
    for (uint32_t i = 0; i < NLAYOUTS; i++)
        if (is(v, n, layouts[i].name)) {
            c->layout = i;
            if (i != VM_LAYOUT_DEFAULT) {
                c->ctx_bits = layouts[i].ctx_bits;
                c->src_bits = layouts[i].src_bits;
                c->tag_bits = layouts[i].tag_bits;
            }
            return VMATCH_OK;
        }
    return vm_fail(VMATCH_EINVAL, "spec: layout=%.*s: expected default, ompi-ucx or mpich-ucx",
                   shown(n), v);
}

static void print_layout(const void *cfg, char *buf, size_t len)
{
    snprintf(buf, len, "%s", layouts[((const vm_config_t *)cfg)->layout].name);
}

static void values_layout(char *buf, size_t len)
{
    snprintf(buf, len, "`default`, `ompi-ucx`, `mpich-ucx`");
}

/* Where each field starts, from the layout and the widths. */
static void place_fields(vm_config_t *c)
{
    if (c->layout != VM_LAYOUT_DEFAULT) {
        c->ctx_shift = layouts[c->layout].ctx_shift;
        c->src_shift = layouts[c->layout].src_shift;
        c->tag_shift = layouts[c->layout].tag_shift;
        return;
    }
    c->tag_shift = 0;
    c->src_shift = c->tag_bits;
    c->ctx_shift = c->ctx_bits ? c->tag_bits + c->src_bits : 0;
}

static const char *const threads_words[] = {"off", "mutex", "multi", NULL};
static const char *const program_words[] = {"check", "any", NULL};

#define CORE(field)  offsetof(vm_config_t, field)
#define CUSTOM(name) .parse = parse_##name, .print = print_##name, .values = values_##name

static const vm_key_t core_keys[] = {
    {"policy", VM_KEY_CUSTOM, CUSTOM(policy),
     .help = "how the entries of each side are spread over queues (`hash`: exact entries in "
             "hashed buckets, docs/hash.md; `single`: one queue)"},
    {"storage", VM_KEY_CUSTOM, CUSTOM(storage), .help = "what one queue is made of"},
    {"simd", VM_KEY_CUSTOM, CUSTOM(simd),
     .help = "the vector kernel of a storage that has them; `auto` takes the fastest this CPU "
             "and OS run, a kernel they lack is `VMATCH_EUNSUPPORTED`"},
    {"layout.ctx", VM_KEY_UINT, CORE(ctx_bits), 0, 62,
     .help = "bits of the context id (the top bits unless `layout` says otherwise)"},
    {"layout.src", VM_KEY_UINT, CORE(src_bits), 1, 63,
     .help = "bits of the source rank (the middle bits)"},
    {"layout.tag", VM_KEY_UINT, CORE(tag_bits), 1, 63,
     .help = "bits of the tag (the low bits); the three widths sum to at most 64"},
    {"layout", VM_KEY_CUSTOM, CUSTOM(layout),
     .help = "where the fields lie: `default` as layout.ctx/src/tag say; `ompi-ucx` and "
             "`mpich-ucx` as Open MPI's pml/ucx and MPICH's ch4/ucx pack UCX tags (they set "
             "the three widths; docs/layout.md)"},
    {"nprocs", VM_KEY_UINT, CORE(nprocs), 1, 1u << 30, .flags = VM_KEY_UNSET0,
     .help = "number of processes: policies that bound their queues by c·√nprocs need it; "
             "must fit `layout.src`"},
    {"numa", VM_KEY_CUSTOM, CUSTOM(numa),
     .help = "where queue blocks are placed (libnuma); a node needs a build with libnuma"},
    {"profile.record", VM_KEY_BOOL, CORE(profile_record),
     .help = "count insertions per (context, source) for `vmatch_profile_save`"},
    {"profile", VM_KEY_PATH, CORE(profile),
     .help = "profile file the static designs read (`%r`: the rank, `%p`: the pid)"},
    {"profile.program", VM_KEY_WORD, CORE(profile_program), .words = program_words,
     .flags = VM_KEY_QUIET, .help = "`check`: refuse a profile of another program or rank"},
    {"profile.out", VM_KEY_PATH, CORE(profile_out),
     .help = "record the profile; `vmatch_save_recordings` writes it there"},
    {"trace.record", VM_KEY_BOOL, CORE(trace_record), .flags = VM_KEY_QUIET,
     .help = "record the matching calls for `vmatch_trace_save`"},
    {"trace.out", VM_KEY_PATH, CORE(trace_out),
     .help = "record the trace; `vmatch_save_recordings` writes it there"},
    {"trace.cap", VM_KEY_UINT, CORE(trace_cap), 1, 1u << 28, .flags = VM_KEY_QUIET,
     .help = "operations a trace keeps; the rest are counted"},
    {"rank", VM_KEY_CUSTOM, CUSTOM(rank),
     .help = "the rank `%r` stands for (not set: the launcher's)"},
    {"threads", VM_KEY_WORD, CORE(threads), .words = threads_words,
     .help = "who may call: `off` one thread at a time, `mutex` any thread (one lock), "
             "`multi` any thread, arrivals through a lock-free inbox (docs/threads.md)"},
    {"threads.inbox", VM_KEY_UINT, CORE(inbox), 1, 1u << 20,
     .help = "`threads=multi`: slots of each of the inbox's two buffers (an arrival that "
             "finds both the engine busy and its buffer full waits)"},
};

static const vm_config_t core_default = {
    .ctx_bits = 16,
    .src_bits = 24,
    .tag_bits = 24,
    .numa = VM_NUMA_LOCAL,
    .simd = VM_SIMD_AUTO,
    .inbox = 256,
    .trace_cap = 1u << 20,
    .rank = -1,
};

const vm_module_t vm_core_module = {
    VM_MODULE_KEYS(core_keys),
    /* its config is vm_config_t itself, not a part of mod[]: no cfg_size, and its defaults
     * only for the README's table (spec_write.c) */
    .cfg_default = &core_default,
};

void vm_layout_words(uint32_t ctx_bits, uint32_t src_bits, uint32_t tag_bits, char *buf,
                     size_t len)
{
    for (uint32_t i = VM_LAYOUT_DEFAULT + 1; i < NLAYOUTS; i++)
        if (layouts[i].ctx_bits == ctx_bits && layouts[i].src_bits == src_bits &&
            layouts[i].tag_bits == tag_bits) {
            snprintf(buf, len, "layout=%s", layouts[i].name);
            return;
        }
    if (ctx_bits == core_default.ctx_bits && src_bits == core_default.src_bits &&
        tag_bits == core_default.tag_bits)
        snprintf(buf, len, "layout=default");
    else
        snprintf(buf, len, "layout.ctx=%u layout.src=%u layout.tag=%u", ctx_bits, src_bits,
                 tag_bits);
}

/* ---- reading a key ---- */

/* Apply the value of n bytes at v of key k to its owner's config cfg. */
static int apply(void *cfg, const vm_key_t *k, const char *v, size_t n)
{
    char shown[64];
    snprintf(shown, sizeof shown, "%.*s", (int)(n < 63 ? n : 63), v);
    void *field = (char *)cfg + k->off;
    uint64_t x;
    switch (k->kind) {
    case VM_KEY_UINT:
        if (!parse_uint(v, n, &x) || (double)x < k->min || (double)x > k->max)
            return vm_fail(VMATCH_EINVAL, "spec: %s=%s: expected a number from %.0f to %.0f",
                           k->name, shown, k->min, k->max);
        if (k->step > 1 && x % k->step)
            return vm_fail(VMATCH_EINVAL, "spec: %s=%s: expected a multiple of %u", k->name,
                           shown, k->step);
        *(uint32_t *)field = (uint32_t)x;
        return VMATCH_OK;
    case VM_KEY_BOOL:
        if (!is(v, n, "on") && !is(v, n, "off"))
            return vm_fail(VMATCH_EINVAL, "spec: %s=%s: expected on or off", k->name, shown);
        *(uint32_t *)field = is(v, n, "on");
        return VMATCH_OK;
    case VM_KEY_WORD:
        for (uint32_t i = 0; k->words[i]; i++)
            if (is(v, n, k->words[i])) {
                *(uint32_t *)field = i;
                return VMATCH_OK;
            }
        {
            char list[128] = "";
            for (uint32_t i = 0; k->words[i]; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         i ? (k->words[i + 1] ? ", " : " or ") : "", k->words[i]);
            return vm_fail(VMATCH_EINVAL, "spec: %s=%s: expected %s", k->name, shown, list);
        }
    case VM_KEY_REAL: {
        double a;
        if (!parse_real(v, n, &a) || !(a >= k->min && a <= k->max))
            return vm_fail(VMATCH_EINVAL, "spec: %s=%s: expected a number from %g to %g",
                           k->name, shown, k->min, k->max);
        *(double *)field = a;
        return VMATCH_OK;
    }
    case VM_KEY_PATH: {
        if (n >= PATH_MAX)
            return vm_fail(VMATCH_EINVAL, "spec: %s path of %zu bytes: the system takes %d",
                           k->name, n, PATH_MAX - 1);
        char *path = malloc(n + 1);
        if (!path)
            return vm_fail(VMATCH_ENOMEM, "spec: out of memory for the %s path", k->name);
        memcpy(path, v, n);
        path[n] = '\0';
        free(*(char **)field);
        *(char **)field = path;
        return VMATCH_OK;
    }
    case VM_KEY_CUSTOM:
        return k->parse(cfg, v, n);
    }
    return VMATCH_EINVAL;
}

/* The key of module m named by the n bytes at name, or NULL. */
static const vm_key_t *key_of(const vm_module_t *m, const char *name, size_t n)
{
    for (unsigned i = 0; m && i < m->nkeys; i++)
        if (is(name, n, m->keys[i].name))
            return &m->keys[i];
    return NULL;
}

/* The key named by word (n bytes) and the config it sets, or an error. */
static int lookup(vm_config_t *cfg, const char *word, size_t n, const vm_key_t **k,
                  void **owner)
{
    *owner = cfg;
    if ((*k = key_of(&vm_core_module, word, n)) != NULL)
        return VMATCH_OK;
    const char *dot = memchr(word, '.', n);
    const vm_module_t *m = dot ? vm_module_find(word, (size_t)(dot - word)) : NULL;
    if (m && (*k = key_of(m, word, n)) != NULL) {
        *owner = vm_module_cfg_mut(cfg, m);
        return VMATCH_OK;
    }
    if (!m)
        return vm_fail(VMATCH_EINVAL, "spec: unknown key '%.*s'", shown(n), word);
    char known[256] = "";
    for (unsigned i = 0; i < m->nkeys; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                 m->keys[i].name);
    return vm_fail(VMATCH_EINVAL, "spec: unknown key '%.*s' (%s takes %s)", shown(n), word,
                   m->prefix, known);
}

static void set_defaults(vm_config_t *cfg)
{
    *cfg = core_default;
    cfg->policy = vm_policy_at(0);
    cfg->storage = vm_storage_at(0);
    const vm_module_t *m;
    for (unsigned i = 0; (m = vm_module_at(i)) != NULL; i++)
        if (m->cfg_size)
            memcpy(vm_module_cfg_mut(cfg, m), m->cfg_default, m->cfg_size);
}

/* The folder a recording (key=pattern) will be written to exists and takes files: checked
 * when the engine is made, so that a wrong path is not found only at the end of a run. */
static int check_out_folder(const vm_config_t *cfg, const char *key, const char *pattern)
{
    char path[PATH_MAX];
    if (!pattern)
        return VMATCH_OK;
    int rc = vm_path_expand(cfg, key, pattern, path, sizeof path);
    if (rc < 0)
        return rc;
    char *slash = strrchr(path, '/');
    const char *folder = !slash ? "." : slash == path ? "/" : path;
    if (slash && slash != path)
        *slash = '\0';
    struct stat st;
    if (stat(folder, &st) != 0)
        return vm_fail(VMATCH_EIO, "spec: %s=%s: the folder '%s' %s", key, pattern, folder,
                       errno == ENOENT ? "does not exist" : strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return vm_fail(VMATCH_EIO, "spec: %s=%s: '%s' is not a directory", key, pattern,
                       folder);
    if (access(folder, W_OK | X_OK) != 0)
        return vm_fail(VMATCH_EIO, "spec: %s=%s: cannot write in '%s': %s", key, pattern,
                       folder, strerror(errno));
    return VMATCH_OK;
}

/* Checks that involve several keys or the machine. */
static int validate(const vm_config_t *cfg)
{
    unsigned width = cfg->ctx_bits + cfg->src_bits + cfg->tag_bits;
    if (cfg->layout != VM_LAYOUT_DEFAULT && (cfg->ctx_bits != layouts[cfg->layout].ctx_bits ||
                                             cfg->src_bits != layouts[cfg->layout].src_bits ||
                                             cfg->tag_bits != layouts[cfg->layout].tag_bits))
        return vm_fail(VMATCH_EINVAL,
                       "spec: layout=%s has layout.ctx/src/tag = %u/%u/%u, not %u/%u/%u",
                       layouts[cfg->layout].name, layouts[cfg->layout].ctx_bits,
                       layouts[cfg->layout].src_bits, layouts[cfg->layout].tag_bits,
                       cfg->ctx_bits, cfg->src_bits, cfg->tag_bits);
    if (width > 64)
        return vm_fail(VMATCH_EINVAL, "spec: layout.ctx + layout.src + layout.tag = %u > 64",
                       width);
    if (cfg->src_bits < 31 && cfg->nprocs > (1u << cfg->src_bits))
        return vm_fail(VMATCH_EINVAL, "spec: nprocs=%u does not fit layout.src=%u bits",
                       cfg->nprocs, cfg->src_bits);
    if (!vm_simd_available((int)cfg->simd))
        return vm_fail(VMATCH_EUNSUPPORTED, "spec: simd=%s: %s", vm_simd_name((int)cfg->simd),
                       vm_simd_why_not((int)cfg->simd));
    if (cfg->numa >= 0) {
        if (!vm_numa_available())
            return vm_fail(VMATCH_EUNSUPPORTED,
                           "spec: numa=%d but this build or machine has no libnuma support",
                           cfg->numa);
        if (cfg->numa >= vm_numa_nodes())
            return vm_fail(VMATCH_EINVAL, "spec: numa=%d but the machine has %d node(s)",
                           cfg->numa, vm_numa_nodes());
    }
    int rc = check_out_folder(cfg, "profile.out", cfg->profile_out);
    return rc < 0 ? rc : check_out_folder(cfg, "trace.out", cfg->trace_out);
}

static int parse_words(const char *spec, vm_config_t *cfg)
{
    if (vm_module_cfg_bytes() > VM_MODULE_CFG_BYTES) /* a new module's config is too big */
        return vm_fail(VMATCH_EUNSUPPORTED,
                       "spec: the modules' configs need %zu bytes, "
                       "VM_MODULE_CFG_BYTES is %d",
                       vm_module_cfg_bytes(), VM_MODULE_CFG_BYTES);
    const char *p = spec;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            return validate(cfg);
        const char *word = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        size_t len = (size_t)(p - word);
        const char *eq = memchr(word, '=', len);
        if (!eq || eq == word || eq == word + len - 1)
            return vm_fail(VMATCH_EINVAL, "spec: '%.*s' is not key=value", shown(len), word);
        size_t klen = (size_t)(eq - word);
        const vm_key_t *k;
        void *owner;
        int rc = lookup(cfg, word, klen, &k, &owner);
        if (rc == VMATCH_OK)
            rc = apply(owner, k, eq + 1, len - klen - 1);
        if (rc < 0)
            return rc;
    }
}

int vm_spec_parse(const char *spec, vm_config_t *cfg)
{
    set_defaults(cfg);
    int rc = parse_words(spec ? spec : "", cfg);
    if (rc < 0) {
        vm_spec_free(cfg);
        return rc;
    }
    /* Resolved here, once: vmatch_describe then names the kernel that runs, and the
     * storages never ask the CPU. */
    if (cfg->simd == VM_SIMD_AUTO)
        cfg->simd = (uint32_t)vm_simd_best();
    place_fields(cfg);
    /* A file to write asks for its recording. */
    cfg->profile_record |= cfg->profile_out != NULL;
    cfg->trace_record |= cfg->trace_out != NULL;
    return VMATCH_OK;
}

void vm_spec_free(vm_config_t *cfg)
{
    for (unsigned i = 0; i < vm_core_module.nkeys; i++)
        if (vm_core_module.keys[i].kind == VM_KEY_PATH) {
            char **path = (char **)((char *)cfg + vm_core_module.keys[i].off);
            free(*path);
            *path = NULL;
        }
}
