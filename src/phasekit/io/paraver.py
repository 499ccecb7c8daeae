"""Paraver traces (.prv or .prv.gz, with their .pcf and .row) -> :class:`~phasekit.trace.Trace`.

The format (see ../shared/data/README.md and the Paraver trace format reference):

- line 1: ``#Paraver (date at time):DURATION[_ns]:NODES(CPUS,...):N_APPL:APPL[:APPL]...`` where
  each APPL is ``N_TASKS(THREADS:NODE,...)`` optionally followed by ``,N_COMMUNICATORS``;
  times are in nanoseconds with ``_ns``, else microseconds;
- ``1:cpu:appl:task:thread:begin:end:state`` state records,
  ``2:cpu:appl:task:thread:time:type:value[:type:value]...`` event records,
  ``3:cpu:appl:task:thread:lsend:psend:cpu:appl:task:thread:lrecv:precv:size:tag``
  communication records, ``c:...`` communicator definitions, ``#...`` comments. Tasks and
  threads are 1-based.

What is read (Extrae conventions):

- MPI calls: event types 50000001-50099999; a non-zero value enters the call named in the
  .pcf VALUES of that type, 0 leaves it. One row of the Trace per entry.
- Call path: caller levels 70000001.. (function at level 1 = innermost, 2, 3...) and
  80000001.. (``LINE (FILE, BINARY)``) on the entry record, labelled from the .pcf; levels
  deeper than :data:`MAX_LEVELS` are dropped (counted in ``meta``).
- Collective sizes: 50100001 (sent) and 50100002 (received) on the entry record.
- Point-to-point sizes: communication records; the size counts for the sender's call that
  contains the logical send time and for the receiver's call that contains the logical
  receive time (for MPI_Irecv + MPI_Wait that is the MPI_Irecv).
- Hardware counters: types 42000000-49999999 (names from the .pcf, e.g. PAPI_TOT_INS; without
  a .pcf PAPI_TOT_INS/PAPI_TOT_CYC are recognized by Extrae's numbering, 42000000 + PAPI preset
  index). Extrae writes each counter read as the count since the previous read; the burst's
  count is the sum of the reads after the previous call's exit up to and including the entry
  record. Reads on the exit record, or at the exit time, or inside a call count for the call,
  not the burst.
- State records only give each thread's first time (the start of its first burst).

The parser is a numba kernel over blocks of raw bytes (:data:`CHUNK_BYTES`), keeping only
the output rows: memory grows with the number of MPI calls, not the file. Bad lines raise
:class:`~phasekit.errors.InputError` naming the file, the line and what was expected.
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import os
import re
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd
from numba import njit

from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.trace import PATH_SEP, Trace, empty_calls, make_calls

__all__ = [
    "CHUNK_BYTES",
    "MAX_LEVELS",
    "Pcf",
    "parse_header",
    "parse_pcf",
    "read_paraver",
]

log = logging.getLogger(__name__)

#: Bytes of the .prv decoded per kernel call (our choice: large enough to amortize the call,
#: small enough to keep the memory bounded by the output).
CHUNK_BYTES = 8 << 20
#: Deepest caller level kept (Extrae's default depth is 1-3; deeper levels are rare).
MAX_LEVELS = 16
#: Most threads (all applications) a header may declare (our bound: state is kept per thread).
MAX_THREADS = 1 << 22
MPI_TYPE_MIN, MPI_TYPE_MAX = 50000001, 50099999
SEND_SIZE_TYPE, RECV_SIZE_TYPE = 50100001, 50100002
CALLER_BASE, CALLER_LINE_BASE = 70000000, 80000000
COUNTER_MIN, COUNTER_MAX = 42000000, 49999999
#: Counter names Extrae's numbering gives without a .pcf (42000000 + PAPI preset index).
KNOWN_COUNTERS = {42000050: "PAPI_TOT_INS", 42000059: "PAPI_TOT_CYC"}
_MAX_PAIRS = 1 << 14

# kernel status and error codes
_DONE, _GROW_ROWS, _GROW_COMM, _GROW_COUNTERS, _GROW_PATHS, _ERROR = 0, 1, 2, 3, 4, -1
_ERRORS = {
    1: "expected a record type 1 (state), 2 (event), 3 (communication), c (communicator) or "
       "# (comment) followed by ':'",
    2: "expected a state record 1:cpu:appl:task:thread:begin:end:state (8 integer fields)",
    3: "expected an event record 2:cpu:appl:task:thread:time:type:value[:type:value]... "
       "(integers, type:value pairs)",
    4: "expected a communication record 3:cpu:appl:task:thread:lsend:psend:cpu:appl:task:"
       "thread:lrecv:precv:size:tag (15 integer fields)",
    5: "application, task or thread outside those declared in the header (line 1)",
    6: f"more than {_MAX_PAIRS} type:value pairs on one event record",
    7: "state record ending before it begins",
}
# the row arrays of the kernel, in its argument order
_ROW_ARRAYS = (("tid", np.int32), ("entry", np.int64), ("exit", np.int64), ("type", np.int32),
               ("value", np.int64), ("path", np.int32), ("burst", np.int64))
# counts[] slots shared with the kernel
(_N_ROWS, _N_COMM, _N_CTR, _N_PATHS, _LINE, _POS, _ERR, _UNTERMINATED, _ORPHAN_EXITS,
 _DEEP_LEVELS, _EXTRA_ENTRIES, _N_COUNTS) = range(12)


# --- the kernel ---------------------------------------------------------------------------
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
    """The start of the next line when ``q`` ends a line ('\n', '\r\n' or the end), else -1."""
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
def _skip_line(buf, pos, end):
    while pos < end and buf[pos] != 10:
        pos += 1
    return pos + 1


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
def _scan(buf, start, end, sel, appl_first_task, task_first_thread, th_int, th_acc,
          r_tid, r_entry, r_exit, r_type, r_value, r_path, r_burst, o_ctr, o_bytes, c_int,
          ctr_types, p_slot, p_levels, counts, ptype, pval,
          levels):
    """Parse the complete lines of ``buf[start:end]``; see the module docstring.

    th_int[tid] = (open row, last exit time, first time); th_acc[tid, k] = burst counter sums.
    Rows: r_tid, r_entry, r_exit (-1 while open), r_type and r_value (the MPI event),
    r_path (path id), r_burst (start of the burst), o_bytes, o_ctr[row, k].
    Stops at a line start with a _GROW_* status when an output is full.
    """
    L = levels.size // 2  # levels: L functions, L lines, the depth
    fields = np.zeros(15, dtype=np.int64)
    pos = start
    line = counts[_LINE]
    while pos < end:
        line += 1
        counts[_LINE] = line
        counts[_POS] = pos
        c = buf[pos]
        if c == 10 or c == 13:  # an empty line
            nxt = _line_end(buf, pos, end)
            if nxt < 0:
                counts[_ERR] = 1
                return _ERROR
            pos = nxt
            continue
        if c == 35 or (c == 99 and pos + 1 < end and buf[pos + 1] == 58):  # '#', 'c:'
            pos = _skip_line(buf, pos, end)
            continue
        if pos + 1 >= end or buf[pos + 1] != 58 or c < 49 or c > 51:
            counts[_ERR] = 1
            return _ERROR
        p = pos + 2
        if c == 49:  # state
            q = _fields(buf, p, end, fields, 7)
            nxt = _line_end(buf, q, end) if q >= 0 else -1
            if nxt < 0:
                counts[_ERR] = 2
                return _ERROR
            tid = _thread_id(fields[1], fields[2], fields[3], appl_first_task, task_first_thread)
            if tid < 0:
                counts[_ERR] = 5
                return _ERROR
            if fields[5] < fields[4]:
                counts[_ERR] = 7
                return _ERROR
            if th_int[tid, 2] < 0 or fields[4] < th_int[tid, 2]:
                th_int[tid, 2] = fields[4]
            pos = nxt
            continue
        if c == 51:  # communication
            q = _fields(buf, p, end, fields, 14)
            nxt = _line_end(buf, q, end) if q >= 0 else -1
            if nxt < 0:
                counts[_ERR] = 4
                return _ERROR
            tid_s = _thread_id(fields[1], fields[2], fields[3], appl_first_task,
                               task_first_thread)
            tid_r = _thread_id(fields[7], fields[8], fields[9], appl_first_task,
                               task_first_thread)
            if tid_s < 0 or tid_r < 0:
                counts[_ERR] = 5
                return _ERROR
            if counts[_N_COMM] + 2 > c_int.shape[0]:
                return _GROW_COMM
            nc = counts[_N_COMM]
            if sel == 0 or fields[1] == sel:
                c_int[nc, 0] = tid_s
                c_int[nc, 1] = fields[4]
                c_int[nc, 2] = fields[12]
                nc += 1
            if sel == 0 or fields[7] == sel:
                c_int[nc, 0] = tid_r
                c_int[nc, 1] = fields[10]
                c_int[nc, 2] = fields[12]
                nc += 1
            counts[_N_COMM] = nc
            pos = nxt
            continue
        # event record
        q = _fields(buf, p, end, fields, 5)
        if q < 0 or q >= end or buf[q] != 58:
            counts[_ERR] = 3
            return _ERROR
        tid = _thread_id(fields[1], fields[2], fields[3], appl_first_task, task_first_thread)
        if tid < 0:
            counts[_ERR] = 5
            return _ERROR
        t = fields[4]
        p = q + 1
        npairs = 0
        nxt = -1
        while True:
            if npairs >= ptype.size:
                counts[_ERR] = 6
                return _ERROR
            ty, q, ok = _int(buf, p, end, False)
            if not ok or q >= end or buf[q] != 58:
                counts[_ERR] = 3
                return _ERROR
            va, q, ok = _int(buf, q + 1, end, True)
            if not ok:
                counts[_ERR] = 3
                return _ERROR
            ptype[npairs] = ty
            pval[npairs] = va
            npairs += 1
            nxt = _line_end(buf, q, end)
            if nxt >= 0:
                break
            if buf[q] != 58:
                counts[_ERR] = 3
                return _ERROR
            p = q + 1
        if sel != 0 and fields[1] != sel:
            pos = nxt
            continue
        # pre-scan: what the line holds, and room for it (no state changes before this ends)
        entry = -1
        has_exit = False
        for i in range(npairs):
            ty = ptype[i]
            if MPI_TYPE_MIN <= ty <= MPI_TYPE_MAX:
                if pval[i] != 0:
                    if entry < 0:
                        entry = i
                else:
                    has_exit = True
            elif COUNTER_MIN <= ty <= COUNTER_MAX:
                k = 0
                nk = counts[_N_CTR]
                while k < nk and ctr_types[k] != ty:
                    k += 1
                if k == nk:
                    if nk >= ctr_types.size:
                        return _GROW_COUNTERS
                    ctr_types[nk] = ty
                    counts[_N_CTR] = nk + 1  # harmless if we stop below: the type exists
        path = -1
        if entry >= 0:
            if counts[_N_ROWS] >= r_tid.size:
                return _GROW_ROWS
            levels[:] = -1
            depth = 0
            for i in range(npairs):
                ty = ptype[i]
                if CALLER_BASE < ty < CALLER_BASE + 100:
                    lv = ty - CALLER_BASE
                    if lv <= L:
                        levels[lv - 1] = pval[i]
                        depth = max(depth, lv)
                elif CALLER_LINE_BASE < ty < CALLER_LINE_BASE + 100:
                    lv = ty - CALLER_LINE_BASE
                    if lv <= L:
                        levels[L + lv - 1] = pval[i]
                        depth = max(depth, lv)
            levels[2 * L] = depth
            mask = p_slot.size - 1
            slot = _path_hash(levels, L) & mask
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
                np_ = counts[_N_PATHS]
                if 2 * (np_ + 1) > p_slot.size or np_ >= p_levels.shape[0]:
                    return _GROW_PATHS
                p_levels[np_, :] = levels
                p_slot[slot] = np_
                path = np_
                counts[_N_PATHS] = np_ + 1
        # apply
        open_row = th_int[tid, 0]
        if th_int[tid, 2] < 0 or t < th_int[tid, 2]:
            th_int[tid, 2] = t
        if has_exit:
            if open_row >= 0:
                r_exit[open_row] = t
                open_row = -1
            else:
                counts[_ORPHAN_EXITS] += 1
                for k in range(counts[_N_CTR]):
                    th_acc[tid, k] = np.nan
            th_int[tid, 1] = t
        if entry >= 0 or not (has_exit or open_row >= 0 or th_int[tid, 1] == t):
            for i in range(npairs):
                ty = ptype[i]
                if COUNTER_MIN <= ty <= COUNTER_MAX:
                    k = 0
                    while ctr_types[k] != ty:
                        k += 1
                    a = th_acc[tid, k]
                    v = np.float64(pval[i])
                    th_acc[tid, k] = v if np.isnan(a) else a + v
        if entry >= 0:
            if open_row >= 0:
                counts[_UNTERMINATED] += 1
            row = counts[_N_ROWS]
            r_tid[row] = tid
            r_entry[row] = t
            r_exit[row] = -1
            r_type[row] = ptype[entry]
            r_value[row] = pval[entry]
            r_path[row] = path
            r_burst[row] = th_int[tid, 1] if th_int[tid, 1] >= 0 else th_int[tid, 2]
            size = 0.0
            n_entries = 0
            for i in range(npairs):
                ty = ptype[i]
                if ty == SEND_SIZE_TYPE or ty == RECV_SIZE_TYPE:  # noqa: SIM109 (numba)
                    size += pval[i]
                elif MPI_TYPE_MIN <= ty <= MPI_TYPE_MAX and pval[i] != 0:
                    n_entries += 1
                elif (CALLER_BASE + L < ty < CALLER_BASE + 100
                      or CALLER_LINE_BASE + L < ty < CALLER_LINE_BASE + 100):
                    counts[_DEEP_LEVELS] += 1
            counts[_EXTRA_ENTRIES] += n_entries - 1
            o_bytes[row] = size
            for k in range(counts[_N_CTR]):
                o_ctr[row, k] = th_acc[tid, k]
                th_acc[tid, k] = np.nan
            open_row = row
            counts[_N_ROWS] = row + 1
        th_int[tid, 0] = open_row
        pos = nxt
    counts[_POS] = end
    return _DONE


@njit(cache=True)
def _attribute(r_tid, r_entry, r_exit, c_tid, c_time, c_size, out):
    """Add each message size to the row of its thread whose [entry, exit] holds its time.

    Rows are sorted by (tid, entry). Returns the number of messages left unattributed.
    """
    n = r_tid.size
    missed = 0
    for j in range(c_tid.size):
        tid = c_tid[j]
        t = c_time[j]
        lo, hi = 0, n  # last row with (tid, entry) <= (tid, t)
        while lo < hi:
            mid = (lo + hi) // 2
            if r_tid[mid] < tid or (r_tid[mid] == tid and r_entry[mid] <= t):
                lo = mid + 1
            else:
                hi = mid
        i = lo - 1
        if i >= 0 and r_tid[i] == tid and (r_exit[i] < 0 or t <= r_exit[i]):
            out[i] += c_size[j]
        else:
            missed += 1
    return missed


@njit(cache=True)
def _thread_order(tid, thread_appl, keep):
    """Indices of the rows whose thread is in application ``keep``, stably ordered by thread
    (counting sort)."""
    n_threads = thread_appl.size
    counts = np.zeros(n_threads + 1, dtype=np.int64)
    for i in range(tid.size):
        if thread_appl[tid[i]] == keep:
            counts[tid[i] + 1] += 1
    for t in range(n_threads):
        counts[t + 1] += counts[t]
    order = np.empty(counts[n_threads], dtype=np.int64)
    for i in range(tid.size):
        t = tid[i]
        if thread_appl[t] == keep:
            order[counts[t]] = i
            counts[t] += 1
    return order


@njit(cache=True)
def _columns(r_tid, r_entry, r_exit, r_type, r_value, r_path, r_burst, o_bytes, o_ctr, order,
             n_ctr, n_paths, tick, thread_rank, thread_local):
    """The output columns of the rows ``order`` in one pass (rows as in :func:`_scan`)."""
    n = order.size
    tid = np.empty(n, dtype=np.int32)
    entry = np.empty(n, dtype=np.int64)
    exit_ = np.empty(n, dtype=np.int64)
    rank = np.empty(n, dtype=np.int32)
    thread = np.empty(n, dtype=np.int32)
    time_s = np.empty(n)
    duration = np.empty(n)
    burst = np.empty(n)
    key = np.empty(n, dtype=np.int64)
    path = np.empty(n, dtype=np.int32)
    remap = np.zeros(n_paths + 1, dtype=np.int32)  # path ids in use -> 0, 1, 2...
    for j in range(n):
        remap[r_path[order[j]]] = 1
    used = 0
    for p in range(n_paths + 1):
        if remap[p]:
            remap[p] = used
            used += 1
        else:
            remap[p] = -1
    size = np.empty(n)
    ctr = np.empty((n_ctr, n))
    mask = (np.int64(1) << 44) - 1
    for j in range(n):
        i = order[j]
        t = r_tid[i]
        tid[j] = t
        rank[j] = thread_rank[t]
        thread[j] = thread_local[t]
        e = r_entry[i]
        x = r_exit[i]
        entry[j] = e
        exit_[j] = x
        time_s[j] = e * tick
        duration[j] = (x - e) * tick if x >= 0 else np.nan
        burst[j] = (e - r_burst[i]) * tick
        key[j] = ((np.int64(r_type[i]) - MPI_TYPE_MIN) << 44) | (r_value[i] & mask)
        path[j] = remap[r_path[i]]
        size[j] = o_bytes[i]
        for k in range(n_ctr):
            ctr[k, j] = o_ctr[i, k]
    return tid, entry, exit_, rank, thread, time_s, duration, burst, key, path, remap, size, ctr


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
def _rehash(p_levels, n_paths, p_slot):
    L = p_levels.shape[1] // 2
    mask = p_slot.size - 1
    for pid in range(n_paths):
        slot = _path_hash(p_levels[pid], L) & mask
        while p_slot[slot] >= 0:
            slot = (slot + 1) & mask
        p_slot[slot] = pid


# --- header, .pcf, .row --------------------------------------------------------------------
@dataclass(frozen=True)
class Header:
    """The first line of a .prv."""

    duration: int
    tick_s: float
    tasks: tuple[tuple[int, ...], ...]  # per application: threads of each task
    cpus: tuple[int, ...] = ()


def _split_top(text: str, seps: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch in seps and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


_APPL_RE = re.compile(r"(\d+)\(([^()]*)\)")


def parse_header(line: str, path: str = "") -> Header:
    """Parse the ``#Paraver (...)`` header line; InputError (line 1) when malformed."""
    expected = ("expected '#Paraver (date at time):DURATION_ns:NODES(CPUS,...):N_APPL:"
                "N_TASKS(THREADS:NODE,...)...'")
    line = line.strip()
    if not line.startswith("#Paraver"):
        raise InputError(f"not a Paraver trace: {expected}", path=path, line=1)
    close = line.find("):")
    rest = line[close + 2:] if close >= 0 else ""
    parts = _split_top(rest, ":")
    try:
        ftime = parts[0]
        unit = 1e-9 if ftime.endswith("_ns") else 1e-6
        duration = int(ftime.removesuffix("_ns").removesuffix("_us"))
        cpus = tuple(int(c) for c in re.findall(r"\d+", parts[1]))
        n_appl = int(parts[2])
        items = _split_top(":".join(parts[3:]), ":,")
    except (IndexError, ValueError):
        raise InputError(f"bad header: {expected}", path=path, line=1) from None
    tasks = []
    for item in items:
        match = _APPL_RE.fullmatch(item.strip())
        if match is None:
            if item.strip().isdigit() and tasks:
                continue  # the number of communicators of the application before
            raise InputError(f"bad application list item {item!r} in the header: {expected}",
                             path=path, line=1)
        threads = []
        for spec in match.group(2).split(","):
            nums = spec.split(":")
            if len(nums) != 2 or not all(n.strip().isdigit() for n in nums):
                raise InputError(f"bad task {spec!r} in the header: expected THREADS:NODE",
                                 path=path, line=1)
            threads.append(int(nums[0]))
        if len(threads) != int(match.group(1)) or min(threads) < 1:
            raise InputError(f"application {len(tasks) + 1} declares {match.group(1)} tasks "
                             f"but lists {len(threads)}", path=path, line=1)
        tasks.append(tuple(threads))
    if len(tasks) != n_appl or n_appl < 1:
        raise InputError(f"the header declares {n_appl} applications but lists {len(tasks)}",
                         path=path, line=1)
    n_threads = sum(sum(t) for t in tasks)
    if n_threads > MAX_THREADS:
        raise InputError(f"the header declares {n_threads} threads in all; at most "
                         f"{MAX_THREADS} are supported", path=path, line=1)
    return Header(duration=duration, tick_s=unit, tasks=tuple(tasks), cpus=cpus)


