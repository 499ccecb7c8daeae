"""Gaussian-process Bayesian optimization with expected improvement: a baseline for choosing
the minimum-energy configuration of each input of a campaign, given the same start and the
same measurement budget as ``energy suggest`` + ``energy choose``.

- **Features**: frequency, log2(cores) and log(input), each scaled to [0, 1] over the
  campaign's grid.
- **Target**: log energy less a per-input offset, the mean of the measured log energies of
  that input (an input absent from the measurements gets the mean of the offsets). Inputs
  differ in energy by up to ~30x, mostly a shift in logarithms; a stationary GP would spend
  its signal variance and the input length scale on that shift, whereas without it the GP
  models the shape over frequency x cores and can lend it across inputs. The offsets are
  those of the real measurements at the start of a round (fixed within the round), so the
  per-input argmin of the posterior mean is unaffected by them.
- **Kernel**: ``ConstantKernel * Matern(nu=2.5)`` with one length scale per feature
  (bounds 0.05-20 on the unit cube) ``+ WhiteKernel`` (the reading noise), scikit-learn's
  GaussianProcessRegressor with ``normalize_y`` and :data:`RESTARTS` optimizer restarts,
  hyperparameters refitted once per round.
- **Acquisition**: expected improvement for minimization (Jones, Schonlau & Welch 1998,
  J. Global Optim. 13: 455-492) of each unmeasured configuration of the campaign against
  the incumbent of its own input (the lowest target, measured or believed, of that input:
  inputs differ in scale), with the latent (noise-free) posterior standard deviation and
  margin :data:`XI` (in log energy: 1 %).
- **Batch**: rounds of ``batch`` configurations by the kriging believer (Ginsbourger, Le
  Riche & Carraro 2010, "Kriging is well-suited to parallelize optimization", in
  Computational Intelligence in Expensive Optimization Problems, Springer, 131-162): after
  each pick, its posterior mean is added as a fake observation and the GP is conditioned
  on it with the round's hyperparameters, so the batch holds distinct points. Rounds are
  sequential, so the run to a budget of 20 holds those to 5, 10 and 15 as prefixes.
- **Recommendation** (:func:`bo_choice`): ``"measured"`` (default), per input, the lowest
  measured reading of that input, or the posterior-mean minimum over the input's grid
  when none is measured; ``"mean"``, the posterior-mean minimum over the input's whole grid
  (measured or not).

Row indices are positions in ``configs`` (as ``choose_training`` returns).
``benchmarks/energy_choose.py`` runs it on the real campaigns and scores it beside
``energy suggest``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from sklearn.gaussian_process import GaussianProcessRegressor

#: Expected-improvement margin, in log energy (our choice: 1 %).
XI = 0.01
#: Optimizer restarts of each hyperparameter fit (few, for speed).
RESTARTS = 2
LENGTH_SCALE_BOUNDS = (0.05, 20.0)
NOISE_BOUNDS = (1e-6, 1.0)
#: The recommendation rules of :func:`bo_choice`.
RULES = ("measured", "mean")


def features(configs: pd.DataFrame) -> np.ndarray:
    """(n, 3) frequency, log2(cores), log(input), each scaled to [0, 1] over ``configs``."""
    raw = np.column_stack([configs["frequency_ghz"].to_numpy(float),
                           np.log2(configs["cores"].to_numpy(float)),
                           np.log(configs["input"].to_numpy(float))])
    low, high = raw.min(axis=0), raw.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    return (raw - low) / span


def _offsets(levels: np.ndarray, logs: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Per-row offset: the mean measured log energy of the row's input (module docstring)."""
    means = {level: float(logs[measured][levels[measured] == level].mean())
             for level in np.unique(levels[measured])}
    fallback = float(np.mean(list(means.values())))
    return np.array([means.get(level, fallback) for level in levels])


