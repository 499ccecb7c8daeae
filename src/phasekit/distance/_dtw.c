/* phasekit.distance._dtw: DTW_2, DBA and squared Euclidean kernels (a command
 * loads no numba). dtw.py and vector.py keep thin wrappers; their docstrings state the
 * semantics (band, early abandoning, tie-breaking of the path).
 *
 * Interface: plain CPython with the buffer protocol (no numpy headers). Arrays are
 * C-contiguous float64 ('d') or int64 ('l'/'q'), of the number of dimensions each function
 * states; outputs are allocated by the caller. Every compute releases the GIL; batched
 * kernels run on OpenMP with the thread count they are given. Sums run in the order of the
 * numba kernels they replace (ISO C11 contracts no a*b+c into an FMA), so the results do not
 * depend on the number of threads.
 */
#include "../_buffers.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define INF HUGE_VAL
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---- arrays through the buffer protocol -------------------------------------------------- */

static const double *f64(const Array *array) { return array->view.buf; }
static double *f64_mut(const Array *array) { return array->view.buf; }
static const int64_t *i64(const Array *array) { return array->view.buf; }

/* 0 with a ValueError set unless every array has its number of dimensions */
static int check_ndim(const Array *arrays, const int *ndims, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (arrays[i].view.ndim != ndims[i]) {
            PyErr_Format(PyExc_ValueError, "%s must have %d dimension%s, not %d", names[i],
                         ndims[i], ndims[i] == 1 ? "" : "s", arrays[i].view.ndim);
            return 0;
        }
    return 1;
}

/* 0 with a ValueError set unless lo <= values[k] < hi for every k */
static int check_range(const Array *array, int64_t lo, int64_t hi, const char *name) {
    const int64_t *values = i64(array);
    for (Py_ssize_t k = 0; k < array->view.len / 8; k++)
        if (values[k] < lo || values[k] >= hi) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] = %lld is out of range [%lld, %lld)", name,
                         k, (long long)values[k], (long long)lo, (long long)hi);
            return 0;
        }
    return 1;
}

/* ---- DTW_2 over a band ------------------------------------------------------------------- */

static inline Py_ssize_t max_ssize(Py_ssize_t x, Py_ssize_t y) { return x > y ? x : y; }
static inline Py_ssize_t min_ssize(Py_ssize_t x, Py_ssize_t y) { return x < y ? x : y; }
static inline double min2(double x, double y) { return x < y ? x : y; }

/* floor(x / d) and ceil(x / d) for d > 0 */
static inline Py_ssize_t floor_div(Py_ssize_t x, Py_ssize_t d) {
    return x >= 0 ? x / d : -((-x + d - 1) / d);
}
static inline Py_ssize_t ceil_div(Py_ssize_t x, Py_ssize_t d) { return -floor_div(-x, d); }

/* The radius of a relative band (dtw.band_radius): band < 0 (or NaN) means none. */
static Py_ssize_t band_radius(Py_ssize_t n, Py_ssize_t m, double band) {
    Py_ssize_t longest = max_ssize(n, m);
    double radius = ceil(band * (double)longest);
    if (!(band >= 0) || radius >= (double)longest) /* beyond longest: the same cells */
        return longest;
    return max_ssize(1, (Py_ssize_t)radius);
}

/* A radius beyond max(n, m) or below -1 bands the same cells as those (all, none). */
static Py_ssize_t clamp_radius(Py_ssize_t radius, Py_ssize_t n, Py_ssize_t m) {
    return radius < -1 ? -1 : min_ssize(radius, max_ssize(n, m));
}

/* Columns lo..hi of row i inside the band |i (m-1) - j (n-1)| <= radius * max(n-1, m-1);
 * lo > hi when the row has none (radius < 1 only). The radius is clamped. */
static inline void column_range(Py_ssize_t i, Py_ssize_t n, Py_ssize_t m, Py_ssize_t radius,
                                Py_ssize_t *lo, Py_ssize_t *hi) {
    if (n == 1 || m == 1) {
        *lo = 0;
        *hi = m - 1;
        return;
    }
    Py_ssize_t reach = radius * max_ssize(n - 1, m - 1), centre = i * (m - 1);
    *lo = max_ssize(0, ceil_div(centre - reach, n - 1));
    *hi = min_ssize(m - 1, floor_div(centre + reach, n - 1));
}

