"""The compiled parts of the Paraver reader (:mod:`phasekit.io.paraver`): the line parser over
blocks of raw bytes, message attribution, and the columns of the selected rows.

The parser reads a line in one of two ways. The fast way covers what Paraver writers write:
``1:``, ``2:`` or ``3:`` followed by unsigned integers of at most 16 digits separated by ``:``
and ending with ``\\n``; it reads 8 bytes at a time (SWAR: the digits of a field found and
converted with a few integer operations, no branch per digit). Every other line (comments,
communicators, empty lines, ``\\r\\n``, signs, longer numbers, the last line of a file
without a newline, anything malformed) is read by the exact byte-by-byte parser, which
decides what is accepted and which error a bad line gets, so both ways accept the same lines
with the same values and reject the same lines with the same error.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

MPI_TYPE_MIN, MPI_TYPE_MAX = 50000001, 50099999
SEND_SIZE_TYPE, RECV_SIZE_TYPE = 50100001, 50100002
CALLER_BASE, CALLER_LINE_BASE = 70000000, 80000000
COUNTER_MIN, COUNTER_MAX = 42000000, 49999999
#: Most type:value pairs on one event record (our bound: the pairs of a line are kept).
MAX_PAIRS = 1 << 14
#: Bytes after the data of a block that the fast parser may read (never used as data).
PAD = 64
#: Bits of an MPI event value kept in a call key (the type's offset above them).
KEY_BITS = 44

# kernel status and error codes
DONE, GROW_ROWS, GROW_COMM, GROW_COUNTERS, GROW_PATHS, GROW_CALLS, ERROR = 0, 1, 2, 3, 4, 5, -1
# counts[] slots shared with the caller
(N_ROWS, N_COMM, N_CTR, N_PATHS, N_CALLS, LINE, POS, ERR, UNTERMINATED, ORPHAN_EXITS,
 DEEP_LEVELS, EXTRA_ENTRIES, N_COUNTS) = range(13)

# kinds of line (what the parsers return)
_SKIP, _STATE, _EVENT, _COMM = 0, 1, 2, 3

_ZEROS = np.uint64(0x3030303030303030)
_ABOVE9 = np.uint64(0x7676767676767676)
_HIGH = np.uint64(0x8080808080808080)
_MASK16 = np.uint64(0x00FF00FF00FF00FF)
_MASK32 = np.uint64(0x0000FFFF0000FFFF)
_LITTLE_ENDIAN = sys.byteorder == "little"  # the fast way reads words little-endian
_POW10 = np.array([10 ** i for i in range(9)], dtype=np.int64)


@intrinsic
def _load8(typingctx, arr, idx):
    """The 8 bytes of the uint8 array ``arr`` from ``idx`` as a little-endian uint64
    (an unaligned load, unchecked: the caller keeps ``idx + 8`` inside the array)."""
    sig = types.uint64(arr, types.intp)

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(array.data, [args[1]])
        ptr = builder.bitcast(ptr, ir.IntType(64).as_pointer())
        return builder.load(ptr, align=1)

    return sig, codegen


@intrinsic
def _byte(typingctx, arr, idx):
    """``arr[idx]`` of a uint8 array, unchecked (no wraparound of negative indices)."""
    sig = types.uint8(arr, types.intp)

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.load(builder.gep(array.data, [args[1]]))

    return sig, codegen


@njit(cache=True, inline="always")
def _digits(t, n):
    """The number written by the first ``n`` (1..8) digit bytes of ``t`` (``t`` holds the
    bytes minus '0', the first in the low byte)."""
    t = t << np.uint64(64 - 8 * n)  # the digits at the top, zeros (leading '0's) below
    t = (t * np.uint64(10) + (t >> np.uint64(8))) & _MASK16
    t = ((t * np.uint64(1 + (100 << 16))) >> np.uint64(16)) & _MASK32
    return np.int64((t * np.uint64(1 + (10000 << 32))) >> np.uint64(32))


@njit(cache=True)
def _int(buf, p, end, signed):
    """Parse an integer at ``p``; returns (value, position of the first byte after it, ok).

    ok is False without digits, with more than 20, or (unsigned: ids and times) beyond
    2**63 - 1; signed values beyond it wrap around (Paraver values are unsigned 64-bit)."""
    neg = False
    if signed and p < end and buf[p] == 45:  # '-'
        neg = True
        p += 1
    v = 0
    start = p
    while p < end:
        d = np.int64(buf[p]) - 48
        if d < 0 or d > 9:
            break
        v = v * 10 + d
        p += 1
    if p == start or p - start > 20 or (not signed and (p - start > 19 or v < 0)):
        return 0, p, False  # ids and times must fit in int64
    return (-v if neg else v), p, True


@njit(cache=True)
def _fields(buf, p, end, out, n):
    """Parse ``n`` colon-separated integers into ``out``; returns the position after the
    last one, or -1."""
    for i in range(n):
        v, q, ok = _int(buf, p, end, False)
        if not ok:
            return -1
        out[i] = v
        if i < n - 1:
            if q >= end or buf[q] != 58:
                return -1
            p = q + 1
        else:
            p = q
    return p


@njit(cache=True)
def _line_end(buf, q, end):
    """The start of the next line when ``q`` ends a line ('\\n', '\\r\\n' or the end), else
    -1."""
    if q >= end:
        return end
    c = buf[q]
    if c == 10:
        return q + 1
    if c == 13:
        if q + 1 >= end:
            return end
        if buf[q + 1] == 10:
            return q + 2
    return -1


@njit(cache=True)
def _thread_id(appl, task, thread, appl_first_task, task_first_thread):
    n_appl = appl_first_task.size - 1
    if appl < 1 or appl > n_appl:
        return -1
    t = appl_first_task[appl - 1] + task - 1
    if task < 1 or t >= appl_first_task[appl]:
        return -1
    th = task_first_thread[t] + thread - 1
    if thread < 1 or th >= task_first_thread[t + 1]:
        return -1
    return th


@njit(cache=True)
def _exact_line(buf, pos, end, tok, appl_first_task, task_first_thread):
    """Read the line at ``pos`` byte by byte into ``tok`` (the fields after ``X:``; an event
    record's pairs follow its 5 fields). Returns (kind, start of the next line, number of
    fields, error code or 0)."""
    c = buf[pos]
    if c == 10 or c == 13:  # an empty line
        nxt = _line_end(buf, pos, end)
        return _SKIP, nxt, 0, (1 if nxt < 0 else 0)
    if c == 35 or (c == 99 and pos + 1 < end and buf[pos + 1] == 58):  # '#', 'c:'
        while pos < end and buf[pos] != 10:
            pos += 1
        return _SKIP, pos + 1, 0, 0
    if pos + 1 >= end or buf[pos + 1] != 58 or c < 49 or c > 51:
        return _SKIP, -1, 0, 1
    p = pos + 2
    if c == 49:  # state
        q = _fields(buf, p, end, tok, 7)
        nxt = _line_end(buf, q, end) if q >= 0 else -1
        return _STATE, nxt, 7, (2 if nxt < 0 else 0)
    if c == 51:  # communication
        q = _fields(buf, p, end, tok, 14)
        nxt = _line_end(buf, q, end) if q >= 0 else -1
        return _COMM, nxt, 14, (4 if nxt < 0 else 0)
    q = _fields(buf, p, end, tok, 5)  # event record
    if q < 0 or q >= end or buf[q] != 58:
        return _EVENT, -1, 0, 3
    if _thread_id(tok[1], tok[2], tok[3], appl_first_task, task_first_thread) < 0:
        return _EVENT, -1, 0, 5
    p = q + 1
    n = 5
    while True:
        if n >= tok.size:
            return _EVENT, -1, 0, 6
        ty, q, ok = _int(buf, p, end, False)
        if not ok or q >= end or buf[q] != 58:
            return _EVENT, -1, 0, 3
        va, q, ok = _int(buf, q + 1, end, True)
        if not ok:
            return _EVENT, -1, 0, 3
        tok[n] = ty
        tok[n + 1] = va
        n += 2
        nxt = _line_end(buf, q, end)
        if nxt >= 0:
            return _EVENT, nxt, n, 0
        if buf[q] != 58:
            return _EVENT, -1, 0, 3
        p = q + 1


@njit(cache=True, inline="always")
def _hash(h):
    h = (h ^ (h >> 31)) * np.int64(-7046029254386353131)
    return h ^ (h >> 29)


@njit(cache=True)
def _path_hash(levels, L):
    """FNV-1a-like hash of the first ``depth`` functions and lines of a levels row."""
    depth = levels[2 * L]
    h = np.int64(-3750763034362895579) ^ depth
    for i in range(depth):
        h = (h ^ levels[i]) * np.int64(1099511628211)
        h = (h ^ levels[L + i]) * np.int64(1099511628211)
    return h ^ (h >> 29)


@njit(cache=True)
def rehash_paths(p_levels, n_paths, p_slot):
    L = p_levels.shape[1] // 2
    mask = p_slot.size - 1
    for pid in range(n_paths):
        slot = _path_hash(p_levels[pid], L) & mask
        while p_slot[slot] >= 0:
            slot = (slot + 1) & mask
        p_slot[slot] = pid


@njit(cache=True)
def rehash_calls(k_keys, n_calls, k_slot):
    mask = k_slot.size - 1
    for cid in range(n_calls):
        slot = _hash(k_keys[cid]) & mask
        while k_slot[slot] >= 0:
            slot = (slot + 1) & mask
        k_slot[slot] = cid


@njit(cache=True)
def scan(buf, start, end, sel, appl_first_task, task_first_thread, th_int, th_acc, r_tid,
         r_entry, r_exit, r_call, r_path, r_burst, o_bytes, o_ctr, c_int, ctr_types, p_slot,
         p_levels, k_slot, k_keys, counts, tok, ck, cv, levels):
    """Parse the lines of ``buf[start:end]`` (``buf`` may be longer: the fast way reads up to
    16 bytes past a line's end, and is used only where that stays inside ``buf``).

    th_int[tid] = (open row, last exit time, first time); th_acc[tid, k] = burst counter sums.
    Rows: r_tid, r_entry, r_exit (-1 while open), r_call (call id: k_keys), r_path (path id:
    p_levels), r_burst (start of the burst), o_bytes, o_ctr[k, row]. Messages: c_int[i] =
    (thread, logical time, size) of the ends in application ``sel`` (all when 0).
    Stops at a line start with a GROW_* status when an output is full (nothing of the line
    applied), or ERROR (the line in counts[LINE], its start in counts[POS], the error in
    counts[ERR]).

    The hot path is written out in this one function: arrays passed to a called (or
    numba-inlined) function cost a pair of atomic reference count updates per call each.
    """
    L = (levels.size - 1) // 2  # levels: L functions, L lines, the depth (-1 when unset)
    n_appl = appl_first_task.size - 1
    limit = min(end, buf.size - 16) if _LITTLE_ENDIAN else start
    fast_end = limit  # lines starting before it end with a '\n' before ``limit``
    while fast_end > start and buf[fast_end - 1] != 10:
        fast_end -= 1
    cap = tok.size
    pos = start
    line = counts[LINE]
    while pos < end:
        line += 1
        c = buf[pos]
        kind = _SKIP
        nxt = -1
        n = 0
        if pos < fast_end and 49 <= c <= 51 and buf[pos + 1] == 58:
            # the fast way: 8 bytes at a time
            p = pos + 2
            while True:
                t = _load8(buf, p) ^ _ZEROS
                m = ((t + _ABOVE9) | t) & _HIGH  # high bit of the bytes that are not digits
                if m != 0:
                    k = np.int64(trailing_zeros(m)) >> 3
                    if k == 1:  # (the most common field: ids, small values)
                        v = np.int64(t & np.uint64(15))
                    elif k == 0:
                        break
                    else:
                        v = _digits(t, k)
                else:
                    t2 = _load8(buf, p + 8) ^ _ZEROS
                    m2 = ((t2 + _ABOVE9) | t2) & _HIGH
                    if m2 == 0:
                        break  # more than 16 digits
                    k2 = np.int64(trailing_zeros(m2)) >> 3
                    v = _digits(t, 8)
                    if k2:
                        v = v * _POW10[k2] + _digits(t2, k2)
                    k = 8 + k2
                if n >= cap:
                    break
                tok[n] = v
                n += 1
                sep = _byte(buf, p + k)
                p += k + 1
                if sep == 58:  # ':'
                    continue
                if sep == 10:
                    nxt = p
                break
            if nxt >= 0:
                if c == 50:
                    if n >= 7 and (n - 5) % 2 == 0:
                        kind = _EVENT
                    else:
                        nxt = -1
                elif n == (7 if c == 49 else 14):
                    kind = _STATE if c == 49 else _COMM
                else:
                    nxt = -1
        if nxt < 0:  # the exact way
            n = 0
            kind, nxt, n, err = _exact_line(buf, pos, end, tok, appl_first_task,
                                            task_first_thread)
            if err:
                counts[LINE] = line
                counts[POS] = pos
                counts[ERR] = err
                return ERROR
            if kind == _SKIP:
                pos = nxt
                continue
        # the thread(s): tok[1:4] (and tok[7:10] of a communication record)
        tid = -1
        tid_r = -1
        for w in range(2 if kind == _COMM else 1):
            appl = tok[1 + 6 * w]
            task = tok[2 + 6 * w]
            thread = tok[3 + 6 * w]
            th = -1
            if 1 <= appl <= n_appl:
                ta = appl_first_task[appl - 1] + task - 1
                if task >= 1 and ta < appl_first_task[appl]:
                    th = task_first_thread[ta] + thread - 1
                    if thread < 1 or th >= task_first_thread[ta + 1]:
                        th = -1
            if w == 0:
                tid = th
            else:
                tid_r = th
        err = 0
        status = DONE
        if tid < 0 or (kind == _COMM and tid_r < 0):
            err = 5
        elif kind == _STATE:
            if tok[5] < tok[4]:
                err = 7
            elif th_int[tid, 2] < 0 or tok[4] < th_int[tid, 2]:
                th_int[tid, 2] = tok[4]
        elif kind == _COMM:
            if counts[N_COMM] + 2 > c_int.shape[0]:
                status = GROW_COMM
            else:
                nc = counts[N_COMM]
                if sel == 0 or tok[1] == sel:
                    c_int[nc, 0] = tid
                    c_int[nc, 1] = tok[4]
                    c_int[nc, 2] = tok[12]
                    nc += 1
                if sel == 0 or tok[7] == sel:
                    c_int[nc, 0] = tid_r
                    c_int[nc, 1] = tok[10]
                    c_int[nc, 2] = tok[12]
                    nc += 1
                counts[N_COMM] = nc
        elif sel == 0 or tok[1] == sel:  # an event record of the selected application
            when = tok[4]
            npairs = (n - 5) // 2
            entry = -1
            has_exit = False
            n_entries = 0
            deep = 0
            depth = 0
            size = 0.0
            nc = 0
            n_ctr = counts[N_CTR]
            for i in range(npairs):  # what the line holds; only scratch changes here
                ty = tok[5 + 2 * i]
                va = tok[6 + 2 * i]
                if ty > CALLER_BASE:
                    if ty < CALLER_BASE + 100:
                        lv = ty - CALLER_BASE
                        if lv <= L:
                            levels[lv - 1] = va
                            depth = max(depth, lv)
                        else:
                            deep += 1
                    elif CALLER_LINE_BASE < ty < CALLER_LINE_BASE + 100:
                        lv = ty - CALLER_LINE_BASE
                        if lv <= L:
                            levels[L + lv - 1] = va
                            depth = max(depth, lv)
                        else:
                            deep += 1
                elif MPI_TYPE_MIN <= ty <= MPI_TYPE_MAX:
                    if va != 0:
                        if entry < 0:
                            entry = i
                        n_entries += 1
                    else:
                        has_exit = True
                elif ty == SEND_SIZE_TYPE or ty == RECV_SIZE_TYPE:  # noqa: SIM109 (numba)
                    size += va
                elif COUNTER_MIN <= ty <= COUNTER_MAX:
                    k = 0
                    while k < n_ctr and ctr_types[k] != ty:
                        k += 1
                    if k == n_ctr:
                        if n_ctr >= ctr_types.size:
                            status = GROW_COUNTERS
                            break
                        ctr_types[n_ctr] = ty  # a new counter: NaN in the rows before
                        o_ctr[n_ctr, : counts[N_ROWS]] = np.nan
                        n_ctr += 1
                        counts[N_CTR] = n_ctr  # harmless if we stop below: the type exists
                    ck[nc] = k
                    cv[nc] = va
                    nc += 1
            path = -1
            call = -1
            row = counts[N_ROWS]
            if status == DONE and entry >= 0:
                if row >= r_tid.size:
                    status = GROW_ROWS
                else:  # the call path: levels -> path id
                    levels[2 * L] = depth
                    h = np.int64(-3750763034362895579) ^ depth  # as _path_hash
                    for i in range(depth):
                        h = (h ^ levels[i]) * np.int64(1099511628211)
                        h = (h ^ levels[L + i]) * np.int64(1099511628211)
                    mask = p_slot.size - 1
                    slot = (h ^ (h >> 29)) & mask
                    while True:
                        pid = p_slot[slot]
                        if pid < 0:
                            break
                        same = p_levels[pid, 2 * L] == depth
                        for i in range(depth):
                            if (p_levels[pid, i] != levels[i]
                                    or p_levels[pid, L + i] != levels[L + i]):
                                same = False
                                break
                        if same:
                            path = pid
                            break
                        slot = (slot + 1) & mask
                    if path < 0:
                        np_ = counts[N_PATHS]
                        if 2 * (np_ + 1) > p_slot.size or np_ >= p_levels.shape[0]:
                            status = GROW_PATHS
                        else:
                            p_levels[np_, :] = levels
                            p_slot[slot] = np_
                            path = np_
                            counts[N_PATHS] = np_ + 1
                if status == DONE:  # the call: (type, value) -> call id
                    key = ((np.int64(tok[5 + 2 * entry]) - MPI_TYPE_MIN) << KEY_BITS) | (
                        tok[6 + 2 * entry] & ((np.int64(1) << KEY_BITS) - 1))
                    mask = k_slot.size - 1
                    slot = _hash(key) & mask
                    while True:
                        cid = k_slot[slot]
                        if cid < 0 or k_keys[cid] == key:
                            break
                        slot = (slot + 1) & mask
                    if cid >= 0:
                        call = cid
                    else:
                        nk = counts[N_CALLS]
                        if 2 * (nk + 1) > k_slot.size or nk >= k_keys.size:
                            status = GROW_CALLS
                        else:
                            k_keys[nk] = key
                            k_slot[slot] = nk
                            call = nk
                            counts[N_CALLS] = nk + 1
            for i in range(depth):  # the scratch back to unset
                levels[i] = -1
                levels[L + i] = -1
            if status == DONE:  # apply
                open_row = th_int[tid, 0]
                if th_int[tid, 2] < 0 or when < th_int[tid, 2]:
                    th_int[tid, 2] = when
                if has_exit:
                    if open_row >= 0:
                        r_exit[open_row] = when
                        open_row = -1
                    else:
                        counts[ORPHAN_EXITS] += 1
                        for k in range(n_ctr):
                            th_acc[tid, k] = np.nan
                    th_int[tid, 1] = when
                if entry >= 0 or not (has_exit or open_row >= 0 or th_int[tid, 1] == when):
                    for j in range(nc):
                        k = ck[j]
                        a = th_acc[tid, k]
                        x = np.float64(cv[j])
                        th_acc[tid, k] = x if np.isnan(a) else a + x
                if entry >= 0:
                    if open_row >= 0:
                        counts[UNTERMINATED] += 1
                    r_tid[row] = tid
                    r_entry[row] = when
                    r_exit[row] = -1
                    r_call[row] = call
                    r_path[row] = path
                    r_burst[row] = th_int[tid, 1] if th_int[tid, 1] >= 0 else th_int[tid, 2]
                    if deep:
                        counts[DEEP_LEVELS] += deep
                    if n_entries > 1:
                        counts[EXTRA_ENTRIES] += n_entries - 1
                    o_bytes[row] = size
                    for k in range(n_ctr):
                        o_ctr[k, row] = th_acc[tid, k]
                        th_acc[tid, k] = np.nan
                    open_row = row
                    counts[N_ROWS] = row + 1
                th_int[tid, 0] = open_row
        if err or status != DONE:
            counts[LINE] = line
            counts[POS] = pos
            if err:
                counts[ERR] = err
                return ERROR
            return status
        pos = nxt
    counts[LINE] = line
    counts[POS] = end
    return DONE


# --- the selected rows ---------------------------------------------------------------------
# The columns are written by scattering the rows, read in file order, to their place among
# the selected rows (each output written in a few sequential runs, one per thread; gathering
# them in output order instead reads each row array once per thread, strided), one column
# at a time so that each row array can be dropped as soon as it is used.
@njit(cache=True)
def group_rows(tid, thread_appl, keep, dest):
    """dest[i] = the place of row i among the rows of application ``keep`` ordered by thread,
    stably (counting sort), -1 for the other rows; returns each thread's first place (and
    the total at the end)."""
    n_threads = thread_appl.size
    starts = np.zeros(n_threads + 1, dtype=np.int64)
    for i in range(tid.size):
        if thread_appl[tid[i]] == keep:
            starts[tid[i] + 1] += 1
    for t in range(n_threads):
        starts[t + 1] += starts[t]
    nxt = starts[:n_threads].copy()
    for i in range(tid.size):
        t = tid[i]
        if thread_appl[t] == keep:
            dest[i] = nxt[t]
            nxt[t] += 1
        else:
            dest[i] = -1
    return starts


@njit(cache=True)
def scatter_values(values, dest, out):
    for i in range(dest.size):
        j = dest[i]
        if j >= 0:
            out[j] = values[i]


@njit(cache=True)
def scatter_burst(r_entry, r_burst, dest, tick, out):
    """out[place] = (entry - start of the burst) * tick."""
    for i in range(dest.size):
        j = dest[i]
        if j >= 0:
            out[j] = (r_entry[i] - r_burst[i]) * tick


@njit(cache=True)
def scatter_codes(ids, dest, remap, out):
    for i in range(dest.size):
        j = dest[i]
        if j >= 0:
            out[j] = remap[ids[i]]


@njit(cache=True)
def used_ids(ids, dest, n_ids):
    """Which of the ids 0..n_ids-1 the selected rows use."""
    used = np.zeros(n_ids, dtype=np.bool_)
    for i in range(dest.size):
        if dest[i] >= 0:
            used[ids[i]] = True
    return used


@njit(cache=True)
def fill_threads(starts, thread_rank, thread_local, rank, thread):
    """rank and thread of the grouped rows (thread t's rows are starts[t]:starts[t + 1])."""
    for t in range(starts.size - 1):
        for j in range(starts[t], starts[t + 1]):
            rank[j] = thread_rank[t]
            thread[j] = thread_local[t]


@njit(cache=True)
def entries_sorted(entry, starts):
    """Whether each thread's entry times (grouped rows) never decrease."""
    for t in range(starts.size - 1):
        for j in range(starts[t] + 1, starts[t + 1]):
            if entry[j] < entry[j - 1]:
                return False
    return True


@njit(cache=True)
def attribute(tid, entry, exit_, starts, sorted_, c_int, n_comm, thread_appl, keep, out):
    """Add the size of each message end of a thread of application ``keep`` to the row of its
    thread whose [entry, exit] holds its time: the last row with (tid, entry) <= (tid, time)
    among the grouped rows (tid: their threads, only read when not ``sorted_``). Returns the
    number of message ends left unattributed.

    When every thread's entries are sorted, the row is looked for among the thread's rows
    only (the same row); otherwise by bisection over all rows as if they were sorted."""
    n = entry.size
    missed = 0
    for j in range(n_comm):
        t_id = c_int[j, 0]
        if thread_appl[t_id] != keep:
            continue
        t = c_int[j, 1]
        if sorted_:
            first = starts[t_id]
            lo, hi = first, starts[t_id + 1]
            while lo < hi:
                mid = (lo + hi) // 2
                if entry[mid] <= t:
                    lo = mid + 1
                else:
                    hi = mid
            i = lo - 1 if lo > first else -1
        else:
            lo, hi = 0, n  # last row with (tid, entry) <= (tid, t)
            while lo < hi:
                mid = (lo + hi) // 2
                if tid[mid] < t_id or (tid[mid] == t_id and entry[mid] <= t):
                    lo = mid + 1
                else:
                    hi = mid
            i = lo - 1 if lo > 0 and tid[lo - 1] == t_id else -1
        if i >= 0 and (exit_[i] < 0 or t <= exit_[i]):
            out[i] += np.float64(c_int[j, 2])
        else:
            missed += 1
    return missed


@njit(cache=True)
def times_in_place(entry, exit_, tick):
    """Turn the grouped entry and exit times into time_s and duration_s, in their memory
    (returned as float64 views)."""
    duration = exit_.view(np.float64)
    for j in range(entry.size):
        x = exit_[j]
        duration[j] = (x - entry[j]) * tick if x >= 0 else np.nan
    time_s = entry.view(np.float64)
    for j in range(entry.size):
        time_s[j] = entry[j] * tick
    return time_s, duration
