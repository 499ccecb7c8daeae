"""Phases of a profile, end to end (seed 001): execution vectors, detection, representation,
identification. ``phases`` takes a Profile and returns a ``PhaseResult``; it never prints
nor reads files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phasekit.errors import InputError
from phasekit.phases.detect import MIN_LENGTH, Detection, detect
from phasekit.phases.identify import identify, scaled_features, summarize
from phasekit.phases.vectors import (
    LOAD_SENSOR,
    ExecutionVectors,
    default_sensors,
    execution_vectors,
)
from phasekit.profile import Profile
from phasekit.results import check_version, plain

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
class PhaseResult:
    """The phases of a profile in time order, with what the detector saw (``score`` and
    ``limit`` per vector: the seed's Fig. 1 (c))."""

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

    @property
    def n_ids(self) -> int:
        return len({p.id for p in self.phases})

    def to_dict(self, *, series: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": "phases", "version": RESULT_VERSION, "node": self.node,
            "method": self.method, "threshold": self.threshold, "sensors": list(self.sensors),
            "normalization": self.normalization, "smooth": self.smooth,
            "period_s": self.period, "duration_s": self.duration_s,
            "n_phases": len(self.phases), "n_ids": self.n_ids,
            "phases": [p.to_dict() for p in self.phases], "params": self.params,
            "explanation": self.explanation,
        }
        if series:
            data["score"], data["limit"] = self.score, self.limit
        return plain(data)

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
                explanation=str(data.get("explanation", "")))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed phases result: {exc}", path=source) from None


def phases(profile: Profile, *, method: str = "ev", threshold: float | None = None,
           smooth: int = 1, sensors: Sequence[str] | None = None,
           id_threshold: float | None = None, **detector: Any) -> PhaseResult:
    """Phase changes and recurring phases of ``profile`` (seed 001, sections III and IV).

    ``method`` "ev" (default, robust) or "ev-literal" (Algorithm 1); ``threshold`` defaults
    to the method's (0.15 for ev-literal, seed III-B; 3 for ev); ``smooth`` is the sliding-
    average window in vectors (1: none); ``sensors`` the metrics of the vectors (default: the
    seed's that the profile has, plus the load ``cycles_per_s`` for ev, see
    :mod:`phasekit.phases.vectors`); ``id_threshold`` the ev method's identification
    threshold (default: the detection threshold; :mod:`phasekit.phases.identify`); other
    keywords go to :func:`detect`.
    """
    if sensors is None:
        # ev (ours, beyond the seed): the load sensor cycles_per_s joins the seed's per-cycle
        # sensors when there is a cycles metric (per cycle, an idle node and a low-IPC step
        # at full load look alike); ev-literal keeps the seed's sensors
        sensors = default_sensors(profile.metrics, load=method == "ev")
    vectors = execution_vectors(profile, sensors=sensors, smooth_window=smooth)
    load = ({"load_column": vectors.sensors.index(LOAD_SENSOR)}
            if method == "ev" and LOAD_SENSOR in vectors.sensors and "load_column" not in detector
            else {})
    found = detect(vectors.values, method=method, threshold=threshold, **load, **detector)
    return _result(profile, vectors, found, id_threshold, detector)


def _result(profile: Profile, vectors: ExecutionVectors, found: Detection,
            id_threshold: float | None, detector: dict[str, Any]) -> PhaseResult:
    X = vectors.values
    literal = found.method == "ev-literal"
    summaries = summarize(X, found.starts, space=None if literal else scaled_features(X))
    references = np.array([s.reference for s in summaries]).reshape(len(summaries), X.shape[1])
    max_consecutive = float(np.nanmax(found.score)) if np.isfinite(found.score).any() else np.nan
    if not literal and id_threshold is None:
        id_threshold = found.threshold
    ids = identify(references, method=found.method, threshold=found.threshold,
                   max_consecutive=max_consecutive, id_threshold=id_threshold,
                   vectors=X, starts=found.starts,
                   min_length=int(detector.get("min_length", MIN_LENGTH)))
    times = vectors.times
    duration = profile.duration
    result_phases = []
    for k, (summary, detected) in enumerate(zip(summaries, found.detected_at, strict=True)):
        end_s = float(times[summary.end]) if summary.end < len(times) else duration
        result_phases.append(Phase(
            start_s=float(times[summary.start]), end_s=end_s, id=int(ids[k]),
            detected_at_s=float(times[int(detected)]), start_index=summary.start,
            end_index=summary.end,
            representative=dict(zip(vectors.sensors, map(float, summary.representative),
                                    strict=True)),
            reference=dict(zip(vectors.sensors, map(float, summary.reference), strict=True))))
    explanation = ""
    if len(result_phases) == 1:
        explanation = ("no phase change: the whole profile is one phase"
                       if np.isfinite(X).all(axis=1).sum() > 1 else
                       "fewer than two valid vectors: one phase by definition")
    return PhaseResult(
        phases=tuple(result_phases), method=found.method, threshold=found.threshold,
        sensors=vectors.sensors, normalization=vectors.normalization, smooth=vectors.smooth,
        period=vectors.period, duration_s=duration, node=profile.node, score=found.score,
        limit=found.limit, params={"id_threshold": id_threshold, **detector},
        explanation=explanation)
