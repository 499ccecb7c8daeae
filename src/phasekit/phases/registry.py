"""Phase detectors as plug-ins: the :class:`PhaseDetector` base class and the :data:`DETECTORS`
registry that every function taking a ``method`` reads.

A detector is a subclass with a ``name`` (the ``method`` of :func:`phasekit.phases.phases`,
``--method`` on the command line), a default ``threshold`` and :meth:`PhaseDetector.detect`,
added to the registry by one line, ``@register_detector``::

    @register_detector
    class Above(PhaseDetector):
        name = "above"
        threshold = 200.0  # watts

        def detect(self, X, *, threshold, period=1.0, sensors=None, **options):
            above = X[:, 0] > threshold
            starts = np.concatenate([[0], np.flatnonzero(above[1:] != above[:-1]) + 1])
            return Detection(starts=starts, detected_at=starts, score=X[:, 0],
                             limit=np.full(len(X), threshold), method=self.name,
                             threshold=threshold)

The other rules of a detector have the ``ev`` method's defaults (ours), which a subclass may
override: the metrics it reads from a profile (:meth:`PhaseDetector.choose_sensors`: every
metric that varies, ``cycles`` as the load ``cycles_per_s``) or from a stream
(:meth:`PhaseDetector.streaming_sensors`), a streaming form (:meth:`PhaseDetector.stream`,
``online``; none by default), which changes at the end of a run it keeps
(:meth:`PhaseDetector.settled`) and how its phases are identified
(:meth:`PhaseDetector.identify_phases`: by the detector's own score in scale-free features,
:mod:`phasekit.phases.identify`; a phase as close to the one before it as a typical member is
merged into it when ``merges``).

Built in, one module each: ``ev`` (:mod:`phasekit.phases.ev`), ``ev-literal``
(:mod:`phasekit.phases.literal`) and ``shape`` (:mod:`phasekit.phases.shape`), registered in
that order by :mod:`phasekit.phases.detect` whenever :mod:`phasekit.phases` is imported.
``auto`` is no detector: :func:`phasekit.phases.phases` resolves it to ``shape`` or ``ev``.
This module imports none of them (nor :mod:`phasekit.phases.vectors`, which asks it for the
sensor defaults by name).
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import KeysView, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from phasekit.errors import UsageError
from phasekit.phases.identify import (
    ID_SKIP,
    ID_THRESHOLD,
    MERGE_SCORE,
    PhaseSummary,
    consecutive_scores,
    ids_by_score,
    reference_matrix,
    scaled_features,
    summarize,
)
from phasekit.profile import Profile

__all__ = [
    "CONSTANT_SPREAD",
    "DETECTORS",
    "LOAD_SENSOR",
    "METHODS",
    "Detection",
    "PhaseChange",
    "PhaseDetector",
    "SensorChoice",
    "StreamingDetector",
    "check_period",
    "detector",
    "identify",
    "register_detector",
]

#: The load sensor (the ev method's, beyond Tsafack Chetsa et al.'s sensors): cycles per
#: second, derived from ``cycles`` (:mod:`phasekit.phases.vectors`).
LOAD_SENSOR = "cycles_per_s"
#: A metric whose values all lie within this fraction of the largest is constant for the
#: default sensor choice (:meth:`PhaseDetector.choose_sensors`).
CONSTANT_SPREAD = 0.05
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class SensorChoice:
    """The sensors of a profile's vectors and the metrics left out, each with the reason."""

    sensors: tuple[str, ...]
    left_out: dict[str, str]
    how: str


@dataclass(frozen=True)
class PhaseChange:
    """A new phase: it starts at vector ``start`` (the located change point) and was
    detected at vector ``detected_at`` (>= start)."""

    start: int
    detected_at: int
    score: float


@dataclass(frozen=True, eq=False)
class Detection:
    """The phases of a run of vectors: ``starts`` (vector indices, the first is 0), and per
    vector the detector's ``score`` and the ``limit`` it was compared with (Tsafack Chetsa et
    al., Fig. 1 (c): the distance and the threshold); ``params``, the detector's settings as
    the result reports them; ``explanation``, why there is a single phase, when the detector
    knows."""

    starts: np.ndarray
    detected_at: np.ndarray
    score: np.ndarray
    limit: np.ndarray
    method: str
    threshold: float
    params: dict[str, Any] = field(default_factory=dict)
    explanation: str = ""


class StreamingDetector(Protocol):
    """A detector fed one vector at a time: ``update(vector)`` returns a PhaseChange when a
    new phase starts (``phasekit watch``)."""

    threshold: float

    def update(self, vector: Sequence[float] | np.ndarray) -> PhaseChange | None: ...


def check_period(period: float) -> float:
    """``period`` (s), a UsageError unless it is a positive number."""
    if not (math.isfinite(period) and period > 0):
        raise UsageError(f"sampling period {period}: expected a positive number of seconds")
    return float(period)


