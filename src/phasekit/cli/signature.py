"""``phasekit signature``: application signatures (Salinas Hilburg 2020, ch. 2 and 4): build, run.

``build`` compiles a C program, extracts its call graph (Doxygen), writes one executable per
independent path and counts their instructions (callgrind, or perf where hardware counters
exist). ``run`` runs the executables partially in parallel and estimates the program's time
and energy; ``--compare`` also runs the whole program, measured the same way.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import (
    check_outputs,
    err_console,
    figure_file,
    json_file,
    parse_duration,
    print_json,
    print_written,
    progress_reporter,
    sub_app,
    write_all,
)
from phasekit.cli.render import show
from phasekit.errors import UsageError

__all__ = ["BUILD_EPILOG", "RUN_EPILOG", "build", "run", "signature_app"]

signature_app = sub_app(
    "signature",
    "Application signatures (Salinas Hilburg 2020): one executable per independent path of a C "
    "program, run partially to estimate the program's time and energy.")

BUILD_EPILOG = """\
Example:

\b
    phasekit signature build stream            (a bundled kernel: stream, dgemm, stencil)
    phasekit signature build app.c --cflags "-O3 -march=native" --steps-arg 2 \\
        -o app.sig -- input.dat 500
    phasekit signature build dgemm -o d.sig -- 128 40
"""

RUN_EPILOG = """\
Example:

\b
    phasekit signature run stream.signature
    phasekit signature run app.sig --p 5 --s 10 --compare --plot app.png
    phasekit signature run app.sig --compare --cores 1 --repeats 3     (a shared machine)
    phasekit signature run app.sig --compare --mode simulated --interval 1ms   (no noise)
    phasekit signature run app.sig/signature.json --power-model cpu.json --json
