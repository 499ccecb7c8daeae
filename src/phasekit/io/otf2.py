"""OTF2 traces (Score-P) -> :class:`~phasekit.trace.Trace`, through the ``otf2`` package.

Install with ``pip install "phasekit[otf2]"``. Pass the archive's anchor file
(``traces.otf2``) or the directory holding it.

What is read:

- MPI calls: Enter/Leave of regions whose paradigm is MPI (or, for writers that do not set
  it, whose name starts with ``MPI_``); one row per outermost MPI region (MPI regions entered
  inside an MPI call are part of it).
- Rank and thread: the location's location group (Score-P's "MPI Rank N"; N when the name
  ends in a number, else the order of the groups) and its order inside that group.
- Call path: the regions open around the call (outermost first), by name as the source
  writes it (:func:`~phasekit.io.symbols.function_name`: Fortran and C++ symbols
  demangled). Call site: the source location of the calling context
  (CallingContextEnter/Sample events of Score-P's unwinding mode) when the trace has them,
  else ``""``.
- Bytes: MpiSend, MpiIsend, MpiRecv, MpiIrecv (message length) and MpiCollectiveEnd (sent +
  received) recorded while the call is open. Unlike Paraver, where the receive size is given
  to the MPI_Irecv, OTF2 records a non-blocking receive's size at its completion (MPI_Wait).
- Counters: Metric events. Accumulated metrics (Score-P's PAPI counters are
  ``ACCUMULATED_START``) are differenced between the previous call's exit and the entry;
  relative ones are summed over the burst; absolute ones give their value at the entry.

The ``otf2`` package yields one Python object per event, so this reader runs at the speed of
that package (about 10^5 events/s), far below the Paraver reader; it is meant for traces of
moderate size.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from phasekit.errors import InputError, UnsupportedError, UsageError
from phasekit.io.inputs import input_file
from phasekit.io.symbols import function_name
from phasekit.trace import PATH_SEP, Trace, empty_arrays, make_arrays

__all__ = ["is_archive", "read_otf2"]


def _import_otf2() -> Any:
    try:
        import otf2
    except ImportError as exc:
        raise UnsupportedError(
            f"reading OTF2 traces needs the otf2 package ({exc}); install it with: "
            'pip install "phasekit[otf2]"') from None
    return otf2


def is_archive(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder holding one ``.otf2`` anchor file: an OTF2 archive."""
    folder = Path(path)
    return folder.is_dir() and len(list(folder.glob("*.otf2"))) == 1


def _anchor(path: Path) -> Path:
    if path.is_dir():
        anchors = sorted(path.glob("*.otf2"))
        if len(anchors) != 1:
            raise InputError(f"holds {len(anchors)} .otf2 anchor files; expected an OTF2 "
                             "archive (pass its anchor file)", path=os.fspath(path))
        return anchors[0]
    return input_file(path, "an OTF2 archive's anchor file (.otf2)")


