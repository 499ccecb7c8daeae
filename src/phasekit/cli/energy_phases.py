"""``phasekit energy phasediv``: the minimum-energy phase division of a run (Silva 2024, ch. 5).

The command was ``phasekit energy phases``, still accepted (hidden): "phases" alone names the
execution phases of ``phasekit phases``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import (
    check_outputs,
    name_file,
    print_json,
    progress_reporter,
    write_outputs,
)
from phasekit.cli.render import show
from phasekit.errors import PhasekitError

EPILOG = """\
Example:

\b
    phasekit energy phasediv profiles.json
    phasekit energy phasediv profiles.json --max-phases 10 --integrator trapezoid --plot div.png
    phasekit energy phasediv pascal.json --input 3 --rep 1 --switch-cost-j 50 --json
    phasekit energy phasediv profiles.json --method ga --max-phases 20
"""


def phases(
    profiles: Annotated[Path, typer.Argument(
        metavar="PROFILES", show_default=False,
        help="Power profiles, one run per configuration: phasekit power-profiles JSON or "
             "PaScal Analyzer JSON (runs with a power sensor such as ipmi).")],
    max_phases: Annotated[int, typer.Option(
        "--max-phases", metavar="K", help="Divide into 1..K phases (Silva 2024: gains beyond 35 "
        "are negligible).")] = 35,
    grid: Annotated[int, typer.Option(
        "--grid", metavar="G", help="Breakpoints on multiples of 1/G of the execution.")
    ] = 1000,
    method: Annotated[str, typer.Option(
        "--method", metavar="dp|ga", help="dp: exact optimum (dynamic programming); ga: the "
        "thesis's genetic algorithm (population 1000, 300 generations), with the exact "
        "optimum beside it.")] = "dp",
    switch_cost_s: Annotated[float, typer.Option(
        "--switch-cost-s", metavar="S", help="Time added by each switch of configuration "
        "(s).")] = 0.0,
    switch_cost_j: Annotated[float, typer.Option(
        "--switch-cost-j", metavar="J", help="Energy added by each switch of configuration "
        "(J); makes fewer phases optimal.")] = 0.0,
    integrator: Annotated[str, typer.Option(
        "--integrator", metavar="zoh|trapezoid", help="trapezoid (default, ours): linear "
        "interpolation of power between samples; zoh: the thesis's integrator (ch. 5.5), "
        "whose running total jumps at every sample, which the optimizer exploits (about 1 % "
        "too low on our benchmark).")] = "trapezoid",
    input_name: Annotated[str | None, typer.Option(
        "--input", metavar="NAME", show_default=False,
        help="PaScal JSON: the input to use (default: the smallest).")] = None,
    rep: Annotated[str | None, typer.Option(
        "--rep", metavar="R", show_default=False,
        help="PaScal JSON: the repetition to use (default: the first).")] = None,
    sensor: Annotated[str | None, typer.Option(
        "--sensor", metavar="NAME", show_default=False,
        help="PaScal JSON: the power sensor (default: ipmi).")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", metavar="S", help="Seed of the genetic algorithm.")] = 0,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print {\"best_k\", \"energy_j\", \"savings\", \"phases\": [{\"start\", "
        "\"end\", \"config\", \"energy_j\", ...}], \"energy_vs_phases\", \"single\", ...} as "
        "JSON.")] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE", help="Write the figure: energy against the number of phases "
        "and the chosen configuration over the execution.")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", help="Write the full result as JSON.")
    ] = None,
) -> None:
    """Divide a run into phases, each at its minimum-energy configuration.

    Silva 2024, chapter 5: the program ran once per configuration (cores x frequency) with its
    power sampled; phases are fractions of the execution, the energy of a phase is the least
    over configurations, and the division minimizing the total is found for 1..K phases.
    Prints the chosen phases (fractions, configuration, energy), the energy against the
    number of phases and the savings against the best single configuration.
    """
    from phasekit.energy.api import (
        check_phasediv,
        phasediv,
        plot_phase_division,
        read_power_profiles,
    )

    options = {"max_phases": max_phases, "grid": grid, "method": method,
               "integrator": integrator, "switch_cost_s": switch_cost_s,
               "switch_cost_j": switch_cost_j}
    check_phasediv(**options)
    check_outputs(output, plot)
    data = read_power_profiles(profiles, input=input_name, repetition=rep, sensor=sensor)
    with progress_reporter(not json_output, f"dividing {profiles.name}") as progress:
        try:
            result = phasediv(data, seed=seed, progress=progress, **options)
        except PhasekitError as exc:
            raise name_file(exc, profiles) from exc
    written = write_outputs(output, plot, result.saved_dict,
                            lambda path: plot_phase_division(result, path))
    if json_output:
        print_json(result.to_dict(divisions=False, configs=False))
        return
    show(result.present(profiles.name), written)
