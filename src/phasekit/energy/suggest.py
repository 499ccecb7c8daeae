"""Which configurations to measure next (not in Silva 2024: a small active-learning
loop on top of its sections 4.8-4.12).

Given the configurations measured so far, :func:`suggest` fits the model and its
:class:`~phasekit.energy.choose.Ensemble` (refits with one group of them left out each),
chooses per input (:func:`~phasekit.energy.choose.choose`) and ranks the configurations of
the grid not measured yet by :func:`next_configurations`'s rule (our choice), in three tiers:

- improving (a Thompson-style vote): each ensemble member, and the full fit, votes for its
  lowest-energy unmeasured feasible configuration of each input if it predicts less than the
  lowest energy measured for that input (less the readings flagged as failed runs); the
  configurations with votes come first, most votes first: where measuring may beat what is
  already known, as often as the plausible variants of the model think so;
- promising: a feasible configuration within ``tolerance`` percent of the minimum energy
  under the full fit or under at least one ensemble member;
- the rest of the unmeasured feasible configurations;
- within a tier, ties (and the last two tiers) go to the ensemble's jackknife standard error
  of log energy (about the relative uncertainty of the predicted energy);
- a batch of K: greedily the highest score, each pick halving the scores of the remaining
  candidates of its input (so that a batch spreads over the inputs, whose optima differ)
  and of the same input and core count (neighbouring frequencies tell nearly the same).

On the pascal_dev campaigns (``benchmarks/energy_choose.py``, 22 campaigns, from the 10
configurations of the D-optimal design, the choice on the smoothed estimate), the mean
regret against the denoised energies is 4.7 % before any suggestion and 4.3, 3.3, 2.9 %
after 5, 10, 20 suggested runs, against 5.5, 5.0, 3.6 % for Gaussian-process Bayesian
optimization with expected improvement from the same start and 3.2 % after 20 random
runs (with the extended model alone, before the model was chosen by cross-validation from
20 readings on, the votes gave 3.9 and 3.3 % after 10 and 20 runs, and 10 random runs
4.2 %). Earlier, against single
readings, with 6 starts and the readings kept as they were, the votes brought the mean
regret after 1, 2, 3, 4 rounds of 5 to 11.1, 10.1, 5.2, 4.6 % (the designs on power-of-two
core counts and the soft L1 loss; 11.0, 6.7, 4.8 % after 3 rounds before both), where
ranking the promising by their spread alone gave 9.5, 7.5, 5.4 % (that rule led before; a
vote-free probability-of-improvement score gave 9.0, 6.8, 5.3 % on 3 starts). Tried and not
kept earlier: expected improvement over the best measured energy under the ensemble members
(mean regret after 1, 2, 3 rounds 19, 16, 13 % against 18, 15, 13 % for the spread rule and
17, 20, 18 % for random picks; 7 campaigns, 3 seeds, the model of the time); and, scored
as above, Thompson-style votes under the choice's own error model (4.4, 4.3, 4.7 % denoised
after 5, 10, 20); and, on three starts (5.4, 4.0, 3.5 % for these votes), exploration picks
among the configurations within twice the model's error of its minimum, the farthest from any
reading (two of five: 4.6, 4.0, 3.5 %; all five: 4.3, 4.1, 3.3 %), and a neighbour of each
choice that no reading near it confirms (4.3, 3.9, 3.8 %, one start); and, on three starts
(4.0 and 3.5 % after 10 and 20 for these votes), a bar to beat of the geometric mean of the
lowest reading and the fit's prediction there, so that a lucky reading stops fewer votes
(3.8 and 3.7 %); and, from the D-optimal start, suggesting for an input whose choice is
already sure only once the others have their runs (3.34 and 2.93 % after 10 and 20, against
3.35 and 2.91 %: few choices are sure while the loop runs). On the synthetic
``realistic`` campaigns one round brings the regret from about 14 % to a few percent, random
picks to 12 % (``tests/test_energy_suggest.py``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.energy.choose import (
    ENSEMBLE_GROUPS,
    ENSEMBLE_STARTS,
    LEVEL,
    TOLERANCE,
    ChoiceResult,
    Ensemble,
    ProgressCallback,
    Suggestion,
    check_grid,
    check_tolerance,
    choose,
    fit_ensemble,
)
from phasekit.energy.fit import (
    AUTO,
    DESIGNS,
    NOMINAL_FREQUENCY,
    Configurations,
    EnergyFitResult,
    FittedModel,
    choose_training,
    fit_model,
    frequencies,
    load_fit,
    one_blas_thread,
    select_model,
)
from phasekit.energy.noise import reading_noise
from phasekit.errors import InputError, PhasekitError, UsageError
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.verbmodule import make_callable

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.arguments import PathLike
    from phasekit.present import Presentation

__all__ = ["SuggestResult", "Suggestion", "at_points", "lowest_measured", "measured_keys",
           "measured_rows", "next_configurations", "point_key", "rows_at", "suggest",
           "training_rows", "trusted_rows"]

RESULT_VERSION = 2  # 2: the thesis model is "pt" (was "seed"; from_dict migrates)
#: How many configurations a round suggests (our choice: half the thesis's 10 training
#: configurations, Silva 2024 section 4.8).
K = 5
#: Among improving candidates with as many votes, the spread breaks the tie.
TIE_WEIGHT = 1e-3
RULE = ("most votes of the fit and its ensemble members whose lowest unmeasured configuration "
        "of the input is predicted below the lowest measured energy; then the configurations "
        "within tolerance of the minimum under the fit or a member, then the rest, by the "
        "jackknife standard error of log energy; a pick halves the scores of its input and "
        "again of its input and core count")


@dataclass(frozen=True)
class SuggestResult(Result):
    """The next configurations to measure, best first, and the choice they would check."""

    suggestions: tuple[Suggestion, ...]
    choice: ChoiceResult
    n_measured: int
    n_candidates: int
    members: int
    method: str
    tolerance: float
    rule: str = RULE
    #: The model fitted on every measured configuration (not in to_dict: ``choice`` has its
    #: parameters).
    fitted: FittedModel | None = field(default=None, repr=False, compare=False)

    KIND: ClassVar[str] = "energy_suggest"

    def __repr__(self) -> str:
        return short_repr(
            self, self.method, f"{len(self.suggestions)} suggestions",
            f"{self.n_measured} measured of {self.n_candidates}")

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "energy_suggest", "version": RESULT_VERSION,
                      "n_measured": self.n_measured, "n_candidates": self.n_candidates,
                      "members": self.members, "method": self.method,
                      "tolerance": self.tolerance, "rule": self.rule,
                      "suggestions": [s.to_dict() for s in self.suggestions],
                      "choice": self.choice.to_dict()})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> SuggestResult:
        check_version(data, "energy_suggest", RESULT_VERSION, source)
        try:
            return SuggestResult(
                suggestions=tuple(Suggestion.from_dict(s) for s in data["suggestions"]),
                choice=ChoiceResult.from_dict(data["choice"], source),
                n_measured=int(data["n_measured"]), n_candidates=int(data["n_candidates"]),
                members=int(data["members"]), method=str(data["method"]),
                tolerance=float(data["tolerance"]), rule=str(data.get("rule", RULE)))
        except PhasekitError:  # a nested part's own message (an InputError is a ValueError)
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed energy_suggest result: {exc}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """The table ``phasekit energy suggest`` prints: the configurations to measure next,
        best first (``rank`` 1), with the predicted energy, its interval and spread, and why
        (``improving_members`` votes; ``promising``). The choice they check is
        ``self.choice.summary()``."""
        columns = ["rank", "input", "frequency_ghz", "cores", "energy_j", "energy_low_j",
                   "energy_high_j", "spread", "improving_members", "promising",
                   "near_optimal_members"]
        import pandas as pd

        return pd.DataFrame([{"rank": k, "input": s.input_label,
                              **{c: getattr(s, c) for c in columns[2:]}}
                             for k, s in enumerate(self.suggestions, start=1)],
                            columns=columns)

    def present(self, name: str | None = None) -> Presentation:
        """The headline (what to measure next), the configurations to measure, the choice
        they would check and the notes; ``name``: the measured campaign's file
        (:func:`phasekit.energy.table.suggest_presentation`)."""
        from phasekit.energy.table import suggest_presentation

        return suggest_presentation(self, name)

    def plot(self, ax: Axes | None = None) -> Figure:
        """The suggestions in rank order: predicted energy with its prediction interval."""
        from phasekit.plot.energy import target_axes

        fig, ax = target_axes(ax)
        table = self.summary()
        x = np.arange(len(table))
        energy = table["energy_j"].to_numpy(float)
        low = np.clip(energy - table["energy_low_j"].to_numpy(float), 0, None)
        high = np.clip(table["energy_high_j"].to_numpy(float) - energy, 0, None)
        improving = table["improving_members"].to_numpy(int) > 0
        for mask, label, colour in ((improving, "may beat the lowest measured", "tab:red"),
                                    (~improving, "uncertain", "tab:blue")):
            if mask.any():
                ax.errorbar(x[mask], energy[mask], yerr=[low[mask], high[mask]], fmt="o",
                            color=colour, capsize=3, label=label)
        controlled = self.choice.frequency_controlled
        ax.set_xticks(x, labels=[f"{s.input_label}\n" + (f"{s.frequency_ghz:g} GHz\n"
                                                          if controlled else "")
                                 + f"{s.cores} cores" for s in self.suggestions])
        ax.set_ylabel("predicted energy (J)")
        ax.set_title(f"Next {len(self.suggestions)} configurations to measure "
                     f"({self.n_measured} measured, {self.members} refits)", fontsize="medium")
        if len(table):
            ax.legend(fontsize="small")
        ax.grid(True, axis="y", alpha=0.3)
        return fig


def point_key(f: float, p: float, n: float) -> tuple[float, int, float]:
    """A configuration's key for matching rows (f 1.0 where it was not controlled)."""
    return round(float(f) if math.isfinite(f) else 1.0, 9), int(p), round(float(n), 9)


