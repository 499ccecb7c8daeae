"""Every command of the README and docs/*.md runs as written: doc examples are tests.

The shell commands of each page's fenced blocks (``console``: the ``$`` lines, ``\\``
continuations joined; ``bash``/``sh``: every line) run with the real ``phasekit`` entry point
in a subprocess, page by page, in order, in a fresh folder of their own, as a user would: a
command uses the files the commands before it on its page wrote, and ``tests/data`` is there
(the pages say to run them from the repository's root). Pages run two at a time.

- ``pip install X && rest`` runs ``rest`` (CI runs the install); ``python -m pytest`` is this
  suite; ``python benchmarks/S.py`` rewrites RESULTS.md, so it is only checked to be one of
  the scripts ``tests/test_benchmarks_smoke.py`` runs; ``phasekit demo`` (a 20 s recording)
  runs once for every page that shows it.
- A command ending in ``&`` runs in the background; at the end of its page a ``phasekit`` one
  must have ended with exit code 0, any other (a Dask scheduler) is stopped.
- A command whose comment says ``needs: WHAT`` needs what this machine may lack
  (:data:`NEEDS`): ``hardware counters`` runs as written where the PMU is there, else it must
  stop with one ``phasekit: error:`` line and exit code 2 or 4, and
  :func:`test_hardware_counter_commands_on_a_fake_pmu` runs it after the page's recordings
  made with a fake PMU in the recorder; ``perf`` runs as written where ``perf`` is installed,
  else the command after ``&&`` reads a recorded ``perf stat`` output; ``an IPMI power
  meter`` runs with a fake ``ipmitool`` first on the PATH for the whole page; ``a Prometheus
  server`` (the site's) runs as written and must succeed, or stop with one line and exit code
  2 or 4 where nothing answers (tests/test_prometheus.py runs the same verbs on a real one).
- Output lines shown under a ``$`` command are a sample pasted from a real run: each line
  but ``...`` and those saying ``(times vary)`` must be a line of the real output, in order.

A command that fails as written fails its page's test; nothing is skipped.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import run as run_in_process

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: What a ``# needs: WHAT`` comment may name.
NEEDS = ("hardware counters", "perf", "an IPMI power meter", "a Prometheus server")
#: Seconds one command may take (the longest here, the demo, takes about 25 s).
TIMEOUT = 300
#: The recorded ``perf stat -I`` output that stands in for ``perf`` where it is missing.
RECORDED_PERF = ROOT / "tests" / "data" / "perfstat_task.csv"

FAKE_IPMITOOL = """#!/bin/sh
# Stands in for `ipmitool dcmi power reading` (phasekit's doc tests): the load in watts.
load=$(cut -d' ' -f1 /proc/loadavg)
awk -v l="$load" 'BEGIN { srand(); printf "\\n    Instantaneous power reading:  %d Watts\\n", \\
    100 + 20 * l + 10 * rand() }'
"""


# --------------------------------------------------------------------------- the commands
@dataclass
class Command:
    """One shell command of a page: where it is, its text and the sample output under it."""

    page: str
    line: int
    text: str
    sample: list[str] = field(default_factory=list)

    @property
    def comment(self) -> str:
        at = _comment_at(self.text)
        return "" if at is None else self.text[at + 1:].strip()

    @property
    def code(self) -> str:
        """The command without its comment and without a trailing ``&``."""
        at = _comment_at(self.text)
        code = (self.text if at is None else self.text[:at]).strip()
        return code[:-1].rstrip() if self.background else code

    @property
    def background(self) -> bool:
        at = _comment_at(self.text)
        return (self.text if at is None else self.text[:at]).rstrip().endswith("&")

    @property
    def needs(self) -> str | None:
        found = re.search(r"\bneeds: (.+)$", self.comment)
        return found.group(1).strip() if found else None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text}"


def _comment_at(text: str) -> int | None:
    """Index of the ``#`` that starts a shell comment (outside quotes, after a blank)."""
    quote = None
    escaped = False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif c == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or text[i - 1].isspace()):
            return i
    return None


