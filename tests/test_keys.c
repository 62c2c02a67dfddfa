/* test_keys.c -- the modules' key tables: the README's key table is the one the code
 * generates (every key, its default, its bounds), every key round-trips through
 * vmatch_describe, a module's keys appear only when the module is in use, and the modules'
 * configs fit vm_config_t.  The same for the statistics keys (vmatch_stat): the README's
 * table is the generated one, and each key is kept by its module's policy and by no other.
 *
 *   test_keys README.md docs/statistics.md           check
 *   test_keys --write README.md docs/statistics.md   regenerate the tables between the markers
 * (the spec keys in the first file, the statistics keys in the second) */
#include "check.h"
#include "module.h"
#include "spec.h"
#include "vmatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A table the code generates and the README shows between two markers. */
typedef struct doc_table {
    const char *begin, *end, *what;
    size_t (*gen)(char *buf, size_t len);
} doc_table_t;

static const doc_table_t key_table = {"<!-- keys:begin -->\n", "<!-- keys:end -->", "key table",
                                      vm_spec_table};
static const doc_table_t stat_table = {"<!-- stats:begin -->\n", "<!-- stats:end -->",
                                       "statistics table", vm_stat_table};

/* The whole file at path, terminated, or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        *len = fread(buf, 1, (size_t)n, f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

static char *table(const doc_table_t *t)
{
    size_t n = t->gen(NULL, 0);
    char *text = malloc(n + 1);
    REQUIRE(text != NULL);
    REQUIRE(t->gen(text, n + 1) == n && strlen(text) == n);
    return text;
}

/* The README's table t is the generated one; with write, make it so. */
static int readme(const char *path, const doc_table_t *t, int write)
{
    size_t len = 0;
    char *doc = slurp(path, &len), *gen = table(t);
    REQUIRE(doc != NULL);
    char *b = strstr(doc, t->begin), *e = b ? strstr(b, t->end) : NULL;
    if (!b || !e) {
        fprintf(stderr, "%s: no %.*s ... %s markers around the %s\n", path,
                (int)strlen(t->begin) - 1, t->begin, t->end, t->what);
        CHECK(0);
        return 0;
    }
    b += strlen(t->begin);
    int same = (size_t)(e - b) == strlen(gen) && memcmp(b, gen, strlen(gen)) == 0;
    if (write && !same) {
        FILE *f = fopen(path, "wb");
        REQUIRE(f != NULL);
        fwrite(doc, 1, (size_t)(b - doc), f);
        fputs(gen, f);
        fputs(e, f);
        REQUIRE(fclose(f) == 0);
        printf("%s: %s rewritten\n", path, t->what);
    } else if (!same) {
        fprintf(stderr,
                "%s: the %s differs from the code's tables; regenerate it with "
                "`test_keys --write README.md docs/statistics.md` (build/*/tests/).  The "
                "code's table:\n%s",
                path, t->what, gen);
    }
    CHECK(same || write);
    free(doc);
    free(gen);
    return same;
}

/* An empty profile for the policies that read one (the spec of every policy names it; the
 * others ignore it). */
#define EMPTY_PROFILE "test_keys.profile"

/* The figures of module m (vmatch_stat keys): in the statistics table, under its prefix,
 * none named as a spec key, each kept by e (an engine of m's first policy) and by no engine
 * of policy=single, which keeps none. */
