"""The Profile: a regularly sampled multivariate time series of one node (docs/design.md)."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

#: Key of ``DataFrame.attrs`` where :meth:`Profile.to_frame` keeps what the columns cannot
#: (period, units, node, meta).
FRAME_ATTRS = "phasekit"
#: A sample time within this fraction of the period from the grid is on it.
GRID_TOLERANCE = 0.01


@dataclass(frozen=True, eq=False)
class Profile:
    """A node-level profile: ``values[i, j]`` is metric ``metrics[j]`` in sample ``i``.

    Samples are regularly spaced by ``period`` seconds starting at ``start`` (seconds, or a
    timezone-aware datetime when the source had wall-clock timestamps). Missing samples are
    NaN, never filled.

    A metric is found by its name, by the name its source gave it (``meta["source_names"]``,
    kept by the readers that rename: perf's ``cpu-clock`` is stored as ``cpu_clock``) or by
    either written in another case or with other punctuation (:func:`resolve_metric`).
    """

    values: np.ndarray
    period: float
    metrics: tuple[str, ...]
    start: float | _dt.datetime = 0.0
    units: Mapping[str, str] = field(default_factory=dict)
    node: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.float64)
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim != 2:
            raise UsageError(f"profile values must be 2-D (samples x metrics), got {values.ndim}-D")
        metrics = tuple(str(m) for m in self.metrics)
        if values.shape[1] != len(metrics):
            raise UsageError(
                f"profile has {values.shape[1]} value columns but {len(metrics)} metric names"
            )
        if len(set(metrics)) != len(metrics):
            raise UsageError(f"duplicate metric names in {metrics}")
        if not (np.isfinite(self.period) and self.period > 0):
            raise UsageError(f"sampling period must be a positive number of seconds, got {self.period}")
        values.setflags(write=False)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "metrics", metrics)
        object.__setattr__(self, "period", float(self.period))
        object.__setattr__(self, "units", dict(self.units))
        object.__setattr__(self, "meta", dict(self.meta))

    # --- shape -------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        return int(self.values.shape[0])

    @property
    def duration(self) -> float:
        """Duration in seconds covered by the samples (n_samples x period)."""
        return self.n_samples * self.period

    @property
    def start_seconds(self) -> float:
        """Start as seconds (POSIX seconds when ``start`` is a datetime)."""
        if isinstance(self.start, _dt.datetime):
            return self.start.timestamp()
        return float(self.start)

    def times(self) -> np.ndarray:
        """Time of every sample in seconds from the start of the profile."""
        return np.arange(self.n_samples) * self.period

    # --- access ------------------------------------------------------------------------
    @property
    def source_names(self) -> dict[str, tuple[str, ...]]:
        """The names the source gave the metrics it renamed: stored name -> source names."""
        return source_names(self.meta, self.metrics)

    def find(self, name: str) -> str | None:
        """The stored name of the metric ``name`` names (:func:`resolve_metric`), None when
        no metric has that name; UsageError when it could be several."""
        return resolve_metric(name, self.metrics, self.source_names)

    def resolve(self, name: str, *, derived: bool = False) -> str:
        """The stored name of the metric ``name`` names (:func:`resolve_metric`); with
        ``derived``, ``ipc`` also when it can be derived from ``instructions`` and
        ``cycles``. UsageError listing the stored names when there is none."""
        found = self.find(name)
        if found is not None:
            return found
        if derived and metric_key(name) == "ipc" and self._ipc_counters() is not None:
            return "ipc"
        raise UsageError(f"no metric {name!r} in this profile; it has: {', '.join(self.metrics)}")

    def column(self, name: str) -> np.ndarray:
        """The samples of one metric (read-only view); ``name`` as :meth:`resolve` takes it."""
        return self.values[:, self.metrics.index(self.resolve(name))]

    def select(self, names: Sequence[str]) -> Profile:
        """A profile holding only ``names``, under their stored names (derived ``ipc`` is
        computed when asked for)."""
        stored = [self.resolve(n, derived=True) for n in names]
        columns = [self._column_or_derived(n) for n in stored]
        return self.replace(values=np.column_stack(columns) if columns else np.empty((self.n_samples, 0)),
                            metrics=tuple(stored),
                            units={n: self.units[n] for n in stored if n in self.units})

    def _ipc_counters(self) -> tuple[str, str] | None:
        instructions, cycles = self.find("instructions"), self.find("cycles")
        return None if instructions is None or cycles is None else (instructions, cycles)

    def _column_or_derived(self, name: str) -> np.ndarray:
        found = self.find(name)
        if found is not None:
            return self.column(found)
        counters = self._ipc_counters() if metric_key(name) == "ipc" else None
        if counters is not None:
            return derived_ipc(self.column(counters[0]), self.column(counters[1]))
        return self.column(name)  # raises the usage error naming the metrics

    def window(self, start_s: float | None = None, end_s: float | None = None) -> Profile:
        """The samples whose time (from the profile start) lies in ``[start_s, end_s)``."""
        first = 0 if start_s is None else max(0, int(np.ceil(start_s / self.period - 1e-9)))
        last = self.n_samples if end_s is None else min(self.n_samples, int(np.ceil(end_s / self.period - 1e-9)))
        if last <= first:
            raise UsageError(
                f"window {start_s}:{end_s} s holds no sample of this {self.duration:.3f} s profile"
            )
        offset = first * self.period
        start: float | _dt.datetime
        if isinstance(self.start, _dt.datetime):
            start = self.start + _dt.timedelta(seconds=offset)
        else:
            start = self.start + offset
        return self.replace(values=self.values[first:last], start=start,
                            meta={**self.meta, "window_s": [offset, last * self.period]})

    # --- pandas ------------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """The samples as a DataFrame (imports pandas): one column per metric, missing samples
        NaN, indexed by the sample times: ``timestamp_s`` (seconds, ``start`` + k x
        ``period``) or, when ``start`` is a datetime, ``timestamp`` (datetimes, naive ones
        taken as UTC). ``frame.attrs["phasekit"]`` keeps the period, units, node and meta, so
        that :meth:`from_frame` gives this profile back.

        Example::

            frame = profile.to_frame()
            frame["ipc"].rolling(10).mean()
        """
        import pandas as pd

        index: pd.Index
        if isinstance(self.start, _dt.datetime):
            first = pd.Timestamp(self.start)
            first = first if first.tzinfo is not None else first.tz_localize("UTC")
            index = pd.DatetimeIndex(first + pd.to_timedelta(self.times(), unit="s"),
                                     name="timestamp")
        else:
            index = pd.Index(float(self.start) + self.times(), name="timestamp_s")
        frame = pd.DataFrame(np.array(self.values), index=index, columns=list(self.metrics))
        frame.attrs[FRAME_ATTRS] = {"period": self.period, "units": dict(self.units),
                                    "node": self.node, "meta": dict(self.meta)}
        return frame

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, time: str | None = None,
                   period: float | None = None, start: float | _dt.datetime | None = None,
                   units: Mapping[str, str] | None = None, node: str | None = None,
                   meta: Mapping[str, Any] | None = None) -> Profile:
        """A Profile from a DataFrame with one numeric column per metric, one row per sample.

        The sample times are the column ``time``, else the index when it holds datetimes or
        has a name (:meth:`to_frame`'s ``timestamp_s``): seconds, or datetimes (naive ones are
        UTC). They must lie on a regular grid, within 1 % of ``period`` (default: the median
        step); grid points without a row are NaN samples, never filled. A frame without times
        needs ``period``: one row every ``period`` seconds from ``start`` (default 0).
        ``period``, ``units``, ``node`` and ``meta`` default to what :meth:`to_frame` kept in
        ``frame.attrs``. Irregular times are a UsageError: resample the frame first
        (``frame.resample("100ms").mean()``), or write it to a file, whose readers resample
        with a warning.

        Example::

            profile = Profile.from_frame(frame, time="t", units={"power": "W"})
        """
        import pandas as pd

        kept = frame.attrs.get(FRAME_ATTRS)
        kept = kept if isinstance(kept, Mapping) else {}
        period = kept.get("period") if period is None else period
        data = frame
        stamps: Any = None
        if time is not None:
            if time not in frame.columns:
                raise UsageError("no such column; the frame has: "
                                 + ", ".join(map(str, frame.columns)), parameter="time",
                                 value=time)
            stamps, data = frame[time], frame.drop(columns=[time])
        elif isinstance(frame.index, pd.DatetimeIndex) or frame.index.name is not None:
            stamps = frame.index
        if len(data) == 0:
            raise UsageError("the frame has no rows; a profile needs samples",
                             parameter="frame")
        not_numeric = [str(c) for c in data.columns
                       if not pd.api.types.is_numeric_dtype(data[c].dtype)]
        if not_numeric:
            raise UsageError(f"column {not_numeric[0]!r} is not numeric; keep the metric "
                             "columns only (and the times, with time=)", parameter="frame")
        values = data.to_numpy(dtype=np.float64, na_value=np.nan)
        if stamps is None:
            if period is None:
                raise UsageError("the frame has no sample times: give the period of its rows "
                                 "in seconds, the column of times (time=), or index it by "
                                 "time", parameter="period")
            first: float | _dt.datetime = 0.0 if start is None else start
        elif start is not None:
            raise UsageError("the frame's sample times give the start; give a start only to a "
                             "frame without times", parameter="start", value=start)
        else:
            seconds, first = _frame_seconds(stamps)
            values, period = _on_grid(seconds, values, period)
        if units is None:
            units = kept.get("units") or {}
        if meta is None:
            meta = kept.get("meta") or {}
        return cls(values=values, period=float(period), metrics=tuple(map(str, data.columns)),
                   start=first, units=units, meta=meta,
                   node=str(kept.get("node") or "") if node is None else node)

    def replace(self, **changes: Any) -> Profile:
        fields = {
            "values": self.values, "period": self.period, "metrics": self.metrics,
            "start": self.start, "units": self.units, "node": self.node, "meta": self.meta,
        }
        fields.update(changes)
        return Profile(**fields)

    def __repr__(self) -> str:
        return (f"Profile(node={self.node!r}, n_samples={self.n_samples}, period={self.period:g} s, "
                f"metrics={list(self.metrics)})")


def _frame_seconds(stamps: Any) -> tuple[np.ndarray, float | _dt.datetime]:
    """Seconds from the first of ``stamps`` (numbers or datetimes), and the first."""
    import pandas as pd

    if pd.api.types.is_datetime64_any_dtype(stamps):
        times = pd.DatetimeIndex(stamps)
        if times.hasnans:
            raise UsageError("a sample time is missing (NaT)", parameter="time")
        times = times if times.tz is not None else times.tz_localize("UTC")
        seconds = np.asarray((times - times[0]).total_seconds(), dtype=np.float64)
        return seconds, times[0].to_pydatetime()
    if not pd.api.types.is_numeric_dtype(stamps):
        raise UsageError("the sample times must be seconds or datetimes", parameter="time")
    numbers = np.asarray(stamps, dtype=np.float64)
    if not np.isfinite(numbers).all():
        raise UsageError("a sample time is missing or not finite", parameter="time")
    return numbers - numbers[0], float(numbers[0])


def _on_grid(seconds: np.ndarray, values: np.ndarray, period: float | None
             ) -> tuple[np.ndarray, float]:
    """``values`` on the regular grid of ``period`` (default: the median step) that the
    sample times ``seconds`` lie on, NaN where no row is; UsageError when they do not."""
    steps = np.diff(seconds)
    if (steps <= 0).any():
        raise UsageError(f"the sample times must increase; row {int(np.argmax(steps <= 0)) + 1} "
                         "does not", parameter="time")
    if period is None:
        if len(seconds) < 2:
            raise UsageError("one sample: give its period in seconds", parameter="period")
        period = float(np.median(steps))
    if not (np.isfinite(period) and period > 0):
        raise UsageError("expected a positive number of seconds", parameter="period",
                         value=period)
    slots = np.rint(seconds / period).astype(np.int64)
    off = np.abs(seconds - slots * period) > GRID_TOLERANCE * period
    if off.any() or (np.diff(slots) < 1).any():
        row = int(np.argmax(off)) if off.any() else int(np.argmax(np.diff(slots) < 1)) + 1
        raise UsageError(f"irregular sample times: row {row} at {seconds[row]:g} s is not on "
                         f"the grid of {period:g} s; resample the frame first "
                         "(frame.resample(...).mean())", parameter="frame")
    if slots[-1] >= 4 * len(slots) + 1_000_000:
        raise UsageError(f"the sample times span {slots[-1] + 1} periods of {period:g} s for "
                         f"{len(slots)} rows; is a time wrong?", parameter="time")
    grid = np.full((int(slots[-1]) + 1, values.shape[1]), np.nan)
    grid[slots] = values
    return grid, period


def derived_ipc(instructions: np.ndarray, cycles: np.ndarray) -> np.ndarray:
    """Instructions per cycle; NaN where cycles are zero or missing."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ipc = np.asarray(instructions, float) / np.asarray(cycles, float)
    ipc[~np.isfinite(ipc)] = np.nan
    return ipc


#: Key of a profile's meta holding the names its source gave the metrics it renamed:
#: ``{stored name: source name or [source names]}``.
SOURCE_NAMES_KEY = "source_names"
_NOT_ALPHANUMERIC = re.compile(r"[\W_]+")


def metric_key(name: str) -> str:
    """``name`` as metric names are compared when not equal: case folded, every run of
    characters other than letters and digits one ``_``, none at the ends (``CPU-Clock`` and
    ``cpu_clock`` have the key ``cpu_clock``)."""
    return _NOT_ALPHANUMERIC.sub("_", name.casefold()).strip("_")


def source_names(meta: Mapping[str, Any], metrics: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The source names recorded in ``meta`` (:data:`SOURCE_NAMES_KEY`) for ``metrics``."""
    recorded = meta.get(SOURCE_NAMES_KEY)
    if not isinstance(recorded, Mapping):
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for metric in metrics:
        given = recorded.get(metric)
        names = (given,) if isinstance(given, str) else given
        if isinstance(names, Sequence) and not isinstance(names, str):
            kept = tuple(n for n in names if isinstance(n, str) and n != metric)
            if kept:
                out[metric] = kept
    return out


def resolve_metric(name: str, metrics: Sequence[str],
                   sources: Mapping[str, Sequence[str]] | None = None) -> str | None:
    """The one of ``metrics`` that ``name`` names, or None.

    In order: ``name`` itself; the metric whose source name (``sources``: stored name ->
    source names) it is; the metric whose name or source name has the same
    :func:`metric_key` (``cpu-clock``, ``CPU_CLOCK`` and ``cpu_clock`` name one metric).
    UsageError when ``name`` could be several metrics.
    """
    if name in metrics:
        return name
    sources = sources or {}
    for hits in ([m for m in metrics if name in sources.get(m, ())],
                 [m for m in metrics if metric_key(name) in
                  {metric_key(m), *map(metric_key, sources.get(m, ()))}]):
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise UsageError(f"metric {name!r} could be any of {', '.join(hits)}; give one of "
                             "these names")
    return None
