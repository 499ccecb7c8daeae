"""Energy models E(f, p, N) = P(f, p) T(f, p, N) (Silva 2024, chapter 4).

Units: f in GHz, p active cores, N the input size index (1..5 in the thesis), time in s,
power in W, energy in J.

``pt`` (P times T) — the thesis's model, six parameters (named ``seed`` in earlier versions; that name
is still accepted as an alias, :data:`MODEL_ALIASES`):

- power (4.14): P(f, p) = p (c1 f^3 + c2 f) + c3 (dynamic, leakage, static);
- time (4.20): T(f, p, N) = d1 N^d2 (p - w p + w) / (f p) (Amdahl with parallel fraction w);
- energy (4.22): E = P T.

``extended`` — beyond the thesis (our model): pt's power and a time law with
four changes, each reducing to pt's at its neutral value (m = d3 = k = 0, no deviation):

- T(f, p, N) = d1 N^d2 ((1 - w) N^-d3 + w / p + k (p - 1)) (m + (1 - m) / f) exp(delta_N).
- m in [0, 1]: the frequency-insensitive share of the time at 1 GHz (memory stalls, I/O: time a
  faster clock does not shorten; the classic CPU-bound/memory-bound split of DVFS models).
- d3 >= 0: the serial share shrinks with the input (Gustafson: larger inputs are more
  parallel; pt's Amdahl fraction w is fixed per program).
- k >= 0: a contention cost growing with the cores (the coherency term of Gunther's Universal
  Scalability Law), so that time can rise again past a bandwidth limit, which Amdahl's law
  cannot express.
- delta_N: a per-input deviation from the power law N^d2, learned from the training data of
  input N (penalized toward 0, :data:`phasekit.energy.fit.DEVIATION_PENALTY`; 0 for inputs
  not measured): the input law learned per program, since real inputs (PARSEC's) are not on a
  power law. Not a parameter of :class:`ModelSpec`: :class:`~phasekit.energy.fit.FittedModel`
  holds it.

Bounds are ours (the thesis gives none): d2 in [-4, 4], since an input's label need not grow
with its work (PaScal's x264 campaigns spend the most energy on input 1).

Identifiability (notes, section 2): from energy alone only the products of d1 with the power
parameters are determined; the fitters hold d1 = 1 then (:data:`ENERGY_ONLY_FIXED`), so that
c1..c3 are energies per unit of work, and fit time and energy together when time is measured.

:func:`optimal_frequency` is the pt model's minimum-energy frequency at fixed p: writing
E = d1 N^d2 (1 - w + w/p)(c1 p f^2 + c2 p + c3 / f), dE/df = 0 gives
f* = (c3 / (2 c1 p))^(1/3) (notes, section 2), independent of d1, d2, w and c2.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from phasekit.errors import UsageError

__all__ = [
    "ENERGY_ONLY_FIXED",
    "MODELS",
    "MODEL_ALIASES",
    "ModelSpec",
    "extended_log_time_gradient",
    "extended_time",
    "get_model",
    "model_name",
    "optimal_frequency",
    "pt_energy",
    "pt_log_time_gradient",
    "pt_power",
    "pt_time",
    "seed_energy",
    "seed_power",
    "seed_time",
]

ArrayLike = Any


def pt_power(f: ArrayLike, p: ArrayLike, c1: float, c2: float, c3: float) -> np.ndarray:
    """P(f, p) = p (c1 f^3 + c2 f) + c3 (Silva 2024, eq. 4.14)."""
    f, p = np.asarray(f, float), np.asarray(p, float)
    return p * (c1 * f**3 + c2 * f) + c3


def pt_time(f: ArrayLike, p: ArrayLike, n: ArrayLike, d1: float, d2: float,
              w: float) -> np.ndarray:
    """T(f, p, N) = d1 N^d2 (p - w p + w) / (f p) (Silva 2024, eq. 4.20)."""
    f, p, n = np.asarray(f, float), np.asarray(p, float), np.asarray(n, float)
    return d1 * n**d2 * (p - w * p + w) / (f * p)


def pt_energy(f: ArrayLike, p: ArrayLike, n: ArrayLike, c1: float, c2: float, c3: float,
                d1: float, d2: float, w: float) -> np.ndarray:
    """E(f, p, N) = P(f, p) T(f, p, N) (Silva 2024, eq. 4.22)."""
    return pt_power(f, p, c1, c2, c3) * pt_time(f, p, n, d1, d2, w)


def extended_time(f: ArrayLike, p: ArrayLike, n: ArrayLike, d1: float, d2: float, w: float,
                  d3: float, k: float, m: float) -> np.ndarray:
    """T = d1 N^d2 ((1 - w) N^-d3 + w/p + k (p - 1)) (m + (1 - m)/f) (our extension, above;
    without the per-input deviation)."""
    f, p, n = np.asarray(f, float), np.asarray(p, float), np.asarray(n, float)
    return (d1 * n**d2 * ((1.0 - w) * n ** (-d3) + w / p + k * (p - 1.0))
            * (m + (1.0 - m) / f))


def pt_log_time_gradient(f: ArrayLike, p: ArrayLike, n: ArrayLike, d1: float, d2: float,
                         w: float) -> dict[str, Any]:
    """d log T / d parameter of :func:`pt_time` (each broadcasting to the points' shape)."""
    p, n = np.asarray(p, float), np.asarray(n, float)     # the time is the same at every f
    return {"d1": 1.0 / d1, "d2": np.log(n), "w": (1.0 / p - 1.0) / (1.0 - w + w / p)}


def extended_log_time_gradient(f: ArrayLike, p: ArrayLike, n: ArrayLike, d1: float, d2: float,
                               w: float, d3: float, k: float, m: float) -> dict[str, Any]:
    """d log T / d parameter of :func:`extended_time` (each broadcasting to the points'
    shape)."""
    f, p, n = np.asarray(f, float), np.asarray(p, float), np.asarray(n, float)
    log_n = np.log(n)
    shrinking = n ** (-d3)
    share = (1.0 - w) * shrinking + w / p + k * (p - 1.0)
    return {"d1": 1.0 / d1, "d2": log_n, "w": (1.0 / p - shrinking) / share,
            "d3": (w - 1.0) * shrinking * log_n / share, "k": (p - 1.0) / share,
            "m": (1.0 - 1.0 / f) / (m + (1.0 - m) / f)}


def optimal_frequency(c1: float, c3: float, p: ArrayLike) -> np.ndarray | float:
    """The pt model's minimum-energy frequency at ``p`` cores: (c3 / (2 c1 p))^(1/3) GHz.

    Unconstrained (clip it to the machine's frequencies); infinite when c1 = 0.
    """
    p_arr = np.asarray(p, float)
    with np.errstate(divide="ignore"):
        value = np.cbrt(c3 / (2.0 * c1 * p_arr)) if c1 > 0 else np.full_like(p_arr, np.inf)
    return float(value) if np.ndim(value) == 0 else value


#: The functions' earlier names ("seed" named the thesis's model), kept for callers.
seed_power, seed_time, seed_energy = pt_power, pt_time, pt_energy


@dataclass(frozen=True)
class ModelSpec:
    """One model: its parameters (in order: c1, c2, c3 of the power, then the time's), bounds,
    and time and power functions.

    ``scale`` names the parameters that are positive scales (searched on a log scale by the
    multi-start); the others are bounded shapes (fractions, exponents).
    """

    name: str
    params: tuple[str, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    scale: tuple[str, ...]
    nominal: tuple[float, ...]
    description: str
    _time: Callable[..., np.ndarray]
    _log_time_gradient: Callable[..., dict[str, Any]]
    input_deviations: bool = False

    def values(self, theta: Mapping[str, float] | Sequence[float]) -> dict[str, float]:
        if isinstance(theta, Mapping):
            missing = [k for k in self.params if k not in theta]
            if missing:
                raise UsageError(f"model {self.name}: missing parameter(s) {', '.join(missing)}")
            return {k: float(theta[k]) for k in self.params}
        if len(theta) != len(self.params):
            raise UsageError(f"model {self.name} has {len(self.params)} parameters")
        return dict(zip(self.params, map(float, theta), strict=True))

    def power(self, theta: Mapping[str, float] | Sequence[float], f: ArrayLike,
              p: ArrayLike) -> np.ndarray:
        v = self.values(theta)
        return pt_power(f, p, v["c1"], v["c2"], v["c3"])

    def time(self, theta: Mapping[str, float] | Sequence[float], f: ArrayLike, p: ArrayLike,
             n: ArrayLike) -> np.ndarray:
        v = self.values(theta)
        return self._time(f, p, n, **{k: v[k] for k in self.params[3:]})

    def time_of(self, theta: Mapping[str, Any], f: ArrayLike, p: ArrayLike,
                n: ArrayLike) -> np.ndarray:
        """The time law with parameters as given (arrays broadcast: a batch of parameter
        vectors as columns of shape (k, 1) gives one row per vector)."""
        return self._time(f, p, n, **{k: theta[k] for k in self.params[3:]})

    def log_time_gradient(self, theta: Mapping[str, float], f: ArrayLike, p: ArrayLike,
                          n: ArrayLike) -> dict[str, Any]:
        """d log T / d parameter for each parameter of the time law, each broadcasting to
        the points' shape (the fit's analytic Jacobian)."""
        return self._log_time_gradient(f, p, n, **{k: theta[k] for k in self.params[3:]})

    def energy(self, theta: Mapping[str, float] | Sequence[float], f: ArrayLike, p: ArrayLike,
               n: ArrayLike) -> np.ndarray:
        return self.power(theta, f, p) * self.time(theta, f, p, n)


_INF = np.inf
MODELS: dict[str, ModelSpec] = {
    "pt": ModelSpec(
        name="pt",
        params=("c1", "c2", "c3", "d1", "d2", "w"),
        lower=(0.0, 0.0, 0.0, 1e-12, -4.0, 0.0),
        upper=(_INF, _INF, _INF, _INF, 4.0, 1.0),
        scale=("c1", "c2", "c3", "d1"),
        nominal=(0.3, 0.5, 90.0, 400.0, 1.2, 0.95),
        description="Silva 2024 eqs. 4.14-4.22: P = p(c1 f^3 + c2 f) + c3, "
                    "T = d1 N^d2 (p - w p + w)/(f p)",
        _time=pt_time, _log_time_gradient=pt_log_time_gradient),
    "extended": ModelSpec(
        name="extended",
        params=("c1", "c2", "c3", "d1", "d2", "w", "d3", "k", "m"),
        lower=(0.0, 0.0, 0.0, 1e-12, -4.0, 0.0, 0.0, 0.0, 0.0),
        upper=(_INF, _INF, _INF, _INF, 4.0, 1.0, 2.0, 0.1, 1.0),
        scale=("c1", "c2", "c3", "d1"),
        nominal=(0.3, 0.5, 90.0, 400.0, 1.2, 0.95, 0.3, 0.001, 0.3),
        description="pt's power; T = d1 N^d2 ((1 - w) N^-d3 + w/p + k (p - 1))(m + (1 - m)/f)"
                    " exp(delta_N): frequency-insensitive share, serial share shrinking with "
                    "the input, contention, per-input deviations",
        _time=extended_time, _log_time_gradient=extended_log_time_gradient,
        input_deviations=True),
}
#: Parameters held at 1 when only energy is measured (the time scale is not identifiable).
ENERGY_ONLY_FIXED: dict[str, float] = {"d1": 1.0}


#: Former model names still accepted wherever a model is named (and read from saved results):
#: "seed" named the thesis's model in earlier versions.
MODEL_ALIASES: dict[str, str] = {"seed": "pt"}


def model_name(name: str) -> str:
    """The current name of model ``name`` (an alias such as "seed" gives "pt"); UsageError
    listing the known models (current names only) otherwise."""
    name = MODEL_ALIASES.get(name, name)
    if name not in MODELS:
        raise UsageError(f"expected one of {', '.join(MODELS)}",
                         parameter="model", value=name)
    return name


def get_model(name: str) -> ModelSpec:
    """The model called ``name`` (or an alias, :data:`MODEL_ALIASES`); UsageError listing the
    known ones otherwise."""
    return MODELS[model_name(name)]
