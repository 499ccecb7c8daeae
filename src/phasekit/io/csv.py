"""CSV profiles, and the tabular logic every profile reader shares.

A profile CSV has one time column and one column per metric::

    # phasekit: {"node": "n01", "units": {"dram_rd": "B"}, ...}     (optional)
    timestamp_s,dram_rd [B],dram_wr (B)
    0.00,3542341.0,235174.0
    0.01,3384452.0,

- The time column is named ``timestamp``, ``timestamp_s``, ``time``, ``time_s`` or ``t`` (any
  case) and holds seconds, or ISO-8601 datetimes (naive ones are taken as UTC). A unit in its
  header (``time [ms]``) scales numbers to seconds (s, ms, us, ns).
- Every other column is a metric; ``name [unit]`` or ``name (unit)`` gives its unit.
- Lines starting with ``#`` are comments. A ``# phasekit: {json}`` comment before the header
  carries what the columns cannot (node, units, meta, exact period and start, exact metric
  names); :func:`write_csv_profile` writes it so that a profile round-trips exactly.
- Empty cells (and ``NaN``, ``NA``, ``null``...) are missing values: NaN, never filled.

The functions :func:`parse_column_name`, :func:`find_time_column` and :func:`regularize` are
shared with the other tabular readers (Parquet).
"""

from __future__ import annotations

import csv as _stdcsv
import datetime as _dt
import gzip
import io
import json
import logging
import math
import os
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io.atomic import atomic_write_bytes
from phasekit.io.inputs import LARGEST, read_bytes, source_name
from phasekit.profile import Profile, resolve_metric, source_names

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "MAX_INTERPOLATION_GAP",
    "METADATA_KEY",
    "REGULARITY_TOLERANCE",
    "TIME_COLUMN_NAMES",
    "Regularized",
    "encode_column_name",
    "find_time_column",
    "parse_column_name",
    "read_csv_profile",
    "regularize",
    "write_csv_profile",
]

logger = logging.getLogger(__name__)

#: Accepted names of the time column (compared case-insensitively).
TIME_COLUMN_NAMES: tuple[str, ...] = ("timestamp", "timestamp_s", "time", "time_s", "t")
#: Units a numeric time column may declare in its header, as factors to seconds.
TIME_UNITS: Mapping[str, float] = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6,
                                   "ns": 1e-9}
#: A time step within this fraction of the median step (or of a multiple of it) is regular.
REGULARITY_TOLERANCE = 0.01
#: Resampling never interpolates across a step longer than this many periods.
MAX_INTERPOLATION_GAP = 2.0
#: Name of the metadata: ``# phasekit: {json}`` in CSV, the schema metadata key in Parquet.
METADATA_KEY = "phasekit"
#: Version of the metadata JSON written by phasekit.
METADATA_VERSION = 1
#: A regular grid is refused above max(_MIN_CELL_CAP, 4 x input) cells: such a grid comes from a
#: wrong timestamp, and allocating it would exhaust memory instead of reporting the line.
_MIN_CELL_CAP = 25_000_000

_UNIT_RE = re.compile(r"(.*?)\s*(?:\[([^\[\]]*)\]|\(([^()]*)\))", re.DOTALL)
_METADATA_RE = re.compile(r"#\s*phasekit\s*:(.*)", re.DOTALL)
_TEXT_FORMATS = {".tsv": "\t", ".tab": "\t"}


# --- column names ---------------------------------------------------------------------------
def parse_column_name(cell: str) -> tuple[str, str | None]:
    """Split a header cell ``name [unit]`` or ``name (unit)`` into ``(name, unit)``.

    Surrounding whitespace and double quotes are removed; an empty unit (``name []``) means
    no unit. A cell without a trailing unit group is all name.
    """
    text = cell.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    match = _UNIT_RE.fullmatch(text)
    if match is None or not match.group(1).strip():
        return text, None
    unit = (match.group(2) if match.group(2) is not None else match.group(3)).strip()
    return match.group(1).strip(), unit or None


def encode_column_name(name: str, unit: str | None = None, *, sep: str = ",") -> str:
    """The header cell for a metric; :func:`parse_column_name` reads back ``name`` and ``unit``.

    Characters a header cell cannot hold (the separator, line breaks) become ``_``; the exact
    name is kept in the ``# phasekit:`` comment. A name that ends in a bracket gets an empty
    unit group (``cpu(0) []``) so that its bracket is not read as a unit.
    """
    def clean(text: str, extra: str = "") -> str:
        for char in (sep, "\r", "\n", "\x00", *extra):
            text = text.replace(char, "_")
        return text.strip()

    base = clean(name) or "_"
    if len(base) >= 2 and base[0] == base[-1] == '"':
        base = f"_{base[1:-1]}_"
    if unit:
        unit_text = clean(unit, "[]")
        if unit_text:
            return f"{base} [{unit_text}]"
    if base.endswith((")", "]")):
        return f"{base} []"
    return base


