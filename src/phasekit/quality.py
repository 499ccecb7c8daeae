"""How much of a profile holds data: missing values, frozen readings, counters that read zero,
gaps in the sampling, and the share of the run each metric covers with valid data (ours).

An analysis reports shares of the samples it could use; a metric that has no value for half
the run makes "83 % periodic" a share of half the run. :func:`data_quality` says it first, per
metric, in seconds of the run (``n_samples x period``), and every answer built on a profile
can say it with :meth:`DataQuality.headline`.

What counts, per metric (every choice below is ours):

- **missing**: a sample without a value (NaN, or not finite). Each run of them is a span; its
  ``cause`` is ``"sampling gap"`` when at least half of it lies in a sampling gap, and
  ``"counters read zero"`` when at least half of it lies in a zero span of another metric (a
  derived IPC is NaN where cycles read zero: the counters stopped, not the program).
- **sampling gaps**: runs of samples without a value in any metric of the profile. The
  readers put a profile on its regular grid and keep the grid points without a row as NaN
  rows (a jump in the file's timestamps larger than 1.5 periods leaves at least one), so a gap
  is a run of such rows (a row in which every value is empty reads the same).
- **zero**: the same reading, exactly 0, over at least :data:`MIN_SAMPLES` = 10 samples and
  :data:`MIN_SECONDS` = 1 s, in a counter that otherwise reads non-zero: outside such runs
  fewer than :data:`ZERO_ELSEWHERE` = 1 % of its values are 0, and the runs cover at most
  :data:`MAX_ZERO_SHARE` = 2/3 of the run. A counter that stops (the PMU taken by another
  tool, a process that ended while the sampler ran) reads zero while the run goes on; a
  quiet counter (I/O wait, disk, network, coherence traffic) reads zero most of the time or
  here and there, and is not reported. Data cannot tell a stopped counter from an idle
  stretch of one that is otherwise always busy (CPU idle time during a busy phase): both are
  reported, as readings that carry nothing about the program.
- **frozen**: the same non-zero value over at least as many samples and seconds, in a metric
  that otherwise changes from sample to sample (fewer than :data:`REPEAT_ELSEWHERE` = 1 % of
  its consecutive values equal outside such runs), and not at its smallest or largest value
  over the run (a gauge that saturates, the LLC occupancy at the cache's size, holds its
  extreme). A sensor or a sampler that stops updating repeats its last value.
- **constant**: one value over the whole run (a counter that never moves, a configuration
  column). Its own case: it has data, which says nothing; it has no frozen or zero span.
- **coverage**: the share of the run with valid data: a value, outside the zero and frozen
  spans. The thresholds are one second and ten samples so that a 5 ms profile needs 200
  equal samples (1 s) and a 1 s profile 10 (10 s): long enough that a real reading seldom
  repeats exactly, short enough to see the counters of a SPEC run read zero for 175 s.

What this reports on real data (the files of tests/data, and the 24 ``perf stat`` series of
NPB, PARSEC and Rodinia at 200 ms the project develops on): the NPB IS run's 8 hardware
counters read zero for its last 2.8 s (the program ended before the sampler), so its IPC has
no value there; in 4 co-run series a counter of the application reads zero for its first
seconds (2 to 47 s) while the other application already ran; a ``perf stat`` output whose
rows say "not counted" has a 200 ms sampling gap; CPU idle time reads zero in the two busy
phases of a back-to-back recording. Nothing is frozen: the LLC occupancy, held at the
cache's size for tens of seconds in most series, is the saturation case; quiet counters
(I/O wait, disk, coherence traffic, page faults) are not reported.

Every check is vectorized over the whole matrix (about 10 ms for 10 minutes at 5 ms of 20
metrics; 20 to 50 ms when most values repeat or are missing); spans are kept up to
:data:`SPANS_KEPT` per metric, the longest, and counted all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.present import Presentation, View, listed, plural

if TYPE_CHECKING:
    from phasekit.profile import Profile

__all__ = ["GAP_CAUSE", "MAX_ZERO_SHARE", "MIN_SAMPLES", "MIN_SECONDS", "REPEAT_ELSEWHERE",
           "SPANS_KEPT", "ZERO_CAUSE", "ZERO_ELSEWHERE", "DataQuality", "MetricQuality", "Span",
           "between", "data_quality", "seconds", "share"]

#: A zero or frozen span lasts at least this many samples and this many seconds.
MIN_SAMPLES = 10
MIN_SECONDS = 1.0
#: A counter "otherwise non-zero" reads 0 in fewer than this share of its values outside its
#: zero spans, and the spans cover at most this share of the run.
ZERO_ELSEWHERE = 0.01
MAX_ZERO_SHARE = 2 / 3
#: A metric "otherwise changing" repeats its previous value in fewer than this share of its
#: samples outside its long runs of one value.
REPEAT_ELSEWHERE = 0.01
#: Spans kept per metric (and gaps kept), the longest; all are counted.
SPANS_KEPT = 50
#: A missing span takes a cause that covers at least this share of it.
CAUSE_SHARE = 0.5

#: The kinds of span, and how a sentence says each.
KINDS = {"missing": "no value", "zero": "reads zero", "frozen": "frozen",
         "gap": "no value in any metric"}
#: The cause of a missing span that lies in a sampling gap, and in zero spans of others.
GAP_CAUSE = "sampling gap"
ZERO_CAUSE = "counters read zero"


def seconds(value: float) -> str:
    """A time or a duration in a sentence: ms below a second, else seconds (``88 s``,
    ``351 s``, ``1.5 s``, ``20 ms``)."""
    if value == 0:
        return "0 s"
    if abs(value) < 1:
        return f"{value * 1e3:.3g} ms"
    return f"{value:.0f} s" if abs(value) >= 100 else f"{value:.3g} s"


def between(start: float, end: float) -> str:
    """``from 88 s to 263 s``; with decimals when the two would read alike
    (``from 185.005 s to 185.07 s``)."""
    first, last = seconds(start), seconds(end)
    if first == last:
        first, last = f"{start:.6g} s", f"{end:.6g} s"
    return f"from {first} to {last}"


def share(fraction: float) -> str:
    """A share as a person reads it: ``50 %``, ``4.6 %``, ``0.25 %``."""
    value = 100 * fraction
    if value == 0 or value >= 10:
        return f"{value:.0f} %"
    return f"{value:.2g} %"


@dataclass(frozen=True)
class Span:
    """A stretch of the run, ``start_s`` to ``end_s`` seconds from the profile start, of one
    ``kind``: ``"missing"`` (no value; ``cause`` :data:`GAP_CAUSE` or :data:`ZERO_CAUSE` when
    known), ``"zero"``, ``"frozen"`` (at ``value``) or ``"gap"`` (no value in any metric)."""

    start_s: float
    end_s: float
    kind: str
    cause: str = ""
    value: float | None = None

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    def describe(self) -> str:
        """``88 s to 263 s: no value (counters read zero)``."""
        return f"{self.where()}: {self.what()}"

    def where(self) -> str:
        """``88 s to 263 s``."""
        return between(self.start_s, self.end_s).removeprefix("from ")

    def what(self) -> str:
        """``no value (counters read zero)``, ``reads zero``, ``frozen at 42``."""
        what = KINDS.get(self.kind, self.kind)
        if self.kind == "frozen" and self.value is not None:
            what += f" at {self.value:.6g}"
        return what + (f" ({self.cause})" if self.cause else "")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"start_s": self.start_s, "end_s": self.end_s, "kind": self.kind}
        if self.cause:
            data["cause"] = self.cause
        if self.value is not None:
            data["value"] = self.value
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Span:
        value = data.get("value")
        return cls(float(data["start_s"]), float(data["end_s"]), str(data["kind"]),
                   str(data.get("cause") or ""), None if value is None else float(value))


@dataclass(frozen=True)
class MetricQuality:
    """The data of one metric: ``n_missing`` samples without a value, the seconds that read
    zero (``zero_s``) or frozen (``frozen_s``), ``coverage`` (share of the run with valid
    data), ``constant`` (its value when it has one over the whole run), and its spans, the
    longest first (at most :data:`SPANS_KEPT`; ``n_spans`` counts them all)."""

    metric: str
    n_samples: int
    period_s: float
    n_missing: int
    zero_s: float
    frozen_s: float
    coverage: float
    constant: float | None
    n_spans: int
    spans: tuple[Span, ...]

    @property
    def missing_share(self) -> float:
        """Share of the samples without a value."""
        return self.n_missing / self.n_samples if self.n_samples else 0.0

    @property
    def missing_s(self) -> float:
        return self.n_missing * self.period_s

    @property
    def invalid_s(self) -> float:
        """Seconds of the run without valid data."""
        return (1.0 - self.coverage) * self.n_samples * self.period_s

    @property
    def complete(self) -> bool:
        """Whether it has valid data over the whole run."""
        return self.coverage >= 1.0

    def lacks(self) -> str:
        """What it lacks, in a verb phrase: ``no value``, ``reads zero``, ``frozen``, or ``no
        valid value`` when it is more than one of these."""
        kinds = [k for k, s in (("missing", self.missing_s), ("zero", self.zero_s),
                                ("frozen", self.frozen_s)) if s > 0]
        return KINDS[kinds[0]] if len(kinds) == 1 else "no valid value"

    def lack(self) -> str:
        """``has no value for 50 % of the run`` (``reads zero``, ``is frozen``, ``has no
        valid value``); ``is fully measured`` when it lacks nothing."""
        if self.complete:
            return "is fully measured"
        verb = {"no value": "has no value", "reads zero": "reads zero",
                "frozen": "is frozen"}.get(self.lacks(), "has no valid value")
        return f"{verb} for {share(1.0 - self.coverage)} of the run"

    def measured(self) -> str:
        """``fully measured`` or ``measured over 80 % of the run``."""
        return ("fully measured" if self.complete
                else f"measured over {share(self.coverage)} of the run")

    def sentence(self) -> str:
        """``no value for 175 s of 351 s (50 %), from 88 s to 263 s (counters read zero)``:
        how long it lacks valid data, and where (the longest span; the others counted)."""
        duration = self.n_samples * self.period_s
        if self.complete:
            return f"data over the whole run ({seconds(duration)})"
        text = (f"{self.lacks()} for {seconds(self.invalid_s)} of {seconds(duration)} "
                f"({share(1.0 - self.coverage)})")
        if not self.spans:
            return text
        longest = self.spans[0]
        where = between(longest.start_s, longest.end_s)
        if self.n_spans > 1:
            where = f"in {self.n_spans} spans, the longest {where}"
        held = (f"at {longest.value:.6g}" if longest.kind == "frozen"
                and longest.value is not None else "")
        notes = []
        if self.lacks() == "no valid value":
            notes.append(f"{KINDS[longest.kind]} {held}".strip())
        elif held:
            notes.append(held)
        if longest.cause:
            notes.append(longest.cause)
        return f"{text}, {where}" + (f" ({', '.join(notes)})" if notes else "")

    def to_dict(self) -> dict[str, Any]:
        return {"n_missing": self.n_missing, "missing_share": self.missing_share,
                "zero_s": self.zero_s, "frozen_s": self.frozen_s, "coverage": self.coverage,
                "constant": self.constant, "n_spans": self.n_spans,
                "spans": [s.to_dict() for s in self.spans]}

    @classmethod
    def from_dict(cls, metric: str, data: Mapping[str, Any], *, n_samples: int,
                  period_s: float) -> MetricQuality:
        constant = data.get("constant")
        return cls(metric, n_samples, period_s, int(data["n_missing"]), float(data["zero_s"]),
                   float(data["frozen_s"]), float(data["coverage"]),
                   None if constant is None else float(constant), int(data["n_spans"]),
                   tuple(Span.from_dict(s) for s in data.get("spans", ())))


@dataclass(frozen=True)
class DataQuality:
    """What data a profile holds (:func:`data_quality`): one :class:`MetricQuality` per
    metric, the sampling gaps (the longest first, at most :data:`SPANS_KEPT`; ``n_gaps``
    counts them, ``gap_s`` sums them) and the thresholds used."""

    n_samples: int
    period_s: float
    metrics: tuple[MetricQuality, ...]
    gaps: tuple[Span, ...] = ()
    n_gaps: int = 0
    gap_s: float = 0.0
    min_samples: int = MIN_SAMPLES
    min_seconds: float = MIN_SECONDS

    @property
    def duration_s(self) -> float:
        return self.n_samples * self.period_s

    @property
    def complete(self) -> bool:
        """Whether every metric has valid data over the whole run."""
        return all(q.complete for q in self.metrics)

    def metric(self, name: str) -> MetricQuality:
        """The quality of metric ``name``; KeyError naming the metrics when it has none."""
        for quality in self.metrics:
            if quality.metric == name:
                return quality
        raise KeyError(f"no metric {name!r} in this data quality; it has: "
                       + ", ".join(q.metric for q in self.metrics))

    def coverage_of(self, metric: str) -> float:
        """Share of the run in which ``metric`` has valid data (0..1)."""
        return self.metric(metric).coverage

    def headline(self, metrics: Sequence[str] | None = None) -> str:
        """One sentence on the data of ``metrics`` (default: all): the metric that lacks most
        (``ipc: no value for 175 s of 351 s (50 %), from 88 s to 263 s (counters read
        zero)``) and how many more lack data; or ``every metric has data over the whole
        run`` (with the constant ones named)."""
        chosen = (list(self.metrics) if metrics is None
                  else [self.metric(name) for name in metrics])
        lacking = sorted((q for q in chosen if not q.complete), key=lambda q: q.coverage)
        if not lacking:
            subject = (f"{chosen[0].metric} has" if len(chosen) == 1
                       else "every metric has")
            text = f"{subject} data over the whole run"
            constant = [q.metric for q in chosen if q.constant is not None]
            if constant and len(chosen) > 1:
                text += (f" ({listed(constant)} {'is' if len(constant) == 1 else 'are'} "
                         "constant)")
            return text
        worst = lacking[0]
        text = f"{worst.metric}: {worst.sentence()}"
        if len(lacking) > 1:
            others = [f"{q.metric} ({share(1.0 - q.coverage)})" for q in lacking[1:]]
            text += (f"; {plural(len(others), 'more metric')} "
                     f"{'lacks' if len(others) == 1 else 'lack'} data: {listed(others)}")
        return text

    def view(self, title: str = "Data quality", *, shown: int = 3) -> View:
        """One row per metric: the share of the run with valid data, the samples without a
        value, the seconds that read zero or frozen, and its spans, the longest first (at
        most ``shown``, the rest counted; a constant metric says so)."""
        rows = []
        for q in self.metrics:
            spans = [s.describe() for s in q.spans[:shown]]
            if q.n_spans > shown:
                spans.append(f"and {q.n_spans - shown} more")
            if q.constant is not None:
                spans.insert(0, f"constant ({q.constant:.6g}) over the whole run")
            rows.append((q.metric, share(q.coverage),
                         f"{q.n_missing} ({share(q.missing_share)})" if q.n_missing else "0",
                         seconds(q.zero_s) if q.zero_s else "-",
                         seconds(q.frozen_s) if q.frozen_s else "-",
                         "; ".join(spans) or "-"))
        return View(title, ("metric", "valid", "missing", "reads zero", "frozen", "spans"),
                    tuple(rows), numeric=(False, True, True, True, True, False),
                    wrap=(False, False, False, False, False, True))

    def notes(self) -> tuple[str, ...]:
        """A note on the sampling gaps, when there are any."""
        if not self.n_gaps:
            return ()
        where = "; ".join(s.where() for s in self.gaps[:3])
        more = f" and {self.n_gaps - 3} more" if self.n_gaps > 3 else ""
        return (f"sampling gaps (no value in any metric: rows missing or empty) for "
                f"{seconds(self.gap_s)} of "
                f"{seconds(self.duration_s)} ({share(self.gap_s / self.duration_s)}) in "
                f"{plural(self.n_gaps, 'gap')}: {where}{more}",)

    def present(self, name: str | None = None) -> Presentation:
        """The headline (prefixed with ``name``), the table of :meth:`view` and the note on
        the sampling gaps."""
        headline = self.headline()
        return Presentation(f"{name}: {headline}" if name else headline, (self.view(),),
                            self.notes())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (lists, floats, None)."""
        return {"n_samples": self.n_samples, "period_s": self.period_s,
                "duration_s": self.duration_s, "complete": self.complete,
                "min_samples": self.min_samples, "min_seconds": self.min_seconds,
                "n_gaps": self.n_gaps, "gap_s": self.gap_s,
                "gaps": [s.to_dict() for s in self.gaps],
                "metrics": {q.metric: q.to_dict() for q in self.metrics}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DataQuality:
        n, period = int(data["n_samples"]), float(data["period_s"])
        return cls(n, period,
                   tuple(MetricQuality.from_dict(m, q, n_samples=n, period_s=period)
                         for m, q in data["metrics"].items()),
                   tuple(Span.from_dict(s) for s in data.get("gaps", ())),
                   int(data.get("n_gaps", 0)), float(data.get("gap_s", 0.0)),
                   int(data.get("min_samples", MIN_SAMPLES)),
                   float(data.get("min_seconds", MIN_SECONDS)))


# --- the checks ---------------------------------------------------------------------------------
def data_quality(profile: Profile, metrics: Sequence[str] | None = None, *,
                 min_samples: int = MIN_SAMPLES, min_seconds: float = MIN_SECONDS
                 ) -> DataQuality:
    """The data ``profile`` holds, per metric (module docstring): missing values, zero and
    frozen spans, sampling gaps and the share of the run with valid data.

    Parameters
    ----------
    profile
        The profile.
    metrics
        The metrics to report, as :meth:`~phasekit.profile.Profile.resolve` names them
        (``ipc`` also when derived from instructions and cycles); default: all of them.
        Causes and sampling gaps look at every metric of the profile.
    min_samples, min_seconds
        How long a zero or frozen span lasts at least (both).
    """
    stored = list(profile.metrics)
    names = stored if metrics is None else [profile.resolve(m, derived=True) for m in metrics]
    derived = [m for m in dict.fromkeys(names) if m not in stored]
    values = profile.values
    if derived:
        values = np.column_stack([values, profile.select(derived).values])
    columns = stored + derived
    n, period = profile.n_samples, profile.period
    least = max(int(min_samples), math.ceil(min_seconds / period - 1e-9), 2)
    found = _scan(values, least, len(stored))
    cause_rows = {GAP_CAUSE: found.gaps, ZERO_CAUSE: found.zero_rows()}
    out = [found.metric(name, columns.index(name), period, cause_rows)
           for name in dict.fromkeys(names)]
    starts, ends = _column_runs(found.gaps[None, :])
    longest = np.lexsort((starts, starts - ends))[:SPANS_KEPT]
    return DataQuality(
        n, period, tuple(out),
        tuple(Span(int(starts[k]) * period, int(ends[k]) * period, "gap")
              for k in longest.tolist()),
        int(starts.size), float((ends - starts).sum() * period), int(min_samples),
        float(min_seconds))


def _column_runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs of True along each row of ``mask`` (columns x samples): their first sample
    and one past their last, as ``column * n + sample``, in that order."""
    n = mask.shape[1]
    edges = np.diff(mask.view(np.int8), axis=1, prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return starts - starts // (n + 1), ends - ends // (n + 1)  # from n + 1 to n per column


@dataclass
class _Scan:
    """What one pass over the value matrix found (positions are ``column * n + sample``,
    runs sorted by position)."""

    n: int
    missing: tuple[np.ndarray, np.ndarray]  # runs of missing values
    zero: tuple[np.ndarray, np.ndarray]  # zero spans of counters otherwise non-zero
    frozen: tuple[np.ndarray, np.ndarray]  # frozen spans
    frozen_values: np.ndarray
    n_missing: np.ndarray
    constant: np.ndarray  # the value of a constant column, else NaN
    gaps: np.ndarray  # per sample: whether every stored column misses a value

    def zero_rows(self) -> np.ndarray:
        """Samples in a zero span of any column."""
        marks = np.zeros(self.n + 1, dtype=np.int64)
        starts, ends = self.zero
        np.add.at(marks, starts % self.n, 1)
        np.add.at(marks, (ends - 1) % self.n + 1, -1)
        return np.cumsum(marks[:self.n]) > 0

    def metric(self, name: str, j: int, period: float,
               cause_rows: Mapping[str, np.ndarray]) -> MetricQuality:
        n = self.n
        lo, hi = j * n, (j + 1) * n

        def runs(found: tuple[np.ndarray, np.ndarray]) -> tuple[slice, np.ndarray, np.ndarray]:
            starts, ends = found
            at = slice(*np.searchsorted(starts, [lo, hi]).tolist())
            return at, starts[at] - lo, ends[at] - lo

        _, *missing = runs(self.missing)
        _, *zero = runs(self.zero)
        at, *frozen = runs(self.frozen)
        zero_n = int((zero[1] - zero[0]).sum())
        frozen_n = int((frozen[1] - frozen[0]).sum())
        n_missing = int(self.n_missing[j])
        coverage = (n - n_missing - zero_n - frozen_n) / n if n else 0.0
        kinds = np.concatenate([np.zeros(missing[0].size, np.int8),
                                np.ones(zero[0].size, np.int8),
                                np.full(frozen[0].size, 2, np.int8)])
        values = np.concatenate([np.full(missing[0].size + zero[0].size, np.nan),
                                 self.frozen_values[at]])
        starts = np.concatenate([missing[0], zero[0], frozen[0]])
        ends = np.concatenate([missing[1], zero[1], frozen[1]])
        key = (starts - ends) * (n + 1) + starts  # the longest first, then the earliest
        if key.size > SPANS_KEPT:
            key_kept = np.argpartition(key, SPANS_KEPT)[:SPANS_KEPT]
            order = key_kept[np.argsort(key[key_kept])]
        else:
            order = np.argsort(key)
        spans = []
        for k in order.tolist():
            s, e, kind = int(starts[k]), int(ends[k]), int(kinds[k])
            cause = ""
            if kind == 0:
                cause = next((label for label, rows in cause_rows.items()
                              if rows[s:e].mean() >= CAUSE_SHARE), "")
            value = None if kind != 2 else float(values[k])
            spans.append(Span(s * period, e * period, ("missing", "zero", "frozen")[kind],
                              cause, value))
        constant = float(self.constant[j])
        return MetricQuality(name, n, period, n_missing, zero_n * period, frozen_n * period,
                             coverage, None if math.isnan(constant) else constant,
                             int(starts.size), tuple(spans))


def _scan(values: np.ndarray, least: int, stored: int) -> _Scan:
    """Missing runs, zero spans and frozen spans of every column of ``values`` (module
    docstring), spans at least ``least`` samples long; ``gaps`` marks the samples without a
    value in any of the first ``stored`` columns. The comparisons run on the row-major matrix
    as it is; only boolean masks are transposed (a column-major copy of the values costs more
    than all the rest)."""
    n, m = values.shape
    x = np.asarray(values, dtype=np.float64)
    if n == 0 or m == 0:
        empty = np.empty(0, dtype=np.int64)
        return _Scan(n, (empty, empty), (empty, empty), (empty, empty), np.empty(0),
                     np.zeros(m, dtype=np.int64), np.full(m, np.nan),
                     np.zeros(n, dtype=bool))
    lacking = ~np.isfinite(x)
    if lacking.any() and np.isinf(x).any():
        x = np.where(lacking, np.nan, x)  # an infinite value is missing, and repeats nothing
    lacking_by_column = np.ascontiguousarray(lacking.T)
    gaps = lacking_by_column[:stored].all(axis=0)
    n_missing = np.count_nonzero(lacking_by_column, axis=1)
    same = np.zeros((m, n), dtype=bool)  # same[j, i]: sample i of column j equals sample i-1
    same[:, 1:] = (x[1:] == x[:-1]).T
    repeats_total = np.count_nonzero(same, axis=1)
    first, last = _column_runs(same)  # runs of repeats: samples [first - 1, last)
    first = first - 1
    long = (last - first) >= least
    first, last = first[long], last[long]
    column, lengths = first // n, last - first
    held = x[first % n, column]
    # extremes (and constants) only of the columns that may be constant or hold a value long
    low, high = np.full(m, np.nan), np.full(m, np.nan)
    finite_n = n - n_missing
    some = np.flatnonzero((2 * repeats_total >= finite_n)
                          | (np.bincount(column, minlength=m) > 0))
    if some.size:
        part = x[:, some]
        low[some], high[some] = np.fmin.reduce(part, axis=0), np.fmax.reduce(part, axis=0)
    constant = np.where(low == high, low, np.nan)
    # zero spans: counters that otherwise read non-zero
    is_zero = held == 0
    zeros_all = np.zeros(m, dtype=np.int64)
    zeroed = np.unique(column[is_zero])
    if zeroed.size:
        zeros_all[zeroed] = np.count_nonzero(x[:, zeroed] == 0, axis=0)
    zeros_long = np.bincount(column[is_zero], weights=lengths[is_zero], minlength=m)
    outside = np.maximum(finite_n - zeros_long, 1)
    stops = (((zeros_all - zeros_long) < ZERO_ELSEWHERE * outside)
             & (zeros_long <= MAX_ZERO_SHARE * n) & np.isnan(constant))
    zero_keep = is_zero & stops[column]
    # frozen spans: a metric that otherwise changes, away from its extremes
    repeats_long = np.bincount(column, weights=lengths - 1, minlength=m)
    pairs_outside = np.maximum(finite_n - 1 - repeats_long, 1)
    changing = (((repeats_total - repeats_long) < REPEAT_ELSEWHERE * pairs_outside)
                & np.isnan(constant))
    frozen_keep = ~is_zero & changing[column] & (held != low[column]) & (held != high[column])
    return _Scan(n, _column_runs(lacking_by_column), (first[zero_keep], last[zero_keep]),
                 (first[frozen_keep], last[frozen_keep]), held[frozen_keep],
                 n_missing.astype(np.int64), constant, gaps)
