"""Phase-TA end to end: periodicities of a profile and one representative pattern each.

Phase-TA, sections III (detection, tuning, grouping, clustering, averaging) and IV (the
metrics of Table II). ``analyze`` takes a Profile and returns a ``PeriodicityResult``; it
never prints nor reads files.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, PhasekitError, UsageError
from phasekit.metrics.periodicity import mean_consecutive, periodic_regions
from phasekit.options import Options, Rule
from phasekit.parallel import available_cores
from phasekit.periodicity import align, average, cluster, detect, merge, scales, strength, tune
from phasekit.periodicity.scales import Scale
from phasekit.present import percent, quantity
from phasekit.profile import Profile
from phasekit.results import Result, check_version, pct, plain, short_repr

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

#: 2: ``scales`` (every scale at which the profile repeats); version 1 files are read with
#: none.
RESULT_VERSION = 2
BAND = 0.1
REGION_TOLERANCE = 0.1
MIN_INSTANCES = 3
MAX_GAP = 3
#: Values per metric of the profile preview a result keeps for figures (the report), at most.
PREVIEW_POINTS = 2000
#: Instances per pattern kept in the preview, and values per instance at most.
PREVIEW_INSTANCES = 10
PREVIEW_INSTANCE_POINTS = 500
Progress = Callable[[str, float], None]


@dataclass(frozen=True, eq=False)
class Pattern:
    """A periodicity: its representative pattern and the instances it was inferred from.

    ``starts``/``lengths`` are sample indices in the analyzed profile (after ``--window``).
    ``values`` is length x metrics, in the metric's units (z-scores when several metrics were
    analyzed jointly).
    """

    values: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    period_s: float
    coverage: float
    wgss: float
    n_regions: int
    mean_consecutive: float
    dba_iterations: int

    @property
    def length(self) -> int:
        return int(self.values.shape[0])

    @property
    def n_instances(self) -> int:
        return int(self.starts.size)

    def to_dict(self) -> dict[str, Any]:
        return {
            "period_s": self.period_s, "length": self.length, "n_instances": self.n_instances,
            "coverage": self.coverage, "wgss": self.wgss, "n_regions": self.n_regions,
            "mean_consecutive": self.mean_consecutive, "dba_iterations": self.dba_iterations,
            "values": self.values, "instances": {"start": self.starts, "length": self.lengths},
        }

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Pattern:
        values = np.asarray(data["values"], dtype=float)
        return Pattern(values=values.reshape(values.shape[0], -1),
                       starts=np.asarray(data["instances"]["start"], np.int64),
                       lengths=np.asarray(data["instances"]["length"], np.int64),
                       period_s=float(data["period_s"]), coverage=float(data["coverage"]),
                       wgss=float(data["wgss"]), n_regions=int(data["n_regions"]),
                       mean_consecutive=float(data["mean_consecutive"]),
                       dba_iterations=int(data["dba_iterations"]))


class PatternCounts:
    """The instance counts of Table II (Phase-TA) over ``self.patterns``, for any result that
    holds patterns with ``n_instances`` and ``n_regions``."""

    patterns: tuple[Any, ...]

    @property
    def n_instances(self) -> int:
        return sum(p.n_instances for p in self.patterns)

    @property
    def mean_consecutive(self) -> float:
        """Mean instances per periodic region over all patterns (the paper's [#pa])."""
        regions = sum(p.n_regions for p in self.patterns)
        return self.n_instances / regions if regions else 0.0


@dataclass(frozen=True, eq=False)
class PeriodicityResult(PatternCounts, Result):
    """The Table II view of one profile (Phase-TA, section IV-B).

    ``scales``: every scale at which the profile repeats, shortest first, the dominant
    pattern's among them (``dominant``), each with its period, instances, coverage and ratio
    to the next shorter one (:mod:`phasekit.periodicity.scales`, ours); one scale when the
    profile repeats at one, none without a pattern or in a result file of version 1.
    """

    KIND: ClassVar[str] = "periodicity"

    duration_s: float
    sampling_period: float
    n_samples: int
    n_valid: int
    metrics: tuple[str, ...]
    window: int
    coverage: float
    patterns: tuple[Pattern, ...]
    offset_s: float = 0.0
    node: str = ""
    tuning: tuple[tuple[int, float], ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    explanation: str = ""
    preview: dict[str, Any] = field(default_factory=dict)
    scales: tuple[Scale, ...] = ()

    def __repr__(self) -> str:
        return short_repr(
            self, self.node or None, "+".join(self.metrics), f"{self.duration_s:g} s",
            f"{len(self.patterns)} patterns", f"coverage {pct(self.coverage, 100)}",
            f"period {self.patterns[0].period_s:.4g} s" if self.patterns else None)

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "kind": self.KIND, "version": RESULT_VERSION, "node": self.node,
            "duration_s": self.duration_s, "sampling_period_s": self.sampling_period,
            "offset_s": self.offset_s, "n_samples": self.n_samples, "n_valid": self.n_valid,
            "metrics": list(self.metrics), "window": self.window, "coverage": self.coverage,
            "n_instances": self.n_instances, "mean_consecutive": self.mean_consecutive,
            "patterns": [p.to_dict() for p in self.patterns],
            "tuning": [{"window": w, "coverage": c} for w, c in self.tuning],
            "params": self.params, "explanation": self.explanation, "preview": self.preview,
            "scales": [scale.to_dict() for scale in self.scales],
        })

    def summary(self) -> pd.DataFrame:
        """One row per pattern, largest coverage first
        (:func:`phasekit.periodicity.table.pattern_rows`; coverage a fraction of the
        measured samples); ``attrs`` hold the headline, the profile's row of Phase-TA's
        Table II (T_exe, #rp, #i, [#pa], %period), the scales
        (:func:`~phasekit.periodicity.table.scale_rows`), the share of the run measured and
        the analyzed metrics' missing data (None when measured throughout)."""
        import pandas as pd

        from phasekit.periodicity.table import (
            PATTERN_HEADERS,
            headline,
            measured_share,
            pattern_rows,
            profile_row,
            scale_rows,
        )

        table = pd.DataFrame(pattern_rows(self), columns=list(PATTERN_HEADERS))
        table.attrs.update({"headline": headline(self), "profile": profile_row(self),
                            "scales": scale_rows(self), "measured": measured_share(self),
                            "missing_data": self.params.get("data_quality")})
        return table

    def present(self, name: str | None = None) -> Presentation:
        """The headline, Table II and the patterns, and the notes
        (:func:`phasekit.periodicity.table.presentation`)."""
        from phasekit.periodicity.table import presentation

        return presentation(self, name)

    def instances(self, profile: Profile, pattern: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """The instances of one pattern, from the profile it was computed on
        (:func:`instances_of`)."""
        return instances_of(profile, self, pattern)

    def plot(self, ax: Axes | None = None) -> Figure:
        """The profile (the preview the result keeps) with its periodic regions shaded and
        each pattern over random instances; on ``ax``, the profile only
        (:func:`phasekit.plot.periodicity.result_figure`; with the profile at hand,
        :func:`phasekit.plot.periodicity.analysis_figure` draws from all of it)."""
        from phasekit.plot.periodicity import result_figure

        return result_figure(self, ax)

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> PeriodicityResult:
        check_version(data, "periodicity", RESULT_VERSION, source)
        try:
            return PeriodicityResult(
                duration_s=float(data["duration_s"]), sampling_period=float(data["sampling_period_s"]),
                n_samples=int(data["n_samples"]), n_valid=int(data["n_valid"]),
                metrics=tuple(data["metrics"]), window=int(data["window"]),
                coverage=float(data["coverage"]),
                patterns=tuple(Pattern.from_dict(p) for p in data["patterns"]),
                offset_s=float(data.get("offset_s", 0.0)), node=str(data.get("node", "")),
                tuning=tuple((int(t["window"]), float(t["coverage"])) for t in data.get("tuning", [])),
                params=dict(data.get("params", {})), explanation=str(data.get("explanation", "")),
                preview=dict(data.get("preview") or {}),
                scales=tuple(Scale.from_dict(d) for d in data.get("scales", [])))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed periodicity result: {exc}", path=source) from None


def default_metrics(profile: Profile, *, min_period: int = detect.MIN_PERIOD) -> list[str]:
    """The recorded command's own metrics first when the profile's metadata lists them
    (``phasekit record -- COMMAND``: its IPC, else the most periodic of them); otherwise
    ``ipc`` when present or computable from instructions and cycles (the paper analyzes IPC,
    section IV-A), else the metric with the strongest periodicity (ours: autocorrelation,
    then a detector pass for the strongest; :mod:`phasekit.periodicity.strength` gives the
    rule and the evidence)."""
    return [strength.choose_metric(profile, min_period=min_period).metric]


def valid_segments(valid: np.ndarray, min_length: int) -> list[tuple[int, int]]:
    """Runs [start, end) of consecutive valid samples at least ``min_length`` long."""
    edges = np.diff(np.concatenate([[0], valid.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(int(s), int(e)) for s, e in zip(starts, ends, strict=True) if e - s >= min_length]


def analysis_matrix(profile: Profile, metrics: Sequence[str],
                    smoothing: dict[str, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Values analyzed (raw for one metric, z-scored per metric for several; a quantized
    counter named in ``smoothing`` as its moving average over that many samples) and
    validity."""
    x = np.array(profile.select(list(metrics)).values, dtype=np.float64)
    widths = smoothing or {}
    for j, name in enumerate(metrics):
        if widths.get(name, 1) > 1:
            x[:, j] = strength.moving_average(x[:, j], int(widths[name]))
    valid = np.isfinite(x).all(axis=1)
    if x.shape[1] > 1 and valid.any():
        mean = x[valid].mean(axis=0)
        std = x[valid].std(axis=0)
        x = (x - mean) / np.where(std > 0, std, 1.0)
    x[~valid] = np.nan
    return x, valid


def bridge_gaps(x: np.ndarray, valid: np.ndarray, max_gap: int) -> tuple[np.ndarray, int]:
    """x with runs of at most ``max_gap`` invalid samples between valid ones filled by linear
    interpolation (for the analysis only; the profile keeps its NaN), and how many were."""
    invalid = ~valid
    if max_gap <= 0 or not invalid.any() or not valid.any():
        return x, 0
    edges = np.diff(np.concatenate([[0], invalid.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    inner = (starts > 0) & (ends < x.shape[0]) & (ends - starts <= max_gap)
    if not inner.any():
        return x, 0
    fill = np.zeros(x.shape[0], bool)
    for s, e in zip(starts[inner], ends[inner], strict=True):  # one step per gap
        fill[s:e] = True
    index = np.arange(x.shape[0])
    bridged = x.copy()
    for d in range(x.shape[1]):
        bridged[fill, d] = np.interp(index[fill], index[valid], x[valid, d])
    return bridged, int(fill.sum())


@dataclass(frozen=True)
class PeriodicityOptions(Options):
    """The tuning parameters of :func:`analyze`, declared and checked once: ``analyze(profile,
    options=PeriodicityOptions(band=0.2, cut_ratio=3))`` or, equally, ``analyze(profile,
    band=0.2, cut_ratio=3)``; kept, compared and changed with :func:`dataclasses.replace`.

    Defaults: the window search interval 8..10 000 samples (Phase-TA, III-A, uses
    0..10 000), ``alpha`` = 5 % (III-B), DBA with 31 iterations / 5 x 2.5 % (III-C); the DTW
    ``band`` of 10 % and every threshold of the detector and the clustering are ours,
    documented in their modules (:mod:`~phasekit.periodicity.detect`,
    :mod:`~phasekit.periodicity.tune`, :mod:`~phasekit.periodicity.cluster`,
    :mod:`~phasekit.periodicity.average`). ``half_window`` fixes the detector's half-window
    (samples) instead of searching for it; ``max_gap`` missing samples are bridged;
    ``min_instances`` repetitions make a pattern. A value out of range is a
    :class:`~phasekit.errors.UsageError` naming the parameter.
    """

    half_window: int | None = None
    min_window: int = tune.MIN_WINDOW
    max_window: int = tune.MAX_WINDOW
    near_zero: float = detect.NEAR_ZERO
    rise: float = detect.RISE
    min_period: int = detect.MIN_PERIOD
    aperiodic_step: float = detect.APERIODIC_STEP
    alpha: float = tune.ALPHA
    length_tolerance: float = tune.LENGTH_TOLERANCE
    align_phases: bool = True
    max_gap: int = MAX_GAP
    min_instances: int = MIN_INSTANCES
    cut_ratio: float = cluster.CUT_RATIO
    band: float | None = BAND
    neighbors: int = cluster.NEIGHBORS
    exact_below: int = cluster.EXACT_BELOW
    max_iter: int = average.MAX_ITER
    n_consecutive: int = average.N_CONSECUTIVE
    tolerance: float = average.TOLERANCE

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        return [
            ("band", self.band is None or 0 < self.band <= 1, "expected a value in (0, 1] or None"),
            ("cut_ratio", self.cut_ratio > 0, "expected a positive ratio"),
            ("near_zero", 0 < self.near_zero < self.rise,
             f"expected 0 < near_zero < rise (rise={self.rise})"),
            ("alpha", 0 <= self.alpha < 1, "expected a share in [0, 1)"),
            ("min_period", self.min_period >= 2, "expected at least 2 samples"),
            ("aperiodic_step", 0 < self.aperiodic_step <= 1, "expected a value in (0, 1]"),
            ("max_iter", self.max_iter >= 1, "expected at least 1"),
            ("length_tolerance", self.length_tolerance >= 0, "expected a value >= 0"),
            ("max_gap", self.max_gap >= 0, "expected a count >= 0"),
            ("min_instances", self.min_instances >= 1, "expected at least 1"),
            ("half_window", self.half_window is None or self.half_window >= 2,
             "expected at least 2 samples"),
            ("min_window", 2 <= self.min_window <= self.max_window,
             f"expected 2 <= min_window <= max_window (max_window={self.max_window})"),
        ]


def analyze(profile: Profile, *, metrics: Sequence[str] | None = None,
            window: tuple[float | None, float | None] | None = None,
            options: PeriodicityOptions | None = None, workers: int | None = None,
            progress: Progress | None = None, window_s: tuple[float | None, float | None]
            | None = None, **keywords: Any) -> PeriodicityResult:
    """Detect the periodicities of ``profile`` and infer one representative pattern each.

    ``window``: (start, end) seconds from the profile start, either may be None
    (``window_s`` is its former name). ``options``: the tuning parameters as one
    :class:`PeriodicityOptions` (defaults and their sources there), or the same as keywords
    (``half_window=..., band=...``), never both. ``workers``: processes for the window
    search; ``progress(stage, fraction)`` is told of each stage.
    Gaps of up to ``max_gap`` = 3 missing samples (a lost sample or two, common in real
    monitoring) are bridged by linear interpolation for the analysis, so that they do not cut a
    periodic region in two; longer gaps split the profile into segments analyzed separately
    (ours; coverage counts only the valid samples, in its numerator as in its denominator).
    Without ``metrics``: IPC, else the metric with the strongest periodicity
    (:mod:`phasekit.periodicity.strength`; ``params["metric_choice"]`` says which and why, with
    every candidate's score). A quantized counter sampled faster than it advances (/proc CPU
    times at 5 ms) is analyzed as its moving average (``params["smoothing"]``, ours, same
    module).
    A cluster of fewer than ``min_instances`` instances joins the large cluster it links to
    (``cluster.absorb_small``, ours). Clusters of one period whose shapes differ only at noise
    level become one pattern (:mod:`phasekit.periodicity.merge`, ours; ``params["merged"]``
    lists each merge and its measures when there was one).
    A pattern needs ``min_instances`` = 3 instances (ours): the paper's regions hold at least two
    occurrences, and two chance look-alikes in a random walk are not rare; only the
    short-profile mode, which sees fewer than two whole periods, reports fewer.
    When a scale shorter than the dominant pattern covers more of the run than it, the
    analysis looks again with the window tuned below that cycle, and the shorter cycle leads
    if its one pattern covers more and the longer cycle stays a scale (ours;
    :func:`_inner_window_cap`, :func:`_lead_with_inner`, ``params["lead"]``).

    """
    o = PeriodicityOptions.of(options, keywords, verb="analyze")
    if window_s is not None:
        if window is not None:
            raise UsageError("give window= (window_s is its former name), not both",
                             parameter="window_s")
        window = window_s
    same = {"window": window, "options": o, "workers": workers, "progress": progress}
    report = progress or (lambda stage, fraction: None)
    workers = workers or available_cores()
    offset_s = 0.0
    whole = profile
    if window is not None:
        profile = profile.window(*window)
        offset_s = float(profile.meta["window_s"][0])
    if metrics:
        names = list(metrics)
        choice: dict[str, Any] = {"metric": "+".join(names), "rule": "given",
                                  "reason": "chosen by the caller"}
    else:
        chosen = strength.choose_metric(profile, min_period=o.min_period,
                                        min_instances=o.min_instances)
        if len(chosen.tied) > 1:
            return _best_of_tied(whole, chosen, same)
        names, choice = [chosen.metric], chosen.to_dict()
    settings = {"whole": whole, "names": names, "choice": choice, "o": o, "window": window,
                "offset_s": offset_s, "workers": workers, "report": report}
    result = _analysis(profile, **settings)
    if (below := _inner_window_cap(result, o)) is not None:
        inner = _analysis(profile, **(settings | {"report": lambda stage, fraction: report(
            f"the cycle inside the dominant one: {stage}", 0.95 + 0.05 * fraction)}),
                          tune_below=below, longer=((result.patterns[0].starts,
                                                     result.patterns[0].lengths, result.window),))
        result = _lead_with_inner(result, inner, below)
    report("done", 1.0)
    if not result.patterns and choice.get("rule") == "ipc" and not metrics:
        return _instead_of_ipc(whole, result, same)
    return result


def _analysis(profile: Profile, *, whole: Profile, names: list[str], choice: dict[str, Any],
              o: PeriodicityOptions, window: tuple[float | None, float | None] | None,
              offset_s: float, workers: int, report: Progress, tune_below: int | None = None,
              longer: Sequence[tuple[np.ndarray, np.ndarray, int]] = ()
              ) -> PeriodicityResult:
    """:func:`analyze` of the metrics ``names`` of ``profile`` (``whole`` before the
    ``window``), the detector's window tuned up to ``tune_below`` samples when given;
    ``longer``: instances of a longer cycle found before, a candidate scale."""
    smoothing = strength.smoothing_widths(profile, names)
    x, valid = analysis_matrix(profile, names, smoothing)
    analyzed = x  # before bridging, as instances_of gives them
    n_valid = int(valid.sum())
    measured = valid  # the samples coverage counts: bridged gaps are not measured
    x, n_bridged = bridge_gaps(x, valid, o.max_gap)
    valid = np.isfinite(x).all(axis=1)
    shortest = 4 * o.min_period
    if n_valid < shortest:
        raise InputError(f"the profile has {n_valid} valid samples of {'+'.join(names)}; at least "
                         f"{shortest} are needed to see two periods of the shortest detectable "
                         f"period ({o.min_period} samples)")
    segments = valid_segments(valid, shortest)
    longest = max((e - s for s, e in segments), default=0)
    detector = {"min_period": o.min_period, "near_zero": o.near_zero, "rise": o.rise,
                "aperiodic_step": o.aperiodic_step}

    run, passes = _passes(x, segments, detector)  # the tuning's, so the chosen one is not redone
    approximations: list[str] = []     # the long-run paths taken (tuning, cluster, average)

    def objective_over(run: Callable[[int], detect.Batches], n: int) -> Callable[[int], float]:
        def objective(window: int) -> float:
            _, covered = tune.kept_groups(run(window), n, alpha=o.alpha,
                                          tolerance=o.length_tolerance,
                                          min_instances=o.min_instances)
            return float(covered.sum()) / n
        return objective

    report("tuning the window", 0.0)
    upper = min(o.max_window, longest // 2, tune_below or o.max_window)
    if o.half_window is not None:
        if not 2 <= o.half_window <= upper:
            raise UsageError(f"the detector's half-window must be in 2..{upper} samples for "
                             "this profile", parameter="half_window", value=o.half_window)
        best = o.half_window
        tuning = [tune.TuningStep(best, objective_over(run, n_valid)(best))]
    elif upper < o.min_window:
        best, tuning = upper, [tune.TuningStep(upper, objective_over(run, n_valid)(upper))]
    else:
        spans = (tune.excerpts(segments, budget=tune.EXCERPT_BUDGET,
                               length=tune.EXCERPT_WINDOWS * 2 * upper)
                 if n_valid > tune.EXCERPTS_ABOVE else segments)
        if spans == segments:
            objective = objective_over(run, n_valid)
        else:
            in_spans = sum(int(measured[s:e].sum()) for s, e in spans)
            objective = objective_over(_passes(x, spans, detector)[0], in_spans)
            approximations.append(
                f"the window tuned on {len(spans)} evenly spaced stretches of the run "
                f"({in_spans:,} of its {n_valid:,} samples), then run over all of it")
        best, tuning = tune.tune_window(objective, min_window=o.min_window, max_window=upper,
                                        workers=workers, hints=_lag_windows(x, o.min_period))
        # the whole run's passes at the chosen window and at the scan's other peaks
        wanted = [w for w in {best, *tune.scan_peaks(tuning, alpha=o.alpha)} if w not in passes]
        if wanted:
            with ThreadPoolExecutor(max_workers=max(1, min(workers, len(wanted)))) as pool:
                list(pool.map(run, sorted(wanted, reverse=True)))
    report("extracting instances", 0.3)
    batches = run(best)
    groups, covered = tune.kept_groups(batches, n_valid, alpha=o.alpha, tolerance=o.length_tolerance)
    short_profile = not covered.size and longest < 2 * o.max_window
    if short_profile:
        batches = detect.Batches.concat([
            detect.whole_segment(x[s:e], min_period=o.min_period, near_zero=o.near_zero / 2,
                                 rise=2 * o.rise).shifted(s) for s, e in segments])
        groups, covered = tune.kept_groups(batches, n_valid, alpha=o.alpha,
                                           tolerance=o.length_tolerance)
    if o.align_phases and not short_profile:
        starts, lengths, inst_group = align.align_instances(x, batches, groups)
    else:
        starts, lengths, batch = batches.instances()
        inst_group = groups[batch]
        keep = inst_group >= 0
        starts, lengths, inst_group = starts[keep], lengths[keep], inst_group[keep]

    params = {"metrics": names, "metric_choice": choice, "smoothing": smoothing,
              "half_window": best, "near_zero": o.near_zero, "rise": o.rise,
              "min_period": o.min_period, "aperiodic_step": o.aperiodic_step, "alpha": o.alpha,
              "length_tolerance": o.length_tolerance, "align_phases": o.align_phases,
              "min_instances": o.min_instances, "max_gap": o.max_gap, "bridged_samples": n_bridged,
              "cut_ratio": o.cut_ratio, "band": o.band, "neighbors": o.neighbors,
              "exact_below": o.exact_below, "max_iter": o.max_iter, "n_consecutive": o.n_consecutive,
              "tolerance": o.tolerance, "short_profile": short_profile}
    if window is not None:
        params["window_s"] = list(window)
    if lacking := _missing_data(profile, names):
        params["data_quality"] = lacking
    if "bin_rule" in profile.meta:  # a trace's counters, binned
        from phasekit.trace_profile import binning_note

        params["binned"] = binning_note(profile)
    clusters: list[merge.Cluster] = []
    n_groups = int(groups.max()) + 1 if groups.size and groups.max() >= 0 else 0
    for g in range(n_groups):
        members = np.flatnonzero(inst_group == g)
        if members.size == 0:
            continue
        report("clustering instances", 0.4 + 0.5 * g / max(1, n_groups))
        if members.size > cluster.APPROXIMATE_ABOVE:
            approximations.append(
                f"the nearest neighbours of {members.size:,} instances from a k-d tree over "
                f"{cluster.PROJECTED} principal components (exact up to "
                f"{cluster.APPROXIMATE_ABOVE:,})")
        X = padded(x, starts[members], lengths[members])
        labels = cluster.single_linkage(X, lengths[members], band=o.band, cut_ratio=o.cut_ratio,
                                        neighbors=o.neighbors, exact_below=o.exact_below,
                                        min_size=1 if short_profile else o.min_instances)
        for label in range(int(labels.max()) + 1):
            chosen = members[labels == label]
            inside = labels == label
            if chosen.size > average.DBA_SAMPLE:
                approximations.append(
                    f"a pattern averaged on {average.DBA_SAMPLE:,} of its {chosen.size:,} "
                    f"instances, evenly spaced (on all up to {average.DBA_SAMPLE:,})")
            avg = average.dba(X[inside], lengths[chosen], band=o.band, max_iter=o.max_iter,
                              n_consecutive=o.n_consecutive, tolerance=o.tolerance,
                              sample=average.DBA_SAMPLE)
            clusters.append(merge.Cluster(X[inside], starts[chosen], lengths[chosen], avg))
    if approximations:
        params["approximations"] = approximations
    clusters = merge.merge_same_shape(
        x, clusters, band=o.band, period_tolerance=o.length_tolerance,
        sampling_period=profile.period, ratio=merge.MERGE_RATIO,
        dba={"max_iter": o.max_iter, "n_consecutive": o.n_consecutive, "tolerance": o.tolerance})
    # a marginal cluster is dropped like the paper's marginal groups (III-B), and one of too
    # few repetitions to tell a periodicity from a coincidence
    kept = [c for c in clusters if c.lengths.sum() >= o.alpha * n_valid
            and (c.n_instances >= o.min_instances or short_profile)]
    built = sorted(((_pattern(c.average, c.starts, c.lengths, measured, profile.period), c)
                    for c in kept), key=lambda pc: -pc[0].coverage)
    patterns = [p for p, _ in built]
    if merged := merge.records([c for _, c in built]):
        params["merged"] = merged
    all_starts = np.concatenate([p.starts for p in patterns]) if patterns else np.empty(0, np.int64)
    all_lengths = np.concatenate([p.lengths for p in patterns]) if patterns else np.empty(0, np.int64)
    total = valid_coverage(measured, all_starts, all_lengths)
    best_coverage = max((t.coverage for t in tuning), default=0.0)
    if not patterns:
        explanation = (
            f"no periodicity covers at least {o.alpha:.0%} of the profile: the detector's best window "
            f"(L={best} samples) found periodic instances on {best_coverage:.1%} of it after grouping")
    elif short_profile:
        explanation = ("short profile: no sliding window fits two periods, so the period was "
                       "found by comparing the whole profile with itself shifted (fewer than "
                       "two whole periods may be covered)")
    elif patterns[0].length < FEW_SAMPLES:
        explanation = _coarse_sampling(patterns[0].length, profile.period)
    else:
        explanation = ""
    preview = {"profile": profile_preview(whole, names),
               "instances": [instance_preview(analyzed, p, i, sampling_period=profile.period)
                             for i, p in enumerate(patterns)]}
    found = _scales(x, patterns, short_profile=short_profile, best=best, tuning=tuning,
                    passes=passes, measured=measured, n_valid=n_valid, o=o,
                    sampling_period=profile.period, report=report, longer=longer)
    return PeriodicityResult(
        duration_s=profile.duration, sampling_period=profile.period, n_samples=profile.n_samples,
        n_valid=n_valid, metrics=tuple(names), window=best, coverage=total,
        patterns=tuple(patterns), offset_s=offset_s, node=profile.node,
        tuning=tuple((t.window, t.coverage) for t in tuning), params=params,
        explanation=explanation, preview=plain(preview), scales=found)


def _lag_windows(x: np.ndarray, min_period: int) -> list[int]:
    """Detector half-windows of 1.25 and 2 times the autocorrelation lag of each column of
    ``x`` (``strength.WINDOW_FACTORS``), the hints of the window tuning (``tune``)."""
    windows = []
    for column in x.T:
        _, lag = strength.periodic_strength(column, min_lag=min_period)
        windows += [round(factor * lag) for factor in strength.WINDOW_FACTORS if lag > 0]
    return windows


def _passes(x: np.ndarray, spans: list[tuple[int, int]], detector: dict[str, Any]
            ) -> tuple[Callable[[int], detect.Batches], dict[int, detect.Batches]]:
    """The detector's pass over the ``spans`` of ``x`` at a half-window (a function, each
    window's pass computed once) and the passes made so far, by half-window."""
    prepared = [detect.prepare(x[s:e]) for s, e in spans]  # shared by every pass
    made: dict[int, detect.Batches] = {}

    def run(window: int) -> detect.Batches:
        if window not in made:
            made[window] = detect.Batches.concat([
                detect.detect(segment, window, **detector).shifted(s)
                for segment, (s, _) in zip(prepared, spans, strict=True)])
        return made[window]

    return run, made


def _missing_data(profile: Profile, names: Sequence[str]) -> str | None:
    """The analyzed metrics' missing, zero-reading or frozen spans in one sentence
    (:func:`phasekit.quality.data_quality`), None when each has data over at least
    :data:`~phasekit.periodicity.table.MEASURED_ENOUGH` of the run (a lost sample here and
    there is not worth a line)."""
    from phasekit.periodicity.table import MEASURED_ENOUGH
    from phasekit.quality import data_quality

    found = data_quality(profile, metrics=list(names))  # the analyzed names, ipc included
    if all(q.coverage >= MEASURED_ENOUGH for q in found.metrics):
        return None
    return found.headline()


def _scales(x: np.ndarray, patterns: list[Pattern], *, short_profile: bool, best: int,
            tuning: list[tune.TuningStep], passes: dict[int, detect.Batches],
            measured: np.ndarray, n_valid: int, o: PeriodicityOptions,
            sampling_period: float, report: Progress,
            longer: Sequence[tuple[np.ndarray, np.ndarray, int]] = ()
            ) -> tuple[Scale, ...]:
    """Every scale at which the analyzed series ``x`` repeats, the dominant pattern's among
    them (:mod:`phasekit.periodicity.scales`); the dominant one only for a short profile.
    ``longer``: instances of a longer cycle found at a window the tuning was not allowed."""
    if not patterns:
        return ()
    main = patterns[0]
    if short_profile:
        return (Scale(period_s=main.period_s, length=float(main.lengths.mean()),
                      coverage=main.coverage, window=best, source="dominant pattern",
                      starts=main.starts, lengths=main.lengths, dominant=True),)
    report("looking for other scales", 0.95)
    scan = [(w, passes[w]) for w in tune.scan_peaks(tuning, alpha=o.alpha)
            if w in passes and w != best]
    return scales.find_scales(
        x, dominant=(main.starts, main.lengths, main.coverage), window=best,
        others=[(p.starts, p.lengths) for p in patterns[1:]], scan=scan, longer=longer,
        coverage=lambda s, n: valid_coverage(measured, s, n), n_valid=n_valid,
        max_window=o.max_window,
        sampling_period=sampling_period, alpha=o.alpha, tolerance=o.length_tolerance,
        min_instances=o.min_instances, min_period=o.min_period, near_zero=o.near_zero)


#: The second look for a cycle inside the dominant one tunes the detector's window up to
#: this share of the dominant cycle's length (ours: the window that finds a cycle is about
#: 1.1 x its period, so a cycle of half the dominant one's period still fits).
INNER_WINDOW_SHARE = 0.75


def _inner_window_cap(result: PeriodicityResult, o: PeriodicityOptions) -> int | None:
    """The longest detector half-window of a second look at the cycle inside the dominant
    one, when a scale shorter than the dominant pattern covers more of the run than that
    pattern does; None when none does, the caller fixed the window or the profile is short.

    The window tuning maximizes what the detector's groups cover before clustering; an outer
    cycle repeated a few times in a short run can win it (its groups span nearly the whole
    run) and then keep fewer samples as a pattern than the loop inside it (ours).
    """
    if not result.patterns or o.half_window is not None or result.params["short_profile"]:
        return None
    main = result.patterns[0]
    if not any(not s.dominant and 1.5 * s.period_s <= main.period_s
               and s.coverage > main.coverage for s in result.scales):
        return None
    cap = int(INNER_WINDOW_SHARE * float(main.lengths.mean()))
    return cap if cap >= o.min_window else None


def _lead_with_inner(outer: PeriodicityResult, inner: PeriodicityResult, window: int
                     ) -> PeriodicityResult:
    """``inner``, the second look (its window tuned up to ``window`` samples) at the ``outer``
    result's dominant cycle, when a cycle at most 1/1.5 of that one leads it, as one pattern
    covers more of the run than all of ``outer``'s patterns (Phase-TA's criterion: the
    coverage; one pattern, so that a sub-cycle split into near-duplicates does not win) and
    keeps the outer cycle as a scale; else ``outer``. Either says why in ``params["lead"]``
    when the second look led with such a cycle (the scales table shows its instances
    covering more)."""
    outer_s = outer.patterns[0].period_s
    if (not inner.patterns or inner.params["short_profile"]
            or 1.5 * inner.patterns[0].period_s > outer_s):
        return outer
    inner_s, led = inner.patterns[0].period_s, inner.patterns[0].coverage
    kept = any(not s.dominant and abs(s.period_s - outer_s) <= scales.MULTIPLE * outer_s
               for s in inner.scales)
    if led > outer.coverage and kept:
        lead = (f"the {inner_s:.4g} s cycle leads: as one pattern it covers {percent(led, 1)} "
                f"of the measured run, more than all the patterns of a first analysis "
                f"({percent(outer.coverage, 1)}), whose window tuning preferred the "
                f"{outer_s:.4g} s cycle around it")
        return replace(inner, params={**inner.params, "lead": lead})
    if not kept:
        why = f"it leads, but the {outer_s:.4g} s cycle is no longer found"
    else:
        why = (f"it forms one pattern over {percent(led, 1)} of the measured run, less than "
               f"this analysis's {percent(outer.coverage, 1)}")
    lead = (f"the {outer_s:.4g} s cycle leads, though the {inner_s:.4g} s cycle inside it "
            f"covers more in the scales table: analyzed with the window L up to {window} "
            f"samples, {why}")
    return replace(outer, params={**outer.params, "lead": lead})


def _instead_of_ipc(profile: Profile, flat: PeriodicityResult, options: dict[str, Any]
                    ) -> PeriodicityResult:
    """IPC, chosen by default, showed no periodicity (``flat``): the analysis of the most
    periodic other metric when it finds one, its choice saying why; else ``flat``
    (:func:`phasekit.periodicity.strength.instead_of_ipc`)."""
    o = options["options"]
    chosen = strength.instead_of_ipc(profile, min_period=o.min_period,
                                     min_instances=o.min_instances)
    if chosen is None:
        return flat
    result = analyze(profile, metrics=[chosen.metric], **options)
    if not result.patterns:
        return flat
    choice = chosen.to_dict() | {"rule": "periodic strength, ipc shows no periodicity"}
    return replace(result, params={**result.params, "metric_choice": choice})


def _best_of_tied(profile: Profile, chosen: strength.MetricChoice,
                  options: dict[str, Any]) -> PeriodicityResult:
    """The analysis of each metric tied in the choice; the one that covers most (the first,
    the stronger autocorrelation, on equal coverage), its choice saying so. A metric whose
    analysis fails (too few valid samples for it) drops out of the tie."""
    report = options.get("progress")
    results: dict[str, PeriodicityResult] = {}
    failures: list[PhasekitError] = []
    for k, metric in enumerate(chosen.tied):
        share = (lambda stage, fraction, k=k: report(stage, (k + fraction) / len(chosen.tied))
                 ) if report else None
        try:
            results[metric] = analyze(profile, metrics=[metric], **(options | {"progress": share}))
        except PhasekitError as exc:
            failures.append(exc)
    if not results:
        raise failures[0]
    best = max(results, key=lambda m: (results[m].coverage, -chosen.tied.index(m)))
    others = "; ".join(f"{m} {results[m].coverage:.0%}" for m in results if m != best)
    choice = chosen.to_dict() | {
        "metric": best, "rule": f"{chosen.rule}, tie broken by the analysis",
        "reason": (f"{chosen.lead}: {', '.join(chosen.tied)} tied as the most periodic metrics "
                   f"({chosen.scores[best]['coverage']:.0%} in one detector pass); the "
                   f"analysis covers {results[best].coverage:.0%} on {best} ({others})"),
        "tie_break": {m: round(r.coverage, 4) for m, r in results.items()}}
    result = results[best]
    return replace(result, params={**result.params, "metric_choice": choice})


def profile_preview(profile: Profile, metrics: Sequence[str], *,
                    points: int = PREVIEW_POINTS) -> dict[str, Any]:
    """The metrics of the whole profile, small enough to keep in a result for figures (ours).

    At most ``points`` values per metric: the samples as they are when there are few enough,
    else the minimum and the maximum of each of ``points / 2`` buckets of consecutive samples,
    in turn (an envelope: a spike shows, where keeping every k-th sample could miss it), as
    a series of period ``bucket / 2``. NaN stays NaN (a bucket of NaN only).
    """
    x = np.asarray(profile.select(list(metrics)).values, dtype=np.float64)
    n = x.shape[0]
    buckets = max(1, points // 2)
    envelope = n > points
    if envelope:
        k = -(-n // buckets)
        padded_x = np.full((buckets * k, x.shape[1]), np.nan)
        padded_x[:n] = x
        blocks = padded_x.reshape(buckets, k, x.shape[1])
        finite = np.isfinite(blocks)
        keep = finite.any(axis=1)
        low = np.where(keep, np.where(finite, blocks, np.inf).min(axis=1), np.nan)
        high = np.where(keep, np.where(finite, blocks, -np.inf).max(axis=1), np.nan)
        used = -(-n // k)  # buckets holding samples (the padding's are dropped)
        x = np.stack([low, high], axis=1).reshape(2 * buckets, x.shape[1])[:2 * used]
        period = profile.period * k / 2
    else:
        period = profile.period
    start = (profile.start.isoformat() if isinstance(profile.start, _dt.datetime)
             else float(profile.start))
    return {"metrics": list(metrics), "units": {m: profile.units[m] for m in metrics
                                                if m in profile.units},
            "period_s": period, "n_samples": n, "sampling_period_s": profile.period,
            "envelope": envelope, "start": start, "values": _significant(x.T)}


def instance_preview(x: np.ndarray, pattern: Pattern, index: int, *, sampling_period: float,
                     count: int = PREVIEW_INSTANCES, points: int = PREVIEW_INSTANCE_POINTS,
                     seed: int = 0) -> dict[str, Any]:
    """``count`` random instances of ``pattern`` (the ``index``-th) from the analyzed values
    ``x``, every ``stride``-th sample so that each has at most ``points`` values, one list
    per metric (ours: what :func:`phasekit.plot.plot_patterns` draws, kept in the result for
    the report)."""
    rng = np.random.default_rng([seed, index])
    chosen = np.sort(rng.choice(pattern.n_instances, size=min(count, pattern.n_instances),
                                replace=False))
    stride = max(1, -(-int(pattern.lengths.max(initial=1)) // points))
    return {"stride": stride, "step_s": stride * sampling_period,
            "start": pattern.starts[chosen], "length": pattern.lengths[chosen],
            "values": [_significant(x[s:s + n:stride].T) for s, n in zip(
                pattern.starts[chosen], pattern.lengths[chosen], strict=True)]}


def _significant(x: np.ndarray, digits: int = 4) -> np.ndarray:
    """``x`` rounded to ``digits`` significant digits (a preview for figures: shorter JSON)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        magnitude = np.floor(np.log10(np.abs(x)))
    magnitude[~np.isfinite(magnitude)] = 0.0
    scale = 10.0 ** (digits - 1 - magnitude)
    return np.round(x * scale) / scale


def padded(x: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Instances copied into one array (n x max_length x d), zero-padded."""
    longest = int(lengths.max()) if lengths.size else 0
    X = np.zeros((starts.size, longest, x.shape[1]))
    offsets = np.arange(longest)
    rows = starts[:, None] + offsets[None, :]
    inside = offsets[None, :] < lengths[:, None]
    X[inside] = x[rows[inside]]
    return X


def valid_coverage(valid: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> float:
    """Share of the valid samples that the union of the instances covers: the paper's
    %period, counting neither in the numerator nor in the denominator the missing samples
    that an instance spans where a short gap was bridged (without this a recording with
    missed samples could come out above 100 %)."""
    n_valid = int(valid.sum())
    if n_valid == 0 or starts.size == 0:
        return 0.0
    marks = np.zeros(valid.size + 1, np.int64)
    np.add.at(marks, np.clip(starts, 0, valid.size), 1)
    np.add.at(marks, np.clip(starts + lengths, 0, valid.size), -1)
    inside = np.cumsum(marks)[:-1] > 0
    return float(np.count_nonzero(inside & valid)) / n_valid


#: A period of fewer samples than this is said to be coarsely sampled (ours: a sample is then
#: over 5 % of the period, the length tolerance of a periodicity).
FEW_SAMPLES = 20


def _coarse_sampling(length: int, sampling_period: float) -> str:
    """Why the answer of a period of ``length`` samples is less firm, and what sampling would
    make it so."""
    faster = length * sampling_period / FEW_SAMPLES
    return (f"the period is only {length} samples: at this sampling an instance's start and "
            f"length are uncertain by a sample ({100 / length:.0f} % of the period), so the "
            f"coverage may be underestimated; a sample every {quantity(faster, 2)} s or "
            f"faster would resolve it")


def _pattern(avg: average.Average, starts: np.ndarray, lengths: np.ndarray, valid: np.ndarray,
             sampling_period: float) -> Pattern:
    order = np.argsort(starts)
    starts, lengths = starts[order], lengths[order]
    labels = np.zeros(starts.size, np.int64)
    # phase alignment leaves gaps or overlaps of a few samples between neighbours
    tolerance = max(2, int(np.ceil(REGION_TOLERANCE * np.median(lengths))))
    regions = periodic_regions(starts, lengths, labels, tolerance=tolerance)
    return Pattern(values=avg.pattern, starts=starts, lengths=lengths,
                   period_s=float(lengths.mean()) * sampling_period,
                   coverage=valid_coverage(valid, starts, lengths),
                   wgss=avg.wgss, n_regions=len(regions),
                   mean_consecutive=mean_consecutive(starts, lengths, labels, tolerance=tolerance),
                   dba_iterations=avg.iterations)


def instances_of(profile: Profile, result: PeriodicityResult, pattern: int = 0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The instances of one pattern of ``result``, taken from the profile it was computed on."""
    if window := result.params.get("window_s"):
        profile = profile.window(*window)
    x, _ = analysis_matrix(profile, result.metrics, result.params.get("smoothing"))
    chosen = result.patterns[pattern]
    return padded(x, chosen.starts, chosen.lengths), chosen.lengths


def relevance(sub_pattern: np.ndarray, reference: PeriodicityResult, profile: Profile, *,
              pattern: int = 0, band: float | None = BAND) -> dict[str, float]:
    """How well a sub-profile's pattern represents the whole (Phase-TA, section IV-C): its WGSS
    against the reference pattern's instances, beside the reference pattern's own WGSS. The
    sub-profile's pattern is first rotated to the reference's phase (patterns are cut at a
    phase each analysis chooses; the paper's comparison assumes they start alike)."""
    if not reference.patterns:
        raise UsageError("the reference analysis found no pattern to compare with")
    X, lengths = instances_of(profile, reference, pattern)
    reference_values = reference.patterns[pattern].values
    candidate = np.asarray(sub_pattern, dtype=float).reshape(len(sub_pattern), -1)
    sub = average.wgss(align.rotate_to(reference_values, candidate), X, lengths, band=band)
    ref = average.wgss(reference.patterns[pattern].values, X, lengths, band=band)
    return {"sub_wgss": sub, "reference_wgss": ref, "ratio": sub / ref if ref > 0 else np.inf,
            "n_instances": float(lengths.size)}
