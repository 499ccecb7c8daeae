"""Metrics keep the names their source gave them: perf's ``cpu-clock`` (stored ``cpu_clock``),
``cs`` or LIKWID's ``CPI`` still name the metric, in the library and on the command line, also
after the profile is saved and read again; other case or punctuation names it where that is
unambiguous."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from helpers import DATA, run
from phasekit.errors import UsageError
from phasekit.io import read_profile, write_profile
from phasekit.profile import Profile, metric_key, resolve_metric

PERF_PERCPU = DATA / "perfstat_percpu_stderr.log"  # events task-clock, cs (and cycles:u)
PERF_TASK = DATA / "perfstat_task.csv"  # task-clock, context-switches, 0.8 s busy/idle cycle
LIKWID = DATA / "likwid_timeline_branch.txt"


def _read(path: Path, **options: object) -> Profile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropped events, resampling: not what is tested here
        return read_profile(path, **options)


def _cpu_clock_perf(tmp_path: Path) -> Path:
    """A perf stat -I -x, file whose clock event is cpu-clock (perf prints it as task-clock:
    the same line with another event name)."""
    path = tmp_path / "perf.csv"
    path.write_text(PERF_TASK.read_text().replace("task-clock", "cpu-clock"))
    return path


def test_metric_key() -> None:
    assert metric_key("cpu-clock") == metric_key("CPU_Clock") == "cpu_clock"
    assert metric_key("Runtime (RDTSC) [s]") == "runtime_rdtsc_s"
    assert metric_key("--") == ""


def test_resolver_order_and_ambiguity() -> None:
    metrics = ("cpu_clock", "context_switches", "cpu-time", "cpu_time")
    sources = {"context_switches": ("cs",)}
    assert resolve_metric("cpu_clock", metrics, sources) == "cpu_clock"
    assert resolve_metric("cpu-clock", metrics, sources) == "cpu_clock"
    assert resolve_metric("CPU.CLOCK", metrics, sources) == "cpu_clock"
    assert resolve_metric("cs", metrics, sources) == "context_switches"
    assert resolve_metric("CS", metrics, sources) == "context_switches"
    assert resolve_metric("cpu_time", metrics, sources) == "cpu_time"  # exact first
    assert resolve_metric("cpu-time", metrics, sources) == "cpu-time"
    with pytest.raises(UsageError, match=r"'CPU_TIME' could be any of cpu-time, cpu_time"):
        resolve_metric("CPU_TIME", metrics, sources)
    assert resolve_metric("cycles", metrics, sources) is None


def test_perf_source_names_find_their_metrics() -> None:
    profile = _read(PERF_PERCPU)
    assert profile.metrics == ("task_clock", "context_switches")
    assert profile.meta["source_names"] == {"task_clock": "task-clock",
                                            "context_switches": "cs"}
    switches = profile.values[:, 1]
    for name in ("cs", "CS", "context-switches", "Context_Switches"):
        np.testing.assert_array_equal(profile.column(name), switches)
    np.testing.assert_array_equal(profile.column("task-clock"), profile.values[:, 0])
    chosen = profile.select(["cs", "TASK-CLOCK"])
    assert chosen.metrics == ("context_switches", "task_clock")  # the stored names
    np.testing.assert_array_equal(chosen.values, profile.values[:, [1, 0]])
    with pytest.raises(UsageError, match=r"no metric 'cycles' in this profile; it has: "
                                         r"task_clock, context_switches$"):
        profile.column("cycles")
    # the readers' own metrics= option takes them too
    assert _read(PERF_PERCPU, metrics=["cs"]).metrics == ("context_switches",)
    with pytest.raises(UsageError, match="twice"):
        _read(PERF_PERCPU, metrics=["cs", "context_switches"])


def test_likwid_names_find_their_metrics() -> None:
    profile = _read(LIKWID)
    for given, stored in (("CPI", "cpi"), ("Runtime (RDTSC)", "Runtime_RDTSC"),
                          ("Runtime (RDTSC) [s]", "Runtime_RDTSC"), ("Clock [MHz]", "Clock"),
                          ("Branch misprediction rate", "Branch_misprediction_rate"),
                          ("branch-misprediction-rate", "Branch_misprediction_rate")):
        assert profile.resolve(given) == stored, given
        np.testing.assert_array_equal(profile.column(given),
                                      profile.values[:, profile.metrics.index(stored)])
    assert _read(LIKWID, metrics=["CPI", "Clock [MHz]"]).metrics == ("cpi", "Clock")


@pytest.mark.parametrize("suffix", ["csv", "parquet", "arrows"])
def test_saved_profiles_keep_the_source_names(tmp_path: Path, suffix: str) -> None:
    profile = _read(PERF_PERCPU)
    path = tmp_path / f"saved.{suffix}"
    write_profile(profile, path)
    again = _read(path)
    assert again.source_names == {"task_clock": ("task-clock",), "context_switches": ("cs",)}
    np.testing.assert_array_equal(again.column("cs"), profile.column("context_switches"))
    assert _read(path, metrics=["cs"]).metrics == ("context_switches",)


def test_derived_ipc_by_any_case() -> None:
    profile = Profile(values=np.array([[2.0, 4.0], [3.0, 3.0]]), period=1.0,
                      metrics=("INSTRUCTIONS", "cycles"))
    np.testing.assert_allclose(profile.select(["IPC"]).values[:, 0], [0.5, 1.0])
    assert profile.select(["IPC"]).metrics == ("ipc",)


# --- command line ----------------------------------------------------------------------------
def test_cli_analyze_metric_by_its_perf_name(tmp_path: Path) -> None:
    """The user's case: ``--metric cpu-clock`` analyzes the cpu_clock column, with the result
    of ``--metric cpu_clock``: the 0.8 s busy/idle cycle of the recorded workload."""
    perf = _cpu_clock_perf(tmp_path)
    code, out, err = run("analyze", perf, "--metric", "cpu-clock", "--json")
    assert code == 0, err
    by_source = json.loads(out)
    code, out, err = run("analyze", perf, "--metric", "cpu_clock", "--json")
    assert code == 0, err
    stored = json.loads(out)
    assert by_source["metrics"] == stored["metrics"] == ["cpu_clock"]
    assert by_source["patterns"] == stored["patterns"]
    assert by_source["patterns"][0]["period_s"] == pytest.approx(0.8)
    code, out, err = run("analyze", perf, "-m", "cpu-time")
    assert code == 2 and out == ""
    assert "perf.csv" in err and "no metric 'cpu-time'" in err
    errors = [line for line in err.splitlines() if line.startswith("phasekit: error:")]
    assert len(errors) == 1 and errors[0].endswith("it has: cpu_clock, context_switches")


def test_cli_analyze_many_takes_source_names(tmp_path: Path) -> None:
    perf = _cpu_clock_perf(tmp_path)
    other = tmp_path / "other.csv"
    other.write_bytes(perf.read_bytes())
    code, out, err = run("analyze", perf, other, "-m", "CPU-Clock", "--json")
    assert code == 0, err
    nodes = json.loads(out)["nodes"]
    assert len(nodes) == 2 and all(n["metrics"] == ["cpu_clock"] for n in nodes)


def test_cli_phases_metric_by_its_perf_name(tmp_path: Path) -> None:
    perf = _cpu_clock_perf(tmp_path)
    results = []
    for name in ("cpu-clock", "cpu_clock"):
        code, out, err = run("phases", perf, "--metric", name, "--metric",
                             "Context-Switches" if name == "cpu-clock" else "context_switches",
                             "--json")
        assert code == 0, err
        results.append(json.loads(out))
    assert results[0]["sensors"] == results[1]["sensors"] == ["cpu_clock", "context_switches"]
    assert results[0]["phases"] == results[1]["phases"]


def test_cli_fingerprint_ratio_by_source_names(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    paths = []
    for k in range(3):
        instructions = 1e9 * (1.5 + np.sin(np.linspace(0, 3 + k, 60))) + rng.normal(0, 1e6, 60)
        loads = np.full(60, 2e8)
        profile = Profile(values=np.column_stack([instructions, loads]), period=0.1,
                          metrics=("instructions", "mem_loads"),
                          meta={"source_names": {"instructions": "INST_RETIRED.ANY",
                                                 "mem_loads": "MEM_INST_RETIRED.ALL_LOADS"}})
        paths.append(tmp_path / f"run{k}.parquet")
        write_profile(profile, paths[-1])
    code, out, err = run("fingerprint", *paths, "--ratio",
                         "INST_RETIRED.ANY/MEM_INST_RETIRED.ALL_LOADS", "--json")
    assert code == 0, err
    assert json.loads(out)["ratio"] == "instructions/mem_loads"
