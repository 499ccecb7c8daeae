/* phasekit.periodicity._kernels: the compiled kernels of Phase-TA.
 *
 * The sliding-window detector (detect.py: distance curve, base periodicity, instance test and
 * the whole pass), the phase alignment's kernels (align.py: instance extension, phase
 * coverage, batched mean cycles) and the clustering's row-wise linear interpolation and graphs
 * (cluster.py). They replace numba kernels, so that a command loads neither numba nor its FFT
 * extension; the Python modules keep thin wrappers and their docstrings state the semantics.
 *
 * Interface: plain CPython with the buffer protocol (no numpy headers). Arrays are
 * C-contiguous float64 ('d'), int64 ('l' or 'q', 8 bytes) or bool ('?'); outputs are
 * allocated by the caller. The arithmetic follows the numba kernels operation for operation
 * (no -ffast-math; ISO C11 does not contract a*b+c into an FMA), except the FFT, which is our
 * own (the numba kernels called pocketfft through rocket-fft): its correlations agree with
 * pocketfft's and the direct sums to rounding (tests/test_detect.py). The clustering's
 * spanning tree and connected components are here too (cluster.py: no scipy.sparse).
 * Every compute releases the GIL (the window tuning runs detector passes on threads).
 */
#include "../_buffers.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846264338327950288

/* The FFT's vectorized loops are also compiled for AVX2 where GCC can pick the version at load
 * time (x86-64 Linux); the results do not depend on it (ISO C: no fused multiply-add). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define VECTOR_CLONES __attribute__((noinline, target_clones("avx2", "default")))
#else
#define VECTOR_CLONES __attribute__((noinline))
#endif

/* ---- arrays through the buffer protocol -------------------------------------------------- */

static Py_ssize_t items(const Array *array) { return array->view.len / array->view.itemsize; }

#define F64(array) ((double *)(array).view.buf)
#define I64(array) ((int64_t *)(array).view.buf)

static PyObject *shape_error(const char *what) {
    PyErr_Format(PyExc_ValueError, "%s", what);
    return NULL;
}

