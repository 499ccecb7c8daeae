"""The Profile: a regularly sampled multivariate time series of one node (DESIGN.md)."""

from __future__ import annotations

import datetime as _dt
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
    def column(self, name: str) -> np.ndarray:
        """The samples of one metric (read-only view)."""
        try:
            return self.values[:, self.metrics.index(name)]
        except ValueError:
            raise UsageError(
                f"no metric {name!r} in this profile; it has: {', '.join(self.metrics)}"
            ) from None

    def select(self, names: Sequence[str]) -> Profile:
        """A profile holding only ``names`` (derived ``ipc`` is computed when asked for)."""
        columns = [self._column_or_derived(n) for n in names]
        return self.replace(values=np.column_stack(columns) if columns else np.empty((self.n_samples, 0)),
                            metrics=tuple(names),
                            units={n: self.units[n] for n in names if n in self.units})

    def _column_or_derived(self, name: str) -> np.ndarray:
        if name in self.metrics:
            return self.column(name)
        if name == "ipc" and {"instructions", "cycles"} <= set(self.metrics):
            return derived_ipc(self.column("instructions"), self.column("cycles"))
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
