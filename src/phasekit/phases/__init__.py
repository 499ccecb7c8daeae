"""Phase changes and recurring phases from execution vectors (Tsafack Chetsa et al.), online and offline."""

from phasekit.phases.analyze import Phase, PhaseOptions, PhaseResult, phases
from phasekit.phases.detect import LiteralDetector, RobustDetector, detect, make_detector
from phasekit.phases.identify import PhaseSummary, summarize
from phasekit.phases.registry import (
    DETECTORS,
    METHODS,
    Detection,
    PhaseChange,
    PhaseDetector,
    identify,
    register_detector,
)
from phasekit.phases.vectors import SENSORS, ExecutionVectors, execution_vectors, smooth
from phasekit.verbmodule import make_callable

__all__ = [
    "DETECTORS",
    "METHODS",
    "SENSORS",
    "Detection",
    "ExecutionVectors",
    "LiteralDetector",
    "Phase",
    "PhaseChange",
    "PhaseDetector",
    "PhaseOptions",
    "PhaseResult",
    "PhaseSummary",
    "RobustDetector",
    "detect",
    "execution_vectors",
    "identify",
    "make_detector",
    "phases",
    "register_detector",
    "smooth",
    "summarize",
]


make_callable(__name__, "phasekit.phases.api:phases")  # pk.phases(...) runs it
