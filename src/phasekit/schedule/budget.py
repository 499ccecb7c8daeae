"""The time a scheduling command may take: :class:`Deadline`, a clock that leaves out the
time numba spends compiling kernels.

``--time-limit`` bounds the whole command. The annealing's share of it is turned into a
number of temperature levels (:func:`phasekit.schedule.policies.sa_levels_within`), the
same on every machine, so that the same seed and limit give the same plan; the deadline is
only its safety net, on a machine far slower than the speed assumed there. The MILP solver
gets what is left of the limit when it starts.

Compiling is left out because it is not search: where numba's cache of the kernels cannot
be used (another CPU, another numba), the first command compiles them for about 12 s, and
a deadline that counted that time would stop the annealing early and change the plan.
numba reports each compilation (not a load from its cache) as a ``numba:compile`` event;
while a :class:`Deadline` is entered (``with deadline:``) their time is added to it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

__all__ = ["Deadline"]


class Deadline:
    """``seconds`` from ``started`` (a ``clock()`` reading; default: now), less ``reserve_s``
    kept for what follows the search (running the plans, printing, writing), plus the time
    numba spent compiling meanwhile (while entered)."""

    def __init__(self, seconds: float, *, started: float | None = None, reserve_s: float = 0.0,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.seconds = float(seconds)
        self.clock = clock
        self.started = clock() if started is None else float(started)
        self.reserve_s = float(reserve_s)
        self._compile_s = 0.0
        self._listener: object | None = None

    @property
    def compiled_s(self) -> float:
        """Seconds numba spent compiling kernels while the deadline was entered."""
        return self._compile_s + _measured(self._listener)

    def spent(self) -> float:
        """Seconds since ``started``, compiling left out."""
        return self.clock() - self.started - self.compiled_s

    def remaining(self) -> float:
        """Seconds left before the deadline (negative once it has passed)."""
        return self.seconds - self.reserve_s - self.spent()

    def __enter__(self) -> Deadline:
        from numba.core import event

        listener = event.TimingListener()
        event.register("numba:compile", listener)
        self._listener = listener
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        from numba.core import event

        listener = self._listener
        if listener is not None:
            event.unregister("numba:compile", listener)  # type: ignore[arg-type]
            self._compile_s += _measured(listener)
            self._listener = None


def _measured(listener: object | None) -> float:
    """The compile time a numba ``TimingListener`` has measured (0 before any)."""
    if listener is None or not getattr(listener, "done", False):
        return 0.0
    return float(listener.duration)  # type: ignore[attr-defined]