def find_time_column(names: Sequence[str], *, error: Callable[[str], InputError],
                     declared: str | None = None) -> int:
    """Index of the time column among column ``names`` (already split from their units).

    ``declared`` (from phasekit metadata) wins when exactly one column has that name. Otherwise
    exactly one column must be named as in :data:`TIME_COLUMN_NAMES` (any case); ``error``
    builds the InputError when none or several are.
    """
    if declared is not None and list(names).count(declared) == 1:
        return list(names).index(declared)
    found = [i for i, name in enumerate(names) if name.strip().lower() in TIME_COLUMN_NAMES]
    if not found:
        raise error(
            "no time column: expected a column named " + ", ".join(TIME_COLUMN_NAMES)
            + " (any case) holding seconds or ISO-8601 datetimes; found columns: "
            + ", ".join(repr(n) for n in names)
        )
    if len(found) > 1:
        raise error("several time columns (" + ", ".join(repr(names[i]) for i in found)
                    + "); keep one of them")
    return found[0]


# --- locating errors ------------------------------------------------------------------------
class RowLocator:
    """Builds InputErrors that point at a row: a file line (CSV) or a row index (Parquet)."""

    def __init__(self, path: str, lines: np.ndarray | None = None,
                 time_column: str | None = None) -> None:
        self.path = path
        self.lines = lines
        self.time_column = time_column

    def error(self, message: str, row: int | None = None, column: str | None = None
              ) -> InputError:
        if self.lines is not None:
            return InputError(message, path=self.path,
                              line=None if row is None else int(self.lines[row]), column=column)
        suffix = "" if row is None else f" (row {row})"
        return InputError(message + suffix, path=self.path,
                          column=column if column is not None else self.time_column)

    def where(self, row: int) -> str:
        return f"line {self.lines[row]}" if self.lines is not None else f"row {row}"


# --- values ---------------------------------------------------------------------------------
def _shorten(value: Any, limit: int = 40) -> str:
    text = repr(value) if isinstance(value, str) else repr(str(value))
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def _cell(values: pd.Series | np.ndarray, row: int) -> Any:
    """One cell of a column read as a pandas Series or a NumPy array; a whole number read as
    a float shows as it was written (``1``, not ``1.0``)."""
    if hasattr(values, "iloc"):
        return values.iloc[row]
    value = values[row]
    if isinstance(value, np.floating) and str(value).endswith(".0"):
        return str(value)[:-2]
    return value


def numeric_values(series: pd.Series | np.ndarray, name: str, loc: RowLocator,
                   expected: str = "a number") -> np.ndarray:
    """Float64 values of a parsed column (a Series, or a NumPy array of numbers from a
    columnar file, read without pandas); the first cell that is not a number is an
    InputError."""
    if isinstance(series, np.ndarray) and series.dtype.kind in "fiu":
        out = series.astype(np.float64, copy=False)
    elif series.dtype.kind in "fiu":
        out = series.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        import pandas as pd

        if series.dtype.kind == "b":
            series = series.astype(object)
        converted = pd.to_numeric(series, errors="coerce")
        if converted.dtype.kind == "b":  # to_numeric keeps booleans
            converted = pd.Series(np.nan, index=series.index)
        bad = converted.isna().to_numpy() & series.notna().to_numpy()
        if bad.any():
            row = int(np.argmax(bad))
            raise loc.error(f"expected {expected}, found {_shorten(series.iloc[row])}",
                            row, column=name)
        out = converted.to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = np.isinf(out)
    if infinite.any():
        row = int(np.argmax(infinite))
        raise loc.error(f"infinite value {_shorten(_cell(series, row))}; expected a finite "
                        "number (leave the cell empty for a missing value)", row, column=name)
    return out


@dataclass(frozen=True)
class TimeColumn:
    """A parsed time column."""

    seconds: np.ndarray  # from the first sample, float64
    start: float | _dt.datetime
    raw: pd.Series | np.ndarray  # the column as read, for messages
    resolution: float = 0.0  # how precise the times are, in seconds


def read_times(series: pd.Series | np.ndarray, name: str, unit: str | None, loc: RowLocator
               ) -> TimeColumn:
    """Seconds since the first sample, and the start, of a time column (numbers or ISO-8601;
    a NumPy array of numbers is read without pandas)."""
    numeric = isinstance(series, np.ndarray)
    missing = np.isnan(series) if numeric else series.isna().to_numpy()
    if missing.any():
        row = int(np.argmax(missing))
        raise loc.error("missing time value; every sample needs a time", row, column=name)
    if len(series) == 0:
        return TimeColumn(np.empty(0), 0.0, series)
    kind = series.dtype.kind
    if not numeric and kind == "M":
        import pandas as pd

        return _datetimes(series, name, loc, pd.to_datetime(series, utc=True))
    if not numeric and kind not in "fiu" and not _looks_numeric(series.iloc[0]):
        import pandas as pd

        try:
            parsed = pd.to_datetime(series, format="ISO8601", utc=True, errors="coerce")
        except (ValueError, TypeError, OverflowError) as exc:
            raise loc.error(f"cannot read the times as ISO-8601 datetimes ({exc})",
                            column=name) from None
        return _datetimes(series, name, loc, parsed)
    scale = 1.0
    if unit is not None:
        if unit.lower() not in TIME_UNITS:
            raise loc.error(f"unknown time unit {unit!r}; expected one of "
                            + ", ".join(TIME_UNITS), column=name)
        scale = TIME_UNITS[unit.lower()]
    values = numeric_values(series, name, loc, expected="a time in seconds") * scale
    start = float(values[0])
    # A time difference is exact to a couple of units in the last place of the largest time.
    resolution = 2.0 * float(np.spacing(np.abs(values).max())) if len(values) else 0.0
    return TimeColumn(values - start, start, series, resolution)


