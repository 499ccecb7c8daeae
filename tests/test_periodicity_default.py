"""Periodicity on awkward inputs: exactly periodic inputs, the default metric without IPC,
quantized counters, and coverage with bridged gaps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import helpers
import naive
from phasekit.io import write_profile
from phasekit.periodicity import analyze, default_metrics
from phasekit.periodicity.analyze import padded
from phasekit.periodicity.cluster import absorb_small, mst_edges, resolution_floor, single_linkage
from phasekit.periodicity.strength import (
    choose_metric,
    counter_resolution,
    fast_length,
    moving_average,
    periodic_strength,
)
from phasekit.profile import Profile

PERIOD_S = 4.0
STEP_S = 0.2


def shape(kind: str, phase: np.ndarray) -> np.ndarray:
    """One of the test shapes at ``phase`` in [0, 1) of the cycle."""
    if kind == "square":
        return (phase < 0.5).astype(float)
    if kind == "sine":
        return 1.0 + np.sin(2 * np.pi * phase)
    if kind == "sawtooth":
        return 3.0 * phase
    if kind == "steps":  # a multi-step iteration: four levels of unequal lengths
        return np.select([phase < 0.25, phase < 0.45, phase < 0.8], [1.0, 3.0, 2.0], 0.5)
    raise ValueError(kind)


def exact_profile(kind: str, offset_s: float, periods: int = 19) -> Profile:
    """``periods`` cycles of 4 s sampled every 200 ms, computed from the sample times as a
    simulator or an exporter does (so that instances differ by rounding only)."""
    t = np.arange(0.0, periods * PERIOD_S - 1e-9, STEP_S) + offset_s
    return Profile(values=shape(kind, np.mod(t, PERIOD_S) / PERIOD_S), period=STEP_S,
                   metrics=("value",))


@pytest.mark.parametrize("offset_s", [0.0, 0.6, 1.4, 2.6, 3.3])
@pytest.mark.parametrize("kind", ["square", "sine", "sawtooth", "steps"])
def test_exactly_periodic_signals_give_one_pattern(kind: str, offset_s: float) -> None:
    result = analyze(exact_profile(kind, offset_s))
    assert len(result.patterns) == 1, [(p.period_s, p.n_instances) for p in result.patterns]
    pattern = result.patterns[0]
    assert pattern.period_s == pytest.approx(PERIOD_S, rel=0.02)
    assert pattern.coverage >= 0.95 and result.coverage >= 0.95


def test_noise_does_not_change_the_exact_answer() -> None:
    profile = exact_profile("sine", 0.6)
    noisy = profile.replace(values=profile.values + 0.05 * np.random.default_rng(0)
                            .standard_normal(profile.values.shape))
    for result in (analyze(profile), analyze(noisy)):
        assert len(result.patterns) == 1
        assert result.patterns[0].period_s == pytest.approx(PERIOD_S, rel=0.02)


def test_rounding_level_edges_are_one_cluster_but_distinct_shapes_are_two() -> None:
    """The root cause: every MST edge of exact instances is rounding (~1e-29), so the
    median-relative cut split them at random; the data's resolution floors the scale."""
    t = np.arange(0.0, 10 * PERIOD_S - 1e-9, STEP_S)
    x = np.sin(2 * np.pi * t / PERIOD_S)[:, None]
    starts, lengths = np.arange(0, 200, 20), np.full(10, 20)
    X = padded(x, starts, lengths)
    _, _, weights = mst_edges(X, lengths, band=0.1)
    assert weights.max() < 1e-20 < resolution_floor(X, lengths)
    assert np.all(single_linkage(X, lengths, band=0.1) == 0)
    square = padded(shape("square", np.mod(t, PERIOD_S) / PERIOD_S)[:, None], starts, lengths)
    both = np.concatenate([X, square])
    labels = single_linkage(both, np.full(20, 20), band=0.1)
    assert len(set(labels[:10])) == 1 and len(set(labels[10:])) == 1
    assert labels[0] != labels[10]


