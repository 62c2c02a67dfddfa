/* Tests of the profile: recording, vmatch_profile_save, and the reader on good and
 * malformed files (every error path of vm_profile_load). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "endless.h"
#include "hooks.h"
#include "profile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static const char *path_of(const char *name)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

/* Write len bytes of text (which may hold NUL bytes) to the file name in dir. */
static const char *write_bytes(const char *name, const char *text, size_t len)
{
    const char *p = path_of(name);
    FILE *f = fopen(p, "w");
    REQUIRE(f != NULL);
    REQUIRE(fwrite(text, 1, len, f) == len);
    fclose(f);
    return p;
}

static const char *write_file(const char *name, const char *text)
{
    return write_bytes(name, text, strlen(text));
}

#define PTR(i) ((void *)(uintptr_t)(((i) + 1) * 8))

static void test_round_trip(void)
{
    vmatch_engine_t *e;
    REQUIRE(vmatch_create("layout.ctx=8 layout.src=12 layout.tag=12 nprocs=100 "
                          "profile.record=on",
                          &e) == VMATCH_OK);
    vmatch_bits_t b, c;
    void *out;
    int id = 0;
    /* Source 7 of context 1: 5 unexpected messages; source 3 of context 0: 2 posted
     * receives, 1 message that matches one of them (not an insertion), ANY_SOURCE receives
     * (not counted: they belong to no source). */
    for (int i = 0; i < 5; i++)
        CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 1, 7, i), 0, PTR(id++), &out),
                 VMATCH_QUEUED);
    for (int i = 0; i < 2; i++) {
        vmatch_mpi_recv(e, 0, 3, 100 + i, &b, &c);
        CHECK_EQ(vmatch_post(e, b, c, 0, PTR(id++), &out), VMATCH_QUEUED);
    }
    CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, 3, 100), 0, PTR(id++), &out),
             VMATCH_MATCHED);
    vmatch_mpi_recv(e, 2, VMATCH_ANY_SOURCE, 5, &b, &c);
    CHECK_EQ(vmatch_post(e, b, c, 0, PTR(id++), &out), VMATCH_QUEUED);
    /* A receive with ANY_TAG still names its source. */
    vmatch_mpi_recv(e, 0, 99, VMATCH_ANY_TAG, &b, &c);
    CHECK_EQ(vmatch_post(e, b, c, 0, PTR(id++), &out), VMATCH_QUEUED);

    const char *p = path_of("round.prof");
    CHECK_EQ(vmatch_profile_save(e, p), VMATCH_OK);
    vm_profile_t prof;
    REQUIRE(vm_profile_load(p, &prof) == VMATCH_OK);
    CHECK_EQ(prof.ctx_bits, 8);
    CHECK_EQ(prof.src_bits, 12);
    CHECK_EQ(prof.tag_bits, 12);
    CHECK_EQ(prof.nprocs, 100);
    REQUIRE(prof.n == 3);
    /* Sorted by (ctx, src). */
    CHECK(prof.entries[0].ctx == 0 && prof.entries[0].src == 3);
    CHECK(prof.entries[0].prq == 2 && prof.entries[0].umq == 0);
    CHECK(prof.entries[1].ctx == 0 && prof.entries[1].src == 99);
    CHECK(prof.entries[1].prq == 1 && prof.entries[1].umq == 0);
    CHECK(prof.entries[2].ctx == 1 && prof.entries[2].src == 7);
    CHECK(prof.entries[2].prq == 0 && prof.entries[2].umq == 5);
    vm_profile_free(&prof);

    /* Many sources: the table grows and every count survives. */
    for (int s = 0; s < 100; s++)
        for (int k = 0; k <= s % 5; k++)
            vmatch_arrive(e, vmatch_mpi_msg(e, 3, s, 1000 + k), 0, PTR(id++), &out);
    CHECK_EQ(vmatch_profile_save(e, p), VMATCH_OK);
    REQUIRE(vm_profile_load(p, &prof) == VMATCH_OK);
    CHECK_EQ(prof.n, 103);
    int right = 0;
    for (size_t i = 0; i < prof.n; i++)
        if (prof.entries[i].ctx == 3)
            right += prof.entries[i].umq == (uint64_t)(prof.entries[i].src % 5 + 1);
    CHECK_EQ(right, 100);
    vm_profile_free(&prof);

    /* Saving where no file can be made is EIO; NULL arguments EINVAL. */
    CHECK_EQ(vmatch_profile_save(e, "/nonexistent-dir/x/y.prof"), VMATCH_EIO);
    CHECK(strstr(vmatch_last_error(), "nonexistent") != NULL);
    CHECK_EQ(vmatch_profile_save(e, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_profile_save(NULL, p), VMATCH_EINVAL);
    vmatch_destroy(e);

    /* Recording off: saving is refused with a message naming the key. */
    REQUIRE(vmatch_create("", &e) == VMATCH_OK);
    CHECK_EQ(vmatch_profile_save(e, p), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "profile.record") != NULL);
    vmatch_destroy(e);
}

