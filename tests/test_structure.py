"""Loop structure from MPI traces (Martínez Vera): exact structure on the generated suite,
the real LULESH and OTF2 ping-pong fixtures, the reduction against a naive reference, the
diagnostics (aliasing, split, calls outside the structure), the JSON contract and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers import DATA
from phasekit.cli import main
from phasekit.errors import UsageError
from phasekit.io import read_trace
from phasekit.structure import outline, structure
from phasekit.structure.pseudocode import format_count, format_ranks
from phasekit.structure.ranks import _merge
from phasekit.structure.reduce import reduce_trace
from phasekit.synth.traces import SUITE, Call, Loop, Program, write_paraver
from phasekit.trace import Trace, make_calls

LULESH = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
PING_PONG = [DATA / "otf2" / "ping-pong-otf2" / "traces.otf2",
             DATA / "otf2" / "ping-pong-otf2-papi" / "traces.otf2"]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Path]:
    """Every suite program written as Paraver with seeds 0 and 1."""
    root = tmp_path_factory.mktemp("suite")
    return {(name, seed): write_paraver(program, root / f"{name}-{seed}.prv", seed=seed)["prv"]
            for name, program in SUITE.items() for seed in (0, 1)}


def test_the_suite_has_at_least_15_shapes() -> None:
    assert len(SUITE) >= 15
    assert len({program.outline() for program in SUITE.values()}) == len(SUITE)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(SUITE))
def test_exact_structure_of_generated_programs(written: dict[tuple[str, int], Path],
                                               name: str, seed: int) -> None:
    result = structure(read_trace(written[(name, seed)]))
    assert outline(result.body, result.reduction) == SUITE[name].outline()


def test_test2_pseudocode_reads_like_the_slides(written: dict[tuple[str, int], Path]) -> None:
    result = structure(read_trace(written[("test-2", 0)]))
    lines = [(row["LINE"], row["PSEUDOCODE"].replace(": ", "").strip()) for row in result.table()]
    texts = [text for _, text in lines]
    assert texts[:5] == ["main()", "FOR 1 TO 10 [id=0]", "FOR 1 TO 2 [id=1]", "CommSend()",
                         "IF rank in [1]"]
    assert ("42", "CommSend()") in lines and ("44", "CommRecv()") in lines
    assert ("14", "MPI_Send") in lines and ("25", "MPI_Recv") in lines
    assert texts.count("END LOOP") == 3 and texts[-2:] == ["MPI_Barrier", "END LOOP"]
    assert result.diagnostics == []
    inner = result.top_loops[0].children
    assert sorted(round(loop.iterations_per_outer) for loop in inner) == [2, 5]
    # iteration time of the 2-iteration loop: its bursts are 2 ms (program), noise 5 %
    two = next(loop for loop in inner if loop.it == 20)
    assert two.iteration_time_s() == pytest.approx(2e-3 + 2e-5 + 2e-5, rel=0.1)


def test_lulesh_main_loop_has_two_iterations() -> None:
    result = structure(read_trace(LULESH))
    top = result.top_loops
    assert len(top) == 1 and top[0].it == 2
    assert set(top[0].all_ranks()) == set(range(8))
    assert "FOR 1 TO 2 [id=0]" in [row.text for row in result.rows]
    # the rank-specific neighbour exchanges become IF blocks
    assert any(row.text.startswith("IF rank in") for row in result.rows)


@pytest.mark.parametrize("path", PING_PONG, ids=lambda p: p.parent.name)
def test_otf2_ping_pong_loop_of_eight(path: Path) -> None:
    result = structure(read_trace(path))
    top = result.top_loops
    assert len(top) == 1 and top[0].it == 8 and top[0].children == []
    body = outline(result.body, result.reduction)
    assert [item[1] for item in body if item[0] == "call"] == [
        "MPI_Init", "MPI_Comm_size", "MPI_Comm_rank", "MPI_Finalize"]
    loop = next(item for item in body if item[0] == "loop")
    assert body.index(loop) == 3
    # rank 0 sends then receives, rank 1 receives then sends: one conditional block each side
    made = {(call, ranks) for _, call, _, ranks in loop[2]}
    assert made == {("MPI_Send", (0,)), ("MPI_Recv", None), ("MPI_Send", (1,))}


def test_reduction_matches_a_naive_count(written: dict[tuple[str, int], Path]) -> None:
    trace = read_trace(written[("cg", 0)])
    red = reduce_trace(trace)
    calls = trace.calls
    codes, _ = trace.signatures()
    for e in range(red.n_entries):
        rows = calls[(calls["rank"] == red.rank[e]).to_numpy() & (codes == red.signature[e])]
        times = rows["time_s"].to_numpy()
        assert red.it[e] == len(rows)
        assert np.array_equal(red.timestamps(e), times)
        gaps = np.diff(times)
        assert red.imt[e] == pytest.approx(gaps.mean())
        assert red.delta[e] == pytest.approx(len(times) * gaps.mean() / trace.duration_s)
        assert red.sum_duration[e] == pytest.approx(rows["duration_s"].sum())
        assert red.sum_ipc[e] / red.n_ipc[e] == pytest.approx(rows["burst_ipc"].mean())


def _calls(rank: list[int], time: list[float], site: list[int]) -> Trace:
    n = len(rank)
    labels = [f"f.c:{s}" for s in sorted(set(site))]
    codes = np.array([labels.index(f"f.c:{s}") for s in site])
    frame, counters = make_calls(
        rank=np.array(rank), thread=np.zeros(n), time_s=np.array(time),
        duration_s=np.full(n, 1e-5), call=(np.zeros(n, np.int64), ["MPI_Allreduce"]),
        call_path=(np.zeros(n, np.int64), ["main"]), call_lines=(codes, labels),
        call_site=(codes, labels), bytes=np.full(n, 8.0), burst_duration_s=np.full(n, 1e-3),
        counters={})
    return Trace(frame, max(rank) + 1, (1,) * (max(rank) + 1), max(time) + 1.0, counters)


@pytest.mark.parametrize(("frame", "shown"), [
    ("main", "main()"), ("int main(int, char**)", "int main(int, char**)"),
    ("A::step(double) const", "A::step(double) const"),
    ("(anonymous namespace)::solve", "(anonymous namespace)::solve()")])
def test_a_demangled_name_keeps_its_own_parameter_list(frame: str, shown: str) -> None:
    """``int main(int, char**)`` is not written ``int main(int, char**)()``."""
    n = 30
    codes = np.zeros(n, np.int64)
    calls, counters = make_calls(
        rank=np.zeros(n, np.int64), thread=np.zeros(n), time_s=np.arange(n, dtype=float),
        duration_s=np.full(n, 1e-5), call=(codes, ["MPI_Allreduce"]),
        call_path=(codes, [frame]), call_lines=(codes, ["f.c:10"]),
        call_site=(codes, ["f.c:10"]), bytes=np.full(n, 8.0),
        burst_duration_s=np.full(n, 1e-3), counters={})
    result = structure(Trace(calls, 1, (1,), n + 1.0, counters))
    assert result.table()[0]["PSEUDOCODE"] == shown


def test_calls_repeating_unequally_in_one_loop_are_reported() -> None:
    # two calls in one loop; the second is skipped in two of the 30 iterations
    first = [float(k) for k in range(30)]
    second = [k + 0.5 for k in range(30) if k not in (7, 19)]
    trace = _calls([0] * 58, first + second, [10] * 30 + [12] * 28)
    result = structure(trace)
    assert len(result.loops) == 1
    assert any(note.startswith("cluster split: the calls of loop 0 repeat between 28 and 30")
               for note in result.diagnostics)


def test_parent_without_time_of_its_own_is_flagged_as_possible_split(tmp_path: Path) -> None:
    # FOR 10 { cheap call; FOR 2 { B; C } } reads the same as one loop of 20 with a call
    # every second iteration: the nest is reported as one reading of the trace
    program = Program("split-suspect", 2, (Loop(10, (
        Call("MPI_Barrier", ("main@s.c:5",), burst_s=1e-5),
        Loop(2, (Call("MPI_Allreduce", ("main@s.c:8",), burst_s=1e-3),
                 Call("MPI_Allreduce", ("main@s.c:9",), burst_s=1e-3))))),))
    result = structure(read_trace(write_paraver(program, tmp_path / "s.prv")["prv"]))
    assert outline(result.body, result.reduction) == program.outline()
    assert any(note.startswith("cluster split?: loop 1") for note in result.diagnostics)


def test_aliasing_is_undone_and_reported(written: dict[tuple[str, int], Path]) -> None:
    result = structure(read_trace(written[("alike-loops", 0)]))
    assert [loop.it for loop in result.top_loops] == [30, 30]
    assert any(note.startswith("cluster aliasing: loops 0, 1") for note in result.diagnostics)


def test_single_iteration_and_empty_traces(written: dict[tuple[str, int], Path],
                                           tmp_path: Path) -> None:
    result = structure(read_trace(written[("single-iteration", 0)]))
    assert result.loops == [] and "no loop found" in result.explanation
    assert [row.text for row in result.rows][-1] == "MPI_Allreduce"
    prv = tmp_path / "quiet.prv"
    prv.write_text("#Paraver (01/01/2024 at 10:00):1000_ns:1(1):1:1(1:1)\n"
                   "1:1:1:1:1:0:1000:1\n")
    with pytest.warns(UserWarning):
        empty = structure(read_trace(prv))
    assert empty.loops == [] and empty.rows == [] and "no MPI call" in empty.explanation
    assert empty.to_dict()["loops"] == []


def test_one_rank_only(written: dict[tuple[str, int], Path]) -> None:
    result = structure(read_trace(written[("test-2", 0)]), rank=1)
    assert not any(row.text.startswith("IF") for row in result.rows)
    assert [round(loop.iterations_per_outer) for loop in result.loops] != []
    assert {int(r) for loop in result.loops for r in loop.ranks} == {1}
    with pytest.raises(UsageError, match=r"^rank=5: not in this trace \(ranks 0 to 1\)"):
        structure(read_trace(written[("test-2", 0)]), rank=5)


def test_json_contract(written: dict[tuple[str, int], Path]) -> None:
    data = structure(read_trace(written[("two-phases", 0)])).to_dict()
    json.dumps(data)
    assert [loop["iterations"] for loop in data["loops"]] == [20, 40]  # program order
    for loop in data["loops"]:
        assert isinstance(loop["iterations"], int) and isinstance(loop["iteration_time_s"], float)
        assert loop["loops"] == [] and loop["calls"]
    assert data["loops"][0]["calls"][0]["call"] == "MPI_Bcast"
    assert data["loops"][1]["body"] == [{"call": 0}, {"call": 1}]
    nested = structure(read_trace(written[("nest-3", 0)])).to_dict()
    middle = nested["loops"][0]["loops"][0]
    assert (nested["loops"][0]["iterations"], middle["iterations"],
            middle["loops"][0]["iterations"]) == (4, 3, 5)
    assert middle["loops"][0]["iterations_total"] == 60


@pytest.mark.parametrize(("name", "rank", "main_id", "iterations", "where", "in_all"), [
    ("test-2", None, 0, 10, " in main() at test-2.c:", "3 loops in all, 1 at the top level"),
    ("test-2", 1, 0, 10, " in main() at test-2.c:", "rank 1; 3 loops in all"),
    # FOR 20 of short iterations, then FOR 40 of long ones: the second spans more time
    ("two-phases", None, 1, 40, "", "2 loops in all, 2 at the top level"),
    ("nest-3", None, 0, 4, "", "3 loops in all, 1 at the top level"),
])
def test_the_headline_names_the_main_loop(written: dict[tuple[str, int], Path], name: str,
                                          rank: int | None, main_id: int, iterations: int,
                                          where: str, in_all: str) -> None:
    result = structure(read_trace(written[(name, 0)]), rank=rank)
    headline = result.present().headline
    assert headline.startswith(f"main loop (id {main_id}){where}"), headline
    assert f": {iterations} iterations of " in headline and in_all in headline
    main = result.main_loop
    assert main is not None and main["id"] == main_id and main["iterations"] == iterations
    assert 0 < main["mpi_share"] < 1 and 0 < main["run_share"] <= 1
    assert result.to_dict()["main_loop"] == main_id
    assert result.summary().attrs["main_loop"]["id"] == main_id


def test_the_main_loop_facts_match_the_trace(written: dict[tuple[str, int], Path]) -> None:
    """Span, share in MPI and calls per iteration recomputed from the trace's calls."""
    trace = read_trace(written[("test-2", 0)])
    main = structure(trace).main_loop
    assert main is not None
    arrays = trace.arrays
    mpi = spanned = calls = 0.0
    for rank in range(trace.n_ranks):
        on = arrays["rank"] == rank
        times, durations = arrays["time_s"][on], arrays["duration_s"][on]
        inside = (times >= main["first_s"] - 1) & (times <= main["last_s"] + 1)
        first, last = times[inside].min(), times[inside].max()
        window = (times >= first) & (times <= last)
        mpi += durations[window].sum()
        spanned += last - first
        calls += window.sum()
    assert main["mpi_share"] == pytest.approx(mpi / spanned, rel=0.05)
    assert main["mpi_calls_per_iteration"] == pytest.approx(
        calls / trace.n_ranks / 10, rel=0.1)


