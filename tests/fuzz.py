"""The bad-input table of the fuzz suite and its runner.

Every case is one ``phasekit`` command on one bad input: a file that is missing, not a
regular file, empty, binary, damaged, of another kind, or a valid file with one bad value
(text in a number column, 1e308, a ragged row...), given as an argument or on stdin (``-``);
a recording cut by SIGKILL; or an output that cannot be written (a figure format the name
does not tell, two outputs on one path, a FIFO). :func:`run_case` runs it the way a user
does, in a child process, and :func:`problems` says what is wrong with the outcome: an exit
code outside {2, 3, 4, 5}, anything but one line on stderr, a traceback, an internal error,
a hang, or a file left behind.

The child is forked from the test process, which has imported phasekit's heavy dependencies
once: a case costs its own work, not the 0.5 s start-up of a new interpreter, so the whole
table runs in about a minute.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: Seconds a case may take before it counts as a hang.
TIMEOUT_S = 15.0
#: Exit codes a bad input may end with: usage, input, unsupported, interrupted/resource.
BAD_INPUT_CODES = frozenset({2, 3, 4, 5})

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Case:
    """``phasekit ARGV`` with ``{}`` standing for the bad input made by ``make``."""

    id: str
    argv: tuple[str, ...]
    make: Callable[[Path], Path]
    outputs: tuple[str, ...] = ()  # files the command would write: none may be left
    timeout_s: float = TIMEOUT_S
    valid: bool = False  # an odd input that is still valid: the command must succeed
    stdin: bool = False  # the input is given on stdin (the command reads -)


@dataclass
class Outcome:
    code: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float
    left: list[str] = field(default_factory=list)


# --- the valid inputs the bad ones are made from ---------------------------------------------
class Bases:
    """Small valid inputs of every kind, written once into ``folder``."""

    def __init__(self, folder: Path) -> None:
        from phasekit.campaign import write_campaign
        from phasekit.io import write_profile
        from phasekit.schedule.batch import write_batch
        from phasekit.synth.batches import generate_batch
        from phasekit.synth.campaigns import seed_campaign
        from phasekit.synth.periodic import generate
        from phasekit.synth.power import generate_power_profiles

        folder.mkdir(parents=True, exist_ok=True)
        profile, _ = generate("nemo", minutes=0.5, seed=1)
        self.profile_csv = folder / "profile.csv"
        write_profile(profile, self.profile_csv)
        self.profile_parquet = folder / "profile.parquet"
        write_profile(profile, self.profile_parquet)
        campaign = seed_campaign(seed=0, frequencies=(1.2, 1.8, 2.4), cores=(1, 2, 4, 8),
                                 inputs=(1, 2)).campaign
        self.campaign_json = folder / "campaign.json"
        write_campaign(campaign, self.campaign_json)
        self.campaign_csv = folder / "campaign.csv"
        campaign.table().to_csv(self.campaign_csv, index=False)
        profiles, _ = generate_power_profiles(cores=[1, 4], freqs_ghz=[1.2, 2.4], seed=0)
        self.power_json = folder / "power.json"
        self.power_json.write_text(json.dumps(profiles.to_dict()))
        self.batch_csv = write_batch(generate_batch(16, seed=0), folder / "batch.csv")
        self.counters_csv = folder / "counters.csv"
        lines = (DATA / "kepler_rapl_kubelet_slice.csv").read_text().splitlines()[:200]
        self.counters_csv.write_text("\n".join(lines) + "\n")
        self.trace = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
        self.result_json = folder / "result.json"
        # in a child process: kernels run here would start threads the forked cases lack
        subprocess.run([sys.executable, "-m", "phasekit.cli", "analyze", str(self.profile_csv),
                        "-o", str(self.result_json)], check=True, capture_output=True)


# --- bad files ---------------------------------------------------------------------------
def _write(name: str, data: bytes | str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path
    return make


def _fixed(path: str) -> Callable[[Path], Path]:
    return lambda folder: Path(path)


def _missing(name: str) -> Callable[[Path], Path]:
    return lambda folder: folder / name


def _directory(name: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        (folder / name).mkdir()
        return folder / name
    return make


def _fifo(name: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        os.mkfifo(folder / name)
        return folder / name
    return make


def _copy(source: Path, name: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        shutil.copyfile(source, folder / name)
        return folder / name
    return make


def _cut_recording(name: str, partial_only: bool = False) -> Callable[[Path], Path]:
    """A recording killed before it finalized: ``NAME.partial.arrows`` (two flushed chunks,
    no end-of-stream marker) and no ``NAME``; the path given is ``NAME``, or with
    ``partial_only`` the partial file itself."""
    def make(folder: Path) -> Path:
        from phasekit.io.arrow import StreamAppender

        partial = folder / (name + ".partial.arrows")
        stream = StreamAppender(partial, ["ipc", "cycles"], {"version": 1, "period": 0.01})
        t = np.arange(3000) * 0.01
        for part in np.array_split(np.arange(3000), 2):
            stream.append(t[part], np.column_stack([1 + 0.5 * np.sin(2 * np.pi * t[part]),
                                                    1e6 + 0 * t[part]]))
        stream.abandon()
        return partial if partial_only else folder / name
    return make


def _with_fifo(make: Callable[[Path], Path], name: str) -> Callable[[Path], Path]:
    """``make``'s input, and a FIFO ``name`` in the folder (an output that must be refused:
    a rename onto it would replace it)."""
    def both(folder: Path) -> Path:
        os.mkfifo(folder / name)
        return make(folder)
    return both


def generic_bad_files(suffix: str) -> dict[str, Callable[[Path], Path]]:
    """Bad files of no particular format, named with ``suffix`` (``.csv``, ``.json``...)."""
    rng = np.random.default_rng(0)
    garbage = rng.integers(0, 256, 4096, dtype=np.uint8).tobytes()
    text = "timestamp_s,a\n" + "".join(f"{i},{i % 7}\n" for i in range(200))
    packed = gzip.compress(text.encode())
    return {
        "missing": _missing("nothing" + suffix),
        "directory": _directory("folder" + suffix),
        "fifo": _fifo("pipe" + suffix),
        "devnull": _fixed("/dev/null"),
        "proc_mem": _fixed("/proc/self/mem"),
        "empty": _write("empty" + suffix, b""),
        "blank": _write("blank" + suffix, "\n \n\t\n\n"),
        "garbage": _write("garbage" + suffix, garbage),
        "nul": _write("nul" + suffix, b"\0" * 1000),
        "elf": _copy(Path(shutil.which("true") or "/bin/true"), "program" + suffix),
        "utf16": _write("utf16" + suffix, text.encode("utf-16")),
        "gz_cut": _write("cut" + suffix + ".gz", packed[: len(packed) // 2]),
        "gz_garbage": _write("bad" + suffix + ".gz", b"\x1f\x8b" + garbage),
        "long_line": _write("long" + suffix, "a" * 3_000_000 + "\n"),
        "json_cut": _write("cut_json" + suffix, '{"kind": "campaign", "runs": [{"threads": '),
        "json_list": _write("list" + suffix, "[1, 2, 3]\n"),
        "json_unknown": _write("unknown" + suffix, '{"kind": "nothing_we_know", "version": 1}'),
    }


def _csv_variants(base: Path, stem: str, number_column: int) -> dict[str, Callable[[Path], Path]]:
    """A valid CSV with one thing wrong: header only, one row, text or 1e308 or inf in a
    number column (line 14), a ragged row, a missing cell, the rows reversed."""
    lines = base.read_text().splitlines()
    head = next(k for k, line in enumerate(lines) if line and not line.startswith("#"))
    header, rows = lines[: head + 1], lines[head + 1:]

    at = min(12, len(rows) - 1)

    def with_cell(value: str, row: int = at) -> str:
        cells = rows[row].split(",")
        cells[number_column] = value
        changed = [*rows[:row], ",".join(cells), *rows[row + 1:]]
        return "\n".join(header + changed) + "\n"

    ragged = rows[at].rsplit(",", 1)[0]
    return {
        "header_only": _write(stem + "_header.csv", "\n".join(header) + "\n"),
        "one_row": _write(stem + "_one.csv", "\n".join(header + rows[:1]) + "\n"),
        "text_cell": _write(stem + "_text.csv", with_cell("abc")),
        "huge": _write(stem + "_huge.csv", with_cell("1e308")),
        "overflow": _write(stem + "_overflow.csv", with_cell("1e999")),
        "infinite": _write(stem + "_inf.csv", with_cell("inf")),
        "negative": _write(stem + "_negative.csv", with_cell("-5")),
        "ragged": _write(stem + "_ragged.csv", "\n".join(header + rows[:at] + [ragged]
                                                          + rows[at + 1:]) + "\n"),
        "reversed": _write(stem + "_reversed.csv", "\n".join(header + rows[::-1]) + "\n"),
        "no_header": _write(stem + "_noheader.csv", "\n".join(rows) + "\n"),
        "semicolons": _write(stem + "_semicolon.csv", "\n".join(
            line if line.startswith("#") else line.replace(",", ";") for line in header + rows)
            + "\n"),
    }


def _json_variants(base: Path, stem: str) -> dict[str, Callable[[Path], Path]]:
    text = base.read_text()
    data = json.loads(text)
    huge = text.replace("0.", "1e308", 1)
    keys = list(data) if isinstance(data, dict) else []
    return {
        "json_truncated": _write(stem + "_cut.json", text[: len(text) // 2]),
        "json_huge": _write(stem + "_huge.json", huge),
        "json_nan": _write(stem + "_nan.json", text.replace("0.", "NaN", 1)),
        "json_no_key": _write(stem + "_nokey.json", json.dumps(
            {k: v for k, v in data.items() if k != keys[-1]} if keys else {})),
        "json_empty_object": _write(stem + "_empty.json", "{}"),
    }


def _wrong_kinds(bases: Bases, exclude: str) -> dict[str, Callable[[Path], Path]]:
    """Valid files of the other kinds, given where they do not belong."""
    kinds = {"profile_csv": bases.profile_csv, "trace": bases.trace,
             "campaign_json": bases.campaign_json, "power_json": bases.power_json,
             "result_json": bases.result_json, "batch_csv": bases.batch_csv,
             "profile_parquet": bases.profile_parquet}
    return {f"wrong_{name}": _copy(path, path.name) for name, path in kinds.items()
            if name != exclude}


def cases(bases: Bases) -> list[Case]:
    """The whole table: every verb that reads a file, on every bad file that fits it."""
    out: list[Case] = []

    def add(verb: str, argv: list[str], bad: dict[str, Callable[[Path], Path]],
            outputs: tuple[str, ...] = (), valid: frozenset[str] = frozenset()) -> None:
        for name, make in bad.items():
            out.append(Case(f"{verb}-{name}", tuple(argv), make, outputs,
                            valid=name in valid))

    profile_bad = {**generic_bad_files(".csv"),
                   **_csv_variants(bases.profile_csv, "profile", 1),
                   **_wrong_kinds(bases, "profile_csv")}
    profile_ok = frozenset({"negative", "semicolons", "wrong_profile_parquet"})
    add("analyze", ["analyze", "{}", "-o", "out.json", "--plot", "out.png"], profile_bad,
        ("out.json", "out.png"), profile_ok)
    add("info", ["info", "{}", "--json"], profile_bad, valid=profile_ok | {"one_row"})
    add("phases", ["phases", "{}", "-o", "out.json"], profile_bad, ("out.json",), profile_ok)
    add("watch", ["watch", "{}", "--json", "--wait", "1s"], profile_bad,
        valid=profile_ok | {"one_row"})
    add("fingerprint", ["fingerprint", "{}", "-o", "out.json"], generic_bad_files(".csv"),
        ("out.json",))

    trace_bad = {**generic_bad_files(".prv"), **_wrong_kinds(bases, "trace"),
                 "prv_header_only": _write("header.prv", "#Paraver (01/01/2024 at 00:00):"
                                           "1000_ns:1(1):1:1(1:1)\n"),
                 "prv_bad_records": _write("records.prv", "#Paraver (01/01/2024 at 00:00):"
                                           "1000_ns:1(1):1:1(1:1)\n2:1:1:1:1:abc:50000001:1\n"),
                 "otf2_garbage": _write("archive.otf2", b"\x00OTF2" * 100)}
    add("structure", ["structure", "{}", "-o", "out.json"], trace_bad, ("out.json",))

    campaign_bad = {**generic_bad_files(".csv"),
                    **_csv_variants(bases.campaign_csv, "campaign", 0),
                    **_json_variants(bases.campaign_json, "campaign"),
                    **_wrong_kinds(bases, "campaign_json")}
    campaign_ok = frozenset({"reversed", "semicolons"})
    add("energy_fit", ["energy", "fit", "{}", "-o", "out.json"], campaign_bad, ("out.json",),
        campaign_ok)
    add("energy_choose", ["energy", "choose", "{}", "-o", "out.json", "--plot", "out.png"],
        campaign_bad, ("out.json", "out.png"), campaign_ok)
    add("energy_suggest", ["energy", "suggest", "{}", "-o", "out.json"],
        {**generic_bad_files(".csv"), **_csv_variants(bases.campaign_csv, "measured", 0)},
        ("out.json",), campaign_ok)
    add("energy_plot", ["energy", "plot", "{}", "--plot", "out.png", "-o", "out.json"],
        campaign_bad, ("out.png", "out.json"), campaign_ok | {"one_row", "wrong_batch_csv"})
    add("energy_phasediv", ["energy", "phasediv", "{}", "-o", "out.json"],
        {**generic_bad_files(".json"), **_json_variants(bases.power_json, "power"),
         **_wrong_kinds(bases, "power_json")}, ("out.json",))

    counters_bad = {**generic_bad_files(".csv"),
                    **_csv_variants(bases.counters_csv, "counters", 3),
                    **_wrong_kinds(bases, "counters")}
    add("powermodel_fit", ["powermodel", "fit", "{}", "--target", "package_power", "-o",
                           "out.json"], counters_bad, ("out.json",),
        frozenset({"negative", "reversed", "semicolons"}))
    add("schedule", ["schedule", "{}", "--servers", "2", "--cores", "8", "-o", "out.json"],
        {**generic_bad_files(".csv"), **_csv_variants(bases.batch_csv, "batch", 1),
         **_wrong_kinds(bases, "batch_csv")}, ("out.json",),
        frozenset({"one_row", "reversed"}))
    add("report", ["report", "{}", "-o", "report.html"],
        {**generic_bad_files(".json"), **_json_variants(bases.result_json, "result")},
        ("report.html",), frozenset({"json_no_key"}))  # the last key is the optional preview
    add("campaign_import", ["campaign", "import", "{}", "-o", "out.json"],
        {**generic_bad_files(".json"), **_wrong_kinds(bases, "none")}, ("out.json",),
        frozenset({"wrong_campaign_json"}))
    add("signature_run", ["signature", "run", "{}", "-o", "out.json"],
        {**generic_bad_files(".json"), **_json_variants(bases.result_json, "signature")},
        ("out.json",))
    add("signature_build", ["signature", "build", "{}", "-o", "sig"],
        {name: generic_bad_files(".c")[name] for name in ("missing", "directory", "empty",
                                                           "garbage", "nul", "utf16", "elf")}
        | {"no_compile": _write("bad.c", "int main(void) { return x; }\n"),
           "no_main": _write("lib.c", "int helper(void) { return 1; }\n")}, ("sig",))
    # a program named like a bundled kernel is the program, even when it is not C
    out.append(Case("signature_build-elf_named_stencil", ("signature", "build", "stencil"),
                    _copy(Path(shutil.which("true") or "/bin/true"), "stencil"),
                    ("stencil.signature",)))

    # stdin: - reads a CSV profile (phasekit's own, with its # phasekit: line, is valid)
    stdin_bad = {name: make for name, make in profile_bad.items() if name in {
        "empty", "blank", "garbage", "nul", "utf16", "long_line", "header_only", "text_cell",
        "huge", "infinite", "ragged", "no_header", "wrong_profile_parquet", "wrong_trace",
        "wrong_campaign_json"}} | {"phasekit_csv": _copy(bases.profile_csv, "own.csv")}
    for verb, argv, outputs in (("analyze", ["analyze", "-", "-o", "out.json"], ("out.json",)),
                                ("info", ["info", "-", "--json"], ()),
                                ("phases", ["phases", "-", "-o", "out.json"], ("out.json",)),
                                ("watch", ["watch", "-", "--json"], ())):
        for name, make in stdin_bad.items():
            out.append(Case(f"{verb}_stdin-{name}", tuple(argv), make, outputs,
                            valid=name == "phasekit_csv", stdin=True))

    # a recording cut by SIGKILL: the missing file points to its .partial.arrows, read as is
    for verb in ("analyze", "info", "phases"):
        out.append(Case(f"{verb}-cut_recording", (verb, "{}"), _cut_recording("run.parquet")))
        out.append(Case(f"{verb}-cut_recording_partial", (verb, "{}"),
                        _cut_recording("run.parquet", partial_only=True), valid=True))

    # outputs checked before the work, written only when all of it succeeded
    valid_profile = _copy(bases.profile_csv, "profile.csv")
    valid_campaign = _copy(bases.campaign_json, "campaign.json")
    for verb, argv, make in (
            ("analyze", ["analyze", "{}"], valid_profile),
            ("phases", ["phases", "{}"], valid_profile),
            ("energy_choose", ["energy", "choose", "{}", "--no-uncertainty"], valid_campaign),
            ("energy_plot", ["energy", "plot", "{}"], valid_campaign)):
        for name, extra, maker in (
                ("plot_format", ["-o", "out.json", "--plot", "out.txt"], make),
                ("same_output", ["-o", "out.png", "--plot", "out.png"], make),
                ("output_fifo", ["-o", "out.json", "--plot", "fifo.png"],
                 _with_fifo(make, "fifo.png"))):
            if verb == "energy_plot" and name == "same_output":
                extra = ["-o", "out.json", "--plot", "out.json"]
            out.append(Case(f"{verb}-{name}", (*argv, *extra), maker,
                            ("out.json", "out.png", "out.txt")))
    return out


# --- running ------------------------------------------------------------------------------
def preload() -> None:
    """Import what the verbs import, once, before the children are forked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot
    import numba  # noqa: F401
    import pandas  # noqa: F401
    import scipy.optimize  # noqa: F401

    import phasekit.cli  # noqa: F401


