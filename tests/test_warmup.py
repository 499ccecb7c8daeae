"""The numba warm-up (issue 20): after :func:`phasekit.warmup.warm`, the verbs run on inputs
other than the warm-up's own (real files of tests/data where there are) load every kernel
from the cache and compile none; a wheel built with the warm-up carries the cache.

numba is pointed at a fresh cache folder (NUMBA_CACHE_DIR) so that the source tree's own
``__pycache__`` plays no part; NUMBA_DEBUG_CACHE makes it say each kernel it saves (compiled)
or loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"

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
pk.phases("{DATA / 'real_backtoback_1s.parquet'}")
pk.structure(read_trace("{DATA / 'paraver' / 'lulesh_7+1_chop8.prv.gz'}"))
"""


def _run(code: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "NUMBA_DEBUG_CACHE": "1",
           "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=900, check=False)


def _compiled(done: subprocess.CompletedProcess[str]) -> list[str]:
    return sorted({line.split("'")[1].rsplit("/", 1)[-1].split(".py311")[0]
                   for line in done.stdout.splitlines() if line.startswith("[cache] data saved")})


def test_after_the_warm_up_the_verbs_compile_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "numba-cache"
    warm = _run("from phasekit.warmup import warm; import sys; "
                "sys.exit(0 if all(isinstance(v, float) for v in warm().values()) else 1)",
                cache)
    assert warm.returncode == 0, warm.stdout[-2000:] + warm.stderr[-2000:]
    assert _compiled(warm), "the warm-up compiled nothing: is the cache in use?"
    verbs = _run(VERBS, cache)
    assert verbs.returncode == 0, verbs.stderr[-3000:]
    loaded = [line for line in verbs.stdout.splitlines() if line.startswith("[cache] data loaded")]
    assert loaded, "no kernel was loaded from the cache"
    assert _compiled(verbs) == [], f"compiled at first use: {_compiled(verbs)}"


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