# --- the default metric ---------------------------------------------------------------------
def busy_idle(seconds: float = 8.0, step: float = 0.005, seed: int = 0) -> dict[str, np.ndarray]:
    """Metrics of a node running a 0.5 s busy / 0.5 s idle child, as /proc gives them at 5 ms:
    CPU time in 10 ms clock ticks of 2 cores, and the writes of other processes (bursty,
    aperiodic, with the largest coefficient of variation)."""
    rng = np.random.default_rng(seed)
    n = int(seconds / step)
    t = np.arange(n) * step
    busy = (np.mod(t, 1.0) < 0.5).astype(float)
    # CPU time: ticks of 10 ms counted when they fall in a sample, 1 busy core + noise
    ticks = np.floor((t + step) / 0.01) - np.floor(t / 0.01)
    cpu = 0.01 * ticks * busy + 0.01 * (rng.random(n) < 0.1)
    writes = np.where(rng.random(n) < 0.01, rng.lognormal(12, 1, n), 0.0)
    return {"cpu_user_s": cpu, "disk_write_bytes": writes,
            "mem_used_bytes": 5e8 + 1e6 * rng.standard_normal(n).cumsum()}


def test_the_default_metric_is_the_most_periodic_one() -> None:
    columns = busy_idle()
    profile = Profile(values=np.column_stack(list(columns.values())), period=0.005,
                      metrics=tuple(columns))
    writes = columns["disk_write_bytes"]
    cpu = columns["cpu_user_s"]
    assert writes.std() / writes.mean() > cpu.std() / cpu.mean()  # the old rule's choice
    assert default_metrics(profile) == ["cpu_user_s"]
    result = analyze(profile)
    choice = result.params["metric_choice"]
    assert result.metrics == ("cpu_user_s",) and choice["rule"] == "periodic strength"
    assert set(choice["scores"]) == set(columns)
    assert choice["scores"]["cpu_user_s"]["coverage"] > choice["scores"]["disk_write_bytes"]["coverage"]
    assert result.params["smoothing"] == {"cpu_user_s": counter_resolution(cpu)}
    assert result.patterns and result.patterns[0].period_s == pytest.approx(1.0, rel=0.03)


def test_ipc_stays_first() -> None:
    rng = np.random.default_rng(1)
    values = np.column_stack([1e9 + rng.random(500), 1e9 + rng.random(500), rng.random(500)])
    profile = Profile(values=values, period=0.1, metrics=("instructions", "cycles", "other"))
    choice = choose_metric(profile)
    assert choice.metric == "ipc" and choice.rule == "ipc"


def test_given_metrics_are_named_as_given() -> None:
    profile = exact_profile("sine", 0.0)
    result = analyze(profile, metrics=["value"])
    assert result.params["metric_choice"]["rule"] == "given"


def test_quantized_counters_are_recognized() -> None:
    cpu = busy_idle()["cpu_user_s"]
    width = counter_resolution(cpu)
    assert 2 <= width <= 64
    t = np.arange(2000) * 0.005
    assert counter_resolution((np.mod(t, 1.0) < 0.5).astype(float)) == 1  # levels, not ticks
    assert counter_resolution(np.sin(t) + 2.0) == 1  # continuous
    sparse = np.zeros(2000)
    sparse[::97] = 1.0
    assert counter_resolution(sparse) == 1  # sparse events keep their spikes


