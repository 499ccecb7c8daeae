"""How a phase division reads (Silva 2024, ch. 5): the headline (the best number of phases and
the energy it saves against the best single configuration), the phases of the best division,
the energy against the number of phases, and the notes; what the command line, the report and
a notebook show (:mod:`phasekit.present`)."""

from __future__ import annotations

from typing import Any

from phasekit.present import Presentation, View, quantity

__all__ = ["headline", "presentation"]


def headline(result: Any) -> str:
    """One line: the best number of phases and the saving against the best single
    configuration (or that a single configuration is best)."""
    single = result.labels[result.single_config]
    if result.best_k == 1:
        why = result.explanation or "a single configuration is best"
        return (f"{why}: {single}, {quantity(result.single_energy_j, 6)} J in "
                f"{quantity(result.single_time_s)} s")
    return (f"{result.best_k} phases, each at its minimum-energy configuration, use "
            f"{100 * result.savings:.2f} % less energy than the best single configuration "
            f"({quantity(result.energy_j, 6)} J against {quantity(result.single_energy_j, 6)} J "
                f"for {single})")


def _source(meta: Any) -> str:
    """Which PaScal Analyzer runs the division is of, when it is of some."""
    if meta.get("source") != "pascal":
        return ""
    return (f"; PaScal input {meta.get('input')}, repetition {meta.get('repetition')}, sensor "
            f"{meta.get('sensor')}")


def presentation(result: Any, name: str | None = None) -> Presentation:
    """The phases of the best division (``name``: the profiles' file, in the title), the
    energy against the number of phases, the best division against the best single
    configuration, and the notes."""
    title = (f"Phases of {name or 'the run'} (Silva 2024 ch. 5; {result.method}, "
             f"{result.integrator} integrator, grid {result.grid}, {len(result.labels)} "
             f"configurations{_source(result.meta)})")
    phases = View(title, ("#", "start %", "end %", "configuration", "energy (J)", "time (s)"),
                  tuple((str(k), f"{100 * row['start']:.1f}", f"{100 * row['end']:.1f}",
                         row["config"], quantity(row["energy_j"], 6), quantity(row["time_s"]))
                        for k, row in enumerate(result.phases(), start=1)),
                  numeric=(True, True, True, False, True, True))
    ga = result.energy_ga is not None
    headers = ("phases", "dp (J)", *(("ga (J)", "ga - dp") if ga else ()), "vs best single")
    rows = []
    for k in range(1, result.max_phases + 1):
        dp = result.energy_dp[k - 1]
        cells = [str(k), f"{dp:.6g}"]
        if ga:
            value = result.energy_ga[k - 1]
            cells += [f"{value:.6g}", f"{100 * (value - dp) / dp:+.2f}%"]
        vs = 100 * (result.energy(k) - result.single_energy_j) / result.single_energy_j
        rows.append((*cells, f"{vs:+.2f}%"))
    curve = View("Energy against the number of phases (switch costs included)", headers,
                 tuple(rows), numeric=(True,) * len(headers))
    single = result.labels[result.single_config]
    notes = [f"best: {result.best_k} phase(s), {quantity(result.energy_j, 6)} J in "
             f"{quantity(result.time_s)} s; best single configuration {single}: "
             f"{quantity(result.single_energy_j, 6)} J in {quantity(result.single_time_s)} s; "
             f"savings {100 * result.savings:.2f}%"]
    if result.explanation:
        notes.append(f"note: {result.explanation}")
    return Presentation(headline(result), (phases, curve), tuple(notes))