def run_case(case: Case, folder: Path) -> Outcome:
    """Run ``case`` in a forked child with ``folder`` as its working directory."""
    folder.mkdir(parents=True, exist_ok=True)
    target = case.make(folder)
    before = set(os.listdir(folder))
    argv = [str(target) if a == "{}" else a for a in case.argv]
    stdin = os.open(target if case.stdin else os.devnull, os.O_RDONLY)
    out_path, err_path = folder.parent / (folder.name + ".out"), folder.parent / (folder.name
                                                                                 + ".err")
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: phasekit ARGV, its output in two files
        code = 1
        try:
            os.setpgid(0, 0)
            os.chdir(folder)
            os.environ["COLUMNS"] = "100"
            os.dup2(stdin, 0)
            for fd, path in ((1, out_path), (2, err_path)):
                handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(handle, fd)
                os.close(handle)
            sys.argv = ["phasekit", *argv]
            from phasekit.cli import entry_point

            try:
                entry_point()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(stdin)
    code = _wait(pid, case.timeout_s)
    seconds = time.monotonic() - start
    left = sorted(set(os.listdir(folder)) - before)
    return Outcome(code, out_path.read_text(errors="replace"),
                   err_path.read_text(errors="replace"), seconds, left)


def _wait(pid: int, timeout_s: float) -> int | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        select.select([], [], [], 0.01)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)  # the child and whatever it started
    os.waitpid(pid, 0)
    return None