/* Python's floor division and modulo for a positive divisor */
static Py_ssize_t floor_div(Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static Py_ssize_t floor_mod(Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t r = a % b;
    return r < 0 ? r + b : r;
}

/* ---- FFT: real transforms of power-of-two length N through a complex one of N / 2 -------- */

/* A Stockham autosort transform (no bit reversal: every pass reads and writes its arrays in
 * order), radix 4 with a last radix-2 pass when log2(N / 2) is odd, in split format (real and
 * imaginary parts in arrays of their own, so that the compiler vectorizes the inner loops). */
typedef struct {
    Py_ssize_t size;       /* N, a power of two >= 2 */
    Py_ssize_t m;          /* N / 2: the complex transform's length */
    double *twiddle;       /* per radix-4 pass of length n: W^p, W^2p, W^3p for p < n / 4 as
                            * 6 doubles, W = exp(-2 pi i / n); the passes one after another */
    double *post_re, *post_im; /* exp(-i pi k / m) = exp(-2 pi i k / N), k < m / 2 + 1 */
    double *re, *im;       /* m each: the complex transform's input */
    double *re2, *im2;     /* m each: the other half of the ping-pong */
} FftPlan;

static void plan_free(FftPlan *plan) {
    free(plan->twiddle);
    plan->twiddle = plan->post_re = plan->post_im = NULL;
    plan->re = plan->im = plan->re2 = plan->im2 = NULL;
}

/* 0 on success, -1 when out of memory */
static int plan_init(FftPlan *plan, Py_ssize_t size) {
    const Py_ssize_t m = size / 2, bins = m / 2 + 1;
    Py_ssize_t stages = 0; /* doubles of the passes' twiddles */
    for (Py_ssize_t n = m; n >= 4; n /= 4)
        stages += 6 * (n / 4);
    plan->size = size;
    plan->m = m;
    plan->twiddle = malloc(sizeof(double) * (size_t)(stages + 2 * bins + 4 * m));
    if (plan->twiddle == NULL)
        return -1;
    plan->post_re = plan->twiddle + stages;
    plan->post_im = plan->post_re + bins;
    plan->re = plan->post_im + bins;
    plan->im = plan->re + m;
    plan->re2 = plan->im + m;
    plan->im2 = plan->re2 + m;
    double *w = plan->twiddle;
    for (Py_ssize_t n = m; n >= 4; n /= 4)
        for (Py_ssize_t p = 0; p < n / 4; p++)
            for (Py_ssize_t t = 1; t <= 3; t++) {
                double angle = -PI * (double)(2 * p * t * (m / n)) / (double)m;
                *w++ = cos(angle);
                *w++ = sin(angle);
            }
    for (Py_ssize_t k = 0; k < bins; k++) {
        double angle = -PI * (double)k / (double)m;
        plan->post_re[k] = cos(angle);
        plan->post_im[k] = sin(angle);
    }
    return 0;
}

/* One radix-4 butterfly column: for q < s, with a, b, c, d the inputs at offsets 0, n/4, n/2,
 * 3n/4 (times s): y0 = (a + c) + (b + d), y1 = w1 ((a - c) - i (b - d)), y2 = w2 ((a + c) -
 * (b + d)), y3 = w3 ((a - c) + i (b - d)). Not inlined: its restrict pointers are what let the
 * compiler vectorize the loop over q without run-time overlap checks. */
VECTOR_CLONES static void radix4_column(
    Py_ssize_t s, const double *restrict ar, const double *restrict ai, const double *restrict br,
    const double *restrict bi, const double *restrict cr, const double *restrict ci,
    const double *restrict dr, const double *restrict di, double *restrict y0r,
    double *restrict y0i, double *restrict y1r, double *restrict y1i, double *restrict y2r,
    double *restrict y2i, double *restrict y3r, double *restrict y3i, const double *w) {
    const double w1r = w[0], w1i = w[1], w2r = w[2], w2i = w[3], w3r = w[4], w3i = w[5];
    for (Py_ssize_t q = 0; q < s; q++) {
        double apc_r = ar[q] + cr[q], apc_i = ai[q] + ci[q];
        double amc_r = ar[q] - cr[q], amc_i = ai[q] - ci[q];
        double bpd_r = br[q] + dr[q], bpd_i = bi[q] + di[q];
        double bmd_r = br[q] - dr[q], bmd_i = bi[q] - di[q];
        y0r[q] = apc_r + bpd_r;
        y0i[q] = apc_i + bpd_i;
        double tr = amc_r + bmd_i, ti = amc_i - bmd_r; /* (a - c) - i (b - d) */
        y1r[q] = w1r * tr - w1i * ti;
        y1i[q] = w1r * ti + w1i * tr;
        tr = apc_r - bpd_r;
        ti = apc_i - bpd_i;
        y2r[q] = w2r * tr - w2i * ti;
        y2i[q] = w2r * ti + w2i * tr;
        tr = amc_r - bmd_i; /* (a - c) + i (b - d) */
        ti = amc_i + bmd_r;
        y3r[q] = w3r * tr - w3i * ti;
        y3i[q] = w3r * ti + w3i * tr;
    }
}

/* The first radix-4 pass (stride 1): radix4_column's butterfly once per p, the inputs at
 * p, p + n/4, p + n/2, p + 3n/4 and the outputs at 4p .. 4p + 3 (a column of one point, so
 * the loop over p is the one that runs). */
static void radix4_first(Py_ssize_t quarter, const double *xr, const double *xi, double *yr,
                         double *yi, const double *twiddle) {
    for (Py_ssize_t p = 0; p < quarter; p++) {
        const double *w = twiddle + 6 * p, *ar = xr + p, *ai = xi + p;
        double *y0r = yr + 4 * p, *y0i = yi + 4 * p;
        double apc_r = ar[0] + ar[2 * quarter], apc_i = ai[0] + ai[2 * quarter];
        double amc_r = ar[0] - ar[2 * quarter], amc_i = ai[0] - ai[2 * quarter];
        double bpd_r = ar[quarter] + ar[3 * quarter], bpd_i = ai[quarter] + ai[3 * quarter];
        double bmd_r = ar[quarter] - ar[3 * quarter], bmd_i = ai[quarter] - ai[3 * quarter];
        y0r[0] = apc_r + bpd_r;
        y0i[0] = apc_i + bpd_i;
        double tr = amc_r + bmd_i, ti = amc_i - bmd_r;
        y0r[1] = w[0] * tr - w[1] * ti;
        y0i[1] = w[0] * ti + w[1] * tr;
        tr = apc_r - bpd_r;
        ti = apc_i - bpd_i;
        y0r[2] = w[2] * tr - w[3] * ti;
        y0i[2] = w[2] * ti + w[3] * tr;
        tr = amc_r - bmd_i;
        ti = amc_i + bmd_r;
        y0r[3] = w[4] * tr - w[5] * ti;
        y0i[3] = w[4] * ti + w[5] * tr;
    }
}

/* The forward DFT of the plan's m complex values (re, im, natural order); sets *out_re,
 * *out_im to the arrays that hold it (natural order): decimation in frequency, a pass of
 * length n and stride s turning into 4 of length n / 4 and stride 4 s. */
static void fft_core(const FftPlan *plan, const double **out_re, const double **out_im) {
    double *xr = plan->re, *xi = plan->im, *yr = plan->re2, *yi = plan->im2, *swap;
    const double *twiddle = plan->twiddle;
    Py_ssize_t n = plan->m, s = 1;
    for (; n >= 4; twiddle += 6 * (n / 4), n /= 4, s *= 4) {
        const Py_ssize_t quarter = n / 4, span = s * quarter; /* from input a to b, c, d */
        if (s == 1) {
            radix4_first(quarter, xr, xi, yr, yi, twiddle);
        } else {
            for (Py_ssize_t p = 0; p < quarter; p++) {
                const double *ar = xr + s * p, *ai = xi + s * p;
                double *y0r = yr + 4 * s * p, *y0i = yi + 4 * s * p;
                radix4_column(s, ar, ai, ar + span, ai + span, ar + 2 * span, ai + 2 * span,
                              ar + 3 * span, ai + 3 * span, y0r, y0i, y0r + s, y0i + s,
                              y0r + 2 * s, y0i + 2 * s, y0r + 3 * s, y0i + 3 * s, twiddle + 6 * p);
            }
        }
        swap = xr, xr = yr, yr = swap;
        swap = xi, xi = yi, yi = swap;
    }
    if (n == 2) { /* a last radix-2 pass */
        for (Py_ssize_t q = 0; q < s; q++) {
            yr[q] = xr[q] + xr[s + q];
            yi[q] = xi[q] + xi[s + q];
            yr[s + q] = xr[q] - xr[s + q];
            yi[s + q] = xi[q] - xi[s + q];
        }
        xr = yr;
        xi = yi;
    }
    *out_re = xr;
    *out_im = xi;
}

/* Load count reals v[i] = x[i * stride] (zero-padded to N) as the m complex values
 * z[n] = v[2n] + i v[2n+1]. */
static void load_real(const FftPlan *plan, const double *x, Py_ssize_t stride,
                      Py_ssize_t count) {
    const Py_ssize_t pairs = count / 2;
    for (Py_ssize_t k = 0; k < pairs; k++) {
        plan->re[k] = x[2 * k * stride];
        plan->im[k] = x[(2 * k + 1) * stride];
    }
    for (Py_ssize_t k = pairs; k < plan->m; k++)
        plan->re[k] = plan->im[k] = 0.0;
    if (count % 2 == 1)
        plan->re[pairs] = x[(count - 1) * stride];
}

/* Bins k and m - k of the real DFT from Z = DFT_m(z) (pairs for k = 1 .. m/2 - 1, restrict
 * pointers for the compiler): X[k] = E + W^k O and X[m-k] = conj(E - W^k O) with
 * E = (Z[k] + conj Z[m-k]) / 2, O = (Z[k] - conj Z[m-k]) / 2i, W = exp(-2 pi i / N). */
VECTOR_CLONES static void real_bins(Py_ssize_t m, const double *restrict re,
                                   const double *restrict im, const double *restrict wr,
                                   const double *restrict wi, double *restrict out_re,
                                   double *restrict out_im) {
    for (Py_ssize_t k = 1; k < (m + 1) / 2; k++) { /* k < m - k */
        double zr = re[k], zi = im[k], cr = re[m - k], ci = -im[m - k];
        double er = 0.5 * (zr + cr), ei = 0.5 * (zi + ci);
        double or_ = 0.5 * (zi - ci), oi = -0.5 * (zr - cr); /* (Z - conj Z') / 2i */
        double tr = wr[k] * or_ - wi[k] * oi, ti = wr[k] * oi + wi[k] * or_;
        out_re[k] = er + tr;
        out_im[k] = ei + ti;
        out_re[m - k] = er - tr;
        out_im[m - k] = ti - ei;
    }
}

/* out_re, out_im [0..m] = the DFT of the N reals loaded by load_real (real_bins). */
static void rfft(const FftPlan *plan, double *out_re, double *out_im) {
    const Py_ssize_t m = plan->m;
    const double *re, *im;
    fft_core(plan, &re, &im);
    out_re[0] = re[0] + im[0];
    out_im[0] = 0.0;
    out_re[m] = re[0] - im[0];
    out_im[m] = 0.0;
    if (m >= 2) { /* k = m / 2 pairs with itself: E = Re Z, O = Im Z, W^k = -i: X = conj Z */
        out_re[m / 2] = re[m / 2];
        out_im[m / 2] = -im[m / 2];
    }
    real_bins(m, re, im, plan->post_re, plan->post_im, out_re, out_im);
}

/* conj(Z[k]) and conj(Z[m-k]) for the inverse (pairs for k = 1 .. m/2 - 1): Z[k] = E + i O and
 * Z[m-k] = conj(E) + i conj(O), E = (X[k] + conj X[m-k]) / 2, O = (X[k] - conj X[m-k])
 * conj(W^k) / 2. */
VECTOR_CLONES static void complex_bins(Py_ssize_t m, const double *restrict spec_re,
                                      const double *restrict spec_im, const double *restrict wr,
                                      const double *restrict wi, double *restrict re,
                                      double *restrict im) {
    for (Py_ssize_t k = 1; k < (m + 1) / 2; k++) { /* k < m - k */
        double xr = spec_re[k], xi = spec_im[k], cr = spec_re[m - k], ci = -spec_im[m - k];
        double er = 0.5 * (xr + cr), ei = 0.5 * (xi + ci);
        double dr = 0.5 * (xr - cr), di = 0.5 * (xi - ci);
        double or_ = dr * wr[k] + di * wi[k], oi = di * wr[k] - dr * wi[k];
        re[k] = er - oi; /* conj(E + i O) */
        im[k] = -(ei + or_);
        re[m - k] = er + oi; /* conj(conj E + i conj O) */
        im[m - k] = ei - or_;
    }
}

/* The inverse real DFT of the Hermitian spectrum [0..m] (numpy's irfft: divided by N, the
 * imaginary parts of bins 0 and m ignored), into out[0..count): z = IDFT_m(Z) / m =
 * conj(DFT_m(conj Z)) / m holds the samples 2n (real part) and 2n+1 (imaginary part). */
static void irfft(const FftPlan *plan, const double *spec_re, const double *spec_im,
                  double *out, Py_ssize_t count) {
    const Py_ssize_t m = plan->m;
    /* k = 0: E = (X0 + Xm) / 2, O = (X0 - Xm) / 2 (real); k = m / 2: Z = conj X (W^k = -i) */
    plan->re[0] = 0.5 * (spec_re[0] + spec_re[m]);
    plan->im[0] = -0.5 * (spec_re[0] - spec_re[m]);
    if (m >= 2) {
        plan->re[m / 2] = spec_re[m / 2];
        plan->im[m / 2] = spec_im[m / 2];
    }
    complex_bins(m, spec_re, spec_im, plan->post_re, plan->post_im, plan->re, plan->im);
    const double *re, *im;
    fft_core(plan, &re, &im);
    const double scale = 1.0 / (double)m;
    for (Py_ssize_t n = 0; 2 * n < count; n++)
        out[2 * n] = re[n] * scale;
    for (Py_ssize_t n = 0; 2 * n + 1 < count; n++)
        out[2 * n + 1] = -im[n] * scale;
}

/* ---- detector (detect.py) ---------------------------------------------------------------- */

typedef struct {
    const double *x, *cs1, *cs2; /* n x dims series and its (n + 1) x dims prefix sums */
    Py_ssize_t n, dims;
} Series;

/* detect.pair_delta: delta between x[a:a+length] and x[b:b+length] from the prefix sums */
static double pair_delta(const Series *s, Py_ssize_t a, Py_ssize_t b, Py_ssize_t length,
                         double cross) {
    const Py_ssize_t dims = s->dims;
    double squared_distance = -2.0 * cross, spread = 0.0, level_gap = 0.0;
    for (Py_ssize_t d = 0; d < dims; d++) {
        double sum_a = s->cs1[(a + length) * dims + d] - s->cs1[a * dims + d];
        double sum_b = s->cs1[(b + length) * dims + d] - s->cs1[b * dims + d];
        double squares = s->cs2[(a + length) * dims + d] - s->cs2[a * dims + d]
                         + s->cs2[(b + length) * dims + d] - s->cs2[b * dims + d];
        squared_distance += squares;
        spread += squares - (sum_a * sum_a + sum_b * sum_b) / (double)length;
        double gap = (sum_a - sum_b) / (double)length;
        level_gap += gap * gap;
    }
    double denominator = spread + 0.5 * (double)length * level_gap;
    if (denominator <= 1e-9 * (squared_distance + 2.0 * cross) + 1e-300)
        return 1.0; /* constant blocks (relative to rounding of the prefix sums) */
    double ratio = squared_distance / denominator;
    return ratio > 0.0 ? ratio : 0.0;
}

typedef struct {
    Py_ssize_t min_period;
    double near_zero, rise, multiple_tolerance, refine_tolerance;
} Rule;

/* detect.base_period: k_bp from delta[0..length) (index 0 unused); 0 if none */
static Py_ssize_t base_period(const double *delta, Py_ssize_t length, const Rule *rule) {
    const Py_ssize_t last = length - 1;
    Py_ssize_t first = 0;
    for (Py_ssize_t k = 1; k <= last; k++)
        if (delta[k] >= rule->rise) {
            first = k;
            break;
        }
    if (first == 0)
        return 0;
    if (first < rule->min_period)
        first = rule->min_period;
    if (first > last)
        return 0;
    Py_ssize_t best = first;
    for (Py_ssize_t k = first; k <= last; k++)
        if (delta[k] < delta[best])
            best = k;
    if (delta[best] > rule->near_zero)
        return 0;
    for (Py_ssize_t k = first; k <= best; k++) {
        if (delta[k] > 2.0 * rule->near_zero)
            continue;
        if (k > 1 && delta[k - 1] < delta[k])
            continue;
        if (k < last && delta[k + 1] < delta[k])
            continue;
        double multiple = nearbyint((double)best / (double)k); /* round half to even */
        double tolerance = rule->multiple_tolerance * (double)best;
        if (tolerance < 1.0)
            tolerance = 1.0;
        if (multiple >= 1 && fabs((double)best - multiple * (double)k) <= tolerance) {
            Py_ssize_t spread = (Py_ssize_t)(rule->refine_tolerance * (double)k);
            if (spread < 1)
                spread = 1;
            Py_ssize_t chosen = k;
            Py_ssize_t lo = k - spread > first ? k - spread : first;
            Py_ssize_t hi = k + spread < last ? k + spread : last;
            for (Py_ssize_t j = lo; j <= hi; j++)
                if (delta[j] < delta[chosen])
                    chosen = j;
            return chosen;
        }
    }
    return best;
}

/* detect.verified_count: instances of k samples from first that each resemble the k before */
static Py_ssize_t verified_count(const Series *s, Py_ssize_t first, Py_ssize_t k,
                                 Py_ssize_t count, double threshold) {
    const Py_ssize_t dims = s->dims;
    for (Py_ssize_t j = 0; j < count; j++) {
        Py_ssize_t a = first + j * k;
        double cross = 0.0;
        for (Py_ssize_t i = 0; i < k; i++)
            for (Py_ssize_t d = 0; d < dims; d++)
                cross += s->x[(a + i) * dims + d] * s->x[(a - k + i) * dims + d];
        if (pair_delta(s, a, a - k, k, cross) > threshold)
            return j;
    }
    return count;
}

/* delta[k] for k = 1..half-1 from cross[k] = sum R * R_k (delta[0] = 0) */
static void delta_from_cross(const Series *s, const double *cross, Py_ssize_t rsw,
                             Py_ssize_t half, double *out) {
    out[0] = 0.0;
    if (s->dims != 1) {
        for (Py_ssize_t k = 1; k < half; k++)
            out[k] = pair_delta(s, rsw, rsw - k, half, cross[k]);
        return;
    }
    /* one dimension: pair_delta's arithmetic, operation for operation, RSW's terms hoisted */
    const double *c1 = s->cs1, *c2 = s->cs2;
    const double sum_a = c1[rsw + half] - c1[rsw], squares_a = c2[rsw + half] - c2[rsw];
    for (Py_ssize_t k = 1; k < half; k++) {
        Py_ssize_t b = rsw - k;
        double sum_b = c1[b + half] - c1[b];
        double squares = squares_a + c2[b + half] - c2[b];
        double squared_distance = -2.0 * cross[k] + squares;
        double spread = 0.0 + (squares - (sum_a * sum_a + sum_b * sum_b) / (double)half);
        double gap = (sum_a - sum_b) / (double)half;
        double denominator = spread + 0.5 * (double)half * (0.0 + gap * gap);
        if (denominator <= 1e-9 * (squared_distance + 2.0 * cross[k]) + 1e-300) {
            out[k] = 1.0;
        } else {
            double ratio = squared_distance / denominator;
            out[k] = ratio > 0.0 ? ratio : 0.0;
        }
    }
}

/* cross[k] = sum_i R[i] x[rsw - k + i], k = 1..half-1, directly */
static void cross_direct(const Series *s, Py_ssize_t rsw, Py_ssize_t half, double *cross) {
    const double *v = s->x;
    const Py_ssize_t dims = s->dims;
    if (dims == 1) { /* four shifts at a time: independent sums, each in the same order */
        Py_ssize_t k = 1;
        for (; k + 3 < half; k += 4) {
            double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
            for (Py_ssize_t i = 0; i < half; i++) {
                double r = v[rsw + i];
                t0 += r * v[rsw - k + i];
                t1 += r * v[rsw - k - 1 + i];
                t2 += r * v[rsw - k - 2 + i];
                t3 += r * v[rsw - k - 3 + i];
            }
            cross[k] = t0;
            cross[k + 1] = t1;
            cross[k + 2] = t2;
            cross[k + 3] = t3;
        }
        for (; k < half; k++) {
            double total = 0.0;
            for (Py_ssize_t i = 0; i < half; i++)
                total += v[rsw + i] * v[rsw - k + i];
            cross[k] = total;
        }
        return;
    }
    for (Py_ssize_t k = 1; k < half; k++) {
        double total = 0.0;
        for (Py_ssize_t i = 0; i < half; i++)
            for (Py_ssize_t d = 0; d < dims; d++)
                total += v[(rsw + i) * dims + d] * v[(rsw - k + i) * dims + d];
        cross[k] = total;
    }
}

/* The transform length for windows of half-length L: the power of two at least 2 L (the
 * correlation below reads lags up to L - 1 of a 2 L context: 2 L - 1 points or more do not
 * wrap around; the numba kernels took 3 L) */
static Py_ssize_t fft_size(Py_ssize_t half) {
    Py_ssize_t size = 2;
    while (size < 2 * half)
        size *= 2;
    return size;
}

typedef struct {
    FftPlan plan;
    double *right_re, *right_im, *context_re, *context_im, *spectrum_re, *spectrum_im;
    double *correlation; /* L samples */
} CrossFft; /* spectra of m + 1 bins */

static void cross_fft_free(CrossFft *c) {
    plan_free(&c->plan);
    free(c->right_re);
    c->right_re = NULL;
}

static int cross_fft_init(CrossFft *c, Py_ssize_t half) {
    memset(c, 0, sizeof(*c));
    if (plan_init(&c->plan, fft_size(half)) < 0)
        return -1;
    const Py_ssize_t bins = c->plan.m + 1;
    c->right_re = malloc(sizeof(double) * (6 * (size_t)bins + (size_t)half));
    if (c->right_re == NULL) {
        cross_fft_free(c);
        return -1;
    }
    c->right_im = c->right_re + bins;
    c->context_re = c->right_im + bins;
    c->context_im = c->context_re + bins;
    c->spectrum_re = c->context_im + bins;
    c->spectrum_im = c->spectrum_re + bins;
    c->correlation = c->spectrum_im + bins;
    return 0;
}

/* cross[k] = sum_i R[i] x[rsw - k + i], k = 1..half-1, by FFT correlation of RSW with the
 * 2 L samples of the window: correlation[j] = sum_i R[i] context[i + j], and shift k reads
 * the context from j = L - k */
static void cross_fft(CrossFft *c, const Series *s, Py_ssize_t rsw, Py_ssize_t half,
                      double *cross) {
    const Py_ssize_t bins = c->plan.m + 1, dims = s->dims;
    for (Py_ssize_t f = 0; f < bins; f++)
        c->spectrum_re[f] = c->spectrum_im[f] = 0.0;
    for (Py_ssize_t d = 0; d < dims; d++) {
        load_real(&c->plan, s->x + rsw * dims + d, dims, half);
        rfft(&c->plan, c->right_re, c->right_im);
        load_real(&c->plan, s->x + (rsw - half) * dims + d, dims, 2 * half);
        rfft(&c->plan, c->context_re, c->context_im);
        for (Py_ssize_t f = 0; f < bins; f++) { /* context * conj(right) */
            double ar = c->context_re[f], ai = c->context_im[f];
            double br = c->right_re[f], bi = c->right_im[f];
            c->spectrum_re[f] += ar * br + ai * bi;
            c->spectrum_im[f] += ai * br - ar * bi;
        }
    }
    irfft(&c->plan, c->spectrum_re, c->spectrum_im, c->correlation, half);
    for (Py_ssize_t k = 1; k < half; k++)
        cross[k] = c->correlation[half - k];
}

typedef struct {
    int64_t *starts, *lengths, *counts;
    char *leading;
    Py_ssize_t capacity;
} BatchOut;

/* The pass of detect.detect (module docstring of detect.py): batches found, -1 out of memory,
 * -2 more batches than the capacity */
static Py_ssize_t scan(const Series *s, Py_ssize_t half, const Rule *rule,
                       Py_ssize_t aperiodic_step, int lagged_copy, int use_fft,
                       double instance_threshold, BatchOut *out) {
    const Py_ssize_t n = s->n;
    double *cross = calloc((size_t)half, sizeof(double));
    double *delta = calloc((size_t)half, sizeof(double));
    CrossFft fft;
    memset(&fft, 0, sizeof(fft));
    if (cross == NULL || delta == NULL || (use_fft && cross_fft_init(&fft, half) < 0)) {
        free(cross);
        free(delta);
        return -1;
    }
    Py_ssize_t w = 0, found = 0;
    int previous_periodic = 0;
    while (w + 2 * half <= n) {
        Py_ssize_t rsw = w + half;
        if (use_fft)
            cross_fft(&fft, s, rsw, half, cross);
        else
            cross_direct(s, rsw, half, cross);
        delta_from_cross(s, cross, rsw, half, delta);
        Py_ssize_t k = base_period(delta, half, rule);
        Py_ssize_t span = half;
        int opens = 0;
        if (k > 0) {
            opens = lagged_copy && !previous_periodic;
        } else if (previous_periodic) { /* the region may go on: extend it instance by instance */
            k = (Py_ssize_t)out->lengths[found - 1];
            span = n - rsw < half ? n - rsw : half;
        }
        Py_ssize_t count = k > 0 ? verified_count(s, rsw, k, span / k, instance_threshold) : 0;
        if (count > 0) {
            if (found >= out->capacity) {
                found = -2;
                break;
            }
            out->starts[found] = opens ? rsw - k : rsw;
            out->lengths[found] = k;
            out->counts[found] = opens ? count + 1 : count;
            out->leading[found] = (char)opens;
            found++;
            w += k * count;
            previous_periodic = 1;
        } else {
            w += aperiodic_step;
            previous_periodic = 0;
        }
    }
    cross_fft_free(&fft);
    free(cross);
    free(delta);
    return found;
}

/* Series from x (n x d) and its prefix sums ((n + 1) x d); NULL and an exception if not */
static const char *series_from(Series *s, const Array *x, const Array *cs1, const Array *cs2) {
    s->x = F64(*x);
    s->cs1 = F64(*cs1);
    s->cs2 = F64(*cs2);
    s->n = dim(x, 0);
    s->dims = dim(x, 1);
    if (x->view.ndim != 2 || cs1->view.ndim != 2 || cs2->view.ndim != 2 || dim(cs1, 0) != s->n + 1
        || dim(cs2, 0) != s->n + 1 || dim(cs1, 1) != s->dims || dim(cs2, 1) != s->dims)
        return "x must be n x d and its prefix sums (n + 1) x d";
    return NULL;
}

static PyObject *py_scan(PyObject *self, PyObject *args) {
    Array a[7] = {0};
    Py_ssize_t half, step;
    Rule rule;
    int lagged_copy, use_fft;
    double instance_threshold;
    if (!PyArg_ParseTuple(args, "O&O&O&nnddddnppdO&O&O&O&", f64_in, &a[0], f64_in, &a[1], f64_in,
                          &a[2], &half, &rule.min_period, &rule.near_zero, &rule.rise,
                          &rule.multiple_tolerance, &rule.refine_tolerance, &step, &lagged_copy,
                          &use_fft, &instance_threshold, i64_out, &a[3], i64_out, &a[4], i64_out,
                          &a[5], bool_out, &a[6]))
        return NULL;
    Series s;
    const char *problem = series_from(&s, &a[0], &a[1], &a[2]);
    Py_ssize_t capacity = items(&a[3]);
    if (problem == NULL
        && (items(&a[4]) != capacity || items(&a[5]) != capacity || items(&a[6]) != capacity))
        problem = "the four outputs must have one length";
    if (problem == NULL && (half < 2 || step < 1))
        problem = "half must be at least 2 and the step at least 1";
    if (problem != NULL) {
        release(a, 7);
        return shape_error(problem);
    }
    BatchOut out = {I64(a[3]), I64(a[4]), I64(a[5]), (char *)a[6].view.buf, capacity};
    Py_ssize_t found;
    Py_BEGIN_ALLOW_THREADS
    found = scan(&s, half, &rule, step, lagged_copy, use_fft, instance_threshold, &out);
    Py_END_ALLOW_THREADS
    release(a, 7);
    if (found == -1)
        return PyErr_NoMemory();
    if (found == -2)
        return shape_error("more batches than the outputs hold");
    return PyLong_FromSsize_t(found);
}

static PyObject *py_cross(PyObject *args, int use_fft) {
    Array a[2] = {0};
    Py_ssize_t rsw, half;
    if (!PyArg_ParseTuple(args, "O&nnO&", f64_in, &a[0], &rsw, &half, f64_out, &a[1]))
        return NULL;
    Series s = {F64(a[0]), NULL, NULL, dim(&a[0], 0), dim(&a[0], 1)};
    if (a[0].view.ndim != 2 || half < 1 || rsw - half < 0 || rsw + half > s.n
        || items(&a[1]) < half) {
        release(a, 2);
        return shape_error("need x[rsw - half:rsw + half] and half outputs");
    }
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    if (use_fft) {
        CrossFft fft;
        failed = cross_fft_init(&fft, half) < 0;
        if (!failed)
            cross_fft(&fft, &s, rsw, half, F64(a[1]));
        cross_fft_free(&fft);
    } else {
        cross_direct(&s, rsw, half, F64(a[1]));
    }
    Py_END_ALLOW_THREADS
    release(a, 2);
    if (failed)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *py_cross_direct(PyObject *self, PyObject *args) { return py_cross(args, 0); }

static PyObject *py_cross_fft(PyObject *self, PyObject *args) { return py_cross(args, 1); }

static PyObject *py_delta_from_cross(PyObject *self, PyObject *args) {
    Array a[4] = {0};
    Py_ssize_t rsw, half;
    if (!PyArg_ParseTuple(args, "O&O&O&nnO&", f64_in, &a[0], f64_in, &a[1], f64_in, &a[2], &rsw,
                          &half, f64_out, &a[3]))
        return NULL;
    Series s = {NULL, F64(a[1]), F64(a[2]), dim(&a[1], 0) - 1, dim(&a[1], 1)};
    if (a[1].view.ndim != 2 || a[2].view.ndim != 2 || dim(&a[2], 0) != s.n + 1
        || dim(&a[2], 1) != s.dims || half < 1 || rsw - half < 0 || rsw + half > s.n
        || items(&a[0]) < half || items(&a[3]) < half) {
        release(a, 4);
        return shape_error("need prefix sums over x[rsw - half:rsw + half] and half values");
    }
    Py_BEGIN_ALLOW_THREADS
    delta_from_cross(&s, F64(a[0]), rsw, half, F64(a[3]));
    Py_END_ALLOW_THREADS
    release(a, 4);
    Py_RETURN_NONE;
}

static PyObject *py_pair_delta(PyObject *self, PyObject *args) {
    Array a[2] = {0};
    Py_ssize_t first, second, length;
    double cross;
    if (!PyArg_ParseTuple(args, "O&O&nnnd", f64_in, &a[0], f64_in, &a[1], &first, &second,
                          &length, &cross))
        return NULL;
    Series s = {NULL, F64(a[0]), F64(a[1]), dim(&a[0], 0) - 1, dim(&a[0], 1)};
    if (a[0].view.ndim != 2 || a[1].view.ndim != 2 || dim(&a[1], 0) != s.n + 1
        || dim(&a[1], 1) != s.dims || length < 1 || first < 0 || second < 0
        || first + length > s.n || second + length > s.n) {
        release(a, 2);
        return shape_error("blocks outside the prefix sums");
    }
    double value = pair_delta(&s, first, second, length, cross);
    release(a, 2);
    return PyFloat_FromDouble(value);
}

static PyObject *py_base_period(PyObject *self, PyObject *args) {
    Array a[1] = {0};
    Rule rule;
    if (!PyArg_ParseTuple(args, "O&ndddd", f64_in, &a[0], &rule.min_period, &rule.near_zero,
                          &rule.rise, &rule.multiple_tolerance, &rule.refine_tolerance))
        return NULL;
    Py_ssize_t k = base_period(F64(a[0]), items(&a[0]), &rule);
    release(a, 1);
    return PyLong_FromSsize_t(k);
}

static PyObject *py_verified_count(PyObject *self, PyObject *args) {
    Array a[3] = {0};
    Py_ssize_t first, k, count;
    double threshold;
    if (!PyArg_ParseTuple(args, "O&O&O&nnnd", f64_in, &a[0], f64_in, &a[1], f64_in, &a[2], &first,
                          &k, &count, &threshold))
        return NULL;
    Series s;
    const char *problem = series_from(&s, &a[0], &a[1], &a[2]);
    if (problem == NULL && count > 0 && (k < 1 || first - k < 0 || first + count * k > s.n))
        problem = "instances outside the series";
    if (problem != NULL) {
        release(a, 3);
        return shape_error(problem);
    }
    Py_ssize_t verified;
    Py_BEGIN_ALLOW_THREADS
    verified = verified_count(&s, first, k, count, threshold);
    Py_END_ALLOW_THREADS
    release(a, 3);
    return PyLong_FromSsize_t(verified);
}

/* ---- FFT entry points (tests check them against numpy.fft) -------------------------------- */

static int power_of_two(Py_ssize_t size) { return size >= 2 && (size & (size - 1)) == 0; }

/* rfft(x, out): out (N + 2 float64: N / 2 + 1 interleaved complex) = numpy.fft.rfft(x),
 * N = len(x) */
static PyObject *py_rfft(PyObject *self, PyObject *args) {
    Array a[2] = {0};
    if (!PyArg_ParseTuple(args, "O&O&", f64_in, &a[0], f64_out, &a[1]))
        return NULL;
    Py_ssize_t size = items(&a[0]);
    if (!power_of_two(size) || items(&a[1]) != size + 2) {
        release(a, 2);
        return shape_error("rfft: a power-of-two length N >= 2 and N + 2 outputs");
    }
    FftPlan plan;
    double *spectrum = malloc(sizeof(double) * (size_t)(size + 2));
    int failed = spectrum == NULL || plan_init(&plan, size) < 0;
    if (!failed) {
        double *out = F64(a[1]), *spectrum_im = spectrum + size / 2 + 1;
        Py_BEGIN_ALLOW_THREADS
        load_real(&plan, F64(a[0]), 1, size);
        rfft(&plan, spectrum, spectrum_im);
        for (Py_ssize_t k = 0; k <= size / 2; k++) {
            out[2 * k] = spectrum[k];
            out[2 * k + 1] = spectrum_im[k];
        }
        Py_END_ALLOW_THREADS
        plan_free(&plan);
    }
    free(spectrum);
    release(a, 2);
    if (failed)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* irfft(spectrum, out): out (N float64) = numpy.fft.irfft(spectrum, N), spectrum N + 2 float64 */
static PyObject *py_irfft(PyObject *self, PyObject *args) {
    Array a[2] = {0};
    if (!PyArg_ParseTuple(args, "O&O&", f64_in, &a[0], f64_out, &a[1]))
        return NULL;
    Py_ssize_t size = items(&a[1]);
    if (!power_of_two(size) || items(&a[0]) != size + 2) {
        release(a, 2);
        return shape_error("irfft: N + 2 inputs and a power-of-two length N >= 2");
    }
    FftPlan plan;
    double *spectrum = malloc(sizeof(double) * (size_t)(size + 2));
    int failed = spectrum == NULL || plan_init(&plan, size) < 0;
    if (!failed) {
        const double *in = F64(a[0]);
        double *out = F64(a[1]), *spectrum_im = spectrum + size / 2 + 1;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k <= size / 2; k++) {
            spectrum[k] = in[2 * k];
            spectrum_im[k] = in[2 * k + 1];
        }
        irfft(&plan, spectrum, spectrum_im, out, size);
        Py_END_ALLOW_THREADS
        plan_free(&plan);
    }
    free(spectrum);
    release(a, 2);
    if (failed)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* ---- phase alignment (align.py) ---------------------------------------------------------- */

typedef struct {
    const int64_t *covered; /* covered[i]: samples before i that some batch verified (n + 1) */
    const int64_t *bad;     /* bad[i]: invalid samples before i (n + 1) */
    Series clean;           /* the series with gaps at zero, and its prefix sums */
    double threshold;
} Region;

/* align._free: no batch verified any sample of [a, b) */
static int is_free(const Region *r, Py_ssize_t a, Py_ssize_t b) {
    const Py_ssize_t n = r->clean.n;
    return a >= b || r->covered[b < n ? b : n] == r->covered[a > 0 ? a : 0];
}

/* align._periodic: the k samples from a are valid and resemble the k valid samples before */
static int is_periodic(const Region *r, Py_ssize_t a, Py_ssize_t k) {
    return a - k >= 0 && a + k <= r->clean.n && r->bad[a + k] == r->bad[a - k]
           && verified_count(&r->clean, a, k, 1, r->threshold) == 1;
}

/* align._extend: count instances of k from *lo extended on both sides into unverified samples
 * while each passes the instance test; returns the new count and moves *lo */
static Py_ssize_t extend(const Region *r, Py_ssize_t *lo, Py_ssize_t count, Py_ssize_t k,
                         Py_ssize_t first, Py_ssize_t end) {
    while (is_free(r, *lo - k, first) && is_periodic(r, *lo, k)) {
        *lo -= k;
        count++;
    }
    for (;;) {
        Py_ssize_t next = *lo + count * k;
        if (!(is_free(r, next > end ? next : end, next + k) && is_periodic(r, next, k)))
            break;
        count++;
    }
    return count;
}

static const char *region_from(Region *r, const Array *covered, const Array *bad,
                               const Array *clean, const Array *cs1, const Array *cs2,
                               double threshold) {
    r->covered = I64(*covered);
    r->bad = I64(*bad);
    r->threshold = threshold;
    const char *problem = series_from(&r->clean, clean, cs1, cs2);
    if (problem == NULL && (items(covered) != r->clean.n + 1 || items(bad) != r->clean.n + 1))
        problem = "covered and bad must have n + 1 entries";
    return problem;
}

static PyObject *py_extend(PyObject *self, PyObject *args) {
    Array a[5] = {0};
    Py_ssize_t lo, count, k, first, end;
    double threshold;
    if (!PyArg_ParseTuple(args, "nnnnnO&O&O&O&O&d", &lo, &count, &k, &first, &end, i64_in, &a[0],
                          i64_in, &a[1], f64_in, &a[2], f64_in, &a[3], f64_in, &a[4], &threshold))
        return NULL;
    Region r;
    const char *problem = region_from(&r, &a[0], &a[1], &a[2], &a[3], &a[4], threshold);
    if (problem == NULL && k < 1)
        problem = "k must be positive";
    if (problem != NULL) {
        release(a, 5);
        return shape_error(problem);
    }
    Py_BEGIN_ALLOW_THREADS
    count = extend(&r, &lo, count, k, first, end);
    Py_END_ALLOW_THREADS
    release(a, 5);
    return Py_BuildValue("nn", lo, count);
}

typedef struct {
    Py_ssize_t lo, hi;
} Interval;

static int by_start(const void *a, const void *b) {
    Py_ssize_t x = ((const Interval *)a)->lo, y = ((const Interval *)b)->lo;
    return (x > y) - (x < y);
}

/* align._phase_cover: samples covered by the union of the members' instances cut at phase and
 * extended; -1 when out of memory */
static Py_ssize_t phase_cover(const Region *r, Py_ssize_t phase, const int64_t *members,
                              Py_ssize_t n_members, Py_ssize_t reference_length,
                              const int64_t *rotation, const int64_t *length,
                              const int64_t *first, const int64_t *end) {
    Interval *spans = malloc(sizeof(Interval) * (size_t)(n_members > 0 ? n_members : 1));
    if (spans == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < n_members; i++) {
        Py_ssize_t b = (Py_ssize_t)members[i], k = (Py_ssize_t)length[b];
        Py_ssize_t f = (Py_ssize_t)first[b], e = (Py_ssize_t)end[b];
        double position = (double)((rotation[b] + phase) * k) / (double)reference_length;
        Py_ssize_t lo = f + floor_mod((Py_ssize_t)nearbyint(position), k);
        Py_ssize_t count = extend(r, &lo, floor_div(e - lo, k), k, f, e);
        spans[i].lo = lo;
        spans[i].hi = lo + count * k;
    }
    qsort(spans, (size_t)n_members, sizeof(Interval), by_start); /* the union does not
                                                                     depend on ties' order */
    Py_ssize_t total = 0, reach = -1;
    for (Py_ssize_t i = 0; i < n_members; i++) {
        Py_ssize_t lo = spans[i].lo > reach ? spans[i].lo : reach, hi = spans[i].hi;
        if (hi > lo) {
            total += hi - lo;
            reach = hi;
        }
    }
    free(spans);
    return total;
}

static PyObject *py_phase_cover(PyObject *self, PyObject *args) {
    Array a[11] = {0};
    Py_ssize_t phase, reference_length;
    double threshold;
    if (!PyArg_ParseTuple(args, "nO&nO&O&O&O&O&O&O&O&O&d", &phase, i64_in, &a[0],
                          &reference_length, i64_in, &a[1], i64_in, &a[2], i64_in, &a[3], i64_in,
                          &a[4], i64_in, &a[5], i64_in, &a[6], f64_in, &a[7], f64_in, &a[8],
                          f64_in, &a[9], &threshold))
        return NULL;
    Region r;
    const char *problem = region_from(&r, &a[5], &a[6], &a[7], &a[8], &a[9], threshold);
    Py_ssize_t batches = items(&a[2]), n_members = items(&a[0]);
    if (problem == NULL
        && (items(&a[1]) != batches || items(&a[3]) != batches || items(&a[4]) != batches))
        problem = "rotation, length, first and end must have one entry per batch";
    for (Py_ssize_t i = 0; problem == NULL && i < n_members; i++)
        if (I64(a[0])[i] < 0 || I64(a[0])[i] >= batches || I64(a[2])[I64(a[0])[i]] < 1)
            problem = "a member is not a batch of positive length";
    if (problem == NULL && reference_length < 1)
        problem = "the reference length must be positive";
    if (problem != NULL) {
        release(a, 11);
        return shape_error(problem);
    }
    Py_ssize_t total;
    Py_BEGIN_ALLOW_THREADS
    total = phase_cover(&r, phase, I64(a[0]), n_members, reference_length, I64(a[1]), I64(a[2]),
                        I64(a[3]), I64(a[4]));
    Py_END_ALLOW_THREADS
    release(a, 11);
    if (total < 0)
        return PyErr_NoMemory();
    return PyLong_FromSsize_t(total);
}

/* align._cycles: per batch, the mean of its verified instances (added in order, then divided
 * by their number) resampled linearly to points (circular); out is batches x points x dims */
static int cycles(const double *x, Py_ssize_t dims, const int64_t *first, const int64_t *length,
                  const int64_t *end, Py_ssize_t batches, Py_ssize_t points, double *out) {
    Py_ssize_t longest = 1;
    for (Py_ssize_t b = 0; b < batches; b++)
        if (length[b] > longest)
            longest = (Py_ssize_t)length[b];
    double *cycle = malloc(sizeof(double) * (size_t)((longest + 1) * dims));
    if (cycle == NULL)
        return -1;
    for (Py_ssize_t b = 0; b < batches; b++) {
        Py_ssize_t k = (Py_ssize_t)length[b], f = (Py_ssize_t)first[b];
        Py_ssize_t count = floor_div((Py_ssize_t)(end[b] - first[b]), k);
        for (Py_ssize_t t = 0; t < k; t++)
            for (Py_ssize_t d = 0; d < dims; d++) {
                double total = x[(f + t) * dims + d];
                for (Py_ssize_t c = 1; c < count; c++)
                    total += x[(f + c * k + t) * dims + d];
                cycle[t * dims + d] = total / (double)count;
            }
        for (Py_ssize_t d = 0; d < dims; d++) /* the first point again: circular */
            cycle[k * dims + d] = cycle[d];
        for (Py_ssize_t t = 0; t < points; t++) {
            double position = (double)(t * k) / (double)points;
            Py_ssize_t base = (Py_ssize_t)floor(position);
            double frac = position - (double)base;
            for (Py_ssize_t d = 0; d < dims; d++)
                out[(b * points + t) * dims + d] = cycle[base * dims + d] * (1 - frac)
                                                   + cycle[(base + 1) * dims + d] * frac;
        }
    }
    free(cycle);
    return 0;
}

static PyObject *py_cycles(PyObject *self, PyObject *args) {
    Array a[5] = {0};
    if (!PyArg_ParseTuple(args, "O&O&O&O&O&", f64_in, &a[0], i64_in, &a[1], i64_in, &a[2], i64_in,
                          &a[3], f64_out, &a[4]))
        return NULL;
    Py_ssize_t n = dim(&a[0], 0), dims = dim(&a[0], 1), batches = items(&a[1]);
    Py_ssize_t points = dim(&a[4], 1);
    const char *problem = NULL;
    if (a[0].view.ndim != 2 || a[4].view.ndim != 3 || dim(&a[4], 0) != batches
        || dim(&a[4], 2) != dims || items(&a[2]) != batches || items(&a[3]) != batches)
        problem = "x n x d, first, length, end per batch and an output batches x points x d";
    for (Py_ssize_t b = 0; problem == NULL && b < batches; b++) {
        int64_t f = I64(a[1])[b], k = I64(a[2])[b], e = I64(a[3])[b];
        if (k < 1 || f < 0 || e - f < k || e > n)
            problem = "every batch needs one instance or more inside x";
    }
    if (problem != NULL) {
        release(a, 5);
        return shape_error(problem);
    }
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = cycles(F64(a[0]), dims, I64(a[1]), I64(a[2]), I64(a[3]), batches, points, F64(a[4]));
    Py_END_ALLOW_THREADS
    release(a, 5);
    if (failed)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* ---- clustering (cluster.py) ------------------------------------------------------------- */

/* cluster._interp_rows: np.interp(target, grids[grid_of[i]][:lengths[i]], X[i, :lengths[i], d])
 * for every series and dimension, with NumPy's arithmetic and special cases (target increasing) */
static void interp_rows(const double *X, Py_ssize_t n, Py_ssize_t width, Py_ssize_t dims,
                        const int64_t *lengths, const int64_t *grid_of, const double *grids,
                        Py_ssize_t grid_width, const double *target, Py_ssize_t points,
                        double *out) {
    for (Py_ssize_t i = 0; i < n; i++) {
        const Py_ssize_t m = (Py_ssize_t)lengths[i];
        const double *xp = grids + grid_of[i] * grid_width;
        for (Py_ssize_t d = 0; d < dims; d++) {
            const double *fp = X + i * width * dims + d; /* fp[j * dims] */
            Py_ssize_t j = 0;
            for (Py_ssize_t t = 0; t < points; t++) {
                double x = target[t], value;
                if (m == 1 || x < xp[0]) {
                    value = fp[0];
                } else if (x > xp[m - 1]) {
                    value = fp[(m - 1) * dims];
                } else {
                    while (j + 1 < m && xp[j + 1] <= x)
                        j++;
                    if (j == m - 1 || xp[j] == x) {
                        value = fp[j * dims];
                    } else {
                        double left = fp[j * dims], right = fp[(j + 1) * dims];
                        double slope = (right - left) / (xp[j + 1] - xp[j]);
                        value = slope * (x - xp[j]) + left;
                        if (isnan(value)) { /* NumPy then tries from the right end */
                            value = slope * (x - xp[j + 1]) + right;
                            if (isnan(value) && left == right)
                                value = left;
                        }
                    }
                }
                out[(i * points + t) * dims + d] = value;
            }
        }
    }
}

static PyObject *py_interp_rows(PyObject *self, PyObject *args) {
    Array a[6] = {0};
    if (!PyArg_ParseTuple(args, "O&O&O&O&O&O&", f64_in, &a[0], i64_in, &a[1], i64_in, &a[2],
                          f64_in, &a[3], f64_in, &a[4], f64_out, &a[5]))
        return NULL;
    Py_ssize_t n = dim(&a[0], 0), width = dim(&a[0], 1), dims = dim(&a[0], 2);
    Py_ssize_t grid_count = dim(&a[3], 0), grid_width = dim(&a[3], 1), points = items(&a[4]);
    const char *problem = NULL;
    if (a[0].view.ndim != 3 || a[3].view.ndim != 2 || items(&a[1]) != n || items(&a[2]) != n
        || a[5].view.ndim != 3 || dim(&a[5], 0) != n || dim(&a[5], 1) != points
        || dim(&a[5], 2) != dims)
        problem = "X n x m x d, lengths and grid_of per series, grids 2-D, out n x points x d";
    for (Py_ssize_t i = 0; problem == NULL && i < n; i++) {
        int64_t m = I64(a[1])[i], g = I64(a[2])[i];
        if (m < 1 || m > width || m > grid_width || g < 0 || g >= grid_count)
            problem = "a series' length or grid is out of range";
    }
    if (problem != NULL) {
        release(a, 6);
        return shape_error(problem);
    }
    Py_BEGIN_ALLOW_THREADS
    interp_rows(F64(a[0]), n, width, dims, I64(a[1]), I64(a[2]), F64(a[3]), grid_width, F64(a[4]),
                points, F64(a[5]));
    Py_END_ALLOW_THREADS
    release(a, 6);
    Py_RETURN_NONE;
}

/* ---- graphs (cluster.py): Kruskal's spanning tree and connected components -------------- */

static Py_ssize_t find_root(int64_t *parent, Py_ssize_t v) {
    while (parent[v] != v) {
        parent[v] = parent[parent[v]]; /* path halving */
        v = (Py_ssize_t)parent[v];
    }
    return v;
}

/* edges 0..count-1 between vertices below n: NULL if one is not, else an error message */
static const char *check_edges(Py_ssize_t n, const int64_t *i, const int64_t *j, Py_ssize_t count) {
    for (Py_ssize_t e = 0; e < count; e++)
        if (i[e] < 0 || i[e] >= n || j[e] < 0 || j[e] >= n)
            return "an edge's vertex is out of range";
    return NULL;
}

/* kruskal(n, i, j, order, keep): keep[e] = 1 for the edges e taken in the given order that join
 * two components (the minimum spanning forest when order sorts the weights); returns how many */
static PyObject *py_kruskal(PyObject *self, PyObject *args) {
    Array a[4] = {0};
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "nO&O&O&O&", &n, i64_in, &a[0], i64_in, &a[1], i64_in, &a[2],
                          bool_out, &a[3]))
        return NULL;
    Py_ssize_t edges = items(&a[0]);
    const int64_t *order = I64(a[2]);
    const char *problem = NULL;
    if (n < 0 || items(&a[1]) != edges || items(&a[2]) != edges || items(&a[3]) != edges)
        problem = "i, j, order and keep must have one entry per edge";
    if (problem == NULL)
        problem = check_edges(n, I64(a[0]), I64(a[1]), edges);
    for (Py_ssize_t e = 0; problem == NULL && e < edges; e++)
        if (order[e] < 0 || order[e] >= edges)
            problem = "order must index the edges";
    int64_t *parent = problem == NULL ? malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1)) : NULL;
    if (problem != NULL || parent == NULL) {
        release(a, 4);
        return problem != NULL ? shape_error(problem) : PyErr_NoMemory();
    }
    char *keep = a[3].view.buf;
    Py_ssize_t taken = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t v = 0; v < n; v++)
        parent[v] = v;
    memset(keep, 0, (size_t)edges);
    for (Py_ssize_t e = 0; e < edges; e++) {
        Py_ssize_t edge = (Py_ssize_t)order[e];
        Py_ssize_t r1 = find_root(parent, (Py_ssize_t)I64(a[0])[edge]);
        Py_ssize_t r2 = find_root(parent, (Py_ssize_t)I64(a[1])[edge]);
        if (r1 != r2) {
            parent[r2] = r1;
            keep[edge] = 1;
            taken++;
        }
    }
    Py_END_ALLOW_THREADS
    free(parent);
    release(a, 4);
    return PyLong_FromSsize_t(taken);
}