static void stat_keys(const vm_module_t *m, const vmatch_engine_t *e, const char *stats)
{
    vmatch_engine_t *single = NULL;
    REQUIRE(vmatch_create("policy=single", &single) == VMATCH_OK);
    CHECK(m->nstat_keys == 0 || (m->prefix && m->policies && m->stat_keys));
    for (unsigned k = 0; k < m->nstat_keys; k++) {
        const vm_stat_key_t *key = &m->stat_keys[k];
        const vm_module_t *owner = NULL;
        char row[96];
        snprintf(row, sizeof row, "| `%s` | ", key->name);
        CHECK(strstr(stats, row) != NULL);
        CHECK(strncmp(key->name, m->prefix, strlen(m->prefix)) == 0 &&
              key->name[strlen(m->prefix)] == '.');
        CHECK(vm_stat_key_find(key->name, &owner) == key && owner == m);
        CHECK(key->help && key->help[0]);
        const vm_module_t *o;
        for (unsigned i = 0; (o = vm_module_at(i)) != NULL; i++)
            for (unsigned j = 0; j < o->nkeys; j++)
                CHECK(strcmp(o->keys[j].name, key->name) != 0);
        uint64_t v;
        _Alignas(16) unsigned char buf[VM_STAT_STRUCT_BYTES];
        if (key->size) {
            CHECK(key->min_size > 0 && key->min_size <= key->size &&
                  key->size <= VM_STAT_STRUCT_BYTES);
            CHECK_EQ(vmatch_stat_struct(e, key->name, 0, buf, key->size), VMATCH_OK);
            CHECK_EQ(vmatch_stat_struct(single, key->name, 0, buf, key->size),
                     VMATCH_EUNSUPPORTED);
            CHECK_EQ(vmatch_stat(e, key->name, &v), VMATCH_EINVAL);
        } else {
            CHECK_EQ(key->min_size, 0);
            CHECK_EQ(vmatch_stat(e, key->name, &v), VMATCH_OK);
            CHECK_EQ(vmatch_stat(single, key->name, &v), VMATCH_EUNSUPPORTED);
            CHECK_EQ(vmatch_stat_struct(e, key->name, 0, buf, sizeof buf), VMATCH_EINVAL);
        }
    }
    vmatch_destroy(single);
}

/* Every key of every module: in the table with its default, and vmatch_describe shows the
 * key exactly when its module is in use. */
static void every_key(void)
{
    FILE *f = fopen(EMPTY_PROFILE, "w");
    REQUIRE(f != NULL);
    fputs("vmatch-profile 1\nlayout 16 24 24\nnprocs 16\n", f);
    REQUIRE(fclose(f) == 0);
    char *gen = table(&key_table), *stats = table(&stat_table);
    const vm_module_t *m;
    for (unsigned i = 0; (m = vm_module_at(i)) != NULL; i++) {
        CHECK(m->nkeys == 0 || (m->prefix && m->keys && m->cfg_default));
        for (unsigned k = 0; k < m->nkeys; k++) {
            const vm_key_t *key = &m->keys[k];
            char row[96];
            snprintf(row, sizeof row, "| `%s` | ", key->name);
            CHECK(strstr(gen, row) != NULL);
            /* a module owns only keys of its prefix */
            CHECK(strncmp(key->name, m->prefix, strlen(m->prefix)) == 0 &&
                  key->name[strlen(m->prefix)] == '.');
            CHECK(key->help && key->help[0]);
        }
        /* with one of its storages or policies in use, its keys are described */
        char spec[96] = "";
        if (m->storages)
            snprintf(spec, sizeof spec, "storage=%s", m->storages[0]->name);
        else if (m->policies)
            snprintf(spec, sizeof spec, "policy=%s nprocs=16 profile=" EMPTY_PROFILE,
                     m->policies[0]->name);
        vmatch_engine_t *e = NULL;
        REQUIRE(spec[0] && vmatch_create(spec, &e) == VMATCH_OK);
        for (unsigned k = 0; k < m->nkeys; k++) {
            char word[80];
            snprintf(word, sizeof word, " %s=", m->keys[k].name);
            CHECK(strstr(vmatch_describe(e), word) != NULL);
        }
        stat_keys(m, e, stats);
        vmatch_destroy(e);
    }
    /* The engine's own figures: every engine keeps them. */
    vmatch_engine_t *e = NULL;
    REQUIRE(vmatch_create("policy=single", &e) == VMATCH_OK);
    static const char *const core[] = {"posted",    "unexpected", "searches",
                                       "inspected", "queues",     "bytes"};
    for (size_t k = 0; k < sizeof core / sizeof core[0]; k++) {
        const vm_module_t *owner = vm_module_at(0);
        uint64_t v;
        CHECK(vm_stat_key_find(core[k], &owner) != NULL && owner == NULL);
        CHECK_EQ(vmatch_stat(e, core[k], &v), VMATCH_OK);
    }
    vmatch_destroy(e);
    free(gen);
    free(stats);
    remove(EMPTY_PROFILE);
}

