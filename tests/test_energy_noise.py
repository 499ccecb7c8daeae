"""The reading noise, the meter's step and the denoised energy, against synthetic campaigns
whose noise, step and true energy are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from phasekit.energy.noise import (
    COARSE_STEP,
    DISTINGUISH,
    ReadingNoise,
    denoised_energy,
    meter_step,
    reading_noise,
)

FREQUENCIES = np.round(np.arange(1.2, 2.31, 0.1), 1)
CORES = np.array([1, 2, 4, 6, 8, 12, 16, 20, 24, 28, 32])


def grid() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A full campaign grid and its true energy: a smooth surface with one minimum per input
    (time falls with cores and frequency, power grows with both)."""
    f, p, n = (a.ravel() for a in np.meshgrid(FREQUENCIES, CORES, [1.0, 2.0, 3.0],
                                              indexing="ij"))
    energy = n * (10 / p + 0.2 * p) * (1.0 / f + 0.3 * f)
    return f, p, n, energy


def campaign(energy: np.ndarray) -> pd.DataFrame:
    f, p, n, _ = grid()
    return pd.DataFrame({"frequency_ghz": f, "cores": p, "input": n, "energy_j": energy})


@pytest.mark.parametrize("sigma", [0.02, 0.05, 0.10])
def test_the_relative_noise_is_the_one_added(sigma: float) -> None:
    *_, true = grid()
    estimates = [reading_noise(campaign(true * np.exp(
        np.random.default_rng(seed).normal(0, sigma, true.size)))).relative
                 for seed in range(5)]
    assert np.mean(estimates) == pytest.approx(sigma, rel=0.15)


def test_a_noise_free_surface_has_almost_no_noise() -> None:
    *_, true = grid()
    noise = reading_noise(campaign(true))
    assert noise.known and noise.relative < 0.01
    assert noise.threshold() == pytest.approx(DISTINGUISH * noise.relative)


@pytest.mark.parametrize("step", [0.2, 0.45, 0.9])
def test_the_meter_step_of_quantized_readings(step: float) -> None:
    *_, true = grid()
    found, evidence = meter_step(np.round(true / step) * step)
    assert found == pytest.approx(step, rel=0.03) and evidence > 100


@pytest.mark.parametrize(("step", "coarse"), [(1.5, True), (0.3, False)])
def test_the_noise_line_says_when_the_meter_is_coarse(step: float, coarse: bool) -> None:
    """The step is put against the median reading; a step of 10 % or more of it says that
    readings one step apart may be the same energy."""
    *_, true = grid()
    readings = np.round(true / step) * step
    noise = reading_noise(campaign(readings))
    median = float(np.median(readings))
    assert noise.median_j == pytest.approx(median)
    line = noise.sentence()
    assert f"{100 * noise.step_j / median:.0f} % of the median reading" in line
    assert (step / median >= COARSE_STEP) == coarse
    assert ("readings one step apart may be the same energy" in line) == coarse
    # said where one step exceeds what the scatter of most readings calls within the noise
    assert ("more than the scatter of most readings says" in line) == (
        coarse and noise.step_j / median > noise.threshold())
    assert ReadingNoise.from_dict(noise.to_dict()) == noise


@pytest.mark.parametrize(("relative", "beyond"), [(0.05, True), (0.15, False)])
def test_a_step_beyond_the_noise_threshold_says_so(relative: float, beyond: bool) -> None:
    """A step of 20 % of the median reading against a threshold of 14 % (scatter 5 %) or
    42 % (scatter 15 %): only the first is more than the scatter of most readings says."""
    noise = ReadingNoise(relative, 20, 0.52, 100.0, 2.6)
    assert noise.threshold() == pytest.approx(DISTINGUISH * relative)
    line = noise.sentence()
    assert "20 % of the median reading (2.6 J)" in line
    assert ("more than the scatter of most readings says" in line) == beyond


def test_no_step_in_readings_that_have_none() -> None:
    *_, true = grid()
    for seed in range(5):
        noisy = true * np.exp(np.random.default_rng(seed).normal(0, 0.03, true.size))
        assert meter_step(noisy)[0] is None


