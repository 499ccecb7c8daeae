"""Phase-change detection by method name, offline (:func:`detect`) and streaming
(:func:`make_detector`), over the registered detectors (:mod:`phasekit.phases.registry`).

The built-in detectors, one module each, are registered here, in the order of :data:`METHODS`:
``ev`` (default, ours: :mod:`phasekit.phases.ev`), ``ev-literal`` (Algorithm 1 of Tsafack
Chetsa et al.: :mod:`phasekit.phases.literal`) and ``shape`` (one series, offline:
:mod:`phasekit.phases.shape`). Their constants, streaming classes and :func:`timing` are also
importable from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from phasekit.errors import UsageError
from phasekit.phases.ev import (
    CAP,
    CONFIRM,
    EPS_REL,
    HORIZON,
    HYSTERESIS,
    MIN_LENGTH,
    MIN_SPREAD,
    ROBUST_THRESHOLD,
    SHIFT_THRESHOLD,
    SHIFT_WINDOW,
    STRONG,
    EvDetector,
    RobustDetector,
    signed_log,
    timing,
)
from phasekit.phases.literal import LITERAL_THRESHOLD, EvLiteralDetector, LiteralDetector
from phasekit.phases.registry import (
    DETECTORS,
    METHODS,
    Detection,
    PhaseChange,
    StreamingDetector,
    check_period,
    detector,
)
from phasekit.phases.shape import ShapeDetector

__all__ = [
    "CAP",
    "CONFIRM",
    "DETECTORS",
    "EPS_REL",
    "HORIZON",
    "HYSTERESIS",
    "LITERAL_THRESHOLD",
    "METHODS",
    "MIN_LENGTH",
    "MIN_SPREAD",
    "ROBUST_THRESHOLD",
    "SHIFT_THRESHOLD",
    "SHIFT_WINDOW",
    "STRONG",
    "Detection",
    "EvDetector",
    "EvLiteralDetector",
    "LiteralDetector",
    "PhaseChange",
    "RobustDetector",
    "ShapeDetector",
    "detect",
    "make_detector",
    "signed_log",
    "timing",
]


def detect(X: np.ndarray, *, method: str = "ev", threshold: float | None = None,
           period: float = 1.0, sensors: Sequence[str] | None = None, **options: Any
           ) -> Detection:
    """Phase starts of the vectors ``X`` (n x sensors) by the detector ``method``
    (:data:`METHODS`); ``threshold`` defaults to the detector's (0.15 for ev-literal,
    Tsafack Chetsa et al. III-B; ``ROBUST_THRESHOLD`` for ev); ``period`` is the sampling
    period (s), ``sensors`` the names of the columns when known (ev: the load
    ``cycles_per_s`` is found among them); ``options`` are the detector's own (ev:
    ``confirm``, ``min_length``, ``load_column`` ...: :meth:`EvDetector.detect`; shape: those
    of :func:`phasekit.phases.shape.shape_change_points`)."""
    check_period(period)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] == 0:
        raise UsageError(f"execution vectors must be 2-D with at least one sensor, got {X.shape}")
    found = detector(method)
    return found.detect(X, threshold=found.check_threshold(threshold), period=period,
                        sensors=sensors, **options)


def make_detector(method: str, n_sensors: int, *, threshold: float | None = None,
                  sensors: Sequence[str] | None = None, period: float = 1.0
                  ) -> StreamingDetector:
    """A streaming detector for ``method`` (an ``online`` one); ``sensors`` (the vectors'
    sensor names) tell the ev method which column is the load ``cycles_per_s``, as
    :func:`phasekit.phases.phases` does."""
    found = detector(method)
    return found.stream(n_sensors, threshold=found.check_threshold(threshold), sensors=sensors,
                        period=period)