def _looks_numeric(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _datetimes(series: pd.Series, name: str, loc: RowLocator, parsed: pd.Series) -> TimeColumn:
    bad = parsed.isna().to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        raise loc.error(f"expected an ISO-8601 datetime, found {_shorten(series.iloc[row])}",
                        row, column=name)
    stamps = parsed.dt.tz_convert(None).to_numpy()
    seconds = (stamps - stamps[0]) / np.timedelta64(1, "s")
    start = parsed.iloc[0].to_pydatetime(warn=False)
    first = series.iloc[0]
    if isinstance(first, str):  # keep the offset the file wrote (UTC when naive)
        try:
            tzinfo = _dt.datetime.fromisoformat(first.strip()).tzinfo
        except ValueError:
            tzinfo = None
        if tzinfo is not None:
            start = start.astimezone(tzinfo)
    elif isinstance(first, _dt.datetime) and first.tzinfo is not None:
        start = start.astimezone(first.tzinfo)
    return TimeColumn(np.asarray(seconds, dtype=np.float64), start, series, 1e-9)


def _check_order(times: TimeColumn, name: str, loc: RowLocator) -> None:
    steps = np.diff(times.seconds)
    bad = steps <= 0
    if not bad.any():
        return
    row = int(np.argmax(bad)) + 1
    value, before = _cell(times.raw, row), _cell(times.raw, row - 1)
    if steps[row - 1] == 0:
        raise loc.error(f"duplicate timestamp {_shorten(value)} (also at {loc.where(row - 1)}); "
                        "expected strictly increasing times", row, column=name)
    raise loc.error(f"timestamps are not sorted: {_shorten(value)} comes after "
                    f"{_shorten(before)} ({loc.where(row - 1)}); expected increasing times",
                    row, column=name)


# --- regular grid ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Regularized:
    """Samples on a regular grid: ``values[i]`` is at ``i * period`` seconds from the start."""

    values: np.ndarray
    period: float
    n_gap_rows: int  # grid rows inserted as NaN for missing samples (regular input)
    resampled: dict[str, Any] | None  # what resampling did, when the input was irregular


def regularize(seconds: np.ndarray, values: np.ndarray, *, period: float | None = None,
               resolution: float = 0.0,
               error: Callable[[str, int], InputError] | None = None) -> Regularized:
    """Put samples taken at ``seconds`` (from 0, strictly increasing) on a regular grid.

    The period is the median time step. ``period`` (from metadata) replaces it when the two
    agree within the tolerance, so that written files round-trip exactly; otherwise the median
    is rounded to the shortest decimal within ``resolution`` (how exact the timestamps are, in
    seconds), so that ``0.01, 0.02, ...`` give 0.01, not 0.010000000000000009.

    Sampling is regular when every step is within 1% of the period (plus ``resolution``) or of
    an integer multiple of it; the missing samples of longer steps become NaN rows. Otherwise
    the samples are interpolated linearly onto the grid, grid points inside steps longer than
    :data:`MAX_INTERPOLATION_GAP` periods are NaN, and ``resampled`` describes what was done
    (the caller warns). Both thresholds are our choice: 1% separates timer jitter from missed
    samples; 2 periods lets one lost sample be bridged, not an outage. ``error(message, row)``
    builds the InputError for a grid too large to allocate (a wrong timestamp).
    """
    n, m = values.shape
    if n < 2:
        if period is None:
            raise ValueError("one sample and no period")
        return Regularized(values, float(period), 0, None)
    steps = np.diff(seconds)
    median = float(np.median(steps))
    # Float timestamps cannot be more exact than their resolution: allow for it.
    tolerance = REGULARITY_TOLERANCE * median + resolution
    if period is not None and abs(period - median) <= tolerance:
        median = float(period)
    else:
        median = _shortest_decimal(median, resolution)
    cap = max(_MIN_CELL_CAP, 4 * n * m) // max(m, 1)
    multiples = np.rint(steps / median)
    regular = bool(np.all(multiples >= 1)
                   and np.all(np.abs(steps - multiples * median) <= tolerance))
    if regular:
        length = float(multiples.sum()) + 1
        _check_size(length, cap, steps, median, error)
        if length == n:
            return Regularized(values, median, 0, None)
        rows = np.concatenate(([0], np.cumsum(multiples.astype(np.int64))))
        grid = np.full((int(length), m), np.nan)
        grid[rows] = values
        return Regularized(grid, median, int(length) - n, None)

    length = math.floor(seconds[-1] / median * (1 + 1e-12)) + 1
    _check_size(length, cap, steps, median, error)
    grid_t = np.arange(length) * median
    left = np.clip(np.searchsorted(seconds, grid_t, side="right") - 1, 0, n - 2)
    t0, t1 = seconds[left], seconds[left + 1]
    weight = np.clip((grid_t - t0) / (t1 - t0), 0.0, 1.0)
    v0, v1 = values[left], values[left + 1]
    with np.errstate(invalid="ignore"):
        grid = v0 + weight[:, None] * (v1 - v0)
    # A grid point on a sample takes its value, even when the neighbour is missing.
    on_left = weight <= 1e-9
    on_right = weight >= 1 - 1e-9
    grid[on_left] = v0[on_left]
    grid[on_right] = v1[on_right]
    in_gap = ((t1 - t0) > MAX_INTERPOLATION_GAP * median * (1 + 1e-9)) & ~on_left & ~on_right
    grid[in_gap] = np.nan
    deviation = np.abs(steps - median) / median
    resampled = {
        "source_samples": int(n),
        "step_min_s": float(steps.min()),
        "step_max_s": float(steps.max()),
        "jitter": float(np.median(deviation)),
        "max_jitter": float(deviation.max()),
        "nan_in_gaps": int(in_gap.sum()),
    }
    return Regularized(grid, median, 0, resampled)


def _shortest_decimal(value: float, tolerance: float) -> float:
    """The number with the fewest significant digits within ``tolerance`` of ``value``."""
    for digits in range(1, 18):
        candidate = float(f"{value:.{digits}g}")
        if abs(candidate - value) <= tolerance and candidate > 0:
            return candidate
    return value


def _check_size(length: float, cap: int, steps: np.ndarray, period: float,
                error: Callable[[str, int], InputError] | None) -> None:
    if length <= cap:
        return
    row = int(np.argmax(steps)) + 1
    message = (f"a regular {period:g} s grid over these times would need {length:.3g} samples "
               f"(the largest step is {steps.max():.6g} s); a timestamp is probably wrong")
    if error is None:
        raise ValueError(message)
    raise error(message, row)


def resampling_message(source: str, period: float, info: Mapping[str, Any]) -> str:
    """The warning text for an irregular input that was resampled."""
    text = (f"{source}: irregular sampling (time steps from {info['step_min_s']:.6g} to "
            f"{info['step_max_s']:.6g} s, median {period:.6g} s, jitter {info['jitter']:.1%} "
            f"median and {info['max_jitter']:.1%} max) resampled onto a regular {period:.6g} s "
            "grid by linear interpolation")
    if info["nan_in_gaps"]:
        text += (f"; {info['nan_in_gaps']} grid points inside gaps longer than "
                 f"{MAX_INTERPOLATION_GAP:g} periods are NaN")
    return text


# --- metadata -------------------------------------------------------------------------------
def parse_metadata(text: str | bytes, error: Callable[[str], InputError]) -> dict[str, Any]:
    """Validate phasekit metadata JSON (the CSV comment or the Parquet schema metadata)."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise error(f"phasekit metadata is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise error("phasekit metadata must be a JSON object")
    expected: dict[str, tuple[type, ...]] = {
        "node": (str,), "units": (dict,), "meta": (dict,), "metrics": (list,),
        "time_column": (str,), "period": (int, float), "start": (int, float, str),
        "version": (int,),
    }
    for key, types in expected.items():
        if key in data and data[key] is not None and (
                not isinstance(data[key], types) or isinstance(data[key], bool)):
            raise error(f"phasekit metadata: {key!r} must be a "
                        + " or ".join(t.__name__ for t in types))
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in data.get("units", {}).items()):
        raise error("phasekit metadata: 'units' must map metric names to strings")
    if not all(isinstance(m, str) for m in data.get("metrics") or []):
        raise error("phasekit metadata: 'metrics' must be a list of names")
    period = data.get("period")
    if period is not None and not (math.isfinite(period) and period > 0):
        raise error("phasekit metadata: 'period' must be a positive number of seconds")
    return data


def metadata_json(profile: Profile, time_column: str) -> str:
    """The phasekit metadata of ``profile`` as one line of JSON (ASCII)."""
    start: float | str
    if isinstance(profile.start, _dt.datetime):
        value = profile.start
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        start = value.isoformat()
    else:
        start = float(profile.start)
    data = {
        "version": METADATA_VERSION, "time_column": time_column, "period": profile.period,
        "start": start, "node": profile.node, "metrics": list(profile.metrics),
        "units": {k: str(v) for k, v in profile.units.items() if k in profile.metrics},
        "meta": profile.meta,
    }
    try:
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"profile meta cannot be written as JSON: {exc}") from None


def metadata_sources(metadata: Mapping[str, Any] | None, metrics: Sequence[str]
                     ) -> dict[str, tuple[str, ...]]:
    """The source names (:data:`~phasekit.profile.SOURCE_NAMES_KEY`) kept in the meta of
    phasekit metadata, for ``metrics``: a profile saved and read again still finds its
    metrics by the names their source gave them."""
    meta = (metadata or {}).get("meta")
    return source_names(meta, metrics) if isinstance(meta, Mapping) else {}


def _start_from_metadata(start: float | _dt.datetime, hint: Any, period: float
                         ) -> float | _dt.datetime:
    """The exact start from metadata when it agrees with the data to 1% of a period."""
    if hint is None:
        return start
    if isinstance(start, _dt.datetime) and isinstance(hint, str):
        try:
            value = _dt.datetime.fromisoformat(hint)
        except ValueError:
            return start
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        close = abs((value - start).total_seconds()) <= REGULARITY_TOLERANCE * period
        return value if close else start
    if not isinstance(start, _dt.datetime) and isinstance(hint, int | float):
        return float(hint) if abs(hint - start) <= REGULARITY_TOLERANCE * period else start
    return start


# --- assembling a Profile -------------------------------------------------------------------
def build_profile(*, times: TimeColumn, values: np.ndarray, metrics: Sequence[str],
                  units: Mapping[str, str], loc: RowLocator, time_name: str,
                  metadata: Mapping[str, Any] | None, stacklevel: int) -> Profile:
    """Checks the times, puts the samples on a regular grid and builds the Profile."""
    metadata = metadata or {}
    n = len(times.seconds)
    hint = metadata.get("period")
    if n == 0:
        raise loc.error("no samples: the file has a header but no data rows")
    if n < 2 and hint is None:
        raise loc.error("only 1 sample; at least 2 are needed to infer the sampling period", 0)
    _check_order(times, time_name, loc)
    _check_magnitudes(values, metrics, loc)
    grid = regularize(times.seconds, values, period=hint, resolution=times.resolution,
                      error=lambda message, row: loc.error(message, row, column=time_name))
    meta = dict(metadata.get("meta") or {})
    if grid.resampled is not None:
        warnings.warn(resampling_message(loc.path, grid.period, grid.resampled),
                      PhasekitWarning, stacklevel=stacklevel + 1)
        meta["resampled"] = grid.resampled
    elif grid.n_gap_rows:
        logger.info("%s: %d missing samples kept as NaN rows", loc.path, grid.n_gap_rows)
    start = _start_from_metadata(times.start, metadata.get("start"), grid.period)
    return Profile(values=grid.values, period=grid.period, metrics=tuple(metrics), start=start,
                   units=dict(units), node=str(metadata.get("node") or ""), meta=meta)


def _check_magnitudes(values: np.ndarray, metrics: Sequence[str], loc: RowLocator) -> None:
    """No value beyond :data:`~phasekit.io.inputs.LARGEST` in magnitude (InputError at the
    first)."""
    with np.errstate(invalid="ignore"):
        beyond = np.abs(values) > LARGEST
    if beyond.any():
        row, column = (int(k) for k in np.argwhere(beyond)[0])
        raise loc.error(f"{values[row, column]:g} is not a plausible measurement (larger than "
                        f"{LARGEST:g} in magnitude); expected a value in the metric's unit",
                        row, column=metrics[column])


def select_metrics(available: Sequence[str], wanted: Sequence[str] | str | None, path: str,
                   sources: Mapping[str, Sequence[str]] | None = None) -> list[int]:
    """Positions in ``available`` of the ``wanted`` metrics (all when None), in wanted order.

    A wanted name may be a source name (``sources``: name -> the names the source gave it) or
    differ in case and punctuation (:func:`phasekit.profile.resolve_metric`)."""
    if wanted is None:
        return list(range(len(available)))
    if isinstance(wanted, str):
        wanted = [wanted]
    wanted = list(wanted)
    if not wanted:
        raise UsageError("no metrics requested; pass None to read them all")
    found = [resolve_metric(w, available, sources) for w in wanted]
    missing = [w for w, name in zip(wanted, found, strict=True) if name is None]
    if missing:
        raise UsageError(f"no metric {', '.join(map(repr, missing))} in {path}; it has: "
                         + ", ".join(available))
    if len(set(found)) != len(found):
        raise UsageError(f"metrics requested twice in {wanted}")
    return [list(available).index(name) for name in found if name is not None]


# --- reading --------------------------------------------------------------------------------
def read_input_bytes(path: str | Path | IO[bytes]) -> bytes:
    """A profile file's (or stream's) bytes (:func:`phasekit.io.inputs.read_bytes`)."""
    return read_bytes(path, "a profile file")


def _normalize(raw: bytes, path: str) -> bytes:
    """Unix line ends, no BOM; checks that the bytes are UTF-8 text."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise InputError("binary data (a NUL byte); expected CSV text", path=path,
                         line=raw.count(b"\n", 0, nul) + 1)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); expected CSV text",
                         path=path, line=raw.count(b"\n", 0, exc.start) + 1) from None
    return raw


