"""Synthetic MPI execution traces with known loop structure, written as real Paraver files.

Structure detection (Martínez Vera): the analysis turns a trace into the loop nest of the
program that produced it; to test it we need traces whose loop nest is known. A
:class:`Program` describes one: a body of :class:`Call` (one MPI call site, made by every rank
or only by some, ``IF rank in [...]``) and :class:`Loop` (``FOR 1 TO N``, nested at will).
:func:`simulate` runs it on ``n_ranks`` ranks and :func:`write_paraver` writes the trace as
Extrae would (.prv, .pcf, .row): per MPI call a Running state for the computation burst
before it, an entry event with the call (types 50000001-50000003, the ids Extrae uses), the
hardware counters of the burst (PAPI_TOT_INS 42000050, PAPI_TOT_CYC 42000059: increments since
the previous reading, as Extrae writes them) and the call path (caller levels 70000001.. with
function names, 80000001.. with "line (file)"), an MPI state, an exit event (value 0), and a
communication record (3) for every matched send and receive. :data:`SUITE` holds the shapes the
tests check, among them the slides' test-2.c example (Martínez Vera, "Pseudocode").

What real traces also hold, each optional: calls Extrae recorded without call-site information
(a :class:`Call` with an empty path: no caller events at all), loops whose trip count varies
from one iteration of their parent to the next (a :class:`Loop` over a ``range`` or a tuple of
counts; the counts drawn are in ``SimulatedTrace.extra["trip_counts"]`` and the truth), and the
labels Extrae writes for Fortran code (``write_paraver(..., names="extrae-fortran")``:
:func:`fortran_symbol`, :func:`extrae_function_label`). :mod:`phasekit.synth.fortran` builds a
Fortran particle-in-cell code from them.

Timing model (our choice). Each rank walks the program in order; before each call it computes
for a burst drawn log-normally around the call's ``burst_s`` (coefficient of variation
``noise``, times a per-rank speed factor within ``imbalance``), times ``1 + growth * i`` in
iteration ``i`` of each enclosing loop with a ``growth`` (work that grows every iteration);
the call lasts ``duration_s`` (log-normal, same noise). Collective calls synchronize the ranks
that make them: they all leave at the latest arrival plus the call's duration. Point-to-point
calls do not wait for their peer (a receive's duration is drawn, not derived from the send);
sends and receives are paired per (sender, receiver) in order for the communication records.
IPC of a burst is the call's ``ipc`` at ``clock_hz``.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from phasekit.errors import UsageError

__all__ = [
    "MPI_CALLS",
    "NAMINGS",
    "SUITE",
    "Call",
    "Loop",
    "Program",
    "SimulatedTrace",
    "extrae_function_label",
    "format_int_lines",
    "fortran_symbol",
    "simulate",
    "write_paraver",
]

#: Extrae's event type and value per MPI call (the LULESH .pcf agrees on the ones it lists);
#: the Paraver state the call's interval gets.
MPI_CALLS: dict[str, tuple[int, int, int]] = {
    "MPI_Send": (50000001, 1, 4), "MPI_Recv": (50000001, 2, 3),
    "MPI_Isend": (50000001, 3, 10), "MPI_Irecv": (50000001, 4, 11),
    "MPI_Wait": (50000001, 5, 8), "MPI_Waitall": (50000001, 6, 8),
    "MPI_Bcast": (50000002, 7, 13), "MPI_Barrier": (50000002, 8, 5),
    "MPI_Reduce": (50000002, 9, 13), "MPI_Allreduce": (50000002, 10, 13),
    "MPI_Alltoall": (50000002, 11, 13), "MPI_Allgather": (50000002, 17, 13),
    "MPI_Comm_rank": (50000003, 19, 15), "MPI_Comm_size": (50000003, 20, 15),
    "MPI_Init": (50000003, 31, 15), "MPI_Finalize": (50000003, 32, 15),
    "MPI_Sendrecv": (50000001, 41, 16),
}
_TYPE_LABELS = {50000001: "MPI Point-to-point", 50000002: "MPI Collective Comm",
                50000003: "MPI Other"}
_SENDS = ("MPI_Send", "MPI_Isend")
_RECVS = ("MPI_Recv", "MPI_Irecv")
_SENDRECVS = ("MPI_Sendrecv",)
INSTRUCTIONS, CYCLES = 42000050, 42000059
CALLER, CALLER_LINE = 70000001, 80000001
COLLECTIVE_SEND_SIZE, COLLECTIVE_RECV_SIZE = 50100001, 50100002
RUNNING = 1


@dataclass(frozen=True)
class Call:
    """One MPI call site.

    ``path``: the call path, outermost frame first, each ``"function@file:line"`` (the line in
    ``file`` where ``function`` makes the next call; the last frame's line is the MPI call's);
    empty for a call Extrae recorded without call-site information (its entry carries no
    caller events); ``ranks``: the ranks that make the call (None: all); ``peer``: for
    point-to-point calls, the partner rank as ``rank -> peer`` (a dict) or one rank for all
    (MPI_Sendrecv sends to its peer and receives from the rank whose peer it is); ``bytes``:
    message size (point-to-point) or per-rank contribution (collectives)."""

    name: str
    path: tuple[str, ...]
    ranks: tuple[int, ...] | None = None
    peer: int | dict[int, int] | tuple[tuple[int, int], ...] | None = None
    bytes: int = 0
    burst_s: float = 1e-3
    duration_s: float = 10e-6
    ipc: float = 1.2

    def __post_init__(self) -> None:
        if isinstance(self.peer, dict):  # stored as pairs: a call is hashable (its signature)
            object.__setattr__(self, "peer", tuple(sorted(self.peer.items())))
        if self.name not in MPI_CALLS:
            raise UsageError(f"unknown MPI call {self.name!r}; known: {', '.join(MPI_CALLS)}")
        for frame in self.path:
            parse_frame(frame)

    @property
    def site(self) -> str:
        """``"file:line"`` of the MPI call; "" without call-site information."""
        if not self.path:
            return ""
        _function, file, line = parse_frame(self.path[-1])
        return f"{file}:{line}"

    def makes(self, rank: int) -> bool:
        return self.ranks is None or rank in self.ranks

    def peer_of(self, rank: int) -> int | None:
        if isinstance(self.peer, tuple):
            return dict(self.peer).get(rank)
        return self.peer

    def to_dict(self) -> dict[str, Any]:
        return {"call": self.name, "path": list(self.path),
                "ranks": None if self.ranks is None else list(self.ranks),
                "bytes": self.bytes}


@dataclass(frozen=True)
class Loop:
    """``FOR 1 TO iterations`` around ``body``.

    ``iterations``: a count; a ``range``, from which the count is drawn (uniformly, the same
    on every rank) each time the loop starts, i.e. once per iteration of its parent; or a tuple
    of counts, the k-th start running the k-th (cycling). ``growth``: the bursts inside last
    ``1 + growth * i`` times longer in iteration ``i``. ``name`` and ``site`` (the loop
    statement as ``"function@file:line"``) identify the loop in the ground truth."""

    iterations: int | range | tuple[int, ...]
    body: tuple[Call | Loop, ...]
    growth: float = 0.0
    name: str = ""
    site: str = ""

    def __post_init__(self) -> None:
        counts = self.iterations
        if isinstance(counts, int | np.integer) and not isinstance(counts, bool):
            counts = int(counts)
        elif isinstance(counts, list | tuple) and all(
                isinstance(c, int | np.integer) and not isinstance(c, bool) for c in counts):
            counts = tuple(int(c) for c in counts)
        elif not (isinstance(counts, range) and counts.step > 0):
            raise UsageError(f"loop iterations {counts!r}: expected a count, a range or a "
                             "tuple of counts")
        object.__setattr__(self, "iterations", counts)
        if not (isinstance(counts, int) or len(counts)) or self.count_range()[0] < 1:
            raise UsageError(f"a loop needs at least one iteration, not {counts}")
        if not self.body:
            raise UsageError("a loop needs a body")
        if self.site:
            parse_frame(self.site)

    @property
    def varies(self) -> bool:
        """Whether the trip count changes from one start of the loop to the next."""
        low, high = self.count_range()
        return low != high

    def count_range(self) -> tuple[int, int]:
        """The fewest and most iterations one start of the loop runs."""
        counts = self.iterations
        if isinstance(counts, int):
            return counts, counts
        return int(min(counts)), int(max(counts))

    def trip_count(self, start: int, rng: np.random.Generator) -> int:
        """The iterations of the loop's ``start``-th start (0-based); a range draws from
        ``rng``."""
        counts = self.iterations
        if isinstance(counts, int):
            return counts
        if isinstance(counts, tuple):
            return int(counts[start % len(counts)])
        return counts[int(rng.integers(len(counts)))]

    def to_dict(self) -> dict[str, Any]:
        counts = self.iterations
        low, high = self.count_range()
        iterations: int | dict[str, Any] = counts if isinstance(counts, int) else \
            {"min": low, "max": high, **({"sequence": list(counts)}
                                         if isinstance(counts, tuple) else {})}
        return {"iterations": iterations, "growth": self.growth,
                "body": [node.to_dict() for node in self.body],
                **({"name": self.name} if self.name else {}),
                **({"site": self.site} if self.site else {})}


@dataclass(frozen=True)
class Program:
    """A program's MPI skeleton: its name, ranks and body (calls and loops, in order);
    ``binary``: the executable's name the .pcf's line labels give (default: the name)."""

    name: str
    n_ranks: int
    body: tuple[Call | Loop, ...]
    noise: float = 0.05
    imbalance: float = 0.05
    clock_hz: float = 2.5e9
    description: str = ""
    binary: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ground truth: the loop nest as JSON (``kind`` "mpi-structure")."""
        return {"kind": "mpi-structure", "version": 1, "name": self.name,
                "n_ranks": self.n_ranks, "description": self.description,
                "body": [node.to_dict() for node in self.body],
                **({"binary": self.binary} if self.binary else {})}

    def outline(self) -> tuple[tuple[Any, ...], ...]:
        """The structure a trace of this program shows, in the canonical form of
        :func:`phasekit.structure.outline`: ``("call", name, site, ranks)`` and ``("loop",
        iterations, body, ranks)``, ``ranks`` None for an item every rank of its block makes.
        A loop of one iteration shows as its body (no trace can tell it is a loop); a loop
        whose trip count varies shows ``(fewest, most)`` iterations; a call without
        call-site information has site ""."""
        everyone = frozenset(range(self.n_ranks))

        def ranks_of(node: Call | Loop) -> frozenset[int]:
            if isinstance(node, Call):
                return everyone if node.ranks is None else frozenset(node.ranks) & everyone
            return frozenset().union(*(ranks_of(child) for child in node.body))

        def walk(body: Sequence[Call | Loop], block: frozenset[int]) -> list[tuple[Any, ...]]:
            out: list[tuple[Any, ...]] = []
            for node in body:
                ranks = ranks_of(node)
                if not ranks:
                    continue
                condition = None if ranks == block else tuple(sorted(ranks))
                if isinstance(node, Call):
                    out.append(("call", node.name, node.site, condition))
                elif node.count_range() == (1, 1):
                    out.extend(walk(node.body, block))
                else:
                    iterations = node.count_range() if node.varies else node.count_range()[0]
                    out.append(("loop", iterations, tuple(walk(node.body, ranks)),
                                condition))
            return out

        return tuple(walk(self.body, frozenset().union(*(ranks_of(n) for n in self.body))))

    def loops(self) -> list[Loop]:
        """Every loop, outer before inner, in program order."""
        out: list[Loop] = []

        def walk(body: Sequence[Call | Loop]) -> None:
            for node in body:
                if isinstance(node, Loop):
                    out.append(node)
                    walk(node.body)

        walk(self.body)
        return out


