"""Several inputs for one verb (``analyze``, ``phases``, ``structure``): which arguments mean
several, running a task per file through :mod:`phasekit.parallel`, naming the nodes, writing
the results and the exit code."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from phasekit.cli.common import (
    STATE,
    out_console,
    print_json,
    print_written,
    progress_reporter,
    write_json,
)
from phasekit.errors import PhasekitWarning, UsageError
from phasekit.results import NodeError

__all__ = ["PARTIAL_EXIT", "SchedulerOption", "WorkersOption", "exit_code", "file_stem",
           "finish_many", "is_many", "node_names", "refuse_plot", "run_many"]

R = TypeVar("R")

#: Exit code when some inputs (not all) failed: the others were analyzed and reported, each
#: failure is one line on stderr (our choice: distinct from 2 usage, 3 input, 4 unsupported,
#: which a run where every input failed exits with, the first failure's).
PARTIAL_EXIT = 5

WorkersOption = Annotated[int | None, typer.Option(
    "--workers", "-j", metavar="N", show_default=False,
    help="Several inputs: N at a time in local processes (default: one per core; 1: one "
         "after the other in this process).")]
SchedulerOption = Annotated[str | None, typer.Option(
    "--scheduler", metavar="tcp://HOST:PORT", show_default=False,
    help="Several inputs: run on this Dask cluster (dask.distributed) instead of local "
         "processes; its workers must be able to read the files.")]


def is_many(paths: Sequence[Path]) -> bool:
    """Whether the arguments name several inputs: more than one, a folder, or a glob pattern
    that names no existing path (one file keeps the one-input output)."""
    from phasekit.parallel import has_magic

    if len(paths) != 1:
        return True
    path = paths[0]
    return path.is_dir() or (has_magic(str(path)) and not path.exists())


def refuse_plot(plot: Path | None, noun: str) -> None:
    """UsageError when --plot is given with several inputs (a figure draws one)."""
    if plot is not None:
        raise UsageError(f"--plot draws one {noun}; give one {noun}, or leave --plot out "
                         "with several")


def run_many(job: Callable[[str], R], paths: Sequence[Path], *, suffixes: Sequence[str],
             workers: int | None, scheduler: str | None, progress: bool, what: str,
             started: Callable[[], None] | None = None
             ) -> tuple[list[tuple[str, R]], list[NodeError]]:
    """``job(file)`` for every file ``paths`` name (:func:`phasekit.parallel.expand_inputs`),
    on ``workers`` local processes or the Dask cluster at ``scheduler``; returns the
    ``(file, value)`` of those that worked and the errors of the others, each already written
    as one line on stderr (with its traceback under --debug). Their warnings go to stderr
    too, naming the file. On Dask the workers get absolute paths; messages name the files
    as given. ``started``: :func:`phasekit.parallel.map_files`'s."""
    from phasekit.parallel import expand_inputs, map_files

    files, problems = expand_inputs(paths, suffixes)
    errors = [NodeError(file=arg, message=f"{arg}: {reason}", exit_code=3)
              for arg, reason in problems]
    shown = [str(f) for f in files]
    items = [os.path.abspath(f) if scheduler else str(f) for f in files]
    with progress_reporter(progress and bool(files), f"{what} {len(files)} files") as report:
        outcomes = map_files(job, items, workers=workers, scheduler=scheduler, progress=report,
                             started=started)
    done: list[tuple[str, R]] = []
    for name, item, outcome in zip(shown, items, outcomes, strict=True):
        for message in outcome.warnings:
            text = message.replace(item, name)
            warnings.warn(text if name in text else f"{name}: {text}", PhasekitWarning,
                          stacklevel=1)
        if outcome.failure is not None:
            if STATE.debug and outcome.failure.traceback:
                sys.stderr.write(outcome.failure.traceback)
            errors.append(NodeError(file=name, message=outcome.failure.message.replace(item, name),
                                    exit_code=outcome.failure.exit_code))
        else:
            done.append((name, outcome.value))  # type: ignore[arg-type]
    for error in errors:
        sys.stderr.write(f"phasekit: error: {' '.join(error.message.split())}\n")
    return done, errors


def exit_code(n_done: int, errors: Sequence[NodeError]) -> int:
    """0 when every input worked, :data:`PARTIAL_EXIT` when some did, else the exit code of
    the first failure."""
    if not errors:
        return 0
    return PARTIAL_EXIT if n_done else errors[0].exit_code


def file_stem(name: str) -> str:
    """A file name without its input suffix (``node01.csv.gz`` -> ``node01``)."""
    from phasekit.io import PROFILE_SUFFIXES, TRACE_SUFFIXES

    base = Path(name).name
    for suffix in sorted((*PROFILE_SUFFIXES, *TRACE_SUFFIXES), key=len, reverse=True):
        if base.lower().endswith(suffix) and len(base) > len(suffix):
            return base[:-len(suffix)]
    return Path(base).stem or base


def node_names(files: Sequence[str], own: Sequence[str]) -> list[str]:
    """Unique node names: the profiles' ``own`` names when every profile has one and they
    differ, else the file names without suffix when they differ, else the paths."""
    if all(own) and len(set(own)) == len(own):
        return list(own)
    stems = [file_stem(f) for f in files]
    return stems if len(set(stems)) == len(stems) else list(files)


def finish_many(data: dict[str, Any], *, output: Path | None, json_output: bool,
                n_done: int, errors: Sequence[NodeError], show: Callable[[], None]) -> int:
    """Write ``data`` (``-o``), print it as JSON or through ``show`` (the human view) with a
    line on the failed inputs; returns the exit code (:func:`exit_code`)."""
    written: list[tuple[str, Path]] = []
    if output is not None:
        write_json(output, data)
        written.append(("result", output))
    if json_output:
        print_json(data)
        return exit_code(n_done, errors)
    show()
    console = out_console()
    if errors:
        console.print(f"analyzed {n_done} of {n_done + len(errors)} inputs; {len(errors)} "
                      "failed (listed on stderr)", soft_wrap=True)
    print_written(console, written)
    return exit_code(n_done, errors)
