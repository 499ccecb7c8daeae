"""Synthetic measurement campaigns with known ground truth (Silva 2024 chapter 4).

Two generators over the thesis's grid (Silva 2024, section 4.9: 1 <= p <= 32 cores,
1.2 <= f <= 2.2 GHz, 1 <= N <= 5; :data:`FREQUENCIES` 11 steps of 0.1 GHz, :data:`CORES` 17
counts, :data:`INPUTS` 1..5; threads = cores, as in the thesis):

- :func:`seed_campaign`: time and power exactly the published model (eqs. 4.14, 4.20), with
  multiplicative log-normal noise on time and on mean power (``noise``, a standard deviation
  in log units: 0.01 is about 1 %). Default parameters :data:`SEED_PARAMS` are our choice, of
  the magnitude of a 32-core node measured by IPMI: 90 W static (c3), about 4.3 W per busy core
  at 2.2 GHz, a program taking 11 s on 32 cores at 2.2 GHz for N = 1 and 38 min on one core at
  1.2 GHz for N = 5. Its minimum-energy frequency at 32 cores, (c3 / (2 c1 p))^(1/3) =
  1.67 GHz, lies inside the grid.
- :func:`realistic_campaign`: a program whose behaviour the published model does not contain, as
  in real PARSEC campaigns (the published model misses ~18 % from 10 random
  configurations and cannot go under ~15 % even from all of them). Our construction, per
  run, from named effects (:data:`PROGRAMS` holds four archetypes):

  * work W(N) = N^b times a fixed per-input deviation exp(eps_N), eps_N ~ N(0, input_jitter)
    drawn once per program (PARSEC inputs are not on a power law);
  * a frequency-insensitive memory share mu of the single-core time at 2.2 GHz; the memory
    part speeds up only up to ``bandwidth_cores`` cores (bandwidth saturation);
  * a serial share s0 N^-gamma of the work (Gustafson: larger inputs are more parallel);
  * beyond the bandwidth limit the memory part slows down by ``contention`` per
    ``bandwidth_cores`` extra cores (cache and memory-controller thrashing);
  * two sockets: cores beyond 16 count 0.75 each (NUMA), and the second socket adds
    ``socket_w`` of static power once it is in use;
  * input reading time ``io_s`` N (insensitive to f and p) and a synchronization cost
    ``sync`` log2(p) W^0.5 / f;
  * power per phase: static c3, busy cores c1 f V^2 + c2 V with the voltage V = f above
    ``v_floor_ghz`` and constant below it (a minimum voltage), times an activity of 1
    (compute) or ``mem_activity`` (memory stalls), allocated idle cores ``idle_activity`` of
    that (spinning), DRAM/uncore power ``dram_w`` times the bandwidth in use; energy = sum of
    phase power x phase time;
  * noise: log-normal on the run time (``noise``) and on the mean power (``noise`` / 2).

Both return a :class:`SynthCampaign`: the campaign (runs in grid order, start/stop times one
after the other with 5 s idle, the thesis's ``--idtm 5``) and the noiseless time and energy per
run, with the generator's parameters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phasekit.campaign import Campaign, Run
from phasekit.errors import UsageError

__all__ = [
    "CORES",
    "FREQUENCIES",
    "INPUTS",
    "PROGRAMS",
    "SEED_PARAMS",
    "SynthCampaign",
    "grid",
    "realistic_campaign",
    "seed_campaign",
]

#: 1.2-2.2 GHz in 11 steps (Silva 2024, section 4.8).
FREQUENCIES: tuple[float, ...] = tuple(round(1.2 + 0.1 * k, 1) for k in range(11))
#: 17 core counts in 1..32 (the issue's real campaigns: 17 counts).
CORES: tuple[int, ...] = (1, 2, *range(4, 33, 2))
#: Inputs 1..5 (Silva 2024, section 4.8).
INPUTS: tuple[int, ...] = (1, 2, 3, 4, 5)

#: Parameters of :func:`seed_campaign` (our choice, see the module docstring).
SEED_PARAMS: dict[str, float] = {"c1": 0.3, "c2": 0.5, "c3": 90.0, "d1": 400.0, "d2": 1.2,
                                 "w": 0.97}

#: Archetypes of :func:`realistic_campaign` (our construction; names say what they resemble).
PROGRAMS: dict[str, dict[str, float]] = {
    # blackscholes/swaptions-like: compute bound, scales well
    "compute": {"a_s": 900.0, "b": 1.3, "input_jitter": 0.20, "mu": 0.08, "bandwidth_cores": 24,
                "s0": 0.02, "gamma": 0.3, "io_s": 0.5, "sync": 0.004, "c1": 0.3, "c2": 0.5,
                "c3": 90.0, "mem_activity": 0.6, "idle_activity": 0.35, "dram_w": 15.0,
               "contention": 0.0, "socket_w": 25.0, "v_floor_ghz": 1.5},
    # canneal/streamcluster-like: memory bound, bandwidth saturates
    "memory": {"a_s": 700.0, "b": 1.1, "input_jitter": 0.25, "mu": 0.55, "bandwidth_cores": 10,
               "s0": 0.05, "gamma": 0.4, "io_s": 1.5, "sync": 0.006, "c1": 0.3, "c2": 0.5,
               "c3": 90.0, "mem_activity": 0.55, "idle_activity": 0.35, "dram_w": 25.0,
              "contention": 0.3, "socket_w": 25.0, "v_floor_ghz": 1.5},
    # bodytrack/dedup-like: large serial part, input reading, synchronization
    "irregular": {"a_s": 600.0, "b": 1.5, "input_jitter": 0.30, "mu": 0.3,
                  "bandwidth_cores": 16, "s0": 0.15, "gamma": 0.5, "io_s": 4.0, "sync": 0.02,
                  "c1": 0.3, "c2": 0.5, "c3": 90.0, "mem_activity": 0.6, "idle_activity": 0.4,
                  "dram_w": 20.0,
                 "contention": 0.15, "socket_w": 25.0, "v_floor_ghz": 1.5},
    # x264/ferret-like: in between
    "mixed": {"a_s": 800.0, "b": 1.2, "input_jitter": 0.25, "mu": 0.25, "bandwidth_cores": 16,
              "s0": 0.06, "gamma": 0.3, "io_s": 1.0, "sync": 0.01, "c1": 0.3, "c2": 0.5,
              "c3": 90.0, "mem_activity": 0.6, "idle_activity": 0.35, "dram_w": 20.0,
             "contention": 0.1, "socket_w": 25.0, "v_floor_ghz": 1.5},
}
_F_REF = 2.2  # GHz: the memory share mu is defined at the top frequency
_NUMA_CORES = 16
_NUMA_WEIGHT = 0.75


@dataclass(frozen=True)
class SynthCampaign:
    """A synthetic campaign and its ground truth (noiseless time and energy per run)."""

    campaign: Campaign
    kind: str
    params: Mapping[str, Any]
    noise: float
    time_s: np.ndarray = field(repr=False)
    energy_j: np.ndarray = field(repr=False)


def grid(frequencies: Sequence[float] = FREQUENCIES, cores: Sequence[int] = CORES,
         inputs: Sequence[int] = INPUTS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (f, p, N) of the grid, as three flat arrays (inputs slowest, frequency fastest)."""
    n, p, f = np.meshgrid(np.asarray(inputs, float), np.asarray(cores, float),
                          np.asarray(frequencies, float), indexing="ij")
    return f.ravel(), p.ravel(), n.ravel()