/* components(n, i, j, labels): connected components of the undirected graph, labelled
 * 0, 1, .. in the order of their lowest vertex; returns their number */
static PyObject *py_components(PyObject *self, PyObject *args) {
    Array a[3] = {0};
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "nO&O&O&", &n, i64_in, &a[0], i64_in, &a[1], i64_out, &a[2]))
        return NULL;
    Py_ssize_t edges = items(&a[0]);
    const char *problem = NULL;
    if (n < 0 || items(&a[1]) != edges || items(&a[2]) != n)
        problem = "i and j per edge, labels per vertex";
    if (problem == NULL)
        problem = check_edges(n, I64(a[0]), I64(a[1]), edges);
    int64_t *parent = problem == NULL ? malloc(sizeof(int64_t) * (size_t)(2 * n + 1)) : NULL;
    if (problem != NULL || parent == NULL) {
        release(a, 3);
        return problem != NULL ? shape_error(problem) : PyErr_NoMemory();
    }
    int64_t *label_of_root = parent + n, *labels = I64(a[2]);
    Py_ssize_t count = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t v = 0; v < n; v++) {
        parent[v] = v;
        label_of_root[v] = -1;
    }
    for (Py_ssize_t e = 0; e < edges; e++) {
        Py_ssize_t r1 = find_root(parent, (Py_ssize_t)I64(a[0])[e]);
        Py_ssize_t r2 = find_root(parent, (Py_ssize_t)I64(a[1])[e]);
        if (r1 != r2)
            parent[r2 > r1 ? r2 : r1] = r2 > r1 ? r1 : r2;
    }
    for (Py_ssize_t v = 0; v < n; v++) {
        Py_ssize_t root = find_root(parent, v);
        if (label_of_root[root] < 0)
            label_of_root[root] = count++;
        labels[v] = label_of_root[root];
    }
    Py_END_ALLOW_THREADS
    free(parent);
    release(a, 3);
    return PyLong_FromSsize_t(count);
}

