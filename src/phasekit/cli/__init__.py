"""The ``phasekit`` command line: a typer app with one module per verb.

``main`` owns error handling: a :class:`~phasekit.errors.PhasekitError`
becomes one line ``phasekit: error: ...`` on stderr and its exit code (2 usage, 3 input,
4 unsupported); any other exception one line ``phasekit: internal error: ...`` and exit code 1;
``--debug`` adds the traceback. Command-line syntax errors keep click's exit code 2.
"""

from __future__ import annotations

import gc
import importlib
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
from phasekit.cli.common import STATE
from phasekit.errors import PhasekitError, PhasekitWarning, UsageError

__all__ = ["app", "entry_point", "main"]


def _base(name: str) -> type[Exception]:
    """click's exception class ``name``; recent typer versions vendor click, older use it."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


_ClickException = _base("ClickException")
_ClickUsageError = _base("UsageError")

# --- the verbs, built when named ---------------------------------------------------------------
#: verb -> (module of phasekit.cli, its function or typer sub-app, options of ``app.command``),
#: in the order of ``phasekit --help`` (commands, then groups). A verb's module is imported, and its click command
#: built, only when the verb is run or the help lists it: building every verb's command took
#: 0.03-0.04 s of each command.
_VERBS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "analyze": ("analyze", "analyze", {}),
    "synth": ("synth", "synth", {}),
    "info": ("info", "info", {}),
    "demo": ("demo", "demo", {}),
    "record": ("record", "record", {"context_settings": {"allow_interspersed_args": False}}),
    "sources": ("sources", "sources", {}),
    "phases": ("phases", "phases", {}),
    "watch": ("watch", "watch", {}),
    "structure": ("structure", "structure", {}),
    "fingerprint": ("fingerprint", "fingerprint", {}),
    "schedule": ("schedule", "schedule", {}),
    "report": ("report", "report", {}),
    "campaign": ("campaign", "campaign_app", {}),
    "energy": ("energy", "energy_app", {}),
    "powermodel": ("powermodel", "powermodel_app", {}),
    "signature": ("signature", "signature_app", {}),
}


def _energy_verbs(energy_app: typer.Typer) -> None:
    """The energy subcommands that live in their own modules."""
    from phasekit.cli import energy_phases, energy_plot

    if any(info.name == "plot" for info in energy_app.registered_commands):
        return
    energy_app.command("phasediv", epilog=energy_phases.EPILOG)(energy_phases.phases)
    # the energy work's phase division was "energy phases" (a hidden alias: "phases" alone
    # names the execution phases of 'phasekit phases')
    energy_app.command("phases", epilog=energy_phases.EPILOG, hidden=True)(energy_phases.phases)
    energy_app.command("plot", epilog=energy_plot.EPILOG)(energy_plot.plot)


def _build_verb(name: str) -> Any:
    """The click command of verb ``name``, from its module."""
    module_name, attribute, options = _VERBS[name]
    module = importlib.import_module(f"phasekit.cli.{module_name}")
    target = getattr(module, attribute)
    if isinstance(target, typer.Typer):
        if name == "energy":
            _energy_verbs(target)
        command = typer.main.get_command(target)
    else:
        single = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                             rich_markup_mode=None)
        single.command(name, epilog=module.EPILOG, **options)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command


class _Verbs(typer.core.TyperGroup):
    """The root group: knows its verbs' names, builds a verb's command on first use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(_VERBS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in _VERBS:
            command = _build_verb(cmd_name)
            _global_options_after_the_verb(
                command, [p for p in self.params if p.name in ("debug", "verbose")])
            self.commands[cmd_name] = command
        return self.commands.get(cmd_name)


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
    cls=_Verbs,
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
        help="More log messages (-v info, -vv debug; also accepted after the verb).")] = 0,
) -> None:
    """Characterize how an HPC application behaves over time, from node-level profiles.

    Record profiles (perf_event counters, /proc, RAPL, external sensors) or import them (CSV,
    Parquet, perf stat, LIKWID); find their periodicities and representative patterns
    (Phase-TA); phase changes and recurring phases, offline and live (Tsafack Chetsa et al.);
    the loop structure of MPI applications from Paraver and OTF2 traces (Martínez Vera);
    synthetic profiles with ground truth; figures.
    """
    STATE.debug = debug
    STATE.verbose = verbose
    _configure_logging(verbose)




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
_QUIET = logging.NullHandler()


