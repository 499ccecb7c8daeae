"""Traces are profiles too (phasekit.trace_profile): a trace's counters binned into a Profile,
checked on traces whose binned counts are known exactly, on a generated trace against a
direct per-burst computation, and on the real fixtures (the LULESH trace's DRAM counters
against the per-10 ms sums derived from it)."""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import phasekit as pk
from helpers import DATA, run
from phasekit.errors import UsageError
from phasekit.io import read_profile, read_trace, write_profile
from phasekit.io.api import describe_trace, present_trace, read_trace_profile
from phasekit.profile import Profile
from phasekit.synth.traces import SUITE, simulate, write_paraver
from phasekit.trace import Trace, make_arrays
from phasekit.trace_profile import MAX_BINS, MIN_BINS, binning_note, choose_bin, readable

LULESH = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
DRAM_CSV = DATA / "lulesh_chop8_dram_10ms.csv"
PINGPONG = DATA / "otf2" / "ping-pong-otf2-papi" / "traces.otf2"


def _trace(rank: list[int], entry: list[float], inside: list[float], burst: list[float],
           counters: dict[str, list[float]], duration_s: float, n_ranks: int) -> Trace:
    """A trace of the calls given as columns (one thread per rank)."""
    n = len(rank)
    cat = (np.zeros(n, dtype=np.int64), ["MPI_Send"])
    empty = (np.zeros(n, dtype=np.int64), [""])
    arrays, names = make_arrays(
        rank=np.array(rank), thread=np.zeros(n), time_s=np.array(entry, float),
        duration_s=np.array(inside, float), call=cat, call_path=empty, call_lines=empty,
        call_site=empty, bytes=np.zeros(n), burst_duration_s=np.array(burst, float),
        counters={k: np.array(v, float) for k, v in counters.items()})
    return Trace(arrays, n_ranks=n_ranks, threads_per_rank=(1,) * n_ranks,
                 duration_s=duration_s, counters=names, format="paraver",
                 sources=("made.prv",))


@pytest.fixture
def two_ranks() -> Trace:
    """Rank 0: burst [0, 0.5] (1000 instructions, 500 cycles), call [0.5, 1.0], burst
    [1.0, 3.0] (4000, 2000), call [3.0, 3.5]; rank 1: burst [0.25, 2.25] (800, 800), call
    [2.25, 4.0]."""
    return _trace(rank=[0, 0, 1], entry=[0.5, 3.0, 2.25], inside=[0.5, 0.5, 1.75],
                  burst=[0.5, 2.0, 2.0],
                  counters={"PAPI_TOT_INS": [1000, 4000, 800],
                            "PAPI_TOT_CYC": [500, 2000, 800],
                            "PAPI_L2_TCM": [10, np.nan, 40]}, duration_s=4.0, n_ranks=2)


# --- bins known exactly ----------------------------------------------------------------------
def test_a_burst_count_is_spread_over_the_bins_it_overlaps(two_ranks: Trace) -> None:
    profile = two_ranks.profile(bin_s=1.0)
    assert isinstance(profile, Profile) and profile.period == 1.0 and profile.n_samples == 4
    assert profile.metrics == ("instructions", "cycles", "ipc", "PAPI_L2_TCM", "mpi_share")
    np.testing.assert_allclose(profile.column("instructions"), [1000 + 300, 2000 + 400,
                                                                2000 + 100, 0])
    np.testing.assert_allclose(profile.column("cycles"), [500 + 300, 1000 + 400, 1000 + 100, 0])
    np.testing.assert_allclose(profile.column("ipc")[:3], [1300 / 800, 2400 / 1400,
                                                           2100 / 1100])
    assert np.isnan(profile.column("ipc")[3])  # no cycle in the last bin
    np.testing.assert_allclose(profile.column("PAPI_L2_TCM"), [10 + 15, 20, 5, 0])  # NaN: 0
    # MPI time / (MPI + burst time) of both ranks in each bin
    np.testing.assert_allclose(profile.column("mpi_share"),
                               [0.5 / 1.75, 0 / 2, 0.75 / 2, 1.5 / 1.5])
    assert profile.column("PAPI_TOT_INS") is not None  # the trace's name still finds it
    assert profile.meta["source_names"] == {"instructions": "PAPI_TOT_INS",
                                            "cycles": "PAPI_TOT_CYC"}
    assert profile.meta["bin_rule"] == "1 s: given" and profile.meta["ranks"] == [0, 1]


