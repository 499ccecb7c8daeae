"""Choosing configurations with a fitted energy model (Silva 2024, section 4.12).

For an input N the model predicts time, power and energy over the grid of the machine's
frequencies x core counts; :func:`choose` takes the minimum-energy configuration, optionally
under limits (a time budget, at most so many cores, a frequency range), the thesis's
"evaluate E over the grid, constrained, take the minimum". The thesis minimizes with
Newton-CG over continuous (f, p); a machine offers discrete settings, so the grid minimum is
the answer and exact for them, and the continuous minimum over f at the chosen core count
(bounded scalar minimization) is reported beside it: for Silva 2024's model at fixed p it is
f* = (c3 / (2 c1 p))^(1/3) clipped to the range (:func:`phasekit.energy.models.
optimal_frequency`).

- Pareto frontier: the grid points no other point beats in both time and energy (the thesis's
  energy-time analysis, section 4.12), fastest first.
- Energy-only campaigns (PaScal's tables: energy but no run time): the model is fitted on
  energy alone (``with_time`` False; d1 held at 1), so its "time" is a work scale in no unit.
  The choice then has no time: candidates' ``time_s`` and ``power_w`` are NaN, there is no
  Pareto frontier in time, and a time limit is refused (UsageError).
- A time limit that no configuration meets: the choice is None, its ``reason`` says so with
  the fastest configuration (``fastest``, kept in the JSON), and the figure shows every
  configuration of the grid against the limit.
- Baseline (eq. 4.24): Linux's ondemand governor under load runs at the maximum frequency; the
  core count is the user's. Without a user's count, as the thesis: the worst, a random
  (expected over the core counts) and the best core count at the maximum frequency. Savings =
  (E_baseline - E_chosen) / E_baseline in percent. Predicted from the model always; measured
  too when the campaign measured every configuration involved (the thesis reports measured
  savings: 69.88 % worst, 12.04 % random, -14.06 % best).
- A campaign whose frequency was not controlled has one frequency, "as run"
  (:data:`phasekit.energy.fit.NOMINAL_FREQUENCY` in the model): the choice is over cores.
- Regret (not in Silva 2024): where the campaign measured every feasible
  configuration of an input, measured energy of the choice / the lowest measured energy over
  the feasible grid - 1, in percent (NaN otherwise): what the choice costs against the best
  configuration the campaign found. Feasibility is the model's (the time limit is checked on
  predicted times).
- Uncertainty (our choice, not in Silva 2024): an :class:`Ensemble` of refits of the
  model (:func:`phasekit.energy.fit.fit_model`, as a black box) on the training
  configurations with one group left out each: leave-one-out (the jackknife) up to
  :data:`ENSEMBLE_GROUPS` training configurations, that many random groups (delete-a-group
  jackknife, K-fold) beyond. Each group's left-out configurations give out-of-sample
  residuals. The prediction interval of a configuration's energy is the jackknife+ interval
  (leave-one-out) or CV+ (groups) of Barber, Candes, Ramdas and Tibshirani (Ann. Statist.
  2021), on log energy, level :data:`LEVEL`.
- How sure a choice is: the refits share the model's bias, so their agreement is no evidence
  that a choice is good (on the real PaScal campaigns, 108 of 110 choices were "sure" by it
  and 71 % of those within 5 % of the best). The evidence that can disagree with the model
  is the data: the out-of-sample residuals give the model's error on configurations it did
  not see (:func:`model_error`, a robust standard deviation of log energy), the readings'
  noise gives a reading's error (:mod:`phasekit.energy.noise`; when unknown, half the
  out-of-sample variance is taken as the readings'). Each feasible configuration's true log
  energy is drawn as its estimate (:func:`smoothed_estimate`) plus a normal error of that
  size, correlated over one grid step as the smoother assumes (independent errors overstate
  how far the best of many near-equal configurations may lie below the choice: on the real
  campaigns they called fewer choices sure at the same reliability); the chance of a loss
  is the share of :data:`DRAWS` draws in which the choice is more than ``tolerance``
  (:data:`LOSS`, 5 %) above the best, and the choice is "sure" when that chance is at most
  :data:`RISK` (10 %). The configuration most often better in those draws is what to
  measure next. Calibration: benchmarks/energy_choose.py (on the 22 real PaScal campaigns,
  of the choices called sure 98 % were within 5 % of the denoised best; above 10 % the
  stated chance is an overestimate).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.energy.efficiency import pareto_mask
from phasekit.energy.fit import (
    FAILED_RATIO,
    NOMINAL_FREQUENCY,
    Configurations,
    FittedModel,
    bounded_minimum,
    current_label,
    fit_model,
    frequencies,
)
from phasekit.energy.noise import denoised_energy, smooth_across_cores
from phasekit.errors import InputError, UsageError
from phasekit.present import quantity
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.verbmodule import make_callable

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = ["Candidate", "Choice", "ChoiceResult", "Ensemble", "Uncertainty", "check_grid",
           "check_tolerance", "choose", "fit_ensemble", "grid_correlation", "loss_chance",
           "model_error", "pareto_front", "regret", "smoothed_estimate", "step_distance2"]

#: 5: every configuration within the limits (``evaluated``, columns) for the figure;
#: 4: how sure is the chance of a loss under the errors the data shows (``Uncertainty``'s
#: ``loss_probability``); 3: the reading noise (``noise``) and, per choice, why a measured
#: configuration stands (``why``); 2: the thesis model is "pt" (was "seed"; from_dict migrates).
RESULT_VERSION = 5
BASELINE_POLICIES = ("worst", "random", "best")
#: Refits of the ensemble: leave-one-out up to this many training configurations, this many
#: groups beyond (our choice).
ENSEMBLE_GROUPS = 10
#: Starts of each ensemble refit (fewer than a fit's 8: the first, data-driven start;
#: our choice, for speed: 10 refits of 9 configurations in about 0.2 s).
ENSEMBLE_STARTS = 1
#: Level of the prediction intervals (our choice).
LEVEL = 0.9
#: Expected regret (percent) under the refits within which ``energy suggest`` calls a
#: configuration promising (our choice).
TOLERANCE = 2.0
#: The regret (percent) past which a choice counts as lost: what "sure" guards against.
LOSS = 5.0
#: The largest chance of such a loss at which a choice is called sure (our choice; its
#: calibration on the real campaigns is in benchmarks/energy_choose.py).
RISK = 0.10
#: Draws of the errors from which the chance of a loss is counted.
DRAWS = 400
#: The residual smoother of the estimate (:func:`smoothed_estimate`): its Gaussian kernel's
#: width in grid steps, and the weight of the model (a residual of 0) against the readings.
SMOOTHING_STEPS = 1.0
SMOOTHING_PRIOR = 1.0
#: The fields of a :class:`Candidate`, in order (the columns of ``evaluated`` in the JSON).
_CANDIDATE_FIELDS = ("frequency_ghz", "cores", "time_s", "power_w", "energy_j",
                     "measured_time_s", "measured_energy_j")
#: A normal distribution's standard deviation over its median absolute deviation.
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class Candidate:
    """One configuration with its predicted time (s), power (W) and energy (J), and the
    measured time and energy when the campaign ran it (NaN otherwise). ``frequency_ghz`` is
    NaN where the frequency was not controlled; ``time_s`` and ``power_w`` where the model
    was fitted on energy alone."""

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

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Candidate:
        return Candidate(_num(data.get("frequency_ghz")), int(data["cores"]),
                         _num(data.get("time_s")), _num(data.get("power_w")),
                         _num(data.get("energy_j")), _num(data.get("measured_time_s")),
                         _num(data.get("measured_energy_j")))


def _columns(candidates: Sequence[Candidate]) -> dict[str, list[Any]]:
    """Candidates as columns (the JSON of :attr:`Choice.evaluated`: a third of the size of
    one object per candidate)."""
    return {name: [getattr(c, name) for c in candidates] for name in _CANDIDATE_FIELDS}


def _candidates(columns: Any) -> tuple[Candidate, ...]:
    """:func:`_columns` read back; () when absent or malformed (a result of version 4)."""
    if not isinstance(columns, Mapping):
        return ()
    values = [list(columns.get(name) or ()) for name in _CANDIDATE_FIELDS]
    n = len(values[0])
    if n == 0 or any(len(v) != n for v in values):
        return ()
    return tuple(Candidate(_num(f), int(p), _num(t), _num(w), _num(e), _num(mt), _num(me))
                 for f, p, t, w, e, mt, me in zip(*values, strict=True))


def _num(value: Any) -> float:
    return float("nan") if value is None else float(value)


@dataclass(frozen=True)
class Uncertainty:
    """How sure a choice is (module docstring). Energies in J, regrets in percent.

    ``loss_probability``: the chance that the choice loses more than ``tolerance`` percent
    against the best configuration, under the errors the data shows (``model_error``: the
    relative error of the model's predictions on configurations it was not fitted on;
    ``reading_error``: of a single reading); ``sure``: that chance is at most ``risk``.
    ``next_frequency_ghz``/``next_cores``: the configuration most often better than the
    choice by more than the tolerance under those errors (what to measure next; NaN/0 when
    none is). ``energy_low_j``/``energy_high_j``: the prediction interval (``level``) of the
    chosen configuration's measured energy from the refits; ``expected_regret``,
    ``worst_regret`` and ``agreement``: the choice's regret under the refits (mean,
    largest) and the share of refits whose own minimum it is, kept for reference: the refits
    share the model's bias, so they are no evidence that the choice is good.
    """

    method: str
    members: int
    level: float
    energy_low_j: float
    energy_high_j: float
    expected_regret: float
    worst_regret: float
    agreement: float
    tolerance: float
    loss_probability: float = float("nan")
    model_error: float = float("nan")
    reading_error: float = float("nan")
    risk: float = RISK
    next_frequency_ghz: float = float("nan")
    next_cores: int = 0

    @property
    def sure(self) -> bool:
        if not np.isfinite(self.loss_probability):  # read from a result before version 4
            return bool(self.expected_regret <= self.tolerance)
        return bool(self.loss_probability <= self.risk)

    def to_dict(self) -> dict[str, Any]:
        return plain({"method": self.method, "members": self.members, "level": self.level,
                      "energy_low_j": self.energy_low_j, "energy_high_j": self.energy_high_j,
                      "expected_regret": self.expected_regret,
                      "worst_regret": self.worst_regret, "agreement": self.agreement,
                      "tolerance": self.tolerance, "loss_probability": self.loss_probability,
                      "model_error": self.model_error, "reading_error": self.reading_error,
                      "risk": self.risk, "next_frequency_ghz": self.next_frequency_ghz,
                      "next_cores": self.next_cores, "sure": self.sure})

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Uncertainty:
        return Uncertainty(str(data["method"]), int(data["members"]), _num(data["level"]),
                           _num(data.get("energy_low_j")), _num(data.get("energy_high_j")),
                           _num(data.get("expected_regret")), _num(data.get("worst_regret")),
                           _num(data.get("agreement")), _num(data["tolerance"]),
                           _num(data.get("loss_probability")), _num(data.get("model_error")),
                           _num(data.get("reading_error")), _num(data.get("risk", RISK)),
                           _num(data.get("next_frequency_ghz")),
                           int(data.get("next_cores") or 0))


@dataclass(frozen=True)
class Choice:
    """The choice for one input. ``best`` is None when no configuration meets the limits
    (``reason`` says why; ``fastest`` is then the fastest configuration when the time limit
    is what none meets). Savings map a baseline policy to percent (NaN when not
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
    #: Measured energy of the choice / the lowest measured over the feasible grid - 1, in
    #: percent; NaN unless the campaign measured every feasible configuration (module
    #: docstring).
    regret: float = float("nan")
    #: The same against the denoised energies (:func:`phasekit.energy.noise.denoised_energy`:
    #: each configuration's median over its neighbourhood), which one lucky reading does not
    #: set.
    regret_denoised: float = float("nan")
    #: The feasible configuration with the lowest measured energy, where all were measured.
    best_measured: Candidate | None = None
    uncertainty: Uncertainty | None = None
    #: What the choice rests on: "model" (its prediction is the lowest) or "measured" (a
    #: configuration the model was fitted on measured lower than any prediction).
    basis: str = "model"
    #: The fastest configuration when none meets the time limit (None otherwise).
    fastest: Candidate | None = None
    #: Why the choice and the readings seem to disagree (empty otherwise): a measured
    #: configuration stands where the model predicts a lower one elsewhere that does not beat
    #: the reading beyond the noise; or, with the noise unknown, a lower reading was not taken.
    why: str = ""
    #: Every configuration within the limits, predicted and measured (for the figure; in
    #: the JSON as columns).
    evaluated: tuple[Candidate, ...] = field(default=(), repr=False, compare=False)
    #: When none meets the time limit, the configurations over it (for the figure; not in
    #: to_dict).
    over_limit: tuple[Candidate, ...] = field(default=(), repr=False, compare=False)

    def drawn_points(self) -> tuple[Candidate, ...]:
        """The configurations the figure shows: those within the limits (the Pareto frontier,
        or the choice alone, for a result saved before version 5, which kept no others), or,
        when none meets the time limit, those over it (the fastest alone from JSON)."""
        if self.best is not None:
            return self.evaluated or self.pareto or (self.best,)
        return self.over_limit or (() if self.fastest is None else (self.fastest,))

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "input": self.input, "input_label": self.input_label,
            "best": None if self.best is None else self.best.to_dict(), "reason": self.reason,
            "continuous_frequency_ghz": self.continuous_frequency_ghz,
            "feasible": self.feasible, "extrapolated": self.extrapolated,
            "baseline_energy_j": dict(self.baseline),
            "savings_predicted": dict(self.savings_predicted),
            "savings_measured": dict(self.savings_measured),
            "regret": self.regret, "regret_denoised": self.regret_denoised,
            "best_measured": (None if self.best_measured is None
                              else self.best_measured.to_dict()),
            "uncertainty": None if self.uncertainty is None else self.uncertainty.to_dict(),
            "basis": self.basis, "pareto": [c.to_dict() for c in self.pareto],
            "fastest": None if self.fastest is None else self.fastest.to_dict(),
            **({"why": self.why} if self.why else {}),
            **({"evaluated": _columns(self.evaluated)} if self.evaluated else {})})

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Choice:
        def numbers(value: Mapping[str, Any] | None) -> dict[str, float]:
            return {str(k): _num(v) for k, v in (value or {}).items()}

        best, measured, unsure, fastest = (data.get(k) for k in (
            "best", "best_measured", "uncertainty", "fastest"))
        return Choice(
            input=float(data["input"]), input_label=str(data["input_label"]),
            best=None if best is None else Candidate.from_dict(best),
            reason=str(data.get("reason", "")),
            continuous_frequency_ghz=_num(data.get("continuous_frequency_ghz")),
            pareto=tuple(Candidate.from_dict(c) for c in data.get("pareto", ())),
            baseline=numbers(data.get("baseline_energy_j")),
            savings_predicted=numbers(data.get("savings_predicted")),
            savings_measured=numbers(data.get("savings_measured")),
            feasible=int(data.get("feasible", 0)),
            extrapolated=bool(data.get("extrapolated", False)),
            regret=_num(data.get("regret")),
            regret_denoised=_num(data.get("regret_denoised")),
            best_measured=None if measured is None else Candidate.from_dict(measured),
            uncertainty=None if unsure is None else Uncertainty.from_dict(unsure),
            basis=str(data.get("basis", "model")),
            fastest=None if fastest is None else Candidate.from_dict(fastest),
            why=str(data.get("why", "")),
            evaluated=_candidates(data.get("evaluated")))


