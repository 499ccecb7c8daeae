"""Phase division: the minimum-energy configuration per phase of a run (Silva 2024, chapter 5).

The program is run once per power configuration (the thesis: 32 cores x 13 frequencies = 416,
IPMI power every 0.5 s); phases are fractions of execution in [0, 1], so that the same fraction
lines up across configurations (ch. 5.4: a configuration changes the speed only, switching is
free, phase energies are independent). The energy of a division is the sum over its phases of
the minimum over configurations of the phase's energy (ch. 5.6).

Integrators (ch. 5.5), each the difference of a per-configuration potential, so that a
segment's energy is ``cum[b] - cum[a]``:

- ``"zoh"``: the thesis's code transcribed exactly (notes section 3), lower_bound indices
  clamped to the last sample (our choice: the last reading is held past the end, the first
  before the start). Algebra shows it equals ``G(t2) - G(t1)`` with ``G(t) = F[v] - (T[v] - t)
  P[v]``, ``v = lower_bound(T, t)`` and ``F[v]`` the forward-hold integral up to sample v, so it
  is additive; but ``G`` jumps by ``(T[v+1] - T[v]) (P[v] - P[v+1])`` at each sample, so a short
  segment straddling a sample can get a negative energy, and an optimizer can gain up to about
  one sample interval times the power step per switch from this artefact (tested, documented).
- ``"trapezoid"``: power linearly interpolated between samples, held constant outside them:
  exact on piecewise-linear power, no artefact (the thesis's prose says "linear interpolation").

Optimizers, on a grid of G equal steps (breakpoints at k/G, k = 0..G; each phase at least one
step long):

- :func:`optimal_division`: the exact K-phase optimum by dynamic programming over (position,
  phases used), for every K up to the maximum in one pass (notes section 3, our addition).
  Segment costs are never stored: for each end j the column ``min_c cum[j, c] - cum[i, c]``
  (i < j) is computed (numba, G^2/2 x configs operations) and consumed at once, so memory is
  O(K G + G x configs).
- :func:`genetic_division`: the thesis's genetic algorithm (ch. 5.7; population 1000, 300
  generations, best 10 % kept, mutation 10 %, crossover takes half of the breakpoints from each
  parent, mutation moves one breakpoint). Choices the thesis leaves open, ours: breakpoints on
  the same grid as the DP (so the two are comparable and the DP is a lower bound); selection:
  both parents drawn uniformly from the kept elite (truncation selection), distinct when the
  elite has two or more; crossover: a random half (``floor((K-1)/2)``) of parent A's
  breakpoints, then parent B's in random order, skipping duplicates, then A's remaining ones
  if still short (repair: the child always has K-1 distinct breakpoints); mutation: with
  probability 0.1 per child, one random breakpoint moves to a uniformly random free grid
  position; minimum phase length one grid step; the initial population is uniformly random;
  the elite is not mutated; numba's seeded generator makes it reproducible. The objective is
  evaluated from a precomputed segment-cost table ((G+1)^2 float64: 8 MB at G = 1000).

Switch costs (our addition): each switch between consecutive phases adds ``switch_cost_j``
joules and ``switch_cost_s`` seconds; a K-phase division has K-1 switches (two adjacent phases
may pick the same configuration; with a positive switch cost such a division is never the
chosen one, since merging the two phases costs no more energy). The best number of phases is
the smallest K whose energy including switches is within 1e-9 (relative) of the minimum over
K = 1..max_phases.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numba import njit

from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io.pascal import (
    DEFAULT_KEYS,
    entry_number,
    input_order,
    key_values,
    parse_keys,
    power_sensor,
    power_series,
)
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.verbmodule import make_callable

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = [
    "INTEGRATORS",
    "METHODS",
    "RESULT_VERSION",
    "VERSION",
    "Division",
    "PhaseDivision",
    "PowerProfiles",
    "check_division",
    "cumulative_energy",
    "divide_phases",
    "division_energy",
    "genetic_division",
    "integrate",
    "optimal_division",
    "power_profiles_from_dict",
    "power_profiles_from_pascal",
    "segment_costs",
]

#: Version of the PowerProfiles JSON layout.
VERSION = 1
#: Version of the PhaseDivision result JSON.
RESULT_VERSION = 1
INTEGRATORS = ("zoh", "trapezoid")
METHODS = ("dp", "ga")
_KIND = "power_profiles"
_RESULT_KIND = "phase_division"
_TIE = 1e-9
_GA_TABLE_BYTES = 2**30


# --- input model -------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PowerProfiles:
    """Power over one whole run per configuration (Silva 2024, ch. 5.4 and 5.8.1), ragged.

    Configuration ``c`` started at ``start[c]`` (s), ran ``elapsed[c]`` seconds and has power
    samples ``power[offsets[c]:offsets[c+1]]`` (W) at times ``times[...]`` (s, same clock as
    ``start``, non-decreasing). ``params[c]`` holds the configuration's parameters when known
    (e.g. ``{"cores": 32, "frequency_ghz": 2.3}``).
    """

    labels: tuple[str, ...]
    start: np.ndarray
    elapsed: np.ndarray
    times: np.ndarray
    power: np.ndarray
    offsets: np.ndarray
    params: tuple[Mapping[str, Any], ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        labels = tuple(str(s) for s in self.labels)
        n = len(labels)
        start = np.ascontiguousarray(self.start, dtype=np.float64).reshape(-1)
        elapsed = np.ascontiguousarray(self.elapsed, dtype=np.float64).reshape(-1)
        times = np.ascontiguousarray(self.times, dtype=np.float64).reshape(-1)
        power = np.ascontiguousarray(self.power, dtype=np.float64).reshape(-1)
        offsets = np.ascontiguousarray(self.offsets, dtype=np.int64).reshape(-1)
        if n == 0:
            raise InputError("power profiles: no configuration")
        if len(set(labels)) != n:
            raise InputError("power profiles: duplicate configuration labels")
        if start.size != n or elapsed.size != n or offsets.size != n + 1:
            raise InputError(f"power profiles: {n} labels but {start.size} start times, "
                             f"{elapsed.size} elapsed times and {offsets.size - 1} series")
        if times.size != power.size or offsets[0] != 0 or offsets[-1] != times.size:
            raise InputError("power profiles: sample times, power and offsets disagree")
        counts = np.diff(offsets)
        bad = np.flatnonzero(counts < 1)
        if bad.size:
            raise InputError(f"configuration {labels[bad[0]]!r}: no power sample")
        for name, arr in (("start time", start), ("elapsed time", elapsed),
                          ("sample time", times), ("power", power)):
            if not np.all(np.isfinite(arr)):
                k = int(np.flatnonzero(~np.isfinite(arr))[0])
                c = k if arr.size == n else int(np.searchsorted(offsets, k, side="right") - 1)
                raise InputError(f"configuration {labels[c]!r}: {name} is not a finite number")
        bad = np.flatnonzero(elapsed <= 0)
        if bad.size:
            raise InputError(f"configuration {labels[bad[0]]!r}: elapsed time must be positive, "
                             f"got {elapsed[bad[0]]:g}")
        steps = np.diff(times)
        inside = np.ones(steps.size, dtype=bool)
        inside[offsets[1:-1] - 1] = False  # steps between two configurations' series
        bad = np.flatnonzero((steps < 0) & inside)
        if bad.size:
            c = int(np.searchsorted(offsets, bad[0], side="right") - 1)
            raise InputError(f"configuration {labels[c]!r}: sample times must not decrease")
        params = tuple(dict(p) for p in self.params) if self.params else tuple({} for _ in labels)
        if len(params) != n:
            raise InputError(f"power profiles: {n} labels but {len(params)} parameter sets")
        for arr in (start, elapsed, times, power, offsets):
            arr.setflags(write=False)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "elapsed", elapsed)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "power", power)
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "meta", dict(self.meta))

    @classmethod
    def from_series(cls, labels: Sequence[str], start: Sequence[float],
                    elapsed: Sequence[float], times: Sequence[Any], power: Sequence[Any], *,
                    params: Sequence[Mapping[str, Any]] | None = None,
                    meta: Mapping[str, Any] | None = None) -> PowerProfiles:
        """Build from one (times, power) pair of arrays per configuration."""
        ts = [np.asarray(t, dtype=np.float64).reshape(-1) for t in times]
        ps = [np.asarray(p, dtype=np.float64).reshape(-1) for p in power]
        if len(ts) != len(ps):
            raise InputError(f"{len(ts)} time series but {len(ps)} power series")
        for label, t, p in zip(labels, ts, ps, strict=False):
            if t.size != p.size:
                raise InputError(f"configuration {label!r}: {t.size} sample times but "
                                 f"{p.size} power values")
        offsets = np.zeros(len(ts) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([t.size for t in ts])
        empty = np.empty(0)
        return cls(labels=tuple(labels), start=np.asarray(start, dtype=np.float64),
                   elapsed=np.asarray(elapsed, dtype=np.float64),
                   times=np.concatenate(ts) if ts else empty,
                   power=np.concatenate(ps) if ps else empty, offsets=offsets,
                   params=tuple(params) if params is not None else (), meta=meta or {})

    @property
    def n_configs(self) -> int:
        return len(self.labels)

    def series(self, config: int) -> tuple[np.ndarray, np.ndarray]:
        """Sample times and power of configuration ``config`` (read-only views)."""
        a, b = self.offsets[config], self.offsets[config + 1]
        return self.times[a:b], self.power[a:b]

    def to_dict(self) -> dict[str, Any]:
        """Versioned JSON layout (``"kind": "power_profiles"``), read by
        :func:`power_profiles_from_dict`."""
        configs = []
        for c, label in enumerate(self.labels):
            t, p = self.series(c)
            configs.append({"label": label, "params": dict(self.params[c]),
                            "start_time": float(self.start[c]),
                            "elapsed": float(self.elapsed[c]), "time": t, "power": p})
        return plain({"kind": _KIND, "version": VERSION, "meta": dict(self.meta),
                      "configs": configs})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str | None = None) -> PowerProfiles:
        return power_profiles_from_dict(data, source=source)


def power_profiles_from_dict(data: Mapping[str, Any], *, source: str | None = None,
                             **pascal: Any) -> PowerProfiles:
    """PowerProfiles from our JSON layout or from a PaScal Analyzer JSON (Silva 2024 notes §1).

    Our layout: ``{"kind": "power_profiles", "version": 1, "configs": [{"label", "start_time",
    "elapsed" (or "stop_time"), "time": [...], "power": [...]} or with "samples": [[watts,
    timestamp], ...] instead of time and power, optional "params"}]}``. A dict with "config"
    and "data" is read by :func:`power_profiles_from_pascal` with the keyword arguments.
    """
    if isinstance(data, Mapping) and "data" in data and "config" in data and "kind" not in data:
        return power_profiles_from_pascal(data, source=source, **pascal)
    check_version(dict(data) if isinstance(data, Mapping) else data, _KIND, VERSION, source)
    configs = data.get("configs")
    if not isinstance(configs, list) or not configs:
        raise InputError("expected \"configs\": a non-empty list of configurations",
                         path=source)
    labels, starts, elapsed, times, power, params = [], [], [], [], [], []
    for k, item in enumerate(configs):
        if not isinstance(item, Mapping):
            raise InputError(f"configs[{k}]: expected an object", path=source)
        label = str(item.get("label", k))
        what = f"configuration {label!r}"
        if "start_time" not in item:
            raise InputError(f"{what}: missing key \"start_time\"", path=source)
        t0 = entry_number(item["start_time"], what, "start_time", source)
        if "elapsed" in item:
            span = entry_number(item["elapsed"], what, "elapsed", source)
        elif "stop_time" in item:
            span = entry_number(item["stop_time"], what, "stop_time", source) - t0
        else:
            raise InputError(f"{what}: missing key \"elapsed\" (or \"stop_time\")", path=source)
        if "samples" in item:
            t, p = power_series(item["samples"], f"{what}: samples", source)
        elif "time" in item and "power" in item:
            try:
                t = np.asarray(item["time"], dtype=np.float64)
                p = np.asarray(item["power"], dtype=np.float64)
            except (TypeError, ValueError):
                raise InputError(f"{what}: time and power must be lists of numbers",
                                 path=source) from None
            if t.ndim != 1 or p.shape != t.shape or t.size == 0:
                raise InputError(f"{what}: time and power must be non-empty lists of the "
                                 "same length", path=source)
            if np.any(np.diff(t) < 0):
                order = np.argsort(t, kind="stable")
                t, p = t[order], p[order]
        else:
            raise InputError(f"{what}: missing keys \"time\" and \"power\" (or \"samples\")",
                             path=source)
        par = item.get("params", {})
        if not isinstance(par, Mapping):
            raise InputError(f"{what}: params must be an object", path=source)
        labels.append(label)
        starts.append(t0)
        elapsed.append(span)
        times.append(t)
        power.append(p)
        params.append(dict(par))
    meta = data.get("meta", {})
    try:
        return PowerProfiles.from_series(labels, starts, elapsed, times, power, params=params,
                                         meta=meta if isinstance(meta, Mapping) else {})
    except InputError as exc:
        raise InputError(str(exc), path=source) from None


def power_profiles_from_pascal(data: Mapping[str, Any], *, input: str | None = None,
                               repetition: str | None = None, sensor: str | None = None,
                               source: str | None = None) -> PowerProfiles:
    """One input and repetition of a PaScal Analyzer JSON as PowerProfiles (notes §1).

    Keys, frequency unit, numbers and sensor series are read as
    :func:`phasekit.io.pascal.from_pascal` reads them (:func:`~phasekit.io.pascal.parse_keys`,
    :func:`~phasekit.io.pascal.key_values`...), only for the runs of the chosen input and
    repetition; a file without ``data_descriptor`` is read with the thesis's key order
    (cores, frequency, input, repetitions). Each run needs ``start_time``, ``stop_time`` and a
    power series ``[[watts, timestamp], ...]``. Every key except input and repetition makes
    the configuration: its label is their values as written, joined by ``;``; its params
    ``cores``, ``threads``, ``frequency_ghz`` (GHz) and any other key (a number when it is
    one). ``input`` and ``repetition`` default to the smallest present (in numeric order when
    numeric); ``sensor`` to :func:`~phasekit.io.pascal.power_sensor`'s choice (``ipmi``, then
    a name with power, watt or rapl) among the sensors of those runs, else to the only one
    whose readings are numbers. Failed runs (``"failed"``, our extension of the layout) are
    left out with a warning.
    """
    if not isinstance(data, Mapping) or not (isinstance(data.get("data"), Mapping)
                                             and data["data"]):
        raise InputError("PaScal JSON: expected \"config\" and a non-empty \"data\" object",
                         path=source)
    parsed = parse_keys(dict(data), source=source, default_keys=DEFAULT_KEYS)
    keys, fields = parsed.keys, parsed.fields

    def pick(name: str, wanted: str | None, option: str) -> str | None:
        if name not in fields:
            if wanted is not None:
                raise InputError(f"PaScal JSON has no {name} key (keys: {', '.join(keys)})",
                                 path=source)
            return None
        values = sorted({texts[name] for _, texts in parsed.entries}, key=input_order)
        if wanted is None:
            return values[0]
        if str(wanted) not in values:
            raise UsageError(f"{source + ': ' if source else ''}no such {name}; present: "
                             f"{', '.join(values)}", parameter=name, value=str(wanted),
                             option=option)
        return str(wanted)

    chosen_input = pick("input", input, "--input")
    chosen_rep = pick("repetition", repetition, "--rep")
    entries = data["data"]
    selected = []
    failed = 0
    for key, texts in parsed.entries:
        if texts.get("input") != chosen_input or texts.get("repetition") != chosen_rep:
            continue
        entry = entries[key]
        if not isinstance(entry, Mapping):
            raise InputError(f"run {key!r}: expected an object", path=source)
        if entry.get("failed") is not None:
            failed += 1
        else:
            selected.append((key, texts, entry))
    if failed:
        warnings.warn(f"{source or 'PaScal JSON'}: left out {failed} failed run(s) of input "
                      f"{chosen_input}, repetition {chosen_rep}", PhasekitWarning, stacklevel=2)
    chosen_sensor = sensor
    if chosen_sensor is None:  # decided once for all runs
        chosen_sensor = _power_sensor([entry for _, _, entry in selected], source)
    labels, starts, elapsed, times, power, params = [], [], [], [], [], []
    for key, texts, entry in selected:
        what = f"run {key!r}"
        for name in ("start_time", "stop_time"):
            if name not in entry:
                raise InputError(f"{what}: missing key {name!r}", path=source)
        t0 = entry_number(entry["start_time"], what, "start_time", source)
        t1 = entry_number(entry["stop_time"], what, "stop_time", source)
        sensors = entry.get("sensors")
        if not isinstance(sensors, Mapping) or not sensors:
            raise InputError(f"{what}: no \"sensors\" series (a power sensor such as ipmi is "
                             "needed for phase division)", path=source)
        if chosen_sensor not in sensors:
            raise InputError(f"{what}: no sensor {chosen_sensor!r} (sensors: "
                             f"{', '.join(map(str, sensors))})", path=source)
        t, p = power_series(sensors[chosen_sensor], f"{what}: sensor {chosen_sensor!r}", source)
        config = key_values(key, texts, parsed.unit, source)
        par = {k: int(v) if k in ("cores", "threads") and v is not None else v
               for k, v in config.items() if k not in ("input", "repetition", "extra")}
        par.update({k: _number_or_text(v) for k, v in config["extra"].items()})
        labels.append(";".join(texts[k] for k in fields if k not in ("input", "repetition")))
        starts.append(t0)
        elapsed.append(t1 - t0)
        times.append(t)
        power.append(p)
        params.append(par)
    config_section = data.get("config")
    meta = {"source": "pascal", "input": chosen_input, "repetition": chosen_rep,
            "sensor": chosen_sensor,
            "command": config_section.get("command") if isinstance(config_section, Mapping)
            else None, "frequency_unit": parsed.unit}
    try:
        return PowerProfiles.from_series(labels, starts, elapsed, times, power, params=params,
                                         meta=meta)
    except InputError as exc:
        raise InputError(str(exc), path=source) from None


def _number_or_text(text: str) -> Any:
    """A key other than cores, threads, frequency: a number when it is one (an integer when
    integral), else its text."""
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    return int(number) if number.is_integer() else number


def _power_sensor(entries: Sequence[Mapping[str, Any]], source: str | None) -> str | None:
    """The power sensor of these runs (see :func:`power_profiles_from_pascal`); None when
    they have no sensor at all."""
    sensors = [e["sensors"] for e in entries if isinstance(e.get("sensors"), Mapping)]
    names: dict[str, None] = {}
    for series in sensors:
        names.update(dict.fromkeys(series))
    if not names:
        return None
    chosen = power_sensor([str(n) for n in names])
    if chosen is not None:
        return chosen
    scalar = [str(name) for name in names if any(
        isinstance(s.get(name), list) and s[name] and isinstance(s[name][0], list)
        and len(s[name][0]) == 2 and isinstance(s[name][0][0], int | float) for s in sensors)]
    if len(scalar) == 1:
        return scalar[0]
    raise InputError(f"PaScal JSON: cannot tell the power sensor among "
                     f"{', '.join(map(str, names))}; "
                     "name the one to use (sensor)", path=source)


# --- integrators -------------------------------------------------------------------------------
@njit(cache=True)
def _potential_zoh(t: np.ndarray, p: np.ndarray, prefix: np.ndarray, x: float) -> float:
    """G(x) = F[v] - (T[v] - x) P[v], v = min(lower_bound(T, x), n - 1) (module docstring)."""
    v = np.searchsorted(t, x)
    if v > t.size - 1:
        v = t.size - 1
    return prefix[v] - (t[v] - x) * p[v]


@njit(cache=True)
def _potential_trapezoid(t: np.ndarray, p: np.ndarray, prefix: np.ndarray, x: float) -> float:
    """Integral of the linearly interpolated power from T[0] to x (held outside the samples)."""
    n = t.size
    if x <= t[0]:
        return (x - t[0]) * p[0]
    if x >= t[n - 1]:
        return prefix[n - 1] + (x - t[n - 1]) * p[n - 1]
    i = np.searchsorted(t, x, side="right") - 1  # t[i] <= x < t[i + 1]
    px = p[i] + (p[i + 1] - p[i]) * (x - t[i]) / (t[i + 1] - t[i])
    return prefix[i] + 0.5 * (x - t[i]) * (p[i] + px)


@njit(cache=True)
def _cumulative(times: np.ndarray, power: np.ndarray, offsets: np.ndarray, start: np.ndarray,
                elapsed: np.ndarray, fractions: np.ndarray, trapezoid: bool) -> np.ndarray:
    """cum[k, c]: potential of configuration c at fraction k (times relative to its start)."""
    n_conf = offsets.size - 1
    out = np.empty((fractions.size, n_conf))
    for c in range(n_conf):
        a, b = offsets[c], offsets[c + 1]
        t = times[a:b] - start[c]
        p = power[a:b]
        prefix = np.zeros(t.size)
        for i in range(1, t.size):
            if trapezoid:
                prefix[i] = prefix[i - 1] + 0.5 * (t[i] - t[i - 1]) * (p[i] + p[i - 1])
            else:
                prefix[i] = prefix[i - 1] + (t[i] - t[i - 1]) * p[i - 1]
        for k in range(fractions.size):
            x = elapsed[c] * fractions[k]
            if trapezoid:
                out[k, c] = _potential_trapezoid(t, p, prefix, x)
            else:
                out[k, c] = _potential_zoh(t, p, prefix, x)
    return out


def _check_integrator(integrator: str) -> bool:
    if integrator not in INTEGRATORS:
        raise UsageError(f"expected one of {', '.join(INTEGRATORS)}", parameter="integrator",
                         value=integrator)
    return integrator == "trapezoid"


def cumulative_energy(profiles: PowerProfiles, fractions: Any, *,
                      integrator: str = "zoh") -> np.ndarray:
    """Potential of every configuration at ``fractions`` (n x configs, C order): the energy
    (J) of configuration c over fractions [a, b] is ``cum[b, c] - cum[a, c]`` (ch. 5.5)."""
    trapezoid = _check_integrator(integrator)
    x = np.ascontiguousarray(fractions, dtype=np.float64).reshape(-1)
    return _cumulative(profiles.times, profiles.power, profiles.offsets, profiles.start,
                       profiles.elapsed, x, trapezoid)


def integrate(profiles: PowerProfiles, config: int, start: float, stop: float, *,
              integrator: str = "zoh") -> float:
    """Energy (J) of configuration ``config`` over the fractions [start, stop] (ch. 5.5)."""
    if not 0 <= config < profiles.n_configs:
        raise UsageError(f"expected 0..{profiles.n_configs - 1}", parameter="config",
                         value=config)
    cum = cumulative_energy(profiles, [start, stop], integrator=integrator)
    return float(cum[1, config] - cum[0, config])


def division_energy(profiles: PowerProfiles, breakpoints: Sequence[float], *,
                    integrator: str = "zoh") -> tuple[float, np.ndarray, np.ndarray]:
    """The thesis's ``phase_optimization`` (ch. 5.6): for breakpoints 0 = b0 < ... < bK = 1,
    the total energy, the minimum-energy configuration of each phase and its energy."""
    b = np.asarray(breakpoints, dtype=np.float64)
    if b.ndim != 1 or b.size < 2 or np.any(np.diff(b) < 0):
        raise UsageError("expected at least two non-decreasing fractions",
                         parameter="breakpoints")
    cum = cumulative_energy(profiles, b, integrator=integrator)
    seg = cum[1:] - cum[:-1]
    configs = np.argmin(seg, axis=1)
    energies = seg[np.arange(seg.shape[0]), configs]
    return float(energies.sum()), configs, energies


# --- segment costs and the dynamic program -----------------------------------------------------
@njit(cache=True, fastmath={"nsz", "arcp", "contract", "reassoc"})
def _min_diff(cj: np.ndarray, ci: np.ndarray) -> float:
    m = cj[0] - ci[0]
    for c in range(1, cj.size):
        d = cj[c] - ci[c]
        m = min(m, d)
    return m


@njit(cache=True)
def _segment_table(cum: np.ndarray) -> np.ndarray:
    """S[i, j] = min_c cum[j, c] - cum[i, c] for i < j; +inf elsewhere."""
    n = cum.shape[0]
    out = np.full((n, n), np.inf)
    for i in range(n):
        for j in range(i + 1, n):
            out[i, j] = _min_diff(cum[j], cum[i])
    return out


@njit(cache=True)
def _dp(cum: np.ndarray, max_phases: int) -> tuple[np.ndarray, np.ndarray]:
    """D[k, j]: least energy of [0, j/G] in exactly k phases; arg[k, j]: the last breakpoint.

    Columns of segment costs are computed for each end j and consumed at once (module
    docstring); ties go to the leftmost breakpoint.
    """
    n = cum.shape[0]
    D = np.full((max_phases + 1, n), np.inf)
    arg = np.full((max_phases + 1, n), -1, dtype=np.int32)
    D[0, 0] = 0.0
    col = np.empty(n)
    for j in range(1, n):
        cj = cum[j]
        for i in range(j):
            col[i] = _min_diff(cj, cum[i])
        for k in range(1, min(max_phases, j) + 1):
            best = np.inf
            bi = -1
            for i in range(k - 1, j):
                v = D[k - 1, i] + col[i]
                if v < best:
                    best = v
                    bi = i
            D[k, j] = best
            arg[k, j] = bi
    return D, arg


def segment_costs(cum: np.ndarray) -> np.ndarray:
    """Table of segment costs ``S[i, j] = min_c cum[j, c] - cum[i, c]`` (i < j; +inf below the
    diagonal): (n x n) float64, 8 n^2 bytes."""
    return _segment_table(np.ascontiguousarray(cum, dtype=np.float64))


def optimal_division(cum: np.ndarray, max_phases: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Exact optimum for K = 1..max_phases phases on the grid of ``cum``'s rows (notes §3).

    Returns the energy of each K (without switch costs) and, per K, the grid indices of its
    K + 1 breakpoints (0 and G included).
    """
    cum = np.ascontiguousarray(cum, dtype=np.float64)
    grid = cum.shape[0] - 1
    if not 1 <= max_phases <= grid:
        raise UsageError(f"expected 1..{grid} (the number of grid steps)",
                         parameter="max_phases", value=max_phases)
    D, arg = _dp(cum, max_phases)
    energies = D[1:, grid].copy()
    divisions = []
    for k in range(1, max_phases + 1):
        idx = np.empty(k + 1, dtype=np.int64)
        idx[k] = grid
        j = grid
        for m in range(k, 0, -1):
            j = int(arg[m, j])
            idx[m - 1] = j
        divisions.append(idx)
    return energies, divisions