def test_sums_are_kept_whatever_the_bin(two_ranks: Trace) -> None:
    for bin_s in (0.1, 0.3, 0.7, 1.0, 3.0, 10.0):
        profile = two_ranks.profile(bin_s=bin_s)
        assert profile.n_samples == int(np.ceil(4.0 / bin_s - 1e-9))
        assert np.nansum(profile.column("instructions")) == pytest.approx(5800)
        assert np.nansum(profile.column("PAPI_L2_TCM")) == pytest.approx(50)


def test_by_rank_and_ranks(two_ranks: Trace) -> None:
    per_rank = two_ranks.profile(bin_s=1.0, by="rank")
    assert sorted(per_rank) == [0, 1]
    np.testing.assert_allclose(per_rank[0].column("instructions"), [1000, 2000, 2000, 0])
    np.testing.assert_allclose(per_rank[1].column("instructions")[:3], [300, 400, 100])
    assert per_rank[1].node == "rank 1" and per_rank[1].meta["ranks"] == [1]
    # rank 1 has no record in [0, 0.25) only: every bin is covered
    np.testing.assert_allclose(per_rank[1].column("mpi_share"), [0, 0, 0.75, 1])
    one = two_ranks.profile(bin_s=1.0, ranks=[1])
    np.testing.assert_allclose(one.column("instructions"), per_rank[1].column("instructions"))
    assert binning_note(one) == ("note: binned from the Paraver trace at 1 s (given), rank 1")
    assert binning_note(two_ranks.profile(bin_s=1.0)).endswith("ranks 0-1 (all) summed")
    node = two_ranks.profile(bin_s=1.0, by="node")
    assert list(node) == [""]  # the trace does not say: one node
    np.testing.assert_allclose(node[""].values, two_ranks.profile(bin_s=1.0).values,
                               equal_nan=True)


def test_bins_without_any_record_are_missing_and_a_chopped_first_burst_left_out() -> None:
    trace = _trace(rank=[0, 0], entry=[2.5, 2.7], inside=[0.1, 0.1], burst=[0.0, 0.1],
                   counters={"PAPI_TOT_INS": [9e9, 100]}, duration_s=4.0, n_ranks=1)
    profile = trace.profile(bin_s=1.0)
    # the first burst has no span (the trace starts at the call): its 9e9 are left out
    assert profile.meta["first_bursts_left_out"] == 1
    values = profile.column("instructions")
    assert np.isnan(values[[0, 1, 3]]).all() and values[2] == pytest.approx(100)


def test_the_bin_and_ranks_are_checked(two_ranks: Trace) -> None:
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(UsageError) as caught:
            two_ranks.profile(bin_s=bad)
        assert caught.value.parameter == "bin_s"
        assert caught.value.command_line().startswith("--bin ")
    with pytest.raises(UsageError, match="at most"):
        two_ranks.profile(bin_s=4.0 / MAX_BINS / 10)
    with pytest.raises(UsageError) as caught:
        two_ranks.profile(ranks=[2])
    assert caught.value.parameter == "ranks" and "0 to 1" in str(caught.value)
    with pytest.raises(UsageError, match="by='node s'"):
        two_ranks.profile(by="node s")


# --- the default bin ---------------------------------------------------------------------------
def test_readable_values() -> None:
    assert readable(0.01005) == 0.01 and readable(0.0065) == 0.005
    assert readable(0.0053, "up") == 0.01 and readable(0.002, "up") == 0.002
    assert readable(0.0043, "down") == 0.002 and readable(3e-7, "down") == 2e-7
    assert readable(150.0) == 200.0


def test_default_bin_from_the_density_of_counter_reads() -> None:
    # 400 reads per rank over 4 s: one every 10 ms -> 10 ms (400 bins)
    entry = np.arange(400) * 0.01 + 0.0099
    trace = _trace(rank=[0] * 400 + [1] * 400, entry=[*entry, *entry], inside=[1e-4] * 800,
                   burst=[0.0099] * 800, counters={"PAPI_TOT_INS": [1.0] * 800},
                   duration_s=4.0, n_ranks=2)
    bin_s, why = choose_bin(trace)
    assert bin_s == 0.01 and why.startswith("10 ms: one counter read per rank and thread")
    # 40 reads per rank: one every 100 ms, but 100 ms gives 40 bins < MIN_BINS
    sparse = _trace(rank=[0] * 40, entry=list(np.arange(1, 41) * 0.1), inside=[1e-4] * 40,
                    burst=[0.0999] * 40, counters={"PAPI_TOT_INS": [1.0] * 40},
                    duration_s=4.0, n_ranks=1)
    bin_s, why = choose_bin(sparse)
    assert bin_s == readable(4.0 / MIN_BINS, "down") == 0.05
    assert why == f"50 ms: at least {MIN_BINS} bins over the 4 s trace"
    assert sparse.profile().meta["bin_rule"] == why


