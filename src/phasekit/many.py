"""Several inputs for one analysis: the nodes of a run, a folder of traces.

``periodicity_many``, ``phases_many`` and ``structure_many`` are the library forms of
``phasekit analyze|phases|structure`` given several files: each expands its arguments
(files, folders, glob patterns: :func:`phasekit.parallel.expand_inputs`), runs one task per
file serially, on local processes or on a Dask cluster (:func:`phasekit.parallel.map_files`),
and returns one result with the files that failed (:class:`~phasekit.results.NodeError`);
a failed file never raises. The tasks are the module-level ``*_file`` functions here: what a
worker process or a Dask worker imports is this module and the analyses, never
:mod:`phasekit.cli`.

Dask: pass a ``dask.distributed.Client`` as ``client`` (kept open), or its address as
``scheduler`` (a client is opened and closed around the work). The workers must be able to
read the files (a shared file system); they are given absolute paths, and messages name the
files as given.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from phasekit.errors import PhasekitError, PhasekitWarning, UsageError
from phasekit.many_table import file_stem
from phasekit.results import (
    NodeError,
    Result,
    check_version,
    phase_spans,
    plain,
    short_repr,
)

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.periodicity.nodes import MultiNodeResult, NodeSummary
    from phasekit.present import Presentation
    from phasekit.profile import Profile

__all__ = [
    "PHASES_KIND",
    "STRUCTURE_KIND",
    "FileRuns",
    "MultiPhaseResult",
    "MultiStructureResult",
    "check_metrics",
    "check_trace",
    "check_window",
    "file_stem",
    "node_names",
    "periodicity_file",
    "periodicity_many",
    "periodicity_runs",
    "phases_file",
    "phases_many",
    "phases_runs",
    "read_named_profile",
    "run_files",
    "show_file_as",
    "shown_name",
    "structure_file",
    "structure_many",
    "structure_runs",
    "warm_comparison",
]

R = TypeVar("R")
PathArg = str | os.PathLike[str]
Progress = Callable[[str, float], None]
Window = tuple[float | None, float | None]

#: ``kind`` of :class:`MultiPhaseResult` and of :class:`MultiStructureResult`.
PHASES_KIND = "multinode_phases"
STRUCTURE_KIND = "multi_structure"
RESULT_VERSION = 1
#: 2: each trace's record is a ``structure`` version 2 record (was ``mpi-structure-result``
#: version 1; both read).
STRUCTURE_VERSION = 2


# --- running one task per file ---------------------------------------------------------------
@dataclass(frozen=True)
class FileRuns(Generic[R]):
    """What :func:`run_files` made of the files: ``done``, the ``(file, value)`` of those that
    worked, in order; ``errors``, one per argument naming no file and per file that failed;
    ``tracebacks``, the traceback of each failed file (by file, for ``--debug``);
    ``command_lines``, the message of a failed file as the command line says it, where it
    names an option (by file)."""

    done: list[tuple[str, R]]
    errors: list[NodeError]
    tracebacks: dict[str, str] = field(default_factory=dict)
    command_lines: dict[str, str] = field(default_factory=dict)


#: Names shown for files that only carry another source's samples (a Prometheus node's
#: temporary Parquet file: its server and label), by path; see :func:`show_file_as`.
_SHOWN_AS: dict[str, str] = {}


def show_file_as(path: PathArg, name: str) -> None:
    """Name the file ``path`` as ``name`` in results (``file``) and messages."""
    _SHOWN_AS[os.fspath(path)] = name


#: Inputs smaller than this in all are analysed in this process when no worker count is
#: given (ours): a worker process costs an interpreter start and imports, about 0.5 s, more
#: than one core takes for that much data (8 ten-minute node profiles at 5 ms, 15 MB of
#: Parquet, take about 1 s; 8 two-minute ones took 1.7 s on 2 workers, 1.0 s in-process).
SMALL_INPUTS_BYTES = 16 << 20


def _total_bytes(files: Sequence[Path]) -> int:
    total = 0
    for file in files:
        with contextlib.suppress(OSError):  # a missing file: its reader says so
            total += file.stat().st_size
    return total


def shown_name(path: PathArg) -> str:
    """How ``path`` is named in results and messages (:func:`show_file_as`; else itself)."""
    return _SHOWN_AS.get(os.fspath(path), os.fspath(path))


def _as_list(paths: PathArg | Sequence[PathArg]) -> list[PathArg]:
    return [paths] if isinstance(paths, str | os.PathLike) else list(paths)


def run_files(job: Callable[[str], R], paths: PathArg | Sequence[PathArg], *,
              suffixes: Sequence[str], workers: int | None = None, client: Client | None = None,
              scheduler: str | None = None, progress: Progress | None = None,
              started: Callable[[], None] | None = None) -> FileRuns[R]:
    """``job(file)`` for every file ``paths`` name (:func:`~phasekit.parallel.expand_inputs`
    with ``suffixes``), on ``workers`` local processes (None: one per core, or serially when
    the files total less than :data:`SMALL_INPUTS_BYTES`; 1: serially), on the Dask
    ``client`` or on the cluster at ``scheduler``. Each file's
    :class:`~phasekit.errors.PhasekitWarning` messages are warned again here, naming the file.
    ``job`` must pickle for processes and Dask (a module-level function or a partial of one).
    """
    from phasekit.parallel import expand_inputs, map_files

    files, problems = expand_inputs(_as_list(paths), suffixes)
    errors = [NodeError(file=arg, message=f"{arg}: {reason}", exit_code=3)
              for arg, reason in problems]
    shown = [shown_name(f) for f in files]
    remote = client is not None or scheduler is not None
    if workers is None and not remote and _total_bytes(files) < SMALL_INPUTS_BYTES:
        workers = 1
    items = [os.path.abspath(f) if remote else str(f) for f in files]
    outcomes = map_files(job, items, workers=workers, client=client, scheduler=scheduler,
                         progress=progress, started=started)
    usage = next((o.failure.usage for o in outcomes if o.failure and o.failure.usage), None)
    if usage is not None:  # a parameter of the call at fault: the caller's error, once
        raise usage
    done: list[tuple[str, R]] = []
    tracebacks: dict[str, str] = {}
    command_lines: dict[str, str] = {}
    for name, item, outcome in zip(shown, items, outcomes, strict=True):
        for message in outcome.warnings:
            text = message.replace(item, name)
            warnings.warn(text if name in text else f"{name}: {text}", PhasekitWarning,
                          stacklevel=2)
        if outcome.failure is not None:
            if outcome.failure.traceback:
                tracebacks[name] = outcome.failure.traceback
            if outcome.failure.command_line:
                command_lines[name] = outcome.failure.command_line.replace(item, name)
            errors.append(NodeError(file=name, message=outcome.failure.message.replace(item, name),
                                    exit_code=outcome.failure.exit_code))
        else:
            done.append((name, outcome.value))  # type: ignore[arg-type]
    return FileRuns(done=done, errors=errors, tracebacks=tracebacks,
                    command_lines=command_lines)


def node_names(files: Sequence[str], own: Sequence[str]) -> list[str]:
    """Unique node names: the profiles' ``own`` names when every profile has one and they
    differ, else the file names without suffix when they differ, else the paths."""
    if all(own) and len(set(own)) == len(own):
        return list(own)
    stems = [file_stem(f) for f in files]
    return stems if len(set(stems)) == len(stems) else list(files)


# --- checks that name the file ---------------------------------------------------------------
def read_named_profile(path: PathArg, period: float | None = None) -> Profile:
    """:func:`phasekit.io.read_profile` (``period``: of a CSV without a time column), every
    error naming the file (:func:`phasekit.io.api.read_profile`)."""
    from phasekit.io.api import read_profile

    return read_profile(path, period=period)


def _past_the_end(data: Profile, window_s: Window | None) -> str | None:
    """Why ``window_s`` holds nothing of ``data`` (it starts after the profile's end), or
    None."""
    if window_s is not None and window_s[0] is not None and window_s[0] >= data.duration:
        return f"starts at {window_s[0]:g} s, after the end of this {data.duration:g} s profile"
    return None


def check_window(data: Profile, window_s: Window | None, path: PathArg,
                 text: str | None = None) -> None:
    """UsageError naming the parameter ``window`` (its value as the command line gave it:
    ``text``) and the file when the window starts after the end of the profile."""
    why = _past_the_end(data, window_s)
    if why is not None:
        raise UsageError(why, parameter="window", value=window_s if text is None else text,
                         file=os.fspath(path))


def check_metrics(profile: Profile, metrics: Sequence[str], path: PathArg) -> list[str]:
    """The stored names of the requested metrics (:meth:`Profile.resolve`: a source name or
    another case also names a metric); UsageError naming the file when one is neither a
    column nor derivable."""
    try:
        return [profile.resolve(name, derived=True) for name in metrics]
    except UsageError as exc:
        raise UsageError(f"{os.fspath(path)}: {exc}") from None


def check_trace(path: PathArg) -> None:
    """UsageError unless ``path`` names a trace format we read."""
    from phasekit.io import is_trace

    if not is_trace(path):
        raise UsageError(f"{os.fspath(path)}: not a trace; expected a Paraver .prv/.prv.gz or "
                         "an OTF2 .otf2 anchor file")


# --- periodicity: the nodes of a run ---------------------------------------------------------
#: Parameters of :func:`phasekit.periodicity.analyze` whose bounds depend on the profile: a
#: value one profile of a run cannot take fails that file only, not the whole run.
BOUND_BY_THE_PROFILE = ("half_window",)

def periodicity_file(path: str, *, metrics: Sequence[str] | None, window_s: Window | None,
                     options: dict[str, Any], period: float | None = None) -> NodeSummary:
    """The task run for each profile of a run (in a worker process or on Dask): read it
    (``period``: of CSVs without a time column), analyze it, keep the summary (the patterns,
    not the data)."""
    from phasekit.io.naming import name_file
    from phasekit.parallel import worker_threads
    from phasekit.periodicity import analyze
    from phasekit.periodicity.nodes import NodeSummary

    data = read_named_profile(path, period)
    why = _past_the_end(data, window_s)
    if why is not None:  # this file's error, not the call's: the other files are analyzed
        raise UsageError(f"{os.fspath(path)}: the window {why}")
    if metrics:
        metrics = check_metrics(data, metrics, path)
    try:
        result = analyze(data, metrics=list(metrics) if metrics else None, window=window_s,
                         workers=worker_threads(), **options)
    except UsageError as exc:
        if exc.parameter in BOUND_BY_THE_PROFILE:  # this file's error: the others go on
            raise exc.of_file(os.fspath(path)) from exc
        raise name_file(exc, path) from exc
    except PhasekitError as exc:
        raise name_file(exc, path) from exc
    return NodeSummary.from_result(result, file=path)


def warm_comparison() -> None:
    """Import the comparison and load its numba kernels (run in a thread while the workers
    analyze: about a second that would otherwise come after the last analysis)."""
    import numpy as np

    from phasekit.periodicity.nodes import pattern_distance

    pattern_distance(np.arange(8.0) + 1.0, np.arange(9.0) + 1.0)


def _names(value: Sequence[str] | str | None) -> list[str] | None:
    return [value] if isinstance(value, str) else None if value is None else list(value)


def periodicity_runs(paths: PathArg | Sequence[PathArg], *,
                     metrics: Sequence[str] | str | None,
                     window: Window | None, workers: int | None, client: Client | None,
                      scheduler: str | None, progress: Progress | None,
                     options: dict[str, Any], period: float | None = None
                     ) -> tuple[MultiNodeResult, FileRuns[NodeSummary]]:
    """:func:`periodicity_many` (``options`` its other keywords), and the runs it made of the
    files (their tracebacks: the CLI's ``--debug``)."""
    from phasekit.io import PROFILE_SUFFIXES
    from phasekit.periodicity import PeriodicityOptions
    from phasekit.periodicity.nodes import compare_nodes

    names = _names(metrics)
    if names and len(set(names)) != len(names):
        raise UsageError("each metric may be given once", parameter="metrics", option="--metric")
    checked = PeriodicityOptions.of(options.get("options"),
                                    {k: v for k, v in options.items() if k != "options"},
                                    verb="periodicity_many")
    job = functools.partial(periodicity_file, metrics=names, window_s=window,
                            options={"options": checked}, period=period)
    # started once the files are handed out, so as not to hold the GIL while the workers
    # start or while dask.distributed is imported and the client connects
    warm = threading.Thread(target=warm_comparison, daemon=True)
    runs = run_files(job, paths, suffixes=PROFILE_SUFFIXES, workers=workers, client=client,
                     scheduler=scheduler, progress=progress, started=warm.start)
    if warm.is_alive():
        warm.join()
    files = [f for f, _ in runs.done]
    named = node_names(files, [s.node for _, s in runs.done])
    summaries = [replace(s, node=n, file=f) for (f, s), n in zip(runs.done, named, strict=True)]
    return compare_nodes(summaries, errors=runs.errors, band=checked.band), runs


def periodicity_many(paths: PathArg | Sequence[PathArg], *, workers: int | None = None,
                     client: Client | None = None, scheduler: str | None = None,
                     metrics: Sequence[str] | str | None = None, window: Window | None = None,
                     progress: Progress | None = None, period: float | None = None,
                     **options: Any) -> MultiNodeResult:
    """The periodicities of the profiles of several nodes, compared (``phasekit analyze
    FILES...``; Phase-TA, IV-B): each profile analyzed as :func:`phasekit.periodicity.analyze`
    (``metrics``, ``window`` and the other keywords: ``band``, ``cut_ratio``,
    ``half_window``, ...), then :func:`~phasekit.periodicity.nodes.compare_nodes`: a row per
    node, the agreement of their patterns against a reference node, the outliers.

    Parameters
    ----------
    paths
        Files, folders (their profiles) or glob patterns.
    workers
        Local worker processes (None: one per core, or serially when the files are small;
        1: serially in this process).
    client
        A ``dask.distributed.Client`` to run on instead of local processes.
    scheduler
        The address of a Dask scheduler to run on instead (``"tcp://HOST:PORT"``).
    metrics
        A metric name or names, as :func:`phasekit.periodicity.periodicity`.
    window
        (start, end) seconds from each profile's start; either may be None.
    progress
        Called as ``progress(stage, fraction)`` as the files finish.
    period
        The sampling period (s) of CSV profiles without a time column
        (:func:`phasekit.io.read_profile`).
    **options
        The other keywords of :func:`phasekit.periodicity.analyze` (``band``,
        ``cut_ratio``, ``half_window``, ...), or ``options``: a
        :class:`~phasekit.periodicity.PeriodicityOptions`.

    Returns
    -------
    MultiNodeResult
        A row per node, the agreement and the outliers; the files that failed are its
        ``errors`` (``nodes`` is empty when every one failed).
    """
    return periodicity_runs(paths, metrics=metrics, window=window, workers=workers,
                             client=client, scheduler=scheduler, progress=progress,
                             options=options, period=period)[0]


# --- phases and structure of several inputs --------------------------------------------------
@dataclass(frozen=True, eq=False)
class MultiPhaseResult(Result):
    """The phases of several profiles (``phasekit phases FILES...``): per profile its
    :class:`~phasekit.phases.PhaseResult` as JSON data (``node`` and ``file`` set, without
    the per-vector series), and the files that failed."""

    nodes: tuple[dict[str, Any], ...]
    errors: tuple[NodeError, ...] = ()

    KIND: ClassVar[str] = PHASES_KIND
    #: The columns of :meth:`summary`.
    SUMMARY_COLUMNS: ClassVar[tuple[str, ...]] = (
        "node", "file", "method", "duration_s", "n_phases", "n_changes", "n_ids", "main_id",
        "main_share", "note", "error")

    def __repr__(self) -> str:
        return short_repr(self, f"{len(self.nodes)} profiles",
                          f"{sum(int(n.get('n_phases', 0)) for n in self.nodes)} phases",
                          f"{len(self.errors)} errors" if self.errors else None)

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": PHASES_KIND, "version": RESULT_VERSION, "nodes": list(self.nodes),
                      "errors": [e.to_dict() for e in self.errors]})

    def present(self, name: str | None = None) -> Presentation:
        """The headline (phases and kinds per profile, the profiles without a phase change,
        the inputs that failed) and one row per profile (:mod:`phasekit.many_table`)."""
        from phasekit.many_table import phases_presentation

        return phases_presentation(self, name)

    def summary(self) -> pd.DataFrame:
        """One row per profile, in input order: its ``method``, ``duration_s``,
        ``n_phases``, ``n_changes`` (phase changes: phases - 1), ``n_ids`` (distinct phases;
        recurring phases share an id), ``main_id`` (the id holding the most time) and its
        ``main_share`` of the phases' time, and the analysis' ``note``; then one row per file
        that failed, its message in ``error``."""
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for node in self.nodes:
            spans = phase_spans(node.get("phases"))
            held: dict[int, float] = {}
            for start, end, pid in spans:
                held[pid] = held.get(pid, 0.0) + max(end - start, 0.0)
            total = sum(held.values())
            main = max(held, key=lambda k: held[k], default=None)
            n_phases = int(node.get("n_phases", len(node.get("phases") or [])))
            rows.append({
                "node": str(node.get("node", "")), "file": str(node.get("file", "")),
                "method": str(node.get("method", "")),
                "duration_s": node.get("duration_s"),
                "n_phases": n_phases, "n_changes": max(n_phases - 1, 0),
                "n_ids": int(node.get("n_ids", len(held))), "main_id": main,
                "main_share": held[main] / total if main is not None and total > 0 else None,
                "note": str(node.get("explanation") or ""), "error": ""})
        for error in self.errors:
            rows.append({"node": "", "file": error.file, "method": "", "duration_s": None,
                         "n_phases": None, "n_changes": None, "n_ids": None, "main_id": None,
                         "main_share": None, "note": "", "error": error.message})
        table = pd.DataFrame(rows, columns=list(self.SUMMARY_COLUMNS))
        return table.astype({"duration_s": float, "n_phases": "Int64", "n_changes": "Int64",
                             "n_ids": "Int64", "main_id": "Int64", "main_share": float})

    def plot(self, ax: Axes | None = None) -> Figure:
        """One horizontal timeline per profile (input order), its phases coloured by id
        (recurring phases share a colour; the ids of different profiles are their own
        analyses'); on ``ax`` when given (its figure is returned)."""
        from matplotlib.patches import Patch

        from phasekit.plot.common import color, figure, root_figure

        n = len(self.nodes)
        if ax is None:
            fig = figure(10.5, max(2.2, min(1.2 + 0.32 * n, 9.0)))
            ax = fig.add_subplot()
        ids: set[int] = set()
        for row, node in enumerate(self.nodes):
            for start, end, pid in phase_spans(node.get("phases")):
                ids.add(pid)
                ax.broken_barh([(start, end - start)], (row - 0.4, 0.8),
                               facecolors=color(pid - 1), edgecolor="white", linewidth=0.5)
        names = [str(node.get("node") or node.get("file") or "?") for node in self.nodes]
        if n <= 40:
            ax.set_yticks(range(n), labels=names, fontsize="small")
        else:
            ax.set_yticks([])
            ax.set_ylabel(f"{n} profiles (input order)")
        ax.set_ylim(max(n, 1) - 0.5, -0.5)
        ax.set_xlim(left=0)
        ax.set_xlabel("time since the profile start (s)")
        ax.grid(True, axis="x", alpha=0.3)
        if not n:
            ax.text(0.5, 0.5, "no profile analyzed", ha="center", va="center",
                    transform=ax.transAxes)
        shown = sorted(ids)[:10]
        if shown:
            ax.legend(handles=[Patch(color=color(i - 1), label=f"id {i}") for i in shown],
                      loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small",
                      title="phase" if len(ids) <= 10 else f"phase (10 of {len(ids)})")
        title = (f"Phases of {n} profiles: "
                 f"{sum(len(phase_spans(node.get('phases'))) for node in self.nodes)} phases")
        if self.errors:
            title += f"; {len(self.errors)} file(s) failed"
        ax.set_title(title, loc="left", fontsize="medium")
        return root_figure(ax)

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> MultiPhaseResult:
        return MultiPhaseResult(*_entries(data, PHASES_KIND, "nodes", source))