def _fit(x: np.ndarray, y: np.ndarray, seed: int,
         kernel: object | None = None) -> GaussianProcessRegressor:
    """GP fitted on (x, y); with ``kernel`` (a fitted one) its hyperparameters are kept."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    if kernel is None:
        kernel = (ConstantKernel(1.0, (1e-3, 1e3))
                  * Matern(length_scale=np.full(x.shape[1], 0.5),
                           length_scale_bounds=LENGTH_SCALE_BOUNDS, nu=2.5)
                  + WhiteKernel(1e-2, NOISE_BOUNDS))
        gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=RESTARTS,
                                      random_state=seed)
    else:
        gp = GaussianProcessRegressor(kernel, normalize_y=True, optimizer=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp.fit(x, y)
    return gp


def _latent(gp: GaussianProcessRegressor, x: np.ndarray, y: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and latent (noise-free) standard deviation at ``x`` of ``gp``, fitted
    on targets ``y``: the fitted white noise, in ``y``'s units, is taken out."""
    mean, std = gp.predict(x, return_std=True)
    scale = float(np.std(y)) or 1.0  # normalize_y's scale
    noise = float(gp.kernel_.k2.noise_level) * scale**2
    return mean, np.sqrt(np.maximum(std**2 - noise, 1e-12))


def expected_improvement(mean: np.ndarray, std: np.ndarray, incumbent: np.ndarray,
                         xi: float = XI) -> np.ndarray:
    """Expected improvement below ``incumbent`` (per point) by more than ``xi``."""
    from scipy.stats import norm

    gain = incumbent - mean - xi
    z = gain / std
    return gain * norm.cdf(z) + std * norm.pdf(z)


def bo_run(configs: pd.DataFrame, start: np.ndarray, budget: int, *, batch: int = 5,
           seed: int = 0) -> np.ndarray:
    """Indices of the measured rows: ``start``, then ``budget`` more chosen in rounds of
    ``batch`` (the last one shorter when ``batch`` does not divide ``budget``) by expected
    improvement with the kriging believer (module docstring), in the order measured."""
    x = features(configs)
    logs = np.log(configs["energy_j"].to_numpy(float))
    levels = configs["input"].to_numpy(float)
    chosen = [int(i) for i in start]
    while len(chosen) < len(start) + budget:
        real = np.asarray(chosen)
        offset = _offsets(levels, logs, real)
        rows, targets = list(real), list(logs[real] - offset[real])
        kernel = None
        for _ in range(min(batch, len(start) + budget - len(chosen))):
            gp = _fit(x[rows], np.asarray(targets), seed, kernel)
            kernel = gp.kernel_
            candidates = np.setdiff1d(np.arange(len(configs)), rows)
            if candidates.size == 0:
                break
            mean, std = _latent(gp, x[candidates], np.asarray(targets))
            incumbent = {level: min(t for r, t in zip(rows, targets, strict=True)
                                    if levels[r] == level) for level in np.unique(levels[rows])}
            best = np.array([incumbent.get(level, np.inf) for level in levels[candidates]])
            ei = expected_improvement(mean, std, best)
            pick = int(np.argmax(ei))
            rows.append(int(candidates[pick]))
            targets.append(float(mean[pick]))  # the believer's fake observation
            chosen.append(int(candidates[pick]))
        if len(rows) == len(real):  # nothing left to measure
            break
    return np.asarray(chosen, dtype=int)


def bo_choice(configs: pd.DataFrame, measured: np.ndarray, *, recommend: str = "measured",
              seed: int = 0) -> dict[float, int]:
    """Per input, the row BO recommends after measuring ``measured``: ``"measured"``, the
    lowest measured reading of the input (the posterior-mean minimum over its grid when none
    is measured); ``"mean"``, the posterior-mean minimum over its whole grid."""
    if recommend not in RULES:
        raise ValueError(f"recommend: expected one of {', '.join(RULES)}, got {recommend!r}")
    measured = np.asarray(measured, dtype=int)
    energy = configs["energy_j"].to_numpy(float)
    levels = configs["input"].to_numpy(float)
    out: dict[float, int] = {}
    gp_mean: np.ndarray | None = None
    for level in np.unique(levels):
        mine = measured[levels[measured] == level]
        if recommend == "measured" and mine.size:
            out[float(level)] = int(mine[np.argmin(energy[mine])])
            continue
        if gp_mean is None:
            x, logs = features(configs), np.log(energy)
            offset = _offsets(levels, logs, measured)
            gp = _fit(x[measured], logs[measured] - offset[measured], seed)
            gp_mean = gp.predict(x)  # the offset is constant within an input
        grid = np.flatnonzero(levels == level)
        out[float(level)] = int(grid[np.argmin(gp_mean[grid])])
    return out
