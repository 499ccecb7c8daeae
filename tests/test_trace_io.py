"""Trace readers: Paraver (.prv, .prv.gz with .pcf/.row) and OTF2 -> Trace.

Ground truth from the traces' provenance notes (tests/data/README-traces.md), checked on the
copies in tests/data/paraver and tests/data/otf2; the compiled Paraver kernel against the
line-by-line reference in tests/naive.py; corrupted input with hypothesis.
"""

from __future__ import annotations

import gzip
import json
import pickle
import random
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive
from helpers import DATA, corrupted, run
from phasekit.errors import InputError, PhasekitWarning, UnsupportedError, UsageError
from phasekit.io import is_trace, read_trace, trace_format
from phasekit.io.paraver import parse_header, read_paraver
from phasekit.trace import BASE_COLUMNS, PATH_SEP, Trace, empty_calls

LULESH_GZ = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
PING = DATA / "otf2" / "ping-pong-otf2" / "traces.otf2"
PING_PAPI = DATA / "otf2" / "ping-pong-otf2-papi" / "traces.otf2"


@pytest.fixture(scope="module")
def lulesh_text() -> str:
    return gzip.decompress(LULESH_GZ.read_bytes()).decode()


@pytest.fixture(scope="module")
def lulesh() -> Trace:
    return read_trace(LULESH_GZ)


@pytest.fixture()
def lulesh_plain(tmp_path: Path, lulesh_text: str) -> Path:
    """The LULESH trace uncompressed, with its .pcf and .row, in tmp_path."""
    prv = tmp_path / "lulesh.prv"
    prv.write_text(lulesh_text)
    shutil.copy(DATA / "paraver" / "lulesh_7+1_chop8.pcf", tmp_path / "lulesh.pcf")
    shutil.copy(DATA / "paraver" / "lulesh_7+1_chop8.row", tmp_path / "lulesh.row")
    return prv


# --- the LULESH fixture ----------------------------------------------------------------------
def test_lulesh_ground_truth(lulesh: Trace) -> None:
    assert lulesh.format == "paraver" and lulesh.application == 1
    assert lulesh.n_ranks == 8 and lulesh.threads_per_rank == (1,) * 8
    assert lulesh.duration_s == pytest.approx(0.567453952)
    counts = lulesh.call_counts()
    # data README: per rank 2 MPI_Allreduce (the main loop's 2 iterations), 6 MPI_Waitall
    assert (counts["MPI_Allreduce"] == 2).all()
    assert (counts["MPI_Waitall"] == 6).all()
    # the README's 34 MPI_Irecv, 20 MPI_Isend, 34 MPI_Wait hold for rank 0 (task 1); the
    # raw records give the other ranks 2 more MPI_Isend and 2 fewer MPI_Irecv/MPI_Wait per
    # rank (checked with grep on the .prv): 54 point-to-point starts on every rank
    rank = np.arange(8)
    assert counts.loc[0, ["MPI_Irecv", "MPI_Isend", "MPI_Wait"]].tolist() == [34, 20, 34]
    assert (counts["MPI_Irecv"].to_numpy() == 34 - 2 * rank).all()
    assert (counts["MPI_Isend"].to_numpy() == 20 + 2 * rank).all()
    assert (counts["MPI_Wait"] == counts["MPI_Irecv"]).all()
    assert (counts["MPI_Comm_rank"] == 18).all()
    # counters present
    assert lulesh.counters == ("PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_REF_CYC",
                               "LONGEST_LAT_CACHE:MISS")
    calls = lulesh.calls
    assert np.isfinite(calls["burst_ipc"]).all() and (calls["burst_ipc"] > 0).all()
    assert calls["burst_ipc"].median() == pytest.approx(1.3, abs=0.7)
    assert "counter:LONGEST_LAT_CACHE:MISS" in calls.columns
    assert lulesh.counter_column("PAPI_TOT_INS") == "burst_instructions"


