"""The Profile: a regularly sampled multivariate time series of one node (DESIGN.md)."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phasekit.errors import UsageError


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
