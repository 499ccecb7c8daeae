"""``phasekit signature``: application signatures (Salinas Hilburg 2020, ch. 2 and 4): build, run.

``build`` compiles a C program, extracts its call graph (Doxygen), writes one executable per
independent path and counts their instructions (callgrind, or perf where hardware counters
exist). ``run`` runs the executables partially in parallel and estimates the program's time
and energy; ``--compare`` also runs the whole program, measured the same way.
"""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from phasekit.cli.common import (
    check_outputs,
    err_console,
    figure_file,
    json_file,
    out_console,
    parse_duration,
    print_json,
    print_written,
    progress_reporter,
    sub_app,
    write_all,
)
from phasekit.errors import InputError, UsageError

if TYPE_CHECKING:
    from phasekit.signature.paths import Signature
    from phasekit.signature.reconstruct import SignatureEstimate

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
    from phasekit.signature.paths import KERNELS, kernel_source

    path = Path(program)
    if program in KERNELS and not path.exists():
        args, steps_arg = KERNELS[program]
        return kernel_source(program), args, steps_arg
    if not path.exists():
        raise UsageError(f"{program}: no such file (or bundled kernel: "
                         f"{', '.join(KERNELS)})")
    if path.is_dir():
        raise UsageError(f"{program}: is a directory; expected a C file")
    return path, None, None


def _fmt(value: float, spec: str = ".4g") -> str:
    return "-" if value is None or not math.isfinite(value) else format(value, spec)