@dataclass
class Pcf:
    """Names of event types and values from a .pcf (empty when there is none)."""

    types: dict[int, str] = field(default_factory=dict)
    values: dict[int, dict[int, str]] = field(default_factory=dict)
    states: dict[int, str] = field(default_factory=dict)


def parse_pcf(path: str | os.PathLike[str]) -> Pcf:
    """Read the EVENT_TYPE blocks (type labels and VALUES) and STATES of a .pcf."""
    pcf = Pcf()
    section = ""
    block: list[int] = []
    with open(path, encoding="utf-8", errors="replace") as file:
        for raw in file:
            line = raw.strip()
            if not line:
                if section in ("values", "types"):
                    section = ""
                continue
            if line == "EVENT_TYPE":
                section, block = "types", []
                continue
            if line == "VALUES" and section == "types":
                section = "values"
                continue
            if line == "STATES":
                section = "states"
                continue
            if line.isupper() and " " not in line:  # another section (STATES_COLOR, ...)
                section = ""
                continue
            if section == "types":
                parts = line.split(None, 2)
                if len(parts) >= 2 and parts[1].isdigit():
                    ty = int(parts[1])
                    block.append(ty)
                    pcf.types[ty] = parts[2].strip() if len(parts) > 2 else parts[1]
            elif section == "values":
                parts = line.split(None, 1)
                if parts and parts[0].lstrip("-").isdigit():
                    label = parts[1].strip() if len(parts) > 1 else parts[0]
                    for ty in block:
                        pcf.values.setdefault(ty, {})[int(parts[0])] = label
            elif section == "states":
                parts = line.split(None, 1)
                if len(parts) == 2 and parts[0].isdigit():
                    pcf.states[int(parts[0])] = parts[1].strip()
    return pcf