def test_moving_average_matches_a_naive_one_and_keeps_gaps() -> None:
    rng = np.random.default_rng(2)
    x = rng.random(50)
    x[[7, 20, 21]] = np.nan
    width = 5
    expected = np.full(50, np.nan)
    for i in range(50):
        if np.isfinite(x[i]):
            lo = min(max(i - width // 2, 0), 50)
            window = x[lo:lo + width]
            expected[i] = np.nanmean(window)
    np.testing.assert_allclose(moving_average(x, width), expected)


def test_coverage_counts_measured_samples_only() -> None:
    """Missed samples bridged inside instances count neither above nor below the line: 30
    whole periods over 600 samples of which 5 were missed cover 595 of 595, not 600."""
    t = np.arange(0.0, 30 * PERIOD_S - 1e-9, STEP_S)
    y = 1 + np.sin(2 * np.pi * t / PERIOD_S) + 0.05 * np.random.default_rng(3).standard_normal(t.size)
    y[[130, 251, 377, 402, 515]] = np.nan
    result = analyze(Profile(values=y[:, None], period=STEP_S, metrics=("value",)))
    assert result.n_valid == 595 and result.params["bridged_samples"] == 5
    assert [p.n_instances for p in result.patterns] == [30]
    assert result.coverage == pytest.approx(1.0) and result.patterns[0].coverage == pytest.approx(1.0)


def test_cli_names_the_chosen_metric_and_why(tmp_path: Path) -> None:
    columns = busy_idle()
    profile = Profile(values=np.column_stack(list(columns.values())), period=0.005,
                      metrics=tuple(columns))
    path = tmp_path / "busy.parquet"
    write_profile(profile, path)
    code, out, err = helpers.run("analyze", path)
    assert code == 0, err
    assert "metric chosen: cpu_user_s" in out and "the detector covers" in out
    code, out, err = helpers.run("analyze", path, "--json")
    assert code == 0, err
    assert json.loads(out)["params"]["metric_choice"]["metric"] == "cpu_user_s"


def test_small_clusters_join_their_nearest_large_one() -> None:
    """Clusters 0 (4 instances) and 1 (3) are large; 2 and 3 (one instance each) link to 1
    and, through 2, 0-wards by a longer edge; 4 and 5 (one each) link only to each other
    and stay apart."""
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 2, 3, 4, 5])
    i = np.array([0, 1, 2, 4, 5, 6, 7, 3, 9])
    j = np.array([1, 2, 3, 5, 6, 7, 8, 8, 10])
    w = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 9.0, 8.0, 20.0, 7.0])
    merged = absorb_small(labels, i, j, w, min_size=3)
    assert len(set(merged[[4, 5, 6, 7, 8]])) == 1  # 2 joins 1 (edge 9), 3 joins 1 via 2 (8 < 20)
    assert merged[0] != merged[4]
    assert merged[9] != merged[10] and not {merged[9], merged[10]} & set(merged[:9])
    assert np.array_equal(absorb_small(labels, i, j, w, min_size=1), labels)


def test_tied_metrics_are_both_analyzed_and_the_larger_coverage_wins() -> None:
    """Two metrics the detector pass cannot tell apart (the same cycle, different noise): each
    is analyzed, and the result is the analysis that covers most, its choice naming both."""
    rng = np.random.default_rng(3)
    base = exact_profile("steps", 0.0).values[:, 0]
    profile = Profile(values=np.column_stack([base + 0.01 * rng.standard_normal(base.size),
                                              base + 0.2 * rng.standard_normal(base.size)]),
                      period=STEP_S, metrics=("quiet", "noisy"))
    choice = choose_metric(profile)
    assert choice.tied == ("quiet", "noisy")
    result = analyze(profile)
    assert result.params["metric_choice"]["rule"] == "periodic strength, tie broken by the analysis"
    single = {m: analyze(profile, metrics=[m]).coverage for m in profile.metrics}
    assert result.params["metric_choice"]["tie_break"] == pytest.approx(single, abs=1e-4)
    assert result.metrics == (max(single, key=lambda m: (single[m], m == "quiet")),)
    assert result.coverage == pytest.approx(max(single.values()))
    assert choose_metric(profile.select(["quiet"])).tied == ("quiet",)


def test_fft_length_is_scipys_next_fast_len() -> None:
    sp_fft = pytest.importorskip("scipy.fft")
    for target in [*range(1, 3000), 32_768, 65_537, 10**6 + 1, 3 * 2**20 + 1]:
        assert fast_length(target) == sp_fft.next_fast_len(target, real=True), target


@pytest.mark.parametrize("seed", range(6))
def test_periodic_strength_matches_direct_autocorrelation(seed: int) -> None:
    # numpy.fft (no scipy.fft on the analysis path) against the direct sums
    rng = np.random.default_rng(seed)
    n = int(rng.integers(100, 1500))
    period = int(rng.integers(6, 60))
    x = np.sin(2 * np.pi * np.arange(n) / period) + 0.01 * np.arange(n) * seed
    x += rng.normal(0, 0.5, n)
    x[rng.random(n) < 0.03] = np.nan
    strength, lag = periodic_strength(x, min_lag=4)
    expected_strength, expected_lag = naive.periodic_strength(x, 4)
    assert lag == expected_lag
    assert strength == pytest.approx(expected_strength, abs=1e-12)
