"""Phase detection (Tsafack Chetsa et al.): execution vectors, Algorithm 1 against hand-computed traces,
streaming == offline, the robust method on step signals, representation, identification."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phasekit.errors import InputError, UsageError
from phasekit.phases import (
    LiteralDetector,
    RobustDetector,
    detect,
    execution_vectors,
    identify,
    make_detector,
    phases,
    summarize,
)
from phasekit.phases.identify import scaled_features
from phasekit.phases.vectors import LOAD_SENSOR, StreamingVectors, default_sensors, smooth
from phasekit.profile import Profile


def literal_reference(X: np.ndarray, threshold: float) -> list[int]:
    """Algorithm 1 of Tsafack Chetsa et al. transcribed line by line (plain Python)."""
    max_distance, phase_start, starts = 0.0, False, [0]
    for t in range(1, len(X)):
        dist = sum(abs(a - b) for a, b in zip(X[t], X[t - 1], strict=True))
        if max_distance <= dist:
            max_distance = dist
        if dist <= max_distance * threshold and phase_start:
            starts.append(t)
            phase_start = False
        elif dist > max_distance * threshold and not phase_start:
            phase_start = True
            max_distance = 0.0
    return starts


def test_algorithm_1_hand_computed_trace() -> None:
    # 1-D vectors; distances 1, 0.1, 0.1, 5, 1, 0.1, 0.1 (worked out by hand):
    # t=1 d=1: max=1, 1 > 0.15: change starts, max=0
    # t=2 d=.1: max=.1, .1 > .015, change under way: nothing
    # t=3 d=.1: max=.1, .1 <= .015? no: nothing
    # t=4 d=5: max=5, under way, 5 > .75: nothing
    # t=5 d=1: max=5, 1 > .75: nothing;  t=6 d=.1 <= .75: new phase at 6
    # t=7 d=.1: max=5, .1 <= .75, no change under way: nothing
    X = np.cumsum([0, 1, 0.1, 0.1, 5, 1, 0.1, 0.1])[:, None]
    found = detect(X, method="ev-literal", threshold=0.15)
    assert list(found.starts) == [0, 6] == literal_reference(X, 0.15)
    np.testing.assert_allclose(found.score[1:], [1, 0.1, 0.1, 5, 1, 0.1, 0.1])
    assert found.limit[6] == pytest.approx(0.75)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=2, max_size=60),
       st.floats(0.05, 0.5))
def test_algorithm_1_matches_its_transcription(values: list[float], threshold: float) -> None:
    X = np.array(values)[:, None] * np.array([1.0, 0.5])
    assert list(detect(X, method="ev-literal", threshold=threshold).starts) == \
        literal_reference(X, threshold)


def _stream(detector: LiteralDetector | RobustDetector, X: np.ndarray) -> list[tuple[int, int]]:
    return [(c.start, c.detected_at) for x in X if (c := detector.update(x)) is not None]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.sampled_from(["ev", "ev-literal"]),
       st.integers(1, 3))
def test_streaming_and_offline_give_identical_phases(seed: int, n_changes: int, method: str,
                                                     window: int) -> None:
    rng = np.random.default_rng(seed)
    levels = rng.uniform(0.1, 10, (n_changes + 1, 4))
    lengths = rng.integers(3, 40, n_changes + 1)
    X = np.vstack([lv * rng.lognormal(0, 0.1, (n, 4)) for lv, n in zip(levels, lengths,
                                                                       strict=True)])
    X[rng.random(len(X)) < 0.05] = np.nan  # gaps
    metrics = ("a", "b", "c", "d")
    profile = Profile(values=X, period=1.0, metrics=metrics)
    offline_vectors = execution_vectors(profile, sensors=metrics, smooth_window=window).values
    streaming = StreamingVectors(metrics, metrics, 1.0, window)
    online_vectors = np.array([streaming.push(row) for row in X])
    np.testing.assert_array_equal(offline_vectors, online_vectors)
    offline = detect(offline_vectors, method=method)
    detector = LiteralDetector(4) if method == "ev-literal" else RobustDetector(4)
    online = _stream(detector, online_vectors)
    assert online == list(zip(offline.starts[1:].tolist(), offline.detected_at[1:].tolist(),
                              strict=True))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 3))
def test_streaming_and_offline_agree_with_the_load_sensor(seed: int, n_changes: int,
                                                          window: int) -> None:
    rng = np.random.default_rng(seed)
    n = rng.integers(3, 40, n_changes + 1)
    cycles = np.concatenate([np.full(k, c) for k, c in zip(n, rng.uniform(1e8, 4e10, n.size),
                                                             strict=True)])
    cycles = cycles * rng.lognormal(0, 0.05, cycles.size)
    mixes = np.vstack([np.asarray(m) * rng.lognormal(0, 0.1, (k, 3))
                       for k, m in zip(n, rng.uniform(0.01, 2, (n.size, 3)), strict=True)])
    X = np.column_stack([cycles, mixes * cycles[:, None]])
    X[rng.random(len(X)) < 0.05] = np.nan
    metrics = ("cycles", "instructions", "cache_misses", "branches")
    sensors = default_sensors(metrics, load=True)
    assert sensors[-1] == LOAD_SENSOR
    profile = Profile(values=X, period=0.5, metrics=metrics)
    offline_vectors = execution_vectors(profile, sensors=sensors, smooth_window=window).values
    streaming = StreamingVectors(metrics, sensors, 0.5, window)
    online_vectors = np.array([streaming.push(row) for row in X])
    np.testing.assert_array_equal(offline_vectors, online_vectors)
    offline = detect(offline_vectors, method="ev", load_column=3, period=0.5)
    online = _stream(make_detector("ev", 4, sensors=sensors, period=0.5), online_vectors)
    assert online == list(zip(offline.starts[1:].tolist(), offline.detected_at[1:].tolist(),
                              strict=True))
    result = phases(profile, smooth=window, sensors=sensors)
    # the result merges consecutive phases identified as one (never two in a row) and drops
    # a change of the last min_length - 1 vectors (a last phase shorter than the minimum)
    kept = [p.start_index for p in result.phases]
    assert set(kept) <= set(offline.starts.tolist())
    assert len(offline.starts) - len(kept) == (result.params["merged_changes"]
                                               + result.params["unsettled_changes"])
    assert all(a.id != b.id for a, b in itertools.pairwise(result.phases))


def step_signal(seed: int, lengths: tuple[int, ...], levels: list[list[float]],
                noise: float = 0.1, spikes: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.vstack([np.asarray(lv) * rng.lognormal(0, noise, (n, len(lv)))
                   for lv, n in zip(levels, lengths, strict=True)])
    for k in rng.choice(len(X), spikes, replace=False):
        X[k] *= 5  # one-sample bursts inside phases
    return X


def test_the_robust_method_finds_steps_and_ignores_spikes() -> None:
    X = step_signal(0, (60, 60, 60, 60), [[1, 0.01, 5], [3, 0.05, 5], [1, 0.01, 5],
                                          [1, 0.03, 50]], noise=0.15, spikes=6)
    found = detect(X, method="ev")
    assert list(found.starts) == [0, 60, 120, 180]
    assert np.all(found.detected_at[1:] - found.starts[1:] <= 1)  # confirmation: 0 or 1 vector
    literal = detect(X, method="ev-literal")
    assert len(literal.starts) != 4  # the literal algorithm is fooled by noise and spikes


def test_a_transient_does_not_hide_the_next_change() -> None:
    # a burst of two vectors is confirmed as a change; the vectors after it are back in the
    # phase before it, so the detector resumes that phase (mature) and sees the real change
    # 6 vectors after the burst, which a young phase (min_length 8) would take in
    rng = np.random.default_rng(0)
    idle, burst, work = [1, 0.01, 5], [1, 0.5, 5], [3, 0.05, 5]
    X = np.vstack([np.asarray(level) * rng.lognormal(0, 0.05, (k, 3))
                   for level, k in ((idle, 40), (burst, 2), (idle, 4), (work, 40))])
    found = detect(X, method="ev")
    assert list(found.starts) == [0, 40, 46]
    assert list(found.detected_at) == [0, 41, 47]


def _cycles_profile(seed: int, parts: list[tuple[float, list[float], int]]) -> Profile:
    rng = np.random.default_rng(seed)
    blocks = []
    for cycles, mix, k in parts:
        c = cycles * rng.lognormal(0, 0.02, (k, 1))
        blocks.append(np.hstack([c, np.asarray(mix) * rng.lognormal(0, 0.05, (k, 3)) * c]))
    return Profile(values=np.vstack(blocks), period=1.0,
                   metrics=("cycles", "instructions", "cache_misses", "branches"))


def test_the_load_tells_an_idle_node_from_a_busy_step_with_its_instruction_mix() -> None:
    # idle (1 % of the cycles), then a workload: start-up, a set-up step at full load with
    # the idle node's mix per cycle, its main loop. Without the load the set-up step looks
    # like a return to idle (a transient) and the workload's phase starts again at its loop
    idle, startup, main = [0.6, 0.012, 0.14], [0.9, 0.05, 0.13], [1.8, 0.003, 0.04]
    profile = _cycles_profile(1, [(4e8, idle, 40), (2e10, startup, 2), (4e10, idle, 4),
                                  (4e10, main, 40)])
    result = phases(profile)
    assert result.sensors == ("instructions", "cache_misses", "branches", LOAD_SENSOR)
    assert [p.start_s for p in result.phases] == [0.0, 40.0]
    assert result.phases[0].representative[LOAD_SENSOR] == pytest.approx(4e8, rel=0.05)
    per_cycle = phases(profile, sensors=["instructions", "cache_misses", "branches"])
    # per cycle only, the set-up step is the idle mix again: the phase that starts at 40
    # returns to the idle phase and is merged into it; the workload starts late, at its loop
    assert [p.start_s for p in per_cycle.phases] == [0.0, 46.0]
    assert per_cycle.params["merged_changes"] == 1
    assert LOAD_SENSOR not in phases(profile, method="ev-literal").sensors  # Algorithm 1's EVs


def test_constant_single_and_gappy_inputs_are_one_phase() -> None:
    for method in ("ev", "ev-literal"):
        assert list(detect(np.ones((50, 3)), method=method).starts) == [0]
        assert list(detect(np.ones((1, 3)), method=method).starts) == [0]
        assert list(detect(np.full((5, 2), np.nan), method=method).starts) == [0]
    with pytest.raises(UsageError, match="method"):
        detect(np.ones((3, 2)), method="nope")
    with pytest.raises(UsageError, match="threshold"):
        detect(np.ones((3, 2)), method="ev", threshold=-1)


def test_execution_vectors_normalize_by_cycles_or_interval() -> None:
    values = np.array([[100.0, 200.0, 10.0, 4.0], [300.0, 600.0, 30.0, np.nan]])
    with_cycles = Profile(values=values, period=0.5,
                          metrics=("cycles", "instructions", "cache_misses", "net_tx_bytes"))
    ev = execution_vectors(with_cycles)
    assert ev.sensors == ("instructions", "cache_misses", "net_tx_bytes")
    assert ev.normalization == "cycles"
    np.testing.assert_allclose(ev.values[0], [2.0, 0.1, 0.04])
    np.testing.assert_array_equal(ev.values[1], [2.0, 0.1, np.nan])  # a missing value stays NaN
    no_cycles = Profile(values=values[:, 1:3], period=0.5,
                        metrics=("instructions", "cache_misses"))
    ev = execution_vectors(no_cycles)
    assert ev.normalization == "interval"
    np.testing.assert_allclose(ev.values[0], [400.0, 20.0])
    ev = execution_vectors(with_cycles, sensors=["instructions", LOAD_SENSOR])
    np.testing.assert_allclose(ev.values, [[2.0, 200.0], [2.0, 600.0]])  # cycles per second
    with pytest.raises(UsageError, match="derived from a cycles metric"):
        execution_vectors(no_cycles, sensors=[LOAD_SENSOR])
    assert default_sensors(with_cycles.metrics, load=True)[-1] == LOAD_SENSOR
    assert LOAD_SENSOR not in default_sensors(with_cycles.metrics)
    assert LOAD_SENSOR not in default_sensors(no_cycles.metrics, load=True)
    vm = Profile(values=np.ones((3, 3)), period=1.0,
                 metrics=("cpu_user_s", "page_faults", "disk_write_bytes"))
    assert execution_vectors(vm).sensors == ("disk_write_bytes", "cpu_user_s", "page_faults")
    with pytest.raises(InputError, match="none of the execution-vector sensors"):
        execution_vectors(Profile(values=np.ones((3, 1)), period=1.0, metrics=("x",)))
    with pytest.raises(UsageError, match="no metric"):
        execution_vectors(vm, sensors=["instructions"])


def test_smoothing_is_a_trailing_unweighted_average() -> None:
    X = np.arange(12.0).reshape(6, 2)
    X[3] = np.nan
    out = smooth(X, 3)
    expected = []
    for t in range(6):
        if t == 3:
            expected.append([np.nan, np.nan])
            continue
        rows = [X[k] for k in range(max(0, t - 2), t + 1) if k != 3]
        expected.append(np.mean(rows, axis=0))
    np.testing.assert_allclose(out, np.array(expected))


def test_representation_and_identification() -> None:
    X = np.array([[1.0, 1], [1.2, 1], [0.8, 1], [5, 5], [5.5, 5], [1.1, 1], [0.9, 1]])
    summaries = summarize(X, np.array([0, 3, 5]))
    np.testing.assert_allclose(summaries[0].representative, [1.0, 1.0])
    np.testing.assert_allclose(summaries[0].reference, [1.0, 1.0])  # closest to the mean
    assert summaries[1].reference_index in (3, 4)
    references = np.array([s.reference for s in summaries])
    literal_ids = identify(references, method="ev-literal", threshold=0.15,
                           max_consecutive=9.0)
    assert list(literal_ids) == [1, 2, 1]
    starts = np.array([0, 3, 5])
    summaries = summarize(X, starts, space=scaled_features(X))
    references = np.array([s.reference for s in summaries])
    ids = identify(references, method="ev", threshold=3.0, vectors=X, starts=starts)
    assert list(ids) == [1, 2, 1]
    with pytest.raises(ValueError, match="starts"):
        identify(references, method="ev", threshold=3.0)


def test_identification_of_a_phase_that_alternates_between_two_steps() -> None:
    # a workload whose samples alternate between two steps, a steady one, the first again:
    # same id whichever step each occurrence's reference vector lies in (the alternating
    # phase's spread covers both steps), and the steady phase apart
    rng = np.random.default_rng(3)
    steps = np.array([[1.0, 0.02, 0.3], [1.6, 0.01, 0.1]])
    alternating = [steps[np.arange(k) % 2] * rng.lognormal(0, 0.03, (k, 3)) for k in (41, 40)]
    steady = np.array([3.0, 0.1, 0.02]) * rng.lognormal(0, 0.03, (150, 3))
    X = np.vstack([alternating[0], steady, alternating[1]])
    starts = np.array([0, 41, 191])
    summaries = summarize(X, starts, space=scaled_features(X))
    references = np.array([s.reference for s in summaries])
    assert list(identify(references, method="ev", threshold=3.0, vectors=X,
                         starts=starts)) == [1, 2, 1]
    in_either_step = np.array([X[0], X[100], X[192]])  # step 0, steady, step 1
    assert list(identify(in_either_step, method="ev", threshold=3.0, vectors=X,
                         starts=starts)) == [1, 2, 1]


def test_phases_end_to_end_and_result_round_trip() -> None:
    X = step_signal(1, (40, 40, 40), [[2, 0.01, 0.1], [0.5, 0.05, 0.1], [2, 0.01, 0.1]],
                    noise=0.05)
    cycles = np.full((len(X), 1), 1e9)
    profile = Profile(values=np.hstack([cycles, X * 1e9]), period=1.0,
                      metrics=("cycles", "instructions", "cache_misses", "branches"))
    result = phases(profile)
    assert [p.start_s for p in result.phases] == [0.0, 40.0, 80.0]
    assert [p.id for p in result.phases] == [1, 2, 1]
    assert result.phases[-1].end_s == profile.duration
    assert result.phases[1].representative["instructions"] == pytest.approx(0.5, rel=0.05)
    data = result.to_dict(series=True)
    assert math.isclose(data["phases"][1]["start_s"], 40.0)
    again = type(result).from_dict(data)
    assert [p.id for p in again.phases] == [1, 2, 1]
    assert again.score.shape == result.score.shape
    flat = np.ones((30, 2))
    flat[:, 0] += np.arange(30) % 2 * 1e-3
    one = phases(Profile(values=flat, period=1.0, metrics=("instructions", "branches")),
                 method="ev")
    assert len(one.phases) == 1 and "one phase" in one.explanation


# --- command line ------------------------------------------------------------------------------
def _profile_file(tmp_path, name: str = "steps.csv"):
    from phasekit.io import write_profile

    X = step_signal(2, (30, 30, 30), [[2, 0.01, 0.1], [0.5, 0.05, 0.1], [2, 0.01, 0.1]],
                    noise=0.05)
    profile = Profile(values=np.hstack([np.full((90, 1), 1e9), X * 1e9]), period=1.0,
                      metrics=("cycles", "instructions", "cache_misses", "branches"))
    path = tmp_path / name
    write_profile(profile, path)
    return path


@pytest.mark.slow
def test_cli_phases_json_table_and_figure(tmp_path) -> None:
    import json
    import subprocess
    import sys

    from matplotlib.image import imread

    path = _profile_file(tmp_path)
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "phases", str(path), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(p["start_s"], p["id"]) for p in data["phases"]] == [(0, 1), (30, 2), (60, 1)]
    figure = tmp_path / "phases.png"
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "phases", str(path),
                           "--method", "ev-literal", "--smooth", "3", "--plot", str(figure)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Phases of steps.csv" in done.stdout and "ev-literal" in done.stdout
    assert float(imread(figure).std()) > 0
    bad = subprocess.run([sys.executable, "-m", "phasekit.cli", "phases", str(path),
                          "--sensor", "nope"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "nope" in bad.stderr


@pytest.mark.slow
def test_cli_watch_replays_a_file_and_reads_csv_lines_from_stdin(tmp_path) -> None:
    import json
    import subprocess
    import sys

    path = _profile_file(tmp_path)
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "watch", str(path), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    changes = [json.loads(line) for line in lines[:2]]
    assert [c["start_s"] for c in changes] == [30.0, 60.0]
    # latency = detected_at - start: 0 (confirmed by its first vector) or 1 (by the next)
    assert all(c["latency_s"] == c["detected_at_s"] - c["start_s"] for c in changes)
    assert all(c["latency_s"] in (0.0, 1.0) for c in changes)
    stdin = path.read_text()
    stdin = "\n".join(line for line in stdin.splitlines() if not line.startswith("#"))
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "watch", "-"], input=stdin,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "phase 2 starts at 30 s" in done.stdout and "3 phases" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "phasekit.cli", "watch", "-"],
                         input="t,instructions\n0,1\nx,2\n", capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 3 and "line 3" in bad.stderr and bad.stderr.count("\n") == 1


@pytest.mark.slow
def test_cli_watch_follows_a_recording_in_progress(tmp_path) -> None:
    """The changes found while the recording runs are where the command switched, by its
    own clock (not at times that count its interpreter's start)."""
    import datetime
    import json
    import subprocess
    import sys

    from phasekit.io import read_profile

    output = tmp_path / "live.parquet"
    switched = tmp_path / "switched.json"
    script = ("import json, time\nswitches = []\nfor busy in (False, True, False):\n"
              "    switches.append(time.time())\n    end = time.time() + 2.5\n"
              "    while time.time() < end:\n        None if busy else time.sleep(0.01)\n"
              f"open({str(switched)!r}, 'w').write(json.dumps(switches[1:]))\n")
    recorder = subprocess.Popen(
        [sys.executable, "-m", "phasekit.cli", "record", "--sources", "perf-sw", "--scope",
         "process", "--interval", "50ms", "-o", str(output), "--", sys.executable, "-c",
         script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        done = subprocess.run([sys.executable, "-m", "phasekit.cli", "watch", str(output),
                               "--json", "--sensor", "task_clock"], capture_output=True,
                              text=True, timeout=120)
    finally:
        recorder.wait(timeout=60)
    assert done.returncode == 0, done.stderr
    reports = [json.loads(line) for line in done.stdout.strip().splitlines()[:-1]
               if line.startswith("{\"phase\"")]
    starts = [r["start_s"] for r in reports]
    began = datetime.datetime.fromisoformat(
        read_profile(output).meta["recording"]["start_utc"]).timestamp()
    switches = [t - began for t in json.loads(switched.read_text())]  # busy, then idle
    found = [min(starts, key=lambda s: abs(s - switch)) for switch in switches]
    # a change starts at the 50 ms sample that holds its switch (or the next); the
    # recording's time 0, its first reading, comes a little after start_utc (0.01-0.3 s
    # measured, more under load), so the switches read late by that much
    for switch, start in zip(switches, found, strict=True):
        assert -0.1 <= switch - start <= 0.6, (switches, starts)
    # the busy phase's length, free of that offset: within three samples
    assert abs((found[1] - found[0]) - (switches[1] - switches[0])) <= 0.15, (switches, starts)
    assert all("wall_latency_s" in r for r in reports)


def test_help_states_the_ev_threshold_the_detector_uses() -> None:
    from typer.testing import CliRunner

    from phasekit.cli import app
    from phasekit.phases.detect import ROBUST_THRESHOLD

    text = " ".join(CliRunner().invoke(app, ["phases", "--help"], terminal_width=200).output.split())
    assert f"(default {ROBUST_THRESHOLD:g})" in text


@pytest.mark.parametrize("values", [np.full((50, 2), np.nan), np.ones((50, 2))])
def test_all_nan_or_constant_profile_is_an_input_error(values: np.ndarray) -> None:
    profile = Profile(values=values, period=1.0, metrics=("instructions", "cycles"))
    with pytest.raises(InputError, match="constant or empty"):
        phases(profile)


def test_ev_literal_identifies_with_its_own_threshold() -> None:
    # three distinct steps: Tsafack Chetsa et al.'s limit (15 % of the largest consecutive
    # distance) tells them apart
    levels = [[2.0, 0.01, 0.1], [0.5, 0.05, 0.3], [1.0, 0.2, 0.02]]
    X = np.vstack([np.tile(level, (20, 1)) for level in levels]) * 1e9
    profile = Profile(values=np.hstack([np.full((60, 1), 1e9), X]), period=1.0,
                      metrics=("cycles", "instructions", "cache_misses", "branches"))
    result = phases(profile, method="ev-literal")
    assert len({p.id for p in result.phases if p.start_index >= 40}) == 1
    first_of = {p.start_index // 20: p.id for p in reversed(result.phases)}
    assert len(set(first_of.values())) == 3, [(p.start_index, p.id) for p in result.phases]
