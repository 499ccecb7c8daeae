"""The sliding-window detector (Phase-TA, III-A) against its naive reference."""

from __future__ import annotations

import numpy as np
import pytest

import naive
from phasekit.periodicity import _kernels, detect
from phasekit.periodicity.tune import excerpts, group_lengths, kept_groups, tune_window


def _periodic(rng: np.random.Generator, n: int, period: int, noise: float = 0.05,
              dims: int = 1) -> np.ndarray:
    template = rng.normal(size=(period, dims)).cumsum(axis=0)
    reps = n // period + 1
    return np.tile(template, (reps, 1))[:n] + rng.normal(0, noise, size=(n, dims))


@pytest.mark.parametrize("half", [20, 60])  # below and above the FFT switch
@pytest.mark.parametrize("dims", [1, 2])
def test_distance_curve_matches_naive(half: int, dims: int) -> None:
    rng = np.random.default_rng(half + dims)
    x = _periodic(rng, 4 * half, 13, dims=dims) + np.linspace(0, 3, 4 * half)[:, None]
    for start in (0, half // 2, 2 * half - 1):
        np.testing.assert_allclose(detect.distance_curve(x, start, half),
                                   naive.delta_curve(x, start, half), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("half", [20, 23, 60, 200])
def test_one_dimension_fast_paths_equal_the_general_kernels(half: int) -> None:
    # the 1-D shortcuts (four shifts at a time, hoisted RSW terms, reused FFT buffers) must
    # give bit for bit the general multi-dimensional arithmetic
    rng = np.random.default_rng(half)
    x = detect._as_2d(_periodic(rng, 4 * half + 7, 11))
    cs1, cs2 = detect.prefix_sums(x)
    rsw = 2 * half
    cross = np.zeros(half)
    if half <= detect.FFT_ABOVE:
        detect._cross_direct(x, rsw, half, cross)
        general = [float(sum(x[rsw + i, 0] * x[rsw - k + i, 0] for i in range(half)))
                   for k in range(1, half)]  # the same products, added in the same order
        np.testing.assert_array_equal(cross[1:], general)
    else:
        detect._cross_fft(x, rsw, half, cross)
    delta = np.zeros(half)
    detect._delta_from_cross(cross, cs1, cs2, rsw, half, delta)
    expected = [detect.pair_delta(cs1, cs2, rsw, rsw - k, half, cross[k]) for k in range(1, half)]
    np.testing.assert_array_equal(delta[1:], expected)


@pytest.mark.parametrize("size", [2 ** p for p in range(1, 18)])
def test_fft_matches_numpy(size: int) -> None:
    # the kernels' own radix-2 real FFT (no pocketfft through numba) against numpy
    rng = np.random.default_rng(size)
    x = rng.normal(size=size) * 10.0 ** rng.uniform(-3, 3)
    out = np.empty(size + 2)
    _kernels.rfft(x, out)
    expected = np.fft.rfft(x)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(out[0::2], expected.real, rtol=0, atol=1e-14 * scale)
    np.testing.assert_allclose(out[1::2], expected.imag, rtol=0, atol=1e-14 * scale)
    spectrum = rng.normal(size=size // 2 + 1) + 1j * rng.normal(size=size // 2 + 1)
    interleaved = np.empty(size + 2)
    interleaved[0::2], interleaved[1::2] = spectrum.real, spectrum.imag
    back = np.empty(size)
    _kernels.irfft(interleaved, back)
    expected_back = np.fft.irfft(spectrum, size)
    np.testing.assert_allclose(back, expected_back, rtol=0,
                               atol=1e-14 * np.abs(expected_back).max())


@pytest.mark.parametrize("half", [41, 64, 100, 1000])
@pytest.mark.parametrize("dims", [1, 3])
def test_fft_correlation_matches_the_direct_sums(half: int, dims: int) -> None:
    rng = np.random.default_rng(half * dims)
    x = detect._as_2d(_periodic(rng, 3 * half, 17, dims=dims))
    direct, fft = np.zeros(half), np.zeros(half)
    for rsw in (half, 2 * half):
        detect._cross_direct(x, rsw, half, direct)
        detect._cross_fft(x, rsw, half, fft)
        scale = np.abs(x[rsw - half:rsw + half]).max() ** 2 * half
        np.testing.assert_allclose(fft[1:], direct[1:], rtol=0, atol=1e-13 * scale)


def test_the_kernels_reject_bad_arrays() -> None:
    x = detect._as_2d(np.arange(100.0))
    cs1, cs2 = detect.prefix_sums(x)
    with pytest.raises(TypeError, match="float64"):
        _kernels.cross_direct(x.astype(np.float32), 50, 20, np.zeros(20))
    with pytest.raises(ValueError, match="contiguous"):  # numpy refuses the buffer
        _kernels.cross_direct(np.asfortranarray(np.hstack([x, x])), 50, 20, np.zeros(20))
    with pytest.raises(ValueError):
        _kernels.cross_direct(x, 90, 20, np.zeros(20))  # the window ends past the series
    with pytest.raises(ValueError):
        _kernels.pair_delta(cs1, cs2, 95, 0, 10, 0.0)


def test_prepared_series_gives_the_same_pass() -> None:
    rng = np.random.default_rng(8)
    x = _periodic(rng, 3000, 41, dims=2)
    prepared = detect.prepare(x)
    for half in (30, 64, 300):
        a, b = detect.detect(x, half), detect.detect(prepared, half)
        for field in ("start", "length", "count", "leading"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


@pytest.mark.slow
def test_base_period_matches_naive_rule() -> None:
    rng = np.random.default_rng(0)
    agreed = 0
    for trial in range(300):
        period = int(rng.integers(5, 40))
        x = _periodic(rng, 200, period, noise=float(rng.choice([0.01, 0.3, 1.0, 3.0])))
        curve = naive.delta_curve(x, 0, 100)
        expected = naive.base_period(curve, 4, 0.25, 0.5)
        assert detect.base_period(np.array(curve), 4, 0.25, 0.5, 0.02, 0.03) == expected, trial
        agreed += expected > 0
    assert agreed > 50  # the check saw many periodic windows, not only empty answers


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_detect_pass_matches_naive(seed: int) -> None:
    rng = np.random.default_rng(seed)
    parts = [rng.normal(size=150).cumsum(), _periodic(rng, 700, 23)[:, 0],
             rng.normal(size=90), _periodic(rng, 500, 31, noise=0.1)[:, 0]]
    x = np.concatenate(parts)
    for half in (36, 50):
        fast = detect.detect(x, half)
        expected = naive.detect(x, half)
        got = list(zip(fast.start.tolist(), fast.length.tolist(), fast.count.tolist(),
                       fast.leading.tolist(), strict=True))
        assert got == expected
        assert fast.covered() > 0.5 * 1200


def test_exact_period_on_clean_signal_and_nothing_on_noise() -> None:
    rng = np.random.default_rng(4)
    batches = detect.detect(_periodic(rng, 5000, 57, noise=0.01), 80)
    assert set(batches.length.tolist()) == {57}
    assert batches.covered() > 0.9 * 5000
    assert detect.detect(rng.normal(size=5000), 80).covered() == 0
    assert detect.detect(np.full(5000, 2.5), 80).covered() == 0


def test_grouping_splits_at_gaps_and_alpha_drops_marginal_groups() -> None:
    lengths = np.array([100, 101, 99, 150, 152, 151, 400])
    groups = group_lengths(lengths, tolerance=0.05)
    assert groups.tolist() == [0, 0, 0, 1, 1, 1, 2]
    batches = detect.Batches(np.zeros(7, np.int64), lengths, np.array([10, 10, 10, 5, 5, 5, 1]),
                             np.zeros(7, bool))
    kept, covered = kept_groups(batches, 10_000, alpha=0.05)
    assert kept.tolist() == [0, 0, 0, 1, 1, 1, -1]  # 400 samples < 5 % of 10 000
    assert covered.tolist() == [3000, 2265]


def test_window_search_finds_the_narrow_optimum() -> None:
    def coverage(window: int) -> float:  # zero below the period, slowly decaying above it
        return 0.0 if window < 333 else 0.9 - 1e-5 * (window - 333)

    best, steps = tune_window(coverage, min_window=8, max_window=10_000, workers=2)
    assert 333 <= best <= 345
    assert len(steps) < 30


def test_tuning_refines_around_a_hint_where_the_grid_sees_nothing() -> None:
    """A ragged coverage, positive only on 240..300 and zero at 256 (as on a short recording
    under load): the doubling grid alone sees zeros and stops; the hint 250 finds the band and
    the search refines inside it; hints outside the range are ignored."""
    def coverage(window: int) -> float:
        return 0.8 + 1e-4 * (window - 240) if 240 <= window <= 300 and window != 256 else 0.0

    best, _ = tune_window(coverage, min_window=32, max_window=633)
    assert coverage(best) == 0.0
    best, steps = tune_window(coverage, min_window=32, max_window=633, hints=[250, 5, 9000])
    assert 240 <= best <= 300 and coverage(best) > 0.8
    assert len([s for s in steps if 240 <= s.window <= 300]) > 1
    assert all(32 <= s.window <= 633 for s in steps)


def test_excerpts_spread_evenly_over_the_valid_samples() -> None:
    """Stretches of a long run for the window search: of the asked length, inside the valid
    segments (cut where a segment ends), one in each equal share of the valid samples, about
    the budget in all; a run within the budget is searched whole."""
    segments = [(0, 400_000), (400_010, 1_000_000), (1_200_000, 2_000_000)]
    spans = excerpts(segments, budget=200_000, length=20_000)
    inside = [any(s <= a < b <= e for s, e in segments) for a, b in spans]
    assert all(inside) and all(b - a <= 20_000 for a, b in spans)
    assert 190_000 <= sum(b - a for a, b in spans) <= 200_000
    valid = np.zeros(2_000_000, bool)
    for s, e in segments:
        valid[s:e] = True
    before = np.concatenate([[0], np.cumsum(valid)])  # valid samples before each index
    share = before[-1] / 10
    middles = [(before[a] + before[b]) / 2 for a, b in spans]
    assert sorted({int(m // share) for m in middles}) == list(range(10))
    assert excerpts(segments, budget=2_000_000, length=20_000) == segments
