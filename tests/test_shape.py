"""Shape segmentation of one series (phasekit.phases.shape): kernels against tests/naive.py,
synthetic series with known change points over several seeds, real TSSB series, bad inputs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import signal

import naive
from phasekit.errors import InputError, UsageError
from phasekit.metrics.segmentation import f1_score, score_segmentation
from phasekit.phases import shape
from phasekit.phases.shape import ShapeSegmentation, shape_change_points, suss_window

TSSB = Path(__file__).parent / "data" / "tssb"
SEEDS = range(3)


# --- kernels against the naive references ----------------------------------------------------
@pytest.mark.parametrize("seed, n, w, stride", [(0, 80, 5, 1), (1, 120, 7, 1), (2, 97, 10, 1),
                                                (3, 300, 12, 2), (4, 301, 10, 3),
                                                (5, 400, 10, 7)])
def test_knn_matches_naive(seed: int, n: int, w: int, stride: int) -> None:
    """Exact neighbours, of every subsequence or of those starting every ``stride`` samples
    (the dot products run along the diagonals a stride at a time, or afresh when the stride
    is half a window or more)."""
    x = np.random.default_rng(seed).standard_normal(n)
    assert shape._knn(x, w, stride=stride).tolist() == naive.znorm_knn(x, w, 3, stride)


def test_knn_treats_flat_subsequences_as_one_shape() -> None:
    x = np.r_[np.zeros(30), np.sin(np.arange(60) / 2.0), np.zeros(30)]
    nbr = shape._knn(x, 6)
    flat = [np.ptp(x[i:i + 6]) == 0 for i in range(len(nbr))]
    assert sum(flat) > 40
    for i in np.flatnonzero(flat):  # the neighbours of a flat subsequence are flat
        assert all(flat[j] for j in nbr[i]), (i, nbr[i])


@pytest.mark.parametrize("seed", SEEDS)
def test_profile_and_test_match_naive(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.r_[np.sin(np.arange(70) / 2.0), rng.standard_normal(60)]
    w, min_seg = 6, 12
    nbr = shape._knn(x, w)
    auc, a, b = shape._profile(nbr, w, min_seg)
    m = len(nbr)
    for split in range(1, m):
        score, pred = naive.clasp_split_score(nbr.tolist(), split, w)
        if min_seg <= split < m - min_seg + w and np.isfinite(score):
            assert auc[split] == pytest.approx(score, abs=1e-12), split
            p = shape._rank_sum_p(split, m, int(b[split]), int(a[split] + b[split]))
            assert p == pytest.approx(naive.rank_sum_p(pred[:split], pred[split:]),
                                      rel=1e-9, abs=1e-300)
        else:
            assert np.isnan(auc[split]), split


@pytest.mark.parametrize("w", [1, 4, 17, 60])
def test_suss_score_matches_naive(w: int) -> None:
    x = np.random.default_rng(3).standard_normal(150).cumsum()
    z = (x - x.min()) / (x.max() - x.min())
    got = shape._suss_score(z, w, float(z.mean()), float(z.std()), 1.0)
    assert got == pytest.approx(naive.suss_score(z, w), rel=1e-6)


def test_suss_window_follows_the_pattern_length() -> None:
    t = np.arange(4000)
    short = suss_window(np.sin(2 * np.pi * t / 20))
    long = suss_window(np.sin(2 * np.pi * t / 200))
    assert 3 <= short < long
    assert suss_window(np.ones(100)) == shape.SUSS_LOWER


# --- synthetic series with known answers ------------------------------------------------------
def sine_period_change(seed: int) -> tuple[np.ndarray, list[int]]:
    rng = np.random.default_rng(seed)
    t = np.arange(1200)
    x = np.r_[np.sin(2 * np.pi * t / 20), np.sin(2 * np.pi * t / 33)]
    return x + 0.1 * rng.standard_normal(x.size), [1200]


def square_to_sawtooth(seed: int) -> tuple[np.ndarray, list[int]]:
    rng = np.random.default_rng(seed)
    t = np.arange(1000)
    x = np.r_[signal.square(2 * np.pi * t / 25), signal.sawtooth(2 * np.pi * t / 25),
              signal.square(2 * np.pi * t / 25)]
    return x + 0.1 * rng.standard_normal(x.size), [1000, 2000]


def noise_level_change(seed: int) -> tuple[np.ndarray, list[int]]:
    rng = np.random.default_rng(seed)
    t = np.arange(3000)
    level = np.where(t < 1500, 0.05, 0.6)
    return np.sin(2 * np.pi * t / 30) + level * rng.standard_normal(t.size), [1500]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("make, margin", [(sine_period_change, 0.01),
                                          (square_to_sawtooth, 0.01),
                                          (noise_level_change, 0.025)])
def test_synthetic_changes_are_found(make, margin: float, seed: int) -> None:
    x, truth = make(seed)
    res = shape_change_points(x)
    assert len(res.change_points) == len(truth), res
    f1, _, _ = f1_score(truth, res.change_points, margin=int(margin * len(x)))
    assert f1 == 1.0, (res.change_points, truth)
    assert res.change_points.dtype == np.int64
    assert np.all(np.diff(res.change_points) > 0)
    assert np.all((res.scores > 0.5) & (res.scores <= 1.0))
    assert np.all(res.p_values <= shape.P_THRESHOLD)
    assert "shape change" in res.explanation


def three_regimes(seed: int) -> np.ndarray:
    """A sine, a square wave of the same period, a sharper sine of another: changes at
    6000 and 12000."""
    rng = np.random.default_rng(seed)
    t = np.arange(6000)
    x = np.r_[np.sin(2 * np.pi * t / 160), signal.square(2 * np.pi * t / 160),
              np.sin(2 * np.pi * t / 90) ** 3]
    return x + 0.1 * rng.standard_normal(x.size)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_long_series_compares_every_fth_subsequence(seed: int) -> None:
    """Above ``full_resolution_up_to`` samples only the subsequences starting every ``f``
    samples are compared: the same changes as the exact search, each on a multiple of ``f``
    and within a window of it; the factor and the window (SuSS on every sample, in samples)
    in the result."""
    x = three_regimes(seed)
    exact = shape_change_points(x, exact_up_to=None, full_resolution_up_to=None)
    coarse = shape_change_points(x, full_resolution_up_to=4000)
    assert coarse.coarse_factor == 5 and exact.coarse_factor == 1
    assert len(coarse.change_points) == len(exact.change_points) == 2
    assert np.all(coarse.change_points % 5 == 0)
    assert np.all(np.abs(coarse.change_points - exact.change_points) <= coarse.window)
    assert f1_score([6000, 12000], coarse.change_points, margin=180)[0] == 1.0
    assert coarse.profile.shape == x.shape and coarse.n_samples == x.size
    assert "start every 5 samples" in coarse.explanation and "by suss" in coarse.explanation
    assert coarse.window == exact.window == suss_window((x - x.mean()) / x.std())
    assert ShapeSegmentation.from_dict(coarse.to_dict()).coarse_factor == 5
    given = shape_change_points(x, full_resolution_up_to=4000, window=160)
    assert given.window == 160 and given.window_method == "given"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_long_search_finds_approximate_neighbours(seed: int) -> None:
    """Above ``exact_up_to`` subsequences the neighbours are approximate: the same changes as
    the exact search, and the result says so."""
    x = three_regimes(seed)
    exact = shape_change_points(x, exact_up_to=None)
    approximate = shape_change_points(x, exact_up_to=4000)
    assert approximate.approximate and not exact.approximate
    assert f1_score([6000, 12000], approximate.change_points, margin=180)[0] == 1.0
    assert np.all(np.abs(approximate.change_points - exact.change_points) <= 60)
    assert "neighbours approximated" in approximate.explanation
    assert ShapeSegmentation.from_dict(approximate.to_dict()).approximate


def test_an_approximate_search_does_not_split_at_chance_level() -> None:
    """The aperiodic start of a 45-minute NEMO-like run (its first 404.7 s, 80 947 samples):
    the approximate search's best split there scores 0.52 (chance 0.5) with a rank-sum p
    of 5e-20, which alone would pass; it is no change (the exact search's p is 0.09)."""
    from phasekit.synth import generate

    profile, _ = generate("nemo", minutes=45, seed=1)
    start = profile.values[:80947, 0]
    found = shape_change_points(start, window=40)     # the whole run's SuSS window
    assert found.approximate and found.change_points.size == 0, found.explanation


def test_the_phases_result_says_what_was_approximated() -> None:
    """A long series' phases say, in a note, which approximation the shape method took."""
    import phasekit

    profile = phasekit.Profile(values=three_regimes(0)[:, None], period=0.01, metrics=("ipc",))
    approximate = phasekit.phases(profile, method="shape", detector={"exact_up_to": 4000})
    coarse = phasekit.phases(profile, method="shape",
                             detector={"exact_up_to": None, "full_resolution_up_to": 4000})
    exact = phasekit.phases(profile, method="shape", detector={"exact_up_to": None})
    assert approximate.params["approximate"] and coarse.params["coarse_factor"] == 5
    notes = {name: [n for n in result.present().notes if n.startswith("long run")]
             for name, result in (("approximate", approximate), ("coarse", coarse),
                                  ("exact", exact))}
    assert "found approximately" in notes["approximate"][0]
    assert ("every 5 samples, so each boundary is placed within 5 samples (50 ms)"
            in notes["coarse"][0])
    assert notes["exact"] == []


def znorm_distances(x: np.ndarray, w: int, i: int, js: np.ndarray) -> np.ndarray:
    def z(s: np.ndarray) -> np.ndarray:
        return (s - s.mean()) / s.std()
    return np.array([np.sum((z(x[i:i + w]) - z(x[j:j + w])) ** 2) for j in js])


@pytest.mark.parametrize("seed, w, anchors_max", [(0, 12, None), (1, 20, None), (2, 33, None),
                                                 (3, 12, 500)])
def test_approximate_neighbours_are_near_the_exact_ones(seed: int, w: int,
                                                        anchors_max: int | None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a noisy periodic series with a change of shape at 1500, the approximate neighbours
    are distinct and non-trivial, vote for the same side of the change as the exact ones
    for nearly every subsequence, and are nearly as near: the third neighbour's correlation
    at most 0.005 lower in the median, 0.03 at the 95th percentile (z-normalized distance
    = 2 w (1 - correlation)); also with anchors spaced further apart by ``ANCHORS_MAX``
    (every 6th subsequence instead of every 3rd), whose votes agree a little less often
    (0.87-0.90 of them over seeds 0-3, against 0.90-0.92)."""
    if anchors_max is not None:
        monkeypatch.setattr(shape, "ANCHORS_MAX", anchors_max)
    rng = np.random.default_rng(seed)
    t = np.arange(1500)
    x = np.r_[np.sin(2 * np.pi * t / 47), signal.sawtooth(2 * np.pi * t / 31)]
    x = x + 0.05 * rng.standard_normal(x.size)
    approximate = shape._approximate_knn(x, w)
    exact = shape._knn(x, w)              # the exact search, itself checked against naive
    assert approximate.shape == exact.shape
    offsets = np.abs(approximate - np.arange(len(approximate))[:, None])
    assert offsets.min() > w // 2
    assert all(len(set(row)) == 3 for row in approximate.tolist())

    def votes(nbr: np.ndarray) -> np.ndarray:
        return np.sort(nbr, axis=1)[:, 1] >= 1500
    assert np.mean(votes(approximate) == votes(exact)) >= (0.9 if anchors_max is None else 0.85)
    rows = np.arange(0, len(exact), 5)
    loss = np.array([znorm_distances(x, w, i, approximate[i]).max()
                     - znorm_distances(x, w, i, exact[i]).max() for i in rows]) / (2 * w)
    assert loss.min() >= -1e-9                 # never nearer than the exact neighbours
    assert np.median(loss) <= 0.005 and np.quantile(loss, 0.95) <= 0.03


def test_an_exact_search_over_strided_subsequences_compares_fewer() -> None:
    """Each step along a diagonal costs up to ``min(2 f, w)`` products when subsequences
    start every ``f`` samples, against two at every sample, so the exact search's limit
    shrinks by the square root of the ratio; at every sample it is ``exact_up_to``."""
    assert shape._exact_limit(32_768, 43, 1) == 32_768
    assert shape._exact_limit(None, 43, 17) is None
    assert shape._exact_limit(32_768, 43, 17) == math.isqrt(32_768 ** 2 // 17)
    assert shape._exact_limit(32_768, 43, 30) == math.isqrt(32_768 ** 2 // 21)
    x = three_regimes(0)                                  # 18 000 samples
    strided = shape_change_points(x, exact_up_to=6000, full_resolution_up_to=4500)
    # about 4 500 subsequences: fewer than 6 000, more than the 3 000 of an exact search
    assert strided.coarse_factor == 4 and strided.window >= 8 and strided.approximate
    assert f"searches over {math.isqrt(6000 ** 2 // 4):,} subsequences" in strided.explanation


@pytest.mark.parametrize("seed", SEEDS)
def test_stationary_periodic_series_is_not_cut(seed: int) -> None:
    rng = np.random.default_rng(seed)
    t = np.arange(3000) + int(rng.integers(100))
    mixed = np.sin(2 * np.pi * t / 25) + 0.5 * signal.square(2 * np.pi * t / 25)
    pulses = ((t % 40) < 8).astype(float)
    for x in (mixed + 0.2 * rng.standard_normal(t.size),
              pulses + 0.05 * rng.standard_normal(t.size)):
        res = shape_change_points(x)
        assert res.change_points.size == 0, res
        assert "no split is significant" in res.explanation
        assert np.isfinite(res.profile).any()


def test_nan_gap_is_interpolated_and_counted() -> None:
    x, truth = sine_period_change(0)
    x[500:540] = np.nan
    res = shape_change_points(x)
    assert res.filled == 40
    assert f1_score(truth, res.change_points, margin=24)[0] == 1.0
    assert res.n_samples == x.size


def test_given_window_and_max_changes() -> None:
    x, _ = square_to_sawtooth(0)
    res = shape_change_points(x, window=25, max_changes=1)
    assert res.window == 25 and res.window_method == "given"
    assert len(res.change_points) == 1
    none = shape_change_points(x, max_changes=0)
    assert none.change_points.size == 0 and "max_changes" in none.explanation


def test_constant_and_short_series_give_no_change() -> None:
    flat = shape_change_points(np.full(500, 3.5))
    assert flat.change_points.size == 0 and "constant" in flat.explanation
    short = shape_change_points(np.sin(np.arange(30.0)))
    assert short.change_points.size == 0 and "too short" in short.explanation
    two_windows = shape_change_points(np.sin(np.arange(100.0)), window=20)
    assert two_windows.change_points.size == 0 and "too short" in two_windows.explanation


def test_result_round_trips_through_dict() -> None:
    x, _ = square_to_sawtooth(1)
    res = shape_change_points(x)
    back = ShapeSegmentation.from_dict(res.to_dict())
    assert back.change_points.tolist() == res.change_points.tolist()
    assert back.window == res.window and back.explanation == res.explanation
    np.testing.assert_array_equal(back.scores, res.scores)
    np.testing.assert_array_equal(np.isnan(back.profile), np.isnan(res.profile))
    assert res.segments()[0][0] == 0 and res.segments()[-1][1] == x.size
    assert res.n_segments == len(res.change_points) + 1


# --- real series: TSSB (BSD-3, tests/data/tssb/README.md) ---------------------------------------
def tssb_series() -> list[tuple[str, np.ndarray, list[int]]]:
    out = []
    for line in (TSSB / "desc.txt").read_text().split():
        name, _window_hint, *cps = line.split(",")
        out.append((name, np.loadtxt(TSSB / f"{name}.txt"), [int(c) for c in cps]))
    return out


def test_tssb_series() -> None:
    f1s, covers = [], []
    for name, x, truth in tssb_series():
        res = shape_change_points(x)  # the window is found, the hint in desc.txt not used
        s = score_segmentation(truth, res.change_points, len(x), margin=int(0.01 * len(x)))
        f1s.append(s.f1)
        covers.append(s.covering)
        assert s.covering >= 0.75, (name, res.change_points, truth)
    assert np.mean(f1s) >= 0.85 and np.mean(covers) >= 0.9, (f1s, covers)


# --- bad inputs ----------------------------------------------------------------------------
@pytest.mark.parametrize("x", [np.ones((100, 2)), np.ones((4, 5, 6)), ["a", "b"]])
def test_bad_series_is_an_input_error(x) -> None:
    with pytest.raises(InputError):
        shape_change_points(x)


def test_non_finite_series_is_an_input_error() -> None:
    with pytest.raises(InputError, match="all NaN"):
        shape_change_points(np.full(100, np.nan))
    x = np.sin(np.arange(200.0))
    x[7] = np.inf
    with pytest.raises(InputError, match="sample 7"):
        shape_change_points(x)


@pytest.mark.parametrize("kwargs", [{"window": 2}, {"window": 4.5}, {"window": True},
                                    {"max_changes": -1}, {"max_changes": 1.5},
                                    {"threshold": 0.0}, {"threshold": 2.0},
                                    {"exact_up_to": 10}, {"exact_up_to": 1e5},
                                    {"exact_up_to": True}, {"full_resolution_up_to": 79},
                                    {"full_resolution_up_to": 2.5e6}])
def test_bad_parameters_are_usage_errors(kwargs) -> None:
    with pytest.raises(UsageError):
        shape_change_points(np.sin(np.arange(500.0)), **kwargs)


def test_one_column_input_is_accepted() -> None:
    x, truth = sine_period_change(1)
    res = shape_change_points(x[:, None])
    assert f1_score(truth, res.change_points, margin=24)[0] == 1.0


@pytest.mark.parametrize("seed, w, stride", [(0, 12, 1), (3, 29, 1), (1, 20, 3), (2, 12, 7)])
def test_shifted_matches_against_a_naive_scoring(seed: int, w: int, stride: int) -> None:
    """Every subsequence's k neighbours are the k nearest, by the z-normalized distance
    computed afresh, among its two anchors' matches shifted along the diagonals and one
    sample either way: the running dot products change none of them."""
    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.standard_normal(900))
    x[300:340] = 1.0                                     # flat subsequences too
    mu, sd, flat = shape._sliding_stats(x, w, stride)
    m, excl = mu.size, (w // 2) // stride
    q = max(1, excl // 2)
    anchors = np.arange(0, m, q)
    matches = rng.integers(0, m, (anchors.size, shape.ANCHOR_KEEP))
    matches[::7, -1] = -1                                # an anchor may keep fewer
    found = shape._shifted_matches(x, mu, sd, flat, w, stride, excl, q, matches, 3)

    def distance(i: int, j: int) -> float:
        if flat[i] or flat[j]:
            return 0.0 if flat[i] and flat[j] else 2.0 * w
        return float(znorm_distances(x, w, i * stride, np.array([j * stride]))[0])
    for i in range(m):
        a = i // q
        candidates = {int(c) + i - b * q + d for b in (a, a + 1) if b < anchors.size
                      for c in matches[b] if c >= 0 for d in (-1, 0, 1)}
        candidates = [j for j in candidates if 0 <= j < m and abs(j - i) > excl]
        expected = np.sort([distance(i, j) for j in candidates])[:3]
        got = np.sort([distance(i, int(j)) for j in found[i]])
        assert got[:expected.size] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("seed, w, stride, n", [(0, 12, 1, 900), (1, 20, 3, 900),
                                                (2, 12, 7, 900), (3, 16, 2, 4600)])
def test_neighbours_of_neighbours_against_a_naive_scoring(seed: int, w: int, stride: int,
                                                          n: int) -> None:
    """Every subsequence keeps the k nearest, by the z-normalized distance computed afresh,
    among its own neighbours and their neighbours, each one subsequence either way, never
    a trivial match: so it is never farther than before (the dot products running along a
    diagonal from one row to the next at strides 1, 2 and 3, afresh at 7; 2 300 rows span
    two blocks)."""
    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.standard_normal(n))
    x[300:340] = 1.0                                     # flat subsequences too
    mu, sd, flat = shape._sliding_stats(x, w, stride)
    m, excl = mu.size, (w // 2) // stride
    given = np.array([rng.choice([j for j in range(m) if abs(j - i) > excl], 3, replace=False)
                      for i in range(m)])
    offsets = rng.choice(np.arange(excl + 1, m // 2), 3, replace=False)
    along = (np.arange(m) // 40) % 2 == 0      # runs of rows whose neighbours share diagonals
    given[along] = (np.flatnonzero(along)[:, None] + offsets) % m
    found = shape._neighbours_of_neighbours(x, mu, sd, flat, w, stride, excl, given)

    def distance(i: int, j: int) -> float:
        if flat[i] or flat[j]:
            return 0.0 if flat[i] and flat[j] else 2.0 * w
        return float(znorm_distances(x, w, i * stride, np.array([j * stride]))[0])
    for i in range(m):
        candidates = {int(c) for c in given[i]} | {int(c) + d for j in given[i]
                                                   for c in given[j] for d in (-1, 0, 1)}
        candidates = [j for j in candidates if 0 <= j < m and abs(j - i) > excl]
        expected = np.sort([distance(i, j) for j in candidates])[:3]
        got = np.sort([distance(i, int(j)) for j in found[i]])
        assert len(set(found[i].tolist())) == 3
        assert got == pytest.approx(expected, abs=1e-6)
        assert got[-1] <= max(distance(i, int(j)) for j in given[i]) + 1e-9


@pytest.mark.parametrize("stride", [2, 5])
def test_strided_moments_match_numpy(stride: int) -> None:
    """The mean and standard deviation of each subsequence starting every ``stride``
    samples, summed on its own, are numpy's."""
    x = np.random.default_rng(stride).standard_normal(1001) * 3 + 7
    mu, sd, flat = shape._sliding_stats(x, 25, stride)
    windows = np.lib.stride_tricks.sliding_window_view(x, 25)[::stride]
    assert mu == pytest.approx(windows.mean(axis=1), rel=1e-12)
    assert sd == pytest.approx(windows.std(axis=1), rel=1e-9)
    assert not flat.any()
