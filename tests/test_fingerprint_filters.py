"""The fingerprint's median and Savitzky-Golay filters (NumPy, so that ``phasekit fingerprint``
does not import scipy.signal) against scipy.signal's ``medfilt`` and ``savgol_filter``
(mode "interp") on random series, windows and polynomial orders."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.signal import medfilt, savgol_filter

from phasekit.energy.fingerprint import _medfilt, _savgol_interp


def random_series(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    if kind == 0:
        return rng.normal(size=n)
    if kind == 1:  # positive, heavy-tailed, like counter ratios
        return rng.lognormal(3.0, 2.0, size=n)
    if kind == 2:  # a random walk at a random scale
        return np.cumsum(rng.normal(size=n)) * 10.0 ** rng.uniform(-6, 6)
    if kind == 3:  # many ties and zeros (non-negative: no -0.0)
        return rng.integers(0, 4, size=n).astype(np.float64)
    return np.where(rng.random(n) < 0.1, 50.0, 1.0) + rng.normal(scale=0.01, size=n)  # spikes


def test_medfilt_matches_scipy_bit_for_bit() -> None:
    rng = np.random.default_rng(20)
    for trial in range(400):
        n = int(rng.integers(1, 300))
        x = random_series(rng, n, trial % 5)
        kernel = 2 * int(rng.integers(0, (n + 1) // 2 + 3)) + 1  # up to a little over n
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # scipy: kernel larger than x
            expected = medfilt(x, kernel)
        got = _medfilt(x, kernel)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes(), (trial, n, kernel)


def test_medfilt_signed_zeros_equal_in_value() -> None:
    """With -0.0 in the series a zero median may carry the other sign than scipy's (the
    order of equal values is not defined); the values are equal."""
    rng = np.random.default_rng(21)
    for _ in range(100):
        x = np.round(rng.normal(scale=0.1, size=int(rng.integers(1, 40))), 1)
        kernel = min(2 * int(rng.integers(0, 8)) + 1, x.size if x.size % 2 else x.size - 1)
        np.testing.assert_array_equal(_medfilt(x, kernel), medfilt(x, kernel))


def test_savgol_interp_matches_scipy() -> None:
    """Within 1e-12 of the series' largest magnitude (bit for bit where numpy's and scipy's
    LAPACK give the same least-squares solutions, as on the machines we tried)."""
    rng = np.random.default_rng(22)
    cases = [(101, 11, 3)] * 20  # the fingerprint's defaults
    for _ in range(340):
        n = int(rng.integers(2, 400))
        window = int(rng.integers(2, min(n, 31) + 1))  # odd and even windows
        cases.append((n, window, int(rng.integers(0, min(window, 7)))))
    for _ in range(40):  # orders up to window - 1: near-identity filters
        window = int(rng.integers(2, 10))
        cases.append((int(rng.integers(window, 100)), window, int(rng.integers(0, window))))
    for trial, (n, window, order) in enumerate(cases):
        x = random_series(rng, n, trial % 5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # scipy: poorly conditioned fit
            expected = savgol_filter(x, window, order, mode="interp")
        got = _savgol_interp(x, window, order)
        assert got.shape == expected.shape
        scale = float(np.max(np.abs(x))) or 1.0
        assert np.max(np.abs(got - expected)) <= 1e-12 * scale, (trial, n, window, order)
