"""The synthetic benchmarks of Tsafack Chetsa et al. (phasekit.synth.phases) and the phase
metrics (phasekit.metrics.phases): layouts, signatures, reproducibility and hand-computed
scores."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import helpers
from phasekit import InputError, UsageError
from phasekit.io import read_profile
from phasekit.metrics import (
    ChangeScores,
    evaluate_changes,
    identification_rate,
)
from phasekit.synth import (
    BENCH_METRICS,
    WORKLOADS,
    PhaseTruth,
    generate_bench,
    nominal_bench_duration,
    read_phase_truth,
    read_truth,
    truth_path,
    write_phase_truth,
)

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def bench2() -> dict[int, tuple]:
    """bench_2 three times in a row, per seed (cheap: well under a second each)."""
    return {s: generate_bench("bench_2", repetitions=3, seed=s) for s in SEEDS}


def _segment_evs(profile, truth) -> dict[str, list[np.ndarray]]:
    """Median EV (counts / cycles) of the steady middle of every segment, per label."""
    v = profile.values
    ev = v[:, 1:] / v[:, :1]
    mid = profile.times() + 0.5 * profile.period
    out: dict[str, list[np.ndarray]] = {}
    for a, b, label in truth.segments:
        m = (mid >= a + 8) & (mid < b - 4)
        out.setdefault(label, []).append(np.median(ev[m], axis=0))
    return out


# --- generators ------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["bench_1", "bench_2"])
def test_reproducible_per_seed(kind: str) -> None:
    p1, t1 = generate_bench(kind, repetitions=2, seed=7)
    p2, t2 = generate_bench(kind, repetitions=2, seed=7)
    np.testing.assert_array_equal(p1.values, p2.values)
    assert t1 == t2 and t1.segments == t2.segments
    p3, t3 = generate_bench(kind, repetitions=2, seed=8)
    assert t3.segments != t1.segments
    n = min(p1.n_samples, p3.n_samples)
    assert not np.allclose(p1.values[:n], p3.values[:n])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("repetitions", [1, 3])
def test_bench_1_layout(seed: int, repetitions: int) -> None:
    profile, truth = generate_bench("bench_1", repetitions=repetitions, seed=seed, idle_s=99)
    assert truth.labels == WORKLOADS * repetitions  # no idle: idle_s is ignored
    starts, ends = truth.starts_s, truth.ends_s
    assert starts[0] == 0.0
    np.testing.assert_array_equal(starts[1:], ends[:-1])  # back to back
    np.testing.assert_array_equal(truth.change_times_s, starts[1:])
    assert np.all((ends - starts >= 25) & (ends - starts <= 240))  # tens of s to a few min
    assert profile.metrics == BENCH_METRICS
    assert profile.units["net_tx_bytes"] == "B" and profile.units["cycles"] == ""
    assert profile.period == truth.period == 1.0
    assert profile.n_samples == truth.n_samples == math.floor(truth.duration_s)
    assert np.all(np.isfinite(profile.values)) and np.all(profile.values >= 0)
    assert np.array_equal(profile.values, np.rint(profile.values))  # counts
    assert truth.meta["repetitions"] == repetitions and truth.meta["seed"] == seed
    # the within-workload parts tile each workload
    parts = truth.meta["parts"]
    for a, b, label in truth.segments:
        mine = [p for p in parts if a - 1e-9 <= p[0] and p[1] <= b + 1e-9]
        assert {p[2] for p in mine} == {label}
        assert mine[0][0] == pytest.approx(a) and mine[-1][1] == pytest.approx(b)
        assert mine[0][3] == "startup" and mine[-1][3] == "teardown"


@pytest.mark.parametrize("idle_s", [30.0, 12.5])
def test_bench_2_idle_segments(idle_s: float) -> None:
    profile, truth = generate_bench("bench_2", repetitions=2, seed=3, idle_s=idle_s)
    labels = truth.labels
    assert labels[0::2] == WORKLOADS * 2 and set(labels[1::2]) == {"idle"}
    idle = np.array([b - a for a, b, lab in truth.segments if lab == "idle"])
    np.testing.assert_allclose(idle, idle_s, rtol=0, atol=1e-9)
    assert truth.meta["idle_s"] == idle_s
    np.testing.assert_array_equal(truth.starts_s[1:], truth.ends_s[:-1])
    assert truth.change_times_s.size == len(labels) - 1
    # idle: the node is almost halted; workloads keep it busy
    cycles = profile.column("cycles")
    sl = truth.sample_labels()
    idle_cycles = np.median(cycles[sl == "idle"])
    busy_cycles = np.median(cycles[(sl != "idle")])
    assert idle_cycles < 0.05 * busy_cycles
    bench1, _ = generate_bench("bench_1", repetitions=2, seed=3)
    assert profile.duration > bench1.duration + 10 * idle_s - 60


@pytest.mark.parametrize("seed", SEEDS)
def test_signatures_differ_between_kernels(bench2: dict[int, tuple], seed: int) -> None:
    profile, truth = bench2[seed]
    ev = {k: np.median(v, axis=0) for k, v in _segment_evs(profile, truth).items()}
    col = {m: i - 1 for i, m in enumerate(BENCH_METRICS)}
    ipc = {k: v[col["instructions"]] for k, v in ev.items()}
    assert ipc["EP"] > ipc["BT"] > ipc["MG"] > ipc["CG"]  # compute-bound to latency-bound
    assert ipc["EP"] > 1.8 and ipc["CG"] < 0.7
    miss = {k: v[col["cache_misses"]] for k, v in ev.items()}
    assert miss["EP"] < 0.05 * min(miss[k] for k in ("MG", "IS", "CG"))
    bm = {k: v[col["branch_misses"]] for k, v in ev.items() if k != "idle"}
    assert max(bm, key=bm.__getitem__) == "IS"
    net = {k: v[col["net_tx_bytes"]] for k, v in ev.items() if k != "idle"}
    assert max(net, key=net.__getitem__) == "IS" and min(net, key=net.__getitem__) == "EP"
    # every two labels differ by more than 25 % in some EV component
    labels = list(ev)
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            ratio = np.abs(np.log(ev[a][:5] / ev[b][:5]))
            assert ratio.max() > math.log(1.25), (a, b)


@pytest.mark.parametrize("seed", SEEDS)
def test_repetitions_alike_but_not_identical(bench2: dict[int, tuple], seed: int) -> None:
    profile, truth = bench2[seed]
    evs = _segment_evs(profile, truth)
    durations: dict[str, list[float]] = {}
    for a, b, label in truth.segments:
        durations.setdefault(label, []).append(b - a)
    ipc = profile.column("instructions") / profile.column("cycles")
    starts = {lab: [a for a, _, x in truth.segments if x == lab] for lab in WORKLOADS}
    for label in WORKLOADS:
        d = np.array(durations[label])
        assert d.size == 3 and np.unique(d).size == 3  # slightly different lengths
        assert d.max() / d.min() < 1.25
        e = np.array(evs[label])[:, :5]
        assert np.all(np.abs(np.log(e / np.median(e, axis=0))) < math.log(1.15)), label
        # the same part of two repetitions is not the same series
        i0, i1 = (math.ceil(s) for s in starts[label][:2])
        n = math.floor(min(d)) - 2
        assert not np.allclose(ipc[i0:i0 + n], ipc[i1:i1 + n], rtol=0.005)


@pytest.mark.parametrize("seed", SEEDS)
def test_within_phase_structure(bench2: dict[int, tuple], seed: int) -> None:
    profile, truth = bench2[seed]
    v = profile.values
    sl = truth.sample_labels()
    ipc = v[:, 1] / v[:, 0]
    # MG's V-cycles (~2.7 s) show in its per-second IPC (lag 8 s ~ 3 cycles); BT's time steps
    # (~0.8 s) average out within a sample: its IPC is steadier than MG's
    first_mg = next((a, b) for a, b, lab in truth.segments if lab == "MG")
    x = ipc[math.ceil(first_mg[0]) + 8:math.floor(first_mg[1]) - 2]
    x = x - x.mean()
    acf = np.array([np.dot(x[:-k], x[k:]) / np.dot(x, x) for k in range(1, 12)])
    assert acf[7] > 0.3 and acf[7] > acf[3]
    first_bt = next((a, b) for a, b, lab in truth.segments if lab == "BT")
    bt = ipc[math.ceil(first_bt[0]) + 8:math.floor(first_bt[1]) - 2]
    mg = ipc[math.ceil(first_mg[0]) + 8:math.floor(first_mg[1]) - 2]
    assert np.std(bt) / np.mean(bt) < np.std(mg) / np.mean(mg)
    # measurement noise: EP's flat loop is not flat
    a, b = next((a, b) for a, b, lab in truth.segments if lab == "EP")
    ep = ipc[math.ceil(a) + 8:math.floor(b) - 4]
    assert 0.005 < np.std(ep) / np.mean(ep) < 0.1
    # OS noise in idle: bursts of several times the idle cycles
    idle = v[sl == "idle", 0]
    assert idle.max() > 2.0 * np.median(idle)
    # start-up: disk reads at the start of a workload, far above its steady state
    reads = v[:, BENCH_METRICS.index("disk_read_bytes")]
    first = math.floor(truth.starts_s[0])
    assert reads[first:first + 2].max() > 1e7 > np.median(reads[sl == "MG"])


def test_sampling_period_keeps_rates() -> None:
    p1, t1 = generate_bench("bench_1", seed=4, period=1.0)
    p2, t2 = generate_bench("bench_1", seed=4, period=0.5)
    assert t1.segments == t2.segments  # layout does not depend on the period
    assert p2.n_samples == math.floor(t2.duration_s / 0.5)
    rate1 = p1.column("cycles").sum() / p1.duration
    rate2 = p2.column("cycles").sum() / p2.duration
    assert rate2 == pytest.approx(rate1, rel=0.01)


def test_moving_mean_is_scipys_uniform_filter_bit_for_bit() -> None:
    """The smoothing of sub-second periods, in NumPy so that synth needs no scipy.ndimage:
    the same bits as scipy's running sum, edges, even and odd sizes, windows longer than
    the series, zeros and negative zeros included."""
    from scipy.ndimage import uniform_filter1d

    from phasekit.synth.phases import _moving_mean

    rng = np.random.default_rng(0)
    for trial in range(300):
        n, k, size = int(rng.integers(1, 2000)), int(rng.integers(1, 10)), int(rng.integers(2, 60))
        x = np.exp(3 * rng.normal(size=(n, k))) * 10.0 ** int(rng.integers(-3, 9))
        if trial % 5 == 0:
            x[rng.random(x.shape) < 0.2] = 0.0
        if trial % 7 == 0:
            x = -x
        expected = uniform_filter1d(x, size=size, axis=0, mode="nearest")
        assert np.array_equal(_moving_mean(x, size).view(np.int64), expected.view(np.int64))
    p, _ = generate_bench("bench_1", seed=2, period=0.05)  # smoothed over 8 samples
    assert np.isfinite(p.values).all()


def test_nominal_duration() -> None:
    one = nominal_bench_duration("bench_1")
    assert 300 < one < 500
    assert nominal_bench_duration("bench_2", idle_s=30) == pytest.approx(one + 150)
    _, truth = generate_bench("bench_1", repetitions=4, seed=0)
    assert truth.duration_s == pytest.approx(4 * one, rel=0.05)


@pytest.mark.parametrize("kwargs", [
    {"kind": "bench_3"}, {"repetitions": 0}, {"repetitions": 1.5}, {"seed": -1},
    {"period": 0.0}, {"period": float("nan")}, {"period": 60.0},
    {"kind": "bench_2", "idle_s": 0.0}, {"kind": "bench_2", "idle_s": float("inf")},
])
def test_generator_rejects(kwargs: dict) -> None:
    args = {"kind": "bench_1", **kwargs}
    with pytest.raises(UsageError):
        generate_bench(args.pop("kind"), **args)


# --- the truth object ------------------------------------------------------------------
def test_sample_labels_midpoint_rule() -> None:
    truth = PhaseTruth(segments=((0.0, 2.4, "A"), (2.4, 4.6, "B"), (5.0, 6.0, "C")),
                       n_samples=7, period=1.0)
    # midpoints 0.5 1.5 2.5 3.5 4.5 5.5 6.5
    assert truth.sample_labels().tolist() == ["A", "A", "B", "B", "B", "C", ""]
    assert truth.sample_labels(4, 0.5).tolist() == ["A", "A", "A", "A"]
    np.testing.assert_array_equal(truth.change_times_s, [2.4, 5.0])
    assert truth.label_names == ("A", "B", "C") and truth.duration_s == 6.0
    empty = PhaseTruth(segments=(), n_samples=3, period=1.0)
    assert empty.sample_labels().tolist() == ["", "", ""]
    assert empty.change_times_s.size == 0


@pytest.mark.parametrize("segments", [
    ((0.0, 2.0, "A"), (1.5, 3.0, "B")),  # overlap
    ((2.0, 3.0, "A"), (0.0, 1.0, "B")),  # not in time order
    ((0.0, 0.0, "A"),),  # empty
    ((0.0, 1.0, ""),),  # no label
    ((0.0, float("nan"), "A"),),
])
def test_truth_rejects(segments: tuple) -> None:
    with pytest.raises(UsageError):
        PhaseTruth(segments=segments, n_samples=1, period=1.0)


def test_truth_round_trip(tmp_path: Path) -> None:
    _, truth = generate_bench("bench_2", repetitions=2, seed=5)
    data = json.loads(json.dumps(truth.to_dict()))
    assert data["type"] == "phase_segments" and data["version"] == 1
    assert data["change_times_s"] == truth.change_times_s.tolist()
    back = PhaseTruth.from_dict(data)
    assert back == truth and back.meta == truth.meta
    path = write_phase_truth(truth, truth_path(tmp_path / "b.parquet"))
    assert path.name == "b.parquet.truth.json"
    assert read_phase_truth(path) == truth
    with pytest.raises(InputError):  # not a periodicity truth
        read_truth(path)


@pytest.mark.parametrize("mutate", [
    lambda d: d.pop("segments"),
    lambda d: d.update(type="periodicity"),
    lambda d: d.update(version=2),
    lambda d: d["segments"]["label"].pop(),
    lambda d: d["segments"]["start_s"].__setitem__(1, "x"),
    lambda d: d["segments"]["end_s"].__setitem__(0, -1.0),
])
def test_truth_from_malformed_dict(mutate) -> None:
    _, truth = generate_bench("bench_1", seed=0)
    data = truth.to_dict()
    mutate(data)
    with pytest.raises(InputError):
        PhaseTruth.from_dict(data)


def test_read_phase_truth_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.truth.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.truth\.json"):
        read_phase_truth(bad)
    with pytest.raises(InputError, match="missing"):
        read_phase_truth(tmp_path / "missing.json")


# --- change detection scores -----------------------------------------------------------
def test_exact_matches() -> None:
    s = evaluate_changes([10.0, 50.0, 90.0], [10.0, 50.0, 90.0], tolerance_s=5.0)
    assert (s.sensitivity, s.false_positives, s.mean_detection_time_s) == (1.0, 0, 0.0)
    assert s.matches == ((10.0, 10.0), (50.0, 50.0), (90.0, 90.0)) and s.missed == ()
    assert s.precision == 1.0


def test_late_detections_inside_and_outside_tolerance() -> None:
    s = evaluate_changes([57.0, 13.0], [10.0, 50.0], tolerance_s=5.0)  # unsorted on purpose
    assert s.sensitivity == 0.5 and s.false_positives == 1
    assert s.mean_detection_time_s == pytest.approx(3.0)
    assert s.matches == ((10.0, 13.0),) and s.missed == (50.0,)
    assert s.false_positive_times == (57.0,)
    # the window is closed at the tolerance, and opens early_s before the change
    edge = evaluate_changes([15.0, 49.0], [10.0, 50.0], tolerance_s=5.0, early_s=1.0)
    assert edge.sensitivity == 1.0 and edge.delays_s.tolist() == [5.0, -1.0]
    assert edge.mean_detection_time_s == pytest.approx(2.0)
    before = evaluate_changes([48.9], [50.0], tolerance_s=5.0, early_s=1.0)
    assert before.sensitivity == 0.0 and before.false_positives == 1


def test_early_detection_needs_early_window() -> None:
    assert evaluate_changes([9.5], [10.0], tolerance_s=3.0).mean_detection_time_s == -0.5
    strict = evaluate_changes([9.5], [10.0], tolerance_s=3.0, early_s=0.0)
    assert strict.sensitivity == 0.0 and strict.false_positives == 1


def test_double_detections_count_once() -> None:
    s = evaluate_changes([11.0, 12.0, 51.0, 51.0], [10.0, 50.0], tolerance_s=5.0)
    assert s.sensitivity == 1.0 and s.false_positives == 2
    assert s.matches == ((10.0, 11.0), (50.0, 51.0))  # earliest first
    assert s.false_positive_times == (12.0, 51.0)
    assert s.mean_detection_time_s == pytest.approx(1.0)
    assert s.precision == 0.5


def test_windows_stop_at_the_next_change() -> None:
    # c=10 owns [9, 11), c=12 owns [11, 17]: 11.5 belongs to the second change only
    s = evaluate_changes([11.5], [10.0, 12.0], tolerance_s=5.0)
    assert s.matches == ((12.0, 11.5),) and s.missed == (10.0,)
    both = evaluate_changes([10.5, 11.5], [10.0, 12.0], tolerance_s=5.0)
    assert both.sensitivity == 1.0 and both.false_positives == 0
    # where c + tolerance meets the next opening, the point goes to the next change
    meet = evaluate_changes([14.0], [10.0, 15.0], tolerance_s=4.0, early_s=1.0)
    assert meet.matches == ((15.0, 14.0),)


def test_empty_inputs() -> None:
    none = evaluate_changes([], [10.0, 20.0], tolerance_s=2.0)
    assert none.sensitivity == 0.0 and none.false_positives == 0
    assert math.isnan(none.mean_detection_time_s) and none.missed == (10.0, 20.0)
    only_fp = evaluate_changes([5.0, 6.0], [], tolerance_s=2.0)
    assert math.isnan(only_fp.sensitivity) and only_fp.false_positives == 2
    d = only_fp.to_dict()
    assert d["sensitivity"] is None and d["mean_detection_time_s"] is None
    both = evaluate_changes([], [], tolerance_s=2.0)
    assert both.n_true == both.n_detected == 0 and math.isnan(both.precision)


def test_change_scores_round_trip() -> None:
    s = evaluate_changes([11.0, 30.0], [10.0, 50.0], tolerance_s=5.0)
    data = json.loads(json.dumps(s.to_dict()))
    assert ChangeScores.from_dict(data) == s
    empty = evaluate_changes([], [], tolerance_s=1.0)
    back = ChangeScores.from_dict(json.loads(json.dumps(empty.to_dict())))
    assert math.isnan(back.sensitivity) and back.matches == ()


@pytest.mark.parametrize("kwargs", [
    {"tolerance_s": -1.0}, {"tolerance_s": float("nan")}, {"tolerance_s": 1.0, "early_s": -0.1},
])
def test_evaluate_changes_rejects_parameters(kwargs: dict) -> None:
    with pytest.raises(UsageError):
        evaluate_changes([1.0], [1.0], **kwargs)


def test_evaluate_changes_rejects_nan_times() -> None:
    with pytest.raises(UsageError):
        evaluate_changes([np.nan], [1.0], tolerance_s=1.0)


def _naive_changes(detected: list[float], true: list[float], tol: float, early: float
                   ) -> tuple[list[tuple[float, float]], int]:
    """Plain-Python reference of the documented pairing."""
    det, tr = sorted(detected), sorted(true)
    used = [False] * len(det)
    pairs = []
    for k, c in enumerate(tr):
        nxt = tr[k + 1] - early if k + 1 < len(tr) else math.inf
        for i, d in enumerate(det):
            in_window = c - early <= d and (d <= c + tol if c + tol < nxt else d < nxt)
            if not used[i] and in_window:
                used[i] = True
                pairs.append((c, d))
                break
    return pairs, used.count(False)


@pytest.mark.parametrize("seed", range(20))
def test_evaluate_changes_matches_naive_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    true = np.round(np.sort(rng.uniform(0, 100, rng.integers(0, 12))), 1).tolist()
    det = np.round(rng.uniform(-5, 110, rng.integers(0, 25)), 1).tolist()
    det += [c + float(rng.choice([-0.5, 0.0, 1.0, 3.0])) for c in true[::2]]
    tol, early = float(rng.choice([0.0, 1.0, 3.0, 8.0])), float(rng.choice([0.0, 1.0]))
    s = evaluate_changes(det, true, tolerance_s=tol, early_s=early)
    pairs, fp = _naive_changes(det, true, tol, early)
    assert list(s.matches) == pairs and s.false_positives == fp
    assert s.n_matched + s.false_positives == len(det)
    assert len(s.missed) + s.n_matched == len(true)


# --- identification --------------------------------------------------------------------
ABAB = ((0.0, 10.0, "A"), (10.0, 20.0, "B"), (20.0, 30.0, "A"), (30.0, 40.0, "B"))


def test_identification_all_identified() -> None:
    s = identification_rate([1, 2, 1, 2], [0, 10, 20, 30], [10, 20, 30, 40], ABAB)
    assert (s.rate, s.identified, s.recurrences) == (1.0, 2, 2)
    assert s.confusions == () and s.dominant_ids == (1, 2, 1, 2)
    assert s.per_label == {"A": (1, 1), "B": (1, 1)}
    assert s.dominant_shares == (1.0, 1.0, 1.0, 1.0)
    # a late, split detection: A's recurrence is 6 s under id 1 and 4 s under id 5
    s = identification_rate([1, 2, 5, 1, 2], [0, 10, 20, 24, 30], [10, 20, 24, 30, 40], ABAB)
    assert s.rate == 1.0 and s.dominant_ids[2] == 1
    assert s.dominant_shares[2] == pytest.approx(0.6)


def test_identification_one_confusion() -> None:
    s = identification_rate([1, 2, 1, 1], [0, 10, 20, 30], [10, 20, 30, 40], ABAB)
    assert s.rate == 0.5 and s.per_label == {"A": (1, 1), "B": (0, 1)}
    assert s.confusions == (("A", "B", 1),)
    assert s.confused("B") == {"A"} and s.confused("A") == {"B"}


def test_identification_idle_shared_with_workload() -> None:
    truth = PhaseTruth(segments=((0, 10, "EP"), (10, 20, "idle"), (20, 30, "EP"),
                                 (30, 40, "idle")), n_samples=40, period=1.0)
    s = identification_rate(["p3", "p4", "p3", "p3"], [0, 10, 20, 30], [10, 20, 30, 40], truth)
    assert s.confusions == (("EP", "idle", "p3"),)
    assert s.per_label == {"EP": (1, 1), "idle": (0, 1)}
    only_workloads = identification_rate(["p3", "p4", "p3", "p3"], [0, 10, 20, 30],
                                         [10, 20, 30, 40], truth, labels=["EP"])
    assert only_workloads.rate == 1.0 and only_workloads.recurrences == 1
    assert only_workloads.confusions == s.confusions  # confusions look at every label
    d = json.loads(json.dumps(s.to_dict()))
    assert d["confusions"] == [{"labels": ["EP", "idle"], "id": "p3"}]


def test_identification_reference_first_or_any() -> None:
    truth = ((0, 10, "A"), (10, 20, "A"), (20, 30, "A"))
    args = ([1, 7, 7], [0, 10, 20], [10, 20, 30], truth)
    assert identification_rate(*args).rate == 0.0
    assert identification_rate(*args, reference="any").rate == 0.5


def test_identification_uncovered_and_no_recurrence() -> None:
    # no detected phase over A's recurrence: no dominant id, not identified
    s = identification_rate([1, 2], [0, 10], [10, 20], ABAB)
    assert s.dominant_ids == (1, 2, None, None) and s.rate == 0.0
    one = identification_rate([1, 2], [0, 10], [10, 20], ABAB[:2])
    assert one.recurrences == 0 and math.isnan(one.rate)
    assert one.to_dict()["rate"] is None
    nothing = identification_rate([], [], [], ABAB)
    assert nothing.dominant_ids == (None,) * 4 and nothing.rate == 0.0


def test_identification_on_generated_truth() -> None:
    _, truth = generate_bench("bench_2", repetitions=5, seed=0)
    names = list(truth.label_names)
    ids = [names.index(lab) for lab in truth.labels]
    oracle = identification_rate(ids, truth.starts_s, truth.ends_s, truth)
    assert oracle.rate == 1.0 and oracle.recurrences == 5 * 10 - 6
    assert oracle.confusions == ()
    # a detector that gives idle the id of MG
    merged = [0 if lab == "idle" else i for lab, i in zip(truth.labels, ids, strict=True)]
    s = identification_rate(merged, truth.starts_s, truth.ends_s, truth)
    assert s.rate == 1.0 and s.confusions == (("MG", "idle", 0),)


@pytest.mark.parametrize("args", [
    ([1, 2], [0.0], [1.0, 2.0]),  # lengths differ
    ([1], [2.0], [1.0]),  # ends before it starts
    ([1], [np.nan], [1.0]),
])
def test_identification_rejects(args: tuple) -> None:
    with pytest.raises(UsageError):
        identification_rate(*args, ABAB)


def test_identification_rejects_unknown_label_and_reference() -> None:
    with pytest.raises(UsageError, match="C"):
        identification_rate([1], [0], [1], ABAB, labels=["C"])
    with pytest.raises(UsageError):
        identification_rate([1], [0], [1], ABAB, reference="last")  # type: ignore[arg-type]


# --- the command line ------------------------------------------------------------------
_run = helpers.run


def test_cli_synth_bench(tmp_path: Path) -> None:
    path = tmp_path / "b2.csv"
    code, out, err = _run("synth", "bench_2", "--repetitions", "2", "--seed", "4",
                          "--idle", "20", "-o", path, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["repetitions"] == 2 and summary["changes"] == 19 and summary["idle_s"] == 20
    profile, truth = read_profile(path), read_phase_truth(truth_path(path))
    expected, expected_truth = generate_bench("bench_2", repetitions=2, seed=4, idle_s=20)
    assert truth == expected_truth
    assert profile.metrics == BENCH_METRICS and profile.period == 1.0
    np.testing.assert_allclose(profile.values, expected.values)


def test_cli_synth_bench_minutes_to_repetitions(tmp_path: Path) -> None:
    one = nominal_bench_duration("bench_1") / 60
    code, out, err = _run("synth", "bench_1", "--minutes", f"{2.2 * one}", "-o",
                          tmp_path / "b1.parquet", "--json")
    assert code == 0, err
    assert json.loads(out)["repetitions"] == 2
    code, out, err = _run("synth", "bench_1", "--minutes", "0.5", "-o",
                          tmp_path / "b0.parquet", "--json")
    assert code == 0 and json.loads(out)["repetitions"] == 1


@pytest.mark.parametrize("args", [
    ("bench_1", "--minutes", "10", "--repetitions", "2"),
    ("nemo", "--repetitions", "2"),
    ("bench_1", "--minutes", "-1"),
    ("bench_2", "--idle", "0"),
])
def test_cli_synth_bench_rejects(args: tuple[str, ...], tmp_path: Path) -> None:
    code, _, err = _run("synth", *args, "-o", tmp_path / "x.csv")
    assert code == 2 and err.startswith("phasekit: error:") and err.count("\n") == 1
    assert not list(tmp_path.iterdir())
