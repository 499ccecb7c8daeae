"""Synthetic inputs with known ground truth, for tests and evaluation (docs/design.md)."""

from __future__ import annotations

from phasekit.synth.nodes import EXPECTED_REASONS, OUTLIER_KINDS, NodesTruth, generate_nodes
from phasekit.synth.periodic import (
    INSTANCE_DTYPE,
    KINDS,
    TRUTH_VERSION,
    Truth,
    generate,
    read_truth,
    truth_path,
    write_truth,
)
from phasekit.synth.phases import (
    BENCH_KINDS,
    BENCH_METRICS,
    PHASE_TRUTH_VERSION,
    SIGNATURES,
    WORKLOADS,
    PhaseTruth,
    generate_bench,
    nominal_bench_duration,
    read_phase_truth,
    write_phase_truth,
)

__all__ = [
    "BENCH_KINDS",
    "BENCH_METRICS",
    "EXPECTED_REASONS",
    "INSTANCE_DTYPE",
    "KINDS",
    "OUTLIER_KINDS",
    "PHASE_TRUTH_VERSION",
    "SIGNATURES",
    "TRUTH_VERSION",
    "WORKLOADS",
    "NodesTruth",
    "PhaseTruth",
    "Truth",
    "generate",
    "generate_bench",
    "generate_nodes",
    "nominal_bench_duration",
    "read_phase_truth",
    "read_truth",
    "truth_path",
    "write_phase_truth",
    "write_truth",
]
