"""The numba warm-up: after :func:`phasekit.warmup.warm`, the verbs run on inputs other than
the warm-up's own (real files of tests/data where there are), with every method and policy
they offer, load every kernel from the cache and compile none; a wheel built with the
warm-up carries the cache.

numba is pointed at a fresh cache folder (NUMBA_CACHE_DIR) so that the source tree's own
``__pycache__`` plays no part. The warm-up runs once for the module (about a minute)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import DATA, ROOT

#: Each verb's computation on an input the warm-up does not use.
VERBS = f"""
import warnings
warnings.simplefilter("ignore")
import phasekit as pk
from phasekit.io import read_trace
from phasekit.synth.periodic import generate

pk.periodicity("{DATA / 'real_backtoback_1s.parquet'}")
pk.periodicity("{DATA / 'lulesh_chop8_dram_10ms.csv'}")
profile, _ = generate("openfoam", minutes=3.0, seed=5)
pk.periodicity(profile)
pk.phases(profile, method="shape", detector={{"exact_up_to": 2048}})  # approximate neighbours
pk.phases("{DATA / 'real_backtoback_1s.parquet'}")
pk.structure(read_trace("{DATA / 'paraver' / 'lulesh_7+1_chop8.prv.gz'}"))
"""

#: Every numba-using verb with every method and policy it offers, run in one process through
#: the CLI (``phasekit.cli.main``) on small inputs; prints one JSON line per command with
#: its exit code and the phasekit kernels numba compiled meanwhile.
EVERY_VERB = """
import contextlib, io, json, sys, warnings
from pathlib import Path
warnings.simplefilter("ignore")
from numba.core import event

compiled = []


class Compiled(event.Listener):
    def on_start(self, ev):
        func = ev.data["dispatcher"].py_func
        if func.__module__.startswith("phasekit"):
            compiled.append(f"{func.__module__}.{func.__qualname__}"
                            f"({', '.join(str(a) for a in ev.data['args'])})")

    def on_end(self, ev):
        pass


event.register("numba:compile", Compiled())
from phasekit.cli import main

data, tmp = Path(sys.argv[1]), Path(sys.argv[2])
real, lulesh = data / "real_backtoback_1s.parquet", data / "lulesh_chop8_dram_10ms.csv"
batch = tmp / "batch.csv"
dc = ["--servers", "5", "--cores", "12", "--time-limit", "1s"]
commands = [
    ["synth", "power", "--seed", "3", "-o", tmp / "power.json"],
    ["synth", "counters", "--seed", "3", "--minutes", "4", "-o", tmp / "counters.csv"],
    ["synth", "bench_2", "--seed", "3", "--idle", "10", "-o", tmp / "bench.parquet"],
    ["synth", "nodes", "--nodes", "2", "--minutes", "0.5", "-o", tmp / "nodes"],
    *[["phases", path, "--method", method] for path in (real, tmp / "bench.parquet")
      for method in ("auto", "ev", "ev-literal")],
    *[["phases", lulesh, "--method", method, "-m", "dram_rd", "-m", "dram_wr"]
      for method in ("auto", "ev", "ev-literal")],
    ["phases", real, "--method", "ev-literal", "--smooth", "3"],
    ["phases", real, "--method", "shape", "--metric", "context_switches"],
    ["phases", lulesh, "--method", "shape", "--metric", "dram_rd"],
    ["phases", tmp / "nodes", "--workers", "1"],
    *[["watch", real, "--method", method] for method in ("ev", "ev-literal")],
    *[["energy", "phasediv", tmp / "power.json", "--method", method, "--integrator", rule,
       "--max-phases", "4", "--grid", "60"] for method in ("dp", "ga")
      for rule in ("zoh", "trapezoid")],
    *[["powermodel", "fit", tmp / "counters.csv", "--model", "ge", "--grammar", grammar,
       "--generations", "2", "--restarts", "1", "-o", tmp / f"ge-{grammar}.json"]
      for grammar in ("thesis", "extended")],
    ["powermodel", "eval", tmp / "ge-thesis.json", tmp / "counters.csv"],
    ["schedule", "synth:small:5", "--policy", "rr", "--save-batch", batch],
    *[["schedule", batch, *dc, "--policy", policy]
      for policy in ("rr", "heuristic", "sa", "milp", "all")],
    ["schedule", batch, *dc, "--estimated", "est_time_s"],
    ["schedule", batch, *dc, "--estimated", "est_time_s,est_power_w", "--seed", "4"],
    ["schedule", "synth:small:6", "--policy", "all", "--time-limit", "1s"],
]
print(json.dumps({"commands": len(commands)}), flush=True)
for command in commands:
    before = len(compiled)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in command])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    print(json.dumps({"command": " ".join(str(a) for a in command), "code": code,
                      "error": err.getvalue()[-500:] if code else "",
                      "compiled": compiled[before:]}), flush=True)