def _configure_logging(verbose: int) -> None:
    root = logging.getLogger("phasekit")
    if _HANDLER not in root.handlers:
        root.addHandler(_HANDLER)
    root.setLevel(logging.WARNING if verbose <= 0 else logging.INFO if verbose == 1
                  else logging.DEBUG)
    # matplotlib logs its font fallbacks ("findfont: ... not found") as warnings; with no
    # handler of its own they reach stderr through logging's last resort: say them at -vv
    drawing = logging.getLogger("matplotlib")
    for handler in (_HANDLER, _QUIET):
        drawing.removeHandler(handler)
    drawing.addHandler(_HANDLER if verbose >= 2 else _QUIET)


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


def _set_verbose(ctx: Any, param: Any, value: int) -> int:
    if value:
        STATE.verbose += value
        _configure_logging(STATE.verbose)
    return value


def _global_options_after_the_verb(command: Any, options: list[Any]) -> None:
    """``phasekit VERB ... --debug -v`` as ``phasekit --debug -v VERB ...``: hidden copies of
    the global options ``--debug`` and ``--verbose``/``-v`` on ``command`` and each of its
    subcommands (parsed by click, so never taken from the arguments after ``--`` of
    ``record`` or ``campaign run``); a ``-v`` on either side counts."""
    import copy

    subcommands = getattr(command, "commands", None)
    if subcommands is not None:
        for sub in subcommands.values():
            _global_options_after_the_verb(sub, options)
        return
    taken = {name for p in command.params for name in (*p.opts, *p.secondary_opts)}
    for option in options:
        if any(p.name == option.name for p in command.params) or taken & set(option.opts):
            continue
        late = copy.copy(option)
        late.hidden, late.expose_value = True, False
        late.callback = _set_debug if option.name == "debug" else _set_verbose
        command.params.append(late)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the app on ``argv`` (default ``sys.argv[1:]``); exit with the contract's codes."""
    STATE.debug = False
    STATE.verbose = 0
    command = typer.main.get_command(app)
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
            text = exc.command_line() if isinstance(exc, UsageError) else str(exc)
            sys.stderr.write(f"phasekit: error: {_one_line(text)}\n")
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


def _artist_setters_undocumented(load: Any, module: Any) -> None:
    """matplotlib writes, for every Artist class as it is defined, a ``set()`` signature and
    a docstring listing every property (``kwdoc``), and pastes property lists into other
    docstrings: 0.07-0.09 s of every command that draws a figure. A command shows no
    docstring, so here they are left out; ``set(**properties)`` works as before (it takes
    keyword arguments), only ``help()`` on it would be poorer."""
    load(module)

    def mark_generated(cls: Any) -> None:  # what subclasses check to get their own set()
        cls.set._autogenerated_signature = True

    module.Artist._update_set_signature_and_docstring = classmethod(mark_generated)
    module.kwdoc = lambda artist: ""


#: numpy's submodules that no command uses but that scipy imports at its own import (its
#: array-API layer reads every attribute of numpy, which imports numpy's lazy submodules:
#: numpy.f2py alone is 0.05 s). In the ``phasekit`` process they load on first use instead.
_LAZY_NUMPY = ("numpy.f2py", "numpy.testing", "numpy.ctypeslib", "numpy.typing",
               "numpy.polynomial", "numpy.matlib")


class _ImportShortcuts(importlib.abc.MetaPathFinder):
    """Import-time costs that a ``phasekit`` command does not need, cut when the module is
    first imported (the library, imported from a program, leaves its dependencies
    alone): two of numba's, matplotlib's generated docstrings, and numpy's unused submodules
    loaded lazily."""

    def __init__(self) -> None:
        self.pending: dict[str, Any] = {"numba.core.entrypoints": _extensions_loaded,
                                        "numba.np.arraymath": _blas_checked_later,
                                        "matplotlib.artist": _artist_setters_undocumented,
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
