/* plot.h -- what vmatch-profile and vmatch-cluster share: their exit codes, and running
 * gnuplot on the script a tool wrote. */
#ifndef VM_TOOLS_PLOT_H
#define VM_TOOLS_PLOT_H

enum { EXIT_ERROR = 1, EXIT_NPROCS = 2, EXIT_NO_GNUPLOT = 3 };

/* Run gnuplot on the script gp, which draws png from the data file dat.  Returns 0 and says
 * on stdout what was written; or says why not on stderr, after "prog: ", and returns
 * EXIT_NO_GNUPLOT when gnuplot is not installed, EXIT_ERROR when it could not run or
 * failed. */
int plot_run(const char *prog, const char *gp, const char *dat, const char *png);

#endif
