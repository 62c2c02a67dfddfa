/* memfile.c -- inputs as files for the readers, without touching the disk. */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("vmatch-fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    /* Opening /proc/self/fd/N opens the file anew, at offset 0. */
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}
