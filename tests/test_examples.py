"""Every script in examples/ (one for each capability) runs as a user would run it, and its
headline agrees with the truth of its data."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("[0-9]*.py"))
#: Examples that start an external program, and the markers that say which.
NEEDS = {"11_signature.py": (pytest.mark.needs_gcc, pytest.mark.needs_doxygen,
                             pytest.mark.needs_valgrind)}
#: The one example the quick subset (-m "not slow") runs.
QUICK = "01_periodicity.py"


def _number(pattern: str, out: str) -> tuple[str, ...]:
    found = re.search(pattern, out)
    assert found, f"no line matching {pattern!r} in the output:\n{out}"
    return found.groups()


def _periodicity(out: str) -> None:
    # LULESH DRAM reads: the period against the trace's MPI_Allreduce spacing (0.341 s)
    found, truth = map(float, _number(r"period found: ([\d.]+) s; iteration in the trace: "
                                      r"([\d.]+) s", out))
    assert truth == pytest.approx(0.341, abs=0.002)
    assert found == pytest.approx(truth, rel=0.05)


def _phases(out: str) -> None:
    # the real back-to-back recording: all 10 program changes within 1 s, few false ones
    found, total, false = map(int, _number(r"changes found: (\d+) of (\d+) within 1 s, "
                                           r"(\d+) false changes", out))
    assert total == 10 and found == total
    assert false <= 3  # as tests/test_phases_quality.py


def _structure(out: str) -> None:
    # LULESH: the main loop runs once per MPI_Allreduce (2), on all 8 ranks
    iterations, ranks, allreduces = _number(
        r"main loop: (\d+) iterations on ranks \[([\d, ]+)\]; MPI_Allreduce calls of rank 0: "
        r"(\d+)", out)
    assert int(iterations) == int(allreduces) == 2
    assert [int(r) for r in ranks.split(",")] == list(range(8))
    if "OTF2: not installed" not in out:
        assert int(_number(r"ping-pong loop: (\d+) iterations", out)[0]) == 8


def _energy(out: str) -> None:
    # 12 of 935 configurations measured: the choices' true regret stays small
    (regret,) = map(float, _number(r"mean true regret of the choices: ([\d.]+) %", out))
    assert regret < 15.0
    assert re.search(r"SuggestResult\(.*5 suggestions", out)


def _powermodel(out: str) -> None:
    # the Kepler slice: the linear model beats the mean power on the last 30 % in time
    model, mean = map(float, _number(r"test MAE ([\d.]+) W against ([\d.]+) W", out))
    assert model < 0.8 * mean


def _schedule(out: str) -> None:
    # no plan beats the lower bound; the best is close to it and saves energy on rr
    over, saving = map(float, _number(r"\(([-\d.]+) % over the lower bound .*energy "
                                      r"([-\d.]+) % below round robin", out))
    assert 0.0 <= over <= 10.0
    assert saving > 5.0


def _many_nodes(out: str) -> None:
    # the planted slow node, and only it, stands out for its period
    assert "patterns agree" in out
    outliers = dict(re.findall(r"^outlier (\w+): ([\w, ]+):", out, flags=re.MULTILINE))
    assert outliers == {"node00": "period"}
    assert "planted outliers: node00 (slow)" in out


def _report(out: str) -> None:
    path, results, figures = _number(r"report: (\S+) \((\d+) results, (\d+) figures", out)
    assert int(results) == 4 and int(figures) >= 4
    assert path.endswith("report.html")


def _recording(out: str) -> None:
    # a busy/idle child recorded here (1 s period by construction), found without a metric
    assert ": can measure" in out  # the sources that run here (perf-sw and proc on this VM)
    found, truth = map(float, _number(r"period found: ([\d.]+) s; the child's period: "
                                      r"([\d.]+) s", out))
    assert truth == 1.0
    assert found == pytest.approx(truth, rel=0.10)


def _phase_division(out: str) -> None:
    # the synthetic truth's 6 phases and their energy; the fingerprints group the programs
    k, truth_k, energy, truth_j, offset = _number(
        r"best division: (\d+) phases \(truth (\d+)\), ([\d.]+) J without the switch costs "
        r"against the truth's ([\d.]+) J .*breakpoints at most ([\d.]+) from", out)
    assert int(k) == int(truth_k) == 6
    assert float(energy) == pytest.approx(float(truth_j), rel=0.01)
    assert float(offset) <= 0.01
    blind, known = map(float, _number(r"by silhouette \(programs not used\), adjusted Rand "
                                      r"index with the 4 programs ([\d.]+); .*ARI ([\d.]+)",
                                      out))
    assert blind >= 0.9 and known >= 0.9


def _signature(out: str) -> None:
    # the simulated partial runs against the simulated full run (deterministic)
    time_error, instruction_error, energy_error, cr = map(float, _number(
        r"\(([\d.]+) % off\); instructions .*\(([\d.]+) % off\); energy ([\d.]+) % off; "
        r"the partial runs take 1/([\d.]+) of", out))
    assert "(simulated mode)" in out
    assert time_error < 5.0 and instruction_error < 2.0 and energy_error < 5.0
    assert cr > 3.0


CHECKS: dict[str, Callable[[str], None]] = {
    "01_periodicity.py": _periodicity,
    "02_phases.py": _phases,
    "03_structure.py": _structure,
    "04_energy.py": _energy,
    "05_powermodel.py": _powermodel,
    "06_schedule.py": _schedule,
    "07_many_nodes.py": _many_nodes,
    "08_report.py": _report,
    "09_recording.py": _recording,
    "10_phase_division.py": _phase_division,
    "11_signature.py": _signature,
}


def test_every_example_has_a_check() -> None:
    assert EXAMPLES, "no examples found"
    assert sorted(p.name for p in EXAMPLES) == sorted(CHECKS)


@pytest.mark.parametrize("script", [
    pytest.param(script, id=script.stem,
                 marks=(*NEEDS.get(script.name, ()),
                        *(() if script.name == QUICK else (pytest.mark.slow,))))
    for script in EXAMPLES])
def test_example_runs_and_agrees_with_the_truth(script: Path, tmp_path: Path) -> None:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout}\n{done.stderr}"
    CHECKS[script.name](done.stdout)
    written = {p.suffix for p in (tmp_path / "phasekit-examples").iterdir()}
    assert ".json" in written
    assert ".png" in written or ".html" in written
