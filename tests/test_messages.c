/* Messages that name the cause (issue 37): a failure's words in vmatch_last_error() say
 * what was wrong with the input, not a guess.
 *   - vmatch_mpi_pack adds "(messages take no wildcard)" only when a message was given a
 *     wildcard, not to every value out of its field;
 *   - a launcher's rank variable set to what is not a rank (OMPI_COMM_WORLD_RANK=abc) is
 *     named, not reported as missing. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "vmatch.h"

#include <stdlib.h>
#include <string.h>

static int says(const char *text)
{
    const char *e = vmatch_last_error();
    if (!strstr(e, text))
        fprintf(stderr, "last error \"%s\" lacks \"%s\"\n", e, text);
    return strstr(e, text) != NULL;
}

static int lacks(const char *text)
{
    return strstr(vmatch_last_error(), text) == NULL;
}

static void test_pack(void)
{
    vmatch_engine_t *e;
    REQUIRE(vmatch_create("layout.ctx=16 layout.src=8 layout.tag=8", &e) == VMATCH_OK);
    vmatch_bits_t bits, care;
    /* a message (care NULL) with a wildcard: the note says why */
    CHECK_EQ(vmatch_mpi_pack(e, 0, VMATCH_ANY_SOURCE, 1, &bits, NULL), VMATCH_EINVAL);
    CHECK(says("messages take no wildcard"));
    CHECK_EQ(vmatch_mpi_pack(e, 0, 1, VMATCH_ANY_TAG, &bits, NULL), VMATCH_EINVAL);
    CHECK(says("messages take no wildcard"));
    /* a message whose values are too wide, or negative but not the wildcard: no such note */
    CHECK_EQ(vmatch_mpi_pack(e, 0, 300, 1, &bits, NULL), VMATCH_EINVAL);
    CHECK(says("source 300 does not fit 8 bits") && lacks("wildcard"));
    CHECK_EQ(vmatch_mpi_pack(e, 0, 1, 999, &bits, NULL), VMATCH_EINVAL);
    CHECK(says("tag 999 does not fit 8 bits") && lacks("wildcard"));
    CHECK_EQ(vmatch_mpi_pack(e, 0, -7, 1, &bits, NULL), VMATCH_EINVAL);
    CHECK(says("source -7") && lacks("wildcard"));
    /* a receive: wildcards taken, too wide values refused without the note */
    CHECK_EQ(vmatch_mpi_pack(e, 0, VMATCH_ANY_SOURCE, VMATCH_ANY_TAG, &bits, &care), VMATCH_OK);
    CHECK_EQ(vmatch_mpi_pack(e, 0, 256, 1, &bits, &care), VMATCH_EINVAL);
    CHECK(says("source 256 does not fit 8 bits") && lacks("wildcard"));
    vmatch_destroy(e);
}

static void clear_rank_env(void)
{
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMIX_RANK");
    unsetenv("PMI_RANK");
}

/* A spec whose trace path needs the rank; the result of vmatch_create. */
static int create_with_rank_path(void)
{
    vmatch_engine_t *e;
    int rc = vmatch_create("trace.out=/nonexistent-dir/t.%r", &e);
    if (rc == VMATCH_OK)
        vmatch_destroy(e);
    return rc;
}

static void test_rank_env(void)
{
    clear_rank_env();
    CHECK(create_with_rank_path() < 0);
    CHECK(says("the environment has no OMPI_COMM_WORLD_RANK"));
    static const char *const bad[] = {"abc", "-1", "3x", "2147483648", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("OMPI_COMM_WORLD_RANK", bad[i], 1);
        CHECK(create_with_rank_path() < 0);
        char want[96];
        snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK='%s' is not one", bad[i]);
        CHECK(says(want));
    }
    clear_rank_env();
    setenv("PMI_RANK", "x1", 1);
    CHECK(create_with_rank_path() < 0);
    CHECK(says("PMI_RANK='x1' is not one"));
    /* a good variable after a bad one is taken, as before */
    setenv("PMIX_RANK", "5", 1);
    setenv("OMPI_COMM_WORLD_RANK", "abc", 1);
    vmatch_engine_t *e;
    CHECK_EQ(vmatch_create("trace.out=t.%r", &e), VMATCH_OK);
    if (e)
        vmatch_destroy(e);
    clear_rank_env();
}

int main(void)
{
    test_pack();
    test_rank_env();
    return check_report("test_messages");
}
