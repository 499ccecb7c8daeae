"""Synthetic profiles with nested periodicities, and their truth (ours).

A run often repeats at more than one scale: an instrumented function every 14.6 s, and
inside it a 2.3 s sub-cycle six times over. :func:`generate_nested` builds such a profile:

- the **inner cycle**, a smooth random shape of ``inner_s`` seconds (plateaus and ramps),
  repeated ``repeats`` times (2..20) in each outer cycle;
- what makes the **outer cycle** distinguishable, ``outer``:

  - ``"phase"``: once per outer cycle a phase of a different level and shape lasting
    ``marker`` inner periods (the rest of the function: a setup, a reduction, I/O); the outer
    period is ``(repeats + marker) x inner``, not a multiple of it unless ``marker`` is an
    integer;
  - ``"envelope"``: no extra phase; the amplitude of the inner instances falls from 1 to
    ``1 - depth`` along each outer cycle and comes back at its start (a solver converging
    within a time step); the outer period is ``repeats x inner``, a multiple of it;
  - ``"none"``: the inner cycle only (a single-scale control: nothing repeats at a longer
    scale than the multiples of the inner period);

- an aperiodic ``lead`` share at the start (an initialization: a random walk of levels);
- ``noise``: Gaussian measurement noise, its standard deviation a share of the inner
  template's range;
- ``drift``: period jitter, every inner instance (and marker phase) lasting ``1 + N(0,
  drift)`` times its nominal length, so that the phase wanders along the run;
- ``gaps``: about that share of the samples missing (NaN), in runs of 0.2..1.5 inner
  periods.

The truth (:class:`NestedTruth`) holds the nominal inner and outer periods and every inner
and outer instance (sample indices, missing samples included).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.profile import Profile
from phasekit.synth.periodic import IPC_RANGE, kind_code

__all__ = ["NESTED_TRUTH_VERSION", "OUTER_KINDS", "NestedTruth", "generate_nested"]

NESTED_TRUTH_VERSION = 1
#: How the outer cycle shows (module docstring).
OUTER_KINDS = ("phase", "envelope", "none")
SPAN_DTYPE = np.dtype([("start", np.int64), ("length", np.int64)])
_INNER_LEVELS = (0.8, 2.2)  # IPC range of the inner template
_MARKER_LEVELS = (0.2, 0.6)  # IPC range of the marker phase: lower than the inner cycle
_GAP_SPAN = (0.2, 1.5)  # missing runs, in inner periods
_MIN_INNER = 8  # samples


@dataclass(frozen=True, eq=False)
class NestedTruth:
    """What :func:`generate_nested` planted.

    ``inner`` and ``outer`` are arrays of (start, length) sample spans in time order
    (``outer`` is empty for a single-scale control). ``inner_period`` and ``outer_period``
    are the nominal periods in samples (``outer_period`` 0 when there is no outer cycle).
    """

    inner: np.ndarray
    outer: np.ndarray
    inner_period: float
    outer_period: float
    n_samples: int
    period: float
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("inner", "outer"):
            spans = np.array(np.asarray(getattr(self, name)).ravel(), dtype=SPAN_DTYPE)
            spans.setflags(write=False)
            object.__setattr__(self, name, spans)
        object.__setattr__(self, "meta", dict(self.meta))

    @property
    def nested(self) -> bool:
        """Whether there is an outer cycle."""
        return self.outer_period > 0

    @property
    def ratio(self) -> float:
        """Outer period over inner period (0 without an outer cycle)."""
        return self.outer_period / self.inner_period if self.nested else 0.0

    @property
    def inner_period_s(self) -> float:
        return self.inner_period * self.period

    @property
    def outer_period_s(self) -> float:
        return self.outer_period * self.period

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, ``{"kind": "nested_truth", "version": 1, ...}``."""
        return {"kind": "nested_truth", "version": NESTED_TRUTH_VERSION,
                "n_samples": self.n_samples, "period": self.period,
                "inner_period": self.inner_period, "outer_period": self.outer_period,
                "inner": {k: self.inner[k].tolist() for k in ("start", "length")},
                "outer": {k: self.outer[k].tolist() for k in ("start", "length")},
                "meta": dict(self.meta)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NestedTruth:
        """Inverse of :meth:`to_dict`; :class:`InputError` on a malformed dict."""
        if not isinstance(data, Mapping) or data.get("version") != NESTED_TRUTH_VERSION:
            raise InputError(f"expected a nested truth of version {NESTED_TRUTH_VERSION}")
        try:
            spans = {}
            for name in ("inner", "outer"):
                raw = data[name]
                spans[name] = np.zeros(len(raw["start"]), SPAN_DTYPE)
                for k in ("start", "length"):
                    spans[name][k] = np.asarray(raw[k], np.int64)
            return cls(inner=spans["inner"], outer=spans["outer"],
                       inner_period=float(data["inner_period"]),
                       outer_period=float(data["outer_period"]),
                       n_samples=int(data["n_samples"]), period=float(data["period"]),
                       meta=dict(data.get("meta", {})))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed nested truth: {exc}") from None

    def __repr__(self) -> str:
        outer = f", outer {self.outer_period_s:.4g} s (x{self.ratio:.3g})" if self.nested else ""
        return (f"NestedTruth(inner {self.inner_period_s:.4g} s{outer}, "
                f"{self.inner.size} inner instances, {self.outer.size} outer)")


def _shape(rng: np.random.Generator, length: int, low: float, high: float) -> np.ndarray:
    """A smooth random shape of ``length`` samples in [low, high]: 4..7 segments, each a
    plateau or a ramp to a new level at least a quarter of the range away, then a 3-sample
    moving average (like the iterations of :mod:`phasekit.synth.periodic`)."""
    n_seg = int(min(rng.integers(4, 8), max(2, length // 3)))
    cuts = np.sort(rng.choice(np.arange(1, length), size=n_seg - 1, replace=False))
    bounds = np.concatenate([[0], cuts, [length]])
    span = high - low
    level = low + span * rng.uniform(0.2, 0.8)
    out = np.empty(length)
    for a, b in itertools.pairwise(bounds):
        new = level
        while abs(new - level) < 0.25 * span:
            new = low + span * rng.uniform(0.0, 1.0)
        out[a:b] = np.linspace(level, new, b - a) if rng.random() < 0.4 else new
        level = new
    return np.convolve(np.pad(out, 1, mode="edge"), np.ones(3) / 3, mode="valid")


def _resampled(template: np.ndarray, length: int) -> np.ndarray:
    return np.interp(np.linspace(0.0, template.size - 1.0, length), np.arange(template.size),
                     template)


def _lengths(rng: np.random.Generator, nominal: float, drift: float) -> int:
    return max(2, round(nominal * (1.0 + drift * rng.standard_normal())))


def _lead(rng: np.random.Generator, n: int) -> np.ndarray:
    """An aperiodic start: levels of random durations with a random walk on top."""
    if n == 0:
        return np.empty(0)
    durations = np.maximum(2, rng.geometric(1.0 / max(2.0, n / 6.0), size=n))
    levels = np.repeat(rng.uniform(*_INNER_LEVELS, size=durations.size), durations)[:n]
    walk = np.cumsum(rng.normal(0.0, 0.02, n))
    return levels + walk - walk.mean()


def _check(values: dict[str, Any]) -> None:
    """A :class:`UsageError` naming the first argument of :func:`generate_nested` out of range."""
    v = values
    rules = [
        ("outer", v["outer"] in OUTER_KINDS, f"expected one of {', '.join(OUTER_KINDS)}"),
        ("period", np.isfinite(v["period"]) and v["period"] > 0,
         "expected a positive number of seconds"),
        ("inner_s", np.isfinite(v["inner_s"]) and v["inner_s"] >= _MIN_INNER * v["period"],
         f"expected at least {_MIN_INNER} samples"),
        ("repeats", int(v["repeats"]) == v["repeats"] and 2 <= v["repeats"] <= 100,
         "expected 2..100"),
        ("marker", 0 < v["marker"] <= 10, "expected a share of the inner period in (0, 10]"),
        ("depth", 0 < v["depth"] < 1, "expected a value in (0, 1)"),
        ("noise", v["noise"] >= 0, "expected a value >= 0"),
        ("drift", 0 <= v["drift"] < 0.3, "expected a value in [0, 0.3)"),
        ("gaps", 0 <= v["gaps"] < 0.5, "expected a share in [0, 0.5)"),
        ("lead", 0 <= v["lead"] < 0.5, "expected a share in [0, 0.5)"),
        ("minutes", np.isfinite(v["minutes"]) and v["minutes"] > 0, "expected a positive number"),
        ("seed", int(v["seed"]) == v["seed"] and v["seed"] >= 0,
         "expected a non-negative integer"),
    ]
    for name, holds, expected in rules:
        if not holds:
            raise UsageError(expected, parameter=name, value=v[name])


def generate_nested(*, inner_s: float = 2.3, repeats: int = 6, marker: float = 0.37,
                    outer: str = "phase", depth: float = 0.6, noise: float = 0.05,
                    drift: float = 0.0, gaps: float = 0.0, lead: float = 0.03,
                    minutes: float = 6.0, period: float = 0.02, seed: int = 0
                    ) -> tuple[Profile, NestedTruth]:
    """An IPC profile with an inner cycle nested in an outer one, and its truth (module
    docstring).

    The defaults are a counter profile like a SPEC CPU run sampled every 20 ms for 6 minutes:
    a 2.3 s sub-cycle six times inside a 14.6 s function (6.37 inner periods). Same arguments,
    same profile.

    Parameters
    ----------
    inner_s
        The inner period, seconds.
    repeats
        Inner instances per outer cycle.
    marker
        ``outer="phase"``: the length of the distinct phase, in inner periods.
    outer
        ``"phase"``, ``"envelope"`` or ``"none"`` (a single-scale control).
    depth
        ``outer="envelope"``: the amplitude lost along an outer cycle.
    noise, drift, gaps, lead
        Noise (share of the inner range), period jitter (relative standard deviation),
        share of missing samples, share of the aperiodic start.
    minutes, period, seed
        Duration, sampling period (s) and random seed.
    """
    _check({"inner_s": inner_s, "repeats": repeats, "marker": marker, "outer": outer,
            "depth": depth, "noise": noise, "drift": drift, "gaps": gaps, "lead": lead,
            "minutes": minutes, "period": period, "seed": seed})
    rng = np.random.default_rng([int(seed), kind_code("nested"), kind_code(outer)])
    n = round(minutes * 60.0 / period)
    p = inner_s / period
    template = _shape(rng, round(p), *_INNER_LEVELS)
    template = template - template.mean()
    base = float(rng.uniform(1.0, 1.6))
    marker_shape = _shape(rng, max(4, round(marker * p)), *_MARKER_LEVELS)
    n_lead = round(lead * n)
    pieces: list[np.ndarray] = [_lead(rng, n_lead)]
    inner_spans: list[tuple[int, int]] = []
    outer_spans: list[tuple[int, int]] = []
    pos = n_lead
    nested = outer != "none"
    while pos < n:
        cycle_start = pos
        for j in range(repeats):
            length = _lengths(rng, p, drift)
            amplitude = 1.0 - depth * j / (repeats - 1) if outer == "envelope" else 1.0
            pieces.append(base + amplitude * _resampled(template, length))
            inner_spans.append((pos, length))
            pos += length
        if outer == "phase":
            length = _lengths(rng, marker * p, drift)
            pieces.append(_resampled(marker_shape, length))
            pos += length
        if nested:
            outer_spans.append((cycle_start, pos - cycle_start))
    signal = np.concatenate(pieces)[:n]
    signal = signal + rng.normal(0.0, noise * float(np.ptp(template)), n)
    np.clip(signal, *IPC_RANGE, out=signal)
    if gaps > 0:
        _punch_gaps(rng, signal, gaps, p)

    def whole(spans: list[tuple[int, int]]) -> np.ndarray:
        kept = [s for s in spans if s[0] + s[1] <= n]
        return np.array(kept, dtype=SPAN_DTYPE) if kept else np.zeros(0, SPAN_DTYPE)

    outer_period = (repeats + marker) * p if outer == "phase" else repeats * p
    meta = {"synth": "nested", "outer": outer, "repeats": int(repeats), "seed": int(seed),
            "noise": noise, "drift": drift, "gaps": gaps, "minutes": minutes}
    if outer == "phase":
        meta["marker"] = marker
    if outer == "envelope":
        meta["depth"] = depth
    truth = NestedTruth(inner=whole(inner_spans), outer=whole(outer_spans), inner_period=p,
                        outer_period=outer_period if nested else 0.0, n_samples=n,
                        period=period, meta=meta)
    profile = Profile(values=signal[:, None], period=period, metrics=("ipc",),
                      node=f"synth-nested-{outer}", meta=meta)
    return profile, truth


def _punch_gaps(rng: np.random.Generator, signal: np.ndarray, share: float, p: float) -> None:
    """Set about ``share`` of ``signal`` to NaN in runs of 0.2..1.5 inner periods."""
    n = signal.size
    missing = 0
    while missing < share * n:
        length = max(1, round(p * rng.uniform(*_GAP_SPAN)))
        at = int(rng.integers(0, max(1, n - length)))
        missing += int(np.isfinite(signal[at:at + length]).sum())
        signal[at:at + length] = np.nan
