"""``phasekit record``: profile a command (or the node) into a crash-safe profile file."""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import err_console, parse_duration, print_json
from phasekit.errors import UsageError

EPILOG = """\
Example:

\b
    phasekit record -o run.parquet -- ./app input.dat
    phasekit record --interval 10ms --metric cmd_task_clock --metric cmd_rss_bytes -- make
    phasekit record --duration 60s --scope node -o node.parquet
    phasekit record --sensor 'power=ipmitool dcmi power reading | awk "/Instant/ {print \\$4}"' -- ./app
    phasekit analyze run.parquet --metric cmd_task_clock
"""


def record(
    command: Annotated[list[str] | None, typer.Argument(
        metavar="[-- COMMAND [ARGS]...]", show_default=False,
        help="The command to run and measure; the recording ends when it exits.")] = None,
    interval: Annotated[str, typer.Option(
        "--interval", "-i", metavar="DURATION",
        help="Sampling interval (5ms, 0.1s, ...; at least 1ms).")] = "5ms",
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", metavar="NAME",
        help="A metric to record; repeat (or give a comma-separated list). Default: all that "
             "the sources here provide; see 'phasekit sources'.")] = None,
    metrics: Annotated[str | None, typer.Option(
        "--metrics", metavar="LIST", hidden=True, help="The old name of --metric.")] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE",
        help="Profile to write: .parquet, .csv or .arrows (default: "
             "phasekit-record-DATE-TIME.parquet).", show_default=False)] = None,
    duration: Annotated[str | None, typer.Option(
        "--duration", "-d", metavar="DURATION",
        help="Record for this long (without a command: the node; with one: stop it after "
             "this long).")] = None,
    scope: Annotated[str | None, typer.Option(
        "--scope", metavar="both|node|process",
        help="both (the default with a command): the node and, beside it, the command's own "
             "process tree as cmd_... metrics; node: every process on the node, nothing of "
             "the command's own (the default without a command); process: the perf counters "
             "on the command's process tree under their plain names (task_clock), /proc "
             "totals and RAPL still node-wide.",
        show_default=False)] = None,
    sources: Annotated[str | None, typer.Option(
        "--sources", metavar="LIST",
        help="Comma-separated sources to use (perf-hw, perf-sw, proc, rapl; default: every "
             "one that works here). With --scope both, perf-sw and proc also measure the "
             "command's own process tree.")] = None,
    sensor: Annotated[list[str] | None, typer.Option(
        "--sensor", metavar="NAME=COMMAND",
        help="An external command printing a number (an IPMI or GPU power reader), recorded "
             "as metric NAME; repeatable.")] = None,
    sensor_interval: Annotated[str, typer.Option(
        "--sensor-interval", metavar="DURATION",
        help="How often the --sensor commands run.")] = "1s",
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the recording's summary as JSON on stdout when done (the "
                       "command's own standard output then goes to standard error).")] = False,
) -> int:
    """Record a profile while COMMAND runs, then exit with COMMAND's exit code.

    With a command, the recording holds the node's metrics and the command's own (its
    process tree: CPU time, time runnable, context switches, page faults, I/O bytes,
    resident memory), named cmd_...; 'phasekit analyze' looks at the command's first.
    Samples every source at a fixed interval against the monotonic clock and streams the
    samples to OUTPUT.partial.arrows in chunks (one a second), so a recording killed even
    with SIGKILL keeps all but its last second; on a normal end, SIGINT or SIGTERM the file
    is finalized into OUTPUT. Counters are stored per interval, energy as power (W). A full
    disk stops the recording, not the command: the chunks written are kept, one line says
    where, and the exit code is still the command's.
    """
    from phasekit.record.api import record as run_recorder

    step = parse_duration(interval, "--interval")
    span = None if duration is None else parse_duration(duration, "--duration")
    period = parse_duration(sensor_interval, "--sensor-interval")
    listed = [*(metric or ()), *(() if metrics is None else (metrics,))]  # --metrics: old name
    wanted = _split(",".join(listed), "--metric") if listed else None
    if output is None:
        output = Path(f"phasekit-record-{_dt.datetime.now():%Y%m%d-%H%M%S}.parquet")
    names = _split(sources, "--sources")
    sensors = []
    for text in sensor or []:
        name, sep, program = text.partition("=")
        if not sep or not name.strip() or not program.strip():
            raise UsageError(f"--sensor {text!r}: expected NAME=COMMAND")
        sensors.append((name.strip(), program.strip()))
    console = err_console()
    live = sys.stderr.isatty() and not json_output

    def status(elapsed: float, n_samples: int) -> None:
        if live:
            sys.stderr.write(f"\rphasekit: recording {elapsed:8.1f} s, {n_samples} samples"
                             f" -> {output}\x1b[K")
            sys.stderr.flush()

    try:
        # with --json, stdout holds only the summary: the command's output goes to stderr
        summary = run_recorder(command, output=output, interval=step, duration=span,
                               metrics=wanted, sources=names, scope=scope, sensors=sensors,
                               sensor_interval=period, status=status,
                               command_stdout=2 if json_output else None)
    finally:
        if live:
            sys.stderr.write("\r\x1b[K")
    if json_output:
        print_json(summary.to_dict())
    else:
        dropped = "".join(f"; {name} dropped mid-run: {why}"
                          for name, why in summary.dropped.items())
        own = (f" ({len(summary.command_metrics)} of the command's own)"
               if summary.command_metrics else "")
        console.print(
            f"phasekit: wrote {summary.output}: {summary.n_samples} samples of "
            f"{len(summary.metrics)} metrics{own} every {summary.interval * 1e3:g} ms "
            f"({summary.duration:.1f} s; achieved {summary.achieved_interval * 1e3:.3f} ms, "
            f"jitter p99 {summary.jitter_p99 * 1e3:.2f} ms, {summary.missed_ticks} missed); "
            f"stopped: {summary.stopped_by}{dropped}", soft_wrap=True)
    return summary.exit_code or 0


def _split(text: str | None, option: str) -> list[str] | None:
    if text is None:
        return None
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise UsageError(f"{option} {text!r}: expected a comma-separated list of names")
    return names