def test_no_loop_headline_says_why(written: dict[tuple[str, int], Path]) -> None:
    result = structure(read_trace(written[("single-iteration", 0)]))
    assert result.present().headline == "no loop found: no MPI call repeats"
    assert result.main_loop is None and result.to_dict()["main_loop"] is None


def test_the_presentation_reads_the_same_from_json(written: dict[tuple[str, int], Path],
                                                   tmp_path: Path) -> None:
    from phasekit.structure import StructureResult

    result = structure(read_trace(written[("nest-3", 0)]))
    shown = result.present("nest.prv")
    pseudocode, loops = shown.views
    assert pseudocode.title == "Loop structure of nest.prv (4 ranks, 304 MPI calls)"
    assert [dict(zip(pseudocode.headers, row, strict=True)) for row in pseudocode.rows] == \
        result.table()
    assert [row[:4] for row in loops.rows] == [("0", "-", "4", "4"), ("1", "0", "3", "12"),
                                               ("2", "1", "5", "60")]
    assert shown.notes[0] == ("3 loops, 1 at the top level: id 0 with 4 iterations")
    again = StructureResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.present("nest.prv") == shown


def test_what_the_reader_said_is_a_note_not_saved(written: dict[tuple[str, int], Path],
                                                  tmp_path: Path) -> None:
    from phasekit.structure import StructureResult

    prv = tmp_path / "t.prv"
    prv.write_bytes(written[("test-2", 0)].read_bytes())  # no .pcf beside it
    with pytest.warns(UserWarning, match="numeric ids"):
        result = structure(read_trace(prv))
    notes = [n for n in result.present().notes if "numeric ids" in n]
    assert len(notes) == 1 and notes[0].startswith("note: no .pcf")
    again = StructureResult.from_dict(result.to_dict())
    assert again.reading_notes == () and "numeric ids" not in json.dumps(result.to_dict())


