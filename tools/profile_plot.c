/* profile_plot.c -- the pictures of vmatch-profile: the data in OUT.dat, the gnuplot script
 * in OUT.gp, both kept next to OUT.png so that a picture can be redrawn by hand
 * (profile_tool.h). */
#include "profile_tool.h"

#include <stdio.h>
#include <string.h>

static int skip_gnuplot; /* plot_skip_gnuplot was called */

void plot_skip_gnuplot(void)
{
    skip_gnuplot = 1;
}

int plot_open(plot_t *pl, const char *png, const char *header)
{
    int len = (int)strlen(png);
    pl->png = png;
    pl->f = NULL;
    if (strpbrk(png, "'\"\\\n") || len + 5 > (int)sizeof pl->dat)
        return fail(EXIT_ERROR, "-o %s: too long, or has quotes, backslashes or newlines", png);
    if (len > 4 && strcmp(png + len - 4, ".png") == 0)
        len -= 4;
    snprintf(pl->dat, sizeof pl->dat, "%.*s.dat", len, png);
    snprintf(pl->gp, sizeof pl->gp, "%.*s.gp", len, png);
    if (!(pl->f = fopen(pl->dat, "w")))
        return fail(EXIT_ERROR, "cannot write %s", pl->dat);
    fprintf(pl->f, "# %s\n", header);
    return 0;
}

void plot_close(plot_t *pl)
{
    if (pl->f)
        fclose(pl->f);
    pl->f = NULL;
}

/** Copy s into t (size n) without the characters that would end a gnuplot string. */
static const char *gp_string(char *t, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        t[i] = strchr("'\"\\\n", s[i]) ? ' ' : s[i];
    t[i] = '\0';
    return t;
}

/** Close the .dat and open the .gp with the terminal, output, title and axis names. */
static FILE *gp_begin(plot_t *pl, const char *title, const char *xname, uint64_t xstep,
                      const char *yname, uint64_t ystep)
{
    int bad = ferror(pl->f) | (fclose(pl->f) != 0);
    pl->f = NULL;
    FILE *g = bad ? NULL : fopen(pl->gp, "w");
    if (!g) {
        fail(EXIT_ERROR, "cannot write %s", bad ? pl->dat : pl->gp);
        return NULL;
    }
    char t[256], xl[96], yl[96];
    snprintf(xl, sizeof xl, xstep > 1 ? "%s (bins of %llu)" : "%s", xname,
             (unsigned long long)xstep);
    snprintf(yl, sizeof yl, ystep > 1 ? "%s (bins of %llu)" : "%s", yname,
             (unsigned long long)ystep);
    fprintf(g,
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "    set terminal pngcairo size 1000,640\n} else {\n"
            "    set terminal png size 1000,640\n}\n"
            "set output '%s'\nset title '%s' noenhanced\n"
            "set xlabel '%s' noenhanced\nset ylabel '%s' noenhanced\n",
            pl->png, gp_string(t, sizeof t, title), xl, yl);
    return g;
}

/** Close the .gp and run gnuplot on it. */
static int gp_end(plot_t *pl, FILE *g)
{
    if (ferror(g) | (fclose(g) != 0))
        return fail(EXIT_ERROR, "cannot write %s", pl->gp);
    if (skip_gnuplot)
        return EXIT_NO_GNUPLOT;
    return plot_run("vmatch-profile", pl->gp, pl->dat, pl->png);
}

int plot_grid(plot_t *pl, const char *title, const char *xname, uint64_t xstep, size_t nx,
              const char *yname, uint64_t ystep, size_t ny, const char *ytics,
              const char *cname)
{
    FILE *g = gp_begin(pl, title, xname, xstep, yname, ystep);
    if (!g)
        return EXIT_ERROR;
    double xs = (double)xstep, ys = (double)ystep;
    fprintf(g,
            "set cblabel '%s'\n%s\n"
            "set style fill solid 1.0 noborder\nset cbrange [0:*]\n"
            "set palette defined (0 '#fff5eb', 1 '#fd8d3c', 2 '#a63603', 3 '#3f0000')\n"
            "set xrange [-0.5:%g]\nset yrange [-0.5:%g]\n"
            "plot '%s' using ($1+%g):($2+%g):(%g):(%g):3 with boxxyerror lc palette notitle\n",
            cname, ytics, (double)nx * xs - 0.5, (double)ny * ys - 0.5, pl->dat, (xs - 1) / 2,
            (ys - 1) / 2, xs / 2, ys / 2);
    return gp_end(pl, g);
}

int plot_lines(plot_t *pl, const char *title, const char *xname, uint64_t xstep,
               const char *yname, const char *const *names, size_t ncols, size_t dashed)
{
    FILE *g = gp_begin(pl, title, xname, xstep, yname, 1);
    if (!g)
        return EXIT_ERROR;
    /* The key under the plot: room for two titles a line at least. */
    fprintf(g,
            "set key below horizontal noenhanced\nset bmargin %zu\nset yrange [0:*]\n"
            "set autoscale xfix\nset grid\nplot ",
            4 + (ncols + 1) / 2);
    for (size_t c = 0; c < ncols; c++) {
        char t[256];
        /* A dashed line takes the colour of the solid one it goes with (depth: the mean of
         * the queue whose longest is drawn solid). */
        fprintf(g, "%s'%s' using 1:%zu with lines lw 2 lc %zu%s title '%s'",
                c ? ", \\\n     " : "", pl->dat, c + 2, (c >= dashed ? c - dashed : c) + 1,
                c >= dashed ? " dt 2" : "", gp_string(t, sizeof t, names[c]));
    }
    fprintf(g, "\n");
    return gp_end(pl, g);
}