def _skippable(line: str) -> bool:
    return not line or line[0] == "#" or line.isspace()


# First bytes of lines that may be blank or comments: '#', ASCII whitespace, and the lead bytes
# of the UTF-8 encodings of the other characters str.isspace() accepts.
_MAYBE_SKIPPED = np.zeros(256, dtype=bool)
_MAYBE_SKIPPED[[ord(c) for c in "# \t\n\x0b\x0c\x1c\x1d\x1e\x1f"] + [0xC2, 0xE1, 0xE2, 0xE3]] = True


@dataclass(frozen=True)
class _Body:
    data: bytes  # the data lines, comments and blank lines removed
    lines: np.ndarray  # file line number (1-based) of every data row
    starts: np.ndarray  # offset of every data row in ``data``
    ends: np.ndarray  # offset of the end of every data row (its newline) in ``data``


def _data_lines(body: bytes, first_line: int) -> _Body:
    """Split the bytes after the header into data rows, vectorized; skips comments and blanks."""
    arr = np.frombuffer(body, dtype=np.uint8)
    newlines = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], newlines + 1))
    if starts[-1] == len(body):  # the body ends with a newline: no line after it
        starts = starts[:-1]
    segments = np.diff(np.append(starts, len(body)))  # line lengths including the newline
    lengths = segments - (arr[starts + segments - 1] == 10) if len(body) else segments
    maybe = np.flatnonzero(_MAYBE_SKIPPED[arr[starts]] | (lengths == 0)) if len(starts) else []
    skip = np.zeros(len(starts), dtype=bool)
    for i in maybe:
        line = body[starts[i]:starts[i] + lengths[i]].decode("utf-8", errors="replace")
        skip[i] = _skippable(line)
    numbers = np.arange(len(starts), dtype=np.int64) + first_line
    if not skip.any():
        return _Body(body, numbers, starts, starts + lengths)
    keep = ~skip
    data = arr[np.repeat(keep, segments)].tobytes()
    kept_segments, kept_lengths = segments[keep], lengths[keep]
    new_starts = np.concatenate(([0], np.cumsum(kept_segments)[:-1])).astype(np.int64)
    return _Body(data, numbers[keep], new_starts, new_starts + kept_lengths)


