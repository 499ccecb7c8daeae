"""The public doors the commands go through (``phasekit.*.api``): a Python caller gets what
the command prints and writes, with errors that name the parameter, not the option."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from helpers import DATA, run
from phasekit import Profile
from phasekit.errors import InputError, UsageError
from phasekit.io import read_profile, write_profile


def _steps(tmp_path: Path) -> Path:
    """Three phases of 30 one-second samples (cycles, instructions, ...), as a CSV file."""
    rng = np.random.default_rng(0)
    levels = np.repeat([[2.0, 0.01, 0.1], [0.5, 0.05, 0.1], [2.0, 0.01, 0.1]], 30, axis=0)
    values = np.hstack([np.full((90, 1), 1e9),
                        1e9 * levels * (1 + 0.05 * rng.standard_normal(levels.shape))])
    path = tmp_path / "steps.csv"
    write_profile(Profile(values=values, period=1.0,
                          metrics=("cycles", "instructions", "cache_misses", "branches")), path)
    return path


def test_synth_writes_what_the_command_writes(tmp_path: Path) -> None:
    from phasekit.synth.api import synth

    summary = synth("nemo", tmp_path / "a.parquet", minutes=0.5, seed=3)
    code, out, err = run("synth", "nemo", "--minutes", "0.5", "--seed", "3", "-o",
                         tmp_path / "b.parquet", "--json")
    assert code == 0, err
    printed = json.loads(out)
    assert {k: v for k, v in summary.items() if k not in ("profile", "truth", "lines")} == \
        {k: v for k, v in printed.items() if k not in ("profile", "truth", "lines")}
    assert Path(summary["truth"]).name == "a.parquet.truth.json"
    a, b = read_profile(tmp_path / "a.parquet"), read_profile(tmp_path / "b.parquet")
    assert np.array_equal(a.values, b.values) and a.period == b.period


def test_synth_names_the_parameter_not_the_option(tmp_path: Path) -> None:
    from phasekit.synth.api import synth

    with pytest.raises(UsageError) as caught:
        synth("power", tmp_path / "p.json", minutes=2.0)
    assert str(caught.value) == "minutes: does not apply to power"
    with pytest.raises(UsageError, match="kind='nope'"):
        synth("nope", tmp_path / "p.json")
    assert not list(tmp_path.iterdir())


def test_watch_yields_the_changes_the_command_prints(tmp_path: Path) -> None:
    from phasekit.live.api import watch

    path = _steps(tmp_path)
    events = list(watch(path))
    code, out, err = run("watch", path, "--json")
    assert code == 0, err
    assert events == [json.loads(line) for line in out.splitlines()]
    assert events[-1] == {"phases": 3, "starts_s": [0.0, 30.0, 60.0]}
    with pytest.raises(UsageError) as caught:
        watch("-", period=1.0)
    assert str(caught.value).startswith("period: for a CSV profile file")


def test_watch_checks_its_metrics_against_the_header(tmp_path: Path) -> None:
    from phasekit.live.api import watch

    with pytest.raises(UsageError, match="nope"):
        watch(_steps(tmp_path), metrics=["nope"])


def test_a_profile_on_a_stream_reads_as_its_file_and_is_named(tmp_path: Path) -> None:
    from phasekit.io.api import describe, read_profile_stream

    path = _steps(tmp_path)
    streamed = read_profile_stream(io.BytesIO(path.read_bytes()))
    assert describe(streamed) == describe(read_profile(path))
    with pytest.raises(InputError) as caught:
        read_profile_stream(io.BytesIO(b"t,x\n0,1\nx,2\n"), name="<pipe>")
    assert str(caught.value).startswith("<pipe>") and "stdin.csv" not in str(caught.value)


def test_describe_is_what_info_prints(tmp_path: Path) -> None:
    from phasekit.io.api import describe, read_trace

    path = _steps(tmp_path)
    code, out, err = run("info", path, "--json")
    assert code == 0, err
    assert describe(read_profile(path)) == json.loads(out)
    trace = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
    code, out, err = run("info", trace, "--json")
    assert code == 0, err
    assert describe(read_trace(trace)) == json.loads(out)


def test_a_missing_trace_is_named(tmp_path: Path) -> None:
    from phasekit.io.api import read_trace

    missing = tmp_path / "gone.prv"
    with pytest.raises(InputError, match=str(missing)):
        read_trace(missing)


def test_write_files_writes_all_or_none(tmp_path: Path) -> None:
    from phasekit.io.api import write_files

    kept = tmp_path / "a.txt"
    kept.write_text("before")

    def broken(path: Path) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_files([(kept, lambda path: path.write_text("after")),
                     (tmp_path / "b.txt", broken)])
    assert kept.read_text() == "before" and sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    write_files([(kept, lambda path: path.write_text("after"))])
    assert kept.read_text() == "after"


def test_the_sources_listing_is_what_the_command_prints() -> None:
    from phasekit.record.api import available_sources, list_sources

    code, out, err = run("sources", "--json")
    assert code == 0, err
    listing = list_sources()
    assert listing == json.loads(out)
    assert available_sources() == [s["name"] for s in listing if s["available"]]


def test_report_of_files_and_results(tmp_path: Path) -> None:
    from phasekit.periodicity.api import periodicity
    from phasekit.report.api import load_result, report
    from phasekit.synth.api import generate

    profile, _ = generate("nemo", minutes=0.5, seed=1)
    result = periodicity(profile)
    saved = tmp_path / "analysis.json"
    result.save(saved)
    page = report([saved, result], tmp_path / "report.html", title="two of one")
    html = page.read_text()
    assert "two of one" in html and html.count("analysis.json") >= 1
    assert load_result(saved).kind == "periodicity"
    listed = tmp_path / "list.json"
    listed.write_text("[1]")
    with pytest.raises(InputError, match="not an object"):
        load_result(listed)


def test_name_file_puts_the_file_in_front() -> None:
    from phasekit.arguments import name_file

    assert str(name_file(InputError("bad line"), "run.csv")) == "run.csv: bad line"
    named = UsageError("expected 1 to 5", parameter="train", value=9)
    assert name_file(named, "run.csv") is named
