/* test_trace.c -- the trace format: round trips through the writer and the reader, the
 * exact text the writer produces, every error the reader and vm_trace_check report, empty
 * traces, and file errors. */
/* mkfifo, fork and clock_gettime are POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "endless.h"
#include "gen.h"
#include "trace.h"
#include "vmatch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/** Parse text; returns the result code and leaves the message in err. */
static int parse(const char *text, vm_trace_t *t, char *err, size_t errlen)
{
    vm_trace_init(t);
    return vm_trace_parse(t, text, strlen(text), "t", err, errlen);
}

/** The text vm_trace_write produces for t, in a malloc'd string. */
static char *write_text(const vm_trace_t *t, const char *comment)
{
    FILE *f = tmpfile();
    REQUIRE(f);
    REQUIRE(vm_trace_write(t, f, comment) == 0);
    long n = ftell(f);
    REQUIRE(n >= 0);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    REQUIRE(s);
    REQUIRE(fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

/** Do two traces hold the same operations?  Says where they differ when not. */
static int same_trace(const vm_trace_t *a, const vm_trace_t *b)
{
    size_t at;
    if (vm_trace_equal(a, b, &at))
        return 1;
    fprintf(stderr, "traces differ at operation %zu\n", at);
    return 0;
}

/* Generated workloads survive write + parse unchanged. */
static void test_round_trip(void)
{
    static const char *const specs[] = {
        "gather P=16 m=3 order=random early=20",
        "master P=8 tasks=300 depth=4",
        "mixed P=27 steps=6",
        "allreduce-rm P=11 calls=3",
        "bcast-pipeline P=4 bytes=100000 calls=2",
        "queue depth=5 side=unexpected order=reverse rounds=2",
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        vm_trace_t a, b;
        char err[256], desc[256];
        vm_trace_init(&a);
        REQUIRE(vm_wl_generate(specs[i], &a, desc, sizeof desc, err, sizeof err) == 0);
        char *text = write_text(&a, desc);
        vm_trace_init(&b);
        int rc = vm_trace_parse(&b, text, strlen(text), specs[i], err, sizeof err);
        if (rc)
            fprintf(stderr, "%s\n", err);
        CHECK_EQ(rc, 0);
        CHECK(same_trace(&a, &b));
        CHECK_EQ(vm_trace_check(&b, err, sizeof err), 0);
        /* Writing the parsed trace again gives the same text. */
        char *again = write_text(&b, desc);
        CHECK(strcmp(text, again) == 0);
        free(text);
        free(again);
        vm_trace_free(&a);
        vm_trace_free(&b);
    }
}

/* The writer's exact output, and a hand-written trace with every feature. */
static void test_text(void)
{
    vm_trace_t t;
    vm_trace_init(&t);
    t.nprocs = 8;
    uint16_t ar = vm_trace_class(&t, VMATCH_COLL_ALLREDUCE, 8, 8);
    uint16_t odd = vm_trace_class(&t, 77, 0, 3);
    CHECK_EQ(vm_trace_class(&t, VMATCH_COLL_ALLREDUCE, 8, 8), ar); /* found again */
    CHECK_EQ(vm_trace_class(&t, 0, 5, 5), 0);                      /* op 0: p2p */
    vm_trace_post(&t, 0, 3, 7, 0);
    vm_trace_post(&t, 1, VM_TRACE_ANY, VM_TRACE_ANY, ar);
    vm_trace_arrive(&t, 0, 3, 7, 0);
    vm_trace_probe(&t, 2, 5, VM_TRACE_ANY, odd, 0);
    vm_trace_probe(&t, 0, VM_TRACE_ANY, 4, 0, 1);
    vm_trace_cancel(&t, 1);
    vm_trace_remove(&t, 0);
    char *s = write_text(&t, "hand made");
    const char *want = "vmatch-trace 1\n"
                       "# hand made\n"
                       "nprocs 8\n"
                       "post 0 0 3 7 p2p\n"
                       "post 1 1 * * allreduce/8/8\n"
                       "arrive 0 0 3 7 p2p\n"
                       "probe 2 5 * 77/0/3\n"
                       "improbe 0 * 4 p2p\n"
                       "cancel 1\n"
                       "remove 0\n"
                       "end 7\n";
    CHECK(strcmp(s, want) == 0);
    free(s);

    /* Comments, blank lines, tabs, CRLF and numeric operations are read too. */
    const char *text = "# a comment first\n"
                       "\n"
                       "vmatch-trace 1   # the header\r\n"
                       "nprocs\t8\n"
                       "post 0 0 3 7 p2p\r\n"
                       "   post 1 1 * *   7/8/8  # allreduce by number\n"
                       "arrive 0 0 3 7 p2p\n"
                       "probe 2 5 * 77/0/3\n"
                       "improbe 0 * 4 p2p\n"
                       "cancel 1\n"
                       "remove 0"; /* no newline at the end */
    vm_trace_t u;
    char err[256];
    int rc = parse(text, &u, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s\n", err);
    CHECK_EQ(rc, 0);
    CHECK(same_trace(&t, &u));
    vm_trace_free(&u);
    vm_trace_free(&t);

    CHECK(strcmp(vm_trace_kind_name(VM_TRACE_IMPROBE), "improbe") == 0);
    CHECK(strcmp(vm_trace_kind_name((vm_trace_kind_t)99), "?") == 0);
    CHECK(strcmp(vm_trace_op_name(VMATCH_COLL_REDUCE_SCATTER), "reduce_scatter") == 0);
    CHECK(vm_trace_op_name(0) == NULL && vm_trace_op_name(1000) == NULL);
}

/* A header alone is an empty trace; nothing at all is an error. */
static void test_empty(void)
{
    vm_trace_t t;
    char err[256];
    CHECK_EQ(parse("vmatch-trace 1\n", &t, err, sizeof err), 0);
    CHECK_EQ(t.n, 0);
    char *s = write_text(&t, NULL);
    CHECK(strcmp(s, "vmatch-trace 1\nend 0\n") == 0);
    free(s);
    vm_trace_free(&t);
    CHECK_EQ(parse("# nothing\n\nvmatch-trace 1\n# still nothing\n", &t, err, sizeof err), 0);
    CHECK_EQ(t.n, 0);
    vm_trace_free(&t);
    CHECK_EQ(parse("", &t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "t:1: expected the header 'vmatch-trace 1', got the end of the file"));
    vm_trace_free(&t);
    CHECK_EQ(parse("# only a comment\n", &t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "t:1: expected the header"));
    vm_trace_free(&t);
}

/* Every error of the reader: the text, the line it names, words the message must have. */
static const struct {
    const char *text, *want;
} bad_inputs[] = {
    {"post 0 0 1 1 p2p\n", "t:1: expected the header 'vmatch-trace 1', got 'post'"},
    {"vmatch-trace\n", "t:1: unsupported trace version the end of the line"},
    {"vmatch-trace 2\n", "t:1: unsupported trace version '2' (this reader knows version 1)"},
    {"vmatch-trace 1 x\n", "t:1: unexpected extra field 'x' after the header"},
    {"vmatch-trace 1\nvmatch-trace 1\n",
     "t:2: the header 'vmatch-trace 1' may appear only once"},
    {"vmatch-trace 1\npots 0 0 1 1 p2p\n", "t:2: unknown operation 'pots' (expected post"},
    {"vmatch-trace 1\npost\n",
     "t:2: expected a request id (a number from 0 to 2147483646), got "
     "the end of the line"},
    {"vmatch-trace 1\npost x 0 1 1 p2p\n", "t:2: expected a request id"},
    {"vmatch-trace 1\npost -1 0 1 1 p2p\n", "got '-1'"},
    {"vmatch-trace 1\npost 1 0 1 1 p2p\n",
     "t:2: request id 1 out of order: requests are numbered from 0 in the order they appear, "
     "so this one is 0"},
    {"vmatch-trace 1\narrive 3 0 1 1 p2p\n", "t:2: message id 3 out of order"},
    {"vmatch-trace 1\npost 0\n", "t:2: expected a context id (a number from 0 to 4294967295), "
                                 "got the end of the line"},
    {"vmatch-trace 1\npost 0 4294967296 1 1 p2p\n", "got '4294967296'"},
    {"vmatch-trace 1\npost 0 0\n", "t:2: expected source (a number from 0 to 2147483647, or "
                                   "'*' for any), got the end of the line"},
    {"vmatch-trace 1\npost 0 0 2147483648 1 p2p\n", "expected source"},
    {"vmatch-trace 1\npost 0 0 1\n", "t:2: expected tag"},
    {"vmatch-trace 1\npost 0 0 1 1x p2p\n", "expected tag (a number from 0 to 2147483647, or "
                                            "'*' for any), got '1x'"},
    {"vmatch-trace 1\narrive 0 0 * 1 p2p\n",
     "t:2: a message has a definite source: '*' is only for receives and probes"},
    {"vmatch-trace 1\narrive 0 0 1 * p2p\n", "t:2: a message has a definite tag"},
    {"vmatch-trace 1\narrive 0 0 1 2 4\n", "t:2: expected a class ('p2p', or OP/BYTES/SIZE "
                                           "such as allreduce/8/64), got '4'"},
    {"vmatch-trace 1\npost 0 0 1 1\n", "t:2: expected a class ('p2p', or OP/BYTES/SIZE such as "
                                       "allreduce/8/64), got the end of the line"},
    {"vmatch-trace 1\npost 0 0 1 1 coll\n", "got 'coll'"},
    {"vmatch-trace 1\npost 0 0 1 1 a/1\n", "expected a class"},
    {"vmatch-trace 1\npost 0 0 1 1 allreduc/8/64\n",
     "t:2: unknown collective operation 'allreduc' in the class"},
    {"vmatch-trace 1\npost 0 0 1 1 0/8/64\n", "unknown collective operation '0'"},
    {"vmatch-trace 1\npost 0 0 1 1 /8/64\n", "unknown collective operation ''"},
    {"vmatch-trace 1\npost 0 0 1 1 bcast/x/64\n",
     "t:2: expected the message bytes of the class (a number), got 'x'"},
    {"vmatch-trace 1\npost 0 0 1 1 bcast/8/0\n",
     "t:2: expected the communicator size of the class (a number from 1), got '0'"},
    {"vmatch-trace 1\npost 0 0 1 1 bcast/8/4294967296\n", "expected the communicator size"},
    {"vmatch-trace 1\npost 0 0 1 1 p2p extra\n",
     "t:2: unexpected extra field 'extra' at the end of the line"},
    {"vmatch-trace 1\nprobe 0 1 1 p2p 9\n", "unexpected extra field '9'"},
    {"vmatch-trace 1\ncancel\n", "t:2: expected a request id"},
    {"vmatch-trace 1\ncancel 0\n",
     "t:2: cancel names request 0, but only 0 were posted so far"},
    {"vmatch-trace 1\nremove 5\n", "t:2: remove names message 5, but only 0 arrived so far"},
    {"vmatch-trace 1\nremove x\n", "t:2: expected a message id"},
    {"vmatch-trace 1\npost 0 0 1 1 p2p\ncancel 0 1\n", "t:3: unexpected extra field '1'"},
    {"vmatch-trace 1\nnprocs\n", "t:2: expected the number of processes (a number from 1 to "
                                 "2147483647), got the end of the line"},
    {"vmatch-trace 1\nnprocs 0\n", "expected the number of processes"},
    {"vmatch-trace 1\nnprocs 4 4\n", "unexpected extra field '4'"},
    {"vmatch-trace 1\nnprocs 4\nnprocs 4\n", "t:3: nprocs is given twice"},
    {"vmatch-trace 1\npost 0 0 1 1 p2p\nnprocs 4\n",
     "t:3: nprocs must come before the first operation"},
    {"vmatch-trace 1\nnprocs 4\narrive 0 0 4 1 p2p\n", "t:3: source 4 is not below nprocs 4"},
    {"vmatch-trace 1\n\n# fine\npost 0 0 1 1 p2p\npost 1 0 1 1 p2p\npost 3 0 1 1 p2p\n",
     "t:6: request id 3 out of order"},
    {"vmatch-trace 1\npost 0 0 1 1 p2p\0\n", "t:2: a NUL byte: this is not a text trace"},
    {"vmatch-trace 1\npost 0 0 1 1 " /* a long bad token is cut in the message */
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
     "got 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad_inputs / sizeof *bad_inputs; i++) {
        const char *text = bad_inputs[i].text, *want = bad_inputs[i].want;
        size_t len = strlen(text);
        if (strstr(want, "NUL byte"))
            len += 2; /* the text goes on past its NUL, to the last newline */
        vm_trace_t t;
        char err[512] = "";
        vm_trace_init(&t);
        int rc = vm_trace_parse(&t, text, len, "t", err, sizeof err);
        CHECK_EQ(rc, VMATCH_EINVAL);
        if (!strstr(err, want)) {
            fprintf(stderr, "input %zu: error '%s'\n  does not contain '%s'\n", i, err, want);
            CHECK(0);
        }
        vm_trace_free(&t);
    }

    /* More classes than an operation can name. */
    size_t cap = 70000 * 32 + 64, pos = 0;
    char *big = malloc(cap);
    REQUIRE(big);
    pos += (size_t)snprintf(big + pos, cap - pos, "vmatch-trace 1\n");
    for (unsigned i = 0; i < 65536; i++)
        pos += (size_t)snprintf(big + pos, cap - pos, "probe 0 1 1 bcast/%u/4\n", i);
    vm_trace_t t;
    char err[256];
    vm_trace_init(&t);
    CHECK_EQ(vm_trace_parse(&t, big, pos, "big", err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "big:65536: more than 65534 classes in one trace"));
    CHECK_EQ(t.n, 65534);
    vm_trace_free(&t);
    free(big);
}

/* vm_trace_check finds what a hand-built trace gets wrong. */
static void test_check(void)
{
    vm_trace_t t;
    char err[256];
    vm_trace_init(&t);
    t.nprocs = 4;
    vm_trace_post(&t, 0, 1, 1, 0);
    vm_trace_arrive(&t, 0, 1, 1, 0);
    vm_trace_cancel(&t, 0);
    vm_trace_remove(&t, 0);
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), 0);

    t.ops[0].src = 4;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 0 (post): source 4 is not below nprocs 4"));
    t.ops[0].src = -2;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 0 (post): negative source or tag"));
    t.ops[0].src = 1;
    t.ops[0].id = 5;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 0 (post): request id 5, expected 0"));
    t.ops[0].id = 0;
    t.ops[1].tag = VM_TRACE_ANY;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 1 (arrive): a message has no wildcard"));
    t.ops[1].tag = 1;
    t.ops[1].id = 1;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 1 (arrive): message id 1, expected 0"));
    t.ops[1].id = 0;
    t.ops[1].cls = 3;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 1 (arrive): class 3 out of range"));
    t.ops[1].cls = 0;
    t.ops[2].id = 1;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 2 (cancel): request 1 was not posted"));
    t.ops[2].id = 0;
    t.ops[3].id = 1;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 3 (remove): message 1 did not arrive"));
    t.ops[3].id = 0;
    t.ops[3].kind = 42;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "operation 3: unknown kind 42"));
    t.ops[3].kind = VM_TRACE_REMOVE;
    t.nreq = 2;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "counts 2 requests and 1 messages, but holds 1 and 1"));
    t.nreq = 1;
    t.failed = 1;
    CHECK_EQ(vm_trace_check(&t, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "ran out of memory"));
    vm_trace_free(&t);
}

