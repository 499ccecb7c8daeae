"""Smoke test of the benchmark scripts: each runs in its tiny --quick mode (no timing asserted).

The scripts write their RESULTS.md section and figure into a temporary folder, never into
benchmarks/.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), "--quick", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


#: Each script and its RESULTS.md section.
SCRIPTS = [
    ("table3.py", "table3"),
    ("cut_criterion.py", "cut_criterion"),
    ("subprofiles.py", "subprofiles"),
    ("record_overhead.py", "record_overhead"),
    ("phases_speed.py", "phases_speed"),
    ("phases_quality.py", "phases_quality"),
    ("trace_read.py", "trace_read"),
    ("structure_e2e.py", "structure_e2e"),
    ("energy_fit.py", "energy_fit"),
    ("phasediv.py", "phasediv"),
    ("energy_e2e.py", "energy_e2e"),
    ("signature.py", "signature"),
    ("schedule.py", "schedule"),
    ("powermodels.py", "powermodels"),
    ("many_nodes.py", "many_nodes"),
    ("phases_real.py", "phases_real"),
    ("segmentation_tssb.py", "segmentation_tssb"),
    ("energy_choose.py", "energy_choose"),
    ("energy_real.py", "energy_real"),
    ("prometheus_read.py", "prometheus_read"),
    ("pattern_merge.py", "pattern_merge"),
    ("nested_scales.py", "nested_scales"),
    ("nested_recorded.py", "nested_recorded"),
    ("report_size.py", "report_size"),
]
#: Scripts that start an external program, and the markers that say which.
NEEDS = {"signature.py": (pytest.mark.needs_gcc, pytest.mark.needs_doxygen,
                         pytest.mark.needs_valgrind),
         "prometheus_read.py": (pytest.mark.needs_prometheus,),
         "record_overhead.py": (pytest.mark.needs_gcc,),
         "report_size.py": (pytest.mark.needs_chromium,)}
#: The one script the quick subset (-m "not slow") runs: the harness, in under a second.
QUICK = "cut_criterion.py"


@pytest.mark.parametrize("script, section", [
    pytest.param(script, section, id=f"{script}-{section}",
                 marks=(*NEEDS.get(script, ()), *(() if script == QUICK else (pytest.mark.slow,))))
    for script, section in SCRIPTS])
def test_quick_run_writes_its_section(tmp_path: Path, script: str, section: str,
                                      external_data: Callable[[str], Path]) -> None:
    needs = {"phases_real.py": "phases/dcslab", "energy_choose.py": "energy/pascal_dev",
             "energy_real.py": "energy/pascal_dev"}
    if script in needs:
        external_data(needs[script])
    results = tmp_path / "RESULTS.md"
    results.write_text(f"# kept\n\n<!-- {section}:start -->\nOLD-CONTENT-XYZ\n<!-- {section}:end -->\n\n"
                       "<!-- other:start -->\nuntouched\n<!-- other:end -->\n")
    extra = {"subprofiles.py": ["--figure", str(tmp_path / "fig5.png")],
             # compiling tslearn's numba kernels alone takes ~10 s; the real run covers them
             "table3.py": ["--no-tslearn"], "segmentation_tssb.py": ["--no-claspy"]
             }.get(script, [])
    out = run(script, "--results", str(results), *extra)
    assert "wrote the" in out
    text = results.read_text()
    assert text.startswith("# kept")
    assert "OLD-CONTENT-XYZ" not in text.split(f"<!-- {section}:start -->")[1].split(f"<!-- {section}:end -->")[0]
    assert "<!-- other:start -->\nuntouched\n<!-- other:end -->" in text
    assert text.count(f"<!-- {section}:start -->") == 1
    assert "Machine:" in text
    if script == "subprofiles.py":
        assert (tmp_path / "fig5.png").stat().st_size > 0
