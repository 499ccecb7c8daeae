"""``phasekit demo``: record a real run on this machine and find its periodicity.

By default the demo records the built-in iterative workload (:mod:`phasekit.record.workload`:
a main loop of compute-bound, memory-bound and I/O steps paced to a known period, with a
periodic checkpoint) with every source that works here, then analyzes the recording. With
``--synthetic`` it analyzes the generated HPCG-like profile and compares with its ground truth
instead (what the demo did before recording existed).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from phasekit.cli.common import (
    Output,
    figure_file,
    json_file,
    out_console,
    print_json,
    progress_reporter,
    write_all,
)
from phasekit.cli.render import show
from phasekit.errors import UnsupportedError, UsageError

if TYPE_CHECKING:
    from phasekit import Profile
    from phasekit.periodicity.analyze import PeriodicityResult

EPILOG = """\
Example:

\b
    phasekit demo
    phasekit demo --iterations 80 --output-dir /tmp/demo
    phasekit demo --synthetic
"""

#: The workload's iteration period in the demo (seconds) and the sampling interval.
DEMO_PERIOD = 0.4
DEMO_INTERVAL = 0.01
#: Iterations between two of the workload's checkpoints.
DEMO_CHECKPOINT_EVERY = 10
#: A period within this share of the iteration's is the iteration found.
ITERATION_TOLERANCE = 0.05


def demo(
    output_dir: Annotated[Path, typer.Option(
        "--output-dir", "-d", metavar="DIR", help="Where to write the demo's files.")
    ] = Path("phasekit-demo"),
    iterations: Annotated[int, typer.Option(
        "--iterations", "-n", min=8, help="Iterations of the recorded workload "
        f"({DEMO_PERIOD:g} s each, plus a checkpoint every {DEMO_CHECKPOINT_EVERY}).")] = 40,
    synthetic: Annotated[bool, typer.Option(
        "--synthetic", help="Analyze the generated HPCG-like profile (with its ground truth) "
                            "instead of recording a run.")] = False,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the comparison and the files written as JSON.")] = False,
) -> None:
    """Record a built-in iterative workload on this machine and find its periodicity.

    Runs the workload (compute, memory and I/O steps paced to 0.4 s per iteration, a
    checkpoint every 10 iterations) under 'phasekit record' with every source that works here,
    writes DIR/recording.parquet, analyzes it, prints the Table-II summary and how it compares
    with the known period, and writes DIR/result.json, the figure DIR/analysis.png and the
    HTML report DIR/report.html (printed last).
    With --synthetic: the 10-minute HPCG-like profile and its ground truth instead.
    """
    if output_dir.exists() and not output_dir.is_dir():
        raise UsageError(f"--output-dir {output_dir}: exists and is not a directory")
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--output-dir {output_dir}: cannot create it ({exc.strerror})") from None
    if synthetic:
        _synthetic_demo(output_dir, json_output)
    else:
        _recorded_demo(output_dir, iterations, json_output)


def _analyze(profile: Profile, name: str, quiet: bool) -> PeriodicityResult:
    """``phasekit analyze``'s default analysis of ``profile`` (the metric it chooses)."""
    from phasekit.periodicity.api import periodicity

    with progress_reporter(not quiet, f"analyzing {name}") as progress:
        return periodicity(profile, progress=progress)


def _write_files(output_dir: Path, profile: Profile, result: PeriodicityResult,
                 comparison: dict[str, Any], what: str) -> dict[str, str]:
    """Write DIR/result.json, the figure DIR/analysis.png and DIR/report.html (the result
    and the comparison) together (:func:`write_all`); returns their paths, the report last
    (the demo ends by printing it)."""
    from phasekit.periodicity.api import figure
    from phasekit.report.api import ReportItem, write_report

    files = {"result": output_dir / "result.json", "figure": output_dir / "analysis.png",
             "report": output_dir / "report.html"}
    items = [ReportItem(str(files["result"]), result.saved_dict()),
             ReportItem("phasekit demo", {"kind": "demo_comparison", "version": 1,
                                          **comparison})]
    write_all(json_file(files["result"], result.saved_dict),
              figure_file(files["figure"], lambda path: figure(profile, result, path)),
              Output("report", files["report"], lambda path: write_report(
                  path, items, title=f"phasekit demo: {what}")))
    return {name: str(path) for name, path in files.items()}