# --- genetic algorithm -------------------------------------------------------------------------
@njit(cache=True)
def _ga_cost(S: np.ndarray, ind: np.ndarray, grid: int) -> float:
    total = 0.0
    prev = 0
    for b in ind:
        total += S[prev, b]
        prev = b
    return total + S[prev, grid]


@njit(cache=True)
def _ga(S: np.ndarray, grid: int, m: int, population: int, generations: int, n_elite: int,
        mutation: float, seed: int) -> tuple[np.ndarray, float, np.ndarray]:
    """The thesis's GA (module docstring) on m = K - 1 breakpoints in 1..grid-1."""
    np.random.seed(seed)
    pop = np.empty((population, m), dtype=np.int64)
    cand = np.arange(1, grid)
    for q in range(population):
        for r in range(m):  # partial Fisher-Yates: m distinct positions
            s = r + np.random.randint(0, grid - 1 - r)
            cand[r], cand[s] = cand[s], cand[r]
        pop[q] = np.sort(cand[:m])
    fit = np.empty(population)
    for q in range(population):
        fit[q] = _ga_cost(S, pop[q], grid)
    history = np.empty(generations + 1)
    mark = np.zeros(grid + 1, dtype=np.bool_)
    child = np.empty(m, dtype=np.int64)
    perm_a = np.arange(m)
    perm_b = np.arange(m)
    half = m // 2
    nxt = np.empty_like(pop)
    for g in range(generations + 1):
        order = np.argsort(fit, kind="mergesort")
        history[g] = fit[order[0]]
        if g == generations:
            break
        for q in range(n_elite):
            nxt[q] = pop[order[q]]
        for q in range(n_elite, population):
            a = order[np.random.randint(0, n_elite)]
            b = a
            if n_elite > 1:
                while b == a:
                    b = order[np.random.randint(0, n_elite)]
            pa, pb = pop[a], pop[b]
            np.random.shuffle(perm_a)
            np.random.shuffle(perm_b)
            n = 0
            for r in range(half):
                x = pa[perm_a[r]]
                child[n] = x
                mark[x] = True
                n += 1
            for r in range(m):
                if n == m:
                    break
                x = pb[perm_b[r]]
                if not mark[x]:
                    child[n] = x
                    mark[x] = True
                    n += 1
            for r in range(half, m):  # repair: A's remaining breakpoints
                if n == m:
                    break
                x = pa[perm_a[r]]
                if not mark[x]:
                    child[n] = x
                    mark[x] = True
                    n += 1
            if m < grid - 1 and np.random.random() < mutation:
                r = np.random.randint(0, m)
                x = np.random.randint(1, grid)
                while mark[x]:
                    x = np.random.randint(1, grid)
                mark[child[r]] = False
                child[r] = x
                mark[x] = True
            for r in range(m):
                mark[child[r]] = False
            nxt[q] = np.sort(child)
        pop, nxt = nxt, pop
        for q in range(population):
            fit[q] = _ga_cost(S, pop[q], grid)
    best = pop[order[0]].copy()
    return best, fit[order[0]], history


