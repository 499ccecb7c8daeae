"""Phase division (Silva 2024, ch. 5): integrators, exact DP, genetic algorithm, synthetic truth,
inputs and the ``phasekit energy phases`` command."""

from __future__ import annotations

import bisect
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from helpers import run as run_cli
from phasekit.energy.phasediv import (
    PhaseDivision,
    PowerProfiles,
    cumulative_energy,
    divide_phases,
    division_energy,
    genetic_division,
    integrate,
    optimal_division,
    power_profiles_from_dict,
    segment_costs,
)
from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io.pascal import from_pascal
from phasekit.synth.power import generate_power_profiles


# --- naive references ----------------------------------------------------------------------------
def zoh_naive(time: list[float], power: list[float], start_time: float, elapsed: float,
              start: float, stop: float) -> float:
    """The thesis's integrator (ch. 5.5) line by line, indices clamped to the last sample."""
    t1 = start_time + elapsed * start
    t2 = start_time + elapsed * stop
    last = len(time) - 1
    v1 = min(bisect.bisect_left(time, t1), last)
    v2 = min(bisect.bisect_left(time, t2, lo=v1), last)
    if v1 == v2:
        return (t2 - t1) * power[v1]
    en = (time[v1 + 1] - t1) * power[v1] + (t2 - time[v2]) * power[v2]
    for i in range(v1 + 1, v2):
        en += (time[i + 1] - time[i]) * power[i]
    return en


def phase_optimization_naive(profiles: PowerProfiles, phase: list[float]) -> float:
    """The thesis's multi-phase energy (ch. 5.6) with the naive integrator."""
    total = 0.0
    for i in range(len(phase) - 1):
        best = float("inf")
        for c in range(profiles.n_configs):
            t, p = profiles.series(c)
            best = min(best, zoh_naive(list(t), list(p), profiles.start[c],
                                       profiles.elapsed[c], phase[i], phase[i + 1]))
        total += best
    return total


def random_profiles(n_configs: int, seed: int, *, n_min: int = 3, n_max: int = 30
                    ) -> PowerProfiles:
    rng = np.random.default_rng(seed)
    times, power, starts, elapsed = [], [], [], []
    for _ in range(n_configs):
        n = int(rng.integers(n_min, n_max + 1))
        t0 = float(rng.uniform(0, 1e3))
        span = float(rng.uniform(5, 50))
        t = np.sort(t0 + rng.uniform(-0.5, span + 0.5, n))
        times.append(t)
        power.append(rng.uniform(50, 300, n))
        starts.append(t0)
        elapsed.append(span)
    return PowerProfiles.from_series([f"c{i}" for i in range(n_configs)], starts, elapsed,
                                     times, power)


def one(times: list[float], power: list[float], start: float = 0.0,
        elapsed: float | None = None) -> PowerProfiles:
    span = elapsed if elapsed is not None else times[-1] - start
    return PowerProfiles.from_series(["only"], [start], [span], [times], [power])


# --- integrators -------------------------------------------------------------------------------
def test_zoh_hand_computed_example() -> None:
    # samples at 0, 1, 2, 3 s; the run lasts 3 s; phase [0.5 s, 2.5 s]:
    # v1 = lower_bound(0.5) = 1, v2 = lower_bound(2.5) = 3
    # (T[2] - 0.5) P[1] + (2.5 - T[3]) P[3] + (T[3] - T[2]) P[2] = 1.5*50 - 0.5*40 + 20 = 75
    prof = one([0.0, 1.0, 2.0, 3.0], [10.0, 50.0, 20.0, 40.0])
    assert integrate(prof, 0, 0.5 / 3, 2.5 / 3) == pytest.approx(75.0)
    assert zoh_naive([0, 1, 2, 3], [10, 50, 20, 40], 0, 3, 0.5 / 3, 2.5 / 3) == pytest.approx(75)
    # the same phase with a forward hold would be 65, with the trapezoid 67.5
    assert integrate(prof, 0, 0.5 / 3, 2.5 / 3, integrator="trapezoid") == pytest.approx(67.5)
    # inside one interval (v1 == v2 = 2): (t2 - t1) P[2]
    assert integrate(prof, 0, 1.2 / 3, 1.7 / 3) == pytest.approx(0.5 * 20)
    # whole run: forward hold over the samples
    assert integrate(prof, 0, 0.0, 1.0) == pytest.approx(10 + 50 + 20)
    # past the last sample the last reading is held (clamped index)
    prof2 = one([0.0, 1.0, 2.0, 3.0], [10.0, 50.0, 20.0, 40.0], elapsed=4.0)
    assert integrate(prof2, 0, 2.5 / 4, 1.0) == pytest.approx(zoh_naive(
        [0, 1, 2, 3], [10, 50, 20, 40], 0, 4, 2.5 / 4, 1.0))
    assert integrate(prof2, 0, 3.2 / 4, 3.9 / 4) == pytest.approx(0.7 * 40)