/* ---- module ------------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"scan", py_scan, METH_VARARGS,
     "scan(x, cs1, cs2, half, min_period, near_zero, rise, multiple_tolerance, refine_tolerance, "
     "aperiodic_step, lagged_copy, use_fft, instance_threshold, starts, lengths, counts, leading)"
     " -> batches found (detect.detect's pass)"},
    {"cross_direct", py_cross_direct, METH_VARARGS, "cross_direct(x, rsw, half, cross)"},
    {"cross_fft", py_cross_fft, METH_VARARGS, "cross_fft(x, rsw, half, cross)"},
    {"delta_from_cross", py_delta_from_cross, METH_VARARGS,
     "delta_from_cross(cross, cs1, cs2, rsw, half, out)"},
    {"pair_delta", py_pair_delta, METH_VARARGS,
     "pair_delta(cs1, cs2, a, b, length, cross) -> float"},
    {"base_period", py_base_period, METH_VARARGS,
     "base_period(delta, min_period, near_zero, rise, multiple_tolerance, refine_tolerance)"
     " -> int"},
    {"verified_count", py_verified_count, METH_VARARGS,
     "verified_count(x, cs1, cs2, first, k, count, threshold) -> int"},
    {"rfft", py_rfft, METH_VARARGS, "rfft(x, out): numpy.fft.rfft of a power-of-two length, "
                                     "interleaved (N + 2 float64)"},
    {"irfft", py_irfft, METH_VARARGS, "irfft(spectrum, out): numpy.fft.irfft to len(out) points"},
    {"extend", py_extend, METH_VARARGS,
     "extend(lo, count, k, first, end, covered, bad, clean, cs1, cs2, threshold) -> (lo, count)"},
    {"phase_cover", py_phase_cover, METH_VARARGS,
     "phase_cover(phase, members, reference_length, rotation, length, first, end, covered, bad, "
     "clean, cs1, cs2, threshold) -> int"},
    {"cycles", py_cycles, METH_VARARGS, "cycles(x, first, length, end, out)"},
    {"interp_rows", py_interp_rows, METH_VARARGS,
     "interp_rows(X, lengths, grid_of, grids, target, out)"},
    {"kruskal", py_kruskal, METH_VARARGS,
     "kruskal(n, i, j, order, keep) -> edges kept (a spanning forest in the given order)"},
    {"components", py_components, METH_VARARGS,
     "components(n, i, j, labels) -> count (labels in the order of the lowest vertex)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels",
    "Compiled kernels of phasekit.periodicity (Phase-TA, Phase-TA); see detect.py, align.py and "
    "cluster.py for their semantics.",
    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