def problems(case: Case, outcome: Outcome) -> list[str]:
    """What is wrong with how ``case`` ended (empty: it ended as a bad input should)."""
    found = []
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    if case.valid:
        if outcome.code != 0:
            found.append(f"a valid input refused (exit {outcome.code}): {lines[-1:]}")
        if "Traceback" in outcome.stderr:
            found.append("traceback")
        return found
    if outcome.code is None:
        found.append(f"hang: killed after {case.timeout_s:.0f} s")
    elif outcome.code == 0:
        if not any("warning" in line for line in lines):
            found.append("bad input accepted silently (exit 0, no warning)")
    elif outcome.code not in BAD_INPUT_CODES:
        found.append(f"exit code {outcome.code}")
    if "Traceback" in outcome.stderr:
        found.append("traceback")
    if "internal error" in outcome.stderr:
        found.append("internal error")
    if outcome.code not in (0, None) and len(lines) != 1:
        found.append(f"{len(lines)} lines on stderr")
    if outcome.code not in (0, None) and lines and not lines[-1].startswith("phasekit: error:"):
        found.append("the error line does not start with 'phasekit: error:'")
    if outcome.code != 0:
        left = [name for name in outcome.left if name in case.outputs
                or any(name.startswith(o + ".") or name.startswith("." + o)
                       for o in case.outputs)]
        if left:
            found.append("left behind: " + ", ".join(left))
    return found