# --- counters sampled on their own (Paraver uncore applications) -------------------------------
PCF = """EVENT_TYPE
9   50000001    MPI Point-to-point
VALUES
1   MPI_Send
0   Outside MPI


EVENT_TYPE
7  42000050 PAPI_TOT_INS ([Instr completed])
7  42000059 PAPI_TOT_CYC ([Total cycles])
7  46000001 DRAM_RD ([DRAM reads])
"""
ROW = "LEVEL NODE SIZE 2\nn1\nn2\n"


def _uncore_trace(folder: Path) -> Path:
    """Application 1: one rank (node 1) with the bursts of ``two_ranks``' rank 0;
    application 2: two tasks (nodes 1 and 2) reading DRAM_RD on their own."""
    ms = 1_000_000
    records = [
        (0, "1:1:1:1:1:0:500000000:1"),
        (500 * ms, "2:1:1:1:1:500000000:50000001:1:42000050:1000:42000059:500"),
        (1000 * ms, "2:1:1:1:1:1000000000:50000001:0"),
        (3000 * ms, "2:1:1:1:1:3000000000:50000001:1:42000050:4000:42000059:2000"),
        (3500 * ms, "2:1:1:1:1:3500000000:50000001:0"),
    ]
    for task, cpu, reads in ((1, 1, [(200, 10), (1200, 20), (2200, 30)]),
                             (2, 2, [(900, 5), (1900, 7), (3100, 9)])):
        records += [(t * ms, f"2:{cpu}:2:{task}:1:{t * ms}:30000000:3:46000001:{v}")
                    for t, v in reads]
    lines = ["#Paraver (01/01/2026 at 00:00):4000000000_ns:2(1,1):2:1(1:1),2(1:1,1:2)",
             *(text for _, text in sorted(records, key=lambda r: r[0]))]
    prv = folder / "uncore.prv"
    prv.write_text("\n".join(lines) + "\n")
    (folder / "uncore.pcf").write_text(PCF)
    (folder / "uncore.row").write_text(ROW)
    return prv


def test_uncore_reads_are_kept_and_binned_at_their_time(tmp_path: Path) -> None:
    trace = read_trace(_uncore_trace(tmp_path))
    assert trace.n_calls == 2 and trace.application == 1
    samples = trace.samples
    assert samples is not None and samples.counters == ("DRAM_RD",)
    assert samples.sources == ("2.1.1", "2.2.1") and samples.source_nodes == ("n1", "n2")
    np.testing.assert_allclose(samples.time_s, [0.2, 0.9, 1.2, 1.9, 2.2, 3.1])
    np.testing.assert_array_equal(samples.value, [10, 5, 20, 7, 30, 9])
    profile = trace.profile()  # the samplers' period, 1 s
    assert profile.period == 1.0
    assert profile.meta["bin_rule"] == "1 s: the period of the counters sampled on their own, " \
                                       "1 s, rounded"
    np.testing.assert_array_equal(profile.column("DRAM_RD"), [15, 27, 30, 9])
    np.testing.assert_allclose(profile.column("instructions"), [1000, 2000, 2000, 0])
    np.testing.assert_allclose(profile.column("mpi_share"), [0.5, 0, 0, 1])
    assert profile.meta["sampled_sources"] == ["2.1.1", "2.2.1"]
    by_node = trace.profile(by="node")
    assert list(by_node) == ["n1", "n2"]
    np.testing.assert_array_equal(by_node["n1"].column("DRAM_RD"), [10, 20, 30, np.nan])
    np.testing.assert_array_equal(by_node["n2"].column("DRAM_RD"), [5, 7, np.nan, 9])
    assert np.isnan(by_node["n2"].column("instructions")).all()  # no rank on node 2
    assert "DRAM_RD" not in trace.profile(by="rank")[0].metrics  # node-wide: not a rank's
    copy = pickle.loads(pickle.dumps(trace))
    np.testing.assert_array_equal(copy.samples.value, samples.value)
    summary = trace.summary()
    json.dumps(summary)
    assert summary["sampled_counters"] == ["DRAM_RD"]
    assert summary["profile"]["metrics"] == list(profile.metrics)
    assert summary["profile"]["n_bins"] == 4


