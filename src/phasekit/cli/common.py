"""Helpers shared by the verbs: consoles, argument parsing, profile loading, tables, output."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from phasekit.arguments import name_file
from phasekit.errors import UsageError
from phasekit.io.api import (
    STDIN,
    binning_note,
    is_trace,
    read_csv_table,
    read_profile,
    read_trace_profile,
    write_files,
)
from phasekit.many import check_metrics
from phasekit.present import Presentation, number, percent

LOG = logging.getLogger("phasekit.progress")

if TYPE_CHECKING:
    from phasekit import Profile

__all__ = [
    "FIGURE_SUFFIXES",
    "STATE",
    "STDIN",
    "BinOption",
    "Output",
    "PeriodOption",
    "RankOption",
    "check_metrics",
    "check_output",
    "check_outputs",
    "check_trace_options",
    "err_console",
    "figure_file",
    "json_file",
    "load_profile",
    "name_file",
    "number",
    "out_console",
    "parse_duration",
    "parse_window",
    "percent",
    "print_json",
    "print_written",
    "progress_reporter",
    "read_csv_table",
    "with_binning_note",
    "write_all",
    "write_json",
    "write_outputs",
]

@dataclass
class State:
    """Global options of one invocation (set by the app callback, read by ``main``)."""

    debug: bool = False
    verbose: int = 0


STATE = State()


# --- consoles --------------------------------------------------------------------------------
#: Width of the console when stdout is not a terminal: wide enough that no table is folded
#: or wrapped (a pipe or a file gets whole lines, a number is never split).
PIPE_WIDTH = 10_000


class _OutConsole(Console):
    """A Console that prints a table's title as a line of its own, wrapped by nothing but the
    terminal (rich wraps a title at its table's width, splitting the long titles of narrow
    tables)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        table = objects[0] if len(objects) == 1 else None
        if not (isinstance(table, Table) and isinstance(table.title, str) and table.title):
            super().print(*objects, **kwargs)
            return
        title, table.title = table.title, None
        try:
            super().print(Text(title, style=table.title_style or "table.title"),
                          soft_wrap=True)
            super().print(table, **kwargs)
        finally:
            table.title = title


def out_console() -> Console:
    """A console on the current stdout (created per use, so redirections are honoured);
    :data:`PIPE_WIDTH` wide when stdout is not a terminal."""
    width = None if sys.stdout.isatty() else PIPE_WIDTH
    return _OutConsole(file=sys.stdout, highlight=False, markup=False, width=width)


def err_console() -> Console:
    """A console on the current stderr."""
    return Console(file=sys.stderr, highlight=False, markup=False)


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout, plain (no colours, no wrapping)."""
    sys.stdout.write(json.dumps(data, indent=2) + "\n")
    sys.stdout.flush()


# --- arguments -------------------------------------------------------------------------------
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_WINDOW_RE = re.compile(rf"\s*({_NUMBER})?\s*:\s*({_NUMBER})?\s*")


def parse_window(text: str | None) -> tuple[float | None, float | None] | None:
    """``"60:660"`` -> ``(60.0, 660.0)`` seconds from the profile start; either side may be empty.

    Raises UsageError on anything else (no colon, not a number, negative, start >= end).
    """
    if text is None:
        return None
    match = _WINDOW_RE.fullmatch(text)
    if match is None:
        raise UsageError(f"--window {text!r}: expected START:END in seconds from the profile "
                         "start, either side may be empty (e.g. 60:660, 120:, :300)")
    start, end = (None if g is None else float(g) for g in match.groups())
    for value in (start, end):
        if value is not None and (not math.isfinite(value) or value < 0):
            raise UsageError(f"--window {text!r}: times must be finite and non-negative seconds")
    if start is not None and end is not None and end <= start:
        raise UsageError(f"--window {text!r}: END must be after START")
    return start, end


_DURATION_RE = re.compile(rf"\s*({_NUMBER})\s*(us|µs|ms|s|sec|min|m|h)?\s*")
_DURATION_UNITS = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "min": 60.0,
                   "m": 60.0, "h": 3600.0}


def parse_duration(text: str, option: str) -> float:
    """``"5ms"`` -> 0.005 seconds; a bare number is seconds (us, ms, s, min or m, h).

    Raises UsageError naming ``option`` for anything else, zero or negative.
    """
    match = _DURATION_RE.fullmatch(text)
    if match is None:
        raise UsageError(f"{option} {text!r}: expected a duration such as 5ms, 0.1s, 60s or 2m")
    value = float(match.group(1)) * _DURATION_UNITS[match.group(2) or "s"]
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{option} {text!r}: expected a positive duration")
    return value


def sub_app(name: str, help: str) -> typer.Typer:
    """A ``phasekit NAME ...`` group of subcommands, with the CLI's common settings."""
    return typer.Typer(name=name, help=help, no_args_is_help=True, add_completion=False,
                       rich_markup_mode=None,
                       context_settings={"help_option_names": ["-h", "--help"]})


