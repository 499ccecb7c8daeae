"""Shape segmentation of one series: phasekit against ClaSP on the TSSB.

On every series of the real measurements kept beside the checkout
(``segmentation/tssb_dev``, ``--data DIR`` to point elsewhere; 25 series of the Time Series
Segmentation Benchmark, Ermshaus et al.; ``desc.txt``: name, window hint, change points), the
change points found by phasekit and by claspy's ``BinaryClaSPSegmentation`` with its default
parameters, scored by F1 (margin 1 % of the series length, as the TSSB evaluation) and
Covering (``phasekit.metrics.segmentation``), with the number found and the wall time. The
window hint of desc.txt is used by neither method: both find the window from the data.

phasekit is called as a user would: a one-column ``phasekit.Profile`` given to
``phasekit.phases.phases(profile)``. When that default does not (yet) route a one-column
profile to the shape method (its result's ``method`` is not ``"shape"``), the script calls
``phasekit.phases.shape.shape_change_points`` directly and says so.

claspy pins numpy and numba versions older than phasekit's, so it runs in its own virtual
environment, in a subprocess (``_claspy_tssb.py``, results as JSON): ``/work/claspy-venv``
or ``~/.cache/phasekit-bench/claspy-venv``; when neither exists the full run creates the
latter (``python -m venv`` + ``pip install claspy``) and says so (``--quick`` skips claspy
then). Times are warm (after one untimed call that loads numba's cache or compiles); the
first call of a fresh process (import + cache load or compilation + one segmentation of a
2 000-sample series) is timed apart for both, and phasekit's once more with an empty numba cache
(compilation). Cost per sample = total warm time / total
samples over the series (both methods are O(n^2) per segment in the neighbour search).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _common

SECTION = "segmentation_tssb"
DATA = _common.HERE.parent.parent / "shared" / "data" / "segmentation" / "tssb_dev"
TESTS_DATA = _common.HERE.parent / "tests" / "data" / "tssb"
QUICK = ("ECGFiveDays", "ItalyPowerDemand", "Adiac")
VENVS = (Path("/work/claspy-venv"), Path.home() / ".cache" / "phasekit-bench" / "claspy-venv")
RUNNER = _common.HERE / "_claspy_tssb.py"
WARM_SCRIPT = (
    "import time; t = time.perf_counter(); import numpy as np; "
    "from phasekit.phases.shape import shape_change_points; "
    "x = np.sin(np.linspace(0, 60 * np.pi, 2000)) + np.r_[np.zeros(1000), np.ones(1000)]; "
    "shape_change_points(x); print(time.perf_counter() - t)"
)


def read_desc(folder: Path, names: tuple[str, ...] | None = None
              ) -> list[tuple[str, np.ndarray, list[int]]]:
    out = []
    for line in (folder / "desc.txt").read_text().split():
        name, _hint, *cps = line.split(",")
        if names is None or name in names:
            out.append((name, np.loadtxt(folder / f"{name}.txt", dtype=np.float64),
                        [int(c) for c in cps]))
    return out


# --- phasekit --------------------------------------------------------------------------------
def phasekit_route() -> tuple[str, object]:
    """Whether ``phases(profile)`` routes a one-column profile to the shape method: returns
    (description, callable x -> (change points, window))."""
    import phasekit
    from phasekit.errors import PhasekitError
    from phasekit.phases import phases
    from phasekit.phases.shape import shape_change_points

    t = np.arange(3000)
    probe = np.where(t < 1500, np.sin(2 * np.pi * t / 20), np.sin(2 * np.pi * t / 33))
    try:
        res = phases(phasekit.Profile(values=probe[:, None], period=1.0, metrics=("value",)))
        method = res.method
    except (PhasekitError, TypeError, ValueError) as exc:
        method = f"error: {exc}"
    if method == "shape":
        def run(x: np.ndarray) -> tuple[list[int], int | None]:
            r = phases(phasekit.Profile(values=x[:, None], period=1.0, metrics=("value",)))
            window = r.params.get("window") if isinstance(r.params, dict) else None
            return [p.start_index for p in r.phases[1:]], window

        return "`phasekit.phases.phases(Profile)` (default method: shape)", run

    def direct(x: np.ndarray) -> tuple[list[int], int | None]:
        r = shape_change_points(x)
        return r.change_points.tolist(), r.window

    return (f"`shape_change_points(x)` directly (`phases(Profile)` with one column used "
            f"method {method!r}, not the shape method)"), direct


def first_call_phasekit(*, cold: bool = False) -> float:
    """First call in a fresh process; ``cold``: with an empty numba cache (compilation)."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        done = subprocess.run([sys.executable, "-c", WARM_SCRIPT], capture_output=True,
                              text=True, check=True, env=env)
    return float(done.stdout.strip().splitlines()[-1])


# --- claspy ----------------------------------------------------------------------------------
def claspy_python(*, create: bool) -> tuple[Path | None, str]:
    for venv in VENVS:
        python = venv / "bin" / "python"
        if python.exists():
            return python, f"claspy from `{venv}`"
    if not create:
        return None, "claspy skipped: no claspy virtual environment (the full run creates one)"
    venv = VENVS[-1]
    print(f"no claspy environment: creating {venv} (python -m venv; pip install claspy)",
          flush=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "claspy"],
                   check=True)
    return venv / "bin" / "python", f"claspy from `{venv}` (created by this run)"