def test_lulesh_columns_follow_the_contract(lulesh: Trace) -> None:
    calls = lulesh.calls
    assert list(calls.columns)[: len(BASE_COLUMNS)] == list(BASE_COLUMNS)
    for name, dtype in BASE_COLUMNS.items():
        assert str(calls[name].dtype) == dtype, name
    key = calls[["rank", "thread", "time_s"]].to_numpy()
    assert (np.diff(key[:, 0]) >= 0).all()
    same = np.diff(key[:, 0]) == 0
    assert (np.diff(key[:, 2])[same] > 0).all()
    assert (calls["duration_s"] > 0).all() and (calls["burst_duration_s"] >= 0).all()
    # a burst never overlaps the previous call of its rank
    for r in range(8):
        part = lulesh.for_rank(r)
        ends = (part["time_s"] + part["duration_s"]).to_numpy()
        starts = (part["time_s"] - part["burst_duration_s"]).to_numpy()
        assert np.allclose(starts[1:], ends[:-1], atol=1e-12)
        assert (part["rank"] == r).all()


def test_lulesh_call_paths_and_sites(lulesh: Trace) -> None:
    calls = lulesh.calls
    allreduce = calls[calls["call"] == "MPI_Allreduce"]
    assert set(allreduce["call_path"].astype(str)) <= {"Unresolved > Unresolved > TimeIncrement"}
    sites = set(allreduce["call_site"].astype(str))
    assert all(s.startswith("lulesh.cc:") for s in sites)
    send = calls[calls["call"] == "MPI_Isend"]
    assert all(str(p).endswith(PATH_SEP + "CommSend") for p in send["call_path"])
    assert all(str(s).startswith("lulesh-comm.cc:") for s in send["call_site"])
    lines = str(send["call_lines"].iloc[0]).split(PATH_SEP)
    assert len(lines) == 3 and lines[-1] == str(send["call_site"].iloc[0])
    codes, table = lulesh.signatures()
    assert len(codes) == lulesh.n_calls and codes.max() == len(table) - 1
    assert set(table.columns) == {"call", "call_path", "call_lines", "call_site"}


def test_lulesh_bytes(lulesh: Trace, lulesh_text: str) -> None:
    calls = lulesh.calls
    sizes = [int(line.split(":")[13]) for line in lulesh_text.split("\n")
             if line.startswith("3:")]
    collective = calls.loc[calls["call"] == "MPI_Allreduce", "bytes"]
    assert (collective == 16).all()  # 8 bytes sent + 8 received (Extrae 50100001/2)
    # every message counts once for its sender's and once for its receiver's call
    assert calls["bytes"].sum() == 2 * sum(sizes) + collective.sum()
    assert "messages_outside_calls" not in lulesh.meta
    assert (calls.loc[calls["call"].isin(["MPI_Wait", "MPI_Comm_rank"]), "bytes"] == 0).all()
    assert set(calls.loc[calls["bytes"] > 0, "call"].astype(str)) == {
        "MPI_Isend", "MPI_Irecv", "MPI_Allreduce"}


def test_lulesh_applications(lulesh_plain: Path) -> None:
    default = read_trace(lulesh_plain)
    assert default.application == 1
    assert default.meta["applications"] == {"1": 856, "2": 0}
    uncore = read_trace(lulesh_plain, application=2)
    assert uncore.empty and uncore.n_ranks == 12 and "no MPI call" in uncore.explanation
    assert list(uncore.calls.columns) == list(BASE_COLUMNS)
    with pytest.raises(UsageError, match="applications 1 to 2"):
        read_trace(lulesh_plain, application=3)


def test_plain_and_gzip_read_the_same(lulesh: Trace, lulesh_plain: Path) -> None:
    plain = read_trace(lulesh_plain)
    pd.testing.assert_frame_equal(plain.calls, lulesh.calls)
    assert plain.counters == lulesh.counters and plain.meta["row"] == {"node": ["epeec04"]}


@pytest.mark.parametrize("chunk", [7, 97, 4096])
def test_chunk_boundaries_do_not_matter(lulesh: Trace, lulesh_plain: Path, chunk: int) -> None:
    pd.testing.assert_frame_equal(read_paraver(lulesh_plain, chunk_bytes=chunk).calls,
                                  lulesh.calls)