def _recorded_demo(output_dir: Path, iterations: int, json_output: bool) -> None:
    from phasekit import read
    from phasekit.record.api import available_sources, record

    recording = output_dir / "recording.parquet"
    sources = available_sources()
    if not sources:
        raise UnsupportedError("no recording source works on this machine (see 'phasekit "
                               "sources'); try 'phasekit demo --synthetic'")
    command = [sys.executable, "-m", "phasekit.record.workload", "--iterations",
               str(iterations), "--period", str(DEMO_PERIOD), "--checkpoint-every",
               str(DEMO_CHECKPOINT_EVERY), "--dir", str(output_dir)]
    console = out_console()
    if not json_output:
        console.print(f"recording the built-in workload ({iterations} iterations of "
                      f"{DEMO_PERIOD:g} s) every {DEMO_INTERVAL * 1e3:g} ms with "
                      f"{', '.join(sources)} ...", soft_wrap=True)
    live = sys.stderr.isatty() and not json_output

    def status(elapsed: float, n_samples: int) -> None:
        if live:
            sys.stderr.write(f"\rphasekit: recording {elapsed:5.1f} s of about "
                             f"{iterations * DEMO_PERIOD * 1.08:.0f} s, {n_samples} samples"
                             "\x1b[K")
            sys.stderr.flush()

    try:
        summary = record(command, output=recording, interval=DEMO_INTERVAL, sources=sources,
                         scope="process", status=status)
    finally:
        if live:
            sys.stderr.write("\r\x1b[K")
    if summary.stopped_by != "command exited":
        raise KeyboardInterrupt  # stopped by a signal: 'phasekit: interrupted', exit 130
    if summary.exit_code:
        raise UnsupportedError(f"the demo workload failed with exit code {summary.exit_code}")
    profile = read(recording)
    # the default choice, as a user's 'phasekit analyze' makes it: IPC where hardware
    # counters were recorded, else the most periodic metric (phasekit.periodicity.strength)
    result = _analyze(profile, recording.name, json_output)
    metrics = list(result.metrics)
    found = result.patterns[0].period_s if result.patterns else None
    comparison: dict[str, Any] = {
        "expected_period_s": DEMO_PERIOD, "found_period_s": found,
        "iteration_scale_s": _iterations(result),
        "period_error": None if found is None else _period_error(found),
        "coverage": result.coverage, "metrics": metrics,
        "metric_choice": result.params.get("metric_choice", {}),
        "recording": {k: v for k, v in summary.to_dict().items() if k != "output"},
    }
    files = {"recording": str(recording), **_write_files(
        output_dir, profile, result, comparison, "the built-in workload recorded on this machine")}
    if json_output:
        print_json({"comparison": comparison, "files": files})
        return
    show(result.present(recording.name))
    console.print(f"vs the workload's known iteration period {DEMO_PERIOD:g} s: "
                  f"{_verdict(result)}; "
                  f"recording: {summary.n_samples} samples, jitter p99 "
                  f"{summary.jitter_p99 * 1e3:.2f} ms, sources {', '.join(summary.sources)}",
                  soft_wrap=True)
    if "ipc" not in metrics:
        console.print("(no hardware counters here: the analysis used the most periodic of the "
                      "recorded metrics; on a machine with counters it uses IPC)", soft_wrap=True)
    for what, path in files.items():
        console.print(f"wrote {what}: {path}", soft_wrap=True)


def _period_error(period_s: float) -> float:
    """How far ``period_s`` is from the workload's iteration, as a share of it."""
    return abs(period_s - DEMO_PERIOD) / DEMO_PERIOD


def _iterations(result: PeriodicityResult) -> float | None:
    """The period (s) of the scale within 5 % of the workload's iteration, if one is."""
    return next((s.period_s for s in result.scales
                 if _period_error(s.period_s) <= ITERATION_TOLERANCE), None)


def _verdict(result: PeriodicityResult) -> str:
    """The period found against the workload's; when a cycle longer than the iterations
    leads (one covering the checkpoints, when it covers more of the run than they do), the
    iterations inside it."""
    if not result.patterns:
        return "no periodicity found"
    found = result.patterns[0].period_s
    error = _period_error(found)
    iterations = _iterations(result)
    if error <= ITERATION_TOLERANCE or iterations is None or found < 1.5 * iterations:
        return f"found {found:.4g} s ({100 * error:.1f}% off)"
    return (f"found {found:.4g} s, a cycle as long as {found / iterations:.3g} iterations "
            f"(the workload checkpoints after every {DEMO_CHECKPOINT_EVERY}th); the iterations "
            f"repeat inside it every {iterations:.4g} s "
            f"({100 * _period_error(iterations):.1f}% off)")


def _synthetic_demo(output_dir: Path, json_output: bool) -> None:
    from phasekit.io.api import write_profile
    from phasekit.metrics.api import periodicity_scores
    from phasekit.synth.api import generate, write_truth

    profile_file = output_dir / "profile.parquet"
    profile, truth = generate("hpcg", minutes=10.0, seed=0)
    write_profile(profile, profile_file)
    truth_file = write_truth(truth, profile_file)
    result = _analyze(profile, profile_file.name, json_output)
    scores = periodicity_scores(result, truth)
    files = {"profile": str(profile_file), "truth": str(truth_file), **_write_files(
        output_dir, profile, result, dict(scores),
        "a generated HPCG-like profile against its ground truth")}
    if json_output:
        print_json({"comparison": scores, "files": files})
        return
    show(result.present(profile_file.name))
    console = out_console()
    console.print(
        f"vs ground truth: coverage {100 * scores['coverage']:.1f}% (true "
        f"{100 * scores['true_coverage']:.1f}%), patterns {scores['patterns']} (true "
        f"{scores['true_patterns']}), adjusted Rand index {scores['ari']:.3f}", soft_wrap=True)
    for what, path in files.items():
        console.print(f"wrote {what}: {path}", soft_wrap=True)
