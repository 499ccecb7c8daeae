"""Synthetic hardware-counter and power data with known ground truth (Salinas Hilburg 2020, chapters 2 and 4).

Counters follow Table 4.3 (C1 clock cycles ... C14 L1D misses) on a 12-thread server (the
thesis's S2600GZ: 6 cores, 12 hardware threads, 1.3-2.0 GHz and a 2.4 GHz turbo, section
4.3.2). The workload model behind the counters is ours (the thesis publishes no counter
distributions): per sample a frequency, a number of busy threads (1, 2, 3, 6 or 12, the
copies/threads of section 4.3.2), a memory intensity m in [0, 1] and an IPC that falls with
m; every other counter is a per-instruction or per-cycle rate of those, with spread. The
thesis samples every 10 s but never gives counter magnitudes; with counts per 2 s (our
default ``sample_s``) the published models give plausible watts (the GE models 4.20: CPU
5-55 W, memory 1-45 W), with counts per 10 s they give up to 170 W, so we count per 2 s.

Power follows the published model forms with the thesis's coefficients (Table 4.4):

- total (4.15): ``P = P_idle + P_leak(T) + P_CPU,dyn + P_fan(rpm) + P_Mem,dyn + P_disk`` with
  P_idle = 50.0 W, P_disk = 16.75 W;
- leakage (4.16) ``alpha0 + alpha1 T + alpha2 T^2`` (alpha = 27.50, -1.02, 0.01) on the CPU
  temperature in degrees C (the thesis mentions a normalisation it does not give; with T in
  degrees C these alphas give 1.5-17 W of leakage over 50-90 C, which is plausible, so we
  take them as they are);
- fan (4.17) ``beta0 + beta1 rpm + beta2 rpm^2 + beta3 rpm^3`` (beta = 0, 4.21e-4, -6.11e-8,
  1.14e-11);
- classical dynamic models (4.19) with gamma (CPU) and delta (memory) on C1, C2, C10, C11;
- grammatical-evolution dynamic models (4.20) with x (CPU) and y (memory).

Plus Gaussian noise of a given standard deviation (and optionally the 4 W quantization of
the thesis's P_total). :func:`nonlinear_power_data` is our known expression inside the
reach of the thesis's grammar (ratios and products of counters), the ground truth for the
grammatical-evolution quality test. :func:`coallocation_data` builds the counters of two tasks
run together from their solo counters with a shared-cache contention model of ours;
:func:`speedup_data` draws speed-ups from eq. 2.4 with the thesis's beta (Table 2.2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from phasekit.errors import UsageError

__all__ = [
    "COUNTERS",
    "FREQUENCIES_GHZ",
    "NONLINEAR_EXPRESSION",
    "THESIS",
    "THREADS",
    "CoallocData",
    "CounterData",
    "coallocation_data",
    "counter_samples",
    "cpu_dyn_ge_w",
    "cpu_dyn_linear_w",
    "fan_data",
    "fan_w",
    "ge_power_data",
    "leakage_data",
    "leakage_w",
    "linear_power_data",
    "mem_dyn_ge_w",
    "mem_dyn_linear_w",
    "nonlinear_power_data",
    "nonlinear_truth_w",
    "server_power_data",
    "speedup_data",
]

#: Table 4.3: the counters collected to build the server power models.
COUNTERS: dict[str, str] = {
    "C1": "clock cycles",
    "C2": "instructions retired",
    "C3": "LLC misses",
    "C4": "L2D cache misses",
    "C5": "branch instructions retired",
    "C6": "mispredicted branches retired",
    "C7": "speculative cache-line split load uops dispatched to L1D",
    "C8": "speculative cache-line split store-address uops dispatched to L1D",
    "C9": "cycles the divider is active",
    "C10": "resource stalls",
    "C11": "uops dispatched",
    "C12": "memory transactions",
    "C13": "uops with memory access retired",
    "C14": "L1D cache misses",
}

#: Frequencies of section 4.3.2 (GHz); 2.4 is the turbo of the 2001 MHz setting.
FREQUENCIES_GHZ: tuple[float, ...] = (1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.4)
#: Copies / threads per experiment (section 4.3.2) on 12 hardware threads.
THREADS: tuple[int, ...] = (1, 2, 3, 6, 12)

#: The thesis's published constants (Tables 2.2 and 4.4, section 4.2.1).
THESIS: dict[str, Any] = {
    "p_idle_w": 50.0,
    "p_disk_w": 16.75,
    "quantization_w": 4.0,
    "sample_s": 10.0,  # the thesis's sampling period (section 4.3.2)
    "alpha": (27.50, -1.02, 0.01),
    "beta": (0.0, 4.21e-4, -6.11e-8, 1.14e-11),
    "gamma": (4.10, -1.04e-10, 8.92e-11, 2.58e-10, 8.94e-12),
    "delta": (5.13, -4.75e-10, 2.33e-11, 6.06e-10, 1.06e-10),
    "linear_counters": ("C1", "C2", "C10", "C11"),
    "x": (53.10, 1.00e-10, 1.05e-10, 9.83, 4.03e-12, 3.72e-10, 2.49e-12, 1.12e-12, 58.19),
    "y": (24.80, 1.00e-10, 1.77e-11, 5.76, 1.00e-10, 2.49e-12, 3.72e-10, 24.80),
    "speedup_beta": (2.78, 1.02e-11, -4.34e-12, -3.02e-10, 0.18),
    "speedup_counters": ("C1", "C2", "C3"),
    "cores": 6,
    "hw_threads": 12,
}

#: Our known non-linear expression, inside the reach of the thesis's Grammar 1 (whose terms are
#: products and ratios of two counters): the IPC and the LLC / L2 miss ratio. It is not linear
#: in the counters (the counts scale with busy threads and frequency, the ratios do not).
NONLINEAR_EXPRESSION = "12 + 30*C2/C1 + 25*C3/C4"


@dataclass(frozen=True)
class CounterData:
    """A table of counters and power with its ground truth.

    ``frame``: one row per sample, counter columns ``C1``..``C14`` and the target column
    (plus the other columns a generator documents); ``clean``: the noise-free target;
    ``features``: the columns the truth uses; ``truth``: the expression and coefficients.
    """

    frame: pd.DataFrame
    target: str
    clean: np.ndarray
    noise_w: float
    features: tuple[str, ...]
    truth: Mapping[str, Any] = field(default_factory=dict)

    def noise_floor(self, rows: Any = None) -> float:
        """RMSE of the noise-free truth against the measured target (over ``rows``): what no
        model can beat on these samples."""
        measured = self.frame[self.target].to_numpy(float)
        clean = self.clean
        if rows is not None:
            measured, clean = measured[rows], clean[rows]
        return float(np.sqrt(np.mean((measured - clean) ** 2)))


# --- counters --------------------------------------------------------------------------------
def counter_samples(n: int, *, seed: int = 0, sample_s: float = 2.0,
                    threads: tuple[int, ...] = THREADS,
                    frequencies: tuple[float, ...] = FREQUENCIES_GHZ,
                    memory: np.ndarray | None = None) -> pd.DataFrame:
    """``n`` samples of the 14 counters of Table 4.3 (counts per ``sample_s`` seconds).

    Columns C1..C14 plus ``freq_ghz``, ``threads`` and ``memory`` (the memory intensity m in
    [0, 1] that drives the rates; ``memory`` may be given, one value per sample).
    """
    if n < 1:
        raise UsageError("expected at least one sample", parameter="n", value=n)
    rng = np.random.default_rng(seed)
    f = rng.choice(np.asarray(frequencies, float), n)
    busy = rng.choice(np.asarray(threads, float), n)
    m = rng.uniform(0.0, 1.0, n) if memory is None else np.asarray(memory, float)
    utilization = rng.uniform(0.85, 1.0, n)
    c1 = busy * f * 1e9 * sample_s * utilization
    ipc = np.clip(2.2 - 1.6 * m + rng.normal(0.0, 0.15, n), 0.2, 2.6)
    c2 = ipc * c1
    mpki = 0.2 + 12.0 * m**1.5 * rng.uniform(0.7, 1.3, n)   # LLC misses per kilo-instruction
    c3 = c2 * mpki / 1000.0
    l2_over_llc = rng.uniform(1.5, 4.5, n)
    c4 = c3 * l2_over_llc
    c14 = c4 * rng.uniform(2.0, 6.0, n)
    c5 = c2 * rng.uniform(0.08, 0.25, n)
    c6 = c5 * rng.uniform(0.003, 0.05, n)
    c7 = c2 * rng.uniform(1e-4, 4e-3, n)
    c8 = c2 * rng.uniform(5e-5, 2e-3, n)
    c9 = c1 * rng.uniform(0.0, 0.04, n)
    c10 = c1 * np.clip(0.1 + 0.55 * m + rng.normal(0.0, 0.05, n), 0.02, 0.95)
    c11 = c2 * rng.uniform(1.1, 1.5, n)
    c12 = c3 * rng.uniform(1.0, 1.6, n)
    c13 = c2 * rng.uniform(0.3, 0.5, n)
    columns = {"C1": c1, "C2": c2, "C3": c3, "C4": c4, "C5": c5, "C6": c6, "C7": c7,
               "C8": c8, "C9": c9, "C10": c10, "C11": c11, "C12": c12, "C13": c13,
               "C14": c14}
    frame = pd.DataFrame(columns)
    frame["freq_ghz"] = f
    frame["threads"] = busy.astype(int)
    frame["memory"] = m
    return frame


# --- published model forms ------------------------------------------------------------------
def _col(frame: pd.DataFrame | Mapping[str, Any], name: str) -> np.ndarray:
    return np.asarray(frame[name], float)


def leakage_w(temp_c: Any, alpha: tuple[float, ...] = THESIS["alpha"]) -> np.ndarray:
    """Eq. 4.16: ``alpha0 + alpha1 T + alpha2 T^2``."""
    t = np.asarray(temp_c, float)
    return alpha[0] + alpha[1] * t + alpha[2] * t**2


def fan_w(rpm: Any, beta: tuple[float, ...] = THESIS["beta"]) -> np.ndarray:
    """Eq. 4.17: ``beta0 + beta1 rpm + beta2 rpm^2 + beta3 rpm^3``."""
    r = np.asarray(rpm, float)
    return beta[0] + beta[1] * r + beta[2] * r**2 + beta[3] * r**3


def cpu_dyn_linear_w(frame: Any, gamma: tuple[float, ...] = THESIS["gamma"]) -> np.ndarray:
    """Eq. 4.19 (CPU): ``gamma0 + gamma1 C1 + gamma2 C2 + gamma3 C10 + gamma4 C11``."""
    return (gamma[0] + gamma[1] * _col(frame, "C1") + gamma[2] * _col(frame, "C2")
            + gamma[3] * _col(frame, "C10") + gamma[4] * _col(frame, "C11"))


def mem_dyn_linear_w(frame: Any, delta: tuple[float, ...] = THESIS["delta"]) -> np.ndarray:
    """Eq. 4.19 (memory), the same form with delta."""
    return cpu_dyn_linear_w(frame, delta)


def cpu_dyn_ge_w(frame: Any, x: tuple[float, ...] = THESIS["x"]) -> np.ndarray:
    """Eq. 4.20 (CPU): ``x0 (x1 C14 + 1)/(x2 C4 + 1)
    + x3 (x4 C10 + 1)(x5 C3 + 1)(x6 C2 + 1)^2 / (x7 C11 + 1) - x8``."""
    c = {k: _col(frame, k) for k in ("C2", "C3", "C4", "C10", "C11", "C14")}
    return (x[0] * (x[1] * c["C14"] + 1) / (x[2] * c["C4"] + 1)
            + x[3] * (x[4] * c["C10"] + 1) * (x[5] * c["C3"] + 1) * (x[6] * c["C2"] + 1) ** 2
            / (x[7] * c["C11"] + 1) - x[8])


def mem_dyn_ge_w(frame: Any, y: tuple[float, ...] = THESIS["y"]) -> np.ndarray:
    """Eq. 4.20 (memory): ``y0 (y1 C14 + 1)/(y2 C5 + 1)
    + y3 (y4 C14 + 1)(y5 C2 + 1)(y6 C3 + 1) - y7``."""
    c = {k: _col(frame, k) for k in ("C2", "C3", "C5", "C14")}
    return (y[0] * (y[1] * c["C14"] + 1) / (y[2] * c["C5"] + 1)
            + y[3] * (y[4] * c["C14"] + 1) * (y[5] * c["C2"] + 1) * (y[6] * c["C3"] + 1)
            - y[7])


def nonlinear_truth_w(frame: Any) -> np.ndarray:
    """:data:`NONLINEAR_EXPRESSION` evaluated on ``frame``."""
    return (12.0 + 30.0 * _col(frame, "C2") / _col(frame, "C1")
            + 25.0 * _col(frame, "C3") / _col(frame, "C4"))


def _noisy(clean: np.ndarray, noise_w: float, rng: np.random.Generator) -> np.ndarray:
    if noise_w < 0:
        raise UsageError("expected a non-negative standard deviation", parameter="noise_w",
                         value=noise_w)
    return clean + rng.normal(0.0, noise_w, clean.shape) if noise_w > 0 else clean.copy()


def _data(frame: pd.DataFrame, clean: np.ndarray, noise_w: float, seed: int, target: str,
          features: tuple[str, ...], truth: dict[str, Any]) -> CounterData:
    rng = np.random.default_rng([seed, 7])
    frame = frame.copy()
    frame[target] = _noisy(clean, noise_w, rng)
    return CounterData(frame=frame, target=target, clean=clean, noise_w=float(noise_w),
                       features=features, truth=truth)


def nonlinear_power_data(n: int = 2000, *, seed: int = 0, noise_w: float = 2.0) -> CounterData:
    """Counters and a power ``power_w`` = :data:`NONLINEAR_EXPRESSION` + N(0, noise_w)."""
    frame = counter_samples(n, seed=seed)
    return _data(frame, nonlinear_truth_w(frame), noise_w, seed, "power_w",
                 ("C1", "C2", "C3", "C4"), {"expression": NONLINEAR_EXPRESSION})


def linear_power_data(n: int = 2000, *, seed: int = 0, noise_w: float = 1.0,
                      which: str = "cpu") -> CounterData:
    """Counters and the classical model 4.19 (``which`` "cpu": gamma, "mem": delta) plus
    noise, as ``power_w``."""
    coefficients = {"cpu": THESIS["gamma"], "mem": THESIS["delta"]}.get(which)
    if coefficients is None:
        raise UsageError("expected 'cpu' or 'mem'", parameter="which", value=which)
    frame = counter_samples(n, seed=seed)
    clean = cpu_dyn_linear_w(frame, coefficients)
    return _data(frame, clean, noise_w, seed, "power_w", THESIS["linear_counters"],
                 {"expression": "c0 + c1*C1 + c2*C2 + c3*C10 + c4*C11 (4.19)",
                  "coefficients": tuple(coefficients)})


def ge_power_data(n: int = 2000, *, seed: int = 0, noise_w: float = 2.0,
                  which: str = "cpu") -> CounterData:
    """Counters and the published GE model 4.20 (``which`` "cpu": x, "mem": y) plus noise, as
    ``power_w``."""
    frame = counter_samples(n, seed=seed)
    if which == "cpu":
        clean = cpu_dyn_ge_w(frame)
        features: tuple[str, ...] = ("C2", "C3", "C4", "C10", "C11", "C14")
        coefficients = THESIS["x"]
    elif which == "mem":
        clean = mem_dyn_ge_w(frame)
        features = ("C2", "C3", "C5", "C14")
        coefficients = THESIS["y"]
    else:
        raise UsageError("expected 'cpu' or 'mem'", parameter="which", value=which)
    return _data(frame, clean, noise_w, seed, "power_w", features,
                 {"expression": f"P_{which},dyn of eq. 4.20", "coefficients": coefficients})


def server_power_data(n: int = 2000, *, seed: int = 0, noise_w: float = 1.0,
                      quantization_w: float | None = None, dynamic: str = "ge") -> CounterData:
    """Whole-server samples following 4.15: counters, ``temp_c``, ``fan_rpm`` and the
    components ``leak_w``, ``cpu_dyn_w``, ``fan_w``, ``mem_dyn_w``, ``disk_w`` and the total
    ``power_w`` (+ noise, optionally quantized to ``quantization_w``, the thesis: 4 W).

    ``dynamic`` "ge" uses the 4.20 models, "linear" the 4.19 models. Fan speed is drawn
    from 1500-6000 rpm; the CPU temperature rises with CPU power and falls with fan speed
    (our thermal model), clipped to 40-90 C. The memory power ``mem_dyn_w`` is measured with
    sensor noise of 0.3 W (a DIMM sensor x 8, section 4.3.2), the fan power with 0.09 W.
    """
    if dynamic not in ("ge", "linear"):
        raise UsageError("expected 'ge' or 'linear'", parameter="dynamic", value=dynamic)
    frame = counter_samples(n, seed=seed)
    rng = np.random.default_rng([seed, 11])
    cpu = cpu_dyn_ge_w(frame) if dynamic == "ge" else cpu_dyn_linear_w(frame)
    mem = mem_dyn_ge_w(frame) if dynamic == "ge" else mem_dyn_linear_w(frame)
    rpm = rng.uniform(1500.0, 6000.0, n)
    temp = np.clip(38.0 + 0.55 * cpu * (3000.0 / rpm) ** 0.6 + rng.normal(0.0, 1.0, n),
                   40.0, 90.0)
    leak = leakage_w(temp)
    fan = fan_w(rpm)
    clean = THESIS["p_idle_w"] + leak + cpu + fan + mem + THESIS["p_disk_w"]
    frame["temp_c"] = temp
    frame["fan_rpm"] = rpm
    frame["leak_w"] = leak
    frame["cpu_dyn_w"] = cpu
    frame["fan_w"] = fan + rng.normal(0.0, 0.09, n)
    frame["mem_dyn_w"] = mem + rng.normal(0.0, 0.3, n)
    frame["disk_w"] = THESIS["p_disk_w"]
    data = _data(frame, clean, noise_w, seed, "power_w",
                 (*tuple(COUNTERS), "temp_c", "fan_rpm"),
                 {"expression": "4.15", "dynamic": dynamic, "alpha": THESIS["alpha"],
                  "beta": THESIS["beta"], "p_idle_w": THESIS["p_idle_w"],
                  "p_disk_w": THESIS["p_disk_w"]})
    if quantization_w:
        q = float(quantization_w)
        data.frame["power_w"] = np.round(data.frame["power_w"] / q) * q
    return data


def leakage_data(n: int = 500, *, seed: int = 0, noise_w: float = 1.14,
                 temp_range_c: tuple[float, float] = (45.0, 90.0)) -> pd.DataFrame:
    """The leakage experiment (section 4.2.1): a constant CPU-bound load under varied fan
    speeds; ``temp_c`` and ``leak_w`` = 4.16 + N(0, noise_w) (the thesis's fit: RMSE 1.14 W)."""
    rng = np.random.default_rng([seed, 16])
    temp = rng.uniform(*temp_range_c, n)
    return pd.DataFrame({"temp_c": temp, "leak_w": _noisy(leakage_w(temp), noise_w, rng)})


def fan_data(n: int = 500, *, seed: int = 0, noise_w: float = 0.09,
             rpm_range: tuple[float, float] = (1000.0, 10000.0)) -> pd.DataFrame:
    """The fan experiment (section 4.2.1): ``fan_rpm`` and ``fan_w`` = 4.17 + N(0, noise_w)
    (the thesis's fit: RMSE 0.09 W)."""
    rng = np.random.default_rng([seed, 17])
    rpm = rng.uniform(*rpm_range, n)
    return pd.DataFrame({"fan_rpm": rpm, "fan_w": _noisy(fan_w(rpm), noise_w, rng)})


# --- co-allocation ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CoallocData:
    """Solo counters of two tasks (``task1``, ``task2``, one row per experiment) and the counters
    measured when they run together (``together``, with ``power_w`` = 4.15 with the 4.20
    dynamic models on the together counters, a fixed temperature and fan speed, plus noise);
    ``clean_power``: the noise-free power of the together runs."""

    task1: pd.DataFrame
    task2: pd.DataFrame
    together: pd.DataFrame
    clean_power: np.ndarray
    noise: float


def _contended(solo: pd.DataFrame, slow: np.ndarray, extra_miss: np.ndarray) -> dict[str, Any]:
    """A task's counters when sharing the server: same cycles, ``slow`` times fewer
    instructions (and what scales with them), ``extra_miss`` times more cache misses."""
    out: dict[str, Any] = {"C1": solo["C1"].to_numpy(float)}
    for name in ("C2", "C5", "C6", "C7", "C8", "C11", "C13"):
        out[name] = solo[name].to_numpy(float) / slow
    for name in ("C3", "C4", "C12", "C14"):
        out[name] = solo[name].to_numpy(float) / slow * extra_miss
    out["C9"] = solo["C9"].to_numpy(float)
    out["C10"] = np.minimum(solo["C10"].to_numpy(float) * slow ** 0.5, 0.98 * out["C1"])
    return out


def coallocation_data(n: int = 300, *, seed: int = 0, noise: float = 0.02,
                      noise_w: float = 2.0) -> CoallocData:
    """``n`` co-allocation experiments (two tasks, 1-3 copies each, at 1.7 or 2.0 GHz, section
    4.3.2). Our contention model: a task slows by ``1 + 0.9 m_self m_other + 0.25 m_other``
    (m: memory intensity) and its cache misses grow by ``1 + 0.6 m_other``; counters of the
    pair are the sums, each with multiplicative noise ``noise`` (relative standard
    deviation)."""
    rng = np.random.default_rng([seed, 42])
    copies = rng.integers(1, 4, n)
    freq = rng.choice(np.array([1.7, 2.0]), n)
    solos = []
    for k in range(2):
        frame = counter_samples(n, seed=seed * 7919 + k + 1, threads=(1,), frequencies=(1.7,))
        # scale to the experiment's copies and frequency (counter_samples drew 1 thread @ 1.7)
        factor = copies * freq / 1.7
        for name in COUNTERS:
            frame[name] = frame[name] * factor
        frame["freq_ghz"] = freq
        frame["threads"] = copies
        solos.append(frame)
    m1, m2 = solos[0]["memory"].to_numpy(), solos[1]["memory"].to_numpy()
    slow1 = 1.0 + 0.9 * m1 * m2 + 0.25 * m2
    slow2 = 1.0 + 0.9 * m1 * m2 + 0.25 * m1
    a = _contended(solos[0], slow1, 1.0 + 0.6 * m2)
    b = _contended(solos[1], slow2, 1.0 + 0.6 * m1)
    together = pd.DataFrame({name: (a[name] + b[name]) * rng.lognormal(0.0, noise, n)
                             if noise > 0 else a[name] + b[name] for name in COUNTERS})
    together["freq_ghz"] = freq
    together["threads"] = 2 * copies
    clean = (THESIS["p_idle_w"] + leakage_w(60.0) + cpu_dyn_ge_w(together) + fan_w(3000.0)
             + mem_dyn_ge_w(together) + THESIS["p_disk_w"])
    together["power_w"] = _noisy(np.asarray(clean, float), noise_w, rng)
    task1 = solos[0].drop(columns=["memory"])
    task2 = solos[1].drop(columns=["memory"])
    return CoallocData(task1=task1, task2=task2, together=together,
                       clean_power=np.asarray(clean, float), noise=noise)


# --- speed-up --------------------------------------------------------------------------------
def speedup_data(n: int = 400, *, seed: int = 0, cores: int = THESIS["cores"],
                 hw_threads: int = THESIS["hw_threads"], noise: float = 0.1,
                 beta: tuple[float, ...] = THESIS["speedup_beta"]) -> pd.DataFrame:
    """Multi-threaded runs: accumulated counters C1, C2, C3 of the single-threaded signature,
    the thread count ``threads`` (1..hw_threads) and the measured ``speedup``: ``threads``
    itself up to ``cores`` (the linear part of eq. 2.4, times 1 + N(0, 0.01)), above it eq.
    2.4 with ``beta`` (Table 2.2) + N(0, noise) (the thesis's fit has RMSE 0.69-0.71)."""
    if not 1 <= cores <= hw_threads:
        raise UsageError(f"cores = {cores}, hw_threads = {hw_threads}: expected "
                         "1 <= cores <= hw_threads")
    rng = np.random.default_rng([seed, 24])
    c1 = rng.uniform(2e11, 6e11, n)
    ipc = rng.uniform(0.5, 2.0, n)
    c2 = ipc * c1
    c3 = c2 * rng.uniform(0.2, 3.0, n) / 1000.0
    threads = rng.integers(1, hw_threads + 1, n)
    above = threads > cores
    linear = threads * (1.0 + rng.normal(0.0, 0.01, n))
    model = beta[0] + beta[1] * c1 + beta[2] * c2 + beta[3] * c3 + beta[4] * threads
    speedup = np.where(above, model + rng.normal(0.0, noise, n), linear)
    return pd.DataFrame({"C1": c1, "C2": c2, "C3": c3, "threads": threads,
                         "speedup": speedup, "speedup_true": np.where(above, model, threads)})