def parse_list(text: str | None, option: str, kind: type[int] | type[float]
               ) -> tuple[int | float | None, ...]:
    """``"1,2,4"`` as a tuple of ``kind``; (None,) when the option is not given."""
    if not text:
        return (None,)
    try:
        return tuple(kind(v) for v in text.split(","))
    except ValueError:
        what = "integers" if kind is int else "numbers"
        raise UsageError(f"{option} {text!r}: expected {what} separated by commas") from None


#: Figure formats of --plot, told from the file name's suffix (matplotlib's Agg canvas).
FIGURE_SUFFIXES = ("eps", "jpeg", "jpg", "pdf", "png", "ps", "svg", "tif", "tiff", "webp")


def check_output(path: Path | None, what: str, suffixes: Sequence[str] | None = None) -> None:
    """Fail early (before a long analysis) when ``path`` cannot be written: a folder, a
    special file (a device, a FIFO: the atomic rename would replace it), a missing or
    read-only folder, or, with ``suffixes``, a name whose format cannot be told."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"{what} {path}: is a directory; expected a file name")
    if path.exists() and not path.is_file():
        raise UsageError(f"{what} {path}: is not a regular file (outputs are written to a "
                         "temporary file renamed onto the name); --json prints to stdout")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"{what} {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{what} {path}: directory {parent} is not writable")
    if suffixes is not None and path.suffix.lower().lstrip(".") not in suffixes:
        raise UsageError(f"{what} {path}: cannot tell the format from the name; expected a name "
                         "ending in " + ", ".join("." + s for s in sorted(suffixes)))


def check_outputs(output: Path | None = None, plot: Path | None = None,
                  *others: tuple[str, Path | None, Sequence[str] | None]) -> None:
    """Check every output of a verb before its work (:func:`check_output`): ``-o`` (JSON),
    ``--plot`` (a figure format from its suffix, :data:`FIGURE_SUFFIXES`) and ``others`` as
    ``(option, path, suffixes)``; two outputs may not share a path."""
    given = [("--output", output, None), ("--plot", plot, FIGURE_SUFFIXES), *others]
    seen: dict[Path, str] = {}
    for option, path, suffixes in given:
        if path is None:
            continue
        check_output(path, option, suffixes)
        key = Path(os.path.abspath(path))
        if key in seen:
            raise UsageError(f"{seen[key]} and {option}: both write {path}; give two names")
        seen[key] = option


# --- profiles --------------------------------------------------------------------------------
# STDIN ("-"), the PROFILE argument that reads a CSV profile from stdin: phasekit.io.api's.

#: ``--period``: the sampling period of CSV profiles without a time column.
PeriodOption = Annotated[float | None, typer.Option(
    "--period", metavar="SECONDS", show_default=False,
    help="For a CSV profile without a time column: one row every SECONDS from 0 s (perf "
         "stat -I 200 saved without its timestamps: 0.2).")]


def load_profile(path: str | os.PathLike[str], period: float | None = None,
                 bin_s: float | None = None, ranks: Sequence[int] | None = None) -> Profile:
    """The profile in ``path``, every error naming the file; ``-`` reads a CSV profile
    (phasekit's own, with its ``# phasekit:`` line, or any CSV the CSV reader takes) from
    stdin. ``period``: of a CSV without a time column (:func:`phasekit.io.api.read_profile`).
    A trace (Paraver, OTF2) is binned into a profile at ``bin_s`` over ``ranks``
    (:func:`phasekit.io.api.read_trace_profile`); those two are for traces only."""
    if is_trace(path):
        if period is not None:
            raise UsageError("--period: for a CSV profile without a time column; a trace "
                             "has its own times (its bin: --bin)")
        return read_trace_profile(path, bin_s=bin_s, ranks=ranks or None)
    check_trace_options(bin_s, ranks)
    return read_profile(path, period=period)


def with_binning_note(presentation: Presentation, profile: Profile) -> Presentation:
    """``presentation`` with the note saying that ``profile`` was binned from a trace (bin,
    ranks) first among its notes; as it was for any other profile."""
    note = binning_note(profile)
    if note is None:
        return presentation
    return dataclasses.replace(presentation, notes=(note, *presentation.notes))


def check_trace_options(bin_s: float | None, ranks: Sequence[int] | None) -> None:
    """UsageError when ``--bin`` or ``--rank`` is given for something else than one trace."""
    for flag, given in (("--bin", bin_s is not None), ("--rank", bool(ranks))):
        if given:
            raise UsageError(f"{flag}: for a trace (Paraver .prv/.prv.gz, OTF2 .otf2), one "
                             "at a time; a profile has its own samples")


#: ``--bin``: the bin a trace's counters are summed in.
BinOption = Annotated[float | None, typer.Option(
    "--bin", metavar="SECONDS", show_default=False,
    help="For a trace (Paraver .prv/.prv.gz, OTF2 .otf2): sum its counters in bins of SECONDS. "
         "Default from the trace: the period of counters it samples on their own (uncore), "
         "else about one counter read per rank per bin, at least 50 bins; rounded to 1, 2 or "
         "5 x 10^k s.")]
#: ``--rank``: the ranks of a trace whose counters are binned.
RankOption = Annotated[list[int] | None, typer.Option(
    "--rank", metavar="R", show_default=False,
    help="For a trace: bin the counters of rank R only (0-based; repeat for several, summed). "
         "Default every rank; counters sampled on their own (uncore) are node-wide and stay.")]


# --- progress --------------------------------------------------------------------------------
@contextlib.contextmanager
def progress_reporter(enabled: bool, description: str
                      ) -> Iterator[Callable[[str, float], None] | None]:
    """A rich progress bar on stderr fed by ``progress(stage, fraction)`` callbacks.

    Yields None (no bar) unless ``enabled`` and stderr is a terminal. The bar shows at most
    :data:`PROGRESS_CAP` until the block ends (:func:`bar_fraction`): the work is done when
    the caller is, and rich stops the elapsed-time column of a task at 100 %. When stderr is
    not a terminal (a batch job's log) and ``-v`` asked for information, each new stage is
    one log line with the time since the start instead.
    """
    if enabled and not sys.stderr.isatty() and LOG.isEnabledFor(logging.INFO):
        yield _stage_logger(description)
        return
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    from rich.progress import (
        BarColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(),
                  console=err_console(), transient=True) as bar:
        task = bar.add_task(description, total=1.0)

        def report(stage: str, fraction: float) -> None:
            bar.update(task, completed=bar_fraction(fraction),
                       description=f"{description}: {stage}")

        yield report


#: The largest fraction a progress bar shows while its block runs.
PROGRESS_CAP = 0.99


def _stage_logger(description: str) -> Callable[[str, float], None]:
    """``progress(stage, fraction)`` that logs each new stage: ``analyzing x.csv: clustering
    instances (40 %, 12.3 s)``."""
    started = time.perf_counter()
    last = [""]

    def report(stage: str, fraction: float) -> None:
        if stage == last[0]:
            return
        last[0] = stage
        LOG.info("%s: %s (%.0f %%, %.1f s)", description, stage,
                 100 * bar_fraction(fraction), time.perf_counter() - started)

    return report


def bar_fraction(fraction: float) -> float:
    """What the bar shows for a reported ``fraction``: within [0, PROGRESS_CAP] (NaN as 0)."""
    return max(0.0, min(PROGRESS_CAP, fraction)) if math.isfinite(fraction) else 0.0


# --- output ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Output:
    """One file a verb writes: ``what`` it is (``wrote WHAT: PATH``), where, and how
    (``write(path)`` writes it to the path it is given)."""

    what: str
    path: Path
    write: Callable[[Path], object]


def json_file(path: Path | None, data: Callable[[], Any] | dict[str, Any] | list[Any],
              what: str = "result") -> Output | None:
    """The ``-o`` JSON output (None when not asked); ``data`` or a function giving it."""
    if path is None:
        return None
    return Output(what, path, lambda target: _dump_json(
        target, data() if callable(data) else data))


def figure_file(path: Path | None, draw: Callable[[Path], object],
                what: str = "figure") -> Output | None:
    """The ``--plot`` figure (None when not asked), drawn to a path by ``draw``."""
    return None if path is None else Output(what, path, draw)


def write_all(*outputs: Output | None) -> list[tuple[str, Path]]:
    """Write every output, or none: each to a temporary sibling of its path, all renamed
    onto their paths once every one is written. When one fails the temporary files are
    removed and the files of those names are left as they were. Call it after all the work
    succeeded, with the paths checked before it (:func:`check_outputs`); returns what was
    written as ``(what, path)`` pairs for :func:`print_written`."""
    items = [item for item in outputs if item is not None]
    write_files((item.path, item.write) for item in items)
    return [(item.what, item.path) for item in items]


def write_outputs(output: Path | None, plot: Path | None, to_dict: Callable[[], dict[str, Any]],
                  draw: Callable[[Path], object]) -> list[tuple[str, Path]]:
    """:func:`write_all` of the result JSON (``-o``) and the figure (``--plot``) when asked."""
    return write_all(json_file(output, to_dict), figure_file(plot, draw))


def print_written(console: Console, written: Sequence[tuple[str, Path]]) -> None:
    for what, path in written:
        console.print(f"wrote {what}: {path}", soft_wrap=True)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON atomically (:func:`write_all` for a verb's outputs)."""
    write_all(json_file(path, data))


def _dump_json(path: Path, data: Any) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(json.dumps(data, indent=2) + "\n")



def titled_table(title: str) -> Table:
    """A result table of the command line: bold title on the left, a rule under the header."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                 title_style="bold")


