"""Choosing configurations with a fitted energy model (seed 002, section 4.12).

For an input N the model predicts time, power and energy over the grid of the machine's
frequencies x core counts; :func:`choose` takes the minimum-energy configuration, optionally
under limits (a time budget, at most so many cores, a frequency range), the thesis's
"evaluate E over the grid, constrained, take the minimum". The thesis minimizes with
Newton-CG over continuous (f, p); a machine offers discrete settings, so the grid minimum is
the answer and exact for them, and the continuous minimum over f at the chosen core count
(bounded scalar minimization) is reported beside it: for the seed's model at fixed p it is
f* = (c3 / (2 c1 p))^(1/3) clipped to the range (:func:`phasekit.energy.models.
optimal_frequency`).

- Pareto frontier: the grid points no other point beats in both time and energy (the thesis's
  energy-time analysis, section 4.12), fastest first.
- Baseline (eq. 4.24): Linux's ondemand governor under load runs at the maximum frequency; the
  core count is the user's. Without a user's count, as the thesis: the worst, a random
  (expected over the core counts) and the best core count at the maximum frequency. Savings =
  (E_baseline - E_chosen) / E_baseline in percent. Predicted from the model always; measured
  too when the campaign measured every configuration involved (the thesis reports measured
  savings: 69.88 % worst, 12.04 % random, -14.06 % best).
- A campaign whose frequency was not controlled has one frequency, "as run"
  (:data:`phasekit.energy.fit.NOMINAL_FREQUENCY` in the model): the choice is over cores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from phasekit.energy.fit import NOMINAL_FREQUENCY, FittedModel
from phasekit.errors import UsageError
from phasekit.results import plain

__all__ = ["Candidate", "Choice", "ChoiceResult", "choose", "pareto_front"]

RESULT_VERSION = 1
BASELINE_POLICIES = ("worst", "random", "best")


@dataclass(frozen=True)
class Candidate:
    """One configuration with its predicted time (s), power (W) and energy (J), and the
    measured time and energy when the campaign ran it (NaN otherwise). ``frequency_ghz`` is
    NaN where the frequency was not controlled."""

    frequency_ghz: float
    cores: int
    time_s: float
    power_w: float
    energy_j: float
    measured_time_s: float = float("nan")
    measured_energy_j: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        return plain({"frequency_ghz": self.frequency_ghz, "cores": self.cores,
                      "time_s": self.time_s, "power_w": self.power_w, "energy_j": self.energy_j,
                      "measured_time_s": self.measured_time_s,
                      "measured_energy_j": self.measured_energy_j})


@dataclass(frozen=True)
class Choice:
    """The choice for one input. ``best`` is None when no configuration meets the limits
    (``reason`` says why). Savings map a baseline policy to percent (NaN when not
    available)."""

    input: float
    input_label: str
    best: Candidate | None
    reason: str = ""
    continuous_frequency_ghz: float = float("nan")
    pareto: tuple[Candidate, ...] = ()
    baseline: Mapping[str, float] = field(default_factory=dict)
    savings_predicted: Mapping[str, float] = field(default_factory=dict)
    savings_measured: Mapping[str, float] = field(default_factory=dict)
    feasible: int = 0
    extrapolated: bool = False
    #: Every configuration within the limits, predicted (for the figure; not in to_dict).
    evaluated: tuple[Candidate, ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "input": self.input, "input_label": self.input_label,
            "best": None if self.best is None else self.best.to_dict(), "reason": self.reason,
            "continuous_frequency_ghz": self.continuous_frequency_ghz,
            "feasible": self.feasible, "extrapolated": self.extrapolated,
            "baseline_energy_j": dict(self.baseline),
            "savings_predicted": dict(self.savings_predicted),
            "savings_measured": dict(self.savings_measured),
            "pareto": [c.to_dict() for c in self.pareto]})


@dataclass(frozen=True)
class ChoiceResult:
    """Choices for every input asked, with the model, the grid and the limits used."""

    model: str
    params: Mapping[str, float]
    choices: tuple[Choice, ...]
    frequencies_ghz: tuple[float, ...]
    cores: tuple[int, ...]
    limits: Mapping[str, float | None]
    user_cores: int | None
    frequency_controlled: bool = True

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "kind": "energy_choice", "version": RESULT_VERSION, "model": self.model,
            "params": dict(self.params), "frequency_controlled": self.frequency_controlled,
            "grid": {"frequencies_ghz": list(self.frequencies_ghz) if self.frequency_controlled
                     else [], "cores": list(self.cores)},
            "limits": dict(self.limits), "user_cores": self.user_cores,
            "baseline": "ondemand: maximum frequency at the user's core count"
                        + ("" if self.user_cores else " (worst, random, best over core counts)"),
            "choices": [c.to_dict() for c in self.choices]})


def pareto_front(time_s: np.ndarray, energy_j: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats in both time and energy, fastest first
    (seed 002, section 4.11). Of equal times the lower energy; of exact duplicates the first;
    points with a non-finite coordinate are never on it."""
    t, e = np.asarray(time_s, float), np.asarray(energy_j, float)
    finite = np.flatnonzero(np.isfinite(t) & np.isfinite(e))
    front = []
    lowest = np.inf
    for i in finite[np.lexsort((e[finite], t[finite]))]:  # hundreds of settings, not hot
        if e[i] < lowest:
            front.append(i)
            lowest = e[i]
    return np.asarray(front, dtype=int)


