"""The Trace: the MPI calls of a parallel run, one row per call, as columns (DESIGN.md).

Column contract of :attr:`Trace.calls` (a pandas DataFrame, one row per MPI call, sorted by
``rank``, ``thread``, ``time_s``; the row order inside one rank/thread is program order):

==================== ========== ==========================================================
column               dtype      meaning (units: seconds, bytes)
==================== ========== ==========================================================
rank                 int32      MPI rank, 0-based (Paraver task - 1; OTF2 location group)
thread               int32      thread of the rank, 0-based (Paraver thread - 1)
time_s               float64    entry into the call, seconds from the start of the trace
duration_s           float64    time inside the call (exit - entry); NaN when the trace
                                ends (or the next call starts) before the call's exit
call                 category   the call's name, e.g. ``"MPI_Allreduce"``; without a name
                                table (Paraver without .pcf) the numeric ids ``"TYPE:VALUE"``,
                                e.g. ``"50000002:10"``
call_path            category   the caller chain, outermost first, joined by
                                :data:`PATH_SEP` (``" > "``), each level the function as
                                labelled in the trace (Paraver .pcf 7000000x VALUES; OTF2
                                the enclosing regions); ``""`` when the trace has none.
                                Without a .pcf the numeric value ids.
call_lines           category   the call sites of every level, outermost first, joined by
                                :data:`PATH_SEP`, each ``"file:line"`` (Paraver 8000000x;
                                OTF2: the call site only); ``""`` when the trace has none
call_site            category   ``"file:line"`` of the innermost level (where the MPI call
                                is written); ``""`` when the trace has none
bytes                float64    bytes sent plus bytes received by this call as the trace
                                records them: point-to-point messages whose logical
                                send/receive time falls inside the call (Paraver
                                communication records; OTF2 MpiSend/MpiIsend/MpiRecv/
                                MpiIrecv inside the call), collective send+receive sizes (Extrae
                                50100001/50100002, OTF2 MpiCollectiveEnd). 0 when the trace
                                records no message for the call (MPI_Wait, MPI_Comm_rank...)
burst_duration_s     float64    the computation burst before the call: from the end of the
                                previous MPI call of the same rank/thread (or from the
                                thread's first record for its first call) to this entry
burst_instructions   float64    instructions retired in that burst (PAPI_TOT_INS or an alias,
                                see :data:`INSTRUCTION_COUNTERS`); NaN when not recorded
burst_cycles         float64    cycles in that burst (PAPI_TOT_CYC or an alias,
                                :data:`CYCLE_COUNTERS`); NaN when not recorded
burst_ipc            float64    burst_instructions / burst_cycles; NaN when either is missing
                                or cycles are 0
counter:NAME         float64    one column per other hardware counter of the trace (e.g.
                                ``"counter:PAPI_L2_TCM"``): its count in the burst; NaN when
                                not read in that burst. :attr:`Trace.counters` lists every
                                counter, :meth:`Trace.counter_column` gives its column
==================== ========== ==========================================================

A call's *signature* (seed 003: the MPI call identified by its dynamic position) is
``(call, call_path, call_lines)``; :meth:`Trace.signatures` numbers them. Counters are burst
totals (Paraver/Extrae counter events are deltas since the previous read and are summed over
the burst; OTF2 accumulated metrics are differenced between the previous exit and the entry).

Trace-level facts: ``n_ranks``, ``threads_per_rank``, ``duration_s`` (the whole trace, from
the file header where there is one), ``counters``, ``sources`` (files read), ``application``
(the Paraver application selected, 1-based), ``format`` and ``meta`` (reader notes: missing
.pcf, unterminated calls, unattributed messages, ...). A trace without MPI calls is a valid
empty Trace whose ``explanation`` says why.

The Trace is immutable by convention: treat ``calls`` as read-only (use ``.copy()`` to modify).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from phasekit.errors import UsageError

__all__ = [
    "BASE_COLUMNS",
    "COUNTER_PREFIX",
    "CYCLE_COUNTERS",
    "INSTRUCTION_COUNTERS",
    "PATH_SEP",
    "Trace",
    "empty_calls",
    "make_calls",
]

#: Separator of the levels in ``call_path`` and ``call_lines``.
PATH_SEP = " > "
#: Prefix of the columns of the other hardware counters.
COUNTER_PREFIX = "counter:"
#: Counter names read as instructions (first match wins), compared case-insensitively.
INSTRUCTION_COUNTERS: tuple[str, ...] = (
    "PAPI_TOT_INS", "instructions", "INST_RETIRED:ANY", "INST_RETIRED.ANY", "INST_RETIRED",
    "INSTRUCTIONS_RETIRED", "INSTRUCTION_RETIRED", "INST_RETIRED:ANY_P")
#: Counter names read as cycles (first match wins), compared case-insensitively.
CYCLE_COUNTERS: tuple[str, ...] = (
    "PAPI_TOT_CYC", "cycles", "cpu-cycles", "CPU_CLK_UNHALTED:THREAD_P", "CPU_CYCLES",
    "CPU_CLK_UNHALTED.THREAD_P", "CPU_CLK_THREAD_UNHALTED:THREAD_P", "CYCLES")

#: The fixed columns and their dtypes, in order (``counter:NAME`` columns follow).
BASE_COLUMNS: dict[str, str] = {
    "rank": "int32", "thread": "int32", "time_s": "float64", "duration_s": "float64",
    "call": "category", "call_path": "category", "call_lines": "category",
    "call_site": "category", "bytes": "float64", "burst_duration_s": "float64",
    "burst_instructions": "float64", "burst_cycles": "float64", "burst_ipc": "float64",
}
_CATEGORICAL = ("call", "call_path", "call_lines", "call_site")


def _match(names: Sequence[str], aliases: Sequence[str]) -> str | None:
    lower = {n.lower(): n for n in names}
    for alias in aliases:
        if alias.lower() in lower:
            return lower[alias.lower()]
    return None


def split_counters(names: Sequence[str]) -> tuple[str | None, str | None, list[str]]:
    """(instruction counter, cycle counter, the others) among counter ``names``."""
    ins = _match(names, INSTRUCTION_COUNTERS)
    cyc = _match(names, CYCLE_COUNTERS)
    return ins, cyc, [n for n in names if n not in (ins, cyc)]


def _categorical(codes: np.ndarray, labels: Sequence[str]) -> pd.Categorical:
    labels = list(labels)
    if len(set(labels)) != len(labels):  # two ids with one label: merge them
        uniq, inverse = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
        codes = inverse[codes] if len(codes) else codes
        labels = list(uniq)
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        codes = codes.astype(np.int64)
    return pd.Categorical.from_codes(codes, categories=labels)


def _sorted(rank: np.ndarray, thread: np.ndarray, time_s: np.ndarray) -> bool:
    """Whether the rows are sorted by rank, thread and time (no int64 temporaries)."""
    same_rank = rank[1:] == rank[:-1]
    if np.any(rank[1:] < rank[:-1]) or np.any(same_rank & (thread[1:] < thread[:-1])):
        return False
    return not np.any(same_rank & (thread[1:] == thread[:-1]) & (time_s[1:] < time_s[:-1]))


def make_calls(*, rank: np.ndarray, thread: np.ndarray, time_s: np.ndarray,
               duration_s: np.ndarray, call: tuple[np.ndarray, Sequence[str]],
               call_path: tuple[np.ndarray, Sequence[str]],
               call_lines: tuple[np.ndarray, Sequence[str]],
               call_site: tuple[np.ndarray, Sequence[str]], bytes: np.ndarray,
               burst_duration_s: np.ndarray, counters: Mapping[str, np.ndarray]
               ) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Build the ``calls`` frame of the contract from arrays (readers and generators).

    The categorical columns are given as ``(codes, labels)``; ``counters`` maps counter
    names to their burst totals. Rows are sorted by rank, thread and time (stable).
    Returns the frame and the counter names.
    """
    rank = np.asarray(rank, dtype=np.int32)
    thread = np.asarray(thread, dtype=np.int32)
    n = rank.size
    names = list(counters)
    ins, cyc, others = split_counters(names)
    instructions = np.asarray(counters[ins], dtype=np.float64) if ins else np.full(n, np.nan)
    cycles = np.asarray(counters[cyc], dtype=np.float64) if cyc else np.full(n, np.nan)
    ipc = np.full(n, np.nan)
    if ins and cyc:
        np.divide(instructions, cycles, out=ipc, where=cycles > 0)
    data: dict[str, Any] = {
        "rank": rank, "thread": thread,
        "time_s": np.asarray(time_s, dtype=np.float64),
        "duration_s": np.asarray(duration_s, dtype=np.float64),
        "call": _categorical(*call), "call_path": _categorical(*call_path),
        "call_lines": _categorical(*call_lines), "call_site": _categorical(*call_site),
        "bytes": np.asarray(bytes, dtype=np.float64),
        "burst_duration_s": np.asarray(burst_duration_s, dtype=np.float64),
        "burst_instructions": instructions, "burst_cycles": cycles, "burst_ipc": ipc,
    }
    for name in others:
        data[COUNTER_PREFIX + name] = np.asarray(counters[name], dtype=np.float64)
    frame = pd.DataFrame(data, copy=False)
    if n and not _sorted(rank, thread, frame["time_s"].to_numpy()):
        key = rank.astype(np.int64) << 32 | thread.astype(np.int64)
        order = np.lexsort((frame["time_s"].to_numpy(), key))
        frame = frame.take(order).reset_index(drop=True)
    return frame, tuple(names)