/* Files: save and load, standard names for missing files and directories. */
static void test_files(void)
{
    vm_trace_t a, b;
    char err[256];
    const char *path = "test_trace.tmp";
    vm_trace_init(&a);
    REQUIRE(vm_wl_generate("master P=4 tasks=50", &a, NULL, 0, err, sizeof err) == 0);
    CHECK_EQ(vm_trace_save(&a, path, "saved", err, sizeof err), 0);
    vm_trace_init(&b);
    CHECK_EQ(vm_trace_load(&b, path, err, sizeof err), 0);
    CHECK(same_trace(&a, &b));
    vm_trace_free(&b);
    remove(path);

    vm_trace_init(&b);
    CHECK_EQ(vm_trace_load(&b, "no/such/trace.txt", err, sizeof err), VMATCH_EIO);
    CHECK(strstr(err, "no/such/trace.txt: cannot open: "));
    vm_trace_free(&b);
    CHECK_EQ(vm_trace_save(&a, "no/such/dir/trace.txt", NULL, err, sizeof err), VMATCH_EIO);
    CHECK(strstr(err, "no/such/dir/trace.txt: cannot create: "));
    /* A load reports the file's name and the line. */
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fputs("vmatch-trace 1\npost 0 0 0 0 p2p\nbogus\n", f);
    fclose(f);
    vm_trace_init(&b);
    CHECK_EQ(vm_trace_load(&b, path, err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "test_trace.tmp:3: unknown operation 'bogus'"));
    CHECK_EQ(b.n, 1); /* the lines before the bad one */
    vm_trace_free(&b);
    remove(path);
    vm_trace_free(&a);
}

