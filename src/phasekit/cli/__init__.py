"""The ``phasekit`` command line: a typer app with one module per verb.

``main`` owns error handling (DESIGN.md, Conventions): a :class:`~phasekit.errors.PhasekitError`
becomes one line ``phasekit: error: ...`` on stderr and its exit code (2 usage, 3 input,
4 unsupported); any other exception one line ``phasekit: internal error: ...`` and exit code 1;
``--debug`` adds the traceback. Command-line syntax errors keep click's exit code 2.
"""

from __future__ import annotations

import gc
import importlib.abc
import importlib.util
import logging
import sys
import traceback
import warnings
from collections.abc import Sequence
from typing import Annotated, Any, TextIO

import typer

import phasekit
from phasekit.cli import analyze as _analyze
from phasekit.cli import campaign as _campaign
from phasekit.cli import demo as _demo
from phasekit.cli import energy_phases as _energy_phases
from phasekit.cli import energy_plot as _energy_plot
from phasekit.cli import fingerprint as _fingerprint
from phasekit.cli import info as _info
from phasekit.cli import phases as _phases
from phasekit.cli import powermodel as _powermodel
from phasekit.cli import record as _record
from phasekit.cli import report as _report
from phasekit.cli import schedule as _schedule
from phasekit.cli import signature as _signature
from phasekit.cli import sources as _sources
from phasekit.cli import structure as _structure
from phasekit.cli import synth as _synth
from phasekit.cli import watch as _watch
from phasekit.cli.common import STATE
from phasekit.cli.energy import energy_app
from phasekit.errors import PhasekitError, PhasekitWarning

__all__ = ["app", "entry_point", "main"]


def _base(name: str) -> type[Exception]:
    """click's exception class ``name``; recent typer versions vendor click, older use it."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


_ClickException = _base("ClickException")
_ClickUsageError = _base("UsageError")

_EPILOG = """\
Example:

\b
    phasekit demo
    phasekit synth nemo --minutes 5 --seed 1 -o nemo.parquet
    phasekit analyze nemo.parquet --plot nemo.png
    phasekit structure lulesh.prv
