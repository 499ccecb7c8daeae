"""The rows of a profile as they arrive: a recording being written (followed through its
``FILE.partial.arrows`` stream until its end-of-stream marker), CSV lines on a stream, or any
profile file replayed. :func:`follow` gives a :class:`Header`, then ``(time, row)`` pairs, and
a :class:`Cut` when a followed recording stopped growing without its end: what ``phasekit
watch`` feeds the online phase detector (:mod:`phasekit.live.watch`).
"""

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
from typing import Any, TextIO

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.io.inputs import LARGEST

__all__ = ["Cut", "Header", "csv_rows", "follow", "follow_stream", "replay"]


@dataclass
class Header:
    """What a followed source says before its rows: its metrics, its sampling period (None:
    unknown) and, for a recording, when it started (UTC)."""

    metrics: list[str]
    period: float | None
    start_utc: _dt.datetime | None


@dataclass
class Cut:
    """The end of a followed stream that stopped growing without its end-of-stream marker."""

    path: Path
    reason: str


def follow(source: str | os.PathLike[str], wait_s: float, poll_s: float,
           period: float | None = None, idle_s: float = math.inf
           ) -> Iterator[Header | tuple[float, np.ndarray] | Cut]:
    """The header, then (time, row) of ``source``; ``period``: of a replayed CSV file
    without a time column; ``idle_s``: how long a followed recording may stop growing
    before it counts as cut short (then a :class:`Cut` ends the rows)."""
    source = os.fspath(source)
    if period is not None and (source == "-" or not Path(source).is_file()):
        raise UsageError("for a CSV profile file without a time column, replayed; lines on "
                         "stdin and recordings carry their times", parameter="period")
    if source == "-":
        return csv_rows(sys.stdin, "<stdin>")
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
        return follow_stream(partial, final, poll_s, idle_s)
    return replay(path, period)


def replay(path: Path, period: float | None = None
           ) -> Iterator[Header | tuple[float, np.ndarray]]:
    from phasekit.io import read_profile

    profile = read_profile(path, period=period)
    yield Header(list(profile.metrics), profile.period, None)
    for t, row in zip(profile.times(), profile.values, strict=True):
        yield float(t), row


def follow_stream(partial: Path, final: Path | None, poll_s: float, idle_s: float = math.inf
                   ) -> Iterator[Header | tuple[float, np.ndarray] | Cut]:
    """Rows of an Arrow IPC stream being written; ends at its end-of-stream marker, when
    the recorder replaced it by ``final``, or with a :class:`Cut` when it stalled
    (:class:`_Stall`)."""
    import pyarrow as pa

    from phasekit.io.arrow import END_OF_STREAM

    try:
        handle = open(partial, "rb")  # noqa: SIM115 - kept open while following
    except FileNotFoundError:  # finalized in the meantime
        if final is None or not final.exists():
            raise InputError("disappeared before it could be read", path=str(partial)) from None
        yield from replay(final)
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
        yield Header(list(schema.names[1:]), meta.get("period"),
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
                    yield Cut(partial, why)
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


def csv_rows(stream: TextIO, name: str) -> Iterator[Header | tuple[float, np.ndarray]]:
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
        yield Header(metrics, float(period), None)
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
            yield Header(metrics, step, None)
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
