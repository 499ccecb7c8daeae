"""CSV/TSV tables of runs and counters (campaigns, measured configurations, counter tables).

The separator is the header's (comma, semicolon, tab or bar: the one that splits it into the
most cells). Lines starting with ``#`` and blank lines are skipped. Every cell is checked as it
is read, and the first bad one is an :class:`~phasekit.errors.InputError` naming its line and
column, never a silent NaN:

- every row has as many fields as the header;
- a column whose cells are numbers holds only numbers or missing values (empty, ``NA``,
  ``nan``...), except the label columns (:data:`LABEL_COLUMNS`: ``input`` may be ``1`` or
  ``large``);
- numbers are finite and at most :data:`LARGEST` in magnitude (a larger one is a unit or
  export error, and would overflow the sums of a fit);
- counts, frequencies, times and energies (:data:`POSITIVE_COLUMNS`) are not negative.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.io.inputs import LARGEST, looks_like, read_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LABEL_COLUMNS", "LARGEST", "POSITIVE_COLUMNS", "no_column", "read_csv_columns",
           "read_csv_table"]

#: Columns whose cells are names even when some look like numbers.
LABEL_COLUMNS = frozenset({"input", "status", "reason", "task", "program", "node", "name",
                           "label", "application", "app", "benchmark", "class", "region",
                           "repetition_label", "config", "configuration", "kind"})
#: Columns that cannot hold a negative number.
POSITIVE_COLUMNS = frozenset({"threads", "cores", "frequency_ghz", "time_s", "energy_j",
                              "power_w", "repetition", "est_time_s", "est_power_w"})
#: Cells read as missing values (pandas's default list).
MISSING = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                     "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
                     "nan", "null"})
_SEPARATORS = (",", ";", "\t", "|")


#: Columns a "no column" message lists before "...".
LISTED_COLUMNS = 20


def no_column(name: str, have: Sequence[str], source: str | os.PathLike[str] | None
              ) -> UsageError:
    """The error for an option that names a column the input lacks (a usage error: the
    caller named it): ``FILE: no column 'x' (the file has: a, b, c)``."""
    listed = ", ".join(map(str, have[:LISTED_COLUMNS])) + (
        " ..." if len(have) > LISTED_COLUMNS else "")
    if source is None:
        return UsageError(f"no column {name!r} (the table has: {listed})")
    return UsageError(f"{os.fspath(source)}: no column {name!r} (the file has: {listed})")


def read_csv_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The table in ``path`` (optionally gzip-compressed): numeric columns as numbers,
    label columns as text; InputError at the first bad line or cell (module docstring)."""
    import pandas as pd

    return pd.DataFrame(read_csv_columns(path))


def read_csv_columns(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """:func:`read_csv_table` without pandas (0.25 s to import): the columns in header order,
    numeric ones as float64 (int64 when every cell is an integer), label and text columns as
    object arrays of strings; the same checks and errors."""
    where = os.fspath(path)
    text = read_text(path, "a CSV table")
    lines = text.splitlines()
    header_at = next((k for k, line in enumerate(lines)
                      if line.strip() and not line.lstrip().startswith("#")), None)
    if header_at is None:
        raise InputError("empty file; expected a header line and rows", path=where)
    header_line = lines[header_at]
    separator = max(_SEPARATORS, key=header_line.count)
    try:
        names = [name.strip() for name in next(csv.reader([header_line], delimiter=separator))]
    except csv.Error as exc:
        raise InputError(f"cannot read the header ({exc})", path=where,
                         line=header_at + 1) from None
    _check_names(names, where, header_at + 1, path)
    rows, numbers = [], []
    reader = csv.reader(io.StringIO("\n".join(lines[header_at + 1:])), delimiter=separator)
    line = header_at + 1
    try:
        for row in reader:
            line = header_at + 1 + reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()) or row[0].lstrip().startswith(
                    "#"):
                continue
            if len(row) != len(names):
                raise InputError(f"expected {len(names)} fields like the header, found "
                                 f"{len(row)}", path=where, line=line)
            rows.append([cell.strip() for cell in row])
            numbers.append(line)
    except csv.Error as exc:
        raise InputError(f"cannot read the row ({exc})", path=where, line=line + 1) from None
    if not rows:
        raise InputError("no rows after the header; expected one row per run", path=where,
                         line=header_at + 1)
    cells = np.array(rows, dtype=object)
    lines_of = np.array(numbers)
    columns = {}
    for j, name in enumerate(names):
        columns[name] = _column(cells[:, j], name, lines_of, where)
    return columns


