/* phasekit.io._paraver: the compiled parts of the Paraver reader (phasekit.io.paraver): the
 * line parser over blocks of raw bytes, message attribution, and the columns of the selected
 * rows. They replace numba kernels (importing numba and loading its cached kernels
 * cost about 0.5 s of every ``phasekit structure``), operation for operation: the same values,
 * the same errors, the same arithmetic (int64 wrapping where numba's int64 wrapped, computed
 * here in uint64; no -ffast-math, no fused multiply-add).
 *
 * The parser reads a line in one of two ways. The fast way covers what Paraver writers write:
 * ``1:``, ``2:`` or ``3:`` followed by unsigned integers of at most 16 digits separated by ``:``
 * and ending with ``\n``; it reads 8 bytes at a time (SWAR: the digits of a field found and
 * converted with a few integer operations, no branch per digit). Every other line (comments,
 * communicators, empty lines, ``\r\n``, signs, longer numbers, the last line of a file without
 * a newline, anything malformed) is read by the exact byte-by-byte parser, which decides what
 * is accepted and which error a bad line gets, so both ways accept the same lines with the
 * same values and reject the same lines with the same error.
 *
 * Interface: plain CPython with the buffer protocol (no numpy headers). Arrays are
 * C-contiguous; outputs are allocated by the caller; every loop runs without the GIL.
 */
#include "../_buffers.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MPI_TYPE_MIN 50000001LL
#define MPI_TYPE_MAX 50099999LL
#define SEND_SIZE_TYPE 50100001LL
#define RECV_SIZE_TYPE 50100002LL
#define CALLER_BASE 70000000LL
#define CALLER_LINE_BASE 80000000LL
#define COUNTER_MIN 42000000LL
#define COUNTER_MAX 49999999LL
/* Most type:value pairs on one event record (our bound: the pairs of a line are kept). */
#define MAX_PAIRS (1 << 14)
/* Bytes after the data of a block that the fast parser may read (never used as data). */
#define PAD 64
/* Bits of an MPI event value kept in a call key (the type's offset above them). */
#define KEY_BITS 44

/* kernel status and error codes */
enum { DONE = 0, GROW_ROWS = 1, GROW_COMM = 2, GROW_COUNTERS = 3, GROW_PATHS = 4,
       GROW_CALLS = 5, ERROR = -1 };
/* counts[] slots shared with the caller */
enum { N_ROWS, N_COMM, N_CTR, N_PATHS, N_CALLS, LINE, POS, ERR, UNTERMINATED, ORPHAN_EXITS,
       DEEP_LEVELS, EXTRA_ENTRIES, N_COUNTS };
/* kinds of line (what the parsers return) */
enum { SKIP, STATE, EVENT, COMM };

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LITTLE_ENDIAN_WORDS 1 /* the fast way reads words little-endian */
#else
#define LITTLE_ENDIAN_WORDS 0
#endif

#define ZEROS 0x3030303030303030ULL
#define ABOVE9 0x7676767676767676ULL
#define HIGH 0x8080808080808080ULL
#define MASK16 0x00FF00FF00FF00FFULL
#define MASK32 0x0000FFFF0000FFFFULL
static const int64_t POW10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                 100000000};

/* ---- arrays through the buffer protocol -------------------------------------------------- */

typedef struct {
    const char *formats;
    Py_ssize_t itemsize;
    int ndim;
    int writable;
} Spec;

#define U8 {"B", 1, 1, 0}
#define I32 {"i", 4, 1, 0}
#define I32W {"i", 4, 1, 1}
#define I64 {"lq", 8, 1, 0}
#define I64W {"lq", 8, 1, 1}
#define I64W2 {"lq", 8, 2, 1}
#define I64_2 {"lq", 8, 2, 0}
#define F64W {"d", 8, 1, 1}
#define F64W2 {"d", 8, 2, 1}
#define DEST {"ilq", 0, 1, 0}
#define BOOLW {"?", 1, 1, 1}

/* take args[k] (k in ``at``) as the arrays of ``specs``; on failure, release those taken */
static int take_all(PyObject *const *args, const int *at, const Spec *specs, Array *bufs,
                    int n) {
    for (int i = 0; i < n; i++) {
        if (!take_array(args[at[i]], &bufs[i], specs[i].formats, specs[i].itemsize,
                        specs[i].ndim, specs[i].writable)) {
            release(bufs, i);
            return 0;
        }
    }
    return 1;
}

static int check_nargs(Py_ssize_t nargs, Py_ssize_t want, const char *name) {
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s takes %zd arguments (%zd given)", name, want, nargs);
        return 0;
    }
    return 1;
}

static int as_int64(PyObject *obj, int64_t *out) {
    long long v = PyLong_AsLongLong(obj);
    if (v == -1 && PyErr_Occurred())
        return 0;
    *out = (int64_t)v;
    return 1;
}

#define N(b) ((int64_t)((b).view.len / (b).view.itemsize))
#define SHAPE(b, axis) ((int64_t)((axis) < (b).view.ndim ? (b).view.shape[axis] : 1))
#define P64(b) ((int64_t *)(b).view.buf)
#define P32(b) ((int32_t *)(b).view.buf)
#define PF(b) ((double *)(b).view.buf)

/* a place in ``dest`` (int32 or int64) */
static inline int64_t dest_at(const void *dest, int wide, int64_t i) {
    return wide ? ((const int64_t *)dest)[i] : (int64_t)((const int32_t *)dest)[i];
}

/* ---- the parser -------------------------------------------------------------------------- */

static inline uint64_t load8(const uint8_t *buf, int64_t idx) {
    uint64_t w;
    memcpy(&w, buf + idx, 8);
    return w;
}

/* The number written by the first ``n`` (1..8) digit bytes of ``t`` (``t`` holds the bytes
 * minus '0', the first in the low byte). */
static inline int64_t digits(uint64_t t, int64_t n) {
    t = t << (uint64_t)(64 - 8 * n); /* the digits at the top, zeros (leading '0's) below */
    t = (t * 10ULL + (t >> 8)) & MASK16;
    t = ((t * (1ULL + (100ULL << 16))) >> 16) & MASK32;
    return (int64_t)((t * (1ULL + (10000ULL << 32))) >> 32);
}

/* Parse an integer at ``p``: its value, the position of the first byte after it, and whether
 * it is one (no digits, more than 20, or (unsigned: ids and times) beyond 2**63 - 1 are not;
 * signed values beyond it wrap around: Paraver values are unsigned 64-bit). */
static inline int parse_int(const uint8_t *buf, int64_t p, int64_t end, int is_signed,
                            int64_t *value, int64_t *next) {
    int neg = 0;
    if (is_signed && p < end && buf[p] == 45) { /* '-' */
        neg = 1;
        p++;
    }
    uint64_t v = 0;
    int64_t start = p;
    while (p < end) {
        int64_t d = (int64_t)buf[p] - 48;
        if (d < 0 || d > 9)
            break;
        v = v * 10ULL + (uint64_t)d;
        p++;
    }
    *next = p;
    if (p == start || p - start > 20 || (!is_signed && (p - start > 19 || (int64_t)v < 0))) {
        *value = 0; /* ids and times must fit in int64 */
        return 0;
    }
    *value = neg ? (int64_t)(0ULL - v) : (int64_t)v;
    return 1;
}

