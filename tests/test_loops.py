"""Periodic patterns linked to the loops that make them (phasekit.structure.link): on a
generated program whose two loops and their source lines are known, and on the LULESH
trace."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import phasekit as pk
from helpers import DATA
from phasekit.errors import UsageError
from phasekit.profile import Profile
from phasekit.structure import StructureResult
from phasekit.structure.api import link
from phasekit.structure.link import (
    LinkOptions,
    PatternLoop,
    link_patterns,
    loop_iterations,
    loop_sites,
)
from phasekit.synth.traces import Call, Loop, Program, write_paraver

LULESH = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"


def _call(name: str, *path: str, **kw: object) -> Call:
    return Call(name, tuple(path), **kw)  # type: ignore[arg-type]


#: Two loops one after the other: 60 iterations of about 0.1 s whose calls are made at
#: app.c lines 20, 22, 24, then 80 iterations of about 30 ms at lines 40, 42; each burst
#: with its own IPC, so the instructions advance at a known, uneven pace in an iteration.
SHAPES = Program("shapes", 4, (
    _call("MPI_Init", "main@app.c:5", burst_s=1e-3),
    Loop(60, (
        _call("MPI_Allreduce", "main@app.c:20", "step@solver.c:11", bytes=8, burst_s=40e-3,
              ipc=0.5),
        _call("MPI_Bcast", "main@app.c:22", "halo@solver.c:30", bytes=64, burst_s=10e-3,
              ipc=2.0),
        _call("MPI_Barrier", "main@app.c:24", burst_s=50e-3, ipc=1.0),
    )),
    Loop(80, (
        _call("MPI_Allreduce", "main@app.c:40", "norm@solver.c:50", bytes=8, burst_s=20e-3,
              ipc=1.5),
        _call("MPI_Barrier", "main@app.c:42", burst_s=10e-3, ipc=0.8),
    )),
    _call("MPI_Finalize", "main@app.c:60", burst_s=1e-3),
), noise=0.02, imbalance=0.0)


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory):
    """The trace of :data:`SHAPES`, its structure and the periodicity of its IPC at 5 ms."""
    path = tmp_path_factory.mktemp("loops") / "shapes.prv"
    write_paraver(SHAPES, path, seed=1)
    trace = pk.read(path)
    structure = pk.structure(trace)
    periodicity = pk.periodicity(trace.profile(bin_s=0.005), metrics=["ipc"])
    return trace, structure, periodicity


def test_each_pattern_is_the_loop_of_its_region(shapes) -> None:
    _, structure, periodicity = shapes
    loops = {r["id"]: r for r in structure.loop_records()}
    first = next(i for i, r in loops.items() if r["iterations"] == 60)
    second = next(i for i, r in loops.items() if r["iterations"] == 80)
    links = link_patterns(periodicity, structure)
    assert len(links) == len(periodicity.patterns) >= 2
    by_loop = {}
    for found in links:
        assert found.loop in (first, second), found.sentence
        by_loop.setdefault(found.loop, found)
    one, two = by_loop[first], by_loop[second]
    assert one.period_s == pytest.approx(0.1, rel=0.05) and one.multiple == 1.0
    assert one.sites == ("app.c:20", "app.c:22", "app.c:24")
    assert one.mpi_sites == ("solver.c:11", "solver.c:30", "app.c:24")
    assert one.calls == ("MPI_Allreduce", "MPI_Bcast", "MPI_Barrier")
    assert two.sites == ("app.c:40", "app.c:42")
    assert one.overlap > 0.9 and two.overlap > 0.9
    assert one.sentence.startswith(f"pattern {links.index(one) + 1}, ")
    assert f"is loop {first} (60 iterations of " in one.sentence
    assert " at app.c:20 (and 2 more call sites): period within " in one.sentence


def test_a_pattern_in_another_loop_s_time_is_not_that_loop(shapes) -> None:
    """A pattern of loop 1's region, given loop 0's period: the period matches loop 0 but
    its instances lie outside loop 0's iterations."""
    _, structure, periodicity = shapes
    links = link_patterns(periodicity, structure)
    loops = {r["id"]: r for r in structure.loop_records()}
    index = next(k for k, found in enumerate(links) if loops[found.loop]["iterations"] == 80)
    other = next(i for i, r in loops.items() if r["iterations"] == 60)
    moved = dataclasses.replace(periodicity.patterns[index],
                                period_s=loops[other]["iteration_time_s"])
    patterns = list(periodicity.patterns)
    patterns[index] = moved
    hacked = dataclasses.replace(periodicity, patterns=tuple(patterns))
    found = link_patterns(hacked, structure)[index]
    assert found.loop != other


def test_multiples_and_no_match(shapes) -> None:
    _, structure, periodicity = shapes
    first = link_patterns(periodicity, structure)[0]
    iteration = first.iteration_time_s

    def with_period(period: float) -> PatternLoop:
        pattern = dataclasses.replace(periodicity.patterns[0], period_s=period)
        hacked = dataclasses.replace(periodicity, patterns=(pattern,))
        return link_patterns(hacked, structure)[0]

    twice = with_period(2 * iteration)
    assert twice.loop == first.loop and twice.multiple == 2.0
    assert f"spans 2 iterations of loop {first.loop}" in twice.sentence
    none = with_period(1.5 * iteration)
    assert none.loop is None and none.nearest is not None
    assert "matches no loop (nearest by period: loop" in none.sentence
    strict = link_patterns(dataclasses.replace(periodicity, patterns=(
        dataclasses.replace(periodicity.patterns[0], period_s=1.08 * iteration),)),
        structure, tolerance=0.05)[0]
    assert strict.loop is None