@dataclass(frozen=True)
class Suggestion:
    """A configuration to measure next: its predicted energy (J) with the prediction interval,
    the jackknife standard error of its log energy (``spread``), whether it is promising
    (near the minimum under the fit or a member) and how many members put it there, and how
    many of the fit and its members vote for it as the configuration that would beat the
    lowest energy measured for its input (``improving_members``)."""

    frequency_ghz: float
    cores: int
    input: float
    input_label: str
    energy_j: float
    energy_low_j: float
    energy_high_j: float
    spread: float
    promising: bool
    near_optimal_members: int
    improving_members: int = 0

    def to_dict(self) -> dict[str, Any]:
        return plain({"frequency_ghz": self.frequency_ghz, "cores": self.cores,
                      "input": self.input, "input_label": self.input_label,
                      "energy_j": self.energy_j, "energy_low_j": self.energy_low_j,
                      "energy_high_j": self.energy_high_j, "spread": self.spread,
                      "promising": self.promising,
                      "near_optimal_members": self.near_optimal_members,
                      "improving_members": self.improving_members})

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Suggestion:
        def num(value: Any) -> float:
            return float("nan") if value is None else float(value)

        return Suggestion(num(data.get("frequency_ghz")), int(data["cores"]),
                          float(data["input"]), str(data["input_label"]),
                          num(data.get("energy_j")), num(data.get("energy_low_j")),
                          num(data.get("energy_high_j")), num(data.get("spread")),
                          bool(data["promising"]), int(data["near_optimal_members"]),
                          int(data.get("improving_members", 0)))