/* Squared Euclidean distance between two points of dims coordinates, summed in order. */
ALWAYS_INLINE double sqdist(const double *x, const double *y, Py_ssize_t dims) {
    double diff = x[0] - y[0], total = diff * diff;
    for (Py_ssize_t d = 1; d < dims; d++) {
        diff = x[d] - y[d];
        total += diff * diff;
    }
    return total;
}

/* One cell: its pointwise cost plus the least of the cell to the left and near, the least of
 * the two cells above (so that the serial chain from cell to cell is one min and one add). */
ALWAYS_INLINE double cell(double cost, double left, double near) {
    return cost + (left < near ? left : near);
}

/* Rows i .. i+3 in one sweep over the columns: four serial chains that the processor runs
 * side by side. Row buffers are shifted by one (column j at j + 1): prev holds row i - 1, INF
 * outside its band; rows i .. i+2 stay in registers, row i+3 goes to curr. lo/hi are the four
 * rows' (nonempty) bands; columns where only some rows are in their band (a few at each end)
 * give INF to the others. With cost, row i + r keeps column j at
 * cost[(i + r) width + j - lo[r]]. */
ALWAYS_INLINE void sweep4(const double *a, Py_ssize_t i, const double *b, Py_ssize_t dims,
                          const Py_ssize_t *lo, const Py_ssize_t *hi, const double *prev,
                          double *curr, double *cost, Py_ssize_t width) {
    const double *a0 = a + i * dims, *a1 = a0 + dims, *a2 = a1 + dims, *a3 = a2 + dims;
    double *c0 = cost ? cost + i * width : NULL, *c1 = cost ? c0 + width : NULL;
    double *c2 = cost ? c1 + width : NULL, *c3 = cost ? c2 + width : NULL;
    double l0 = INF, l1 = INF, l2 = INF, l3 = INF;
    Py_ssize_t start = min_ssize(lo[3], hi[0] + 1); /* columns start .. hi[0]: all four rows */
    Py_ssize_t j = lo[0];
    for (; j < start; j++) { /* left end: rows i+1, i+2 enter their bands (row i+3 not yet) */
        const double *bj = b + j * dims;
        double n0 = cell(sqdist(a0, bj, dims), l0, min2(prev[j + 1], prev[j]));
        double n1 = j >= lo[1] ? cell(sqdist(a1, bj, dims), l1, min2(n0, l0)) : INF;
        double n2 = j >= lo[2] ? cell(sqdist(a2, bj, dims), l2, min2(n1, l1)) : INF;
        if (cost) {
            c0[j - lo[0]] = n0;
            if (j >= lo[1])
                c1[j - lo[1]] = n1;
            if (j >= lo[2])
                c2[j - lo[2]] = n2;
        }
        l0 = n0;
        l1 = n1;
        l2 = n2;
        curr[j + 1] = INF;
    }
    for (; j <= hi[0]; j++) {
        const double *bj = b + j * dims;
        double n0 = cell(sqdist(a0, bj, dims), l0, min2(prev[j + 1], prev[j]));
        double n1 = cell(sqdist(a1, bj, dims), l1, min2(n0, l0));
        double n2 = cell(sqdist(a2, bj, dims), l2, min2(n1, l1));
        double n3 = cell(sqdist(a3, bj, dims), l3, min2(n2, l2));
        if (cost) {
            c0[j - lo[0]] = n0;
            c1[j - lo[1]] = n1;
            c2[j - lo[2]] = n2;
            c3[j - lo[3]] = n3;
        }
        l0 = n0;
        l1 = n1;
        l2 = n2;
        l3 = n3;
        curr[j + 1] = n3;
    }
    for (; j <= hi[3]; j++) { /* right end: rows i+1, i+2 leave their bands; above row i+1
                                 only (i, hi[0]) is in the band, held in l0 once */
        const double *bj = b + j * dims;
        int in1 = j >= lo[1] && j <= hi[1], in2 = j >= lo[2] && j <= hi[2];
        double n1 = in1 ? cell(sqdist(a1, bj, dims), l1, l0) : INF;
        double n2 = in2 ? cell(sqdist(a2, bj, dims), l2, min2(n1, l1)) : INF;
        double n3 = j >= lo[3] ? cell(sqdist(a3, bj, dims), l3, min2(n2, l2)) : INF;
        if (cost) {
            if (in1)
                c1[j - lo[1]] = n1;
            if (in2)
                c2[j - lo[2]] = n2;
            if (j >= lo[3])
                c3[j - lo[3]] = n3;
        }
        l0 = INF;
        l1 = n1;
        l2 = n2;
        l3 = n3;
        curr[j + 1] = n3;
    }
}