def test_calls_left_out_are_counted_in_the_notes(tmp_path: Path) -> None:
    # one call repeated 30 times over the run, one repeated 3 times in a burst at the start
    times = [float(k) for k in range(30)] + [0.001, 0.002, 0.003]
    trace = _calls([0] * 33, times, [10] * 30 + [12] * 3)
    result = structure(trace, min_explained=0.05)
    assert len(result.filtered) == 1
    note = next(n for n in result.present().notes if "left out" in n)
    # the burst comes after the loop's first call: during it, by place
    assert note == ("repeated calls that explain less than 5% of the run each are left out "
                    "(min_explained): during the main loop, MPI_Allreduce at f.c:12 3 times "
                    "on 1 rank")


def test_calls_made_once_during_a_loop_are_counted_by_place() -> None:
    # a loop of 20 calls over the run on one rank; a call made once at t = 5.5, during it
    times = [float(k) for k in range(20)] + [5.5, 30.0]
    trace = _calls([0] * 22, times, [10] * 20 + [12, 13])
    result = structure(trace)
    assert len(result.unplaced) == 1
    notes = "\n".join(result.present().notes)
    assert "?" not in notes
    assert ("calls made once, during a loop but not in each of its iterations, are not in "
            "the pseudocode: during the main loop, ") in notes