def _check_names(names: list[str], where: str, line: int, path: str | os.PathLike[str]) -> None:
    if len(names) < 2:
        hint = looks_like(path)
        raise InputError("the header has one column; expected a table of several columns "
                         "separated by commas, semicolons or tabs"
                         + (f"; this looks like {hint}" if hint else ""), path=where, line=line)
    seen: set[str] = set()
    for k, name in enumerate(names):
        if not name:
            raise InputError(f"column {k + 1} of the header has no name", path=where, line=line)
        if name in seen:
            raise InputError("duplicate column name", path=where, line=line, column=name)
        seen.add(name)


def _column(cells: np.ndarray, name: str, lines: np.ndarray, where: str) -> np.ndarray:
    """A column as float64 (or int64) when its cells are numbers, else as text."""
    missing = np.isin(cells, list(MISSING))
    if name.strip().lower() in LABEL_COLUMNS:
        return cells
    floats, not_numbers, integers = _numbers(cells, missing)
    if not_numbers.all():
        return cells
    if not_numbers.any():
        row = int(np.argmax(not_numbers))
        raise InputError(f"expected a number, found {_shorten(cells[row])}", path=where,
                         line=int(lines[row]), column=name)
    present = ~np.isnan(floats)
    bad = present & ~(np.abs(floats) <= LARGEST)
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(f"{cells[row]} is not a plausible value (larger than {LARGEST:g} in "
                         "magnitude, or infinite); expected a finite measurement", path=where,
                         line=int(lines[row]), column=name)
    if name.strip().lower() in POSITIVE_COLUMNS:
        negative = present & (floats < 0)
        if negative.any():
            row = int(np.argmax(negative))
            raise InputError(f"negative value {cells[row]}; expected a number >= 0",
                             path=where, line=int(lines[row]), column=name)
    if present.all() and integers is not None:
        return integers
    return floats


_INTEGER_CHARS = frozenset("+-0123456789")


def to_number(value: Any) -> float:
    """``value`` as pandas.to_numeric(errors="coerce") reads one cell: NaN when it is not a
    number (a string Python's float() reads, ASCII only and without underscores)."""
    if isinstance(value, str) and (not value.isascii() or "_" in value):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _numbers(cells: np.ndarray, missing: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The cells parsed as pandas.to_numeric(errors="coerce") parses them, without pandas:
    (float64 values, NaN where missing or not a number; the mask of present cells that are not
    numbers; the int64 or uint64 values when every cell is an integer, else None). A number
    is what Python's float() reads, but ASCII only and without underscores (pandas refuses
    "1_000" and "١٢"), and not NaN ("NAN" is not a missing-value marker)."""
    floats = np.full(cells.shape, np.nan)
    not_numbers = np.zeros(cells.shape, dtype=bool)
    present = cells[~missing]
    text = "".join(present.tolist())
    parsed = None
    if text.isascii() and "_" not in text:
        try:  # one C loop of float() over the column: the common case, every cell a number
            parsed = present.astype(np.float64)
        except (ValueError, TypeError):
            parsed = None
    if parsed is None:  # some cell is not a number: find which, one by one
        parsed = np.fromiter(map(to_number, present.tolist()), dtype=float, count=present.size)
    floats[~missing] = parsed
    not_numbers[~missing] = np.isnan(parsed)
    integers = None
    if not missing.any() and not not_numbers.any() and set(text) <= _INTEGER_CHARS:
        for kind in (np.int64, np.uint64):  # pandas's integer types, then float64
            try:
                integers = cells.astype(kind)
                break
            except (OverflowError, ValueError):
                continue
    return floats, not_numbers, integers


def _shorten(value: str, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"