def _check_grid(frequencies: Sequence[float], cores: Sequence[int],
                inputs: Sequence[int]) -> None:
    if not (len(frequencies) and len(cores) and len(inputs)):
        raise UsageError("the grid needs at least one frequency, core count and input")
    if min(frequencies) <= 0 or min(cores) < 1 or min(inputs) <= 0:
        raise UsageError("frequencies and inputs must be positive and core counts >= 1")


def _campaign(f: np.ndarray, p: np.ndarray, n: np.ndarray, time_s: np.ndarray,
              energy_j: np.ndarray, program: str, repetitions: int,
              meta: Mapping[str, Any]) -> Campaign:
    runs = []
    clock = 0.0
    for k in range(f.size):
        for rep in range(1, repetitions + 1):
            t, e = float(time_s[k, rep - 1]), float(energy_j[k, rep - 1])
            runs.append(Run(threads=int(p[k]), cores=int(p[k]), frequency_ghz=float(f[k]),
                            input=f"{n[k]:g}", repetition=rep, start_s=clock,
                            stop_s=clock + t, time_s=t, energy_j=e))
            clock += t + 5.0
    inputs = tuple(dict.fromkeys(f"{v:g}" for v in np.unique(n)))
    return Campaign(runs=tuple(runs), program=program, inputs=inputs, meta=dict(meta))


