"""``phasekit watch``: phase changes of a recording in progress, as they are detected."""

from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import os
import socket
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TextIO

import numpy as np
import typer

from phasekit.cli.common import PeriodOption, parse_duration
from phasekit.cli.phases import MethodNames
from phasekit.errors import InputError, UsageError
from phasekit.io.inputs import LARGEST

EPILOG = """\
Example:

\b
    phasekit record -o run.parquet -- ./app &   # in one terminal
    phasekit watch run.parquet                  # in another: follows run.parquet.partial.arrows
    my-sampler | phasekit watch - --smooth 3    # CSV lines on stdin: a time column, metrics
"""


@dataclass
class _Header:
    metrics: list[str]
    period: float | None
    start_utc: _dt.datetime | None


@dataclass
class _Cut:
    """The end of a followed stream that stopped growing without its end-of-stream marker."""

    path: Path
    reason: str


def watch(
    source: Annotated[str, typer.Argument(
        metavar="FILE|-", help="The recorder's output (followed through FILE.partial.arrows "
        "while it records), any profile file (replayed), or - for CSV lines on stdin.")] = "-",
    method: Annotated[str, typer.Option("--method", click_type=MethodNames(online=True))
                      ] = "ev",
    threshold: Annotated[float | None, typer.Option(
        "--threshold", metavar="T", show_default=False,
        help="As for 'phasekit phases' (ev-literal 0.15, ev 4).")] = None,
    smooth: Annotated[int, typer.Option("--smooth", metavar="N")] = 1,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", metavar="NAME",
        help="A metric of the execution vectors, as for 'phasekit phases'; repeat.")] = None,
    sensor: Annotated[list[str] | None, typer.Option(
        "--sensor", metavar="NAME", hidden=True, help="The old name of --metric.")] = None,
    wait: Annotated[str, typer.Option(
        "--wait", metavar="DURATION",
        help="How long to wait for FILE to appear.")] = "60s",
    poll: Annotated[str, typer.Option(
        "--poll", metavar="DURATION", help="How often to look for new samples in FILE.")
    ] = "100ms",
    idle: Annotated[str, typer.Option(
        "--idle", metavar="DURATION",
        help="Stop (exit code 3) when a recording followed live has had no new samples for "
             "this long and has no end-of-stream marker: its recorder was killed. At least "
             "twice the recording's flush interval; sooner when the recording names its "
             "recorder's process and that process is gone.")] = "30s",
    json_output: Annotated[bool, typer.Option(
        "--json", help="One JSON object per line and per change.")] = False,
    serve: Annotated[str | None, typer.Option(
        "--serve", metavar="[HOST]:PORT", show_default=False,
        help="Also expose the current phase, the time in it, the changes so far and the "
             "period of the last 10 minutes (Phase-TA) as Prometheus metrics at "
             "http://HOST:PORT/metrics (HOST default 127.0.0.1; 0.0.0.0 for every interface).")
    ] = None,
    linger: Annotated[str | None, typer.Option(
        "--linger", metavar="DURATION", show_default=False,
        help="With --serve: keep serving this long after the input ends, for a last scrape.")
    ] = None,
    period: PeriodOption = None,
) -> None:
    """Print each phase change of a recording as it is detected, with its latency.

    The latency is given in the profile's time (the detection comes after the located start
    of the phase by the detector's confirmation delay) and, for a recording followed live,
    in wall-clock time from the end of the sample that revealed the change to its report.
    At the end, prints the phases found.
    """
    from phasekit.phases import make_detector
    from phasekit.phases.vectors import StreamingVectors, sensor_kind, streaming_sensors

    sensor = [*(metric or ()), *(sensor or ())]  # --sensor: the old name of --metric
    wait_s, poll_s = parse_duration(wait, "--wait"), parse_duration(poll, "--poll")
    idle_s = parse_duration(idle, "--idle")
    rows = _rows(source, wait_s, poll_s, period, idle_s)
    header = next(rows)
    assert isinstance(header, _Header)
    names = list(sensor) if sensor else streaming_sensors(header.metrics, method=method)
    if not names:
        raise InputError("none of the execution-vector sensors is in this input; it has: "
                         + ", ".join(header.metrics), path=source)
    period = header.period or 1.0
    # the options against the header, before the first sample (a recording may take long)
    streaming = StreamingVectors(header.metrics, names, period, smooth,
                                 levels=[n for n in names if sensor_kind(n) == "level"])
    detector = make_detector(method, len(names), threshold=threshold, sensors=names,
                             period=period)
    linger_s = parse_duration(linger, "--linger") if linger is not None else 0.0
    if linger is not None and serve is None:
        raise UsageError("--linger applies with --serve")
    live, window = _live(serve, source, header, names, period)
    try:
        _follow(rows, detector, streaming, header, period, source, json_output, live, window)
    finally:
        if live is not None:
            time.sleep(linger_s)
            live.close()