def genetic_division(S: np.ndarray, n_phases: int, *, population: int = 1000,
                     generations: int = 300, elite: float = 0.1, mutation: float = 0.1,
                     seed: int = 0) -> tuple[np.ndarray, float, np.ndarray]:
    """The thesis's genetic algorithm (ch. 5.7) for ``n_phases`` phases on the grid of the
    segment-cost table ``S`` (:func:`segment_costs`). Defaults: the thesis's.

    Returns the K + 1 breakpoint grid indices (0 and G included), the energy (without switch
    costs) and the best energy after each generation (generations + 1 values).
    """
    grid = S.shape[0] - 1
    if not 1 <= n_phases <= grid:
        raise UsageError(f"expected 1..{grid} (the number of grid steps)",
                         parameter="n_phases", value=n_phases)
    if population < 2 or generations < 0:
        raise UsageError("GA: population must be at least 2 and generations non-negative")
    if not (0 < elite <= 1) or not (0 <= mutation <= 1):
        raise UsageError("GA: elite must be in (0, 1] and mutation in [0, 1]")
    n_elite = max(1, min(population, round(elite * population)))
    if n_phases == 1:
        value = float(S[0, grid])
        return np.array([0, grid]), value, np.full(generations + 1, value)
    inner, energy, history = _ga(np.ascontiguousarray(S, dtype=np.float64), grid,
                                 n_phases - 1, population, generations, n_elite,
                                 float(mutation), int(seed))
    return np.concatenate([[0], inner, [grid]]), float(energy), history


