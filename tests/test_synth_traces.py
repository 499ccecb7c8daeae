"""The synthetic MPI trace generator: the simulated calls follow the program's loop nest, and
the Paraver files written say exactly that (checked with a plain line-by-line reading)."""

from __future__ import annotations

import gzip
import itertools
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from phasekit.errors import UsageError
from phasekit.synth.traces import (
    MPI_CALLS,
    SUITE,
    Call,
    Loop,
    Program,
    simulate,
    write_paraver,
)


def expected_counts(program: Program) -> Counter[tuple[int, Call]]:
    """Calls per (rank, site), by walking the nest naively."""
    counts: Counter[tuple[int, Call]] = Counter()

    def walk(body: tuple[Call | Loop, ...], times: int) -> None:
        for node in body:
            if isinstance(node, Loop):
                walk(node.body, times * node.iterations)
            else:
                for rank in range(program.n_ranks):
                    if node.makes(rank):
                        counts[(rank, node)] += times

    walk(program.body, 1)
    return counts


@pytest.mark.parametrize("name", sorted(SUITE))
def test_simulated_calls_follow_the_loop_nest(name: str) -> None:
    program = SUITE[name]
    trace = simulate(program, seed=3)
    got = Counter((int(r), trace.sites[s]) for r, s in zip(trace.rank, trace.site, strict=True))
    assert got == expected_counts(program)
    for rank in range(program.n_ranks):
        mine = trace.rank == rank
        entry, leave = trace.entry_ns[mine], trace.exit_ns[mine]
        assert np.all(np.diff(entry) > 0) and np.all(leave > entry)
        assert np.all(entry[1:] >= leave[:-1])  # a rank makes one call at a time
        assert np.all(trace.burst_start_ns[mine][1:] == leave[:-1])


def test_collectives_synchronize_the_ranks() -> None:
    program = SUITE["two-phases"]
    trace = simulate(program, seed=0)
    barrier = next(i for i, s in enumerate(trace.sites) if s.name == "MPI_Barrier")
    exits = np.sort(trace.exit_ns[trace.site == barrier].reshape(-1))
    per_instance = exits.reshape(-1, program.n_ranks)  # 40 instances, 4 ranks each
    spread = per_instance.max(axis=1) - per_instance.min(axis=1)
    assert per_instance.shape == (40, 4) and spread.max() < 1e4  # ns: the durations differ


def test_work_grows_every_iteration_when_asked() -> None:
    trace = simulate(SUITE["stencil-growing"], seed=0)
    waitall = next(i for i, s in enumerate(trace.sites) if s.name == "MPI_Waitall")
    rows = (trace.site == waitall) & (trace.rank == 0)
    burst = trace.entry_ns[rows] - trace.burst_start_ns[rows]
    slope = np.polyfit(np.arange(burst.size), burst / burst[0], 1)[0]
    assert 0.03 < slope < 0.05  # growth 0.04 per iteration


def read_prv(path: Path) -> list[list[str]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as fh:
        return [line.rstrip("\n").split(":") for line in fh]


@pytest.mark.parametrize("suffix", [".prv", ".prv.gz"])
def test_the_paraver_files_hold_every_call_with_its_path(tmp_path: Path, suffix: str) -> None:
    program = SUITE["test-2"]
    paths = write_paraver(program, tmp_path / f"t2{suffix}", seed=1)
    records = read_prv(paths["prv"])
    header = ":".join(records[0])
    assert header.startswith("#Paraver") and header.endswith(":1:2(1:1,1:1)")
    pcf = paths["pcf"].read_text()
    names = {str(v): n for n, (_t, v, _s) in MPI_CALLS.items()}
    lines = [r for r in records[1:] if r[0] in "123"]
    times = [int(r[5]) for r in lines]
    assert times == sorted(times)
    entries: Counter[tuple[int, str]] = Counter()
    exits = Counter()
    for r in lines:
        if r[0] != "2":
            continue
        pairs = dict(zip(r[6::2], r[7::2], strict=True))
        call_type = next(t for t in pairs if t.startswith("5000000"))
        if pairs[call_type] == "0":
            exits[int(r[3]) - 1] += 1
            continue
        entries[(int(r[3]) - 1, names[pairs[call_type]])] += 1
        assert int(pairs["42000050"]) > 0 and int(pairs["42000059"]) > 0
        levels = 1 if names[pairs[call_type]] == "MPI_Barrier" else 2  # main > CommSend
        assert {"70000001", "80000001"} <= set(pairs)
        assert ("80000002" in pairs) == (levels == 2)
    assert entries == {(1, "MPI_Send"): 70, (1, "MPI_Recv"): 70, (0, "MPI_Recv"): 70,
                       (0, "MPI_Send"): 70, (0, "MPI_Barrier"): 10, (1, "MPI_Barrier"): 10}
    assert exits == {0: 150, 1: 150}
    comms = [r for r in lines if r[0] == "3"]
    assert len(comms) == 140 and all(r[13] == "4" for r in comms)  # 4-byte messages
    assert {(r[3], r[9]) for r in comms} == {("2", "1"), ("1", "2")}
    for label in ("14 (test-2.c, test-2)", "CommSend", "MPI_Barrier", "PAPI_TOT_INS"):
        assert label in pcf
    assert paths["row"].read_text().count("THREAD 1.") == 2
    truth = json.loads(paths["truth"].read_text())
    assert truth["kind"] == "mpi-structure" and truth["body"][0]["iterations"] == 10
    assert [n["iterations"] for n in truth["body"][0]["body"][:2]] == [2, 5]


def test_bad_descriptions_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown MPI call"):
        Call("MPI_Frobnicate", ("main@a.c:1",))
    with pytest.raises(UsageError, match="function@file:line"):
        Call("MPI_Send", ("main:1",))
    with pytest.raises(UsageError, match="at least one iteration"):
        Loop(0, (Call("MPI_Barrier", ("main@a.c:1",)),))
    with pytest.raises(UsageError, match="no rank makes any call"):
        simulate(Program("none", 2, (Call("MPI_Barrier", ("main@a.c:1",), ranks=(5,)),)))
    with pytest.raises(UsageError, match=r"\.prv"):
        write_paraver(SUITE["test-2"], "trace.txt")


@pytest.mark.parametrize("name", ["test-2", "stencil-16", "master-worker"])
def test_chunked_writing_gives_the_same_records_in_time_order(name: str) -> None:
    from phasekit.synth import traces

    trace = simulate(SUITE[name], seed=3)
    frames: dict[str, int] = {}
    lines: dict[tuple[str, int], int] = {}
    for site in trace.sites:
        for function, file, line in (traces.parse_frame(f) for f in site.path):
            frames.setdefault(function, len(frames) + 1)
            lines.setdefault((file, line), len(lines) + 1)
    depth = max(len(site.path) for site in trace.sites)

    def records(chunk: int) -> list[tuple[int, ...]]:
        return [tuple(row[:k]) for fields, counts in
                traces._sorted_records(trace, frames, lines, depth, chunk=chunk)
                for row, k in zip(fields.tolist(), counts.tolist(), strict=True)]

    whole, chunked = records(10 ** 9), records(7)
    assert chunked == whole
    assert all(a[5] <= b[5] for a, b in itertools.pairwise(whole))
