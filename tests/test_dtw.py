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


def test_dba_of_a_sample_of_a_large_cluster_is_the_whole_clusters() -> None:
    """Above ``sample`` instances DBA averages evenly spaced ones: the average is about as
    close to the template as the whole cluster's (the two may differ in length, as their
    medoids do), its WGSS is within a few per cent and computed over every instance."""
    rng = np.random.default_rng(8)
    template = np.sin(np.linspace(0, 2 * np.pi, 40)) + 0.3 * np.sin(np.linspace(0, 6, 40))
    lengths = rng.integers(37, 44, size=400)
    series = [np.interp(np.linspace(0, 1, n), np.linspace(0, 1, 40), template)
              + rng.normal(0, 0.1, n) for n in lengths]
    x = np.concatenate(series)[:, None]
    X = padded(x, np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    whole = dba(X, lengths, band=0.1)
    sampled = dba(X, lengths, band=0.1, sample=100)
    assert sampled.wgss == pytest.approx(wgss(sampled.pattern, X, lengths, band=0.1))
    assert sampled.wgss == pytest.approx(whole.wgss, rel=0.03)
    to_template = [kernels.dtw2(a.pattern, template[:, None], 4) for a in (sampled, whole)]
    per_instance = np.mean([kernels.dtw2(s[:, None], template[:, None], 4) for s in series])
    assert to_template[0] < min(1.5 * to_template[1], 0.5 * per_instance)
    assert sampled.wgss_trace[-1] == pytest.approx(whole.wgss, rel=0.05)
    evenly = np.unique(np.linspace(0, 399, 100).round().astype(int))
    np.testing.assert_array_equal(sampled.pattern,
                                  dba(X[evenly], lengths[evenly], band=0.1).pattern)


# --- edge cases of the C kernels ---------------------------------------------------------
def _padded(series: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.array([len(s) for s in series], np.int64)
    X = np.zeros((len(series), lengths.max(), series[0].shape[1]))
    for i, s in enumerate(series):
        X[i, :len(s)] = s
    return X, lengths


@pytest.mark.parametrize("dims", [1, 3])
def test_length_one_series(dims: int) -> None:
    rng = np.random.default_rng(41)
    for n, m in [(1, 1), (1, 6), (6, 1), (1, 9)]:
        a, b = _series(rng, n, dims), _series(rng, m, dims)
        for radius in (0, 1, 5):
            expected, sums, counts = naive.path_sums(a, b, radius)
            assert kernels.dtw2(a, b, radius) == pytest.approx(expected, rel=1e-12)
            got_sums, got_counts = np.zeros((n, dims)), np.zeros(n)
            total = kernels.dtw2_path_accumulate(a, b, radius, got_sums, got_counts)
            assert total == pytest.approx(expected, rel=1e-12)
            np.testing.assert_allclose(got_sums, sums, rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(got_counts, counts)


def test_band_without_a_path_gives_inf_and_adds_nothing() -> None:
    # radius 0 keeps the cells on the diagonal line only: with 3 x 4 row 1 has none, and with
    # 3 x 5 the rows' single cells (0, 0), (1, 2), (2, 4) are not adjacent
    rng = np.random.default_rng(43)
    for n, m in [(3, 4), (3, 5), (9, 12), (13, 7)]:
        a, b = _series(rng, n, 2), _series(rng, m, 2)
        assert naive.dtw2(a, b, 0) == np.inf
        assert kernels.dtw2(a, b, 0) == np.inf
        sums, counts = np.zeros((n, 2)), np.zeros(n)
        assert kernels.dtw2_path_accumulate(a, b, 0, sums, counts) == np.inf
        assert not sums.any() and not counts.any()
        assert kernels.dtw2(a, b, -3) == np.inf
    # on equal lengths radius 0 is the squared Euclidean distance
    a, b = _series(rng, 10, 2), _series(rng, 10, 2)
    assert kernels.dtw2(a, b, 0) == pytest.approx(float(((a - b) ** 2).sum()), rel=1e-12)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("radius", [1, 2, 4, 100])
def test_path_accumulate_matches_naive(dims: int, radius: int) -> None:
    # four rows at a time with their cells kept, then one at a time: every n mod 4, n < m and
    # n > m, bands that move several columns per row
    rng = np.random.default_rng(47 + dims)
    for n, m in [(2, 3), (4, 4), (5, 17), (6, 2), (7, 30), (8, 8), (11, 5), (21, 19), (30, 7)]:
        a, b = _series(rng, n, dims), _series(rng, m, dims)
        expected, sums, counts = naive.path_sums(a, b, radius)
        got_sums, got_counts = np.zeros((n, dims)), np.zeros(n)
        total = kernels.dtw2_path_accumulate(a, b, radius, got_sums, got_counts)
        assert total == pytest.approx(expected, rel=1e-12), (n, m)
        np.testing.assert_allclose(got_sums, sums, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(got_counts, counts)


def test_path_accumulate_breaks_ties_like_the_naive_path() -> None:
    # integer series: many equal costs, where the order diagonal, up, left decides
    rng = np.random.default_rng(53)
    for _ in range(30):
        n, m = (int(v) for v in rng.integers(2, 14, size=2))
        a = rng.integers(0, 3, size=(n, 1)).astype(float)
        b = rng.integers(0, 3, size=(m, 1)).astype(float)
        _, sums, counts = naive.path_sums(a, b, 3)
        got_sums, got_counts = np.zeros((n, 1)), np.zeros(n)
        kernels.dtw2_path_accumulate(a, b, 3, got_sums, got_counts)
        np.testing.assert_array_equal(got_sums, sums)
        np.testing.assert_array_equal(got_counts, counts)


@pytest.mark.parametrize("dims", [1, 3])
@pytest.mark.parametrize("band", [None, 0.1, 0.3])
def test_batched_kernels_on_unequal_lengths_match_naive(dims: int, band: float | None) -> None:
    rng = np.random.default_rng(59 + dims)
    series = [_series(rng, int(n), dims) for n in [1, 5, 12, 17, 23, 9]]
    X, lengths = _padded(series)
    radius = [[kernels.band_radius(len(s), len(t), band) for t in series] for s in series]
    expected = np.array([[naive.dtw2(s, t, radius[i][j]) if i != j else 0.0
                          for j, t in enumerate(series)] for i, s in enumerate(series)])
    np.testing.assert_allclose(kernels.dtw2_matrix(X, lengths, band), expected, rtol=1e-12)
    kernel_band = kernels.as_band(band)
    left, right = np.array([0, 5, 3, 2], np.int64), np.array([4, 1, 3, 0], np.int64)
    np.testing.assert_allclose(kernels.dtw2_pairs(X, lengths, left, right, kernel_band),
                               expected[left, right], rtol=1e-12)
    query = _series(rng, 14, dims)
    to_all = [naive.dtw2(query, s, kernels.band_radius(14, len(s), band)) for s in series]
    np.testing.assert_allclose(kernels.dtw2_to_all(query, X, lengths, kernel_band), to_all,
                               rtol=1e-12)
    refined, total = kernels.dba_update(query, X, lengths, kernel_band)
    sums, counts = np.zeros_like(query), np.zeros(14)
    for s in series:
        _, s_sums, s_counts = naive.path_sums(query, s, kernels.band_radius(14, len(s), band))
        sums += s_sums
        counts += s_counts
    assert total == pytest.approx(sum(to_all), rel=1e-12)
    np.testing.assert_allclose(refined, sums / counts[:, None], rtol=1e-12)


def test_results_do_not_depend_on_the_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    import phasekit.parallel

    rng = np.random.default_rng(61)
    X, lengths = _padded([_series(rng, int(n), 2) for n in rng.integers(20, 40, size=30)])
    Y = rng.normal(size=(150, 9))
    avg = X[0, :lengths[0]]

    def run() -> list[np.ndarray]:
        refined, total = kernels.dba_update(avg, X, lengths, 0.1)
        return [kernels.dtw2_matrix(X, lengths, 0.1), kernels.dtw2_to_all(avg, X, lengths, 0.1),
                refined, np.array(total), pairwise_squared_euclidean(Y),
                squared_euclidean(Y[:11], Y)]

    results = []
    for threads in (1, 3):
        monkeypatch.setattr(phasekit.parallel, "worker_threads", lambda threads=threads: threads)
        results.append(run())
    for one, several in zip(*results, strict=True):
        np.testing.assert_array_equal(one, several)


def test_pairwise_squared_euclidean_over_several_tiles() -> None:
    rng = np.random.default_rng(67)
    for n in (2, 63, 64, 65, 130, 131):
        Y = rng.normal(size=(n, 3))
        full = pairwise_squared_euclidean(Y)
        np.testing.assert_array_equal(full, squared_euclidean(Y, Y))
        np.testing.assert_array_equal(full, full.T)
    assert pairwise_squared_euclidean(np.empty((0, 4))).shape == (0, 0)
    assert squared_euclidean(np.empty((0, 4)), np.ones((5, 4))).shape == (0, 5)


def test_inputs_are_converted_and_checked() -> None:
    a = np.arange(12, dtype=np.int32).reshape(6, 2)[::-1]  # ints, not contiguous
    b = np.asfortranarray(np.ones((4, 2)))
    assert kernels.dtw2(a, b, 2) == pytest.approx(naive.dtw2(a.astype(float), b, 2))
    with pytest.raises(ValueError):
        kernels.dtw2(np.ones((3, 2)), np.ones((3, 1)), 1)  # dimensions differ
    with pytest.raises(ValueError):
        kernels.dtw2(np.ones((0, 1)), np.ones((3, 1)), 1)  # empty
    X = np.zeros((2, 5, 1))
    with pytest.raises(ValueError):
        kernels.dtw2_to_all(np.ones((3, 1)), X, np.array([5, 6]), 0.1)  # longer than X holds
    with pytest.raises(ValueError):
        kernels.dtw2_pairs(X, np.array([5, 5]), np.array([0]), np.array([2]), 0.1)
    with pytest.raises(ValueError):
        squared_euclidean(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(TypeError):  # the sums are updated in place: no silent copy
        kernels.dtw2_path_accumulate(np.ones((3, 1)), np.ones((3, 1)), 1,
                                     np.zeros((3, 1), np.float32), np.zeros(3))


def test_importing_the_kernels_loads_no_numba() -> None:
    import subprocess
    import sys

    code = ("import sys, numpy as np; from phasekit.distance import dtw2_matrix;"
            "dtw2_matrix(np.ones((3, 4, 1)), np.array([4, 3, 2]), 0.1);"
            "print('numba' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