def _noisy(time_s: np.ndarray, power_w: np.ndarray, noise_t: float, noise_p: float,
           repetitions: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    shape = (time_s.size, repetitions)
    t = time_s[:, None] * np.exp(noise_t * rng.standard_normal(shape))
    pw = power_w[:, None] * np.exp(noise_p * rng.standard_normal(shape))
    return t, t * pw


def seed_campaign(*, params: Mapping[str, float] | None = None, noise: float = 0.01,
                  seed: int = 0, repetitions: int = 1,
                  frequencies: Sequence[float] = FREQUENCIES, cores: Sequence[int] = CORES,
                  inputs: Sequence[int] = INPUTS) -> SynthCampaign:
    """A campaign whose time and power follow the published model exactly, plus noise."""
    from phasekit.energy.models import seed_power, seed_time

    _check_grid(frequencies, cores, inputs)
    if noise < 0 or repetitions < 1:
        raise UsageError("noise must be >= 0 and repetitions >= 1")
    theta = {**SEED_PARAMS, **(params or {})}
    unknown = set(theta) - set(SEED_PARAMS)
    if unknown:
        raise UsageError(f"unknown seed-model parameter(s): {', '.join(sorted(unknown))}",
                         parameter="params")
    f, p, n = grid(frequencies, cores, inputs)
    time_s = seed_time(f, p, n, theta["d1"], theta["d2"], theta["w"])
    power = seed_power(f, p, theta["c1"], theta["c2"], theta["c3"])
    rng = np.random.default_rng(seed)
    t, e = _noisy(time_s, power, noise, noise, repetitions, rng)
    meta = {"synthetic": "seed", "params": dict(theta), "noise": noise, "seed": seed}
    return SynthCampaign(campaign=_campaign(f, p, n, t, e, "synthetic-seed", repetitions, meta),
                         kind="seed", params=theta, noise=noise, time_s=time_s,
                         energy_j=time_s * power)


def realistic_truth(f: np.ndarray, p: np.ndarray, n: np.ndarray, params: Mapping[str, float],
                    input_factor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Noiseless (time, energy) of the realistic generator (see the module docstring).

    ``input_factor[k]`` multiplies the work of run k (the per-input deviation exp(eps_N)).
    """
    q = params
    work = q["a_s"] * n ** q["b"] * input_factor          # single-core seconds at 2.2 GHz
    p_eff = np.where(p <= _NUMA_CORES, p, _NUMA_CORES + _NUMA_WEIGHT * (p - _NUMA_CORES))
    p_mem = np.minimum(p_eff, q["bandwidth_cores"])
    serial = np.minimum(q["s0"] * n ** (-q["gamma"]), 1.0)
    compute = work * (1.0 - q["mu"]) * _F_REF / f         # compute seconds on one core at f
    memory = work * q["mu"]                               # stall seconds on one core
    t_serial_c, t_serial_m = serial * compute, serial * memory
    t_par_c = (1.0 - serial) * compute / p_eff
    crowd = 1.0 + q["contention"] * np.maximum(p_eff - q["bandwidth_cores"], 0.0) / q[
        "bandwidth_cores"]
    t_par_m = (1.0 - serial) * memory / p_mem * crowd
    t_io = q["io_s"] * n
    t_sync = q["sync"] * np.log2(p) * np.sqrt(work) * _F_REF / f
    volt = np.maximum(f, q["v_floor_ghz"])                 # voltage ~ f above the floor
    dyn = q["c1"] * f * volt**2 + q["c2"] * volt          # one fully busy core
    c3 = q["c3"] + q["socket_w"] * (p > _NUMA_CORES)      # the second socket leaves sleep
    idle = q["idle_activity"] * dyn                       # an allocated core waiting (spinning)
    mem_act = q["mem_activity"] * dyn
    dram = q["dram_w"]
    bw_share = p_mem / q["bandwidth_cores"]
    energy = (
        t_serial_c * (c3 + dyn + (p - 1) * idle)
        + t_serial_m * (c3 + mem_act + (p - 1) * idle + dram / q["bandwidth_cores"])
        + t_par_c * (c3 + p * dyn)
        + t_par_m * (c3 + p_mem * mem_act + (p - p_mem) * idle + dram * bw_share)
        + t_io * (c3 + 0.5 * dyn + (p - 1) * idle)
        + t_sync * (c3 + p * idle)
    )
    time_s = t_serial_c + t_serial_m + t_par_c + t_par_m + t_io + t_sync
    return time_s, energy


def realistic_campaign(program: str = "mixed", *, noise: float = 0.015, seed: int = 0,
                       repetitions: int = 1, params: Mapping[str, float] | None = None,
                       frequencies: Sequence[float] = FREQUENCIES, cores: Sequence[int] = CORES,
                       inputs: Sequence[int] = INPUTS) -> SynthCampaign:
    """A campaign of a PARSEC-like program the published model does not contain (see above)."""
    if program not in PROGRAMS:
        raise UsageError("unknown program; expected one of " + ", ".join(PROGRAMS),
                         parameter="program", value=program)
    _check_grid(frequencies, cores, inputs)
    if noise < 0 or repetitions < 1:
        raise UsageError("noise must be >= 0 and repetitions >= 1")
    q = {**PROGRAMS[program], **(params or {})}
    unknown = set(q) - set(PROGRAMS[program])
    if unknown:
        raise UsageError(f"unknown parameter(s): {', '.join(sorted(unknown))}",
                         parameter="params")
    rng = np.random.default_rng(seed)
    levels = np.unique(np.asarray(inputs, float))
    deviation = np.exp(q["input_jitter"] * rng.standard_normal(levels.size))
    f, p, n = grid(frequencies, cores, inputs)
    factor = deviation[np.searchsorted(levels, n)]
    time_s, energy = realistic_truth(f, p, n, q, factor)
    t, e = _noisy(time_s, energy / time_s, noise, noise / 2, repetitions, rng)
    meta = {"synthetic": "realistic", "program": program, "params": q, "noise": noise,
            "seed": seed, "input_deviation": deviation.tolist()}
    return SynthCampaign(campaign=_campaign(f, p, n, t, e, f"synthetic-{program}", repetitions,
                                            meta),
                         kind="realistic", params={**q, "input_deviation": deviation.tolist()},
                         noise=noise, time_s=time_s, energy_j=energy)