@pytest.mark.parametrize("seed", range(5))
def test_zoh_matches_naive_transcription(seed: int) -> None:
    prof = random_profiles(4, seed)
    rng = np.random.default_rng(100 + seed)
    pairs = np.sort(rng.uniform(-0.05, 1.05, (200, 2)), axis=1)
    pairs[:20, 1] = pairs[:20, 0]  # empty phases
    for c in range(prof.n_configs):
        t, p = prof.series(c)
        cum = cumulative_energy(prof, pairs.ravel())[:, c].reshape(-1, 2)
        fast = cum[:, 1] - cum[:, 0]
        naive = [zoh_naive(list(t), list(p), prof.start[c], prof.elapsed[c], a, b)
                 for a, b in pairs]
        np.testing.assert_allclose(fast, naive, rtol=1e-9, atol=1e-7)


def test_zoh_is_additive_but_can_be_negative() -> None:
    prof = random_profiles(3, 7)
    x = np.sort(np.random.default_rng(1).uniform(0, 1, 50))
    cum = cumulative_energy(prof, x)
    for c in range(3):
        t, p = prof.series(c)
        whole = zoh_naive(list(t), list(p), prof.start[c], prof.elapsed[c], x[0], x[-1])
        parts = sum(zoh_naive(list(t), list(p), prof.start[c], prof.elapsed[c], a, b)
                    for a, b in itertools.pairwise(x))
        assert parts == pytest.approx(whole, rel=1e-9)
        assert cum[-1, c] - cum[0, c] == pytest.approx(whole, rel=1e-9)
    # the artefact: a short phase straddling a sample while power rises (module docstring)
    step = one([0.0, 1.0, 2.0], [100.0, 100.0, 300.0])
    assert integrate(step, 0, 0.95 / 2, 1.05 / 2) < 0
    assert integrate(step, 0, 0.95 / 2, 1.05 / 2, integrator="trapezoid") > 0


def test_trapezoid_exact_on_piecewise_linear_power() -> None:
    knots = np.array([0.0, 0.7, 2.0, 3.5, 5.0, 6.1, 8.0])
    values = np.array([120.0, 180.0, 150.0, 260.0, 90.0, 110.0, 200.0])
    prof = one(list(knots), list(values), start=0.0, elapsed=8.0)

    def exact(t1: float, t2: float) -> float:
        pts = np.concatenate([[t1], knots[(knots > t1) & (knots < t2)], [t2]])
        vals = np.interp(pts, knots, values)
        return float(np.sum(np.diff(pts) * (vals[1:] + vals[:-1]) / 2))

    rng = np.random.default_rng(3)
    for a, b in np.sort(rng.uniform(0, 1, (100, 2)), axis=1):
        got = integrate(prof, 0, a, b, integrator="trapezoid")
        assert got == pytest.approx(exact(8 * a, 8 * b), rel=1e-12, abs=1e-9)


def test_unknown_integrator_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        integrate(random_profiles(1, 0), 0, 0, 1, integrator="simpson")


