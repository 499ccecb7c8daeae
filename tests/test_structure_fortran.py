"""The structure of a Fortran particle-in-cell code's trace, against the truth it was
generated with: the main loop named first with its exact iterations, loops nested as
generated, a varying trip count shown as its range, clean names and FILE/LINE, and every
call either in the pseudocode or counted by place in the notes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from phasekit.io import read_trace
from phasekit.structure import structure
from phasekit.synth.fortran import PIC_RANKS, write_fortran_pic
from phasekit.synth.traces import SUITE, write_paraver

MANGLED = re.compile(r"_MOD_|__\w|\.\.|_mp_|^_Z|_Q[MPF]|\?")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Path]]:
    folder = tmp_path_factory.mktemp("pic")
    return {n: write_fortran_pic(folder / f"pic-{n}.prv", n, seed=3) for n in PIC_RANKS}


def _loops(tree: list[dict], parent: int | None = None) -> list[dict]:
    out = []
    for loop in tree:
        out.append({**loop, "parent": parent})
        out.extend(_loops(loop.get("loops") or [], loop["id"]))
    return out


@pytest.mark.parametrize("n_ranks", PIC_RANKS)
def test_the_main_loop_and_the_nest_are_the_generated_ones(
        written: dict[int, dict[str, Path]], n_ranks: int) -> None:
    paths = written[n_ranks]
    truth = json.loads(paths["truth"].read_text())
    main_truth = next(loop for loop in truth["structure"]["loops"]
                      if loop["name"] == truth["structure"]["main_loop"])
    drawn = {d["name"]: d["counts"] for d in truth["trip_counts"]}["particles"]
    result = structure(read_trace(paths["prv"]))
    main = result.main_loop
    assert main is not None and main["iterations"] == main_truth["iterations"][0] == 10
    headline = result.present().headline
    assert headline.startswith(f"main loop (id {main['id']}) in MAIN__() at epoch2d.F90:")
    assert ": 10 iterations of " in headline
    loops = _loops(result.to_dict()["loops"])
    top = [loop for loop in loops if loop["parent"] is None]
    assert sorted(loop["iterations"] for loop in top) == [2, 10]  # species set-up, time step
    inside = [loop for loop in loops if loop["parent"] == main["id"]]
    # the particle loop: its trip count per time step, as drawn
    particles = next(loop for loop in inside if loop["iterations_range"][0] != loop[
        "iterations_range"][1])
    assert particles["iterations_range"] == [min(drawn), max(drawn)]
    assert f"FOR 1 TO {min(drawn)}-{max(drawn)} " in "\n".join(
        row["PSEUDOCODE"] for row in result.table())
    # the field exchange: 3 iterations of 4 site-less Sendrecv, one signature: 12 per step
    exchange = next(loop for loop in inside if loop is not particles)
    assert exchange["iterations_range"] == [12, 12]
    assert [c["call"] for c in exchange["calls"]] == ["MPI_Sendrecv"]
    assert len(loops) == 4 and not any("overlap in time" in d for d in result.diagnostics)


@pytest.mark.parametrize("n_ranks", PIC_RANKS)
def test_every_call_is_shown_or_counted_by_place(
        written: dict[int, dict[str, Path]], n_ranks: int) -> None:
    paths = written[n_ranks]
    truth = json.loads(paths["truth"].read_text())["structure"]
    result = structure(read_trace(paths["prv"]))
    data = result.to_dict()
    shown = {(c["call"], c["site"]) for c in data["calls"]}
    for loop in _loops(data["loops"]):
        shown |= {(c["call"], c["site"]) for c in loop["calls"]}
    counted = {(c["call"], c["site"]) for c in [*data["filtered"], *data["unplaced"]]}
    generated = {(c["call"], c["site"]) for c in truth["calls"]}
    assert generated == shown | counted
    notes = "\n".join(result.present().notes)
    # the set-up's 4 site-less Sendrecv repeat 4 times: too little of the run to be a loop
    assert "left out (min_explained): in the set-up, MPI_Sendrecv 4 times on " in notes
    assert "?" not in notes


def _cells(result) -> list[dict[str, str]]:
    return result.table() + result.table(full=True)


@pytest.mark.parametrize("case", ["pic-1", "pic-4", "pic-16", "lulesh", "otf2",
                                  *sorted(SUITE)])
def test_names_and_sites_read_clean(written: dict[int, dict[str, Path]], case: str,
                                    tmp_path: Path) -> None:
    """The default output of every generated and shared trace: no mangled name, no ".."
    abbreviation, no "?", no "seed"; FILE a file name, LINE an integer."""
    from helpers import DATA

    if case.startswith("pic-"):
        path = written[int(case[4:])]["prv"]
    elif case == "lulesh":
        path = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
    elif case == "otf2":
        path = DATA / "otf2" / "ping-pong-otf2-papi" / "traces.otf2"
        pytest.importorskip("otf2")
    else:
        path = tmp_path / f"{case}.prv"
        write_paraver(SUITE[case], path)
    result = structure(read_trace(path))
    text = str(result.present(path.name))
    assert "seed" not in text.lower() and "?" not in text
    for row in _cells(result):
        code = row["PSEUDOCODE"].lstrip(": ")
        assert not MANGLED.search(code.split(" at ")[0]), code
        if row["FILE"]:
            assert re.fullmatch(r"[\w.+-]+\.\w+", row["FILE"]), row
            assert row["LINE"].isdigit(), row
        else:
            assert row["LINE"] == "", row