def _savings(baseline: float, chosen: float) -> float:
    return float(100.0 * (baseline - chosen) / baseline) if baseline > 0 else float("nan")


def _continuous_frequency(model: FittedModel, p: float, n: float, low: float,
                          high: float) -> float:
    from scipy.optimize import minimize_scalar

    if not high > low:
        return float(low)
    found = minimize_scalar(lambda f: float(model.predict_energy(f, p, n)),
                            bounds=(low, high), method="bounded",
                            options={"xatol": 1e-6 * high})
    return float(found.x)


def _key(n: float, f: float, p: float) -> tuple[float, float, int]:
    return (round(float(n), 9), round(float(f), 9), int(p))


def _candidate(grid: tuple[np.ndarray, ...], i: int, measured: tuple[float, float] | None,
               frequency_controlled: bool) -> Candidate:
    F, P, t, w, e = grid
    meas_t, meas_e = measured or (float("nan"), float("nan"))
    return Candidate(float(F[i]) if frequency_controlled else float("nan"), int(P[i]),
                     float(t[i]), float(w[i]), float(e[i]), meas_t, meas_e)


def choose(model: FittedModel, inputs: Sequence[float], *, frequencies_ghz: Sequence[float],
           cores: Sequence[int], max_time_s: float | None = None, max_cores: int | None = None,
           min_frequency_ghz: float | None = None, max_frequency_ghz: float | None = None,
           user_cores: int | None = None, measured: pd.DataFrame | None = None,
           labels: Mapping[float, str] | None = None, frequency_controlled: bool = True,
           known_inputs: Sequence[float] = ()) -> ChoiceResult:
    """The minimum-energy configuration for each input (module docstring).

    ``frequencies_ghz`` x ``cores`` is the grid (the machine's settings); ``measured`` is a
    table of :func:`phasekit.energy.fit.configurations` whose energies and times are attached
    to the candidates it contains. ``known_inputs`` are those the model was fitted on (others
    are marked extrapolated).
    """
    freqs = np.unique(np.asarray(frequencies_ghz if frequency_controlled
                                 else [NOMINAL_FREQUENCY], float))
    core_counts = np.unique(np.asarray(cores, int))
    if freqs.size == 0 or core_counts.size == 0 or np.any(freqs <= 0) or np.any(core_counts < 1):
        raise UsageError("the grid needs positive frequencies and core counts >= 1")
    if user_cores is not None and user_cores not in core_counts:
        raise UsageError(f"--user-cores {user_cores}: not among the core counts "
                         f"{', '.join(map(str, core_counts))}")
    allowed_f = freqs
    if frequency_controlled:
        allowed_f = freqs[(freqs >= (min_frequency_ghz or 0.0))
                          & (freqs <= (max_frequency_ghz or np.inf))]
    allowed_p = core_counts[core_counts <= (max_cores or np.inf)]
    if allowed_f.size == 0 or allowed_p.size == 0:
        raise UsageError("the limits leave no frequency or no core count of the grid "
                         f"(frequencies {', '.join(f'{f:g}' for f in freqs)} GHz; cores "
                         f"{', '.join(map(str, core_counts))})")
    lookup: dict[tuple[float, float, int], tuple[float, float]] = {}
    if measured is not None:
        for row in measured.itertuples(index=False):
            f = row.frequency_ghz if np.isfinite(row.frequency_ghz) else NOMINAL_FREQUENCY
            lookup[_key(row.input, f, row.cores)] = (float(row.time_s), float(row.energy_j))
    fmax = float(freqs.max())
    choices = []
    for n in map(float, inputs):
        F, P = (a.ravel() for a in np.meshgrid(allowed_f, allowed_p, indexing="ij"))
        t = model.predict_time(F, P, n)
        w = model.predict_power(F, P)
        e = w * t

        def candidate(i: int, grid: tuple[np.ndarray, ...] = (F, P, t, w, e),
                      n: float = n) -> Candidate:
            return _candidate(grid, i, lookup.get(_key(n, grid[0][i], grid[1][i])),
                              frequency_controlled)

        ok = np.ones(F.size, bool) if max_time_s is None else t <= max_time_s
        label = (labels or {}).get(n, f"{n:g}")
        extrapolated = bool(known_inputs) and not np.any(np.isclose(known_inputs, n))
        base_p = core_counts if user_cores is None else np.array([user_cores])
        base_e = model.predict_energy(np.full(base_p.size, fmax), base_p, n)
        base_meas = np.array([lookup.get(_key(n, fmax, q), (np.nan,) * 2)[1] for q in base_p])
        if user_cores is not None:
            baseline = {"user": float(base_e[0])}
            baseline_meas = {"user": float(base_meas[0])}
        else:
            baseline = {"worst": float(base_e.max()), "random": float(base_e.mean()),
                        "best": float(base_e.min())}
            baseline_meas = {"worst": float(np.max(base_meas)),
                             "random": float(np.mean(base_meas)),
                             "best": float(np.min(base_meas))}
        if not ok.any():
            fastest = int(np.argmin(t))
            choices.append(Choice(
                n, label, None, reason=f"no configuration meets the time limit of "
                f"{max_time_s:g} s (fastest predicted: {t[fastest]:.4g} s at "
                + (f"{F[fastest]:g} GHz, " if frequency_controlled else "")
                + f"{P[fastest]} cores)", baseline=baseline, extrapolated=extrapolated))
            continue
        feasible = np.flatnonzero(ok)
        best_i = int(feasible[np.argmin(e[feasible])])
        best = candidate(best_i)
        front = feasible[pareto_front(t[feasible], e[feasible])]
        continuous = float("nan")
        if frequency_controlled:
            continuous = _continuous_frequency(model, best.cores, n, float(allowed_f.min()),
                                               float(allowed_f.max()))
        predicted = {k: _savings(v, best.energy_j) for k, v in baseline.items()}
        measured_savings = {k: _savings(v, best.measured_energy_j)
                            for k, v in baseline_meas.items()
                            if np.isfinite(v) and np.isfinite(best.measured_energy_j)}
        choices.append(Choice(
            n, label, best, continuous_frequency_ghz=continuous,
            pareto=tuple(candidate(int(i)) for i in front), baseline=baseline,
            savings_predicted=predicted, savings_measured=measured_savings,
            feasible=int(feasible.size), extrapolated=extrapolated,
            evaluated=tuple(candidate(int(i)) for i in feasible)))
    limits = {"max_time_s": max_time_s, "max_cores": max_cores,
              "min_frequency_ghz": min_frequency_ghz, "max_frequency_ghz": max_frequency_ghz}
    return ChoiceResult(model=model.model, params=dict(model.params), choices=tuple(choices),
                        frequencies_ghz=tuple(float(f) for f in freqs),
                        cores=tuple(int(p) for p in core_counts), limits=limits,
                        user_cores=user_cores, frequency_controlled=frequency_controlled)
