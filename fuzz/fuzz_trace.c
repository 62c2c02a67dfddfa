/* fuzz_trace.c -- the bytes as a trace text: through vm_trace_parse, and through
 * vm_trace_load from a file.
 *
 * Promises checked (trace.h): a refused text explains itself and keeps only valid
 * operations (those before the bad line); a read one passes vm_trace_check, and what the
 * writer makes of it reads back to the same trace and the same text; the loader agrees
 * with the parser. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "fuzz.h"

#include "trace.h"

#include <string.h>
#include <unistd.h>

/* The writer's text of t (malloc'd, *len bytes). */
static char *write_text(const vm_trace_t *t, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    FUZZ_CHECK(f, "open_memstream");
    FUZZ_CHECK(vm_trace_write(t, f, "fuzz") == 0, "vm_trace_write failed");
    fclose(f);
    return text;
}

/* Write t, read it back, write it again: the same trace and the same text. */
static void round_trip(const vm_trace_t *t)
{
    size_t len, len2;
    char *text = write_text(t, &len), err[256];
    vm_trace_t u;
    vm_trace_init(&u);
    int rc = vm_trace_parse(&u, text, len, "written", err, sizeof err);
    FUZZ_CHECK(rc == 0, "the writer's text does not read back: %s", err);
    FUZZ_CHECK(vm_trace_equal(t, &u, NULL), "the trace read back differs");
    char *text2 = write_text(&u, &len2);
    FUZZ_CHECK(len == len2 && memcmp(text, text2, len) == 0, "the text differs when rewritten");
    free(text2);
    vm_trace_free(&u);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256] = "", path[64];
    vm_trace_t t;
    vm_trace_init(&t);
    int rc = vm_trace_parse(&t, (const char *)data, size, "fuzz", err, sizeof err);
    if (rc == 0) {
        FUZZ_CHECK(vm_trace_check(&t, err, sizeof err) == 0, "read, but: %s", err);
        round_trip(&t);
    } else {
        FUZZ_CHECK(rc == VMATCH_EINVAL || rc == VMATCH_ENOMEM, "rc %d", rc);
        FUZZ_CHECK(err[0], "error %d without a message", rc);
        char why[256];
        /* t.failed also marks the class table full, which is refused as EINVAL. */
        FUZZ_CHECK(rc == VMATCH_ENOMEM || t.failed || vm_trace_check(&t, why, sizeof why) == 0,
                   "refused (%s), and kept invalid operations: %s", err, why);
    }

    /* The loader reads the same bytes from a file to the same verdict. */
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd >= 0) {
        vm_trace_t l;
        char lerr[256] = "";
        vm_trace_init(&l);
        int lrc = vm_trace_load(&l, path, lerr, sizeof lerr);
        FUZZ_CHECK(lrc == rc, "parse %d (%s), load %d (%s)", rc, err, lrc, lerr);
        FUZZ_CHECK(rc != 0 || vm_trace_equal(&t, &l, NULL),
                   "parse and load read different traces");
        FUZZ_CHECK(lrc == 0 || strncmp(lerr, path, strlen(path)) == 0,
                   "load's message '%s' does not name the file", lerr);
        vm_trace_free(&l);
        close(fd);
    }
    vm_trace_free(&t);
    return 0;
}
