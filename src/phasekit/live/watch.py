"""Phase changes of a profile as its samples arrive (Tsafack Chetsa et al.'s online
detectors), optionally served as Prometheus metrics: what ``phasekit watch`` reports.
:func:`phasekit.live.api.watch` makes a :class:`Watch`."""

from __future__ import annotations

import datetime as _dt
import os
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from phasekit.errors import InputError
from phasekit.live.follow import Cut, Header

__all__ = ["Watch"]


class Watch:
    """The phase changes of ``rows`` (a :class:`~phasekit.live.follow.Header` first, then
    ``(time, row)`` pairs), detected online; iterate it for the changes and the summary.

    The detector is built from the header when the watch is made: options it does not take
    fail then, before the first sample (a recording may take long).
    """

    def __init__(self, rows: Iterator[Any], source: str | os.PathLike[str], *,
                 method: str = "ev", threshold: float | None = None, smooth: int = 1,
                 metrics: Sequence[str] | None = None) -> None:
        from phasekit.phases import make_detector
        from phasekit.phases.vectors import StreamingVectors, sensor_kind, streaming_sensors

        header = next(rows)
        assert isinstance(header, Header)
        self.rows, self.header = rows, header
        self.source = os.fspath(source)
        names = list(metrics) if metrics else streaming_sensors(header.metrics, method=method)
        if not names:
            raise InputError("none of the execution-vector sensors is in this input; it has: "
                             + ", ".join(header.metrics), path=self.source)
        self.names = names
        self.period = header.period or 1.0
        self.streaming = StreamingVectors(header.metrics, names, self.period, smooth,
                                          levels=[n for n in names if sensor_kind(n) == "level"])
        self.detector = make_detector(method, len(names), threshold=threshold, sensors=names,
                                      period=self.period)
        self.live: Any = None
        self.window: Any = None

    def serve(self, address: str) -> str:
        """Serve the current phase, the time in it, the changes so far and the period of the
        last 10 minutes (Phase-TA) as Prometheus metrics at ``address`` ([HOST]:PORT) from now
        on (:class:`~phasekit.live.LiveMetrics`); returns the URL to scrape."""
        from phasekit.live import LiveMetrics, WindowedPeriodicity

        node = "stdin" if self.source == "-" else Path(self.source).name
        live = LiveMetrics(node=node)
        url = live.serve(address)
        metrics = self.header.metrics
        column = next((metrics.index(n) for n in self.names if n in metrics), 0)
        self.live = live
        self.window = (column, WindowedPeriodicity(metrics[column], self.period))
        return url

    def close(self) -> None:
        """Stop serving the metrics."""
        if self.live is not None:
            self.live.close()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Each phase change as it is detected, ``{phase, start_s, detected_at_s, latency_s}``
        (and ``wall_latency_s`` for a recording followed live: from the end of the sample that
        revealed it to now), then the summary ``{phases, starts_s}``. A recording cut short
        raises InputError after the summary."""
        live, window, period = self.live, self.window, self.period
        changes = 0
        starts: list[float] = []  # the first phase starts at the first sample's time
        first_time: float | None = None
        # every sample's time stamp: a recording followed live has no row for a missed tick,
        # so a sample's index times the period would drift earlier by one period per miss
        times = array("d")
        cut: Cut | None = None
        n_samples = 0
        for item in self.rows:
            if isinstance(item, Cut):
                cut = item
                break
            t, values = item
            n_samples += 1
            times.append(t)
            if first_time is None:
                first_time = t
                starts.append(t)
            change = self.detector.update(self.streaming.push(values))
            if live is not None:
                live.sample(t - first_time)
                found = window[1].push(float(values[window[0]]))
                if found is not None:
                    live.periodicity(*found)
            if change is None:
                continue
            changes += 1
            # start_s: time stamp of the phase's first sample (the located change point);
            # detected_at_s: time stamp of the sample that confirmed it, as in the result of
            # 'phasekit phases'; latency_s = detected_at_s - start_s (0: its first sample
            # confirmed it at once). Rounded to 1 ns.
            start_s = round(times[change.start], 9)
            detected_s = round(times[change.detected_at], 9)
            starts.append(start_s)
            if live is not None:
                live.phase_changed(changes + 1, start_s - first_time)
            report: dict[str, Any] = {"phase": changes + 1, "start_s": start_s,
                                      "detected_at_s": detected_s,
                                      "latency_s": round(detected_s - start_s, 9)}
            if self.header.start_utc is not None:
                sample_end = self.header.start_utc + _dt.timedelta(seconds=detected_s + period)
                report["wall_latency_s"] = (_dt.datetime.now(_dt.UTC)
                                            - sample_end).total_seconds()
            yield report
        if first_time is None and cut is None:
            raise InputError("no samples to watch", path=self.source)
        if first_time is not None:
            yield {"phases": changes + 1, "starts_s": starts}
        if cut is not None:
            raise InputError(f"{cut.reason} and no end-of-stream marker: the recording was cut "
                             f"short; stopped after {n_samples} samples", path=str(cut.path))
