"""Phases of a profile, end to end (Tsafack Chetsa et al.): execution vectors, detection, representation,
identification. ``phases`` takes a Profile and returns a ``PhaseResult``; it never prints
nor reads files."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.phases.detect import METHODS, MIN_LENGTH, ROBUST_THRESHOLD, Detection, detect
from phasekit.phases.identify import (
    MERGE_SCORE,
    PhaseSummary,
    consecutive_scores,
    identify,
    scaled_features,
    summarize,
)
from phasekit.phases.vectors import (
    LOAD_SENSOR,
    ExecutionVectors,
    SensorChoice,
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

__all__ = ["Phase", "PhaseResult", "phases"]

RESULT_VERSION = 1


@dataclass(frozen=True)
class Phase:
    """One phase: ``[start_s, end_s)``, its id (recurring phases share one), when the
    detector noticed it, and its representative and reference vectors (seed IV)."""

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
    ``limit`` per vector: the seed's Fig. 1 (c))."""

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


def phases(profile: Profile, *, method: str = "auto", threshold: float | None = None,
           smooth: int = 1, metrics: Sequence[str] | None = None,
           sensors: Sequence[str] | None = None,
           id_threshold: float | None = None, **detector: Any) -> PhaseResult:
    """Phase changes and recurring phases of ``profile`` (Tsafack Chetsa et al., sections III and IV).

    ``method`` "auto" (default: "shape" for one series that varies, :mod:`phasekit.phases.
    shape`, "ev" otherwise), "ev" (online, robust), "ev-literal" (Algorithm 1) or "shape";
    the result's ``params["method_choice"]`` says why. ``threshold`` defaults
    to the method's (0.15 for ev-literal, seed III-B; 3 for ev); ``smooth`` is the sliding-
    average window in vectors (1: none); ``sensors`` the metrics of the vectors (default for
    ev: every metric that varies, ``cycles`` as the load ``cycles_per_s``; for ev-literal the
    seed's sensors: :func:`phasekit.phases.vectors.choose_sensors`); ``id_threshold`` the ev
    method's identification threshold (default: the detection threshold;
    :mod:`phasekit.phases.identify`); other keywords go to :func:`detect` (``confirm`` and
    ``min_length`` default from the sampling period: :func:`phasekit.phases.detect.timing`).

    Consecutive phases never share an id (ev, shape; ev-literal keeps the seed's
    identification): a phase as close to the one before it as a typical
    member is merged into it (ours: a change that returned to the phase it left,
    a burst confirmed as a change, is not a new phase; :func:`_identified`);
    ``merged_changes`` in the result counts them. With ev, a change in the last vectors is
    kept only when the last phase has the detector's minimum phase length (``min_length``
    valid vectors), as every other phase has (:func:`settled_starts`; a program exiting within
    its last sample is not a phase of its own); ``unsettled_changes`` counts those dropped.
    An InputError when the chosen sensors have no valid vector (all NaN) or nothing varies.
    ``metrics`` is the name of ``sensors`` shared with :func:`phasekit.periodicity.analyze`
    and the command line's ``--metric`` (give one or the other).
    """
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
    if method not in METHODS:
        raise UsageError(f"expected auto or one of {', '.join(METHODS)}", parameter="method",
                         value=method)
    if sensors is None:
        choice = choose_sensors(profile, method=method)
        if not choice.sensors:
            raise InputError("nothing to detect phases in: every metric is constant or empty ("
                             + "; ".join(f"{m}: {why}" for m, why in choice.left_out.items())
                             + ")")
    else:
        choice = SensorChoice(tuple(sensors), {}, "given")
    vectors = execution_vectors(profile, sensors=choice.sensors, smooth_window=smooth)
    if not vectors.valid.any():
        raise InputError("no valid execution vector: every sample of the sensors "
                         + ", ".join(vectors.sensors) + " has a missing value")
    if method == "shape":
        return _shape_result(profile, vectors, choice, method_choice, detector)
    load = ({"load_column": vectors.sensors.index(LOAD_SENSOR)}
            if method == "ev" and LOAD_SENSOR in vectors.sensors and "load_column" not in detector
            else {})
    found = detect(vectors.values, method=method, threshold=threshold, period=vectors.period,
                   **load, **detector)
    return _result(profile, vectors, found, id_threshold,
                   {**detector, **found.params, "method_choice": method_choice}, choice)