/* Row i over columns lo..hi into curr (as sweep4 does with four); returns the row's minimum. */
ALWAYS_INLINE double sweep1(const double *a, Py_ssize_t i, const double *b, Py_ssize_t dims,
                            Py_ssize_t lo, Py_ssize_t hi, const double *prev, double *curr,
                            double *cost, Py_ssize_t width) {
    const double *ai = a + i * dims;
    double *row = cost ? cost + i * width : NULL;
    double left = INF, row_min = INF;
    for (Py_ssize_t j = lo; j <= hi; j++) {
        left = cell(sqdist(ai, b + j * dims, dims), left, min2(prev[j + 1], prev[j]));
        curr[j + 1] = left;
        if (cost)
            row[j - lo] = left;
        row_min = min2(left, row_min);
    }
    return row_min;
}

/* The DTW_2 recursion of a (n x dims) against b (m x dims) over the band, four rows at a time
 * and then one: returns DTW_2, or INF once every cell of a row exceeds cutoff or a row has no
 * cell in the band. rows holds 2 (m + 1) doubles. With cost (n x width), row i keeps its cells
 * from its first column in the band.
 *
 * A row's minimum never decreases from one row to the next (each cell adds a nonnegative cost
 * to a neighbour of the row above or of its own row), so checking the last row of each sweep
 * abandons the same computations, at most three rows later. The buffer of the row above
 * holds INF at the column left of its band and everywhere right of it: every older row that
 * the buffer held had its band further left. */
ALWAYS_INLINE double band_rows(const double *a, Py_ssize_t n, const double *b, Py_ssize_t m,
                               Py_ssize_t dims, Py_ssize_t radius, double cutoff, double *rows,
                               double *cost, Py_ssize_t width) {
    double *prev = rows, *curr = rows + m + 1, *swap;
    for (Py_ssize_t k = 0; k <= m; k++)
        prev[k] = curr[k] = INF;
    prev[0] = 0.0; /* the cost before cell (0, 0) */
    Py_ssize_t i = 0, lo[4], hi[4];
    for (; i + 3 < n; i += 4) {
        for (int r = 0; r < 4; r++) {
            column_range(i + r, n, m, radius, &lo[r], &hi[r]);
            if (lo[r] > hi[r])
                return INF;
        }
        curr[lo[3]] = INF;
        sweep4(a, i, b, dims, lo, hi, prev, curr, cost, width);
        if (hi[3] + 2 <= m)
            curr[hi[3] + 2] = INF;
        if (cutoff < INF) {
            double row_min = INF;
            for (Py_ssize_t j = lo[3] + 1; j <= hi[3] + 1; j++)
                row_min = min2(curr[j], row_min);
            if (row_min > cutoff)
                return INF;
        }
        swap = prev, prev = curr, curr = swap;
    }
    for (; i < n; i++) {
        column_range(i, n, m, radius, &lo[0], &hi[0]);
        if (lo[0] > hi[0])
            return INF;
        curr[lo[0]] = INF;
        double row_min = sweep1(a, i, b, dims, lo[0], hi[0], prev, curr, cost, width);
        if (hi[0] + 2 <= m)
            curr[hi[0] + 2] = INF;
        if (row_min > cutoff)
            return INF;
        swap = prev, prev = curr, curr = swap;
    }
    return prev[m];
}

/* DTW_2 without the cost matrix, specialised for one dimension. */
static double dtw2_rows(const double *a, Py_ssize_t n, const double *b, Py_ssize_t m,
                        Py_ssize_t dims, Py_ssize_t radius, double cutoff, double *rows) {
    radius = clamp_radius(radius, n, m);
    if (dims == 1)
        return band_rows(a, n, b, m, 1, radius, cutoff, rows, NULL, 0);
    return band_rows(a, n, b, m, dims, radius, cutoff, rows, NULL, 0);
}