# --- dynamic programming ---------------------------------------------------------------------
@pytest.mark.parametrize("integrator", ["zoh", "trapezoid"])
@pytest.mark.parametrize("seed", range(3))
def test_dp_equals_brute_force_on_small_grids(integrator: str, seed: int) -> None:
    prof = random_profiles(5, seed, n_min=5, n_max=25)
    grid, max_k = 9, 4
    cum = cumulative_energy(prof, np.arange(grid + 1) / grid, integrator=integrator)
    energies, divisions = optimal_division(cum, max_k)
    for k in range(1, max_k + 1):
        best = min(division_energy(prof, [0.0, *(np.array(inner) / grid), 1.0],
                                   integrator=integrator)[0]
                   for inner in itertools.combinations(range(1, grid), k - 1))
        assert energies[k - 1] == pytest.approx(best, rel=1e-10)
        idx = divisions[k - 1]
        assert idx[0] == 0 and idx[-1] == grid and np.all(np.diff(idx) >= 1)
        assert division_energy(prof, idx / grid, integrator=integrator)[0] == pytest.approx(
            energies[k - 1], rel=1e-10)
        if integrator == "zoh":  # the thesis's objective, naive, at the DP's breakpoints
            assert phase_optimization_naive(prof, list(idx / grid)) == pytest.approx(
                energies[k - 1], rel=1e-9)


def test_segment_table_matches_pairwise_minimum() -> None:
    prof = random_profiles(6, 4)
    cum = cumulative_energy(prof, np.linspace(0, 1, 12))
    S = segment_costs(cum)
    for i, j in itertools.combinations(range(12), 2):
        assert S[i, j] == pytest.approx(np.min(cum[j] - cum[i]), rel=1e-12)
    assert np.all(np.isinf(np.tril(S)[np.tril_indices(12)]))


def test_energy_against_phases_is_non_increasing_without_switch_cost() -> None:
    prof, _ = generate_power_profiles(cores=[1, 4, 16, 32], freqs_ghz=[1.2, 1.8, 2.4],
                                      seed=2)
    for integrator in ("zoh", "trapezoid"):
        res = divide_phases(prof, max_phases=12, grid=200, integrator=integrator)
        e = np.asarray(res.energy_dp)
        assert np.all(np.diff(e) <= 1e-9 * e[0])
        assert e[0] == pytest.approx(res.single_energy_j)
        assert res.savings >= 0


def test_switch_cost_makes_fewer_phases_optimal() -> None:
    prof, truth = generate_power_profiles(cores=[1, 4, 16, 32], freqs_ghz=[1.2, 1.8, 2.4],
                                          seed=2, noise=0.0)
    free = divide_phases(prof, max_phases=10, grid=100, integrator="trapezoid")
    assert free.best_k >= truth.n_phases
    gain = free.single_energy_j - free.energy_dp[truth.n_phases - 1]
    assert gain > 0
    costly = divide_phases(prof, max_phases=10, grid=100, integrator="trapezoid",
                           switch_cost_j=0.2 * gain / (truth.n_phases - 1), switch_cost_s=2.0)
    assert costly.best_k < free.best_k
    raw = np.asarray(free.energy_dp)
    np.testing.assert_allclose(costly.energy_dp, raw + np.arange(10) * costly.switch_cost_j)
    assert costly.time_s == pytest.approx(sum(costly.best.times_s) + 2.0 * (costly.best_k - 1))
    prohibitive = divide_phases(prof, max_phases=10, grid=100, switch_cost_j=10 * gain)
    assert prohibitive.best_k == 1 and prohibitive.savings == 0
    assert "single configuration" in prohibitive.explanation


# --- genetic algorithm -------------------------------------------------------------------------
@pytest.mark.slow
def test_dp_is_never_worse_than_the_ga() -> None:
    for seed in range(3):
        prof = random_profiles(8, seed, n_min=20, n_max=60)
        cum = cumulative_energy(prof, np.arange(61) / 60)
        energies, _ = optimal_division(cum, 8)
        S = segment_costs(cum)
        for k in range(1, 9):
            idx, e, history = genetic_division(S, k, population=60, generations=25, seed=seed)
            assert e >= energies[k - 1] - 1e-9 * abs(energies[k - 1])
            assert np.all(np.diff(history) <= 1e-12)  # the elite is kept
            assert len(idx) == k + 1 and np.all(np.diff(idx) >= 1)
            assert division_energy(prof, idx / 60)[0] == pytest.approx(e, rel=1e-9)


