"""Batches of tasks to schedule (Salinas Hilburg 2020, ch. 5): the Task/Batch model and its CSV form.

A batch is a static, non-preemptive list of independent tasks in arrival order (Salinas Hilburg 2020,
section 5.1). Each task asks for a number of cores (its threads, ``c_Ti``), runs for
``time_s`` seconds and draws ``power_w`` watts of dynamic power while it runs: the task's
mean CPU + memory dynamic power, all its threads together, above the idle server (the
quantities the application signature estimates, Salinas Hilburg 2020 sections 4.2.1 and 5.1; see
:mod:`phasekit.schedule.simulate` for the rest of the server's power).

The CSV form has a header and one row per task with at least the columns ``task``,
``threads``, ``time_s`` and ``power_w``, in any order; other columns are ignored unless
asked for by name (estimated times and powers, e.g. ``est_time_s`` and ``est_power_w``).
Blank lines and lines starting with ``#`` are skipped. Every error is an
:class:`~phasekit.errors.InputError` naming the file, the line and the column, and what was
expected.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.results import Result, check_version, short_repr

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "BATCH_VERSION",
    "REQUIRED_COLUMNS",
    "Batch",
    "Task",
    "read_batch",
    "write_batch",
]

BATCH_VERSION = 1
REQUIRED_COLUMNS = ("task", "threads", "time_s", "power_w")
#: Largest thread count we accept from a file (a sanity bound, not a machine limit).
MAX_THREADS = 1_000_000


@dataclass(frozen=True)
class Task:
    """One task: name, cores it needs (threads), run time (s) and dynamic power (W)."""

    name: str
    threads: int
    time_s: float
    power_w: float


@dataclass(frozen=True, eq=False)
class Batch(Result):
    """Tasks in arrival order, held as columns.

    ``extra`` holds further numeric columns by name (estimated times and powers);
    ``source`` and ``lines`` (1-based line of each task in ``source``) let errors found
    later (a task too wide for the servers) name the file and line.
    """

    names: tuple[str, ...]
    threads: np.ndarray
    time_s: np.ndarray
    power_w: np.ndarray
    extra: Mapping[str, np.ndarray] = field(default_factory=dict)
    source: str | None = None
    lines: np.ndarray | None = None

    KIND: ClassVar[str] = "batch"

    def __post_init__(self) -> None:
        n = len(self.names)
        threads = np.asarray(self.threads, dtype=np.int64).reshape(-1)
        time_s = np.asarray(self.time_s, dtype=np.float64).reshape(-1)
        power_w = np.asarray(self.power_w, dtype=np.float64).reshape(-1)
        extra = {str(k): np.asarray(v, dtype=np.float64).reshape(-1)
                 for k, v in dict(self.extra).items()}
        for what, arr in [("threads", threads), ("time_s", time_s), ("power_w", power_w),
                          *extra.items()]:
            if arr.shape[0] != n:
                raise UsageError(f"batch column {what!r} has {arr.shape[0]} values for {n} tasks")
        if n and (threads.min() < 1):
            raise UsageError("batch: every task needs at least one thread")
        if n and not (np.all(np.isfinite(time_s)) and time_s.min() > 0):
            raise UsageError("batch: every task time must be a positive finite number")
        if n and not (np.all(np.isfinite(power_w)) and power_w.min() >= 0):
            raise UsageError("batch: every task power must be a finite number >= 0")
        lines = None if self.lines is None else np.asarray(self.lines, dtype=np.int64)
        for name, value in [("threads", threads), ("time_s", time_s), ("power_w", power_w),
                            ("lines", lines)]:
            if value is not None:
                value.setflags(write=False)
            object.__setattr__(self, name, value)
        for arr in extra.values():
            arr.setflags(write=False)
        object.__setattr__(self, "extra", extra)
        object.__setattr__(self, "names", tuple(str(s) for s in self.names))

    # --- construction and access ------------------------------------------------------------
    @classmethod
    def from_tasks(cls, tasks: Iterable[Task | tuple[str, int, float, float]], *,
                   extra: Mapping[str, Sequence[float]] | None = None,
                   source: str | None = None) -> Batch:
        """A batch from Task objects or ``(name, threads, time_s, power_w)`` tuples."""
        rows = [t if isinstance(t, Task) else Task(*t) for t in tasks]
        return cls(names=tuple(t.name for t in rows),
                   threads=np.array([t.threads for t in rows], dtype=np.int64),
                   time_s=np.array([t.time_s for t in rows], dtype=np.float64),
                   power_w=np.array([t.power_w for t in rows], dtype=np.float64),
                   extra=dict(extra or {}), source=source)

    def __len__(self) -> int:
        return len(self.names)

    def task(self, i: int) -> Task:
        return Task(self.names[i], int(self.threads[i]), float(self.time_s[i]),
                    float(self.power_w[i]))

    @property
    def tasks(self) -> tuple[Task, ...]:
        return tuple(self.task(i) for i in range(len(self)))

    def where(self, i: int) -> dict[str, Any]:
        """Keyword arguments of an InputError about task ``i``: its file and line."""
        line = None if self.lines is None else int(self.lines[i])
        return {"path": self.source, "line": line}

    def column(self, name: str) -> np.ndarray:
        """A numeric column by name: one of the required ones or of ``extra``."""
        if name in ("time_s", "power_w", "threads"):
            return np.asarray(getattr(self, name))
        if name in self.extra:
            return self.extra[name]
        have = ", ".join(list(REQUIRED_COLUMNS[1:]) + list(self.extra))
        raise UsageError(f"{self.source or 'the batch'}: no column {name!r} (the batch has: "
                         f"{have})")

    def check_fits(self, cores: int) -> None:
        """InputError naming the file and line of the first task needing more than ``cores``."""
        if cores < 1:
            raise UsageError("a server needs at least one core", parameter="cores",
                             value=cores)
        if len(self) == 0:
            raise InputError("no tasks: the batch is empty; expected at least one task row",
                             path=self.source)
        wide = np.flatnonzero(self.threads > cores)
        if wide.size:
            i = int(wide[0])
            more = f" (and {wide.size - 1} more)" if wide.size > 1 else ""
            raise InputError(f"task {self.names[i]!r} needs {int(self.threads[i])} cores but a "
                             f"server has {cores}{more}; expected threads <= {cores}",
                             column="threads", **self.where(i))

    # --- JSON -------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return short_repr(self, f"{len(self.names)} tasks", self.source)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "batch", "version": BATCH_VERSION, "source": self.source,
                "tasks": [{"task": self.names[i], "threads": int(self.threads[i]),
                           "time_s": float(self.time_s[i]), "power_w": float(self.power_w[i]),
                           **{k: float(v[i]) for k, v in self.extra.items()}}
                          for i in range(len(self))]}

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str | None = None) -> Batch:
        check_version(data, "batch", BATCH_VERSION, source)
        try:
            rows = list(data["tasks"])
            keys = [k for k in (rows[0] if rows else {}) if k not in REQUIRED_COLUMNS]
            return cls(names=tuple(str(r["task"]) for r in rows),
                       threads=np.array([int(r["threads"]) for r in rows], dtype=np.int64),
                       time_s=np.array([float(r["time_s"]) for r in rows]),
                       power_w=np.array([float(r["power_w"]) for r in rows]),
                       extra={k: np.array([float(r[k]) for r in rows]) for k in keys},
                       source=data.get("source"))
        except (KeyError, TypeError, ValueError, UsageError) as exc:
            raise InputError(f"malformed batch result: {exc}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """One row per task in arrival order: task, threads, time_s, power_w and the
        ``extra`` columns."""
        import pandas as pd

        return pd.DataFrame({"task": list(self.names), "threads": self.threads,
                             "time_s": self.time_s, "power_w": self.power_w,
                             **{k: v for k, v in self.extra.items()}})

    def plot(self, ax: Axes | None = None) -> Figure:
        """Each task's run time against its thread count (the marker's area grows with its
        power)."""
        from phasekit.plot.energy import target_axes

        fig, ax = target_axes(ax)
        power = np.asarray(self.power_w, float)
        size = 10 + 60 * power / power.max() if power.size and power.max() > 0 else 20
        ax.scatter(self.threads, self.time_s, s=size, alpha=0.6, color="tab:blue",
                   linewidths=0)
        ax.set_xlabel("threads")
        ax.set_ylabel("time (s)")
        ax.set_title(f"{len(self)} tasks" + (f" of {self.source}" if self.source else ""),
                     fontsize="medium")
        ax.grid(True, alpha=0.3)
        return fig


# --- CSV -------------------------------------------------------------------------------------
def read_batch(path: str | os.PathLike[str], *,
               columns: Mapping[str, str] | None = None,
               optional_columns: Mapping[str, str] | None = None) -> Batch:
    """Read a batch CSV (columns ``task, threads, time_s, power_w``):
    :func:`phasekit.io.batch.read_batch_table`.

    ``columns`` names further columns to read into ``Batch.extra``, each with its kind:
    ``"time"`` (seconds > 0) or ``"power"`` (watts >= 0), e.g.
    ``{"est_time_s": "time", "est_power_w": "power"}``; ``optional_columns`` the same, read
    only when the header has them. A column of ``columns`` the file does not have is a
    UsageError (the caller named it: ``FILE: no column 'x' (the file has: a, b, c)``); a
    required one missing, or an empty batch (a header and no task), an InputError.
    """
    from phasekit.io.batch import read_batch_table

    asked = dict(columns or {})
    table = read_batch_table(path, required=REQUIRED_COLUMNS, max_threads=MAX_THREADS,
                             optional_columns={**dict(optional_columns or {}), **asked})
    absent = [name for name in asked if name not in table.kinds]
    if absent:
        from phasekit.io.table import no_column

        raise no_column(absent[0], _header(path), table.source)
    values = table.values
    return Batch(names=table.names, threads=np.array(values["threads"], dtype=np.int64),
                 time_s=np.array(values["time_s"]), power_w=np.array(values["power_w"]),
                 extra={c: np.array(values[c]) for c in table.kinds}, source=table.source,
                 lines=np.array(table.lines, dtype=np.int64))


def _header(path: str | os.PathLike[str]) -> list[str]:
    """The column names of a batch CSV that :func:`read_batch` has read (its first line
    that is neither blank nor a comment), as the reader compares them: stripped, lower
    case."""
    from phasekit.io.inputs import read_bytes

    text = read_bytes(path, "a CSV file").decode("utf-8-sig", errors="replace")
    for row in csv.reader(io.StringIO(text, newline="")):
        if row and any(c.strip() for c in row) and not row[0].lstrip().startswith("#"):
            return [c.strip().lower() for c in row]
    return []


def write_batch(batch: Batch, path: str | os.PathLike[str]) -> Path:
    """Write ``batch`` as CSV (required columns, then its extra columns), atomically."""
    from phasekit.io.atomic import atomic_write_text

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*REQUIRED_COLUMNS, *batch.extra])
    for i in range(len(batch)):
        writer.writerow([batch.names[i], int(batch.threads[i]), repr(float(batch.time_s[i])),
                         repr(float(batch.power_w[i])),
                         *(repr(float(v[i])) for v in batch.extra.values())])
    atomic_write_text(Path(path), out.getvalue())
    return Path(path)