def test_missing_pcf_keeps_numeric_ids(tmp_path: Path, lulesh_text: str) -> None:
    prv = tmp_path / "alone.prv"
    prv.write_text(lulesh_text)
    with pytest.warns(PhasekitWarning, match="no .pcf"):
        trace = read_trace(prv)
    assert trace.meta["pcf"] is None and "numeric ids" in trace.meta["note"]
    counts = trace.call_counts()
    assert (counts["50000002:10"] == 2).all() and counts.loc[0, "50000001:4"] == 34
    # Extrae numbers PAPI presets: instructions and cycles are still known, IPC too
    assert trace.counters[:2] == ("PAPI_TOT_INS", "PAPI_TOT_CYC")
    assert np.isfinite(trace.calls["burst_ipc"]).all()
    assert str(trace.calls["call_path"].iloc[0]) == "1 > 11 > 9"


# --- the kernel against the line-by-line reference ---------------------------------------------
def _compare_with_naive(trace: Trace, text: str, application: int = 1) -> None:
    expected = naive.paraver_calls(text, application)
    header = parse_header(text.split("\n", 1)[0])
    tasks = header.tasks[application - 1]
    # the reader orders by rank and thread, stably
    expected.sort(key=lambda c: (c["task"], c["thread"]))
    calls = trace.calls
    assert len(calls) == len(expected)
    if not expected:
        return
    tick = header.tick_s
    assert calls["rank"].tolist() == [c["task"] - 1 for c in expected]
    assert calls["thread"].tolist() == [c["thread"] - 1 for c in expected]
    assert trace.threads_per_rank == tasks
    assert np.allclose(calls["time_s"], [c["entry"] * tick for c in expected], rtol=0, atol=0)
    duration = [np.nan if c["exit"] is None else (c["exit"] - c["entry"]) * tick
                for c in expected]
    np.testing.assert_array_equal(calls["duration_s"].to_numpy(), duration)
    np.testing.assert_array_equal(calls["burst_duration_s"].to_numpy(),
                                  [(c["entry"] - c["burst_start"]) * tick for c in expected])
    np.testing.assert_array_equal(calls["bytes"].to_numpy(), [c["bytes"] for c in expected])
    ids = [str(c) for c in calls["call"]]
    if trace.meta.get("pcf") is None:
        assert ids == [f"{c['type']}:{c['value']}" for c in expected]
    # counters: burst sums, NaN where the burst had no read
    for name in trace.counters:
        ty = {"PAPI_TOT_INS": 42000050, "PAPI_TOT_CYC": 42000059}.get(
            name, int(name.removeprefix("counter_")) if name.startswith("counter_") else None)
        if ty is None:
            continue
        want = [c["counters"].get(ty, np.nan) for c in expected]
        np.testing.assert_array_equal(calls[trace.counter_column(name)].to_numpy(), want)
    # caller levels: the numeric labels without a .pcf
    if trace.meta.get("pcf") is None:
        want_paths = [PATH_SEP.join(str(f) for _, f, _ in reversed(c["levels"]) if f > 0)
                      for c in expected]
        assert [str(p) for p in calls["call_path"]] == want_paths
        want_sites = [next((str(ln) for lv, _, ln in c["levels"] if lv == 1 and ln > 0), "")
                      for c in expected]
        assert [str(s) for s in calls["call_site"]] == want_sites


def test_lulesh_matches_the_naive_parser(tmp_path: Path, lulesh_text: str) -> None:
    prv = tmp_path / "alone.prv"
    prv.write_text(lulesh_text)
    with pytest.warns(PhasekitWarning):
        trace = read_trace(prv)
    _compare_with_naive(trace, lulesh_text)


