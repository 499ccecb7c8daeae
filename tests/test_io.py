"""Profile readers and writers: CSV and Parquet (phasekit.io)."""

from __future__ import annotations

import datetime as dt
import gzip
import os
import re
import stat
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import helpers
from helpers import DATA
from phasekit import Profile
from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io import (
    PROFILE_SUFFIXES,
    atomic_path,
    atomic_write_text,
    profile_format,
    read_profile,
    write_profile,
)
from phasekit.io.csv import encode_column_name, parse_column_name, regularize
from phasekit.io.inputs import LARGEST

LULESH = DATA / "lulesh_chop8_dram_10ms.csv"


def _write(directory: Path, name: str, content: str | bytes) -> Path:
    path = directory / name
    if isinstance(content, str):
        path.write_bytes(content.encode())
    else:
        path.write_bytes(content)
    return path


def _read_quietly(path: Path, **kwargs: object) -> Profile:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a regular file must not warn
        return read_profile(path, **kwargs)


def _assert_same(a: Profile, b: Profile) -> None:
    np.testing.assert_array_equal(a.values, b.values)  # NaN == NaN here, bit-exact otherwise
    assert a.period == b.period
    assert a.metrics == b.metrics
    assert type(a.start) is type(b.start) or isinstance(b.start, dt.datetime)
    expected_start = a.start
    if isinstance(expected_start, dt.datetime) and expected_start.tzinfo is None:
        expected_start = expected_start.replace(tzinfo=dt.UTC)
    assert b.start == expected_start
    assert b.units == {k: v for k, v in a.units.items() if k in a.metrics}
    assert b.node == a.node
    assert b.meta == a.meta


def _sample_profile(start: float | dt.datetime = 0.0) -> Profile:
    rng = np.random.default_rng(7)
    values = rng.standard_normal((12, 3)) * 1e5
    values[4] = np.nan  # a whole missing sample
    values[7, 1] = np.nan  # one missing value
    return Profile(values=values, period=0.0137, metrics=("dram_rd", "dram_wr", "power"),
                   start=start, units={"dram_rd": "B", "power": "W"}, node="node-01",
                   meta={"app": "lulesh", "ranks": 8, "tags": ["a", "b"]})


# --- suffixes and dispatch -----------------------------------------------------------------
def test_profile_format_and_suffixes() -> None:
    assert set(PROFILE_SUFFIXES) >= {".csv", ".csv.gz", ".tsv", ".parquet", ".pq"}
    assert profile_format("a/run.csv") == "csv"
    assert profile_format("run.CSV.GZ") == "csv"
    assert profile_format("run.tsv") == "csv"
    assert profile_format(Path("run.parquet")) == "parquet"
    assert profile_format("run.pq") == "parquet"
    for bad in ("run.txt", "run", "run.gz", ".csv"):
        with pytest.raises(UsageError, match="expected a name ending in"):
            profile_format(bad)


def test_a_name_that_does_not_tell_the_format_is_read_by_content(tmp_path: Path) -> None:
    path = _write(tmp_path, "run.txt", "t,x\n0,1\n1,2\n")
    assert read_profile(path).values[:, 0].tolist() == [1.0, 2.0]
    trace = _write(tmp_path, "lulesh.txt", "#Paraver (01/01/2024 at 00:00):1000_ns:1(1):1:1(1:1)\n")
    with pytest.raises(InputError, match=r"lulesh\.txt: this looks like a Paraver trace \(use "
                                         r"`phasekit structure`\)"):
        read_profile(trace)
    odd = _write(tmp_path, "notes.txt", "hello\n")
    with pytest.raises(InputError, match=r"notes\.txt: not a profile phasekit can read"):
        read_profile(odd)
    with pytest.raises(UsageError):
        write_profile(_sample_profile(), tmp_path / "out.json")
    assert read_profile(path, format="csv").n_samples == 2


# --- round trips ---------------------------------------------------------------------------
START_CASES = [
    0.0,
    1_700_000_000.123,
    dt.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
]


@pytest.mark.parametrize("suffix", PROFILE_SUFFIXES)
@pytest.mark.parametrize("start", START_CASES, ids=["zero", "epoch", "datetime+2", "utc"])
def test_round_trip(tmp_path: Path, suffix: str, start: float | dt.datetime) -> None:
    profile = _sample_profile(start)
    path = tmp_path / f"profile{suffix}"
    write_profile(profile, path)
    back = _read_quietly(path)
    _assert_same(profile, back)
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_naive_datetime_start_is_written_as_utc(tmp_path: Path) -> None:
    profile = _sample_profile(dt.datetime(2024, 1, 1, 6, 30))
    for suffix in (".csv", ".parquet"):
        write_profile(profile, tmp_path / f"p{suffix}")
        back = read_profile(tmp_path / f"p{suffix}")
        assert back.start == dt.datetime(2024, 1, 1, 6, 30, tzinfo=dt.UTC)
        assert back.start.tzinfo is not None


