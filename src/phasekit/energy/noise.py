"""How precisely a campaign's energy readings can be compared: the noise of the meter and of
the runs, and a reference that is not fooled by one lucky reading.

A campaign reads each configuration once or a few times; two readings closer than their
noise cannot be told apart, and the single lowest reading of an input is partly luck. We
estimate, from the campaign itself:

- **the reading noise**, relative: how far a reading lies from the mean of its two
  neighbours one frequency step below and above (one core-count step where the campaign
  has fewer than three frequencies), in logarithms: energy varies smoothly across one step,
  so that second difference is noise (its variance is 1.5 x one reading's) plus a little
  curvature. The noise is the robust scale (1.4826 x median absolute deviation) of the
  second differences over sqrt(1.5), over the configurations near the minimum of their
  input (denoised energy within :data:`NEAR_MINIMUM` of it): that is where choices are made,
  and far from it the curvature across one step inflates the scatter;
- **the meter's step**: readings of an energy counter sampled at a fixed rate are multiples
  of about one sample's energy (a campaign of 1-3 J runs read with a 0.4-0.5 J step). The
  step is the period ``q`` at which the readings' phases ``2 pi e / q`` concentrate most
  (Rayleigh's statistic ``n R^2``, over the readings up to the median, where the step is
  the largest share of a reading), reported when that concentration is beyond what chance
  gives over the periods searched (:data:`STEP_EVIDENCE`), and put against the median
  reading: a step of :data:`COARSE_STEP` of it or more is a coarse meter, whose single
  readings of configurations one step apart may be the same energy;
- **the denoised energy** of a configuration: the median of its own reading and its
  neighbours' (a 3 x 3 neighbourhood of frequency and core-count steps, fewer at the grid's
  edges). The denoised best of an input is the lowest denoised energy; a choice's denoised
  regret is its denoised energy over that, minus one. Energy is smooth across one frequency
  step, but not always across one core count: a pipeline whose stages divide some thread
  counts evenly reads low at 12 and 16 cores and high at 14 and 18. Where the readings'
  scatter across core counts near the minimum is more than :data:`ROUGH_ACROSS_CORES` x
  their scatter across frequencies (:func:`smooth_across_cores`), the neighbourhood is the
  same core count's three nearest frequencies instead, so that a configuration whose
  frequency neighbours agree is not raised by its core-count neighbours.

Two configurations are **indistinguishable** when their readings differ by less than
:data:`DISTINGUISH` x the relative noise (the difference of two readings has sqrt(2) x one
reading's noise; 2 x that is about a 95 % two-sided bound).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from phasekit.energy.columns import Configurations

__all__ = ["COARSE_STEP", "DISTINGUISH", "NEAR_MINIMUM", "ROUGH_ACROSS_CORES", "STEP_EVIDENCE",
           "ReadingNoise", "denoised_energy", "denoised_error", "meter_step", "neighbourhood",
           "reading_noise", "smooth_across_cores"]

#: Configurations whose denoised energy is within this share of their input's lowest are
#: "near the minimum", where the noise is measured (our choice: 20 %).
NEAR_MINIMUM = 0.20
#: Rayleigh's ``n R^2`` beyond which readings are called stepped: over the ~1250 periods
#: searched, chance alone reaches about 8 (the maximum of that many unit exponentials); 20
#: leaves a margin (our choice).
STEP_EVIDENCE = 20.0
#: Periods searched for the meter's step: geometric, ~0.4 % apart over a factor of 50, then
#: a quarter as many within :data:`REFINE` of the best.
PERIODS = 1000
REFINE = 1.01
#: A period whose evidence is at least this share of the best one's is as good: readings
#: on a step q are also on q/2, q/3..., so the longest of them is the step.
STRONG_SHARE = 0.8
#: Readings differing by less than this x sqrt(2) x the relative noise are indistinguishable.
DISTINGUISH = 2.0 * math.sqrt(2.0)
#: The fewest configurations near the minimum with both neighbours measured for a noise
#: estimate.
MIN_NEIGHBOURHOODS = 8
#: A meter step of at least this share of the median reading is coarse: single readings of
#: configurations one step apart cannot be told apart (ours: 10 %, ten steps a reading;
#: benchmarks/energy_choose.py reports the regret on such campaigns apart).
COARSE_STEP = 0.10
#: Energy is taken as rough across core counts when the scatter of the readings' second
#: differences across core counts near the minimum is more than this x that across
#: frequencies: neighbouring core counts then differ by more than the noise threshold
#: (:data:`DISTINGUISH` x the noise, the frequency scatter over sqrt(1.5)) allows. On the
#: 22 real PaScal campaigns the ratio is 0.2-1.5, except 4.9-6.3 on one dedup campaign,
#: whose readings alternate between core counts.
ROUGH_ACROSS_CORES = DISTINGUISH / math.sqrt(1.5)


@dataclass(frozen=True)
class ReadingNoise:
    """The noise of a campaign's readings: ``relative`` (1 sigma, as a share of the
    reading), from ``n_used`` neighbourhoods; the meter's ``step_j`` (None when the readings
    show none) and its evidence ``step_evidence`` (Rayleigh's n R^2)."""

    relative: float
    n_used: int
    step_j: float | None
    step_evidence: float
    #: The median reading (J), to which the step compares.
    median_j: float = float("nan")
    #: Whether energy is as smooth across core counts as across frequencies
    #: (:func:`smooth_across_cores`); where not, a configuration's neighbours are its
    #: frequency neighbours at the same core count.
    across_cores: bool = True

    @property
    def known(self) -> bool:
        return math.isfinite(self.relative)

    def threshold(self) -> float:
        """The relative difference below which two readings are indistinguishable."""
        return DISTINGUISH * self.relative if self.known else 0.0

    def sentence(self) -> str:
        """``readings scatter ±3.3 % (1 sigma) around their neighbours; the meter steps in
        about 0.45 J``, or why the noise is unknown."""
        if not self.known:
            text = ("the reading noise is unknown (fewer than "
                    f"{MIN_NEIGHBOURHOODS} measured configurations near the minimum with both "
                    "neighbours measured)")
        else:
            text = (f"readings scatter ±{100 * self.relative:.1f} % (1 sigma) around their "
                    f"neighbours near the minimum; differences under "
                    f"{100 * self.threshold():.0f} % are within the noise")
        if self.step_j is not None:
            text += f"; the meter steps in about {self.step_j:.3g} J"
            if math.isfinite(self.median_j) and self.median_j > 0:
                text += (f", {100 * self.step_j / self.median_j:.0f} % of the median reading "
                         f"({self.median_j:.3g} J)")
                share = self.step_j / self.median_j
                if share >= COARSE_STEP:
                    # the scatter is a robust one: most neighbours read the same count of
                    # steps, and the occasional reading a whole step off is an outlier to it
                    beyond = (", more than the scatter of most readings says" if self.known
                              and share > self.threshold() else "")
                    text += (f": a reading can be a whole step off{beyond}, so readings one "
                             "step apart may be the same energy; repeated or longer runs tell "
                             "them apart")
        if not self.across_cores:
            text += ("; energy is rough across core counts (neighbouring core counts differ "
                     "by more than the noise allows), so a configuration's denoised energy "
                     "and the smoothing use only its frequency neighbours at the same core "
                     "count")
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"relative": self.relative, "n_used": self.n_used, "step_j": self.step_j,
                "step_evidence": self.step_evidence, "threshold": self.threshold(),
                "median_j": self.median_j, "across_cores": self.across_cores}

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> ReadingNoise:
        relative = data.get("relative")
        step = data.get("step_j")
        return ReadingNoise(_number(relative),
                            int(data.get("n_used") or 0),
                            None if step is None else float(step),
                            float(data.get("step_evidence") or 0.0),
                            _number(data.get("median_j")),
                            data.get("across_cores") is not False)