def prometheus_cases(fake: str, closed: str) -> list[Case]:
    """``analyze``, ``info`` and ``phases`` on a Prometheus server that is not there, refuses
    the credentials, rejects the query, has no data, is not Prometheus or gives several series
    per node, and on missing or bad range options (``fake``: tests/fake_prometheus.py's URL,
    ``closed``: a port nothing listens on)."""
    here: Callable[[Path], Path] = lambda folder: folder  # noqa: E731 (no file: a URL)
    good = ["--start", "0", "--end", "60", "--step", "5s"]
    variants = {
        "unreachable": [closed, "-q", "up", *good],
        "auth_refused": [fake + "/auth", "-q", "up", *good],
        "bad_promql": [fake, "-q", "x=sum((", *good],
        "no_data": [fake, "-q", "nothing", *good],
        "not_prometheus": [fake, "-q", "notjson", *good],
        "several_series": [fake, "-q", "several", *good],
        "no_query": [fake, *good],
        "no_start": [fake, "-q", "up"],
        "bad_step": [fake, "-q", "up", "--start", "0", "--step", "5 parsecs"],
        "bad_time": [fake, "-q", "up", "--start", "yesterday-ish"],
        "end_before_start": [fake, "-q", "up", "--start", "100", "--end", "50"],
        "query_on_a_file": ["nothing.csv", "-q", "up", *good],
        "two_names_alike": [fake, "-q", "a=up", "-q", "a=down", *good],
    }
    return [Case(f"{verb}-prometheus_{name}", (verb, *argv), here)
            for verb in ("analyze", "info", "phases") for name, argv in variants.items()]


