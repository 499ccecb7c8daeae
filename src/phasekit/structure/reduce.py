"""Trace reduction (Martínez Vera, "Trace reduction step"): one entry per unique MPI call and rank.

A call is identified by its *signature*, the call type and its call path (the dynamic
position, :meth:`phasekit.trace.Trace.signature_codes`); calls with one signature on different
ranks stay apart here (the inter-rank reduction merges them later, Martínez Vera "Inter-rank
reduction"). Each entry keeps what the paper lists: the number of repetitions ``it``, the mean
time between repetitions ``imt``, the call path, the preceding-burst statistics, all
timestamps, and the explained time δ = it · imt / T_exe (Martínez Vera, eq. 1).

Entries that repeat but explain less than ``min_explained`` of the run are *filtered* (Martínez Vera:
"filter less representative MPI calls"); the paper gives no value, ours is 1 % (a repeated
call spanning less than 1 % of the run is start-up or shut-down detail, not a loop of the
run). Calls made once cannot be iterations of anything: they are kept apart as straight-line
calls (MPI_Init, MPI_Finalize...).

A call the trace gives no call path for (no caller levels: Extrae's site-less calls, an
OTF2 trace without regions) is told apart by its context in time when other calls do have
one: its signature also holds the last call with a call path made before it on its rank
(:func:`with_context`). Otherwise every site-less MPI_Sendrecv of a run is one signature,
and the exchanges of the set-up and of the time step merge into one loop that nests
nowhere; with the context they repeat as their own loop does and nest inside it. A trace
where no call has a path keeps one signature per call type (nothing to tell them apart).

Everything is vectorized over the calls: one stable sort by (rank, signature), then
``reduceat`` sums; the timestamps of an entry are a slice of one sorted array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phasekit.trace import PATH_SEP, Trace

__all__ = ["MIN_EXPLAINED", "Reduction", "Signature", "reduce_trace"]

#: Default explained-time threshold: entries with δ below it are filtered (our choice).
MIN_EXPLAINED = 0.01
#: Call-path labels that mean "unknown frame" (Extrae .pcf values 1 and 2 of the caller types).
UNKNOWN_FRAMES = frozenset({"Unresolved", "_NOT_Found", "0 (Unresolved)", "0 (_NOT_Found)"})


@dataclass(frozen=True)
class Signature:
    """One unique MPI call: its name and call path as frames ``(function, site)``, outermost
    first, where ``site`` (``"file:line"`` or ``""``) is where that function makes the next
    call; the last frame's site is the MPI call's own line. Unknown frames (Extrae's
    "Unresolved") read ``("?", "")``; leading unknown frames are dropped."""

    call: str
    frames: tuple[tuple[str, str], ...]
    after: int = -1

    @property
    def site(self) -> str:
        return self.frames[-1][1] if self.frames else ""

    def source_key(self) -> tuple[tuple[str, int], ...]:
        """The frames' sites as (file, line) for ordering calls no timestamp can order."""
        key = []
        for _function, site in self.frames:
            file, _, line = site.rpartition(":")
            key.append((file, int(line)) if line.isdigit() else (site, -1))
        return tuple(key)


def _frames(path: str, lines: str) -> tuple[tuple[str, str], ...]:
    functions = path.split(PATH_SEP) if path else []
    sites = lines.split(PATH_SEP) if lines else []
    if len(sites) < len(functions):  # OTF2: only the call site, or nothing
        sites = [""] * (len(functions) - len(sites)) + sites
    elif len(sites) > len(functions):
        sites = sites[len(sites) - len(functions):]
    frames = [("?" if f in UNKNOWN_FRAMES else f, "" if s in UNKNOWN_FRAMES else s)
              for f, s in zip(functions, sites, strict=True)]
    while frames and frames[0] == ("?", ""):
        frames.pop(0)
    return tuple(frames)


@dataclass(frozen=True)
class Reduction:
    """The reduced trace: one entry per (rank, signature), as parallel arrays.

    ``times`` holds every call's entry time sorted by entry then time; entry ``e``'s
    timestamps are ``times[offsets[e]:offsets[e + 1]]``. Sums over an entry's calls
    (``sum_duration``, ``sum_bytes``, ``sum_ipc`` with ``n_ipc`` finite values,
    ``sum_burst``) give the pseudocode's E(TIME), E(SIZE), E(IPC).
    """

    signatures: tuple[Signature, ...]
    rank: np.ndarray
    signature: np.ndarray
    it: np.ndarray
    imt: np.ndarray
    delta: np.ndarray
    first: np.ndarray
    last: np.ndarray
    offsets: np.ndarray
    times: np.ndarray
    sum_duration: np.ndarray
    sum_bytes: np.ndarray
    sum_ipc: np.ndarray
    n_ipc: np.ndarray
    sum_burst: np.ndarray
    duration_s: float
    min_explained: float

    @property
    def n_entries(self) -> int:
        return int(self.rank.size)

    def timestamps(self, entry: int) -> np.ndarray:
        return self.times[self.offsets[entry]:self.offsets[entry + 1]]

    @property
    def repeated(self) -> np.ndarray:
        """Entries that repeat and explain at least ``min_explained`` (the loop candidates)."""
        return (self.it > 1) & (self.delta >= self.min_explained)

    @property
    def filtered(self) -> np.ndarray:
        """Entries that repeat but explain less than ``min_explained``."""
        return (self.it > 1) & (self.delta < self.min_explained)