def positive_threshold(threshold: float | None, default: float) -> float:
    """``threshold``, ``default`` when None; a UsageError unless positive."""
    if threshold is None:
        return default
    if not (math.isfinite(threshold) and threshold > 0):
        raise UsageError("expected a positive number", parameter="threshold", value=threshold)
    return float(threshold)


class PhaseDetector(ABC):
    """A phase detector: its ``name``, its default ``threshold`` and :meth:`detect`; the other
    methods are the ``ev`` method's rules (module docstring). ``online`` detectors have a
    streaming form (:meth:`stream`); ``merges``: identification merges a phase into the one
    before it when it is as close to it as a typical member."""

    name: ClassVar[str]
    threshold: ClassVar[float]
    online: ClassVar[bool] = False
    merges: ClassVar[bool] = True

    def check_threshold(self, threshold: float | None) -> float:
        """The detection threshold: ``threshold`` or the default; a UsageError unless positive."""
        return positive_threshold(threshold, self.threshold)

    @abstractmethod
    def detect(self, X: np.ndarray, *, threshold: float, period: float = 1.0,
               sensors: Sequence[str] | None = None, **options: Any) -> Detection:
        """The phases of the vectors ``X`` (n x sensors, float64, NaN rows are gaps), with the
        checked ``threshold``, the sampling ``period`` (s), the columns' ``sensors`` names when
        known, and the detector's own ``options``."""

    def stream(self, n_sensors: int, *, threshold: float, sensors: Sequence[str] | None = None,
               period: float = 1.0) -> StreamingDetector:
        """A streaming detector over vectors of ``n_sensors`` (the same phases as
        :meth:`detect`, one vector at a time); a UsageError for an offline detector."""
        online = ", ".join(name for name, d in DETECTORS.items() if d.online)
        raise UsageError(f"an offline detector: it needs the whole run; online: {online}",
                         parameter="method", value=self.name)

    def choose_sensors(self, profile: Profile) -> SensorChoice:
        """The default sensors for ``profile``: every metric with values that vary (ours).

        A metric with no value, or constant over the profile (every value within
        ``CONSTANT_SPREAD``, 5 %, of the largest: the ev detector's per-sensor scale is at
        least 5 %, so such a sensor cannot move a vector out of its phase), is left out with
        the reason; when no other metric varies more, those are kept (a single series is
        segmented by its shape, whatever its scale). ``cycles`` becomes the load sensor
        ``cycles_per_s``, last (alone, it is its own series)."""
        left_out: dict[str, str] = {}
        names: list[str] = []
        nearly: dict[str, str] = {}  # constant within CONSTANT_SPREAD, not exactly
        for j, metric in enumerate(profile.metrics):
            column = profile.values[:, j]
            finite = column[np.isfinite(column)]
            if finite.size == 0:
                left_out[metric] = "no value"
                continue
            spread = float(np.ptp(finite))
            largest = float(np.max(np.abs(finite)))
            if spread == 0.0:
                left_out[metric] = f"constant at {finite[0]:.3g}"
            elif metric == "cycles":
                continue
            elif spread <= CONSTANT_SPREAD * largest:
                nearly[metric] = (f"constant at {float(np.median(finite)):.3g} within "
                                  f"{100 * spread / largest:.2g} %")
            else:
                names.append(metric)
        if names:
            left_out.update(nearly)
            left_out = {m: left_out[m] for m in profile.metrics if m in left_out}
        else:  # nothing varies more: these are the series to analyse
            names = [m for m in profile.metrics if m in nearly]
        if "cycles" in profile.metrics and "cycles" not in left_out:
            names.append(LOAD_SENSOR if names else "cycles")
        return SensorChoice(tuple(names), left_out,
                            "every metric that varies; cycles as the load cycles_per_s")

    def streaming_sensors(self, metrics: Sequence[str]) -> list[str]:
        """The default sensors of a stream whose values are not known yet: every metric,
        ``cycles`` as the load sensor (:meth:`choose_sensors`)."""
        names = [m for m in metrics if m != "cycles"]
        if "cycles" in metrics:
            names.append(LOAD_SENSOR if names else "cycles")
        return names

    def settled(self, X: np.ndarray, starts: np.ndarray, min_length: int) -> np.ndarray:
        """The phase starts the result keeps; all of them by default."""
        return starts

    def id_threshold(self, given: float | None, found: Detection) -> float | None:
        """The identification threshold the result uses and reports: ``given`` by default
        (None: ``ID_THRESHOLD``, the ev detector's default threshold)."""
        return given

    def identify(self, references: np.ndarray, *, threshold: float,
                 max_consecutive: float = math.nan, id_threshold: float | None = None,
                 vectors: np.ndarray | None = None, starts: np.ndarray | None = None,
                 min_length: int = ID_SKIP, apart: bool = False) -> np.ndarray:
        """Ids (from 1) of the phases whose reference vectors are the rows of ``references``:
        the same id when each reference vector scores at most ``id_threshold`` (default
        ``threshold``) in the other phase (:func:`phasekit.phases.identify.ids_by_score`:
        the run's ``vectors``, the phases' ``starts``); with ``apart``, consecutive phases
        never share an id. ``max_consecutive`` is for detectors that compare distances."""
        if vectors is None or starts is None or len(starts) != references.shape[0]:
            raise ValueError("the ev method identifies phases from the run's vectors and the "
                             "phases' starts")
        limit = threshold if id_threshold is None else id_threshold
        return ids_by_score(references, vectors, starts, limit, min_length=min_length,
                            apart=apart)

    def identify_phases(self, X: np.ndarray, found: Detection, starts: np.ndarray,
                        id_threshold: float | None, min_length: int
                        ) -> tuple[np.ndarray, list[PhaseSummary], np.ndarray]:
        """Identification (Tsafack Chetsa et al., IV-B) of the phases of ``X`` that start at
        ``starts``: (starts, summaries, ids). Reference vectors are chosen in the scaled
        features; with ``merges``, a phase as close to the one before it as a typical member
        (identification score <= ``MERGE_SCORE``) is merged into it (the change returned to
        the phase it left), repeatedly; any other phase takes the earliest matching id that
        is not its predecessor's, or a new one."""
        space = scaled_features(X)
        summaries = summarize(X, starts, space=space)
        while self.merges and len(starts) > 1:
            close = consecutive_scores(reference_matrix(summaries, X.shape[1]), X, starts,
                                       min_length)
            merged = np.flatnonzero(close <= MERGE_SCORE)
            if not merged.size:
                break
            starts = np.delete(starts, merged)
            summaries = summarize(X, starts, space=space)
        ids = self.identify(reference_matrix(summaries, X.shape[1]), threshold=ID_THRESHOLD,
                            id_threshold=id_threshold, vectors=X, starts=starts,
                            min_length=min_length, apart=True)
        return starts, summaries, ids

    def params(self, options: dict[str, Any], found: Detection, method_choice: str
               ) -> dict[str, Any]:
        """The settings the result reports: the ``options`` given, the detection's own
        ``params``, and ``method_choice`` (why this method)."""
        return {**options, **found.params, "method_choice": method_choice}