/* Parse ``n`` colon-separated integers into ``out``; the position after the last one, or -1. */
static int64_t parse_fields(const uint8_t *buf, int64_t p, int64_t end, int64_t *out, int n) {
    for (int i = 0; i < n; i++) {
        int64_t v, q;
        if (!parse_int(buf, p, end, 0, &v, &q))
            return -1;
        out[i] = v;
        if (i < n - 1) {
            if (q >= end || buf[q] != 58)
                return -1;
            p = q + 1;
        } else {
            p = q;
        }
    }
    return p;
}

/* The start of the next line when ``q`` ends a line ('\n', '\r\n' or the end), else -1. */
static inline int64_t line_end(const uint8_t *buf, int64_t q, int64_t end) {
    if (q >= end)
        return end;
    uint8_t c = buf[q];
    if (c == 10)
        return q + 1;
    if (c == 13) {
        if (q + 1 >= end)
            return end;
        if (buf[q + 1] == 10)
            return q + 2;
    }
    return -1;
}

static inline int64_t thread_id(int64_t appl, int64_t task, int64_t thread,
                                const int64_t *appl_first_task, int64_t n_appl,
                                const int64_t *task_first_thread) {
    if (appl < 1 || appl > n_appl)
        return -1;
    int64_t t = appl_first_task[appl - 1] + task - 1;
    if (task < 1 || t >= appl_first_task[appl])
        return -1;
    int64_t th = task_first_thread[t] + thread - 1;
    if (thread < 1 || th >= task_first_thread[t + 1])
        return -1;
    return th;
}

/* Read the line at ``pos`` byte by byte into ``tok`` (the fields after ``X:``; an event
 * record's pairs follow its 5 fields). Returns the kind and sets the start of the next line,
 * the number of fields and the error code (0: none). */
static int exact_line(const uint8_t *buf, int64_t pos, int64_t end, int64_t *tok, int64_t cap,
                      const int64_t *appl_first_task, int64_t n_appl,
                      const int64_t *task_first_thread, int64_t *nxt, int64_t *nfields,
                      int *err) {
    uint8_t c = buf[pos];
    *nfields = 0;
    *err = 0;
    if (c == 10 || c == 13) { /* an empty line */
        *nxt = line_end(buf, pos, end);
        *err = *nxt < 0 ? 1 : 0;
        return SKIP;
    }
    if (c == 35 || (c == 99 && pos + 1 < end && buf[pos + 1] == 58)) { /* '#', 'c:' */
        while (pos < end && buf[pos] != 10)
            pos++;
        *nxt = pos + 1;
        return SKIP;
    }
    if (pos + 1 >= end || buf[pos + 1] != 58 || c < 49 || c > 51) {
        *nxt = -1;
        *err = 1;
        return SKIP;
    }
    int64_t p = pos + 2;
    if (c == 49 || c == 51) { /* state, communication */
        int n = c == 49 ? 7 : 14;
        int64_t q = parse_fields(buf, p, end, tok, n);
        *nxt = q >= 0 ? line_end(buf, q, end) : -1;
        *nfields = n;
        *err = *nxt < 0 ? (c == 49 ? 2 : 4) : 0;
        return c == 49 ? STATE : COMM;
    }
    *nxt = -1;
    int64_t q = parse_fields(buf, p, end, tok, 5); /* event record */
    if (q < 0 || q >= end || buf[q] != 58) {
        *err = 3;
        return EVENT;
    }
    if (thread_id(tok[1], tok[2], tok[3], appl_first_task, n_appl, task_first_thread) < 0) {
        *err = 5;
        return EVENT;
    }
    p = q + 1;
    int64_t n = 5;
    for (;;) {
        if (n >= cap) {
            *err = 6;
            return EVENT;
        }
        int64_t ty, va;
        if (!parse_int(buf, p, end, 0, &ty, &q) || q >= end || buf[q] != 58) {
            *err = 3;
            return EVENT;
        }
        if (!parse_int(buf, q + 1, end, 1, &va, &q)) {
            *err = 3;
            return EVENT;
        }
        tok[n] = ty;
        tok[n + 1] = va;
        n += 2;
        int64_t next = line_end(buf, q, end);
        if (next >= 0) {
            *nxt = next;
            *nfields = n;
            return EVENT;
        }
        if (buf[q] != 58) {
            *err = 3;
            return EVENT;
        }
        p = q + 1;
    }
}

static inline int64_t hash_key(int64_t h) {
    h = (int64_t)((uint64_t)(h ^ (h >> 31)) * (uint64_t)(-7046029254386353131LL));
    return h ^ (h >> 29);
}

/* FNV-1a-like hash of the first ``depth`` functions and lines of a levels row (before the
 * final mix). */
static inline int64_t path_hash_raw(const int64_t *levels, int64_t L, int64_t depth) {
    int64_t h = -3750763034362895579LL ^ depth;
    for (int64_t i = 0; i < depth; i++) {
        h = (int64_t)((uint64_t)(h ^ levels[i]) * 1099511628211ULL);
        h = (int64_t)((uint64_t)(h ^ levels[L + i]) * 1099511628211ULL);
    }
    return h;
}

typedef struct {
    const uint8_t *buf;
    int64_t buf_size, start, end, sel;
    const int64_t *appl_first_task, *task_first_thread;
    int64_t n_appl;
    int64_t *th_int; /* [thread, 3] */
    double *th_acc;  /* [thread, k_cap] */
    int64_t acc_stride;
    int32_t *r_tid;
    int64_t *r_entry, *r_exit;
    int32_t *r_call, *r_path;
    int64_t *r_burst;
    double *o_bytes;
    int64_t rows_cap;
    double *o_ctr; /* [counter, row] */
    int64_t ctr_stride;
    int64_t *c_int; /* [end, 3] */
    int64_t c_cap, c_stride;
    int64_t *ctr_types;
    int64_t ctr_cap;
    int64_t *p_slot;
    int64_t p_slot_size;
    int64_t *p_levels; /* [path, 2 L + 1] */
    int64_t p_cap, p_stride;
    int64_t *k_slot;
    int64_t k_slot_size;
    int64_t *k_keys;
    int64_t k_cap;
    int64_t *counts, *tok;
    int64_t tok_cap;
    int64_t *ck, *cv, *levels;
    int64_t levels_size;
} Scan;

/* Parse the lines of ``buf[start:end]`` (``buf`` may be longer: the fast way reads up to 16
 * bytes past a line's end, and is used only where that stays inside ``buf``); see
 * paraver._Buffers for the arrays. Stops at a line start with a GROW_* status when an output is
 * full (nothing of the line applied), or ERROR (the line in counts[LINE], its start in
 * counts[POS], the error in counts[ERR]). */
