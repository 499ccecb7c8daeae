"""Traces are profiles too: the hardware counters of a :class:`~phasekit.trace.Trace` binned
into a :class:`~phasekit.profile.Profile`, so that the periodicity and phase analyses run on
an Extrae (Paraver) or Score-P (OTF2) trace as on a sampled profile.

What a bin holds (``by="all"``: summed over the selected ranks and their threads):

- every counter of the MPI calls' bursts (:mod:`phasekit.trace`: a burst's count is the
  counter's total between the previous call's exit and this call's entry), spread over the
  bins the burst overlaps in proportion to the overlap: the trace tells only the burst's total,
  an integral over its span, so the count is taken as uniform over it. The instruction and
  cycle counters are stored as ``instructions`` and ``cycles`` (their names in the trace, e.g.
  ``PAPI_TOT_INS``, are their source names: ``-m PAPI_TOT_INS`` still finds them), the others
  under their names. A burst without a read of a counter (NaN: another of Extrae's counter
  sets) adds nothing to it; nor does a thread's first burst when it has no span (the thread's
  first record is its first call: a chopped trace, whose first read holds what was counted
  before the trace begins; ``meta["first_bursts_left_out"]`` counts them);
- ``ipc``: the bin's instructions / cycles (NaN where cycles are 0), when both exist;
- ``mpi_share``: the time inside MPI calls / (inside + in bursts) of the selected threads in
  the bin (a call whose exit the trace lacks counts as no time);
- every counter sampled on its own (:class:`~phasekit.trace.CounterSamples`: the tasks of a
  Paraver "uncore" application reading DRAM counters on a timer): the counts of the reads in
  the bin holding the read's time. A read is the count since that source's previous read; it
  is put where it is read, not spread back over the interval, as the sampler's own timeline
  shows it (Paraver draws a read at its time; ``perf stat -I`` prints an interval at its end)
  and as the per-bin sums of the sampled counters are usually derived: the bins are then those
  sums exactly. The first read of a chopped trace has no start to spread from either. A bin
  without a read of a counter is NaN for it (never filled). With a bin near the sampling
  period, a sampler whose period drifts from the bin leaves a bin without a read (NaN) and
  gives the next two, every bin / drift bins (200 bins for 10.05 ms reads in 10 ms bins);
  sampled counters are node-wide, so they go with ``by="all"`` and ``by="node"`` whatever the
  ``ranks``, not with ``by="rank"``.

A bin in which no selected thread has a record (before its first, after its last) is NaN in
every metric but the sampled ones. Bins start at the trace's start; the last one ends at or
after the trace's end (the header's duration, or the last record) and may be partial.

The default bin (:func:`choose_bin`; our rule, tuned to no file): the period of the counters
sampled on their own when there are any (the median interval between two reads of one
source, over every source), rounded to the nearest 1, 2 or 5 x 10^k s: a shorter bin would
leave bins without a read; else one counter read per rank and thread per bin on average (the
trace's duration / the median number of reads of a thread; without counters, of MPI calls),
rounded up to 1, 2 or 5 x 10^k s: a shorter bin only divides a burst's uniform count; then, when
that gives fewer than :data:`MIN_BINS` bins, the bin that gives at least that many, rounded
down (never below the sampling period). The median gap between reads would be no density:
MPI calls come in clusters (LULESH: a median gap of 1.5 us between calls of one rank, 5 ms
between reads on average). ``bin_s`` overrides it.

``by``: ``"all"`` (default: one profile, the node's view a sampled profile gives),
``"rank"`` (one profile per rank, its own counters: a dict, as wide a set as any one rank's)
or ``"node"`` (one profile per node, from the Paraver header's task-to-node map; every rank on
one node when the trace does not say). ``meta`` of each profile: the trace's ``source`` and
``trace_format``, ``application``, ``bin_s`` and ``bin_rule`` (why that bin), ``by``,
``ranks``, ``n_ranks`` (of the trace), the ``sampled_sources``, ``source_names`` (the
counters' names in the trace) and ``first_bursts_left_out``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from phasekit.errors import UsageError
from phasekit.profile import SOURCE_NAMES_KEY, Profile, derived_ipc

__all__ = [
    "BY",
    "MAX_BINS",
    "MIN_BINS",
    "READABLE_STEPS",
    "TraceLike",
    "binning_note",
    "choose_bin",
    "profile_plan",
    "readable",
    "trace_profile",
]


class TraceLike(Protocol):
    """What is read of a :class:`phasekit.trace.Trace` here (named so, not imported:
    :meth:`phasekit.trace.Trace.profile` calls this module)."""

    application: int | None
    counters: tuple[str, ...]
    duration_s: float
    explanation: str
    format: str
    meta: Mapping[str, Any]
    n_ranks: int
    samples: Any  # phasekit.trace.CounterSamples or None
    sources: tuple[str, ...]

    @property
    def arrays(self) -> Mapping[str, np.ndarray]: ...
    @property
    def n_calls(self) -> int: ...
    @property
    def empty(self) -> bool: ...
    @property
    def instruction_counter(self) -> str | None: ...
    @property
    def cycle_counter(self) -> str | None: ...
    def counter_column(self, name: str) -> str: ...


#: The values ``by`` takes.
BY = ("all", "rank", "node")
#: Fewest bins a default bin gives a trace (our choice: the periodicity and phase analyses
#: need tens of samples to see a pattern repeat).
MIN_BINS = 50
#: Most bins a profile of a trace may have (a smaller ``bin_s`` is a UsageError).
MAX_BINS = 10_000_000
#: A default bin is one of these times a power of ten seconds.
READABLE_STEPS = (1, 2, 5)
#: Names of the metrics made here (a counter of the same name is renamed).
INSTRUCTIONS, CYCLES, IPC, MPI_SHARE = "instructions", "cycles", "ipc", "mpi_share"
_EDGE = 1e-9  # a time within this fraction of a bin below an edge is on it (float division)


# --- the bin ---------------------------------------------------------------------------------
def readable(seconds: float, how: str = "nearest") -> float:
    """``seconds`` as 1, 2 or 5 x 10^k: the ``"nearest"`` (on a log scale), the smallest not
    below (``"up"``) or the largest not above (``"down"``)."""
    if not (math.isfinite(seconds) and seconds > 0):
        raise UsageError(f"readable: expected a positive duration, got {seconds}")
    exponent = math.floor(math.log10(seconds))
    steps = [float(f"{s}e{e}") for e in (exponent - 1, exponent, exponent + 1)
             for s in READABLE_STEPS]
    if how == "up":
        return min(s for s in steps if s >= seconds * (1 - 1e-9))
    if how == "down":
        return max(s for s in steps if s <= seconds * (1 + 1e-9))
    return min(steps, key=lambda s: abs(math.log(s / seconds)))


def _span(seconds: float) -> str:
    """``0.01`` -> ``10 ms``: a bin or a period as a person reads it."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-9:.4g} ns"