"""

app = typer.Typer(
    name="phasekit",
    epilog=_EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"phasekit {phasekit.__version__}\n")
        raise typer.Exit()


@app.callback()
def _global(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
    debug: Annotated[bool, typer.Option(
        "--debug", help="Show the traceback of an error (also accepted after the verb).")
    ] = False,
    verbose: Annotated[int, typer.Option(
        "--verbose", "-v", count=True, show_default=False,
        help="More log messages (-v info, -vv debug).")] = 0,
) -> None:
    """Characterize how an HPC application behaves over time, from node-level profiles.

    Record profiles (perf_event counters, /proc, RAPL, external sensors) or import them (CSV,
    Parquet, perf stat, LIKWID); find their periodicities and representative patterns
    (Phase-TA, seed 000); phase changes and recurring phases, offline and live (seed 001);
    the loop structure of MPI applications from Paraver and OTF2 traces (seed 003);
    synthetic profiles with ground truth; figures.
    """
    STATE.debug = debug
    STATE.verbose = verbose
    _configure_logging(verbose)


app.command("analyze", epilog=_analyze.EPILOG)(_analyze.analyze)
app.command("synth", epilog=_synth.EPILOG)(_synth.synth)
app.command("info", epilog=_info.EPILOG)(_info.info)
app.command("demo", epilog=_demo.EPILOG)(_demo.demo)
app.command("record", epilog=_record.EPILOG,
            context_settings={"allow_interspersed_args": False})(_record.record)
app.command("sources", epilog=_sources.EPILOG)(_sources.sources)
app.command("phases", epilog=_phases.EPILOG)(_phases.phases)
app.command("watch", epilog=_watch.EPILOG)(_watch.watch)
app.command("structure", epilog=_structure.EPILOG)(_structure.structure)
app.add_typer(_campaign.campaign_app, name="campaign")
energy_app.command("phasediv", epilog=_energy_phases.EPILOG)(_energy_phases.phases)
# the energy work's phase division was "energy phases" (a hidden alias: "phases" alone names
# the execution phases of 'phasekit phases')
energy_app.command("phases", epilog=_energy_phases.EPILOG, hidden=True)(_energy_phases.phases)
energy_app.command("plot", epilog=_energy_plot.EPILOG)(_energy_plot.plot)
app.add_typer(energy_app, name="energy")
app.command("fingerprint", epilog=_fingerprint.EPILOG)(_fingerprint.fingerprint)
app.add_typer(_powermodel.powermodel_app, name="powermodel")
app.add_typer(_signature.signature_app, name="signature")
app.command("schedule", epilog=_schedule.EPILOG)(_schedule.schedule)
app.command("report", epilog=_report.EPILOG)(_report.report)


# --- logging and warnings --------------------------------------------------------------------
class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of the record."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


class _LineFormatter(logging.Formatter):
    """``phasekit: warning: ...`` on one line, as a PhasekitWarning prints; info and debug
    messages (-v, -vv) also name their module."""

    def format(self, record: logging.LogRecord) -> str:
        text = _one_line(record.getMessage())
        level = record.levelname.lower()
        if record.levelno >= logging.WARNING:
            return f"phasekit: {level}: {text}"
        return f"phasekit: {level}: {record.name}: {text}"


_HANDLER = _StderrHandler()
_HANDLER.setFormatter(_LineFormatter())


def _configure_logging(verbose: int) -> None:
    root = logging.getLogger("phasekit")
    if _HANDLER not in root.handlers:
        root.addHandler(_HANDLER)
    root.setLevel(logging.WARNING if verbose <= 0 else logging.INFO if verbose == 1
                  else logging.DEBUG)


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    """PhasekitWarnings as one line on stderr; other warnings only in the debug log."""
    text = _one_line(str(message))
    if issubclass(category, PhasekitWarning):
        sys.stderr.write(f"phasekit: warning: {text}\n")
    else:
        logging.getLogger("phasekit.cli").debug("%s: %s (%s:%d)", category.__name__, text,
                                                filename, lineno)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- entry point -----------------------------------------------------------------------------
def _set_debug(ctx: Any, param: Any, value: bool) -> bool:
    if value:
        STATE.debug = True
    return value


def _debug_after_the_verb(command: Any) -> None:
    """``phasekit VERB ... --debug`` as ``phasekit --debug VERB ...``: a hidden copy of the
    global ``--debug`` on every command (parsed by click, so never taken from the arguments
    after ``--`` of ``record`` or ``campaign run``)."""
    import copy

    debug = next(p for p in command.params if p.name == "debug")

    def add(cmd: Any) -> None:
        subcommands = getattr(cmd, "commands", None)
        if subcommands is not None:
            for sub in subcommands.values():
                add(sub)
        elif not any(p.name == "debug" for p in cmd.params):
            late = copy.copy(debug)
            late.hidden, late.expose_value, late.callback = True, False, _set_debug
            cmd.params.append(late)

    add(command)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the app on ``argv`` (default ``sys.argv[1:]``); exit with the contract's codes."""
    STATE.debug = False
    STATE.verbose = 0
    command = typer.main.get_command(app)
    _debug_after_the_verb(command)
    code = 0
    with warnings.catch_warnings():
        warnings.simplefilter("always", PhasekitWarning)
        warnings.showwarning = _show_warning
        try:
            returned: Any = command.main(args=list(argv) if argv is not None else None,
                                         prog_name="phasekit", standalone_mode=False)
            code = returned if isinstance(returned, int) else 0
            if code == 130:
                sys.stderr.write("phasekit: interrupted\n")
        except _ClickException as exc:
            message = exc.format_message()  # type: ignore[attr-defined]
            code = int(exc.exit_code)  # type: ignore[attr-defined]
            if type(exc).__name__ == "NoArgsIsHelpError":  # a bare "phasekit": the help
                sys.stderr.write(message.rstrip("\n") + "\n")
            else:
                hint = ""
                ctx = getattr(exc, "ctx", None)
                if isinstance(exc, _ClickUsageError) and ctx is not None:
                    hint = f" (see '{ctx.command_path} --help')"
                sys.stderr.write(f"phasekit: error: {_one_line(message)}{hint}\n")
        except typer.Abort:
            sys.stderr.write("phasekit: aborted\n")
            code = 1
        except PhasekitError as exc:
            if STATE.debug:
                traceback.print_exc()
            sys.stderr.write(f"phasekit: error: {_one_line(str(exc))}\n")
            code = exc.exit_code
        except KeyboardInterrupt:
            sys.stderr.write("phasekit: interrupted\n")
            code = 130
        except Exception as exc:
            if STATE.debug:
                traceback.print_exc()
                hint = ""
            else:
                hint = " (run with --debug for the traceback)"
            sys.stderr.write(f"phasekit: internal error: {type(exc).__name__}: "
                             f"{_one_line(str(exc))}{hint}\n")
            code = 1
        finally:
            sys.stdout.flush()
    if code:
        sys.exit(code)