def test_the_denoised_energy_finds_the_true_best_despite_a_lucky_reading() -> None:
    f, p, n, true = grid()
    noisy = true * np.exp(np.random.default_rng(1).normal(0, 0.04, true.size))
    first = n == 1.0
    truth_best = int(np.argmin(np.where(first, true, np.inf)))
    # one lucky reading far from the minimum, 30 % below its neighbours
    lucky = int(np.flatnonzero(first & (p == 32) & (f == 1.2))[0])
    noisy[lucky] = 0.7 * true[truth_best]
    denoised = denoised_energy(campaign(noisy))
    assert np.argmin(np.where(first, noisy, np.inf)) == lucky  # the single lowest reading
    chosen = int(np.argmin(np.where(first, denoised, np.inf)))
    assert true[chosen] <= 1.05 * true[truth_best]  # denoised: within 5 % of the truth


def test_sparse_measurements_leave_the_noise_unknown_and_say_so() -> None:
    *_, true = grid()
    table = campaign(true).iloc[::37].reset_index(drop=True)  # scattered, no neighbours
    noise = reading_noise(table)
    assert not noise.known and noise.threshold() == 0.0
    assert "unknown" in noise.sentence()
    assert np.isfinite(denoised_energy(table)).all()  # each is at least its own reading


def test_energy_fit_states_the_noise_and_keeps_it_in_its_json() -> None:
    from phasekit.energy.fit import EnergyFitResult, configurations, fit_energy

    *_, true = grid()
    noisy = true * np.exp(np.random.default_rng(3).normal(0, 0.05, true.size))
    result = fit_energy(configurations(campaign(noisy)), n_train=12, compare=False)
    assert result.noise is not None
    assert result.noise["relative"] == pytest.approx(0.05, rel=0.3)
    assert EnergyFitResult.from_dict(result.to_dict()).noise == result.noise
    notes = result.present().notes
    assert any(note.startswith("noise: readings scatter ±") for note in notes)


def test_a_surrounded_denoised_energy_needs_every_neighbour_of_the_grid() -> None:
    """With ``surrounded``, a configuration one of whose grid neighbours was not measured has
    no denoised energy; the others keep the median of their neighbourhood."""
    f, p, n, true = grid()
    noisy = true * np.exp(np.random.default_rng(2).normal(0, 0.05, true.size))
    gone = {5, 40, 200}
    kept = np.array([i for i in range(true.size) if i not in gone])
    table = campaign(noisy).iloc[kept].reset_index(drop=True)
    fi = np.searchsorted(FREQUENCIES, f)
    pi = np.searchsorted(CORES, p)
    present = {(fi[i], pi[i], n[i]) for i in kept}
    full = denoised_energy(table)
    surrounded = denoised_energy(table, surrounded=True)
    for row, i in enumerate(kept):
        around = [(fi[i] + a, pi[i] + b, n[i]) for a in (-1, 0, 1) for b in (-1, 0, 1)
                  if 0 <= fi[i] + a < FREQUENCIES.size and 0 <= pi[i] + b < CORES.size]
        if all(cell in present for cell in around):
            assert surrounded[row] == full[row]
        else:
            assert np.isnan(surrounded[row])
    assert np.isnan(surrounded).sum() >= 3 * 3  # each missing cell's neighbours at least


def test_a_choice_fitted_on_every_reading_is_not_taken_in_by_a_lucky_one() -> None:
    """``energy choose`` on a whole campaign with no saved fit: a configuration 16 % above
    the true best whose one reading came out 30 % below it is not chosen (its neighbours
    read high), and the choice is within 5 % of the true best."""
    from phasekit.energy.fit import configurations
    from phasekit.energy.workflow import fit_then_choose

    f, p, n, true = grid()
    noisy = true * np.exp(np.random.default_rng(3).normal(0, 0.04, true.size))
    first = n == 1.0
    best = true[first].min()
    lucky = int(np.flatnonzero(first & (f == 1.5) & (p == 12))[0])
    assert 1.15 < true[lucky] / best < 1.17
    noisy[lucky] = 0.7 * best
    choice = fit_then_choose(configurations(campaign(noisy)), uncertainty=False
                             ).result.choices[0]
    at = first & np.isclose(f, choice.best.frequency_ghz) & (p == choice.best.cores)
    assert not at[lucky]
    assert true[at][0] <= 1.05 * best