def _shape_result(profile: Profile, vectors: ExecutionVectors, choice: SensorChoice,
                  method_choice: str, options: dict[str, Any]) -> PhaseResult:
    """Phases of one series by its shape (:mod:`phasekit.phases.shape`, offline: every phase
    is "detected" at the end of the profile); ids as the ev method gives them, consecutive
    phases apart (no merge: two shapes may share a level)."""
    from phasekit.phases.shape import P_THRESHOLD, shape_change_points

    if vectors.values.shape[1] != 1:
        raise UsageError(f"segments one series; {vectors.values.shape[1]} sensors given "
                         "(choose one)", parameter="method", value="shape")
    segmentation = shape_change_points(vectors.values[:, 0], **options)
    starts = np.concatenate([[0], segmentation.change_points]).astype(np.int64)
    last = vectors.n - 1
    found = Detection(starts=starts, detected_at=np.full(starts.size, last), score=np.full(
        vectors.n, np.nan), limit=np.full(vectors.n, np.nan), method="shape",
        threshold=float(options.get("threshold", P_THRESHOLD)))
    result = _result(profile, vectors, found, None,
                     {"min_length": MIN_LENGTH, "method_choice": method_choice,
                      "window": segmentation.window,
                      "window_method": segmentation.window_method,
                      "filled": segmentation.filled}, choice, merge=False)
    if len(result.phases) == 1 and segmentation.explanation:
        return replace(result, explanation=segmentation.explanation)
    return result


def _identified(X: np.ndarray, found: Detection, starts: np.ndarray,
                id_threshold: float | None, min_length: int, *, merge: bool = True
                ) -> tuple[np.ndarray, list[PhaseSummary], np.ndarray]:
    """Identification (seed IV-B) of the phases that start at ``starts``: (starts,
    summaries, ids). Consecutive phases (ev, shape) never share an id: with ev, a phase as
    close to the one before it as a typical member (identification score <= ``MERGE_SCORE``)
    is merged into it (the change returned to the phase it left), repeatedly; any other
    phase takes the earliest matching id that is not its predecessor's, or a new one.
    ev-literal keeps the seed's detection and identification as published (IV-B): no merge,
    and consecutive phases may share an id there (its false changes inside a workload would
    otherwise alternate ids and hide the workload's recurrence)."""
    literal = found.method == "ev-literal"
    space = None if literal else scaled_features(X)
    shape = found.method == "shape"  # identified as the ev method identifies

    def references_of(summaries: list[PhaseSummary]) -> np.ndarray:
        return np.array([s.reference for s in summaries]).reshape(len(summaries), X.shape[1])

    summaries = summarize(X, starts, space=space)
    while merge and not literal and len(starts) > 1:
        close = consecutive_scores(references_of(summaries), X, starts, min_length)
        merged = np.flatnonzero(close <= MERGE_SCORE)
        if not merged.size:
            break
        starts = np.delete(starts, merged)
        summaries = summarize(X, starts, space=space)
    max_consecutive = float(np.nanmax(found.score)) if np.isfinite(found.score).any() else np.nan
    ids = identify(references_of(summaries), method="ev" if shape else found.method,
                   threshold=ROBUST_THRESHOLD if shape else found.threshold,
                   max_consecutive=max_consecutive, id_threshold=id_threshold, vectors=X,
                   starts=starts, min_length=min_length, apart=not literal)
    return starts, summaries, ids


def _result(profile: Profile, vectors: ExecutionVectors, found: Detection,
            id_threshold: float | None, detector: dict[str, Any],
            choice: SensorChoice, *, merge: bool = True) -> PhaseResult:
    X = vectors.values
    if found.method == "ev" and id_threshold is None:
        id_threshold = found.threshold
    min_length = int(detector.get("min_length", MIN_LENGTH))
    starts = np.asarray(found.starts)
    if found.method == "ev":
        starts = settled_starts(X, starts, min_length)
    unsettled = len(found.starts) - len(starts)
    starts, summaries, ids = _identified(X, found, starts, id_threshold, min_length,
                                         merge=merge)
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
    params = {"id_threshold": id_threshold, **detector,
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


def settled_starts(X: np.ndarray, starts: np.ndarray, min_length: int) -> np.ndarray:
    """``starts`` without the changes of the end of the run that the ev detector has not
    settled: a last phase with fewer than ``min_length`` valid vectors is merged into the
    phase before it, repeatedly (ours, from the detector's own rule). The detector keeps a
    phase *young* for its first ``min_length`` vectors and reports no change meanwhile: a
    phase shorter than that becomes the start-up of the next one, or, when its vectors fall
    back into the phase before it, a transient that identification merges back. The last
    phase of a run gets neither test: a change in the last vectors (a program exiting within
    its last, partial sample) would otherwise be a phase of one or two samples with an id of
    its own."""
    starts = np.asarray(starts)
    if starts.size < 2:
        return starts
    valid = np.isfinite(X).all(axis=1)
    after = np.cumsum(valid[::-1])[::-1]  # valid vectors from index t to the end
    keep = starts.size
    while keep > 1 and after[int(starts[keep - 1])] < min_length:
        keep -= 1
    return starts[:keep]


def id_means(X: np.ndarray, starts: Sequence[int], ids: Sequence[int],
             sensors: Sequence[str]) -> dict[int, dict[str, float]]:
    """The mean vector of every id over all the valid vectors of its phases (seed IV-A's
    representative vector, taken over the recurring phase as a whole)."""
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