# --- result ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Division:
    """One division into ``len(configs)`` phases: breakpoints (fractions, 0 and 1 included),
    the minimum-energy configuration of each phase, its energy (J) and time (s)."""

    breakpoints: tuple[float, ...]
    configs: tuple[int, ...]
    energies_j: tuple[float, ...]
    times_s: tuple[float, ...]

    @property
    def n_phases(self) -> int:
        return len(self.configs)

    @property
    def n_switches(self) -> int:
        """Changes of configuration between consecutive phases."""
        return sum(1 for a, b in zip(self.configs, self.configs[1:], strict=False) if a != b)

    def to_dict(self) -> dict[str, Any]:
        return {"breakpoints": list(self.breakpoints), "configs": list(self.configs),
                "energies_j": list(self.energies_j), "times_s": list(self.times_s)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Division:
        return cls(tuple(float(x) for x in data["breakpoints"]),
                   tuple(int(x) for x in data["configs"]),
                   tuple(float(x) for x in data["energies_j"]),
                   tuple(float(x) for x in data["times_s"]))


@dataclass(frozen=True)
class PhaseDivision(Result):
    """Result of :func:`divide_phases` (Silva 2024, ch. 5; versioned JSON ``phase_division``).

    ``energy_dp[k-1]``: the exact optimum with k phases, switch costs included;
    ``energy_ga[k-1]``: the GA's (method ``"ga"`` only); ``divisions[k-1]``: the division of
    the method for k phases; ``best_k``: the chosen number of phases (module docstring).
    """

    method: str
    integrator: str
    grid: int
    max_phases: int
    switch_cost_s: float
    switch_cost_j: float
    labels: tuple[str, ...]
    params: tuple[Mapping[str, Any], ...]
    energy_dp: tuple[float, ...]
    energy_ga: tuple[float, ...] | None
    divisions: tuple[Division, ...]
    best_k: int
    single_config: int
    single_energy_j: float
    single_time_s: float
    ga: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    explanation: str = ""

    KIND: ClassVar[str] = _RESULT_KIND

    @property
    def best(self) -> Division:
        return self.divisions[self.best_k - 1]

    def energy(self, k: int) -> float:
        """Energy (J) of the method's division into k phases, switch costs included."""
        values = self.energy_ga if self.method == "ga" and self.energy_ga else self.energy_dp
        return float(values[k - 1])

    @property
    def energy_j(self) -> float:
        return self.energy(self.best_k)

    @property
    def time_s(self) -> float:
        return float(sum(self.best.times_s) + (self.best_k - 1) * self.switch_cost_s)

    @property
    def savings(self) -> float:
        """(E_single - E) / E_single against the best single configuration (the form of Silva 2024, eq. 4.24)."""
        return (self.single_energy_j - self.energy_j) / self.single_energy_j

    def phases(self) -> list[dict[str, Any]]:
        """The chosen division as rows: fractions, configuration, energy, time."""
        d = self.best
        return [{"start": d.breakpoints[i], "end": d.breakpoints[i + 1],
                 "config": self.labels[c], "config_index": c, "params": dict(self.params[c]),
                 "energy_j": d.energies_j[i], "time_s": d.times_s[i]}
                for i, c in enumerate(d.configs)]

    def __repr__(self) -> str:
        return short_repr(
            self, self.method, f"{len(self.labels)} configurations",
            f"best {self.best_k} phases", f"single {self.single_energy_j:.4g} J")

    def to_dict(self, *, divisions: bool = True, configs: bool = True) -> dict[str, Any]:
        """Versioned JSON; ``divisions`` adds the division of every K, ``configs`` the label
        and parameters of every configuration (both needed by :meth:`from_dict`)."""
        curve = []
        for k in range(1, self.max_phases + 1):
            row: dict[str, Any] = {"phases": k, "dp_j": self.energy_dp[k - 1]}
            if self.energy_ga is not None:
                row["ga_j"] = self.energy_ga[k - 1]
            curve.append(row)
        out: dict[str, Any] = {
            "kind": _RESULT_KIND, "version": RESULT_VERSION, "method": self.method,
            "integrator": self.integrator, "grid": self.grid, "max_phases": self.max_phases,
            "switch_cost_s": self.switch_cost_s, "switch_cost_j": self.switch_cost_j,
            "n_configs": len(self.labels), "best_k": self.best_k, "energy_j": self.energy_j,
            "time_s": self.time_s, "savings": self.savings,
            "single": {"config": self.labels[self.single_config],
                       "config_index": self.single_config,
                       "params": dict(self.params[self.single_config]),
                       "energy_j": self.single_energy_j, "time_s": self.single_time_s},
            "phases": self.phases(), "energy_vs_phases": curve,
            "ga": dict(self.ga) if self.ga is not None else None,
            "meta": dict(self.meta), "explanation": self.explanation,
        }
        if configs:
            out["configs"] = [{"label": s, "params": dict(p)} for s, p in
                              zip(self.labels, self.params, strict=True)]
        if divisions:
            out["divisions"] = [d.to_dict() for d in self.divisions]
        return plain(out)

    def summary(self) -> pd.DataFrame:
        """The best division as the CLI prints it: one row per phase, ``phase`` (1-based),
        ``start`` and ``end`` (fractions of the execution), ``config`` (its label),
        ``energy_j`` and ``time_s``."""
        import pandas as pd

        return pd.DataFrame(
            [{"phase": k, "start": row["start"], "end": row["end"], "config": row["config"],
              "energy_j": row["energy_j"], "time_s": row["time_s"]}
             for k, row in enumerate(self.phases(), start=1)],
            columns=["phase", "start", "end", "config", "energy_j", "time_s"])

    def present(self, name: str | None = None) -> Presentation:
        """The headline (the best number of phases and the saving), the phases of the best
        division (``name``: the profiles' file), the energy against the number of phases
        and the notes (:mod:`phasekit.energy.phasediv_present`)."""
        from phasekit.energy.phasediv_present import presentation

        return presentation(self, name)

    def plot(self, ax: Axes | None = None) -> Figure:
        """Energy against the number of phases and the configuration chosen over the
        execution; on ``ax``, the energy curve only
        (:func:`phasekit.plot.energy_phases.energy_phases_figure`)."""
        from phasekit.plot.energy_phases import energy_phases_figure

        return energy_phases_figure(self, ax)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str | None = None) -> PhaseDivision:
        check_version(dict(data), _RESULT_KIND, RESULT_VERSION, source)
        try:
            curve = data["energy_vs_phases"]
            ga = [r.get("ga_j") for r in curve]
            return cls(
                method=str(data["method"]), integrator=str(data["integrator"]),
                grid=int(data["grid"]), max_phases=int(data["max_phases"]),
                switch_cost_s=float(data["switch_cost_s"]),
                switch_cost_j=float(data["switch_cost_j"]),
                labels=tuple(str(c["label"]) for c in data["configs"]),
                params=tuple(dict(c.get("params", {})) for c in data["configs"]),
                energy_dp=tuple(float(r["dp_j"]) for r in curve),
                energy_ga=tuple(float(x) for x in ga) if all(x is not None for x in ga) else None,
                divisions=tuple(Division.from_dict(d) for d in data["divisions"]),
                best_k=int(data["best_k"]), single_config=int(data["single"]["config_index"]),
                single_energy_j=float(data["single"]["energy_j"]),
                single_time_s=float(data["single"]["time_s"]), ga=data.get("ga"),
                meta=dict(data.get("meta") or {}), explanation=str(data.get("explanation", "")))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"phase_division result: missing or bad field ({exc})",
                             path=source) from None


