"""What phasekit sees in a recording as it runs, as Prometheus metrics.

``phasekit watch ... --serve :PORT`` feeds a :class:`LiveMetrics` and serves it with the
standard ``prometheus_client`` HTTP server, so that Prometheus scrapes it and a Grafana panel
shows the phase beside the raw series:

- ``phasekit_phase`` (gauge): number of the current phase (1, 2, ...; Tsafack Chetsa et al.'s online
  detector);
- ``phasekit_phase_seconds`` (gauge): profile time since the current phase started;
- ``phasekit_phase_changes_total`` (counter): phase changes detected so far;
- ``phasekit_period_seconds`` (gauge): period of the main pattern of the last window
  (Phase-TA; NaN when there is none);
- ``phasekit_period_coverage`` (gauge): share of that window the pattern's instances cover;
- ``phasekit_samples_total`` (counter): samples seen.

Every metric has the label ``node``. The periodicity is found by
:class:`WindowedPeriodicity`: Phase-TA on the last ``window_s`` seconds of the first metric,
again every ``every_s`` seconds of profile time.

The rows of what is watched (a recording being written, CSV lines on a stream, a file
replayed) come from :mod:`phasekit.live.follow`, the changes from :mod:`phasekit.live.watch`;
:func:`phasekit.live.api.watch` is the public door.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from phasekit.errors import UsageError

__all__ = ["LiveMetrics", "WindowedPeriodicity", "parse_address"]

#: Seconds of profile time the periodicity looks back over, and how often it looks again.
WINDOW_S = 600.0
EVERY_S = 30.0


def parse_address(text: str) -> tuple[str, int]:
    """``":9105"`` -> ("127.0.0.1", 9105); ``"0.0.0.0:9105"`` serves on every interface."""
    host, _, port = text.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535:
        raise UsageError("expected [HOST]:PORT, e.g. ':9105'", parameter="serve", value=text)
    return host.strip("[]") or "127.0.0.1", number


class LiveMetrics:
    """The online state of one watched recording as Prometheus metrics (module docstring)."""

    def __init__(self, node: str = "") -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge

        self.registry = CollectorRegistry()
        labels = ["node"]
        self._phase = Gauge("phasekit_phase", "Number of the current phase (Tsafack Chetsa et al.)",
                            labels, registry=self.registry).labels(node)
        self._in_phase = Gauge("phasekit_phase_seconds", "Profile seconds since the current "
                               "phase started", labels, registry=self.registry).labels(node)
        self._changes = Counter("phasekit_phase_changes", "Phase changes detected so far",
                                labels, registry=self.registry).labels(node)
        self._period = Gauge("phasekit_period_seconds", "Period of the main pattern of the "
                             "last window (Phase-TA)", labels,
                             registry=self.registry).labels(node)
        self._coverage = Gauge("phasekit_period_coverage", "Share of the last window the main "
                               "pattern covers", labels, registry=self.registry).labels(node)
        self._samples = Counter("phasekit_samples", "Samples seen", labels,
                                registry=self.registry).labels(node)
        self._phase.set(1)
        self._period.set(math.nan)
        self._coverage.set(math.nan)
        self.phase_start_s = 0.0
        self._server: Any = None

    def sample(self, t_s: float) -> None:
        self._samples.inc()
        self._in_phase.set(max(0.0, t_s - self.phase_start_s))

    def phase_changed(self, number: int, start_s: float) -> None:
        self._changes.inc()
        self._phase.set(number)
        self.phase_start_s = start_s

    def periodicity(self, period_s: float, coverage: float) -> None:
        self._period.set(period_s)
        self._coverage.set(coverage)

    def serve(self, address: str) -> str:
        """Serve the metrics over HTTP at ``address`` ([HOST]:PORT); the URL scraped."""
        from prometheus_client import start_http_server

        host, port = parse_address(address)
        try:
            self._server, _ = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            raise UsageError(f"cannot listen there ({exc.strerror or exc})", parameter="serve",
                             value=address) from None
        return f"http://{host}:{self._server.server_port}/metrics"

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class WindowedPeriodicity:
    """Phase-TA on the last ``window_s`` seconds of one metric, every ``every_s``
    seconds of profile time: the period and coverage of its main pattern."""

    def __init__(self, metric: str, period: float, *, window_s: float = WINDOW_S,
                 every_s: float = EVERY_S) -> None:
        self.metric, self.period = metric, period
        self.values: deque[float] = deque(maxlen=max(2, round(window_s / period)))
        self.every = max(1, round(every_s / period))
        self.seen = 0

    def push(self, value: float) -> tuple[float, float] | None:
        """Add a sample; (period_s, coverage) when a window was analysed (NaN: no pattern)."""
        self.values.append(value)
        self.seen += 1
        if self.seen % self.every or len(self.values) < self.values.maxlen // 4:
            return None
        from phasekit.periodicity import analyze
        from phasekit.profile import Profile

        window = Profile(values=np.asarray(self.values, dtype=float)[:, None],
                         period=self.period, metrics=(self.metric,))
        result = analyze(window)
        if not result.patterns:
            return math.nan, 0.0
        main = max(result.patterns, key=lambda p: p.coverage)
        return float(main.period_s), float(main.coverage)
