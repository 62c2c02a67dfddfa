/* endless.h -- a FIFO fed by a child that writes one line that never ends, for the tests
 * that a reader stops at its line bound (test_profile.c, test_trace.c). */
#ifndef VM_ENDLESS_H
#define VM_ENDLESS_H

#include "check.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Make the FIFO at path and start a child that writes `first` (may be NULL) and then `fill`
 * bytes until the reader goes away.  Returns the child, for endless_stop. */
static inline pid_t endless_start(const char *path, const char *first, char fill)
{
    unlink(path);
    REQUIRE(mkfifo(path, 0600) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        char chunk[4096];
        memset(chunk, fill, sizeof chunk);
        FILE *f = fopen(path, "w");
        if (f && first)
            fputs(first, f);
        while (f && fwrite(chunk, 1, sizeof chunk, f) == sizeof chunk)
            ;
        _exit(0);
    }
    return pid;
}

/* Stop the writer (it may already have died of SIGPIPE) and remove the FIFO. */
static inline void endless_stop(const char *path, pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    unlink(path);
}

#endif
