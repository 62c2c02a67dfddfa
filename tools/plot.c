/* plot.c -- running gnuplot for the command-line tools (plot.h). */
#define _POSIX_C_SOURCE 200809L

#include "plot.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int plot_run(const char *prog, const char *gp, const char *dat, const char *png)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", gp, (char *)NULL);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) {
        fprintf(stderr, "%s: cannot run gnuplot\n", prog);
        return EXIT_ERROR;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
        fprintf(stderr, "%s: gnuplot not found; wrote %s and %s (gnuplot %s draws %s)\n", prog,
                dat, gp, gp, png);
        return EXIT_NO_GNUPLOT;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s: gnuplot failed on %s\n", prog, gp);
        return EXIT_ERROR;
    }
    printf("wrote %s (data %s, script %s)\n", png, dat, gp);
    return 0;
}
