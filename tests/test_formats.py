"""The format registry (phasekit.io.formats): ``read_any`` reads what ``pk.read`` reads, with
the same errors; a new format is one module and one registry line; readers that can take a
stream; ``Profile.from_frame`` and ``to_frame``."""

from __future__ import annotations

import http.server
import importlib
import io
import json
import sys
import textwrap
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers import DATA
from phasekit import Profile
from phasekit.errors import InputError, UsageError
from phasekit.io import read_profile, read_trace, write_profile
from phasekit.io.formats import FORMATS, Format, read_any, register

PRV = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"


def _profile(n: int = 40) -> Profile:
    rng = np.random.default_rng(0)
    return Profile(values=rng.normal(size=(n, 2)), period=0.5, metrics=("ipc", "dram_rd"),
                   start=10.0, units={"dram_rd": "B"}, node="n1", meta={"run": 3})


def _same(a: Profile, b: Profile) -> None:
    assert (a.metrics, a.period, a.start, a.node, dict(a.units), dict(a.meta)) == \
        (b.metrics, b.period, b.start, b.node, dict(b.units), dict(b.meta))
    assert np.array_equal(a.values, b.values, equal_nan=True)


# --- read_any reads what pk.read reads ---------------------------------------------------------
def test_errors_are_value_errors_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file") as caught:
        read_any(tmp_path / "missing.csv")
    assert str(tmp_path / "missing.csv") in str(caught.value)
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "periodicity", "version": 1}')
    with pytest.raises(ValueError, match="malformed periodicity"):
        read_any(bad)
    unknown = tmp_path / "odd.json"
    unknown.write_text('{"kind": "horoscope"}')
    with pytest.raises(InputError, match=r"odd.json: a phasekit 'horoscope' result, which "
                                         r"read\(\) does not know; it reads .*periodicity.*"
                                         r"power_model, power_profiles and campaign"):
        read_any(unknown)


def test_a_saved_result_is_read_back(tmp_path: Path) -> None:
    from phasekit.periodicity import analyze
    from phasekit.synth.periodic import generate

    profile = generate("hpcg", minutes=1, seed=0)[0]
    result = analyze(profile, metrics=["ipc"])
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(result.to_dict()))
    back = read_any(saved)
    assert type(back) is type(result)
    assert json.dumps(back.to_dict()) == json.dumps(result.to_dict())


def test_power_profiles_and_a_power_model(tmp_path: Path) -> None:
    from phasekit.energy.phasediv import PowerProfiles
    from phasekit.signature.reconstruct import default_power_model
    from phasekit.synth.power import generate_power_profiles

    profiles, _ = generate_power_profiles(cores=[1, 4], freqs_ghz=[1.2, 2.4], seed=1)
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(profiles.to_dict()))
    read = read_any(path)
    assert isinstance(read, PowerProfiles) and read.to_dict() == profiles.to_dict()
    model = default_power_model()
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model.to_dict()))
    assert read_any(path).to_dict() == model.to_dict()


def test_a_campaign(tmp_path: Path) -> None:
    from phasekit.campaign import read_campaign, write_campaign
    from phasekit.runs import Campaign
    from phasekit.synth.campaigns import seed_campaign

    path = tmp_path / "campaign.json"
    write_campaign(seed_campaign(seed=0, cores=(1, 2, 4)).campaign, path)
    campaign = read_any(path)
    assert isinstance(campaign, Campaign)
    assert len(campaign.runs) == len(read_campaign(path).runs) > 0


def test_a_trace() -> None:
    from phasekit.trace import Trace

    trace = read_any(PRV)
    assert isinstance(trace, Trace)
    assert trace.call_counts().equals(read_trace(PRV).call_counts())


def test_a_profile_file(tmp_path: Path) -> None:
    profile = _profile()
    for name in ("p.parquet", "p.csv", "p.arrows"):
        write_profile(profile, tmp_path / name)
        _same(read_any(tmp_path / name), profile)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the file's jitter is resampled, with a warning
        perf = read_any(DATA / "perfstat_system.csv")  # a .csv that is perf stat output
        _same(perf, read_profile(DATA / "perfstat_system.csv"))
    assert perf.meta["perf_stat"] and "task_clock" in perf.metrics


def test_folders(tmp_path: Path) -> None:
    from phasekit.signature.paths import load_signature

    with pytest.raises(UsageError) as caught:
        read_any(tmp_path)
    assert str(caught.value) == (f"{tmp_path}: a directory that is neither an OTF2 trace nor a "
                                 "signature; read its files one at a time")
    signature = tmp_path / "sig"
    signature.mkdir()
    (signature / "signature.json").write_text("[]")
    with pytest.raises(InputError) as direct:
        load_signature(signature)
    with pytest.raises(InputError) as through:
        read_any(signature)
    assert str(through.value) == str(direct.value)