def _units_table(signature: Signature) -> Table:
    table = Table(title=f"Signature of {signature.program} "
                        f"{shlex.join(signature.args)}".rstrip(),
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("executable", "kind", "minus", "instructions", "status"):
        table.add_column(column, justify="right" if column == "instructions" else "left",
                         overflow="fold")
    for unit in signature.units:
        if unit.kind == "path":
            count = signature.path_instructions(unit)
        else:
            count = unit.count.at_args if unit.count is not None else math.nan
        minus = signature.unit(unit.reference).label if unit.reference else ""
        status = "ok" if unit.ok else f"failed: {unit.reason}"
        table.add_row(unit.label, unit.kind, minus, _fmt(count, ".4g"), status)
    return table


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
    from phasekit.signature.paths import build_signature, check_signature_directory

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
    check_signature_directory(directory)  # built in a sibling, renamed at the end
    with progress_reporter(not json_output, f"signature of {source.name}") as progress:
        signature = build_signature(
            source, directory, args=arguments, cflags=shlex.split(cflags),
            ldflags=shlex.split(ldflags), cc=cc, steps_arg=steps_arg, probe_steps=probes,
            counter=counter, count_program=count_program, progress=progress)
    if json_output:
        print_json(signature.to_dict())
        return
    out = out_console()
    out.print(_units_table(signature))
    total = signature.instructions_estimate
    line = f"instructions: {total:.4g} estimated ({signature.counter}"
    if signature.steps_arg is not None:
        line += f", extrapolated from trip counts {probe_steps} to {signature.steps}"
    line += ")"
    if math.isfinite(signature.instructions_program):
        line += (f"; the program: {signature.instructions_program:.4g} (error "
                 f"{signature.instruction_error:.2f} %, eq. 4.13)")
    out.print(line, soft_wrap=True)
    out.print(f"call graph: {signature.graph.tool}; {len(signature.paths)} independent "
              f"path(s); built in {signature.build_time_s:.1f} s", soft_wrap=True)
    for note in (*signature.graph.notes, *signature.notes):
        out.print(f"note: {note}", soft_wrap=True)
    out.print(f"wrote signature: {directory}", soft_wrap=True)


def _estimate_tables(estimate: SignatureEstimate) -> list[Table]:
    segments = Table(title=f"Estimate of {estimate.program} {shlex.join(estimate.args)} "
                           f"({estimate.mode} counters, p = {estimate.p:g} %, s = "
                           f"{estimate.s})", title_justify="left", box=box.SIMPLE_HEAD,
                     pad_edge=False)
    hardware = estimate.mode in ("hardware", "simulated")
    columns = ["segment", "instr.", "ns/instr", *(["IPC"] if hardware else []), "T' (s)",
               "busy", "P^ (W)", "E^ (J)"]
    for column in columns:
        if column == "segment":
            segments.add_column(column, overflow="fold", min_width=22, ratio=1)
        else:
            segments.add_column(column, justify="right", no_wrap=True)
    for seg in estimate.segments:
        segments.add_row(seg.label, _fmt(seg.instructions, ".3g"),
                         _fmt(seg.tpi_s * 1e9, ".3f"),
                         *([_fmt(seg.ipc, ".2f")] if hardware else []),
                         _fmt(seg.time_s, ".4f"),
                         _fmt(seg.counters.get("task_clock", math.nan), ".2f"),
                         _fmt(seg.power_w, ".2f"), _fmt(seg.energy_j, ".3f"))
    totals = Table(title="Totals", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("", "time (s)", "energy (J)", "instructions"):
        totals.add_column(column, justify="left" if not column else "right")
    label = "estimate" + ("" if estimate.complete else " (incomplete)")
    totals.add_row(label, _fmt(estimate.time_s, ".4f"), _fmt(estimate.energy_j, ".3f"),
                   _fmt(estimate.instructions, ".4g"))
    if estimate.compared:
        totals.add_row("program (measured)", _fmt(estimate.program_time_s, ".4f"),
                       _fmt(estimate.program_energy_j, ".3f"),
                       _fmt(estimate.program_instructions, ".4g"))
        totals.add_row("error (%)", _fmt(estimate.time_error, ".1f"),
                       _fmt(estimate.energy_error, ".1f"),
                       _fmt(estimate.instruction_error, ".2f"))
        if math.isfinite(estimate.program_meter_energy_j):
            totals.add_row("program (meter)", "", _fmt(estimate.program_meter_energy_j, ".3f"),
                           "")
    return [segments, totals]


def _draw(estimate: SignatureEstimate, path: Path) -> None:
    """``--plot``: the estimate's figure (:meth:`SignatureEstimate.plot`) written to ``path``."""
    from phasekit.plot.common import save

    save(estimate.plot(), path)


def _load_model(path: Path | None) -> Any:
    if path is None:
        return None
    from phasekit.io.inputs import input_file
    from phasekit.signature.reconstruct import load_power_model

    if path.exists():
        input_file(path, "a power model (JSON)")  # a FIFO: refused, not waited on
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--power-model {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", path=str(path), line=exc.lineno) from None
    if isinstance(data, dict) and isinstance(data.get("model"), dict):
        data = data["model"]  # a fit result holding the model
    return load_power_model(data, str(path))


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
    from phasekit.signature.paths import load_signature
    from phasekit.signature.reconstruct import run_signature

    check_outputs(output, plot)
    sm = parse_duration(interval, "--interval")
    limit = parse_duration(timeout, "--timeout") if timeout else None
    model = _load_model(power_model)
    signature = load_signature(signature_path)
    with progress_reporter(not json_output, f"signature of {signature.program}") as progress:
        estimate = run_signature(signature, p=p, s=s, interval=sm, power_model=model,
                                 compare=compare, cores=cores, mode=mode, timeout=limit,
                                 repeats=repeats, progress=progress)
    written = write_all(json_file(output, estimate.saved_dict),
                        figure_file(plot, lambda path: _draw(estimate, path)))
    if json_output:
        print_json(estimate.to_dict())
        if written:
            print_written(err_console(), written)
        return
    out = out_console()
    for table in _estimate_tables(estimate):
        out.print(table)
    ratios = (f"compression: CR = {_fmt(estimate.cr, '.1f')} (eq. 2.1, T_app / sum of "
              f"partial times {estimate.t_sig_s:.3f} s), {_fmt(estimate.cr_parallel, '.1f')} "
              f"in parallel ({estimate.t_sig_parallel_s:.3f} s), CR_fr = "
              f"{_fmt(estimate.cr_framework, '.2f')} with the build (eq. 4.14)")
    if not estimate.compared:
        ratios += "; T_app is the estimate (run with --compare to measure it)"
    out.print(ratios, soft_wrap=True)
    steps = sorted({k for seg in estimate.segments for k in seg.run_steps if k is not None})
    if steps:
        out.print("partial runs: " + " and ".join(map(str, steps)) + " step(s) each; busy: "
                  "task_clock (cores)", soft_wrap=True)
    stable = [seg.label for seg in estimate.segments if seg.stable]
    stops = [f"{seg.label} ({seg.stopped_by})" for seg in estimate.segments
             if seg.stopped_by not in ("end",)]
    out.print("stable counter window (criterion 2): " + (", ".join(stable) or "none")
              + (("; stopped early: " + ", ".join(stops)) if stops else ""), soft_wrap=True)
    out.print(f"power model: {estimate.power_model_description}", soft_wrap=True)
    out.print(f"sources: {', '.join(estimate.sources) or '-'}; sampling every "
              f"{estimate.interval_s * 1e3:g} ms", soft_wrap=True)
    for item in estimate.unmeasured:
        out.print(f"not measured here: {item}", soft_wrap=True)
    for note in estimate.notes:
        out.print(f"note: {note}", soft_wrap=True)
    print_written(out, written)