@dataclass(frozen=True, eq=False)
class MultiStructureResult(Result):
    """The loop structure of several traces (``phasekit structure FILES...``): per trace its
    :class:`~phasekit.structure.StructureResult` as JSON data (``file`` first, without the
    clusters), and the files that failed."""

    traces: tuple[dict[str, Any], ...]
    errors: tuple[NodeError, ...] = ()

    KIND: ClassVar[str] = STRUCTURE_KIND
    #: The columns of :meth:`summary`.
    SUMMARY_COLUMNS: ClassVar[tuple[str, ...]] = (
        "file", "n_ranks", "n_calls", "duration_s", "n_loops", "top_loops", "iterations",
        "main_iterations", "main_iteration_time_s", "note", "error")

    @staticmethod
    def _top(trace: dict[str, Any]) -> list[dict[str, Any]]:
        return [loop for loop in trace.get("loops") or [] if isinstance(loop, dict)]

    @staticmethod
    def _count(tree: Sequence[dict[str, Any]]) -> int:
        return sum(1 + MultiStructureResult._count(loop.get("loops") or []) for loop in tree)

    def summary(self) -> pd.DataFrame:
        """One row per trace, in input order: ``n_ranks``, ``n_calls`` (MPI calls),
        ``duration_s``, ``n_loops`` (at every depth), ``top_loops`` (at the top level) and
        their ``iterations`` in program order (text, as the CLI prints them); the main
        top-level loop's (the one taking the most time) ``main_iterations`` and
        ``main_iteration_time_s``; the analysis' ``note``. Then one row per file that
        failed, its message in ``error``."""
        import pandas as pd

        from phasekit.results import format_count
        from phasekit.structure.table import main_loop

        rows: list[dict[str, Any]] = []
        for trace in self.traces:
            info = trace.get("trace") or {}
            top = self._top(trace)
            main = main_loop(top)
            rows.append({
                "file": str(trace.get("file", "")), "n_ranks": info.get("n_ranks"),
                "n_calls": info.get("n_calls"), "duration_s": info.get("duration_s"),
                "n_loops": self._count(top), "top_loops": len(top),
                "iterations": ", ".join(format_count(float(loop.get("iterations", 0)))
                                        for loop in top),
                "main_iterations": None if main is None else main.get("iterations"),
                "main_iteration_time_s": None if main is None else main.get("iteration_time_s"),
                "note": str(trace.get("explanation") or ""), "error": ""})
        for error in self.errors:
            rows.append({"file": error.file, "n_ranks": None, "n_calls": None,
                         "duration_s": None, "n_loops": None, "top_loops": None,
                         "iterations": "", "main_iterations": None,
                         "main_iteration_time_s": None, "note": "", "error": error.message})
        table = pd.DataFrame(rows, columns=list(self.SUMMARY_COLUMNS))
        return table.astype({"n_ranks": "Int64", "n_calls": "Int64", "duration_s": float,
                             "n_loops": "Int64", "top_loops": "Int64",
                             "main_iterations": float, "main_iteration_time_s": float})

    def plot(self, ax: Axes | None = None) -> Figure:
        """The iterations of each trace's top-level loops (one group of bars per trace, the
        loops in program order, each labelled with its count); on ``ax`` when given (its
        figure is returned)."""
        import numpy as np

        from phasekit.plot.common import color, figure, root_figure
        from phasekit.results import format_count

        n = len(self.traces)
        tops = [self._top(trace) for trace in self.traces]
        if ax is None:
            bars = sum(max(len(top), 1) for top in tops)
            fig = figure(10.5, max(2.2, min(1.2 + 0.3 * bars, 9.0)))
            ax = fig.add_subplot()
        most = max((len(top) for top in tops), default=0)
        height = 0.8 / max(most, 1)
        for row, top in enumerate(tops):
            for k, loop in enumerate(top):
                try:
                    count = float(loop.get("iterations", np.nan))
                except (TypeError, ValueError):
                    count = np.nan
                if not np.isfinite(count):
                    continue
                y = row - 0.4 + height * (k + 0.5)
                ax.barh([y], [count], height=height * 0.9, color=color(k))
                ax.annotate(f"loop {loop.get('id', k)}: {format_count(count)}", (count, y),
                            xytext=(3, 0), textcoords="offset points", va="center",
                            fontsize="x-small")
        names = [file_stem(str(trace.get("file", "?"))) for trace in self.traces]
        if n <= 40:
            ax.set_yticks(range(n), labels=names, fontsize="small")
        else:
            ax.set_yticks([])
            ax.set_ylabel(f"{n} traces (input order)")
        ax.set_ylim(max(n, 1) - 0.5, -0.5)
        counts = [float(loop["iterations"]) for top in tops for loop in top
                  if isinstance(loop.get("iterations"), int | float)]
        ax.set_xlim(0, 1.3 * max(counts) if counts and max(counts) > 0 else 1.0)
        ax.set_xlabel("iterations of the top-level loops (program order)")
        ax.grid(True, axis="x", alpha=0.3)
        if not n:
            ax.text(0.5, 0.5, "no trace analyzed", ha="center", va="center",
                    transform=ax.transAxes)
        title = f"Top-level loops of {n} traces"
        if self.errors:
            title += f"; {len(self.errors)} file(s) failed"
        ax.set_title(title, loc="left", fontsize="medium")
        return root_figure(ax)

    def __repr__(self) -> str:
        return short_repr(self, f"{len(self.traces)} traces",
                          f"{len(self.errors)} errors" if self.errors else None)

    def present(self, name: str | None = None) -> Presentation:
        """The headline (the traces with loops, the iterations of each one's longest
        top-level loop, the inputs that failed) and one row per trace
        (:mod:`phasekit.many_table`)."""
        from phasekit.many_table import structures_presentation

        return structures_presentation(self, name)

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": STRUCTURE_KIND, "version": STRUCTURE_VERSION,
                      "traces": list(self.traces), "errors": [e.to_dict() for e in self.errors]})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> MultiStructureResult:
        return MultiStructureResult(*_entries(data, STRUCTURE_KIND, "traces", source,
                                              STRUCTURE_VERSION))