def _division(cum: np.ndarray, idx: np.ndarray, elapsed: np.ndarray, grid: int) -> Division:
    seg = cum[idx[1:]] - cum[idx[:-1]]
    configs = np.argmin(seg, axis=1)
    energies = seg[np.arange(seg.shape[0]), configs]
    frac = idx / grid
    times = elapsed[configs] * np.diff(frac)
    return Division(tuple(float(x) for x in frac), tuple(int(c) for c in configs),
                    tuple(float(e) for e in energies), tuple(float(t) for t in times))


def check_division(*, max_phases: int = 35, grid: int = 1000, method: str = "dp",
                   integrator: str = "trapezoid", switch_cost_s: float = 0.0,
                   switch_cost_j: float = 0.0) -> None:
    """UsageError naming the first of :func:`divide_phases`'s options that it cannot take
    (before any profile is read)."""
    if method not in METHODS:
        raise UsageError(f"expected one of {', '.join(METHODS)}", parameter="method",
                         value=method)
    _check_integrator(integrator)
    if not isinstance(grid, int | np.integer) or grid < 1:
        raise UsageError("expected a positive number of steps", parameter="grid", value=grid)
    if not 1 <= max_phases <= grid:
        raise UsageError(f"expected 1..{grid} (at most one phase per grid step)",
                         parameter="max_phases", value=max_phases)
    for name, value in (("switch_cost_s", switch_cost_s), ("switch_cost_j", switch_cost_j)):
        if not (math.isfinite(value) and value >= 0):
            raise UsageError("expected a non-negative number", parameter=name, value=value)