static int64_t scan(const Scan *s) {
    const uint8_t *buf = s->buf;
    const int64_t start = s->start, end = s->end, sel = s->sel, n_appl = s->n_appl;
    const int64_t *appl_first_task = s->appl_first_task;
    const int64_t *task_first_thread = s->task_first_thread;
    int64_t *th_int = s->th_int, *counts = s->counts, *tok = s->tok, *levels = s->levels;
    double *th_acc = s->th_acc;
    const int64_t A = s->acc_stride, R = s->ctr_stride, C = s->c_stride, P = s->p_stride;
    const int64_t L = (s->levels_size - 1) / 2; /* levels: L functions, L lines, the depth */
    int64_t limit = LITTLE_ENDIAN_WORDS ? (end < s->buf_size - 16 ? end : s->buf_size - 16)
                                        : start;
    int64_t fast_end = limit; /* lines starting before it end with a '\n' before ``limit`` */
    while (fast_end > start && buf[fast_end - 1] != 10)
        fast_end--;
    const int64_t cap = s->tok_cap;
    int64_t pos = start;
    int64_t line = counts[LINE];
    while (pos < end) {
        line++;
        uint8_t c = buf[pos];
        int kind = SKIP;
        int64_t nxt = -1;
        int64_t n = 0;
        if (pos < fast_end && 49 <= c && c <= 51 && buf[pos + 1] == 58) {
            /* the fast way: 8 bytes at a time */
            int64_t p = pos + 2;
            for (;;) {
                uint64_t t = load8(buf, p) ^ ZEROS;
                uint64_t m = ((t + ABOVE9) | t) & HIGH; /* high bit of the non-digit bytes */
                int64_t k, v;
                if (m != 0) {
                    k = (int64_t)__builtin_ctzll(m) >> 3;
                    if (k == 1) /* (the most common field: ids, small values) */
                        v = (int64_t)(t & 15ULL);
                    else if (k == 0)
                        break;
                    else
                        v = digits(t, k);
                } else {
                    uint64_t t2 = load8(buf, p + 8) ^ ZEROS;
                    uint64_t m2 = ((t2 + ABOVE9) | t2) & HIGH;
                    if (m2 == 0)
                        break; /* more than 16 digits */
                    int64_t k2 = (int64_t)__builtin_ctzll(m2) >> 3;
                    v = digits(t, 8);
                    if (k2)
                        v = v * POW10[k2] + digits(t2, k2);
                    k = 8 + k2;
                }
                if (n >= cap)
                    break;
                tok[n] = v;
                n++;
                uint8_t sep = buf[p + k];
                p += k + 1;
                if (sep == 58) /* ':' */
                    continue;
                if (sep == 10)
                    nxt = p;
                break;
            }
            if (nxt >= 0) {
                if (c == 50) {
                    if (n >= 7 && (n - 5) % 2 == 0)
                        kind = EVENT;
                    else
                        nxt = -1;
                } else if (n == (c == 49 ? 7 : 14)) {
                    kind = c == 49 ? STATE : COMM;
                } else {
                    nxt = -1;
                }
            }
        }
        if (nxt < 0) { /* the exact way */
            int err;
            kind = exact_line(buf, pos, end, tok, cap, appl_first_task, n_appl,
                              task_first_thread, &nxt, &n, &err);
            if (err) {
                counts[LINE] = line;
                counts[POS] = pos;
                counts[ERR] = err;
                return ERROR;
            }
            if (kind == SKIP) {
                pos = nxt;
                continue;
            }
        }
        /* the thread(s): tok[1:4] (and tok[7:10] of a communication record) */
        int64_t tid = -1, tid_r = -1;
        for (int w = 0; w < (kind == COMM ? 2 : 1); w++) {
            int64_t appl = tok[1 + 6 * w], task = tok[2 + 6 * w], thread = tok[3 + 6 * w];
            int64_t th = -1;
            if (1 <= appl && appl <= n_appl) {
                int64_t ta = appl_first_task[appl - 1] + task - 1;
                if (task >= 1 && ta < appl_first_task[appl]) {
                    th = task_first_thread[ta] + thread - 1;
                    if (thread < 1 || th >= task_first_thread[ta + 1])
                        th = -1;
                }
            }
            if (w == 0)
                tid = th;
            else
                tid_r = th;
        }
        int err = 0;
        int64_t status = DONE;
        if (tid < 0 || (kind == COMM && tid_r < 0)) {
            err = 5;
        } else if (kind == STATE) {
            if (tok[5] < tok[4])
                err = 7;
            else if (th_int[tid * 3 + 2] < 0 || tok[4] < th_int[tid * 3 + 2])
                th_int[tid * 3 + 2] = tok[4];
        } else if (kind == COMM) {
            if (counts[N_COMM] + 2 > s->c_cap) {
                status = GROW_COMM;
            } else {
                int64_t nc = counts[N_COMM];
                int64_t *c_int = s->c_int;
                if (sel == 0 || tok[1] == sel) {
                    c_int[nc * C] = tid;
                    c_int[nc * C + 1] = tok[4];
                    c_int[nc * C + 2] = tok[12];
                    nc++;
                }
                if (sel == 0 || tok[7] == sel) {
                    c_int[nc * C] = tid_r;
                    c_int[nc * C + 1] = tok[10];
                    c_int[nc * C + 2] = tok[12];
                    nc++;
                }
                counts[N_COMM] = nc;
            }
        } else if (sel == 0 || tok[1] == sel) { /* an event record of the selected application */
            int64_t when = tok[4];
            int64_t npairs = (n - 5) / 2;
            int64_t entry = -1;
            int has_exit = 0;
            int64_t n_entries = 0, deep = 0, depth = 0, nc = 0;
            double size = 0.0;
            int64_t n_ctr = counts[N_CTR];
            for (int64_t i = 0; i < npairs; i++) { /* what the line holds; only scratch changes */
                int64_t ty = tok[5 + 2 * i], va = tok[6 + 2 * i];
                if (ty > CALLER_BASE) {
                    if (ty < CALLER_BASE + 100) {
                        int64_t lv = ty - CALLER_BASE;
                        if (lv <= L) {
                            levels[lv - 1] = va;
                            depth = depth > lv ? depth : lv;
                        } else {
                            deep++;
                        }
                    } else if (CALLER_LINE_BASE < ty && ty < CALLER_LINE_BASE + 100) {
                        int64_t lv = ty - CALLER_LINE_BASE;
                        if (lv <= L) {
                            levels[L + lv - 1] = va;
                            depth = depth > lv ? depth : lv;
                        } else {
                            deep++;
                        }
                    }
                } else if (MPI_TYPE_MIN <= ty && ty <= MPI_TYPE_MAX) {
                    if (va != 0) {
                        if (entry < 0)
                            entry = i;
                        n_entries++;
                    } else {
                        has_exit = 1;
                    }
                } else if (ty == SEND_SIZE_TYPE || ty == RECV_SIZE_TYPE) {
                    size += (double)va;
                } else if (COUNTER_MIN <= ty && ty <= COUNTER_MAX) {
                    int64_t k = 0;
                    while (k < n_ctr && s->ctr_types[k] != ty)
                        k++;
                    if (k == n_ctr) {
                        if (n_ctr >= s->ctr_cap) {
                            status = GROW_COUNTERS;
                            break;
                        }
                        s->ctr_types[n_ctr] = ty; /* a new counter: NaN in the rows before */
                        for (int64_t r = 0; r < counts[N_ROWS]; r++)
                            s->o_ctr[n_ctr * R + r] = NAN;
                        n_ctr++;
                        counts[N_CTR] = n_ctr; /* harmless if we stop below: the type exists */
                    }
                    s->ck[nc] = k;
                    s->cv[nc] = va;
                    nc++;
                }
            }
            int64_t path = -1, call = -1;
            int64_t row = counts[N_ROWS];
            if (status == DONE && entry >= 0) {
                if (row >= s->rows_cap) {
                    status = GROW_ROWS;
                } else { /* the call path: levels -> path id */
                    levels[2 * L] = depth;
                    int64_t h = path_hash_raw(levels, L, depth);
                    int64_t mask = s->p_slot_size - 1;
                    int64_t slot = (h ^ (h >> 29)) & mask;
                    for (;;) {
                        int64_t pid = s->p_slot[slot];
                        if (pid < 0)
                            break;
                        const int64_t *pl = s->p_levels + pid * P;
                        int same = pl[2 * L] == depth;
                        for (int64_t i = 0; same && i < depth; i++)
                            if (pl[i] != levels[i] || pl[L + i] != levels[L + i])
                                same = 0;
                        if (same) {
                            path = pid;
                            break;
                        }
                        slot = (slot + 1) & mask;
                    }
                    if (path < 0) {
                        int64_t np_ = counts[N_PATHS];
                        if (2 * (np_ + 1) > s->p_slot_size || np_ >= s->p_cap) {
                            status = GROW_PATHS;
                        } else {
                            memcpy(s->p_levels + np_ * P, levels,
                                   sizeof(int64_t) * (size_t)s->levels_size);
                            s->p_slot[slot] = np_;
                            path = np_;
                            counts[N_PATHS] = np_ + 1;
                        }
                    }
                }
                if (status == DONE) { /* the call: (type, value) -> call id */
                    int64_t key = (int64_t)((uint64_t)(tok[5 + 2 * entry] - MPI_TYPE_MIN)
                                            << KEY_BITS) |
                                  (tok[6 + 2 * entry] & ((INT64_C(1) << KEY_BITS) - 1));
                    int64_t mask = s->k_slot_size - 1;
                    int64_t slot = hash_key(key) & mask;
                    int64_t cid;
                    for (;;) {
                        cid = s->k_slot[slot];
                        if (cid < 0 || s->k_keys[cid] == key)
                            break;
                        slot = (slot + 1) & mask;
                    }
                    if (cid >= 0) {
                        call = cid;
                    } else {
                        int64_t nk = counts[N_CALLS];
                        if (2 * (nk + 1) > s->k_slot_size || nk >= s->k_cap) {
                            status = GROW_CALLS;
                        } else {
                            s->k_keys[nk] = key;
                            s->k_slot[slot] = nk;
                            call = nk;
                            counts[N_CALLS] = nk + 1;
                        }
                    }
                }
            }
            for (int64_t i = 0; i < depth; i++) { /* the scratch back to unset */
                levels[i] = -1;
                levels[L + i] = -1;
            }
            if (status == DONE) { /* apply */
                int64_t *ti = th_int + tid * 3;
                double *acc = th_acc + tid * A;
                int64_t open_row = ti[0];
                if (ti[2] < 0 || when < ti[2])
                    ti[2] = when;
                if (has_exit) {
                    if (open_row >= 0) {
                        s->r_exit[open_row] = when;
                        open_row = -1;
                    } else {
                        counts[ORPHAN_EXITS]++;
                        for (int64_t k = 0; k < n_ctr; k++)
                            acc[k] = NAN;
                    }
                    ti[1] = when;
                }
                if (entry >= 0 || !(has_exit || open_row >= 0 || ti[1] == when)) {
                    for (int64_t j = 0; j < nc; j++) {
                        int64_t k = s->ck[j];
                        double a = acc[k];
                        double x = (double)s->cv[j];
                        acc[k] = isnan(a) ? x : a + x;
                    }
                }
                if (entry >= 0) {
                    if (open_row >= 0)
                        counts[UNTERMINATED]++;
                    s->r_tid[row] = (int32_t)tid;
                    s->r_entry[row] = when;
                    s->r_exit[row] = -1;
                    s->r_call[row] = (int32_t)call;
                    s->r_path[row] = (int32_t)path;
                    s->r_burst[row] = ti[1] >= 0 ? ti[1] : ti[2];
                    if (deep)
                        counts[DEEP_LEVELS] += deep;
                    if (n_entries > 1)
                        counts[EXTRA_ENTRIES] += n_entries - 1;
                    s->o_bytes[row] = size;
                    for (int64_t k = 0; k < n_ctr; k++) {
                        s->o_ctr[k * R + row] = acc[k];
                        acc[k] = NAN;
                    }
                    open_row = row;
                    counts[N_ROWS] = row + 1;
                }
                ti[0] = open_row;
            }
        }
        if (err || status != DONE) {
            counts[LINE] = line;
            counts[POS] = pos;
            if (err) {
                counts[ERR] = err;
                return ERROR;
            }
            return status;
        }
        pos = nxt;
    }
    counts[LINE] = line;
    counts[POS] = end;
    return DONE;
}

