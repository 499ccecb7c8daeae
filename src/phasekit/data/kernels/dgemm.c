/* dgemm-like kernel for `phasekit signature`: three independent execution paths from main,
 *   main -> dgemm_naive -> report
 *   main -> dgemm_blocked -> block_kernel
 *   main -> dgemv -> report            (block_kernel and dgemm_blocked print nothing)
 * Usage: dgemm [N] [STEPS]   (N x N matrices; every product repeats STEPS times)
 * A, B and x are set in main; each path writes its own result and prints its checksum, so no
 * path depends on another (Salinas Hilburg 2020, 4.1.3). The instructions are linear in STEPS
 * (argument 2), which `phasekit signature build` probes at small values. */
#include <stdio.h>
#include <stdlib.h>

/* Kernels stay out of line, as kernels in their own files would, and start on a
 * 64-byte boundary: every path's executable then runs the same machine code for
 * them at the same alignment (inlined into main, or merely shifted, their tight
 * loops would sit differently in each executable, and run at different speeds). */
#define KERNEL static __attribute__((noinline, aligned(64)))

#define BS 32

KERNEL void report(const char *name, const double *c, long len) {
    double t = 0.0;
    for (long i = 0; i < len; i++) t += c[i];
    printf("%s checksum %.6e\n", name, t);
}

KERNEL void dgemm_naive(double *restrict c, const double *restrict a,
                        const double *restrict b, int n, int steps) {
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double t = 0.0;
                for (int k = 0; k < n; k++) t += a[i * n + k] * b[k * n + j];
                c[i * n + j] = t + s;
            }
    }
    report("dgemm_naive", c, (long)n * n);
}

KERNEL void block_kernel(double *restrict c, const double *restrict a,
                         const double *restrict b, int n, int i0, int j0, int k0) {
    int i1 = i0 + BS < n ? i0 + BS : n, j1 = j0 + BS < n ? j0 + BS : n;
    int k1 = k0 + BS < n ? k0 + BS : n;
    for (int i = i0; i < i1; i++)
        for (int k = k0; k < k1; k++) {
            double aik = a[i * n + k];
            for (int j = j0; j < j1; j++) c[i * n + j] += aik * b[k * n + j];
        }
}

KERNEL void dgemm_blocked(double *restrict c, const double *restrict a,
                          const double *restrict b, int n, int steps) {
    double checksum = 0.0;
    for (int s = 0; s < steps; s++) {
        for (long i = 0; i < (long)n * n; i++) c[i] = 0.0;
        for (int i0 = 0; i0 < n; i0 += BS)
            for (int k0 = 0; k0 < n; k0 += BS)
                for (int j0 = 0; j0 < n; j0 += BS) block_kernel(c, a, b, n, i0, j0, k0);
        checksum += c[(s * 7) % ((long)n * n)];
    }
    printf("dgemm_blocked checksum %.6e\n", checksum);
}

KERNEL void dgemv(double *restrict y, const double *restrict a, const double *restrict x,
                  int n, int steps) {
    for (int s = 0; s < steps; s++)
        for (int r = 0; r < n / 2; r++) /* n/2 products per step: half a dgemm's work */
            for (int i = 0; i < n; i++) {
                double t = 0.0;
                for (int k = 0; k < n; k++) t += a[i * n + k] * x[k];
                y[i] = t + r;
            }
    report("dgemv", y, n);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200;
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    if (n < 1 || steps < 0) {
        fprintf(stderr, "usage: dgemm [N >= 1] [STEPS >= 0]\n");
        return 2;
    }
    long nn = (long)n * n;
    double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
    double *c1 = calloc(nn, sizeof *c1), *c2 = calloc(nn, sizeof *c2);
    double *x = malloc(n * sizeof *x), *y = calloc(n, sizeof *y);
    if (!a || !b || !c1 || !c2 || !x || !y) {
        fprintf(stderr, "dgemm: out of memory\n");
        return 1;
    }
    for (long i = 0; i < nn; i++) {
        a[i] = 0.5 + (double)(i % 11) * 0.1;
        b[i] = 1.0 - (double)(i % 13) * 0.05;
    }
    for (int i = 0; i < n; i++) x[i] = 1.0 / (1.0 + i);
    dgemm_naive(c1, a, b, n, steps);
    dgemm_blocked(c2, a, b, n, steps);
    dgemv(y, a, x, n, steps);
    free(a); free(b); free(c1); free(c2); free(x); free(y);
    return 0;
}