def _entries(data: dict[str, Any], kind: str, key: str, source: str | None,
             version: int = RESULT_VERSION
             ) -> tuple[tuple[dict[str, Any], ...], tuple[NodeError, ...]]:
    from phasekit.errors import InputError

    check_version(data, kind, version, source)
    try:
        return (tuple(dict(e) for e in data[key]),
                tuple(NodeError.from_dict(e) for e in data.get("errors", [])))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"malformed {kind} result: {exc}", path=source) from None


def phases_file(path: str, *, options: dict[str, Any], period: float | None = None
                ) -> dict[str, Any]:
    """The task run for each profile of several: read it (``period``: of CSVs without a time
    column), detect its phases, keep the result as JSON data (without the per-vector
    series)."""
    from phasekit.io.naming import name_file
    from phasekit.phases import phases

    data = read_named_profile(path, period)
    try:
        return phases(data, **options).to_dict()
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


def phases_runs(paths: PathArg | Sequence[PathArg], *, workers: int | None,
                client: Client | None, scheduler: str | None, progress: Progress | None,
                options: dict[str, Any], period: float | None = None
                ) -> tuple[MultiPhaseResult, FileRuns[dict[str, Any]]]:
    """:func:`phases_many` and the runs it made of the files (as :func:`periodicity_runs`)."""
    from phasekit.io import PROFILE_SUFFIXES
    from phasekit.phases import PhaseOptions

    selection = {"metrics", "sensors"}  # what phases() takes beside its options
    tuning = {k: v for k, v in options.items() if k not in selection | {"options"}}
    checked = PhaseOptions.of(options.get("options"), tuning, verb="phases_many")
    options = {"options": checked,
               **{k: [v] if isinstance(v, str) else v for k, v in options.items()
                  if k in selection}}
    job = functools.partial(phases_file, options=options, period=period)
    runs = run_files(job, paths, suffixes=PROFILE_SUFFIXES, workers=workers, client=client,
                     scheduler=scheduler, progress=progress)
    names = node_names([f for f, _ in runs.done],
                       [str(d.get("node") or "") for _, d in runs.done])
    nodes = tuple({**d, "node": name, "file": f}
                  for (f, d), name in zip(runs.done, names, strict=True))
    return MultiPhaseResult(nodes=nodes, errors=tuple(runs.errors)), runs


