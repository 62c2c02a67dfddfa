/* fuzz_spec.c -- the bytes as a spec string for vmatch_create.
 *
 * Promises checked (vmatch.h): a refused spec leaves *out untouched and explains itself in
 * vmatch_last_error; an accepted one describes itself with a text that is a spec again and
 * gives an engine with the same description and kernel, and that engine matches.  The
 * keys themselves are not assumed: the parser may change, the promises stay. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "fuzz.h"

#include <string.h>

/* A receive posted, then its message: the engine must hand the request back. */
static void smoke(vmatch_engine_t *e, const char *spec)
{
    static char req, msg;
    vmatch_bits_t bits, care;
    void *out = NULL;
    vmatch_stats_t st;
    /* Every layout has a context 0, a source 1 and a tag 1 (fields are at least 1 bit). */
    int rc = vmatch_mpi_pack(e, 0, 1, 1, &bits, &care);
    FUZZ_CHECK(rc == VMATCH_OK, "spec '%s': pack = %d", spec, rc);
    rc = vmatch_post(e, bits, care, 0, &req, &out);
    FUZZ_CHECK(rc == VMATCH_QUEUED, "spec '%s': post = %d (%s)", spec, rc, vmatch_last_error());
    rc = vmatch_arrive(e, vmatch_mpi_msg(e, 0, 1, 1), 0, &msg, &out);
    FUZZ_CHECK(rc == VMATCH_MATCHED && out == &req, "spec '%s': arrive = %d", spec, rc);
    vmatch_stats(e, &st);
    FUZZ_CHECK(st.posted == 0 && st.unexpected == 0 && st.bytes > 0, "spec '%s': stats", spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* No paths: profile=PATH would read whatever the bytes name (/dev/stdin blocks);
     * fuzz_profile feeds the profile reader instead. */
    if (memchr(data, '/', size))
        return 0;
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';

    vmatch_engine_t *const untouched = (vmatch_engine_t *)spec, *e = untouched;
    int rc = vmatch_create(spec, &e);
    if (rc < 0) {
        FUZZ_CHECK(fuzz_is_error(rc) && rc != VMATCH_ENOTFOUND, "spec '%s': rc %d", spec, rc);
        FUZZ_CHECK(e == untouched, "spec '%s': *out changed on error %d", spec, rc);
        FUZZ_CHECK(vmatch_last_error()[0] != '\0', "spec '%s': error %d without a message",
                   spec, rc);
        free(spec);
        return 0;
    }
    FUZZ_CHECK(rc == VMATCH_OK && e && e != untouched, "spec '%s': rc %d", spec, rc);
    char *described = strdup(vmatch_describe(e));
    FUZZ_CHECK(described && described[0], "spec '%s': empty description", spec);

    vmatch_engine_t *again = NULL;
    rc = vmatch_create(described, &again);
    FUZZ_CHECK(rc == VMATCH_OK, "spec '%s' describes itself as '%s', which fails: %d (%s)",
               spec, described, rc, vmatch_last_error());
    FUZZ_CHECK(strcmp(vmatch_describe(again), described) == 0,
               "spec '%s': description '%s' gives '%s'", spec, described,
               vmatch_describe(again));
    FUZZ_CHECK(strcmp(vmatch_kernel(again), vmatch_kernel(e)) == 0,
               "spec '%s': kernel %s, then %s", spec, vmatch_kernel(e), vmatch_kernel(again));
    smoke(e, spec);
    smoke(again, described);
    vmatch_destroy(again);
    vmatch_destroy(e);
    free(described);
    free(spec);
    return 0;
}
