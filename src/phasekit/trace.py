"""The Trace: the MPI calls of a parallel run, one row per call, as columns (docs/design.md).

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

A call's *signature* (Martínez Vera: the MPI call identified by its dynamic position) is
``(call, call_path, call_lines)``; :meth:`Trace.signatures` numbers them. Counters are burst
totals (Paraver/Extrae counter events are deltas since the previous read and are summed over
the burst; OTF2 accumulated metrics are differenced between the previous exit and the entry).

Trace-level facts: ``n_ranks``, ``threads_per_rank``, ``duration_s`` (the whole trace, from
the file header where there is one), ``counters``, ``sources`` (files read), ``application``
(the Paraver application selected, 1-based), ``format`` and ``meta`` (reader notes: missing
.pcf, unterminated calls, unattributed messages, ...). A trace without MPI calls is a valid
empty Trace whose ``explanation`` says why.

Counters read apart from the MPI calls, on a timer of their own (the "uncore" applications of
an Extrae trace: tasks that only sample DRAM or interconnect counters), are
:attr:`Trace.samples`, a :class:`CounterSamples` (None when the trace has none).
:meth:`Trace.profile` bins the counters of both into a :class:`~phasekit.profile.Profile`
(:mod:`phasekit.trace_profile`).

The same columns as NumPy arrays, without pandas: :attr:`Trace.arrays` (a
:class:`CallArrays`; the categorical columns as codes and labels). The readers build these,
and the DataFrame is made from them on first use of :attr:`Trace.calls`, so that what needs
only arrays (``phasekit structure``) does not import pandas (0.2 s). Built from a
DataFrame, a Trace makes its arrays from it instead.

The Trace is immutable by convention: treat ``calls`` and ``arrays`` as read-only (use
``.copy()`` to modify).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import FrozenInstanceError
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BASE_COLUMNS",
    "COUNTER_PREFIX",
    "CYCLE_COUNTERS",
    "INSTRUCTION_COUNTERS",
    "PATH_SEP",
    "CallArrays",
    "CounterSamples",
    "Trace",
    "empty_arrays",
    "empty_calls",
    "make_arrays",
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


def _categorical(codes: np.ndarray, labels: Sequence[str]) -> tuple[np.ndarray, tuple[Any, ...]]:
    """Codes and labels of a categorical column, two ids with one label merged into one."""
    labels = list(labels)
    if len(set(labels)) != len(labels):  # two ids with one label: merge them
        uniq, inverse = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
        codes = inverse[codes] if len(codes) else codes
        labels = list(uniq)
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        codes = codes.astype(np.int64)
    return codes, tuple(labels)


def _sorted(rank: np.ndarray, thread: np.ndarray, time_s: np.ndarray) -> bool:
    """Whether the rows are sorted by rank, thread and time (no int64 temporaries)."""
    same_rank = rank[1:] == rank[:-1]
    if np.any(rank[1:] < rank[:-1]) or np.any(same_rank & (thread[1:] < thread[:-1])):
        return False
    return not np.any(same_rank & (thread[1:] == thread[:-1]) & (time_s[1:] < time_s[:-1]))


class CallArrays(Mapping[str, np.ndarray]):
    """The ``calls`` of a Trace as NumPy arrays, in the column order and the row order of the
    contract (module docstring), without pandas: a read-only mapping from column name to
    array, where a categorical column (``call``, ``call_path``, ``call_lines``,
    ``call_site``) maps to its integer codes and :meth:`labels` gives its categories.
    :meth:`to_frame` makes the DataFrame of the contract (:attr:`Trace.calls`)."""

    def __init__(self, columns: Mapping[str, np.ndarray],
                 labels: Mapping[str, Sequence[Any]]) -> None:
        self._columns = dict(columns)
        self._labels = {name: tuple(values) for name, values in labels.items()}
        sizes = {len(v) for v in self._columns.values()}
        if len(sizes) > 1:
            raise UsageError(f"CallArrays: columns of different lengths {sorted(sizes)}")
        self._n = sizes.pop() if sizes else 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self._columns[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    @property
    def n_rows(self) -> int:
        return self._n

    def is_categorical(self, name: str) -> bool:
        return name in self._labels

    def labels(self, name: str) -> tuple[Any, ...]:
        """The categories of categorical column ``name`` (its codes index them)."""
        return self._labels[name]

    def to_frame(self) -> pd.DataFrame:
        """The ``calls`` DataFrame of the contract (imports pandas)."""
        import pandas as pd

        data: dict[str, Any] = {
            name: (pd.Categorical.from_codes(values, categories=list(self._labels[name]))
                   if name in self._labels else values)
            for name, values in self._columns.items()}
        return pd.DataFrame(data, copy=False)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> CallArrays:
        """The arrays of a ``calls`` DataFrame (categorical columns: codes and categories)."""
        import pandas as pd

        columns: dict[str, np.ndarray] = {}
        labels: dict[str, list[Any]] = {}
        for name in frame.columns:
            column = frame[name]
            if isinstance(column.dtype, pd.CategoricalDtype):
                columns[str(name)] = column.cat.codes.to_numpy()
                labels[str(name)] = list(column.cat.categories)
            else:
                columns[str(name)] = column.to_numpy()
        return cls(columns, labels)


def make_arrays(*, rank: np.ndarray, thread: np.ndarray, time_s: np.ndarray,
                duration_s: np.ndarray, call: tuple[np.ndarray, Sequence[str]],
                call_path: tuple[np.ndarray, Sequence[str]],
                call_lines: tuple[np.ndarray, Sequence[str]],
                call_site: tuple[np.ndarray, Sequence[str]], bytes: np.ndarray,
                burst_duration_s: np.ndarray, counters: Mapping[str, np.ndarray]
                ) -> tuple[CallArrays, tuple[str, ...]]:
    """Build the ``calls`` of the contract from arrays, as :class:`CallArrays` (readers and
    generators; no pandas).

    The categorical columns are given as ``(codes, labels)``; ``counters`` maps counter
    names to their burst totals. Rows are sorted by rank, thread and time (stable).
    Returns the arrays and the counter names.
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
    labels: dict[str, tuple[Any, ...]] = {}
    columns: dict[str, np.ndarray] = {
        "rank": rank, "thread": thread,
        "time_s": np.asarray(time_s, dtype=np.float64),
        "duration_s": np.asarray(duration_s, dtype=np.float64)}
    for name, given in (("call", call), ("call_path", call_path), ("call_lines", call_lines),
                        ("call_site", call_site)):
        columns[name], labels[name] = _categorical(*given)
    columns.update({
        "bytes": np.asarray(bytes, dtype=np.float64),
        "burst_duration_s": np.asarray(burst_duration_s, dtype=np.float64),
        "burst_instructions": instructions, "burst_cycles": cycles, "burst_ipc": ipc})
    for name in others:
        columns[COUNTER_PREFIX + name] = np.asarray(counters[name], dtype=np.float64)
    if n and not _sorted(rank, thread, columns["time_s"]):
        key = rank.astype(np.int64) << 32 | thread.astype(np.int64)
        order = np.lexsort((columns["time_s"], key))
        columns = {name: values[order] for name, values in columns.items()}
    return CallArrays(columns, labels), tuple(names)


