"""The Fortran particle-in-cell trace generator: the trace written, read back, holds exactly
the calls of its truth (order, counts per rank, trip counts drawn, calls without call site),
and the .pcf labels its functions as Extrae does for a gfortran binary."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from phasekit.errors import UsageError
from phasekit.io.paraver import read_paraver
from phasekit.synth.fortran import (
    PIC_RANKS,
    fortran_pic,
    pic_suite,
    structure_truth,
    write_fortran_pic,
)
from phasekit.synth.traces import Call, Loop, Program, simulate, write_paraver

HALO_BYTES = {1: 3 * 512 * 8, 4: 3 * 256 * 8, 16: 3 * 128 * 8}  # 3 ghost cells of doubles


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Path]]:
    folder = tmp_path_factory.mktemp("pic")
    return {n: write_fortran_pic(folder / f"pic-{n}.prv", n, seed=5) for n in PIC_RANKS}


def unrolled(body: tuple[Call | Loop, ...], drawn: dict[str, list[int]]) -> list[tuple[str, str]]:
    """The (call, "file:line" or "") sequence every rank makes, walking the nest naively with
    the trip counts the truth says were drawn."""
    out: list[tuple[str, str]] = []
    starts: Counter[str] = Counter()

    def walk(nodes: tuple[Call | Loop, ...]) -> None:
        for node in nodes:
            if isinstance(node, Call):
                out.append((node.name, node.path[-1].split("@")[1] if node.path else ""))
                continue
            count = drawn[node.name][starts[node.name]] if node.name in drawn \
                else node.iterations
            starts[node.name] += 1
            for _ in range(count):
                walk(node.body)

    walk(body)
    return out


def entry_records(prv: Path) -> list[dict[str, str]]:
    """The type:value pairs of every MPI entry record of a .prv, read as plain text."""
    out = []
    with open(prv) as fh:
        for line in fh:
            fields = line.rstrip("\n").split(":")
            if fields[0] != "2":
                continue
            pairs = dict(zip(fields[6::2], fields[7::2], strict=True))
            if any(t.startswith("5000000") and v != "0" for t, v in pairs.items()):
                out.append(pairs)
    return out


@pytest.mark.parametrize("n_ranks", PIC_RANKS)
def test_every_rank_makes_the_calls_of_the_truth_in_order(
        written: dict[int, dict[str, Path]], n_ranks: int) -> None:
    paths = written[n_ranks]
    truth = json.loads(paths["truth"].read_text())
    drawn = {d["name"]: d["counts"] for d in truth["trip_counts"]}
    assert list(drawn) == ["particles"] and len(drawn["particles"]) == 10
    assert all(58 <= c <= 66 for c in drawn["particles"]) and len(set(drawn["particles"])) > 1
    expected = unrolled(fortran_pic(n_ranks).body, drawn)
    trace = read_paraver(paths["prv"])
    calls = trace.calls
    assert trace.n_ranks == n_ranks
    for rank in range(n_ranks):
        mine = calls[calls["rank"] == rank].sort_values("time_s")
        assert list(zip(mine["call"].astype(str), mine["call_site"].astype(str),
                        strict=True)) == expected
    counts = trace.call_counts()
    particles = sum(drawn["particles"])
    assert {name: set(counts[name]) for name in counts.columns} == {
        "MPI_Init": {1}, "MPI_Comm_size": {1}, "MPI_Comm_rank": {1}, "MPI_Bcast": {3},
        "MPI_Allreduce": {2 + 10 + particles + 1}, "MPI_Sendrecv": {4 + 10 * 3 * 4},
        "MPI_Finalize": {1}}


@pytest.mark.parametrize("n_ranks", PIC_RANKS)
def test_calls_without_call_site_have_no_caller_events(
        written: dict[int, dict[str, Path]], n_ranks: int) -> None:
    records = entry_records(written[n_ranks]["prv"])
    sendrecv = [r for r in records if r.get("50000001") == "41"]
    others = [r for r in records if r.get("50000001") != "41"]
    assert len(sendrecv) == n_ranks * 124 and others
    assert not any(t.startswith(("7000000", "8000000")) for r in sendrecv for t in r)
    assert all("70000001" in r and "80000001" in r for r in others)
    calls = read_paraver(written[n_ranks]["prv"]).calls
    siteless = (calls["call"] == "MPI_Sendrecv").to_numpy()
    assert (calls["call_path"].astype(str)[siteless] == "").all()
    assert (calls["call_path"].astype(str)[~siteless] != "").all()


@pytest.mark.parametrize("n_ranks", PIC_RANKS)
def test_each_sendrecv_exchanges_a_halo_with_grid_neighbours(
        written: dict[int, dict[str, Path]], n_ranks: int) -> None:
    side = int(np.sqrt(n_ranks))
    with open(written[n_ranks]["prv"]) as fh:
        comms = [line.split(":") for line in fh if line.startswith("3:")]
    assert len(comms) == n_ranks * 124  # one message sent per MPI_Sendrecv
    for record in comms:
        a, b = int(record[3]) - 1, int(record[9]) - 1
        dx, dy = (b % side - a % side) % side, (b // side - a // side) % side
        assert (dx, dy) in {(1 % side, 0), (-1 % side, 0), (0, 1 % side), (0, -1 % side)}
        assert int(record[13]) == HALO_BYTES[n_ranks]
    calls = read_paraver(written[n_ranks]["prv"]).calls
    sent_and_received = calls.loc[calls["call"] == "MPI_Sendrecv", "bytes"]
    assert set(sent_and_received) == {2 * HALO_BYTES[n_ranks]}


def caller_values(pcf: str, first_type: int) -> dict[int, str]:
    """The VALUES of the .pcf's EVENT_TYPE block that declares ``first_type``."""
    block = pcf.split(f"0    {first_type}    ", 1)[1].split("VALUES\n", 1)[1].split("\n\n")[0]
    return {int(i): label for i, label in (line.split(None, 1) for line in block.splitlines())}


