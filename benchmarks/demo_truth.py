"""The demo's answer against its own truth: every iteration found, one pattern, and how much
of the run the iterations themselves fill.

Each run records the demo's workload as ``phasekit demo`` does (``phasekit record -o FILE --
python -m phasekit.record.workload --iterations 40 --period 0.4``: a checkpoint after every
10th iteration) with ``--log``, so the workload writes each iteration's start and end
(wall-clock) and the recording's ``start_utc`` places them on the profile's samples. The
recording is analyzed with the defaults (``pk.periodicity(profile)``), then:

- iterations found: true iterations whose middle sample lies in an instance of the dominant
  pattern (of 40);
- iteration time covered (recall): share of the samples inside a true iteration that some
  instance covers;
- outside iterations: share of the covered samples that are not in an iteration (the start-up
  of the interpreter, the checkpoints, the tail);
- run covered: the share of the run's samples some instance covers, and its ceiling: the
  share of the run's samples inside an iteration, what a perfect answer covers (the rest is
  the interpreter's start-up and the checkpoints, which are not periodic);
- coverage: the share of the analyzed metric's valid samples covered, as ``analyze`` prints
  it (a metric with missing samples has fewer valid samples than the run).

Run: ``python benchmarks/demo_truth.py [--quick] [--runs N] [--results FILE]``
(``--quick``: one run).
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import _common
import phasekit as pk

SECTION = "demo_truth"
TITLE = "## The demo against its truth (`benchmarks/demo_truth.py`)"
ITERATIONS = 40
PERIOD_S = 0.4
SAME_PERIOD = 0.05


def record(folder: Path, run: int) -> tuple[Path, Path]:
    output, log = folder / f"demo{run}.parquet", folder / f"demo{run}.json"
    command = [sys.executable, "-m", "phasekit.cli", "record", "-o", str(output), "--",
               sys.executable, "-m", "phasekit.record.workload", "--iterations",
               str(ITERATIONS), "--period", str(PERIOD_S), "--dir", str(folder),
               "--log", str(log)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"recording failed: {done.stderr[-2000:]}")
    return output, log


def iteration_mask(profile: pk.Profile, log: Path) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Samples whose interval starts inside a true iteration, and each iteration's sample
    range [first, last)."""
    start = dt.datetime.fromisoformat(profile.meta["recording"]["start_utc"]).timestamp()
    times = start + profile.times()
    mask = np.zeros(times.size, dtype=bool)
    spans = []
    for begin, end in json.loads(log.read_text())["iterations"]:
        first, last = np.searchsorted(times, [begin, end])
        mask[first:last] = True
        spans.append((int(first), int(last)))
    return mask, spans


def evaluate(profile_path: Path, log: Path) -> dict:
    profile = pk.read(profile_path)
    result = pk.periodicity(profile)
    truth, spans = iteration_mask(profile, log)
    covered = np.zeros(profile.n_samples, dtype=bool)
    dominant = np.zeros(profile.n_samples, dtype=bool)
    for index, pattern in enumerate(result.patterns):
        for start, length in zip(pattern.starts, pattern.lengths, strict=True):
            covered[start:start + length] = True
            if index == 0:
                dominant[start:start + length] = True
    found = sum(bool(dominant[(a + b) // 2]) for a, b in spans if b > a)
    periods = [p.period_s for p in result.patterns]
    return {
        "patterns": len(result.patterns),
        "periods": periods,
        "same_period": sum(abs(p - PERIOD_S) <= SAME_PERIOD * PERIOD_S for p in periods),
        "found": found,
        "recall": float(covered[truth].mean()),
        "outside": float((covered & ~truth).sum() / max(covered.sum(), 1)),
        "ceiling": float(truth.mean()),
        "run_covered": float(covered.mean()),
        "coverage": float(result.coverage),
        "metric": result.metrics[0] if result.metrics else "-",
    }


def percent(value: float) -> str:
    return f"{100 * value:.1f} %"


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="one run")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    bench = _common.Run()
    runs = 1 if args.quick else args.runs
    rows = []
    with tempfile.TemporaryDirectory(prefix="demo-truth-") as folder:
        for run in range(runs):
            load = _common.load_average()
            row = evaluate(*record(Path(folder), run))
            row["load"] = load.split(" / ")[0]
            rows.append(row)
            print(f"run {run + 1}: {row['patterns']} pattern(s) "
                  f"{', '.join(f'{p:.4g}' for p in row['periods'])} s; "
                  f"{row['found']}/{ITERATIONS} iterations; recall {percent(row['recall'])}; "
                  f"run covered {percent(row['run_covered'])} of ceiling "
                  f"{percent(row['ceiling'])}; coverage {percent(row['coverage'])}",
                  file=sys.stderr, flush=True)
    header = ("run", "patterns (periods, s)", "iterations found", "iteration time covered",
              "covered outside iterations", "run covered", "ceiling", "coverage", "metric",
              "load 1 min")
    table = [(k + 1, f"{r['patterns']} ({', '.join(f'{p:.4g}' for p in r['periods'])})",
              f"{r['found']}/{ITERATIONS}", percent(r["recall"]), percent(r["outside"]),
              percent(r["run_covered"]), percent(r["ceiling"]), percent(r["coverage"]),
              r["metric"], r["load"])
             for k, r in enumerate(rows)]
    print(_common.text_table(header, table))

    def mean(key: str) -> float:
        return float(np.mean([r[key] for r in rows]))

    one = sum(r["patterns"] == 1 for r in rows)
    every = sum(r["found"] == ITERATIONS for r in rows)
    met = sum(r["coverage"] >= 0.93 for r in rows)
    summary = (f"one pattern in {one} of {len(rows)} runs; every iteration found in {every} of "
               f"{len(rows)}; iteration time covered {percent(mean('recall'))} (mean), "
               f"{percent(mean('outside'))} of the covered samples outside an iteration; "
               f"{percent(mean('run_covered'))} of the run covered against a ceiling of "
               f"{percent(mean('ceiling'))} (the iterations' share of the run); coverage "
               f"(of the valid samples, as printed) {percent(mean('coverage'))}, >= 93 % in "
               f"{met} of {len(rows)}")
    print(summary)
    body = "\n".join([
        TITLE, "",
        *_common.machine_lines(bench),
        f"- Command: `python benchmarks/demo_truth.py --runs {runs}` "
        f"({bench.elapsed() / 60:.1f} min): the demo's workload recorded as `phasekit demo` "
        "does, with `--log` for the truth; `pk.periodicity(profile)` with the defaults. "
        "Ceiling: the share of the run inside a true iteration (the start-up and the "
        "checkpoints are not periodic, so no correct answer covers them). Load: the 1-minute "
        "load average before the run, on 2 cores.",
        f"- **{summary}**.",
        "",
        _common.markdown_table(header, table, "rllllllllr"),
    ])
    _common.publish(SECTION, body, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
