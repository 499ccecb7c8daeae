"""Folding: how counters evolve inside one iteration, averaged over many (BSC's Folding).

The Folding tool of the BSC performance tools (bsc-performance-tools/folding) gathers the
samples of many instances of one region into one synthetic instance, keeping each sample's
relative time within its instance, and fits a curve through them: the counters' evolution
inside the region, at a finer grain than any one instance was sampled. Here the instances
are the iterations of a loop (:func:`fold_loop`, Martínez Vera's loops) or the instances of a
periodic pattern (:func:`fold_pattern`, Phase-TA), or any spans given (:func:`fold`).

Method (ours, beside Folding's):

1. Each instance's span ``[start, end]`` is mapped to 0..1 and ``points`` positions (100)
   are placed evenly on it.
2. Each counter's cumulative count since the instance's start is read at the positions.
   From a trace, every computation burst's count (the counter's total between two MPI
   calls, :mod:`phasekit.trace`) is spread evenly over the burst, as
   :mod:`phasekit.trace_profile` does: the cumulative count is then piecewise linear with a
   knot at each burst's start and end, flat inside MPI calls, and is read exactly at any
   time, whatever the bin a profile of the trace would use. A counter sampled on its own
   (Paraver "uncore" tasks) counts since the source's previous read: its count is spread
   evenly over that interval (the profile of a trace puts it at the read instead: there a
   bin is a sum, here the fold needs the count's time). Those counters are node-wide: they
   are counted in full in the instance of every rank. From a profile, each bin's value is
   spread over the bin (the fold is then no finer than the bin).
3. Per instance the cumulative count is divided by its total (the *share*, 0 to 1, as
   Folding normalizes); its slope between positions is the *pace* (1 where the counter
   advances at the instance's mean pace) and the count per second the *rate*.
4. The instances are averaged position by position: mean, median and quartiles.

Ratios are folded from their parts, segment by segment: ``ipc`` from instructions over
cycles, ``mpi_share`` from the time inside MPI calls over the time in calls and bursts; a
profile's metric that is a level, not a count (unit ``ratio``, ``%``, ``W``... or named
``ipc``/``mpi_share``), as its time average over the segment. A profile metric without a
unit is taken as a count.

How this differs from Folding: Folding samples (a few samples per instance, at random
times) and fits a contour through the samples of all instances (kriging, or piecewise
linear regression with R's strucchange), so its curve depends on a fit and its parameters.
A trace gives every burst's exact count, so each instance's curve is known everywhere up to
the evenness inside a burst: we read it, with no fit and no smoothing, and the quartiles say
how much the instances differ. What a burst hides (its inside) stays hidden: the fold
resolves no detail shorter than the bursts, where Folding's samples inside long bursts do.
Folding also groups instances by duration and drops outliers before folding; we fold every
instance given and report the spread of their durations.

The iterations of a loop (:func:`phasekit.structure.link.loop_iterations`) run from one
entry of the loop's first MPI call to the next, per rank: the computation before that call
is counted at the end of the previous iteration (where the loop's top is in the source a
trace of MPI calls does not say), and the last iteration of each rank, which no next call
ends, is left out.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.options import Options, Rule
from phasekit.present import listed, plural
from phasekit.profile import Profile, resolve_metric
from phasekit.results import Result, check_version, json_array, plain, short_repr

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.periodicity.analyze import PeriodicityResult
    from phasekit.present import Presentation
    from phasekit.structure import StructureResult
    from phasekit.trace import Trace

__all__ = ["LEVEL_UNITS", "POINTS", "RESULT_KIND", "RESULT_VERSION", "FoldOptions",
           "FoldedCurve", "FoldedResult", "fold", "fold_loop", "fold_pattern"]

RESULT_KIND = "folded"
RESULT_VERSION = 1
#: Positions per instance (ours: 1 % steps).
POINTS = 100
#: Most positions per instance.
MAX_POINTS = 100_000
#: Units of a profile metric that is a level (averaged over time), not a count (summed).
LEVEL_UNITS = frozenset({"ratio", "%", "percent", "w", "watt", "watts", "hz", "khz", "mhz",
                         "ghz", "c", "celsius", "s/s"})
#: A burst longer than this share of an instance gets a note (the fold is even inside it).
LONG_BURST = 0.1
#: Names of profile metrics that are levels whatever their unit.
LEVEL_NAMES = frozenset({"ipc", "mpi_share"})
INSTRUCTIONS, CYCLES, IPC, MPI_SHARE = "instructions", "cycles", "ipc", "mpi_share"
STATS = ("mean", "median", "q25", "q75")


@dataclass(frozen=True)
class FoldOptions(Options):
    """The tuning parameter of :func:`fold`: ``points``, the positions read on each instance
    (100, ours: 1 % steps)."""

    points: int = POINTS

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        return [("points", isinstance(self.points, int | np.integer)
                 and 3 <= self.points <= MAX_POINTS, f"expected a whole number from 3 to "
                 f"{MAX_POINTS}")]


# --- the result ---------------------------------------------------------------------------------
Stats = dict[str, np.ndarray]


@dataclass(frozen=True, eq=False)
class FoldedCurve:
    """One metric folded. A ``count``: ``share`` (cumulative share at each position, 0 to 1),
    ``pace`` (slope of the share between positions: 1 is the instance's mean pace), ``rate``
    (mean count per second between positions) and ``total`` (count per instance). A
    ``ratio``: ``level`` (its value between positions) and ``total`` (its value over the
    whole instance). Each of share, pace, level, total holds the ``mean``, ``median``,
    ``q25`` and ``q75`` over the ``n_instances`` instances that have the metric."""

    metric: str
    kind: str
    unit: str
    n_instances: int
    total: Stats
    share: Stats | None = None
    pace: Stats | None = None
    rate: np.ndarray | None = None
    level: Stats | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metric": self.metric, "kind": self.kind, "unit": self.unit,
                               "n_instances": self.n_instances, "total": self.total}
        for name in ("share", "pace", "rate", "level"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> FoldedCurve:
        def stats(key: str) -> Stats | None:
            value = data.get(key)
            if value is None:
                return None
            return {k: json_array(value[k]) if isinstance(value[k], list)
                    else np.float64(np.nan if value[k] is None else value[k]) for k in STATS}

        total = stats("total")
        rate = data.get("rate")
        return FoldedCurve(metric=str(data["metric"]), kind=str(data["kind"]),
                           unit=str(data.get("unit") or ""),
                           n_instances=int(data["n_instances"]), total=total or {},
                           share=stats("share"), pace=stats("pace"),
                           rate=None if rate is None else json_array(rate),
                           level=stats("level"))


@dataclass(frozen=True, eq=False)
class FoldedResult(Result):
    """Counters folded over the instances of a region (module docstring): one
    :class:`FoldedCurve` per metric on ``positions`` (0 to 1 of the instance; the ``pace``,
    ``rate`` and ``level`` are between consecutive positions), the ``instances`` folded
    (start, end in seconds, rank; -1 for all the selected ranks summed), their durations
    (``duration_s``: mean, median, q25, q75), where the instances came from (``origin``:
    ``of`` is ``"loop"``, ``"pattern"`` or ``"spans"``, with the loop id and its call sites,
    or the pattern and its period), what was folded (``source``: its name, format and
    resolution), the ``params`` and the ``notes``."""

    KIND: ClassVar[str] = RESULT_KIND

    positions: np.ndarray
    curves: tuple[FoldedCurve, ...]
    starts: np.ndarray
    ends: np.ndarray
    ranks: np.ndarray
    duration_s: Mapping[str, float]
    origin: Mapping[str, Any]
    source: Mapping[str, Any]
    params: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def n_instances(self) -> int:
        return int(self.starts.size)

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(c.metric for c in self.curves)

    def curve(self, metric: str) -> FoldedCurve:
        """The folded curve of ``metric`` (UsageError naming the metrics otherwise)."""
        for c in self.curves:
            if c.metric == metric:
                return c
        raise UsageError(f"no folded metric {metric!r}; folded: {', '.join(self.metrics)}",
                         parameter="metric", value=metric)

    @property
    def segments(self) -> np.ndarray:
        """The middle of each segment between consecutive positions."""
        return (self.positions[1:] + self.positions[:-1]) / 2

    def __repr__(self) -> str:
        return short_repr(self, f"{self.n_instances} instances",
                          f"{self.duration_s.get('mean', math.nan):.4g} s each",
                          f"{len(self.curves)} metrics", f"{self.positions.size} positions")

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract: ``positions``, ``curves`` (one per metric:
        :class:`FoldedCurve`), ``instances`` (``start_s``, ``end_s``, ``rank`` lists),
        ``duration_s``, ``origin``, ``source``, ``params``, ``notes``."""
        return plain({
            "kind": RESULT_KIND, "version": RESULT_VERSION, "positions": self.positions,
            "curves": [c.to_dict() for c in self.curves],
            "instances": {"start_s": self.starts, "end_s": self.ends, "rank": self.ranks},
            "duration_s": dict(self.duration_s), "origin": dict(self.origin),
            "source": dict(self.source), "params": dict(self.params),
            "notes": list(self.notes)})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> FoldedResult:
        """A result from its JSON (:meth:`to_dict`)."""
        check_version(data, RESULT_KIND, RESULT_VERSION, source)
        try:
            instances = data["instances"]
            return FoldedResult(
                positions=json_array(data["positions"]),
                curves=tuple(FoldedCurve.from_dict(c) for c in data["curves"]),
                starts=json_array(instances["start_s"]), ends=json_array(instances["end_s"]),
                ranks=np.asarray(instances["rank"], np.int64),
                duration_s={k: float(v) if v is not None else math.nan
                            for k, v in dict(data["duration_s"]).items()},
                origin=dict(data.get("origin") or {}), source=dict(data.get("source") or {}),
                params=dict(data.get("params") or {}),
                notes=tuple(str(n) for n in data.get("notes") or ()))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed folded result: {exc}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """One row per metric (:func:`phasekit.folding.table.summary_rows`): instances,
        the count (or level) per instance, where the busiest tenth of the instance is, the
        share it holds and its pace, and how far the instances spread."""
        import pandas as pd

        from phasekit.folding.table import SUMMARY_COLUMNS, summary_rows

        return pd.DataFrame(summary_rows(self), columns=list(SUMMARY_COLUMNS))

    def present(self, name: str | None = None) -> Presentation:
        """The headline, the table of the metrics and the notes
        (:func:`phasekit.folding.table.presentation`)."""
        from phasekit.folding.table import presentation

        return presentation(self, name)

    def plot(self, ax: Axes | None = None, metrics: Sequence[str] | None = None) -> Figure:
        """Each count's mean share over 0..100 % of the instance with its quartile band,
        and below its pace (1 = even) and the ratios (:func:`phasekit.plot.folding.folded_figure`);
        on ``ax``, the shares only. ``metrics``: the metrics to draw (default the first
        counts, ipc and mpi_share)."""
        from phasekit.plot.folding import folded_figure

        return folded_figure(self, ax=ax, metrics=metrics)


# --- the cumulative counts --------------------------------------------------------------------
@dataclass(frozen=True)
class _Ledger:
    """Cumulative columns of one timeline (a thread's calls, a sampler's reads, a profile):
    knot times (non-decreasing) and the columns' cumulative values at them (knots x
    columns); linear between knots, flat outside. ``rank`` -1: counted in every instance."""

    times: np.ndarray
    values: np.ndarray
    columns: np.ndarray  # the indices of the columns it holds
    rank: int = -1
    bursts: np.ndarray | None = None  # a thread's computation bursts (start, end), n x 2

    def at(self, t: np.ndarray) -> np.ndarray:
        """The cumulative values at times ``t`` (any shape): ``t.shape + (columns,)``."""
        flat = t.ravel()
        n = self.times.size
        if n == 1:
            return np.broadcast_to(self.values[0], (*t.shape, self.values.shape[1])).copy()
        right = np.clip(np.searchsorted(self.times, flat, side="right"), 1, n - 1)
        left = right - 1
        width = self.times[right] - self.times[left]
        with np.errstate(invalid="ignore", divide="ignore"):
            fraction = np.clip(np.where(width > 0, (flat - self.times[left]) / width, 1.0),
                               0.0, 1.0)
        out = self.values[left] + fraction[:, None] * (self.values[right] - self.values[left])
        return out.reshape(*t.shape, self.values.shape[1])


@dataclass(frozen=True)
class _Curve:
    """How a metric is made of the ledgers' columns: a ``count`` is column ``a``; a
    ``ratio`` is column ``a`` over column ``b``."""

    metric: str
    kind: str
    unit: str
    a: int
    b: int = -1


@dataclass(frozen=True)
class _Source:
    ledgers: list[_Ledger]
    n_columns: int
    curves: list[_Curve]
    end_s: float
    info: dict[str, Any]
    missing: dict[str, float]  # metric -> share of its reads missing in the source
    sampled_from: int = -1  # the first column of the counters sampled on their own


def _trace_source(trace: Trace, ranks: list[int] | None) -> _Source:
    """The ledgers of a trace: per thread its bursts' counts, burst time and MPI time; per
    sampler and counter its reads (module docstring)."""
    arrays = trace.arrays
    ins, cyc = trace.instruction_counter, trace.cycle_counter
    counters = [n for n in (ins, cyc) if n] + [n for n in trace.counters if n not in (ins, cyc)]
    names = [INSTRUCTIONS if n == ins else CYCLES if n == cyc else n for n in counters]
    curves = [_Curve(name, "count", "count", k) for k, name in enumerate(names)]
    n_counters = len(counters)
    burst_col, mpi_col = n_counters, n_counters + 1
    ledgers: list[_Ledger] = []
    missing: dict[str, float] = {}
    if trace.n_calls:
        rank = arrays["rank"].astype(np.int64)
        keep = np.ones(rank.size, bool) if ranks is None else np.isin(rank, ranks)
        thread = arrays["thread"].astype(np.int64)
        entry = arrays["time_s"]
        burst = np.nan_to_num(np.fmax(arrays["burst_duration_s"], 0.0), nan=0.0)
        inside = np.nan_to_num(np.fmax(arrays["duration_s"], 0.0), nan=0.0)
        stream = rank * (int(thread.max()) + 1) + thread
        first = np.r_[True, stream[1:] != stream[:-1]]
        unknown = first & (burst <= 0)  # a chopped thread's first read: no time to put it
        counts = [np.asarray(arrays[trace.counter_column(n)], np.float64) for n in counters]
        for name, column in zip(names, counts, strict=True):
            read = np.isfinite(column[keep & ~unknown])
            if read.size and not read.all():
                missing[name] = float(1 - read.mean())
        during = np.column_stack([*[np.where(unknown, 0.0, np.nan_to_num(c, nan=0.0))
                                    for c in counts], burst, np.zeros_like(burst)]) \
            if rank.size else np.zeros((0, n_counters + 2))
        after = np.zeros_like(during)
        after[:, mpi_col] = inside
        bounds = np.flatnonzero(np.r_[True, stream[1:] != stream[:-1], True])
        columns = np.arange(n_counters + 2)
        for lo, hi in itertools.pairwise(bounds):
            if not keep[lo]:
                continue
            d, a = during[lo:hi], after[lo:hi]
            end_total = np.cumsum(d + a, axis=0)
            before = end_total - d - a
            values = np.stack([before, before + d, end_total], axis=1).reshape(-1, d.shape[1])
            times = np.stack([entry[lo:hi] - burst[lo:hi], entry[lo:hi],
                              entry[lo:hi] + inside[lo:hi]], axis=1).ravel()
            times = np.maximum.accumulate(times)
            ledgers.append(_Ledger(times, values, columns, int(rank[lo]),
                                   times.reshape(-1, 3)[:, :2]))
        if ins and cyc:
            curves.insert(2, _Curve(IPC, "ratio", "ratio", 0, 1))
        curves.append(_Curve(MPI_SHARE, "share", "ratio", mpi_col, burst_col))
    n_columns = n_counters + 2
    samples = trace.samples
    if samples is not None and samples.n_reads:
        taken = set(names) | {IPC, MPI_SHARE}
        for k, counter in enumerate(samples.counters):
            name = counter
            while name in taken:
                name = f"{name} (sampled)"
            taken.add(name)
            curves.append(_Curve(name, "count", "count", n_columns + k))
        order = np.lexsort((samples.time_s, samples.source, samples.counter))
        key = samples.counter[order].astype(np.int64) * len(samples.sources) \
            + samples.source[order]
        bounds = np.flatnonzero(np.r_[True, key[1:] != key[:-1], True])
        for lo, hi in itertools.pairwise(bounds):
            if hi - lo < 2:
                continue
            rows = order[lo:hi]
            values = np.nan_to_num(samples.value[rows], nan=0.0)
            cumulative = np.r_[0.0, np.cumsum(values[1:])]  # the first read: no start
            column = n_columns + int(samples.counter[rows[0]])
            ledgers.append(_Ledger(samples.time_s[rows], cumulative[:, None],
                                   np.array([column])))
        n_columns += len(samples.counters)
    end = float(trace.duration_s) if math.isfinite(trace.duration_s) else 0.0
    if trace.n_calls:
        end = max(end, float(np.max(arrays["time_s"] + np.nan_to_num(arrays["duration_s"]))))
    if samples is not None and samples.n_reads:
        end = max(end, float(samples.time_s.max()))
    info = {"name": trace.sources[0] if trace.sources else "", "format": trace.format,
            "resolution": "burst", "ranks": ranks if ranks is not None
            else list(range(trace.n_ranks)), "n_ranks": trace.n_ranks}
    return _Source(ledgers, n_columns, curves, end, info, missing, n_counters + 2)


def _is_level(profile: Profile, name: str) -> bool:
    unit = str(profile.units.get(name, "")).strip().lower()
    return unit in LEVEL_UNITS or name.lower() in LEVEL_NAMES


def _profile_source(profile: Profile) -> _Source:
    """One ledger of a profile: each count's bins summed, each level's time integral and
    the time it has a value (module docstring)."""
    columns: list[np.ndarray] = []
    curves: list[_Curve] = []
    missing: dict[str, float] = {}
    for j, name in enumerate(profile.metrics):
        values = profile.values[:, j]
        finite = np.isfinite(values)
        if finite.size and not finite.all():
            missing[name] = float(1 - finite.mean())
        unit = str(profile.units.get(name, ""))
        if _is_level(profile, name):
            curves.append(_Curve(name, "level", unit, len(columns), len(columns) + 1))
            columns += [np.where(finite, values, 0.0) * profile.period,
                        finite * profile.period]
        else:
            curves.append(_Curve(name, "count", unit or "count", len(columns)))
            columns.append(np.where(finite, values, 0.0))
    steps = np.column_stack(columns) if columns else np.zeros((profile.n_samples, 0))
    values = np.vstack([np.zeros((1, steps.shape[1])), np.cumsum(steps, axis=0)])
    times = np.arange(profile.n_samples + 1) * profile.period
    ledger = _Ledger(times, values, np.arange(steps.shape[1]))
    meta = profile.meta
    info = {"name": str(meta.get("source") or profile.node or ""), "format": "profile",
            "resolution": f"{profile.period:g} s bin"}
    return _Source([ledger], steps.shape[1], curves, profile.duration, info, missing)


# --- folding -----------------------------------------------------------------------------------
def _quantiles(x: np.ndarray, qs: Sequence[float]) -> list[np.ndarray]:
    """The quantiles ``qs`` of ``x`` over axis 0, NaN left out (linear, as
    ``np.nanpercentile``, vectorized: NumPy's loops over the columns when one holds a NaN)."""
    ordered = np.sort(x, axis=0)  # NaN last
    n = np.count_nonzero(np.isfinite(ordered), axis=0)
    out = []
    for q in qs:
        position = q * np.maximum(n - 1, 0)
        lo = np.floor(position).astype(np.int64)
        hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
        low = np.take_along_axis(ordered, lo[None], axis=0)[0]
        high = np.take_along_axis(ordered, hi[None], axis=0)[0]
        value = low + (position - lo) * (high - low)
        out.append(np.where(n > 0, value, np.nan))
    return out


def _stats(x: np.ndarray) -> Stats:
    """Mean, median and quartiles over axis 0, NaN rows left out."""
    if not x.shape[0]:
        empty = np.full(x.shape[1:], np.nan)
        return {k: empty.copy() for k in STATS}
    q25, median, q75 = _quantiles(x, (0.25, 0.5, 0.75))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(x, axis=0)
    return {"mean": mean, "median": median, "q25": q25, "q75": q75}


def _check_spans(iterations: Sequence[Sequence[float]], has_ranks: bool, n_ranks: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = [tuple(i) for i in iterations]
    if not rows:
        raise UsageError("expected at least one (start, end) span", parameter="iterations",
                         value=[])
    if any(len(r) not in (2, 3) for r in rows):
        raise UsageError("expected (start, end) or (start, end, rank) spans",
                         parameter="iterations", value=rows[:3])
    try:
        starts = np.array([float(r[0]) for r in rows])
        ends = np.array([float(r[1]) for r in rows])
        ranks = np.array([int(r[2]) if len(r) == 3 and r[2] is not None else -1
                          for r in rows], np.int64)
    except (TypeError, ValueError):
        raise UsageError("expected numbers: (start, end) seconds and a rank",
                         parameter="iterations", value=rows[:3]) from None
    if not (np.all(np.isfinite(starts)) and np.all(np.isfinite(ends)) and np.all(ends > starts)):
        raise UsageError("expected spans whose end comes after their start",
                         parameter="iterations", value=rows[:3])
    if np.any(ranks >= 0) and not has_ranks:
        raise UsageError("a profile has no ranks: give (start, end) spans",
                         parameter="iterations", value=rows[:3])
    if np.any(ranks >= n_ranks) or np.any(ranks < -1):
        raise UsageError(f"expected ranks 0 to {n_ranks - 1}", parameter="iterations",
                         value=rows[:3])
    return starts, ends, ranks


def _select(source: _Source, metrics: Sequence[str] | None,
            aliases: Mapping[str, Sequence[str]]) -> list[_Curve]:
    if metrics is None:
        return list(source.curves)
    known = [c.metric for c in source.curves]
    chosen = []
    for name in metrics:
        found = resolve_metric(name, known, aliases)
        if found is None:
            raise UsageError(f"no metric {name!r} to fold; there are: {', '.join(known)}",
                             parameter="metrics", value=name)
        chosen.append(source.curves[known.index(found)])
    return list(dict.fromkeys(chosen))


def _fold_curves(source: _Source, curves: list[_Curve], starts: np.ndarray, ends: np.ndarray,
                 ranks: np.ndarray, points: int) -> list[FoldedCurve]:
    positions = np.linspace(0.0, 1.0, points)
    times = starts[:, None] + positions[None, :] * (ends - starts)[:, None]
    cumulative = np.zeros((starts.size, points, source.n_columns))
    for ledger in source.ledgers:
        on = (ranks == -1) | (ranks == ledger.rank) if ledger.rank >= 0 else \
            np.ones(starts.size, bool)
        if not on.any():
            continue
        every = bool(on.all())
        read = ledger.at(times if every else times[on])
        read -= read[:, :1, :]
        first, last = int(ledger.columns[0]), int(ledger.columns[-1]) + 1
        contiguous = last - first == ledger.columns.size
        columns = slice(first, last) if contiguous else ledger.columns
        if every:
            cumulative[:, :, columns] += read
        elif contiguous:
            cumulative[np.flatnonzero(on), :, columns] += read
        else:
            cumulative[np.ix_(np.flatnonzero(on), np.arange(points), ledger.columns)] += read
    step = np.diff(cumulative, axis=1)
    width = ((ends - starts) / (points - 1))[:, None]
    out = []
    for c in curves:
        if c.kind == "count":
            total = cumulative[:, -1, c.a]
            has = np.isfinite(total) & (total > 0)
            with np.errstate(invalid="ignore", divide="ignore"):
                share = cumulative[has, :, c.a] / total[has, None]
                rate = step[has, :, c.a] / width[has]
            out.append(FoldedCurve(
                c.metric, "count", c.unit, int(has.sum()), _scalar_stats(total[has]),
                share=_stats(share), pace=_stats(np.diff(share, axis=1) * (points - 1)),
                rate=_stats(rate)["mean"]))
        else:
            a, b = step[:, :, c.a], step[:, :, c.b]
            whole_a, whole_b = cumulative[:, -1, c.a], cumulative[:, -1, c.b]
            if c.kind == "share":  # a part of a + b: the time inside MPI over all time
                b, whole_b = a + b, whole_a + whole_b
            with np.errstate(invalid="ignore", divide="ignore"):
                level = np.where(b > 0, a / b, np.nan)
                overall = np.where(whole_b > 0, whole_a / whole_b, np.nan)
            has = np.isfinite(overall)
            out.append(FoldedCurve(c.metric, "ratio", c.unit, int(has.sum()),
                                   _scalar_stats(overall[has]), level=_stats(level[has])))
    return out


#: Instances at most whose longest burst is measured (evenly chosen): it is a note.
_BURST_SAMPLE = 200


def _longest_burst(ledgers: Sequence[_Ledger], starts: np.ndarray, ends: np.ndarray,
                   ranks: np.ndarray) -> float:
    """The median over instances (at most :data:`_BURST_SAMPLE`) of the longest
    computation burst inside an instance, as a share of it: the fold is even inside."""
    chosen = np.unique(np.linspace(0, starts.size - 1, min(starts.size, _BURST_SAMPLE))
                       .astype(np.int64))
    longest = np.zeros(chosen.size)
    for ledger in ledgers:
        if ledger.bursts is None or not ledger.bursts.size:
            continue
        b0, b1 = ledger.bursts[:, 0], ledger.bursts[:, 1]
        for k, j in enumerate(chosen):
            if ranks[j] not in (-1, ledger.rank):
                continue
            lo = np.searchsorted(b1, starts[j], side="right")
            hi = np.searchsorted(b0, ends[j], side="left")
            if hi > lo:
                inside = np.minimum(b1[lo:hi], ends[j]) - np.maximum(b0[lo:hi], starts[j])
                longest[k] = max(longest[k], float(inside.max()) / (ends[j] - starts[j]))
    return float(np.median(longest)) if longest.size else 0.0


def _scalar_stats(x: np.ndarray) -> Stats:
    """:func:`_stats` of the values ``x`` (1-D), as scalars."""
    return {k: np.float64(v[0]) for k, v in _stats(x[:, None]).items()}


def _as_source(data: Trace | Profile, ranks: Sequence[int] | int | None
               ) -> tuple[_Source, dict[str, Sequence[str]], bool, int]:
    if isinstance(data, Profile):
        if ranks is not None:
            raise UsageError("a profile has no ranks to choose", parameter="ranks", value=ranks)
        return _profile_source(data), data.source_names, False, 0
    from phasekit.trace import Trace

    if not isinstance(data, Trace):
        raise UsageError(f"expected a Trace or a Profile, got {type(data).__name__}",
                         parameter="source")
    chosen = None
    if ranks is not None:
        given = [ranks] if isinstance(ranks, int | np.integer) else list(ranks)
        chosen = sorted({int(r) for r in given})
        if not chosen or chosen[0] < 0 or chosen[-1] >= data.n_ranks:
            raise UsageError(f"expected ranks 0 to {data.n_ranks - 1} of this trace",
                             parameter="ranks", value=ranks)
    aliases = {INSTRUCTIONS: [data.instruction_counter or INSTRUCTIONS],
               CYCLES: [data.cycle_counter or CYCLES]}
    return _trace_source(data, chosen), aliases, True, data.n_ranks


def fold(source: Trace | Profile, iterations: Sequence[Sequence[float]], *,
         metrics: Sequence[str] | None = None, ranks: Sequence[int] | int | None = None,
         origin: Mapping[str, Any] | None = None, options: FoldOptions | None = None,
         **keywords: Any) -> FoldedResult:
    """Fold the counters of ``source`` over the spans ``iterations`` (module docstring).

    ``source``: a :class:`~phasekit.trace.Trace` (burst resolution) or a
    :class:`~phasekit.profile.Profile` (bin resolution); ``iterations``: ``(start, end)``
    seconds from the start of the trace or profile (the selected ranks summed), or
    ``(start, end, rank)`` (that rank's counters; sampled counters are node-wide and count
    in full); ``metrics``: the metrics to fold (default all); ``ranks``: the ranks of a trace
    that ``(start, end)`` spans sum (default all); ``origin``: what the spans are, kept in
    the result (:func:`fold_loop` and :func:`fold_pattern` fill it); ``options``:
    :class:`FoldOptions` (``points``), or the same as keywords, never both. Spans outside
    the source are left out (a note says how many).
    """
    o = FoldOptions.of(options, keywords, verb="fold")
    data, aliases, has_ranks, n_ranks = _as_source(source, ranks)
    starts, ends, span_ranks = _check_spans(iterations, has_ranks, n_ranks)
    curves = _select(data, metrics, aliases)
    notes: list[str] = []
    inside = (starts >= -1e-9) & (ends <= data.end_s + 1e-9)
    if not inside.all():
        notes.append(f"{int((~inside).sum())} of {starts.size} spans reach outside the "
                     f"{data.end_s:.4g} s of the {data.info['format']}: left out")
        starts, ends, span_ranks = starts[inside], ends[inside], span_ranks[inside]
    if not starts.size:
        raise UsageError(f"no span lies inside the {data.end_s:.4g} s of this "
                         f"{data.info['format']}", parameter="iterations")
    folded = _fold_curves(data, curves, starts, ends, span_ranks, o.points)
    durations = ends - starts
    duration = {k: float(v) for k, v in _scalar_stats(durations).items()}
    for c in folded:
        if c.metric in data.missing and data.missing[c.metric] > 0:
            notes.append(f"{c.metric}: {100 * data.missing[c.metric]:.0f} % of its reads "
                         "missing in the source (counted as none)")
    if starts.size >= 4 and duration["median"] > 0:
        spread = (duration["q75"] - duration["q25"]) / duration["median"]
        if spread > 0.2:
            notes.append(f"the instances' durations spread by {100 * spread:.0f} % "
                         "(interquartile range over the median): several kinds of iteration "
                         "folded together?")
    if data.info["format"] != "profile":
        longest = _longest_burst(data.ledgers, starts, ends, span_ranks)
        if longest > LONG_BURST:
            notes.append(f"the longest computation burst covers {100 * longest:.0f} % of an "
                         "instance (median): a trace gives a burst's total only, so the fold "
                         "is even inside it")
        sampled = [c.metric for c in curves if 0 <= data.sampled_from <= c.a]
        if sampled and np.any(span_ranks >= 0):
            one = len(sampled) == 1
            notes.append(f"{plural(len(sampled), 'counter')} sampled by the node on "
                         f"{'its' if one else 'their'} own ({listed(sampled, 1)}): each "
                         f"rank's instance counts {'it' if one else 'them'} in full, so "
                         f"{'its' if one else 'their'} instances are the same iterations "
                         "seen from each rank's span")
    if data.info["format"] == "profile" and duration["mean"] > 0:
        bin_s = float(source.period)  # type: ignore[union-attr]
        notes.append(f"folded from a profile of {bin_s:g} s bins: {100 * bin_s / duration['mean']:.1f} "
                     "% of an instance; nothing finer is in it (a trace folds at burst "
                     "resolution)")
    return FoldedResult(
        positions=np.linspace(0.0, 1.0, o.points), curves=tuple(folded), starts=starts,
        ends=ends, ranks=span_ranks, duration_s=duration, origin=dict(origin or {"of": "spans"}),
        source=plain(data.info), params={**o.to_dict(), "metrics": list(metrics or []) or None},
        notes=tuple(notes))


def fold_loop(trace: Trace, structure_result: StructureResult, loop_id: int | None = None, *,
              metrics: Sequence[str] | None = None, options: FoldOptions | None = None,
              **keywords: Any) -> FoldedResult:
    """Fold the counters of ``trace`` over the iterations of one loop of
    ``structure_result`` (its complete iterations on every rank:
    :func:`phasekit.structure.link.loop_iterations`); ``loop_id`` default: the top-level
    loop taking the most time. The other parameters are :func:`fold`'s."""
    from phasekit.structure.link import loop_iterations, loop_sites
    from phasekit.structure.table import main_loop

    records = {r.get("id"): r for r in structure_result.loop_records()}
    if loop_id is None:
        main = main_loop(structure_result.loop_tree)
        if main is None:
            raise UsageError("the structure has no loop to fold"
                             + (f" ({structure_result.explanation})"
                                if structure_result.explanation else ""), parameter="loop_id")
        loop_id = int(main["id"])
    if loop_id not in records:
        raise UsageError(f"no loop {loop_id} in this structure (loops: "
                         f"{', '.join(str(i) for i in records) or 'none'})",
                         parameter="loop_id", value=loop_id)
    every = loop_iterations(structure_result, loop_id, trace, complete=False)
    complete = [it for it in every if it.complete]
    if not complete:
        raise UsageError(f"loop {loop_id} has no complete iteration to fold: each rank's "
                         "last iteration has no next one to end it", parameter="loop_id",
                         value=loop_id)
    record = records[loop_id]
    outer, _inner, _names = loop_sites(record)
    origin = {"of": "loop", "loop": loop_id, "sites": outer,
              "iterations_total": record.get("iterations_total"),
              "iteration_time_s": record.get("iteration_time_s"),
              "left_out": len(every) - len(complete)}
    result = fold(trace, [(it.start_s, it.end_s, it.rank) for it in complete],
                  metrics=metrics, origin=origin, options=options, **keywords)
    left = len(every) - len(complete)
    note = (f"{len(complete)} iterations of loop {loop_id} on {len({i.rank for i in complete})}"
            f" ranks, each from an entry of the loop's first MPI call to the next; the last "
            f"iteration of each run ({left}) has no next call to end it: left out")
    return _with_notes(result, note)


def fold_pattern(source: Trace | Profile, periodicity_result: PeriodicityResult,
                 pattern: int = 0, *, metrics: Sequence[str] | None = None,
                 options: FoldOptions | None = None, **keywords: Any) -> FoldedResult:
    """Fold the counters of ``source`` over the instances of one pattern of
    ``periodicity_result`` (0-based; their start and end from the pattern's instances).
    ``source``: the profile the analysis ran on, or the trace it was binned from (then at
    burst resolution). The metrics the analysis used come first; the other parameters are
    :func:`fold`'s."""
    from phasekit.structure.link import pattern_spans

    spans = pattern_spans(periodicity_result, pattern)
    chosen = metrics
    if chosen is None:
        data, aliases, _, _ = _as_source(source, None)
        known = [c.metric for c in data.curves]
        first = [m for m in periodicity_result.metrics if resolve_metric(m, known, aliases)]
        chosen = list(dict.fromkeys([*first, *known])) if first else None
    chosen_pattern = periodicity_result.patterns[pattern]
    origin = {"of": "pattern", "pattern": pattern, "period_s": chosen_pattern.period_s,
              "metrics": list(periodicity_result.metrics)}
    result = fold(source, [tuple(s) for s in spans], metrics=chosen, origin=origin,
                  options=options, **keywords)
    return _with_notes(result, f"{len(spans)} instance(s) of pattern {pattern + 1} "
                               f"(period {chosen_pattern.period_s:.4g} s), as the analysis "
                               "of " + "+".join(periodicity_result.metrics) + " found them")


def _with_notes(result: FoldedResult, *notes: str) -> FoldedResult:
    from dataclasses import replace

    return replace(result, notes=(*notes, *result.notes))