/** Seconds on a monotonic clock. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/** Write len bytes to path. */
static void write_bytes(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(text, 1, len, f) == len);
    fclose(f);
}

/** Load path, which is no trace: EINVAL within a second, with a message holding want (the
 * file and the line), and nothing read. */
static void refused(const char *path, const char *want)
{
    vm_trace_t t;
    char err[256] = "";
    vm_trace_init(&t);
    double t0 = now();
    int rc = vm_trace_load(&t, path, err, sizeof err);
    double dt = now() - t0;
    if (rc != VMATCH_EINVAL || !strstr(err, want) || dt > 1.0)
        fprintf(stderr, "%s: rc %d in %.3f s, message '%s', want '%s'\n", path, rc, dt, err,
                want);
    CHECK_EQ(rc, VMATCH_EINVAL);
    CHECK(strstr(err, want) != NULL);
    CHECK(dt < 1.0);
    CHECK_EQ(t.n, 0);
    vm_trace_free(&t);
}

/** A FIFO whose writer sends one endless line: the reader stops at the line bound. */
static void test_endless_fifo(void)
{
    const char *fifo = "test_trace.fifo";
    pid_t pid = endless_start(fifo, "vmatch-trace 1\n", 'x');
    refused(fifo, "test_trace.fifo:2: line longer than 4096 bytes");
    endless_stop(fifo, pid);
}