def at_points(configs: Configurations | pd.DataFrame,
              points: Iterable[tuple[float, float, float]]) -> np.ndarray:
    """Which rows of ``configs`` are at the (frequency, cores, input) ``points`` (a mask)."""
    wanted = {point_key(*point) for point in points}
    keys = [point_key(*row) for row in zip(np.asarray(configs["frequency_ghz"], float),
                                           np.asarray(configs["cores"], float),
                                           np.asarray(configs["input"], float), strict=True)]
    return np.array([k in wanted for k in keys], bool)


def rows_at(configs: Configurations | pd.DataFrame,
            points: Iterable[tuple[float, float, float]]) -> Configurations:
    """The rows of ``configs`` at the (frequency, cores, input) ``points``."""
    return Configurations.of(configs).select(at_points(configs, points))


def training_rows(configs: Configurations | pd.DataFrame, fitted: EnergyFitResult
                  ) -> Configurations | None:
    """The rows of ``configs`` the fit was trained on (None when some are not in it)."""
    rows = rows_at(configs, fitted.train)
    return rows if len(measured_keys(rows)) == len({point_key(*t) for t in fitted.train}) \
        else None


def measured_rows(configs: Configurations | pd.DataFrame, *, train: int | None = None,
                  fit: EnergyFitResult | PathLike | None = None, design: str = "doptimal",
                  seed: int = 0, model: str = AUTO, source: str | None = None
                  ) -> tuple[Configurations, EnergyFitResult | None]:
    """The configurations of ``configs`` taken as measured (``phasekit energy suggest``): all
    of them; ``train`` of them chosen by ``design`` (to try the loop on a campaign that
    measured everything, whose regret then shows); or the training configurations of a
    ``fit`` (or its saved file, read here: :func:`~phasekit.energy.fit.load_fit`), returned
    beside them. UsageError for both, a ``train`` out of range or a ``fit`` trained on
    configurations ``configs`` lacks (``source``: its file, in the message)."""
    configs = Configurations.of(configs)
    if design not in DESIGNS:
        raise UsageError(f"expected one of {', '.join(DESIGNS)}", parameter="design",
                         value=design)
    if train is not None and fit is not None:
        raise UsageError("give one of them", parameter="train and fit",
                         option="--train and --fit")
    if fit is not None:
        fitted = load_fit(fit)
        rows = training_rows(configs, fitted)
        if rows is None:
            detail = f"its training configurations are not all in {source or 'the campaign'}"
            if isinstance(fit, EnergyFitResult):
                raise UsageError(detail, parameter="fit")
            raise UsageError(detail, parameter="fit", value=os.fspath(fit))
        return rows, fitted
    if train is None:
        return configs, None
    if not 1 <= train < len(configs):
        raise UsageError(f"expected 1 to {len(configs) - 1} (the table has {len(configs)} "
                         "configurations)", parameter="train", value=train)
    chosen = choose_training(configs, train, design=design, seed=seed, model=model)
    return configs.select(chosen), None


