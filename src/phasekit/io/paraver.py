"""Paraver traces (.prv or .prv.gz, with their .pcf and .row) -> :class:`~phasekit.trace.Trace`.

The format (see the Paraver trace format reference):

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
  80000001.. (``LINE (FILE, BINARY)``) on the entry record, labelled from the .pcf as the
  source names them (:mod:`phasekit.io.symbols`: Extrae's abbreviations expanded, Fortran and
  C++ symbols demangled, sites ``FILE:LINE``); levels deeper than :data:`MAX_LEVELS` are
  dropped (counted in ``meta``).
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
- Counters sampled on their own: the counter reads of applications without MPI calls (Extrae's
  "uncore" applications, whose tasks read DRAM counters on a timer; or a program without MPI)
  are the Trace's
  :attr:`~phasekit.trace.Trace.samples`, one row per read (time, task, counter, count since
  the task's previous read), whichever application is selected. They are found after the
  scan (those threads' counters add up to something) and read in a second pass over the file
  that keeps only those applications' event records (a regular expression per block, the
  fields parsed by NumPy): a trace without them costs nothing more. Threads without MPI calls
  inside an MPI application (OpenMP workers) are not read so. ``meta["rank_nodes"]`` names the
  node of each rank when the trace spans several nodes (header and .row).

The parser is a C kernel over blocks of raw bytes (:data:`CHUNK_BYTES`; ``_paraver.c``, which
replaced numba kernels so that a command loads no numba), keeping only the output rows:
memory grows with the number of MPI calls, not the file. Lines of the usual form are read 8
bytes at a time, the others byte by byte (the same values, the same errors). The columns are
then written one at a time in rank order, each row array dropped once used, so that the rows
and the columns are not all in memory at once. Bad lines raise
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

from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io import _paraver as _k
from phasekit.io.inputs import input_file
from phasekit.io.symbols import function_name, site_label
from phasekit.trace import PATH_SEP, CounterSamples, Trace, empty_arrays, make_arrays

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
MPI_TYPE_MIN, MPI_TYPE_MAX = _k.MPI_TYPE_MIN, _k.MPI_TYPE_MAX
SEND_SIZE_TYPE, RECV_SIZE_TYPE = _k.SEND_SIZE_TYPE, _k.RECV_SIZE_TYPE
CALLER_BASE, CALLER_LINE_BASE = _k.CALLER_BASE, _k.CALLER_LINE_BASE
COUNTER_MIN, COUNTER_MAX = _k.COUNTER_MIN, _k.COUNTER_MAX
#: Counter names Extrae's numbering gives without a .pcf (42000000 + PAPI preset index).
KNOWN_COUNTERS = {42000050: "PAPI_TOT_INS", 42000059: "PAPI_TOT_CYC"}
_MAX_PAIRS = _k.MAX_PAIRS

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
_ROW_ARRAYS = (("tid", np.int32), ("entry", np.int64), ("exit", np.int64), ("call", np.int32),
               ("path", np.int32), ("burst", np.int64), ("bytes", np.float64))


# --- header, .pcf, .row --------------------------------------------------------------------
@dataclass(frozen=True)
class Header:
    """The first line of a .prv."""

    duration: int
    tick_s: float
    tasks: tuple[tuple[int, ...], ...]  # per application: threads of each task
    cpus: tuple[int, ...] = ()
    nodes: tuple[tuple[int, ...], ...] = ()  # per application: the node of each task (1-based)


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
    tasks, nodes = [], []
    for item in items:
        match = _APPL_RE.fullmatch(item.strip())
        if match is None:
            if item.strip().isdigit() and tasks:
                continue  # the number of communicators of the application before
            raise InputError(f"bad application list item {item!r} in the header: {expected}",
                             path=path, line=1)
        threads, task_nodes = [], []
        for spec in match.group(2).split(","):
            nums = spec.split(":")
            if len(nums) != 2 or not all(n.strip().isdigit() for n in nums):
                raise InputError(f"bad task {spec!r} in the header: expected THREADS:NODE",
                                 path=path, line=1)
            threads.append(int(nums[0]))
            task_nodes.append(int(nums[1]))
        if len(threads) != int(match.group(1)) or min(threads) < 1:
            raise InputError(f"application {len(tasks) + 1} declares {match.group(1)} tasks "
                             f"but lists {len(threads)}", path=path, line=1)
        tasks.append(tuple(threads))
        nodes.append(tuple(task_nodes))
    if len(tasks) != n_appl or n_appl < 1:
        raise InputError(f"the header declares {n_appl} applications but lists {len(tasks)}",
                         path=path, line=1)
    n_threads = sum(sum(t) for t in tasks)
    if n_threads > MAX_THREADS:
        raise InputError(f"the header declares {n_threads} threads in all; at most "
                         f"{MAX_THREADS} are supported", path=path, line=1)
    return Header(duration=duration, tick_s=unit, tasks=tuple(tasks), cpus=cpus,
                  nodes=tuple(nodes))


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


class _Inflater:
    """A gzip stream (members one after the other, zero padding between them allowed, as
    :class:`gzip.GzipFile` reads them) decompressed into a caller's buffer: ``readinto``
    without GzipFile's intermediate buffers (a quarter faster here)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.inflate = zlib.decompressobj(31)
        self.data = b""
        self.done = False

    def _more(self) -> bytes:
        return self.raw.read(1 << 20)

    def readinto(self, view: memoryview) -> int:
        while not self.done:
            if self.inflate.eof:  # the end of a member: another one, or the end
                rest = self.inflate.unused_data  # (all the input left: unconsumed_tail too)
                while True:
                    rest = rest.lstrip(b"\x00")
                    if len(rest) >= 2:
                        break
                    more = self._more()
                    if not more:
                        break
                    rest += more
                if not rest:
                    self.done = True
                    break
                if rest[:2] != b"\x1f\x8b":
                    raise gzip.BadGzipFile(f"Not a gzipped file ({rest[:2]!r})")
                self.inflate = zlib.decompressobj(31)
                self.data = rest
            if not self.data:
                self.data = self._more()
                if not self.data:
                    raise EOFError("Compressed file ended before the end-of-stream marker was "
                                   "reached")
            out = self.inflate.decompress(self.data, len(view))
            self.data = self.inflate.unconsumed_tail
            if out:
                view[: len(out)] = out
                return len(out)
        return 0

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> _Inflater:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open(path: Path) -> tuple[BinaryIO | _Inflater, int]:
    """The trace's bytes (decompressed when gzip-compressed), and its uncompressed size when
    known or guessed (0 when not)."""
    input_file(path, "a Paraver trace (.prv)")
    try:
        file = open(path, "rb")  # noqa: SIM115 - returned to the caller
    except OSError as exc:
        raise InputError(f"cannot read the trace: {exc.strerror}", path=os.fspath(path)) from None
    try:
        head = file.read(2)
        size = os.fstat(file.fileno()).st_size
        if head != b"\x1f\x8b":
            file.seek(0)
            return file, size
        # gzip keeps the uncompressed size modulo 2**32 of its last member at the end: a
        # guess of the size, for reserving the outputs (not trusted when below the file's)
        file.seek(max(0, size - 4))
        tail = file.read(4)
        file.seek(0)
        guess = int.from_bytes(tail, "little") if len(tail) == 4 else 0
        return _Inflater(file), (guess if guess > size else 0)
    except OSError as exc:
        file.close()
        raise InputError(f"cannot read the trace: {exc.strerror}", path=os.fspath(path)) from None