static PyObject *py_scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!check_nargs(nargs, 27, "scan"))
        return NULL;
    int64_t start, end, sel;
    if (!as_int64(args[1], &start) || !as_int64(args[2], &end) || !as_int64(args[3], &sel))
        return NULL;
    /* buf, appl_first_task, task_first_thread, th_int, th_acc, r_tid, r_entry, r_exit, r_call,
     * r_path, r_burst, o_bytes, o_ctr, c_int, ctr_types, p_slot, p_levels, k_slot, k_keys,
     * counts, tok, ck, cv, levels */
    static const int at[24] = {0,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                               15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26};
    static const Spec specs[24] = {U8,   I64,  I64,  I64W2, F64W2, I32W, I64W, I64W,
                                   I32W, I32W, I64W, F64W,  F64W2, I64W2, I64W, I64W,
                                   I64W2, I64W, I64W, I64W, I64W, I64W, I64W, I64W};
    Array b[24];
    if (!take_all(args, at, specs, b, 24))
        return NULL;
    const char *problem = NULL;
    int64_t rows_cap = N(b[5]);
    if (N(b[6]) != rows_cap || N(b[7]) != rows_cap || N(b[8]) != rows_cap ||
        N(b[9]) != rows_cap || N(b[10]) != rows_cap || N(b[11]) != rows_cap)
        problem = "scan: the row arrays differ in length";
    else if (SHAPE(b[12], 1) < rows_cap || SHAPE(b[12], 0) < N(b[14]))
        problem = "scan: o_ctr is smaller than (counter types, rows)";
    else if (SHAPE(b[3], 1) != 3 || SHAPE(b[13], 1) != 3)
        problem = "scan: th_int and c_int must have 3 columns";
    else if (SHAPE(b[4], 0) != SHAPE(b[3], 0) || SHAPE(b[4], 1) < N(b[14]))
        problem = "scan: th_acc must be (threads, counter types)";
    else if (N(b[1]) < 1 || N(b[2]) < 1 || P64(b[1])[N(b[1]) - 1] + 1 > N(b[2]) ||
             P64(b[2])[N(b[2]) - 1] > SHAPE(b[3], 0))
        problem = "scan: the header's geometry does not match the thread arrays";
    else if (N(b[23]) < 3 || N(b[23]) % 2 == 0 || SHAPE(b[16], 1) != N(b[23]))
        problem = "scan: levels must be 2 L + 1 long, as the rows of p_levels";
    else if (N(b[19]) < N_COUNTS || N(b[20]) < 15 || N(b[21]) < (N(b[20]) - 5) / 2 ||
             N(b[22]) < (N(b[20]) - 5) / 2)
        problem = "scan: counts, tok, ck or cv too short";
    else if (start < 0 || end < start || end > N(b[0]) ||
             (N(b[17]) & (N(b[17]) - 1)) != 0 || (N(b[15]) & (N(b[15]) - 1)) != 0 ||
             N(b[17]) < 2 || N(b[15]) < 2)
        problem = "scan: bad start/end, or a hash table size that is not a power of two";
    if (problem != NULL) {
        release(b, 24);
        PyErr_SetString(PyExc_ValueError, problem);
        return NULL;
    }
    Scan s = {
        .buf = (const uint8_t *)b[0].view.buf, .buf_size = N(b[0]), .start = start, .end = end,
        .sel = sel, .appl_first_task = P64(b[1]), .task_first_thread = P64(b[2]),
        .n_appl = N(b[1]) - 1, .th_int = P64(b[3]), .th_acc = PF(b[4]),
        .acc_stride = SHAPE(b[4], 1), .r_tid = P32(b[5]), .r_entry = P64(b[6]),
        .r_exit = P64(b[7]), .r_call = P32(b[8]), .r_path = P32(b[9]), .r_burst = P64(b[10]),
        .o_bytes = PF(b[11]), .rows_cap = rows_cap, .o_ctr = PF(b[12]),
        .ctr_stride = SHAPE(b[12], 1), .c_int = P64(b[13]), .c_cap = SHAPE(b[13], 0),
        .c_stride = SHAPE(b[13], 1), .ctr_types = P64(b[14]), .ctr_cap = N(b[14]),
        .p_slot = P64(b[15]), .p_slot_size = N(b[15]), .p_levels = P64(b[16]),
        .p_cap = SHAPE(b[16], 0), .p_stride = SHAPE(b[16], 1), .k_slot = P64(b[17]),
        .k_slot_size = N(b[17]), .k_keys = P64(b[18]), .k_cap = N(b[18]), .counts = P64(b[19]),
        .tok = P64(b[20]), .tok_cap = N(b[20]), .ck = P64(b[21]), .cv = P64(b[22]),
        .levels = P64(b[23]), .levels_size = N(b[23])};
    int64_t status;
    Py_BEGIN_ALLOW_THREADS
    status = scan(&s);
    Py_END_ALLOW_THREADS
    release(b, 24);
    return PyLong_FromLongLong(status);
}