/* DTW_2 of avg (n x dims) to series (m x dims) within radius; adds every point of series
 * aligned with avg[i] to sums[i] and counts it in counts[i]. The walk back along the optimal
 * path prefers the diagonal, then (i - 1, j), on ties. Returns INF, adding nothing, when no
 * path stays in the band (radius < 1 only: a row without a cell in the band, or a row whose
 * band starts beyond the column right of the band above); -1 when memory runs out. rows
 * holds 2 (m + 1) doubles. */
static double path_accumulate(const double *avg, Py_ssize_t n, const double *series,
                              Py_ssize_t m, Py_ssize_t dims, Py_ssize_t radius, double *sums,
                              double *counts, double *rows) {
    radius = clamp_radius(radius, n, m);
    Py_ssize_t *first = malloc(2 * (size_t)n * sizeof *first), *last = first + n, width = 0;
    if (!first)
        return -1.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        column_range(i, n, m, radius, &first[i], &last[i]);
        if (first[i] > last[i] || (i > 0 && first[i] > last[i - 1] + 1)) { /* no path */
            free(first);
            return INF;
        }
        width = max_ssize(width, last[i] - first[i] + 1);
    }
    double *cost = malloc((size_t)n * (size_t)width * sizeof *cost);
    if (!cost) {
        free(first);
        return -1.0;
    }
    double total = dims == 1 ? band_rows(avg, n, series, m, 1, radius, INF, rows, cost, width)
                             : band_rows(avg, n, series, m, dims, radius, INF, rows, cost, width);
    Py_ssize_t i = n - 1, j = m - 1;
    for (;;) {
        for (Py_ssize_t d = 0; d < dims; d++)
            sums[i * dims + d] += series[j * dims + d];
        counts[i] += 1.0;
        if (i == 0 && j == 0)
            break;
        if (i == 0 || j == 0) { /* along the first row or column (decided so with NaN too) */
            i -= i > 0;
            j -= j > 0;
            continue;
        }
        const double *row = cost + i * width, *above = row - width;
        Py_ssize_t lo = first[i], lo_above = first[i - 1], hi_above = last[i - 1];
        double here = j - 1 >= lo ? row[j - 1 - lo] : INF;
        double up = j >= lo_above && j <= hi_above ? above[j - lo_above] : INF;
        double diag = j - 1 >= lo_above && j - 1 <= hi_above ? above[j - 1 - lo_above] : INF;
        if (diag <= up && diag <= here) {
            i--;
            j--;
        } else if (up <= here) {
            i--;
        } else {
            j--;
        }
    }
    free(cost);
    free(first);
    return total;
}

/* ---- module functions -------------------------------------------------------------------- */

/* dtw2(a, b, radius, cutoff) -> float; a: n x d, b: m x d */
static PyObject *py_dtw2(PyObject *self, PyObject *args) {
    Array arr[2] = {0};
    Py_ssize_t radius;
    double cutoff;
    if (!PyArg_ParseTuple(args, "O&O&nd", f64_in, &arr[0], f64_in, &arr[1], &radius, &cutoff))
        return NULL;
    PyObject *result = NULL;
    if (!check_ndim(arr, (int[]){2, 2}, (const char *const[]){"a", "b"}, 2))
        goto done;
    Py_ssize_t n = dim(&arr[0], 0), m = dim(&arr[1], 0), dims = dim(&arr[0], 1);
    if (dim(&arr[1], 1) != dims || n == 0 || m == 0 || dims == 0) {
        PyErr_Format(PyExc_ValueError, "series of shapes (%zd, %zd) and (%zd, %zd): both must "
                     "be nonempty, with the same number of dimensions", n, dims, m,
                     dim(&arr[1], 1));
        goto done;
    }
    double *rows = malloc(2 * ((size_t)m + 1) * sizeof *rows), value = 0.0;
    if (!rows) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    value = dtw2_rows(f64(&arr[0]), n, f64(&arr[1]), m, dims, radius, cutoff, rows);
    Py_END_ALLOW_THREADS
    free(rows);
    result = PyFloat_FromDouble(value);
done:
    release(arr, 2);
    return result;
}

