"""Profiles from a real Prometheus server on loopback (tests/prometheus_server.py starts
Debian's ``prometheus`` on a temporary TSDB filled by ``promtool``; the tests that need it are
marked ``needs_prometheus``)."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

import phasekit as pk
import prometheus_server as ps
from helpers import DATA
from phasekit.errors import InputError, UnsupportedError, UsageError
from phasekit.io import prometheus as prom
from phasekit.io import read_profile
from phasekit.io.prometheus import Query, parse_duration, parse_time, read_prometheus
from phasekit.periodicity import analyze
from phasekit.phases import phases as detect_phases
from phasekit.synth.periodic import generate

#: Where the backfilled samples start: a day ago (inside the retention, before the head).
START = float(int(time.time()) - 86400)


@pytest.fixture(scope="module")
def recording() -> pk.Profile:
    return read_profile(DATA / "real_backtoback_1s.parquet")


@pytest.fixture(scope="module")
def synthetic() -> pk.Profile:
    profile, _ = generate("nemo", minutes=3.0, seed=2)
    return profile


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, recording: pk.Profile,
           synthetic: pk.Profile) -> Iterator[ps.Prometheus]:
    assert ps.PROMETHEUS and ps.PROMTOOL, "needs Debian's prometheus package (.ci/run installs it)"
    folder = tmp_path_factory.mktemp("prometheus")
    (folder / "data").mkdir()
    ps.backfill({"node-a": recording, "node-b": _scaled(recording, 2.0)}, folder / "data",
                START)
    ps.backfill({"nemo": synthetic}, folder / "data", START)
    with ps.running(folder) as running:
        yield running


def _scaled(profile: pk.Profile, factor: float) -> pk.Profile:
    return pk.Profile(values=profile.values * factor, period=profile.period,
                      metrics=profile.metrics, start=profile.start)


def _queries(profile: pk.Profile) -> list[str]:
    return [f"{m}={ps.metric_name(m)}" for m in profile.metrics]


def _end(profile: pk.Profile) -> float:
    return START + (profile.n_samples - 1) * profile.period


@pytest.mark.needs_prometheus
def test_a_recording_read_back_from_prometheus_is_the_file(server: ps.Prometheus,
                                                           recording: pk.Profile) -> None:
    profiles = read_prometheus(server.url, _queries(recording), start=START,
                               end=_end(recording), step="1s")
    assert [p.node for p in profiles] == ["node-a", "node-b"]
    node_a = profiles[0]
    assert node_a.metrics == recording.metrics and node_a.period == recording.period
    assert np.array_equal(node_a.values, recording.values, equal_nan=True)
    assert np.allclose(profiles[1].values, 2.0 * recording.values, equal_nan=True)
    assert node_a.meta["prometheus"]["label"] == "instance"
    # the same periodicity and phases as the file's
    from_file, from_server = analyze(recording), analyze(node_a)
    assert from_server.summary().equals(from_file.summary())
    assert detect_phases(node_a).summary().equals(detect_phases(recording).summary())


@pytest.mark.needs_prometheus
def test_a_periodic_profile_keeps_its_period_through_prometheus(server: ps.Prometheus,
                                                                synthetic: pk.Profile) -> None:
    (profile,) = pk.read(server.url, queries=_queries(synthetic), start=START,
                         end=_end(synthetic), step=synthetic.period, label="instance")
    assert profile.node == "nemo"
    expected = [p.period_s for p in analyze(synthetic).patterns]
    assert [p.period_s for p in analyze(profile).patterns] == pytest.approx(expected)


@pytest.mark.needs_prometheus
def test_long_ranges_come_in_chunks_with_progress(server: ps.Prometheus, recording: pk.Profile,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    whole = read_prometheus(server.url, _queries(recording)[:3], start=START,
                            end=_end(recording), step=1)
    monkeypatch.setattr(prom, "MAX_POINTS", 64)  # 300 points: 5 chunks per query
    told: list[float] = []
    chunked = read_prometheus(server.url, _queries(recording)[:3], start=START,
                              end=_end(recording), step=1, progress=told.append)
    assert len(told) == 15 and told == sorted(told) and told[-1] == 1.0
    for a, b in zip(whole, chunked, strict=True):
        assert np.array_equal(a.values, b.values, equal_nan=True)


@pytest.mark.needs_prometheus
def test_a_coarser_step_and_gaps(server: ps.Prometheus, recording: pk.Profile) -> None:
    (first, _) = read_prometheus(server.url, _queries(recording)[:2], start=START,
                                 end=_end(recording), step="5s")
    assert first.period == 5.0 and first.n_samples == (recording.n_samples - 1) // 5 + 1
    assert np.array_equal(first.values, recording.values[::5, :2], equal_nan=True)
    # beyond the data, Prometheus has no sample: the grid points stay NaN (then after its
    # 5-minute lookback)
    (later, _) = read_prometheus(server.url, _queries(recording)[:1], start=START,
                                 end=_end(recording) + 900, step=60)
    assert np.isnan(later.values[-1, 0])


@pytest.mark.needs_prometheus
def test_server_errors_are_one_line_with_the_servers_message(server: ps.Prometheus) -> None:
    with pytest.raises(InputError, match=r"HTTP 400: .*parse error"):
        read_prometheus(server.url, ["sum(("], start=START, end=START + 60)
    with pytest.raises(InputError, match="no series for the queries"):
        read_prometheus(server.url, ["no_such_metric_anywhere"], start=START, end=START + 60)
    with pytest.raises(InputError, match=r"several series for instance=.*sum by \(instance\)"):
        read_prometheus(server.url, ["x={__name__=~'phasekit_page_faults|phasekit_cpu_user_s'}"],
                        start=START, end=START + 60)
    closed = ps.free_port()
    with pytest.raises(UnsupportedError, match=r"cannot reach the Prometheus server"):
        read_prometheus(f"prometheus://127.0.0.1:{closed}", ["up"], start=START, end=START + 60)
    with pytest.raises(UsageError, match=r"end=.*: the end must be after the start"):
        read_prometheus(server.url, ["up"], start=START, end=START - 1)


class _Refusing(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        _Refusing.seen.append(self.headers.get("Authorization"))
        body = b'{"status": "error", "error": "unauthorized"}'
        self.send_response(401)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_credentials_are_sent_and_a_refusal_is_exit_4(monkeypatch: pytest.MonkeyPatch) -> None:
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        port = httpd.server_address[1]
        with pytest.raises(UnsupportedError, match=r"refused the credentials \(HTTP 401") as info:
            read_prometheus(f"prometheus://ann:s3cret@127.0.0.1:{port}", ["up"], start=0, end=60)
        assert info.value.exit_code == 4
        monkeypatch.setenv(prom.TOKEN_VARIABLE, "t0ken")
        with pytest.raises(UnsupportedError):
            read_prometheus(f"prometheus://127.0.0.1:{port}", ["up"], start=0, end=60)
    finally:
        httpd.shutdown()
    assert _Refusing.seen == ["Basic YW5uOnMzY3JldA==", "Bearer t0ken"]


def test_query_names_durations_and_times() -> None:
    assert Query.parse("ipc=rate(x[1m]) / rate(y[1m])") == Query("ipc", "rate(x[1m]) / rate(y[1m])")
    assert Query.parse('node_load1{job="n"}') == Query("node_load1", 'node_load1{job="n"}')
    assert Query.parse("sum(rate(a[5m]))").name == "sum(rate(a[5m]))"
    assert parse_duration("1m30s") == 90.0 and parse_duration("250ms") == 0.25
    assert parse_duration(5) == 5.0
    with pytest.raises(UsageError):
        parse_duration("5 parsecs")
    assert parse_time("now-1h", now=10_000.0) == 6400.0
    assert parse_time("-30m", now=10_000.0) == 8200.0
    assert parse_time("2026-11-26T00:00:00Z") == 1795651200.0
    assert parse_time("1795651200") == 1795651200.0


@pytest.mark.needs_prometheus
@pytest.mark.slow
def test_live_metrics_are_scraped_by_a_real_prometheus(tmp_path: Path) -> None:
    from phasekit.live import LiveMetrics

    live = LiveMetrics(node="n1")
    url = live.serve("127.0.0.1:0")
    target = url.removeprefix("http://").removesuffix("/metrics")
    try:
        with ps.running(tmp_path, targets=[target]) as server:
            live.sample(3.0)
            live.phase_changed(2, start_s=10.0)
            live.sample(12.5)
            live.periodicity(1.5, 0.8)
            deadline = time.monotonic() + 20
            seen: dict[str, float] = {}
            while time.monotonic() < deadline and seen.get("phase") != 2.0:
                time.sleep(0.5)
                now = time.time()
                try:
                    (node,) = read_prometheus(
                        server.url, ["phase=phasekit_phase", "in_phase=phasekit_phase_seconds",
                                     "changes=phasekit_phase_changes_total",
                                     "period=phasekit_period_seconds"],
                        start=now - 5, end=now, step=1, label="node")
                except InputError:  # not scraped yet
                    continue
                last = node.values[-1]
                seen = dict(zip(node.metrics, last.tolist(), strict=True))
    finally:
        live.close()
    assert node.node == "n1"
    assert seen == {"phase": 2.0, "in_phase": 2.5, "changes": 1.0, "period": 1.5}


def test_windowed_periodicity_finds_the_period_of_a_live_series() -> None:
    from phasekit.live import WindowedPeriodicity

    profile, truth = generate("nemo", minutes=4.0, seed=3)
    live = WindowedPeriodicity("ipc", profile.period, window_s=120.0, every_s=30.0)
    found = [r for r in (live.push(v) for v in profile.values[:, 0]) if r is not None]
    assert len(found) == int(profile.duration // 30.0)
    period, coverage = found[-1]
    assert period == pytest.approx(truth.mean_length("compute") * profile.period, rel=0.05)
    assert coverage > 0.5


@pytest.mark.needs_prometheus
@pytest.mark.slow
def test_the_verbs_read_prometheus_and_compare_its_nodes(server: ps.Prometheus,
                                                         recording: pk.Profile) -> None:
    import json
    import subprocess
    import sys

    queries = [arg for q in _queries(recording) for arg in ("-q", q)]
    span = ["--start", str(START), "--end", str(_end(recording)), "--step", "1s"]

    def phasekit(*args: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "phasekit.cli", *args, "--json"],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    info = phasekit("info", server.url, *queries, *span)
    assert [n["node"] for n in info["nodes"]] == ["node-a", "node-b"]
    assert info["nodes"][0]["n_samples"] == recording.n_samples
    analyzed = phasekit("analyze", server.url, *queries, *span)
    assert analyzed["kind"] == "multinode_analysis"
    assert [n["node"] for n in analyzed["nodes"]] == ["node-a", "node-b"]
    expected = [p.period_s for p in analyze(recording).patterns]
    assert [p["period_s"] for p in analyzed["nodes"][0]["patterns"]] == pytest.approx(expected)
    one = phasekit("phases", server.url, *queries, *span, "--label", "instance")
    assert [n["node"] for n in one["nodes"]] == ["node-a", "node-b"]
    from_file = detect_phases(recording).to_dict()
    assert [p["start_s"] for p in one["nodes"][0]["phases"]] == \
        [p["start_s"] for p in from_file["phases"]]


@pytest.mark.needs_prometheus
@pytest.mark.slow
def test_nodes_read_from_prometheus_are_named_by_server_and_label(server: ps.Prometheus,
                                                                  recording: pk.Profile
                                                                  ) -> None:
    """Each node's ``file`` names where its samples came from (the server and the label
    selecting the node), not the temporary file the verb read them through."""
    import json
    import subprocess
    import sys

    queries = [arg for q in _queries(recording) for arg in ("-q", q)]
    span = ["--start", str(START), "--end", str(_end(recording)), "--step", "1s"]
    expected = [f'http://127.0.0.1:{server.port} instance="{node}"'
                for node in ("node-a", "node-b")]
    for verb, as_json in (("analyze", True), ("phases", True), ("phases", False)):
        done = subprocess.run([sys.executable, "-m", "phasekit.cli", verb, server.url,
                               *queries, *span, *(["--json"] if as_json else [])],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert "phasekit-prometheus-" not in done.stdout + done.stderr  # no temporary path
        if as_json:
            nodes = json.loads(done.stdout)["nodes"]
            assert [n["node"] for n in nodes] == ["node-a", "node-b"]
            assert [n["file"] for n in nodes] == expected
    # one node alone: its table and its errors name it the same way
    alone = [arg for m in recording.metrics
             for arg in ("-q", f'{m}={ps.metric_name(m)}{{instance="node-a"}}')]
    for extra, code in (((), 0), (("-m", "nope"), 2)):
        done = subprocess.run([sys.executable, "-m", "phasekit.cli", "analyze", server.url,
                               *alone, *span, *extra], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == code, done.stderr
        assert "phasekit-prometheus-" not in done.stdout + done.stderr
        assert expected[0] in (done.stdout if code == 0 else done.stderr)
    node = pk.Profile(values=np.zeros((3, 1)), period=1.0, metrics=("x",), node='n"1',
                      meta={"prometheus": {"url": "https://h:9090", "label": "job"}})
    assert prom.node_source(node) == 'https://h:9090 job="n\\"1"'
    assert prom.node_source(pk.Profile(values=np.zeros((3, 1)), period=1.0, metrics=("x",),
                                       node="n1")) is None


@pytest.mark.needs_prometheus
@pytest.mark.slow
def test_watch_serve_is_scraped_by_a_real_prometheus(tmp_path: Path) -> None:
    """``phasekit watch - --serve``: Prometheus scrapes the phase number as the stream goes."""
    import subprocess
    import sys

    from phasekit.io import write_profile
    from phasekit.synth.phases import generate_bench

    bench, truth = generate_bench("bench_1", seed=0, idle_s=5.0)
    write_profile(bench, tmp_path / "bench.csv")
    lines = (tmp_path / "bench.csv").read_text().splitlines(keepends=True)
    first_change = int(truth.change_times_s[0] / bench.period)
    header = sum(1 for line in lines if line.startswith("#")) + 1
    port = ps.free_port()
    watch = subprocess.Popen([sys.executable, "-m", "phasekit.cli", "watch", "-", "--json",
                              "--serve", f"127.0.0.1:{port}", "--linger", "2s"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert watch.stdin is not None

    def latest(server: ps.Prometheus) -> dict[str, float]:
        now = time.time()
        try:
            (node,) = read_prometheus(server.url, ["phase=phasekit_phase",
                                                   "samples=phasekit_samples_total"],
                                      start=now - 3, end=now, step=1, label="node")
        except InputError:  # not scraped yet
            return {}
        return dict(zip(node.metrics, node.values[-1].tolist(), strict=True))

    def until(server: ps.Prometheus, done: Callable[[dict[str, float]], bool]) -> dict:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            seen = latest(server)
            if seen and done(seen):
                return seen
            time.sleep(0.5)
        raise AssertionError(f"not scraped in time: {latest(server)}")

    try:
        with ps.running(tmp_path / "prometheus", targets=[f"127.0.0.1:{port}"]) as server:
            watch.stdin.write("".join(lines[:header + first_change - 5]))
            watch.stdin.flush()
            seen = until(server, lambda s: s.get("samples", 0) >= first_change - 5)
            assert seen["phase"] == 1.0
            watch.stdin.write("".join(lines[header + first_change - 5:header + first_change + 20]))
            watch.stdin.flush()
            seen = until(server, lambda s: s.get("phase", 0) >= 2.0)
            assert seen["phase"] == 2.0
            out, err = watch.communicate(timeout=60)  # closes stdin: the stream ends
    finally:
        if watch.poll() is None:
            watch.kill()
    assert watch.returncode == 0, err
    assert err.startswith("phasekit: serving Prometheus metrics at http://127.0.0.1:")
    assert out.splitlines()[0].startswith('{"phase": 2')