def _sep_for(path: Path, header: str) -> str:
    name = path.name.lower()
    name = name.removesuffix(".gz")
    sep = _TEXT_FORMATS.get(Path(name).suffix, ",")
    if sep not in header:
        for other in ("\t", ";", ","):
            if other in header:
                return other
    return sep


def read_csv_profile(path: str | Path | IO[bytes], *,
                     metrics: Sequence[str] | str | None = None,
                     period: float | None = None) -> Profile:
    """Read a profile from a CSV (``.csv``, ``.tsv``, optionally gzip-compressed) or from a
    binary stream of one (``sys.stdin.buffer``; messages name it by its ``name``).

    ``metrics`` selects and orders metrics (UsageError naming the available ones when one is
    missing). Irregular sampling is resampled with a :class:`PhasekitWarning`. Bad content
    raises :class:`InputError` naming the file, the 1-based line and the column.

    ``period`` (seconds) reads a file without a time column, one row every ``period`` from
    0 s (``perf stat`` series saved without their timestamps, as the dcslab data); every
    column is then a metric. A file with a time column and a ``period`` is a UsageError.
    """
    if period is not None and not (math.isfinite(period) and period > 0):
        raise UsageError(f"period {period!r}: expected a positive number of seconds")
    where = str(Path(path)) if isinstance(path, str | os.PathLike) else source_name(path)
    raw = _normalize(read_input_bytes(path), where)
    if not raw.strip():
        raise InputError("empty file; expected a header line and samples", path=where)

    # Header: the first line that is neither blank nor a comment; metadata in a comment above it.
    position, line_no, metadata_text, metadata_line = 0, 0, None, 0
    while True:
        end = raw.find(b"\n", position)
        line = (raw[position:] if end < 0 else raw[position:end]).decode("utf-8")
        line_no += 1
        position = len(raw) if end < 0 else end + 1
        if not _skippable(line):
            header = line
            break
        match = _METADATA_RE.match(line)
        if match and metadata_text is None:
            metadata_text, metadata_line = match.group(1), line_no
        if position >= len(raw):
            raise InputError("no header line: the file holds only comments", path=where)
    header_line = line_no

    def header_error(message: str, column: str | None = None) -> InputError:
        return InputError(message, path=where, line=header_line, column=column)

    metadata: dict[str, Any] | None = None
    if metadata_text is not None:
        metadata = parse_metadata(metadata_text, lambda m: InputError(
            m, path=where, line=metadata_line))
    sep = _sep_for(Path(where), header)
    cells = header.split(sep)
    parsed = [parse_column_name(c) for c in cells]
    names = [name for name, _ in parsed]
    for k, name in enumerate(names):
        if not name:
            raise header_error(f"column {k + 1} of the header has no name")
    def time_column_error(message: str) -> InputError:
        if message.startswith("no time column"):
            message += ("; a file of one row every fixed period: give that period in seconds "
                        "(the period option)")
        return header_error(message)

    if period is None:
        time_index = find_time_column(names, error=time_column_error,
                                      declared=(metadata or {}).get("time_column"))
    else:
        time_index = _no_time_column(names, period, where)
    time_unit = parsed[time_index][1] if time_index >= 0 else None
    if time_unit is not None and time_unit.lower() not in TIME_UNITS:
        raise header_error(f"unknown time unit {time_unit!r}; expected one of "
                           + ", ".join(TIME_UNITS), column=names[time_index])
    metric_pos = [k for k in range(len(cells)) if k != time_index]
    metric_names = [names[k] for k in metric_pos]
    units = {names[k]: parsed[k][1] for k in metric_pos if parsed[k][1]}
    if metadata is not None:
        metric_names, units = _restore_names(metric_names, units, metadata, sep)
    seen: set[str] = set()
    for name in [*names[time_index:time_index + 1], *metric_names]:
        if name in seen:
            raise header_error("duplicate column name; every column needs its own name",
                               column=name)
        seen.add(name)
    if not metric_names:
        raise header_error("no metric columns; expected the time column and at least one "
                           "metric")
    chosen = select_metrics(metric_names, metrics, where,
                            metadata_sources(metadata, metric_names))

    body = _data_lines(raw[position:], header_line + 1)
    loc = RowLocator(where, body.lines)
    _check_field_counts(body, sep, len(cells), loc)
    frame = _numeric_rows(body, sep, len(cells))
    if frame is None:  # a cell that is not a number (datetimes, or an error to locate)
        frame = _parse_rows(body, sep, len(cells), loc)
    n_rows = len(frame[0])
    if n_rows != len(body.lines):  # the line bookkeeping failed: report without a line
        raise InputError(f"cannot split the data into rows (read {n_rows} rows from "
                         f"{len(body.lines)} lines)", path=where)

    if time_index >= 0:
        time_name = names[time_index]
        times = read_times(frame[time_index], time_name, time_unit, loc)
    else:  # one row every period
        time_name = "row"
        times = TimeColumn(seconds=np.arange(n_rows) * float(period or 0.0), start=0.0,
                           raw=np.arange(n_rows, dtype=float))
        metadata = {**(metadata or {}), "period": float(period or 0.0)}
    selected = [metric_names[j] for j in chosen]
    values = np.empty((n_rows, len(chosen)))
    for j, k in enumerate(chosen):
        values[:, j] = numeric_values(frame[metric_pos[k]], metric_names[k], loc)
    return build_profile(times=times, values=values, metrics=selected,
                         units={m: units[m] for m in selected if m in units}, loc=loc,
                         time_name=time_name, metadata=metadata, stacklevel=2)


