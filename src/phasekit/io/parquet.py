"""Parquet profiles: the CSV columns in a columnar file, with the metadata in the schema.

A profile Parquet file has a time column (float seconds, an Arrow timestamp, or ISO-8601
strings) and one float column per metric. phasekit stores the Profile's period, start, units,
node, meta and exact names as JSON in the Arrow schema metadata under ``b"phasekit"`` (the
meta keeps the names a reader renamed, so that they still find their metrics); a file
without it (written by pandas, polars, ...) is read like a CSV: the time column is found by
name and units are taken from ``name [unit]`` column names.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from phasekit.errors import InputError
from phasekit.io.atomic import atomic_path
from phasekit.io.csv import (
    METADATA_KEY,
    RowLocator,
    TimeColumn,
    build_profile,
    find_time_column,
    float_values,
    metadata_json,
    metadata_sources,
    numeric_values,
    parse_column_name,
    parse_metadata,
    read_times,
    select_metrics,
    time_column_name,
    timestamps_utc,
    writable_values,
)
from phasekit.io.inputs import input_file
from phasekit.profile import Profile

__all__ = ["arrow_table", "profile_from_arrow", "read_parquet_profile", "write_parquet_profile"]

_KEY = METADATA_KEY.encode()
_PANDAS_INDEX_RE = re.compile(r"__index_level_\d+__")
# What pyarrow raises on a damaged or foreign file varies with the damage; all of it is bad input.
ARROW_ERRORS = (pa.ArrowException, OSError, ValueError, TypeError, KeyError, IndexError,
                NotImplementedError, EOFError, OverflowError)


def read_parquet_profile(path: str | Path, *, metrics: Sequence[str] | str | None = None
                         ) -> Profile:
    """Read a profile from a Parquet file (``.parquet``, ``.pq``).

    ``metrics`` selects and orders metrics (only those columns are read). Irregular sampling
    is resampled with a :class:`~phasekit.errors.PhasekitWarning`. Bad content raises
    :class:`InputError` naming the file and the column (and the row, 0-based, where one is
    at fault).
    """
    path = Path(path)
    where = str(path)
    input_file(path, "a Parquet file")
    try:
        parquet = pq.ParquetFile(path)
        schema = parquet.schema_arrow
    except ARROW_ERRORS as exc:
        raise InputError(f"not a readable Parquet file ({brief_error(exc)})", path=where) from None

    return profile_from_arrow(schema, lambda names: parquet.read(columns=names), where,
                              metrics=metrics)


def profile_from_arrow(schema: pa.Schema, read_columns: Callable[[list[str]], pa.Table],
                       where: str, *, metrics: Sequence[str] | str | None = None,
                       metadata_override: Callable[[dict[str, Any]], dict[str, Any]] | None = None
                       ) -> Profile:
    """A Profile from an Arrow schema and a function reading some of its columns.

    Shared by the Parquet and Arrow IPC readers: the phasekit metadata under ``b"phasekit"``
    (or, without it, column names with units) gives the time column, units and meta.
    ``metadata_override`` may amend the parsed metadata (the IPC reader marks a stream cut
    short).
    """
    raw_metadata = (schema.metadata or {}).get(_KEY)
    metadata = None if raw_metadata is None else parse_metadata(
        raw_metadata, lambda m: InputError(m, path=where))
    if metadata is not None and metadata_override is not None:
        metadata = metadata_override(metadata)
    columns = [n for n in schema.names if not _PANDAS_INDEX_RE.fullmatch(n)]
    duplicated = sorted({n for n in columns if columns.count(n) > 1})
    if duplicated:
        raise InputError("duplicate column name; every column needs its own name", path=where,
                         column=duplicated[0])
    if metadata is not None:
        parsed: list[tuple[str, str | None]] = [(n, None) for n in columns]
    else:
        parsed = [parse_column_name(n) for n in columns]
    names = [name for name, _ in parsed]

    def column_error(message: str) -> InputError:
        return InputError(message, path=where)

    time_index = find_time_column(names, error=column_error,
                                  declared=(metadata or {}).get("time_column"))
    metric_pos = [k for k in range(len(columns)) if k != time_index]
    metric_names = [names[k] for k in metric_pos]
    if len(set(names)) != len(names):
        name = next(n for n in names if names.count(n) > 1)
        raise InputError("two columns have the same name once units are removed", path=where,
                         column=name)
    if not metric_names:
        raise InputError("no metric columns; expected the time column and at least one metric",
                         path=where)
    if metadata is not None:
        units = {k: v for k, v in (metadata.get("units") or {}).items() if k in metric_names}
    else:
        units = {names[k]: parsed[k][1] for k in metric_pos if parsed[k][1]}
    chosen = select_metrics(metric_names, metrics, where,
                            metadata_sources(metadata, metric_names))
    selected = [metric_names[j] for j in chosen]
    read = [columns[time_index], *(columns[metric_pos[j]] for j in chosen)]
    try:
        table = read_columns(read)
    except ARROW_ERRORS as exc:
        raise InputError(f"cannot read the data ({brief_error(exc)})", path=where) from None

    time_name = names[time_index]
    loc = RowLocator(where, None, time_column=read[0])
    times = _time_values(table.column(0), time_name, parsed[time_index][1], loc)
    values = np.empty((table.num_rows, len(selected)))
    for j in range(len(selected)):
        values[:, j] = _metric_values(table.column(j + 1), read[j + 1], loc)
    return build_profile(times=times, values=values, metrics=selected,
                         units={m: units[m] for m in selected if m in units}, loc=loc,
                         time_name=read[0], metadata=metadata, stacklevel=2)


def brief_error(exc: BaseException, limit: int = 200) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _time_values(column: pa.ChunkedArray, name: str, unit: str | None, loc: RowLocator) -> TimeColumn:
    kind = column.type
    try:
        if pa.types.is_date(kind):
            column = column.cast(pa.timestamp("s"))
            kind = column.type
        if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
            series = float_values(column)
        elif pa.types.is_timestamp(kind) or pa.types.is_string(kind) or pa.types.is_large_string(
                kind):
            series = column.to_pandas()
        else:
            raise loc.error(f"the time column holds {kind}; expected seconds (numbers), "
                            "timestamps or ISO-8601 strings", column=name)
    except ARROW_ERRORS as exc:
        raise loc.error(f"cannot read the times ({brief_error(exc)})", column=name) from None
    if not isinstance(series, np.ndarray):
        series = series.reset_index(drop=True)
    return read_times(series, name, unit, loc)


def _metric_values(column: pa.ChunkedArray, name: str, loc: RowLocator) -> np.ndarray:
    kind = column.type
    if pa.types.is_null(kind):
        return np.full(len(column), np.nan)
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
            or pa.types.is_decimal(kind)):
        raise loc.error(f"holds {kind}; expected numbers", column=name)
    try:
        array = float_values(column)
    except ARROW_ERRORS as exc:
        raise loc.error(f"cannot read the values ({brief_error(exc)})", column=name) from None
    return numeric_values(array, name, loc)


def float64_array(values: np.ndarray) -> pa.Array:
    """A float64 Arrow array over ``values``' memory (a contiguous float64 copy where it is not
    one already; NaN stays a value, not a null), as ``pa.array(ndarray)`` makes it: that call
    imports pandas to check for pandas types, 0.2 s of every command that writes a profile
   ; the files are byte-identical."""
    data = np.ascontiguousarray(values, dtype=np.float64).ravel()
    return pa.Array.from_buffers(pa.float64(), data.size, [None, pa.py_buffer(data)])


def arrow_table(profile: Profile) -> pa.Table:
    """``profile`` as an Arrow table: the time column, one column per metric, and the phasekit
    metadata in the schema under ``b"phasekit"`` (shared by the Parquet and IPC writers).

    The time column is ``timestamp_s`` (float seconds) or ``timestamp`` (UTC timestamps) when
    the start is a datetime; metric columns keep their exact names and hold NaN for missing.
    """
    values = writable_values(profile)
    is_datetime = isinstance(profile.start, _dt.datetime)
    time_name = time_column_name(set(profile.metrics), is_datetime)
    time_array: Any
    if is_datetime:
        stamps, unit = timestamps_utc(profile)
        time_array = pa.array(stamps, type=pa.timestamp(unit, tz="UTC"))
    else:
        time_array = float64_array(float(profile.start) + profile.times())
    arrays = [time_array] + [float64_array(values[:, j]) for j in range(values.shape[1])]
    table = pa.Table.from_arrays(arrays, names=[time_name, *profile.metrics])
    return table.replace_schema_metadata({_KEY: metadata_json(profile, time_name).encode()})


def write_parquet_profile(profile: Profile, path: str | Path) -> None:
    """Write ``profile`` as Parquet atomically (:func:`arrow_table` gives the layout)."""
    table = arrow_table(profile)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
