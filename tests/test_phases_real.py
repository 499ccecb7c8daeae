"""Phase detection on real counter series: back-to-back sequences of the dcslab perf series
(read where they are, no license to copy them into the repository: skipped when absent),
scored as TSSB does, beside ruptures' Pelt on the same sequences; and the sequence generator
itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from phasekit.metrics.segmentation import score_segmentation
from phasekit.phases import phases
from phasekit.synth.backtoback import back_to_back, common_metrics, read_headed_table


def test_back_to_back_junctions_are_the_change_points() -> None:
    runs = {f"run{k}": (("a", "b", "c") if k % 2 else ("c", "b", "a"),
                        np.full((30 + 10 * k, 3), float(k))) for k in range(7)}
    for seed in range(5):
        seq = back_to_back(runs, seed=seed, max_rows=45)
        assert seq.profile.metrics == common_metrics(runs) == ("c", "b", "a")  # run0 first
        assert 4 <= len(seq.runs) <= 6 and len(set(seq.runs)) == len(seq.runs)
        values = seq.profile.values[:, 0]
        jumps = np.flatnonzero(np.diff(values)) + 1
        assert tuple(jumps) == seq.change_points


def test_headed_table_errors_name_the_line(tmp_path: Path) -> None:
    from phasekit.errors import InputError

    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n3,x\n")
    with pytest.raises(InputError, match="line 3"):
        read_headed_table(bad)


@pytest.mark.slow
def test_default_beats_pelt_on_real_back_to_back_sequences(
        external_data: Callable[[str], Path]) -> None:
    dcslab = external_data("phases/dcslab")
    rpt = pytest.importorskip("ruptures")
    runs = {str(f): read_headed_table(f) for f in sorted(dcslab.rglob("*.csv"))}
    ours, pelt = [], []
    for seed in range(10):
        seq = back_to_back(runs, seed=seed)
        n = seq.profile.n_samples
        result = phases(seq.profile)
        assert result.method == "ev" and "cycles_per_s" in result.sensors
        assert all(a.id != b.id for a, b in zip(result.phases, result.phases[1:], strict=False))
        ours.append(score_segmentation(seq.change_points,
                                       [p.start_index for p in result.phases[1:]], n, margin=5,
                                       reported=[round(p.detected_at_s / seq.profile.period)
                                                 for p in result.phases[1:]]))
        X = seq.profile.values
        Z = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1)
        found = rpt.Pelt(model="l2", min_size=2, jump=1).fit(Z).predict(
            pen=Z.shape[1] * np.log(n))[:-1]
        pelt.append(score_segmentation(seq.change_points, found, n, margin=5))
    f1, cov = np.mean([s.f1 for s in ours]), np.mean([s.covering for s in ours])
    assert f1 >= np.mean([s.f1 for s in pelt]) and f1 >= 0.7
    assert cov >= 0.8
    assert np.mean([d for s in ours for d in s.delays]) <= 2.0


def test_the_last_phase_of_real_runs_is_not_shorter_than_the_minimum(
        external_data: Callable[[str], Path]) -> None:
    # every solo run and co-run (200 ms rows), and back-to-back sequences: the last phase has
    # the detector's minimum phase length, as the detector gives every other phase (a solo
    # run used to end with a phase of the program's exit, one or two samples long)
    from phasekit.profile import Profile

    runs = {str(f): read_headed_table(f)
            for f in sorted(external_data("phases/dcslab").rglob("*.csv"))}
    profiles = [Profile(values=values, period=0.2, metrics=names)
                for names, values in runs.values() if values.shape[0] >= 20]
    profiles += [back_to_back(runs, seed=seed).profile for seed in range(5)]
    for profile in profiles:
        result = phases(profile, method="ev")
        valid = result.vectors(profile).valid
        min_length = result.params["min_length"]
        last = result.phases[-1]
        assert len(result.phases) == 1 or \
            valid[last.start_index:last.end_index].sum() >= min_length, \
            [(p.start_s, p.duration_s) for p in result.phases]