/* rehash_paths(p_levels, n_paths, p_slot): the path ids 0..n_paths-1 into the (emptied) table */
static PyObject *py_rehash_paths(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    int64_t n_paths;
    if (!check_nargs(nargs, 3, "rehash_paths") || !as_int64(args[1], &n_paths))
        return NULL;
    static const int at[2] = {0, 2};
    static const Spec specs[2] = {I64_2, I64W};
    Array b[2];
    if (!take_all(args, at, specs, b, 2))
        return NULL;
    int64_t size = N(b[1]), stride = SHAPE(b[0], 1), L = (stride - 1) / 2;
    if (n_paths > SHAPE(b[0], 0) || n_paths >= size || (size & (size - 1)) != 0) {
        release(b, 2);
        PyErr_SetString(PyExc_ValueError, "rehash_paths: bad table size");
        return NULL;
    }
    const int64_t *p_levels = P64(b[0]);
    int64_t *p_slot = P64(b[1]);
    int64_t mask = size - 1;
    for (int64_t pid = 0; pid < n_paths; pid++) {
        const int64_t *row = p_levels + pid * stride;
        int64_t h = path_hash_raw(row, L, row[2 * L]);
        int64_t slot = (h ^ (h >> 29)) & mask;
        while (p_slot[slot] >= 0)
            slot = (slot + 1) & mask;
        p_slot[slot] = pid;
    }
    release(b, 2);
    Py_RETURN_NONE;
}

/* rehash_calls(k_keys, n_calls, k_slot): the call ids 0..n_calls-1 into the (emptied) table */
static PyObject *py_rehash_calls(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    int64_t n_calls;
    if (!check_nargs(nargs, 3, "rehash_calls") || !as_int64(args[1], &n_calls))
        return NULL;
    static const int at[2] = {0, 2};
    static const Spec specs[2] = {I64, I64W};
    Array b[2];
    if (!take_all(args, at, specs, b, 2))
        return NULL;
    int64_t size = N(b[1]);
    if (n_calls > N(b[0]) || n_calls >= size || (size & (size - 1)) != 0) {
        release(b, 2);
        PyErr_SetString(PyExc_ValueError, "rehash_calls: bad table size");
        return NULL;
    }
    const int64_t *k_keys = P64(b[0]);
    int64_t *k_slot = P64(b[1]);
    int64_t mask = size - 1;
    for (int64_t cid = 0; cid < n_calls; cid++) {
        int64_t slot = hash_key(k_keys[cid]) & mask;
        while (k_slot[slot] >= 0)
            slot = (slot + 1) & mask;
        k_slot[slot] = cid;
    }
    release(b, 2);
    Py_RETURN_NONE;
}

/* ---- the selected rows --------------------------------------------------------------------
 * The columns are written by scattering the rows, read in file order, to their place among the
 * selected rows (each output written in a few sequential runs, one per thread; gathering them
 * in output order instead reads each row array once per thread, strided), one column at a time
 * so that each row array can be dropped as soon as it is used. ``dest`` is int32 or int64. */

static int check_ids(const int32_t *ids, int64_t n, int64_t bound, const void *dest, int wide) {
    for (int64_t i = 0; i < n; i++)
        if ((dest == NULL || dest_at(dest, wide, i) >= 0) && (ids[i] < 0 || ids[i] >= bound))
            return 0;
    return 1;
}

