"""Command latency as a user feels it: every verb as a whole command, on a small
and a typical input, the first time after ``pip install .`` (cold) and warm, beside
``python -c pass``, ``import numpy`` and the in-process computation, in one run.

- Cold: a fresh virtual environment (``--system-site-packages``, so that the dependencies
  are the machine's and only phasekit is new), phasekit installed there from a wheel built
  in this run (``pip wheel . --no-deps``, which runs the numba warm-up,
  :mod:`phasekit.warmup`), then each verb's first command. ``--wheel PATH`` installs a given
  wheel instead (a wheel built with ``PHASEKIT_NO_WARMUP=1`` shows the first run without
  the warm-up).
- Warm: the median of RUNS further commands of the same venv.
- Inputs: generated (with phasekit's generators) into a scratch folder, or the real files
  of tests/data (the recording, the LULESH trace, the Kepler RAPL slice).
- The analyze target: the whole command on a 10-minute 5 ms NEMO-like profile
  against dtaidistance's banded distance matrix alone (``distance_matrix_fast``, window =
  10 % of the median instance length, C + OpenMP) on the same instances, timed in process.

Run: ``python benchmarks/cli_latency.py [--quick] [--wheel PATH]`` (``--quick``: the current
environment instead of a fresh venv, 2 warm runs, no 45-minute profile; written nowhere).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common

SECTION = "cli_latency"
ROOT = _common.HERE.parent
DATA = ROOT / "tests" / "data"
RUNS = 5
BAND = 0.1


def make_inputs(folder: Path, quick: bool) -> dict[str, Path]:
    """Every input file, generated or real."""
    import numpy as np

    from phasekit.campaign import write_campaign
    from phasekit.io import read_profile, write_profile
    from phasekit.periodicity import analyze
    from phasekit.schedule.batch import write_batch
    from phasekit.synth.batches import generate_batch
    from phasekit.synth.campaigns import seed_campaign
    from phasekit.synth.periodic import generate
    from phasekit.synth.phases import generate_bench
    from phasekit.synth.power import generate_fingerprint_runs, generate_power_profiles

    out: dict[str, Path] = {}
    for minutes in (2, 10) if quick else (2, 10, 45):
        profile, _ = generate("nemo", minutes=float(minutes), seed=1)
        out[f"nemo{minutes}"] = folder / f"nemo{minutes}.parquet"
        write_profile(profile, out[f"nemo{minutes}"])
    out["analysis"] = folder / "analysis.json"  # what analyze -o writes, for report
    out["analysis"].write_text(json.dumps(analyze(read_profile(out["nemo2"])).to_dict()))
    out["runs"] = folder / "runs"  # what synth fingerprints writes, for fingerprint
    out["runs"].mkdir()
    for run in generate_fingerprint_runs(seed=0):
        write_profile(run, out["runs"] / f"{run.meta['program']}-{run.meta['input']}.parquet")
    bench, _ = generate_bench("bench_1", seed=0, idle_s=5.0)
    rows = bench.window(0.0, 300 * bench.period)
    out["phases300"] = folder / "phases300.csv"
    write_profile(rows, out["phases300"])
    small = seed_campaign(seed=0, frequencies=(1.2, 1.6, 2.0, 2.4), cores=(1, 2, 4, 8, 16),
                          inputs=(1, 2, 3)).campaign
    out["campaign"] = folder / "campaign.json"
    write_campaign(small, out["campaign"])
    table = small.table()
    measured = table.sample(n=20, random_state=0)
    out["measured"] = folder / "measured.csv"
    measured.to_csv(out["measured"], index=False)
    large = seed_campaign(seed=0, frequencies=tuple(np.round(np.linspace(1.2, 2.4, 10), 2)),
                          cores=tuple(range(1, 21)), inputs=(1, 2, 3, 4, 5)).campaign
    out["campaign1000"] = folder / "campaign1000.json"
    write_campaign(large, out["campaign1000"])
    profiles, _ = generate_power_profiles(cores=[1, 4, 16], freqs_ghz=[1.2, 1.8, 2.4], seed=0)
    out["power"] = folder / "power.json"
    out["power"].write_text(json.dumps(profiles.to_dict()))
    out["batch"] = write_batch(generate_batch(24, seed=0), folder / "batch.csv")
    out["recording"] = DATA / "real_backtoback_1s.parquet"
    out["trace"] = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
    out["kepler"] = DATA / "kepler_rapl_kubelet_slice.csv"
    return out


def commands(inputs: dict[str, Path], folder: Path, quick: bool) -> list[tuple[str, str, list]]:
    """(verb, input label, argv after ``phasekit``)."""
    i = {k: str(v) for k, v in inputs.items()}
    out = [
        ("--help", "-", ["--help"]),
        ("sources", "-", ["sources", "--json"]),
        ("info", "2-min profile", ["info", i["nemo2"], "--json"]),
        ("analyze", "2-min profile", ["analyze", i["nemo2"], "--json"]),
        ("analyze", "10-min 5 ms profile", ["analyze", i["nemo10"], "--json"]),
        ("phases", "real recording", ["phases", i["recording"], "--json"]),
        ("phases", "300-row CSV", ["phases", i["phases300"], "--json"]),
        ("structure", "LULESH trace", ["structure", i["trace"], "--json"]),
        ("energy fit", "60 configurations", ["energy", "fit", i["campaign"], "--json"]),
        ("energy fit", "1 000 configurations", ["energy", "fit", i["campaign1000"], "--json"]),
        ("energy choose", "60 configurations", ["energy", "choose", i["campaign"], "--json"]),
        ("energy suggest", "20 measured", ["energy", "suggest", i["measured"], "--json"]),
        ("energy plot", "60 configurations",
         ["energy", "plot", i["campaign"], "--plot", str(folder / "energy.png")]),
        ("energy phasediv", "9 configurations", ["energy", "phasediv", i["power"], "--json"]),
        ("schedule", "24 tasks, heuristic",
         ["schedule", i["batch"], "--servers", "2", "--cores", "12", "--policy", "heuristic",
          "--json"]),
        ("powermodel fit", "Kepler slice",
         ["powermodel", "fit", i["kepler"], "--target", "package_power", "--json"]),
        ("report", "an analysis (2-min profile)",
         ["report", i["analysis"], "-o", str(folder / "report.html")]),
        ("synth", "nemo, 2 minutes",
         ["synth", "nemo", "--minutes", "2", "-o", str(folder / "synth.parquet")]),
        ("fingerprint", "12 runs",
         ["fingerprint", *sorted(str(p) for p in inputs["runs"].glob("*.parquet")), "--json"]),
        ("watch", "real recording, replayed", ["watch", i["recording"], "--json"]),
    ]
    if not quick:
        out.append(("analyze", "45-min 5 ms profile", ["analyze", i["nemo45"], "--json"]))
    return out


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start, done.returncode


def fresh_venv(folder: Path, wheel: Path | None) -> tuple[Path, str]:
    """A new venv with phasekit installed from ``wheel`` (built here when None)."""
    if wheel is None:
        out = folder / "wheel"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q",
                        "-w", str(out)], check=True)
        built = time.perf_counter() - start
        wheel = next(out.glob("phasekit-*.whl"))
        how = f"built here in {_common.seconds(built)} (pip wheel, with the warm-up)"
    else:
        how = f"given: {wheel.name}"
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(wheel)],
                   check=True)
    return venv / "bin" / "python", how


def baseline_analyze(path: Path) -> dict[str, float]:
    """In process: phasekit's analysis of ``path`` (warm) and dtaidistance's banded matrix on
    the instances it clustered."""
    import numpy as np
    from dtaidistance import dtw as dtai

    from phasekit.io import read_profile
    from phasekit.periodicity import analyze

    start = time.perf_counter()
    profile = read_profile(path)
    read_s = time.perf_counter() - start
    analyze(profile)
    start = time.perf_counter()
    result = analyze(profile)
    analyze_s = time.perf_counter() - start
    matrix_s = 0.0
    for index in range(len(result.patterns)):
        X, lengths = result.instances(profile, index)
        series = [np.ascontiguousarray(X[i, :lengths[i], 0]) for i in range(lengths.size)]
        window = math.ceil(BAND * float(np.median(lengths))) + 1
        start = time.perf_counter()
        dtai.distance_matrix_fast(series, window=window, compact=True)
        matrix_s += time.perf_counter() - start
    return {"read_s": read_s, "analyze_s": analyze_s, "matrix_s": matrix_s,
            "n_instances": sum(len(p.starts) for p in result.patterns)}


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="the current environment, 2 warm runs, no "
                                               "45-minute profile")
    parser.add_argument("--wheel", type=Path, default=None)
    args = parser.parse_args(argv)
    bench = _common.Run()
    runs = 2 if args.quick else RUNS
    with tempfile.TemporaryDirectory(prefix="phasekit-latency-") as scratch:
        folder = Path(scratch)
        inputs = make_inputs(folder, args.quick)
        if args.quick:
            python, how = Path(sys.executable), "the current environment (--quick)"
        else:
            python, how = fresh_venv(folder, args.wheel)
        env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
        env["MPLBACKEND"] = "Agg"
        work = folder / "work"
        work.mkdir()
        reference = {
            "python -c pass": [str(python), "-c", "pass"],
            "python -c 'import numpy'": [str(python), "-c", "import numpy"],
            "python -c 'import phasekit'": [str(python), "-c", "import phasekit"],
        }
        rows, failures = [], []
        for name, argv_ in reference.items():
            first, _ = timed(argv_, env, work)
            warm = statistics.median(timed(argv_, env, work)[0] for _ in range(runs))
            rows.append([name, "-", f"{first:.2f}", f"{warm:.2f}", "-"])
        measured: dict[tuple[str, str], tuple[float, float]] = {}
        for verb, label, argv_ in commands(inputs, folder, args.quick):
            command = [str(python), "-m", "phasekit.cli", *argv_]
            first, code = timed(command, env, work)
            warm_runs = [timed(command, env, work) for _ in range(runs)]
            warm = statistics.median(t for t, _ in warm_runs)
            if code or any(c for _, c in warm_runs):
                failures.append(f"{verb} ({label}): exit {code}")
            measured[(verb, label)] = (first, warm)
            rows.append([f"phasekit {verb}", label, f"{first:.2f}", f"{warm:.2f}",
                         f"{first - warm:+.2f}"])
            print(_common.text_table(["command", "input", "first (s)", "warm (s)",
                                      "first - warm"], rows[-1:]), flush=True)
        base = baseline_analyze(inputs["nemo10"])
    whole = measured[("analyze", "10-min 5 ms profile")][1]
    md = [
        "## Command latency, cold and warm (`benchmarks/cli_latency.py`)", "",
        *_common.machine_lines(bench),
        f"- Total {_common.seconds(bench.elapsed())}; phasekit: {how}; first = the first "
        f"command of that verb in the fresh venv, warm = median of {runs} more; every "
        "command with `--json` (output read and discarded) unless it writes a figure.",
        "", _common.markdown_table(["command", "input", "first (s)", "warm (s)",
                                    "first - warm (s)"], rows),
        "", f"- 10-minute 5 ms profile ({base['n_instances']} instances): reading "
        f"{base['read_s']:.2f} s and analysis {base['analyze_s']:.2f} s in process; "
        f"dtaidistance's banded matrix alone {base['matrix_s']:.2f} s; the whole "
        f"`phasekit analyze` command {whole:.2f} s warm, "
        f"{base['matrix_s'] / whole:.2f}x the baseline's speed (target: >= 5x).",
    ]
    if failures:
        md.append(f"- **Commands that failed**: {'; '.join(failures)}.")
    print("\n".join(md[-2:]))
    _common.publish(SECTION, "\n".join(md), args.results, quick=args.quick)
    shutil.rmtree(folder, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