def test_ga_finds_the_optimum_on_a_tiny_grid_and_is_reproducible() -> None:
    prof = random_profiles(5, 11)
    cum = cumulative_energy(prof, np.arange(13) / 12)
    energies, _ = optimal_division(cum, 4)
    S = segment_costs(cum)
    for k in range(1, 5):
        _, e, _ = genetic_division(S, k, population=200, generations=40, seed=1)
        assert e == pytest.approx(energies[k - 1], rel=1e-12)
    a = genetic_division(S, 4, population=50, generations=5, seed=3)
    b = genetic_division(S, 4, population=50, generations=5, seed=3)
    assert np.array_equal(a[0], b[0]) and a[1] == b[1] and np.array_equal(a[2], b[2])


def test_ga_method_carries_both_curves() -> None:
    prof, _ = generate_power_profiles(cores=[1, 8, 32], freqs_ghz=[1.2, 2.4], seed=5)
    res = divide_phases(prof, max_phases=6, grid=100, method="ga", population=100,
                        generations=30)
    assert res.energy_ga is not None and res.ga is not None
    assert all(g >= d - 1e-9 * d for g, d in zip(res.energy_ga, res.energy_dp, strict=True))
    assert res.energy_j == pytest.approx(res.energy_ga[res.best_k - 1])
    assert res.ga["population"] == 100


@pytest.mark.parametrize("bad", [dict(population=1), dict(elite=0.0), dict(mutation=2.0)])
def test_ga_rejects_bad_parameters(bad: dict[str, float]) -> None:
    S = segment_costs(cumulative_energy(random_profiles(2, 0), np.linspace(0, 1, 5)))
    with pytest.raises(UsageError):
        genetic_division(S, 2, **bad)


# --- synthetic ground truth --------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_dp_recovers_the_synthetic_segment_structure(seed: int) -> None:
    prof, truth = generate_power_profiles(cores=[1, 2, 4, 8, 16, 24, 32],
                                          freqs_ghz=[1.2, 1.5, 1.8, 2.1, 2.4], seed=seed,
                                          noise=0.0)
    assert truth.n_phases >= 2
    k = truth.n_phases
    for integrator, tol in (("trapezoid", 0.005), ("zoh", 0.01)):
        res = divide_phases(prof, max_phases=k + 2, grid=500, integrator=integrator)
        assert res.energy_dp[0] == pytest.approx(truth.single_energy_j, rel=0.005)
        assert res.energy_dp[k - 1] == pytest.approx(truth.energy_j, rel=tol)
        assert res.savings > 0.5 * (1 - truth.energy_j / truth.single_energy_j)
    res = divide_phases(prof, max_phases=k, grid=500, integrator="trapezoid")
    # the truth's breakpoints within 2 grid steps (the samples are 0.5 s apart)
    np.testing.assert_allclose(res.divisions[k - 1].breakpoints, truth.phase_breakpoints(),
                               atol=2 / 500 + 0.5 / prof.elapsed.min())
    # each phase's configuration is the truth's best, or within 0.5 % of its energy
    group = np.cumsum(np.r_[0, truth.best[1:] != truth.best[:-1]])
    for i, c in enumerate(res.divisions[k - 1].configs):
        seg = truth.segment_energy[group == i].sum(axis=0)
        assert seg[c] <= 1.005 * seg.min()


def test_synthetic_noise_and_per_phase_speed() -> None:
    prof, truth = generate_power_profiles(cores=[1, 8, 32], freqs_ghz=[1.2, 1.8, 2.4], seed=1,
                                          speed="per-phase", noise=0.02)
    assert prof.n_configs == 9
    assert not np.allclose(truth.boundaries, truth.boundaries[0])
    with pytest.raises(UsageError):
        truth.phase_breakpoints()
    res = divide_phases(prof, max_phases=truth.n_phases, grid=200, integrator="trapezoid")
    assert res.energy_dp[-1] == pytest.approx(truth.energy_j, rel=0.05)
    assert json.loads(json.dumps(truth.to_dict()))["n_phases"] == truth.n_phases