def random_trace(seed: int, *, n_steps: int = 60, n_paths: int = 5, n_counters: int = 2,
                 crlf: bool = False) -> str:
    """A small valid Paraver trace with the cases the reader distinguishes: two applications,
    1-2 threads per task, counter reads on entry, exit, separate lines at the exit time and
    inside calls, an exit without entry at the start, an entry while a call is open, a call
    never left, messages and collective sizes, comments and communicator lines."""
    rng = random.Random(seed)
    threads = [rng.randint(1, 2) for _ in range(rng.randint(1, 4))]
    keys = [(1, task + 1, th + 1) for task, n in enumerate(threads) for th in range(n)]
    keys.append((2, 1, 1))
    counter_types = [42000050, 42000059, *(44000000 + k for k in range(n_counters - 2))]
    lines = [f"#Paraver (01/01/2024 at 10:00):{10**9}_ns:1(4):2:{len(threads)}("
             + ",".join(f"{n}:1" for n in threads) + "),1:1(1:1),2",
             "c:1:1:1:1", "# a comment"]
    t = 1000
    for key in keys:
        lines.append(f"1:1:{key[0]}:{key[1]}:{key[2]}:0:{t}:1")
    state = dict.fromkeys(keys, False)
    first = rng.choice(keys)
    lines.append(f"2:1:{first[0]}:{first[1]}:{first[2]}:{t}:50000001:0")  # exit w/o entry
    for _ in range(n_steps):
        t += rng.randint(1, 500)
        key = rng.choice(keys)
        head = f"2:1:{key[0]}:{key[1]}:{key[2]}:{t}"
        ctr = "".join(f":{ty}:{rng.randint(0, 10**6)}" for ty in counter_types
                      if rng.random() < 0.8)
        r = rng.random()
        if not state[key] or r < 0.05:  # enter (5 %: while a call is open)
            ty = rng.choice([50000001, 50000002, 50000003])
            path = rng.randrange(n_paths)
            callers = "".join(f":{70000000 + lv}:{path * 4 + lv}"
                              f":{80000000 + lv}:{path * 3 + lv + 1}"
                              for lv in range(1, path % 4 + 1))
            size = (f":50100001:{rng.randint(1, 64)}:50100002:{rng.randint(1, 64)}"
                    if ty == 50000002 else "")
            lines.append(f"{head}:{ty}:{rng.randint(1, 12)}{ctr}{callers}{size}")
            state[key] = True
        elif r < 0.6:  # leave, counters on the record or on a line of their own
            if rng.random() < 0.5:
                lines.append(f"{head}:50000001:0{ctr}")
            else:
                lines.append(f"{head}:50000001:0")
                if ctr:
                    lines.append(f"{head}{ctr}")
            state[key] = False
        elif r < 0.8 and ctr:  # a counter read (inside a call or in a burst)
            lines.append(f"{head}{ctr}")
        else:  # a message to another thread of the same application
            other = rng.choice(keys)
            lines.append(f"3:1:{key[0]}:{key[1]}:{key[2]}:{t}:{t + 1}:1:{other[0]}:"
                         f"{other[1]}:{other[2]}:{t + rng.randint(0, 300)}:{t + 400}:"
                         f"{rng.randint(1, 10**5)}:5")
        if rng.random() < 0.1:
            lines.append(f"1:1:{key[0]}:{key[1]}:{key[2]}:{t}:{t + 10}:3")
    return ("\r\n" if crlf else "\n").join(lines) + rng.choice(["", "\n"])


@pytest.mark.parametrize("seed", range(12))
def test_random_traces_match_the_naive_parser(tmp_path: Path, seed: int) -> None:
    text = random_trace(seed, n_counters=2 + seed % 5, crlf=seed % 4 == 3)
    prv = tmp_path / "t.prv"
    prv.write_bytes(text.encode())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhasekitWarning)
        for application in (1, None):
            trace = read_paraver(prv, application=application, chunk_bytes=64 + 37 * seed)
            _compare_with_naive(trace, text.replace("\r\n", "\n"))


@pytest.mark.slow
def test_outputs_grow_past_their_first_capacity(tmp_path: Path) -> None:
    """More rows (16384), paths (512) and counters (4) than the first buffers hold."""
    text = random_trace(99, n_steps=70000, n_paths=700, n_counters=7)
    prv = tmp_path / "big.prv"
    prv.write_text(text)
    with pytest.warns(PhasekitWarning):
        trace = read_paraver(prv, chunk_bytes=1 << 16)
    assert trace.n_calls > 16384 and len(trace.counters) == 7
    assert trace.calls["call_path"].nunique() > 512
    _compare_with_naive(trace, text)