class _Buffers:
    """The kernel's state and outputs; grown on request."""

    def __init__(self, n_threads: int) -> None:
        self.th_int = np.full((n_threads, 3), -1, dtype=np.int64)
        self.k_cap = 2
        self.th_acc = np.full((n_threads, self.k_cap), np.nan)
        rows = 1 << 14
        self.rows = {name: np.empty(rows, dtype=dtype) for name, dtype in _ROW_ARRAYS}
        self.o_ctr = np.empty((self.k_cap, rows))  # [counter, row]; NaN written by the kernel
        self.c_int = np.empty((1 << 12, 3), dtype=np.int64)
        self.ctr_types = np.full(self.k_cap, -1, dtype=np.int64)
        self.p_slot = np.full(1 << 10, -1, dtype=np.int64)
        self.p_levels = np.empty((1 << 9, 2 * MAX_LEVELS + 1), dtype=np.int64)
        self.k_slot = np.full(1 << 6, -1, dtype=np.int64)
        self.k_keys = np.empty(1 << 5, dtype=np.int64)
        self.counts = np.zeros(_k.N_COUNTS, dtype=np.int64)
        self.tok = np.empty(5 + 2 * _MAX_PAIRS, dtype=np.int64)
        self.ck = np.empty(_MAX_PAIRS, dtype=np.int64)
        self.cv = np.empty(_MAX_PAIRS, dtype=np.int64)
        self.levels = np.full(2 * MAX_LEVELS + 1, -1, dtype=np.int64)

    @property
    def capacity(self) -> int:
        return len(self.rows["tid"])

    def reserve(self, rows: int, comm: int = 0) -> None:
        """Room for ``rows`` rows and ``comm`` message ends (never shrinks; only the used part
        is copied, the rest is left untouched: no memory until written)."""
        if comm > len(self.c_int):
            c_int = np.empty((comm, 3), dtype=np.int64)
            used = int(self.counts[_k.N_COMM])
            c_int[:used] = self.c_int[:used]
            self.c_int = c_int
        if rows <= self.capacity:
            return
        used = int(self.counts[_k.N_ROWS])
        for name, old in self.rows.items():
            new = np.empty(rows, dtype=old.dtype)
            new[:used] = old[:used]
            self.rows[name] = new
            del old, new
        n_ctr = int(self.counts[_k.N_CTR])
        ctr = np.empty((self.k_cap, rows))
        ctr[:n_ctr, :used] = self.o_ctr[:n_ctr, :used]
        self.o_ctr = ctr

    def grow(self, status: int) -> None:
        def more(a: np.ndarray, fill: float | None = None) -> np.ndarray:
            b = np.empty((2 * a.shape[0], *a.shape[1:]), dtype=a.dtype)
            b[: a.shape[0]] = a
            if fill is not None:
                b[a.shape[0]:] = fill
            return b

        if status == _k.GROW_ROWS:
            self.reserve(self.capacity * 3 // 2)
        elif status == _k.GROW_COMM:
            self.reserve(0, 2 * len(self.c_int))
        elif status == _k.GROW_COUNTERS:
            k = self.k_cap
            self.k_cap *= 2
            self.ctr_types = more(self.ctr_types, -1)
            self.th_acc = np.concatenate([self.th_acc, np.full((len(self.th_acc), k), np.nan)],
                                         axis=1)
            ctr = np.empty((self.k_cap, self.capacity))
            used = int(self.counts[_k.N_ROWS])
            ctr[:k, :used] = self.o_ctr[:, :used]
            self.o_ctr = ctr
        elif status == _k.GROW_PATHS:
            self.p_levels = more(self.p_levels)
            self.p_slot = np.full(2 * self.p_slot.size, -1, dtype=np.int64)
            _k.rehash_paths(self.p_levels, int(self.counts[_k.N_PATHS]), self.p_slot)
        elif status == _k.GROW_CALLS:
            self.k_keys = more(self.k_keys)
            self.k_slot = np.full(2 * self.k_slot.size, -1, dtype=np.int64)
            _k.rehash_calls(self.k_keys, int(self.counts[_k.N_CALLS]), self.k_slot)

    def scan(self, buf: np.ndarray, end: int, sel: int,
             geo: tuple[np.ndarray, np.ndarray]) -> int:
        return int(_k.scan(buf, int(self.counts[_k.POS]), end, sel, geo[0], geo[1],
                           self.th_int, self.th_acc, *self.rows.values(), self.o_ctr,
                           self.c_int, self.ctr_types, self.p_slot, self.p_levels, self.k_slot,
                           self.k_keys, self.counts, self.tok, self.ck, self.cv, self.levels))


def _error(path: Path, buffers: _Buffers, buf: np.ndarray, end: int) -> InputError:
    pos = int(buffers.counts[_k.POS])
    got = buf[pos:end].tobytes().split(b"\n", 1)[0][:80]
    shown = got.decode("utf-8", errors="replace")
    return InputError(f"{_ERRORS.get(int(buffers.counts[_k.ERR]), 'bad record')}; got {shown!r}",
                      path=os.fspath(path), line=int(buffers.counts[_k.LINE]))


class _Blocks:
    """The trace's bytes as blocks of whole lines in one reused buffer (fresh memory is what
    costs most on some machines), with :data:`_k.PAD` readable bytes after each block for the
    kernel's 8-byte reads."""

    def __init__(self, path: Path, file: BinaryIO | _Inflater, chunk_bytes: int) -> None:
        self.path = path
        self.file = file
        self.buf = np.empty(max(int(chunk_bytes), 16) + _k.PAD, dtype=np.uint8)
        self.filled = 0
        self.eof = False

    def _fill(self) -> int:
        """Read more after the ``filled`` bytes (doubling the buffer when full)."""
        room = self.buf.size - _k.PAD
        if self.filled == room:  # a line longer than the buffer
            bigger = np.empty(2 * room + _k.PAD, dtype=np.uint8)
            bigger[: self.filled] = self.buf[: self.filled]
            self.buf = bigger
            room = self.buf.size - _k.PAD
        try:
            n = self.file.readinto(memoryview(self.buf)[self.filled: room])  # type: ignore[attr-defined]
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"cannot decompress the trace: {exc}",
                             path=os.fspath(self.path)) from None
        self.eof = not n
        self.filled += n
        return n

    def _drop(self, n: int) -> None:
        rest = self.filled - n
        self.buf[:rest] = self.buf[n: self.filled]
        self.filled = rest

    def first_line(self, limit: int = 1 << 20) -> bytes:
        """The first line (at most ``limit`` bytes, as ``readline(limit)``)."""
        while True:
            found = self.buf[: min(self.filled, limit)].tobytes().find(b"\n")
            if found >= 0 or self.filled >= limit or (not self._fill() and self.eof):
                break
        cut = found + 1 if found >= 0 else min(self.filled, limit)
        line = self.buf[:cut].tobytes()
        self._drop(cut)
        return line

    def __iter__(self):
        """Yield (buffer, end): ``buffer[:end]`` whole lines (the last may lack its newline).
        Each is only valid until the next one is asked for."""
        while True:
            if not self.eof:
                self._fill()
            if self.eof:
                if self.filled:
                    yield self.buf, self.filled
                    self.filled = 0
                return
            cut, hi = -1, self.filled
            while hi > 0 and cut < 0:  # the last newline, looked for from the end
                lo = max(0, hi - 65536)
                found = self.buf[lo:hi].tobytes().rfind(b"\n")
                cut = lo + found if found >= 0 else -1
                hi = lo
            if cut < 0:
                continue
            yield self.buf, cut + 1
            self._drop(cut + 1)


