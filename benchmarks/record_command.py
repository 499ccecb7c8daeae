"""Recording a command: does ``phasekit record -- CMD`` then ``phasekit analyze`` (the default,
no --metric) find CMD's period, on its own and beside two CPU-bound jobs?

The command is a busy/idle child (0.5 s busy loop, 0.5 s sleep, 8 cycles; each phase ends at
a deadline, so its period is 1.0 s by construction), recorded at 10 ms exactly as a user runs
it: ``phasekit record --interval 10ms -o FILE -- python CHILD`` (the default scope: the node
and the command's own process tree, ``cmd_...`` metrics), then ``phasekit analyze FILE
--json``. "Loaded": two ``python -c "while True: pass"`` processes run beside it on this
2-core machine (started before the recording, killed after). A run counts as found when the
first pattern's period is within 2 % of 1.0 s and the analysis covers >= 90 % of the run.

For comparison, each recording is analyzed again as the previous default would have seen it:
its node-wide metrics only (what ``--scope node``, the previous default, records), with the
default choice (``analyze(profile)``). The table also counts the recordings in which the
sampler missed more than ``MAX_GAP`` (3) ticks in a row, a gap at which the analysis splits
the profile (tests/test_record_command.py records such a run again), and the runs found
among the others.

Run: ``python benchmarks/record_command.py [--reps N] [--quick] [--results FILE]``
(``--quick``: one repetition of each, nothing written unless ``--results``). The section is
appended at the end of RESULTS.md the first time, replaced in place after.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

import _common
from phasekit.io import read_profile
from phasekit.periodicity import analyze
from phasekit.periodicity.analyze import MAX_GAP

SECTION = "record_command"
TITLE = "## Recording a command: the command's own metrics (benchmarks/record_command.py)"
REPS = 10
PERIOD_S = 1.0
PERIOD_TOLERANCE = 0.02
MIN_COVERAGE = 0.90
INTERVAL = "10ms"
CHILD = Path(__file__).resolve().parent / "programs" / "busy_idle.py"
HOG = "while True: pass"
CONDITIONS = {"alone": 0, "beside two CPU-bound jobs": 2}


@contextlib.contextmanager
def cpu_hogs(n: int) -> Iterator[None]:
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(n)]
    try:
        time.sleep(0.3)
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait(timeout=10)


def phasekit(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", *args], capture_output=True,
                          text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise SystemExit(f"phasekit {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done


def found(period: float | None, coverage: float) -> bool:
    return (period is not None and abs(period - PERIOD_S) <= PERIOD_TOLERANCE * PERIOD_S
            and coverage >= MIN_COVERAGE)


def longest_gap(values: np.ndarray) -> int:
    """The longest run of rows without any value (ticks the sampler missed)."""
    missing = np.isnan(values).all(axis=1)
    edges = np.diff(np.concatenate([[0], missing.astype(np.int8), [0]]))
    return int(max((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).tolist(),
                   default=0))


def one_run(directory: Path, hogs: int) -> dict:
    """Record the child (beside ``hogs`` CPU-bound jobs), analyze it with the default, and
    analyze its node-wide metrics as the previous default did."""
    output = directory / "busy.parquet"
    output.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    with cpu_hogs(hogs):
        recorded = phasekit("record", "--interval", INTERVAL, "-o", str(output), "--json", "--",
                            sys.executable, str(CHILD))
    summary = json.loads(recorded.stdout)
    result = json.loads(phasekit("analyze", str(output), "--json").stdout)
    period = result["patterns"][0]["period_s"] if result["patterns"] else None
    profile = read_profile(output)
    own = set(profile.meta["recording"]["command_metrics"])
    node = profile.select([m for m in profile.metrics if m not in own])
    node = node.replace(meta={k: v for k, v in node.meta.items() if k != "recording"})
    before = analyze(node)
    before_period = before.patterns[0].period_s if before.patterns else None
    return {"load": load, "missed": summary["missed_ticks"],
            "gap": longest_gap(profile.values),
            "jitter_p99_ms": summary["jitter_s"]["p99"] * 1e3,
            "metric": result["params"]["metric_choice"]["metric"], "period": period,
            "coverage": result["coverage"], "found": found(period, result["coverage"]),
            "before_metric": before.metrics[0], "before_period": before_period,
            "before_coverage": before.coverage,
            "before_found": found(before_period, before.coverage)}


def summary_row(condition: str, rule: str, runs: list[dict], prefix: str = "") -> list[str]:
    periods = [r[f"{prefix}period"] for r in runs if r[f"{prefix}period"] is not None]
    covers = [r[f"{prefix}coverage"] for r in runs]
    chosen = ", ".join(f"{m} x{sum(r[f'{prefix}metric'] == m for r in runs)}"
                       for m in dict.fromkeys(r[f"{prefix}metric"] for r in runs))
    whole = [r for r in runs if r["gap"] <= MAX_GAP]
    return [condition, rule, f"{sum(r[f'{prefix}found'] for r in runs)}/{len(runs)}",
            f"{len(runs) - len(whole)}", f"{sum(r[f'{prefix}found'] for r in whole)}/{len(whole)}",
            f"{statistics.median(periods):.4g}" if periods else "none",
            f"{statistics.median(covers):.1%}", f"{min(covers):.1%}", chosen]


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="one repetition of each condition")
    parser.add_argument("--reps", type=int, default=REPS, help=f"repetitions (default {REPS})")
    args = parser.parse_args(argv)
    bench = _common.Run()
    reps = 1 if args.quick else args.reps
    runs: dict[str, list[dict]] = {c: [] for c in CONDITIONS}
    with tempfile.TemporaryDirectory(prefix="phasekit-record-command-") as scratch:
        for rep in range(reps):
            for condition, hogs in CONDITIONS.items():  # interleaved: the same drift for both
                run = one_run(Path(scratch), hogs)
                runs[condition].append(run)
                print(f"  rep {rep} {condition:26s} load {run['load']:.2f}, missed "
                      f"{run['missed']} (longest gap {run['gap']}): {run['metric']} period "
                      f"{run['period']} coverage "
                      f"{run['coverage']:.1%}; node metrics only: {run['before_metric']} "
                      f"{run['before_period']} {run['before_coverage']:.1%}",
                      file=sys.stderr, flush=True)
    header = ["child", "analysis", "found (1.0 s within 2 %, coverage >= 90 %)",
              f"recordings with a gap > {MAX_GAP} ticks", "found in the others",
              "median period (s)", "median coverage", "lowest coverage", "metric chosen"]
    rows = []
    for condition, done in runs.items():
        rows.append(summary_row(condition, "default (`phasekit analyze FILE`)", done))
        rows.append(summary_row(condition, "node metrics only (previous default)", done,
                                "before_"))
    loads = [r["load"] for done in runs.values() for r in done]
    missed = {c: statistics.median(r["missed"] for r in done) for c, done in runs.items()}
    jitter = {c: statistics.median(r["jitter_p99_ms"] for r in done)
              for c, done in runs.items()}
    print(_common.text_table(header, rows))
    command = "python benchmarks/record_command.py" + (f" --reps {reps}" if reps != REPS else "")
    body = "\n".join([
        TITLE, "",
        *_common.machine_lines(bench),
        f"- Command: `{command}` ({bench.elapsed() / 60:.1f} min). Each repetition: "
        "`phasekit record --interval 10ms -o busy.parquet -- python busy_idle.py` (0.5 s busy "
        "loop, 0.5 s sleep, 8 cycles, deadlines: a 1.0 s period by construction), alone and "
        "beside two `python -c \"while True: pass\"` jobs on this 2-core VM, then `phasekit "
        f"analyze busy.parquet --json`; {reps} repetition(s) of each, interleaved. The previous "
        "default is the same recording's node-wide metrics (what `--scope node` records) with "
        "the default choice.",
        f"- Load average (1 min) before the recordings: {min(loads):.2f} to {max(loads):.2f} "
        "(other jobs share this machine). Median missed ticks per recording: "
        + ", ".join(f"{c} {v:g}" for c, v in missed.items()) + "; median sample jitter p99: "
        + ", ".join(f"{c} {v:.1f} ms" for c, v in jitter.items()) + ".",
        "",
        _common.markdown_table(header, rows, "llrrrrrrl"),
    ])
    target = args.results or (None if args.quick else _common.RESULTS)
    if target is not None:
        publish(body, target)
    return 0


def publish(body: str, path: Path) -> None:
    """The section replaced in place when ``path`` has it, else appended at its end in one
    write (other scripts may append to the same file meanwhile)."""
    start, end = f"<!-- {SECTION}:start -->", f"<!-- {SECTION}:end -->"
    if path.exists() and start in path.read_text(encoding="utf-8"):
        _common.write_section(SECTION, body, path)
    else:
        block = f"\n{start}\n{body.rstrip()}\n{end}\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, block.encode("utf-8"))
        finally:
            os.close(fd)
    print(f"\nwrote the {SECTION} section of {path}")


if __name__ == "__main__":
    sys.exit(main())