def _streams(trace: TraceLike, rows: np.ndarray | None) -> np.ndarray:
    """One code per (rank, thread) of the rows (all rows when None)."""
    arrays = trace.arrays
    rank, thread = arrays["rank"], arrays["thread"]
    if rows is not None:
        rank, thread = rank[rows], thread[rows]
    return rank.astype(np.int64) * (int(thread.max()) + 1 if thread.size else 1) + thread


def _burst_counters(trace: TraceLike) -> list[tuple[str, np.ndarray]]:
    """(column, counts) of every counter the calls carry, instructions and cycles first."""
    arrays = trace.arrays
    ins, cyc = trace.instruction_counter, trace.cycle_counter
    names = [n for n in (ins, cyc) if n] + [n for n in trace.counters if n not in (ins, cyc)]
    return [(n, arrays[trace.counter_column(n)]) for n in names]


def _sampling_period(samples: Any) -> float | None:
    """The median interval between two reads of one source, over every source (robust to a
    missed read and to the short last interval of a sampler flushed at the trace's end)."""
    order = np.lexsort((samples.time_s, samples.source))
    times, sources = samples.time_s[order], samples.source[order]
    gaps = np.diff(times)[sources[1:] == sources[:-1]]
    gaps = gaps[gaps > 0]  # the counters one source reads at one time: one read
    return float(np.median(gaps)) if gaps.size else None


def _end_s(trace: TraceLike) -> float:
    """The end of the last bin: the trace's duration, or its last record when later."""
    end = float(trace.duration_s) if math.isfinite(trace.duration_s) else 0.0
    if trace.n_calls:
        arrays = trace.arrays
        exits = arrays["time_s"] + np.nan_to_num(arrays["duration_s"], nan=0.0)
        end = max(end, float(np.max(exits)))
    if trace.samples is not None:
        end = max(end, float(trace.samples.time_s.max()))
    return end


