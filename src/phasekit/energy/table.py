"""How the energy results read (Silva 2024, chapter 4): a fit's scores and parameters, the
choice per input with its savings and how sure it is, the configurations to measure next, and
the PaScal Viewer's tables of a campaign. What ``phasekit energy fit|choose|suggest|plot``
print, what the report and a notebook show (:mod:`phasekit.present`).

NumPy alone: ``phasekit energy plot`` prints its tables without importing pandas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from phasekit.energy.noise import ReadingNoise, neighbourhood
from phasekit.present import Presentation, View, listed, number, plural, quantity

__all__ = ["CHOSEN_BY", "NO_TIME_CHOICE_NOTE", "campaign_notes", "campaign_presentation",
           "choice_headline", "choice_presentation", "configuration_presentation",
           "efficiency_presentation", "efficiency_view", "fit_headline", "fit_presentation",
           "suggest_headline", "suggest_presentation"]

#: What ``energy choose`` says of a model fitted on energy alone.
NO_TIME_CHOICE_NOTE = ("no run times: the model predicts energy alone, so no time column, no "
                       "time limit and no time-energy Pareto frontier")
#: How the "chosen by" column of a choice reads.
CHOSEN_BY = ("chosen by: the least estimated energy (the model's prediction corrected by the "
             "nearby readings of the same input) fell on a measured (or an unmeasured: model) "
             "configuration")
#: Inputs a headline names before it says "and N more".
NAMED = 3


def _finite(value: Any) -> bool:
    return value is not None and math.isfinite(value)


def _pct(value: float | None) -> str:
    return f"{value:.2f}%" if _finite(value) else "n/a"


def _general(value: float | None) -> str:
    return quantity(value) if _finite(value) else "n/a"


def _of(name: str | None, word: str = "of") -> str:
    return f" {word} {name}" if name else ""


def _by_configuration(places: Sequence[tuple[str, str]]) -> str:
    """``(configuration, input)`` pairs as the configurations, each with its inputs: ``2.2
    GHz x 16 cores for inputs 1, 2; 2 GHz x 16 cores for input 3``."""
    inputs: dict[str, list[str]] = {}
    for where, label in places:
        inputs.setdefault(where, []).append(label)
    groups = [f"{where} for input{'s' if len(labels) > 1 else ''} {listed(labels, NAMED)}"
              for where, labels in inputs.items()]
    more = len(groups) - NAMED
    return "; ".join(groups[:NAMED]) + (f"; {plural(more, 'other configuration')}"
                                        if more > 0 else "")


# --- energy fit --------------------------------------------------------------------------------
def fit_headline(result: Any) -> str:
    """The model and its error on the configurations it did not see (on those it was fitted
    on when none was held out), the best of the other methods scored beside it, and, when
    the model was selected, why (a model that follows its training readings closer may
    predict the others worse)."""
    held_out = result.n_holdout > 0 and _finite(result.mpe_holdout)
    key = "mpe_holdout" if held_out else "mpe_train"
    if held_out:
        line = (f"{result.model} model fitted on {result.n_train} of "
                f"{plural(result.n_configs, 'configuration')}: {result.mpe_holdout:.1f} % "
                f"mean error on the other {result.n_holdout}")
    else:
        error = (f"{result.mpe_train:.1f} % mean error on them" if _finite(result.mpe_train)
                 else "no error measured")
        line = (f"{result.model} model fitted on all "
                f"{plural(result.n_configs, 'configuration')}: {error}, none held out")
    others = {name: values.get(key) for group in (result.other_models, result.baselines)
              for name, values in group.items() if _finite(values.get(key))}
    if others:
        best = min(others, key=lambda name: others[name])
        line += f" (best other: {best} {others[best]:.1f} %)"
    if result.model_selected:
        line += ("; chosen because it best predicts the configurations left out in turn "
                 "(cross-validation)")
    return line


def fit_presentation(result: Any, name: str | None = None) -> Presentation:
    """An :class:`~phasekit.energy.fit.EnergyFitResult` (``name``: its campaign's file):
    the scores of the model, the other models and the baselines, then the parameters, how
    the model was chosen, the time's error and what the fit could not do."""
    title = (f"Energy model fit{_of(name)}: {result.n_train} of {result.n_configs} "
             f"configurations ({result.design}), {result.n_holdout} held out")
    rows = [(f"{result.model} (fitted)", _pct(result.mpe_train), _pct(result.mpe_holdout),
             _general(result.mse_holdout))]
    for group in (result.other_models, result.baselines):
        rows += [(method, _pct(values.get("mpe_train")), _pct(values.get("mpe_holdout")),
                  _general(values.get("mse_holdout"))) for method, values in group.items()]
    scores = View(title, ("method", "MPE train", "MPE holdout", "MSE holdout (J^2)"),
                  tuple(rows), numeric=(False, True, True, True))
    largest = max((abs(v) for v in result.params.values() if math.isfinite(v)), default=0.0)
    notes = [f"parameters ({result.model}): "
             + ", ".join(f"{k} = {number(v, largest)}" for k, v in result.params.items())]
    if result.selection:
        notes.append("chosen by cross-validated loss on the training configurations: "
                     + ", ".join(f"{k} {v:.4g}" for k, v in result.selection.items()))
    if result.with_time:
        notes.append(f"time MPE: train {_pct(result.mpe_time_train)}, holdout "
                     f"{_pct(result.mpe_time_holdout)}; fit in {result.fit_time_s:.2f} s")
    if result.noise is not None:
        notes.append("noise: " + ReadingNoise.from_dict(result.noise).sentence())
    if result.explanation:
        notes.append(f"note: {result.explanation}")
    return Presentation(fit_headline(result), (scores,), tuple(notes))


# --- energy choose -----------------------------------------------------------------------------
def _where(frequency_ghz: float, cores: int, controlled: bool, unit: str = "cores") -> str:
    return f"{frequency_ghz:g} GHz x {cores} {unit}" if controlled else f"{cores} {unit}"


def _saving(result: Any, choice: Any) -> tuple[str, str]:
    """The choice's saving against the baseline a user would run otherwise (their core count,
    else ondemand at the best core count: the smallest of the thesis's three), measured where
    it was, and which of the two it is; empty strings when there is none (a campaign that did
    not control the frequency, without the user's core count: the choice is that baseline)."""
    if not (result.user_cores or result.frequency_controlled):
        return "", ""
    key = "user" if result.user_cores else "best"
    measured = choice.savings_measured.get(key)
    value = measured if _finite(measured) else choice.savings_predicted.get(key)
    if not _finite(value):
        return "", ""
    at = f"{result.user_cores} cores" if result.user_cores else "the best core count"
    baseline = f"ondemand at {at}" if result.frequency_controlled else at
    how = "less" if value >= 0 else "more"
    return (f", {abs(value):.1f} % {how} energy than {baseline}",
            f"saving {'measured' if _finite(measured) else 'predicted'}")


def _chance(probability: float) -> str:
    return "-" if not _finite(probability) else f"{100 * probability:.0f} %"


def _next(uncertainty: Any, controlled: bool) -> str:
    """Where a configuration better than the choice most likely lies (to measure next)."""
    if not uncertainty.next_cores:
        return "-"
    return _where(uncertainty.next_frequency_ghz, uncertainty.next_cores, controlled)


def choice_headline(result: Any) -> str:
    """Where each input uses the least energy (within the limits), how much that saves for
    a single input, and how sure: how many choices are sure (a small chance of losing more
    than the tolerance), the regret."""
    controlled = result.frequency_controlled
    chosen = [c for c in result.choices if c.best is not None]
    limited = any(v is not None for v in result.limits.values())
    what = "lowest energy within the limits" if limited else "lowest energy"
    if not chosen:
        whom = (f"input {result.choices[0].input_label}" if len(result.choices) == 1
                else f"any of the {len(result.choices)} inputs")
        return f"no configuration within the limits for {whom}"
    tail = []
    if len(result.choices) == 1:
        choice = chosen[0]
        saving, how = _saving(result, choice)
        line = (f"{what} for input {choice.input_label}: "
                f"{_where(choice.best.frequency_ghz, choice.best.cores, controlled)}{saving}")
        tail += [how] if how else []
        if choice.uncertainty is not None:
            tail.append("sure" if choice.uncertainty.sure
                        else "not sure" + _why_unsure([choice.uncertainty]))
        if _finite(choice.regret):
            tail.append(_above_best(choice.regret, choice.regret_denoised))
    else:
        line = f"{what}: " + _by_configuration(
            [(_where(c.best.frequency_ghz, c.best.cores, controlled), c.input_label)
             for c in chosen])
        tail.append(plural(len(result.choices), "input"))
        if len(chosen) < len(result.choices):
            tail.append(f"{len(result.choices) - len(chosen)} with none within the limits")
        sureness = [c.uncertainty for c in chosen if c.uncertainty is not None]
        if sureness:
            tail.append(f"{sum(u.sure for u in sureness)} of {len(sureness)} sure"
                        + _why_unsure(sureness))
        if _finite(result.mean_regret):
            tail.append("on average " + _above_best(result.mean_regret,
                                                    result.mean_regret_denoised))
    return line + (f" ({'; '.join(tail)})" if tail else "")


def _why_unsure(sureness: Sequence[Any]) -> str:
    """Why choices are not sure, in words (empty when all are): the larger of the model's
    error on configurations it did not see and a reading's error, against the tolerance."""
    if all(u.sure for u in sureness):
        return ""
    u = sureness[0]
    model, reading = 100 * u.model_error, 100 * u.reading_error
    if not (math.isfinite(model) and math.isfinite(reading)):
        return ""
    if model >= reading:
        return (f": the model misses configurations it did not see by {model:.0f} % (1 sigma), "
                f"more than the {u.tolerance:g} % a choice may lose")
    return (f": measured energies are uncertain by {reading:.0f} % (1 sigma), more than the "
            f"{u.tolerance:g} % a choice may lose")


def _above_best(regret: float, denoised: float) -> str:
    """The regret in words: ``2.1 % above the lowest reading, 0.3 % with the noise
    smoothed out`` (the denoised regret: each configuration's median over its neighbours)."""
    return f"{regret:.1f} % above the lowest reading" + (
        f", {denoised:.1f} % with the noise smoothed out" if _finite(denoised) else "")


def _savings_text(predicted: Mapping[str, float], measured: Mapping[str, float],
                  key: str) -> str:
    value = predicted.get(key, float("nan"))
    text = f"{value:+.1f}" if math.isfinite(value) else "n/a"
    if key in measured and math.isfinite(measured[key]):
        text += f" ({measured[key]:+.1f})"
    return text


def _regret_cell(choice: Any) -> str:
    """``37.1 (2.0)``: the regret against the lowest reading, then the denoised one."""
    if not math.isfinite(choice.regret):
        return "-"
    denoised = choice.regret_denoised
    return f"{choice.regret:.1f}" + (f" ({denoised:.1f})" if math.isfinite(denoised) else "")


def _choice_parts(result: Any, name: str | None) -> tuple[list[View], list[str]]:
    """The tables of a choice (configurations, savings, how sure) and the lines after them."""
    controlled = result.frequency_controlled
    timed = result.with_time
    user_cores = result.user_cores
    policies = ("user",) if user_cores else ("worst", "random", "best")
    grid = ((f"{len(result.frequencies_ghz)} frequencies x " if controlled else "")
            + f"{len(result.cores)} core counts")
    with_regret = any(math.isfinite(c.regret) for c in result.choices)
    sureness = [c.uncertainty for c in result.choices if c.uncertainty is not None]
    headers = ("input", *(("GHz",) if controlled else ()), "cores",
               *(("time s",) if timed else ()), "predicted J", "measured J", "chosen by",
               *(("regret % (denoised)",) if with_regret else ()),
               *(("f* GHz",) if controlled else ()))
    rows, savings, sure = [], [], []
    for choice in result.choices:
        label = choice.input_label + (" (extrapolated)" if choice.extrapolated else "")
        best = choice.best
        if best is None:
            rows.append((label, *["-"] * (len(headers) - 1)))
            continue
        measured = (quantity(best.measured_energy_j) if math.isfinite(best.measured_energy_j)
                    else "-")
        rows.append((label, *((f"{best.frequency_ghz:g}",) if controlled else ()),
                     str(best.cores), *((quantity(best.time_s),) if timed else ()),
                     quantity(best.energy_j), measured, choice.basis,
                     *((_regret_cell(choice),) if with_regret else ()),
                     *((f"{choice.continuous_frequency_ghz:.3g}",) if controlled else ())))
        savings.append((label, *(_savings_text(choice.savings_predicted,
                                               choice.savings_measured, p)
                                 for p in policies)))
        u = choice.uncertainty
        if u is not None:
            sure.append((label, f"{u.energy_low_j:.4g}-{u.energy_high_j:.4g}",
                         _chance(u.loss_probability), "yes" if u.sure else "no",
                         "-" if u.sure else _next(u, controlled)))

    def table(title: str, columns: tuple[str, ...], cells: list[tuple[str, ...]]) -> View:
        return View(title, columns, tuple(cells), numeric=tuple(c != "input" for c in columns))

    chosen_by = ", chosen by cross-validation" if result.model_selected else ""
    views = [table(f"Minimum-energy configurations{_of(name, 'for')} ({result.model} model"
                   f"{chosen_by}, {grid})", headers, rows)]
    if savings:
        at = (f"{user_cores} cores" if user_cores
              else "the worst, a random, the best core count")
        alike = ""
        if len(savings) > 1 and len({row[1:] for row in savings}) == 1:
            # predicted only and equal: the model's energy scales with the input by one factor
            savings = [("every input", *savings[0][1:])]
            alike = (" (the same for every input: in the fitted model the input scales every "
                     "configuration's energy alike)")
        views.append(table((f"Savings vs ondemand (maximum frequency) at {at}" if controlled
                            else f"Savings vs {at}") + ", %: predicted (measured)" + alike,
                           ("input", *policies), savings))
    if sure:
        first = sureness[0]
        single = (ReadingNoise.from_dict(result.noise).relative if result.noise is not None
                  else float("nan"))
        measured_error = (f"a measured energy's, counted with its neighbours' median "
                          f"({100 * first.reading_error:.1f} %; a single reading's "
                          f"{100 * single:.1f} %)"
                          if math.isfinite(single) and first.reading_error < 0.99 * single
                          else f"a measured energy's ({100 * first.reading_error:.1f} %)")
        views.append(table(
            f"How sure: the chance that the choice loses more than {first.tolerance:g} % "
            f"against the best, given the model's error on configurations it did not see "
            f"({100 * first.model_error:.1f} %) and {measured_error}; sure at "
            f"{100 * first.risk:.0f} % or less",
            ("input", f"{100 * first.level:.0f} % interval J",
             f"chance of losing > {first.tolerance:g} %", "sure", "likeliest better"), sure))
    notes = [CHOSEN_BY + ("; f* GHz: the frequency of least predicted energy at the chosen "
                          "cores, between the grid's frequencies" if controlled else "")
             + ("; likeliest better: the configuration most often below the choice by more "
                "than the tolerance under those errors" if sure else "")]
    if with_regret:
        around = neighbourhood(result.noise is None
                               or bool(result.noise.get("across_cores", True)))
        notes.append(f"regret (measured energy of the choice / the lowest measured - 1, where "
                     f"every feasible configuration was measured): mean "
                     f"{result.mean_regret:.1f} %, worst {result.worst_regret:.1f} %; "
                     f"denoised (each configuration's median over its {around}, "
                     f"which one lucky reading does not set): mean "
                     f"{result.mean_regret_denoised:.1f} %")
    if result.failed_readings or result.ruled_out:
        notes.append(f"{result.failed_readings} reading(s) at least {result.failed_ratio:g}x below "
                     "the model (probable failed runs): not regret references; "
                     f"{result.ruled_out} configuration(s) the fit set aside as failed runs: "
                     "never chosen")
    notes += [f"input {c.input_label}: {c.reason}" for c in result.choices if c.best is None]
    notes += [f"input {c.input_label}: {c.why}" for c in result.choices if c.why]
    if result.noise is not None:
        notes.append("noise: " + ReadingNoise.from_dict(result.noise).sentence())
    if len(result.choices) == 1 and result.choices[0].pareto:
        front = ", ".join((f"{c.frequency_ghz:g} GHz " if controlled else "")
                          + f"{c.cores}c: {quantity(c.time_s, 3)} s {quantity(c.energy_j)} J"
                          for c in result.choices[0].pareto)
        notes.append(f"Pareto frontier (time, energy), fastest first: {front}")
    if not controlled:
        notes.append("note: the campaign did not control the frequency; the choice is over "
                     "cores at the frequency it ran at")
    if not timed:
        notes.append(f"note: {NO_TIME_CHOICE_NOTE}")
    return views, notes


def choice_presentation(result: Any, name: str | None = None) -> Presentation:
    """A :class:`~phasekit.energy.choose.ChoiceResult` (``name``: its campaign's file): the
    headline, the configurations, the savings and how sure, then the notes; where a choice is
    unsure, which inputs and the configurations to measure next."""
    views, notes = _choice_parts(result, name)
    notes += [f"note: {text}" for text in result.notes]
    unsure = [c for c in result.choices if c.uncertainty is not None and not c.uncertainty.sure]
    if unsure:
        u = unsure[0].uncertainty
        notes.append(f"not sure (a chance above {100 * u.risk:.0f} % of losing more than "
                     f"{u.tolerance:g} % against the best) for input(s) "
                     + ", ".join(c.input_label for c in unsure))
        if result.suggestions:
            controlled = result.frequency_controlled
            notes.append("measure next (`phasekit energy suggest`'s batch, which also weighs "
                         "where the refits expect a lower reading, so it may differ from the "
                         "likeliest better): " + "; ".join(
                f"input {s.input_label} " + (f"{s.frequency_ghz:g} GHz " if controlled else "")
                + f"{s.cores} cores" for s in result.suggestions))
    return Presentation(choice_headline(result), tuple(views), tuple(notes))


# --- energy suggest ----------------------------------------------------------------------------
def _why(suggestion: Any, members: int) -> str:
    """Why a configuration is suggested: the fit and refits predicting it beats the best
    measured, or near the minimum, or only uncertain."""
    if suggestion.improving_members:
        return f"may beat best measured ({suggestion.improving_members}/{members + 1} fits)"
    if suggestion.promising:
        return f"near best ({suggestion.near_optimal_members}/{members} refits)"
    return "uncertain"


def suggest_headline(result: Any) -> str:
    """How many configurations to measure next, the first of them and why, out of how many
    not measured yet."""
    found = result.suggestions
    if not found:
        return ("nothing to measure next: every configuration of the grid within the limits "
                f"is measured ({result.n_measured} measured)")
    first = found[0]
    where = _where(first.frequency_ghz, first.cores, result.choice.frequency_controlled)
    improving = sum(1 for s in found if s.improving_members)
    line = (f"measure next: {plural(len(found), 'configuration')}, first input "
            f"{first.input_label} at {where}")
    if improving:
        line += (f"; {improving} may beat the lowest energy measured" if len(found) > 1
                 else " (it may beat the lowest energy measured)")
    return line + f" ({result.n_measured} measured, {result.n_candidates} not yet)"


def suggest_presentation(result: Any, name: str | None = None) -> Presentation:
    """A :class:`~phasekit.energy.suggest.SuggestResult` (``name``: the measured campaign's
    file): the configurations to measure next, then the choice they would check."""
    controlled = result.choice.frequency_controlled
    headers = ("#", "input", *(("GHz",) if controlled else ()), "cores", "energy J",
               "interval J", "+/- %", "why")
    rows = tuple((str(rank), s.input_label, *((f"{s.frequency_ghz:g}",) if controlled else ()),
                  str(s.cores), quantity(s.energy_j),
                  f"{quantity(s.energy_low_j)}-{quantity(s.energy_high_j)}",
                  f"{100 * math.expm1(s.spread):.1f}", _why(s, result.members))
                 for rank, s in enumerate(result.suggestions, start=1))
    table = View(f"Next {len(result.suggestions)} configurations to measure{_of(name, 'for')} "
                 f"({result.n_measured} measured, {result.n_candidates} not yet; "
                 f"{result.members} refits, {result.method})", headers, rows,
                 numeric=tuple(h != "input" for h in headers))
    views, notes = _choice_parts(result.choice, name)
    if not result.suggestions:
        notes.append("nothing to suggest: every configuration of the grid within the limits "
                     "is measured")
    return Presentation(suggest_headline(result), (table, *views), tuple(notes))


# --- energy plot: the PaScal Viewer's tables ---------------------------------------------------
def _cell(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{value:.2f}"


def efficiency_view(table: Any) -> View:
    """An :class:`~phasekit.energy.efficiency.EfficiencyTable` as the Viewer's diagram reads:
    a row per thread (or core) count, a column per input."""
    at = "" if table.frequency_ghz is None else f" at {table.frequency_ghz:g} GHz"
    on = "" if table.cores is None else f" on {table.cores} cores"
    return View(f"Efficiency (speedup / {table.unit}) of {table.name}{at}{on}; columns: inputs",
                (table.unit, *table.inputs),
                tuple((str(p), *(_cell(v) for v in table.efficiency[i]))
                      for i, p in enumerate(table.counts)),
                numeric=(True,) * (len(table.inputs) + 1))


def _efficiency_line(table: Any) -> str | None:
    """The efficiency of each input at the largest count measured, lowest and highest."""
    for i in range(len(table.counts) - 1, -1, -1):
        row = np.asarray(table.efficiency[i], float)
        if np.isfinite(row).any():
            break
    else:
        return None
    finite = np.flatnonzero(np.isfinite(row))
    low, high = finite[np.argmin(row[finite])], finite[np.argmax(row[finite])]
    on = f"{table.name} efficiency on {table.counts[i]} {table.unit}"
    if f"{row[low]:.2f}" == f"{row[high]:.2f}":
        whom = (f"input {table.inputs[low]}" if finite.size == 1
                else "every input" if finite.size == len(table.inputs)
                else f"inputs {listed([table.inputs[j] for j in finite], NAMED)}")
        return f"{on}: {row[low]:.2f} for {whom}"
    return (f"{on}: {row[low]:.2f} (input {table.inputs[low]}) to {row[high]:.2f} "
            f"(input {table.inputs[high]})")


def efficiency_presentation(table: Any, name: str | None = None) -> Presentation:
    """One efficiency table: the headline, the table, its notes (``name``, the campaign's
    file, is not shown: the table has no column for it)."""
    line = _efficiency_line(table) or f"no efficiency measured for {table.name}"
    return Presentation(line, (efficiency_view(table),),
                        tuple(f"note: {n}" for n in table.notes))


def _least(configs: Any) -> list[tuple[str, np.ndarray, int]]:
    """Per input with an energy: its label, its rows and the row of its least energy."""
    energy = np.asarray(configs.columns["energy_j"], float)
    out = []
    for label in configs.inputs:
        rows = np.flatnonzero((configs.columns["input"] == label) & np.isfinite(energy))
        if rows.size:
            out.append((label, rows, int(rows[np.argmin(energy[rows])])))
    return out


def _best_lines(configs: Any) -> list[str]:
    """Per input: its least energy, where, and how many configurations are on its frontier
    (when time was measured)."""
    columns = configs.columns
    lines = []
    for label, rows, best in _least(configs):
        f, t = float(columns["frequency_ghz"][best]), float(columns["time_s"][best])
        at = "" if not math.isfinite(f) else f", {f:g} GHz"
        line = (f"input {label}: least energy {quantity(columns['energy_j'][best])} J at "
                f"{int(columns['cores'][best])} {configs.unit}{at}")
        if configs.has_time:
            line += (f" ({quantity(t)} s); {int(columns['pareto'][rows].sum())} of {rows.size} "
                     "configurations on the time-energy Pareto frontier")
        else:
            line += f" (least of {rows.size} configurations)"
        lines.append(line)
    return lines


def _least_line(configs: Any) -> str | None:
    """Where each input used the least energy."""
    columns = configs.columns
    places = [(_where(float(columns["frequency_ghz"][best]), int(columns["cores"][best]),
                      math.isfinite(columns["frequency_ghz"][best]), configs.unit), label)
              for label, _, best in _least(configs)]
    return f"least energy measured: {_by_configuration(places)}" if places else None


def configuration_presentation(configs: Any, name: str | None = None) -> Presentation:
    """A :class:`~phasekit.energy.efficiency.ConfigurationTable`: where each input used the
    least energy, how much, its time-energy frontier, then the notes (``name``, the
    campaign's file, is not shown: the table has no column for it)."""
    line = _least_line(configs) or f"{plural(len(configs), 'configuration')}, no energy"
    return Presentation(line, (), (*_best_lines(configs), *(f"note: {n}" for n in configs.notes)))


def campaign_notes(tables: Sequence[Any], configs: Any | None) -> list[str]:
    """The notes of the efficiency tables (each once) and of the configuration table."""
    notes = list(dict.fromkeys(n for t in tables for n in t.notes))
    return notes + (list(configs.notes) if configs is not None else [])


def campaign_presentation(tables: Sequence[Any], configs: Any | None,
                          name: str | None = None) -> Presentation:
    """What ``phasekit energy plot`` shows of a campaign: the whole program's efficiency and
    where each input used the least energy, the efficiency tables (the program's, then each
    region's), each input's least energy, the notes (``name``, the campaign's file, is not
    shown: no table has a column for it)."""
    parts = [line for line in (_efficiency_line(tables[0]) if tables else None,
                               _least_line(configs) if configs is not None else None) if line]
    headline = "; ".join(parts) if parts else "nothing measured to show"
    lines = _best_lines(configs) if configs is not None else []
    return Presentation(headline, tuple(efficiency_view(t) for t in tables),
                        (*lines, *(f"note: {n}" for n in campaign_notes(tables, configs))))