def divide_phases(profiles: PowerProfiles, *, max_phases: int = 35, grid: int = 1000,
                  method: str = "dp", integrator: str = "trapezoid",
                  switch_cost_s: float = 0.0,
                  switch_cost_j: float = 0.0, population: int = 1000, generations: int = 300,
                  elite: float = 0.1, mutation: float = 0.1, seed: int = 0,
                  progress: Callable[[str, float], None] | None = None) -> PhaseDivision:
    """Minimum-energy phase division for 1..max_phases phases (Silva 2024, ch. 5).

    Defaults: ``max_phases`` 35 (the thesis: gains beyond 35 phases are negligible, ch. 5.8.2);
    ``grid`` 1000 steps (our choice: 0.1 % of the execution); the GA parameters are the
    thesis's; the integrator is ours, trapezoid, as the CLI's (the thesis's zero-order
    integrator, ``"zoh"``, makes a running total that jumps at every sample, which the
    optimizer exploits). Without a switch cost (``switch_cost_s``, ``switch_cost_j``) the
    energy never rises with more phases, so the best division is the largest allowed: set a
    cost to make the number of phases meaningful. ``method="ga"`` runs the GA for every K and also the
    exact DP (cheap), so the result carries both energy curves; the GA for K phases uses seed
    ``seed + K``. ``progress(stage, fraction)`` is called as the work advances.
    """
    check_division(max_phases=max_phases, grid=grid, method=method, integrator=integrator,
                   switch_cost_s=switch_cost_s, switch_cost_j=switch_cost_j)
    grid = int(grid)
    report = progress or (lambda stage, fraction: None)
    report("integrating", 0.0)
    cum = cumulative_energy(profiles, np.arange(grid + 1) / grid, integrator=integrator)
    report("dynamic program", 0.05)
    raw_dp, idx_dp = optimal_division(cum, max_phases)
    switches = np.arange(max_phases) * switch_cost_j
    energy_dp = raw_dp + switches
    energy_ga = None
    ga_info = None
    idx = idx_dp
    if method == "ga":
        if 8 * (grid + 1) ** 2 > _GA_TABLE_BYTES:
            raise UsageError("the genetic algorithm's segment-cost table would take "
                             f"{8 * (grid + 1) ** 2 / 2**30:.1f} GiB (limit 1 GiB: grid <= "
                             "11584); use the exact method (dp) or a coarser grid",
                             parameter="grid", value=grid)
        report("segment costs", 0.1)
        S = segment_costs(cum)
        idx, raw_ga = [], []
        work = max_phases * (max_phases + 1) / 2
        for k in range(1, max_phases + 1):
            report(f"genetic algorithm, {k} phases", 0.15 + 0.85 * (k - 1) * k / 2 / work)
            b, e, _ = genetic_division(S, k, population=population, generations=generations,
                                       elite=elite, mutation=mutation, seed=seed + k)
            idx.append(b)
            raw_ga.append(e)
        energy_ga = np.asarray(raw_ga) + switches
        ga_info = {"population": population, "generations": generations, "elite": elite,
                   "mutation": mutation, "seed": seed}
    chosen = energy_ga if energy_ga is not None else energy_dp
    low = float(np.min(chosen))
    best_k = int(np.flatnonzero(chosen <= low + _TIE * abs(low))[0]) + 1
    divisions = tuple(_division(cum, np.asarray(i), profiles.elapsed, grid) for i in idx)
    total = cum[grid] - cum[0]
    single = int(np.argmin(total))
    explanation = ""
    if best_k == 1:
        explanation = ("a single configuration is best" + (" once switch costs are counted"
                       if switch_cost_j > 0 and raw_dp[-1] < raw_dp[0] else ""))
    return PhaseDivision(
        method=method, integrator=integrator, grid=grid, max_phases=max_phases,
        switch_cost_s=float(switch_cost_s), switch_cost_j=float(switch_cost_j),
        labels=profiles.labels, params=profiles.params,
        energy_dp=tuple(float(x) for x in energy_dp),
        energy_ga=None if energy_ga is None else tuple(float(x) for x in energy_ga),
        divisions=divisions, best_k=best_k, single_config=single,
        single_energy_j=float(total[single]), single_time_s=float(profiles.elapsed[single]),
        ga=ga_info, meta=dict(profiles.meta), explanation=explanation)


make_callable(__name__, "phasekit.energy.api:phasediv")  # pk.energy.phasediv(...) runs it
