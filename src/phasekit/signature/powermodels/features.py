"""The counter table a power model reads: checks of the input (a DataFrame, numeric finite
columns named in errors) and the default candidate counters (what is left out, and why)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from phasekit.errors import InputError, UsageError

__all__ = [
    "TIME_COLUMNS",
    "as_frame",
    "candidate_features",
    "counter_matrix",
    "default_features",
    "describe_excluded",
    "drop_missing",
    "is_power_column",
    "is_time_column",
    "numeric_column",
    "require_columns",
    "screen_features",
    "target_values",
]


def as_frame(X: Any, what: str = "X") -> pd.DataFrame:
    """``X`` itself when it is a DataFrame, else UsageError naming ``what``."""
    if not isinstance(X, pd.DataFrame):
        raise UsageError(f"{what}: expected a pandas DataFrame with counter columns by name, "
                         f"got {type(X).__name__}")
    return X


def numeric_column(X: pd.DataFrame, name: str, source: str | None) -> np.ndarray:
    """Column ``name`` as float64; InputError naming the file, the column and the first bad
    line (the CSV line: row + 2) when it is missing, not numeric or not finite."""
    if name not in X.columns:
        have = ", ".join(map(str, X.columns[:20])) + (" ..." if len(X.columns) > 20 else "")
        raise InputError(f"no column {name!r} (the table has: {have})", path=source)
    raw = X[name]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        line = row + 2 if source is not None else None
        value = raw.iloc[row]
        what = "missing value" if pd.isna(value) else f"value {value!r} is not a finite number"
        where = "" if line is not None else f" (row {row})"
        raise InputError(f"{what}{where}; expected numbers", path=source, line=line,
                         column=name)
    return values


def require_columns(X: pd.DataFrame, names: Sequence[str], source: str | None) -> None:
    """UsageError when a column the caller named (the target, a feature) is not in ``X``:
    ``FILE: no column 'x' (the file has: a, b, c)``."""
    from phasekit.io.table import no_column

    for name in names:
        if name not in X.columns:
            raise no_column(name, list(X.columns), source)


def drop_missing(X: pd.DataFrame, columns: Sequence[str]
                 ) -> tuple[pd.DataFrame, int, dict[str, int]]:
    """``X`` without the rows that miss a value (an empty cell, NaN) in one of ``columns``
    (our choice: a model reads every one of its columns on every row, and filling a gap
    would invent a measurement), renumbered from 0; how many rows were left out, and the
    missing values of each column that had some."""
    wanted = set(columns)
    used = [c for c in X.columns if c in wanted]  # in the table's order
    empty = X[used].isna()
    missing = {str(c): int(n) for c, n in empty.sum().items() if n}
    rows = empty.any(axis=1).to_numpy()
    if not rows.any():
        return X, 0, {}
    return X.loc[~rows].reset_index(drop=True), int(rows.sum()), missing


def counter_matrix(X: Any, features: Sequence[str], source: str | None = None) -> np.ndarray:
    """The ``features`` columns of ``X`` as a float64 matrix (:func:`numeric_column`)."""
    X = as_frame(X)
    if len(X) == 0:
        raise InputError("the table has no rows", path=source)
    return np.column_stack([numeric_column(X, f, source) for f in features]) if features else \
        np.empty((len(X), 0))


def target_values(X: Any, target: str | Any, source: str | None = None) -> np.ndarray:
    """The target: column ``target`` of ``X``, or ``target`` itself (values, one a row)."""
    if isinstance(target, str):
        return numeric_column(as_frame(X), target, source)
    y = np.asarray(target, float).reshape(-1)
    if len(y) != len(X):
        raise UsageError(f"y has {len(y)} values for {len(X)} rows")
    if not np.isfinite(y).all():
        raise InputError("the target has missing or non-finite values")
    return y


#: Column names read as time, never as counters (:func:`screen_features`; the time order of
#: :func:`~phasekit.signature.powermodels.split.time_order`); :func:`is_time_column` also
#: reads these with a unit (``timestamp_s``, ``time_ms``, ``elapsed_s``).
TIME_COLUMNS = {"time", "time_s", "timestamp", "timestamp_s", "t", "sample", "index", "t_s"}
_TIMED = re.compile(r"(time|timestamp|t|elapsed|epoch)_?(s|ms|us|ns|sec|secs|seconds)?")


def is_time_column(name: str) -> bool:
    """Whether a column name reads as time (:data:`TIME_COLUMNS`, or time, timestamp, t,
    elapsed or epoch with a unit of seconds: ``timestamp_s``, the recorder's)."""
    text = str(name).strip().lower()
    return text in TIME_COLUMNS or _TIMED.fullmatch(text) is not None
#: Name parts that mark a power or energy reading (``package_power``, ``power_w``,
#: ``energy_uj``, ``power/energy-pkg/``, the recorder's ``power_package0``): our rule.
_POWER_WORDS = {"w", "mw", "kw", "watt", "watts", "j", "uj", "mj", "kj", "joule", "joules",
                "wh", "kwh", "rapl"}
_POWER_PART = re.compile(r"(power|energy|watts?|joules?)\d*")


def is_power_column(name: str) -> bool:
    """Whether a column name reads as a power or energy measurement (our rule: a part of the
    name, split at non-alphanumerics, is power/energy/watt(s)/joule(s) with an optional
    number, a unit w, mw, kw, j, uj, mj, kj, wh, kwh, or rapl)."""
    parts = [p for p in re.split(r"[^a-z0-9]+", str(name).lower()) if p]
    return any(p in _POWER_WORDS or _POWER_PART.fullmatch(p) for p in parts)


def screen_features(X: pd.DataFrame, target: str | None = None,
                    exclude: Sequence[str] = ()) -> tuple[tuple[str, ...], dict[str, str]]:
    """The default candidate counters of ``X`` and the columns left out, each with its reason.

    Left out (our choice): the target and ``exclude`` (not reported), time-like
    columns (:func:`is_time_column`: time, timestamp_s, t, sample, index...), columns with no
    value at all (a counter that was never read), other power or energy readings
    (:func:`is_power_column`: another meter is not a counter, and a model that reads one
    does not predict power from activity), columns that are all zero or constant (they carry
    nothing), boolean and label columns (mostly text). A column whose values are mostly
    numbers counts as numeric (its other values are then reported as bad input, not silently
    dropped)."""
    out: list[str] = []
    excluded: dict[str, str] = {}
    for name in X.columns:
        if name == target or name in exclude:
            continue
        column = X[name]
        if is_time_column(str(name)):
            excluded[str(name)] = "time"
            continue
        if len(column) and column.isna().all():
            excluded[str(name)] = "no values"
            continue
        if pd.api.types.is_bool_dtype(column):
            excluded[str(name)] = "not a number"
            continue
        numbers = pd.to_numeric(column, errors="coerce")
        if not (pd.api.types.is_numeric_dtype(column)
                or (len(column) and numbers.notna().mean() >= 0.5)):
            excluded[str(name)] = "not a number"
            continue
        if is_power_column(str(name)):
            excluded[str(name)] = "power or energy reading"
            continue
        values = numbers.to_numpy(dtype=float, na_value=np.nan)
        if len(values) and np.isfinite(values).all() and np.ptp(values) == 0:
            excluded[str(name)] = "all zero" if values[0] == 0 else "constant"
            continue
        out.append(str(name))
    return tuple(out), excluded


def default_features(X: pd.DataFrame, target: str | None = None,
                     exclude: Sequence[str] = ()) -> tuple[str, ...]:
    """The default candidate counters of ``X`` (:func:`screen_features`)."""
    return screen_features(X, target, exclude)[0]


def describe_excluded(excluded: Mapping[str, str]) -> str:
    """``a, b (power or energy reading); c (constant)``: the left-out columns by reason."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in excluded.items():
        by_reason.setdefault(reason, []).append(name)
    plural = {"power or energy reading": "power or energy readings", "time": "time",
              "constant": "constant", "all zero": "all zero", "not a number": "not numbers",
              "no values": "no values"}
    return "; ".join(f"{', '.join(names)} ({plural.get(reason, reason) if len(names) > 1 else reason})"
                     for reason, names in by_reason.items())


def candidate_features(X: pd.DataFrame, features: Sequence[str] | None, target: str | None
                       ) -> tuple[str, ...]:
    """The counters a model may use: ``features`` checked, or by default
    :func:`screen_features`'s (InputError naming what was left out when there are none)."""
    if features is None:
        found, excluded = screen_features(X, target)
        if not found:
            left = f" (left out: {describe_excluded(excluded)})" if excluded else ""
            raise InputError(f"no counter columns to model power from{left}; name them "
                             "with features")
        return found
    features = tuple(str(f) for f in features)
    if not features:
        raise UsageError("expected at least one column name", parameter="features")
    if len(set(features)) != len(features):
        raise UsageError("a column is named twice", parameter="features",
                         value=list(features))
    if target is not None and target in features:
        raise UsageError(f"the target {target!r} cannot also be a feature",
                         parameter="features", value=list(features))
    return features