def _selected_rows(trace: TraceLike, ranks: list[int] | None) -> np.ndarray | None:
    if ranks is None:
        return None
    return np.flatnonzero(np.isin(trace.arrays["rank"], ranks))


def _check_ranks(trace: TraceLike, ranks: Sequence[int] | int | None) -> list[int] | None:
    if ranks is None:
        return None
    given = [ranks] if isinstance(ranks, int | np.integer) else list(ranks)
    try:
        chosen = sorted({int(r) for r in given})
    except (TypeError, ValueError):
        raise UsageError("expected rank numbers", parameter="ranks", value=ranks,
                         option="--rank") from None
    outside = [r for r in chosen if not 0 <= r < trace.n_ranks]
    if not chosen or outside:
        raise UsageError(f"expected ranks 0 to {trace.n_ranks - 1} of this trace",
                         parameter="ranks", value=ranks, option="--rank")
    return chosen


def choose_bin(trace: TraceLike, ranks: Sequence[int] | int | None = None
               ) -> tuple[float, str]:
    """The default bin of :func:`trace_profile` (module docstring: the rule) and why, in
    words (``"10 ms: the period of the counters sampled on their own, 10.05 ms, rounded"``).

    Parameters
    ----------
    trace
        The trace.
    ranks
        The ranks to bin (default all): the density is theirs.
    """
    chosen = _check_ranks(trace, ranks)
    end = _end_s(trace)
    period = _sampling_period(trace.samples) if trace.samples is not None else None
    floor = readable(period) if period else None
    candidates: list[tuple[float, str]] = []
    if floor is not None:
        candidates.append((floor, f"the period of the counters sampled on their own, "
                                  f"{_span(period)}, rounded"))  # type: ignore[arg-type]
    rows = _selected_rows(trace, chosen)
    if trace.n_calls and end > 0:
        counters = _burst_counters(trace)
        read = np.ones(trace.n_calls, dtype=bool)
        if counters:
            read = np.zeros(trace.n_calls, dtype=bool)
            for _, counts in counters:
                read |= np.isfinite(counts)
        if rows is not None:
            read = read[rows]
        streams = _streams(trace, rows)[read]
        if streams.size:
            per_stream = float(np.median(np.unique(streams, return_counts=True)[1]))
            every = end / per_stream
            what = "counter read" if counters else "MPI call"
            candidates.append((readable(every, "up"),
                               f"one {what} per rank and thread per bin on average, one every "
                               f"{_span(every)}, rounded up"))
    if not candidates and end > 0 and trace.samples is not None:  # one read per source
        candidates.append((readable(end / MIN_BINS, "down"),
                           f"{MIN_BINS} bins over the {_span(end)} trace"))
    if not candidates:
        raise UsageError("the trace has nothing to bin: no MPI call and no sampled counter"
                         + (f" ({trace.explanation})" if trace.explanation else ""))
    bin_s, why = max(candidates, key=lambda c: c[0])
    if end / bin_s < MIN_BINS:
        fewer = (readable(end / MIN_BINS, "down"),
                 f"at least {MIN_BINS} bins over the {_span(end)} trace")
        if floor is not None and fewer[0] < floor:
            fewer = candidates[0]  # not below the sampling period
        if fewer[0] < bin_s:
            bin_s, why = fewer
    return bin_s, f"{_span(bin_s)}: {why}"


def _check_bin(bin_s: float, end: float) -> None:
    if not (isinstance(bin_s, int | float) and math.isfinite(bin_s) and bin_s > 0):
        raise UsageError("expected a positive number of seconds", parameter="bin_s",
                         value=bin_s, option="--bin")
    if end / bin_s > MAX_BINS:
        raise UsageError(f"gives {math.ceil(end / bin_s)} bins over the {_span(end)} trace; at "
                         f"most {MAX_BINS} (a bin of {_span(end / MAX_BINS)} or more)",
                         parameter="bin_s", value=bin_s, option="--bin")