# --- bad input ---------------------------------------------------------------------------------
HEADER = "#Paraver (01/01/2024 at 10:00):1000_ns:1(1):1:1(1:1),0\n"


@pytest.mark.parametrize("body, line, what", [
    ("2:1:1:1:1:10:50000001\n", 2, "event record"),
    ("2:1:1:1:1:10:50000001:3\n2:1:1:1:1:20:5000x001:0\n", 3, "event record"),
    ("1:1:1:1:1:0:10\n", 2, "state record"),
    ("3:1:1:1:1:0:0:1:1:1:1:0:0:8\n", 2, "communication record"),
    ("7:1:1:1:1:0\n", 2, "record type"),
    ("2:1:1:2:1:10:50000001:3\n", 2, "outside those declared"),
    ("2:1:1:1:1:10:50000001:3:\n", 2, "event record"),
    ("1:1:1:1:1:50:10:1\n", 2, "ends before it begins"),
    ("\n\n2:1:1:1:1:-10:50000001:3\n", 4, "event record"),
    ("2:1:1:1:1:10:50000001:3\n2:1:1:1:1:20:5", 3, "event record"),
])
def test_bad_lines_name_file_and_line(tmp_path: Path, body: str, line: int, what: str) -> None:
    prv = tmp_path / "bad.prv"
    prv.write_text(HEADER + body)
    with pytest.raises(InputError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore", PhasekitWarning)
        read_trace(prv)
    assert info.value.line == line and info.value.path == str(prv)
    assert what.split()[-1] in str(info.value) and f"line {line}" in str(info.value)


@pytest.mark.parametrize("header", [
    "", "hello\n", "#Paraver (01/01/2024 at 10:00):1000_ns:1(1):2:1(1:1)\n",
    "#Paraver (01/01/2024 at 10:00):x_ns:1(1):1:1(1:1)\n",
    "#Paraver (01/01/2024 at 10:00):1000_ns:1(1):1:2(1:1)\n",
    "#Paraver (01/01/2024 at 10:00):1000_ns:1(1):1:1(999999999999:1)\n",
])
def test_bad_headers_are_line_1(tmp_path: Path, header: str) -> None:
    prv = tmp_path / "bad.prv"
    prv.write_text(header)
    with pytest.raises(InputError) as info:
        read_trace(prv)
    assert info.value.line == 1


def test_trace_without_mpi_calls_is_empty(tmp_path: Path) -> None:
    prv = tmp_path / "quiet.prv"
    prv.write_text(HEADER + "1:1:1:1:1:0:1000:1\n2:1:1:1:1:10:42000050:77\n")
    with pytest.warns(PhasekitWarning):
        trace = read_trace(prv)
    assert trace.empty and trace.n_ranks == 1 and "no MPI call" in trace.explanation
    assert trace.summary()["n_calls"] == 0


def test_microsecond_traces(tmp_path: Path) -> None:
    prv = tmp_path / "us.prv"
    prv.write_text("#Paraver (01/01/2024 at 10:00):1000:1(1):1:1(1:1)\n"
                   "2:1:1:1:1:10:50000001:3\n2:1:1:1:1:30:50000001:0\n")
    with pytest.warns(PhasekitWarning):
        trace = read_trace(prv)
    assert trace.duration_s == pytest.approx(1e-3)
    assert trace.calls["duration_s"].iloc[0] == pytest.approx(20e-6)


def test_corrupt_gzip_is_an_input_error(tmp_path: Path) -> None:
    data = LULESH_GZ.read_bytes()
    prv = tmp_path / "cut.prv.gz"
    prv.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="decompress"), warnings.catch_warnings():
        warnings.simplefilter("ignore", PhasekitWarning)
        read_trace(prv)


SMALL_SOURCES = [random_trace(s, n_steps=25).encode() for s in range(4)]


