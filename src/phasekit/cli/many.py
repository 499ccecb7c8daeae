"""Several inputs for one verb (``analyze``, ``phases``, ``structure``): the options, which
arguments mean several, reporting the files that failed and writing the results with the exit
code. The work itself (a task per file, the node names, the results) is the library's
:mod:`phasekit.many`, which is what workers import."""

from __future__ import annotations

import glob
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from phasekit.cli.common import STATE, json_file, print_json, write_all
from phasekit.cli.render import show
from phasekit.errors import UsageError
from phasekit.many import FileRuns, file_stem, node_names
from phasekit.results import NodeError, Result

__all__ = ["PARTIAL_EXIT", "SchedulerOption", "WorkersOption", "exit_code", "file_stem",
           "finish_many", "is_many", "node_names", "refuse_plot", "report_failures"]

#: Exit code when some inputs (not all) failed: the others were analyzed and reported, each
#: failure is one line on stderr (our choice: distinct from 2 usage, 3 input, 4 unsupported,
#: which a run where every input failed exits with, the first failure's).
PARTIAL_EXIT = 5

WorkersOption = Annotated[int | None, typer.Option(
    "--workers", "-j", metavar="N", show_default=False,
    help="Several inputs: N at a time in local processes (default: one per core, or one "
         "after the other in this process when they total under 16 MB; at most one per "
         "core; 1: one after the other in this process).")]
SchedulerOption = Annotated[str | None, typer.Option(
    "--scheduler", metavar="tcp://HOST:PORT", show_default=False,
    help="Several inputs: run on this Dask cluster (dask.distributed) instead of local "
         "processes; its workers must be able to read the files.")]


def is_many(paths: Sequence[Path]) -> bool:
    """Whether the arguments name several inputs: more than one, a folder, or a glob pattern
    that names no existing path (one file keeps the one-input output)."""
    if len(paths) != 1:
        return True
    path = paths[0]
    return path.is_dir() or (glob.has_magic(str(path)) and not path.exists())


def refuse_plot(plot: Path | None, noun: str) -> None:
    """UsageError when --plot is given with several inputs (a figure draws one)."""
    if plot is not None:
        raise UsageError(f"--plot draws one {noun}; give one {noun}, or leave --plot out "
                         "with several")


def report_failures(runs: FileRuns[Any]) -> None:
    """Write each failed input as one line on stderr (its traceback first under --debug)."""
    if STATE.debug:
        for error in runs.errors:
            if error.file in runs.tracebacks:
                sys.stderr.write(runs.tracebacks[error.file])
    for error in runs.errors:
        said = runs.command_lines.get(error.file, error.message)
        sys.stderr.write(f"phasekit: error: {' '.join(said.split())}\n")


def exit_code(n_done: int, errors: Sequence[NodeError]) -> int:
    """0 when every input worked, :data:`PARTIAL_EXIT` when some did, else the exit code of
    the first failure."""
    if not errors:
        return 0
    return PARTIAL_EXIT if n_done else errors[0].exit_code


def finish_many(result: Result, runs: FileRuns[Any], *, output: Path | None,
                json_output: bool, detail: bool = False) -> int:
    """The end of a verb on several inputs: each failed input as one line on stderr, then,
    when some worked, ``result`` written (``-o``) and printed as JSON or as its
    presentation (:func:`~phasekit.cli.render.show`) with a line on the failed inputs;
    returns the exit code (:func:`exit_code`)."""
    report_failures(runs)
    n_done, errors = len(runs.done), runs.errors
    if not n_done:
        return exit_code(0, errors)
    written = write_all(json_file(output, result.saved_dict))
    if json_output:
        print_json(result.to_dict())
        return exit_code(n_done, errors)
    shown = result.present()
    if errors:  # the presentation counts them; here: where they are listed
        shown = replace(shown, notes=(*shown.notes, (
            f"analyzed {n_done} of {n_done + len(errors)} inputs; {len(errors)} failed "
            "(listed on stderr)")))
    show(shown, written, detail=detail)
    return exit_code(n_done, errors)