@dataclass(frozen=True)
class ChoiceResult(Result):
    """Choices for every input asked, with the model, the grid and the limits used."""

    model: str
    params: Mapping[str, float]
    choices: tuple[Choice, ...]
    frequencies_ghz: tuple[float, ...]
    cores: tuple[int, ...]
    limits: Mapping[str, float | None]
    user_cores: int | None
    frequency_controlled: bool = True
    #: Measured readings left out of the regret and the measured savings: the model predicts
    #: them at least FAILED_RATIO times higher (probable failed runs).
    failed_readings: int = 0
    #: Configurations not chosen because the user measured them as failed runs
    #: (``failed_runs`` of :func:`choose`).
    ruled_out: int = 0
    #: Whether the model predicts time (False: fitted on energy alone; no time, no time
    #: limit, no Pareto frontier).
    with_time: bool = True
    #: What could not be done (``no uncertainty: ...``).
    notes: tuple[str, ...] = ()
    #: The configurations to measure next where a choice is unsure (as ``energy suggest``).
    suggestions: tuple[Suggestion, ...] = ()
    #: The campaign's reading noise (:meth:`phasekit.energy.noise.ReadingNoise.to_dict`),
    #: None when not estimated.
    noise: Mapping[str, Any] | None = None
    #: Whether the model was chosen among several by cross-validation (``model="auto"``).
    model_selected: bool = False

    KIND: ClassVar[str] = "energy_choice"

    @property
    def failed_ratio(self) -> float:
        """How many times below the model a reading is to be a probable failed run
        (:data:`phasekit.energy.fit.FAILED_RATIO`)."""
        return FAILED_RATIO

    @property
    def mean_regret(self) -> float:
        """Mean regret (percent) over the inputs where it was measured; NaN if none."""
        values = [c.regret for c in self.choices if np.isfinite(c.regret)]
        return float(np.mean(values)) if values else float("nan")

    @property
    def mean_regret_denoised(self) -> float:
        """Mean denoised regret (percent) over the inputs where it was measured."""
        values = [c.regret_denoised for c in self.choices if np.isfinite(c.regret_denoised)]
        return float(np.mean(values)) if values else float("nan")

    @property
    def worst_regret(self) -> float:
        values = [c.regret for c in self.choices if np.isfinite(c.regret)]
        return float(np.max(values)) if values else float("nan")

    def __repr__(self) -> str:
        return short_repr(
            self, self.model, f"{len(self.choices)} inputs",
            f"grid {len(self.frequencies_ghz)} frequencies x {len(self.cores)} core counts",
            *(f"{c.input_label}: {c.best.frequency_ghz:g} GHz x {c.best.cores}"
              if c.best is not None else f"{c.input_label}: none within the limits"
              for c in self.choices[:3]))

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "kind": "energy_choice", "version": RESULT_VERSION, "model": self.model,
            "model_selected": self.model_selected, "params": dict(self.params),
            "frequency_controlled": self.frequency_controlled, "with_time": self.with_time,
            "grid": {"frequencies_ghz": list(self.frequencies_ghz) if self.frequency_controlled
                     else [], "cores": list(self.cores)},
            "limits": dict(self.limits), "user_cores": self.user_cores,
            "baseline": "ondemand: maximum frequency at the user's core count"
                        + ("" if self.user_cores else " (worst, random, best over core counts)"),
            "regret": {"mean": self.mean_regret, "worst": self.worst_regret,
                       "mean_denoised": self.mean_regret_denoised},
            "failed_readings": self.failed_readings, "ruled_out": self.ruled_out,
            "choices": [c.to_dict() for c in self.choices],
            **({"suggestions": [s.to_dict() for s in self.suggestions]}
               if self.suggestions else {}),
            **({"notes": list(self.notes)} if self.notes else {}),
            **({"noise": dict(self.noise)} if self.noise is not None else {})})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> ChoiceResult:
        check_version(data, "energy_choice", RESULT_VERSION, source)
        try:
            grid = data["grid"]
            controlled = bool(data.get("frequency_controlled", True))
            # Migration: "seed" named the model now called "pt".
            return ChoiceResult(
                model=current_label(str(data["model"])), params={k: float(v) for k, v in
                                                  data["params"].items()},
                choices=tuple(Choice.from_dict(c) for c in data["choices"]),
                frequencies_ghz=tuple(float(f) for f in grid["frequencies_ghz"]) if controlled
                else (NOMINAL_FREQUENCY,),
                cores=tuple(int(p) for p in grid["cores"]),
                limits={k: None if v is None else float(v)
                        for k, v in data.get("limits", {}).items()},
                user_cores=None if data.get("user_cores") is None else int(data["user_cores"]),
                frequency_controlled=controlled,
                failed_readings=int(data.get("failed_readings", 0)),
                ruled_out=int(data.get("ruled_out", 0)),
                with_time=bool(data.get("with_time", True)),
                notes=tuple(str(n) for n in data.get("notes", ())),
                suggestions=tuple(Suggestion.from_dict(s) for s in data.get("suggestions", ())),
                noise=dict(data["noise"]) if data.get("noise") is not None else None,
                model_selected=bool(data.get("model_selected", False)))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed energy_choice result: {exc}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """The table ``phasekit energy choose`` prints: one row per input with the chosen
        configuration (frequency NaN where not controlled), its predicted time (no column when
        the model was fitted on energy alone) and energy,
        its measured energy and regret (NaN where unknown), the continuous optimum
        frequency, the predicted savings against each baseline policy (``saving_<policy>``,
        percent) and, with an ensemble, how sure the choice is."""
        policies = list(dict.fromkeys(k for c in self.choices for k in c.savings_predicted))
        rows = []
        for c in self.choices:
            best, u = c.best, c.uncertainty
            row: dict[str, Any] = {
                "input": c.input_label,
                "frequency_ghz": np.nan if best is None else best.frequency_ghz,
                "cores": None if best is None else best.cores,
                **({"time_s": np.nan if best is None else best.time_s} if self.with_time
                   else {}),
                "energy_j": np.nan if best is None else best.energy_j,
                "measured_energy_j": np.nan if best is None else best.measured_energy_j,
                "regret": c.regret, "continuous_frequency_ghz": c.continuous_frequency_ghz,
                "basis": c.basis, "extrapolated": c.extrapolated}
            row.update({f"saving_{k}": c.savings_predicted.get(k, np.nan) for k in policies})
            if u is not None:
                row.update({"energy_low_j": u.energy_low_j, "energy_high_j": u.energy_high_j,
                            "expected_regret": u.expected_regret, "sure": u.sure})
            rows.append(row)
        import pandas as pd

        return pd.DataFrame(rows)

    def present(self, name: str | None = None) -> Presentation:
        """The headline (where each input uses the least energy, how sure), the
        configurations, the savings, how sure, and the notes; ``name``: the campaign's file
        (:func:`phasekit.energy.table.choice_presentation`)."""
        from phasekit.energy.table import choice_presentation

        return choice_presentation(self, name)

    def plot(self, ax: Axes | None = None, *, input: str | None = None) -> Figure:
        """The figure of ``phasekit energy choose --plot`` (a panel per input); on ``ax``,
        the panel of ``input`` (a label; default the first input with a choice)."""
        from phasekit.plot.energy import choice_figure, draw_choice

        if ax is None and input is None:
            return choice_figure(self)
        from phasekit.plot.energy import target_axes

        fig, ax = target_axes(ax)
        drawable = [c for c in self.choices if c.drawn_points()]
        wanted = [c for c in drawable if input is None or c.input_label == str(input)]
        if not wanted:
            raise UsageError("no choice to plot (inputs with one: "
                             f"{', '.join(c.input_label for c in drawable) or 'none'})",
                             parameter="input", value=input)
        draw_choice(ax, self, wanted[0])
        return fig