def parse_frame(frame: str) -> tuple[str, str, int]:
    """``"function@file:line"`` as (function, file, line); a UsageError otherwise."""
    function, at, site = frame.partition("@")
    file, colon, line = site.rpartition(":")
    if not (at and colon and function and file and line.isdigit()):
        raise UsageError(f"call path frame {frame!r}: expected function@file:line")
    return function, file, int(line)


@dataclass(frozen=True)
class SimulatedTrace:
    """Every MPI call of a simulated run, one row each, sorted by rank then time: ``rank``,
    ``site`` (index into ``sites``), entry and exit time in ns, burst instructions and
    cycles, bytes, peer (-1 if none). ``extra["trip_counts"]``: per loop of
    :meth:`Program.loops` (same order), the iterations each of its starts ran."""

    program: Program
    sites: tuple[Call, ...]
    rank: np.ndarray
    site: np.ndarray
    entry_ns: np.ndarray
    exit_ns: np.ndarray
    burst_start_ns: np.ndarray
    instructions: np.ndarray
    cycles: np.ndarray
    duration_ns: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_events(self) -> int:
        return int(self.rank.size)


def _sites(body: Sequence[Call | Loop]) -> Iterator[Call]:
    for node in body:
        if isinstance(node, Loop):
            yield from _sites(node.body)
        else:
            yield node


