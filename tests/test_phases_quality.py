"""The quality targets for the default phase detector (``ev``), asserted: bench_1 and
bench_2 (Tsafack Chetsa et al. §III-B/C) over several seeds, and the real recording in tests/data. These
fail if the detector regresses; the figures themselves are in benchmarks/RESULTS.md
(benchmarks/phases_quality.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import DATA
from phasekit.io import read_profile
from phasekit.metrics.phases import evaluate_changes, identification_rate
from phasekit.phases import phases
from phasekit.synth.phases import WORKLOADS, generate_bench


def scores(profile, segments, tolerance_s: float, labels=None):
    r = phases(profile)
    detected = [p.detected_at_s for p in r.phases[1:]]
    starts = [p.start_s for p in r.phases[1:]]
    changes = [a for a, _, _ in segments[1:]]
    ident = identification_rate([p.id for p in r.phases], [p.start_s for p in r.phases],
                                [p.end_s for p in r.phases], segments, labels=labels)
    return (evaluate_changes(detected, changes, tolerance_s=tolerance_s),
            evaluate_changes(starts, changes, tolerance_s=tolerance_s), ident)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bench_1_every_change_no_false_positive(seed: int) -> None:
    profile, truth = generate_bench("bench_1", repetitions=5, seed=seed)
    detected, _, ident = scores(profile, list(truth.segments), 2.0, list(WORKLOADS))
    assert detected.sensitivity == 1.0, detected.missed
    assert detected.false_positives <= 1, detected.false_positive_times
    assert detected.mean_detection_time_s <= 1.0 * profile.period
    assert ident.rate >= 0.95, ident.per_label


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bench_2_five_runs(seed: int) -> None:
    # Tsafack Chetsa et al. Table I: 100 % sensitivity, 4 false positives over five runs of bench_2
    profile, truth = generate_bench("bench_2", repetitions=5, seed=seed)
    detected, _, ident = scores(profile, list(truth.segments), 2.0, list(WORKLOADS))
    assert detected.sensitivity == 1.0, detected.missed
    assert detected.false_positives <= 4, detected.false_positive_times
    assert detected.mean_detection_time_s <= 1.0 * profile.period
    assert ident.rate >= 0.95, ident.per_label
    assert not ident.confusions or all("idle" in c[:2] for c in ident.confusions)


def test_real_recording_every_change_within_a_second() -> None:
    path = DATA / "real_backtoback_1s.parquet"
    truth = json.loads(path.with_name(path.name + ".truth.json").read_text())
    segments = [(s["start_s"], s["end_s"], s["label"]) for s in truth["segments"]]
    detected, located, _ = scores(read_profile(path), segments, 1.0)
    assert detected.sensitivity == 1.0, detected.missed
    assert detected.false_positives <= 3, detected.false_positive_times
    assert located.sensitivity == 1.0, located.missed
    assert np.all(np.abs(located.delays_s) <= 1.0)