def _no_time_column(names: Sequence[str], period: float, where: str) -> int:
    """-1 (no time column: rows every ``period``), or UsageError when the file has one."""
    found = [name for name in names if name.strip().lower() in TIME_COLUMN_NAMES]
    if found:
        raise UsageError(f"{where}: a period of {period:g} s was given, but the file "
                         f"has a time column ({found[0]!r}); give the period only for files "
                         "without one")
    return -1


def _restore_names(names: list[str], units: dict[str, str], metadata: Mapping[str, Any],
                   sep: str) -> tuple[list[str], dict[str, str]]:
    """Exact metric names and units from the metadata, where the header still matches them."""
    exact = metadata.get("metrics") or []
    meta_units = metadata.get("units") or {}
    out_names, out_units = list(names), dict(units)
    if len(exact) == len(names):
        for k, (name, original) in enumerate(zip(names, exact, strict=True)):
            cell = encode_column_name(original, meta_units.get(original), sep=sep)
            if parse_column_name(cell)[0] == name and name != original:
                out_names[k] = original
                if name in out_units:
                    out_units[original] = out_units.pop(name)
    for name in out_names:
        if name in meta_units:
            out_units[name] = meta_units[name]
    return out_names, out_units


#: Cells read as missing values: pandas's default list, so that both parsers agree.
_MISSING_CELLS = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                  "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan",
                  "null"]


