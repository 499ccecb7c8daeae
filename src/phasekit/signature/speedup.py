"""Speed-up model of multi-threaded runs (Salinas Hilburg 2020, section 2.2, eqs. 2.3-2.4).

The signature is run single-threaded; a speed-up model scales its energy to S threads:
``E_S = E_1 / S_hat`` (2.3) with ``S_hat = S`` for ``S <= c`` cores and ``S_hat = beta0 +
sum_i C_i,ac beta_i + S beta_{l+1}`` for ``c < S <= h`` hardware threads (2.4), ``C_i,ac`` the
accumulated counters of the single-threaded signature, fitted by partial least squares. The
thesis's features are clock cycles, instructions and LLC misses (C1, C2, C3) and its
coefficients beta = 2.78, 1.02e-11, -4.34e-12, -3.02e-10, 0.18 (Table 2.2; 6 cores, 12
hardware threads): :data:`THESIS_SPEEDUP`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from phasekit.errors import InputError, UsageError
from phasekit.results import check_version, plain
from phasekit.signature.powermodels import errors, fit_pls
from phasekit.signature.powermodels.features import as_frame, numeric_column

__all__ = ["THESIS_SPEEDUP", "SpeedupModel", "fit_speedup", "scale_energy"]

VERSION = 1


@dataclass(frozen=True)
class SpeedupModel:
    """Eq. 2.4: linear (``S_hat = S``) up to ``cores`` threads, above it ``intercept +
    sum(coefficients * counters) + threads_coefficient * S`` up to ``hw_threads``.

    Follows the power-model protocol: ``predict(X)`` reads the ``counters`` columns and the
    thread count column ``threads``; ``features`` names them.
    """

    cores: int
    hw_threads: int
    counters: tuple[str, ...]
    intercept: float
    coefficients: tuple[float, ...]
    threads_coefficient: float
    threads: str = "threads"
    n_components: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= self.cores <= self.hw_threads:
            raise UsageError(f"cores = {self.cores}, hw_threads = {self.hw_threads}: expected "
                             "1 <= cores <= hw_threads")
        if len(self.coefficients) != len(self.counters):
            raise UsageError("one coefficient per counter expected")

    @property
    def features(self) -> tuple[str, ...]:
        return (*self.counters, self.threads)

    def predict(self, X: pd.DataFrame, *, source: str | None = None) -> np.ndarray:
        """Estimated speed-up per row (eq. 2.4); a thread count outside 1..hw_threads is an
        InputError naming the column."""
        X = as_frame(X)
        s = numeric_column(X, self.threads, source)
        if ((s < 1) | (s > self.hw_threads)).any():
            bad = s[(s < 1) | (s > self.hw_threads)][0]
            raise InputError(f"{bad:g} threads: the model covers 1..{self.hw_threads} "
                             "(eq. 2.4)", path=source, column=self.threads)
        out = s.astype(float).copy()
        above = s > self.cores
        if above.any():
            counters = np.column_stack([numeric_column(X, c, source) for c in self.counters])
            model = (self.intercept + counters @ np.asarray(self.coefficients, float)
                     + self.threads_coefficient * s)
            out[above] = model[above]
        return out

    def speedup(self, counters: Mapping[str, float], threads: int) -> float:
        """S_hat for one signature's accumulated ``counters`` run on ``threads`` threads."""
        row = {c: [float(counters[c])] for c in self.counters}
        row[self.threads] = [threads]
        return float(self.predict(pd.DataFrame(row))[0])

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "speedup_model", "version": VERSION, "cores": self.cores,
                      "hw_threads": self.hw_threads, "counters": list(self.counters),
                      "threads": self.threads, "intercept": self.intercept,
                      "coefficients": list(self.coefficients),
                      "threads_coefficient": self.threads_coefficient,
                      "n_components": self.n_components, "meta": dict(self.meta)})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> SpeedupModel:
        check_version(data, "speedup_model", VERSION, source)
        try:
            n = data.get("n_components")
            return SpeedupModel(
                cores=int(data["cores"]), hw_threads=int(data["hw_threads"]),
                counters=tuple(str(c) for c in data["counters"]),
                intercept=float(data["intercept"]),
                coefficients=tuple(float(c) for c in data["coefficients"]),
                threads_coefficient=float(data["threads_coefficient"]),
                threads=str(data.get("threads", "threads")),
                n_components=None if n is None else int(n), meta=dict(data.get("meta") or {}))
        except (KeyError, TypeError, ValueError, UsageError) as exc:
            raise InputError(f"malformed speedup_model: {exc}", path=source) from None


#: The thesis's model (Table 2.2): 6 cores, 12 hardware threads, features C1, C2, C3.
THESIS_SPEEDUP = SpeedupModel(cores=6, hw_threads=12, counters=("C1", "C2", "C3"),
                              intercept=2.78, coefficients=(1.02e-11, -4.34e-12, -3.02e-10),
                              threads_coefficient=0.18, meta={"source": "Salinas Hilburg 2020, Table 2.2"})


def fit_speedup(table: pd.DataFrame, *, cores: int, hw_threads: int | None = None,
                counters: Sequence[str] = ("C1", "C2", "C3"), threads: str = "threads",
                speedup: str = "speedup", n_components: int | None = None,
                seed: int = 0) -> SpeedupModel:
    """Fit eq. 2.4 by partial least squares on the rows with ``cores < threads`` (section
    2.2: runs of benchmarks with c+1 .. h threads); rows with fewer threads are the linear
    part and not fitted. ``hw_threads`` default: the largest thread count in ``table``.
    ``n_components`` default: chosen by cross-validation (:func:`fit_pls`)."""
    table = as_frame(table, "table")
    s = numeric_column(table, threads, None)
    measured = numeric_column(table, speedup, None)
    h = int(hw_threads if hw_threads is not None else s.max())
    if not 1 <= cores < h:
        raise UsageError(f"cores = {cores}, hw_threads = {h}: expected 1 <= cores < "
                         "hw_threads (nothing to fit above the core count otherwise)")
    above = (s > cores) & (s <= h)
    features = (*counters, threads)
    if above.sum() < len(features) + 2:
        raise InputError(f"{int(above.sum())} runs with {cores} < threads <= {h}: too few to "
                         "fit eq. 2.4")
    rows = table.loc[above]
    pls = fit_pls(rows, measured[above], features=features, select="none",
                  n_components=n_components, seed=seed)
    coef = dict(zip(pls.features, pls.coefficients, strict=True))
    model = SpeedupModel(cores=cores, hw_threads=h, counters=tuple(counters),
                         intercept=pls.intercept,
                         coefficients=tuple(coef[c] for c in counters),
                         threads_coefficient=coef[threads], threads=threads,
                         n_components=pls.n_components)
    fitted = model.predict(rows)
    return replace(model, meta={"n_fit": int(above.sum()),
                                "rmse": errors(fitted, measured[above])["rmse"]})


def scale_energy(energy_1: Any, speedup: Any) -> np.ndarray | float:
    """Eq. 2.3: the energy of the multi-threaded run, ``E_S = E_1 / S_hat``."""
    s = np.asarray(speedup, float)
    if not (np.isfinite(s).all() and (s > 0).all()):
        raise UsageError("speed-up must be positive and finite")
    out = np.asarray(energy_1, float) / s
    return float(out) if out.ndim == 0 else out