# --- inputs and results --------------------------------------------------------------------------
def test_power_profiles_json_round_trip() -> None:
    prof, _ = generate_power_profiles(cores=[1, 32], freqs_ghz=[1.2, 2.4], seed=0)
    data = json.loads(json.dumps(prof.to_dict()))
    back = PowerProfiles.from_dict(data)
    assert back.labels == prof.labels and back.params == prof.params
    for name in ("start", "elapsed", "times", "power", "offsets"):
        np.testing.assert_array_equal(getattr(back, name), getattr(prof, name))
    # samples as PaScal pairs, stop_time instead of elapsed
    pairs = {"kind": "power_profiles", "version": 1, "configs": [
        {"label": "a", "start_time": 10.0, "stop_time": 13.0,
         "samples": [[100.0, 12.0], [50.0, 10.0], [80.0, 11.0]]}]}
    got = power_profiles_from_dict(pairs)
    np.testing.assert_array_equal(got.series(0)[0], [10.0, 11.0, 12.0])
    np.testing.assert_array_equal(got.series(0)[1], [50.0, 80.0, 100.0])
    assert got.elapsed[0] == 3.0


def pascal_json() -> dict[str, object]:
    data = {}
    for cores, khz in itertools.product((1, 4), (1_200_000, 2_400_000)):
        for inp, rep in itertools.product(("1", "2"), ("1", "2")):
            t0 = 1000.0 * cores + khz / 1e6 + 10 * int(inp)
            watts = 100 + 10 * cores + (5 if inp == "2" else 0)
            samples = [[watts + k, t0 + 0.5 * k] for k in range(21)]
            data[f"{cores};{khz};{inp};{rep}"] = {
                "start_time": t0, "stop_time": t0 + 10.0,
                "sensors": {"ipmi": samples, "instructions": [[[1, 2], t0]]}}
    return {"config": {"command": "app {input}", "data_descriptor": {
        "keys": ["cores", "frequency", "input", "repetitions"],
        "values": ["start_time", "stop_time"]}}, "data": data}


def test_pascal_import_picks_one_input_and_repetition() -> None:
    prof = power_profiles_from_dict(pascal_json())
    assert prof.n_configs == 4
    assert prof.meta["input"] == "1" and prof.meta["repetition"] == "1"
    assert prof.meta["sensor"] == "ipmi"
    assert {p["frequency_ghz"] for p in prof.params} == {1.2, 2.4}
    assert {p["cores"] for p in prof.params} == {1, 4}
    assert prof.elapsed == pytest.approx(np.full(4, 10.0))
    other = power_profiles_from_dict(pascal_json(), input="2", repetition="2")
    assert np.all(other.power[:21] == prof.power[:21] + 5)
    with pytest.raises(UsageError, match=r"^input='9': no such input; present: 1, 2"):
        power_profiles_from_dict(pascal_json(), input="9")
    broken = pascal_json()
    del next(iter(broken["data"].values()))["sensors"]["ipmi"]  # type: ignore[attr-defined]
    with pytest.raises(InputError, match="no sensor 'ipmi'"):
        power_profiles_from_dict(broken)


def test_pascal_import_reads_keys_as_campaign_import() -> None:
    """One reading of PaScal keys (phasekit.io.pascal): aliases, the kHz unit and the input
    order give the same configurations as ``campaign import``."""
    data = pascal_json()
    data["config"]["data_descriptor"]["keys"] = ["ncores", "freq", "inputs", "rep"]
    prof = power_profiles_from_dict(data, input="2", repetition="2")
    runs = [r for r in from_pascal(pascal_json()).runs if r.input == "2" and r.repetition == 2]
    assert prof.params == tuple({"cores": r.cores, "frequency_ghz": r.frequency_ghz}
                                for r in runs)
    assert prof.labels == ("1;1200000", "1;2400000", "4;1200000", "4;2400000")  # as written
    assert prof.meta["frequency_unit"] == "khz"
    for c, r in enumerate(runs):
        assert prof.start[c] == r.start_s and prof.elapsed[c] == r.time_s
        t, w = prof.series(c)
        np.testing.assert_array_equal(t, [s for s, _ in r.sensors["ipmi"]])
        np.testing.assert_array_equal(w, [v for _, v in r.sensors["ipmi"]])
    # without data_descriptor: the thesis's key order (campaign import refuses such a file)
    del data["config"]["data_descriptor"]
    assert power_profiles_from_dict(data).params == power_profiles_from_dict(
        pascal_json()).params
    with pytest.raises(InputError, match="data_descriptor"):
        from_pascal(data)