def test_a_trace_of_samplers_only_is_a_profile_too(tmp_path: Path) -> None:
    prv = _uncore_trace(tmp_path)
    trace = read_trace(prv, application=2)  # the samplers: no MPI call
    assert trace.empty and trace.samples is not None
    profile = trace.profile()
    assert profile.metrics == ("DRAM_RD",)
    np.testing.assert_array_equal(profile.column("DRAM_RD"), [15, 27, 30, 9])


# --- a generated trace, against the bursts it was made of --------------------------------------
def _overlaps(starts: np.ndarray, ends: np.ndarray, weights: np.ndarray, bin_s: float,
              n_bins: int) -> np.ndarray:
    """Each weight spread over its span by overlap, one span at a time."""
    out = np.zeros(n_bins)
    for a, b, w in zip(starts, ends, weights, strict=True):
        if b <= a:
            out[min(int(a // bin_s), n_bins - 1)] += w
            continue
        for k in range(int(a // bin_s), min(int(np.ceil(b / bin_s)), n_bins)):
            out[k] += w * (min(b, (k + 1) * bin_s) - max(a, k * bin_s)) / (b - a)
    return out


@pytest.mark.parametrize("name", ["stencil", "two-phases"])
def test_a_generated_trace_bins_as_its_bursts(tmp_path: Path, name: str) -> None:
    program = SUITE[name]
    simulated = simulate(program, seed=3)
    write_paraver(program, tmp_path / "t.prv", trace=simulated)
    trace = read_trace(tmp_path / "t.prv")
    for bin_s in (None, 0.0007, 0.005):
        profile = trace.profile(bin_s=bin_s)
        width, n = profile.period, profile.n_samples
        start, entry, leave = (simulated.burst_start_ns * 1e-9, simulated.entry_ns * 1e-9,
                               simulated.exit_ns * 1e-9)
        expected = _overlaps(start, entry, simulated.instructions.astype(float), width, n)
        covered = ~np.isnan(profile.column("instructions"))
        np.testing.assert_allclose(profile.column("instructions")[covered], expected[covered],
                                   rtol=1e-9, atol=1e-6)
        assert expected[~covered].sum() == 0
        burst_time = _overlaps(start, entry, entry - start, width, n)
        mpi_time = _overlaps(entry, leave, leave - entry, width, n)
        share = mpi_time[covered] / (mpi_time + burst_time)[covered]
        np.testing.assert_allclose(profile.column("mpi_share")[covered], share, atol=1e-9)
        ipc = profile.column("instructions") / profile.column("cycles")
        np.testing.assert_allclose(profile.column("ipc"), ipc)


def test_a_million_calls_bin_in_well_under_a_second() -> None:
    rng = np.random.default_rng(0)
    n_ranks, per_rank = 16, 62_500
    burst = rng.exponential(2e-4, (n_ranks, per_rank))
    inside = rng.exponential(2e-5, (n_ranks, per_rank))
    entry = np.cumsum(burst + inside, axis=1) - inside
    trace = _trace(rank=list(np.repeat(np.arange(n_ranks), per_rank)), entry=list(entry.ravel()),
                   inside=list(inside.ravel()), burst=list(burst.ravel()),
                   counters={"PAPI_TOT_INS": list((burst * 3e9).ravel()),
                             "PAPI_TOT_CYC": list((burst * 2e9).ravel())},
                   duration_s=float(entry.max() + 1e-3), n_ranks=n_ranks)
    trace.profile(bin_s=1e-3)
    took = []
    for _ in range(3):
        begin = time.perf_counter()
        profile = trace.profile(bin_s=1e-3)
        took.append(time.perf_counter() - begin)
    assert min(took) < 1.0
    assert np.nansum(profile.column("instructions")) == pytest.approx((burst * 3e9).sum())


# --- the real fixtures ---------------------------------------------------------------------
def test_lulesh_dram_counters_at_10_ms_are_the_derived_sums() -> None:
    trace = read_trace(LULESH)
    profile = trace.profile(bin_s=0.01)
    derived = pd.read_csv(DRAM_CSV)
    assert profile.n_samples == len(derived)
    frame = profile.to_frame()
    np.testing.assert_allclose(frame.index, derived["timestamp_s"], atol=1e-12)
    for column, kind in (("dram_rd", "CAS_COUNT:RD"), ("dram_wr", "CAS_COUNT:WR")):
        names = [m for m in profile.metrics if kind in m]
        assert len(names) == 12  # 6 memory controllers x 2 sockets
        np.testing.assert_array_equal(frame[names].sum(axis=1), derived[column])
    assert trace.profile().period == 0.01  # the default: the uncore sampling period
    assert profile.meta["first_bursts_left_out"] == 8  # one per rank: a chopped trace
    calls = trace.calls
    first = calls.groupby("rank").head(1)
    kept = calls["burst_instructions"].sum() - first["burst_instructions"].sum()
    assert np.nansum(profile.column("instructions")) == pytest.approx(kept)
    assert profile.meta["ranks"] == list(range(8)) and len(profile.meta["sampled_sources"]) == 12
    assert binning_note(profile) == ("note: binned from the Paraver trace at 10 ms (given), "
                                     "ranks 0-7 (all) summed, and 12 sampling tasks")


def test_the_otf2_papi_trace_reads_as_a_profile() -> None:
    pytest.importorskip("otf2")
    trace = read_trace(PINGPONG)
    profile = read_trace_profile(PINGPONG)
    assert profile.metrics == ("cycles", "PAPI_L2_TCM", "PAPI_BR_MSP", "mpi_share")
    assert profile.n_samples >= MIN_BINS
    assert profile.meta["trace_format"] == "otf2"
    calls = trace.calls
    first = calls.groupby("rank").head(1)
    chopped = first[first["burst_duration_s"] <= 0]
    kept = np.nansum(calls["burst_cycles"]) - np.nansum(chopped["burst_cycles"])
    assert profile.meta.get("first_bursts_left_out", 0) == len(chopped)
    assert np.nansum(profile.column("cycles")) == pytest.approx(kept, rel=1e-9)
    assert np.nanmax(profile.column("mpi_share")) <= 1.0


# --- the doors: Python and the command line ----------------------------------------------------
def test_a_trace_or_its_file_goes_where_a_profile_goes() -> None:
    trace = read_trace(LULESH)
    by_path = read_profile(LULESH)
    np.testing.assert_array_equal(by_path.values, trace.profile().values)
    assert read_profile(LULESH, metrics=["ipc"]).metrics == ("ipc",)
    with pytest.raises(UsageError) as caught:
        read_profile(LULESH, period=0.1)
    assert caught.value.parameter == "period"
    result = pk.periodicity(LULESH)
    assert result.to_dict() == pk.periodicity(trace).to_dict()
    assert pk.phases(trace).to_dict() == pk.phases(LULESH).to_dict()
    assert describe_trace(trace, bin_s=0.005)["profile"]["n_bins"] == 114
    assert dict(present_trace(trace, "t", bin_s=0.005).views[0].rows)["profile"].startswith(
        "114 bins of 5 ms (given); 30 metrics: instructions, cycles, ipc")


def test_cli_analyze_phases_and_info_on_a_trace(tmp_path: Path) -> None:
    code, out, err = run("analyze", LULESH)
    assert code == 0, err
    assert ("note: binned from the Paraver trace at 10 ms (the period of the counters sampled "
            "on their own, 10.08 ms, rounded), ranks 0-7 (all) summed, and 12 sampling tasks"
            ) in out.splitlines()
    code, out, err = run("analyze", LULESH, "--bin", "0.02", "--rank", "3", "--json")
    assert code == 0, err
    assert json.loads(out)["n_samples"] == 29
    code, out, err = run("phases", LULESH, "--bin", "0.005")
    assert code == 0, err
    assert any(line.startswith("note: binned from the Paraver trace at 5 ms (given)")
               for line in out.splitlines())
    code, out, err = run("info", LULESH)
    assert code == 0, err
    lines = [line.strip() for line in out.splitlines()]
    assert "MPI calls   856 (148 signatures)" in lines
    assert any(line.startswith("profile     57 bins of 10 ms") for line in lines)
    assert any(line.startswith("sampled     24 counters read on their own by 12 tasks")
               for line in lines)
    code, out, _ = run("info", LULESH, "--bin", "0.05", "--json")
    assert json.loads(out)["profile"]["bin_rule"] == "50 ms: given"
    code, _, err = run("analyze", LULESH, "--bin", "0")
    assert code == 2 and "--bin 0: expected a positive number of seconds" in err
    code, _, err = run("analyze", LULESH, "--rank", "8")
    assert code == 2 and "--rank" in err and "0 to 7" in err
    csv = tmp_path / "p.csv"
    write_profile(Profile(values=np.arange(100.0), period=1.0, metrics=("a",)), csv)
    code, _, err = run("analyze", csv, "--bin", "0.1")
    assert code == 2 and "--bin: for a trace" in err
    code, _, err = run("analyze", LULESH, "--period", "0.1")
    assert code == 2 and "--period" in err