def _live(serve: str | None, source: str, header: _Header, names: list[str], period: float
          ) -> tuple[Any, Any]:
    """The Prometheus metrics of ``--serve`` (serving from now on) and the windowed
    periodicity of the first sensor that is a column (or the first column)."""
    if serve is None:
        return None, None
    from phasekit.live import LiveMetrics, WindowedPeriodicity

    node = "stdin" if source == "-" else Path(source).name
    live = LiveMetrics(node=node)
    url = live.serve(serve)
    sys.stderr.write(f"phasekit: serving Prometheus metrics at {url}\n")
    column = next((header.metrics.index(n) for n in names if n in header.metrics), 0)
    return live, (column, WindowedPeriodicity(header.metrics[column], period))


def _follow(rows: Iterator[Any], detector: Any, streaming: Any, header: _Header, period: float,
            source: str, json_output: bool, live: Any, window: Any) -> None:
    """Report each phase change of ``rows`` (and feed ``live``), then the phases found; a
    recording cut short ends in an InputError saying so, after the phases found."""
    changes = 0
    starts: list[float] = []  # the first phase starts at the first sample's time
    first_time: float | None = None
    cut: _Cut | None = None
    n_samples = 0
    for item in rows:
        if isinstance(item, _Cut):
            cut = item
            break
        t, values = item
        n_samples += 1
        if first_time is None:
            first_time = t
            starts.append(t)
        change = detector.update(streaming.push(values))
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
        # confirmed it at once). Rounded to 1 ns: no float noise from index x period.
        start_s = round(first_time + change.start * period, 9)
        detected_s = round(first_time + change.detected_at * period, 9)
        starts.append(start_s)
        if live is not None:
            live.phase_changed(changes + 1, start_s - first_time)
        report: dict[str, Any] = {"phase": changes + 1, "start_s": start_s,
                                  "detected_at_s": detected_s,
                                  "latency_s": round(detected_s - start_s, 9)}
        if header.start_utc is not None:
            sample_end = header.start_utc + _dt.timedelta(seconds=detected_s + period)
            report["wall_latency_s"] = (_dt.datetime.now(_dt.UTC) - sample_end).total_seconds()
        _say(report, json_output)
    if first_time is None and cut is None:
        raise InputError("no samples to watch", path=source)
    if first_time is not None:
        _summarize(changes, starts, json_output)
    if cut is not None:
        raise InputError(f"{cut.reason} and no end-of-stream marker: the recording was cut "
                         f"short; stopped after {n_samples} samples", path=str(cut.path))


def _summarize(changes: int, starts: list[float], json_output: bool) -> None:
    summary = {"phases": changes + 1, "starts_s": starts}
    if json_output:  # one object per line, the summary too
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        sys.stdout.write(f"{changes + 1} phases; starts (s): "
                         + ", ".join(f"{s:.6g}" for s in starts) + "\n")


def _say(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(report) + "\n")
    else:
        wall = report.get("wall_latency_s")
        wall_text = "" if wall is None else f", {wall:.3f} s after its sample"
        sys.stdout.write(f"phase {report['phase']} starts at {report['start_s']:.6g} s: "
                         f"detected at {report['detected_at_s']:.6g} s (latency "
                         f"{report['latency_s']:.6g} s of profile{wall_text})\n")
    sys.stdout.flush()