def simulate(program: Program, *, seed: int = 0) -> SimulatedTrace:
    """Run ``program`` on its ranks (module docstring: timing model)."""
    if program.n_ranks < 1:
        raise UsageError(f"{program.name}: n_ranks must be >= 1")
    rng = np.random.default_rng(seed)
    sites = tuple(dict.fromkeys(_sites(program.body)))
    index = {site: i for i, site in enumerate(sites)}
    n = program.n_ranks
    speed = 1.0 + program.imbalance * (rng.random(n) - 0.5) * 2
    sigma = np.sqrt(np.log1p(program.noise ** 2))
    now = np.full(n, 1e5)  # ns: 0.1 ms of start-up before the first burst
    rows: list[tuple[np.ndarray, ...]] = []
    loops = program.loops()
    trip_counts: list[list[int]] = [[] for _ in loops]
    loop_index: dict[int, int] = {}
    for i, loop in enumerate(loops):
        loop_index.setdefault(id(loop), i)

    def lognormal(mean: float, size: int) -> np.ndarray:
        return mean * rng.lognormal(-sigma ** 2 / 2, sigma, size)

    def run(body: Sequence[Call | Loop], factor: float) -> None:
        for node in body:
            if isinstance(node, Loop):
                starts = trip_counts[loop_index[id(node)]]
                starts.append(node.trip_count(len(starts), rng))
                for i in range(starts[-1]):
                    run(node.body, factor * (1.0 + node.growth * i))
                continue
            ranks = np.array([r for r in range(n) if node.makes(r)], np.int64)
            if ranks.size == 0:
                continue
            burst = lognormal(node.burst_s * 1e9 * factor, ranks.size) * speed[ranks]
            start = now[ranks].copy()
            entry = start + burst
            duration = lognormal(node.duration_s * 1e9, ranks.size)
            if MPI_CALLS[node.name][0] == 50000002:  # collectives synchronize
                leave = np.full(ranks.size, entry.max()) + duration
            else:
                leave = entry + duration
            now[ranks] = leave
            cycles = burst * program.clock_hz * 1e-9
            rows.append((ranks, np.full(ranks.size, index[node]), start, entry, leave,
                         cycles * node.ipc, cycles))

    run(program.body, 1.0)
    if not rows:
        raise UsageError(f"{program.name}: no rank makes any call")
    rank, site, start, entry, leave, ins, cyc = (np.concatenate(c) for c in zip(*rows,
                                                                              strict=True))
    order = np.lexsort((entry, rank))
    entry_ns = np.rint(entry[order]).astype(np.int64)
    exit_ns = np.maximum(np.rint(leave[order]).astype(np.int64), entry_ns + 1)
    start_ns = np.rint(start[order]).astype(np.int64)
    return SimulatedTrace(program, sites, rank[order], site[order], entry_ns, exit_ns,
                          start_ns, np.rint(ins[order]).astype(np.int64),
                          np.rint(cyc[order]).astype(np.int64),
                          duration_ns=int(exit_ns.max()) + 100_000,
                          extra={"trip_counts": trip_counts})


