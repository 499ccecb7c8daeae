"""The interface every recording source implements (one small plug-in per kind of sensor).

A source is opened once for a scope (the whole node, or one process tree), then read at every
sample. ``read()`` returns one float per metric, in the order of ``metrics``:

- ``kind="counter"`` metrics are cumulative totals (instructions, bytes, jiffies, joules…); the
  recorder stores their increase over each interval (per-interval counts, power in W for
  energy counters divided by the interval);
- ``kind="gauge"`` metrics are instantaneous values (memory in use, a power reading) and are
  stored as read.

``probe()`` says, without opening anything long-lived, whether the source can run here and
why not: the reason a user reads in ``phasekit sources``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Literal

Scope = Literal["node", "process"]


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    kind: Literal["counter", "gauge"] = "counter"
    rate_unit: str = ""  # unit of the stored per-interval value when it differs (e.g. "W")


@dataclass(frozen=True)
class Availability:
    """Whether a source can run here; ``reason`` when it cannot (or for metrics it drops)."""

    name: str
    available: bool
    reason: str = ""
    metrics: tuple[Metric, ...] = ()
    unavailable_metrics: dict[str, str] = field(default_factory=dict)


class Source(ABC):
    """One kind of sensor. Constructors take configuration only; ``open`` acquires resources."""

    name: str = "source"

    @abstractmethod
    def probe(self) -> Availability:
        """Can this source run on this machine, and with which metrics?"""

    @abstractmethod
    def open(self, scope: Scope, pid: int | None = None) -> tuple[Metric, ...]:
        """Start measuring (``pid`` is the root of the process tree for scope "process");
        returns the metrics ``read`` will report. Raises UnsupportedError with the reason."""

    @abstractmethod
    def read(self) -> list[float]:
        """Current values, one per metric (cumulative for counters)."""

    def close(self) -> None:  # noqa: B027 - optional for sources that hold nothing
        """Release what ``open`` acquired."""
