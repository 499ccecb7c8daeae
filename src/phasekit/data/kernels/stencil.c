/* stencil-like kernel for `phasekit signature`: a Jacobi solver whose step calls two
 * functions, and a 9-point smoother, so the call graph branches below main:
 *   main -> jacobi -> sweep5      (5-point Jacobi sweep)
 *   main -> jacobi -> residual    (squared change of the sweep, accumulated)
 *   main -> smooth9               (9-point smoothing)
 * Usage: stencil [N] [STEPS]   (N x N grid; every solver repeats STEPS steps)
 * The input grid is set in main; jacobi and smooth9 write their own grids and print their
 * own checksums. Removing residual from the sweep5 path (or sweep5 from the residual path)
 * changes the values computed, not the work done: the instructions of each path do not
 * depend on the grid's values, and are linear in STEPS (argument 2), which
 * `phasekit signature build` probes at small values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernels stay out of line, as kernels in their own files would, and start on a
 * 64-byte boundary: every path's executable then runs the same machine code for
 * them at the same alignment (inlined into main, or merely shifted, their tight
 * loops would sit differently in each executable, and run at different speeds). */
#define KERNEL static __attribute__((noinline, aligned(64)))

KERNEL void sweep5(double *restrict v, const double *restrict u, int n) {
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] +
                                   u[i * n + j - 1] + u[i * n + j + 1]);
}

KERNEL void residual(const double *restrict u, const double *restrict v, int n,
                     double *norm) {
    double r = 0.0;
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++) {
            double d = v[i * n + j] - u[i * n + j];
            r += d * d;
        }
    *norm += r;
}

KERNEL void jacobi(double *u, double *v, int n, int steps) {
    double norm = 0.0;
    for (int s = 0; s < steps; s++) {
        sweep5(v, u, n);
        residual(u, v, n, &norm);
        double *t = u; u = v; v = t;
    }
    double sum = 0.0;
    for (long i = 0; i < (long)n * n; i++) sum += u[i];
    printf("jacobi checksum %.6e residual %.6e\n", sum, norm);
}

KERNEL void smooth9(double *restrict w, const double *restrict u, int n, int steps) {
    double sum = 0.0;
    for (int s = 0; s < steps; s++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++) {
                const double *c = u + i * n + j;
                w[i * n + j] = (4.0 * c[0] + 2.0 * (c[-1] + c[1] + c[-n] + c[n]) +
                                c[-n - 1] + c[-n + 1] + c[n - 1] + c[n + 1]) / 16.0;
            }
        sum += w[(s * 31) % ((long)n * n)];
    }
    printf("smooth9 checksum %.6e\n", sum);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 512;
    int steps = argc > 2 ? atoi(argv[2]) : 100;
    if (n < 3 || steps < 0) {
        fprintf(stderr, "usage: stencil [N >= 3] [STEPS >= 0]\n");
        return 2;
    }
    long nn = (long)n * n;
    double *u = malloc(nn * sizeof *u), *u2 = malloc(nn * sizeof *u2);
    double *v = malloc(nn * sizeof *v), *w = calloc(nn, sizeof *w);
    if (!u || !u2 || !v || !w) {
        fprintf(stderr, "stencil: out of memory\n");
        return 1;
    }
    for (long i = 0; i < nn; i++) u[i] = 1.0 + (double)((i * 7) % 13) / 13.0;
    memcpy(u2, u, nn * sizeof *u);
    memcpy(v, u, nn * sizeof *u);
    jacobi(u2, v, n, steps);
    smooth9(w, u, n, steps);
    free(u); free(u2); free(v); free(w);
    return 0;
}
