"""DTW_2 and DBA kernels against the naive references (tests/naive.py)."""

from __future__ import annotations

import numpy as np
import pytest

import naive
from phasekit.distance import dtw as kernels
from phasekit.distance.vector import pairwise_squared_euclidean, squared_euclidean
from phasekit.periodicity.analyze import padded
from phasekit.periodicity.average import dba, medoid, wgss


def _series(rng: np.random.Generator, length: int, dims: int) -> np.ndarray:
    return np.cumsum(rng.normal(size=(length, dims)), axis=0)


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("band", [None, 0.1, 0.3])
def test_dtw2_matches_naive(dims: int, band: float | None) -> None:
    rng = np.random.default_rng(dims)
    for _ in range(12):
        n, m = rng.integers(3, 30, size=2)
        a, b = _series(rng, n, dims), _series(rng, m, dims)
        radius = kernels.band_radius(n, m, band)
        assert kernels.dtw2(a, b, radius) == pytest.approx(naive.dtw2(a, b, radius), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("band", [None, 0.05, 0.1, 0.5])
def test_dtw2_matches_naive_on_odd_even_and_unequal_lengths(band: float | None) -> None:
    # one dimension runs two rows at a time: odd and even n, bands that do not overlap from
    # one row to the next (m >> n) and that stay on one column for many rows (n >> m)
    rng = np.random.default_rng(17)
    shapes = [(1, 1), (1, 9), (9, 1), (2, 2), (2, 7), (3, 40), (40, 3), (5, 60), (60, 5),
              (7, 8), (8, 7), (31, 33), (33, 31), (50, 50)]
    for n, m in shapes:
        a, b = _series(rng, n, 1), _series(rng, m, 1)
        radius = kernels.band_radius(n, m, band)
        expected = naive.dtw2(a, b, radius)
        assert kernels.dtw2(a, b, radius) == pytest.approx(expected, rel=1e-9, abs=1e-9), (n, m)


def test_early_abandoning_matches_the_row_minima() -> None:
    # inf exactly when every cell of some row exceeds the cutoff, the exact value otherwise
    rng = np.random.default_rng(23)
    for _ in range(40):
        n, m = (int(v) for v in rng.integers(2, 25, size=2))
        a, b = _series(rng, n, 1), _series(rng, m, 1)
        radius = kernels.band_radius(n, m, 0.2)
        cost = naive.dtw2_matrix(a, b, radius)
        largest_row_min = max(min(row) for row in cost)
        for cutoff in (0.5 * largest_row_min, 0.999 * largest_row_min, 1.001 * largest_row_min):
            got = kernels.dtw2(a, b, radius, cutoff)
            if cutoff < largest_row_min:
                assert got == np.inf
            else:
                assert got == pytest.approx(cost[-1][-1], rel=1e-9)


def test_dtw2_is_sum_of_squared_distances_not_squared_dtw() -> None:
    a = np.array([[0.0], [0.0], [0.0]])
    b = np.array([[1.0], [1.0], [1.0]])
    assert kernels.dtw2(a, b, 3) == pytest.approx(3.0)  # DTW would be 3, DTW^2 would be 9


def test_batched_kernels_match_naive() -> None:
    rng = np.random.default_rng(7)
    lengths = rng.integers(10, 25, size=6)
    series = [_series(rng, int(n), 1) for n in lengths]
    X = np.zeros((6, lengths.max(), 1))
    for i, s in enumerate(series):
        X[i, :len(s)] = s
    matrix = kernels.dtw2_matrix(X, lengths, 0.2)
    for i in range(6):
        for j in range(6):
            if i == j:
                continue
            radius = kernels.band_radius(lengths[i], lengths[j], 0.2)
            assert matrix[i, j] == pytest.approx(naive.dtw2(series[i], series[j], radius), rel=1e-9)
    to_all = kernels.dtw2_to_all(series[0], X, lengths.astype(np.int64), 0.2)
    np.testing.assert_allclose(to_all, matrix[0], rtol=1e-9, atol=1e-9)


def test_early_abandoning_only_abandons_above_cutoff() -> None:
    rng = np.random.default_rng(3)
    a, b = _series(rng, 20, 1), _series(rng, 22, 1)
    exact = kernels.dtw2(a, b, 5)
    assert kernels.dtw2(a, b, 5, exact * 1.01) == pytest.approx(exact)
    assert kernels.dtw2(a, b, 5, exact * 0.1) == np.inf


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("average_length", [None, 13, 16, 30])  # odd, even, and longer than all
def test_dba_step_matches_naive(dims: int, average_length: int | None) -> None:
    rng = np.random.default_rng(11 + dims)
    lengths = rng.integers(12, 20, size=5)
    lengths[0] = 7  # far shorter than the average: the band moves several columns per row
    series = [_series(rng, int(n), dims) for n in lengths]
    X = np.zeros((5, lengths.max(), dims))
    for i, s in enumerate(series):
        X[i, :len(s)] = s
    average = series[2].copy() if average_length is None else _series(rng, average_length, dims)
    refined, total = kernels.dba_update(average, X, lengths.astype(np.int64), 0.25)
    radius_of = [kernels.band_radius(len(average), n, 0.25) for n in lengths]
    assert len(set(radius_of)) >= 1
    expected_total = sum(naive.dtw2(average, s, r) for s, r in zip(series, radius_of, strict=True))
    assert total == pytest.approx(expected_total, rel=1e-9)
    # the naive step uses one radius; build it per series the same way the kernel does
    sums = np.zeros_like(average)
    counts = np.zeros(len(average))
    for s, r in zip(series, radius_of, strict=True):
        step, _ = naive.dba_step(average, [s], r)
        _, contributions = _alignment_counts(average, s, r)
        sums += step * contributions[:, None]
        counts += contributions
    np.testing.assert_allclose(refined, sums / counts[:, None], rtol=1e-9, atol=1e-9)


def test_squared_euclidean_matches_naive() -> None:
    rng = np.random.default_rng(29)
    for n, m, width in [(1, 1, 1), (3, 5, 2), (7, 9, 13), (10, 10, 4)]:
        A, B = rng.normal(size=(n, width)), rng.normal(size=(m, width))
        np.testing.assert_allclose(squared_euclidean(A, B), naive.squared_euclidean(A, B),
                                   rtol=1e-12, atol=1e-12)
        # the one-triangle kernel gives the very same values as the general one
        np.testing.assert_array_equal(pairwise_squared_euclidean(A), squared_euclidean(A, A))


def _alignment_counts(average: np.ndarray, series: np.ndarray, radius: int) -> tuple[None, np.ndarray]:
    """How many points of ``series`` the naive DTW path aligns with each point of ``average``."""
    counts = np.zeros(len(average))
    for i, _ in naive.dtw2_path(average, series, radius):
        counts[i] += 1
    return None, counts


def test_dba_never_increases_wgss_and_starts_from_medoid() -> None:
    rng = np.random.default_rng(5)
    template = np.sin(np.linspace(0, 2 * np.pi, 40))
    lengths = rng.integers(37, 44, size=20)
    series = [np.interp(np.linspace(0, 1, n), np.linspace(0, 1, 40), template)
              + rng.normal(0, 0.1, n) for n in lengths]
    x = np.concatenate(series)[:, None]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    X = padded(x, starts, lengths)
    result = dba(X, lengths, band=0.1)
    assert all(b <= a + 1e-9 for a, b in zip(result.wgss_trace, result.wgss_trace[1:], strict=False))
    first = medoid(X, lengths, band=0.1)
    exact = kernels.dtw2_matrix(X, lengths, 0.1).sum(axis=1)
    assert first == int(np.argmin(exact))
    assert result.wgss == pytest.approx(wgss(result.pattern, X, lengths, band=0.1))
    # the average is closer to the template than an average instance is
    to_template = kernels.dtw2(result.pattern, template[:, None], 4)
    per_instance = np.mean([kernels.dtw2(s[:, None], template[:, None], 4) for s in series])
    assert to_template < per_instance