def comb(seed: int = 4, sigma: float = 0.03) -> tuple[pd.DataFrame, np.ndarray]:
    """The campaign of :func:`grid` whose every other core count (6, 12, 20, 28 cores) runs
    30 % higher, as a pipeline whose stages divide only some thread counts evenly, read with
    ``sigma`` noise; and its true energy."""
    _, p, _, true = grid()
    odd = np.searchsorted(CORES, p) % 2 == 1
    true = true * np.where(odd, 1.3, 1.0)
    noisy = true * np.exp(np.random.default_rng(seed).normal(0, sigma, true.size))
    return campaign(noisy), true


def test_energy_that_alternates_across_core_counts_is_rough_across_them() -> None:
    from phasekit.energy.noise import smooth_across_cores

    *_, true = grid()
    for seed in range(3):
        table, _ = comb(seed)
        assert not smooth_across_cores(table)
        assert not reading_noise(table).across_cores
        smooth = campaign(true * np.exp(np.random.default_rng(seed).normal(0, 0.03, true.size)))
        assert smooth_across_cores(smooth) and reading_noise(smooth).across_cores
    # too few readings to tell: the 3 x 3 neighbourhood stands
    assert smooth_across_cores(comb()[0].iloc[::37].reset_index(drop=True))


def test_the_noise_line_and_its_json_say_when_energy_is_rough_across_core_counts() -> None:
    noise = reading_noise(comb()[0])
    assert "energy is rough across core counts" in noise.sentence()
    assert ReadingNoise.from_dict(noise.to_dict()) == noise
    saved_before = {k: v for k, v in noise.to_dict().items() if k != "across_cores"}
    assert ReadingNoise.from_dict(saved_before).across_cores  # a fit saved before: smooth
    *_, true = grid()
    smooth = reading_noise(campaign(true * np.exp(
        np.random.default_rng(0).normal(0, 0.01, true.size))))
    assert "rough" not in smooth.sentence()


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_the_denoised_best_of_a_comb_is_a_low_core_count(seed: int, monkeypatch) -> None:
    """Where every other core count reads 30 % higher, a 3 x 3 median turns the comb over
    (a low cell has six high neighbours); the median over the frequency neighbours at the
    same core count keeps it, and the denoised best is within 5 % of the true best."""
    from phasekit.energy import noise as noise_module

    table, true = comb(seed)
    *_, n, _ = grid()
    for across, within in ((None, True), (True, False)):
        if across is not None:
            monkeypatch.setattr(noise_module, "smooth_across_cores", lambda configs, v=across: v)
        denoised = denoised_energy(table)
        for value in (1.0, 2.0, 3.0):
            mine = n == value
            chosen = int(np.argmin(np.where(mine, denoised, np.inf)))
            assert (true[chosen] <= 1.05 * true[mine].min()) == within


def test_the_frequency_neighbours_against_a_naive_lookup() -> None:
    from phasekit.energy.noise import _frequency_neighbours

    matrix = np.arange(5 * 4, dtype=float).reshape(5, 4)
    layers = _frequency_neighbours(matrix)
    for i in range(5):
        nearest = sorted(range(5), key=lambda k: (abs(k - i), k))[:3]
        for j in range(4):
            assert sorted(layers[:, i, j]) == sorted(matrix[nearest, j])
    two = matrix[:2]
    assert sorted(_frequency_neighbours(two)[:, 0, 1]) == [1.0, 5.0]