def parse_row(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """The names of a .row: ``{"cpu": [...], "node": [...], "thread": [...], ...}``."""
    levels: dict[str, list[str]] = {}
    current: list[str] | None = None
    with open(path, encoding="utf-8", errors="replace") as file:
        for raw in file:
            line = raw.strip()
            match = re.match(r"LEVEL\s+(\S+)\s+SIZE\s+(\d+)", line)
            if match:
                current = levels.setdefault(match.group(1).lower(), [])
            elif line and current is not None:
                current.append(line)
            else:
                current = None
    return levels


_LINE_LABEL = re.compile(r"\s*(\d+)\s+\(([^,()]*),\s*[^()]*\)\s*")
_BARE_LABEL = re.compile(r"\s*\d+\s+\(([^,()]*)\)\s*")


def _line_label(label: str) -> str:
    """``"101 (lulesh-comm.cc, lulesh2.0)"`` -> ``"lulesh-comm.cc:101"``."""
    match = _LINE_LABEL.fullmatch(label)
    if match:
        return f"{match.group(2).strip()}:{match.group(1)}"
    bare = _BARE_LABEL.fullmatch(label)  # "0 (Unresolved)": no file
    return bare.group(1).strip() if bare else label


def _counter_label(label: str) -> str:
    """``"PAPI_TOT_INS ([Instr completed])"`` -> ``"PAPI_TOT_INS"``."""
    return label.split(" (", 1)[0].strip() or label


# --- the reader ---------------------------------------------------------------------------
def _companion(path: Path, suffix: str) -> Path:
    name = path.name
    for ext in (".prv.gz", ".prv"):
        if name.lower().endswith(ext):
            return path.with_name(name[: -len(ext)] + suffix)
    return path.with_name(name + suffix)


def _open(path: Path) -> BinaryIO:
    try:
        file = open(path, "rb")  # noqa: SIM115 - returned to the caller
    except FileNotFoundError:
        raise UsageError(f"no such trace file: {os.fspath(path)!r}") from None
    except OSError as exc:
        raise InputError(f"cannot read the trace: {exc.strerror}", path=os.fspath(path)) from None
    head = file.read(2)
    file.seek(0)
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=file, mode="rb")  # type: ignore[return-value]
    return file