/* Files that are not traces are refused after a bounded read: devices that never end, a
 * line past the bound, NUL bytes and garbage, also where they straddle the reader's 64 KiB
 * reads. */
static void test_bounds(void)
{
    const char *path = "test_trace.tmp";
    refused("/dev/zero", "/dev/zero:1: a NUL byte");
    refused("/dev/urandom", "/dev/urandom:"); /* random: any line */
    test_endless_fifo();

    /* A comment line of exactly 4096 bytes is read; one byte more is refused.  16384 lines
     * of 4 bytes put the long line across the first read's end. */
    size_t head = 15 + 16384 * 4, cap = head + 4098 + 32;
    char *text = malloc(cap);
    REQUIRE(text);
    memcpy(text, "vmatch-trace 1\n", 15);
    for (size_t i = 15; i < head; i += 4)
        memcpy(text + i, "# .\n", 4);
    text[head] = '#';
    memset(text + head + 1, '-', 4095);
    memcpy(text + head + 4096, "\ncancel 0\n", 10);
    write_bytes(path, text, head + 4096 + 10);
    refused(path, "test_trace.tmp:16387: cancel names request 0"); /* read to the end */
    text[head + 4096] = '-';
    text[head + 4097] = '\n';
    write_bytes(path, text, head + 4098);
    refused(path, "test_trace.tmp:16386: line longer than 4096 bytes");
    vm_trace_t t;
    char err[256];
    vm_trace_init(&t);
    CHECK_EQ(vm_trace_parse(&t, text, head + 4098, "mem", err, sizeof err), VMATCH_EINVAL);
    CHECK(strstr(err, "mem:16386: line longer than 4096 bytes"));
    vm_trace_free(&t);

    /* A NUL byte after the first read. */
    text[head] = '\0';
    write_bytes(path, text, head + 4098);
    refused(path, "test_trace.tmp:16386: a NUL byte");
    free(text);

    /* Garbage: every byte value but NUL and newline, on one line. */
    char junk[254];
    for (size_t i = 0, c = 1; i < sizeof junk; c++)
        if (c != '\n')
            junk[i++] = (char)c;
    write_bytes(path, junk, sizeof junk);
    refused(path, "test_trace.tmp:1: expected the header");
    remove(path);
}

int main(void)
{
    test_round_trip();
    test_text();
    test_empty();
    test_errors();
    test_check();
    test_files();
    test_bounds();
    return check_report("test_trace");
}
