"""The batch CSV reader's file side (analyses do not read files): the cells of a
batch table (``task, threads, time_s, power_w`` and further columns), checked and parsed,
for :func:`phasekit.schedule.batch.read_batch` to build its :class:`~phasekit.schedule.batch.Batch`.
Errors are one line naming the file, line and column."""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from phasekit.errors import InputError, UsageError
from phasekit.io.inputs import read_bytes

__all__ = ["BatchTable", "parse_cell", "read_batch_table"]


@dataclass(frozen=True)
class BatchTable:
    """A batch file's rows: task names, their line numbers, and each numeric column's values
    (``threads``, ``time_s``, ``power_w`` and the further columns read)."""

    source: str
    names: tuple[str, ...]
    lines: tuple[int, ...]
    values: dict[str, list[float]]
    kinds: dict[str, str]


def parse_cell(text: str, *, path: str, line: int, column: str, kind: str,
               max_threads: int) -> float:
    """Parse one cell; ``kind`` is "time" (finite > 0), "power" (finite >= 0) or "threads"."""
    expected = {"time": "a positive number of seconds",
                "power": "a number of watts >= 0",
                "threads": "a whole number of threads >= 1"}[kind]
    cell = text.strip()
    try:
        value = float(cell)
    except ValueError:
        shown = cell if len(cell) <= 40 else cell[:37] + "..."
        raise InputError(f"{shown!r} is not a number; expected {expected}", path=path,
                         line=line, column=column) from None
    bad = (not math.isfinite(value)
           or (kind == "time" and value <= 0)
           or (kind == "power" and value < 0)
           or (kind == "threads" and (value < 1 or value != int(value) or value > max_threads)))
    if bad:
        raise InputError(f"{cell!r}: expected {expected}", path=path, line=line, column=column)
    return value


def read_batch_table(path: str | os.PathLike[str], *, required: Sequence[str],
                     max_threads: int, columns: Mapping[str, str] | None = None,
                     optional_columns: Mapping[str, str] | None = None) -> BatchTable:
    """Read a batch CSV whose ``required`` columns are the task's name, then threads, time_s
    and power_w.

    ``columns`` names further columns to read into ``Batch.extra``, each with its kind:
    ``"time"`` (seconds > 0) or ``"power"`` (watts >= 0), e.g.
    ``{"est_time_s": "time", "est_power_w": "power"}``; ``optional_columns`` the same, read
    only when the header has them. An empty batch (a header and no task) is an InputError:
    there is nothing to schedule.
    """
    source = str(path)
    wanted = dict(columns or {})
    optional = {k: v for k, v in dict(optional_columns or {}).items() if k not in wanted}
    for name, kind in {**wanted, **optional}.items():
        if kind not in ("time", "power"):
            raise UsageError(f"column {name!r}: kind {kind!r} is not 'time' or 'power'")
    raw = read_bytes(path, "a CSV file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError("not UTF-8 text; expected a CSV file", path=source, line=line) from None
    if "\x00" in text:
        line = text[:text.index("\x00")].count("\n") + 1
        raise InputError("contains a NUL byte; expected a CSV text file", path=source,
                         line=line)

    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    index: dict[str, int] = {}
    names: list[str] = []
    values: dict[str, list[float]] = {c: [] for c in ("threads", "time_s", "power_w",
                                                      *wanted)}
    lines: list[int] = []
    header_line = 1
    row_start = 1
    try:
        for row in reader:
            line = row_start
            row_start = reader.line_num + 1
            if not row or all(not c.strip() for c in row):
                continue
            if row[0].lstrip().startswith("#"):
                continue
            if header is None:
                header_line = line
                header = [c.strip().lower() for c in row]
                seen: set[str] = set()
                for name in header:
                    if name in seen and name:
                        raise InputError(f"column {name!r} appears twice in the header",
                                         path=source, line=line, column=name)
                    seen.add(name)
                missing = [c for c in (*required, *wanted) if c not in header]
                if missing:
                    hint = ""
                    if len(header) == 1 and any(s in row[0] for s in ";\t|"):
                        hint = " (the file does not look comma-separated)"
                    raise InputError(
                        "missing column" + ("s " if len(missing) > 1 else " ")
                        + ", ".join(repr(c) for c in missing) + "; expected a header with "
                        + ", ".join(required) + hint,
                        path=source, line=line, column=missing[0])
                wanted.update({c: k for c, k in optional.items() if c in header})
                values.update({c: [] for c in wanted if c not in values})
                index = {c: header.index(c) for c in (*required, *wanted)}
                continue
            if len(row) != len(header):
                raise InputError(f"{len(row)} fields; expected {len(header)} as in the header "
                                 f"(line {header_line})", path=source, line=line)
            name = row[index["task"]].strip()
            if not name:
                raise InputError("empty task name; expected a name", path=source, line=line,
                                 column="task")
            names.append(name)
            lines.append(line)
            values["threads"].append(parse_cell(row[index["threads"]], path=source, line=line,
                                             column="threads", kind="threads",
                                             max_threads=max_threads))
            values["time_s"].append(parse_cell(row[index["time_s"]], path=source, line=line,
                                            column="time_s", kind="time",
                                            max_threads=max_threads))
            values["power_w"].append(parse_cell(row[index["power_w"]], path=source, line=line,
                                             column="power_w", kind="power",
                                             max_threads=max_threads))
            for col, kind in wanted.items():
                values[col].append(parse_cell(row[index[col]], path=source, line=line,
                                           column=col, kind=kind,
                                           max_threads=max_threads))
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc}); expected comma-separated fields",
                         path=source, line=reader.line_num or 1) from None
    if header is None:
        raise InputError("no header; expected a first line with the columns "
                         + ", ".join(required), path=source, line=1)
    if not names:
        raise InputError("no tasks: the batch is empty; expected at least one task row after "
                         "the header", path=source, line=header_line)
    return BatchTable(source=source, names=tuple(names), lines=tuple(lines), values=values,
                      kinds=dict(wanted))