static int check_dest(const void *dest, int wide, int64_t n, int64_t bound) {
    for (int64_t i = 0; i < n; i++)
        if (dest_at(dest, wide, i) >= bound)
            return 0;
    return 1;
}

/* group_rows(tid, thread_appl, keep, dest, starts): dest[i] = the place of row i among the rows
 * of application ``keep`` ordered by thread, stably (counting sort), -1 for the other rows;
 * starts[t] = thread t's first place (starts[-1]: the total; n_threads + 1 zeros given). */
static PyObject *py_group_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    int64_t keep;
    if (!check_nargs(nargs, 5, "group_rows") || !as_int64(args[2], &keep))
        return NULL;
    static const int at[4] = {0, 1, 3, 4};
    static const Spec specs[4] = {I32, I64, {"ilq", 0, 1, 1}, I64W};
    Array b[4];
    if (!take_all(args, at, specs, b, 4))
        return NULL;
    const int32_t *tid = P32(b[0]);
    const int64_t *thread_appl = P64(b[1]);
    int64_t n = N(b[0]), n_threads = N(b[1]);
    int64_t *starts = P64(b[3]);
    int wide = b[2].view.itemsize == 8;
    if (N(b[2]) != n || N(b[3]) != n_threads + 1 || (b[2].view.itemsize != 4 && !wide) ||
        !check_ids(tid, n, n_threads, NULL, 0)) {
        release(b, 4);
        PyErr_SetString(PyExc_ValueError, "group_rows: bad shapes or thread ids");
        return NULL;
    }
    int64_t *nxt = malloc(sizeof(int64_t) * (size_t)(n_threads + 1));
    if (nxt == NULL) {
        release(b, 4);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    memset(starts, 0, sizeof(int64_t) * (size_t)(n_threads + 1));
    for (int64_t i = 0; i < n; i++)
        if (thread_appl[tid[i]] == keep)
            starts[tid[i] + 1]++;
    for (int64_t t = 0; t < n_threads; t++)
        starts[t + 1] += starts[t];
    memcpy(nxt, starts, sizeof(int64_t) * (size_t)n_threads);
    if (wide) {
        int64_t *dest = P64(b[2]);
        for (int64_t i = 0; i < n; i++) {
            int32_t t = tid[i];
            dest[i] = thread_appl[t] == keep ? nxt[t]++ : -1;
        }
    } else {
        int32_t *dest = P32(b[2]);
        for (int64_t i = 0; i < n; i++) {
            int32_t t = tid[i];
            dest[i] = thread_appl[t] == keep ? (int32_t)nxt[t]++ : -1;
        }
    }
    Py_END_ALLOW_THREADS
    free(nxt);
    release(b, 4);
    Py_RETURN_NONE;
}

/* scatter_values(values, dest, out): out[dest[i]] = values[i] where dest[i] >= 0 (items of 4 or
 * 8 bytes, the same format in and out) */
static PyObject *py_scatter_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!check_nargs(nargs, 3, "scatter_values"))
        return NULL;
    static const int at[3] = {0, 1, 2};
    static const Spec specs[3] = {{"ilqd", 0, 1, 0}, DEST, {"ilqd", 0, 1, 1}};
    Array b[3];
    if (!take_all(args, at, specs, b, 3))
        return NULL;
    int wide = b[1].view.itemsize == 8;
    Py_ssize_t size = b[0].view.itemsize;
    int64_t n = N(b[1]);
    if (N(b[0]) < n || size != b[2].view.itemsize || strcmp(b[0].view.format, b[2].view.format) ||
        (size != 4 && size != 8) || (b[1].view.itemsize != 4 && !wide) ||
        !check_dest(b[1].view.buf, wide, n, N(b[2]))) {
        release(b, 3);
        PyErr_SetString(PyExc_ValueError, "scatter_values: bad shapes or types");
        return NULL;
    }
    const void *dest = b[1].view.buf;
    Py_BEGIN_ALLOW_THREADS
    if (size == 8) {
        const uint64_t *values = b[0].view.buf;
        uint64_t *out = b[2].view.buf;
        for (int64_t i = 0; i < n; i++) {
            int64_t j = dest_at(dest, wide, i);
            if (j >= 0)
                out[j] = values[i];
        }
    } else {
        const uint32_t *values = b[0].view.buf;
        uint32_t *out = b[2].view.buf;
        for (int64_t i = 0; i < n; i++) {
            int64_t j = dest_at(dest, wide, i);
            if (j >= 0)
                out[j] = values[i];
        }
    }
    Py_END_ALLOW_THREADS
    release(b, 3);
    Py_RETURN_NONE;
}

/* scatter_burst(r_entry, r_burst, dest, tick, out): out[place] = (entry - burst start) * tick */
static PyObject *py_scatter_burst(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!check_nargs(nargs, 5, "scatter_burst"))
        return NULL;
    double tick = PyFloat_AsDouble(args[3]);
    if (tick == -1.0 && PyErr_Occurred())
        return NULL;
    static const int at[4] = {0, 1, 2, 4};
    static const Spec specs[4] = {I64, I64, DEST, F64W};
    Array b[4];
    if (!take_all(args, at, specs, b, 4))
        return NULL;
    int wide = b[2].view.itemsize == 8;
    int64_t n = N(b[2]);
    if (N(b[0]) < n || N(b[1]) < n || (b[2].view.itemsize != 4 && !wide) ||
        !check_dest(b[2].view.buf, wide, n, N(b[3]))) {
        release(b, 4);
        PyErr_SetString(PyExc_ValueError, "scatter_burst: bad shapes");
        return NULL;
    }
    const int64_t *entry = P64(b[0]), *burst = P64(b[1]);
    const void *dest = b[2].view.buf;
    double *out = PF(b[3]);
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++) {
        int64_t j = dest_at(dest, wide, i);
        if (j >= 0)
            out[j] = (double)(int64_t)((uint64_t)entry[i] - (uint64_t)burst[i]) * tick;
    }
    Py_END_ALLOW_THREADS
    release(b, 4);
    Py_RETURN_NONE;
}

/* scatter_codes(ids, dest, remap, out): out[place] = remap[id] (out: int8, int16 or int32) */
static PyObject *py_scatter_codes(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!check_nargs(nargs, 4, "scatter_codes"))
        return NULL;
    static const int at[4] = {0, 1, 2, 3};
    static const Spec specs[4] = {I32, DEST, I64, {"bhi", 0, 1, 1}};
    Array b[4];
    if (!take_all(args, at, specs, b, 4))
        return NULL;
    int wide = b[1].view.itemsize == 8;
    int64_t n = N(b[1]);
    const void *dest = b[1].view.buf;
    if (N(b[0]) < n || (b[1].view.itemsize != 4 && !wide) || !check_dest(dest, wide, n, N(b[3])) ||
        !check_ids(P32(b[0]), n, N(b[2]), dest, wide)) {
        release(b, 4);
        PyErr_SetString(PyExc_ValueError, "scatter_codes: bad shapes or ids");
        return NULL;
    }
    const int32_t *ids = P32(b[0]);
    const int64_t *remap = P64(b[2]);
    Py_ssize_t size = b[3].view.itemsize;
    void *out = b[3].view.buf;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++) {
        int64_t j = dest_at(dest, wide, i);
        if (j < 0)
            continue;
        int64_t v = remap[ids[i]];
        if (size == 1)
            ((int8_t *)out)[j] = (int8_t)v;
        else if (size == 2)
            ((int16_t *)out)[j] = (int16_t)v;
        else
            ((int32_t *)out)[j] = (int32_t)v;
    }
    Py_END_ALLOW_THREADS
    release(b, 4);
    Py_RETURN_NONE;
}