class _Buffers:
    """The kernel's state and outputs; grown by doubling on request."""

    def __init__(self, n_threads: int) -> None:
        self.th_int = np.full((n_threads, 3), -1, dtype=np.int64)
        self.k_cap = 2
        self.th_acc = np.full((n_threads, self.k_cap), np.nan)
        rows = 1 << 14
        self.rows = {name: np.empty(rows, dtype=dtype) for name, dtype in _ROW_ARRAYS}
        self.o_ctr = np.full((rows, self.k_cap), np.nan)  # rows before a counter's first read
        self.o_bytes = np.empty(rows)
        self.c_int = np.empty((1 << 12, 3), dtype=np.int64)
        self.ctr_types = np.full(self.k_cap, -1, dtype=np.int64)
        self.p_slot = np.full(1 << 10, -1, dtype=np.int64)
        self.p_levels = np.empty((1 << 9, 2 * MAX_LEVELS + 1), dtype=np.int64)
        self.counts = np.zeros(_N_COUNTS, dtype=np.int64)
        self.ptype = np.empty(_MAX_PAIRS, dtype=np.int64)
        self.pval = np.empty(_MAX_PAIRS, dtype=np.int64)
        self.levels = np.empty(2 * MAX_LEVELS + 1, dtype=np.int64)

    def reserve(self, rows: int, comm: int = 0) -> None:
        """Room for ``rows`` rows and ``comm`` message ends (never shrinks)."""
        if comm > len(self.c_int):
            c_int = np.empty((comm, 3), dtype=np.int64)
            used = int(self.counts[_N_COMM])
            c_int[:used] = self.c_int[:used]
            self.c_int = c_int
        n = len(self.o_bytes)
        if rows <= n:
            return
        used = int(self.counts[_N_ROWS])
        for name, old in self.rows.items():
            new = np.empty(rows, dtype=old.dtype)
            new[:used] = old[:used]
            self.rows[name] = new
        ctr = np.full((rows, self.k_cap), np.nan)
        ctr[:used] = self.o_ctr[:used]
        self.o_ctr = ctr
        size = np.empty(rows)
        size[:used] = self.o_bytes[:used]
        self.o_bytes = size

    def grow(self, status: int) -> None:
        def more(a: np.ndarray, fill: float | None = None) -> np.ndarray:
            b = np.empty((2 * a.shape[0], *a.shape[1:]), dtype=a.dtype)
            b[: a.shape[0]] = a
            if fill is not None:
                b[a.shape[0]:] = fill
            return b

        if status == _GROW_ROWS:
            self.reserve(len(self.o_bytes) * 3 // 2)
        elif status == _GROW_COMM:
            self.c_int = more(self.c_int)
        elif status == _GROW_COUNTERS:
            k = self.k_cap
            self.k_cap *= 2
            self.ctr_types = np.concatenate([self.ctr_types, np.full(k, -1, dtype=np.int64)])
            self.th_acc = np.concatenate([self.th_acc, np.full((len(self.th_acc), k), np.nan)],
                                         axis=1)
            self.o_ctr = np.concatenate([self.o_ctr, np.full((len(self.o_ctr), k), np.nan)],
                                        axis=1)
        elif status == _GROW_PATHS:
            self.p_levels = more(self.p_levels)
            self.p_slot = np.full(2 * self.p_slot.size, -1, dtype=np.int64)
            _rehash(self.p_levels, int(self.counts[_N_PATHS]), self.p_slot)

    def scan(self, buf: np.ndarray, sel: int, geo: tuple[np.ndarray, np.ndarray]) -> int:
        return int(_scan(buf, int(self.counts[_POS]), buf.size, sel, geo[0], geo[1],
                         self.th_int, self.th_acc, *self.rows.values(), self.o_ctr, self.o_bytes,
                         self.c_int, self.ctr_types, self.p_slot, self.p_levels, self.counts,
                         self.ptype, self.pval, self.levels))


def _error(path: Path, buffers: _Buffers, buf: np.ndarray) -> InputError:
    pos = int(buffers.counts[_POS])
    end = buf[pos:].tobytes().split(b"\n", 1)[0][:80]
    shown = end.decode("utf-8", errors="replace")
    return InputError(f"{_ERRORS.get(int(buffers.counts[_ERR]), 'bad record')}; got {shown!r}",
                      path=os.fspath(path), line=int(buffers.counts[_LINE]))


def _plain_size(path: Path) -> int:
    """The size of an uncompressed file, 0 for a gzip-compressed one."""
    try:
        with open(path, "rb") as file:
            return 0 if file.read(2) == b"\x1f\x8b" else path.stat().st_size
    except OSError:
        return 0


def _read_blocks(path: Path, file: BinaryIO, chunk_bytes: int):
    """Yield numpy byte arrays of whole lines (the last may lack its newline).

    One buffer is reused (fresh memory is what costs most on some machines): each array
    yielded is only valid until the next one is asked for.
    """
    buf = np.empty(max(int(chunk_bytes), 16), dtype=np.uint8)
    filled = 0
    while True:
        if filled == buf.size:  # a line longer than the buffer
            bigger = np.empty(2 * buf.size, dtype=np.uint8)
            bigger[:filled] = buf[:filled]
            buf = bigger
        try:
            n = file.readinto(memoryview(buf)[filled:])  # type: ignore[attr-defined]
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"cannot decompress the trace: {exc}", path=os.fspath(path)) from None
        if not n:
            if filled:
                yield buf[:filled]
            return
        filled += n
        cut, hi = -1, filled
        while hi > 0 and cut < 0:  # the last newline, looked for from the end
            lo = max(0, hi - 65536)
            found = buf[lo:hi].tobytes().rfind(b"\n")
            cut = lo + found if found >= 0 else -1
            hi = lo
        if cut < 0:
            continue
        yield buf[: cut + 1]
        rest = filled - cut - 1
        buf[:rest] = buf[cut + 1: filled]
        filled = rest