def make_calls(**parts: Any) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Build the ``calls`` frame of the contract from arrays: :func:`make_arrays`'s keyword
    arguments, then its DataFrame. Returns the frame and the counter names."""
    arrays, names = make_arrays(**parts)
    return arrays.to_frame(), names


def empty_arrays(counters: Sequence[str] = ()) -> CallArrays:
    """The ``calls`` of the contract with no rows, as :class:`CallArrays`."""
    empty = np.zeros(0)
    cat = (np.zeros(0, dtype=np.int64), [])
    arrays, _ = make_arrays(rank=empty, thread=empty, time_s=empty, duration_s=empty, call=cat,
                            call_path=cat, call_lines=cat, call_site=cat, bytes=empty,
                            burst_duration_s=empty,
                            counters={name: empty for name in counters})
    return arrays


def empty_calls(counters: Sequence[str] = ()) -> pd.DataFrame:
    """A ``calls`` frame of the contract with no rows."""
    return empty_arrays(counters).to_frame()


class CounterSamples:
    """Counters a trace samples on their own, apart from its MPI calls (the tasks of a
    Paraver "uncore" application): one row per read of one counter by one source, sorted by
    time.

    ``time_s`` (float64) is the read's time from the start of the trace, ``source`` (int32)
    indexes :attr:`sources` (who read it: ``"APPL.TASK.THREAD"`` for Paraver, 1-based as in
    the .row), ``counter`` (int32) indexes :attr:`counters` (the counter names) and ``value``
    (float64) is the count since that source's previous read of that counter (Extrae writes
    every counter read so). :attr:`source_nodes` is the node of each source (``""`` when not
    known). Immutable by convention.
    """

    __slots__ = ("counter", "counters", "source", "source_nodes", "sources", "time_s", "value")

    def __init__(self, time_s: np.ndarray, source: np.ndarray, counter: np.ndarray,
                 value: np.ndarray, sources: Sequence[str], counters: Sequence[str],
                 source_nodes: Sequence[str] | None = None) -> None:
        time_s = np.asarray(time_s, dtype=np.float64)
        source = np.asarray(source, dtype=np.int32)
        counter = np.asarray(counter, dtype=np.int32)
        value = np.asarray(value, dtype=np.float64)
        if not time_s.shape == source.shape == counter.shape == value.shape or time_s.ndim != 1:
            raise UsageError("CounterSamples: time_s, source, counter and value must be 1-D "
                             "arrays of one length")
        sources, counters = tuple(map(str, sources)), tuple(map(str, counters))
        nodes = tuple(map(str, source_nodes)) if source_nodes is not None else ("",) * len(sources)
        if len(nodes) != len(sources):
            raise UsageError(f"CounterSamples: {len(nodes)} source nodes for {len(sources)} "
                             "sources")
        if time_s.size and (source.min() < 0 or source.max() >= len(sources)
                            or counter.min() < 0 or counter.max() >= len(counters)):
            raise UsageError("CounterSamples: a source or counter code outside its names")
        if time_s.size and np.any(np.diff(time_s) < 0):
            order = np.argsort(time_s, kind="stable")
            time_s, source, counter, value = (a[order] for a in (time_s, source, counter, value))
        for name, data in (("time_s", time_s), ("source", source), ("counter", counter),
                           ("value", value), ("sources", sources), ("counters", counters),
                           ("source_nodes", nodes)):
            object.__setattr__(self, name, data)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    @property
    def n_reads(self) -> int:
        return int(self.time_s.size)

    def __repr__(self) -> str:
        return (f"CounterSamples({self.n_reads} reads of {len(self.counters)} counters by "
                f"{len(self.sources)} sources)")


class Trace:
    """The MPI calls of a parallel run (see the module docstring for the column contract).

    ``calls`` is the DataFrame of the contract or its :class:`CallArrays` (what the readers
    give); either way :attr:`calls` is the DataFrame (made on first use) and :attr:`arrays`
    the arrays. Immutable: its attributes cannot be set."""

    __slots__ = ("_arrays", "_frame", "application", "counters", "duration_s", "explanation",
                 "format", "meta", "n_ranks", "samples", "sources", "threads_per_rank")

    def __init__(self, calls: pd.DataFrame | CallArrays, n_ranks: int,
                 threads_per_rank: Sequence[int], duration_s: float,
                 counters: Sequence[str] = (), sources: Sequence[str] = (),
                 application: int | None = None, format: str = "", explanation: str = "",
                 meta: Mapping[str, Any] | None = None,
                 samples: CounterSamples | None = None) -> None:
        arrays: CallArrays | None = None
        frame = None
        if isinstance(calls, CallArrays):
            arrays = calls
            names: Sequence[str] = list(calls)
            categorical = [name for name in _CATEGORICAL if calls.is_categorical(name)]
        else:
            import pandas as pd

            if not isinstance(calls, pd.DataFrame):
                raise UsageError(f"Trace.calls must be a pandas DataFrame, got "
                                 f"{type(calls).__name__}")
            frame = calls
            names = list(calls.columns)
            categorical = [name for name in _CATEGORICAL if name in names
                           and isinstance(calls[name].dtype, pd.CategoricalDtype)]
        missing = [c for c in BASE_COLUMNS if c not in names]
        if missing:
            raise UsageError(f"Trace.calls lacks the columns {missing}")
        for name in _CATEGORICAL:
            if name not in categorical:
                raise UsageError(f"Trace.calls[{name!r}] must be categorical")
        threads = tuple(int(t) for t in threads_per_rank)
        if len(threads) != int(n_ranks):
            raise UsageError(f"threads_per_rank has {len(threads)} entries for "
                             f"{n_ranks} ranks")
        init = object.__setattr__
        init(self, "_arrays", arrays)
        init(self, "_frame", frame)
        init(self, "n_ranks", int(n_ranks))
        init(self, "threads_per_rank", threads)
        init(self, "duration_s", float(duration_s))
        init(self, "counters", tuple(str(c) for c in counters))
        init(self, "sources", tuple(str(s) for s in sources))
        init(self, "application", application)
        init(self, "format", format)
        init(self, "explanation", explanation)
        init(self, "meta", dict(meta or {}))
        if samples is not None and not isinstance(samples, CounterSamples):
            raise UsageError(f"Trace.samples must be CounterSamples, got "
                             f"{type(samples).__name__}")
        init(self, "samples", samples if samples is not None and samples.n_reads else None)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self) -> dict[str, Any]:
        state = {name: getattr(self, name) for name in self.__slots__}
        if state["_frame"] is not None:  # the arrays are made again from it, exactly
            state["_arrays"] = None
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        object.__setattr__(self, "samples", None)  # pickled before traces had samples
        for name, value in state.items():
            object.__setattr__(self, name, value)

    # --- the calls -----------------------------------------------------------------------
    @property
    def calls(self) -> pd.DataFrame:
        """One row per MPI call, the DataFrame of the contract (made from :attr:`arrays` on
        first use, which imports pandas)."""
        if self._frame is None:
            object.__setattr__(self, "_frame", self._arrays.to_frame())  # type: ignore[union-attr]
        return self._frame

    @property
    def arrays(self) -> CallArrays:
        """The columns of :attr:`calls` as NumPy arrays (:class:`CallArrays`; no pandas)."""
        if self._arrays is None:
            object.__setattr__(self, "_arrays", CallArrays.from_frame(self._frame))
        return self._arrays  # type: ignore[return-value]

    # --- shape -------------------------------------------------------------------------
    @property
    def n_calls(self) -> int:
        return self._arrays.n_rows if self._arrays is not None else len(self._frame)

    @property
    def empty(self) -> bool:
        return self.n_calls == 0

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
        import pandas as pd

        calls = self.calls
        table = pd.crosstab(calls["rank"], calls["call"]).reindex(
            index=range(self.n_ranks), fill_value=0)
        table.columns = [str(c) for c in table.columns]
        return table.astype(np.int64)

    def signature_codes(self) -> tuple[np.ndarray, list[tuple[str, str, str, str]]]:
        """:meth:`signatures` without pandas: the ``codes`` and, per code, the signature's
        ``(call, call_path, call_lines, call_site)`` as text."""
        cols = ["call", "call_path", "call_lines"]
        if self.empty:
            return np.zeros(0, dtype=np.int64), []
        arrays = self.arrays
        key = np.zeros(self.n_calls, dtype=np.int64)
        for c in cols:  # one integer per combination of the categories (exact below 2**63)
            key = key * len(arrays.labels(c)) + arrays[c]
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        table = [tuple(str(arrays.labels(c)[code]) for code in arrays[c][first])
                 for c in (*cols, "call_site")]
        return inverse.reshape(-1).astype(np.int64), list(zip(*table, strict=True))

    def signatures(self) -> tuple[np.ndarray, pd.DataFrame]:
        """Number every call by its signature (call, call_path, call_lines).

        Returns ``codes`` (int64, one per row of ``calls``) and a frame of the unique
        signatures (columns call, call_path, call_lines, call_site), indexed by code.
        """
        import pandas as pd

        columns = ["call", "call_path", "call_lines", "call_site"]
        if self.empty:
            return np.zeros(0, dtype=np.int64), pd.DataFrame(columns=columns)
        codes, rows = self.signature_codes()
        table = pd.DataFrame({c: [row[k] for row in rows] for k, c in enumerate(columns)},
                             columns=columns)
        return codes, table

    # --- as a profile --------------------------------------------------------------------
    def profile(self, bin_s: float | None = None, by: str = "all",
                ranks: Sequence[int] | int | None = None) -> Any:
        """The trace's hardware counters binned into a :class:`~phasekit.profile.Profile`
        (:func:`phasekit.trace_profile.trace_profile`: what a bin holds, how the default
        bin is chosen).

        Parameters
        ----------
        bin_s
            Width of a bin in seconds; default from the trace's event density
            (:func:`phasekit.trace_profile.choose_bin`).
        by
            ``"all"`` (default): one profile, the counters summed over the ranks (the node's
            view); ``"rank"``: ``{rank: Profile}``, one per rank, its own counters only;
            ``"node"``: ``{node: Profile}``, the ranks of each node summed.
        ranks
            The ranks to bin (default all).

        Example::

            profile = trace.profile()              # e.g. 10 ms bins, all ranks summed
            per_rank = trace.profile(0.005, by="rank")
        """
        from phasekit.trace_profile import trace_profile

        return trace_profile(self, bin_s=bin_s, by=by, ranks=ranks)

    def summary(self, bin_s: float | None = None,
                ranks: Sequence[int] | int | None = None) -> dict[str, Any]:
        """Plain-data description: ranks, threads, duration, calls per type, counters, the
        counters sampled apart from the calls, and the profile :meth:`profile` would make
        (``bin_s``, ``ranks`` as it takes them): its bin, why, and its metrics."""
        from phasekit.trace_profile import profile_plan

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
            "n_signatures": len(self.signature_codes()[1]) if self.n_calls else 0,
            "sampled_counters": list(self.samples.counters) if self.samples else [],
            "sampled_sources": list(self.samples.sources) if self.samples else [],
            "profile": profile_plan(self, bin_s=bin_s, ranks=ranks),
            "explanation": self.explanation,
            "meta": {k: v for k, v in self.meta.items()
                     if isinstance(v, str | int | float | bool | type(None) | list)},
        }

    def __repr__(self) -> str:
        return (f"Trace({self.n_calls} calls, {self.n_ranks} ranks, "
                f"{self.duration_s:.6g} s, counters={list(self.counters)}, "
                f"format={self.format!r})")