def _grouped(values: np.ndarray, dest: np.ndarray, n: int) -> np.ndarray:
    """``values`` of the rows at their places (``dest``) among the ``n`` selected rows."""
    out = np.empty(n, dtype=values.dtype)
    _k.scatter_values(values, dest, out)
    return out


def _codes_dtype(n: int) -> type:
    """The smallest integer type for the codes of ``n`` categories (pandas' own choice)."""
    return np.int8 if n < 1 << 7 else np.int16 if n < 1 << 15 else np.int32


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
    file, total = _open(path)
    with file:
        blocks = _Blocks(path, file, chunk_bytes)
        first = blocks.first_line()
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
        buffers.counts[_k.LINE] = 1
        sel = int(application) if application is not None else 0
        done = len(first)
        for buf, end in blocks:
            buffers.counts[_k.POS] = 0
            while True:
                status = buffers.scan(buf, end, sel, geo)
                if status == _k.DONE:
                    break
                if status == _k.ERROR:
                    raise _error(path, buffers, buf, end)
                buffers.counts[_k.LINE] -= 1  # the line is read again
                buffers.grow(status)
            if done == len(first) and total and buffers.counts[_k.N_ROWS]:
                # after the first block: room for the whole file at the same density
                scale = total / (done + end) * 1.05
                buffers.reserve(int(buffers.counts[_k.N_ROWS] * scale) + 1024,
                                int(buffers.counts[_k.N_COMM] * scale) + 1024)
            done += end
        n_lines = int(buffers.counts[_k.LINE])
        del blocks  # the file's text (and the loop's last block, when there was one)
        buf = None

    counts = buffers.counts
    n_rows = int(counts[_k.N_ROWS])
    rows = {name: array[:n_rows] for name, array in buffers.rows.items()}
    o_bytes = rows.pop("bytes")
    o_ctr = buffers.o_ctr[:, :n_rows]
    buffers.rows = {}
    tid = rows["tid"]
    # thread id -> application, task, thread
    thread_task = np.repeat(np.arange(len(threads)), threads)
    thread_local = np.arange(int(task_first_thread[-1])) - task_first_thread[thread_task]
    task_appl = np.repeat(np.arange(len(header.tasks)), counts_per_appl)
    thread_appl = (task_appl[thread_task] + 1).astype(np.int64)
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

    # the selected application's rows, ordered by thread (stable: program order); each
    # column is written in that order and its row array dropped, so that the rows and the
    # columns are never all in memory at once; message sizes go to their calls
    dest = np.empty(n_rows, dtype=np.int32 if n_rows < 2**31 - 1 else np.int64)
    starts = np.zeros(len(thread_appl) + 1, dtype=np.int64)
    _k.group_rows(tid, thread_appl, application, dest, starts)
    n = int(starts[-1])
    burst = np.empty(n)
    _k.scatter_burst(rows["entry"], rows.pop("burst"), dest, header.tick_s, burst)
    exit_ = _grouped(rows.pop("exit"), dest, n)
    entry = _grouped(rows.pop("entry"), dest, n)
    bytes_ = _grouped(o_bytes, dest, n)
    del o_bytes
    sorted_ = bool(_k.entries_sorted(entry, starts))
    g_tid = np.empty(0, dtype=np.int32) if sorted_ else _grouped(tid, dest, n)
    missed = _k.attribute(g_tid, entry, exit_, starts, sorted_, buffers.c_int,
                          int(counts[_k.N_COMM]), thread_appl, application, bytes_)
    buffers.c_int = buffers.c_int[:0]
    del g_tid, tid
    rows.pop("tid")
    _k.times_in_place(entry, exit_, header.tick_s)  # in their memory, as float64
    time_s, duration = entry.view(np.float64), exit_.view(np.float64)
    del entry, exit_
    rank = np.empty(n, dtype=np.int32)
    thread = np.empty(n, dtype=np.int32)
    first_task = int(appl_first_task[application - 1])
    _k.fill_threads(starts, (thread_task - first_task).astype(np.int32),
                    thread_local.astype(np.int32), rank, thread)

    # calls: codes in the order of their (type, value) keys
    call_ids = rows.pop("call")
    n_calls = int(counts[_k.N_CALLS])
    used = np.zeros(n_calls, dtype=np.bool_)
    _k.used_ids(call_ids, dest, used)
    used = np.flatnonzero(used)
    keys = buffers.k_keys[used]
    used = used[np.argsort(keys, kind="stable")]
    remap = np.full(n_calls, -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    call_codes = np.empty(n, dtype=_codes_dtype(len(used)))
    _k.scatter_codes(call_ids, dest, remap, call_codes)
    del call_ids
    call_labels = []
    for k in buffers.k_keys[used]:
        ty, va = int(k >> _k.KEY_BITS) + MPI_TYPE_MIN, int(k & ((1 << _k.KEY_BITS) - 1))
        call_labels.append(names.values.get(ty, {}).get(va, f"{ty}:{va}"))
    unnamed = [lab for lab in call_labels if ":" in lab and lab.split(":")[0].isdigit()]
    if unnamed and meta["pcf"] is not None:
        meta["unnamed_calls"] = unnamed

    # paths: codes in the order of their ids
    path_ids = rows.pop("path")
    n_paths = int(counts[_k.N_PATHS])
    used = np.zeros(n_paths, dtype=np.bool_)
    _k.used_ids(path_ids, dest, used)
    used = np.flatnonzero(used)
    remap = np.full(n_paths, -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    path_codes = np.empty(n, dtype=_codes_dtype(len(used)))
    _k.scatter_codes(path_ids, dest, remap, path_codes)
    del path_ids
    fn_labels, line_labels, site_labels = [], [], []
    for pid in used:
        lv = buffers.p_levels[int(pid)]
        fns, lines = [], []
        for level in range(MAX_LEVELS, 0, -1):  # outermost first
            fv, lvv = int(lv[level - 1]), int(lv[MAX_LEVELS + level - 1])
            if fv > 0:
                table = names.values.get(CALLER_BASE + level, {})
                fns.append(function_name(table[fv]) if fv in table else str(fv))
            if lvv > 0:
                table = names.values.get(CALLER_LINE_BASE + level, {})
                lines.append(site_label(table[lvv]) if lvv in table else str(lvv))
        fn_labels.append(PATH_SEP.join(fns))
        line_labels.append(PATH_SEP.join(lines))
        inner = int(lv[MAX_LEVELS])
        table = names.values.get(CALLER_LINE_BASE + 1, {})
        site_labels.append("" if inner <= 0 else
                           (site_label(table[inner]) if inner in table else str(inner)))

    # counters read on the selected application's calls
    counters: dict[str, np.ndarray] = {}
    for k in range(int(counts[_k.N_CTR])):
        column = np.empty(n)
        _k.scatter_values(o_ctr[k], dest, column)
        if not np.isfinite(column).any():
            continue
        ty = int(buffers.ctr_types[k])
        name = _counter_name(ty, names)
        while name in counters:
            name += f"_{ty}"
        counters[name] = column
    del o_ctr, dest
    buffers.o_ctr = buffers.o_ctr[:, :0]

    for key, slot in (("unterminated_calls", _k.UNTERMINATED), ("exits_without_entry",
                      _k.ORPHAN_EXITS), ("caller_levels_dropped", _k.DEEP_LEVELS),
                      ("extra_call_entries", _k.EXTRA_ENTRIES)):
        if counts[slot]:
            meta[key] = int(counts[slot])
    if missed:
        meta["messages_outside_calls"] = int(missed)
    meta["lines"] = n_lines
    meta["time_unit_s"] = header.tick_s
    ranks_threads = header.tasks[application - 1]
    node_names = _node_names(header, meta.get("row"))
    if len(header.cpus) > 1:  # several nodes: which one each rank ran on
        meta["rank_nodes"] = [node_names(node) for node in header.nodes[application - 1]]
    # counters sampled by applications without MPI calls: their threads' reads add up
    n_ctr = int(counts[_k.N_CTR])
    sampled = (per_appl[thread_appl - 1] == 0) & (per_thread == 0)
    if n_ctr:
        sampled &= np.isfinite(buffers.th_acc[:, :n_ctr]).any(axis=1)
    else:
        sampled[:] = False
    samples = None
    if sampled.any():
        samples = _read_samples(path, header, sorted({int(a) for a in thread_appl[sampled]}),
                                names, node_names, chunk_bytes)
    explanation = ""
    if n == 0:
        explanation = (f"no MPI call events (types {MPI_TYPE_MIN}-{MPI_TYPE_MAX}) in "
                       f"application {application} of {os.fspath(path)}")
        log.info(explanation)
        calls = empty_arrays()
        counter_names: tuple[str, ...] = ()
    else:
        calls, counter_names = make_arrays(
            rank=rank, thread=thread, time_s=time_s, duration_s=duration,
            call=(call_codes, call_labels), call_path=(path_codes, fn_labels),
            call_lines=(path_codes, line_labels), call_site=(path_codes, site_labels),
            bytes=bytes_, burst_duration_s=burst, counters=counters)
    return Trace(calls=calls, n_ranks=len(ranks_threads), threads_per_rank=ranks_threads,
                 duration_s=header.duration * header.tick_s, counters=counter_names,
                 sources=tuple(sources), application=application, format="paraver",
                 explanation=explanation, meta=meta, samples=samples)


def _counter_name(ty: int, names: Pcf) -> str:
    """A counter's name: its .pcf label, else Extrae's numbering, else ``counter_TYPE``."""
    return (_counter_label(names.types[ty]) if ty in names.types
            else KNOWN_COUNTERS.get(ty, f"counter_{ty}"))


def _node_names(header: Header, row: Any) -> Any:
    """Node number (1-based, as in the header) -> its name in the .row, else ``node N``."""
    listed = row.get("node") if isinstance(row, dict) else None
    listed = listed if isinstance(listed, list) else []

    def name(node: int) -> str:
        return str(listed[node - 1]) if 1 <= node <= len(listed) else f"node {node}"

    return name


def _read_samples(path: Path, header: Header, applications: list[int], names: Pcf,
                  node_names: Any, chunk_bytes: int) -> CounterSamples | None:
    """The counter reads of ``applications`` (1-based; those without MPI calls), read again
    from the file: their event records picked by a regular expression per block of lines,
    then every field parsed at once by NumPy (the scan has checked every line)."""
    wanted = b"|".join(str(a).encode() for a in applications)
    pattern = re.compile(rb"^2:\d+:(?:" + wanted + rb"):[^\r\n]*", re.MULTILINE)
    found: list[bytes] = []
    file, _ = _open(path)
    with file:
        blocks = _Blocks(path, file, chunk_bytes)
        blocks.first_line()
        for buf, end in blocks:
            found.extend(pattern.findall(buf[:end].tobytes()))
    if not found:
        return None
    text = b"\n".join(found)
    fields = np.array(text.replace(b"\n", b":").split(b":")).astype(np.int64)
    raw = np.frombuffer(text + b"\n", dtype=np.uint8)
    colons = np.cumsum(raw == ord(":"))[raw == ord("\n")]
    per_line = np.diff(colons, prepend=0) + 1
    first = np.concatenate([[0], np.cumsum(per_line)[:-1]])
    line = np.repeat(np.arange(len(found)), per_line)
    offset = np.arange(fields.size) - first[line]
    is_type = (offset >= 6) & (offset % 2 == 0) & (offset + 1 < per_line[line])
    types = fields[is_type]
    counter = (types >= COUNTER_MIN) & (types <= COUNTER_MAX)
    at = np.flatnonzero(is_type)[counter]
    if not at.size:
        return None
    line = line[at]
    appl, task, thread = (fields[first[line] + k] for k in (2, 3, 4))
    time_s = fields[first[line] + 5] * header.tick_s
    keys = (appl << 42) | (task << 21) | thread
    source_keys, source = np.unique(keys, return_inverse=True)
    counter_types, seen, counter_codes = np.unique(fields[at], return_index=True,
                                                   return_inverse=True)
    order = np.argsort(seen, kind="stable")  # the counters in the order they are first read
    counter_types = counter_types[order]
    counter_codes = np.argsort(order)[counter_codes.reshape(-1)]
    labels = [f"{k >> 42}.{(k >> 21) & ((1 << 21) - 1)}.{k & ((1 << 21) - 1)}"
              for k in source_keys.tolist()]
    nodes = []
    for k in source_keys.tolist():
        a, t = k >> 42, (k >> 21) & ((1 << 21) - 1)
        task_nodes = header.nodes[a - 1] if a - 1 < len(header.nodes) else ()
        nodes.append(node_names(task_nodes[t - 1]) if t - 1 < len(task_nodes) else "")
    counter_names: list[str] = []
    for ty in counter_types.tolist():
        name = _counter_name(int(ty), names)
        while name in counter_names:
            name += f"_{ty}"
        counter_names.append(name)
    return CounterSamples(time_s=time_s, source=source.reshape(-1),
                          counter=counter_codes.reshape(-1),
                          value=fields[at + 1].astype(np.float64), sources=labels,
                          counters=counter_names, source_nodes=nodes)