def read_paraver(path: str | os.PathLike[str], *, application: int | None = None,
                 pcf: str | os.PathLike[str] | None = None,
                 row: str | os.PathLike[str] | None = None,
                 chunk_bytes: int = CHUNK_BYTES) -> Trace:
    """Read the MPI calls of a Paraver trace (.prv or .prv.gz) into a Trace.

    ``application`` (1-based, as in the trace) selects the application; by default the one
    with the most MPI calls (the LULESH fixture's application 1 are the MPI ranks,
    application 2 uncore sampling tasks). ``pcf`` and ``row`` default to the files next to
    the trace with the same stem. Without a .pcf the calls, callers and counters keep their
    numeric ids, with a :class:`~phasekit.errors.PhasekitWarning` and
    ``meta["pcf"] = None``. A trace without MPI calls gives an empty Trace with an
    ``explanation``.

    Example::

        trace = read_paraver("lulesh.prv")
        trace.call_counts()
    """
    path = Path(path)
    pcf_path = Path(pcf) if pcf is not None else _companion(path, ".pcf")
    row_path = Path(row) if row is not None else _companion(path, ".row")
    meta: dict[str, Any] = {}
    sources = [os.fspath(path)]
    with _open(path) as file:
        try:
            first = file.readline(1 << 20)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"cannot decompress the trace: {exc}", path=os.fspath(path)) from None
        header = parse_header(first.decode("utf-8", errors="replace"), os.fspath(path))
        if application is not None and not 1 <= int(application) <= len(header.tasks):
            raise UsageError(f"application {application} is not in {os.fspath(path)!r}: it "
                             f"has applications 1 to {len(header.tasks)}")
        counts_per_appl = [len(t) for t in header.tasks]
        appl_first_task = np.concatenate([[0], np.cumsum(counts_per_appl)]).astype(np.int64)
        threads = [n for appl in header.tasks for n in appl]
        task_first_thread = np.concatenate([[0], np.cumsum(threads)]).astype(np.int64)
        geo = (appl_first_task, task_first_thread)
        buffers = _Buffers(int(task_first_thread[-1]))
        buffers.counts[_LINE] = 1
        sel = int(application) if application is not None else 0
        total = _plain_size(path)
        done = len(first)
        for buf in _read_blocks(path, file, chunk_bytes):
            buffers.counts[_POS] = 0
            while True:
                status = buffers.scan(buf, sel, geo)
                if status == _DONE:
                    break
                if status == _ERROR:
                    raise _error(path, buffers, buf)
                buffers.counts[_LINE] -= 1  # the line is read again
                buffers.grow(status)
            if done == len(first) and total and buffers.counts[_N_ROWS]:
                # after the first block: room for the whole file at the same density
                scale = total / (done + buf.size) * 1.05
                buffers.reserve(int(buffers.counts[_N_ROWS] * scale) + 1024,
                                int(buffers.counts[_N_COMM] * scale) + 1024)
            done += buf.size
        n_lines = int(buffers.counts[_LINE])

    counts = buffers.counts
    n_rows = int(counts[_N_ROWS])
    tid = buffers.rows["tid"][:n_rows]
    # thread id -> application, task, thread
    thread_task = np.repeat(np.arange(len(threads)), threads)
    thread_local = np.arange(int(task_first_thread[-1])) - task_first_thread[thread_task]
    task_appl = np.repeat(np.arange(len(header.tasks)), counts_per_appl)
    thread_appl = task_appl[thread_task] + 1
    per_thread = np.bincount(tid, minlength=len(thread_task))
    per_appl = np.bincount(thread_appl, weights=per_thread,
                           minlength=len(header.tasks) + 1)[1:].astype(np.int64)
    if application is None:
        application = int(np.argmax(per_appl)) + 1
        if len(header.tasks) > 1:
            meta["applications"] = {str(a + 1): int(n) for a, n in enumerate(per_appl)}
    application = int(application)

    if pcf_path.is_file():
        names = parse_pcf(pcf_path)
        sources.append(os.fspath(pcf_path))
        meta["pcf"] = os.fspath(pcf_path)
    else:
        names = Pcf()
        meta["pcf"] = None
        meta["note"] = f"no .pcf ({os.fspath(pcf_path)}): calls, callers and counters keep " \
                       "their numeric ids"
        warnings.warn(f"{os.fspath(path)}: no .pcf found at {os.fspath(pcf_path)}; calls, "
                      "callers and counters keep their numeric ids", PhasekitWarning,
                      stacklevel=2)
    if row_path.is_file():
        sources.append(os.fspath(row_path))
        with contextlib.suppress(OSError):
            meta["row"] = {k: v for k, v in parse_row(row_path).items() if k in ("node",)}

    # the selected application's rows, ordered by thread (stable: program order)
    order = _thread_order(tid, thread_appl, application)
    n_ctr = int(counts[_N_CTR])
    tick = header.tick_s
    first_task = int(appl_first_task[application - 1])
    (tid, entry, exit_, rank, thread, time_s, duration, burst, key, path_codes, remap, bytes_,
     ctr) = _columns(*buffers.rows.values(), buffers.o_bytes, buffers.o_ctr, order, n_ctr,
                     int(counts[_N_PATHS]), tick,
                     (thread_task - first_task).astype(np.int64), thread_local.astype(np.int64))
    comm = buffers.c_int[: int(counts[_N_COMM])]
    comm = comm[task_appl[thread_task[comm[:, 0]]] + 1 == application] if len(comm) else comm
    missed = _attribute(tid, entry, exit_, comm[:, 0].copy(), comm[:, 1].copy(),
                        comm[:, 2].astype(np.float64), bytes_)
    del tid, entry, exit_, order, comm
    buffers.rows, buffers.o_ctr, buffers.o_bytes = {}, buffers.o_ctr[:0], buffers.o_bytes[:0]

    # names: calls by (type, value), paths by their dense ids
    call_codes, call_keys = pd.factorize(key, sort=True)
    del key
    call_labels = []
    for k in call_keys:
        ty, va = int(k >> 44) + MPI_TYPE_MIN, int(k & ((1 << 44) - 1))
        call_labels.append(names.values.get(ty, {}).get(va, f"{ty}:{va}"))
    unnamed = [lab for lab in call_labels if ":" in lab and lab.split(":")[0].isdigit()]
    if unnamed and meta["pcf"] is not None:
        meta["unnamed_calls"] = unnamed
    path_ids = np.flatnonzero(remap >= 0)
    fn_labels, line_labels, site_labels = [], [], []
    for pid in path_ids:
        lv = buffers.p_levels[int(pid)]
        fns, lines = [], []
        for level in range(MAX_LEVELS, 0, -1):  # outermost first
            fv, lvv = int(lv[level - 1]), int(lv[MAX_LEVELS + level - 1])
            if fv > 0:
                table = names.values.get(CALLER_BASE + level, {})
                fns.append(table.get(fv, str(fv)))
            if lvv > 0:
                table = names.values.get(CALLER_LINE_BASE + level, {})
                lines.append(_line_label(table[lvv]) if lvv in table else str(lvv))
        fn_labels.append(PATH_SEP.join(fns))
        line_labels.append(PATH_SEP.join(lines))
        inner = int(lv[MAX_LEVELS])
        table = names.values.get(CALLER_LINE_BASE + 1, {})
        site_labels.append("" if inner <= 0 else
                           (_line_label(table[inner]) if inner in table else str(inner)))

    # counters read on the selected application's calls
    n_ctr = int(counts[_N_CTR])
    counters: dict[str, np.ndarray] = {}
    for k in range(n_ctr):
        column = ctr[k]
        if not np.isfinite(column).any():
            continue
        ty = int(buffers.ctr_types[k])
        name = (_counter_label(names.types[ty]) if ty in names.types
                else KNOWN_COUNTERS.get(ty, f"counter_{ty}"))
        while name in counters:
            name += f"_{ty}"
        counters[name] = column

    for key, slot in (("unterminated_calls", _UNTERMINATED), ("exits_without_entry",
                      _ORPHAN_EXITS), ("caller_levels_dropped", _DEEP_LEVELS),
                      ("extra_call_entries", _EXTRA_ENTRIES)):
        if counts[slot]:
            meta[key] = int(counts[slot])
    if missed:
        meta["messages_outside_calls"] = int(missed)
    meta["lines"] = n_lines
    meta["time_unit_s"] = tick
    ranks_threads = header.tasks[application - 1]
    explanation = ""
    if len(rank) == 0:
        explanation = (f"no MPI call events (types {MPI_TYPE_MIN}-{MPI_TYPE_MAX}) in "
                       f"application {application} of {os.fspath(path)}")
        log.info(explanation)
        frame = empty_calls()
        counter_names: tuple[str, ...] = ()
    else:
        frame, counter_names = make_calls(
            rank=rank, thread=thread, time_s=time_s, duration_s=duration,
            call=(call_codes, call_labels), call_path=(path_codes, fn_labels),
            call_lines=(path_codes, line_labels), call_site=(path_codes, site_labels),
            bytes=bytes_, burst_duration_s=burst, counters=counters)
    return Trace(calls=frame, n_ranks=len(ranks_threads), threads_per_rank=ranks_threads,
                 duration_s=header.duration * tick, counters=counter_names,
                 sources=tuple(sources), application=application, format="paraver",
                 explanation=explanation, meta=meta)
