"""Phases of a profile, end to end (Tsafack Chetsa et al.): execution vectors, detection, representation,
identification. ``phases`` takes a Profile and returns a ``PhaseResult``; it never prints
nor reads files."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.options import Options, Rule
from phasekit.phases.detect import detect
from phasekit.phases.identify import ID_SKIP
from phasekit.phases.registry import METHODS, Detection, PhaseDetector, SensorChoice, detector
from phasekit.phases.vectors import (
    ExecutionVectors,
    choose_sensors,
    execution_vectors,
    stored_sensors,
)
from phasekit.profile import Profile
from phasekit.results import Result, check_version, plain, short_repr

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = ["Phase", "PhaseOptions", "PhaseResult", "phases"]

RESULT_VERSION = 1
#: What :func:`phases` gives every detector itself: not the detector's own options.
_PASSED_TO_DETECTORS = ("method", "threshold", "period", "sensors")


@dataclass(frozen=True)
class Phase:
    """One phase: ``[start_s, end_s)``, its id (recurring phases share one), when the
    detector noticed it, and its representative and reference vectors (Tsafack Chetsa et al.,
    IV)."""

    start_s: float
    end_s: float
    id: int
    detected_at_s: float
    start_index: int
    end_index: int
    representative: dict[str, float]
    reference: dict[str, float]

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    def to_dict(self) -> dict[str, Any]:
        return {"start_s": self.start_s, "end_s": self.end_s, "duration_s": self.duration_s,
                "id": self.id, "detected_at_s": self.detected_at_s,
                "simulation_point_s": self.start_s, "start_index": self.start_index,
                "end_index": self.end_index, "representative": self.representative,
                "reference": self.reference}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Phase:
        return Phase(start_s=float(data["start_s"]), end_s=float(data["end_s"]),
                     id=int(data["id"]), detected_at_s=float(data["detected_at_s"]),
                     start_index=int(data["start_index"]), end_index=int(data["end_index"]),
                     representative={k: _number(v) for k, v in data["representative"].items()},
                     reference={k: _number(v) for k, v in data["reference"].items()})


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


@dataclass(frozen=True, eq=False)
class PhaseResult(Result):
    """The phases of a profile in time order, with what the detector saw (``score`` and
    ``limit`` per vector: Tsafack Chetsa et al., Fig. 1 (c))."""

    KIND: ClassVar[str] = "phases"

    phases: tuple[Phase, ...]
    method: str
    threshold: float
    sensors: tuple[str, ...]
    normalization: str
    smooth: int
    period: float
    duration_s: float
    node: str = ""
    score: np.ndarray = field(default_factory=lambda: np.empty(0))
    limit: np.ndarray = field(default_factory=lambda: np.empty(0))
    params: dict[str, Any] = field(default_factory=dict)
    explanation: str = ""
    id_means: dict[int, dict[str, float]] = field(default_factory=dict)

    @property
    def n_ids(self) -> int:
        return len({p.id for p in self.phases})

    def __repr__(self) -> str:
        return short_repr(
            self, self.node or None, self.method, f"{self.duration_s:g} s",
            f"{len(self.phases)} phases", f"{self.n_ids} ids")

    def to_dict(self, *, series: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.KIND, "version": RESULT_VERSION, "node": self.node,
            "method": self.method, "threshold": self.threshold, "sensors": list(self.sensors),
            "normalization": self.normalization, "smooth": self.smooth,
            "period_s": self.period, "duration_s": self.duration_s,
            "n_phases": len(self.phases), "n_ids": self.n_ids,
            "phases": [p.to_dict() for p in self.phases],
            "ids": [{"id": k, "mean": v} for k, v in sorted(self.id_means.items())],
            "params": self.params, "explanation": self.explanation,
        }
        if series:
            data["score"], data["limit"] = self.score, self.limit
        return plain(data)

    def present(self, name: str | None = None) -> Presentation:
        """The headline, the phases, the representative vectors and the notes
        (:func:`phasekit.phases.table.presentation`)."""
        from phasekit.phases.table import presentation

        return presentation(self, name)

    def saved_dict(self) -> dict[str, Any]:
        """The JSON :meth:`save` writes: with the detector's score and limit series, which
        the figure draws."""
        return self.to_dict(series=True)

    def summary(self) -> pd.DataFrame:
        """One row per phase in time order, as the CLI prints it: ``phase`` (1-based),
        ``start_s``, ``end_s``, ``duration_s``, ``id`` (recurring phases share one) and
        ``detected_at_s`` (when the detector noticed the change)."""
        import pandas as pd

        return pd.DataFrame(
            [{"phase": k, "start_s": p.start_s, "end_s": p.end_s, "duration_s": p.duration_s,
              "id": p.id, "detected_at_s": p.detected_at_s}
             for k, p in enumerate(self.phases, start=1)],
            columns=["phase", "start_s", "end_s", "duration_s", "id", "detected_at_s"])

    def vectors(self, profile: Profile) -> ExecutionVectors:
        """The execution vectors of ``profile`` as this result was computed from them (its
        sensors and smoothing)."""
        return execution_vectors(profile, sensors=self.sensors, smooth_window=self.smooth)

    def plot(self, ax: Axes | None = None) -> Figure:
        """The phase timeline (phases coloured by id, one row per id, and the detector's
        score against its limit when the result has them); on ``ax``, the rows by id only
        (:func:`phasekit.plot.phases.timeline_figure`; with the profile at hand,
        :func:`phasekit.plot.phases.phases_figure` adds the sensors)."""
        from phasekit.plot.phases import timeline_figure

        return timeline_figure(self, ax)

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> PhaseResult:
        check_version(data, "phases", RESULT_VERSION, source)
        try:
            return PhaseResult(
                phases=tuple(Phase.from_dict(p) for p in data["phases"]),
                method=str(data["method"]), threshold=float(data["threshold"]),
                sensors=tuple(data["sensors"]), normalization=str(data["normalization"]),
                smooth=int(data["smooth"]), period=float(data["period_s"]),
                duration_s=float(data["duration_s"]), node=str(data.get("node", "")),
                score=np.array([_number(v) for v in data.get("score", [])]),
                limit=np.array([_number(v) for v in data.get("limit", [])]),
                params=dict(data.get("params", {})),
                explanation=str(data.get("explanation", "")),
                id_means={int(item["id"]): {k: _number(v) for k, v in item["mean"].items()}
                          for item in data.get("ids", [])})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed phases result: {exc}", path=source) from None


@dataclass(frozen=True)
class PhaseOptions(Options):
    """The tuning parameters of :func:`phases`, declared and checked once: ``phases(profile,
    options=PhaseOptions(method="ev", smooth=3))`` or, equally, ``phases(profile,
    method="ev", smooth=3)``; kept, compared and changed with :func:`dataclasses.replace`.

    ``method``: a registered detector (:data:`phasekit.phases.registry.DETECTORS`) or
    "auto". ``threshold``: the detector's (None: its own default, 0.15 for ev-literal,
    Tsafack Chetsa et al. III-B; 3 for ev). ``smooth``: the sliding-average window in
    vectors (1: none). ``id_threshold``: the identification threshold (None: the detector's
    default, :mod:`phasekit.phases.identify`). ``detector``: the chosen detector's own
    options, which differ from one detector to the next (ev's ``confirm``, ``min_length``
    ...: :meth:`phasekit.phases.ev.EvDetector.detect`; shape's ``window``, ``max_changes``,
    ``seed``: :func:`phasekit.phases.shape.shape_change_points`); the detector checks them.
    A value out of range is a :class:`~phasekit.errors.UsageError` naming the parameter.
    """

    method: str = "auto"
    threshold: float | None = None
    smooth: int = 1
    id_threshold: float | None = None
    detector: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if isinstance(self.detector, Mapping):  # a copy: the options stay as they were made
            object.__setattr__(self, "detector", dict(self.detector))
        super().__post_init__()

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        return [
            ("method", self.method == "auto" or self.method in METHODS,
             f"expected auto or one of {', '.join(METHODS)}"),
            ("threshold", self.threshold is None or _positive(self.threshold),
             "expected a positive number"),
            ("smooth", self.smooth >= 1, "expected a window of at least 1 vector"),
            ("id_threshold", self.id_threshold is None or _positive(self.id_threshold),
             "expected a positive number or None"),
            ("detector", isinstance(self.detector, Mapping)
             and not set(self.detector) & set(_PASSED_TO_DETECTORS),
             "expected the detector's own options, a mapping without "
             + ", ".join(_PASSED_TO_DETECTORS)),
        ]


def _positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def phases(profile: Profile, *, metrics: Sequence[str] | None = None,
           sensors: Sequence[str] | None = None, options: PhaseOptions | None = None,
           progress: Callable[[str, float], None] | None = None,
           **keywords: Any) -> PhaseResult:
    """Phase changes and recurring phases of ``profile`` (Tsafack Chetsa et al., sections III and IV).

    ``options``: the tuning parameters as one :class:`PhaseOptions` (``method``,
    ``threshold``, ``smooth``, ``id_threshold``, ``detector``), or the same as keywords,
    never both. ``method`` is a registered detector
    (:data:`phasekit.phases.registry.DETECTORS`): "ev" (online, robust), "ev-literal"
    (Algorithm 1) or "shape" (:mod:`phasekit.phases.shape`), or "auto" (default: "shape"
    for one series that varies, "ev" otherwise); the result's ``params["method_choice"]``
    says why. ``threshold`` defaults to the detector's (0.15 for ev-literal, Tsafack Chetsa
    et al. III-B; 3 for ev); ``smooth`` is the sliding-average window in vectors (1: none);
    ``metrics`` the metrics of the vectors (default: the detector's choice,
    :meth:`~phasekit.phases.registry.PhaseDetector.choose_sensors`; for ev every metric
    that varies, ``cycles`` as the load ``cycles_per_s``; for ev-literal the published
    sensors); ``id_threshold`` the identification threshold (ev's default: the detection
    threshold; :mod:`phasekit.phases.identify`); ``detector`` the detector's own options
    (:func:`phasekit.phases.detect.detect`; ev's ``confirm`` and ``min_length`` default
    from the sampling period: :func:`phasekit.phases.ev.timing`).

    Identification is the detector's
    (:meth:`~phasekit.phases.registry.PhaseDetector.identify_phases`). Consecutive phases
    never share an id (ev, shape; ev-literal keeps the published identification): with ev, a phase as close to the one before it as a typical
    member is merged into it (ours: a change that returned to the phase it left, a burst
    confirmed as a change, is not a new phase); ``merged_changes`` in the result counts them.
    With ev, a change in the last vectors is kept only when the last phase has the
    detector's minimum phase length (``min_length`` valid vectors), as every other phase has
    (:func:`phasekit.phases.ev.settled_starts`; a program exiting within its last sample is
    not a phase of its own); ``unsettled_changes`` counts those dropped.
    An InputError when the chosen sensors have no valid vector (all NaN) or nothing varies.
    ``sensors`` is the former name of ``metrics``, the name shared with
    :func:`phasekit.periodicity.analyze` and the command line's ``--metric`` (give one or
    the other). ``progress(stage, fraction)`` is told of each stage.
    """
    o = PhaseOptions.of(options, keywords, verb="phases")
    report = progress or (lambda stage, fraction: None)
    method = o.method
    if metrics is not None:
        if sensors is not None:
            raise UsageError("give metrics or sensors (the same: the metrics of the vectors), "
                             "not both")
        sensors = metrics
    if sensors is not None:
        sensors = stored_sensors(profile, sensors)  # perf's cpu-clock is the cpu_clock column
    method_choice = f"--method {method}"
    if method == "auto":
        varying = (choose_sensors(profile) if sensors is None
                   else SensorChoice(tuple(sensors), {}, "given"))
        method = "shape" if len(varying.sensors) == 1 else "ev"
        method_choice = ("one series: its shape changes (ClaSP-style), not its level"
                         if method == "shape" else
                         "several sensors: the online execution-vector detector")
    chosen = detector(method)
    if sensors is None:
        choice = chosen.choose_sensors(profile)
        if not choice.sensors:
            raise InputError("nothing to detect phases in: every metric is constant or empty ("
                             + "; ".join(f"{m}: {why}" for m, why in choice.left_out.items())
                             + ")")
    else:
        choice = SensorChoice(tuple(sensors), {}, "given")
    report("building the vectors", 0.0)
    vectors = execution_vectors(profile, sensors=choice.sensors, smooth_window=o.smooth)
    if not vectors.valid.any():
        raise InputError("no valid execution vector: every sample of the sensors "
                         + ", ".join(vectors.sensors) + " has a missing value")
    report(f"detecting the changes ({method}, {len(vectors.values):,} samples)", 0.1)
    found = detect(vectors.values, method=method, threshold=o.threshold,
                   period=vectors.period, sensors=vectors.sensors, **o.detector)
    report("identifying the phases", 0.9)
    result = _result(profile, vectors, chosen, found, o.id_threshold,
                     chosen.params(dict(o.detector), found, method_choice), choice)
    if len(result.phases) == 1 and found.explanation:
        return replace(result, explanation=found.explanation)
    return result


def _result(profile: Profile, vectors: ExecutionVectors, chosen: PhaseDetector,
            found: Detection, id_threshold: float | None, options: dict[str, Any],
            choice: SensorChoice) -> PhaseResult:
    X = vectors.values
    id_threshold = chosen.id_threshold(id_threshold, found)
    min_length = int(options.get("min_length", ID_SKIP))
    starts = chosen.settled(X, np.asarray(found.starts), min_length)
    unsettled = len(found.starts) - len(starts)
    starts, summaries, ids = chosen.identify_phases(X, found, starts, id_threshold, min_length)
    detected_at = dict(zip(map(int, found.starts), map(int, found.detected_at), strict=True))
    times = vectors.times
    duration = profile.duration
    result_phases = []
    for summary, phase_id in zip(summaries, ids, strict=True):
        end_s = float(times[summary.end]) if summary.end < len(times) else duration
        result_phases.append(Phase(
            start_s=float(times[summary.start]), end_s=end_s, id=int(phase_id),
            detected_at_s=float(times[detected_at[summary.start]]),
            start_index=summary.start, end_index=summary.end,
            representative=dict(zip(vectors.sensors, map(float, summary.representative),
                                    strict=True)),
            reference=dict(zip(vectors.sensors, map(float, summary.reference), strict=True))))
    explanation = ""
    if len(result_phases) == 1:
        explanation = ("no phase change: the whole profile is one phase"
                       if np.isfinite(X).all(axis=1).sum() > 1 else
                       "fewer than two valid vectors: one phase by definition")
        if unsettled:
            explanation += (f" (a change in the last {min_length - 1} vectors, shorter than "
                            f"the minimum phase length of {min_length} vectors, is not kept)")
    params = {"id_threshold": id_threshold, **options,
              "merged_changes": len(found.starts) - unsettled - len(starts),
              "unsettled_changes": unsettled,
              "sensor_choice": {"how": choice.how, "left_out": choice.left_out,
                                "levels": list(vectors.levels)}}
    return PhaseResult(
        phases=tuple(result_phases), method=found.method, threshold=found.threshold,
        sensors=vectors.sensors, normalization=vectors.normalization, smooth=vectors.smooth,
        period=vectors.period, duration_s=duration, node=profile.node, score=found.score,
        limit=found.limit, params=params, explanation=explanation,
        id_means=id_means(X, [p.start_index for p in result_phases], ids, vectors.sensors))


def id_means(X: np.ndarray, starts: Sequence[int], ids: Sequence[int],
             sensors: Sequence[str]) -> dict[int, dict[str, float]]:
    """The mean vector of every id over all the valid vectors of its phases (the
    representative vector of Tsafack Chetsa et al., IV-A, taken over the recurring phase as a
    whole)."""
    bounds = [*map(int, starts), X.shape[0]]
    label = np.zeros(X.shape[0], np.int64)
    for (a, b), phase_id in zip(itertools.pairwise(bounds), ids, strict=True):
        label[a:b] = phase_id
    valid = np.isfinite(X).all(axis=1)
    out = {}
    for phase_id in sorted(set(map(int, ids))):
        rows = X[valid & (label == phase_id)]
        mean = rows.mean(axis=0) if rows.shape[0] else np.full(X.shape[1], np.nan)
        out[phase_id] = dict(zip(sensors, map(float, mean), strict=True))
    return out