def neighbourhood(across_cores: bool = True) -> str:
    """The neighbours a denoised energy takes the median over, in words (``across_cores``:
    :attr:`ReadingNoise.across_cores`)."""
    return ("neighbouring frequency and core-count steps" if across_cores
            else "neighbouring frequency steps at the same core count")


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def _matrices(configs: Configurations | pd.DataFrame
              ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per input: its rows, each row's (frequency, core) grid position, and the energy
    matrix over its frequencies x core counts (NaN where not measured; the median of several
    readings of one configuration)."""
    frequency = np.asarray(configs["frequency_ghz"], float)
    frequency = np.where(np.isfinite(frequency), frequency, 0.0)
    cores = np.asarray(configs["cores"], float)
    inputs = np.asarray(configs["input"], float)
    energy = np.asarray(configs["energy_j"], float)
    out = []
    for n in np.unique(inputs):
        rows = np.flatnonzero(inputs == n)
        freqs, fi = np.unique(frequency[rows], return_inverse=True)
        counts, pi = np.unique(cores[rows], return_inverse=True)
        cell = fi * counts.size + pi
        matrix = np.full(freqs.size * counts.size, np.nan)
        order = np.argsort(cell, kind="stable")
        cells, starts = np.unique(cell[order], return_index=True)
        groups = np.split(energy[rows][order], starts[1:])
        matrix[cells] = [float(np.median(g)) for g in groups] if len(cells) < len(rows) \
            else energy[rows][order]
        out.append((rows, fi, pi, matrix.reshape(freqs.size, counts.size)))
    return out


def _neighbours(matrix: np.ndarray) -> np.ndarray:
    """The 3 x 3 neighbourhood of every cell of ``matrix`` as 9 layers (NaN off the grid);
    layer 4 is the cell itself."""
    padded = np.pad(matrix, 1, constant_values=np.nan)
    rows, cols = matrix.shape
    return np.stack([padded[a:a + rows, b:b + cols] for a in range(3) for b in range(3)])


def _frequency_neighbours(matrix: np.ndarray) -> np.ndarray:
    """The three nearest frequencies of every cell of ``matrix`` at its core count, as 3
    layers: one step below and above, or the next two inward at the lowest and highest
    frequency (all the rows where there are fewer than three). Shifted rather than cut
    short at the edges, so that a lone lucky reading at the highest frequency is still one
    of three; an edge frequency is then the denoised best only where its inner neighbours
    agree."""
    rows = matrix.shape[0]
    if rows < 3:
        return np.stack([np.broadcast_to(matrix[k], matrix.shape) for k in range(rows)])
    centre = np.clip(np.arange(rows), 1, rows - 2)
    return np.stack([matrix[centre + k] for k in (-1, 0, 1)])


def _near_minimum(matrix: np.ndarray) -> np.ndarray:
    """The cells whose 3 x 3 median is within :data:`NEAR_MINIMUM` of their input's least."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN: not measured
        smooth = np.nanmedian(_neighbours(matrix), axis=0)
    return smooth <= (1 + NEAR_MINIMUM) * np.nanmin(smooth)


def _second_differences(matrix: np.ndarray) -> np.ndarray:
    """The second differences of the log readings of ``matrix`` along its first axis, at
    the interior cells near the minimum (:func:`_near_minimum`) whose neighbours were
    measured."""
    logs = np.log(np.where(matrix > 0, matrix, np.nan))
    second = logs[1:-1] - (logs[:-2] + logs[2:]) / 2
    near = _near_minimum(matrix)[1:-1]
    return second[near & np.isfinite(second)]


def smooth_across_cores(configs: Configurations | pd.DataFrame) -> bool:
    """Whether energy varies across core counts as smoothly as across frequencies, near the
    minimum of each input: False when the scatter of the log readings' second differences
    across core counts is more than :data:`ROUGH_ACROSS_CORES` x that across frequencies,
    each from at least :data:`MIN_NEIGHBOURHOODS` neighbourhoods (True with fewer)."""
    along_f, along_p = [], []
    for _rows, _fi, _pi, matrix in _matrices(configs):
        along_f.append(_second_differences(matrix))
        along_p.append(_second_differences(matrix.T))
    if not along_f:
        return True
    f, p = np.concatenate(along_f), np.concatenate(along_p)
    if min(f.size, p.size) < MIN_NEIGHBOURHOODS:
        return True
    return bool(_mad(p) <= ROUGH_ACROSS_CORES * _mad(f))


def _mad(values: np.ndarray) -> float:
    """The robust scale of ``values``: 1.4826 x their median absolute deviation."""
    return 1.4826 * float(np.median(np.abs(values - np.median(values))))


def denoised_error(across_cores: bool = True) -> float:
    """The error of a denoised energy over a single reading's: a median's standard error,
    sqrt(pi / 2) / sqrt(m), over the m = 9 readings of a 3 x 3 neighbourhood, or the 3 of
    a core count's nearest frequencies where energy is rough across core counts (not
    ``across_cores``)."""
    return math.sqrt(math.pi / 2.0) / math.sqrt(9 if across_cores else 3)


def denoised_energy(configs: Configurations | pd.DataFrame, *, surrounded: bool = False,
                    across_cores: bool | None = None) -> np.ndarray:
    """Each configuration's denoised energy (module docstring), in ``configs``' row order:
    the median of its reading and its measured neighbours' on the grid of its input (its
    frequency neighbours alone where ``across_cores`` is False; None: as
    :func:`smooth_across_cores` finds). With ``surrounded``, NaN where a neighbour on the
    grid was not measured."""
    if across_cores is None:
        across_cores = smooth_across_cores(configs)
    neighbours = _neighbours if across_cores else _frequency_neighbours
    out = np.full(len(configs), np.nan)
    for rows, fi, pi, matrix in _matrices(configs):
        around = neighbours(matrix)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN: not measured
            smooth = np.nanmedian(around, axis=0)
        if surrounded:
            on_grid = neighbours(np.ones(matrix.shape))
            smooth = np.where((np.isfinite(around) == np.isfinite(on_grid)).all(axis=0),
                              smooth, np.nan)
        out[rows] = smooth[fi, pi]
    return out


def meter_step(energies: Any, *, low: float | None = None, high: float | None = None
               ) -> tuple[float | None, float]:
    """The meter's step (J) and its evidence (module docstring): the period in [``low``,
    ``high``] (default: 1 % to 50 % of the median reading, at most 2 J) at which the readings
    concentrate most; None below :data:`STEP_EVIDENCE`."""
    e = np.asarray(energies, float)
    e = e[np.isfinite(e) & (e > 0)]
    if e.size < 20:
        return None, 0.0
    median = float(np.median(e))
    low = low if low is not None else max(0.01 * median, 1e-6)
    high = high if high is not None else min(0.5 * median, 2.0)
    if not high > low:
        return None, 0.0
    lower = e[e <= median]  # the smaller readings: the step is a larger share of them
    coarse = np.geomspace(low, high, PERIODS)
    evidence = _rayleigh(lower, coarse)
    score = float(evidence.max())
    if score < STEP_EVIDENCE:
        return None, score
    # readings on a step q are also on q/2, q/3...: the longest period as strong as the best,
    # then the strongest period close to it
    longest = float(coarse[evidence >= STRONG_SHARE * score].max())
    fine = np.geomspace(longest / REFINE, longest * REFINE, PERIODS // 4)
    fine_evidence = _rayleigh(lower, fine)
    return float(fine[int(np.argmax(fine_evidence))]), max(score, float(fine_evidence.max()))


def _rayleigh(values: np.ndarray, periods: np.ndarray) -> np.ndarray:
    """Rayleigh's n R^2 of the phases ``2 pi values / period``, per period."""
    turns = 2 * np.pi * (values[None, :] / periods[:, None])
    return (np.cos(turns).sum(axis=1) ** 2 + np.sin(turns).sum(axis=1) ** 2) / values.size


def reading_noise(configs: Configurations | pd.DataFrame) -> ReadingNoise:
    """The reading noise of ``configs`` (a table of
    :func:`phasekit.energy.fit.configurations`; module docstring)."""
    residuals = []
    for _rows, _fi, _pi, matrix in _matrices(configs):
        along_frequency = matrix.shape[0] >= 3  # else along cores
        residuals.append(_second_differences(matrix if along_frequency else matrix.T))
    step, evidence = meter_step(configs["energy_j"])
    energies = np.asarray(configs["energy_j"], float)
    energies = energies[np.isfinite(energies)]
    median = float(np.median(energies)) if energies.size else float("nan")
    r = np.concatenate(residuals) if residuals else np.zeros(0)
    if r.size < MIN_NEIGHBOURHOODS:
        return ReadingNoise(float("nan"), int(r.size), step, evidence, median)
    return ReadingNoise(_mad(r) / math.sqrt(1.5), int(r.size), step, evidence, median,
                        smooth_across_cores(configs))