def test_a_choice_on_a_comb_campaign_takes_a_low_core_count(monkeypatch) -> None:
    """``energy choose`` on a whole campaign whose every other core count reads 30 % higher:
    each input's choice is within 5 % of its true best; counting each reading as the 3 x 3
    median of its neighbourhood instead chooses a high core count for at least one."""
    from phasekit.energy import noise as noise_module
    from phasekit.energy.fit import configurations
    from phasekit.energy.workflow import fit_then_choose

    table, true = comb()
    f, p, n, _ = grid()

    def losses() -> list[float]:
        out = []
        for choice in fit_then_choose(configurations(table), uncertainty=False).result.choices:
            at = (n == choice.input) & np.isclose(f, choice.best.frequency_ghz) & (
                p == choice.best.cores)
            out.append(float(true[at][0] / true[n == choice.input].min() - 1))
        return out

    assert max(losses()) <= 0.05
    result = fit_then_choose(configurations(table), uncertainty=False).result
    assert result.noise is not None and result.noise["across_cores"] is False
    notes = " ".join(result.present().notes)
    assert "median over its neighbouring frequency steps at the same core count" in notes
    assert "energy is rough across core counts" in notes
    monkeypatch.setattr(noise_module, "smooth_across_cores", lambda configs: True)
    assert max(losses()) > 0.05


def test_probable_failed_runs_do_not_make_a_campaign_rough_across_core_counts() -> None:
    """Failed runs at the core counts that are not powers of two (one meter sample, as
    fluidanimate's at thread counts it cannot run on) alternate like a comb, but the choice
    judges the readings it compares, without them."""
    from phasekit.energy.fit import configurations, fit_energy
    from phasekit.energy.workflow import fit_then_choose

    _, p, _, true = grid()
    noisy = true * np.exp(np.random.default_rng(7).normal(0, 0.03, true.size))
    failed = ~np.isin(p, [1, 2, 4, 8, 16, 32])
    noisy[failed] = 0.1 * true.min()
    table = configurations(campaign(noisy))
    assert not reading_noise(table).across_cores  # all the readings: a comb
    run = fit_then_choose(table, uncertainty=False)
    assert run.result.failed_readings + run.result.ruled_out > 0
    assert run.result.noise is not None and run.result.noise["across_cores"] is True
    assert run.fitted.noise is not None and run.fitted.noise["across_cores"] is True  # fit
    # a fit on 20 of them sets aside only its own failed runs; the rest are judged by it
    fit = fit_energy(table, n_train=20, compare=False)
    assert fit.noise is not None and fit.noise["across_cores"] is True
    for given in ({"train": 20}, {"fit": fit}):
        result = fit_then_choose(table, uncertainty=False, **given).result
        assert result.noise is not None and result.noise["across_cores"] is True


def test_a_fit_on_part_of_a_comb_and_its_choices_agree_that_it_is_rough() -> None:
    from phasekit.energy.fit import configurations, fit_energy
    from phasekit.energy.workflow import fit_then_choose

    table = configurations(comb()[0])
    fit = fit_energy(table, n_train=20, compare=False)
    assert fit.noise is not None and fit.noise["across_cores"] is False
    for given in ({"train": 20}, {"fit": fit}):
        result = fit_then_choose(table, uncertainty=False, **given).result
        assert result.noise is not None and result.noise["across_cores"] is False


def test_an_empty_table_and_a_null_flag() -> None:
    from phasekit.energy.noise import smooth_across_cores

    empty = campaign(grid()[3]).iloc[:0]
    assert smooth_across_cores(empty) and denoised_energy(empty).size == 0
    saved = {**reading_noise(comb()[0]).to_dict(), "across_cores": None}
    assert ReadingNoise.from_dict(saved).across_cores


def test_points_at_other_core_counts_are_infinitely_far_where_energy_is_rough() -> None:
    from phasekit.energy.choose import smoothed_estimate, step_distance2

    F, P = (a.ravel() for a in np.meshgrid([1.0, 1.5, 2.0], [2, 4, 8], indexing="ij"))
    to = np.ones(F.size, bool)
    rough = step_distance2(F, P, to, across_cores=False)
    smooth = step_distance2(F, P, to)
    same = P[:, None] == P[None, :]
    assert np.array_equal(rough[same], smooth[same])
    assert np.isinf(rough[~same]).all()
    readings = np.full(F.size, np.nan)
    readings[(F == 1.5) & (P == 4)] = 2.0
    estimate = smoothed_estimate(F, P, np.ones(F.size), readings, across_cores=False)
    assert np.all(estimate[P != 4] == 1.0) and np.all(estimate[P == 4] > 1.0)