def _numeric_rows(body: _Body, sep: str, n_columns: int) -> list[np.ndarray] | None:
    """Every column as float64, parsed by pyarrow (no pandas import, 0.2 s, for the
    common file of numbers); None when a cell is not a number, for :func:`_parse_rows` to read
    the datetimes or report the cell."""
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    if not len(body.lines):
        return [np.empty(0) for _ in range(n_columns)]
    names = [str(k) for k in range(n_columns)]
    try:
        table = pa_csv.read_csv(
            pa.BufferReader(body.data),
            read_options=pa_csv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pa_csv.ParseOptions(delimiter=sep, quote_char=False,
                                              ignore_empty_lines=False),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.float64() for name in names},
                null_values=_MISSING_CELLS, strings_can_be_null=True))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return [float_values(column) for column in table.columns]


def float_values(column: pa.ChunkedArray) -> np.ndarray:
    """A numeric column as float64 with NaN for nulls, from Arrow's buffers: pyarrow's own
    ``to_numpy`` imports pandas (0.2 s of every command) and ``cast`` pyarrow.compute (0.02 s;
    start-up), which only types without a NumPy equivalent (decimals) still need."""
    import pyarrow as pa

    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        column = column.cast(pa.float64())
    dtype = np.dtype(column.type.to_pandas_dtype())
    parts = []
    for chunk in column.chunks:
        validity, data = chunk.buffers()[:2]
        n, start = len(chunk), chunk.offset
        if not n:
            continue
        values = np.frombuffer(data, dtype=dtype, count=start + n)[start:].astype(np.float64)
        if chunk.null_count:
            bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
            values[~bits[start:start + n].astype(bool)] = np.nan
        parts.append(values)
    return np.concatenate(parts) if parts else np.empty(0)


def _parse_rows(body: _Body, sep: str, n_columns: int, loc: RowLocator) -> list[pd.Series]:
    """Every column as pandas parses it (numbers, datetimes, text to report)."""
    import pandas as pd

    if not len(body.lines):
        return [pd.Series([], dtype=np.float64) for _ in range(n_columns)]
    try:
        frame = pd.read_csv(io.BytesIO(body.data), sep=sep, header=None,
                            names=list(range(n_columns)), index_col=False,
                            quoting=_stdcsv.QUOTE_NONE, skip_blank_lines=False, engine="c",
                            encoding="utf-8", low_memory=False)
    except (pd.errors.ParserError, ValueError, OverflowError, MemoryError) as exc:
        raise InputError(f"cannot parse the rows ({exc})", path=loc.path) from None
    return [frame[k] for k in range(n_columns)]


