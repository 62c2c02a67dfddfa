/* Tests of what a user of the ports met with profiles (issue 36): each refusal comes when
 * the engine is made and names its cause.
 * - A recording to a folder that does not exist (profile.out, trace.out) was reported only
 *   when the files were written, after the whole run: refused at create, naming the key.
 * - A profile recorded by rank 0 was taken silently by every rank: another rank's profile is
 *   refused unless the spec says profile.program=any (take a profile recorded elsewhere).
 * - A profile of another layout said "layout 20/20/24 differs from ... 16/24/24": the
 *   refusal names the layout key that reads it (layout=ompi-ucx).
 * - A profile cut inside a line got a parse error: it is "truncated", as the docs say. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "vmatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

/* The test runs in its scratch folder: a file's name is its path. */
static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");
    REQUIRE(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* vmatch_create of the spec fmt (printf-like), destroyed again; its return value. */
static int create(const char *fmt, const char *path)
{
    char spec[512];
    vmatch_engine_t *e;
    snprintf(spec, sizeof spec, fmt, path);
    int rc = vmatch_create(spec, &e);
    if (rc == VMATCH_OK)
        vmatch_destroy(e);
    return rc;
}

static int says(const char *text)
{
    if (strstr(vmatch_last_error(), text))
        return 1;
    fprintf(stderr, "  the message: %s\n  does not say: %s\n", vmatch_last_error(), text);
    return 0;
}

static void test_missing_folder(void)
{
    const char *keys[] = {"profile.out", "trace.out"};
    char fmt[128];
    write_text("plain-file", "");
    for (int i = 0; i < 2; i++) {
        snprintf(fmt, sizeof fmt, "rank=1 nprocs=8 %s=%%s", keys[i]);
        CHECK_EQ(create(fmt, "none/out.%r"), VMATCH_EIO);
        CHECK(says(keys[i]) && says("none/out.%r") && says("does not exist"));
        /* a file where the folder should be */
        CHECK_EQ(create(fmt, "plain-file/out.%r"), VMATCH_EIO);
        CHECK(says(keys[i]) && says("not a directory"));
        /* a folder that exists, and a bare file name (the working directory) */
        CHECK_EQ(create(fmt, "./out.%r"), VMATCH_OK);
        CHECK_EQ(create(fmt, "out.%r"), VMATCH_OK);
    }
    /* the rank is still asked for first: no rank, no folder to check */
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMIX_RANK");
    unsetenv("PMI_RANK");
    CHECK_EQ(create("profile.out=%s", "none/out.%r"), VMATCH_EINVAL);
    CHECK(says("%r needs the rank"));
}

static const char rank0[] = "vmatch-profile 2\nlayout 16 24 24\nnprocs 8\nrank 0\n"
                            "0 1 3 2\n0 2 1 0\nend 2\n";

static void test_other_rank(void)
{
    write_text("prof.0", rank0);
    CHECK_EQ(create("policy=cluster rank=0 profile=%s", "prof.0"), VMATCH_OK);
    CHECK_EQ(create("policy=cluster rank=1 profile=%s", "prof.0"), VMATCH_EINVAL);
    CHECK(says("prof.0") && says("recorded by rank 0, this is rank 1") && says("%r"));
    CHECK_EQ(create("policy=pnp-static rank=3 profile=%s", "prof.0"), VMATCH_EINVAL);
    CHECK(says("recorded by rank 0, this is rank 3"));
    /* the launcher's rank counts as the spec's does */
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    CHECK_EQ(create("policy=cluster profile=%s", "prof.0"), VMATCH_EINVAL);
    CHECK(says("this is rank 2"));
    unsetenv("OMPI_COMM_WORLD_RANK");
    /* taken when the spec says so, or when this process's rank is not known */
    CHECK_EQ(create("policy=cluster rank=1 profile.program=any profile=%s", "prof.0"),
             VMATCH_OK);
    CHECK_EQ(create("policy=cluster profile=%s", "prof.0"), VMATCH_OK);
    /* a profile that names no rank (version 1, or recorded outside MPI) is anyone's */
    write_text("v1.prof", "vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n0 1 3 2\n");
    CHECK_EQ(create("policy=cluster rank=5 profile=%s", "v1.prof"), VMATCH_OK);
}

static void test_layout_named(void)
{
    write_text("ompi.prof", "vmatch-profile 2\nlayout 20 20 24\nnprocs 8\nrank 0\n"
                            "0 1 3 2\nend 1\n");
    CHECK_EQ(create("policy=cluster rank=0 profile=%s", "ompi.prof"), VMATCH_EINVAL);
    CHECK(says("ompi.prof") && says("recorded under layout=ompi-ucx") &&
          says("layout=default"));
    CHECK_EQ(create("policy=cluster rank=0 layout=ompi-ucx profile=%s", "ompi.prof"),
             VMATCH_OK);
    /* the other way round, and widths no named layout has */
    write_text("plain.prof", rank0);
    CHECK_EQ(create("policy=cluster rank=0 layout=mpich-ucx profile=%s", "plain.prof"),
             VMATCH_EINVAL);
    CHECK(says("recorded under layout=default") && says("this spec has layout=mpich-ucx"));
    write_text("odd.prof", "vmatch-profile 2\nlayout 10 20 30\nnprocs 8\nrank 0\n"
                           "0 1 3 2\nend 1\n");
    CHECK_EQ(create("policy=cluster rank=0 profile=%s", "odd.prof"), VMATCH_EINVAL);
    CHECK(says("recorded under layout.ctx=10 layout.src=20 layout.tag=30"));
}

static void test_cut_inside_a_line(void)
{
    /* cut in an entry, in the end line, in a header word: each is "truncated" */
    const char *cuts[] = {"vmatch-profile 2\nlayout 16 24 24\nnprocs 8\nrank 0\n0 1 3",
                          "vmatch-profile 2\nlayout 16 24 24\nnprocs 8\nrank 0\n0 1 3 2\nen",
                          "vmatch-profile 2\nlayout 16 24 24\nnprocs 8\nra",
                          "vmatch-profile 2\nlay"};
    for (int i = 0; i < 4; i++) {
        write_text("cut.prof", cuts[i]);
        CHECK_EQ(create("policy=cluster rank=0 profile=%s", "cut.prof"), VMATCH_EINVAL);
        CHECK(says("truncated"));
    }
    /* a whole line that is wrong is not a cut: it says what it expected */
    write_text("bad.prof", "vmatch-profile 2\nlayout 16 24 24\nnprocs 8\n0 1 3\nend 1\n");
    CHECK_EQ(create("policy=cluster rank=0 profile=%s", "bad.prof"), VMATCH_EINVAL);
    CHECK(says("bad.prof:4: expected 'CTX SRC PRQ UMQ'"));
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/vmatch-refuse-XXXXXX",
             tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    REQUIRE(mkdtemp(dir) != NULL);
    REQUIRE(chdir(dir) == 0);
    test_missing_folder();
    test_other_rank();
    test_layout_named();
    test_cut_inside_a_line();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_report("test_profile_refusals");
}