/* 0 with a ValueError set unless X is n_series x max_len x dims with lengths in 1..max_len,
 * and dims as given (dims < 0: any) */
static int check_batch(const Array *X, const Array *lengths, Py_ssize_t dims) {
    if (X->view.ndim != 3 || lengths->view.ndim != 1 || dim(lengths, 0) != dim(X, 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "X must be n_series x max_len x dims, with one length per series");
        return 0;
    }
    if (dim(X, 2) == 0 || (dims >= 0 && dim(X, 2) != dims)) {
        PyErr_Format(PyExc_ValueError, "the series have %zd dimensions%s", dim(X, 2),
                     dim(X, 2) == 0 ? "" : ", unlike the other series");
        return 0;
    }
    return check_range(lengths, 1, (int64_t)dim(X, 1) + 1, "lengths");
}

/* dtw2_pairs(X, lengths, left, right, band, threads, out): out[p] = DTW_2 of series left[p]
 * and right[p] */
static PyObject *py_dtw2_pairs(PyObject *self, PyObject *args) {
    Array arr[5] = {0}; /* X, lengths, left, right, out */
    double band;
    int threads;
    if (!PyArg_ParseTuple(args, "O&O&O&O&diO&", f64_in, &arr[0], i64_in, &arr[1], i64_in,
                          &arr[2], i64_in, &arr[3], &band, &threads, f64_out, &arr[4]))
        return NULL;
    PyObject *result = NULL;
    if (!check_batch(&arr[0], &arr[1], -1))
        goto done;
    Py_ssize_t n_series = dim(&arr[0], 0), max_len = dim(&arr[0], 1), dims = dim(&arr[0], 2);
    Py_ssize_t n_pairs = arr[2].view.len / 8;
    if (arr[3].view.len / 8 != n_pairs || arr[4].view.len / 8 != n_pairs) {
        PyErr_SetString(PyExc_ValueError, "left, right and out must have the same size");
        goto done;
    }
    if (!check_range(&arr[2], 0, n_series, "left") || !check_range(&arr[3], 0, n_series, "right"))
        goto done;
    const double *X = f64(&arr[0]);
    const int64_t *lengths = i64(&arr[1]), *left = i64(&arr[2]), *right = i64(&arr[3]);
    double *out = f64_mut(&arr[4]);
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel num_threads(threads > 1 ? threads : 1) if (n_pairs > 1)
    {
        double *rows = malloc(2 * ((size_t)max_len + 1) * sizeof *rows);
        if (!rows) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp for schedule(dynamic, 4)
        for (Py_ssize_t p = 0; p < n_pairs; p++) {
            if (!rows)
                continue;
            Py_ssize_t n = lengths[left[p]], m = lengths[right[p]];
            out[p] = dtw2_rows(X + left[p] * max_len * dims, n, X + right[p] * max_len * dims,
                               m, dims, band_radius(n, m, band), INF, rows);
        }
        free(rows);
    }
    Py_END_ALLOW_THREADS
    if (failed)
        PyErr_NoMemory();
    else
        result = Py_NewRef(Py_None);
done:
    release(arr, 5);
    return result;
}

/* The arguments (one, X, lengths, band, threads, out) of dtw2_to_all and dba_update: one
 * nonempty series ``name`` (n x d; ``what`` in the message when empty) against the batch X of
 * series of d dimensions; 0 with an exception set (and the arrays released) otherwise. */
static int one_and_batch(PyObject *args, Array arr[4], double *band, int *threads,
                         const char *name, const char *what) {
    if (!PyArg_ParseTuple(args, "O&O&O&diO&", f64_in, &arr[0], f64_in, &arr[1], i64_in,
                          &arr[2], band, threads, f64_out, &arr[3]))
        return 0;
    if (check_ndim(arr, (int[]){2}, (const char *const[]){name}, 1) && dim(&arr[0], 0) > 0 &&
        check_batch(&arr[1], &arr[2], dim(&arr[0], 1)))
        return 1;
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "the %s is empty", what);
    release(arr, 4);
    return 0;
}