def phases_many(paths: PathArg | Sequence[PathArg], *, workers: int | None = None,
                client: Client | None = None, scheduler: str | None = None,
                progress: Progress | None = None, period: float | None = None,
                **options: Any) -> MultiPhaseResult:
    """The phases of several profiles (``phasekit phases FILES...``; Tsafack Chetsa et al.), each as
    :func:`phasekit.phases.phases` with ``options``.

    Parameters
    ----------
    paths, workers, client, scheduler, progress, period
        As :func:`periodicity_many`.
    **options
        The keywords of :func:`phasekit.phases.phases` (``method``, ``threshold``,
        ``smooth``, ``metrics``, ...).

    Returns
    -------
    MultiPhaseResult
        The phases of each profile; the files that failed are its ``errors``.
    """
    return phases_runs(paths, workers=workers, client=client, scheduler=scheduler,
                        progress=progress, options=options, period=period)[0]


def structure_file(path: str, *, options: dict[str, Any]) -> dict[str, Any]:
    """The task run for each trace of several: read it, infer its structure, keep the result
    as JSON data (not the trace)."""
    from phasekit.io import read_trace
    from phasekit.io.naming import name_file
    from phasekit.structure import structure

    check_trace(path)
    try:
        return structure(read_trace(path), **options).to_dict(clusters=False)
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