def test_the_pcf_labels_fortran_functions_as_extrae_does(
        written: dict[int, dict[str, Path]]) -> None:
    pcf = written[4]["pcf"].read_text()
    functions = caller_values(pcf, 70000001)
    lines = caller_values(pcf, 80000001)
    assert functions[0] == "End" and functions[1] == "Unresolved" and functions[2] == "_NOT_Found"
    assert lines[1] == "0 (Unresolved)" and lines[2] == "0 (_NOT_Found)"
    labels = set(functions.values())
    assert {"MAIN__", "__mpi_ro..mal_init [__mpi_routines_MOD_mpi_minimal_init]",
            "__curren.._current [__current_smooth_MOD_smooth_current]",
            "__deck_M..ead_deck [__deck_MOD_read_deck]"} <= labels
    for label in labels - {"End"}:
        short, _, full = label.partition(" [")
        if full:  # 18 characters or more: 8 first, "..", 8 last
            full = full.rstrip("]")
            assert len(full) >= 18 and short == f"{full[:8]}..{full[-8:]}"
            assert re.fullmatch(r"__[a-z_]+_MOD_[a-z_]+", full)
        else:
            assert len(label) < 18
    assert "31 (current_smooth.F90, epoch2d)" in lines.values()
    assert "150 (epoch2d.F90" not in pcf  # a loop statement is no call site
    assert all(re.fullmatch(r"\d+ \([\w.]+\.F90, epoch2d\)", label)
               for i, label in lines.items() if i > 2)


def test_the_truth_keeps_the_source_names(written: dict[int, dict[str, Path]]) -> None:
    text = written[4]["truth"].read_text()
    assert "_MOD_" not in text and ".." not in text
    structure = json.loads(text)["structure"]
    sites = {(c["function"], c["site"]) for c in structure["calls"]}
    assert ("mpi_routines::mpi_minimal_init", "mpi_routines.F90:31") in sites
    assert ("current_smooth::smooth_current", "current_smooth.F90:31") in sites


