"""Library errors speak to Python callers in their keywords, the command line in its options.

A :class:`~phasekit.errors.UsageError` about one option names its parameter: ``str()`` says
``parameter=value: detail`` and never quotes a command-line flag, and ``command_line()`` (what
the CLI prints) says ``--option value: detail``. Representative calls, one per area, check
both; a static check reads every module of the library but the command line and fails on
a flag (``--word``, or ``-x`` leading a message) in the text of an error it makes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from phasekit.errors import UsageError
from phasekit.profile import Profile

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "src" / "phasekit"

#: A long option (``--window``) anywhere, or a short one leading a message (``-o PATH: ...``).
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*|^-[a-zA-Z] ")

#: Flags that error texts may quote, with the reason: (module under src/phasekit, text).
ALLOWED = {
    ("io/perfstat.py", "perf stat --append"): "perf's own option, saying how the file that "
                                              "cannot be read was written",
}


# --- representative calls --------------------------------------------------------------------
def _profile(seconds: float = 1.0, **columns: np.ndarray) -> Profile:
    n = round(seconds / 0.01)
    data = columns or {"ipc": np.linspace(1.0, 2.0, n)}
    return Profile(values=np.column_stack(list(data.values())), period=0.01,
                   metrics=tuple(data))


def _configs(timed: bool = True) -> pd.DataFrame:
    from phasekit.energy.fit import configurations
    from phasekit.synth.campaigns import seed_campaign

    configs = configurations(seed_campaign(seed=0).campaign)
    if not timed:
        configs = configs.assign(time_s=np.nan)
    return configs


def _window(tmp_path: Path) -> None:
    from phasekit.many import check_window

    check_window(_profile(1.0), (5.0, None), "node01.csv")


def _fit_train(tmp_path: Path) -> None:
    from phasekit.energy.fit import fit_energy

    fit_energy(_configs(), n_train=100_000)


def _front_door_train(tmp_path: Path) -> None:
    from phasekit.energy.api import fit

    fit(_configs(), train=100_000)


def _choose_train(tmp_path: Path) -> None:
    from phasekit.energy.workflow import fit_then_choose

    fit_then_choose(_configs(), train=100_000, uncertainty=False)


def _choose_untimed(tmp_path: Path) -> None:
    from phasekit.energy.workflow import fit_then_choose

    fit_then_choose(_configs(timed=False), max_time_s=30.0, uncertainty=False)


def _choose_design(tmp_path: Path) -> None:
    from phasekit.energy.workflow import fit_then_choose

    fit_then_choose(_configs(), design="sobol")


def _efficiency_frequency(tmp_path: Path) -> None:
    from phasekit.energy.efficiency import efficiency_table
    from phasekit.synth.campaigns import seed_campaign

    efficiency_table(seed_campaign(seed=0).campaign, frequency=9.0)


def _fingerprint_ratio(tmp_path: Path) -> None:
    from phasekit.energy.fingerprint import ratio_series

    ratio_series(_profile(instructions=np.ones(5), mem_loads=np.ones(5)), "instructions")


def _phase_division_method(tmp_path: Path) -> None:
    from phasekit.energy.phasediv import divide_phases
    from phasekit.synth.power import generate_power_profiles

    profiles, _ = generate_power_profiles(cores=(1, 2), freqs_ghz=(1.2, 2.4), work_s=20.0)
    divide_phases(profiles, method="annealing")


def _campaign_repetitions(tmp_path: Path) -> None:
    from phasekit.record.runner import CampaignPlan

    CampaignPlan(command=("true",), repetitions=0)


def _record_output(tmp_path: Path) -> None:
    from phasekit.record import Recorder
    from phasekit.record.sources.procfs import ProcSource

    folder = tmp_path / "profile.csv"
    folder.mkdir()
    Recorder([ProcSource()]).run(folder, duration=1.0)


def _signature_directory(tmp_path: Path) -> None:
    from phasekit.signature.paths import check_signature_directory

    taken = tmp_path / "app.signature"
    taken.write_text("a file, not a signature's folder")
    check_signature_directory(taken)


def _power_model_test_fraction(tmp_path: Path) -> None:
    from phasekit.signature.powermodels.split import split_rows

    split_rows(10, 1.5, 0)


def _synthetic_minutes(tmp_path: Path) -> None:
    from phasekit.synth import generate

    generate("nemo", minutes=-1.0)


def _synthetic_idle(tmp_path: Path) -> None:
    from phasekit.synth.phases import generate_bench

    generate_bench("bench_2", idle_s=0.0)


def _nodes_band(tmp_path: Path) -> None:
    from phasekit.periodicity.nodes import compare_nodes

    compare_nodes([], band=2.0)


#: (name, the call, the parameter its error names, how the command line names it).
CASES: list[tuple[str, Callable[[Path], None], str, str]] = [
    ("many.check_window", _window, "window", "--window"),
    ("energy fit n_train", _fit_train, "n_train", "--train"),
    ("pk.energy.fit train", _front_door_train, "train", "--train"),
    ("energy choose train", _choose_train, "train", "--train"),
    ("energy choose time limit, untimed", _choose_untimed, "max_time_s", "--max-time"),
    ("energy choose design", _choose_design, "design", "--design"),
    ("energy plot frequency", _efficiency_frequency, "frequency", "--frequency"),
    ("energy fingerprint ratio", _fingerprint_ratio, "ratio", "--ratio"),
    ("energy phases method", _phase_division_method, "method", "--method"),
    ("campaign run repetitions", _campaign_repetitions, "repetitions", "--reps"),
    ("record output", _record_output, "output", "-o"),
    ("signature directory", _signature_directory, "directory", "-o"),
    ("powermodel test fraction", _power_model_test_fraction, "test_fraction",
     "--test-fraction"),
    ("synth minutes", _synthetic_minutes, "minutes", "--minutes"),
    ("synth idle", _synthetic_idle, "idle_s", "--idle"),
    ("analyze nodes band", _nodes_band, "band", "--band"),
]


@pytest.mark.parametrize(("call", "parameter", "flag"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_an_option_error_names_the_parameter_and_the_cli_names_the_flag(
        call: Callable[[Path], None], parameter: str, flag: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        call(tmp_path)
    error = caught.value
    assert error.parameter == parameter
    where = re.escape(f"{error.file}: ") if error.file else ""  # one file's error
    assert re.match(rf"{where}{parameter}(=|: )", str(error)), str(error)
    assert "--" not in str(error) and not FLAG.search(str(error))
    assert re.match(rf"{where}{re.escape(flag)}[ :]", error.command_line()), error.command_line()


def test_a_window_past_the_end_of_one_file_fails_that_file_only(tmp_path: Path) -> None:
    """Among the files of a run, a window that starts after the end of one profile is that
    file's error, said in the caller's keyword; the others are analyzed."""
    from phasekit import periodicity_many
    from phasekit.io import write_profile

    rng = np.random.default_rng(0)
    cycle = np.tile(np.r_[np.full(40, 1.0), np.full(40, 3.0)], 40)
    write_profile(Profile(values=(cycle + rng.normal(0, 0.05, cycle.size))[:, None],
                          period=0.01, metrics=("ipc",)), tmp_path / "long.csv")
    write_profile(_profile(1.0), tmp_path / "short.csv")
    result = periodicity_many([tmp_path / "long.csv", tmp_path / "short.csv"], workers=1,
                              window=(5.0, None))
    assert [e.file for e in result.errors] == [str(tmp_path / "short.csv")]
    message = result.errors[0].message
    assert message.endswith("short.csv: the window starts at 5 s, after the end of this 1 s "
                            "profile")
    assert "--" not in message
    assert len(result.nodes) == 1


# --- the static check -------------------------------------------------------------------------
def _library_modules() -> Iterator[Path]:
    for path in sorted(LIBRARY.rglob("*.py")):
        if path.relative_to(LIBRARY).parts[0] != "cli":
            yield path


def _texts(node: ast.AST) -> Iterator[str]:
    """The string literals in ``node``, f-strings' literal parts included."""
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value