def test_a_structure_read_from_json_needs_the_trace_for_time(shapes) -> None:
    trace, structure, periodicity = shapes
    again = StructureResult.from_dict(json.loads(json.dumps(structure.to_dict())))
    alone = link_patterns(periodicity, again)
    assert all(found.overlap is None for found in alone)
    assert "matched by period alone" in alone[0].sentence
    timed = link_patterns(periodicity, again, trace)
    assert [f.to_dict() for f in timed] == [f.to_dict() for f in
                                           link_patterns(periodicity, structure)]
    with pytest.raises(UsageError) as caught:
        loop_iterations(again, 0)
    assert caught.value.parameter == "trace"


def test_loop_iterations_run_from_one_anchor_call_to_the_next(shapes) -> None:
    trace, structure, _ = shapes
    loops = {r["id"]: r for r in structure.loop_records()}
    first = next(i for i, r in loops.items() if r["iterations"] == 60)
    its = loop_iterations(structure, first)
    assert len(its) == 59 * 4 and all(it.complete for it in its)
    every = loop_iterations(structure, first, complete=False)
    assert len(every) == 60 * 4
    calls = trace.calls
    allreduce = calls[(calls["call"] == "MPI_Allreduce") & (calls["call_site"] == "solver.c:11")
                      & (calls["rank"] == 0)]["time_s"].to_numpy()
    on_zero = [it for it in its if it.rank == 0]
    np.testing.assert_allclose([it.start_s for it in on_zero], allreduce[:-1])
    np.testing.assert_allclose([it.end_s for it in on_zero], allreduce[1:])
    with pytest.raises(UsageError) as caught:
        loop_iterations(structure, 99)
    assert caught.value.parameter == "loop_id"


def test_the_link_round_trips_through_json(shapes) -> None:
    _, structure, periodicity = shapes
    for found in link_patterns(periodicity, structure):
        again = PatternLoop.from_dict(json.loads(json.dumps(found.to_dict())))
        assert again == found and again.sentence == found.sentence


def test_options_and_keywords_are_one(shapes) -> None:
    _, structure, periodicity = shapes
    by_keywords = link_patterns(periodicity, structure, tolerance=0.2, min_overlap=0.3)
    by_options = link_patterns(periodicity, structure,
                               options=LinkOptions(tolerance=0.2, min_overlap=0.3))
    assert [f.to_dict() for f in by_keywords] == [f.to_dict() for f in by_options]
    with pytest.raises(UsageError) as caught:
        link_patterns(periodicity, structure, options=LinkOptions(), tolerance=0.2)
    assert caught.value.parameter == "options"
    with pytest.raises(TypeError, match="unexpected keyword argument 'tolerence'"):
        link_patterns(periodicity, structure, tolerence=0.2)
    for name, bad in (("tolerance", 0.0), ("tolerance", 0.5), ("min_overlap", 1.5)):
        with pytest.raises(UsageError) as caught:
            LinkOptions(**{name: bad})
        assert caught.value.parameter == name


def test_the_verb_reads_the_trace_file(shapes, tmp_path: Path) -> None:
    trace, structure, periodicity = shapes
    again = StructureResult.from_dict(structure.to_dict())
    found = link(periodicity, again, trace.sources[0])
    assert [f.to_dict() for f in found] == [f.to_dict() for f in
                                           link_patterns(periodicity, structure)]


# --- LULESH -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lulesh():
    """The LULESH trace, its structure and the periodicity of its DRAM reads (all memory
    controllers summed, 10 ms bins): one cycle of about 0.34 s."""
    trace = pk.read(LULESH)
    profile = trace.profile()
    reads = [m for m in profile.metrics if "CAS_COUNT:RD" in m]
    dram = Profile(np.nansum(profile.select(reads).values, axis=1), profile.period,
                   ("dram_rd",), meta=profile.meta)
    return trace, pk.structure(trace), pk.periodicity(dram)


def test_lulesh_s_dram_cycle_is_its_main_loop(lulesh) -> None:
    """The README: the main loop runs 2 iterations; the MPI_Allreduce spacing puts one at
    0.341 s. The DRAM cycle is that loop, whose MPI calls are made from CalcForceForNodes
    at lulesh.cc:1158 first (CommSend)."""
    _, structure, periodicity = lulesh
    (found,) = link_patterns(periodicity, structure)
    assert found.loop == 0 and found.iterations_total == 2
    assert found.iteration_time_s == pytest.approx(0.341, rel=0.02)
    assert found.sites[0] == "lulesh.cc:1158"
    assert "MPI_Allreduce" in found.calls
    assert found.period_s == pytest.approx(0.341, rel=0.05) and found.multiple == 1.0
    assert found.sentence.startswith(f"pattern 1, {found.period_s:.3g} s \u00d7 "
                                     f"{found.n_instances}, is loop 0 (2 iterations of ")
    assert " at lulesh.cc:1158 " in found.sentence
    assert found.overlap > 0.9
    path, lines = loop_sites(structure.loop_tree[0])[:2]
    assert len(path) == len(set(path)) and len(lines) == len(set(lines))