def empty_calls(counters: Sequence[str] = ()) -> pd.DataFrame:
    """A ``calls`` frame of the contract with no rows."""
    empty = np.zeros(0)
    cat = (np.zeros(0, dtype=np.int64), [])
    frame, _ = make_calls(rank=empty, thread=empty, time_s=empty, duration_s=empty, call=cat,
                          call_path=cat, call_lines=cat, call_site=cat, bytes=empty,
                          burst_duration_s=empty,
                          counters={name: empty for name in counters})
    return frame


@dataclass(frozen=True, eq=False)
class Trace:
    """The MPI calls of a parallel run (see the module docstring for the column contract)."""

    calls: pd.DataFrame
    n_ranks: int
    threads_per_rank: tuple[int, ...]
    duration_s: float
    counters: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    application: int | None = None
    format: str = ""
    explanation: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        calls = self.calls
        if not isinstance(calls, pd.DataFrame):
            raise UsageError(f"Trace.calls must be a pandas DataFrame, got {type(calls).__name__}")
        missing = [c for c in BASE_COLUMNS if c not in calls.columns]
        if missing:
            raise UsageError(f"Trace.calls lacks the columns {missing}")
        for name in _CATEGORICAL:
            if not isinstance(calls[name].dtype, pd.CategoricalDtype):
                raise UsageError(f"Trace.calls[{name!r}] must be categorical")
        threads = tuple(int(t) for t in self.threads_per_rank)
        if len(threads) != int(self.n_ranks):
            raise UsageError(f"threads_per_rank has {len(threads)} entries for "
                             f"{self.n_ranks} ranks")
        object.__setattr__(self, "n_ranks", int(self.n_ranks))
        object.__setattr__(self, "threads_per_rank", threads)
        object.__setattr__(self, "duration_s", float(self.duration_s))
        object.__setattr__(self, "counters", tuple(str(c) for c in self.counters))
        object.__setattr__(self, "sources", tuple(str(s) for s in self.sources))
        object.__setattr__(self, "meta", dict(self.meta))

    # --- shape -------------------------------------------------------------------------
    @property
    def n_calls(self) -> int:
        return len(self.calls)

    @property
    def empty(self) -> bool:
        return len(self.calls) == 0

    @property
    def instruction_counter(self) -> str | None:
        """The counter read as ``burst_instructions`` (None when the trace has none)."""
        return split_counters(self.counters)[0]

    @property
    def cycle_counter(self) -> str | None:
        """The counter read as ``burst_cycles`` (None when the trace has none)."""
        return split_counters(self.counters)[1]

    def counter_column(self, name: str) -> str:
        """The column holding counter ``name``'s burst totals."""
        if name not in self.counters:
            raise UsageError(f"no counter {name!r} in this trace; it has "
                             + (", ".join(self.counters) or "none"))
        ins, cyc, _ = split_counters(self.counters)
        if name == ins:
            return "burst_instructions"
        if name == cyc:
            return "burst_cycles"
        return COUNTER_PREFIX + name

    # --- access ------------------------------------------------------------------------
    def for_rank(self, rank: int, thread: int | None = None) -> pd.DataFrame:
        """The calls of one rank (and thread), in program order (a slice, no copy)."""
        if not 0 <= int(rank) < self.n_ranks:
            raise UsageError(f"rank {rank} is not in this trace (ranks 0 to {self.n_ranks - 1})")
        ranks = self.calls["rank"].to_numpy()
        lo, hi = np.searchsorted(ranks, [rank, rank + 1])
        part = self.calls.iloc[lo:hi]
        if thread is None:
            return part
        threads = part["thread"].to_numpy()
        lo, hi = np.searchsorted(threads, [thread, thread + 1])
        return part.iloc[lo:hi]

    def call_counts(self) -> pd.DataFrame:
        """Number of calls per rank (rows) and call name (columns), int64."""
        calls = self.calls
        table = pd.crosstab(calls["rank"], calls["call"]).reindex(
            index=range(self.n_ranks), fill_value=0)
        table.columns = [str(c) for c in table.columns]
        return table.astype(np.int64)

    def signatures(self) -> tuple[np.ndarray, pd.DataFrame]:
        """Number every call by its signature (call, call_path, call_lines).

        Returns ``codes`` (int64, one per row of ``calls``) and a frame of the unique
        signatures (columns call, call_path, call_lines, call_site), indexed by code.
        """
        cols = ["call", "call_path", "call_lines"]
        if self.empty:
            return np.zeros(0, dtype=np.int64), pd.DataFrame(columns=[*cols, "call_site"])
        key = np.zeros(self.n_calls, dtype=np.int64)
        for c in cols:  # one integer per combination of the categories (exact below 2**63)
            key = key * len(self.calls[c].cat.categories) + self.calls[c].cat.codes.to_numpy()
        inverse, _ = pd.factorize(key, sort=True)
        first = np.unique(inverse, return_index=True)[1]
        table = self.calls.iloc[first][[*cols, "call_site"]].reset_index(drop=True)
        for c in (*cols, "call_site"):
            table[c] = table[c].astype(str)
        return inverse.astype(np.int64), table

    def summary(self) -> dict[str, Any]:
        """Plain-data description: ranks, threads, duration, calls per type, counters."""
        calls = self.calls
        per_call = calls.groupby("call", observed=True).agg(
            count=("rank", "size"), time_s=("duration_s", "sum"), bytes=("bytes", "sum"))
        per_call = per_call.sort_values("count", ascending=False)
        return {
            "format": self.format, "sources": list(self.sources),
            "application": self.application, "n_ranks": self.n_ranks,
            "threads_per_rank": list(self.threads_per_rank), "duration_s": self.duration_s,
            "n_calls": self.n_calls, "counters": list(self.counters),
            "calls": {str(name): {"count": int(row["count"]), "time_s": float(row["time_s"]),
                                  "bytes": float(row["bytes"])}
                      for name, row in per_call.iterrows()},
            "n_signatures": len(self.signatures()[1]) if self.n_calls else 0,
            "explanation": self.explanation,
            "meta": {k: v for k, v in self.meta.items()
                     if isinstance(v, str | int | float | bool | type(None) | list)},
        }

    def __repr__(self) -> str:
        return (f"Trace({self.n_calls} calls, {self.n_ranks} ranks, "
                f"{self.duration_s:.6g} s, counters={list(self.counters)}, "
                f"format={self.format!r})")