# --- sources of rows ---------------------------------------------------------------------------
def _rows(source: str, wait_s: float, poll_s: float, period: float | None = None,
          idle_s: float = math.inf) -> Iterator[_Header | tuple[float, np.ndarray] | _Cut]:
    """The header, then (time, row) of ``source``; ``period``: of a replayed CSV file
    without a time column; ``idle_s``: how long a followed recording may stop growing
    before it counts as cut short (then a :class:`_Cut` ends the rows)."""
    if period is not None and (source == "-" or not Path(source).is_file()):
        raise UsageError("--period: for a CSV profile file without a time column, replayed; "
                         "lines on stdin and recordings carry their times")
    if source == "-":
        return _csv_rows(sys.stdin, "<stdin>")
    path = Path(source)
    from phasekit.record import partial_path

    partial = path if path.name.endswith(".partial.arrows") else partial_path(path)
    deadline = time.monotonic() + wait_s
    while not path.exists() and not partial.exists():
        if time.monotonic() > deadline:
            raise InputError(f"did not appear within {wait_s:g} s (nor {partial.name})",
                             path=str(path))
        time.sleep(poll_s)
    if partial.exists():
        final = path if partial != path else None
        return _follow_stream(partial, final, poll_s, idle_s)
    return _replay(path, period)


def _replay(path: Path, period: float | None = None
            ) -> Iterator[_Header | tuple[float, np.ndarray]]:
    from phasekit.io import read_profile

    profile = read_profile(path, period=period)
    yield _Header(list(profile.metrics), profile.period, None)
    for t, row in zip(profile.times(), profile.values, strict=True):
        yield float(t), row


def _follow_stream(partial: Path, final: Path | None, poll_s: float, idle_s: float = math.inf
                   ) -> Iterator[_Header | tuple[float, np.ndarray] | _Cut]:
    """Rows of an Arrow IPC stream being written; ends at its end-of-stream marker, when
    the recorder replaced it by ``final``, or with a :class:`_Cut` when it stalled
    (:class:`_Stall`)."""
    import pyarrow as pa

    from phasekit.io.arrow import END_OF_STREAM

    try:
        handle = open(partial, "rb")  # noqa: SIM115 - kept open while following
    except FileNotFoundError:  # finalized in the meantime
        if final is None or not final.exists():
            raise InputError("disappeared before it could be read", path=str(partial)) from None
        yield from _replay(final)
        return
    stall = _Stall(handle, idle_s)
    try:
        schema = None
        while schema is None:
            try:
                schema = pa.ipc.read_schema(pa.ipc.read_message(handle))
            except (OSError, EOFError, pa.ArrowException):
                handle.seek(0)
                if (why := stall.reason()) is not None:
                    raise InputError(f"{why} and no complete header: the recording was cut "
                                     "short", path=str(partial)) from None
                time.sleep(poll_s)
        meta = json.loads((schema.metadata or {}).get(b"phasekit", b"{}"))
        recording = (meta.get("meta") or {}).get("recording") or {}
        stall.knows(recording, meta.get("period"))
        start = recording.get("start_utc")
        yield _Header(list(schema.names[1:]), meta.get("period"),
                      _dt.datetime.fromisoformat(start) if start else None)
        while True:
            position = handle.tell()
            try:
                message = pa.ipc.read_message(handle)
                batch = pa.ipc.read_record_batch(message, schema)
            except (OSError, EOFError, pa.ArrowException):
                handle.seek(position)
                if handle.read(len(END_OF_STREAM)) == END_OF_STREAM:
                    return
                handle.seek(position)
                if not partial.exists() and (final is None or final.exists()):
                    return  # finalized: everything was in the stream already
                if (why := stall.reason()) is not None:
                    yield _Cut(partial, why)
                    return
                time.sleep(poll_s)
                continue
            columns = [batch.column(j).to_numpy(zero_copy_only=False)
                       for j in range(batch.num_columns)]
            values = np.column_stack(columns[1:]) if len(columns) > 1 else np.empty((0, 0))
            for k in range(batch.num_rows):
                yield float(columns[0][k]), values[k]
    finally:
        handle.close()


