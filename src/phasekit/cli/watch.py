"""``phasekit watch``: phase changes of a recording in progress, as they are detected."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated, Any

import typer

from phasekit.cli.common import PeriodOption, parse_duration
from phasekit.cli.phases import MethodNames
from phasekit.errors import UsageError

EPILOG = """\
Example:

\b
    phasekit record -o run.parquet -- ./app &   # in one terminal
    phasekit watch run.parquet                  # in another: follows run.parquet.partial.arrows
    my-sampler | phasekit watch - --smooth 3    # CSV lines on stdin: a time column, metrics
"""

#: The default threshold of each detector that can follow a stream (``--threshold`` when not
#: given: each one's ``threshold`` in :data:`phasekit.phases.DETECTORS`), in the help. Repeated
#: here because reading the registry imports numba (0.3 s) and ``phasekit --help`` builds this
#: command; the tests check that the two agree.
DEFAULT_THRESHOLDS = {"ev-literal": 0.15, "ev": 3.0}
_DEFAULTS = ", ".join(f"{method} {value:g}" for method, value in DEFAULT_THRESHOLDS.items())


def watch(
    source: Annotated[str, typer.Argument(
        metavar="FILE|-", help="The recorder's output (followed through FILE.partial.arrows "
        "while it records), any profile file (replayed), or - for CSV lines on stdin.")] = "-",
    method: Annotated[str, typer.Option("--method", click_type=MethodNames(online=True))
                      ] = "ev",
    threshold: Annotated[float | None, typer.Option(
        "--threshold", metavar="T", show_default=False,
        help=f"As for 'phasekit phases' ({_DEFAULTS}).")] = None,
    smooth: Annotated[int, typer.Option("--smooth", metavar="N")] = 1,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", metavar="NAME",
        help="A metric of the execution vectors, as for 'phasekit phases'; repeat.")] = None,
    sensor: Annotated[list[str] | None, typer.Option(
        "--sensor", metavar="NAME", hidden=True, help="The old name of --metric.")] = None,
    wait: Annotated[str, typer.Option(
        "--wait", metavar="DURATION",
        help="How long to wait for FILE to appear.")] = "60s",
    poll: Annotated[str, typer.Option(
        "--poll", metavar="DURATION", help="How often to look for new samples in FILE.")
    ] = "100ms",
    idle: Annotated[str, typer.Option(
        "--idle", metavar="DURATION",
        help="Stop (exit code 3) when a recording followed live has had no new samples for "
             "this long and has no end-of-stream marker: its recorder was killed. At least "
             "twice the recording's flush interval; sooner when the recording names its "
             "recorder's process and that process is gone.")] = "30s",
    json_output: Annotated[bool, typer.Option(
        "--json", help="One JSON object per line and per change.")] = False,
    serve: Annotated[str | None, typer.Option(
        "--serve", metavar="[HOST]:PORT", show_default=False,
        help="Also expose the current phase, the time in it, the changes so far and the "
             "period of the last 10 minutes (Phase-TA) as Prometheus metrics at "
             "http://HOST:PORT/metrics (HOST default 127.0.0.1; 0.0.0.0 for every interface).")
    ] = None,
    linger: Annotated[str | None, typer.Option(
        "--linger", metavar="DURATION", show_default=False,
        help="With --serve: keep serving this long after the input ends, for a last scrape.")
    ] = None,
    period: PeriodOption = None,
) -> None:
    """Print each phase change of a recording as it is detected, with its latency.

    The latency is given in the profile's time (the detection comes after the located start
    of the phase by the detector's confirmation delay) and, for a recording followed live,
    in wall-clock time from the end of the sample that revealed the change to its report.
    At the end, prints the phases found.
    """
    from phasekit.live.api import watch as follow

    sensor = [*(metric or ()), *(sensor or ())]  # --sensor: the old name of --metric
    wait_s, poll_s = parse_duration(wait, "--wait"), parse_duration(poll, "--poll")
    idle_s = parse_duration(idle, "--idle")
    # the options against the header, before the first sample (a recording may take long)
    watching = follow(source, method=method, threshold=threshold, smooth=smooth,
                      metrics=sensor, wait=wait_s, poll=poll_s, idle=idle_s, period=period)
    linger_s = parse_duration(linger, "--linger") if linger is not None else 0.0
    if linger is not None and serve is None:
        raise UsageError("--linger applies with --serve")
    if serve is not None:
        url = watching.serve(serve)
        sys.stderr.write(f"phasekit: serving Prometheus metrics at {url}\n")
    try:
        for report in watching:
            if "phases" in report:
                _summarize(report, json_output)
            else:
                _say(report, json_output)
    finally:
        if serve is not None:
            time.sleep(linger_s)
            watching.close()


def _summarize(summary: dict[str, Any], json_output: bool) -> None:
    if json_output:  # one object per line, the summary too
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        sys.stdout.write(f"{summary['phases']} phases; starts (s): "
                         + ", ".join(f"{s:.6g}" for s in summary["starts_s"]) + "\n")


def _say(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(report) + "\n")
    else:
        wall = report.get("wall_latency_s")
        wall_text = "" if wall is None else f", {wall:.3f} s after its sample"
        sys.stdout.write(f"phase {report['phase']} starts at {report['start_s']:.6g} s: "
                         f"detected at {report['detected_at_s']:.6g} s (latency "
                         f"{report['latency_s']:.6g} s of profile{wall_text})\n")
    sys.stdout.flush()
