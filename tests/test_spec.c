/* test_spec.c -- spec strings: every key, defaults, blanks, repeated keys, the VMATCH_SPEC
 * environment variable, and every class of bad spec. */
/* setenv and unsetenv are POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "module.h"
#include "vmatch.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What vmatch_create must leave in *out when it fails: an address no engine can have. */
static alignas(max_align_t) unsigned char sentinel_obj[64];
#define SENTINEL ((vmatch_engine_t *)(void *)sentinel_obj)

#define DEF_CTX 16
#define DEF_SRC 24
#define DEF_TAG 24

/** Value of key in e's resolved spec, copied into buf; 0 when the key is absent. */
static int desc_get(const vmatch_engine_t *e, const char *key, char *buf, size_t len)
{
    const char *s = vmatch_describe(e);
    size_t klen = strlen(key);
    if (!s)
        return 0;
    while (*s) {
        size_t w;
        while (*s == ' ' || *s == '\t')
            s++;
        w = strcspn(s, " \t");
        if (w > klen && strncmp(s, key, klen) == 0 && s[klen] == '=') {
            size_t v = w - klen - 1;
            if (v >= len)
                v = len - 1;
            memcpy(buf, s + klen + 1, v);
            buf[v] = '\0';
            return 1;
        }
        s += w;
    }
    return 0;
}

/** True when e's resolved spec has key=want. */
static int desc_is(const vmatch_engine_t *e, const char *key, const char *want)
{
    char v[4200]; /* room for the longest profile path test_long_path tries */
    if (!desc_get(e, key, v, sizeof v)) {
        fprintf(stderr, "describe \"%s\" lacks %s\n", vmatch_describe(e), key);
        return 0;
    }
    if (strcmp(v, want) != 0) {
        fprintf(stderr, "describe \"%s\": %s=%s, want %s\n", vmatch_describe(e), key, v, want);
        return 0;
    }
    return 1;
}

/** True when e's layout is c/s/t, both through vmatch_layout and the resolved spec. */
static int layout_is(const vmatch_engine_t *e, unsigned c, unsigned s, unsigned t)
{
    unsigned gc = 99, gs = 99, gt = 99;
    char want[16];
    int ok = 1;
    vmatch_layout(e, &gc, &gs, &gt);
    if (gc != c || gs != s || gt != t) {
        fprintf(stderr, "layout %u/%u/%u, want %u/%u/%u\n", gc, gs, gt, c, s, t);
        ok = 0;
    }
    snprintf(want, sizeof want, "%u", c);
    ok &= desc_is(e, "layout.ctx", want);
    snprintf(want, sizeof want, "%u", s);
    ok &= desc_is(e, "layout.src", want);
    snprintf(want, sizeof want, "%u", t);
    ok &= desc_is(e, "layout.tag", want);
    return ok;
}

/** Create from spec, which must succeed; NULL (with the failure counted) when it does not. */
static vmatch_engine_t *make(const char *spec)
{
    vmatch_engine_t *e = SENTINEL;
    int rc = vmatch_create(spec, &e);
    if (rc != VMATCH_OK) {
        fprintf(stderr, "vmatch_create(\"%s\") = %d (%s): %s\n", spec ? spec : "(null)", rc,
                vmatch_strerror(rc), vmatch_last_error());
        CHECK_EQ(rc, VMATCH_OK);
        return NULL;
    }
    CHECK(e != NULL && e != SENTINEL);
    return e;
}

/** spec must fail with one of the codes want1 / want2, leave *out alone and say why. */
static void bad2(const char *spec, int want1, int want2)
{
    vmatch_engine_t *e = SENTINEL;
    int rc = vmatch_create(spec, &e);
    const char *err = vmatch_last_error();
    if (rc != want1 && rc != want2) {
        fprintf(stderr, "vmatch_create(\"%s\") = %d, want %d\n", spec ? spec : "(null)", rc,
                want1);
        if (rc == VMATCH_OK && e != SENTINEL)
            vmatch_destroy(e);
    }
    CHECK(rc == want1 || rc == want2);
    CHECK(e == SENTINEL);
    CHECK(err != NULL && err[0] != '\0');
}

/** spec must be rejected as VMATCH_EINVAL. */
static void bad(const char *spec)
{
    bad2(spec, VMATCH_EINVAL, VMATCH_EINVAL);
}