def page_commands(page: Path) -> list[Command]:
    """The shell commands of ``page``'s fenced ``console``, ``bash`` and ``sh`` blocks."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(ROOT).as_posix()
    out: list[Command] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^```\s*(\w*)", lines[i])
        if not fence:
            i += 1
            continue
        lang = fence.group(1)
        i += 1
        current: Command | None = None
        while i < len(lines) and not lines[i].startswith("```"):
            text, number = lines[i], i + 1
            i += 1
            shell = lang in ("bash", "sh", "shell") and text.strip() \
                and not text.lstrip().startswith("#")
            if (lang == "console" and text.startswith("$ ")) or shell:
                text = text[2:] if lang == "console" else text.strip()
                while text.endswith("\\") and i < len(lines):
                    text = text[:-1].rstrip() + " " + lines[i].strip()
                    i += 1
                current = Command(name, number, text)
                out.append(current)
            elif lang == "console" and current is not None:
                current.sample.append(text)
        i += 1
    return out


ALL = {page.relative_to(ROOT).as_posix(): page_commands(page) for page in PAGES}
#: Pages whose commands start an external program, and the markers that say which.
NEEDS_TOOLS = {"docs/signatures.md": (pytest.mark.needs_gcc, pytest.mark.needs_doxygen,
                                      pytest.mark.needs_valgrind)}


def _kind(command: Command) -> tuple[str, str]:
    """What to do with ``command``: ("run" | "skip" | "benchmark" | "demo", the code)."""
    code = command.code
    if code.startswith("pip install"):
        rest = code.split("&&", 1)
        if len(rest) == 1:
            return "skip", ""  # CI installs
        code = rest[1].strip()
    if re.match(r"python -m pytest\b", code):
        return "skip", ""  # this suite
    if re.match(r"python benchmarks/\S+\.py", code):
        return "benchmark", code
    if code == "phasekit demo":
        return "demo", code
    return "run", code


# --------------------------------------------------------------------------- running them
@dataclass
class Outcome:
    command: Command
    code: int
    stdout: str
    stderr: str
    note: str = ""
    seconds: float = 0.0


def _env(fake_bin: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    path = [str(Path(sys.executable).parent)]
    if fake_bin is not None:
        path.insert(0, str(fake_bin))
    env["PATH"] = os.pathsep.join([*path, env.get("PATH", "")])
    env["COLUMNS"] = "80"
    env.pop("PHASEKIT_SAMPLER", None)
    return env


def _shell(code: str, cwd: Path, env: dict[str, str], timeout: float = TIMEOUT
           ) -> tuple[int, str, str]:
    """Run ``code`` with bash in its own process group (killed whole on a timeout)."""
    proc = subprocess.Popen(["bash", "-c", code], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop_group(proc)
        out, err = proc.communicate()
        return -1, out, err + f"\n(timed out after {timeout} s)"
    return proc.returncode, out, err


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM then SIGKILL to the process group this test started for ``proc``."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _has_pmu() -> bool:
    from phasekit.record.sources.perf_event import PerfHardwareSource

    return sys.platform.startswith("linux") and PerfHardwareSource().probe().available


def _fails_cleanly(code: int, err: str) -> bool:
    lines = [line for line in err.splitlines() if line.strip()]
    return code in (2, 4) and len(lines) == 1 and lines[0].startswith("phasekit: error:")


def _workdir(base: Path, page: str) -> Path:
    work = base / re.sub(r"\W", "_", page)
    work.mkdir(parents=True)
    (work / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    return work


def run_page(page: str, base: Path, demo: concurrent.futures.Future[Outcome]) -> list[Outcome]:
    """Run ``page``'s commands in order in a folder of their own; one outcome each."""
    work = _workdir(base, page)
    commands = ALL[page]
    fake_bin = None
    if any(c.needs == "an IPMI power meter" for c in commands):
        fake_bin = work.parent / f"{work.name}-bin"
        fake_bin.mkdir()
        (fake_bin / "ipmitool").write_text(FAKE_IPMITOOL)
        (fake_bin / "ipmitool").chmod(0o755)
    env = _env(fake_bin)
    outcomes: list[Outcome] = []
    background: list[tuple[Command, subprocess.Popen, Path]] = []
    shown_demo: list[Command] = []
    try:
        for command in commands:
            kind, code = _kind(command)
            if kind == "skip":
                continue
            if kind == "benchmark":
                outcomes.append(_benchmark(command, code))
                continue
            if kind == "demo":
                shown_demo.append(command)  # nothing after it reads its folder: checked last
                continue
            if command.background:
                log = work.parent / f"{work.name}-bg{len(background)}.log"
                with open(log, "w") as handle:
                    proc = subprocess.Popen(["bash", "-c", code], cwd=work, env=env,
                                            stdin=subprocess.DEVNULL, stdout=handle,
                                            stderr=subprocess.STDOUT, start_new_session=True)
                background.append((command, proc, log))
                continue
            note = ""
            if command.needs == "hardware counters" and not _has_pmu():
                rc, out, err = _shell(code, work, env)
                ok = _fails_cleanly(rc, err)
                outcomes.append(Outcome(command, 0 if ok else rc or 1, out, err,
                                        "no PMU: stopped with one line" if ok else
                                        "no PMU: expected exit 2 or 4 and one error line"))
                continue
            if command.needs == "a Prometheus server":  # the site's: tests/test_prometheus.py
                rc, out, err = _shell(code, work, env)  # runs the verbs on a real one
                ok = rc == 0 or _fails_cleanly(rc, err)
                outcomes.append(Outcome(command, 0 if ok else rc or 1, out, err,
                                        "ran on a server" if rc == 0 else "no server here: "
                                        "stopped with one line" if ok else
                                        "no server: expected exit 2 or 4 and one error line"))
                continue
            if command.needs == "perf" and shutil.which("perf") is None:
                head, _, code = code.partition("&&")
                written = re.search(r"-o (\S+)", head)
                shutil.copyfile(RECORDED_PERF, work / (written.group(1) if written else "perf.csv"))
                note = f"no perf: {RECORDED_PERF.name} stands in for `{head.strip()}`"
            start = time.monotonic()
            rc, out, err = _shell(code, work, env)
            outcomes.append(Outcome(command, rc, out, err, note, time.monotonic() - start))
    finally:
        for command, proc, log in background:
            if command.code.startswith("phasekit"):
                try:
                    rc = proc.wait(timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    _stop_group(proc)
                    rc = -1
                outcomes.append(Outcome(command, rc, "", log.read_text(), "background"))
            else:
                _stop_group(proc)
                outcomes.append(Outcome(command, 0, "", log.read_text(), "background, stopped"))
    for command in shown_demo:
        shared = demo.result()
        outcomes.append(Outcome(command, shared.code, shared.stdout, shared.stderr, "shared run",
                                shared.seconds))
    return outcomes


def _benchmark(command: Command, code: str) -> Outcome:
    script = code.split()[1]
    smoke = (ROOT / "tests" / "test_benchmarks_smoke.py").read_text(encoding="utf-8")
    ok = (ROOT / script).is_file() and Path(script).name in smoke
    return Outcome(command, 0 if ok else 1, "", "",
                   "benchmark: run by test_benchmarks_smoke.py" if ok else
                   f"{script} is missing or not in tests/test_benchmarks_smoke.py")


@pytest.fixture(scope="module")
def doc_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Outcome]]:
    """Every page run, two pages at a time; the demo once, beside them (it mostly sleeps:
    its workload is paced)."""
    base = tmp_path_factory.mktemp("doc-commands")
    pages = [p for p, cmds in ALL.items() if cmds]
    demo_dir = _workdir(base, "demo")

    def run_demo() -> Outcome:
        began = time.monotonic()
        outcome = Outcome(Command("demo", 0, "phasekit demo"),
                          *_shell("phasekit demo", demo_dir, _env()))
        outcome.seconds = time.monotonic() - began
        return outcome

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as aside, \
            concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        demo = aside.submit(run_demo)
        futures = {page: pool.submit(run_page, page, base, demo) for page in pages}
        return {page: future.result() for page, future in futures.items()}