def run_claspy(python: Path, folder: Path, names: list[str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(python), str(RUNNER), str(folder), *names], capture_output=True,
                          text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"claspy run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


# --- main ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="three short series (smoke test)")
    parser.add_argument("--data", type=Path, default=None,
                        help=f"folder of TSSB series with desc.txt (default {DATA})")
    parser.add_argument("--no-claspy", action="store_true", help="skip the claspy baseline")
    args = parser.parse_args(argv)
    bench = _common.Run()
    from phasekit.metrics.segmentation import score_segmentation

    folder = args.data or DATA
    if not (folder / "desc.txt").exists():
        if not args.quick:
            print(f"no TSSB data in {folder}", file=sys.stderr)
            return 2
        folder = TESTS_DATA
    series = read_desc(folder, QUICK if args.quick else None)
    route, segment = phasekit_route()
    print(f"phasekit: {route}", flush=True)

    first_pk = first_call_phasekit()
    cold_pk = first_call_phasekit(cold=True)
    segment(np.sin(np.arange(2000) / 3.0))  # warm this process
    found_pk = {}
    for name, x, _truth in series:
        t = time.perf_counter()
        cps, window = segment(x)
        found_pk[name] = (cps, window, time.perf_counter() - t)
        print(f"  phasekit {name}: {len(cps)} change points, {found_pk[name][2]:.2f} s",
              flush=True)

    claspy: dict | None = None
    if args.no_claspy:
        claspy_note = "claspy skipped (--no-claspy)"
    else:
        python, claspy_note = claspy_python(create=not args.quick)
        if python is not None:
            print(f"running {claspy_note} ...", flush=True)
            claspy = run_claspy(python, folder, [s[0] for s in series])
            claspy_note += f" (claspy {claspy['version']})"
    print(claspy_note)

    header = ["series", "n", "true", "pk window", "pk found", "pk F1", "pk Cov", "pk time",
              "ClaSP window", "ClaSP found", "ClaSP F1", "ClaSP Cov", "ClaSP time"]
    rows, pk_scores, cl_scores = [], [], []
    total_n = 0
    pk_time = cl_time = 0.0
    for name, x, truth in series:
        n = len(x)
        total_n += n
        margin = int(0.01 * n)
        cps, window, dt = found_pk[name]
        s = score_segmentation(truth, cps, n, margin=margin)
        pk_scores.append((s.f1, s.covering))
        pk_time += dt
        row = [name, n, len(truth), window if window is not None else "?", len(cps),
               f"{s.f1:.3f}", f"{s.covering:.3f}", _common.seconds(dt)]
        if claspy is not None:
            c = claspy["series"][name]
            sc = score_segmentation(truth, c["change_points"], n, margin=margin)
            cl_scores.append((sc.f1, sc.covering))
            cl_time += c["seconds"]
            row += [c["window"], len(c["change_points"]), f"{sc.f1:.3f}", f"{sc.covering:.3f}",
                    _common.seconds(c["seconds"])]
        else:
            row += ["-"] * 5
        rows.append(row)
    pk_mean = np.mean(pk_scores, axis=0)
    mean_row = [f"**mean of {len(series)}**", total_n, "", "", "", f"**{pk_mean[0]:.3f}**",
                f"**{pk_mean[1]:.3f}**", _common.seconds(pk_time)]
    if cl_scores:
        cl_mean = np.mean(cl_scores, axis=0)
        mean_row += ["", "", f"**{cl_mean[0]:.3f}**", f"**{cl_mean[1]:.3f}**",
                     _common.seconds(cl_time)]
    else:
        mean_row += ["-"] * 5
    rows.append(mean_row)
    print(_common.text_table(header, rows))

    cost = [f"- Cost per sample (total warm time / {total_n:,} samples): phasekit "
            f"{pk_time / total_n * 1e6:.1f} us"]
    if claspy is not None:
        cost[0] += (f", ClaSP {cl_time / total_n * 1e6:.1f} us "
                    f"(ClaSP / phasekit = {cl_time / pk_time:.1f}x)")
    cost.append(f"- First call in a fresh process (import, numba cache load or compilation, "
                f"one 2,000-sample series): phasekit {_common.seconds(first_pk)} with its "
                f"numba cache ({_common.seconds(cold_pk)} compiling into an empty cache)"
                + (f", ClaSP {_common.seconds(claspy['first_call_seconds'])}"
                   if claspy is not None else ""))
    targets = (f"- Targets: mean F1 >= 0.75: {'meets' if pk_mean[0] >= 0.75 else '**misses**'}"
               f"; mean Covering >= 0.80: {'meets' if pk_mean[1] >= 0.80 else '**misses**'}")
    if cl_scores:
        targets += (f"; F1 and Covering >= ClaSP's: "
                    f"{'yes' if pk_mean[0] >= cl_mean[0] and pk_mean[1] >= cl_mean[1] else '**no**'}")
    print("\n".join([*cost, targets]))
    md = "\n".join([
        "## Shape segmentation on TSSB (`benchmarks/segmentation_tssb.py`)", "",
        *_common.machine_lines(bench),
        f"- Data: {len(series)} TSSB series (`{folder.name}`, BSD-3); F1 with a margin of 1 % "
        "of the series length and Covering (`phasekit.metrics.segmentation`); the window "
        "hint of desc.txt is used by neither method.",
        f"- phasekit: {route}. Baseline: {claspy_note}, `BinaryClaSPSegmentation()` with "
        "default parameters, in a subprocess; both timed warm, one series at a time, on "
        f"{_common.cores_used()} (numba threads: both use every core).",
        *cost, targets, "",
        _common.markdown_table(header, rows),
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