/** The defaults, from "" and from a spec of blanks only. */
static void test_defaults(void)
{
    const char *specs[] = {"", "   ", " \t "};
    size_t i;
    for (i = 0; i < sizeof specs / sizeof *specs; i++) {
        vmatch_engine_t *e = make(specs[i]);
        char v[300];
        if (!e)
            continue;
        CHECK(layout_is(e, DEF_CTX, DEF_SRC, DEF_TAG));
        CHECK(desc_is(e, "policy", "hash")); /* the default: docs/hash.md, "The default" */
        /* The default storage may change as storages are added; it must be a real one. */
        CHECK(desc_get(e, "storage", v, sizeof v) && vm_storage_find(v) != NULL);
        /* nprocs not given: absent, or 0 if the resolved spec spells it out. */
        CHECK(!desc_get(e, "nprocs", v, sizeof v) || strcmp(v, "0") == 0);
        CHECK(desc_get(e, "numa", v, sizeof v));
        CHECK(desc_is(e, "profile.record", "off"));
        /* simd=auto is resolved: the resolved spec names the kernel that runs */
        CHECK(desc_get(e, "simd", v, sizeof v) && strcmp(v, "auto") != 0 &&
              vmatch_simd_available(v) == 1);
        vmatch_destroy(e);
    }
}

