"""The command-line contract: verbs, JSON outputs, exit codes and one-line errors."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

import helpers
import phasekit
from phasekit.cli import main
from phasekit.cli.common import parse_window
from phasekit.errors import UsageError
from phasekit.io import read_profile, write_profile
from phasekit.periodicity import PeriodicityResult
from phasekit.profile import Profile
from phasekit.synth import generate, read_truth

VERBS = ("analyze", "synth", "info", "demo", "record", "sources")


run = helpers.run


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def nemo(workdir: Path) -> Path:
    """Five minutes of the NEMO-like profile (one periodicity of ~1.1 s on ~77 %)."""
    profile, _ = generate("nemo", minutes=5, seed=0)
    path = workdir / "nemo.csv"
    write_profile(profile, path)
    return path


@pytest.fixture(scope="module")
def analyzed(nemo: Path, workdir: Path) -> tuple[int, str, str, Path, Path]:
    """``analyze --json --plot FIG -o RESULT`` on the NEMO-like profile."""
    figure, result = workdir / "nemo.png", workdir / "nemo.result.json"
    code, out, err = run("analyze", nemo, "--json", "--plot", figure, "-o", result)
    return code, out, err, figure, result


# --- analyze ---------------------------------------------------------------------------------
def test_analyze_json_contract(analyzed: tuple[int, str, str, Path, Path]) -> None:
    code, out, err, _, _ = analyzed
    assert code == 0, err
    data = json.loads(out)  # stdout holds the JSON and nothing else
    assert isinstance(data["duration_s"], float) and data["duration_s"] == pytest.approx(300.0)
    assert 0.0 <= data["coverage"] <= 1.0
    assert len(data["patterns"]) == 1
    pattern = data["patterns"][0]
    assert pattern["period_s"] == pytest.approx(1.1, rel=0.02)
    assert pattern["coverage"] == pytest.approx(0.77, abs=0.03)
    assert data["coverage"] == pytest.approx(0.77, abs=0.03)
    assert isinstance(pattern["length"], int) and isinstance(pattern["n_instances"], int)
    assert isinstance(pattern["wgss"], float)
    assert 0.0 <= pattern["coverage"] <= 1.0


def test_analyze_writes_result_and_plot(analyzed: tuple[int, str, str, Path, Path]) -> None:
    code, out, _, figure, result_file = analyzed
    assert code == 0
    pixels = imread(figure)
    assert figure.stat().st_size > 0 and float(pixels.std()) > 0.0
    written = json.loads(result_file.read_text(encoding="utf-8"))
    assert written == json.loads(out)
    assert PeriodicityResult.from_dict(written).patterns[0].n_instances > 100
    assert not [p for p in result_file.parent.iterdir() if ".tmp" in p.name]


def test_analyze_patterns_sorted_by_coverage(workdir: Path) -> None:
    profile, _ = generate("hpcg", minutes=4, seed=0)
    path = workdir / "hpcg.parquet"
    write_profile(profile, path)
    code, out, err = run("analyze", path, "--json")
    assert code == 0, err
    coverages = [p["coverage"] for p in json.loads(out)["patterns"]]
    assert len(coverages) >= 2
    assert coverages == sorted(coverages, reverse=True)


def test_analyze_human_summary(nemo: Path) -> None:
    """Plain words by default (what repeats, how often, over how much of the run); Phase-TA's
    notation with --detail."""
    code, out, err = run("analyze", nemo, "--half-window", "256")
    assert code == 0, err
    assert out.startswith("ipc repeats every ") and " times, over " in out.splitlines()[0]
    for text in ("period (s)", "repeats", "share of the measured run", "metric: ipc",
                 "window L = 256"):
        assert text in out
    assert not any(text in out for text in ("T_exe", "#rp(#i)[#pa]", "WGSS", "DBA it."))
    assert err == ""
    code, detailed, err = run("analyze", nemo, "--half-window", "256", "--detail")
    assert code == 0, err
    for text in ("T_exe", "#rp(#i)[#pa]", "%period", "WGSS", "DBA it."):
        assert text in detailed


def test_analyze_with_progress_bar_on_a_terminal(nemo: Path, monkeypatch: pytest.MonkeyPatch
                                                 ) -> None:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(err, "isatty", lambda: True, raising=False)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(["analyze", str(nemo), "--half-window", "256"])
    assert "Patterns" in out.getvalue() and "repeats every" in out.getvalue()
    assert "analyzing nemo.csv" in err.getvalue()


def test_progress_in_a_log_is_one_line_per_stage(nemo: Path) -> None:
    """With -v and stderr not a terminal (a batch job's log), each stage of analyze and
    phases is one info line with its share and the time since the start; without -v, none."""
    code, _, err = run("-v", "analyze", nemo, "--half-window", "256")
    assert code == 0, err
    stages = [line for line in err.splitlines() if "phasekit.progress" in line]
    assert "analyzing nemo.csv: tuning the window (0 %" in stages[0]
    assert any("clustering instances" in line for line in stages)
    assert len(stages) == len({line.split(": ")[-1].split(" (")[0] for line in stages})
    code, _, err = run("-v", "phases", nemo)
    assert code == 0, err
    assert "phases of nemo.csv: detecting the changes (shape, " in err
    assert "identifying the phases" in err
    code, _, err = run("analyze", nemo, "--half-window", "256")
    assert code == 0 and "phasekit.progress" not in err


def test_the_bar_never_reads_done_while_the_work_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.progress import Progress

    from phasekit.cli.common import PROGRESS_CAP, bar_fraction, progress_reporter

    assert [bar_fraction(f) for f in (-1.0, 0.5, 1.0, 3.0, float("nan"))] == [
        0.0, 0.5, PROGRESS_CAP, PROGRESS_CAP, 0.0]
    shown: list[float] = []
    update = Progress.update

    def spy(self: Progress, task: object, **fields: object) -> None:
        if "completed" in fields:
            shown.append(float(fields["completed"]))  # type: ignore[arg-type]
        update(self, task, **fields)  # type: ignore[arg-type]

    monkeypatch.setattr(Progress, "update", spy)
    err = io.StringIO()
    monkeypatch.setattr(err, "isatty", lambda: True, raising=False)
    with contextlib.redirect_stderr(err), progress_reporter(True, "work") as report:
        assert report is not None
        for fraction in (0.2, 1.0, 1.5):     # a caller that reports 100 % before it ends
            report("stage", fraction)
    assert shown == [0.2, PROGRESS_CAP, PROGRESS_CAP]


def test_analyze_white_noise_is_empty_not_an_error(workdir: Path) -> None:
    rng = np.random.default_rng(3)
    path = workdir / "noise.csv"
    write_profile(Profile(values=rng.normal(size=6000), period=0.005, metrics=("x",)), path)
    code, out, err = run("analyze", path, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["patterns"] == [] and data["coverage"] == 0.0
    code, out, _ = run("analyze", path)
    assert code == 0 and out.startswith("no periodicity found") and "0(0)" not in out


def test_analyze_window(nemo: Path) -> None:
    code, out, err = run("analyze", nemo, "--window", "60:240", "--band", "0.15",
                         "--cut-ratio", "5", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["params"]["band"] == 0.15 and data["params"]["cut_ratio"] == 5.0
    assert data["offset_s"] == pytest.approx(60.0)
    assert data["duration_s"] == pytest.approx(180.0)
    assert data["params"]["window_s"] == [60.0, 240.0]
    assert len(data["patterns"]) == 1
    assert data["patterns"][0]["period_s"] == pytest.approx(1.1, rel=0.02)


@pytest.mark.parametrize(("text", "expected"), [
    ("60:660", (60.0, 660.0)), ("60:", (60.0, None)), (":300", (None, 300.0)),
    (" 1.5 : 2e2 ", (1.5, 200.0)), (":", (None, None)),
])
def test_parse_window(text: str, expected: tuple[float | None, float | None]) -> None:
    assert parse_window(text) == expected


@pytest.mark.parametrize("text", ["60", "60-120", "a:b", "1:2:3", "-5:10", "10:5", "3:3",
                                  "inf:", ""])
def test_parse_window_rejects(text: str) -> None:
    with pytest.raises(UsageError, match="--window"):
        parse_window(text)


# --- synth, info, demo -----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["n.parquet", "n.csv"])
def test_synth_writes_profile_and_truth(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    code, out, err = run("synth", "nemo", "--minutes", "1", "--seed", "3", "-o", path)
    assert code == 0, err
    truth_file = tmp_path / f"{name}.truth.json"
    assert str(path) in out and str(truth_file) in out
    profile, truth = read_profile(path), read_truth(truth_file)
    expected, expected_truth = generate("nemo", minutes=1, seed=3)
    assert profile.n_samples == truth.n_samples == 12_000
    np.testing.assert_allclose(profile.values, expected.values)
    np.testing.assert_array_equal(truth.instances, expected_truth.instances)


def test_synth_rejects_unknown_kind_and_extension(tmp_path: Path) -> None:
    code, _, err = run("synth", "lammps", "-o", tmp_path / "x.csv")
    assert code == 2 and err.count("\n") == 1 and err.startswith("phasekit: error:")
    code, _, err = run("synth", "nemo", "-o", tmp_path / "x.txt")
    assert code == 2 and err.count("\n") == 1 and "x.txt" in err
    assert not list(tmp_path.iterdir())


def test_info_json(nemo: Path) -> None:
    code, out, err = run("info", nemo, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["n_samples"] == 60_000
    assert data["period_s"] == pytest.approx(0.005)
    assert data["duration_s"] == pytest.approx(300.0)
    assert data["metrics"] == ["ipc"]
    code, out, _ = run("info", nemo)
    assert code == 0 and "60000" in out and "ipc" in out


def test_info_reports_resampling_as_one_warning_line(tmp_path: Path) -> None:
    path = tmp_path / "irregular.csv"
    path.write_text("timestamp_s,ipc\n0,1\n0.005,2\n0.011,3\n0.015,1\n0.02,2\n", encoding="utf-8")
    code, out, err = run("info", path, "--json")
    assert code == 0 and json.loads(out)["n_samples"] == 5
    assert err.startswith("phasekit: warning:") and err.count("\n") == 1 and "irregular" in err


@pytest.mark.slow
def test_demo_records_and_analyzes_a_real_run(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("demo")
    assert code == 0, err
    folder = tmp_path / "phasekit-demo"
    for name in ("recording.parquet", "result.json", "analysis.png"):
        assert (folder / name).stat().st_size > 0, name
        assert str(Path("phasekit-demo") / name) in out
    assert "repeats every" in out and "known iteration period 0.4 s" in out
    recording = read_profile(folder / "recording.parquet")
    assert recording.meta["recording"]["complete"] is True
    result = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    assert result["patterns"], result.get("explanation")
    assert result["patterns"][0]["period_s"] == pytest.approx(0.4, rel=0.05)
    assert float(imread(folder / "analysis.png").std()) > 0.0


def test_demo_verdict_says_where_the_iterations_are(monkeypatch: pytest.MonkeyPatch) -> None:
    """When a cycle around the iterations leads, the demo's comparison names the iterations
    inside it; a shorter cycle leading is only compared."""
    from dataclasses import replace

    from phasekit.cli.demo import _verdict
    from phasekit.periodicity import analyze

    profile = read_profile(helpers.DATA / "real_demo_disk_writes.parquet")
    led = analyze(profile, metrics=["disk_write_bytes"])
    assert re.fullmatch(r"found 0\.(4|39)\d* s \(0\.\d% off\)", _verdict(led)), _verdict(led)
    helpers.without_second_look(monkeypatch)
    outer = analyze(profile, metrics=["disk_write_bytes"])
    assert outer.patterns[0].period_s == pytest.approx(4.31, rel=0.01)
    assert re.fullmatch(r"found 4\.31 s, a cycle as long as 10\.8 iterations \(the workload "
                        r"checkpoints after every 10th\); the iterations repeat inside it "
                        r"every 0\.(4|39)\d* s \(0\.\d% off\)", _verdict(outer)), _verdict(outer)
    half = replace(led, patterns=(replace(led.patterns[0], period_s=0.2),))
    assert _verdict(half) == "found 0.2 s (50.0% off)"


@pytest.mark.slow
def test_demo_synthetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("demo", "--synthetic")
    assert code == 0, err
    folder = tmp_path / "phasekit-demo"
    for name in ("profile.parquet", "profile.parquet.truth.json", "result.json", "analysis.png"):
        assert (folder / name).stat().st_size > 0, name
        assert str(Path("phasekit-demo") / name) in out
    assert "Patterns" in out and "adjusted Rand index" in out
    result = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    assert len(result["patterns"]) == 3
    assert float(imread(folder / "analysis.png").std()) > 0.0


def test_demo_writes_the_result_as_it_is_saved(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """DIR/result.json and the report's result hold what ``result.save`` writes."""
    from phasekit.cli.demo import _write_files
    from phasekit.periodicity import analyze

    profile, _ = generate("nemo", minutes=0.5, seed=1)
    result = analyze(profile)
    saved = {**result.to_dict(), "kept_for_the_figure": [1, 2]}
    monkeypatch.setattr(PeriodicityResult, "saved_dict", lambda self: saved)
    files = _write_files(tmp_path, profile, result, {"coverage": 0.5}, "a test")
    assert json.loads(Path(files["result"]).read_text(encoding="utf-8")) == saved


# --- global options and help -----------------------------------------------------------------
def test_version() -> None:
    code, out, _ = run("--version")
    assert code == 0 and out == f"phasekit {phasekit.__version__}\n"


def test_version_through_the_module_entry_point() -> None:
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "--version"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.startswith("phasekit ")


@pytest.mark.parametrize("verb", [None, *VERBS])
def test_help_has_an_example(verb: str | None) -> None:
    code, out, _ = run(*([verb] if verb else []), "--help")
    assert code == 0
    assert "Example" in out and "phasekit " in out


def test_every_verb_is_built_when_named_and_listed_in_order() -> None:
    from phasekit.cli import _VERBS

    code, out, _ = run("--help")
    commands = out.split("Commands:")[1].split("Example")[0]
    listed = [line.split()[0] for line in commands.splitlines()
              if line.strip() and not line.startswith("    ")]
    assert code == 0 and listed == list(_VERBS)
    for verb in _VERBS:
        code, out, _ = run(verb, "--help")
        assert code == 0 and f"phasekit {verb}" in out, verb


def test_debug_after_a_nested_verb_shows_the_traceback(tmp_path: Path) -> None:
    code, _, err = run("energy", "fit", tmp_path / "missing.csv", "--debug")
    assert code == 3 and "Traceback" in err and "no such file" in err


MATPLOTLIB_IN_THE_COMMAND = """
import sys
from phasekit.cli import _shorten_imports
_shorten_imports()
from matplotlib.lines import Line2D
from matplotlib.text import Text
line, text = Line2D([0, 1], [0, 1]), Text(0, 0, "a")
line.set(color="red", linewidth=3, ls="--")
text.set(text="b", fontsize=7)
print(line.get_color(), line.get_linewidth(), line.get_linestyle(), text.get_text(),
      text.get_fontsize(), "Supported properties" in (Line2D.set.__doc__ or ""))
"""


def test_matplotlib_without_generated_docstrings_still_sets_properties() -> None:
    done = subprocess.run([sys.executable, "-c", MATPLOTLIB_IN_THE_COMMAND],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["red", "3.0", "--", "b", "7.0", "False"]


def test_usage_errors_keep_exit_code_2(nemo: Path) -> None:
    for args in (["analyze"], ["analyze", nemo, "--no-such-option"], ["frobnicate"],
                 ["analyze", nemo, "--band", "2"], ["analyze", nemo, "--half-window", "x"]):
        code, out, err = run(*args)
        assert code == 2, args
        assert out == "" and err.count("\n") == 1 and err.startswith("phasekit: error:")


def test_internal_error_is_one_line_and_debug_shows_traceback(
        nemo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("phasekit.periodicity.api.periodicity", broken)  # the verb it runs
    code, _, err = run("analyze", nemo)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("phasekit: internal error: RuntimeError: boom")
    assert "--debug" in err and "Traceback" not in err
    code, _, err = run("--debug", "analyze", nemo)
    assert code == 1 and "Traceback" in err and "boom" in err


# --- bad input -------------------------------------------------------------------------------
def rows(n: int, start: float = 0.0) -> str:
    return "".join(f"{start + 0.005 * i:.3f},{1 + (i % 7) / 10}\n" for i in range(n))


BAD_FILES: dict[str, tuple[str, str | None, int]] = {
    # name: (file name, content or None for no file, expected exit code)
    "missing file": ("missing.csv", None, 3),
    "empty file": ("empty.csv", "", 3),
    "header only": ("header.csv", "timestamp_s,ipc\n", 3),
    "non-numeric value": ("text.csv",
                          "timestamp_s,ipc\n" + rows(5) + "0.025,fast\n" + rows(5, 0.03), 3),
    "inf": ("inf.csv", "timestamp_s,ipc\n" + rows(5) + "0.025,inf\n" + rows(5, 0.03), 3),
    "unsorted timestamps": ("unsorted.csv", "timestamp_s,ipc\n" + rows(5, 1.0) + rows(5), 3),
    "duplicate timestamps": ("duplicate.csv", "timestamp_s,ipc\n" + rows(5) + rows(5, 0.02), 3),
    "too few samples": ("short.csv", "timestamp_s,ipc\n" + rows(10), 3),
    "not parquet": ("fake.parquet", "timestamp_s,ipc\n" + rows(10), 3),
}


@pytest.mark.parametrize("case", BAD_FILES)
@pytest.mark.parametrize("verb", ["analyze", "info"])
def test_bad_input_is_one_line_naming_the_file(case: str, verb: str, tmp_path: Path) -> None:
    name, content, expected = BAD_FILES[case]
    if case == "too few samples" and verb == "info":
        expected = 0  # a valid file, just too short to analyze
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    code, out, err = run(verb, path, "--json")
    assert code == expected, err
    if expected:
        assert out == ""
        assert err.count("\n") == 1 and err.startswith("phasekit: error:")
        assert name in err
        assert "Traceback" not in err


@pytest.mark.parametrize(("args", "expected", "names_file"), [
    (["--metric", "nope"], 2, True),
    (["--metric", "ipc", "--metric", "nope"], 2, True),
    (["--window", "60-120"], 2, False),
    (["--window", "1000:"], 2, True),
    (["--plot", "figure.nope"], 2, False),
])
def test_bad_options(args: list[str], expected: int, names_file: bool, nemo: Path) -> None:
    code, out, err = run("analyze", nemo, *args)
    assert code == expected
    assert out == "" and err.count("\n") == 1 and err.startswith("phasekit: error:")
    assert "Traceback" not in err
    if names_file:
        assert str(nemo) in err


def test_errors_through_the_installed_entry_point(tmp_path: Path) -> None:
    """The real process: one line on stderr, exit code 3, no traceback."""
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", "info", str(tmp_path / "x.csv")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 3
    assert done.stderr == f"phasekit: error: {tmp_path / 'x.csv'}: no such file\n"
    assert done.stdout == ""


def test_command_line_starts_without_the_heavy_libraries() -> None:
    """Every command (and every local worker process, which imports the command line to run
    its task) starts in about half a second: the numeric and plotting libraries load in the
    verbs that use them (pandas alone took 0.4 s, imported for a type annotation)."""
    heavy = ("pandas", "matplotlib", "scipy", "numba", "distributed", "pyarrow", "sklearn")
    code = ("import sys, phasekit.cli; "
            f"print(' '.join(m for m in {heavy!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == ""


def test_reading_profiles_does_not_import_pandas_for_traces() -> None:
    """phasekit.io names the profile formats without loading the trace model (pandas): the
    many-inputs path lists the files before it starts the workers."""
    code = "import sys, phasekit.io; print('pandas' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


def test_the_command_freezes_the_collector_before_the_interpreter_exits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """entry_point (the installed command) runs main, then freezes the garbage collector's
    objects so that the interpreter's teardown does not collect them again (0.4 s)."""
    import phasekit.cli as cli

    frozen: list[bool] = []
    monkeypatch.setattr(cli.gc, "freeze", lambda: frozen.append(True))
    monkeypatch.setattr(sys, "argv", ["phasekit", "--version"])
    cli.entry_point()
    assert frozen == [True]
    monkeypatch.setattr(sys, "argv", ["phasekit", "info", "/nonexistent/x.csv"])
    with pytest.raises(SystemExit) as exited:
        cli.entry_point()
    assert exited.value.code == 3 and frozen == [True, True]


# --- outputs, stdin, cut recordings, piped output --------------------------------------------
def test_outputs_are_written_together_or_not_at_all(tmp_path: Path) -> None:
    """write_all: a figure that fails leaves neither the JSON nor a temporary file, and a
    file of that name as it was."""
    from phasekit.cli.common import figure_file, json_file, write_all

    result, figure = tmp_path / "r.json", tmp_path / "f.png"
    result.write_text("old\n")

    def fail(path: Path) -> None:
        path.write_bytes(b"half a figure")
        raise RuntimeError("the figure failed")

    with pytest.raises(RuntimeError, match="the figure failed"):
        write_all(json_file(result, {"kind": "x"}), figure_file(figure, fail))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    assert result.read_text() == "old\n"
    written = write_all(json_file(result, lambda: {"kind": "x"}),
                        figure_file(figure, lambda path: path.write_bytes(b"png")))
    assert written == [("result", result), ("figure", figure)]
    assert json.loads(result.read_text()) == {"kind": "x"} and figure.read_bytes() == b"png"


def test_a_plot_that_fails_writes_no_result(nemo: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise UsageError("cannot draw this figure")

    monkeypatch.setattr("phasekit.plot.plot_analysis", broken)
    result = tmp_path / "result.json"
    code, _, err = run("analyze", nemo, "-o", result, "--plot", tmp_path / "fig.png")
    assert code == 2 and "cannot draw this figure" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("option", "expected"), [
    (["--plot", "fig.txt"], "cannot tell the format"),
    (["-o", "same.png", "--plot", "same.png"], "both write"),
    (["-o", "pipe"], "not a regular file"),
])
def test_outputs_are_checked_before_the_work(option: list[str], expected: str, nemo: Path,
                                             tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the analysis ran")

    monkeypatch.setattr("phasekit.periodicity.analyze", never)
    monkeypatch.chdir(tmp_path)
    import os

    os.mkfifo(tmp_path / "pipe")
    code, _, err = run("analyze", nemo, *option)
    assert code == 2 and expected in err and err.count("\n") == 1, err
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def _cut_recording(folder: Path) -> Path:
    """``run.parquet.partial.arrows`` of a recording killed before it finalized (200 samples
    flushed, no end-of-stream marker)."""
    from phasekit.io.arrow import StreamAppender

    partial = folder / "run.parquet.partial.arrows"
    stream = StreamAppender(partial, ["ipc", "cycles"], {"version": 1, "period": 0.01})
    t = np.arange(200) * 0.01
    stream.append(t, np.column_stack([1 + 0.5 * np.sin(2 * np.pi * t), 1e6 + 0 * t]))
    stream.abandon()
    return partial


@pytest.mark.parametrize("verb", ["info", "analyze", "phases"])
def test_a_cut_recording_is_pointed_to(verb: str, tmp_path: Path) -> None:
    partial = _cut_recording(tmp_path)
    code, out, err = run(verb, tmp_path / "run.parquet")
    assert code == 3 and out == "" and err.count("\n") == 1
    assert err.startswith(f"phasekit: error: {tmp_path / 'run.parquet'}: no such file; the "
                          "recording was cut: its samples are in run.parquet.partial.arrows")
    code, out, err = run("info", partial, "--json")
    assert code == 0 and json.loads(out)["n_samples"] == 200
    assert "warning" in err and "cut short" in err


def _stdin(args: list[str], data: bytes) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "phasekit.cli", *args], input=data.decode(),
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_analyze_reads_a_csv_profile_from_stdin(nemo: Path) -> None:
    """phasekit's own CSV (its ``# phasekit:`` line first) on stdin, as from a file."""
    done = _stdin(["analyze", "-", "--json"], nemo.read_bytes())
    assert done.returncode == 0, done.stderr
    from_file = json.loads(run("analyze", nemo, "--json")[1])
    assert json.loads(done.stdout)["patterns"] == from_file["patterns"]
    done = _stdin(["info", "-"], b"time,a\n0,1\n0.1,x\n")
    assert done.returncode == 3
    assert done.stderr == "phasekit: error: <stdin>, line 3, column 'a': expected a number, " \
                          "found 'x'\n"


@pytest.mark.slow
def test_watch_reads_phasekits_csv_and_prints_one_object_per_line(nemo: Path) -> None:
    done = _stdin(["watch", "-", "--json"], nemo.read_bytes())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    objects = [json.loads(line) for line in lines]  # every line is one object
    assert objects[-1]["phases"] == len(objects) and objects[-1]["starts_s"][0] == 0.0
    plain = _stdin(["watch", "-", "--json"], b"".join(
        line + b"\n" for line in nemo.read_bytes().splitlines()[1:]))
    assert plain.stdout == done.stdout  # the metadata line only adds the exact period


def test_piped_tables_are_not_wrapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """stdout not a terminal: rows and titles are whole lines, numbers never split."""
    monkeypatch.setenv("COLUMNS", "80")
    names = [f"a_rather_long_metric_name_{k}" for k in range(3)]
    t = np.arange(400) * 0.01
    profile = Profile(np.column_stack([1e-7 * (1 + np.sin(t + k)) for k in range(3)]),
                      period=0.01, metrics=names)
    path = tmp_path / "p.csv"
    write_profile(profile, path)
    code, out, err = run("info", path)
    assert code == 0, err
    for name in names:
        row = next(line for line in out.splitlines() if name in line)
        assert len(row.split()) == 5, row  # name, missing, min, mean, max (no unit)


def test_near_zero_parameters_print_as_zero() -> None:
    from phasekit.cli.common import number

    assert number(3.192e-14, 398.6) == "0" and number(-1e-12, 400.0) == "0"
    assert number(1.568e-05, 398.6) == "1.568e-05" and number(3.192e-14, 0.0) == "3.192e-14"
    assert number(float("nan"), 1.0) == "nan"


def test_energy_fit_prints_a_parameter_at_its_bound_as_zero(
        seed_campaign_file: Callable[..., Path]) -> None:
    import re

    path = seed_campaign_file(seed=0, frequencies=(1.2, 1.8, 2.4), cores=(1, 2, 4, 8),
                              inputs=(1, 2))
    code, out, err = run("energy", "fit", path, "--model", "extended", "--json")
    assert code == 0, err
    params = json.loads(out)["params"]
    tiny = [k for k, v in params.items() if 0 < abs(v) < 1e-12]
    assert tiny  # the solver leaves d3 and k a rounding error above their bound 0
    code, out, err = run("energy", "fit", path, "--model", "extended")
    line = next(line for line in out.splitlines() if line.startswith("parameters"))
    for name in tiny:
        assert re.search(rf"\b{name} = 0(,|$)", line), line


# --- --period: CSV profiles without a time column (the dcslab perf series) -------------------
def _untimed(profile: Profile, path: Path) -> Path:
    """``profile``'s samples as a CSV of metric columns only, one row per period."""
    rows = [",".join(profile.metrics)]
    rows += [",".join(repr(float(v)) for v in row) for row in profile.values]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.slow
def test_period_reads_untimed_csvs_in_every_profile_verb(tmp_path: Path) -> None:
    profile, _ = generate("nemo", minutes=2, seed=0)
    untimed = _untimed(profile, tmp_path / "node1.csv")
    timed = tmp_path / "timed.csv"
    write_profile(profile, timed)
    period = f"{profile.period!r}"
    code, out, _ = run("info", untimed, "--period", period, "--json")
    summary = json.loads(out)
    assert code == 0 and summary["n_samples"] == profile.values.shape[0]
    assert summary["period_s"] == pytest.approx(profile.period)
    code, out, _ = run("analyze", untimed, "--period", period, "--json")
    _, expected, _ = run("analyze", timed, "--json")
    assert code == 0
    assert [p["period_s"] for p in json.loads(out)["patterns"]] == pytest.approx(
        [p["period_s"] for p in json.loads(expected)["patterns"]])
    second = _untimed(profile, tmp_path / "node2.csv")
    code, out, _ = run("analyze", untimed, second, "--period", period, "--workers", "1",
                       "--json")
    assert code == 0 and len(json.loads(out)["nodes"]) == 2
    code, out, _ = run("watch", untimed, "--period", period, "--json")
    assert code == 0 and out.strip()
    code, out, _ = run("phases", untimed, "--period", period, "--json")
    _, expected, _ = run("phases", timed, "--json")
    assert code == 0
    assert [p["start_s"] for p in json.loads(out)["phases"]] == pytest.approx(
        [p["start_s"] - profile.start for p in json.loads(expected)["phases"]])
    code, _, err = run("info", timed, "--period", period)
    assert code == 2 and "has a time column" in err and err.count("\n") == 1
    code, _, err = run("info", untimed)
    assert code == 3 and "give that period in seconds (the period option)" in err