"""


def _program(program: str) -> tuple[Path, tuple[str, ...] | None, int | None]:
    """The C file, and for a bundled kernel its default arguments and trip-count argument."""
    from phasekit.signature.api import kernel, kernels

    path = Path(program)
    bundled = kernels()
    if program in bundled and not path.exists():
        return kernel(program)
    if not path.exists():
        raise UsageError(f"{program}: no such file (or bundled kernel: "
                         f"{', '.join(bundled)})")
    if path.is_dir():
        raise UsageError(f"{program}: is a directory; expected a C file")
    return path, None, None


@signature_app.command("build", epilog=BUILD_EPILOG)
def build(
    program: Annotated[str, typer.Argument(
        metavar="PROGRAM.c", show_default=False,
        help="A C program (one file; local headers may be included), or a bundled kernel: "
             "stream, dgemm, stencil.")],
    args: Annotated[list[str] | None, typer.Argument(
        metavar="[-- ARGS]...", show_default=False,
        help="The program's arguments (the input the signature is for). Default for a "
             "bundled kernel: its standard size.")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="DIR", show_default=False,
        help="Signature directory (default NAME.signature here); rebuilt if it holds one.")
    ] = None,
    cflags: Annotated[str, typer.Option(
        "--cflags", metavar="FLAGS", help="Compiler flags, as one string.")] = "-O2",
    ldflags: Annotated[str, typer.Option(
        "--ldflags", metavar="FLAGS", help="Linker flags, as one string.")] = "-lm",
    cc: Annotated[str, typer.Option("--cc", metavar="CC", help="The C compiler.")] = "cc",
    steps_arg: Annotated[int | None, typer.Option(
        "--steps-arg", metavar="N", show_default=False,
        help="ARGS[N] (1 = the first) is the trip count of the program's main loop: "
             "instructions are counted at small trip counts and extrapolated, and partial "
             "runs run a part of it. Default for a bundled kernel: 2.")] = None,
    probe_steps: Annotated[str, typer.Option(
        "--probe-steps", metavar="K1,K2[,...]", help="Trip counts the instructions are "
        "counted at (with --steps-arg).")] = "1,2",
    counter: Annotated[str, typer.Option(
        "--counter", metavar="auto|callgrind|perf", help="How instructions are counted: "
        "callgrind (exact, any machine) or perf (hardware counters); auto: perf where it "
        "exists.")] = "auto",
    count_program: Annotated[bool, typer.Option(
        "--count-program/--no-count-program", help="Also count the unmodified program's "
        "instructions (for the instruction error of eq. 4.13).")] = True,
    json_output: Annotated[bool, typer.Option("--json", help="Print the signature as JSON.")
                           ] = False,
) -> None:
    """Build a signature: call graph (Doxygen), independent paths, one executable each,
    their instructions (Salinas Hilburg 2020, 4.1.1-4.1.3)."""
    from phasekit.signature.api import build as build_signature

    source, default_args, default_steps = _program(program)
    arguments = tuple(args) if args else (default_args or ())
    if steps_arg is None:
        steps_arg = default_steps  # a bundled kernel's trip count is its 2nd argument
    try:
        probes = tuple(int(k) for k in probe_steps.split(","))
    except ValueError:
        raise UsageError(f"--probe-steps {probe_steps!r}: expected whole numbers separated "
                         "by commas") from None
    directory = output or Path(f"{source.stem}.signature")
    with progress_reporter(not json_output, f"signature of {source.name}") as progress:
        signature = build_signature(
            source, directory, args=arguments, cflags=shlex.split(cflags),
            ldflags=shlex.split(ldflags), cc=cc, steps_arg=steps_arg, probe_steps=probes,
            counter=counter, count_program=count_program, progress=progress)
    if json_output:
        print_json(signature.to_dict())
        return
    show(signature.present(), [("signature", directory)])


@signature_app.command("run", epilog=RUN_EPILOG)
def run(
    signature_path: Annotated[Path, typer.Argument(
        metavar="DIR|SIGNATURE.json", show_default=False,
        help="A signature built by 'phasekit signature build'.")],
    p: Annotated[float, typer.Option(
        "--p", metavar="PERCENT", help="Stop criterion 1: percent of each path's "
        "instructions (Salinas Hilburg 2020, 4.4).")] = 5.0,
    s: Annotated[int, typer.Option(
        "--s", metavar="N", help="Segment division: the stability window is the expected "
        "partial time / N (eq. 4.4).")] = 10,
    interval: Annotated[str, typer.Option(
        "--interval", metavar="DURATION", help="Counter sampling period sm.")] = "5ms",
    compare: Annotated[bool, typer.Option(
        "--compare", help="Also run the whole program, measured with the same sources, and "
        "report the errors (eq. 4.12-4.13).")] = False,
    power_model: Annotated[Path | None, typer.Option(
        "--power-model", metavar="MODEL.json", show_default=False,
        help="A power model (phasekit powermodel fit); its features must be metrics of the "
             "runs (rates per second). Default: 6 W per busy core (dynamic CPU power), an "
             "assumption.")
    ] = None,
    cores: Annotated[int | None, typer.Option(
        "--cores", metavar="N", show_default=False,
        help="Run on the first N usable cores (default all).")] = None,
    mode: Annotated[str, typer.Option(
        "--mode", metavar="auto|hardware|software|simulated", help="Counters to stop and "
        "time by: hardware (IPC, perf-hw), software (task clock), or simulated (callgrind's "
        "cache and branch simulation of a reference machine: deterministic, ~100x slower; "
        "not this machine's time); auto: hardware where it exists, else software.")
    ] = "auto",
    repeats: Annotated[int, typer.Option(
        "--repeats", metavar="N", help="Run everything N times and keep the fastest run of "
        "each (for a machine shared with other jobs; with --compare, N rounds of partial "
        "runs and program run).")] = 1,
    timeout: Annotated[str | None, typer.Option(
        "--timeout", metavar="DURATION", show_default=False,
        help="Stop a run after this long (it is reported as failed).")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="RESULT.json", show_default=False,
        help="Write the estimate as JSON.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the estimate as JSON.")
                           ] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE", show_default=False,
        help="Draw the reconstructed power profile (and the program's, with --compare).")
    ] = None,
) -> None:
    """Run a signature's executables partially, in parallel, and estimate the program's time
    and energy (Salinas Hilburg 2020, 4.1.4-4.1.6)."""
    from phasekit.powermodel import read_model
    from phasekit.signature.api import figure, load_signature
    from phasekit.signature.api import signature as signature_verb

    check_outputs(output, plot)
    sm = parse_duration(interval, "--interval")
    limit = parse_duration(timeout, "--timeout") if timeout else None
    model = None if power_model is None else read_model(power_model)
    signature = load_signature(signature_path)
    with progress_reporter(not json_output, f"signature of {signature.program}") as progress:
        estimate = signature_verb(signature, power_model=model, p=p, s=s, interval=sm,
                                  compare=compare, cores=cores, mode=mode, timeout=limit,
                                  repeats=repeats, progress=progress)
    written = write_all(json_file(output, estimate.saved_dict),
                        figure_file(plot, lambda path: figure(estimate, path)))
    if json_output:
        print_json(estimate.to_dict())
        if written:
            print_written(err_console(), written)
        return
    show(estimate.present(), written)