def trusted_rows(training: Configurations | None, fitted: EnergyFitResult
                 ) -> Configurations | None:
    """The training rows whose measured energy the choice keeps: all but the readings the fit
    flagged as probable failed runs."""
    if training is None:
        return None
    return training.select(~at_points(training, fitted.suspect))


def measured_keys(measured: Configurations | pd.DataFrame) -> set[tuple[float, int, float]]:
    """The (f, p, N) of the measured configurations (f at the nominal frequency where it was
    not controlled), as :func:`next_configurations` compares them."""
    return {point_key(a, b, c) for a, b, c in zip(frequencies(measured), np.asarray(measured["cores"], float),
                                                  np.asarray(measured["input"], float),
                                                  strict=True)}


def lowest_measured(trusted: Configurations | pd.DataFrame) -> dict[float, float]:
    """Per input (rounded as :func:`point_key` rounds it), the lowest energy measured (J)."""
    lowest: dict[float, float] = {}
    for n, energy in zip(np.asarray(trusted["input"], float),
                         np.asarray(trusted["energy_j"], float), strict=True):
        key = round(float(n), 9)
        lowest[key] = min(lowest.get(key, math.inf), float(energy))
    return lowest


def _improving_votes(full: np.ndarray, members: np.ndarray, unmeasured: np.ndarray,
                     lowest: float) -> np.ndarray:
    """Per candidate, how many of the fit (``full``) and its ``members`` (log energies, one
    row each) find it their lowest unmeasured configuration and predict it below ``lowest``
    (J)."""
    votes = np.zeros(full.size, int)
    if not unmeasured.any():
        return votes
    bar = math.log(lowest) if lowest > 0 else -math.inf
    for row in np.vstack([full[None, :], members]):
        candidate = np.where(unmeasured, row, np.inf)
        best = int(np.argmin(candidate))
        if candidate[best] < bar:
            votes[best] += 1
    return votes


