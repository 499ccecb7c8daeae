"""Folding (phasekit.folding): counters averaged over the instances of a loop or a periodic
pattern recover the evolution inside one iteration; checked on a generated program whose
bursts (length and IPC) are known, on a profile built by hand and on the LULESH trace."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import phasekit as pk
from helpers import DATA
from phasekit.errors import UsageError
from phasekit.folding import FoldedResult, FoldOptions, api, fold, fold_loop, fold_pattern
from phasekit.folding.table import extremes
from phasekit.profile import Profile
from phasekit.results import REGISTRY, json_close
from phasekit.structure.link import loop_iterations
from phasekit.synth.traces import Call, Loop
from test_loops import SHAPES

LULESH = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("fold") / "shapes.prv"
    from phasekit.synth.traces import write_paraver

    write_paraver(SHAPES, path, seed=1)
    trace = pk.read(path)
    structure = pk.structure(trace)
    first = next(r["id"] for r in structure.loop_records() if r["iterations"] == 60)
    return trace, structure, first


def _expected_share(loop: Loop, clock_hz: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The instructions' cumulative share within an iteration that starts at the entry of
    the loop's first call: the bursts of the other calls in order, then the first call's own
    burst (the MPI calls themselves take microseconds). Returns the burst boundaries
    (fractions of the iteration), the share at them and each burst's IPC."""
    calls = [c for c in loop.body if isinstance(c, Call)]
    order = [*calls[1:], calls[0]]
    time = np.array([c.burst_s for c in order])
    instructions = time * clock_hz * np.array([c.ipc for c in order])
    edges = np.r_[0.0, np.cumsum(time)] / time.sum()
    share = np.r_[0.0, np.cumsum(instructions)] / instructions.sum()
    return edges, share, np.array([c.ipc for c in order])


def test_the_fold_recovers_the_known_shape_of_an_iteration(shapes) -> None:
    trace, structure, first = shapes
    result = fold_loop(trace, structure, first)
    assert result.n_instances == 59 * 4 and set(result.ranks.tolist()) == {0, 1, 2, 3}
    loop = next(n for n in SHAPES.body if isinstance(n, Loop) and n.iterations == 60)
    edges, share, ipcs = _expected_share(loop, SHAPES.clock_hz)
    instructions = result.curve("instructions")
    expected = np.interp(result.positions, edges, share)
    assert np.max(np.abs(instructions.share["mean"] - expected)) < 0.03
    ipc = result.curve("ipc")
    middle = result.segments
    for lo, hi, level in zip(edges[:-1], edges[1:], ipcs, strict=True):
        inside = (middle > lo + 0.02) & (middle < hi - 0.02)
        np.testing.assert_allclose(ipc.level["mean"][inside], level, rtol=0.05)
    mpi = result.curve("mpi_share")  # little, and most in the collective that starts it
    assert mpi.total["mean"] < 0.05 and np.nanargmax(mpi.level["mean"]) < 2
    (start, _end, pace), _ = extremes(result, instructions)
    assert start < 0.05 and pace == pytest.approx(2 / 0.9, rel=0.1)  # the IPC 2 burst
    assert result.present().headline.startswith(
        f"59 iterations \u00d7 4 ranks of {result.duration_s['mean']:.3g} s folded (loop "
        f"{first} at app.c:20): the busiest tenth, ")
    assert result.duration_s["mean"] == pytest.approx(0.1, rel=0.05)


def test_a_trace_folds_finer_than_its_profile(shapes) -> None:
    """One rank's iterations folded from the trace see the 10 ms burst of IPC 2; folded from
    the 50 ms bins of its profile, they cannot."""
    trace, structure, first = shapes
    spans = [(it.start_s, it.end_s) for it in loop_iterations(structure, first)
             if it.rank == 0]
    fine = fold(trace, spans, ranks=[0], metrics=["ipc"])
    coarse = fold(trace.profile(bin_s=0.05, ranks=[0]), spans, metrics=["ipc"])
    assert np.nanmax(fine.curve("ipc").level["mean"]) > 1.9
    assert np.nanmax(coarse.curve("ipc").level["mean"]) < 1.6
    assert fine.source["resolution"] == "burst" and coarse.source["resolution"] == "0.05 s bin"
    assert any("folded from a profile of 0.05 s bins" in note for note in coarse.notes)


def test_all_ranks_summed_is_the_sum_of_each_rank(shapes) -> None:
    trace, structure, first = shapes
    span = loop_iterations(structure, first)[5]
    whole = fold(trace, [(span.start_s, span.end_s)], metrics=["instructions"])
    parts = [fold(trace, [(span.start_s, span.end_s, r)], metrics=["PAPI_TOT_INS"])
             for r in range(4)]
    total = sum(p.curve("instructions").total["mean"] for p in parts)
    assert whole.curve("instructions").total["mean"] == pytest.approx(total, rel=1e-9)


def test_a_profile_folds_its_counts_and_levels() -> None:
    """A count of 1 per second with a burst of 5 in the middle fifth of each 10 s period,
    and a level that is 2 there and 1 elsewhere."""
    counts = np.tile([1, 1, 1, 1, 5, 5, 1, 1, 1, 1], 6).astype(float)
    level = np.where(counts > 1, 2.0, 1.0)
    profile = Profile(np.column_stack([counts, level]), 1.0, ("work", "power"),
                      units={"power": "W"})
    result = fold(profile, [(10.0 * k, 10.0 * k + 10) for k in range(6)], points=11)
    work = result.curve("work")
    assert work.kind == "count" and work.n_instances == 6
    np.testing.assert_allclose(work.share["mean"][[4, 6]], [4 / 18, 14 / 18])
    np.testing.assert_allclose(work.pace["mean"][4:6], 5 * 10 / 18)
    assert work.total["median"] == 18.0
    power = result.curve("power")
    assert power.kind == "ratio"
    np.testing.assert_allclose(power.level["mean"], level[:10])
    with pytest.raises(UsageError) as caught:
        fold(profile, [(0.0, 10.0, 1)])
    assert caught.value.parameter == "iterations"