def test_merge_orders_by_common_subsequence_then_source() -> None:
    send, recv, bar = ("call", 0), ("call", 1), ("call", 2)
    source = {send: (("a.c", 10),), recv: (("a.c", 12),), bar: (("a.c", 20),)}
    ping_pong = _merge([(frozenset({0}), [send, recv]), (frozenset({1}), [recv, send])], source)
    ranks_of = [(key, sorted(ranks)) for key, ranks in ping_pong]
    assert len(ranks_of) == 3 and sorted(ranks_of[1][1]) == [0, 1]
    even_odd = _merge([(frozenset({0, 2}), [recv, bar]), (frozenset({1, 3}), [send, bar])],
                      source)
    assert [key for key, _ in even_odd] == [send, recv, bar]  # send is written first
    assert even_odd[2][1] == frozenset({0, 1, 2, 3})


def test_formatting() -> None:
    assert format_ranks([0, 1, 2, 5, 7, 8]) == "[0-2, 5, 7-8]"
    assert format_ranks([3]) == "[3]"
    assert (format_count(2.0), format_count(2.5), format_count(4.98)) == ("2", "2.5", "5")


def test_cli_text_json_plot(written: dict[tuple[str, int], Path], tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    prv = written[("test-2", 0)]
    main(["structure", str(prv)])
    out = capsys.readouterr().out
    assert "FOR 1 TO 10 [id=0]" in out and "E(IPC)" in out and "MPI_Barrier" in out
    main(["structure", str(prv), "--json", "--plot", str(tmp_path / "c.png"),
          "-o", str(tmp_path / "r.json")])
    data = json.loads(capsys.readouterr().out)
    assert data["loops"][0]["iterations"] == 10
    assert [child["iterations"] for child in data["loops"][0]["loops"]] == [2, 5]
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    assert "clusters" in json.loads((tmp_path / "r.json").read_text())


def test_cli_bad_input(written: dict[tuple[str, int], Path], tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["structure", str(tmp_path / "run.csv")])
    assert info.value.code == 2 and "not a trace" in capsys.readouterr().err
    bad = tmp_path / "bad.prv"
    lines = written[("stencil", 0)].read_text().splitlines()
    lines[7] = lines[7][:5] + "x"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(SystemExit) as info:
        main(["structure", str(bad)])
    err = capsys.readouterr().err
    assert info.value.code == 3 and "line 8" in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as info:
        main(["structure", str(written[("stencil", 0)]), "--rank", "9"])
    assert info.value.code == 2


def test_cli_without_pcf_says_so(written: dict[tuple[str, int], Path], tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    prv = tmp_path / "t.prv"
    prv.write_bytes(written[("test-2", 0)].read_bytes())
    main(["structure", str(prv)])
    captured = capsys.readouterr()
    assert "numeric ids" in captured.out and "FOR 1 TO 10" in captured.out



class _Terminal:
    """A stdout that says it is a terminal, and keeps what is written."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("columns", [60, 80])
def test_a_narrow_terminal_cuts_names_and_pseudocode_never_numbers(
        columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import re
    import sys

    rows = structure(read_trace(LULESH)).table()
    terminal = _Terminal()
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(sys, "stdout", terminal)
    main(["structure", str(LULESH)])
    lines = re.sub(r"\x1b\[[0-9;]*m", "", "".join(terminal.parts)).splitlines()
    header = next(k for k, line in enumerate(lines) if "E(TIME)" in line)
    assert lines[header].split()[-3:] == ["E(TIME)", "E(SIZE)", "E(IPC)"]
    body = lines[header + 2: header + 2 + len(rows)]
    assert all(len(line) <= columns for line in body)
    for line, row in zip(body, rows, strict=True):
        cells = line.split()
        assert cells[-3:] == [row["E(TIME)"], row["E(SIZE)"], row["E(IPC)"]], line
        assert not row["LINE"] or row["LINE"] in cells, line


def test_compact_pseudocode_writes_a_neighbour_exchange_once() -> None:
    """LULESH makes one MPI_Isend per direction, each under its own IF rank in [...]: the
    compact pseudocode writes each run of them as one row naming every site; the full one
    keeps each block, and the sites the compact rows count are the full table's."""
    result = structure(read_trace(LULESH))
    compact, full = result.table(), result.table(full=True)

    def code(row: dict[str, str]) -> str:
        return row["PSEUDOCODE"].lstrip(": ")

    assert sum(code(r).startswith("IF rank") for r in full) > 50
    assert not any(code(r).startswith("IF rank") for r in compact)
    assert len(compact) <= 60 < len(full)
    grouped = [r for r in compact if " sites, lines " in code(r)]
    assert grouped and all(r["FILE"] == "lulesh-comm.cc" and r["LINE"].isdigit()
                           for r in grouped)
    first = grouped[0]
    n_sites, lines = (int(code(first).split(" at ")[1].split()[0]),
                      code(first).split("lines ")[1].split(":")[0])
    low, high = (int(x) for x in lines.split("-"))
    # the full table's Isend sites under IF blocks in the first CommSend, in that range
    start = next(i for i, r in enumerate(full) if code(r) == "CommSend()")
    end = next(i for i, r in enumerate(full) if i > start and code(r) == "MPI_Waitall")
    sites = {r["LINE"] for r in full[start:end] if code(r) == "MPI_Isend"}
    assert len(sites) == n_sites and min(map(int, sites)) == low and max(map(int, sites)) == high
    assert code(first).endswith("by neighbour")
    shown = str(result.present("lulesh.prv"))
    assert "--full shows each" in shown and "IF rank" not in shown
    assert "IF rank" in str(result.present("lulesh.prv", full=True))