def test_options_apply_to_prometheus_only(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        read_any(tmp_path / "p.csv", queries=["up"], step="5s")
    assert str(caught.value) == "read() options queries, step apply to prometheus:// only"


class _Prometheus(http.server.BaseHTTPRequestHandler):
    """Answers every range query with one series of node ``n1``: the sample times' seconds."""

    def do_GET(self) -> None:
        from urllib.parse import parse_qs, urlsplit

        url = urlsplit(self.path)
        if url.path.endswith("/query_range"):
            query = parse_qs(url.query)
            start, end, step = (float(query[k][0]) for k in ("start", "end", "step"))
            values = [[t, str(t)] for t in np.arange(start, end + step / 2, step)]
            data: object = {"resultType": "matrix",
                            "result": [{"metric": {"instance": "n1"}, "values": values}]}
        else:
            data = {}
        body = json.dumps({"status": "success", "data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def prometheus() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Prometheus)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"prometheus://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_prometheus_server(prometheus: str) -> None:
    from phasekit.io.prometheus import read_prometheus

    (profile,) = read_any(prometheus, queries=["up"], start=1000, end=1020, step="5s")
    assert profile.node == "n1" and profile.metrics == ("up",) and profile.period == 5.0
    assert profile.values[:, 0].tolist() == [1000.0, 1005.0, 1010.0, 1015.0, 1020.0]
    (direct,) = read_prometheus(prometheus, ["up"], start=1000, end=1020, step="5s")
    assert np.array_equal(profile.values, direct.values)


def test_prometheus_errors_name_the_parameter_not_the_option(prometheus: str) -> None:
    """A Python caller reads ``step='5 parsecs'``; the command line ``--step``."""
    with pytest.raises(UsageError) as caught:
        read_any(prometheus, queries=["up"], start=1000, step="5 parsecs")
    assert str(caught.value) == "step='5 parsecs': expected a duration such as 5s, 1m or 1m30s"
    assert caught.value.command_line().startswith("--step '5 parsecs': ")
    for keyword, value in (("start", "yesterday"), ("end", "now-1x")):
        with pytest.raises(UsageError) as caught:
            read_any(prometheus, queries=["up"], **{"start": 1000, keyword: value})
        assert str(caught.value).startswith(f"{keyword}={value!r}: expected ")
        assert "--" not in str(caught.value)


# --- a new format: one module, one registry line -----------------------------------------------
TOY_MODULE = '''
"""Toy profiles: ``# toy`` and one number per line, one sample per second."""

import numpy as np

from phasekit.io.inputs import read_bytes
from phasekit.profile import Profile


def looks_like_toy(head: str) -> bool:
    return head.startswith("# toy")


def read_toy(source, *, metrics=None):
    lines = read_bytes(source, "a toy profile").decode().splitlines()
    values = [float(line) for line in lines if line and not line.startswith("#")]
    profile = Profile(values=np.array(values), period=1.0, metrics=("toy",))
    return profile if metrics is None else profile.select(metrics)
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Format]:
    (tmp_path / "toyformat.py").write_text(textwrap.dedent(TOY_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        yield register(Format("toy", "toyformat:read_toy", (".toy",),
                              sniffer="toyformat:looks_like_toy", streams=True))
    finally:
        FORMATS.pop("toy", None)
        sys.modules.pop("toyformat", None)


def test_a_registered_format_is_read_everywhere(toy: Format, tmp_path: Path) -> None:
    path = tmp_path / "run.TOY"
    path.write_text("# toy\n1\n2.5\n4\n")
    for profile in (read_profile(path), read_any(path), read_profile(path, format="toy"),
                    read_profile(io.BytesIO(path.read_bytes()))):
        assert isinstance(profile, Profile)
        assert profile.metrics == ("toy",) and profile.values[:, 0].tolist() == [1, 2.5, 4]
    logged = tmp_path / "run.txt"  # a name that does not say its format: the content does
    logged.write_text("# toy\n7\n8\n")
    assert read_any(logged).values[:, 0].tolist() == [7, 8]
    assert read_profile(path, metrics=["TOY"]).metrics == ("toy",)
    with pytest.raises(UsageError, match="toy profiles can be read but not written"):
        write_profile(_profile(), tmp_path / "out.toy")
    junk = tmp_path / "junk.dat"
    junk.write_text("hello\n")
    with pytest.raises(InputError, match=r"perf stat -I -x, likwid-perfctr -t or toy output "
                                         r"\(named .*\.arrow, \.toy\)"):
        read_profile(junk)
    with pytest.raises(UsageError, match="registered already"):
        register(Format("toy", "toyformat:read_toy"))


def test_the_registry_holds_every_reader() -> None:
    assert list(FORMATS)[:5] == ["csv", "parquet", "arrow", "perfstat", "likwid"]
    assert {"paraver", "otf2", "prometheus", "signature", "saved"} <= set(FORMATS)
    for fmt in FORMATS.values():  # every "module:function" names a function
        for function in (fmt.reader, fmt.writer, fmt.sniffer, fmt.folder):
            if isinstance(function, str):
                module, _, name = function.partition(":")
                assert callable(getattr(importlib.import_module(module), name)), function
    with pytest.raises(UsageError, match=r"starting with '.'"):
        Format("bad", "x:y", ("csv",))


# --- streams -----------------------------------------------------------------------------------
def _stream(data: bytes, name: str | None = "<stdin>") -> io.BytesIO:
    stream = io.BytesIO(data)
    if name is not None:
        stream.name = name  # type: ignore[attr-defined]
    return stream


def test_csv_perf_and_likwid_are_read_from_a_stream(tmp_path: Path) -> None:
    profile = _profile()
    path = tmp_path / "p.csv"
    write_profile(profile, path)
    _same(read_profile(_stream(path.read_bytes())), profile)
    gzipped = tmp_path / "p.csv.gz"
    write_profile(profile, gzipped)
    _same(read_profile(_stream(gzipped.read_bytes()), format="csv"), profile)
    for name in ("perfstat_system.csv", "likwid_timeline_v5_synthetic.txt"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from_file = read_profile(DATA / name)
            from_stream = read_profile(_stream((DATA / name).read_bytes()))
        assert from_stream.metrics == from_file.metrics
        assert np.array_equal(from_stream.values, from_file.values, equal_nan=True)


def test_stream_errors_name_the_stream(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_profile(_stream(b"time_s,x\n0,1\n1,oops\n"))
    assert str(caught.value).startswith("<stdin>, line 3")
    with pytest.raises(InputError, match=r"^<stream>, line 1: no time column"):
        read_profile(_stream(b"hello\n", name=None))  # unrecognized content: the CSV reader
    write_profile(_profile(), tmp_path / "p.parquet")
    with pytest.raises(UsageError, match=r"^<stdin>: Parquet is read from a file, not a stream"):
        read_profile(_stream((tmp_path / "p.parquet").read_bytes()))
    rows = read_profile(_stream(b"x,y\n1,2\n3,4\n"), period=0.5)
    assert rows.period == 0.5 and rows.values.tolist() == [[1, 2], [3, 4]]


# --- Profile <-> DataFrame ---------------------------------------------------------------------
@pytest.mark.parametrize("start", [0.0, 1_700_000_000.25,
                                   pd.Timestamp("2024-05-01 12:00:00.123456+02:00")])
def test_to_frame_and_back(start: object) -> None:
    profile = _profile().replace(start=start.to_pydatetime() if isinstance(start, pd.Timestamp)
                                 else start)
    frame = profile.to_frame()
    assert list(frame.columns) == ["ipc", "dram_rd"] and len(frame) == profile.n_samples
    assert frame.index.name == ("timestamp" if isinstance(start, pd.Timestamp)
                                else "timestamp_s")
    _same(Profile.from_frame(frame), profile)
    assert np.array_equal(frame.to_numpy(), profile.values)


def test_from_frame_takes_a_time_column_or_a_period() -> None:
    frame = pd.DataFrame({"t": [0.0, 0.2, 0.4, 0.8], "power": [1, 2, 3, 5],
                          "temp": [40.0, 41.0, np.nan, 43.0]})
    profile = Profile.from_frame(frame, time="t", units={"power": "W"}, node="n7")
    assert profile.metrics == ("power", "temp") and profile.period == pytest.approx(0.2)
    assert np.array_equal(profile.values[:, 0], [1, 2, 3, np.nan, 5], equal_nan=True)
    assert (profile.units, profile.node) == ({"power": "W"}, "n7")
    rows = Profile.from_frame(frame[["power"]], period=0.5, start=3.0)
    assert (rows.period, rows.start, rows.n_samples) == (0.5, 3.0, 4)
    stamped = frame.assign(t=pd.to_datetime(frame["t"], unit="s")).set_index("t")
    assert Profile.from_frame(stamped).start.tzinfo is not None  # naive datetimes are UTC
    with pytest.raises(UsageError, match=r"^period: the frame has no sample times"):
        Profile.from_frame(frame[["power"]])
    with pytest.raises(UsageError, match=r"^time='x': no such column"):
        Profile.from_frame(frame, time="x")
    with pytest.raises(UsageError, match=r"irregular sample times.*resample"):
        Profile.from_frame(frame.assign(t=[0.0, 0.2, 0.45, 0.6]), time="t")
    with pytest.raises(UsageError, match="column 'name' is not numeric"):
        Profile.from_frame(frame.assign(name="a"), time="t")
