/* test_keys.c -- the modules' key tables: the README's key table is the one the code
 * generates (every key, its default, its bounds), every key round-trips through
 * vmatch_describe, a module's keys appear only when the module is in use, and the modules'
 * configs fit vm_config_t.
 *
 *   test_keys README.md           check
 *   test_keys --write README.md   regenerate the table between the markers */
#include "check.h"
#include "module.h"
#include "spec.h"
#include "vmatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BEGIN "<!-- keys:begin -->\n"
#define END   "<!-- keys:end -->"

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

static char *table(void)
{
    size_t n = vm_spec_table(NULL, 0);
    char *t = malloc(n + 1);
    REQUIRE(t != NULL);
    REQUIRE(vm_spec_table(t, n + 1) == n && strlen(t) == n);
    return t;
}

/* The README's table is the generated one; with write, make it so. */
static int readme(const char *path, int write)
{
    size_t len = 0;
    char *doc = slurp(path, &len), *gen = table();
    REQUIRE(doc != NULL);
    char *b = strstr(doc, BEGIN), *e = b ? strstr(b, END) : NULL;
    if (!b || !e) {
        fprintf(stderr, "%s: no %s ... %s markers around the key table\n", path, "keys:begin",
                "keys:end");
        CHECK(0);
        return 0;
    }
    b += strlen(BEGIN);
    int same = (size_t)(e - b) == strlen(gen) && memcmp(b, gen, strlen(gen)) == 0;
    if (write && !same) {
        FILE *f = fopen(path, "wb");
        REQUIRE(f != NULL);
        fwrite(doc, 1, (size_t)(b - doc), f);
        fputs(gen, f);
        fputs(e, f);
        REQUIRE(fclose(f) == 0);
        printf("%s: key table rewritten\n", path);
    } else if (!same) {
        fprintf(stderr,
                "%s: the key table differs from the code's key tables; regenerate it with "
                "`test_keys --write README.md` (build/*/tests/).  The code's table:\n%s",
                path, gen);
    }
    CHECK(same || write);
    free(doc);
    free(gen);
    return same;
}

/* An empty profile for the policies that read one (the spec of every policy names it; the
 * others ignore it). */
#define EMPTY_PROFILE "test_keys.profile"

/* Every key of every module: in the table with its default, and vmatch_describe shows the
 * key exactly when its module is in use. */
static void every_key(void)
{
    FILE *f = fopen(EMPTY_PROFILE, "w");
    REQUIRE(f != NULL);
    fputs("vmatch-profile 1\nlayout 16 24 24\nnprocs 16\n", f);
    REQUIRE(fclose(f) == 0);
    char *gen = table();
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
        vmatch_destroy(e);
    }
    free(gen);
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
    CHECK_EQ(vmatch_create("pnp.alpha=.5", &e), VMATCH_EINVAL);
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
    if (argc > 1) {
        readme(argv[argc - 1], write);
    } else {
        every_key();
        in_use_only();
        configs();
    }
    return check_report("test_keys");
}
