/* stream-like kernel for `phasekit signature` (after McCalpin's STREAM: copy, scale, add,
 * triad): four independent execution paths from main,
 *   main -> copy,  main -> scale,  main -> add,  main -> triad.
 * Usage: stream [N] [STEPS]   (N doubles per array; every kernel repeats STEPS times)
 * The inputs a and b are set in main; each kernel writes its own array and prints its own
 * checksum, so no path depends on data another path computes (Salinas Hilburg 2020, 4.1.3) and no
 * kernel's work is dead code when the others are removed. The instructions are linear in
 * STEPS (argument 2): `phasekit signature build` probes it at small values. */
#include <stdio.h>
#include <stdlib.h>

/* Kernels stay out of line, as kernels in their own files would, and start on a
 * 64-byte boundary: every path's executable then runs the same machine code for
 * them at the same alignment (inlined into main, or merely shifted, their tight
 * loops would sit differently in each executable, and run at different speeds). */
#define KERNEL static __attribute__((noinline, aligned(64)))

KERNEL void report(const char *name, const double *c, long n) {
    double t = 0.0;
    for (long i = 0; i < n; i++) t += c[i];
    printf("%s checksum %.6e\n", name, t);
}

KERNEL void copy(double *restrict c, const double *restrict a, long n, int steps) {
    for (int s = 0; s < steps; s++) {
        for (long i = 0; i < n; i++) c[i] = a[i];
        c[s % n] += 1.0; /* every repetition leaves a trace */
    }
    report("copy", c, n);
}

KERNEL void scale(double *restrict c, const double *restrict b, double q, long n, int steps) {
    for (int s = 0; s < steps; s++) {
        for (long i = 0; i < n; i++) c[i] = q * b[i];
        c[s % n] += 1.0;
    }
    report("scale", c, n);
}

KERNEL void add(double *restrict c, const double *restrict a, const double *restrict b,
                long n, int steps) {
    for (int s = 0; s < steps; s++) {
        for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
        c[s % n] += 1.0;
    }
    report("add", c, n);
}

KERNEL void triad(double *restrict c, const double *restrict a, const double *restrict b,
                  double q, long n, int steps) {
    for (int s = 0; s < steps; s++) {
        for (long i = 0; i < n; i++) c[i] = a[i] + q * b[i];
        c[s % n] += 1.0;
    }
    report("triad", c, n);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int steps = argc > 2 ? atoi(argv[2]) : 50;
    if (n < 1 || steps < 0) {
        fprintf(stderr, "usage: stream [N >= 1] [STEPS >= 0]\n");
        return 2;
    }
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *c1 = calloc(n, sizeof *c1), *c2 = calloc(n, sizeof *c2);
    double *c3 = calloc(n, sizeof *c3), *c4 = calloc(n, sizeof *c4);
    if (!a || !b || !c1 || !c2 || !c3 || !c4) {
        fprintf(stderr, "stream: out of memory\n");
        return 1;
    }
    for (long i = 0; i < n; i++) {
        a[i] = 1.0 + (double)(i % 7);
        b[i] = 2.0 - (double)(i % 5) * 0.25;
    }
    copy(c1, a, n, steps);
    scale(c2, b, 3.0, n, steps);
    add(c3, a, b, n, steps);
    triad(c4, a, b, 3.0, n, steps);
    free(a); free(b); free(c1); free(c2); free(c3); free(c4);
    return 0;
}