@contextlib.contextmanager
def _library_stderr_silenced() -> Iterator[None]:
    """The OTF2 C library prints its errors on the process's stderr (4-30 lines for a damaged
    archive) before the Python call raises: they go to /dev/null, and phasekit's one line
    says what failed. phasekit's own warnings are kept and shown after."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with open(os.devnull, "wb") as null:
                os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename,
                               warning.lineno)


class _Loc:
    """Reading state of one location (thread)."""

    __slots__ = ("call_depth", "first", "last_exit", "last_exit_values", "metric", "open",
                 "relative", "site", "stack")

    def __init__(self, n_metrics: int) -> None:
        self.stack: list[str] = []
        self.open = -1          # row of the open MPI call
        self.call_depth = 0     # MPI regions open (nested ones belong to the outermost)
        self.first: int | None = None
        self.last_exit: int | None = None
        self.metric = np.full(n_metrics, np.nan)        # latest value of each metric
        self.last_exit_values = np.full(n_metrics, np.nan)
        self.relative = np.full(n_metrics, np.nan)      # relative metrics summed in the burst
        self.site = ""


def read_otf2(path: str | os.PathLike[str]) -> Trace:
    """Read the MPI calls of an OTF2 archive (anchor file or its directory) into a Trace.

    Raises UnsupportedError when the ``otf2`` package is missing (``pip install
    "phasekit[otf2]"``) and InputError when the archive cannot be read.

    Example::

        trace = read_otf2("scorep-run/traces.otf2")
    """
    otf2 = _import_otf2()
    anchor = _anchor(Path(path))
    try:
        with _library_stderr_silenced():
            return _read(otf2, anchor)
    except (UsageError, UnsupportedError, InputError):
        raise
    except Exception as exc:  # the otf2 package's errors have no common base class
        raise InputError(f"cannot read the OTF2 archive: {type(exc).__name__}: {exc}",
                         path=os.fspath(anchor)) from None


def _read(otf2: Any, anchor: Path) -> Trace:
    events = otf2.events
    mpi = otf2.Paradigm.MPI
    accumulated = {getattr(otf2.MetricMode, m) for m in (
        "ACCUMULATED_START", "ACCUMULATED_POINT", "ACCUMULATED_LAST", "ACCUMULATED_NEXT")}
    relative = {getattr(otf2.MetricMode, m) for m in (
        "RELATIVE_POINT", "RELATIVE_LAST", "RELATIVE_NEXT")}
    with otf2.reader.open(os.fspath(anchor)) as reader:
        defs = reader.definitions
        clock = defs.clock_properties
        resolution = float(clock.timer_resolution)
        offset = int(clock.global_offset)
        # ranks and threads
        groups = [g for g in defs.location_groups
                  if str(g.location_group_type).endswith("PROCESS")] or list(defs.location_groups)
        numbers = [re.search(r"(\d+)\s*$", g.name or "") for g in groups]
        if all(numbers) and len({int(m.group(1)) for m in numbers if m}) == len(groups):
            rank_of = {id(g): int(m.group(1)) for g, m in zip(groups, numbers, strict=True) if m}
            order = sorted(rank_of.values())
            rank_of = {k: order.index(v) for k, v in rank_of.items()}
        else:
            rank_of = {id(g): i for i, g in enumerate(groups)}
        locs_of: dict[int, list[Any]] = {}
        for loc in defs.locations:
            if id(loc.group) in rank_of:
                locs_of.setdefault(id(loc.group), []).append(loc)
        where: dict[Any, tuple[int, int]] = {}
        for gid, locs in locs_of.items():
            for t, loc in enumerate(locs):
                where[loc] = (rank_of[gid], t)
        n_ranks = len(groups)
        threads_per_rank = [0] * n_ranks
        for gid, locs in locs_of.items():
            threads_per_rank[rank_of[gid]] = len(locs)
        # metrics
        members = list(defs.metric_members)
        member_index = {id(m): i for i, m in enumerate(members)}
        modes = [m.metric_mode for m in members]
        acc = np.array([m in accumulated for m in modes], dtype=bool)
        rel = np.array([m in relative for m in modes], dtype=bool)
        names = [m.name for m in members]

        rows_loc: list[tuple[int, int]] = []
        rows_time: list[int] = []
        rows_exit: list[int] = []
        rows_call: list[str] = []
        rows_path: list[str] = []
        rows_site: list[str] = []
        rows_bytes: list[float] = []
        rows_burst: list[int] = []
        rows_ctr: list[np.ndarray] = []
        state: dict[Any, _Loc] = {}
        frame_names: dict[str, str] = {}  # region name -> function name, once per region
        unattributed = 0
        n_events = 0
        last_time = offset

        def is_mpi(region: Any) -> bool:
            return region.paradigm == mpi or (region.name or "").startswith("MPI_")

        for loc, ev in reader.events:
            n_events += 1
            s = state.get(loc)
            if s is None:
                s = state[loc] = _Loc(len(members))
            t = int(ev.time)
            last_time = max(last_time, t)
            if s.first is None:
                s.first = t
            if isinstance(ev, events.Enter):
                region = ev.region
                if is_mpi(region):
                    s.call_depth += 1
                    if s.call_depth == 1:
                        values = np.where(acc, s.metric - np.nan_to_num(s.last_exit_values),
                                          np.where(rel, s.relative, s.metric))
                        s.relative = np.full(len(members), np.nan)
                        rows_loc.append(where.get(loc, (-1, -1)))
                        rows_time.append(t)
                        rows_exit.append(-1)
                        rows_call.append(region.name)
                        rows_path.append(PATH_SEP.join(s.stack))
                        rows_site.append(s.site)
                        rows_bytes.append(0.0)
                        rows_burst.append(s.last_exit if s.last_exit is not None else s.first)
                        rows_ctr.append(values)
                        s.open = len(rows_time) - 1
                else:
                    name = region.name or ""
                    frame = frame_names.get(name)
                    if frame is None:
                        frame = frame_names[name] = function_name(name)
                    s.stack.append(frame)
            elif isinstance(ev, events.Leave):
                region = ev.region
                if is_mpi(region):
                    if s.call_depth > 0:
                        s.call_depth -= 1
                        if s.call_depth == 0 and s.open >= 0:
                            rows_exit[s.open] = t
                            s.open = -1
                            s.last_exit = t
                            s.last_exit_values = s.metric.copy()
                elif s.stack:
                    s.stack.pop()
            elif isinstance(ev, events.Metric):
                metric = ev.metric
                group = getattr(metric, "members", None)
                if group is None:
                    group = metric.metric_class.members
                for member, value in zip(group, ev.values, strict=False):
                    k = member_index.get(id(member))
                    if k is None:
                        continue
                    v = float(value)
                    if rel[k] and s.open < 0:
                        r = s.relative[k]
                        s.relative[k] = v if np.isnan(r) else r + v
                    s.metric[k] = v
            elif isinstance(ev, events.MpiSend | events.MpiIsend | events.MpiRecv
                            | events.MpiIrecv):
                if s.open >= 0:
                    rows_bytes[s.open] += float(ev.msg_length)
                else:
                    unattributed += 1
            elif isinstance(ev, events.MpiCollectiveEnd):
                if s.open >= 0:
                    rows_bytes[s.open] += float(getattr(ev, "size_sent", 0) or 0) + float(
                        getattr(ev, "size_received", 0) or 0)
            elif isinstance(ev, events.CallingContextEnter | events.CallingContextSample):
                s.site = _site(getattr(ev, "calling_context", None))
        duration = max(int(clock.trace_length), last_time - offset) / resolution

    meta: dict[str, Any] = {"events": n_events, "timer_resolution_hz": resolution,
                            "metric_modes": {n: str(m) for n, m in zip(names, modes,
                                                                        strict=True)}}
    if unattributed:
        meta["messages_outside_calls"] = unattributed
    open_calls = sum(1 for e in rows_exit if e < 0)
    if open_calls:
        meta["unterminated_calls"] = open_calls
    sources = (os.fspath(anchor),)
    if not rows_time:
        return Trace(calls=empty_arrays(), n_ranks=n_ranks,
                     threads_per_rank=tuple(threads_per_rank), duration_s=duration,
                     sources=sources, application=None, format="otf2",
                     explanation=f"no MPI region (paradigm MPI or MPI_*) entered in "
                                 f"{os.fspath(anchor)}", meta=meta)
    loc_arr = np.asarray(rows_loc, dtype=np.int64)
    if (loc_arr < 0).any():
        raise InputError("an MPI call on a location outside every process location group",
                         path=os.fspath(anchor))
    entry = np.asarray(rows_time, dtype=np.int64)
    exit_ = np.asarray(rows_exit, dtype=np.int64)
    ctr = np.vstack(rows_ctr) if rows_ctr else np.zeros((0, len(members)))
    counters = {name: ctr[:, k] for k, name in enumerate(names)
                if np.isfinite(ctr[:, k]).any()}

    def codes(labels: list[str]) -> tuple[np.ndarray, list[str]]:
        uniq, inverse = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
        return inverse.reshape(-1), [str(u) for u in uniq]

    calls, counter_names = make_arrays(
        rank=loc_arr[:, 0], thread=loc_arr[:, 1], time_s=(entry - offset) / resolution,
        duration_s=np.where(exit_ >= 0, (exit_ - entry) / resolution, np.nan),
        call=codes(rows_call), call_path=codes(rows_path), call_lines=codes(rows_site),
        call_site=codes(rows_site), bytes=np.asarray(rows_bytes),
        burst_duration_s=(entry - np.asarray(rows_burst, dtype=np.int64)) / resolution,
        counters=counters)
    return Trace(calls=calls, n_ranks=n_ranks, threads_per_rank=tuple(threads_per_rank),
                 duration_s=duration, counters=counter_names, sources=sources,
                 application=None, format="otf2", meta=meta)


def _site(context: Any) -> str:
    """``"file:line"`` of a calling context's source location, or ``""``."""
    location = getattr(context, "source_code_location", None)
    if location is None:
        return ""
    file = getattr(location, "file", "") or ""
    line = getattr(location, "line_number", None)
    return f"{file}:{line}" if line is not None else str(file)