/* A module's keys are described only when it is in use; unknown keys of a known prefix say
 * which keys the module takes. */
static void in_use_only(void)
{
    vmatch_engine_t *e = NULL;
    REQUIRE(vmatch_create("storage=ll lla.block=8 llv.block=128 pnp.cap=4", &e) == VMATCH_OK);
    CHECK(strstr(vmatch_describe(e), "lla.") == NULL);
    CHECK(strstr(vmatch_describe(e), "llv.") == NULL);
    CHECK(strstr(vmatch_describe(e), "pnp.") == NULL);
    vmatch_destroy(e);
    REQUIRE(vmatch_create("policy=pnp nprocs=9 storage=lla lla.block=8 pnp.metric=fence "
                          "pnp.alpha=0.25 pnp.move=off",
                          &e) == VMATCH_OK);
    const char *d = vmatch_describe(e);
    CHECK(strstr(d, " lla.block=8") && strstr(d, " pnp.metric=fence") &&
          strstr(d, " pnp.alpha=0.25") && strstr(d, " pnp.move=off") && !strstr(d, "llv."));
    vmatch_destroy(e);

    /* A real value is described exactly: the text makes an engine with the same value (the
     * fuzzers found %g cut 12.3456789 to 12.3457). */
    REQUIRE(vmatch_create("policy=pnp nprocs=4 pnp.alpha=12.3456789", &e) == VMATCH_OK);
    const char *alpha = strstr(vmatch_describe(e), " pnp.alpha=12.3456789");
    CHECK(alpha && (alpha[21] == ' ' || alpha[21] == '\0'));
    vmatch_destroy(e);

    e = NULL;
    CHECK_EQ(vmatch_create("pnp.thresold=5", &e), VMATCH_EINVAL);
    CHECK(e == NULL && strstr(vmatch_last_error(), "pnp.thresold") &&
          strstr(vmatch_last_error(), "pnp.threshold"));
    CHECK_EQ(vmatch_create("nosuch.key=5", &e), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "nosuch.key") != NULL);
    CHECK_EQ(vmatch_create("pnp.metric=mean", &e), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "average, median or fence") != NULL);
    CHECK_EQ(vmatch_create("llv.block=96", &e), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "multiple of 64") != NULL);
    CHECK_EQ(vmatch_create("pnp.alpha=101", &e), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create("pnp.alpha=-1", &e), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create("pnp.alpha=1e3", &e), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create("pnp.alpha=nan", &e), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create("pnp.alpha=0x1p2", &e), VMATCH_EINVAL); /* .5 is taken (test_spec) */
    CHECK_EQ(vmatch_create("pnp=1", &e), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create("pnp.=1", &e), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create(".cap=1", &e), VMATCH_EINVAL);
    CHECK(e == NULL);
}

/* The configs fit, and each module's config starts where the defaults put it. */
static void configs(void)
{
    CHECK(vm_module_cfg_bytes() <= VM_MODULE_CFG_BYTES);
    vm_config_t cfg;
    REQUIRE(vm_spec_parse("", &cfg) == VMATCH_OK);
    const vm_module_t *m;
    size_t end = 0;
    for (unsigned i = 0; (m = vm_module_at(i)) != NULL; i++) {
        const unsigned char *c = vm_module_cfg(&cfg, m);
        CHECK(c >= cfg.mod + end && c + m->cfg_size <= cfg.mod + sizeof cfg.mod);
        CHECK(m->cfg_size == 0 || memcmp(c, m->cfg_default, m->cfg_size) == 0);
        end = (size_t)(c - cfg.mod) + m->cfg_size;
    }
    vm_spec_free(&cfg);
}

int main(int argc, char **argv)
{
    int write = argc > 2 && strcmp(argv[1], "--write") == 0;
    /* With a README, only its table: ctest runs both forms at once, and every_key writes its
     * profile file in the working directory they share. */
    if (argc > 1) { /* [--write] KEYS_FILE [STATS_FILE]: the spec keys' table, the figures' */
        int first = write ? 2 : 1;
        readme(argv[first], &key_table, write);
        readme(argv[argc > first + 1 ? first + 1 : first], &stat_table, write);
    } else {
        every_key();
        in_use_only();
        configs();
    }
    return check_report("test_keys");
}
