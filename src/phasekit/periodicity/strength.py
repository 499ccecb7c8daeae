"""Which metric to analyze when the profile has no IPC, and quantized counters (ours).

The recorded command first. A profile that ``phasekit record -- COMMAND`` wrote holds the
node's metrics (every process on it) and the command's own (its process tree: ``cmd_...``),
and its metadata lists the command's (``meta["recording"]["command_metrics"]``). The user
asked to profile the command, and on a shared node the node's metrics mostly show the other
jobs: the default looks at the command's metrics first — the command's IPC when they include
instructions and cycles, else the most periodic of them by the rule below, ties counted
within ``COMMAND_TIE`` = 15 points instead of 1 (the cost of a second analysis is small
beside the recording) — and its reason says so. Only when none of them has a periodic
autocorrelation (or the profile has none) does it choose among all the metrics as follows.

Phase-TA analyzes IPC ([phase-ta] section IV-A); we keep IPC first whenever it is recorded or
computable from instructions and cycles. A profile without hardware counters (a VM, a
machine without perf access) holds CPU times, page faults, I/O and network counters, of
which only some follow the application's iterations. The default then analyzes the metric
with the strongest periodicity, in two cheap steps (about 3 ms for the 17 metrics of an 8 s
recording at 5 ms, where the analysis takes about 40 ms, benchmarks/periodicity_real.py;
about 60 ms for 17 metrics of 10 minutes at 5 ms, where the analysis takes about 200 ms):

1. its normalized autocorrelation (one FFT)

       strength = max over lags k in [k0, n / 3] of r(k),  r(k) = sum_t y_t y_{t+k} / sum_t y_t^2

   where y is the metric linearly detrended (gaps count as zero), n / 3 leaves room for the
   three instances a pattern needs, and k0 is the first lag at which r has fallen below zero
   (before it a smooth signal only resembles itself by continuity; a trend or a random walk
   never comes back up), at least the detector's shortest period. The lag of the peak is the
   candidate period. A profile longer than 32 768 samples is scored on the means of blocks
   of consecutive samples (8 samples for 10 minutes at 5 ms: a period under 2 blocks does
   not count in this score, the analysis itself still sees it);
2. for the 5 strongest (at least half the best strength), one pass of the detector itself
   at half-windows 1.25 and 2 x that lag: the share of the profile covered by the instances
   the length grouping keeps (the tuning's objective).

The metric with the largest coverage wins. Coverages within 1 point are ties: the analysis
(:func:`phasekit.periodicity.analyze`) runs on the two strongest of them by autocorrelation
and keeps the result that covers most (``tied``; the cost of a second analysis, only then).
The autocorrelation alone is not enough: it is dominated by the largest bursts (on the
demo's recording, page faults score 0.78 against 0.70 for the workload's CPU time, but the
detector covers 82 % of the run on page faults, whose first iterations differ, and 89 % on
CPU time); nor is one detector pass: on a demo recorded beside a busy loop, page faults and
CPU time both covered 91 % in it, and the analyses 86 % and 91 %.

Evidence (benchmarks/periodicity_real.py, 5 recordings of each case on this 2-core
VM, RESULTS.md): the previous rule, the largest coefficient of variation, chose a disk or
iowait counter (the bursty I/O of other processes has the largest relative spread) and found
no periodicity in any busy/idle recording; this rule chose the CPU time and found the
child's 1.0 s period in 5 of 5 (99 % coverage) in node and in process scope, and the demo's
0.4 s in 5 of 5, on 91.5 % of its recording on average (89.2 to 92.2 %: 39 or 40 of its 40
iterations; 40 fill 92 % of it). The scores of all candidates
go into the result (``params["metric_choice"]``) so that a user sees why.

Data over the whole run (ours). A metric that has no value for half the run (a SPEC run
whose counters read zero for 175 s of 351 s leaves IPC without a value there) makes every
share the analysis reports a share of half the run. The choice therefore looks at each
candidate's share of the run with valid data (:func:`phasekit.quality.data_quality`: a value,
not in a span of zeros of a counter that otherwise reads non-zero nor of a frozen reading): a
candidate whose share falls more than ``COVERAGE_GAP`` = 25 points below the best-covered
candidate's is passed over, IPC included, and the reason says so ("ipc has no value for 50 %
of the run; dram_rd, fully measured, was chosen: ..."; ``passed_over`` in the choice lists
their shares). 25 points leave alone the metrics that read zero for a phase (CPU idle time
during a busy fifth of a recording) and pass over those missing a third of the run or more.
When every metric is fully measured, or all lack the same share (a gap in the sampling), the
choice is what it was. When none of the well-measured candidates is periodic (or, for IPC,
none of them has a periodic autocorrelation), the choice falls back to the rule above on
all of them: a metric measured over half the run beats none.

Quantized counters: /proc/stat's CPU times advance in clock ticks (10 ms of CPU time at
USER_HZ = 100). Sampled every 5 ms, such a counter reads 0, 1 or 2 ticks per sample: an
alternation that repeats every few samples and hides any slower periodicity (the detector
then reports a 20 ms "period" and nothing at 1 s). ``counter_resolution`` recognizes a
metric whose non-zero values sit on a grid of one quantum (within 20 %: the recorder scales
an increment by the interval over the measured span, and late samples move it off the
grid), that advances by fewer than ``QUANTA`` = 4 quanta per sample on average, and whose
consecutive samples hardly resemble each other (lag-1 autocorrelation below 0.5: tick noise
alternates from sample to sample, where a two-level signal such as a square wave holds its
level). The analysis then sees its moving average over the samples in which it advances by
about 4 quanta (the profile keeps its values), and the metric choice looks for periods of at
least two such widths. Metrics that are continuous, well resolved, or so sparse that the
width would exceed ``MAX_WIDTH`` = 64 samples (rare events, whose spikes are the signal)
are left as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from phasekit.errors import InputError
from phasekit.periodicity import detect, tune
from phasekit.present import listed
from phasekit.profile import Profile
from phasekit.quality import DataQuality, MetricQuality, data_quality

#: Quanta per sample below which a quantized counter is smoothed, and over how many quanta.
QUANTA = 4.0
#: Non-zero samples needed to tell the quantum, and their share on the quantum's grid.
MIN_NONZERO = 16
ON_GRID_SHARE = 0.75
GRID_TOLERANCE = 0.2
#: Lag-1 autocorrelation at or above which a quantized series is a signal, not tick noise.
SMOOTH_BELOW = 0.5
#: The widest moving average, in samples (a counter coarser than this is left alone).
MAX_WIDTH = 64
#: Samples beyond which the autocorrelation is computed on block means (cost, ours).
MAX_POINTS = 32768
#: Detector half-windows tried per candidate, as multiples of its autocorrelation lag.
WINDOW_FACTORS = (1.25, 2.0)
#: Coverages within this of the best count as ties; the analysis runs on the ``TIED`` strongest
#: of them (by autocorrelation) and keeps the one whose result covers most.
TIE = 0.01
TIED = 2
#: The same margin among the recorded command's own metrics (ours): one detector pass is a
#: rough guide to the analysis's coverage (a busy/idle child recorded at 10 ms on a loaded
#: machine: 100 % in one pass but 86 % analyzed on cmd_runnable_s, 90 % in one pass and 99 %
#: analyzed on cmd_runnable_threads), so the two strongest within 15 points are both analyzed.
COMMAND_TIE = 0.15
#: Metrics that get a detector pass: at most this many, the strongest by autocorrelation,
#: with at least this share of the best strength.
CANDIDATES = 5
CANDIDATE_SHARE = 0.5
#: A candidate whose share of the run with valid data is more than this below the
#: best-covered candidate's is passed over (ours, module docstring).
COVERAGE_GAP = 0.25


def counter_resolution(x: np.ndarray, *, quanta: float = QUANTA) -> int:
    """Width in samples of the moving average that gives a quantized counter about
    ``quanta`` quanta per window; 1 when ``x`` is not a coarsely quantized counter."""
    finite = x[np.isfinite(x)]
    positive = np.abs(finite[finite != 0])
    if positive.size < MIN_NONZERO:
        return 1
    low = float(np.quantile(positive, 0.1))
    quantum = float(np.median(positive[positive <= 1.5 * low]))  # the lowest level's middle
    if not quantum > 0:
        return 1
    ratio = positive / quantum
    on_grid = np.abs(ratio - np.round(ratio)) <= GRID_TOLERANCE
    if on_grid.mean() < ON_GRID_SHARE:
        return 1
    per_sample = float(np.mean(np.abs(finite))) / quantum
    if per_sample >= quanta:
        return 1
    centered = finite - finite.mean()
    energy = float(centered @ centered)
    if energy > 0 and float(centered[1:] @ centered[:-1]) / energy >= SMOOTH_BELOW:
        return 1  # levels that hold from sample to sample (a square wave): not tick noise
    width = int(np.ceil(quanta / per_sample))
    return width if width <= MAX_WIDTH else 1


def moving_average(x: np.ndarray, width: int) -> np.ndarray:
    """Centered moving average of the finite values of each column over ``width`` samples;
    NaN stays NaN (a gap is not filled, nor widened)."""
    if width <= 1:
        return x
    x = np.asarray(x, dtype=np.float64)
    single = x.ndim == 1
    x2 = x[:, None] if single else x
    finite = np.isfinite(x2)
    zeros = np.zeros((1, x2.shape[1]))
    sums = np.concatenate([zeros, np.cumsum(np.where(finite, x2, 0.0), axis=0)])
    counts = np.concatenate([zeros, np.cumsum(finite, axis=0)])
    n = x2.shape[0]
    lo = np.clip(np.arange(n) - width // 2, 0, n)
    hi = np.clip(lo + width, 0, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (sums[hi] - sums[lo]) / (counts[hi] - counts[lo])
    out = np.where(finite, out, np.nan)
    return out[:, 0] if single else out


def periodic_strength(x: np.ndarray, *, min_lag: int,
                      max_points: int = MAX_POINTS) -> tuple[float, int]:
    """The autocorrelation peak of ``x`` past its first zero crossing (module docstring) and
    its lag in samples; (0.0, 0) for a constant, aperiodic or too short series. A series
    longer than ``max_points`` is scored on the means of blocks of consecutive samples (at
    most ``max_points`` blocks; the lag is then a multiple of the block)."""
    block = -(-x.size // max_points)
    if block > 1:
        padded_x = np.full(block * -(-x.size // block), np.nan)
        padded_x[:x.size] = x
        blocks = padded_x.reshape(-1, block)
        counts = np.isfinite(blocks).sum(axis=1)
        with np.errstate(invalid="ignore"):
            means = np.where(np.isfinite(blocks), blocks, 0.0).sum(axis=1) / counts
        strength, lag = periodic_strength(means, min_lag=-(-min_lag // block),
                                          max_points=max_points)
        return strength, lag * block
    valid = np.isfinite(x)
    n = x.size
    max_lag = n // 3
    if valid.sum() < 16 or max_lag <= min_lag:
        return 0.0, 0
    t = np.flatnonzero(valid).astype(np.float64)
    values = x[valid]
    t_centered = t - t.mean()
    slope = float(t_centered @ (values - values.mean())) / float(t_centered @ t_centered)
    y = np.zeros(n)
    y[valid] = values - values.mean() - slope * t_centered  # minus the least-squares line
    energy = float(y @ y)
    if not energy > 1e-24 * float(np.sum(x[valid] ** 2)):
        return 0.0, 0
    size = fast_length(n + max_lag + 1)  # no wrap-around up to max_lag
    spectrum = np.fft.rfft(y, size)
    r = np.fft.irfft(spectrum.real ** 2 + spectrum.imag ** 2, size)[:max_lag + 1] / energy
    below = np.flatnonzero(r[1:] < 0)
    if below.size == 0:
        return 0.0, 0
    start = max(min_lag, int(below[0]) + 1)
    if start > max_lag:
        return 0.0, 0
    lag = start + int(np.argmax(r[start:]))
    return max(0.0, float(r[lag])), lag


def fast_length(target: int) -> int:
    """The smallest 5-smooth number (2^a 3^b 5^c) at least ``target``: the length
    ``scipy.fft.next_fast_len(target, real=True)`` gives, without importing scipy.fft (start-up;
    numpy's pocketfft takes any length, fastest on these)."""
    if target <= 1:
        return 1
    best = 1 << (target - 1).bit_length()  # the power of two at or above target
    power5 = 1
    while power5 < best:
        odd = power5  # 3^b 5^c, times the power of two that brings it to target or above
        while odd < best:
            best = min(best, odd << (-(-target // odd) - 1).bit_length())
            odd *= 3
        power5 *= 5
    return best


@dataclass(frozen=True)
class MetricChoice:
    """The default metric and why: ``rule`` names how it was chosen, ``scores`` holds each
    candidate's strength and the lag (s) of its autocorrelation peak; ``among`` is
    ``"command"`` when the candidates were the recorded command's own metrics (``lead``: the
    reason's first words, which a tie broken later keeps)."""

    metric: str
    rule: str
    reason: str
    scores: dict[str, dict[str, float]]
    tied: tuple[str, ...] = ()
    among: str = "all"
    lead: str = "no IPC"
    passed_over: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = {"metric": self.metric, "rule": self.rule, "reason": self.reason,
                "scores": self.scores, "among": self.among}
        if self.passed_over:
            data["passed_over"] = dict(self.passed_over)
        return data


#: The first words of the reason when the command's own metrics were chosen from.
COMMAND_LEAD = "the command's own metric"


def command_metrics(profile: Profile) -> list[str]:
    """The profile's metrics that measure the recorded command's process tree, as the
    recorder's metadata lists them (``meta["recording"]["command_metrics"]``); [] without."""
    recording = profile.meta.get("recording") if isinstance(profile.meta, dict) else None
    listed = recording.get("command_metrics") if isinstance(recording, dict) else None
    if not isinstance(listed, list):
        return []
    own = {name for name in listed if isinstance(name, str)}
    return [name for name in profile.metrics if name in own]


def detector_coverage(x: np.ndarray, lag: int, *, min_period: int = detect.MIN_PERIOD,
                      min_instances: int = 3) -> float:
    """Share of ``x`` that one pass of the detector covers with instances kept by the length
    grouping (the tuning's objective, ``tune``), at the best of the half-windows
    ``WINDOW_FACTORS`` x ``lag``; gaps are interpolated for this score only."""
    valid = np.isfinite(x)
    if lag <= 0 or valid.sum() < 4 * min_period:
        return 0.0
    index = np.arange(x.size)
    filled = np.interp(index, index[valid], x[valid])
    prepared = detect.prepare(filled)
    best = 0.0
    for factor in WINDOW_FACTORS:
        half = max(2, round(factor * lag))
        if 2 * half > x.size:
            continue
        batches = detect.detect(prepared, half, min_period=min_period)
        _, covered = tune.kept_groups(batches, int(valid.sum()), min_instances=min_instances)
        best = max(best, min(1.0, float(covered.sum()) / int(valid.sum())))
    return best


def choose_metric(profile: Profile, *, min_period: int = detect.MIN_PERIOD,
                  min_instances: int = 3) -> MetricChoice:
    """The recorded command's own metrics first, when the profile's metadata lists them: its
    IPC, else the most periodic of them; otherwise (or when none of them is periodic) IPC when
    the profile has it or its counters ([phase-ta] IV-A), else the metric with the strongest
    periodicity (module docstring). A metric with valid data over much less of the run than
    the best-measured candidate is passed over, IPC included, and the reason says so."""
    own = command_metrics(profile)
    has_ipc = "ipc" in profile.metrics or {"instructions", "cycles"} <= set(profile.metrics)
    quality = data_quality(profile, [*profile.metrics, "ipc"] if has_ipc else None)
    ipc = _ipc_quality(profile, quality) if has_ipc else None
    prefix = ""
    if own:
        if "ipc" in own or {"instructions", "cycles"} <= set(own):
            measured = [quality.metric(name) for name in own]
            if ipc is None or _well_measured(ipc, [*measured, ipc]):
                return MetricChoice("ipc", "ipc", "the command's own IPC, as Phase-TA analyzes "
                                    "(IV-A)", {}, among="command",
                                    lead=COMMAND_LEAD + "s")
        chosen = _most_periodic(profile, own, quality, min_period=min_period,
                                min_instances=min_instances, among="command")
        if chosen.scores[chosen.metric]["strength"] > 0:
            return chosen
        prefix = "none of the command's own metrics is periodic; "
    if ipc is not None:
        if _well_measured(ipc, [*quality.metrics]):
            return MetricChoice("ipc", "ipc", prefix + "IPC, as Phase-TA analyzes (IV-A)",
                                {})
        others = [m for m in profile.metrics if m != ipc.metric]
        instead = f"ipc {ipc.lack()}"
        chosen = _most_periodic(profile, others, quality, min_period=min_period,
                                min_instances=min_instances, instead=instead)
        best = quality.metric(chosen.metric)
        if (chosen.scores[chosen.metric]["strength"] > 0
                and best.coverage - ipc.coverage > COVERAGE_GAP):
            passed = {ipc.metric: round(ipc.coverage, 4), **chosen.passed_over}
            return replace(chosen, reason=prefix + chosen.reason, lead=prefix + chosen.lead,
                           passed_over=passed)
        return MetricChoice("ipc", "ipc", f"{prefix}IPC, as Phase-TA analyzes (IV-A), though "
                            f"{instead}: no better-measured metric is periodic", {})
    chosen = _most_periodic(profile, list(profile.metrics), quality, min_period=min_period,
                            min_instances=min_instances)
    return (replace(chosen, reason=prefix + chosen.reason, lead=prefix + chosen.lead)
            if prefix else chosen)


def _ipc_quality(profile: Profile, quality: DataQuality) -> MetricQuality:
    """The data quality of IPC, stored or derived from instructions and cycles."""
    return quality.metric(profile.resolve("ipc", derived=True))


def _well_measured(metric: MetricQuality, candidates: Sequence[MetricQuality]) -> bool:
    """Whether ``metric`` has valid data over no less than ``COVERAGE_GAP`` below the
    best-measured of ``candidates``."""
    best = max(q.coverage for q in candidates)
    return metric.coverage >= best - COVERAGE_GAP - 1e-12


def _most_periodic(profile: Profile, names: Sequence[str], quality: DataQuality, *,
                   min_period: int, min_instances: int, among: str = "all",
                   instead: str = "") -> MetricChoice:
    """The metric of ``names`` with the strongest periodicity (module docstring) among those
    measured over most of the run (:func:`_well_measured`; all of them when none of those is
    periodic); ``among`` "command": they are the recorded command's own, and the reason says
    so; ``instead``: why IPC was passed over (the reason's first words)."""
    measured = [quality.metric(name) for name in names]
    passed = [q for q in measured if not _well_measured(q, measured)]
    if passed:
        kept = [q.metric for q in measured if q not in passed]
        chosen = _most_periodic_of(profile, kept, quality, min_period=min_period,
                                   min_instances=min_instances, among=among, instead=instead)
        if chosen.scores[chosen.metric]["strength"] > 0:
            lacking = listed([f"{q.metric} {q.lack()}" for q in passed])
            return replace(chosen, reason=f"{chosen.reason}; passed over: {lacking}",
                           passed_over={q.metric: round(q.coverage, 4) for q in passed})
    chosen = _most_periodic_of(profile, names, quality, min_period=min_period,
                               min_instances=min_instances, among=among, instead=instead)
    lacking = quality.metric(chosen.metric)
    if passed and not instead and lacking in passed:
        return replace(chosen, reason=f"{chosen.reason}; {lacking.metric} {lacking.lack()}")
    return chosen


def _most_periodic_of(profile: Profile, names: Sequence[str], quality: DataQuality, *,
                      min_period: int, min_instances: int, among: str = "all",
                      instead: str = "") -> MetricChoice:
    """The metric of ``names`` with the strongest periodicity (module docstring)."""
    scores: dict[str, dict[str, float]] = {}
    series: dict[str, tuple[np.ndarray, int]] = {}
    for name in names:
        column = np.asarray(profile.column(name), dtype=np.float64)
        width = counter_resolution(column)
        smooth = moving_average(column, width)
        strength, lag = periodic_strength(smooth, min_lag=max(min_period, 2 * width))
        scores[name] = {"coverage": 0.0, "strength": round(strength, 4),
                        "lag_s": lag * profile.period, "smoothing": width}
        series[name] = smooth, lag
    if not scores:
        raise InputError("the profile has no metric to analyze")
    strongest = max(v["strength"] for v in scores.values())
    by_strength = sorted(scores, key=lambda m: -scores[m]["strength"])
    for name in by_strength[:CANDIDATES]:
        if scores[name]["strength"] > 0 and scores[name]["strength"] >= CANDIDATE_SHARE * strongest:
            scores[name]["coverage"] = round(detector_coverage(
                *series[name], min_period=min_period, min_instances=min_instances), 4)
    top_coverage = max(v["coverage"] for v in scores.values())
    margin = COMMAND_TIE if among == "command" else TIE
    tied = [m for m in scores if scores[m]["coverage"] >= top_coverage - margin]
    tied.sort(key=lambda m: (-scores[m]["strength"], list(names).index(m)))
    best = tied[0]
    others = sorted((m for m in scores if m != best),
                    key=lambda m: (-scores[m]["coverage"], -scores[m]["strength"]))
    ranked = [best, *others]
    top = scores[best]
    runner = (f"; next {ranked[1]} {scores[ranked[1]]['coverage']:.0%}"
              if len(ranked) > 1 else "")
    figures = (f"the detector covers {top['coverage']:.0%} (autocorrelation "
               f"{top['strength']:.2f} at {top['lag_s']:.4g} s){runner}")
    tied_names = tuple(tied[:TIED]) if top["strength"] > 0 else ()
    if among == "command":
        reason = (f"{COMMAND_LEAD}, the most periodic of the {len(names)} that measure the "
                  f"recorded command's process tree: {figures}")
        return MetricChoice(best, "periodic strength, the command's metrics", reason, scores,
                            tied_names, among="command", lead=COMMAND_LEAD + "s")
    if instead:
        chosen = "was chosen: the most periodic metric" if top["strength"] > 0 else (
            "was chosen: no metric has a periodic autocorrelation, the first metric")
        reason = f"{instead}; {best}, {quality.metric(best).measured()}, {chosen}, {figures}"
        return MetricChoice(best, "periodic strength", reason, scores, tied_names,
                            lead=instead)
    if top["strength"] > 0:
        reason = f"no IPC: the most periodic metric, {figures}"
    else:
        reason = "no IPC and no metric with a periodic autocorrelation: the first metric"
    return MetricChoice(best, "periodic strength", reason, scores, tied_names)


def smoothing_widths(profile: Profile, metrics: Sequence[str]) -> dict[str, int]:
    """The moving-average width of every quantized counter among ``metrics`` (others: none)."""
    widths = {}
    for name in metrics:
        width = counter_resolution(np.asarray(profile.select([name]).values[:, 0]))
        if width > 1:
            widths[name] = width
    return widths


def instead_of_ipc(profile: Profile, *, min_period: int = detect.MIN_PERIOD,
                   min_instances: int = 3) -> MetricChoice | None:
    """When IPC, chosen by default, shows no periodicity: the most periodic of the other
    metrics (IPC's own counters, instructions and cycles, left out), None when none is
    periodic. Phase-TA analyzes IPC (IV-A); a run whose IPC is flat may still repeat in its
    memory or communication counters (a trace binned coarser than its bursts), and an
    answer of "nothing repeats" would be wrong there (ours)."""
    others = [m for m in profile.metrics if m not in ("ipc", "instructions", "cycles")]
    if not others:
        return None
    chosen = _most_periodic(profile, others, data_quality(profile, others),
                            min_period=min_period, min_instances=min_instances,
                            instead="ipc shows no periodicity")
    return chosen if chosen.scores[chosen.metric]["strength"] > 0 else None