/* used_ids(ids, dest, used): used[id] = True for the ids the selected rows use (used: n_ids
 * False given) */
static PyObject *py_used_ids(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!check_nargs(nargs, 3, "used_ids"))
        return NULL;
    static const int at[3] = {0, 1, 2};
    static const Spec specs[3] = {I32, DEST, BOOLW};
    Array b[3];
    if (!take_all(args, at, specs, b, 3))
        return NULL;
    int wide = b[1].view.itemsize == 8;
    int64_t n = N(b[1]);
    const void *dest = b[1].view.buf;
    if (N(b[0]) < n || (b[1].view.itemsize != 4 && !wide) ||
        !check_ids(P32(b[0]), n, N(b[2]), dest, wide)) {
        release(b, 3);
        PyErr_SetString(PyExc_ValueError, "used_ids: bad shapes or ids");
        return NULL;
    }
    const int32_t *ids = P32(b[0]);
    uint8_t *used = b[2].view.buf;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++)
        if (dest_at(dest, wide, i) >= 0)
            used[ids[i]] = 1;
    Py_END_ALLOW_THREADS
    release(b, 3);
    Py_RETURN_NONE;
}

/* fill_threads(starts, thread_rank, thread_local, rank, thread): the rank and thread of the
 * grouped rows (thread t's rows are starts[t]:starts[t + 1]) */
static PyObject *py_fill_threads(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!check_nargs(nargs, 5, "fill_threads"))
        return NULL;
    static const int at[5] = {0, 1, 2, 3, 4};
    static const Spec specs[5] = {I64, I32, I32, I32W, I32W};
    Array b[5];
    if (!take_all(args, at, specs, b, 5))
        return NULL;
    const int64_t *starts = P64(b[0]);
    int64_t n_threads = N(b[0]) - 1;
    int ok = n_threads >= 0 && N(b[1]) >= n_threads && N(b[2]) >= n_threads;
    for (int64_t t = 0; ok && t < n_threads; t++)
        ok = starts[t] >= 0 && starts[t] <= starts[t + 1];
    ok = ok && (n_threads < 0 || (starts[n_threads] <= N(b[3]) && starts[n_threads] <= N(b[4])));
    if (!ok) {
        release(b, 5);
        PyErr_SetString(PyExc_ValueError, "fill_threads: bad shapes");
        return NULL;
    }
    const int32_t *thread_rank = P32(b[1]), *thread_local = P32(b[2]);
    int32_t *rank = P32(b[3]), *thread = P32(b[4]);
    Py_BEGIN_ALLOW_THREADS
    for (int64_t t = 0; t < n_threads; t++)
        for (int64_t j = starts[t]; j < starts[t + 1]; j++) {
            rank[j] = thread_rank[t];
            thread[j] = thread_local[t];
        }
    Py_END_ALLOW_THREADS
    release(b, 5);
    Py_RETURN_NONE;
}

/* entries_sorted(entry, starts): whether each thread's entry times (grouped rows) never
 * decrease */
static PyObject *py_entries_sorted(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!check_nargs(nargs, 2, "entries_sorted"))
        return NULL;
    static const int at[2] = {0, 1};
    static const Spec specs[2] = {I64, I64};
    Array b[2];
    if (!take_all(args, at, specs, b, 2))
        return NULL;
    const int64_t *entry = P64(b[0]), *starts = P64(b[1]);
    int64_t n_threads = N(b[1]) - 1;
    int ok = n_threads >= 0;
    for (int64_t t = 0; ok && t < n_threads; t++)
        ok = starts[t] >= 0 && starts[t] <= starts[t + 1] && starts[t + 1] <= N(b[0]);
    if (!ok) {
        release(b, 2);
        PyErr_SetString(PyExc_ValueError, "entries_sorted: bad starts");
        return NULL;
    }
    int sorted = 1;
    for (int64_t t = 0; sorted && t < n_threads; t++)
        for (int64_t j = starts[t] + 1; j < starts[t + 1]; j++)
            if (entry[j] < entry[j - 1]) {
                sorted = 0;
                break;
            }
    release(b, 2);
    return PyBool_FromLong(sorted);
}

/* attribute(tid, entry, exit_, starts, sorted_, c_int, n_comm, thread_appl, keep, out): add the
 * size of each message end of a thread of application ``keep`` to the row of its thread whose
 * [entry, exit] holds its time: the last row with (tid, entry) <= (tid, time) among the grouped
 * rows (tid: their threads, only read when not ``sorted_``). Returns the number of message ends
 * left unattributed. When every thread's entries are sorted, the row is looked for among the
 * thread's rows only (the same row); otherwise by bisection over all rows as if they were
 * sorted. */
static PyObject *py_attribute(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!check_nargs(nargs, 10, "attribute"))
        return NULL;
    int sorted = PyObject_IsTrue(args[4]);
    int64_t n_comm, keep;
    if (sorted < 0 || !as_int64(args[6], &n_comm) || !as_int64(args[8], &keep))
        return NULL;
    static const int at[7] = {0, 1, 2, 3, 5, 7, 9};
    static const Spec specs[7] = {I32, I64, I64, I64, I64_2, I64, F64W};
    Array b[7];
    if (!take_all(args, at, specs, b, 7))
        return NULL;
    const int32_t *tid = P32(b[0]);
    const int64_t *entry = P64(b[1]), *exit_ = P64(b[2]), *starts = P64(b[3]);
    const int64_t *c_int = P64(b[4]), *thread_appl = P64(b[5]);
    double *out = PF(b[6]);
    int64_t n = N(b[1]), n_threads = N(b[5]), C = SHAPE(b[4], 1);
    int ok = N(b[2]) >= n && N(b[6]) >= n && N(b[3]) == n_threads + 1 && C == 3 &&
             n_comm <= SHAPE(b[4], 0) && n_comm >= 0 && (sorted || N(b[0]) >= n);
    for (int64_t j = 0; ok && j < n_comm; j++)
        ok = c_int[j * C] >= 0 && c_int[j * C] < n_threads;
    for (int64_t t = 0; ok && t < n_threads; t++)
        ok = starts[t] >= 0 && starts[t] <= starts[t + 1] && starts[t + 1] <= n;
    if (!ok) {
        release(b, 7);
        PyErr_SetString(PyExc_ValueError, "attribute: bad shapes or message ends");
        return NULL;
    }
    int64_t missed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t j = 0; j < n_comm; j++) {
        int64_t t_id = c_int[j * C];
        if (thread_appl[t_id] != keep)
            continue;
        int64_t t = c_int[j * C + 1], i;
        if (sorted) {
            int64_t first = starts[t_id], lo = first, hi = starts[t_id + 1];
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if (entry[mid] <= t)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            i = lo > first ? lo - 1 : -1;
        } else {
            int64_t lo = 0, hi = n; /* last row with (tid, entry) <= (tid, t) */
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if (tid[mid] < t_id || (tid[mid] == t_id && entry[mid] <= t))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            i = lo > 0 && tid[lo - 1] == t_id ? lo - 1 : -1;
        }
        if (i >= 0 && (exit_[i] < 0 || t <= exit_[i]))
            out[i] += (double)c_int[j * C + 2];
        else
            missed++;
    }
    Py_END_ALLOW_THREADS
    release(b, 7);
    return PyLong_FromLongLong(missed);
}