/* dtw2_to_all(query, X, lengths, band, threads, out): out[s] = DTW_2 of query to series s */
static PyObject *py_dtw2_to_all(PyObject *self, PyObject *args) {
    Array arr[4] = {0}; /* query, X, lengths, out */
    double band;
    int threads;
    if (!one_and_batch(args, arr, &band, &threads, "query", "query"))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = dim(&arr[0], 0), n_series = dim(&arr[1], 0), max_len = dim(&arr[1], 1),
               dims = dim(&arr[1], 2);
    if (arr[3].view.len / 8 != n_series) {
        PyErr_SetString(PyExc_ValueError, "out must have one entry per series");
        goto done;
    }
    const double *query = f64(&arr[0]), *X = f64(&arr[1]);
    const int64_t *lengths = i64(&arr[2]);
    double *out = f64_mut(&arr[3]);
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel num_threads(threads > 1 ? threads : 1) if (n_series > 1)
    {
        double *rows = malloc(2 * ((size_t)max_len + 1) * sizeof *rows);
        if (!rows) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp for schedule(dynamic)
        for (Py_ssize_t s = 0; s < n_series; s++) {
            if (!rows)
                continue;
            Py_ssize_t m = lengths[s];
            out[s] = dtw2_rows(query, n, X + s * max_len * dims, m, dims,
                               band_radius(n, m, band), INF, rows);
        }
        free(rows);
    }
    Py_END_ALLOW_THREADS
    if (failed)
        PyErr_NoMemory();
    else
        result = Py_NewRef(Py_None);
done:
    release(arr, 4);
    return result;
}

/* path_accumulate(avg, series, radius, sums, counts) -> DTW_2 (see path_accumulate) */
static PyObject *py_path_accumulate(PyObject *self, PyObject *args) {
    Array arr[4] = {0}; /* avg, series, sums, counts */
    Py_ssize_t radius;
    if (!PyArg_ParseTuple(args, "O&O&nO&O&", f64_in, &arr[0], f64_in, &arr[1], &radius,
                          f64_out, &arr[2], f64_out, &arr[3]))
        return NULL;
    PyObject *result = NULL;
    if (!check_ndim(arr, (int[]){2, 2, 2, 1},
                    (const char *const[]){"avg", "series", "sums", "counts"}, 4))
        goto done;
    Py_ssize_t n = dim(&arr[0], 0), m = dim(&arr[1], 0), dims = dim(&arr[0], 1);
    if (n == 0 || m == 0 || dims == 0 || dim(&arr[1], 1) != dims || dim(&arr[2], 0) != n ||
        dim(&arr[2], 1) != dims || dim(&arr[3], 0) != n) {
        PyErr_SetString(PyExc_ValueError, "avg (n x d) and series (m x d) must be nonempty, "
                        "sums n x d and counts of size n");
        goto done;
    }
    double *rows = malloc(2 * ((size_t)m + 1) * sizeof *rows), total = -1.0;
    if (rows) {
        Py_BEGIN_ALLOW_THREADS
        total = path_accumulate(f64(&arr[0]), n, f64(&arr[1]), m, dims, radius,
                                f64_mut(&arr[2]), f64_mut(&arr[3]), rows);
        Py_END_ALLOW_THREADS
        free(rows);
    }
    result = total < 0 ? PyErr_NoMemory() : PyFloat_FromDouble(total);
done:
    release(arr, 4);
    return result;
}

/* dba_update(avg, X, lengths, band, threads, refined) -> WGSS of avg: one DBA step into
 * refined. Every series accumulates into sums and counts of its own, added up in the order
 * of the series afterwards, so that the result does not depend on the threads. */