#: The registered detectors by name, in the order they were registered.
DETECTORS: dict[str, PhaseDetector] = {}
#: The registered detectors' names (a live view of :data:`DETECTORS`).
METHODS: KeysView[str] = DETECTORS.keys()

DetectorClass = TypeVar("DetectorClass", bound=type[PhaseDetector])


def register_detector(cls: DetectorClass) -> DetectorClass:
    """Class decorator: register an instance of ``cls`` under ``cls.name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name == "auto":
        raise UsageError("a detector name is letters, digits, '_', '-' and '.' (not 'auto')",
                         parameter="name", value=name)
    if name in DETECTORS:
        raise UsageError(f"already registered ({type(DETECTORS[name]).__qualname__})",
                         parameter="name", value=name)
    threshold = getattr(cls, "threshold", None)
    if not isinstance(threshold, int | float) or not threshold > 0:
        raise UsageError("a detector needs a positive default threshold",
                         parameter="threshold", value=threshold)
    DETECTORS[name] = cls()
    return cls


def detector(method: str) -> PhaseDetector:
    """The registered detector named ``method``; a UsageError naming the registered ones."""
    found = DETECTORS.get(method)
    if found is None:
        raise UsageError(f"expected one of {', '.join(DETECTORS)}", parameter="method",
                         value=method)
    return found


def identify(references: np.ndarray, *, method: str, threshold: float,
             max_consecutive: float = math.nan, id_threshold: float | None = None,
             vectors: np.ndarray | None = None, starts: np.ndarray | None = None,
             min_length: int = ID_SKIP, apart: bool = False) -> np.ndarray:
    """Ids (from 1) of phases whose reference vectors are the rows of ``references``, by the
    identification rule of the detector ``method`` (:meth:`PhaseDetector.identify`); with
    ``apart``, consecutive phases never share an id.

    ev-literal: same id when the Manhattan distance is <= ``threshold`` x
    ``max_consecutive`` (the largest consecutive-EV distance of the run). ev (and the
    default): same id when each reference vector scores at most ``id_threshold`` (default
    ``threshold``) in the other phase (:mod:`phasekit.phases.identify`); it needs the run's
    ``vectors`` and the phases' ``starts`` (indices into them, in order), and
    ``min_length``, the young part of a phase left out of its statistics.
    """
    return detector(method).identify(references, threshold=threshold,
                                     max_consecutive=max_consecutive,
                                     id_threshold=id_threshold, vectors=vectors,
                                     starts=starts, min_length=min_length, apart=apart)