def test_pascal_import_sensor_choice_and_failed_runs() -> None:
    data = pascal_json()
    for entry in data["data"].values():  # type: ignore[attr-defined]
        samples = entry["sensors"].pop("ipmi")
        entry["sensors"]["node_power"] = samples
        entry["sensors"]["temperature"] = [[40.0, samples[0][1]]]
    prof = power_profiles_from_dict(data)
    assert prof.meta["sensor"] == "node_power"  # by name, as campaign import's energy
    for entry in data["data"].values():  # type: ignore[attr-defined]
        entry["sensors"]["bmc"] = entry["sensors"].pop("node_power")
    with pytest.raises(InputError, match=r"cannot tell the power sensor among .*bmc"):
        power_profiles_from_dict(data, source="x.json")  # two numeric sensors, no power name
    assert power_profiles_from_dict(data, sensor="bmc").meta["sensor"] == "bmc"
    data = pascal_json()
    data["data"]["1;1200000;1;1"] = {"failed": "exit code 1"}  # type: ignore[index]
    with pytest.warns(PhasekitWarning, match="left out 1 failed run"):
        prof = power_profiles_from_dict(data)
    assert prof.n_configs == 3 and "1;1200000" not in prof.labels


@pytest.mark.parametrize("data, match", [
    ({"kind": "power_profiles", "version": 1, "configs": []}, "non-empty"),
    ({"kind": "power_profiles", "version": 99, "configs": []}, "version"),
    ({"kind": "something", "version": 1}, "power_profiles"),
    ({"kind": "power_profiles", "version": 1, "configs": [{"label": "a", "elapsed": 1,
                                                          "time": [0], "power": [1]}]},
     "start_time"),
    ({"kind": "power_profiles", "version": 1, "configs": [{"label": "a", "start_time": 0,
                                                          "elapsed": 1}]}, "time"),
    ({"kind": "power_profiles", "version": 1, "configs": [{"label": "a", "start_time": 0,
                                                          "elapsed": 0, "time": [0],
                                                          "power": [1]}]}, "positive"),
    ({"kind": "power_profiles", "version": 1, "configs": [{"label": "a", "start_time": 0,
                                                          "elapsed": 1, "time": [0, 1],
                                                          "power": [1, None]}]}, "finite"),
])
def test_bad_power_profiles_are_input_errors(data: dict[str, object], match: str) -> None:
    with pytest.raises(InputError, match=match):
        power_profiles_from_dict(data, source="x.json")


def test_result_round_trip() -> None:
    prof, _ = generate_power_profiles(cores=[1, 32], freqs_ghz=[1.2, 2.4], seed=3)
    res = divide_phases(prof, max_phases=4, grid=50, method="ga", population=20,
                        generations=3, switch_cost_j=1.0)
    back = PhaseDivision.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back == res
    with pytest.raises(InputError):
        PhaseDivision.from_dict({"kind": "phase_division", "version": 1})


# --- command line ------------------------------------------------------------------------------
def _cli(*args: str | Path) -> tuple[int, str, str]:
    """``phasekit energy phases ARGS`` in this process: exit code, stdout, stderr."""
    return run_cli("energy", "phasediv", *args)


@pytest.fixture(scope="module")
def profiles_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prof, _ = generate_power_profiles(cores=[1, 8, 32], freqs_ghz=[1.2, 1.8, 2.4], seed=4)
    path = tmp_path_factory.mktemp("phasediv") / "profiles.json"
    path.write_text(json.dumps(prof.to_dict()))
    return path