# --------------------------------------------------------------------------- the writer
@njit(cache=True)
def format_int_lines(fields: np.ndarray, counts: np.ndarray, out: np.ndarray) -> int:
    """Write rows of non-negative integers as ``a:b:c\\n`` lines into ``out``; returns the
    bytes written. Row ``i`` uses its first ``counts[i]`` fields."""
    pos = 0
    digits = np.empty(20, np.uint8)
    for i in range(fields.shape[0]):
        for j in range(counts[i]):
            if j:
                out[pos] = 58  # ':'
                pos += 1
            v = fields[i, j]
            if v == 0:
                out[pos] = 48
                pos += 1
                continue
            k = 0
            while v > 0:
                digits[k] = 48 + v % 10
                v //= 10
                k += 1
            while k > 0:
                k -= 1
                out[pos] = digits[k]
                pos += 1
        out[pos] = 10  # '\n'
        pos += 1
    return pos


def _records(trace: SimulatedTrace, frame_ids: dict[str, int], line_ids: dict[tuple[str, int], int],
             depth: int, calls: np.ndarray, comm: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The records of the simulated ``calls`` (row indices) and of the communications
    ``comm`` (send row, receive row): each a row of integers (kind code in field 0: 1 state,
    2 event, 3 comm), the number of fields of each row, its time and a tie-break rank for
    sorting (the caller sorts)."""
    sites = trace.sites
    n = calls.size
    rank = trace.rank[calls]
    cpu = rank + 1
    task = rank + 1
    entry_fields = 6 + 2 + 4 + 4 * depth + 4
    width = max(entry_fields, 15)
    # per site: event type, value, state, caller ids per level (innermost = level 1)
    site_type = np.array([MPI_CALLS[s.name][0] for s in sites], np.int64)
    site_value = np.array([MPI_CALLS[s.name][1] for s in sites], np.int64)
    site_state = np.array([MPI_CALLS[s.name][2] for s in sites], np.int64)
    levels = np.zeros((len(sites), depth, 2), np.int64)
    n_levels = np.zeros(len(sites), np.int64)
    site_bytes = np.array([s.bytes for s in sites], np.int64)
    collective = site_type == 50000002
    for i, s in enumerate(sites):
        frames = [parse_frame(f) for f in s.path][::-1]  # innermost first
        n_levels[i] = len(frames)
        for level, (function, file, line) in enumerate(frames):
            levels[i, level] = (frame_ids[function], line_ids[(file, line)])
    st = trace.site[calls]
    burst_start, entry, leave = (trace.burst_start_ns[calls], trace.entry_ns[calls],
                                 trace.exit_ns[calls])
    blocks = []
    # burst state, MPI state
    for lo, hi, state in ((burst_start, entry, np.full(n, RUNNING)),
                          (entry, leave, site_state[st])):
        rec = np.zeros((n, width), np.int64)
        rec[:, :8] = np.column_stack([np.ones(n, np.int64), cpu, np.ones(n, np.int64), task,
                                      np.ones(n, np.int64), lo, hi, state])
        keep = hi > lo
        blocks.append((rec[keep], np.full(keep.sum(), 8), lo[keep], np.zeros(keep.sum())))
    # entry events: call, counters, caller levels, collective sizes
    rec = np.zeros((n, width), np.int64)
    rec[:, :8] = np.column_stack([np.full(n, 2), cpu, np.ones(n, np.int64), task,
                                  np.ones(n, np.int64), entry, site_type[st],
                                  site_value[st]])
    rec[:, 8:12] = np.column_stack([np.full(n, INSTRUCTIONS), trace.instructions[calls],
                                    np.full(n, CYCLES), trace.cycles[calls]])
    count = np.full(n, 12)
    for level in range(depth):
        has = n_levels[st] > level
        col = count[has]
        rows = np.flatnonzero(has)
        rec[rows, col] = CALLER + level
        rec[rows, col + 1] = levels[st[has], level, 0]
        rec[rows, col + 2] = CALLER_LINE + level
        rec[rows, col + 3] = levels[st[has], level, 1]
        count[has] += 4
    coll = collective[st]
    rows = np.flatnonzero(coll)
    col = count[coll]
    rec[rows, col] = COLLECTIVE_SEND_SIZE
    rec[rows, col + 1] = site_bytes[st[coll]]
    rec[rows, col + 2] = COLLECTIVE_RECV_SIZE
    rec[rows, col + 3] = site_bytes[st[coll]]
    count[coll] += 4
    blocks.append((rec, count, entry, np.full(n, 1.0)))
    # exit events
    rec = np.zeros((n, width), np.int64)
    rec[:, :8] = np.column_stack([np.full(n, 2), cpu, np.ones(n, np.int64), task,
                                  np.ones(n, np.int64), leave, site_type[st],
                                  np.zeros(n, np.int64)])
    blocks.append((rec, np.full(n, 8), leave, np.full(n, 2.0)))
    # communications: sends and receives paired per (sender, receiver) in order
    if comm.size:
        s, r = comm[:, 0], comm[:, 1]
        rec = np.zeros((len(comm), width), np.int64)
        rec[:, :15] = np.column_stack([
            np.full(len(comm), 3), trace.rank[s] + 1, np.ones(len(comm), np.int64),
            trace.rank[s] + 1, np.ones(len(comm), np.int64), trace.entry_ns[s],
            trace.exit_ns[s], trace.rank[r] + 1, np.ones(len(comm), np.int64),
            trace.rank[r] + 1, np.ones(len(comm), np.int64), trace.entry_ns[r],
            trace.exit_ns[r], site_bytes[trace.site[s]], np.ones(len(comm), np.int64)])
        blocks.append((rec, np.full(len(comm), 15), trace.entry_ns[s],
                       np.full(len(comm), 3.0)))
    fields = np.concatenate([b[0] for b in blocks])
    counts = np.concatenate([b[1] for b in blocks]).astype(np.int64)
    times = np.concatenate([b[2] for b in blocks]).astype(np.int64)
    tie = np.concatenate([b[3] for b in blocks])
    return fields, counts, times, tie


def _communications(trace: SimulatedTrace) -> np.ndarray:
    """(send row, receive row) pairs: the k-th send from a to b with the k-th receive on b
    from a, sorted by send row. An MPI_Sendrecv sends to its peer and receives from the rank
    whose peer it is."""
    sites = trace.sites
    n = trace.program.n_ranks
    peer = np.array([[-1 if (p := site.peer_of(r)) is None else p for r in range(n)]
                     for site in sites], np.int64).reshape(len(sites), n)
    source = peer.copy()
    for i, site in enumerate(sites):
        if site.name in _SENDRECVS:
            source[i] = -1
            for r in range(n):
                if site.makes(r) and 0 <= peer[i, r] < n:
                    source[i, peer[i, r]] = r
    is_send = np.array([site.name in _SENDS + _SENDRECVS for site in sites])
    is_recv = np.array([site.name in _RECVS + _SENDRECVS for site in sites])
    row_peer = peer[trace.site, trace.rank]
    row_source = source[trace.site, trace.rank]

    def numbered(mask: np.ndarray, sender: np.ndarray, receiver: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        rows = np.flatnonzero(mask)
        key = sender[rows] * n + receiver[rows]
        order = np.argsort(key, kind="stable")  # rows stay in order within a key
        rows, key = rows[order], key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else key
        nth = np.arange(key.size) - np.repeat(starts, np.diff(np.r_[starts, key.size]))
        return rows, key * (trace.n_events + 1) + nth

    sends, send_key = numbered(is_send[trace.site] & (row_peer >= 0), trace.rank, row_peer)
    recvs, recv_key = numbered(is_recv[trace.site] & (row_source >= 0), row_source, trace.rank)
    _, i, j = np.intersect1d(send_key, recv_key, assume_unique=True, return_indices=True)
    pairs = np.column_stack([sends[i], recvs[j]]).astype(np.int64).reshape(-1, 2)
    return pairs[np.argsort(pairs[:, 0], kind="stable")]


# --------------------------------------------------------------------------- the labels
#: The .pcf label styles of :func:`write_paraver`: "plain" writes each function as the program
#: names it; "extrae-fortran" as Extrae's merger writes a gfortran binary's (mangled module
#: procedures, long names shortened, the "Unresolved" and "_NOT_Found" values 1 and 2 first).
NAMINGS = ("plain", "extrae-fortran")
#: Extrae's merger shortens a name of at least head + tail + 2 characters to its first
#: ``head`` and last ``tail`` characters joined by "..", then gives the full name in brackets.
EXTRAE_SHORT_HEAD, EXTRAE_SHORT_TAIL = 8, 8
#: The caller values Extrae writes first, for addresses it could not translate.
EXTRAE_UNKNOWN_FRAMES = ("Unresolved", "_NOT_Found")


def fortran_symbol(function: str) -> str:
    """gfortran's symbol for a procedure: a module procedure ``"module::name"`` is
    ``"__module_MOD_name"``; any other name (the main program ``MAIN__``) is kept."""
    module, sep, name = function.partition("::")
    return f"__{module}_MOD_{name}" if sep else function


def extrae_function_label(symbol: str) -> str:
    """A caller function's label as Extrae writes it in the .pcf:
    ``"__mpi_ro..mal_init [__mpi_routines_MOD_mpi_minimal_init]"`` for a long name, the name
    itself for a short one (:data:`EXTRAE_SHORT_HEAD`)."""
    head, tail = EXTRAE_SHORT_HEAD, EXTRAE_SHORT_TAIL
    if len(symbol) < head + tail + 2:
        return symbol
    return f"{symbol[:head]}..{symbol[-tail:]} [{symbol}]"


def _pcf(frames: dict[str, int], lines: dict[tuple[str, int], int], depth: int,
         binary: str, names: str = "plain") -> str:
    extrae = names == "extrae-fortran"
    out = ["DEFAULT_OPTIONS", "", "LEVEL               THREAD", "UNITS               NANOSEC",
           "", "", "STATES", "0    Idle", "1    Running", "3    Waiting a message",
           "4    Blocking Send", "5    Synchronization", "8    Wait/WaitAll",
           "10    Immediate Send", "11    Immediate Receive", "13    Group Communication",
           "15    Others", "16    Send Receive", "", ""]
    for event_type, label in _TYPE_LABELS.items():
        out += ["EVENT_TYPE", f"9   {event_type}    {label}", "VALUES"]
        out += [f"{value}   {name}" for name, (t, value, _s) in MPI_CALLS.items()
                if t == event_type]
        out += ["0   Outside MPI", "", ""]
    out += ["EVENT_TYPE", f"1    {COLLECTIVE_SEND_SIZE}    Send Size in MPI Global OP",
            f"1    {COLLECTIVE_RECV_SIZE}    Recv Size in MPI Global OP", "", ""]
    out += ["EVENT_TYPE", f"7  {INSTRUCTIONS} PAPI_TOT_INS ([Instr completed])",
            f"7  {CYCLES} PAPI_TOT_CYC ([Total cycles])", "", ""]
    out += ["EVENT_TYPE"] + [f"0    {CALLER + k}    Caller at level {k + 1}"
                             for k in range(depth)]
    unknown = list(enumerate(EXTRAE_UNKNOWN_FRAMES, 1)) if extrae else []
    out += ["VALUES", "0   End"] + [f"{i} {label}" for i, label in unknown]
    out += [f"{i} {extrae_function_label(fortran_symbol(name)) if extrae else name}"
            for name, i in frames.items()] + ["", ""]
    out += ["EVENT_TYPE"] + [f"0    {CALLER_LINE + k}    Caller line at level {k + 1}"
                             for k in range(depth)]
    out += ["VALUES", "0   End"] + [f"{i} 0 ({label})" for i, label in unknown]
    out += [f"{i} {line} ({file}, {binary})" for (file, line), i in lines.items()] + ["", ""]
    return "\n".join(out) + "\n"


def _sorted_records(trace: SimulatedTrace, frames: dict[str, int],
                    lines: dict[tuple[str, int], int], depth: int, *, chunk: int = 100_000
                    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every record in time order (then task, then state/entry/exit/comm), ``chunk`` calls
    at a time: memory bounded by the chunk, not the trace. A chunk's records later than the
    earliest record any later call can have (its burst's start) wait for the next chunk."""
    order = np.argsort(trace.entry_ns, kind="stable")
    earliest_after = np.minimum.accumulate(trace.burst_start_ns[order][::-1])[::-1]
    pairs = _communications(trace)
    position = np.empty(trace.n_events, np.int64)
    position[order] = np.arange(trace.n_events)
    pair_at = position[pairs[:, 0]]
    pairs = pairs[np.argsort(pair_at, kind="stable")]
    pair_at = np.sort(pair_at)
    width = max(6 + 2 + 4 + 4 * depth + 4, 15)
    held = [np.zeros((0, width), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
            np.zeros(0)]
    for lo in range(0, trace.n_events, chunk):
        hi = min(lo + chunk, trace.n_events)
        p0, p1 = np.searchsorted(pair_at, [lo, hi])
        new = _records(trace, frames, lines, depth, order[lo:hi], pairs[p0:p1])
        fields, counts, times, tie = (np.concatenate([a, b]) for a, b in zip(held, new,
                                                                             strict=True))
        limit = earliest_after[hi] if hi < trace.n_events else np.iinfo(np.int64).max
        ready = times < limit
        held = [a[~ready] for a in (fields, counts, times, tie)]
        fields, counts, times, tie = (a[ready] for a in (fields, counts, times, tie))
        sort = np.lexsort((tie, fields[:, 3], times))
        yield fields[sort], counts[sort]
    if held[0].size:
        fields, counts, times, tie = held
        sort = np.lexsort((tie, fields[:, 3], times))
        yield fields[sort], counts[sort]


def write_paraver(program: Program, path: str | os.PathLike[str], *, seed: int = 0,
                  trace: SimulatedTrace | None = None, names: str = "plain",
                  truth: dict[str, Any] | None = None) -> dict[str, Path]:
    """Simulate ``program`` (or take ``trace``) and write ``path`` (.prv or .prv.gz), its .pcf
    and .row, and the ground truth ``<stem>.truth.json``; returns the paths by kind.

    ``names``: the .pcf's label style (:data:`NAMINGS`); ``truth``: more keys for the truth
    JSON. The truth names functions as the program does, whatever the labels; it lists the
    trip counts drawn for the loops whose count varies (``trip_counts``)."""
    from phasekit.io import atomic_path, atomic_write_text

    prv = Path(path)
    if not (prv.name.endswith(".prv") or prv.name.endswith(".prv.gz")):
        raise UsageError(f"{prv}: a Paraver trace is named .prv or .prv.gz")
    if names not in NAMINGS:
        raise UsageError(f"expected one of {', '.join(NAMINGS)}", parameter="names",
                         value=names)
    stem = prv.name[:-len(".prv.gz")] if prv.name.endswith(".gz") else prv.name[:-4]
    trace = trace if trace is not None else simulate(program, seed=seed)
    frames: dict[str, int] = {}
    lines: dict[tuple[str, int], int] = {}
    first_id = 1 + (len(EXTRAE_UNKNOWN_FRAMES) if names == "extrae-fortran" else 0)
    depth = 1
    for site in trace.sites:
        parsed = [parse_frame(f) for f in site.path]
        depth = max(depth, len(parsed))
        for function, file, line in parsed:
            frames.setdefault(function, len(frames) + first_id)
            lines.setdefault((file, line), len(lines) + first_id)
    n = program.n_ranks
    header = (f"#Paraver (01/01/2026 at 00:00):{trace.duration_ns}_ns:1({n}):1:"
              f"{n}({','.join(['1:1'] * n)})\n")
    comm = f"c:1:1:{n}:" + ":".join(str(r + 1) for r in range(n)) + "\n"
    with atomic_path(prv) as tmp:
        opener = gzip.open if prv.name.endswith(".gz") else open
        with opener(tmp, "wb") as fh:  # type: ignore[operator]
            fh.write((header + comm).encode())
            for fields, counts in _sorted_records(trace, frames, lines, depth):
                buffer = np.empty(fields.size * 21 + len(fields), np.uint8)
                used = format_int_lines(fields, counts, buffer)
                fh.write(buffer[:used].tobytes())
    pcf = prv.with_name(stem + ".pcf")
    atomic_write_text(pcf, _pcf(frames, lines, depth, program.binary or program.name, names))
    row = prv.with_name(stem + ".row")
    names = [f"THREAD 1.{r + 1}.1" for r in range(n)]
    atomic_write_text(row, "\n".join([f"LEVEL CPU SIZE {n}",
                                      *[f"{r + 1}.synthetic" for r in range(n)], "",
                                      "LEVEL NODE SIZE 1", "synthetic", "",
                                      f"LEVEL THREAD SIZE {n}", *names]) + "\n")
    truth_path = prv.with_name(stem + ".truth.json")
    loops = program.loops()
    drawn = [{"loop": i, "name": loops[i].name, "counts": counts}
             for i, counts in enumerate(trace.extra.get("trip_counts", [])) if loops[i].varies]
    atomic_write_text(truth_path, json.dumps({**program.to_dict(), "seed": seed,
                                              "n_events": trace.n_events,
                                              **({"trip_counts": drawn} if drawn else {}),
                                              **(truth or {})},
                                             separators=(",", ":")))
    return {"prv": prv, "pcf": pcf, "row": row, "truth": truth_path}


# --------------------------------------------------------------------------- the suite
def _c(name: str, *path: str, **kw: Any) -> Call:
    return Call(name, tuple(path), **kw)


def _test2() -> Program:
    """The slides' test-2.c (Martínez Vera, "Pseudocode"): FOR 1 TO 10 { FOR 1 TO 2 {CommSend();
    CommRecv()}; FOR 1 TO 5 {CommSend(); CommRecv()}; MPI_Barrier }, where CommSend is
    rank 1 sending then receiving and CommRecv rank 0 receiving then sending, 4 B messages."""
    def exchange(send_line: int, recv_line: int, burst: float) -> tuple[Call, ...]:
        return (
            _c("MPI_Send", f"main@test-2.c:{send_line}", "CommSend@test-2.c:14", ranks=(1,),
               peer=0, bytes=4, burst_s=burst),
            _c("MPI_Recv", f"main@test-2.c:{send_line}", "CommSend@test-2.c:16", ranks=(1,),
               peer=0, bytes=4, burst_s=2e-5),
            _c("MPI_Recv", f"main@test-2.c:{recv_line}", "CommRecv@test-2.c:25", ranks=(0,),
               peer=1, bytes=4, burst_s=burst),
            _c("MPI_Send", f"main@test-2.c:{recv_line}", "CommRecv@test-2.c:26", ranks=(0,),
               peer=1, bytes=4, burst_s=2e-5),
        )

    body = (Loop(10, (Loop(2, exchange(42, 44, 2e-3)), Loop(5, exchange(49, 51, 1e-3)),
                      _c("MPI_Barrier", "main@test-2.c:53", burst_s=5e-4))),)
    return Program("test-2", 2, body, description="the slides' test-2.c")


def _stencil(n_ranks: int, iterations: int, *, growth: float = 0.0, name: str = "stencil"
             ) -> Program:
    ring = {r: (r + 1) % n_ranks for r in range(n_ranks)}
    back = {r: (r - 1) % n_ranks for r in range(n_ranks)}
    body = (
        _c("MPI_Init", "main@stencil.c:10", burst_s=1e-4),
        Loop(iterations, (
            _c("MPI_Irecv", "main@stencil.c:40", "halo@comm.c:12", peer=back, bytes=8192),
            _c("MPI_Isend", "main@stencil.c:40", "halo@comm.c:15", peer=ring, bytes=8192,
               burst_s=2e-5),
            _c("MPI_Waitall", "main@stencil.c:40", "halo@comm.c:18", burst_s=4e-3),
            _c("MPI_Allreduce", "main@stencil.c:44", bytes=8, burst_s=1e-3),
        ), growth=growth),
        _c("MPI_Finalize", "main@stencil.c:60", burst_s=1e-4),
    )
    return Program(name, n_ranks, body)


def suite() -> dict[str, Program]:
    """The generated programs the structure tests check: different nests, rank counts from 1
    to 16, rank-conditional blocks, growing work, loops alike in one feature."""
    solver = lambda line, its, burst: Loop(its, (  # noqa: E731
        _c("MPI_Allreduce", f"main@cg.c:{line}", "dot@cg.c:80", bytes=8, burst_s=burst),
        _c("MPI_Allreduce", f"main@cg.c:{line}", "norm@cg.c:90", bytes=8, burst_s=burst / 2)))
    programs = [
        _test2(),
        _stencil(4, 50),
        _stencil(16, 30, name="stencil-16"),
        _stencil(1, 40, name="stencil-1"),
        _stencil(8, 25, growth=0.04, name="stencil-growing"),
        Program("two-phases", 4, (
            Loop(20, (_c("MPI_Bcast", "main@app.c:20", "setup@app.c:5", bytes=1024,
                         burst_s=5e-4),)),
            Loop(40, (_c("MPI_Allreduce", "main@app.c:30", "step@app.c:9", bytes=8,
                         burst_s=3e-3),
                      _c("MPI_Barrier", "main@app.c:31", burst_s=2e-4))),
        ), description="two loops one after the other"),
        Program("nest-3", 4, (Loop(4, (Loop(3, (Loop(5, (
            _c("MPI_Allreduce", "main@n.c:10", "inner@n.c:3", bytes=8, burst_s=4e-4),)),
            _c("MPI_Barrier", "main@n.c:12", burst_s=3e-4))),
            _c("MPI_Reduce", "main@n.c:14", bytes=64, burst_s=2e-3))),),
            description="three nested loops"),
        Program("cg", 8, (Loop(15, (solver(20, 25, 1.2e-3),
                                    _c("MPI_Allreduce", "main@cg.c:30", "residual@cg.c:95",
                                       bytes=8, burst_s=4e-3))),),
                description="an outer loop around a solver loop"),
        Program("master-worker", 6, (Loop(30, (
            _c("MPI_Bcast", "main@mw.c:10", bytes=4096, burst_s=2e-4),
            _c("MPI_Send", "main@mw.c:20", "work@mw.c:40", ranks=(1, 2, 3, 4, 5), peer=0,
               bytes=512, burst_s=3e-3),
            *[_c("MPI_Recv", "main@mw.c:22", "collect@mw.c:50", ranks=(0,), peer=w,
                 bytes=512, burst_s=1e-4) for w in (1,)],
        )),), description="rank 0 collects, the others work"),
        Program("even-odd", 4, (Loop(24, (
            _c("MPI_Send", "main@eo.c:10", "exchange@eo.c:30", ranks=(0, 2), peer={0: 1, 2: 3},
               bytes=2048, burst_s=2e-3),
            _c("MPI_Recv", "main@eo.c:10", "exchange@eo.c:33", ranks=(1, 3), peer={1: 0, 3: 2},
               bytes=2048, burst_s=2e-3),
            _c("MPI_Barrier", "main@eo.c:12", burst_s=1e-4))),),
            description="even ranks send, odd ranks receive"),
        Program("alltoall", 8, (Loop(12, (
            _c("MPI_Alltoall", "main@fft.c:50", "transpose@fft.c:7", bytes=65536, burst_s=6e-3),
            Loop(3, (_c("MPI_Allreduce", "main@fft.c:55", bytes=8, burst_s=1e-3),)))),),
            description="a transpose step and a short inner loop"),
        Program("single-iteration", 4, (Loop(1, (
            _c("MPI_Allreduce", "main@one.c:5", bytes=8, burst_s=1e-3),)),),
            description="one iteration: no loop can be inferred"),
        Program("alike-loops", 4, (
            Loop(30, (_c("MPI_Allreduce", "main@al.c:10", bytes=8, burst_s=2e-3),)),
            Loop(30, (_c("MPI_Bcast", "main@al.c:20", bytes=8, burst_s=2e-3),)),
        ), description="two sequential loops with equal iterations and times (aliasing)"),
        Program("split-loop", 4, (Loop(40, (
            _c("MPI_Allreduce", "main@sp.c:10", bytes=8, burst_s=1e-3),
            _c("MPI_Allreduce", "main@sp.c:12", bytes=8, burst_s=1.2e-2),)),),
            description="one loop whose two calls have very different bursts"),
        Program("deep-paths", 4, (Loop(18, (
            _c("MPI_Isend", "main@d.c:5", "solve@d.c:40", "exchange@halo.c:7", "post@halo.c:21",
               peer={0: 1, 1: 2, 2: 3, 3: 0}, bytes=4096, burst_s=1.5e-3),
            _c("MPI_Irecv", "main@d.c:5", "solve@d.c:40", "exchange@halo.c:7", "post@halo.c:24",
               peer={0: 3, 1: 0, 2: 1, 3: 2}, bytes=4096, burst_s=1e-5),
            _c("MPI_Waitall", "main@d.c:5", "solve@d.c:40", "exchange@halo.c:9", burst_s=1e-3),
        )),), description="call paths four levels deep"),
        Program("many-iterations", 4, (Loop(400, (
            _c("MPI_Allreduce", "main@mi.c:8", bytes=8, burst_s=2e-4),)),),
            description="a long loop of short iterations"),
    ]
    return {p.name: p for p in programs}


SUITE: dict[str, Program] = suite()