def _sample_mismatch(outcome: Outcome) -> str | None:
    """The first sample line not found, in order, in the real output (None: all found)."""
    wanted = [line.rstrip() for line in outcome.command.sample
              if line.strip() and line.strip() != "..." and "(times vary)" not in line]
    real = [line.rstrip() for line in (outcome.stdout + outcome.stderr).splitlines()]
    at = 0
    for line in wanted:
        try:
            at = real.index(line, at) + 1
        except ValueError:
            return line
    return None


# --------------------------------------------------------------------------- the tests
def test_pages_have_commands() -> None:
    counts = {page: len(cmds) for page, cmds in ALL.items()}
    assert counts["README.md"] >= 15, counts
    for cmds in ALL.values():
        for command in cmds:
            assert command.needs in (None, *NEEDS), f"{command}: unknown need"


def test_the_real_entry_point_runs_them() -> None:
    found = shutil.which("phasekit", path=_env()["PATH"])
    assert found is not None and Path(found).parent == Path(sys.executable).parent, found


@pytest.mark.slow
@pytest.mark.parametrize("page", [pytest.param(page, marks=NEEDS_TOOLS.get(page, ()))
                                  for page, cmds in ALL.items() if cmds])
def test_page_commands_run_as_written(page: str, doc_runs: dict[str, list[Outcome]]) -> None:
    failed = []
    for o in doc_runs[page]:
        if o.code != 0:
            failed.append(f"{o.command}\n  exit {o.code} {o.note}\n  stderr: "
                          + "\n  ".join(o.stderr.strip().splitlines()[-5:]))
        elif o.command.sample and (line := _sample_mismatch(o)) is not None:
            failed.append(f"{o.command}\n  sample line not in the real output: {line!r}")
    assert not failed, "\n".join(failed)


