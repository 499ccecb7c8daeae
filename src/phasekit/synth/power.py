"""Synthetic power profiles with a known phase structure, and counter runs for fingerprints.

:func:`generate_power_profiles` (Silva 2024, ch. 5): a program made of segments of different
character (compute-bound, memory-bound, serial, mixed) run once per configuration (cores x
frequencies; default the thesis's 32 x 13 = 416), power sampled every 0.5 s (ch. 5.8.1). Our
model (not the thesis's), per segment s at f GHz on p cores:

- time ``T_s = W_s (1 - w_s + w_s / p) ((1 - m_s) f_max / f + m_s)``: Amdahl in the cores
  (parallel share w_s), only the non-memory share m_s scales with the frequency;
- power ``P_s = c3 + S_s(p) a_s (c1 f^3 + c2 f)`` (Silva 2024, eq. 4.14, with the busy cores
  ``S_s(p) = 1 / (1 - w_s + w_s / p)`` and an activity ``a_s = 1 - 0.6 m_s``);
- readings: the segment's power at each sample time times ``1 + noise N(0, 1)``, the first
  reading a random fraction of a period after the start.

``speed="uniform"`` (default) follows the thesis's assumption that a configuration changes the
speed only: each segment takes the same share of every configuration's run (its work share),
the run lasting ``sum_s T_s``; the segment boundaries are then the same fractions for every
configuration (multiples of 1 %), and the optimal division of the generator's own segments is
exact ground truth for the fraction-based method. ``speed="per-phase"`` uses ``T_s`` per
segment, so boundaries move between configurations, as on real machines: the fraction-based
method then only approximates the truth.

:func:`generate_fingerprint_runs` (Silva 2024, ch. 5.10): runs of a few programs x inputs with
instructions and memory loads and stores per sample, whose ratio series share one shape per
program, stretched in time per input (input k lasts about 2^k times the first, the PaScal
Viewer's convention) and scaled in value, with noise and outlier spikes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.errors import UsageError
from phasekit.profile import Profile
from phasekit.results import plain

if TYPE_CHECKING:
    from phasekit.energy.phasediv import PowerProfiles

__all__ = [
    "SEGMENT_KINDS",
    "PowerTruth",
    "generate_fingerprint_runs",
    "generate_power_profiles",
]

#: Segment characters: (memory share m, parallel share w).
SEGMENT_KINDS: dict[str, tuple[float, float]] = {
    "compute": (0.05, 0.995),
    "memory": (0.85, 0.97),
    "serial": (0.3, 0.2),
    "mixed": (0.45, 0.9),
}
#: Power model constants (W/GHz^3, W/GHz, W): our choice, a 2-socket node of ~120 W idle.
C1, C2, C3 = 0.6, 1.0, 120.0


@dataclass(frozen=True)
class PowerTruth:
    """Ground truth of :func:`generate_power_profiles`.

    ``boundaries[c]``: the segment boundaries (fractions, 0 and 1 included) in configuration c
    (the same row for every c with ``speed="uniform"``); ``segment_energy[s, c]``: exact
    energy (J) of segment s in configuration c, noise-free; ``best[s]`` its minimum-energy
    configuration; ``energy_j``: the optimal division on the segments (sum over segments of the
    minimum); ``single_energy_j`` / ``single_config``: the best single configuration.
    """

    kinds: tuple[str, ...]
    speed: str
    boundaries: np.ndarray
    segment_energy: np.ndarray
    segment_time: np.ndarray

    @property
    def best(self) -> np.ndarray:
        return np.argmin(self.segment_energy, axis=1)

    @property
    def energy_j(self) -> float:
        return float(self.segment_energy.min(axis=1).sum())

    @property
    def single_config(self) -> int:
        return int(np.argmin(self.segment_energy.sum(axis=0)))

    @property
    def single_energy_j(self) -> float:
        return float(self.segment_energy.sum(axis=0).min())

    @property
    def n_phases(self) -> int:
        """Phases of the optimal division: segments with the same best configuration as the
        previous one merged."""
        best = self.best
        return int(1 + np.count_nonzero(best[1:] != best[:-1]))

    def phase_breakpoints(self) -> np.ndarray:
        """Breakpoints (fractions) of the optimal division, uniform speed only."""
        if self.speed != "uniform":
            raise UsageError("phase breakpoints are common to all configurations only with "
                             "speed='uniform'")
        best = self.best
        keep = np.concatenate([[True], best[1:] != best[:-1], [True]])
        return self.boundaries[0][keep]

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_truth", "version": 1, "kinds": list(self.kinds),
                      "speed": self.speed, "energy_j": self.energy_j,
                      "single_energy_j": self.single_energy_j,
                      "single_config": self.single_config, "best": self.best,
                      "n_phases": self.n_phases, "boundaries": self.boundaries,
                      "segment_energy": self.segment_energy,
                      "segment_time": self.segment_time})


def generate_power_profiles(*, cores: Sequence[int] = tuple(range(1, 33)),
                            freqs_ghz: Sequence[float] = tuple(
                                np.round(np.linspace(1.2, 2.4, 13), 2)),
                            kinds: Sequence[str] | None = None, n_segments: int = 6,
                            work_s: float = 1200.0, speed: str = "uniform",
                            noise: float = 0.02, period: float = 0.5,
                            seed: int = 0) -> tuple[PowerProfiles, PowerTruth]:
    """Power profiles of a phased program over cores x frequencies, with ground truth.

    ``kinds``: the segments' characters in order (default ``n_segments`` drawn from
    :data:`SEGMENT_KINDS`, no two consecutive alike); ``work_s``: the run time on one core at
    the highest frequency; work shares are random multiples of 1 % (at least 5 %).
    """
    rng = np.random.default_rng(seed)
    if speed not in ("uniform", "per-phase"):
        raise UsageError("expected 'uniform' or 'per-phase'", parameter="speed", value=speed)
    if kinds is None:
        names = list(SEGMENT_KINDS)
        chosen: list[str] = []
        for _ in range(n_segments):
            options = [k for k in names if not chosen or k != chosen[-1]]
            chosen.append(str(rng.choice(options)))
        kinds = chosen
    kinds = tuple(kinds)
    unknown = [k for k in kinds if k not in SEGMENT_KINDS]
    if unknown or not kinds:
        raise UsageError("expected some of " + ", ".join(SEGMENT_KINDS), parameter="kinds",
                         value=kinds)
    n_seg = len(kinds)
    if n_seg > 20:
        raise UsageError("at most 20 segments (each takes at least 5 % of the work)")
    extra = rng.multinomial(100 - 5 * n_seg, np.full(n_seg, 1.0 / n_seg))
    shares = (5 + extra) / 100.0
    m = np.array([SEGMENT_KINDS[k][0] for k in kinds])
    w = np.array([SEGMENT_KINDS[k][1] for k in kinds])
    p = np.repeat(np.asarray(cores, dtype=np.float64), len(freqs_ghz))
    f = np.tile(np.asarray(freqs_ghz, dtype=np.float64), len(cores))
    f_max = float(np.max(f))
    amdahl = (1 - w[:, None]) + w[:, None] / p[None, :]  # (segments, configs)
    seg_time = (work_s * shares[:, None] * amdahl
                * ((1 - m[:, None]) * f_max / f[None, :] + m[:, None]))
    seg_power = C3 + (1 / amdahl) * (1 - 0.6 * m[:, None]) * (C1 * f ** 3 + C2 * f)[None, :]
    total = seg_time.sum(axis=0)
    if speed == "uniform":
        seg_time = shares[:, None] * total[None, :]
    n_conf = p.size
    bounds = np.zeros((n_conf, n_seg + 1))
    bounds[:, 1:] = np.cumsum(seg_time, axis=0).T / total[:, None]
    bounds[:, -1] = 1.0
    starts = 1000.0 * np.arange(n_conf) + rng.uniform(0, 10, n_conf)
    labels, times, power, params = [], [], [], []
    for c in range(n_conf):
        offset = rng.uniform(0, period)
        t_rel = np.arange(offset, total[c], period)
        if t_rel.size == 0:
            t_rel = np.array([0.5 * total[c]])
        seg = np.minimum(np.searchsorted(bounds[c, 1:] * total[c], t_rel, side="right"),
                         n_seg - 1)
        reading = seg_power[seg, c] * (1 + noise * rng.standard_normal(t_rel.size))
        labels.append(f"{int(p[c])}c@{f[c]:g}GHz")
        times.append(starts[c] + t_rel)
        power.append(reading)
        params.append({"cores": int(p[c]), "frequency_ghz": float(f[c])})
    from phasekit.energy.phasediv import PowerProfiles  # its numba kernels: not for fingerprints

    profiles = PowerProfiles.from_series(
        labels, starts, total, times, power, params=params,
        meta={"source": "phasekit.synth.generate_power_profiles", "seed": seed,
              "speed": speed, "kinds": list(kinds), "noise": noise, "period_s": period})
    truth = PowerTruth(kinds=kinds, speed=speed, boundaries=bounds,
                       segment_energy=seg_power * seg_time, segment_time=seg_time)
    return profiles, truth


# --- fingerprints --------------------------------------------------------------------------------
def _program_shape(rng: np.random.Generator) -> dict[str, Any]:
    n = int(rng.integers(3, 7))
    edges = np.sort(rng.uniform(0.08, 0.92, n - 1))
    return {"edges": edges, "levels": rng.uniform(1.5, 6.0, n),
            "width": float(rng.uniform(0.005, 0.02)),
            "wave": (float(rng.uniform(0, 0.4)), float(rng.uniform(4, 20)),
                     float(rng.uniform(0, 2 * np.pi)))}


def _shape_at(shape: Mapping[str, Any], x: np.ndarray) -> np.ndarray:
    levels = shape["levels"]
    y = np.full_like(x, levels[0])
    for edge, a, b in zip(shape["edges"], levels[:-1], levels[1:], strict=True):
        y += (b - a) / (1 + np.exp(-(x - edge) / shape["width"]))
    amp, cycles, phase = shape["wave"]
    return y * (1 + amp * 0.5 * np.sin(2 * np.pi * cycles * x + phase))


def generate_fingerprint_runs(*, programs: int = 4, inputs: int = 3, repetitions: int = 1,
                              base_s: float = 2.0, period: float = 0.01, noise: float = 0.05,
                              outliers: float = 0.005, seed: int = 0) -> list[Profile]:
    """Runs (Profiles with ``instructions``, ``mem_loads``, ``mem_stores`` per sample) of
    ``programs`` x ``inputs`` x ``repetitions``; ``meta`` has "program", "input",
    "repetition". The default 10 ms sampling is the thesis's (ch. 5.10.2)."""
    rng = np.random.default_rng(seed)
    if programs < 1 or inputs < 1 or repetitions < 1:
        raise UsageError("programs, inputs and repetitions must be at least 1")
    shapes = [_program_shape(rng) for _ in range(programs)]
    runs = []
    for prog, shape in enumerate(shapes):
        for inp in range(inputs):
            for rep in range(repetitions):
                duration = base_s * 2 ** inp * rng.uniform(0.9, 1.1)
                n = max(8, round(duration / period))
                x = (np.arange(n) + 0.5) / n
                warp = 0.01 * rng.standard_normal() * np.sin(np.pi * x)
                ratio = _shape_at(shape, np.clip(x + warp, 0, 1)) * (1 + 0.15 * inp)
                ratio *= np.exp(noise * rng.standard_normal(n))
                spikes = rng.random(n) < outliers
                ratio[spikes] *= rng.uniform(2, 4, int(spikes.sum()))
                instructions = 1e9 * period * rng.uniform(0.8, 1.2) * np.exp(
                    0.02 * rng.standard_normal(n))
                memory = instructions / ratio
                values = np.column_stack([instructions, 0.7 * memory, 0.3 * memory])
                runs.append(Profile(values=values, period=period,
                                    metrics=("instructions", "mem_loads", "mem_stores"),
                                    node="synthetic",
                                    meta={"program": f"prog{prog}", "input": f"in{inp}",
                                          "repetition": rep,
                                          "source": "phasekit.synth.generate_fingerprint_runs",
                                          "seed": seed}))
    return runs