/* Allocation failure while the profile table grows: the call fails and changes nothing. */
static void test_record_enomem(void)
{
    vmatch_engine_t *e;
    REQUIRE(vmatch_create("profile.record=on", &e) == VMATCH_OK);
    void *out;
    vmatch_stats_t st;
    vm_engine_mem(e)->fail_after = 0;
    CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, 1, 1), 0, PTR(1), &out), VMATCH_ENOMEM);
    vmatch_stats(e, &st);
    CHECK_EQ(st.unexpected, 0);
    vm_engine_mem(e)->fail_after = -1;
    CHECK_EQ(vmatch_arrive(e, vmatch_mpi_msg(e, 0, 1, 1), 0, PTR(1), &out), VMATCH_QUEUED);
    vmatch_destroy(e);
}

static const char *const good_header = "vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n";

static void test_good_files(void)
{
    vm_profile_t p;
    char text[512];
    snprintf(text, sizeof text,
             "# made by hand\n\n%s# ctx src prq umq\n  1 2 3 4  \n0 7 0 9\r\n", good_header);
    CHECK_EQ(vm_profile_load(write_file("good.prof", text), &p), VMATCH_OK);
    CHECK_EQ(p.n, 2);
    CHECK(p.entries[0].ctx == 0 && p.entries[0].src == 7 && p.entries[0].umq == 9);
    CHECK(p.entries[1].ctx == 1 && p.entries[1].src == 2 && p.entries[1].prq == 3);
    vm_profile_free(&p);

    /* A header and no entries is a valid, empty profile. */
    CHECK_EQ(vm_profile_load(write_file("empty.prof", good_header), &p), VMATCH_OK);
    CHECK_EQ(p.n, 0);
    CHECK_EQ(p.nprocs, 8);
    vm_profile_free(&p);
}

/* Each malformed file fails with EINVAL and a message naming the line (or what is missing). */
static void test_bad_files(void)
{
    static const struct {
        const char *text, *where;
    } bad[] = {
        {"", "ends before"},
        {"# only a comment\n", "ends before"},
        {"vmatch-profile 3\nlayout 16 24 24\nnprocs 8\n", ":1:"},
        {"vmatch-profile\n", ":1:"},
        {"layout 16 24 24\nvmatch-profile 1\nnprocs 8\n", ":1:"},
        {"vmatch-profile 1\nnprocs 8\nlayout 16 24 24\n", ":2:"},
        {"vmatch-profile 1\nlayout 16 24\nnprocs 8\n", ":2:"},
        {"vmatch-profile 1\nlayout 16 24 24 1\nnprocs 8\n", ":2:"},
        {"vmatch-profile 1\nlayout 16 24 25\nnprocs 8\n", ":2:"},
        {"vmatch-profile 1\nlayout 16 0 24\nnprocs 8\n", ":2:"},
        {"vmatch-profile 1\nlayout 16 24 24\n", "ends before"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs -8\n", ":3:"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8x\n", ":3:"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n1 2 3\n", ":4:"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n1 2 3 4 5\n", ":4:"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n1 2 3 x\n", ":4:"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n1 2 3 -4\n", ":4:"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n1 2 3 99999999999999999999999\n", ":4:"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n1 8 3 4\n", ":4:"}, /* src >= nprocs */
        {"vmatch-profile 1\nlayout 4 24 24\nnprocs 0\n16 1 3 4\n", ":4:"}, /* ctx too wide */
        {"vmatch-profile 1\nlayout 16 2 24\nnprocs 0\n1 4 3 4\n", ":4:"},  /* src too wide */
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n1 2 3 4\n1 2 5 6\n", "twice"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8\nsrc 1 2 3 4\n", ":4:"},
        {"vmatch-profile 1\nlayout 16 24 24\nnprocs 8\nlayout 16 24 24\n", ":4:"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vm_profile_t p = {.n = 77};
        int rc = vm_profile_load(write_file("bad.prof", bad[i].text), &p);
        if (rc != VMATCH_EINVAL || !strstr(vmatch_last_error(), bad[i].where))
            fprintf(stderr, "bad file %zu: rc %d, message '%s'\n", i, rc, vmatch_last_error());
        CHECK_EQ(rc, VMATCH_EINVAL);
        CHECK(strstr(vmatch_last_error(), bad[i].where) != NULL);
        CHECK(p.n == 0 && p.entries == NULL);
    }
    vm_profile_t p;
    CHECK_EQ(vm_profile_load(path_of("missing.prof"), &p), VMATCH_EIO);
    CHECK(strstr(vmatch_last_error(), "missing.prof") != NULL);
    CHECK_EQ(vm_profile_load(dir, &p), VMATCH_EIO); /* a directory reads with an error */
    CHECK_EQ(vm_profile_load(NULL, &p), VMATCH_EINVAL);
}