def pareto_front(time_s: np.ndarray, energy_j: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats in both time and energy, fastest first
    (Silva 2024, section 4.11): :func:`phasekit.energy.efficiency.pareto_mask`'s points."""
    t, e = np.asarray(time_s, float), np.asarray(energy_j, float)
    front = np.flatnonzero(pareto_mask(t, e))
    return front[np.lexsort((e[front], t[front]))]


def regret(chosen_energy_j: float, energies_j: Any) -> float:
    """Regret in percent: ``chosen_energy_j`` / the lowest of ``energies_j`` - 1 (module
    docstring); NaN when any energy is missing (not measured)."""
    values = np.asarray(energies_j, float)
    if values.size == 0 or not (np.all(np.isfinite(values)) and np.isfinite(chosen_energy_j)):
        return float("nan")
    return float(100.0 * (chosen_energy_j / values.min() - 1.0))


ProgressCallback = Callable[[str, float], None]


@dataclass(frozen=True)
class Ensemble:
    """Refits of a model with one group of its training configurations left out each
    (module docstring): ``model`` is the fit on all of them, ``members`` the K refits,
    ``group`` the group of each training configuration (the refit that left it out) and
    ``residuals`` its out-of-sample |log E_measured - log E_predicted| under that refit."""

    model: FittedModel
    members: tuple[FittedModel, ...]
    group: np.ndarray = field(repr=False)
    residuals: np.ndarray = field(repr=False)
    train: np.ndarray = field(repr=False)
    method: str = "jackknife+"

    @property
    def size(self) -> int:
        return len(self.members)

    def log_energy(self, f: Any, p: Any, n: Any) -> np.ndarray:
        """Each member's predicted log energy at the points (f, p, n): (members, points)."""
        f, p = np.atleast_1d(np.asarray(f, float)), np.atleast_1d(np.asarray(p, float))
        n = np.broadcast_to(np.asarray(n, float), f.shape)
        return np.log(np.maximum(np.stack([m.predict_energy(f, p, n) for m in self.members]),
                                 1e-300))

    def spread(self, f: Any, p: Any, n: Any) -> np.ndarray:
        """The jackknife standard error of log energy at each point (about the relative
        error of the predicted energy): sqrt((K - 1) / K sum_k (L_k - mean L)^2)."""
        members = self.log_energy(f, p, n)
        k = members.shape[0]
        return np.sqrt((k - 1) / k * np.sum((members - members.mean(axis=0)) ** 2, axis=0))

    def interval(self, f: Any, p: Any, n: Any, level: float = LEVEL
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The jackknife+ / CV+ prediction interval (J) of the measured energy at each point
        (module docstring), widened where needed to contain the fit's own prediction: the
        refits' interval need not contain it, and where every refit agrees (an exact fit)
        the two differ in the last digits."""
        if not 0 < level < 1:
            raise UsageError("expected a fraction between 0 and 1", parameter="level",
                             value=level)
        per_train = self.log_energy(f, p, n)[self.group]       # (training configs, points)
        r = self.residuals[:, None]
        size = self.group.size
        alpha = 1.0 - level
        upper = min(int(np.ceil((1.0 - alpha) * (size + 1))), size)
        lower = max(int(np.floor(alpha * (size + 1))), 1)
        low = np.sort(per_train - r, axis=0)[lower - 1]
        high = np.sort(per_train + r, axis=0)[upper - 1]
        f, p = np.atleast_1d(np.asarray(f, float)), np.atleast_1d(np.asarray(p, float))
        fitted = self.model.predict_energy(f, p, np.broadcast_to(np.asarray(n, float), f.shape))
        return np.minimum(np.exp(low), fitted), np.maximum(np.exp(high), fitted)


def fit_ensemble(f: Any, p: Any, n: Any, energy: Any, time: Any | None = None, *,
                 model: str = "extended", groups: int = ENSEMBLE_GROUPS,
                 starts: int = ENSEMBLE_STARTS, seed: int = 0,
                 fitted: FittedModel | None = None, fit_starts: int = 8,
                 progress: ProgressCallback | None = None) -> Ensemble:
    """Fit the :class:`Ensemble` of ``model`` on training configurations (f, p, n) with their
    measured energies (and times): leave-one-out up to ``groups`` configurations, ``groups``
    random groups (``seed``) beyond; each refit with ``starts`` starts. ``fitted`` is the fit
    on all of them when already made (else fitted here with ``fit_starts``). Frequencies NaN
    (not controlled) are taken at :data:`~phasekit.energy.fit.NOMINAL_FREQUENCY`.
    UsageError when a refit has too few configurations for the model."""
    f, p, n, energy = (np.asarray(v, float).ravel() for v in (f, p, n, energy))
    f = np.where(np.isfinite(f), f, NOMINAL_FREQUENCY)
    t = None if time is None else np.asarray(time, float).ravel()
    size = f.size
    if groups < 2:
        raise UsageError("an ensemble needs at least 2", parameter="groups", value=groups)
    if size < 3:
        raise UsageError(f"an ensemble needs at least 3 training configurations; got {size}")
    if size <= groups:
        group, method = np.arange(size), "jackknife+"
    else:
        group, method = np.empty(size, int), "cv+"
        group[np.random.default_rng(seed).permutation(size)] = np.arange(size) % groups
    count = int(group.max()) + 1
    steps = count + (fitted is None)
    if fitted is None:
        fitted = fit_model(f, p, n, energy, t, model=model, starts=fit_starts, seed=seed)
        if progress is not None:
            progress("fit", 1 / steps)
    members = []
    residuals = np.empty(size)
    for g in range(count):
        keep = group != g
        try:
            member = fit_model(f[keep], p[keep], n[keep], energy[keep],
                               None if t is None else t[keep], model=fitted.model,
                               starts=starts, seed=seed + 1 + g,
                               deviation_penalty=fitted.deviation_penalty)
        except UsageError as exc:
            raise UsageError(f"too few training configurations ({size}) for an ensemble of "
                             f"refits without one group each: {exc}") from None
        members.append(member)
        out = ~keep
        residuals[out] = np.abs(np.log(energy[out]) - np.log(np.maximum(
            member.predict_energy(f[out], p[out], n[out]), 1e-300)))
        if progress is not None:
            progress(f"ensemble refit {g + 1}/{count}", (steps - count + g + 1) / steps)
    return Ensemble(model=fitted, members=tuple(members), group=group, residuals=residuals,
                    train=np.column_stack([f, p, n]), method=method)


def model_error(ensemble: Ensemble) -> float:
    """The relative error of the model's predictions on configurations it was not fitted on:
    the robust standard deviation (1.4826 x the median) of the refits' out-of-sample
    |log residuals|."""
    return float(MAD_TO_SIGMA * np.median(ensemble.residuals))


def grid_correlation(F: np.ndarray, P: np.ndarray, steps: float = SMOOTHING_STEPS, *,
                     across_cores: bool = True) -> np.ndarray:
    """The Cholesky factor of the correlation of errors over the grid (F, P): a Gaussian
    kernel of ``steps`` grid steps of frequency and of core count, as the smoother's
    (``across_cores``: :func:`step_distance2`)."""
    kernel = np.exp(-0.5 * step_distance2(F, P, np.ones(F.size, bool),
                                          across_cores=across_cores) / steps ** 2)
    return np.linalg.cholesky(kernel + 1e-9 * np.eye(F.size))


def step_distance2(F: np.ndarray, P: np.ndarray, to: np.ndarray, *,
                   across_cores: bool = True) -> np.ndarray:
    """Squared distances, in grid steps of frequency and of core count, from every point of
    the grid (F, P) to the points selected by the mask ``to``: (points, selected). Without
    ``across_cores`` (energy rough across core counts,
    :func:`phasekit.energy.noise.smooth_across_cores`), points at another core count are
    infinitely far."""
    fi = np.searchsorted(np.unique(F), F).astype(float)
    pi = np.searchsorted(np.unique(P), P).astype(float)
    cores = (pi[:, None] - pi[to][None]) ** 2
    if not across_cores:
        cores = np.where(cores > 0, np.inf, 0.0)
    return (fi[:, None] - fi[to][None]) ** 2 + cores


def loss_chance(estimate: np.ndarray, error: np.ndarray, chosen: int, tolerance: float,
                draws: int = DRAWS, seed: int = 0, correlation: np.ndarray | None = None
                ) -> tuple[float, int]:
    """The chance that configuration ``chosen`` loses more than ``tolerance`` percent against
    the best, when each configuration's true log energy is its ``estimate`` (log J) plus a
    normal error of standard deviation ``error``, independent or correlated by the Cholesky
    factor ``correlation`` (:func:`grid_correlation`); and the configuration most often
    better by that much (-1 when none ever is). Counted over ``draws`` draws."""
    z = np.random.default_rng(seed).standard_normal((draws, estimate.size))
    if correlation is not None:
        z = z @ correlation.T
    truth = estimate + z * error
    lost = truth[:, chosen] - truth.min(axis=1) > np.log1p(tolerance / 100.0)
    if not lost.any():
        return 0.0, -1
    winners = np.bincount(np.argmin(truth[lost], axis=1), minlength=estimate.size)
    return float(lost.mean()), int(np.argmax(winners))


def _uncertainty(ensemble: Ensemble, F: np.ndarray, P: np.ndarray, n: float, chosen: int,
                 level: float, tolerance: float, known: np.ndarray, estimate: np.ndarray,
                 reading_error: float, across_cores: bool = True) -> Uncertainty:
    """How sure the choice ``chosen`` (an index into F, P: the feasible grid) is. ``known``:
    the measured energy the choice keeps at each point (NaN where it has none);
    ``estimate``: the energy the choice estimated at each point (:func:`smoothed_estimate`);
    ``reading_error``: the relative noise of a reading (NaN when unknown: then half the
    out-of-sample error's variance is taken as the readings'); ``across_cores``: whether
    errors correlate across core counts (:func:`grid_correlation`)."""
    members = ensemble.log_energy(F, P, n)                    # (members, feasible)
    measured = np.isfinite(known) & (known > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        members = np.where(measured, np.log(known), members)
    log_estimate = np.log(np.maximum(estimate, 1e-300))
    member_regret = 100.0 * (np.exp(members[:, chosen] - members.min(axis=1)) - 1.0)
    low, high = ensemble.interval(F[[chosen]], P[[chosen]], n, level)
    sigma = model_error(ensemble)
    read = reading_error if np.isfinite(reading_error) else sigma / np.sqrt(2.0)
    chance, rival = loss_chance(log_estimate, np.where(measured, read, sigma), chosen,
                                tolerance, correlation=grid_correlation(
                                    F, P, across_cores=across_cores))
    return Uncertainty(method=ensemble.method, members=ensemble.size, level=level,
                       energy_low_j=float(low[0]), energy_high_j=float(high[0]),
                       expected_regret=float(np.mean(member_regret)),
                       worst_regret=float(np.max(member_regret)),
                       agreement=float(np.mean(np.argmin(members, axis=1) == chosen)),
                       tolerance=tolerance, loss_probability=chance, model_error=sigma,
                       reading_error=float(read),
                       next_frequency_ghz=float(F[rival]) if rival >= 0 else float("nan"),
                       next_cores=int(P[rival]) if rival >= 0 else 0)


def smoothed_estimate(F: np.ndarray, P: np.ndarray, predicted: np.ndarray,
                      readings: np.ndarray, steps: float = SMOOTHING_STEPS,
                      prior: float = SMOOTHING_PRIOR, *, across_cores: bool = True
                      ) -> np.ndarray:
    """Each configuration's energy estimated from the model and the readings of its input:
    the prediction times exp of the readings' log residuals (log reading - log prediction)
    averaged with a Gaussian kernel of ``steps`` grid steps (of frequency and of core count)
    and a weight ``prior`` on a residual of 0 (Nadaraya-Watson with a prior; ours). Where
    nothing was measured nearby it is the prediction; at a lone measured configuration it is
    the geometric mean of reading and prediction; among measured neighbours it follows
    them. ``readings``: NaN where not measured; ``across_cores``: whether readings at other
    core counts count (:func:`step_distance2`)."""
    measured = np.isfinite(readings) & (readings > 0) & (predicted > 0)
    if not measured.any():
        return predicted
    residual = np.log(readings[measured]) - np.log(predicted[measured])
    weight = np.exp(-0.5 * step_distance2(F, P, measured, across_cores=across_cores)
                    / steps ** 2)
    return predicted * np.exp(weight @ residual / (weight.sum(axis=1) + prior))


def _readings(configs: Configurations) -> tuple[np.ndarray, ...]:
    """The frequency (nominal where not controlled), cores, input, energy and time columns."""
    energy = np.asarray(configs["energy_j"], float)
    time = (np.asarray(configs["time_s"], float) if "time_s" in configs
            else np.full(energy.size, np.nan))
    return (frequencies(configs), np.asarray(configs["cores"], float),
            np.asarray(configs["input"], float), energy, time)


def _savings(baseline: float, chosen: float) -> float:
    return float(100.0 * (baseline - chosen) / baseline) if baseline > 0 else float("nan")


def _continuous_frequency(model: FittedModel, p: float, n: float, low: float,
                          high: float) -> float:
    if not high > low:
        return float(low)
    return bounded_minimum(lambda f: float(model.predict_energy(f, p, n)), low, high,
                           xatol=1e-6 * high)


def _key(n: float, f: float, p: float) -> tuple[float, float, int]:
    return (round(float(n), 9), round(float(f), 9), int(p))


def _candidate(grid: tuple[np.ndarray, ...], i: int, measured: tuple[float, float] | None,
               frequency_controlled: bool) -> Candidate:
    F, P, t, w, e = grid
    meas_t, meas_e = measured or (float("nan"), float("nan"))
    return Candidate(float(F[i]) if frequency_controlled else float("nan"), int(P[i]),
                     float(t[i]), float(w[i]), float(e[i]), meas_t, meas_e)


def check_tolerance(tolerance: float) -> None:
    """UsageError unless ``tolerance`` (percent of expected regret) is a number >= 0."""
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise UsageError("expected a non-negative percentage", parameter="tolerance",
                         value=tolerance)


def _numbers(values: Sequence[float]) -> str:
    return ", ".join(f"{v:g}" for v in sorted(set(values)))


#: The command line's flag of each limit of :func:`check_grid` named otherwise.
_LIMIT_OPTIONS = {"max_cores": "--max-cores", "min_frequency_ghz": "--min-frequency",
                  "max_frequency_ghz": "--max-frequency"}


def check_grid(frequencies_ghz: Sequence[float], cores: Sequence[int], *,
               max_cores: int | None = None, min_frequency_ghz: float | None = None,
               max_frequency_ghz: float | None = None, user_cores: int | None = None,
               frequency_controlled: bool = True) -> None:
    """The grid of a choice and its limits, checked before any fit: UsageError naming the
    parameter when a frequency or a core count is not positive, a limit is not, ``user_cores``
    is not a core count of the grid, or the limits leave no frequency or no core count.
    Where the frequency was not controlled, the frequency limits do not apply."""
    freqs = [float(f) for f in frequencies_ghz]
    counts = [int(p) for p in cores]
    if frequency_controlled and not freqs:
        raise UsageError("expected at least one frequency", parameter="frequencies_ghz",
                         value=(), option="--frequencies")
    if not all(np.isfinite(f) and f > 0 for f in freqs):
        raise UsageError("expected positive frequencies in GHz", parameter="frequencies_ghz",
                         value=tuple(freqs), option="--frequencies")
    if not counts or min(counts) < 1:
        raise UsageError("expected core counts of at least 1", parameter="cores",
                         value=tuple(counts))
    if max_cores is not None and max_cores < 1:
        raise UsageError("expected at least 1", parameter="max_cores", value=max_cores)
    limits = {"max_cores": max_cores, "min_frequency_ghz": min_frequency_ghz,
              "max_frequency_ghz": max_frequency_ghz}
    for name in ("min_frequency_ghz", "max_frequency_ghz"):
        value = limits[name]
        if value is not None and not (np.isfinite(value) and value > 0):
            raise UsageError("expected a positive frequency in GHz", parameter=name,
                             value=value, option=_LIMIT_OPTIONS[name])
    if user_cores is not None and user_cores not in counts:
        raise UsageError(f"not among the core counts {_numbers(counts)}",
                         parameter="user_cores", value=user_cores)
    low, high = min_frequency_ghz or 0.0, max_frequency_ghz or np.inf
    no_frequency = frequency_controlled and not any(low <= f <= high for f in freqs)
    no_cores = not any(p <= (max_cores or np.inf) for p in counts)
    if not (no_frequency or no_cores):
        return
    at_fault = {"max_cores": no_cores, "min_frequency_ghz": no_frequency,
                "max_frequency_ghz": no_frequency}
    culprits = [name for name, value in limits.items() if at_fault[name] and value is not None]
    grid = ((f"frequencies {_numbers(freqs)} GHz; " if frequency_controlled else "")
            + f"cores {_numbers(counts)}")
    detail = f"the limits leave no frequency or no core count of the grid ({grid})"
    if len(culprits) == 1:
        raise UsageError(detail, parameter=culprits[0], value=limits[culprits[0]],
                         option=_LIMIT_OPTIONS[culprits[0]])
    raise UsageError(detail, parameter=", ".join(culprits) or None,
                     option=", ".join(_LIMIT_OPTIONS[c] for c in culprits) or None)


def _where(setting: tuple[np.ndarray, np.ndarray, bool], i: int) -> str:
    """``2.2 GHz, 8 cores`` (``8 cores`` without frequency control) of grid point ``i``."""
    F, P, frequency_controlled = setting
    return (f"{F[i]:g} GHz, " if frequency_controlled else "") + f"{P[i]} cores"


def _reading_text(reading: float, counted: float) -> str:
    """The reading the table shows, and the value it was counted as where the denoising
    raised it to its neighbours' median."""
    return f"{quantity(reading)} J" + ("" if np.isclose(reading, counted) else
                                       f" (counted as {quantity(counted)} J, its neighbours' "
                                       "median)")


def choose(model: FittedModel, inputs: Sequence[float], *, frequencies_ghz: Sequence[float],
           cores: Sequence[int], max_time_s: float | None = None, max_cores: int | None = None,
           min_frequency_ghz: float | None = None, max_frequency_ghz: float | None = None,
           user_cores: int | None = None, measured: Configurations | pd.DataFrame | None = None,
           labels: Mapping[float, str] | None = None, frequency_controlled: bool = True,
           known_inputs: Sequence[float] = (), ensemble: Ensemble | None = None,
           level: float = LEVEL, tolerance: float = LOSS,
           trusted: Configurations | pd.DataFrame | None = None,
           failed_runs: Sequence[tuple[float, float, float]] = (),
           noise: float = 0.0, reading_error: float = float("nan"),
           across_cores: bool | None = None) -> ChoiceResult:
    """The minimum-energy configuration for each input (module docstring).

    ``frequencies_ghz`` x ``cores`` is the grid (the machine's settings); ``measured`` is a
    table of :func:`phasekit.energy.fit.configurations` whose energies and times are attached
    to the candidates it contains (and give the regret where they cover the feasible grid).
    ``known_inputs`` are those the model was fitted on (others are marked extrapolated).
    With an ``ensemble`` (:func:`fit_ensemble` of ``model``) each choice carries its
    :class:`Uncertainty` at ``level``: unsure when the chance that it loses more than
    ``tolerance`` percent exceeds :data:`RISK` (``reading_error``: the relative noise of a
    reading, :attr:`phasekit.energy.noise.ReadingNoise.relative`; NaN when unknown).
    ``trusted``: configurations the user measured (the model's training set, without the
    readings it flagged as failed runs); the choice is the least of the
    :func:`smoothed_estimate`: the prediction corrected by the nearby readings of the same
    input (ours: a lone reading is as likely lucky as the model wrong, so neither is taken
    alone; on the real PaScal campaigns, benchmarks/energy_choose.py, it lowered the
    denoised regret after 10 and 20 suggested runs against taking the readings as they are;
    tried and not kept, with 3 starts of the loop: the other inputs' residuals at the same
    configuration with weight 0.3 or 1, mean denoised regret after 10 suggested runs 4.2 and
    4.4 % against 4.0 %; choosing only among the measured configurations, 4.2 %; a smoothing
    width of 0.6 or 1.5 steps or a prior of 0.3 or 3, 4.0-4.4 %; the estimate averaged over
    each configuration's 3 x 3 neighbourhood (a flat optimum before a sharp one), its mean
    4.2 % and median 4.3 %; the estimate raised by the refits' spread, exp(0.5 x the
    jackknife standard error of log energy), 4.2 %; the refits' mean prediction in place of
    the fit's, 4.0 %; with the noise unknown, the lowest reading taken where it lies below
    the choice's estimate and the choice's chance of losing exceeds 90 % or 75 %, 4.3 %; the
    configuration least often more than 5 % or 2 % above the best in the draws of
    :func:`loss_chance`, 4.5 and 4.7 %).
    ``failed_runs``: the (frequency, cores, input) the user measured as probable failed runs
    (the fit's ``suspect``: fluidanimate at a core count it cannot run on); they are not
    chosen. ``noise``: the relative difference below which two energies are
    indistinguishable (:meth:`phasekit.energy.noise.ReadingNoise.threshold`): a prediction
    elsewhere must beat the lowest trusted reading by more than that to be chosen over it
    (a model's bias can hide in a smaller margin; the reading is known), and ``why`` says
    so. Where the noise is unknown (a campaign of a few readings: fewer than 8 near the
    minimum with both neighbours measured) there is no margin: one of twice the model's
    out-of-sample error instead, tried on the loop's choices after 10 suggested runs (3
    starts), raised the mean denoised regret from 4.0 to 4.7 %, and a margin of 0 (the
    lowest reading taken wherever no estimate elsewhere lies below it) to 4.3 % (after 20
    suggested runs 4.3 % against 3.5 %), the lowest of few readings being as often lucky
    as best. Where the lowest trusted reading then lies below the choice's estimate,
    ``why`` says so, with that reading's own estimate, and that measuring it again tells.
    ``across_cores``: whether energy is as smooth across core counts as across frequencies
    (:func:`phasekit.energy.noise.smooth_across_cores`; None: as the readings of
    ``measured`` without probable failed runs say, True without them); where not, the
    smoother, the denoised energies and the draws of "how sure" follow only the readings of
    the same core count.
    A model fitted on energy alone (``model.with_time`` False) predicts no time: no time or
    power in the candidates, no Pareto frontier, and ``max_time_s`` is a UsageError.
    """
    with_time = bool(model.with_time)
    if max_time_s is not None and not with_time:
        raise UsageError("the model was fitted on energy alone (no run time measured), so "
                         "it predicts no time to limit", parameter="max_time_s",
                         value=max_time_s, option="--max-time")
    check_grid(frequencies_ghz if frequency_controlled else (), cores, max_cores=max_cores,
               min_frequency_ghz=min_frequency_ghz, max_frequency_ghz=max_frequency_ghz,
               user_cores=user_cores, frequency_controlled=frequency_controlled)
    freqs = np.unique(np.asarray(frequencies_ghz if frequency_controlled
                                 else [NOMINAL_FREQUENCY], float))
    core_counts = np.unique(np.asarray(cores, int))
    allowed_f = freqs
    if frequency_controlled:
        allowed_f = freqs[(freqs >= (min_frequency_ghz or 0.0))
                          & (freqs <= (max_frequency_ghz or np.inf))]
    allowed_p = core_counts[core_counts <= (max_cores or np.inf)]
    lookup: dict[tuple[float, float, int], tuple[float, float]] = {}
    smooth: dict[tuple[float, float, int], float] = {}
    failed: set[tuple[float, float, int]] = set()
    if measured is not None:
        measured = Configurations.of(measured)
        f_all, p_all, n_all, e_all, t_all = _readings(measured)
        predicted_all = model.predict_energy(f_all, p_all, n_all)
        keys_all = [_key(n, f, p) for n, f, p in zip(n_all, f_all, p_all, strict=True)]
        for key, e, t, guess in zip(keys_all, e_all, t_all, predicted_all, strict=True):
            if guess >= FAILED_RATIO * e:
                failed.add(key)  # measured, but not a reference
                continue
            lookup[key] = (float(t), float(e))
        kept = np.array([key not in failed for key in keys_all], bool)
        if across_cores is None:
            across_cores = smooth_across_cores(measured.select(kept))
        smooth = dict(zip((k for k, keep in zip(keys_all, kept, strict=True) if keep),
                          denoised_energy(measured.select(kept), across_cores=across_cores),
                          strict=True))
    across_cores = across_cores is not False
    known: dict[tuple[float, float, int], float] = {}
    if trusted is not None:
        for f, p, n, e, t in zip(*_readings(Configurations.of(trusted)), strict=True):
            if _key(n, f, p) in failed:
                continue  # a probable failed run: neither chosen on its reading nor a reference
            known[_key(n, f, p)] = float(e)
            lookup.setdefault(_key(n, f, p), (float(t), float(e)))
    ruled_out = {_key(n, f if np.isfinite(f) else NOMINAL_FREQUENCY, p)
                 for f, p, n in failed_runs}
    fmax = float(freqs.max())
    choices = []
    for n in map(float, inputs):
        F, P = (a.ravel() for a in np.meshgrid(allowed_f, allowed_p, indexing="ij"))
        t = model.predict_time(F, P, n)
        w = model.predict_power(F, P)
        e = w * t
        shown = (F, P, t, w, e) if with_time else (F, P, np.full_like(t, np.nan),
                                                    np.full_like(w, np.nan), e)
        keys = [_key(n, F[i], P[i]) for i in range(F.size)]
        ran = np.array([known.get(k, np.nan) for k in keys])
        ran_t = np.array([lookup[k][0] if k in known else np.nan for k in keys])
        estimate = smoothed_estimate(F, P, e, ran, across_cores=across_cores)
        time_estimate = np.where(np.isfinite(ran_t), ran_t, t)

        def candidate(i: int, grid: tuple[np.ndarray, ...] = shown,
                      keys: list[tuple[float, float, int]] = keys) -> Candidate:
            return _candidate(grid, i, lookup.get(keys[i]),
                              frequency_controlled)

        ok = np.ones(F.size, bool) if max_time_s is None else time_estimate <= max_time_s
        ok &= np.array([k not in ruled_out for k in keys], bool)
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
            reason = ("every configuration was measured as a probable failed run"
                      if max_time_s is None else
                      f"no configuration meets the time limit of {max_time_s:g} s (fastest "
                      f"predicted: {quantity(t[fastest])} s at "
                      + (f"{F[fastest]:g} GHz, " if frequency_controlled else "")
                      + f"{P[fastest]} cores)")
            over = max_time_s is not None
            choices.append(Choice(n, label, None, reason=reason, baseline=baseline,
                                  extrapolated=extrapolated,
                                  fastest=candidate(fastest) if over else None,
                                  over_limit=tuple(candidate(int(i)) for i in range(F.size)
                                                   if keys[i] not in ruled_out) if over
                                  else ()))
            continue
        feasible = np.flatnonzero(ok)
        best_i = int(feasible[np.argmin(estimate[feasible])])
        why = ""
        read = feasible[np.isfinite(ran[feasible])]
        lowest = int(read[np.argmin(ran[read])]) if read.size else best_i
        setting = (F, P, frequency_controlled)
        if lowest != best_i and noise > 0 and estimate[best_i] >= (1 - noise) * ran[lowest]:
            why = (f"measured {_reading_text(lookup[keys[lowest]][1], ran[lowest])} here; the "
                   f"lowest estimate elsewhere ({_where(setting, best_i)}) is "
                   f"{quantity(estimate[best_i])} J, not lower beyond the noise "
                   f"({100 * noise:.0f} %)")
            best_i = lowest
        elif (lowest != best_i and not np.isfinite(reading_error)
              and ran[lowest] < estimate[best_i]):
            why = (f"{_where(setting, lowest)} read {quantity(ran[lowest])} J, below this "
                   f"choice's estimate ({quantity(estimate[best_i])} J); with the reading "
                   "noise unknown a low reading is as often lucky as best, and with its "
                   "neighbours and the model it is estimated at "
                   f"{quantity(estimate[lowest])} J: measure it again to tell")
        best = candidate(best_i)
        front = (feasible[pareto_front(t[feasible], e[feasible])] if with_time
                 else np.zeros(0, int))
        continuous = float("nan")
        if frequency_controlled:
            continuous = _continuous_frequency(model, best.cores, n, float(allowed_f.min()),
                                               float(allowed_f.max()))
        predicted = {k: _savings(v, best.energy_j) for k, v in baseline.items()}
        measured_savings = {k: _savings(v, best.measured_energy_j)
                            for k, v in baseline_meas.items()
                            if np.isfinite(v) and np.isfinite(best.measured_energy_j)}
        evaluated = tuple(candidate(int(i)) for i in feasible)
        references = [c for c, i in zip(evaluated, feasible, strict=True)
                      if keys[i] not in failed]
        measured_e = np.array([c.measured_energy_j for c in references])
        lost = regret(best.measured_energy_j, measured_e)
        lost_denoised = regret(smooth.get(keys[best_i], np.nan),
                               [smooth.get(keys[i], np.nan) for i in feasible
                                if keys[i] not in failed])
        best_measured = (references[int(np.argmin(measured_e))] if np.isfinite(lost)
                         else None)
        sureness = None
        if ensemble is not None:
            sureness = _uncertainty(ensemble, F[feasible], P[feasible], n,
                                    int(np.flatnonzero(feasible == best_i)[0]), level,
                                    tolerance, known=ran[feasible], estimate=estimate[feasible],
                                    reading_error=reading_error, across_cores=across_cores)
        choices.append(Choice(
            n, label, best, continuous_frequency_ghz=continuous,
            pareto=tuple(candidate(int(i)) for i in front), baseline=baseline,
            savings_predicted=predicted, savings_measured=measured_savings,
            feasible=int(feasible.size), extrapolated=extrapolated, regret=lost,
            best_measured=best_measured, uncertainty=sureness, evaluated=evaluated,
            basis="measured" if np.isfinite(ran[best_i]) else "model", why=why,
            regret_denoised=lost_denoised))
    limits = {"max_time_s": max_time_s, "max_cores": max_cores,
              "min_frequency_ghz": min_frequency_ghz, "max_frequency_ghz": max_frequency_ghz}
    return ChoiceResult(model=model.model, params=dict(model.params), choices=tuple(choices),
                        frequencies_ghz=tuple(float(f) for f in freqs),
                        cores=tuple(int(p) for p in core_counts), limits=limits,
                        user_cores=user_cores, frequency_controlled=frequency_controlled,
                        failed_readings=len(failed), ruled_out=len(ruled_out),
                        with_time=with_time)


make_callable(__name__, "phasekit.energy.api:choose")  # pk.energy.choose(...) runs it