def _check_field_counts(body: _Body, sep: str, n_columns: int, loc: RowLocator) -> None:
    """Every row has as many fields as the header (fewer is an error, not missing values)."""
    if not len(body.lines):
        return
    separators = np.frombuffer(body.data, dtype=np.uint8) == ord(sep)
    before = np.concatenate(([0], np.cumsum(separators)))
    counts = before[body.ends] - before[body.starts] + 1
    wrong = np.flatnonzero(counts != n_columns)
    if wrong.size:
        row = int(wrong[0])
        raise loc.error(f"expected {n_columns} fields like the header, found {counts[row]}", row)


# --- writing --------------------------------------------------------------------------------
def writable_values(profile: Profile) -> np.ndarray:
    """The values of a profile to write; UsageError for what a profile file cannot hold."""
    values = profile.values
    if profile.n_samples == 0:
        raise UsageError("cannot write a profile with no samples: it could not be read back")
    infinite = np.isinf(values)
    if infinite.any():
        column = profile.metrics[int(np.argmax(infinite.any(axis=0)))]
        raise UsageError(f"metric {column!r} holds infinite values, which profile files "
                         "cannot hold; replace them with NaN (missing) first")
    return values


def time_column_name(taken: set[str], datetime_start: bool) -> str:
    """A name for the written time column that no metric uses (any case)."""
    order = ("timestamp", "time", "t", "timestamp_s", "time_s") if datetime_start else (
        "timestamp_s", "time_s", "t", "time", "timestamp")
    lowered = {t.lower() for t in taken}
    for name in order:
        if name not in lowered:
            return name
    raise UsageError("metric names take every time column name "
                     f"({', '.join(TIME_COLUMN_NAMES)}); rename one metric")


def timestamps_utc(profile: Profile) -> tuple[np.ndarray, str]:
    """Sample times of a datetime-started profile as naive UTC ``datetime64``, and the unit.

    Microseconds (the precision of ``datetime``) unless the period needs nanoseconds, which
    only reach the years 1678-2261.
    """
    start = profile.start
    assert isinstance(start, _dt.datetime)
    if start.tzinfo is not None:
        start = start.astimezone(_dt.UTC).replace(tzinfo=None)
    whole_us = abs(profile.period * 1e6 - round(profile.period * 1e6)) < 1e-6
    unit, per_second = ("us", 1e6) if whole_us else ("ns", 1e9)
    span = profile.n_samples * profile.period
    if span * per_second >= 2**62 or (unit == "ns" and not (
            _dt.datetime(1678, 1, 1) < start
            and start + _dt.timedelta(seconds=span) < _dt.datetime(2261, 12, 31))):
        raise UsageError(f"cannot write timestamps from {profile.start} every {profile.period} s"
                         " for " + f"{profile.n_samples} samples: out of the datetime64 range")
    offsets = np.rint(np.arange(profile.n_samples) * (profile.period * per_second))
    return np.datetime64(start, unit) + offsets.astype(f"timedelta64[{unit}]"), unit


def write_csv_profile(profile: Profile, path: str | Path) -> None:
    """Write ``profile`` as CSV (TSV for ``.tsv``, gzip-compressed for ``.gz``), atomically.

    A ``# phasekit:`` comment first carries node, units, meta, exact names, period and start;
    then the header (``name [unit]``) and one row per sample, missing values as empty cells.
    Floats are written in their shortest round-trip form, datetimes as ISO-8601 UTC.
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    path = Path(path)
    values = writable_values(profile)
    sep = _TEXT_FORMATS.get(Path(path.name.lower().removesuffix(".gz")).suffix, ",")
    cells = [encode_column_name(m, profile.units.get(m), sep=sep) for m in profile.metrics]
    is_datetime = isinstance(profile.start, _dt.datetime)
    time_name = time_column_name({parse_column_name(c)[0] for c in cells}, is_datetime)
    if is_datetime:
        stamps, unit = timestamps_utc(profile)
        time_array = pa.array(np.datetime_as_string(stamps, unit=unit, timezone="UTC")
                              .astype(object))
    else:
        time_array = pa.array(float(profile.start) + profile.times())
    arrays = [time_array] + [pa.array(values[:, j], from_pandas=True)
                             for j in range(values.shape[1])]
    table = pa.Table.from_arrays(arrays, names=[f"c{j}" for j in range(len(arrays))])
    buffer = io.BytesIO()
    pa_csv.write_csv(table, buffer, write_options=pa_csv.WriteOptions(
        include_header=False, delimiter=sep, quoting_style="none"))
    head = (f"# {METADATA_KEY}: {metadata_json(profile, time_name)}\n"
            + sep.join([time_name, *cells]) + "\n")
    data = head.encode("utf-8") + buffer.getvalue()
    if path.name.lower().endswith(".gz"):
        data = gzip.compress(data, compresslevel=6, mtime=0)
    atomic_write_bytes(path, data)