def test_cli_json_contract(profiles_json: Path, tmp_path: Path) -> None:
    fig, result = tmp_path / "div.png", tmp_path / "div.json"
    code, out, err = _cli(profiles_json, "--max-phases", "5", "--grid", "200", "--json",
                          "--plot", fig, "-o", result)
    assert code == 0, err
    data = json.loads(out)
    for key in ("best_k", "energy_j", "time_s", "savings", "phases", "energy_vs_phases",
                "single", "method", "integrator", "grid"):
        assert key in data
    assert [r["phases"] for r in data["energy_vs_phases"]] == [1, 2, 3, 4, 5]
    assert len(data["phases"]) == data["best_k"]
    assert data["phases"][0]["start"] == 0.0 and data["phases"][-1]["end"] == 1.0
    assert {"config", "energy_j", "time_s", "params"} <= set(data["phases"][0])
    assert fig.stat().st_size > 0
    assert PhaseDivision.from_dict(json.loads(result.read_text())).best_k == data["best_k"]


def test_cli_table_ga_and_pascal(profiles_json: Path, tmp_path: Path) -> None:
    code, out, err = _cli(profiles_json, "--max-phases", "3", "--grid", "50", "--method", "ga",
                          "--switch-cost-j", "10", "--integrator", "trapezoid")
    assert code == 0, err
    assert "ga (J)" in out and "savings" in out
    pascal = tmp_path / "pascal.json"
    pascal.write_text(json.dumps(pascal_json()))
    code, out, err = _cli(pascal, "--input", "2", "--max-phases", "2", "--grid", "20", "--json")
    assert code == 0, err
    assert json.loads(out)["meta"]["input"] == "2"


@pytest.mark.parametrize("content, args, expected", [
    (None, (), 3),                                               # missing file
    ("{not json", (), 3),
    ('{"kind": "power_profiles", "version": 1}', (), 3),         # missing key
    ('{"config": {}, "data": {"1;2.0;1;1": {"start_time": 0, "stop_time": 1}}}', (), 3),
    ('[1, 2]', (), 3),
    ("{}", ("--method", "simplex"), 2),
    ("{}", ("--max-phases", "0"), 2),
])
def test_cli_bad_input_is_one_line(tmp_path: Path, content: str | None,
                                   args: tuple[str, ...], expected: int) -> None:
    path = tmp_path / "in.json"
    if content is not None:
        path.write_text(content)
    code, out, err = _cli(path, *args)
    assert code == expected
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("phasekit: error:")
    if expected == 3:
        assert "in.json" in err


def test_cli_prints_the_best_division_and_its_saving_first(profiles_json: Path) -> None:
    """The first line gives the best number of phases and the energy they save against the
    best single configuration (or that one configuration is best, switch costs counted);
    the tables and the line of totals follow, as the result presents them."""
    data = power_profiles_from_dict(json.loads(profiles_json.read_text()))
    result = divide_phases(data, max_phases=4, grid=100)
    saving = (result.single_energy_j - result.energy_j) / result.single_energy_j
    assert result.best_k > 1 and saving > 0
    shown = result.present("p.json")
    assert shown.headline.startswith(
        f"{result.best_k} phases, each at its minimum-energy configuration, use "
        f"{100 * saving:.2f} % less energy than the best single configuration")
    assert shown.views[0].title.startswith("Phases of p.json (Silva 2024 ch. 5; dp, ")
    assert len(shown.views[0].rows) == result.best_k and len(shown.views[1].rows) == 4
    code, out, err = _cli(profiles_json, "--max-phases", "4", "--grid", "100")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == shown.headline
    assert lines[1] == shown.views[0].title.replace("p.json", profiles_json.name)
    assert any(line.startswith(f"best: {result.best_k} phase(s), ") for line in lines)
    single = divide_phases(data, max_phases=4, grid=100, switch_cost_j=1e12)
    assert single.best_k == 1 and single.present().headline.startswith(
        "a single configuration is best once switch costs are counted: "
        f"{single.labels[single.single_config]}, ")