def test_a_trace_of_only_its_header_reads_as_an_empty_trace(tmp_path: Path) -> None:
    prv = tmp_path / "header.prv"   # hypothesis found it: no data block left ``buf`` unbound
    prv.write_bytes(b"#Paraver (01/01/2024 at 10:00):1000000000_ns:1(4):2:1(1:1),1:1(1:1)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhasekitWarning)
        trace = read_trace(prv)
    assert trace.n_ranks == 1 and len(trace.calls) == 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=corrupted(SMALL_SOURCES, st.sampled_from(
    [b":", b"\n", b"x", b"-", b"2:1:1:1:1", b"99999999999999999999999", b"\r", b"\x00", b"c:",
     b"#", b"3:", b"1:"]), lines=True))
def test_corrupted_traces_give_an_input_error_or_a_trace(tmp_path_factory, data: bytes) -> None:
    prv = tmp_path_factory.mktemp("h") / "c.prv"
    prv.write_bytes(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PhasekitWarning)
            trace = read_paraver(prv, chunk_bytes=50)
    except InputError as exc:
        assert exc.line is not None and exc.line >= 1
        assert str(prv) in str(exc)
    else:
        assert isinstance(trace, Trace)
        assert list(trace.calls.columns)[: len(BASE_COLUMNS)] == list(BASE_COLUMNS)


# --- OTF2 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("anchor", [PING, PING_PAPI])
def test_otf2_ping_pong(anchor: Path) -> None:
    pytest.importorskip("otf2")
    trace = read_trace(anchor)
    assert trace.format == "otf2" and trace.n_ranks == 2 and trace.threads_per_rank == (1, 1)
    counts = trace.call_counts()
    assert (counts["MPI_Send"] == 8).all() and (counts["MPI_Recv"] == 8).all()
    sizes = [16384 * 2**k for k in range(8)]  # 16 KiB to 2 MiB, doubling
    for r in range(2):
        part = trace.for_rank(r)
        for call in ("MPI_Send", "MPI_Recv"):
            assert part.loc[part["call"] == call, "bytes"].tolist() == sizes
        assert set(part["call_path"].astype(str)) == {"int main(int, char**)"}
    assert (trace.calls["duration_s"] > 0).all() and (trace.calls["burst_duration_s"] >= 0).all()
    if anchor == PING_PAPI:
        assert trace.counters == ("PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP")
        sends = trace.calls[trace.calls["call"] == "MPI_Send"]
        assert (sends["burst_cycles"] > 0).all() and sends["burst_instructions"].isna().all()
        assert (sends["counter:PAPI_L2_TCM"] >= 0).all()
        assert trace.meta["metric_modes"]["PAPI_TOT_CYC"].endswith("ACCUMULATED_START")
    else:
        assert trace.counters == () and trace.calls["burst_cycles"].isna().all()


def test_otf2_directory_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("otf2")
    assert read_trace(PING.parent, format="otf2").n_calls == 40
    assert trace_format(PING.parent) == "otf2"
    broken = tmp_path / "broken"
    shutil.copytree(PING.parent, broken)
    (broken / "traces.def").write_bytes(b"garbage")
    with pytest.raises(InputError, match="OTF2"):
        read_trace(broken / "traces.otf2")
    monkeypatch.setitem(sys.modules, "otf2", None)
    with pytest.raises(UnsupportedError, match=r'pip install "phasekit\[otf2\]"'):
        read_trace(PING)


# --- io and CLI --------------------------------------------------------------------------------
def test_trace_format_by_name(tmp_path: Path) -> None:
    assert trace_format("a.prv") == "paraver" and trace_format("a.PRV.gz") == "paraver"
    assert trace_format("x/traces.otf2") == "otf2"
    assert not is_trace("run.csv") and is_trace("run.prv")
    profile = tmp_path / "run.csv"
    profile.write_text("timestamp_s,a\n0,1\n1,2\n")
    with pytest.raises(InputError, match=r"run\.csv: this looks like a profile CSV \(use "
                                         r"`phasekit analyze`.*expected a Paraver or OTF2 trace"):
        read_trace(profile)
    with pytest.raises(InputError, match=r"none\.prv: no such file"):
        read_trace(tmp_path / "none.prv")