def test_bad_spans_and_metrics_name_their_parameter(shapes) -> None:
    trace, _, _ = shapes
    for spans in ([], [(1.0, 1.0)], [(2.0, 1.0)], [(0.0, 1.0, 9)], [("a", 1.0)]):
        with pytest.raises(UsageError) as caught:
            fold(trace, spans)
        assert caught.value.parameter == "iterations", spans
    with pytest.raises(UsageError) as caught:
        fold(trace, [(0.0, 1.0)], metrics=["nope"])
    assert caught.value.parameter == "metrics"
    with pytest.raises(UsageError) as caught:
        fold(trace, [(1e6, 1e6 + 1)])
    assert caught.value.parameter == "iterations"
    some = fold(trace, [(1.0, 1.1), (1e6, 1e6 + 1)], metrics=["cycles"])
    assert some.n_instances == 1 and "1 of 2 spans reach outside" in some.notes[0]


def test_options_and_keywords_are_one(shapes) -> None:
    trace, _, _ = shapes
    spans = [(1.0, 1.1), (1.1, 1.2)]
    assert fold(trace, spans, points=20).to_dict() == \
        fold(trace, spans, options=FoldOptions(points=20)).to_dict()
    assert fold(trace, spans, points=20).positions.size == 20
    with pytest.raises(UsageError) as caught:
        fold(trace, spans, options=FoldOptions(), points=20)
    assert caught.value.parameter == "options"
    with pytest.raises(TypeError, match="unexpected keyword argument 'pionts'"):
        fold(trace, spans, pionts=20)
    for bad in (2, 10**6, 2.5):
        with pytest.raises(UsageError) as caught:
            FoldOptions(points=bad)
        assert caught.value.parameter == "points"


def test_the_result_saves_loads_summarizes_and_plots(shapes, tmp_path: Path) -> None:
    trace, structure, first = shapes
    result = api.fold_loop(trace, structure, first, points=50)
    assert REGISTRY[result.KIND] == ("phasekit.folding.fold", "FoldedResult")
    again = pk.load(result.save(tmp_path / "folded.json"))
    assert isinstance(again, FoldedResult)
    assert json_close(again.to_dict(), json.loads(json.dumps(result.to_dict())))
    pd.testing.assert_frame_equal(again.summary(), result.summary(), check_dtype=False)
    assert again.present().to_text() == result.present().to_text()
    assert list(result.summary()["metric"][:3]) == ["instructions", "cycles", "ipc"]
    figure = again.plot()
    assert isinstance(figure, Figure) and len(figure.axes) == 3
    ax = Figure().add_subplot()
    assert again.plot(ax=ax) is ax.figure and ax.has_data()
    written = api.figure(result, tmp_path / "folded.png")
    assert written.stat().st_size > 0
    assert len(repr(result)) <= 300


def test_a_pattern_folds_over_its_instances(shapes) -> None:
    trace, _, _ = shapes
    profile = trace.profile(bin_s=0.005)
    periodicity = pk.periodicity(profile, metrics=["ipc"])
    main = max(range(len(periodicity.patterns)),
               key=lambda k: periodicity.patterns[k].n_instances
               * periodicity.patterns[k].period_s)
    folded = fold_pattern(trace, periodicity, main)
    pattern = periodicity.patterns[main]
    assert folded.n_instances == pattern.n_instances
    assert folded.duration_s["mean"] == pytest.approx(pattern.period_s, rel=1e-6)
    assert folded.metrics[0] == "ipc"  # the analysis's metric first
    ipc = folded.curve("ipc").level["mean"]
    assert np.nanmax(ipc) > 1.8 and np.nanmin(ipc) < 0.6  # the bursts of IPC 2 and 0.5
    assert folded.origin == {"of": "pattern", "pattern": main, "period_s": pattern.period_s,
                             "metrics": ["ipc"]}
    assert f"(pattern {main + 1}, period " in folded.present().headline
    with pytest.raises(UsageError) as caught:
        fold_pattern(trace, periodicity, 99)
    assert caught.value.parameter == "pattern"


# --- LULESH -----------------------------------------------------------------------------------
def test_lulesh_folds_one_iteration_per_rank() -> None:
    """The trace holds the main loop's 2 iterations: one complete per rank, 0.341 s apart
    (the MPI_Allreduce spacing). Each instance's instructions are the bursts of the calls
    made inside it, summed from the trace directly."""
    trace = pk.read(LULESH)
    result = api.fold_loop(trace)
    assert result.n_instances == 8 and sorted(result.ranks.tolist()) == list(range(8))
    assert result.duration_s["mean"] == pytest.approx(0.341, rel=0.02)
    calls = trace.calls
    direct = [np.nansum(calls["burst_instructions"][(calls["rank"] == r)
                                                  & (calls["time_s"] > a)
                                                  & (calls["time_s"] <= b)])
              for a, b, r in zip(result.starts, result.ends, result.ranks, strict=True)]
    assert result.curve("instructions").total["mean"] == pytest.approx(np.mean(direct),
                                                                       rel=1e-9)
    headline = result.present().headline
    assert headline.startswith("1 iteration \u00d7 8 ranks of 0.34")
    assert "(loop 0 at lulesh.cc:1158)" in headline
    assert any("24 counters sampled by the node on their own" in note
               for note in result.notes)
