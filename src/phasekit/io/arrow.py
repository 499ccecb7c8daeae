"""Arrow IPC stream profiles: the recorder's crash-safe format (``.arrows``, ``.arrow``).

The layout is the Parquet one (:func:`phasekit.io.parquet.arrow_table`: a time column, one
float column per metric, the phasekit metadata in the schema under ``b"phasekit"``), written
as an Arrow IPC *stream*: the schema first, then one record batch per chunk. Every chunk is
handed to the operating system as soon as it is written, so a writer killed with SIGKILL
leaves a file whose complete chunks can all be read back; only a chunk cut in the middle is
lost. A complete stream ends with the end-of-stream marker; :func:`read_arrow_profile` warns
when it is missing or when the last chunk is cut, and says what it kept.

:class:`StreamAppender` is the chunked writer the recorder uses; :func:`write_arrow_profile`
writes a whole profile atomically.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io.atomic import atomic_path
from phasekit.io.parquet import (
    ARROW_ERRORS,
    arrow_table,
    brief_error,
    float64_array,
    profile_from_arrow,
)
from phasekit.profile import Profile

__all__ = ["END_OF_STREAM", "StreamAppender", "read_arrow_profile", "write_arrow_profile"]

logger = logging.getLogger(__name__)

#: The bytes an Arrow IPC stream ends with when its writer closed it (continuation + 0 length).
END_OF_STREAM = b"\xff\xff\xff\xff\x00\x00\x00\x00"
_KEY = b"phasekit"


def read_arrow_profile(path: str | Path, *, metrics: Sequence[str] | str | None = None
                       ) -> Profile:
    """Read a profile from an Arrow IPC stream or file, keeping every complete chunk.

    A stream without its end-of-stream marker (a recording cut short) or with a cut last
    chunk gives a :class:`~phasekit.errors.PhasekitWarning` saying how many samples were kept,
    and ``meta["truncated"]`` holds the details.
    """
    path = Path(path)
    where = str(path)
    if not path.exists():
        raise InputError("no such file", path=where)
    if not path.is_file():
        raise InputError("is not a file; expected an Arrow IPC stream", path=where)
    batches, schema, cut_reason = _read_batches(path, where)
    ended = _has_end_marker(path)
    truncated: dict[str, Any] | None = None
    if cut_reason is not None or not ended:
        n_rows = sum(b.num_rows for b in batches)
        truncated = {"chunks_kept": len(batches), "samples_kept": n_rows,
                     "reason": cut_reason or "no end-of-stream marker"}
        warnings.warn(f"{where}: the file was cut short ({truncated['reason']}); read the "
                      f"{n_rows} samples of its {len(batches)} complete chunks",
                      PhasekitWarning, stacklevel=2)
    if not batches:
        raise InputError("holds no complete chunk of samples yet", path=where)
    table = pa.Table.from_batches(batches, schema=schema)

    def mark_truncated(metadata: dict[str, Any]) -> dict[str, Any]:
        if truncated is None:
            return metadata
        return {**metadata, "meta": {**(metadata.get("meta") or {}), "truncated": truncated}}

    return profile_from_arrow(schema, table.select, where, metrics=metrics,
                              metadata_override=mark_truncated)


def _read_batches(path: Path, where: str) -> tuple[list[pa.RecordBatch], pa.Schema, str | None]:
    """The complete record batches of an IPC stream (or file) and why reading stopped early."""
    try:
        with pa.ipc.open_file(path) as file_reader:  # the random-access IPC file format
            return ([file_reader.get_batch(i) for i in range(file_reader.num_record_batches)],
                    file_reader.schema, None)
    except ARROW_ERRORS:
        pass
    try:
        reader = pa.ipc.open_stream(pa.OSFile(str(path), "rb"))
    except ARROW_ERRORS as exc:
        raise InputError(f"not a readable Arrow IPC stream ({brief_error(exc)})",
                         path=where) from None
    batches: list[pa.RecordBatch] = []
    cut_reason: str | None = None
    while True:
        try:
            batches.append(reader.read_next_batch())
        except StopIteration:
            break
        except ARROW_ERRORS as exc:
            cut_reason = f"chunk {len(batches) + 1} is incomplete: {brief_error(exc, 120)}"
            break
    return batches, reader.schema, cut_reason


def _has_end_marker(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        if size < len(END_OF_STREAM):
            return False
        fh.seek(size - len(END_OF_STREAM))
        tail = fh.read()
    if tail == END_OF_STREAM:
        return True
    return tail.endswith(b"ARROW1")  # the IPC file format's footer magic


def write_arrow_profile(profile: Profile, path: str | Path) -> None:
    """Write ``profile`` atomically as one Arrow IPC stream (one chunk, end marker)."""
    table = arrow_table(profile)
    with atomic_path(path) as tmp, pa.OSFile(str(tmp), "wb") as sink, \
            pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)


class StreamAppender:
    """Appends chunks of samples to an Arrow IPC stream that stays readable at every moment.

    The schema (time column ``timestamp_s`` and the metrics, all float64) and the phasekit
    ``metadata`` are written on creation; :meth:`append` writes one record batch straight to
    the operating system (no user-space buffer), so a process killed afterwards loses
    nothing it appended. :meth:`close` writes the end-of-stream marker and fsyncs.
    """

    TIME_COLUMN = "timestamp_s"

    def __init__(self, path: str | Path, metrics: Sequence[str], metadata: Mapping[str, Any]
                 ) -> None:
        import json

        self.path = Path(path)
        self.metrics = tuple(metrics)
        if self.TIME_COLUMN in self.metrics:
            raise UsageError(f"a metric cannot be named {self.TIME_COLUMN!r}")
        fields = [pa.field(name, pa.float64()) for name in (self.TIME_COLUMN, *self.metrics)]
        self.schema = pa.schema(fields, metadata={
            _KEY: json.dumps({**metadata, "time_column": self.TIME_COLUMN},
                             ensure_ascii=True, separators=(",", ":")).encode()})
        try:
            self._sink = pa.OSFile(str(self.path), "wb")
        except ARROW_ERRORS as exc:
            raise UsageError(f"cannot write {self.path}: {brief_error(exc)}") from None
        self._writer = pa.ipc.new_stream(self._sink, self.schema)
        self.n_rows = 0
        self.n_chunks = 0
        self.closed = False

    def append(self, times: np.ndarray, values: np.ndarray) -> None:
        """Write ``len(times)`` samples: ``values`` is samples x metrics."""
        if len(times) == 0:
            return
        arrays = [float64_array(times)]
        arrays += [float64_array(values[:, j]) for j in range(values.shape[1])]
        self._writer.write_batch(pa.record_batch(arrays, schema=self.schema))
        self.n_rows += len(times)
        self.n_chunks += 1

    def close(self) -> None:
        """End the stream (end-of-stream marker) and make it durable."""
        if self.closed:
            return
        self.closed = True
        self._writer.close()
        self._sink.close()
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return
        with contextlib.suppress(OSError):
            os.fsync(fd)
        os.close(fd)

    def abandon(self) -> None:
        """Close the file without the end marker (it stays marked as cut short)."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(*ARROW_ERRORS):
            self._sink.close()
