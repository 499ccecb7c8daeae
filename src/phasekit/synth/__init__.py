"""Synthetic inputs with known ground truth, for tests and evaluation (DESIGN.md, synth/)."""

from __future__ import annotations

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

__all__ = [
    "INSTANCE_DTYPE",
    "KINDS",
    "TRUTH_VERSION",
    "Truth",
    "generate",
    "read_truth",
    "truth_path",
    "write_truth",
]