# --- binning ---------------------------------------------------------------------------------
def _sums(index: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """``weights`` summed per ``index`` into ``size`` float64 slots (``bincount``, which
    gives integers when there is no weight)."""
    return np.bincount(index, weights, minlength=size).astype(np.float64, copy=False)


def _spread(group: np.ndarray, start: np.ndarray, end: np.ndarray,
            weights: Sequence[np.ndarray], n_groups: int, n_bins: int, width: float
            ) -> list[np.ndarray]:
    """Each weight spread over ``[start, end]`` (seconds) in proportion to its overlap with
    each bin, summed per ``group``: one ``(n_groups, n_bins)`` array per weight (NaN weights
    add nothing). A span within one bin (or of no length) puts its weight in that bin.
    Vectorized: ``bincount`` for the bin where a span starts and, for the spans over several
    bins, the bin where it ends; the whole bins between them as a difference array summed
    along the bins."""
    a = start / width
    b = np.maximum(end / width, a)
    first = np.clip(np.floor(a + _EDGE), 0, n_bins - 1).astype(np.int64)
    last = np.clip(np.floor(b + _EDGE), 0, n_bins - 1).astype(np.int64)
    stride = n_bins + 1
    size = n_groups * stride
    base = group.astype(np.int64) * stride
    at_first = base + first
    several = np.flatnonzero(last > first)  # the spans over several bins (few, usually)
    s_first, s_last = at_first[several], base[several] + last[several]
    s_a, s_b = a[several], b[several]
    s_length = s_b - s_a
    f_first = np.ones(a.size)
    f_first[several] = np.clip(first[several] + 1 - s_a, 0.0, None) / s_length
    f_last = np.clip(s_b - last[several], 0.0, None) / s_length
    f_middle = 1.0 / s_length
    # the bins some span crosses whole, counted exactly: elsewhere the running sum's
    # rounding residue (a span's density added, then taken away) is set to zero
    crossed = np.cumsum((np.bincount(s_first + 1, minlength=size + 1)[:size]
                         - np.bincount(s_last, minlength=size)).reshape(n_groups, stride),
                        axis=1).ravel() > 0
    out = []
    for weight in weights:
        w = np.asarray(weight, dtype=np.float64)
        w = np.where(np.isnan(w), 0.0, w)
        w_several = w[several]
        total = _sums(at_first, w * f_first, size) + _sums(s_last, w_several * f_last, size)
        middle = w_several * f_middle
        steps = _sums(s_first + 1, middle, size + 1)[:size] - _sums(s_last, middle, size)
        running = np.cumsum(steps.reshape(n_groups, stride), axis=1).ravel()
        if not np.any(w_several < 0):
            np.clip(running, 0.0, None, out=running)
        total += np.where(crossed, running, 0.0)
        out.append(total.reshape(n_groups, stride)[:, :n_bins])
    return out


def _unique_names(names: list[str], taken: set[str], suffix: str) -> list[str]:
    out = []
    for name in names:
        new = name
        while new in taken:
            new = f"{new} ({suffix})"
        taken.add(new)
        out.append(new)
    return out


def _rank_nodes(trace: TraceLike) -> list[str]:
    """The node of each rank: the Paraver header's map when the trace spans several nodes,
    else the one node the .row names (or ``""``)."""
    given = trace.meta.get("rank_nodes")
    if isinstance(given, list) and len(given) == trace.n_ranks:
        return [str(n) for n in given]
    row = trace.meta.get("row")
    nodes = row.get("node") if isinstance(row, dict) else None
    one = str(nodes[0]) if isinstance(nodes, list) and len(nodes) == 1 else ""
    return [one] * trace.n_ranks


def _ranks_text(ranks: Sequence[int], n_ranks: int) -> str:
    ranks = list(ranks)
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if ranks == list(range(ranks[0], ranks[-1] + 1)):
        every = " (all)" if len(ranks) == n_ranks else ""
        return f"ranks {ranks[0]}-{ranks[-1]}{every}"
    return "ranks " + ", ".join(map(str, ranks))


def trace_profile(trace: TraceLike, bin_s: float | None = None, by: str = "all",
                  ranks: Sequence[int] | int | None = None) -> Any:
    """The hardware counters of ``trace`` binned into a Profile (module docstring: what a bin
    holds, the default bin, ``by``); :meth:`phasekit.trace.Trace.profile` calls it.

    Parameters
    ----------
    trace
        A :class:`~phasekit.trace.Trace` (:func:`phasekit.io.read_trace`).
    bin_s
        Width of a bin in seconds; default :func:`choose_bin`'s.
    by
        ``"all"`` (one Profile), ``"rank"`` (``{rank: Profile}``) or ``"node"``
        (``{node: Profile}``).
    ranks
        The ranks to bin (default all).

    Returns
    -------
    Profile or dict
        One profile (``by="all"``), or one per rank or node.
    """
    if by not in BY:
        raise UsageError(f"expected one of {', '.join(BY)}", parameter="by", value=by)
    chosen = _check_ranks(trace, ranks)
    end = _end_s(trace)
    if bin_s is None:
        width, why = choose_bin(trace, chosen)
    else:
        _check_bin(bin_s, end)
        width, why = float(bin_s), f"{_span(float(bin_s))}: given"
    if trace.empty and trace.samples is None:
        raise UsageError("the trace has nothing to bin: no MPI call and no sampled counter"
                         + (f" ({trace.explanation})" if trace.explanation else ""))
    n_bins = max(1, math.ceil(end / width - _EDGE))
    selected = chosen if chosen is not None else list(range(trace.n_ranks))
    rank_nodes = _rank_nodes(trace)
    if by == "all":
        keys: list[Any] = [None]
        rank_group = np.zeros(max(trace.n_ranks, 1), dtype=np.int64)
    elif by == "rank":
        keys = list(selected)
        rank_group = np.full(max(trace.n_ranks, 1), -1, dtype=np.int64)
        rank_group[selected] = np.arange(len(selected))
    else:
        keys = list(dict.fromkeys(rank_nodes[r] for r in selected))
        if trace.samples is not None:
            keys += [n for n in dict.fromkeys(trace.samples.source_nodes) if n not in keys]
        rank_group = np.array([keys.index(n) if n in keys else -1 for n in rank_nodes]
                              or [0], dtype=np.int64)
    n_groups = len(keys)

    left_out = 0
    columns: list[np.ndarray] = []  # each (n_groups, n_bins)
    names: list[str] = []
    sources: dict[str, str] = {}
    if trace.n_calls:
        arrays = trace.arrays
        rows = _selected_rows(trace, chosen)

        def take(values: np.ndarray) -> np.ndarray:
            return values if rows is None else values[rows]

        group = rank_group[take(arrays["rank"])]
        entry = take(arrays["time_s"])
        burst = np.fmax(take(arrays["burst_duration_s"]), 0.0)  # NaN: no time
        inside = np.fmax(take(arrays["duration_s"]), 0.0)
        counters = _burst_counters(trace)
        # a thread's first burst without a span: its counts were accumulated before the
        # thread's first record (a chopped trace), at no time the trace shows
        streams = _streams(trace, rows)
        unknown = np.r_[True, streams[1:] != streams[:-1]] & (burst <= 0)
        weights = [np.where(unknown, np.nan, take(c)) for _, c in counters]
        if counters:
            left_out = int(np.count_nonzero(
                unknown & np.any([np.isfinite(take(c)) & (take(c) != 0) for _, c in counters],
                                 axis=0)))
        burst_time, *counts = _spread(group, entry - burst, entry, [burst, *weights],
                                      n_groups, n_bins, width)
        (mpi_time,) = _spread(group, entry, entry + inside, [inside], n_groups, n_bins, width)
        covered = (burst_time + mpi_time) > 0
        # a bin with no record of any thread: NaN (zero-length spans cover nothing)
        for column in counts:
            column[~covered] = np.nan
        ins, cyc = trace.instruction_counter, trace.cycle_counter
        for (name, _), column in zip(counters, counts, strict=True):
            stored = INSTRUCTIONS if name == ins else CYCLES if name == cyc else name
            if stored != name:
                sources[stored] = name
            names.append(stored)
            columns.append(column)
        if ins and cyc:
            names.insert(2, IPC)
            columns.insert(2, derived_ipc(counts[0], counts[1]))
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.clip(mpi_time / (mpi_time + burst_time), 0.0, 1.0)
        share[~covered] = np.nan
        names.append(MPI_SHARE)
        columns.append(share)
    names = _unique_names(names, set(), "trace")
    samples = trace.samples
    sampled_sources: list[str] = []
    if samples is not None and by != "rank":
        node_group = np.array([keys.index(n) if n in keys else 0 if by == "all" else -1
                               for n in samples.source_nodes], dtype=np.int64)
        group = node_group[samples.source]
        keep = group >= 0
        n_counters = len(samples.counters)
        position = np.clip(np.floor(samples.time_s[keep] / width + _EDGE), 0,
                           n_bins - 1).astype(np.int64)
        key = (group[keep] * n_counters + samples.counter[keep]) * n_bins + position
        size = n_groups * n_counters * n_bins
        total = np.bincount(key, samples.value[keep], minlength=size)
        reads = np.bincount(key, minlength=size)
        total[reads == 0] = np.nan
        total = total.reshape(n_groups, n_counters, n_bins)
        sampled_names = _unique_names(list(samples.counters), set(names), "sampled")
        names += sampled_names
        columns += [total[:, k, :] for k in range(n_counters)]
        sampled_sources = list(samples.sources)
    if not columns:
        raise UsageError("the trace has nothing to bin for these ranks: no MPI call and no "
                         "sampled counter")

    meta_base: dict[str, Any] = {
        "source": trace.sources[0] if trace.sources else "", "trace_format": trace.format,
        "bin_s": width, "bin_rule": why, "by": by, "sampled_sources": sampled_sources,
        "n_ranks": trace.n_ranks}
    if trace.application is not None:
        meta_base["application"] = trace.application
    if left_out:
        meta_base["first_bursts_left_out"] = left_out
    if sources:
        meta_base[SOURCE_NAMES_KEY] = sources
    units = {name: "count" for name in names if name not in (IPC, MPI_SHARE)}
    units.update({n: "ratio" for n in (IPC, MPI_SHARE) if n in names})
    profiles: dict[Any, Profile] = {}
    for g, key in enumerate(keys):
        if by == "all":
            group_ranks, node = selected, (rank_nodes[0] if len(set(rank_nodes)) == 1 else "")
        elif by == "rank":
            group_ranks, node = [key], f"rank {key}"
        else:
            group_ranks, node = [r for r in selected if rank_nodes[r] == key], key
        values = np.column_stack([c[g] for c in columns])
        meta = {**meta_base, "ranks": group_ranks}
        if by == "node" and samples is not None:
            meta["sampled_sources"] = [s for s, n in zip(samples.sources, samples.source_nodes,
                                                         strict=True) if n == key]
        profiles[key] = Profile(values=values, period=width, metrics=tuple(names), start=0.0,
                                units=units, node=node, meta=meta)
    return profiles[None] if by == "all" else profiles


# --- words -----------------------------------------------------------------------------------
def profile_plan(trace: TraceLike, bin_s: float | None = None,
                 ranks: Sequence[int] | int | None = None) -> dict[str, Any] | None:
    """What :func:`trace_profile` would make of ``trace`` (``phasekit info`` on a trace):
    ``{"bin_s", "bin_rule", "n_bins", "metrics"}``; None when it has nothing to bin."""
    end = _end_s(trace)
    if (trace.empty and trace.samples is None) or end <= 0:
        return None
    chosen = _check_ranks(trace, ranks)
    if bin_s is None:
        width, why = choose_bin(trace, chosen)
    else:
        _check_bin(bin_s, end)
        width, why = float(bin_s), f"{_span(float(bin_s))}: given"
    names: list[str] = []
    if trace.n_calls:
        ins, cyc = trace.instruction_counter, trace.cycle_counter
        names = [INSTRUCTIONS if n == ins else CYCLES if n == cyc else n
                 for n, _ in _burst_counters(trace)]
        if ins and cyc:
            names.insert(2, IPC)
        names.append(MPI_SHARE)
        names = _unique_names(names, set(), "trace")
    if trace.samples is not None:
        names += _unique_names(list(trace.samples.counters), set(names), "sampled")
    return {"bin_s": width, "bin_rule": why, "n_bins": max(1, math.ceil(end / width - _EDGE)),
            "metrics": names}


def binning_note(profile: Profile) -> str | None:
    """The line that says a profile was binned from a trace, at which bin and over which
    ranks (``"note: binned from the Paraver trace at 10 ms (the period of the counters
    sampled on their own, 10.05 ms, rounded), ranks 0-7 (all) summed, and 12 sampling
    tasks"``); None for a profile not made by :func:`trace_profile`."""
    meta = profile.meta
    if "bin_rule" not in meta or "trace_format" not in meta:
        return None
    kind = {"paraver": "Paraver", "otf2": "OTF2"}.get(str(meta["trace_format"]),
                                                       str(meta["trace_format"]))
    size, _, why = str(meta["bin_rule"]).partition(": ")
    ranks = [int(r) for r in meta.get("ranks", [])]
    over = _ranks_text(ranks, int(meta.get("n_ranks", len(ranks)))) if ranks else "no rank"
    if len(ranks) > 1:
        over += " summed"
    sampled = len(meta.get("sampled_sources", []))
    extra = f", and {sampled} sampling task{'s' if sampled != 1 else ''}" if sampled else ""
    return (f"note: binned from the {kind} trace at {size} ({why}), {over}{extra}")
