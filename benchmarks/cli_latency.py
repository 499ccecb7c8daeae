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

- A real campaign: PaScal's blackscholes on 2x Xeon E5-2698 v3 (935 configurations, IPMI
  energy), read where the real measurements are kept, beside the checkout (never copied into
  it; its rows are skipped, and the output says so, without it): ``energy fit``, ``energy
  choose`` (fitting it, from a saved fit, and fitting 20 of its configurations drawn at
  random, as a user's first readings may be, where the model is chosen by
  cross-validation), ``energy suggest`` (everything measured, and 10 configurations
  measured). Target: each within 6x ``python -c 'import numpy'``.
- ``--busy``: the real campaign's commands and ``import numpy`` again beside two CPU-bound
  jobs (two ``python -c "while True: pass"``, started and killed here), against their quiet
  times (target: at most 2x).
- ``--base REV``: the real campaign's commands also with the sources of an earlier revision
  (``git archive``, this checkout's compiled extensions), or of a folder of sources (a ``src``
  folder: another tree's), in the same run.

Run: ``python benchmarks/cli_latency.py [--quick] [--wheel PATH] [--busy] [--base REV]
[--only VERB] [--runs N]`` (``--quick``: the current environment instead of a fresh venv, 2
warm runs, no 45-minute profile; written nowhere; ``--only energy``: the commands whose verb
starts so).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import _common

SECTION = "cli_latency"
ROOT = _common.HERE.parent
DATA = ROOT / "tests" / "data"
#: A real PaScal campaign, kept beside the checkout with the other real measurements.
REAL_CAMPAIGN = (ROOT.parent / "shared" / "data" / "energy" / "pascal_dev"
                 / "completo_black_2.csv")
REAL_LABEL = "real campaign, 935 configurations"
#: Targets on the real campaign: the whole command against ``import numpy``, and beside two
#: CPU-bound jobs against quiet.
NUMPY_TARGET = 6.0
BUSY_TARGET = 2.0
BUSY_JOBS = 2
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
    if REAL_CAMPAIGN.exists():
        out["real"] = REAL_CAMPAIGN
        out["real_fit"] = folder / "real_fit.json"  # what `energy fit -o` writes
        subprocess.run([sys.executable, "-m", "phasekit.cli", "energy", "fit", str(REAL_CAMPAIGN),
                        "-o", str(out["real_fit"])], check=True, capture_output=True)
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
    return out + real_commands(inputs)


def real_commands(inputs: dict[str, Path]) -> list[tuple[str, str, list]]:
    """The energy commands on the real campaign (none without it)."""
    if "real" not in inputs:
        return []
    real, fit = str(inputs["real"]), str(inputs["real_fit"])
    return [
        ("energy fit", REAL_LABEL, ["energy", "fit", real, "--json"]),
        ("energy choose", REAL_LABEL, ["energy", "choose", real, "--json"]),
        ("energy choose", REAL_LABEL + ", saved fit",
         ["energy", "choose", real, "--fit", fit, "--json"]),
        ("energy choose", REAL_LABEL + ", fitted on 20 drawn at random",
         ["energy", "choose", real, "--train", "20", "--design", "random", "--json"]),
        ("energy suggest", REAL_LABEL + ", all measured", ["energy", "suggest", real, "--json"]),
        ("energy suggest", REAL_LABEL + ", 10 measured",
         ["energy", "suggest", real, "--train", "10", "--json"]),
    ]


@contextlib.contextmanager
def cpu_bound_jobs(count: int) -> Iterator[None]:
    """``count`` CPU-bound processes (``python -c "while True: pass"``) beside the block."""
    jobs = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(count)]
    try:
        time.sleep(0.5)  # spinning before the first measurement
        yield
    finally:
        for job in jobs:
            job.kill()
            job.wait()