def _extensions_loaded(load: Any, module: Any) -> None:
    """numba loads every installed numba extension (the ``numba_extensions`` entry points)
    at the first kernel a process runs: rocket-fft's import alone costs 0.17 s (it imports
    scipy.fft) in commands that use no FFT. Here numba is told its extensions are loaded as
    soon as it is imported; none of phasekit's kernels uses one."""
    load(module)
    module._already_initialized = True


def _blas_checked_later(load: Any, module: Any) -> None:
    """``numba.np.arraymath`` imports ``scipy.linalg`` at its own import to check that a
    BLAS exists (``_HAVE_BLAS``): 0.10-0.14 s of every command that runs a kernel, none of
    which calls BLAS. scipy is a dependency, so the check is taken as passed; numba still
    imports ``scipy.linalg.cython_blas`` when it compiles or runs a kernel that needs it."""
    import numba.np.linalg as linalg

    ensure_blas = linalg.ensure_blas
    linalg.ensure_blas = lambda: None
    try:
        load(module)
    finally:
        linalg.ensure_blas = ensure_blas
        module.ensure_blas = ensure_blas


#: numpy's submodules that no command uses but that scipy imports at its own import (its
#: array-API layer reads every attribute of numpy, which imports numpy's lazy submodules:
#: numpy.f2py alone is 0.05 s). In the ``phasekit`` process they load on first use instead.
_LAZY_NUMPY = ("numpy.f2py", "numpy.testing", "numpy.ctypeslib", "numpy.typing",
               "numpy.polynomial", "numpy.matlib")


class _ImportShortcuts(importlib.abc.MetaPathFinder):
    """Import-time costs that a ``phasekit`` command does not need, cut when the module is
    first imported (issue 20; the library, imported from a program, leaves its dependencies
    alone): two of numba's, and numpy's unused submodules loaded lazily."""

    def __init__(self) -> None:
        self.pending: dict[str, Any] = {"numba.core.entrypoints": _extensions_loaded,
                                        "numba.np.arraymath": _blas_checked_later,
                                        **dict.fromkeys(_LAZY_NUMPY)}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.pending:
            return None
        shortcut = self.pending.pop(fullname)
        if not self.pending:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        if shortcut is None:
            spec.loader = importlib.util.LazyLoader(spec.loader)
            return spec
        load = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            shortcut(load, module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _shorten_imports() -> None:
    if "numba" in sys.modules or "scipy" in sys.modules:
        return  # phasekit imported from a program: leave its dependencies be
    sys.meta_path.insert(0, _ImportShortcuts())


def entry_point() -> None:
    """The ``phasekit`` command and ``python -m phasekit.cli``: :func:`main`, then the
    garbage collector's objects frozen before the interpreter exits. An analysis leaves about
    170 000 objects tracked by it (numba's and pandas' among them) and the interpreter's
    teardown collects them several times: 0.4-0.5 s of every command's wall time on a
    2.5 GHz core. Frozen, they are skipped: objects are still freed by reference counting,
    atexit handlers run and the standard streams are flushed; objects only in reference
    cycles are not finalized (every file phasekit writes is closed before)."""
    _shorten_imports()
    try:
        main()
    finally:
        gc.freeze()