def with_context(codes: np.ndarray, signatures: tuple[Signature, ...], rank: np.ndarray
                 ) -> tuple[np.ndarray, tuple[Signature, ...]]:
    """``codes`` and ``signatures`` with every call that has no call path given a signature
    of its own per context: the signature of the last call with a path made before it on
    its rank (``Signature.after``; -1 before any). Unchanged when no call, or every call,
    has a path. ``codes`` are in time order per rank."""
    framed = np.array([bool(sig.frames) for sig in signatures], dtype=bool)
    if codes.size == 0 or framed.all() or not framed.any():
        return codes, signatures
    order = np.argsort(rank, kind="stable")  # time order within each rank
    sorted_codes, sorted_rank = codes[order], rank[order]
    position = np.arange(codes.size)
    last = np.maximum.accumulate(np.where(framed[sorted_codes], position, -1))
    valid = (last >= 0) & (sorted_rank[np.maximum(last, 0)] == sorted_rank)
    context = np.where(valid, sorted_codes[np.maximum(last, 0)], -1)
    bare = ~framed[sorted_codes]
    pairs, which = np.unique(np.stack([sorted_codes[bare], context[bare]], axis=1), axis=0,
                             return_inverse=True)
    extra = tuple(Signature(signatures[int(c)].call, (), after=int(a)) for c, a in pairs)
    renamed = sorted_codes.copy()
    renamed[bare] = len(signatures) + which.reshape(-1)
    out = np.empty_like(codes)
    out[order] = renamed
    return out, signatures + extra


def reduce_trace(trace: Trace, *, min_explained: float = MIN_EXPLAINED) -> Reduction:
    """Reduce ``trace`` to one entry per (rank, signature) (module docstring)."""
    codes, table = trace.signature_codes()  # NumPy only: no pandas
    signatures = tuple(Signature(call, _frames(path, lines)) for call, path, lines, _ in table)
    calls = trace.arrays
    rank = calls["rank"].astype(np.int64)
    codes, signatures = with_context(codes, signatures, rank)
    n_sig = max(len(signatures), 1)
    key = rank * n_sig + codes
    order = np.argsort(key, kind="stable")  # calls are in time order per rank: stays so
    key_sorted = key[order]
    starts = np.flatnonzero(np.r_[True, key_sorted[1:] != key_sorted[:-1]]) \
        if key.size else np.zeros(0, np.int64)
    offsets = np.r_[starts, key.size].astype(np.int64)
    it = np.diff(offsets)
    times = calls["time_s"][order]
    first = times[starts] if key.size else np.zeros(0)
    last = times[offsets[1:] - 1] if key.size else np.zeros(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        imt = np.where(it > 1, (last - first) / np.maximum(it - 1, 1), np.nan)
    total = trace.duration_s if trace.duration_s > 0 else float(np.ptp(times)) if key.size else 1.0
    delta = np.where(it > 1, it * imt / max(total, 1e-300), 0.0)

    def sums(column: str) -> tuple[np.ndarray, np.ndarray]:
        values = calls[column][order]
        finite = np.isfinite(values)
        if not key.size:
            return np.zeros(0), np.zeros(0, np.int64)
        return (np.add.reduceat(np.where(finite, values, 0.0), starts),
                np.add.reduceat(finite.astype(np.int64), starts))

    sum_duration, _ = sums("duration_s")
    sum_bytes, _ = sums("bytes")
    sum_ipc, n_ipc = sums("burst_ipc")
    sum_burst, _ = sums("burst_duration_s")
    entry_key = key_sorted[starts] if key.size else np.zeros(0, np.int64)
    return Reduction(signatures, entry_key // n_sig, entry_key % n_sig, it, imt, delta, first,
                     last, offsets, times, sum_duration, sum_bytes, sum_ipc, n_ipc, sum_burst,
                     float(total), float(min_explained))