def next_configurations(ensemble: Ensemble, choice: ChoiceResult,
                        measured: Configurations | pd.DataFrame,
                        *, trusted: Configurations | pd.DataFrame | None = None, k: int = K,
                        tolerance: float = TOLERANCE, level: float = LEVEL
                        ) -> tuple[tuple[Suggestion, ...], int]:
    """The ``k`` configurations to measure next (module docstring) among the feasible ones of
    ``choice`` (a :func:`~phasekit.energy.choose.choose` result of ``ensemble.model``) not in
    ``measured`` (a :func:`~phasekit.energy.fit.configurations` table); ``trusted`` (default
    ``measured``) holds the readings whose energies set the bar to beat (without the failed
    runs); and how many candidates there were."""
    if k < 1:
        raise UsageError("expected at least 1 configuration to suggest", parameter="k",
                         value=k, option="-k")
    done = measured_keys(measured)
    lowest = lowest_measured(measured if trusted is None else trusted)
    rows = []
    margin = np.log1p(tolerance / 100.0)
    for c in choice.choices:
        if not c.evaluated:
            continue
        F = np.array([e.frequency_ghz for e in c.evaluated], float)
        F = np.where(np.isfinite(F), F, NOMINAL_FREQUENCY)
        P = np.array([e.cores for e in c.evaluated], float)
        full = np.log(np.maximum(np.array([e.energy_j for e in c.evaluated]), 1e-300))
        members = ensemble.log_energy(F, P, c.input)
        near = members - members.min(axis=1, keepdims=True) <= margin
        votes = near.sum(axis=0)
        promising = (full - full.min() <= margin) | (votes > 0)
        unmeasured = np.array([point_key(F[i], P[i], c.input) not in done
                               for i in range(F.size)], bool)
        improving = _improving_votes(full, members, unmeasured,
                                     lowest.get(round(float(c.input), 9), math.inf))
        spread = ensemble.spread(F, P, c.input)
        low, high = ensemble.interval(F, P, c.input, level)
        for i, cand in enumerate(c.evaluated):
            if not unmeasured[i]:
                continue
            tier = 2 if improving[i] else 1 if promising[i] else 0
            rows.append(((tier, int(improving[i]), float(spread[i])), Suggestion(
                cand.frequency_ghz, cand.cores, c.input, c.input_label, cand.energy_j,
                float(low[i]), float(high[i]), float(spread[i]), bool(promising[i]),
                int(votes[i]), int(improving[i]))))
    picked: list[Suggestion] = []
    for tier in (2, 1, 0):
        pool = [r for r in rows if r[0][0] == tier]
        spread = np.array([r[0][2] for r in pool], float)
        spread = np.where(np.isfinite(spread), spread, 0.0)
        score = (np.array([r[0][1] for r in pool], float) + TIE_WEIGHT * spread if tier == 2
                 else spread)
        taken = np.zeros(len(pool), bool)
        for _ in range(min(k - len(picked), len(pool))):
            best = int(np.argmax(np.where(taken, -np.inf, score)))
            taken[best] = True
            chosen = pool[best][1]
            picked.append(chosen)
            for j, r in enumerate(pool):
                if r[1].input == chosen.input:
                    score[j] *= 0.5
                    if r[1].cores == chosen.cores:
                        score[j] *= 0.5
        if len(picked) >= k:
            break
    return tuple(picked), len(rows)