def test_plain_labels_stay_the_default(tmp_path: Path) -> None:
    program = fortran_pic(4)
    trace = simulate(program, seed=0)
    default = write_paraver(program, tmp_path / "default.prv", trace=trace)
    fortran = write_paraver(program, tmp_path / "fortran.prv", trace=trace,
                            names="extrae-fortran")
    assert default["prv"].read_bytes() != fortran["prv"].read_bytes()  # value ids shift by 2
    plain = caller_values(default["pcf"].read_text(), 70000001)
    assert "mpi_routines::mpi_minimal_init" in plain.values()
    assert not any("Unresolved" in label or "[" in label for label in plain.values())
    with pytest.raises(UsageError, match="names='extrae': expected one of plain"):
        write_paraver(program, "t.prv", trace=trace, names="extrae")


@pytest.mark.parametrize("n_ranks", PIC_RANKS)
def test_the_truth_says_the_nest_the_main_loop_and_the_calls_made_once(n_ranks: int) -> None:
    truth = structure_truth(fortran_pic(n_ranks))
    main = truth.main_loop
    assert (main.name, main.iterations, main.function, main.site) == \
        ("time step", (10, 10), "MAIN__", "epoch2d.F90:150")
    assert [(loop.name, loop.parent, loop.iterations, loop.varies) for loop in truth.loops] == [
        ("species set-up", None, (2, 2), False), ("time step", None, (10, 10), False),
        ("particles", "time step", (58, 66), True),
        ("field exchange", "time step", (3, 3), False)]
    assert [(c.call, c.site) for c in truth.once("set-up")] == [
        ("MPI_Init", "mpi_routines.F90:31"), ("MPI_Comm_size", "mpi_routines.F90:33"),
        ("MPI_Comm_rank", "mpi_routines.F90:34"), ("MPI_Bcast", "deck.F90:212"),
        ("MPI_Bcast", "deck.F90:230"), ("MPI_Bcast", "deck.F90:247")] + \
        [("MPI_Sendrecv", "")] * 4
    assert [(c.call, c.function) for c in truth.once("finalization")] == [
        ("MPI_Allreduce", "timer::timer_summary"), ("MPI_Finalize", "mpi_routines::mpi_close")]
    assert [(c.place, c.loop) for c in truth.siteless] == \
        [("set-up", None)] * 4 + [("main loop", "field exchange")] * 4
    assert truth.loop("field exchange").calls == ("MPI_Sendrecv (no call site)",) * 4
    assert all(c.ranks == tuple(range(n_ranks)) for c in truth.calls)
    assert sorted(pic_suite()) == ["fortran-pic-1", "fortran-pic-16", "fortran-pic-4"]


def test_a_varying_trip_count_is_drawn_per_start_of_the_loop() -> None:
    allreduce = Call("MPI_Allreduce", ("main@v.c:3",), bytes=8)
    program = Program("varying", 2, (Loop(6, (Loop(range(2, 5), (allreduce,), name="in"),),
                                          name="out"),
                                     Loop(4, (Loop((1, 3), (allreduce,)),))))
    trace = simulate(program, seed=1)
    trips = trace.extra["trip_counts"]  # in the order of program.loops()
    drawn, cycled = trips[1], trips[3]
    assert trips[0] == [6] and trips[2] == [4]
    assert len(drawn) == 6 and set(drawn) <= {2, 3, 4} and len(set(drawn)) > 1
    assert cycled == [1, 3, 1, 3]
    assert np.bincount(trace.rank).tolist() == [sum(drawn) + 8] * 2
    assert simulate(program, seed=1).extra["trip_counts"] == trace.extra["trip_counts"]
    inner = program.outline()[0][2][0]
    assert inner[:2] == ("loop", (2, 4))
    assert program.loops()[1].to_dict()["iterations"] == {"min": 2, "max": 4}


@pytest.mark.parametrize(("iterations", "message"), [
    (range(0, 3), "at least one iteration"), ((2, 0), "at least one iteration"),
    ((), "at least one iteration"), (2.5, "a count, a range or a tuple"),
    ("3", "a count, a range or a tuple")])
def test_bad_trip_counts_are_usage_errors(iterations: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        Loop(iterations, (Call("MPI_Barrier", ()),))


def test_bad_rank_counts_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="n_ranks=0: expected a positive number"):
        fortran_pic(0)
    assert [p.n_ranks for p in map(fortran_pic, (2, 6))] == [2, 6]  # any grid