class _Stall:
    """When a followed stream counts as cut short: it has not grown for ``idle_s`` (at least
    twice its flush interval and its sampling period), or the recorder process its metadata
    names (``pid`` on ``host``, this machine) is gone and it did not grow since the last look.
    """

    def __init__(self, handle: Any, idle_s: float) -> None:
        self.handle, self.idle_s = handle, idle_s
        self.size = -1
        self.since = time.monotonic()
        self.pid: int | None = None

    def knows(self, recording: dict[str, Any], period: Any) -> None:
        """What the recording's metadata says: its flush interval, period and recorder."""
        for step in (recording.get("flush_interval_s"), period):
            if isinstance(step, (int, float)) and math.isfinite(step):
                self.idle_s = max(self.idle_s, 2.0 * float(step))
        pid = recording.get("pid")
        if isinstance(pid, int) and pid > 0 and recording.get("host") == socket.gethostname():
            self.pid = pid

    def reason(self) -> str | None:
        """Why the stream counts as cut short now, or None."""
        size = os.fstat(self.handle.fileno()).st_size
        now = time.monotonic()
        if size != self.size:
            self.size, self.since = size, now
            return None
        if self.pid is not None and not _running(self.pid):
            return f"its recorder (pid {self.pid}) is no longer running"
        if now - self.since >= self.idle_s:
            return f"no new samples for {self.idle_s:g} s"
        return None


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: kill(0) is all we know
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def _csv_rows(stream: TextIO, name: str) -> Iterator[_Header | tuple[float, np.ndarray]]:
    """Rows of CSV lines as they arrive: blank and comment lines before the header are
    skipped, and phasekit's own ``# phasekit: {json}`` line gives the period and the exact
    metric names (a CSV written by phasekit reads as its file does)."""
    from phasekit.io.csv import (
        METADATA_KEY,
        find_time_column,
        parse_column_name,
        parse_metadata,
    )

    metadata: dict[str, Any] = {}
    line = 0
    while True:
        text = stream.readline()
        line += 1
        if not text:
            raise InputError("no header line; expected a time column and metric columns",
                             path=name, line=line)
        stripped = text.strip()
        if stripped and not stripped.startswith("#"):
            break
        key, _, value = stripped.lstrip("#").partition(":")
        if key.strip() == METADATA_KEY and not metadata:
            metadata = parse_metadata(value, lambda m, at=line: InputError(m, path=name,
                                                                           line=at))
    header_line = line
    header = next(_csv_lines([text], name, line - 1))
    names = [parse_column_name(cell)[0] for cell in header]
    time_index = find_time_column(names, error=lambda m: InputError(m, path=name,
                                                                    line=header_line),
                                  declared=metadata.get("time_column"))
    metrics = [n for k, n in enumerate(names) if k != time_index]
    if not metrics:
        raise InputError("no metric columns", path=name, line=header_line)
    exact = metadata.get("metrics") or []
    if len(exact) == len(metrics):
        metrics = list(exact)  # names the header cannot hold exactly
    period = metadata.get("period")
    pending: list[tuple[float, np.ndarray]] | None = []
    if period is not None:
        yield _Header(metrics, float(period), None)
        pending = None
    for cells in _csv_lines(stream, name, line):
        line += 1
        if not cells or cells[0].startswith("#"):
            continue
        if len(cells) != len(names):
            raise InputError(f"{len(cells)} fields, expected {len(names)}", path=name, line=line)
        try:
            numbers = [float(c) if c.strip() else math.nan for c in cells]
        except ValueError:
            raise InputError("a value is not a number", path=name, line=line) from None
        if any(abs(v) > LARGEST for v in numbers if not math.isnan(v)):
            raise InputError(f"a value beyond ±{LARGEST:g} (or infinite): a unit or export "
                             "error", path=name, line=line)
        sample = (numbers[time_index],
                  np.array([v for k, v in enumerate(numbers) if k != time_index]))
        if pending is None:
            yield sample
            continue
        pending.append(sample)
        if len(pending) == 2:  # the first step gives the period
            step = pending[1][0] - pending[0][0]
            if not step > 0:
                raise InputError("times must increase", path=name, line=line)
            yield _Header(metrics, step, None)
            yield from pending
            pending = None
    if pending is not None:
        raise InputError("fewer than two samples; at least two are needed", path=name)


def _csv_lines(lines: Iterable[str], name: str, line: int) -> Iterator[list[str]]:
    """csv.reader over ``lines``, its errors (a NUL byte, a field too long...) as InputError
    naming the line (``line``: the lines before these)."""
    reader = csv.reader(lines)
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(f"not CSV text ({exc})", path=name,
                             line=line + reader.line_num) from None
        yield cells