def suggest(measured: Configurations | pd.DataFrame, *, k: int = K,
            frequencies_ghz: Sequence[float] = (),
            cores: Sequence[int] = (), inputs: Sequence[float] = (),
            labels: Mapping[float, str] | None = None, model: str = AUTO,
            max_time_s: float | None = None, max_cores: int | None = None,
            min_frequency_ghz: float | None = None, max_frequency_ghz: float | None = None,
            tolerance: float = TOLERANCE, level: float = LEVEL, seed: int = 0,
            groups: int = ENSEMBLE_GROUPS, starts: int = ENSEMBLE_STARTS,
            fit_starts: int = 8, use_time: bool = True,
            reference: Configurations | pd.DataFrame | None = None,
            progress: ProgressCallback | None = None) -> SuggestResult:
    """The next ``k`` configurations to measure, from those measured so far (module
    docstring).

    ``measured`` is a :func:`phasekit.energy.fit.configurations` table of the measured
    configurations. The grid is ``frequencies_ghz`` x ``cores`` x ``inputs`` (default: the
    values in ``measured``); limits as :func:`~phasekit.energy.choose.choose`. Time is fitted
    with energy when every measured configuration has one (and ``use_time``). ``reference``
    (default ``measured``) is the table whose energies are attached to the choice: a campaign
    that measured every configuration gives the choice's regret (to evaluate the loop).
    Every option is checked before the fit.
    """
    if k < 1:
        raise UsageError("expected at least 1 configuration to suggest", parameter="k",
                         value=k, option="-k")
    check_tolerance(tolerance)
    measured = Configurations.of(measured)
    if not len(measured):
        raise UsageError("nothing measured yet: measure a first design (the doptimal design "
                         "of energy fit) before asking for suggestions")
    f = np.asarray(measured["frequency_ghz"], float)
    controlled = bool(np.isfinite(f).any())
    if frequencies_ghz and not controlled:
        raise UsageError("the campaign did not control the frequency, so the model cannot "
                         "predict other frequencies", parameter="frequencies_ghz",
                         option="--frequencies")
    f = np.where(np.isfinite(f), f, NOMINAL_FREQUENCY)
    p = np.asarray(measured["cores"], float)
    n = np.asarray(measured["input"], float)
    energy = np.asarray(measured["energy_j"], float)
    times = (np.asarray(measured["time_s"], float) if "time_s" in measured
             else np.full(f.size, np.nan))
    with_time = bool(use_time and np.isfinite(times).all() and np.all(times > 0))
    freqs = tuple(frequencies_ghz) or tuple(np.unique(f))
    core_counts = tuple(cores) or tuple(int(c) for c in np.unique(p))
    check_grid(freqs, core_counts, max_cores=max_cores, min_frequency_ghz=min_frequency_ghz,
               max_frequency_ghz=max_frequency_ghz, frequency_controlled=controlled)
    with one_blas_thread():  # small dense problems: BLAS threads only wait when busy
        fit_args = (f, p, n, energy, times if with_time else None)
        scores: dict[str, float] = {}
        if model == AUTO:
            fitted, scores, _ = select_model(*fit_args, starts=fit_starts, seed=seed)
        else:
            fitted = fit_model(*fit_args, model=model, starts=fit_starts, seed=seed)
        kept = np.ones(len(measured), bool)
        kept[list(fitted.suspect)] = False      # by position: the fit's probable failed runs
        # the refits see the readings the fit kept, as in `energy choose`
        ensemble = fit_ensemble(f[kept], p[kept], n[kept], energy[kept],
                                times[kept] if with_time else None, groups=groups,
                                starts=starts, seed=seed, fitted=fitted, progress=progress)
        asked = tuple(inputs) or tuple(float(v) for v in np.unique(n))
        if labels is None and "input_label" in measured:
            labels = dict(zip(n.tolist(), map(str, measured["input_label"].tolist()), strict=True))
        result = choose(ensemble.model, asked, frequencies_ghz=freqs, cores=core_counts,
                        max_time_s=max_time_s, max_cores=max_cores,
                        min_frequency_ghz=min_frequency_ghz, max_frequency_ghz=max_frequency_ghz,
                        measured=measured if reference is None else reference, labels=labels,
                        frequency_controlled=controlled,
                        known_inputs=tuple(np.unique(n)), ensemble=ensemble, level=level,
                        failed_runs=list(zip(f[~kept], p[~kept], n[~kept], strict=True)),
                        reading_error=reading_error(measured))
        result = replace(result, model_selected=len(scores) > 1)
        picked, candidates = next_configurations(ensemble, result, measured,
                                                 trusted=measured.select(kept), k=k,
                                                 tolerance=tolerance, level=level)
    return SuggestResult(suggestions=picked, choice=result, n_measured=int(f.size),
                         n_candidates=candidates, members=ensemble.size,
                         method=ensemble.method, tolerance=tolerance, fitted=ensemble.model)


def reading_error(measured: Configurations | pd.DataFrame) -> float:
    """The relative noise of a reading of ``measured`` (NaN when it cannot be told)."""
    noise = reading_noise(measured)
    return noise.relative if noise.known else float("nan")


make_callable(__name__, "phasekit.energy.api:suggest")  # pk.energy.suggest(...) runs it
