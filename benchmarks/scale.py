"""How the cost of whole commands grows with their input: `energy fit` with many inputs, and
`analyze` and `phases` on long 5 ms profiles, each answer checked against the generator's
truth at every size.

Every command runs as a fresh process (``phasekit ...``: start-up and imports included), one
at a time; its wall time and peak resident memory (``wait4``'s ``ru_maxrss`` of that process
alone) are recorded, and a command still running after ``--limit`` seconds is stopped and
marked so. The growth exponent is the least-squares slope of log time over log size (rows
for `energy fit`, samples for the profiles) over the sizes that finished.

- `energy fit`: ``realistic_campaign`` (PARSEC-like, 11 frequencies x 17 core counts) with
  5, 27, 107 and 214 inputs (935 to 40 018 rows, one per-input deviation parameter each),
  written as a CSV with times. Checked: the fitted model's mean error against the campaign's
  noiseless energies (the generator's truth). ``--base REV`` runs the same commands with the
  sources of an earlier revision (``git archive``; the checkout is left as it is).
- `analyze` and `phases` (``--profiles``): ``phasekit synth nemo --minutes M`` (one
  periodicity of about 1.1 s over about 77 % of the run). Checked: `analyze`'s period and
  coverage against the truth's instances; `phases` reports how many phases it found.

Run: ``python benchmarks/scale.py [--quick] [--base REV] [--profiles 10,45,120]
[--limit 600]`` (``--quick``: 5 and 27 inputs, no profiles; writes RESULTS.md only with
``--results``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _common
from cli_latency import base_sources

SECTION = "scale"
ROOT = _common.HERE.parent
INPUTS = (5, 27, 107, 214)
QUICK_INPUTS = (5, 27)
PROFILES = "10,45,120,360,720,1440"
TARGET_ANALYZE_S, TARGET_PHASES_S, TARGET_RSS_MIB = 60.0, 60.0, 4096.0
TARGET_FIT_S = 10.0          # 20 009 rows over 107 inputs
TARGET_FIT_INPUTS = 107
#: The command as a user runs it (its sources from PYTHONPATH: this checkout or a base).
PHASEKIT = [shutil.which("phasekit") or "phasekit"]


def measured(argv: list[str], env: dict[str, str], limit: float) -> dict:
    """Wall time (s), peak RSS (MiB), exit code and stdout of one run of ``argv``; stopped
    after ``limit`` seconds (``stopped``)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        stopped = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > limit:
                os.killpg(process.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(process.pid, 0)
                stopped = True
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return {"wall_s": wall, "rss_mib": usage.ru_maxrss / 1024, "code": process.returncode,
            "stopped": stopped, "stdout": text}


def growth(sizes: list[float], times: list[float]) -> float:
    """The least-squares slope of log time over log size (NaN with fewer than 2 points)."""
    if len(sizes) < 2:
        return float("nan")
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def campaign_file(inputs: int, folder: Path) -> tuple[Path, int, np.ndarray]:
    """A PARSEC-like campaign of ``inputs`` inputs as a CSV; its rows and noiseless
    energies."""
    import pandas as pd

    from phasekit.energy.fit import configurations
    from phasekit.synth.campaigns import realistic_campaign

    made = realistic_campaign(inputs=tuple(range(1, inputs + 1)), seed=0)
    configs = configurations(made.campaign)
    path = folder / f"campaign_{inputs}.csv"
    pd.DataFrame({k: configs[k] for k in ("frequency_ghz", "cores", "input", "energy_j",
                                          "time_s")}).to_csv(path, index=False)
    noiseless = {(round(r.frequency_ghz, 9), int(r.cores), float(r.input)): float(e)
                 for r, e in zip(made.campaign.runs, made.energy_j, strict=True)}
    truth = np.array([noiseless[(round(f, 9), int(c), float(n))] for f, c, n in zip(
        configs["frequency_ghz"], configs["cores"], configs["input"], strict=True)])
    return path, len(configs), truth


def truth_error(stdout: str, path: Path, energies: np.ndarray) -> float:
    """The fitted model's mean |predicted / noiseless - 1| over the campaign, percent."""
    import pandas as pd

    from phasekit.energy.fit import EnergyFitResult

    fitted = EnergyFitResult.from_dict(json.loads(stdout)).fitted
    table = pd.read_csv(path)
    predicted = fitted.predict_energy(table["frequency_ghz"].to_numpy(float),
                                      table["cores"].to_numpy(float),
                                      table["input"].to_numpy(float))
    return float(100 * np.mean(np.abs(predicted / energies - 1)))


def energy_rows(folder: Path, sizes: tuple[int, ...], versions: dict[str, dict[str, str]],
                limit: float) -> tuple[list[list[str]], dict[str, tuple[list, list]]]:
    rows, series = [], {label: ([], []) for label in versions}
    for inputs in sizes:
        path, n_rows, energies = campaign_file(inputs, folder)
        for label, env in versions.items():
            got = measured([*PHASEKIT, "energy", "fit", str(path), "--json"], env, limit)
            ok = got["code"] == 0 and not got["stopped"]
            error = truth_error(got["stdout"], path, energies) if ok else float("nan")
            if ok:
                series[label][0].append(n_rows)
                series[label][1].append(got["wall_s"])
            when = (f"stopped at {limit:.0f} s" if got["stopped"]
                    else _common.seconds(got["wall_s"]) if ok else f"exit {got['code']}")
            rows.append([label, f"{n_rows:,}", str(inputs), when, f"{got['rss_mib']:.0f}",
                         f"{error:.2f}" if ok else "-"])
            print(f"energy fit {label}: {inputs} inputs, {n_rows} rows: {when}, "
                  f"{got['rss_mib']:.0f} MiB, truth error {error:.2f} %", flush=True)
    return rows, series


def nemo(folder: Path, minutes: float, env: dict[str, str], period: float = 0.005
         ) -> tuple[Path, dict]:
    """A NEMO-like profile of ``minutes`` at ``period`` seconds, and its truth: samples,
    period and coverage of the instances, and the phases' boundaries (s): the first
    instance's start and the last one's end."""
    path = folder / f"nemo_{minutes:g}_{period:g}.parquet"
    subprocess.run([*PHASEKIT, "synth", "nemo", "--minutes", f"{minutes:g}", "--seed", "1",
                    "--period", f"{period:g}", "-o", str(path)], env=env, check=True,
                   capture_output=True)
    truth = json.loads(path.with_name(path.name + ".truth.json").read_text())
    starts = np.asarray(truth["instances"]["start"], float)
    lengths = np.asarray(truth["instances"]["length"], float)
    dt = float(truth["period"])
    return path, {"samples": int(truth["n_samples"]), "period_s": float(np.mean(lengths)) * dt,
                  "coverage": 100 * float(lengths.sum()) / int(truth["n_samples"]),
                  "bounds_s": [float(starts.min()) * dt, float((starts + lengths).max()) * dt],
                  "duration_s": int(truth["n_samples"]) * dt}


def analyze_answer(data: dict, truth: dict) -> tuple[str, bool]:
    """`analyze`'s period, coverage and patterns against the truth; whether the period is
    within 2 % and the coverage within 2 points with one pattern."""
    first = data["patterns"][0] if data["patterns"] else {}
    period = float(first.get("period_s", float("nan")))
    coverage = 100 * float(data["coverage"])
    ok = (abs(period / truth["period_s"] - 1) <= 0.02 and len(data["patterns"]) == 1
          and abs(coverage - truth["coverage"]) <= 2)
    return (f"period {period:.2f} s (truth {truth['period_s']:.2f}), coverage {coverage:.1f} % "
            f"(truth {truth['coverage']:.1f}), {len(data['patterns'])} pattern(s)"), ok


def phases_answer(data: dict, truth: dict) -> tuple[str, bool]:
    """`phases`' boundaries against the truth's (the periodic part's start and end), F1 with
    a margin of 1 % of the run (as the TSSB evaluation)."""
    from phasekit.metrics.segmentation import f1_score

    found = [p["start_s"] for p in data["phases"][1:]]
    scale = 1000.0   # ms: integer change points
    f1 = f1_score([round(scale * b) for b in truth["bounds_s"]],
                  [round(scale * b) for b in found],
                  margin=round(scale * 0.01 * truth["duration_s"]))[0]
    return (f"{len(data['phases'])} phase(s), boundaries at "
            + ", ".join(f"{b:,.0f}" for b in found)
            + f" s (truth {', '.join(f'{b:,.0f}' for b in truth['bounds_s'])}), F1 {f1:.2f}",
            f1 == 1.0)


def profile_rows(folder: Path, minutes: list[float], env: dict[str, str], limit: float
                 ) -> tuple[list[list[str]], dict[str, tuple[list, list]]]:
    rows, series = [], {"analyze": ([], []), "phases": ([], [])}
    answers = {"analyze": analyze_answer, "phases": phases_answer}
    for m in minutes:
        path, truth = nemo(folder, m, env)
        for verb in ("analyze", "phases"):
            got = measured([*PHASEKIT, verb, str(path), "--json"], env, limit)
            ok = got["code"] == 0 and not got["stopped"]
            answer, right = answers[verb](json.loads(got["stdout"]), truth) if ok else ("-", False)
            if ok:
                series[verb][0].append(truth["samples"])
                series[verb][1].append(got["wall_s"])
            when = (f"stopped at {limit:.0f} s" if got["stopped"]
                    else _common.seconds(got["wall_s"]) if ok else f"exit {got['code']}")
            rows.append([verb, f"{m:g} min", f"{truth['samples']:,}", when,
                         f"{got['rss_mib']:.0f}", "yes" if right else "**no**", answer])
            print(f"{verb} {m:g} min: {when}, {got['rss_mib']:.0f} MiB, {answer}", flush=True)
    return rows, series


def coarse_rows(folder: Path, env: dict[str, str], limit: float) -> list[list[str]]:
    """`analyze` on the same 10-minute run sampled at 5 ms and at 100 ms."""
    rows = []
    for period in (0.005, 0.1):
        path, truth = nemo(folder, 10, env, period)
        got = measured([*PHASEKIT, "analyze", str(path), "--json"], env, limit)
        ok = got["code"] == 0 and not got["stopped"]
        answer, right = (analyze_answer(json.loads(got["stdout"]), truth) if ok
                         else ("-", False))
        rows.append([f"{1000 * period:g} ms", f"{truth['samples']:,}",
                     _common.seconds(got["wall_s"]), "yes" if right else "**no**", answer])
        print(f"analyze 10 min at {period:g} s: {answer}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="5 and 27 inputs, no profiles")
    parser.add_argument("--base", default=None, metavar="REV",
                        help="also run `energy fit` with the sources of this revision")
    parser.add_argument("--profiles", default=PROFILES, metavar="MINUTES",
                        help="comma-separated profile lengths in minutes for analyze and "
                             f"phases (default {PROFILES}; '' for none)")
    parser.add_argument("--limit", type=float, default=600.0,
                        help="stop a command after this many seconds (default 600)")
    args = parser.parse_args(argv)
    run = _common.Run()
    sizes = QUICK_INPUTS if args.quick else INPUTS
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory(prefix="pk-scale-") as tmp:
        folder = Path(tmp)
        versions = {"now": env}
        if args.base:
            versions[f"base {args.base}"] = {**os.environ,
                                             "PYTHONPATH": str(base_sources(args.base, folder))}
        fit_rows, fit_series = energy_rows(folder, sizes, versions, args.limit)
        minutes = ([] if args.quick else
                   [float(m) for m in args.profiles.split(",") if m.strip()])
        prof_rows, prof_series = (profile_rows(folder, minutes, env, args.limit) if minutes
                                  else ([], {}))
        sampled = coarse_rows(folder, env, args.limit) if minutes else []
    lines = ["## Cost against input size (`benchmarks/scale.py`)", "",
             *_common.machine_lines(run),
             f"- {_common.cores_used()}; total {_common.seconds(run.elapsed())}. Command: "
             f"`python benchmarks/scale.py{' --base ' + args.base if args.base else ''}"
             f"{' --profiles ' + args.profiles if minutes else ''}`; each command a fresh "
             f"process (start-up and imports included), stopped after {args.limit:.0f} s; "
             "peak RSS of that process (wait4).",
             "- `energy fit FILE --json` on `realistic_campaign` (11 frequencies x 17 core "
             "counts x N inputs, one deviation parameter per input). Truth error: the fitted "
             "model's mean |predicted / noiseless - 1| over every configuration, %.", "",
             _common.markdown_table(["revision", "rows", "inputs", "whole command",
                                     "peak RSS MiB", "truth error %"], fit_rows, "lrrrrr"),
             ""]
    for label, (n, t) in fit_series.items():
        target = ""
        if label == "now" and TARGET_FIT_INPUTS in sizes:
            at = [w for r, w in zip(n, t, strict=True) if r == 11 * 17 * TARGET_FIT_INPUTS]
            if at:
                target = (f"; {TARGET_FIT_INPUTS} inputs in {_common.seconds(at[0])} "
                          f"(target <= {TARGET_FIT_S:g} s: "
                          f"{'meets' if at[0] <= TARGET_FIT_S else 'misses'})")
        lines.append(f"- {label}: growth exponent of the whole command over rows "
                     f"{growth(n, t):.2f} ({len(n)} sizes finished){target}.")
    if prof_rows:
        lines += ["", "- `analyze` and `phases` on `phasekit synth nemo --minutes M --seed 1` "
                  "(5 ms samples). Right: `analyze`'s period within 2 % and coverage within 2 "
                  "points of the truth's instances, one pattern; `phases`' boundaries at the "
                  "periodic part's start and end (F1 1.0, margin 1 % of the run).", "",
                  _common.markdown_table(["command", "profile", "samples", "whole command",
                                          "peak RSS MiB", "right", "answer"], prof_rows,
                                         "llrrrll"), ""]
        for verb, (n, t) in prof_series.items():
            day = [w for r, w in zip(n, t, strict=True) if r == 17_280_000]
            target = TARGET_ANALYZE_S if verb == "analyze" else TARGET_PHASES_S
            lines.append(f"- {verb}: growth exponent over samples {growth(n, t):.2f} "
                         f"({len(n)} sizes finished)"
                         + (f"; 24 h in {_common.seconds(day[0])} (target <= {target:g} s: "
                            f"{'meets' if day[0] <= target else 'misses'})" if day else "")
                         + ".")
    if sampled:
        lines += ["", "- The same 10-minute run sampled at 5 ms and at 100 ms (a 1.1 s period "
                  "is 11 samples at 100 ms):", "",
                  _common.markdown_table(["sampling", "samples", "whole command", "right",
                                          "answer"], sampled, "lrrll")]
    body = "\n".join(lines)
    return _common.finish(SECTION, body, args)


if __name__ == "__main__":
    sys.exit(main())
