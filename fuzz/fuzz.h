/* fuzz.h -- what the fuzz targets share: the libFuzzer entry point, which fuzz/replay.c
 * also calls in the ordinary builds, and the check that turns a broken promise into a
 * crash libFuzzer (or ctest) reports. */
#ifndef VM_FUZZ_H
#define VM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <vmatch.h>

/* Run one input; returns 0 (libFuzzer's contract).  A finding aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with the condition and a printf-style explanation when cond is false. */
#define FUZZ_CHECK(cond, ...)                                                                  \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s: ", __FILE__, __LINE__, #cond);      \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* True when rc is one of the API's error codes. */
static inline int fuzz_is_error(int rc)
{
    return rc == VMATCH_EINVAL || rc == VMATCH_ENOMEM || rc == VMATCH_ENOTFOUND ||
           rc == VMATCH_EUNSUPPORTED || rc == VMATCH_EIO;
}

/* Put size bytes of data in an anonymous in-memory file and write a path that opens it
 * into path (len bytes).  Returns the descriptor to close afterwards, or -1. */
int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t len);

#endif
