/* A 2-D Jacobi stencil with OpenMP (the end-to-end campaign of benchmarks/energy_e2e.py):
   input k (1, 2, ...) doubles the sequential work of input k-1 (the PaScal Viewer's
   convention); argv: k [size scale] [steps]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int k = argc > 1 ? atoi(argv[1]) : 1;
    double base = argc > 2 ? atof(argv[2]) : 1.0;
    int n = (int)(600.0 * sqrt(base) * pow(sqrt(2.0), k - 1));
    int steps = argc > 3 ? atoi(argv[3]) : 500;
    double *a = calloc((size_t)n * n, sizeof *a), *b = calloc((size_t)n * n, sizeof *b);
    if (!a || !b) return 1;
    for (int i = 0; i < n; i++) a[i] = b[i] = 1.0;
    for (int s = 0; s < steps; s++) {
#pragma omp parallel for schedule(static)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j]
                                       + a[i * n + j - 1] + a[i * n + j + 1]);
        double *t = a; a = b; b = t;
    }
    double sum = 0;
    for (int i = 0; i < n; i++) sum += a[(n / 2) * n + i];
    printf("%g\n", sum);
    return 0;
}