def test_csv_layout_is_readable(tmp_path: Path) -> None:
    write_profile(_sample_profile(), tmp_path / "p.csv")
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0].startswith("# phasekit: {")
    assert lines[1] == "timestamp_s,dram_rd [B],dram_wr,power [W]"
    assert lines[6].split(",")[1:] == ["", "", ""]  # the missing sample: empty cells
    write_profile(_sample_profile(), tmp_path / "p.csv.gz")
    unzipped = gzip.decompress((tmp_path / "p.csv.gz").read_bytes()).decode()
    assert unzipped == (tmp_path / "p.csv").read_text()
    write_profile(_sample_profile(), tmp_path / "p.tsv")
    assert (tmp_path / "p.tsv").read_text().splitlines()[1].split("\t")[0] == "timestamp_s"


def test_csv_without_metadata_comment_round_trips_values(tmp_path: Path) -> None:
    profile = _sample_profile()
    write_profile(profile, tmp_path / "p.csv")
    text = (tmp_path / "p.csv").read_text().split("\n", 1)[1]  # drop the comment
    plain = _write(tmp_path, "plain.csv", text)
    back = _read_quietly(plain)
    np.testing.assert_array_equal(back.values, profile.values)
    assert back.period == profile.period
    assert back.units == profile.units and back.node == "" and back.meta == {}


def test_edited_header_wins_over_metadata(tmp_path: Path) -> None:
    write_profile(_sample_profile(), tmp_path / "p.csv")
    text = (tmp_path / "p.csv").read_text().replace("dram_wr,", "renamed,", 1)
    back = read_profile(_write(tmp_path, "q.csv", text))
    assert back.metrics == ("dram_rd", "renamed", "power")


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                max_size=12)


@st.composite
def profiles(draw: st.DrawFn) -> Profile:
    metrics = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    n = draw(st.integers(1, 30))
    values = draw(st.lists(st.one_of(
        st.floats(-LARGEST, LARGEST), st.just(float("nan"))),
        min_size=n * len(metrics), max_size=n * len(metrics)))
    period = draw(st.floats(1e-6, 1e4, allow_nan=False))
    start = draw(st.one_of(
        st.floats(-1e9, 2e9, allow_nan=False),
        st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9000, 1, 1),
                     timezones=st.just(dt.UTC))))
    if isinstance(start, dt.datetime):  # whole microseconds: beyond datetime64[ns] years
        period = max(round(period, 6), 1e-6)
    units = draw(st.dictionaries(st.sampled_from(metrics), names, max_size=len(metrics)))
    meta = draw(st.dictionaries(st.text(max_size=5), st.one_of(
        st.integers(-10**6, 10**6), st.text(max_size=8), st.booleans(), st.none()), max_size=3))
    node = draw(st.text(max_size=10))
    return Profile(values=np.array(values).reshape(n, len(metrics)), period=period,
                   metrics=tuple(metrics), start=start, units=units, node=node, meta=meta)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profile=profiles(), suffix=st.sampled_from([".csv", ".tsv", ".csv.gz", ".parquet"]))