def _assigned(scope: ast.AST) -> dict[str, list[ast.AST]]:
    """What each name of ``scope`` is set to: assignments, ``+=`` and parameter defaults."""
    found: dict[str, list[ast.AST]] = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None \
                and isinstance(node.target, ast.Name):
            found.setdefault(node.target.id, []).append(node.value)
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = scope.args
        positional = arguments.posonlyargs + arguments.args
        for arg, default in zip(positional[len(positional) - len(arguments.defaults):],
                                arguments.defaults, strict=True):
            found.setdefault(arg.arg, []).append(default)
        for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
            if default is not None:
                found.setdefault(arg.arg, []).append(default)
    return found


def _is_error(call: ast.Call) -> bool:
    """A call that makes an error: ``UsageError(...)``, or a helper such as
    ``header_error(...)`` that does."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name.endswith(("Error", "Exception", "_error"))


def _error_texts(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, text) of every literal that an error made in ``tree`` puts in its message: the
    arguments of the call that makes it but ``option=`` (the mechanism that names the flag
    for the command line), and what the names among them are set to in the enclosing
    function (assignments, ``+=``, parameter defaults)."""
    scopes: list[ast.AST] = [tree]

    def visit(node: ast.AST) -> Iterator[tuple[int, str]]:
        inner = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        if inner:
            scopes.append(node)
        if isinstance(node, ast.Call) and _is_error(node):
            parts = [*node.args, *(k.value for k in node.keywords if k.arg != "option")]
            names = {n.id for part in parts for n in ast.walk(part) if isinstance(n, ast.Name)}
            assigned = _assigned(scopes[-1])
            parts += [value for n in names for value in assigned.get(n, [])]
            for part in parts:
                for text in _texts(part):
                    yield node.lineno, text
        for child in ast.iter_child_nodes(node):
            yield from visit(child)
        if inner:
            scopes.pop()

    yield from visit(tree)