def base_sources(revision: str, folder: Path) -> Path:
    """The ``src`` folder of ``revision`` (``git archive``: the repository is left as it is),
    with this checkout's compiled extensions."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"],
                             capture_output=True, check=True).stdout
    target = folder / f"base-{revision}"
    target.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    for built in (ROOT / "src").rglob("*.so"):
        shutil.copy2(built, target / built.relative_to(ROOT))
    return target / "src"


def repeated(argv: list[str], env: dict[str, str], cwd: Path, runs: int
             ) -> tuple[list[float], list[float], bool]:
    """Wall and CPU times of ``runs`` runs of ``argv``, and whether every one exited 0."""
    done = [timed(argv, env, cwd) for _ in range(runs)]
    return [t for t, _, _ in done], [c for _, _, c in done], not any(k for _, k, _ in done)


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, float]:
    """Wall time, exit code and CPU time (user and system, of the command's processes: less
    sensitive than the wall time to other jobs on the machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, done.returncode, cpu


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


def ratio(value: float, reference: float) -> str:
    return f"{value / reference:.1f}x"


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="the current environment, 2 warm runs, no "
                                               "45-minute profile")
    parser.add_argument("--wheel", type=Path, default=None)
    parser.add_argument("--busy", action="store_true",
                        help="also run the real campaign's commands beside two CPU-bound jobs")
    parser.add_argument("--base", default=None, metavar="REV",
                        help="also measure the real campaign's commands with the sources of "
                             "this earlier revision (or this src folder), in the same run")
    parser.add_argument("--runs", type=int, default=None, metavar="N",
                        help=f"warm runs of each command (default {RUNS}, 2 with --quick)")
    parser.add_argument("--only", default=None, metavar="VERB",
                        help="only the commands whose verb starts with VERB (e.g. energy)")
    args = parser.parse_args(argv)
    bench = _common.Run()
    runs = args.runs or (2 if args.quick else RUNS)
    notes = []
    if not REAL_CAMPAIGN.exists():
        notes.append(f"- The real campaign is not at {REAL_CAMPAIGN} (the real measurements "
                     "are kept beside the checkout, not copied into it): its rows are "
                     "skipped.")
        print(notes[-1][2:], file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="phasekit-latency-") as scratch:
        folder = Path(scratch)
        inputs = make_inputs(folder, args.quick)
        if args.quick:
            python, how = Path(sys.executable), "the current environment (--quick)"
        else:
            python, how = fresh_venv(folder, args.wheel)
        # as a user runs them: compiled once, from their bytecode afterwards
        env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        env["MPLBACKEND"] = "Agg"
        work = folder / "work"
        work.mkdir()
        numpy_argv = [str(python), "-c", "import numpy"]
        reference = {
            "python -c pass": [str(python), "-c", "pass"],
            "python -c 'import numpy'": numpy_argv,
            "python -c 'import phasekit'": [str(python), "-c", "import phasekit"],
        }
        header = ["command", "input", "first (s)", "warm (s)", "first - warm (s)",
                  "warm / numpy", "warm CPU (s)", "CPU / numpy"]
        rows, failures = [], []
        numpy_s = numpy_cpu = float("nan")
        for name, argv_ in reference.items():
            first = timed(argv_, env, work)[0]
            times, cpus, _ = repeated(argv_, env, work, runs)
            warm, cpu = statistics.median(times), statistics.median(cpus)
            if argv_ is numpy_argv:
                numpy_s, numpy_cpu = warm, cpu
            rows.append([name, "-", f"{first:.2f}", f"{warm:.2f}", "-", "-", f"{cpu:.2f}", "-"])
        versions = {"": env}  # the suffix of a revision's rows -> its environment
        if args.base and "real" in inputs:
            given = Path(args.base)
            tree = given if given.is_dir() else base_sources(args.base, folder)
            label = given.resolve().parent.name if given.is_dir() else args.base
            versions[f" (base {label})"] = {**env, "PYTHONPATH": str(tree)}
        measured: dict[tuple[str, str], tuple[float, float, float]] = {}
        real = real_commands(inputs)
        todo = [(verb, label, argv_, "") for verb, label, argv_ in commands(inputs, folder,
                                                                            args.quick)]
        todo += [(verb, label, argv_, suffix) for suffix in list(versions)[1:]
                 for verb, label, argv_ in real]
        for verb, label, argv_, suffix in todo:
            if args.only and not verb.startswith(args.only):
                continue
            command = [str(python), "-m", "phasekit.cli", *argv_]
            command_env = versions[suffix]
            first, code, _ = timed(command, command_env, work)
            times, cpus, ok = repeated(command, command_env, work, runs)
            warm, cpu = statistics.median(times), statistics.median(cpus)
            if code or not ok:
                failures.append(f"{verb}{suffix} ({label}): exit {code}")
            measured[(verb + suffix, label)] = (first, warm, cpu)
            rows.append([f"phasekit {verb}{suffix}", label, f"{first:.2f}", f"{warm:.2f}",
                         f"{first - warm:+.2f}", ratio(warm, numpy_s), f"{cpu:.2f}",
                         ratio(cpu, numpy_cpu)])
            print(_common.text_table(header, rows[-1:]), flush=True)
        busy_rows = []
        if args.busy and real:
            busy_header = ["command", "input", "quiet warm (s)", "busy median (s)",
                           "busy min - max (s)", "busy / quiet"]
            with cpu_bound_jobs(BUSY_JOBS):
                times = repeated(numpy_argv, env, work, runs)[0]
                busy_rows.append(["python -c 'import numpy'", "-", f"{numpy_s:.2f}",
                                  f"{statistics.median(times):.2f}",
                                  f"{min(times):.2f} - {max(times):.2f}",
                                  ratio(statistics.median(times), numpy_s)])
                for suffix, command_env in versions.items():
                    for verb, label, argv_ in real:
                        if args.only and not verb.startswith(args.only):
                            continue
                        command = [str(python), "-m", "phasekit.cli", *argv_]
                        times, _, ok = repeated(command, command_env, work, runs)
                        if not ok:
                            failures.append(f"{verb}{suffix} ({label}, busy): failed")
                        quiet = measured[(verb + suffix, label)][1]
                        busy = statistics.median(times)
                        busy_rows.append([f"phasekit {verb}{suffix}", label, f"{quiet:.2f}",
                                          f"{busy:.2f}", f"{min(times):.2f} - {max(times):.2f}",
                                          ratio(busy, quiet)])
                        print(_common.text_table(busy_header, busy_rows[-1:]), flush=True)
        analyzed = ("analyze", "10-min 5 ms profile") in measured
        base = baseline_analyze(inputs["nemo10"]) if analyzed else None
    md = [
        "## Command latency, cold and warm (`benchmarks/cli_latency.py`)", "",
        *_common.machine_lines(bench),
        f"- Total {_common.seconds(bench.elapsed())}; phasekit: {how}; first = the first "
        f"command of that verb in the fresh venv, warm = median of {runs} more; every "
        "command with `--json` (output read and discarded) unless it writes a figure; "
        "warm / numpy: against `python -c 'import numpy'` warm; CPU: user and system "
        "time of the command (less sensitive than its wall time to other jobs).",
        *notes,
        "", _common.markdown_table(header, rows),
    ]
    if base is not None:
        whole = measured[("analyze", "10-min 5 ms profile")][1]
        md += [
            "", f"- 10-minute 5 ms profile ({base['n_instances']} instances): reading "
            f"{base['read_s']:.2f} s and analysis {base['analyze_s']:.2f} s in process; "
            f"dtaidistance's banded matrix alone {base['matrix_s']:.2f} s; the whole "
            f"`phasekit analyze` command {whole:.2f} s warm, "
            f"{base['matrix_s'] / whole:.2f}x the baseline's speed (target: >= 5x).",
        ]
    on_real = [(warm, cpu) for key, (_, warm, cpu) in measured.items()
               if key[1].startswith(REAL_LABEL) and "(base" not in key[0]]
    if on_real:
        within = sum(warm <= NUMPY_TARGET * numpy_s for warm, _ in on_real)
        within_cpu = sum(cpu <= NUMPY_TARGET * numpy_cpu for _, cpu in on_real)
        md += ["", f"- Real campaign: {within} of {len(on_real)} commands within "
               f"{NUMPY_TARGET:g}x `python -c 'import numpy'` ({numpy_s:.2f} s) warm, "
               f"{within_cpu} of {len(on_real)} in CPU time ({numpy_cpu:.2f} s)."]
    if busy_rows:
        current = [r for r in busy_rows[1:] if "(base" not in r[0]]
        calm = sum(float(r[5].rstrip("x")) <= BUSY_TARGET for r in current)
        md += ["", f"### Beside {BUSY_JOBS} CPU-bound jobs (`--busy`)", "",
               f"- Each command {runs} times with {BUSY_JOBS} `python -c \"while True: pass\"` "
               f"running on this {os.cpu_count()}-core machine; quiet warm: the table above. "
               f"{calm} of {len(current)} commands within {BUSY_TARGET:g}x their quiet time.",
               "", _common.markdown_table(busy_header, busy_rows)]
    if failures:
        md.append(f"- **Commands that failed**: {'; '.join(failures)}.")
    print("\n".join(md[-3:]))
    _common.publish(SECTION, "\n".join(md), args.results, quick=args.quick)
    shutil.rmtree(folder, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
