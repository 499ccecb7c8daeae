"""A real Prometheus server on loopback for the tests: Debian's ``prometheus``
binary, a temporary TSDB, a free port, stopped by its PID.

- :func:`backfill` writes profiles into a TSDB with ``promtool tsdb create-blocks-from
  openmetrics`` (the samples at their own timestamps: no waiting for scrapes);
- :class:`Prometheus` starts the server on a TSDB (and optional scrape targets) and stops it.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from phasekit.profile import Profile

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def metric_name(name: str) -> str:
    """A Prometheus metric name for a profile's metric."""
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return "phasekit_" + clean


def openmetrics(profiles: Mapping[str, Profile], start_s: float) -> str:
    """The profiles as OpenMetrics text: one gauge per metric, a series per node (label
    ``instance``), samples at start_s + k * period; missing samples are written as NaN."""
    metrics = list(next(iter(profiles.values())).metrics)
    lines = []
    for j, metric in enumerate(metrics):
        name = metric_name(metric)
        lines.append(f"# TYPE {name} gauge")
        for node, profile in profiles.items():
            for k in range(profile.n_samples):
                value = float(profile.values[k, j])
                text = "NaN" if math.isnan(value) else repr(value)
                stamp = start_s + k * profile.period
                lines.append(f'{name}{{instance="{node}"}} {text} {stamp:.3f}')
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def backfill(profiles: Mapping[str, Profile], data_dir: Path, start_s: float) -> None:
    """Write ``profiles`` into a TSDB at ``data_dir`` starting at unix time ``start_s``."""
    source = data_dir.parent / "backfill.om"
    source.write_text(openmetrics(profiles, start_s))
    subprocess.run([str(PROMTOOL), "tsdb", "create-blocks-from", "openmetrics", "-q",
                    str(source), str(data_dir)], check=True, capture_output=True, timeout=300)


class Prometheus:
    """A Prometheus server on 127.0.0.1 with its TSDB in ``folder``."""

    def __init__(self, folder: Path, targets: Sequence[str] = (),
                 scrape_interval: str = "1s") -> None:
        self.folder = folder
        self.data = folder / "data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"prometheus://127.0.0.1:{self.port}"
        config = folder / "prometheus.yml"
        scrape = ""
        if targets:
            listed = ", ".join(f"'{t}'" for t in targets)
            scrape = (f"scrape_configs:\n  - job_name: phasekit\n"
                      f"    scrape_interval: {scrape_interval}\n"
                      f"    static_configs:\n      - targets: [{listed}]\n")
        config.write_text(f"global:\n  scrape_interval: {scrape_interval}\n{scrape}")
        self.config = config
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 30.0) -> None:
        log = (self.folder / "prometheus.log").open("wb")
        self.process = subprocess.Popen(
            [str(PROMETHEUS), f"--config.file={self.config}",
             f"--storage.tsdb.path={self.data}", "--storage.tsdb.retention.time=100y",
             f"--web.listen-address=127.0.0.1:{self.port}", "--web.enable-lifecycle"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("prometheus exited: "
                                   + (self.folder / "prometheus.log").read_text()[-2000:])
            with contextlib.suppress(OSError), urllib.request.urlopen(
                    f"http://127.0.0.1:{self.port}/-/ready", timeout=1) as answer:
                if answer.status == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError("prometheus did not become ready")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@contextlib.contextmanager
def running(folder: Path, targets: Sequence[str] = ()) -> Iterator[Prometheus]:
    server = Prometheus(folder, targets)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def prometheus_version() -> str:
    """The version of the prometheus binary (``2.42.0+ds``)."""
    done = subprocess.run([str(PROMETHEUS), "--version"], capture_output=True, text=True,
                          check=False)
    words = (done.stdout or done.stderr).split()
    return words[2] if len(words) > 2 else "unknown"