def test_round_trip_property(profile: Profile, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"p{suffix}"
        write_profile(profile, path)
        _assert_same(profile, _read_quietly(path))


def test_column_names_and_units() -> None:
    assert parse_column_name("dram_rd [B]") == ("dram_rd", "B")
    assert parse_column_name(" power (W) ") == ("power", "W")
    assert parse_column_name('"energy [J]"') == ("energy", "J")
    assert parse_column_name("cpu(0) [W]") == ("cpu(0)", "W")
    assert parse_column_name("cpu(0) []") == ("cpu(0)", None)
    assert parse_column_name("ipc") == ("ipc", None)
    assert parse_column_name("[W]") == ("[W]", None)
    for name, unit in [("cpu(0)", None), ("a,b", "B/s"), ("x [y]", "z"), ("a\nb", None)]:
        assert parse_column_name(encode_column_name(name, unit))[1] == unit
        assert "," not in encode_column_name(name, unit) and "\n" not in encode_column_name(name)


def test_header_units_and_comments(tmp_path: Path) -> None:
    text = ("# recorded by hand\n\n"
            "Time_s,dram_rd [B],power (W),ipc\n"
            "0.0,1,2,3\n"
            "# a comment between samples\n"
            "0.5,4,,6\n"
            "\n"
            "1.0,7,8,9\n")
    profile = _read_quietly(_write(tmp_path, "u.csv", text))
    assert profile.metrics == ("dram_rd", "power", "ipc")
    assert profile.units == {"dram_rd": "B", "power": "W"}
    assert profile.period == 0.5
    np.testing.assert_array_equal(profile.values, [[1, 2, 3], [4, np.nan, 6], [7, 8, 9]])


def test_time_units_and_separators(tmp_path: Path) -> None:
    assert _read_quietly(_write(tmp_path, "ms.csv", "time [ms],x\n0,1\n10,2\n20,3\n")
                         ).period == 0.01
    assert _read_quietly(_write(tmp_path, "tab.tsv", "t\tx\n0\t1\n2\t2\n")).period == 2.0
    assert _read_quietly(_write(tmp_path, "semi.csv", "t;x\n0;1\n2;2\n")).period == 2.0
    crlf = _read_quietly(_write(tmp_path, "crlf.csv", "t,x\r\n0,1\r\n1,2\r\n"))
    assert crlf.values.tolist() == [[1.0], [2.0]]


def test_iso_datetimes(tmp_path: Path) -> None:
    text = ("timestamp,x\n2024-03-01T10:00:00+01:00,1\n2024-03-01T10:00:00.5+01:00,2\n"
            "2024-03-01T10:00:01+01:00,3\n")
    profile = _read_quietly(_write(tmp_path, "iso.csv", text))
    assert profile.start == dt.datetime(2024, 3, 1, 9, 0, tzinfo=dt.UTC)
    assert profile.start.utcoffset() == dt.timedelta(hours=1)  # the file's offset is kept
    assert profile.period == 0.5
    naive = _read_quietly(_write(tmp_path, "naive.csv",
                                 "time,x\n2024-03-01 10:00:00,1\n2024-03-01 10:00:02,2\n"))
    assert naive.start == dt.datetime(2024, 3, 1, 10, 0, tzinfo=dt.UTC)
    assert naive.period == 2.0


def test_metric_selection(tmp_path: Path) -> None:
    path = _write(tmp_path, "m.csv", "t,a,b,c\n0,1,2,3\n1,4,5,6\n")
    profile = read_profile(path, metrics=["c", "a"])
    assert profile.metrics == ("c", "a")
    np.testing.assert_array_equal(profile.values, [[3, 1], [6, 4]])
    write_profile(profile, tmp_path / "m.parquet")
    assert read_profile(tmp_path / "m.parquet", metrics=["a"]).values.tolist() == [[1.0], [4.0]]
    for suffix in (".csv", ".parquet"):
        with pytest.raises(UsageError, match=r"no metric 'zz'.*it has: (a, b, c|c, a)"):
            read_profile(tmp_path / f"m{suffix}", metrics=["zz"])


# --- the real LULESH profile ---------------------------------------------------------------
def test_lulesh_profile() -> None:
    profile = _read_quietly(LULESH)
    assert profile.metrics == ("dram_rd", "dram_wr")
    # The file's time axis is 10 ms bins (0.00 ... 0.56 s); the uncore sampling underneath is
    # ~10.08 ms, but one sample of each memory controller falls in every bin, so the bins are
    # regular and the period is exactly 0.01 s.
    assert profile.period == 0.01
    assert profile.n_samples == 57
    assert profile.start == 0.0
    assert not np.isnan(profile.values).any()
    np.testing.assert_array_equal(profile.values[0], [3542341.0, 235174.0])
    np.testing.assert_array_equal(profile.values[-1], [2035106.0, 1046289.0])
    assert (DATA / "LICENSE-PROFET-PARAVER.txt").exists()


# --- gaps and irregular sampling -----------------------------------------------------------
def test_gaps_become_nan_rows(tmp_path: Path) -> None:
    # 1% timer jitter is still regular; the steps of 3 and 2 periods are gaps.
    text = "t,x,y\n0,0,10\n1.003,1,11\n1.998,2,12\n5.001,5,15\n6.0,6,\n8.004,8,18\n"
    profile = _read_quietly(_write(tmp_path, "gaps.csv", text))
    assert profile.period == 1.003  # the median step
    expected = np.array([[0, 10], [1, 11], [2, 12], [np.nan, np.nan], [np.nan, np.nan],
                         [5, 15], [6, np.nan], [np.nan, np.nan], [8, 18]])
    np.testing.assert_array_equal(profile.values, expected)


def test_irregular_sampling_is_resampled_with_a_warning(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    period = 0.1
    times = np.arange(200) * period + rng.uniform(-0.03, 0.03, 200)
    times[0] = 0.0
    frame = pd.DataFrame({"time_s": times, "x": 3.0 * times + 1.0, "y": -2.0 * times})
    frame.to_csv(tmp_path / "jitter.csv", index=False)
    with pytest.warns(PhasekitWarning, match=r"jitter.csv: irregular sampling .* resampled "
                                             r"onto a regular [0-9.]+ s grid"):
        profile = read_profile(tmp_path / "jitter.csv")
    median = float(np.median(np.diff(times)))
    assert profile.period == pytest.approx(median, rel=1e-12)
    grid = profile.times()
    assert grid[-1] <= times[-1] < grid[-1] + profile.period
    # Linear interpolation of a linear signal is exact.
    np.testing.assert_allclose(profile.column("x"), 3.0 * grid + 1.0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(profile.column("y"), -2.0 * grid, rtol=1e-12, atol=1e-12)
    assert profile.meta["resampled"]["source_samples"] == 200


def test_resampling_never_bridges_long_gaps() -> None:
    seconds = np.array([0.0, 0.9, 2.1, 3.0, 4.05, 9.0, 10.0])
    values = seconds[:, None] * 2.0
    grid = regularize(seconds, values)
    assert grid.period == 1.025 and grid.resampled is not None
    t = np.arange(len(grid.values)) * grid.period
    in_gap = (t > 4.05) & (t < 9.0)
    assert in_gap.sum() == 5 == grid.resampled["nan_in_gaps"]
    assert np.isnan(grid.values[in_gap]).all()
    np.testing.assert_allclose(grid.values[~in_gap, 0], 2.0 * t[~in_gap])


def test_resampling_keeps_missing_values_missing() -> None:
    seconds = np.array([0.0, 1.0, 1.8, 3.0, 4.0])
    values = np.array([[0.0], [1.0], [np.nan], [3.0], [4.0]])
    grid = regularize(seconds, values)
    assert grid.period == 1.0 and grid.resampled is not None
    # 2.0 lies between a missing value and 3.0: missing. 1.0 and 3.0 are samples: kept.
    np.testing.assert_array_equal(grid.values[:, 0], [0.0, 1.0, np.nan, 3.0, 4.0])


def test_regularize_against_naive_reference() -> None:
    """The vectorized resampler equals a per-grid-point loop (tests/naive.py style)."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        steps = rng.uniform(0.5, 1.5, 40)
        steps[rng.integers(40)] = 3.7
        seconds = np.concatenate(([0.0], np.cumsum(steps)))
        values = rng.standard_normal((41, 2))
        got = regularize(seconds, values)
        period = float(np.median(steps))
        for i, g in enumerate(np.arange(len(got.values)) * got.period):
            j = max(k for k in range(41) if seconds[k] <= g + 1e-12)
            if j == 40 or abs(seconds[j] - g) <= 1e-12:
                expected = values[j]
            elif seconds[j + 1] - seconds[j] > 2 * period:
                expected = np.full(2, np.nan)
            else:
                w = (g - seconds[j]) / (seconds[j + 1] - seconds[j])
                expected = (1 - w) * values[j] + w * values[j + 1]
            np.testing.assert_allclose(got.values[i], expected, rtol=1e-9, atol=1e-12)


# --- bad input -----------------------------------------------------------------------------
BAD_CSV = [
    # (id, content, expected message fragment, line, column)
    ("empty", "", "empty file", None, None),
    ("blank", "\n  \n", "empty file", None, None),
    ("comments-only", "# nothing\n# here\n", "no header", None, None),
    ("header-only", "timestamp_s,x\n", "no samples", None, None),
    ("no-time-column", "when,x\n0,1\n1,2\n",
     "no time column: expected a column named timestamp, timestamp_s, time, time_s, t", 1,
     None),
    ("two-time-columns", "t,time,x\n0,0,1\n1,1,2\n", "several time columns", 1, None),
    ("no-metrics", "t\n0\n1\n", "no metric columns", 1, None),
    ("duplicate-column", "t,x,x\n0,1,2\n1,2,3\n", "duplicate column name", 1, "x"),
    ("unnamed-column", "t,x,\n0,1,2\n1,2,3\n", "column 3 of the header has no name", 1, None),
    ("non-numeric", "# c\nt,x,y\n0,1,2\n1,2,abc\n2,3,4\n", "expected a number, found 'abc'", 4,
     "y"),
    ("non-numeric-time", "t,x\n0,1\nzero,2\n", "expected a time in seconds, found 'zero'", 3,
     "t"),
    ("bad-datetime", "time,x\n2024-01-01T00:00:00,1\n2024-13-01T00:00:01,2\n",
     "expected an ISO-8601 datetime", 3, "time"),
    ("boolean", "t,x\n0,True\n1,False\n", "expected a number, found 'True'", 2, "x"),
    ("inf", "t,x\n0,1\n1,inf\n2,3\n", "infinite value", 3, "x"),
    ("inf-time", "t,x\n0,1\ninf,2\n", "infinite value", 3, "t"),
    ("missing-time", "t,x\n0,1\n,2\n2,3\n", "missing time value", 3, "t"),
    ("unsorted", "t,x\n0,1\n2,2\n1,3\n", "timestamps are not sorted: '1' comes after '2'", 4,
     "t"),
    ("duplicate-time", "t,x\n0,1\n1,2\n1,3\n", "duplicate timestamp '1' (also at line 3)", 4,
     "t"),
    ("one-sample", "t,x\n0,1\n", "only 1 sample", 2, None),
    ("too-many-fields", "t,x\n0,1\n1,2,3\n2,3\n", "expected 2 fields like the header, found 3",
     3, None),
    ("too-few-fields", "t,x,y\n0,1,2\n1,2\n2,3,4\n", "expected 3 fields like the header, found 2",
     3, None),
    ("extra-field-first-row", "t,x\n0,1,9\n1,2\n", "expected 2 fields like the header, found 3",
     2, None),
    ("truncated-row", "t,x,y\n0,1,2\n1,2,3\n2", "expected 3 fields like the header, found 1", 4,
     None),
    ("time-unit", "time [h],x\n0,1\n1,2\n", "unknown time unit 'h'", 1, "time"),
    ("bad-metadata", "# phasekit: {node: 1}\nt,x\n0,1\n1,2\n", "not valid JSON", 1, None),
    ("metadata-types", '# phasekit: {"period": -1}\nt,x\n0,1\n1,2\n', "'period' must be", 1,
     None),
    ("nul-byte", "t,x\n0,1\n1,\x002\n", "NUL byte", 3, None),
    ("huge-gap", "t,x\n0,1\n1,2\n2,3\n1e12,4\n", "a timestamp is probably wrong", 5, "t"),
]


@pytest.mark.parametrize(("content", "fragment", "line", "column"),
                         [case[1:] for case in BAD_CSV], ids=[case[0] for case in BAD_CSV])
def test_bad_csv(tmp_path: Path, content: str, fragment: str, line: int | None,
                 column: str | None) -> None:
    path = _write(tmp_path, "bad.csv", content)
    with pytest.raises(InputError) as info:
        read_profile(path)
    error = info.value
    message = str(error)
    assert str(path) in message and error.path == str(path)
    assert fragment in message
    assert error.line == line
    if line is not None:
        assert f"line {line}" in message
    assert error.column == column
    if column is not None:
        assert repr(column) in message


def test_not_utf8(tmp_path: Path) -> None:
    path = _write(tmp_path, "latin.csv", b"t,x\n0,1\n1,\xe92\n")
    with pytest.raises(InputError, match=r"latin.csv, line 3: not UTF-8"):
        read_profile(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    for name in ("absent.csv", "absent.parquet"):
        with pytest.raises(InputError, match=rf"{name}: no such file"):
            read_profile(tmp_path / name)
    (tmp_path / "dir.csv").mkdir()
    (tmp_path / "dir.parquet").mkdir()
    for name in ("dir.csv", "dir.parquet"):
        with pytest.raises(InputError, match=name):
            read_profile(tmp_path / name)


def test_damaged_gzip(tmp_path: Path) -> None:
    data = gzip.compress(b"t,x\n0,1\n1,2\n")
    path = _write(tmp_path, "cut.csv.gz", data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut.csv.gz: damaged gzip"):
        read_profile(path)


def test_parquet_without_metadata_is_read_like_csv(tmp_path: Path) -> None:
    frame = pd.DataFrame({"Time": [0.0, 0.25, 0.5, 1.0], "power [W]": [1.0, 2.0, None, 4.0],
                          "count": [1, 2, 3, 4]})
    frame.to_parquet(tmp_path / "pandas.parquet")
    profile = _read_quietly(tmp_path / "pandas.parquet")
    assert profile.metrics == ("power", "count")
    assert profile.units == {"power": "W"}
    assert profile.period == 0.25
    np.testing.assert_array_equal(profile.values, [[1, 1], [2, 2], [np.nan, 3], [np.nan, np.nan],
                                                   [4, 4]])
    stamps = pd.DataFrame({"timestamp": pd.date_range("2024-01-01", periods=3, freq="1s"),
                           "x": [1.0, 2.0, 3.0]})
    stamps.to_parquet(tmp_path / "stamps.pq")
    assert _read_quietly(tmp_path / "stamps.pq").start == dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


BAD_PARQUET = [
    ("no-time-column", {"when": [0.0, 1.0], "x": [1.0, 2.0]}, "no time column", None),
    ("string-metric", {"t": [0.0, 1.0], "x": ["a", "b"]}, "holds string; expected numbers", "x"),
    ("unsorted", {"t": [0.0, 2.0, 1.0], "x": [1.0, 2.0, 3.0]}, "not sorted", "t"),
    ("duplicate-time", {"t": [0.0, 1.0, 1.0], "x": [1.0, 2.0, 3.0]}, "duplicate timestamp", "t"),
    ("inf", {"t": [0.0, 1.0], "x": [1.0, float("inf")]}, "infinite value", "x"),
    ("missing-time", {"t": [0.0, None, 2.0], "x": [1.0, 2.0, 3.0]}, "missing time value", "t"),
    ("one-sample", {"t": [0.0], "x": [1.0]}, "only 1 sample", "t"),
    ("no-samples", {"t": pa.array([], pa.float64()), "x": pa.array([], pa.float64())},
     "no samples", "t"),
    ("bad-time-type", {"t": [True, False], "x": [1.0, 2.0]}, "the time column holds bool", "t"),
]


@pytest.mark.parametrize(("columns", "fragment", "column"), [c[1:] for c in BAD_PARQUET],
                         ids=[c[0] for c in BAD_PARQUET])
def test_bad_parquet(tmp_path: Path, columns: dict[str, object], fragment: str,
                     column: str | None) -> None:
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table(columns), path)
    with pytest.raises(InputError) as info:
        read_profile(path)
    assert str(path) in str(info.value) and fragment in str(info.value)
    assert info.value.column == column


@pytest.mark.parametrize("content", [b"", b"PAR1", b"not parquet at all\n" * 10,
                                     b"PAR1" + bytes(range(256)) + b"PAR1"])
def test_unparseable_parquet(tmp_path: Path, content: bytes) -> None:
    path = _write(tmp_path, "junk.parquet", content)
    with pytest.raises(InputError, match=r"junk.parquet: not a readable Parquet file"):
        read_profile(path)


def test_bad_parquet_metadata(tmp_path: Path) -> None:
    table = pa.table({"t": [0.0, 1.0], "x": [1.0, 2.0]}).replace_schema_metadata(
        {b"phasekit": b"{oops"})
    pq.write_table(table, tmp_path / "meta.parquet")
    with pytest.raises(InputError, match=r"meta\.parquet: phasekit metadata is not valid JSON"):
        read_profile(tmp_path / "meta.parquet")


# --- writing -------------------------------------------------------------------------------
def test_write_refuses_what_cannot_be_read_back(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="infinite"):
        write_profile(Profile(values=[1.0, np.inf], period=1.0, metrics=("x",)),
                      tmp_path / "inf.csv")
    with pytest.raises(UsageError, match="no samples"):
        write_profile(Profile(values=np.empty((0, 1)), period=1.0, metrics=("x",)),
                      tmp_path / "empty.parquet")
    with pytest.raises(UsageError, match="JSON"):
        write_profile(_sample_profile().replace(meta={"x": object()}), tmp_path / "m.csv")
    with pytest.raises(UsageError, match="does not exist"):
        write_profile(_sample_profile(), tmp_path / "missing" / "p.csv")
    with pytest.raises(UsageError, match="expects a Profile"):
        write_profile(np.zeros(3), tmp_path / "p.csv")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_single_sample_round_trips_with_metadata(tmp_path: Path) -> None:
    profile = Profile(values=[[1.0, 2.0]], period=0.5, metrics=("a", "b"), start=3.0)
    for suffix in (".csv", ".parquet"):
        write_profile(profile, tmp_path / f"one{suffix}")
        _assert_same(profile, _read_quietly(tmp_path / f"one{suffix}"))


def test_time_column_name_does_not_collide(tmp_path: Path) -> None:
    profile = Profile(values=np.ones((3, 2)), period=1.0, metrics=("timestamp_s", "T"))
    for suffix in (".csv", ".parquet"):
        write_profile(profile, tmp_path / f"c{suffix}")
        _assert_same(profile, _read_quietly(tmp_path / f"c{suffix}"))


def test_atomic_write_keeps_old_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    atomic_write_text(target, "old\n")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half-written")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.endswith(".txt") and tmp != target
        tmp.write_text("new\n")
    assert target.read_text() == "new\n"


def test_atomic_write_permissions(tmp_path: Path) -> None:
    target = tmp_path / "perm.txt"
    atomic_write_text(target, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    target.chmod(0o640)
    atomic_write_text(target, "y")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_failed_profile_write_keeps_old_file(tmp_path: Path) -> None:
    target = tmp_path / "p.csv"
    write_profile(_sample_profile(), target)
    before = target.read_bytes()
    with pytest.raises(UsageError):
        write_profile(_sample_profile().replace(meta={"x": object()}), target)
    assert target.read_bytes() == before


# --- corruption never crashes --------------------------------------------------------------
def _valid_csvs() -> list[bytes]:
    profile = Profile(values=np.arange(24.0).reshape(12, 2) * 1.5, period=0.5,
                      metrics=("a", "b"), units={"a": "W"}, node="n1", meta={"k": 1})
    with tempfile.TemporaryDirectory() as directory:
        out = []
        for start in (0.0, dt.datetime(2024, 1, 1, tzinfo=dt.UTC)):
            path = Path(directory) / "v.csv"
            write_profile(profile.replace(start=start), path)
            out.append(path.read_bytes())
    return [*out, LULESH.read_bytes()]


VALID_CSVS = _valid_csvs()
JUNK = st.one_of(st.binary(min_size=1, max_size=8),
                 st.text("0123456789.e-+,;\t\n\r #[]()naifINF:TZ\"'", min_size=1,
                         max_size=8).map(str.encode))


def corrupted(sources: list[bytes]) -> st.SearchStrategy[bytes]:
    return helpers.corrupted(sources, JUNK)


def _read_or_input_error(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhasekitWarning)
        try:
            profile = read_profile(path)
        except InputError as error:
            assert str(path) in str(error)
            return
    assert isinstance(profile, Profile) and profile.n_samples >= 1
    assert np.isfinite(profile.period) and profile.period > 0
    assert not np.isinf(profile.values).any()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=corrupted(VALID_CSVS))
def test_corrupted_csv_gives_profile_or_input_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "corrupt.csv"
        path.write_bytes(data)
        _read_or_input_error(path)
        gz = Path(directory) / "corrupt.csv.gz"
        gz.write_bytes(gzip.compress(data))
        _read_or_input_error(gz)


def _valid_parquet() -> bytes:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "v.parquet"
        write_profile(_sample_profile(), path)
        return path.read_bytes()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=corrupted([_valid_parquet()]))
def test_corrupted_parquet_gives_profile_or_input_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "corrupt.parquet"
        path.write_bytes(data)
        _read_or_input_error(path)


# --- opening inputs ----------------------------------------------------------------------------
def test_inputs_refuse_what_is_not_a_regular_file(tmp_path: Path) -> None:
    import os

    from phasekit.io.inputs import input_file

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"pipe\.csv: is a FIFO \(named pipe\), not a regular "
                                         r"file; expected a profile"):
        read_profile(fifo)  # at once: opening a FIFO without a writer would wait forever
    with pytest.raises(InputError, match="is a character device"):
        input_file("/dev/null")
    with pytest.raises(InputError, match=r"is a folder; expected a file"):
        input_file(tmp_path)
    with pytest.raises(InputError, match=r"nothing\.csv: no such file"):
        read_profile(tmp_path / "nothing.csv")


def test_damaged_gzip_and_json_numbers_are_input_errors(tmp_path: Path) -> None:
    import gzip

    from phasekit.io.inputs import read_bytes, read_json

    packed = gzip.compress(b"timestamp_s,a\n" + b"0,1\n" * 500)
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(InputError, match="damaged gzip data"):
        read_bytes(cut)
    for text, fragment in [('{"a": NaN}', "NaN is not a number JSON allows"),
                           ('{"a": 1e999}', "1e999 is too large for a float64"),
                           ('{"a": 1}\n{"b": 2}', "line 2: more after the JSON value"),
                           ('{"a": ', "line 1: not valid JSON")]:
        path = tmp_path / "x.json"
        path.write_text(text)
        with pytest.raises(InputError, match=re.escape(fragment)):
            read_json(path)


def test_looks_like_names_the_kind_and_the_command(tmp_path: Path) -> None:
    import shutil

    from phasekit.io.inputs import looks_like

    program = tmp_path / "stencil"
    shutil.copyfile(shutil.which("true") or "/bin/true", program)
    assert looks_like(program).startswith("an executable (ELF)")
    campaign = tmp_path / "c.json"
    campaign.write_text('{"kind": "campaign", "version": 1, "runs": []}')
    assert "phasekit energy" in looks_like(campaign)
    table = tmp_path / "runs.csv"
    table.write_text("threads,cores,time_s,energy_j\n1,1,2.0,3.0\n")
    assert looks_like(table) == "a campaign table (use `phasekit energy`)"


def test_csv_tables_name_the_first_bad_cell(tmp_path: Path) -> None:
    from phasekit.io import read_csv_table

    header = "threads,cores,frequency_ghz,input,time_s,energy_j\n"
    rows = [f"{k},{k},2.0,{'large' if k == 3 else k},{10.0 / k},{100.0 + k}\n"
            for k in range(1, 16)]
    good = tmp_path / "good.csv"
    good.write_text(header + "".join(rows))
    table = read_csv_table(good)
    assert table["threads"].tolist() == list(range(1, 16))
    assert table["input"].tolist()[2] == "large"  # a label column keeps its text
    semicolons = tmp_path / "semi.csv"
    semicolons.write_text((header + "".join(rows)).replace(",", ";"))
    assert read_csv_table(semicolons).equals(table)
    cases = {
        "text": (12, "abc,12,2.0,12,1.0,5.0\n", "line 14, column 'threads': expected a number, "
                                               "found 'abc'"),
        "ragged": (3, "3,3,2.0,3,1.0\n", "line 5: expected 6 fields like the header, found 5"),
        "huge": (5, "5,5,2.0,5,1.0,1e308\n", "line 7, column 'energy_j': 1e308 is not a "
                                            "plausible value"),
        "infinite": (5, "5,5,2.0,5,inf,1.0\n", "line 7, column 'time_s': inf is not a "
                                              "plausible value"),
        "negative": (7, "7,7,-2.0,7,1.0,1.0\n", "line 9, column 'frequency_ghz': negative "
                                               "value -2.0"),
    }
    for name, (index, row, fragment) in cases.items():
        bad = tmp_path / f"{name}.csv"
        bad.write_text(header + "".join([*rows[:index], row, *rows[index + 1:]]))
        with pytest.raises(InputError, match=re.escape(f"{bad}, {fragment}")):
            read_csv_table(bad)


def test_profile_values_beyond_1e100_are_refused_with_their_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "run.csv", "t,a,b\n0,1,2\n1,1e308,2\n2,1,2\n")
    with pytest.raises(InputError, match=r"run\.csv, line 3, column 'a': 1e\+308 is not a "
                                         r"plausible measurement"):
        read_profile(path)


# --- a CSV without a time column, one row every period (the dcslab perf series) -------------
def test_a_csv_without_time_column_is_read_at_the_given_period(tmp_path: Path) -> None:
    values = np.arange(24, dtype=float).reshape(8, 3) * 1e6
    path = tmp_path / "perf.csv"
    path.write_text("l2miss,instructions,cycles\n"
                    + "".join(",".join(f"{v:.0f}" for v in row) + "\n" for row in values))
    profile = read_profile(path, period=0.2)
    assert profile.metrics == ("l2miss", "instructions", "cycles")
    assert profile.period == pytest.approx(0.2) and profile.start == 0.0
    np.testing.assert_allclose(profile.times(), 0.2 * np.arange(8))
    np.testing.assert_array_equal(profile.values, values)
    with pytest.raises(InputError, match=r"no time column.*give that period in seconds \(the period option\)"):
        read_profile(path)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(UsageError, match="expected a positive number of seconds"):
            read_profile(path, period=bad)


def test_a_period_is_refused_where_the_file_has_its_times(tmp_path: Path) -> None:
    timed = tmp_path / "timed.csv"
    timed.write_text("time_s,x\n0,1\n1,2\n")
    with pytest.raises(UsageError, match=r"has a time column \('time_s'\)"):
        read_profile(timed, period=0.5)
    profile = Profile(values=np.ones((4, 1)), period=1.0, metrics=("x",))
    write_profile(profile, tmp_path / "p.parquet")
    with pytest.raises(UsageError, match="this is a parquet file"):
        read_profile(tmp_path / "p.parquet", period=0.5)