def structure_runs(paths: PathArg | Sequence[PathArg], *, workers: int | None,
                   client: Client | None, scheduler: str | None, progress: Progress | None,
                   options: dict[str, Any]
                   ) -> tuple[MultiStructureResult, FileRuns[dict[str, Any]]]:
    """:func:`structure_many` and the runs it made of the files (as :func:`periodicity_runs`)."""
    from phasekit.io import TRACE_SUFFIXES

    job = functools.partial(structure_file, options=options)
    runs = run_files(job, paths, suffixes=TRACE_SUFFIXES, workers=workers, client=client,
                     scheduler=scheduler, progress=progress)
    traces = tuple({"file": f, **d} for f, d in runs.done)
    return MultiStructureResult(traces=traces, errors=tuple(runs.errors)), runs


def structure_many(paths: PathArg | Sequence[PathArg], *, workers: int | None = None,
                   client: Client | None = None, scheduler: str | None = None,
                   progress: Progress | None = None, **options: Any) -> MultiStructureResult:
    """The loop structure of several MPI traces (``phasekit structure FILES...``; Martínez Vera),
    each as :func:`phasekit.structure.structure` with ``options``.

    Parameters
    ----------
    paths
        Trace files (Paraver, OTF2), folders (their traces) or glob patterns.
    workers, client, scheduler, progress
        As :func:`periodicity_many`.
    **options
        The keywords of :func:`phasekit.structure.structure` (``rank``, ``eps``,
        ``min_pts``, ``min_explained``).

    Returns
    -------
    MultiStructureResult
        The loops of each trace; the files that failed are its ``errors``.
    """
    return structure_runs(paths, workers=workers, client=client, scheduler=scheduler,
                           progress=progress, options=options)[0]
