"""The main loop's timeline (phasekit.structure.timeline) against the trace it came from:
iterations cut at the loop's anchor calls, their time in MPI recounted from the calls, the
grouping of many iterations, and the JSON round trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from figure_checks import figure_problems
from phasekit.io import read_trace
from phasekit.structure import StructureResult, structure
from phasekit.structure.timeline import loop_timeline, rank_calls
from phasekit.synth.traces import SUITE, write_paraver


@pytest.fixture(scope="module")
def test2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("timeline") / "test-2.prv"
    write_paraver(SUITE["test-2"], path)
    return path


def test_iterations_and_their_mpi_time_match_the_calls(test2: Path) -> None:
    """test-2 runs its main loop 10 times on each rank: 10 blocks per rank, each ending
    where the next starts, each holding a whole iteration (one closing barrier); each
    block's MPI share is the rank's MPI time in it (the calls starting in it, their own
    durations) over its length."""
    trace = read_trace(test2)
    result = structure(trace)
    main = result.timeline[0]
    assert main["id"] == result.main_loop["id"] and main["group"] == 1
    calls = trace.calls
    for rank, starts, ends, shares in zip(main["ranks"], main["starts"], main["ends"],
                                          main["mpi_share"], strict=True):
        assert len(starts) == 10 and np.all(np.diff(starts) > 0)
        assert ends[:-1] == starts[1:]
        mine = calls[calls["rank"] == rank]
        time, duration = mine["time_s"].to_numpy(), mine["duration_s"].to_numpy()
        for a, b, share in zip(starts, ends, shares, strict=True):
            inside = (time >= a) & (time < b)
            assert (mine["call"].to_numpy()[inside] == "MPI_Barrier").sum() == 1
            assert share == pytest.approx(duration[inside].sum() / (b - a), abs=1e-3)
    inner = {record["id"] for record in result.timeline[1:]}
    assert inner == {loop["id"] for loop in result.main_loop["loops"]}


def test_many_iterations_are_grouped_into_at_most_max_blocks(test2: Path) -> None:
    trace = read_trace(test2)
    result = structure(trace)
    loop = next(loop for loop in result.analysis.loops if loop.id == result.main_loop["id"])
    calls = rank_calls(*(np.asarray(trace.arrays[c]) for c in ("rank", "time_s", "duration_s")),
                       range(trace.n_ranks))
    full = loop_timeline(result.analysis.reduction, loop, calls)
    grouped = loop_timeline(result.analysis.reduction, loop, calls, max_blocks=3, max_ranks=1)
    assert grouped["group"] == 4 and len(grouped["ranks"]) == 1
    rank = grouped["ranks"][0]
    k = full["ranks"].index(rank)
    assert grouped["starts"][0] == full["starts"][k][0::4]
    assert grouped["ends"][0] == [full["ends"][k][i] for i in (3, 7, 9)]


def test_the_timeline_is_saved_and_drawn_from_the_json(test2: Path) -> None:
    result = structure(read_trace(test2))
    again = StructureResult.from_dict(result.to_dict())
    assert list(again.timeline) == list(result.timeline)
    fig = again.plot()
    assert figure_problems(fig) == []
    ax = fig.axes[0]
    assert ax.get_ylabel() == "rank" and "main loop" in ax.get_title(loc="left")
    scatter = again.plot(detail=True).axes[0]
    assert scatter.get_xscale() == "log"  # the clustering view on request
    old = {k: v for k, v in result.to_dict().items() if k != "timeline"}
    old["version"] = 3
    assert StructureResult.from_dict(old).plot().axes[0].get_xscale() == "log"