/** Each key on its own, and the value comes back through vmatch_describe. */
static void test_each_key(void)
{
    struct {
        const char *spec, *key, *value;
    } cases[] = {
        {"policy=single", "policy", "single"},
        {"nprocs=1", "nprocs", "1"},
        {"nprocs=64", "nprocs", "64"},
        {"nprocs=16777216", "nprocs", "16777216"}, /* 2^24 sources fill layout.src=24 */
        {"layout.src=30 layout.tag=18 nprocs=1073741824", "nprocs", "1073741824"},
        {"numa=off", "numa", "off"},
        {"numa=local", "numa", "local"},
        {"storage=lla lla.block=4", "lla.block", "4"},
        {"storage=lla lla.block=32", "lla.block", "32"},
        {"storage=lla lla.block=1024", "lla.block", "1024"},
        {"storage=llv llv.block=64", "llv.block", "64"},
        {"storage=llv llv.block=4096", "llv.block", "4096"},
        {"storage=llv simd=scalar", "simd", "scalar"},
        {"profile.record=on", "profile.record", "on"},
        {"profile.record=off", "profile.record", "off"},
        {"profile=/tmp/vmatch-test-spec.prof", "profile", "/tmp/vmatch-test-spec.prof"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        vmatch_engine_t *e = make(cases[i].spec);
        if (!e)
            continue;
        CHECK(desc_is(e, cases[i].key, cases[i].value));
        vmatch_destroy(e);
    }
    /* Every registered storage and policy is reachable by name. */
    for (i = 0; vm_storage_at((unsigned)i); i++) {
        char spec[96];
        vmatch_engine_t *e;
        snprintf(spec, sizeof spec, "storage=%s", vm_storage_at((unsigned)i)->name);
        if ((e = make(spec)) != NULL) {
            CHECK(desc_is(e, "storage", vm_storage_at((unsigned)i)->name));
            vmatch_destroy(e);
        }
    }
    for (i = 0; vm_policy_at((unsigned)i); i++) {
        char spec[96];
        vmatch_engine_t *e = SENTINEL;
        int rc;
        snprintf(spec, sizeof spec, "policy=%s", vm_policy_at((unsigned)i)->name);
        /* A policy may need more keys (a profile path, say); only EINVAL for missing keys
         * is acceptable then, and only when it says why. */
        rc = vmatch_create(spec, &e);
        if (rc == VMATCH_OK) {
            CHECK(desc_is(e, "policy", vm_policy_at((unsigned)i)->name));
            vmatch_destroy(e);
        } else {
            CHECK(rc == VMATCH_EINVAL && e == SENTINEL && vmatch_last_error()[0]);
        }
    }
    /* numa=0: node 0 exists wherever there is NUMA; a build without libnuma may refuse. */
    {
        vmatch_engine_t *e = SENTINEL;
        int rc = vmatch_create("numa=0", &e);
        CHECK(rc == VMATCH_OK || rc == VMATCH_EUNSUPPORTED);
        if (rc == VMATCH_OK) {
            CHECK(desc_is(e, "numa", "0"));
            vmatch_destroy(e);
        } else {
            CHECK(e == SENTINEL);
        }
    }
}

/** Layouts, including the extremes of each width and sums of exactly 64. */
static void test_layouts(void)
{
    const unsigned l[][3] = {{8, 20, 36},  {1, 31, 32},  {0, 32, 32}, {0, 1, 63},
                             {62, 1, 1},   {32, 16, 16}, {4, 10, 10}, {0, 63, 1},
                             {20, 20, 24}, {16, 24, 24}};
    size_t i;
    for (i = 0; i < sizeof l / sizeof *l; i++) {
        char spec[96];
        vmatch_engine_t *e;
        snprintf(spec, sizeof spec, "layout.ctx=%u layout.src=%u layout.tag=%u", l[i][0],
                 l[i][1], l[i][2]);
        if ((e = make(spec)) != NULL) {
            CHECK(layout_is(e, l[i][0], l[i][1], l[i][2]));
            vmatch_destroy(e);
        }
    }
    /* One field alone keeps the other defaults; the sum is judged on the final layout,
     * so an order whose intermediate sum passes 64 is still fine. */
    {
        const struct {
            const char *spec;
            unsigned c, s, t;
        } cases[] = {
            {"layout.tag=20", DEF_CTX, DEF_SRC, 20},
            {"layout.ctx=8", 8, DEF_SRC, DEF_TAG},
            {"layout.src=10", DEF_CTX, 10, DEF_TAG},
            {"layout.tag=40 layout.src=8", DEF_CTX, 8, 40},
            {"layout.ctx=40 layout.src=12 layout.tag=12", 40, 12, 12},
        };
        for (i = 0; i < sizeof cases / sizeof *cases; i++) {
            vmatch_engine_t *e = make(cases[i].spec);
            if (e) {
                CHECK(layout_is(e, cases[i].c, cases[i].s, cases[i].t));
                vmatch_destroy(e);
            }
        }
    }
}

/** Any profile path the system takes (shorter than PATH_MAX, 4096 on Linux) is kept whole;
 * a longer one is refused with a message, never cut short. */
static void test_long_path(void)
{
    const size_t lens[] = {200, 255, 256, 300, 4000, 4095, 4096, 10000};
    char *spec = malloc(20000), *path = spec + strlen("profile=");
    size_t i;
    REQUIRE(spec != NULL);
    for (i = 0; i < sizeof lens / sizeof *lens; i++) {
        vmatch_engine_t *e = SENTINEL;
        int rc;
        strcpy(spec, "profile=/");
        memset(path + 1, 'p', lens[i] - 1);
        path[lens[i]] = '\0';
        rc = vmatch_create(spec, &e);
        if (lens[i] < 4096) {
            CHECK_EQ(rc, VMATCH_OK);
            if (rc == VMATCH_OK) {
                CHECK(desc_is(e, "profile", path));
                vmatch_destroy(e);
            }
        } else {
            CHECK_EQ(rc, VMATCH_EINVAL);
            CHECK(e == SENTINEL && strstr(vmatch_last_error(), "profile path") != NULL);
        }
    }
    free(spec);
}

/** Blanks of any run length, tabs, leading and trailing. */
static void test_blanks(void)
{
    const char *specs[] = {
        "policy=single storage=ll layout.tag=20 layout.src=28",
        "  policy=single   storage=ll layout.tag=20\tlayout.src=28  ",
        "\tpolicy=single\t\tstorage=ll \t layout.tag=20 layout.src=28\t",
    };
    size_t i;
    for (i = 0; i < sizeof specs / sizeof *specs; i++) {
        vmatch_engine_t *e = make(specs[i]);
        if (!e)
            continue;
        CHECK(layout_is(e, DEF_CTX, 28, 20));
        CHECK(desc_is(e, "storage", "ll"));
        vmatch_destroy(e);
    }
}

/** A key given twice takes its last value, for numbers and names alike. */
static void test_last_wins(void)
{
    vmatch_engine_t *e;
    if ((e = make("layout.tag=20 layout.src=18 layout.tag=30")) != NULL) {
        CHECK(layout_is(e, DEF_CTX, 18, 30));
        vmatch_destroy(e);
    }
    if ((e = make("storage=ll storage=lla")) != NULL) {
        CHECK(desc_is(e, "storage", "lla"));
        vmatch_destroy(e);
    }
    if ((e = make("storage=lla storage=ll")) != NULL) {
        CHECK(desc_is(e, "storage", "ll"));
        vmatch_destroy(e);
    }
    if ((e = make("nprocs=5 nprocs=7 numa=off numa=local numa=off")) != NULL) {
        CHECK(desc_is(e, "nprocs", "7"));
        CHECK(desc_is(e, "numa", "off"));
        vmatch_destroy(e);
    }
    if ((e = make("profile.record=on profile.record=off")) != NULL) {
        CHECK(desc_is(e, "profile.record", "off"));
        vmatch_destroy(e);
    }
}

/** spec NULL reads VMATCH_SPEC; "" and explicit specs ignore it. */
static void test_env(void)
{
    vmatch_engine_t *e;
    CHECK_EQ(setenv("VMATCH_SPEC", "layout.tag=20 layout.src=28 storage=ll", 1), 0);
    if ((e = make(NULL)) != NULL) {
        CHECK(layout_is(e, DEF_CTX, 28, 20));
        CHECK(desc_is(e, "storage", "ll"));
        vmatch_destroy(e);
    }
    if ((e = make("")) != NULL) {
        CHECK(layout_is(e, DEF_CTX, DEF_SRC, DEF_TAG));
        vmatch_destroy(e);
    }
    if ((e = make("layout.tag=30 layout.src=18")) != NULL) {
        CHECK(layout_is(e, DEF_CTX, 18, 30));
        vmatch_destroy(e);
    }
    /* A bad VMATCH_SPEC fails like a bad argument. */
    CHECK_EQ(setenv("VMATCH_SPEC", "layout.tag=99", 1), 0);
    bad(NULL);
    CHECK_EQ(setenv("VMATCH_SPEC", "", 1), 0);
    if ((e = make(NULL)) != NULL) {
        CHECK(layout_is(e, DEF_CTX, DEF_SRC, DEF_TAG));
        vmatch_destroy(e);
    }
    CHECK_EQ(unsetenv("VMATCH_SPEC"), 0);
    if ((e = make(NULL)) != NULL) {
        CHECK(layout_is(e, DEF_CTX, DEF_SRC, DEF_TAG));
        vmatch_destroy(e);
    }
}

/** Every class of bad spec. */
static void test_bad(void)
{
    static const char *const einval[] = {
        /* unknown key, malformed words */
        "polcy=single",
        "policy",
        "policy=single storage=ll extra",
        "=single",
        "=",
        "policy=",
        "layout.ctx=",
        "profile=",
        "layout.ctx= 16",
        /* unknown names */
        "policy=nosuch",
        "policy=single=ll",
        "storage=nosuch",
        "storage=",
        "profile.record=maybe",
        "numa=abc",
        "numa=-5",
        /* non-numeric numbers */
        "layout.ctx=abc",
        "layout.ctx=12x",
        "layout.ctx=16.5",
        "nprocs=abc",
        "nprocs=1e3",
        "lla.block=x",
        /* out of range */
        "layout.ctx=-1",
        "layout.ctx=63",
        "layout.src=0",
        "layout.src=64",
        "layout.tag=0",
        "layout.tag=64",
        "layout.tag=-3",
        "layout.tag=4294967320", /* 2^32 + 24: must not wrap to 24 */
        "nprocs=0",
        "nprocs=-4",
        "nprocs=1073741825",
        "nprocs=4294967297", /* 2^32 + 1 */
        "nprocs=16777217",   /* more sources than layout.src=24 holds */
        "layout.src=8 nprocs=257",
        "layout.ctx=8 layout.src=30 layout.tag=26 nprocs=1073741825",
        "nprocs=99999999999999999999999999",
        "lla.block=0",
        "lla.block=3",
        "lla.block=1025",
        "llv.block=0",
        "llv.block=32",
        "llv.block=100",
        "llv.block=4160",
        "simd=sse2",
        "simd=AVX2",
        "simd=",
        "storage=lla lla.block=3",
        /* layouts wider than 64 bits */
        "layout.tag=25",
        "layout.ctx=1 layout.src=32 layout.tag=32",
        "layout.ctx=62 layout.src=2 layout.tag=1",
        "layout.ctx=0 layout.src=63 layout.tag=2",
        "layout.ctx=62 layout.src=63 layout.tag=63",
        /* a good spec with one bad word anywhere */
        "policy=single storage=ll layout.tag=20 bogus=1",
        "bogus=1 policy=single",
    };
    size_t i;
    for (i = 0; i < sizeof einval / sizeof *einval; i++)
        bad(einval[i]);

    /* The message names the offending key, so a user can find it in a long spec. */
    bad("policy=single polcy=single");
    CHECK(strstr(vmatch_last_error(), "polcy") != NULL);

    /* A node that does not exist: refused as a bad value or as beyond this machine. */
    bad2("numa=100000", VMATCH_EINVAL, VMATCH_EUNSUPPORTED);

    /* No place for the engine. */
    CHECK_EQ(vmatch_create("", NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create(NULL, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_create("bogus=1", NULL), VMATCH_EINVAL);
    CHECK(vmatch_last_error()[0] != '\0');
}

/** One grammar for the numbers of every key (issue 37): leading zeros and a point with
 * digits on one side are taken alike by every key; exponents, hex, signs, inf and nan by
 * none.  Before, pnp.alpha refused .5 and took 0x1p2 and 1e2, layout.tag refused 11 digits
 * with leading zeros that llv.block took. */
static void test_number_grammar(void)
{
    static const struct {
        const char *spec, *shows;
    } good[] = {
        {"policy=pnp nprocs=16 pnp.alpha=.5", "pnp.alpha=0.5"},
        {"policy=pnp nprocs=16 pnp.alpha=2.", "pnp.alpha=2"},
        {"policy=pnp nprocs=16 pnp.alpha=0001.25", "pnp.alpha=1.25"},
        {"policy=pnp nprocs=16 "
         "pnp.alpha=0000000000000000000000000000000000000000000000000000000000000000"
         "000000007",
         "pnp.alpha=7"},
        {"layout.tag=00000000000000024", "layout.tag=24"},
        {"storage=llv llv.block=064", "llv.block=64"},
        {"nprocs=000000000000000000016", "nprocs=16"},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        vmatch_engine_t *e = make(good[i].spec);
        if (!e)
            continue;
        if (!strstr(vmatch_describe(e), good[i].shows))
            fprintf(stderr, "\"%s\" gives \"%s\", not %s\n", good[i].spec, vmatch_describe(e),
                    good[i].shows);
        CHECK(strstr(vmatch_describe(e), good[i].shows) != NULL);
        vmatch_destroy(e);
    }
    static const char *const refused[] = {
        "policy=pnp nprocs=16 pnp.alpha=0x1p2",
        "policy=pnp nprocs=16 pnp.alpha=1e2",
        "policy=pnp nprocs=16 pnp.alpha=inf",
        "policy=pnp nprocs=16 pnp.alpha=nan",
        "policy=pnp nprocs=16 pnp.alpha=+1",
        "policy=pnp nprocs=16 pnp.alpha=-0",
        "policy=pnp nprocs=16 pnp.alpha=.",
        "policy=pnp nprocs=16 pnp.alpha=1.2.3",
        "policy=pnp nprocs=16 pnp.alpha=1,5",
        "layout.tag=0x18",
        "layout.tag=+24",
        "llv.block=1e3",
        "trace.cap=4294967297",
        "rank=2147483648",
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        bad(refused[i]);
        CHECK(strstr(vmatch_last_error(), "expected") != NULL ||
              strstr(vmatch_last_error(), "rank") != NULL);
    }
}

/** The resolved spec is itself a spec that gives the same engine. */
static void test_round_trip(void)
{
    const char *specs[] = {
        "",
        "storage=ll",
        "storage=lla lla.block=16",
        "layout.ctx=8 layout.src=20 layout.tag=36 nprocs=512",
        "numa=off profile.record=on",
        "storage=llv",
        "storage=llv simd=scalar llv.block=128",
    };
    size_t i;
    for (i = 0; i < sizeof specs / sizeof *specs; i++) {
        vmatch_engine_t *a = make(specs[i]), *b;
        if (!a)
            continue;
        if ((b = make(vmatch_describe(a))) != NULL) {
            if (strcmp(vmatch_describe(a), vmatch_describe(b)) != 0)
                fprintf(stderr, "round trip of \"%s\": \"%s\" -> \"%s\"\n", specs[i],
                        vmatch_describe(a), vmatch_describe(b));
            CHECK(strcmp(vmatch_describe(a), vmatch_describe(b)) == 0);
            vmatch_destroy(b);
        }
        vmatch_destroy(a);
    }
}

int main(void)
{
    /* Before any failure on this thread there is no detail to give. */
    REQUIRE(vmatch_last_error() != NULL);
    CHECK(vmatch_last_error()[0] == '\0');

    test_defaults();
    test_each_key();
    test_layouts();
    test_long_path();
    test_blanks();
    test_last_wins();
    test_env();
    test_bad();
    test_number_grammar();
    test_round_trip();
    return check_report("test_spec");
}