static PyObject *py_dba_update(PyObject *self, PyObject *args) {
    Array arr[4] = {0}; /* avg, X, lengths, refined */
    double band;
    int threads;
    if (!one_and_batch(args, arr, &band, &threads, "avg", "average"))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t length = dim(&arr[0], 0), n_series = dim(&arr[1], 0), max_len = dim(&arr[1], 1),
               dims = dim(&arr[1], 2), cells = length * dims;
    if (arr[3].view.len / 8 != cells) {
        PyErr_SetString(PyExc_ValueError, "refined must have the shape of avg");
        goto done;
    }
    const double *avg = f64(&arr[0]), *X = f64(&arr[1]);
    const int64_t *lengths = i64(&arr[2]);
    double *refined = f64_mut(&arr[3]), wgss = 0.0;
    /* per series: sums (length x dims), counts (length), then its distance */
    Py_ssize_t stride = cells + length + 1;
    double *scratch = calloc((size_t)n_series * (size_t)stride, sizeof *scratch);
    if (!scratch) {
        PyErr_NoMemory();
        goto done;
    }
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel num_threads(threads > 1 ? threads : 1) if (n_series > 1)
    {
        double *rows = malloc(2 * ((size_t)max_len + 1) * sizeof *rows);
        #pragma omp for schedule(dynamic)
        for (Py_ssize_t s = 0; s < n_series; s++) {
            double *sums = scratch + s * stride, *counts = sums + cells;
            Py_ssize_t m = lengths[s];
            double dist = rows ? path_accumulate(avg, length, X + s * max_len * dims, m, dims,
                                                 band_radius(length, m, band), sums, counts, rows)
                               : -1.0;
            if (dist < 0) {
                #pragma omp atomic write
                failed = 1;
            }
            counts[length] = dist;
        }
        free(rows);
    }
    if (!failed) {
        for (Py_ssize_t k = 0; k < cells; k++)
            refined[k] = 0.0;
        double *count = malloc((size_t)length * sizeof *count);
        if (count) {
            for (Py_ssize_t i = 0; i < length; i++)
                count[i] = 0.0;
            for (Py_ssize_t s = 0; s < n_series; s++) {
                const double *sums = scratch + s * stride, *counts = sums + cells;
                for (Py_ssize_t k = 0; k < cells; k++)
                    refined[k] += sums[k];
                for (Py_ssize_t i = 0; i < length; i++)
                    count[i] += counts[i];
                wgss += counts[length];
            }
            for (Py_ssize_t i = 0; i < length; i++)
                for (Py_ssize_t d = 0; d < dims; d++)
                    refined[i * dims + d] = count[i] > 0 ? refined[i * dims + d] / count[i]
                                                         : avg[i * dims + d];
            free(count);
        } else {
            failed = 1;
        }
    }
    Py_END_ALLOW_THREADS
    free(scratch);
    result = failed ? PyErr_NoMemory() : PyFloat_FromDouble(wgss);
done:
    release(arr, 4);
    return result;
}

/* ---- squared Euclidean distances --------------------------------------------------------- */

/* out[j] = squared Euclidean distance from a to row j of B (m x width), for j >= start; four
 * rows at a time (four independent sums, each in column order). */
static void distances_from(const double *restrict a, const double *restrict B, Py_ssize_t m,
                           Py_ssize_t width, Py_ssize_t start, double *restrict out) {
    Py_ssize_t j = start;
    for (; j + 3 < m; j += 4) {
        const double *b0 = B + j * width, *b1 = b0 + width, *b2 = b1 + width, *b3 = b2 + width;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (Py_ssize_t t = 0; t < width; t++) {
            double v = a[t], d0 = v - b0[t], d1 = v - b1[t], d2 = v - b2[t], d3 = v - b3[t];
            s0 += d0 * d0;
            s1 += d1 * d1;
            s2 += d2 * d2;
            s3 += d3 * d3;
        }
        out[j] = s0;
        out[j + 1] = s1;
        out[j + 2] = s2;
        out[j + 3] = s3;
    }
    for (; j < m; j++) {
        const double *b = B + j * width;
        double total = 0.0;
        for (Py_ssize_t t = 0; t < width; t++) {
            double d = a[t] - b[t];
            total += d * d;
        }
        out[j] = total;
    }
}

/* squared_euclidean(A, B, threads, out): out (n x m) between the rows of A and of B */
static PyObject *py_squared_euclidean(PyObject *self, PyObject *args) {
    Array arr[3] = {0}; /* A, B, out */
    int threads;
    if (!PyArg_ParseTuple(args, "O&O&iO&", f64_in, &arr[0], f64_in, &arr[1], &threads, f64_out,
                          &arr[2]))
        return NULL;
    PyObject *result = NULL;
    if (!check_ndim(arr, (int[]){2, 2, 2}, (const char *const[]){"A", "B", "out"}, 3))
        goto done;
    Py_ssize_t n = dim(&arr[0], 0), m = dim(&arr[1], 0), width = dim(&arr[0], 1);
    if (dim(&arr[1], 1) != width || dim(&arr[2], 0) != n || dim(&arr[2], 1) != m) {
        PyErr_Format(PyExc_ValueError, "rows of %zd and %zd values cannot be compared", width,
                     dim(&arr[1], 1));
        goto done;
    }
    const double *A = f64(&arr[0]), *B = f64(&arr[1]);
    double *out = f64_mut(&arr[2]);
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel for num_threads(threads > 1 ? threads : 1) schedule(static) if (n > 1)
    for (Py_ssize_t i = 0; i < n; i++)
        distances_from(A + i * width, B, m, width, 0, out + i * m);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    release(arr, 3);
    return result;
}