def main(argv: list[str] | None = None) -> int:
    """``python tests/fuzz.py FOLDER``: every case, run in FOLDER; prints one JSON object per
    case (id, exit code, seconds, problems, last stderr lines). Run in a process of its own:
    the forked cases must not inherit threads that kernels started in the parent."""
    folder = Path((argv or sys.argv[1:])[0])
    table = cases(Bases(folder / "bases"))
    folder.mkdir(parents=True, exist_ok=True)
    port_file = folder / "fake_prometheus.port"
    fake = subprocess.Popen([sys.executable, str(Path(__file__).with_name("fake_prometheus.py")),
                             str(port_file)])
    deadline = time.monotonic() + 20
    while not (port_file.exists() and port_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    table += prometheus_cases(f"prometheus://127.0.0.1:{port_file.read_text()}",
                              f"prometheus://127.0.0.1:{closed.getsockname()[1]}")
    preload()
    for index, case in enumerate(table):
        outcome = run_case(case, folder / f"case{index:04d}")
        print(json.dumps({"id": case.id, "code": outcome.code,
                          "seconds": round(outcome.seconds, 3),
                          "problems": problems(case, outcome),
                          "stderr": outcome.stderr.strip().splitlines()[-3:]}), flush=True)
    fake.kill()
    fake.wait()
    closed.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
