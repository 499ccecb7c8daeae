"""The campaign runner (Silva 2024 §3.1, PaScal Analyzer): a program once per configuration.

For every combination of threads × cores × frequency × input and every repetition the
runner deploys the actuators (:mod:`phasekit.record.actuators`), runs the program, and reads
its sensors: wall time (begin/end), energy, the program's region markers
(:mod:`phasekit.regions`) and, optionally, a full profile through the recorder. Energy comes
from RAPL when the machine has it (package domains, read every second so that counter wraps
are caught), otherwise from an external power command (e.g. an IPMI reader) sampled every
``power_interval`` seconds and integrated with the trapezoid rule, as PaScal integrates its
IPMI samples; without either the campaign measures time only and says so, unless the user asks
for an estimate (:class:`CpuTimeEstimate`: static watts plus watts per busy core times the
program's CPU time, the utilization model tools such as CodeCarbon fall back to without a
meter), which the campaign labels as estimated.

Every run is appended to a JSON-lines log as soon as it ends (:func:`phasekit.campaign.
append_run`): an interrupted campaign keeps every finished run, and running it again with the
same output resumes (configurations already in the log are skipped; a log of another program or
measured with another energy sensor is refused, so that runs of two campaigns never mix). A
log line cut short by a crash is skipped on resume (its run is made again) and the log is
rewritten without it at the end. A run that fails (non-zero exit, timeout, command not found)
is recorded as failed with its reason and the campaign goes on; when a resume runs it again,
the new run replaces the failure (the final file holds one run per configuration and
repetition). The actuators' refusals (no cpufreq interface, too many cores) come before any
run.

Nothing of the program outlives its run or the campaign. The program runs in a process group
of its own, with no standard input; a timeout stops the whole group, and so does the end of
the run (the processes it left behind). It gets ``PR_SET_PDEATHSIG`` = SIGKILL (Linux): it is
killed when the campaign dies, however it dies, SIGKILL included; and a watchdog process
(:class:`_Watchdog`), told each run's process group, kills the group when the campaign is gone,
so that the processes the program started stop too.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from phasekit.campaign import Campaign, Run, append_run, read_campaign, write_campaign
from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.record.actuators import FrequencyActuator, affinity_setter, usable_cpus
from phasekit.regions import ENV as REGIONS_ENV
from phasekit.regions import read_regions

__all__ = ["CampaignPlan", "CpuTimeEstimate", "PowerCommandMeter", "RaplMeter", "run_campaign",
           "run_label"]

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class CampaignPlan:
    """What to run: ``command`` (argv; ``{input}`` is replaced by the input), the values of
    each actuator (None: leave it alone), repetitions, idle time between runs (Silva 2024:
    PaScal's ``--idtm``), a timeout per run, and the energy sensor."""

    command: tuple[str, ...]
    threads: tuple[int | None, ...] = (None,)
    cores: tuple[int | None, ...] = (None,)
    frequencies_ghz: tuple[float | None, ...] = (None,)
    inputs: tuple[str | None, ...] = (None,)
    repetitions: int = 1
    idle_s: float = 0.0
    timeout_s: float | None = None
    power_command: str | None = None
    power_interval_s: float = 1.0
    power_estimate_w: tuple[float, float] | None = None
    use_rapl: bool = True
    profile_dir: Path | None = None
    profile_interval_s: float = 0.1

    def __post_init__(self) -> None:
        if not self.command:
            raise UsageError("a campaign needs a program to run", parameter="command")
        if self.repetitions < 1:
            raise UsageError("expected at least 1", parameter="repetitions",
                             value=self.repetitions, option="--reps")
        if self.idle_s < 0 or (self.timeout_s is not None and self.timeout_s <= 0):
            raise UsageError("expected an idle time >= 0 and a timeout > 0",
                             parameter="idle_s, timeout_s", option="--idle, --timeout")
        if any(t is not None and t < 1 for t in self.threads):
            raise UsageError("expected positive integers", parameter="threads")
        if len(self.inputs) > 1 and not any("{input}" in a for a in self.command):
            raise UsageError("several inputs but the command has no {input} placeholder",
                             parameter="inputs")
        if self.power_estimate_w is not None and self.power_command:
            raise UsageError("give one energy sensor, not both",
                             parameter="power_estimate_w, power_command",
                             option="--power-estimate, --power-cmd")
        if self.power_estimate_w is not None and (
                len(self.power_estimate_w) != 2 or min(self.power_estimate_w) < 0
                or not any(self.power_estimate_w)):
            raise UsageError("expected (static W, per-core W): two watts >= 0 and not both 0",
                             parameter="power_estimate_w", value=self.power_estimate_w,
                             option="--power-estimate")

    def configurations(self) -> Iterator[tuple[int | None, int | None, float | None,
                                               str | None, int]]:
        """(threads, cores, frequency, input, repetition), repetitions innermost."""
        for f, p, t, n in itertools.product(self.frequencies_ghz, self.cores, self.threads,
                                            self.inputs):
            for rep in range(1, self.repetitions + 1):
                yield t, p, f, n, rep


class RaplMeter:
    """Package energy from RAPL, read every second in a thread (wraps are caught)."""

    name = "rapl"

    def __init__(self) -> None:
        from phasekit.record.sources.rapl import RaplSource

        self.source = RaplSource()
        metrics = self.source.open("node")
        self.columns = [i for i, m in enumerate(metrics) if "package" in m.name] \
            or list(range(len(metrics)))
        self._stop = threading.Event()

    def _total(self) -> float:
        values = self.source.read()
        return float(sum(values[i] for i in self.columns))

    @contextlib.contextmanager
    def measure(self) -> Iterator[dict[str, object]]:
        out: dict[str, object] = {}
        start = self._total()
        self._stop.clear()
        thread = threading.Thread(target=self._poll, daemon=True)
        thread.start()
        try:
            yield out
        finally:
            self._stop.set()
            thread.join()
            out["energy_j"] = self._total() - start

    def _poll(self) -> None:
        while not self._stop.wait(1.0):
            self._total()

    def close(self) -> None:
        self.source.close()


class PowerCommandMeter:
    """Power (W) from an external command, sampled every ``interval`` s; energy by the
    trapezoid rule over the samples (the first number the command prints is the power)."""

    name = "power"

    def __init__(self, command: str, interval: float = 1.0) -> None:
        self.argv = shlex.split(command)
        self.interval = interval
        self.sample()  # fails now, with the reason, rather than in every run

    def sample(self) -> float:
        try:
            done = subprocess.run(self.argv, capture_output=True, text=True, timeout=10,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UsageError(str(exc), parameter="power_command", value=shlex.join(self.argv),
                             option="--power-cmd") from None
        match = _NUMBER.search(done.stdout)
        if done.returncode or match is None:
            raise InputError(f"power command {shlex.join(self.argv)}: expected a power in watts "
                             f"on standard output, got {done.stdout.strip()[:80]!r} (exit "
                             f"{done.returncode})")
        return float(match.group())

    @contextlib.contextmanager
    def measure(self) -> Iterator[dict[str, object]]:
        samples: list[tuple[float, float]] = []
        stop = threading.Event()
        errors: list[BaseException] = []

        def poll() -> None:
            while True:
                try:
                    samples.append((time.time(), self.sample()))
                except Exception as exc:  # reported after the run
                    errors.append(exc)
                    return
                if stop.wait(self.interval):
                    return

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        out: dict[str, object] = {}
        try:
            yield out
        finally:
            stop.set()
            thread.join()
            samples.append((time.time(), self.sample()))
            out["sensors"] = {"power_w": tuple(samples)}
            out["energy_j"] = sum((t1 - t0) * (w0 + w1) / 2
                                  for (t0, w0), (t1, w1) in itertools.pairwise(samples))
            if errors:
                out["reason"] = f"power command failed during the run: {errors[0]}"

    def close(self) -> None:
        pass


class CpuTimeEstimate:
    """Estimated energy where no meter exists: ``static_w`` times the wall time plus
    ``core_w`` times the CPU time of the program (user + system of every child process the
    run waited for), i.e. P = static + core_w x busy cores. A model, not a measurement: the
    campaign's meta says so, and ``extra["cpu_time_s"]`` keeps the CPU time it came from."""

    name = "estimate"

    def __init__(self, static_w: float, core_w: float) -> None:
        self.static_w, self.core_w = float(static_w), float(core_w)

    @staticmethod
    def _children_cpu() -> float:
        times = os.times()
        return times.children_user + times.children_system

    @contextlib.contextmanager
    def measure(self) -> Iterator[dict[str, object]]:
        out: dict[str, object] = {}
        cpu0, wall0 = self._children_cpu(), time.monotonic()
        try:
            yield out
        finally:
            cpu = self._children_cpu() - cpu0
            wall = time.monotonic() - wall0
            out["energy_j"] = self.static_w * wall + self.core_w * cpu
            out["extra"] = {"cpu_time_s": cpu}

    def close(self) -> None:
        pass


Meter = RaplMeter | PowerCommandMeter | CpuTimeEstimate


def _energy_meter(plan: CampaignPlan) -> tuple[Meter | None, str]:
    """The energy sensor and a note on what is (not) measured."""
    if plan.power_estimate_w is not None:
        static_w, core_w = plan.power_estimate_w
        return CpuTimeEstimate(static_w, core_w), (
            f"energy ESTIMATED, not measured: {static_w:g} W static + {core_w:g} W per busy "
            "core (the program's CPU time)")
    if plan.power_command:
        return PowerCommandMeter(plan.power_command, plan.power_interval_s), \
            f"energy from --power-cmd every {plan.power_interval_s:g} s (trapezoid)"
    if plan.use_rapl:
        from phasekit.record.sources.rapl import RaplSource

        available = RaplSource().probe()
        if available.available:
            return RaplMeter(), "energy from RAPL (package domains)"
        return None, (f"energy not measured: {available.reason}; give --power-cmd to read an "
                      "external meter (an IPMI reader, a PDU), or --power-estimate to "
                      "estimate it from CPU time")
    return None, "energy not measured"


#: prctl(2) option: the signal a process gets when its parent dies (Linux).
PR_SET_PDEATHSIG = 1

#: The C library (prctl), as linked into this Python; None off Linux.
_LIBC = ctypes.CDLL(None) if sys.platform.startswith("linux") else None


def _die_with_parent(parent: int) -> None:
    """In a child before exec: be killed (SIGKILL) when the thread that forked it dies; and
    now, when that parent died already."""
    if _LIBC is None:
        return
    _LIBC.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


def _child_setup(cores: int | None, cpus: Sequence[int]) -> Callable[[], None]:
    """The ``preexec_fn`` of a run: pinned to the first ``cores`` CPUs, dies with us."""
    pin = affinity_setter(cores, cpus) if cores else None
    parent = os.getpid()

    def setup() -> None:
        _die_with_parent(parent)
        if pin is not None:
            pin()

    return setup


#: Run by the recorder in place of the program: dies with the campaign (argv[1]: its pid),
#: pins itself (argv[2]: CPUs, or ""), writes its process group to argv[3] when it leads one
#: (for the watchdog), then becomes the program.
_GUARD = """\
import ctypes, os, signal, sys
parent, cpus, group_file, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
if sys.platform.startswith("linux"):
    ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
if cpus:
    os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
if os.getpgrp() == os.getpid():
    with open(group_file + ".tmp", "w") as fh:
        fh.write(str(os.getpgrp()))
    os.rename(group_file + ".tmp", group_file)
os.execvp(argv[0], argv)
"""


def _guarded(argv: Sequence[str], cpus: Sequence[int], group_file: Path) -> list[str]:
    """``argv`` started through :data:`_GUARD` (for the recorder, which starts the program
    itself)."""
    return [sys.executable, "-S", "-c", _GUARD, str(os.getpid()),
            ",".join(map(str, cpus)), str(group_file), *argv]


#: The watchdog: reads "+GROUP" (a run's process group, or a file that will hold it) and
#: "-GROUP" (that run is over) lines; at the end of its input (the campaign ended, or died)
#: kills every group still announced.
_WATCHDOG = """\
import os, signal, sys
watched = {}
while line := sys.stdin.buffer.readline():
    kind, what = line[:1], line[1:].strip().decode()
    if kind == b"+":
        watched[what] = None
    elif kind == b"-":
        watched.pop(what, None)
for what in watched:
    try:
        group = int(open(what).read()) if what.startswith("/") else int(what)
        os.killpg(group, signal.SIGKILL)
    except (OSError, ValueError):
        pass
"""


class _Watchdog:
    """A process of its own session that kills the process group of the run in progress
    when the campaign is gone: the end of its standard input, which only the campaign holds,
    tells it, whatever killed the campaign."""

    def __init__(self, start: bool = True) -> None:
        """``start``: False for a campaign with nothing left to run (no process then)."""
        self.process: subprocess.Popen[bytes] | None = None
        if not start:
            return
        with contextlib.suppress(OSError):
            self.process = subprocess.Popen(
                [sys.executable, "-S", "-c", _WATCHDOG], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def _say(self, line: str) -> None:
        if self.process is not None and self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.write(line.encode() + b"\n")
                self.process.stdin.flush()

    @contextlib.contextmanager
    def watching(self, group: int | Path) -> Iterator[None]:
        """Kill ``group`` (a process group, or a file that will hold one) should the campaign
        die in this block."""
        self._say(f"+{group}")
        try:
            yield
        finally:
            self._say(f"-{group}")

    def close(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)


def _kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


@dataclass
class _Outcome:
    status: str = "ok"
    reason: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


def _execute(plan: CampaignPlan, argv: list[str], env: dict[str, str], cores: int | None,
             profile: Path | None, watchdog: _Watchdog, scratch: Path) -> _Outcome:
    """One run of ``argv``, guarded by ``watchdog``; ``scratch``: a folder of this run's."""
    cpus = usable_cpus()
    if profile is not None:
        from phasekit.record import Recorder, builtin_sources, select_sources

        group_file = scratch / "group"
        wrapped = _guarded(argv, cpus[:cores] if cores else (), group_file)
        saved = dict(os.environ)
        os.environ.update(env)
        try:
            with watchdog.watching(group_file):
                summary = Recorder(select_sources(None, builtin_sources()),
                                   interval=plan.profile_interval_s).run(
                    profile, command=wrapped, duration=plan.timeout_s,
                    command_stdout=subprocess.DEVNULL, command_stdin=subprocess.DEVNULL)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        outcome = _Outcome(extra={"profile": str(profile)})
        if summary.stopped_by == "duration":
            return _Outcome("failed", f"timed out after {plan.timeout_s:g} s", outcome.extra)
        if summary.exit_code:
            return _Outcome("failed", f"exit code {summary.exit_code}", outcome.extra)
        return outcome
    errors = scratch / "stderr"
    try:
        with errors.open("wb") as sink:  # a file, not a pipe: what the program leaves
            # running keeps a pipe open, and the run would wait for it
            process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=sink,
                                       process_group=0, preexec_fn=_child_setup(cores, cpus))
    except OSError as exc:
        return _Outcome("failed", f"cannot start {argv[0]}: {exc.strerror or exc}")
    with watchdog.watching(process.pid):
        try:
            process.wait(timeout=plan.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            process.wait()
            return _Outcome("failed", f"timed out after {plan.timeout_s:g} s")
        finally:  # also on an interruption; and what the program left behind
            _kill_group(process.pid)
            if process.poll() is None:
                process.wait()
    if process.returncode:
        tail = _last_line(errors)
        return _Outcome("failed", f"exit code {process.returncode}"
                        + (f": {tail[:200]}" if tail else ""))
    return _Outcome()


def _last_line(path: Path, size: int = 4096) -> str:
    """The last non-empty line of the file's last ``size`` bytes."""
    with path.open("rb") as file:
        file.seek(max(0, file.seek(0, os.SEEK_END) - size))
        lines = file.read().decode(errors="replace").strip().splitlines()
    return lines[-1].strip() if lines else ""


def run_label(plan: CampaignPlan, threads: int | None, cores: int | None,
              freq: float | None, inp: str | None, rep: int) -> str:
    """``t=2 in=large r=3``: the settings of one run that the plan sets (not those left
    alone), for the progress line."""
    parts = [f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
             for name, values, value in (("t", plan.threads, threads), ("c", plan.cores, cores),
                                         ("f", plan.frequencies_ghz, freq),
                                         ("in", plan.inputs, inp))
             if any(v is not None for v in values)]
    if plan.repetitions > 1:
        parts.append(f"r={rep}")
    return " ".join(parts)


def _check_resumable(log: Path, existing: Campaign, program: str, energy: str) -> None:
    """UsageError when the log ``existing`` (read from ``log``) is not this campaign's: another
    program, or energy from another sensor (their runs must not mix)."""
    if existing.program and existing.program != program:
        raise UsageError(f"{log} holds runs of {existing.program!r}, not of {program!r}: run "
                         "that command again to resume it, or move the log away to start anew")
    before = existing.meta.get("energy")
    if isinstance(before, str) and _gist(before) != _gist(energy):
        raise UsageError(f"{log} holds runs with {_gist(before)}, this command would give "
                         f"{_gist(energy)}: give the energy options it was started with to "
                         "resume it, or move the log away to start anew")


def _gist(note: str) -> str:
    """The energy note without its details: ``energy ESTIMATED, not measured``."""
    return note.split(":")[0].split(" (")[0]


def run_campaign(plan: CampaignPlan, output: str | os.PathLike[str], *,
                 progress: Callable[[int, int, str], None] | None = None) -> Campaign:
    """Run ``plan``, appending every run to the JSON-lines log ``output`` (resuming it when
    it exists); returns the whole campaign. ``progress(done, total, label)`` after each run,
    counted over the whole grid (and once before the first run when resuming)."""
    output = Path(output)
    existing = read_campaign(output) if output.exists() and output.stat().st_size else None
    done_keys = existing.done() if existing is not None else set()
    cores_needed = max((c for c in plan.cores if c is not None), default=0)
    if cores_needed:
        affinity_setter(cores_needed)  # refuses now when there are not enough CPUs
    frequency = None
    if any(f is not None for f in plan.frequencies_ghz):
        cpus = usable_cpus()[:cores_needed or None]
        frequency = FrequencyActuator(cpus)  # refuses now, with its reason, on a VM
        for f in plan.frequencies_ghz:
            if f is not None:
                frequency.set(f)  # checks every frequency is available before running
    meter, energy_note = _energy_meter(plan)
    program = shlex.join(plan.command)
    if existing is not None:
        try:
            _check_resumable(output, existing, program, energy_note)
        except UsageError:
            if frequency is not None:
                frequency.restore()
            if meter is not None:
                meter.close()
            raise
    meta = {"command": list(plan.command), "energy": energy_note, "idle_s": plan.idle_s,
            "timeout_s": plan.timeout_s, "hostname": os.uname().nodename,
            "kernel": os.uname().release}
    grid = list(plan.configurations())
    todo = [c for c in grid if c not in done_keys]
    total, already = len(grid), len(grid) - len(todo)
    if progress is not None and already and todo:
        progress(already, total, f"resuming {output}: {already} run(s) already done")
    watchdog = _Watchdog(start=bool(todo))
    try:
        for k, (threads, cores, freq, inp, rep) in enumerate(todo):
            if k and plan.idle_s:
                time.sleep(plan.idle_s)
            if frequency is not None and freq is not None:
                frequency.set(freq)
            env = dict(os.environ)
            if threads is not None:
                env["OMP_NUM_THREADS"] = str(threads)
            argv = [a.replace("{input}", inp) if inp is not None else a for a in plan.command]
            with tempfile.TemporaryDirectory(prefix="phasekit-run-") as tmp:
                marks = Path(tmp) / "regions.txt"
                env[REGIONS_ENV] = str(marks)
                profile = None
                if plan.profile_dir is not None:
                    plan.profile_dir.mkdir(parents=True, exist_ok=True)
                    profile = plan.profile_dir / (
                        f"t{threads}_c{cores}_f{freq}_i{inp}_r{rep}.parquet".replace("None", "-"))
                meter_ctx = meter.measure() if meter is not None \
                    else contextlib.nullcontext({})
                start_wall, start_mono = time.time(), time.monotonic_ns()
                with meter_ctx as measured:
                    outcome = _execute(plan, argv, env, cores, profile, watchdog,
                                       Path(tmp))
                stop_wall = time.time()
                regions: dict[str, tuple[tuple[float, float], ...]] = {}
                if marks.exists():
                    try:
                        for name, intervals in read_regions(marks).items():
                            regions[name] = tuple(
                                (start_wall + (a - start_mono) * 1e-9,
                                 start_wall + (b - start_mono) * 1e-9) for _, a, b in intervals)
                    except InputError as exc:
                        outcome.extra["regions_error"] = str(exc)
            reason = outcome.reason or measured.get("reason")  # type: ignore[union-attr]
            outcome.extra.update(measured.get("extra", {}))  # type: ignore[union-attr]
            run = Run(threads=threads, cores=cores, frequency_ghz=freq, input=inp,
                      repetition=rep, status=outcome.status, reason=reason,
                      start_s=start_wall, stop_s=stop_wall,
                      energy_j=measured.get("energy_j"),  # type: ignore[union-attr]
                      sensors=measured.get("sensors", {}),  # type: ignore[union-attr]
                      regions=regions, extra=outcome.extra)
            append_run(output, run, program=program,
                       inputs=[i for i in plan.inputs if i is not None], meta=meta)
            if progress is not None:
                label = run_label(plan, threads, cores, freq, inp, rep)
                progress(already + k + 1, total,
                         f"{label}: {run.status}" if label else run.status)
    finally:
        watchdog.close()
        if frequency is not None:
            frequency.restore()
        if meter is not None:
            meter.close()
    with warnings.catch_warnings(record=True) as cut:  # said once already, when resuming
        warnings.simplefilter("always", PhasekitWarning)
        campaign = read_campaign(output)
    latest = _latest_runs(campaign)
    if cut or len(latest) < len(campaign):
        # the log without the lines an earlier crash cut, nor the failures run again since
        write_campaign(latest, output)
    return latest


def _latest_runs(campaign: Campaign) -> Campaign:
    """``campaign`` without the runs that a later run of the same configuration and
    repetition replaced (a failure run again on resume), in run order."""
    last = {run.key: k for k, run in enumerate(campaign.runs)}
    if len(last) == len(campaign.runs):
        return campaign
    kept = tuple(run for k, run in enumerate(campaign.runs) if last[run.key] == k)
    return replace(campaign, runs=kept)