def _flag_in_error_texts() -> list[str]:
    found = []
    for path in _library_modules():
        module = path.relative_to(LIBRARY).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, text in _error_texts(tree):
            for match in FLAG.finditer(text):
                if not any(module == where and allowed in text for where, allowed in ALLOWED):
                    found.append(f"src/phasekit/{module}:{line}: {match.group().strip()!r} "
                                 f"in {text!r}")
    return found


def test_the_static_check_finds_a_flag_where_an_error_quotes_one() -> None:
    source = '''
def check(text, what="--step"):
    message = "no such file"
    message += "; give it (--period SECONDS)"
    if text:
        raise UsageError(f"{what} {text!r}: expected a duration")
    raise InputError(message)

def named(window):
    raise UsageError(f"-o {window}: exists", parameter="output", option="--output")

def fine(window):
    raise UsageError("starts after the end", parameter="window", option="--window")

def factory(names):
    def time_column_error(message):
        message += "; give it (--sampling SECONDS)"
        return header_error(message)
    return find_time_column(names, error=time_column_error)
'''
    texts = [text for _, text in _error_texts(ast.parse(source))]
    flagged = sorted({m.group().strip() for t in texts for m in FLAG.finditer(t)})
    assert flagged == ["--period", "--sampling", "--step", "-o"]


def test_no_library_error_quotes_a_command_line_flag() -> None:
    found = _flag_in_error_texts()
    assert not found, "library errors quoting a command-line flag:\n" + "\n".join(found)


def test_each_allowed_flag_is_still_there() -> None:
    """An allow-list entry whose text is gone would let a new flag through unseen."""
    for module, text in ALLOWED:
        assert text in (LIBRARY / module).read_text(encoding="utf-8"), (module, text)


def test_one_file_of_several_is_told_its_error_in_the_callers_words(tmp_path: Path) -> None:
    """A value one profile of a run cannot take fails that file only, named as the caller
    wrote it: the keyword in Python, the flag on the command line."""
    from phasekit import periodicity_many
    from phasekit.cli import main
    from phasekit.synth import generate

    for name, minutes in (("long", 0.5), ("short", 0.2)):
        generate("nemo", minutes=minutes, seed=1)[0].to_frame().to_csv(tmp_path / f"{name}.csv")
    files = [tmp_path / "long.csv", tmp_path / "short.csv"]
    result = periodicity_many(files, half_window=2500, workers=1)
    assert len(result.nodes) == 1
    assert result.errors[0].message.startswith(f"{files[1]}: half_window=2500: ")
    import contextlib
    import io

    err = io.StringIO()
    with (contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()),
          pytest.raises(SystemExit) as ended):
        main(["analyze", *map(str, files), "--half-window", "2500"])
    assert ended.value.code == 5  # some files analysed, one failed
    assert f"phasekit: error: {files[1]}: --half-window 2500: " in err.getvalue()