/* times_in_place(entry, exit_, tick): turn the grouped entry and exit times (int64) into
 * time_s and duration_s (float64) in their memory; the caller views them as float64 */
static PyObject *py_times_in_place(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!check_nargs(nargs, 3, "times_in_place"))
        return NULL;
    double tick = PyFloat_AsDouble(args[2]);
    if (tick == -1.0 && PyErr_Occurred())
        return NULL;
    static const int at[2] = {0, 1};
    static const Spec specs[2] = {I64W, I64W};
    Array b[2];
    if (!take_all(args, at, specs, b, 2))
        return NULL;
    int64_t n = N(b[0]);
    if (N(b[1]) != n) {
        release(b, 2);
        PyErr_SetString(PyExc_ValueError, "times_in_place: entry and exit differ in length");
        return NULL;
    }
    int64_t *entry = P64(b[0]), *exit_ = P64(b[1]);
    Py_BEGIN_ALLOW_THREADS
    for (int64_t j = 0; j < n; j++) {
        int64_t x = exit_[j];
        double d = x >= 0 ? (double)(int64_t)((uint64_t)x - (uint64_t)entry[j]) * tick : NAN;
        memcpy(exit_ + j, &d, 8);
    }
    for (int64_t j = 0; j < n; j++) {
        double t = (double)entry[j] * tick;
        memcpy(entry + j, &t, 8);
    }
    Py_END_ALLOW_THREADS
    release(b, 2);
    Py_RETURN_NONE;
}

/* ---- module ------------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))py_scan, METH_FASTCALL,
     "scan(buf, start, end, sel, appl_first_task, task_first_thread, th_int, th_acc, r_tid, "
     "r_entry, r_exit, r_call, r_path, r_burst, o_bytes, o_ctr, c_int, ctr_types, p_slot, "
     "p_levels, k_slot, k_keys, counts, tok, ck, cv, levels) -> status"},
    {"rehash_paths", (PyCFunction)(void (*)(void))py_rehash_paths, METH_FASTCALL,
     "rehash_paths(p_levels, n_paths, p_slot)"},
    {"rehash_calls", (PyCFunction)(void (*)(void))py_rehash_calls, METH_FASTCALL,
     "rehash_calls(k_keys, n_calls, k_slot)"},
    {"group_rows", (PyCFunction)(void (*)(void))py_group_rows, METH_FASTCALL,
     "group_rows(tid, thread_appl, keep, dest, starts)"},
    {"scatter_values", (PyCFunction)(void (*)(void))py_scatter_values, METH_FASTCALL,
     "scatter_values(values, dest, out)"},
    {"scatter_burst", (PyCFunction)(void (*)(void))py_scatter_burst, METH_FASTCALL,
     "scatter_burst(r_entry, r_burst, dest, tick, out)"},
    {"scatter_codes", (PyCFunction)(void (*)(void))py_scatter_codes, METH_FASTCALL,
     "scatter_codes(ids, dest, remap, out)"},
    {"used_ids", (PyCFunction)(void (*)(void))py_used_ids, METH_FASTCALL,
     "used_ids(ids, dest, used)"},
    {"fill_threads", (PyCFunction)(void (*)(void))py_fill_threads, METH_FASTCALL,
     "fill_threads(starts, thread_rank, thread_local, rank, thread)"},
    {"entries_sorted", (PyCFunction)(void (*)(void))py_entries_sorted, METH_FASTCALL,
     "entries_sorted(entry, starts) -> bool"},
    {"attribute", (PyCFunction)(void (*)(void))py_attribute, METH_FASTCALL,
     "attribute(tid, entry, exit_, starts, sorted_, c_int, n_comm, thread_appl, keep, out) "
     "-> message ends missed"},
    {"times_in_place", (PyCFunction)(void (*)(void))py_times_in_place, METH_FASTCALL,
     "times_in_place(entry, exit_, tick)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_paraver",
    "Compiled parts of the Paraver reader (phasekit.io.paraver): the line parser, message "
    "attribution and the columns of the selected rows.",
    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__paraver(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    static const struct {
        const char *name;
        long long value;
    } constants[] = {
        {"MPI_TYPE_MIN", MPI_TYPE_MIN}, {"MPI_TYPE_MAX", MPI_TYPE_MAX},
        {"SEND_SIZE_TYPE", SEND_SIZE_TYPE}, {"RECV_SIZE_TYPE", RECV_SIZE_TYPE},
        {"CALLER_BASE", CALLER_BASE}, {"CALLER_LINE_BASE", CALLER_LINE_BASE},
        {"COUNTER_MIN", COUNTER_MIN}, {"COUNTER_MAX", COUNTER_MAX}, {"MAX_PAIRS", MAX_PAIRS},
        {"PAD", PAD}, {"KEY_BITS", KEY_BITS}, {"DONE", DONE}, {"GROW_ROWS", GROW_ROWS},
        {"GROW_COMM", GROW_COMM}, {"GROW_COUNTERS", GROW_COUNTERS},
        {"GROW_PATHS", GROW_PATHS}, {"GROW_CALLS", GROW_CALLS}, {"ERROR", ERROR},
        {"N_ROWS", N_ROWS}, {"N_COMM", N_COMM}, {"N_CTR", N_CTR}, {"N_PATHS", N_PATHS},
        {"N_CALLS", N_CALLS}, {"LINE", LINE}, {"POS", POS}, {"ERR", ERR},
        {"UNTERMINATED", UNTERMINATED}, {"ORPHAN_EXITS", ORPHAN_EXITS},
        {"DEEP_LEVELS", DEEP_LEVELS}, {"EXTRA_ENTRIES", EXTRA_ENTRIES},
        {"N_COUNTS", N_COUNTS}};
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
        PyObject *v = PyLong_FromLongLong(constants[i].value);
        if (v == NULL || PyModule_AddObject(m, constants[i].name, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
