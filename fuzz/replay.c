/* replay.c -- runs fuzz inputs through a target without libFuzzer, so the corpora and the
 * regressions are replayed by ctest in the ordinary (GCC) builds too and a finding stays
 * fixed where clang is absent.
 *
 * Usage: replay_TARGET PATH...  Each PATH is an input file or a directory of them (names
 * starting with '.' are skipped, so a '.keep' file can hold an empty directory).  A finding
 * aborts, as under libFuzzer; a missing or unreadable path is an error. */
#define _POSIX_C_SOURCE 200809L /* opendir */
#include "fuzz.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

/* Inputs are small (libFuzzer's -max_len); a larger file is a mistake, not an input. */
#define REPLAY_MAX_BYTES (16u << 20)

/* Read path and run it.  0, or -1 with a message. */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    uint8_t *buf = malloc(REPLAY_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, REPLAY_MAX_BYTES + 1, f) : 0;
    int bad = !buf || ferror(f) || n > REPLAY_MAX_BYTES;
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s (or larger than %u bytes)\n", path,
                REPLAY_MAX_BYTES);
        free(buf);
        return -1;
    }
    /* Exactly n bytes, so that ASan sees a read past the input. */
    uint8_t *input = malloc(n ? n : 1);
    if (!input) {
        free(buf);
        return -1;
    }
    memcpy(input, buf, n);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(input, n);
    free(input);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every input of directory dir, in name order.  The count run, or -1. */
static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                rc = -1;
                break;
            }
            names = grown;
        }
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        if (!(names[n] = malloc(len))) {
            rc = -1;
            break;
        }
        snprintf(names[n++], len, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        if (rc >= 0 && run_file(names[i]) < 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc < 0 ? -1 : (int)n;
}

int main(int argc, char **argv)
{
    int total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int n = stat(argv[i], &st) != 0 ? (fprintf(stderr, "replay: no %s\n", argv[i]), -1)
                : S_ISDIR(st.st_mode)   ? run_dir(argv[i])
                                        : (run_file(argv[i]) < 0 ? -1 : 1);
        if (n < 0)
            return 1;
        total += n;
    }
    printf("replay: %d inputs, no finding\n", total);
    return 0;
}
