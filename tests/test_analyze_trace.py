"""``phasekit analyze TRACE``: the counters of an MPI trace analyzed as a profile, each
pattern tied to the loop of the program that makes it, the counters folded over its
instances; and the IPC fallback when a run's IPC is flat."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from matplotlib.image import imread

import phasekit as pk
from helpers import DATA, run
from phasekit.periodicity import analyze
from phasekit.profile import Profile

LULESH = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"


def test_the_lulesh_trace_names_its_main_loop_and_draws_the_fold(tmp_path: Path) -> None:
    """The trace's truth: the main loop runs 2 iterations of about 0.32-0.35 s; structure
    finds it as loop 0, entered at lulesh.cc:1158 (CommSend in CalcForceForNodes)."""
    figure, saved = tmp_path / "fold.png", tmp_path / "r.json"
    code, out, err = run("analyze", LULESH, "--fold", figure, "-o", saved)
    assert code == 0, err
    loop = next(line for line in out.splitlines() if line.startswith("loop: "))
    assert "is loop 0 (2 iterations of 0.3" in loop and "lulesh.cc:1158" in loop
    assert any(line.startswith("folded: ") for line in out.splitlines())
    assert float(imread(figure).std()) > 0
    result = json.loads(saved.read_text())
    (link,) = result["params"]["loops"]
    assert link["loop"] == 0 and 0.30 < link["iteration_time_s"] < 0.36
    assert abs(result["patterns"][0]["period_s"] - link["iteration_time_s"]) < 0.05
    code, out, err = run("analyze", LULESH, "--no-loops")
    assert code == 0 and "loop: " not in out, err


def test_python_links_the_loops_of_a_trace_as_the_command_line_does() -> None:
    result = pk.periodicity(LULESH)
    assert [link["loop"] for link in result.params["loops"]] == [0]
    assert "loops" not in pk.periodicity(LULESH, loops=False).params


def test_a_flat_ipc_gives_way_to_the_most_periodic_other_metric() -> None:
    """IPC is the default metric (Phase-TA IV-A); when it is flat (instructions and cycles in
    a constant ratio) and another counter repeats, that counter is analyzed and the choice
    says why."""
    t = np.arange(0, 60, 0.05)
    rng = np.random.default_rng(0)
    cycles = 1e9 + 1e6 * rng.standard_normal(t.size)
    memory = 1e6 * (1.5 + np.sign(np.sin(2 * np.pi * t / 2.0))) + 1e4 * rng.standard_normal(t.size)
    profile = Profile(values=np.column_stack([2 * cycles, cycles, memory]), period=0.05,
                      metrics=("instructions", "cycles", "dram_rd"))
    result = analyze(profile)
    choice = result.params["metric_choice"]
    assert result.metrics == ("dram_rd",) and choice["reason"].startswith("ipc shows no period")
    assert abs(result.patterns[0].period_s - 2.0) < 0.1
    assert not analyze(profile, metrics=["ipc"]).patterns  # named: IPC it is


def test_summary_carries_the_headline_the_scales_and_the_missing_data() -> None:
    """What a Python user reads from ``summary()``: the same headline as the command line,
    every scale, and the analyzed metric's missing data (here a 30 s hole)."""
    from phasekit.synth.nested import generate_nested

    profile, _truth = generate_nested(inner_s=1.0, repeats=5, minutes=3.0, period=0.05, seed=1)
    values = profile.values.copy()
    values[1200:1800] = np.nan
    result = analyze(profile.replace(values=values))
    table = result.summary()
    assert table.attrs["headline"] == result.present().headline
    assert len(table.attrs["scales"]) == len(result.scales) >= 2
    assert table.attrs["measured"] < 0.9 and "no value for 30 s" in table.attrs["missing_data"]