@pytest.mark.slow
def test_the_demo_runs(doc_runs: dict[str, list[Outcome]]) -> None:
    demo = next(o for o in doc_runs["README.md"] if o.note == "shared run")
    assert demo.code == 0, demo.stderr
    assert "report" in demo.stdout


# --------------------------------------------------------------------------- a fake PMU
def _fake_pmu() -> object:
    from phasekit.record.sources.base import Availability, Metric, Source
    from phasekit.record.sources.perf_event import HARDWARE_EVENTS

    class FakePMU(Source):
        """perf-hw with readings made up from the node's real CPU time (/proc/stat): cycles
        at 2.5 GHz of busy time, an IPC and a cache miss ratio swinging with a 0.4 s period."""

        name = "perf-hw"
        METRICS = tuple(Metric(e.name, "", "counter") for e in HARDWARE_EVENTS)

        def __init__(self) -> None:
            self.totals = dict.fromkeys((m.name for m in self.METRICS), 0.0)
            self.busy = self._busy_s()

        @staticmethod
        def _busy_s() -> float:
            with open("/proc/stat") as handle:
                fields = [float(v) for v in handle.readline().split()[1:]]
            return (sum(fields[:3]) + sum(fields[5:8])) / os.sysconf("SC_CLK_TCK")

        def probe(self) -> Availability:
            return Availability(self.name, True, metrics=self.METRICS)

        def open(self, scope: str, pid: int | None = None) -> tuple[Metric, ...]:
            return self.METRICS

        def read(self) -> list[float]:
            busy = self._busy_s()
            cycles = 2.5e9 * max(busy - self.busy, 0.0) + 1e6
            self.busy = busy
            swing = math.sin(2 * math.pi * time.monotonic() / 0.4)
            t = self.totals
            t["cycles"] += cycles
            t["ref_cycles"] += cycles
            t["instructions"] += cycles * (1.2 + 0.6 * swing)
            t["cache_references"] += 0.02 * cycles
            t["cache_misses"] += 0.02 * cycles * (0.3 - 0.2 * swing)
            t["branches"] += 0.15 * cycles
            t["branch_misses"] += 0.002 * cycles
            return [t[m.name] for m in self.METRICS]

    return FakePMU()


def _record_output(command: Command) -> str:
    """The file a ``phasekit record`` command writes (``-o``), NUL when it names none."""
    words = shlex.split(command.code)
    for option in ("-o", "--output"):
        if option in words[: words.index("--") if "--" in words else len(words)]:
            return words[words.index(option) + 1]
    return "\0"


@contextlib.contextmanager
def _pmu_recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import phasekit.record as record

    real = record.builtin_sources
    monkeypatch.setattr(record, "builtin_sources",
                        lambda: [_fake_pmu(), *[s for s in real() if s.name != "perf-hw"]])
    yield
    monkeypatch.setattr(record, "builtin_sources", real)


@pytest.mark.slow
def test_hardware_counter_commands_on_a_fake_pmu(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``needs: hardware counters`` command, after the recordings its page made before
    it, made with a fake PMU in the recorder (``phasekit record`` in this process)."""
    monkeypatch.setenv("PATH", _env()["PATH"])
    marked = [(page, i) for page, cmds in ALL.items() for i, c in enumerate(cmds)
              if c.needs == "hardware counters"]
    assert marked, "no command needs hardware counters any more: drop this test"
    for page, index in marked:
        work = _workdir(tmp_path, f"{page}-{index}")
        monkeypatch.chdir(work)
        commands = ALL[page]
        target = commands[index]
        steps = [c for c in commands[:index] if c.code.startswith("phasekit record ")
                 and _record_output(c) in target.code]
        steps.append(target)
        for command in steps:
            if command.code.startswith("phasekit record "):
                with _pmu_recorder(monkeypatch):
                    code, _, err = run_in_process(*shlex.split(command.code)[1:])
            else:
                code, _, err = _shell(command.code, work, _env())
            assert code == 0, f"{command} (fake PMU): exit {code}: {err.strip()}"