"""


def _run(args: list[str], cache: Path, debug: bool = False,
         timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT / "src")}
    if debug:
        env["NUMBA_DEBUG_CACHE"] = "1"
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _compiled(done: subprocess.CompletedProcess[str]) -> list[str]:
    return sorted({line.split("'")[1].rsplit("/", 1)[-1].split(".py311")[0]
                   for line in done.stdout.splitlines() if line.startswith("[cache] data saved")})


@pytest.fixture(scope="module")
def warmed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A numba cache folder filled by the warm-up (``python -m phasekit.warmup``) alone."""
    cache = tmp_path_factory.mktemp("numba-cache")
    warm = _run(["-m", "phasekit.warmup"], cache, debug=True)
    assert warm.returncode == 0, warm.stdout[-2000:] + warm.stderr[-2000:]
    assert _compiled(warm), "the warm-up compiled nothing: is the cache in use?"
    return cache


@pytest.mark.slow
def test_after_the_warm_up_the_verbs_compile_nothing(warmed: Path) -> None:
    """NUMBA_DEBUG_CACHE makes numba say each kernel it saves (compiled) or loads."""
    verbs = _run(["-c", VERBS], warmed, debug=True)
    assert verbs.returncode == 0, verbs.stderr[-3000:]
    loaded = [line for line in verbs.stdout.splitlines() if line.startswith("[cache] data loaded")]
    assert loaded, "no kernel was loaded from the cache"
    assert _compiled(verbs) == [], f"compiled at first use: {_compiled(verbs)}"


@pytest.mark.slow
def test_every_method_and_policy_of_every_verb_runs_on_the_warmed_kernels(
        warmed: Path, tmp_path: Path) -> None:
    """After the warm-up, phases (every method, several files, the real ones of tests/data),
    watch, energy phasediv (both methods and integrators), powermodel fit and eval (both
    grammars) and schedule (every policy, from a file and from synth:, with estimates)
    compile no phasekit kernel.

    Exact, not a proxy: numba's dispatcher raises a ``numba:compile`` event only when it
    compiles a function for an argument-type signature it has neither in memory nor in the
    cache (a load from the cache returns before the event), and a kernel a compiled kernel
    calls is compiled through the same path; a listener on that event in the process running
    the verbs therefore sees every compilation, with its argument types. numba's own library
    functions are left out: they are compiled only inside the compilation of one of ours."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    done = _run(["-c", EVERY_VERB, str(DATA), str(inputs)], warmed, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    header, *rows = [json.loads(line) for line in done.stdout.splitlines()
                     if line.startswith("{")]
    assert len(rows) == header["commands"] > 30
    compiled = [f"{r['command']}: {kernel}" for r in rows for kernel in r["compiled"]]
    failed = [f"{r['command']}: exit {r['code']}: {r['error']}" for r in rows if r["code"]]
    assert not compiled and not failed, "\n".join(
        ["compiled after the warm-up:", *compiled, "failed:", *failed])


def test_wheel_builds_ask_for_the_dependencies_editable_builds_do_not() -> None:
    sys.path.insert(0, str(ROOT / "build_backend"))
    try:
        import phasekit_build
    finally:
        sys.path.pop(0)
    wheel = phasekit_build.get_requires_for_build_wheel()
    editable = phasekit_build.get_requires_for_build_editable()
    assert any(r.startswith("numba") for r in wheel)
    assert not any(r.startswith("numba") for r in editable)


def test_the_build_keeps_its_intermediate_files_out_of_the_checkout() -> None:
    """``pip install .`` used to leave build/ (7.9 MB) and the egg-info in the checkout: the
    setup script now points both at a temporary folder, removed when the build ends."""
    code = ("from distutils.core import run_setup\n"
            "dist = run_setup('setup.py', stop_after='config')\n"
            "print(dist.get_option_dict('build')['build_base'][1])\n"
            "print(dist.get_option_dict('egg_info')['egg_base'][1])\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    folders = [Path(line) for line in done.stdout.split()]
    assert len(folders) == 2
    for folder in folders:
        assert folder.is_absolute() and not folder.resolve().is_relative_to(ROOT), folder
        assert not folder.exists()  # removed when the setup script's process ended