def test_info_on_a_trace(lulesh_plain: Path) -> None:
    code, out, _ = run("info", lulesh_plain, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["n_ranks"] == 8 and data["calls"]["MPI_Allreduce"]["count"] == 16
    assert data["counters"][0] == "PAPI_TOT_INS" and data["application"] == 1
    code, out, _ = run("info", lulesh_plain)
    assert code == 0 and "MPI_Waitall" in out and "ranks" in out


def test_info_on_a_bad_trace(tmp_path: Path) -> None:
    prv = tmp_path / "bad.prv"
    prv.write_text(HEADER + "2:1:1:1:1:10:oops\n")
    code, _, err = run("info", prv)
    assert code == 3 and "line 2" in err and str(prv) in err


# --- the model --------------------------------------------------------------------------------
def test_trace_model_checks_and_helpers(lulesh: Trace) -> None:
    with pytest.raises(UsageError, match="lacks the columns"):
        Trace(calls=pd.DataFrame({"rank": []}), n_ranks=0, threads_per_rank=(),
              duration_s=0.0)
    with pytest.raises(UsageError, match="threads_per_rank"):
        Trace(calls=empty_calls(), n_ranks=2, threads_per_rank=(1,), duration_s=0.0)
    with pytest.raises(UsageError, match="rank 8"):
        lulesh.for_rank(8)
    assert len(lulesh.for_rank(3, thread=0)) == len(lulesh.for_rank(3))
    assert len(lulesh.for_rank(3, thread=1)) == 0
    with pytest.raises(UsageError, match="no counter"):
        lulesh.counter_column("PAPI_FP_OPS")
    summary = lulesh.summary()
    json.dumps(summary)
    assert summary["n_calls"] == 856 and summary["n_signatures"] == len(lulesh.signatures()[1])
    assert "856 calls" in repr(lulesh)


def test_arrays_and_dataframe_are_one_table(lulesh: Trace) -> None:
    """A reader's Trace holds NumPy arrays and makes its DataFrame from them; a Trace built
    from a DataFrame makes its arrays from it: the same columns and signatures either way
    (``phasekit structure`` uses only the arrays, without importing pandas)."""
    fresh = read_trace(LULESH_GZ)
    arrays = fresh.arrays
    assert fresh.n_calls == arrays.n_rows == 856
    assert list(arrays) == list(fresh.calls.columns)
    pd.testing.assert_frame_equal(arrays.to_frame(), lulesh.calls)
    given = Trace(fresh.calls.copy(), fresh.n_ranks, fresh.threads_per_rank, fresh.duration_s,
                  fresh.counters)
    for name in arrays:
        np.testing.assert_array_equal(given.arrays[name], arrays[name])
        assert given.arrays.is_categorical(name) == arrays.is_categorical(name)
        if arrays.is_categorical(name):
            assert given.arrays.labels(name) == arrays.labels(name)
    codes, rows = fresh.signature_codes()
    frame_codes, table = given.signatures()
    assert codes.dtype == np.int64 and np.array_equal(codes, frame_codes)
    grouped = lulesh.calls.groupby(["call", "call_path", "call_lines"], observed=True,
                                   sort=True).ngroup().to_numpy()
    assert np.array_equal(codes, grouped)  # one code per signature, in the categories' order
    for code, (call, path, lines, _) in enumerate(rows):
        first = lulesh.calls.iloc[int(np.flatnonzero(grouped == code)[0])]
        assert (str(first.call), str(first.call_path), str(first.call_lines)) == (
            call, path, lines)
    assert [tuple(row) for row in table.itertuples(index=False)] == rows
    copy = pickle.loads(pickle.dumps(fresh))
    pd.testing.assert_frame_equal(copy.calls, fresh.calls)
    assert copy.meta == fresh.meta and copy.counters == fresh.counters
    with pytest.raises(AttributeError, match="cannot assign"):
        fresh.n_ranks = 3  # type: ignore[misc]
    with pytest.raises(UsageError, match="must be a pandas DataFrame"):
        Trace(calls={"rank": []}, n_ranks=0, threads_per_rank=(), duration_s=0.0)  # type: ignore[arg-type]