#define TILE 64

/* pairwise_squared_euclidean(Y, threads, out): out (n x n, zeros on entry) between the rows of
 * Y, from the upper triangle mirrored ((a - b)^2 == (b - a)^2 exactly); rows r and n-1-r go to
 * one thread, for balance. */
static PyObject *py_pairwise_squared_euclidean(PyObject *self, PyObject *args) {
    Array arr[2] = {0}; /* Y, out */
    int threads;
    if (!PyArg_ParseTuple(args, "O&iO&", f64_in, &arr[0], &threads, f64_out, &arr[1]))
        return NULL;
    PyObject *result = NULL;
    if (!check_ndim(arr, (int[]){2, 2}, (const char *const[]){"Y", "out"}, 2))
        goto done;
    Py_ssize_t n = dim(&arr[0], 0), width = dim(&arr[0], 1);
    if (dim(&arr[1], 0) != n || dim(&arr[1], 1) != n) {
        PyErr_SetString(PyExc_ValueError, "out must be n x n");
        goto done;
    }
    const double *Y = f64(&arr[0]);
    double *out = f64_mut(&arr[1]);
    Py_ssize_t tiles = (n + TILE - 1) / TILE;
    Py_BEGIN_ALLOW_THREADS
    #pragma omp parallel num_threads(threads > 1 ? threads : 1) if (n > 1)
    {
        #pragma omp for schedule(static)
        for (Py_ssize_t r = 0; r < (n + 1) / 2; r++) {
            distances_from(Y + r * width, Y, n, width, r + 1, out + r * n);
            if (n - 1 - r != r)
                distances_from(Y + (n - 1 - r) * width, Y, n, width, n - r, out + (n - 1 - r) * n);
        }
        /* mirror tile by tile (the implicit barrier above: the triangle is complete) */
        #pragma omp for schedule(dynamic)
        for (Py_ssize_t tile = 0; tile < tiles; tile++)
            for (Py_ssize_t i0 = 0; i0 <= tile * TILE; i0 += TILE)
                for (Py_ssize_t j = tile * TILE; j < min_ssize(n, (tile + 1) * TILE); j++)
                    for (Py_ssize_t i = i0; i < min_ssize(j, i0 + TILE); i++)
                        out[j * n + i] = out[i * n + j];
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    release(arr, 2);
    return result;
}

static PyMethodDef methods[] = {
    {"dtw2", py_dtw2, METH_VARARGS, "dtw2(a, b, radius, cutoff) -> float"},
    {"dtw2_pairs", py_dtw2_pairs, METH_VARARGS,
     "dtw2_pairs(X, lengths, left, right, band, threads, out)"},
    {"dtw2_to_all", py_dtw2_to_all, METH_VARARGS,
     "dtw2_to_all(query, X, lengths, band, threads, out)"},
    {"path_accumulate", py_path_accumulate, METH_VARARGS,
     "path_accumulate(avg, series, radius, sums, counts) -> float"},
    {"dba_update", py_dba_update, METH_VARARGS,
     "dba_update(avg, X, lengths, band, threads, refined) -> float"},
    {"squared_euclidean", py_squared_euclidean, METH_VARARGS,
     "squared_euclidean(A, B, threads, out)"},
    {"pairwise_squared_euclidean", py_pairwise_squared_euclidean, METH_VARARGS,
     "pairwise_squared_euclidean(Y, threads, out)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dtw",
                                    "DTW_2, DBA and squared Euclidean kernels (phasekit.distance).",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__dtw(void) { return PyModule_Create(&module); }