/* Seconds on a monotonic clock. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Load path, which is no profile: EINVAL within a second, with a message holding want (the
 * file and the line), and *out left empty. */
static void refused(const char *path, const char *want)
{
    vm_profile_t p = {.n = 77};
    double t0 = now();
    int rc = vm_profile_load(path, &p);
    double dt = now() - t0;
    if (rc != VMATCH_EINVAL || !strstr(vmatch_last_error(), want) || dt > 1.0)
        fprintf(stderr, "%s: rc %d in %.3f s, message '%s', want '%s'\n", path, rc, dt,
                vmatch_last_error(), want);
    CHECK_EQ(rc, VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), want) != NULL);
    CHECK(dt < 1.0);
    CHECK(p.n == 0 && p.entries == NULL);
}

/* A FIFO whose writer sends one endless line: the reader must stop at the line bound (the
 * writer then dies of SIGPIPE, or is killed). */
static void test_endless_fifo(void)
{
    const char *fifo = path_of("endless.fifo");
    pid_t pid = endless_start(fifo, NULL, '7');
    char want[160];
    snprintf(want, sizeof want, "%s:1: line longer than 4096 bytes", fifo);
    refused(fifo, want);
    endless_stop(fifo, pid);
}

/* Files that are not profiles are refused after a bounded read: devices that never end,
 * lines past the bound, NUL bytes, garbage; also through vmatch_create. */
static void test_bounds(void)
{
    refused("/dev/zero", "profile /dev/zero:1: a NUL byte");
    refused("/dev/urandom", "profile /dev/urandom:"); /* random: any line */
    test_endless_fifo();

    /* A line of exactly 4096 bytes is read; one byte more is refused, naming the line. */
    size_t hl = strlen(good_header);
    char *text = malloc(hl + 4098 + 16);
    REQUIRE(text);
    memcpy(text, good_header, hl);
    memset(text + hl, ' ', 4096);
    memcpy(text + hl + 4096 - 8, "1 2 3 4\n", 8); /* the entry ends the 4096-byte line */
    vm_profile_t p;
    CHECK_EQ(vm_profile_load(write_bytes("long.prof", text, hl + 4096), &p), VMATCH_OK);
    CHECK(p.n == 1 && p.entries[0].ctx == 1 && p.entries[0].umq == 4);
    vm_profile_free(&p);
    memset(text + hl, ' ', 4097);
    memcpy(text + hl + 4097, "1 2 3 4\n", 8);
    refused(write_bytes("long.prof", text, hl + 4097 + 8), "long.prof:4: line longer than");
    free(text);

    /* NUL bytes are not blanks: a line of NULs, and a NUL inside an entry. */
    static const char nul_line[] = "vmatch-profile 1\n\0\0\0\nlayout 16 24 24\nnprocs 8\n";
    refused(write_bytes("nul.prof", nul_line, sizeof nul_line - 1), "nul.prof:2: a NUL byte");
    static const char nul_entry[] = "vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n1 2\0 3 4\n";
    refused(write_bytes("nul.prof", nul_entry, sizeof nul_entry - 1), "nul.prof:4: a NUL byte");

    /* Garbage: every byte value but NUL and newline, on one line. */
    char junk[254];
    for (size_t i = 0, c = 1; i < sizeof junk; c++)
        if (c != '\n')
            junk[i++] = (char)c;
    refused(write_bytes("junk.prof", junk, sizeof junk), "junk.prof:1: expected");

    /* The engine passes the reader's refusal on and is not made. */
    vmatch_engine_t *e = (vmatch_engine_t *)&p;
    CHECK_EQ(vmatch_create("policy=pnp-static profile=/dev/zero nprocs=4", &e), VMATCH_EINVAL);
    CHECK(strstr(vmatch_last_error(), "/dev/zero:1: a NUL byte") != NULL);
    CHECK(e == (vmatch_engine_t *)&p);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/vmatch-prof-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    REQUIRE(mkdtemp(dir) != NULL);
    test_round_trip();
    test_record_enomem();
    test_good_files();
    test_bad_files();
    test_bounds();
    const char *names[] = {"round.prof", "good.prof", "empty.prof", "bad.prof",
                           "long.prof",  "nul.prof",  "junk.prof"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(path_of(names[i]));
    rmdir(dir);
    return check_report("test_profile");
}
