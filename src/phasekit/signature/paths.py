"""Independent execution paths, one executable per path, instructions per path (Salinas Hilburg 2020,
4.1.1-4.1.3: the "Call Graph Set", "Estimation of Executed Instructions" and "Application
Signature" modules).

Paths (Algorithm 1). Every root-to-leaf path of the call graph from ``main``, depth first, the
callees of a function in the order of their first call in the source: main -> {A, B},
B -> {C, D} gives main->A, main->B->C, main->B->D. Recursion and cycles (the thesis does not
say): a call to a function already on the current path (``f`` calling ``f``, or ``f -> g ->
f``) is not followed; it stays inside that path, and a function whose callees are all on the
current path is a leaf. A function reached from two callers (a DAG) is on two paths, as the
program calls it twice. More than ``max_paths`` paths is a UsageError (the count grows
exponentially with the depth of real programs: build the signature of a kernel, not of a
whole code).

Executables. Every path binary starts at main (the input set up in main is there) and keeps
only the calls along its path: a call ``u(...) -> v`` in the source stays when ``u -> v`` is an
edge of the path, or when ``v`` is on the path before ``u`` (recursion); every other call from
a function on the path to a function of the program is removed; library calls always stay.
Removing edges rather than names matters when a path function is also called from elsewhere
(main -> A -> C and main -> C: the first path must not call C from main). A removed call that
is a whole statement (``f(x);``) becomes ``(void)0;``; a call whose value is used becomes
``0`` (and the build says where: the path then computes with a 0 where the program had a
value). Line breaks inside a removed call are kept, so compiler messages point at the
original lines. The copies are compiled with the program's compiler and flags.

Instructions (module 2). The thesis estimates them statically (disassembly times loop trip
counts). Here they are counted exactly on short runs: valgrind's callgrind (any machine) or,
where hardware counters exist, perf's instructions counter. With ``steps_arg`` (the program
argument that is the trip count of its main loop, such as a number of time steps) every
executable is counted at small trip counts (``probe_steps``, 1 and 2 by default) and the
count is extrapolated linearly to the real one, I(k) = alpha + beta k, which is exact when
every loop runs a number of times fixed by the input, as in the bundled kernels (the thesis's
"extrapolated with loop trip counts where they are known"); with three or more probe values
the largest relative residual of the line says how exact. Without ``steps_arg`` each
executable is counted at the real arguments (exact, but callgrind runs tens of times slower
than the program).

Exclusive counts. Every executable repeats main's own code (its input setup), and paths that
share a prefix (main->B->C, main->B->D) repeat B's own code. So that the paths add up to the
program, each path is paired with a *reference* executable: main alone (the ``base``: every
call from main to the program removed) for the first path through a prefix, or the shared
prefix alone (``prefix``: main->B with B's calls removed) for the next ones. The path's
instructions are its executable's minus its reference's, and the program's estimate is
I_base + sum over paths (eq. 4.1 plus main's own code, counted once). The manager measures
times the same way (path minus reference). The unmodified program (``original``) is counted
too when asked, for the instruction error of eq. 4.13.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, PhasekitError, UnsupportedError, UsageError
from phasekit.io.inputs import input_file, read_json
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.signature.callgraph import CallGraph, CallSite, call_graph

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = [
    "KERNELS",
    "SIMULATED_KERNEL_ARGS",
    "InstructionCount",
    "Signature",
    "Unit",
    "build_signature",
    "check_signature_directory",
    "independent_paths",
    "kept_edges",
    "kernel_source",
    "load_signature",
    "remove_calls",
    "signature_directory",
    "sites_to_remove",
]

KIND = "signature"
VERSION = 1
#: Trip counts the executables are counted at (our choice: the two smallest non-trivial ones;
#: 0 is avoided, since a program may treat it as "use the default").
PROBE_STEPS = (1, 2)
#: Most paths accepted (our choice: a signature of a kernel, not of a whole application).
MAX_PATHS = 64
#: Seconds one instruction-count run may take.
PROBE_TIMEOUT = 1800.0
SIGNATURE_FILE = "signature.json"
#: The bundled kernels (``phasekit/data/kernels``): default arguments (N, STEPS; a full run
#: of a second or two on one core of a 2020s server) and the trip-count argument.
KERNELS: dict[str, tuple[tuple[str, ...], int]] = {
    "stream": (("2000000", "200"), 2),
    "dgemm": (("256", "25"), 2),
    "stencil": (("1000", "300"), 2),
}
#: Smaller arguments of the bundled kernels for ``--mode simulated`` (callgrind's cache
#: simulation runs them some 100 times slower): full runs of about 0.1 s of simulated time.
SIMULATED_KERNEL_ARGS: dict[str, tuple[str, ...]] = {
    "stream": ("20000", "300"), "dgemm": ("48", "100"), "stencil": ("120", "300")}

Progress = Callable[[str, float], None]


# --- paths -----------------------------------------------------------------------------------
def independent_paths(graph: CallGraph, *, max_paths: int = MAX_PATHS
                      ) -> tuple[tuple[str, ...], ...]:
    """Root-to-leaf paths of ``graph`` (Algorithm 1; recursion: module docstring)."""
    paths: list[tuple[str, ...]] = []
    stack: list[tuple[str, ...]] = [(graph.root,)]
    while stack:
        path = stack.pop()
        children = [c for c in graph.callees(path[-1]) if c not in path]
        if not children:
            paths.append(path)
            if len(paths) > max_paths:
                raise UsageError(f"{graph.source}: more than {max_paths} independent paths "
                                 "from main; build the signature of a smaller program (a "
                                 "kernel) or raise max_paths")
            continue
        stack.extend((*path, c) for c in reversed(children))
    return tuple(paths)


def kept_edges(nodes: Sequence[str]) -> set[tuple[str, str]]:
    """Calls a path keeps: its edges, and calls back to a function earlier on it."""
    kept = {(nodes[i], nodes[i + 1]) for i in range(len(nodes) - 1)}
    for i, caller in enumerate(nodes):
        kept.update((caller, earlier) for earlier in nodes[:i + 1])
    return kept


def sites_to_remove(graph: CallGraph, nodes: Sequence[str]) -> tuple[CallSite, ...]:
    """Call sites to remove so that only ``nodes`` (a path from the root) runs."""
    on_path = set(nodes)
    kept = kept_edges(nodes)
    return tuple(s for s in graph.sites
                 if s.caller in on_path and (s.caller, s.callee) not in kept)


def remove_calls(text: str, sites: Sequence[CallSite]) -> str:
    """``text`` with each call of ``sites`` replaced: ``(void)0`` for a whole statement,
    ``0`` inside an expression; line breaks inside a call are kept. A call nested in the
    arguments of another removed call goes with it."""
    chosen: list[CallSite] = []
    for site in sorted(sites, key=lambda s: (s.start, -s.end)):
        if chosen and site.start < chosen[-1].end:
            continue  # inside the previous removed call
        chosen.append(site)
    out = text
    for site in reversed(chosen):
        replaced = out[site.start:site.end]
        if not replaced.startswith(site.callee):
            raise InputError(f"the call to {site.callee} at line {site.line} is not where the "
                             "call graph says (the source changed since it was read)")
        token = "(void)0" if site.statement else "0"
        out = out[:site.start] + token + "\n" * replaced.count("\n") + out[site.end:]
    return out


def kernel_source(name: str) -> Path:
    """The C file of a bundled kernel (KERNELS)."""
    from importlib import resources

    if name not in KERNELS:
        raise UsageError(f"no bundled kernel of that name; the kernels are "
                         f"{', '.join(KERNELS)}", parameter="name", value=name)
    return Path(str(resources.files("phasekit") / "data" / "kernels" / f"{name}.c"))


# --- results ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class InstructionCount:
    """Instructions of one executable: the counts measured (``probes``: trip count, count;
    trip count None = the real arguments), the line I(k) = alpha + beta k through them, and
    the count at the program's real arguments (``at_args``)."""

    probes: tuple[tuple[int | None, float], ...]
    alpha: float
    beta: float
    at_args: float
    residual: float = math.nan  # largest |count - line| / count over the probes (3+ probes)

    def at(self, steps: int | None) -> float:
        """Instructions at trip count ``steps`` (None: the real arguments)."""
        if steps is None:
            return self.at_args
        return self.alpha + self.beta * steps

    @staticmethod
    def fit(probes: Sequence[tuple[int | None, float]], steps: int | None) -> InstructionCount:
        if steps is None or any(k is None for k, _ in probes):
            count = float(probes[-1][1])
            return InstructionCount(tuple(probes), count, 0.0, count)
        k = np.array([p[0] for p in probes], float)
        counts = np.array([p[1] for p in probes], float)
        beta, alpha = np.polyfit(k, counts, 1)
        residual = math.nan
        if len(probes) > 2:
            residual = float(np.max(np.abs(counts - (alpha + beta * k)) / counts))
        return InstructionCount(tuple((int(a), float(b)) for a, b in probes), float(alpha),
                                float(beta), float(alpha + beta * steps), residual)

    def to_dict(self) -> dict[str, Any]:
        return {"probes": [[k, c] for k, c in self.probes], "alpha": self.alpha,
                "beta": self.beta, "at_args": self.at_args, "residual": self.residual}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> InstructionCount:
        residual = data.get("residual")
        return InstructionCount(tuple((None if k is None else int(k), float(c))
                                      for k, c in data["probes"]),
                                float(data["alpha"]), float(data["beta"]),
                                float(data["at_args"]),
                                math.nan if residual is None else float(residual))


@dataclass(frozen=True)
class Unit:
    """One executable of the signature.

    ``kind``: "path" (an independent path), "base" (main alone), "prefix" (a shared prefix of
    paths, its last function's calls removed) or "original" (the program unmodified).
    ``reference``: for a path, the unit whose instructions and time are subtracted.
    ``removed``: lines of the calls removed from the source. ``source`` and ``binary`` are
    relative to the signature directory.
    """

    name: str
    kind: str
    nodes: tuple[str, ...]
    reference: str | None = None
    removed: tuple[int, ...] = ()
    value_calls: tuple[int, ...] = ()  # removed calls whose value was used (replaced by 0)
    source: str | None = None
    binary: str | None = None
    count: InstructionCount | None = None
    status: str = "ok"
    reason: str = ""

    @property
    def label(self) -> str:
        if self.kind == "original":
            return "program"
        if self.kind == "base":
            return f"{self.nodes[0]} (own code)"
        return "->".join(self.nodes)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "nodes": list(self.nodes),
                "label": self.label, "reference": self.reference,
                "removed_call_lines": list(self.removed),
                "value_call_lines": list(self.value_calls), "source": self.source,
                "binary": self.binary, "status": self.status, "reason": self.reason,
                "instructions": None if self.count is None else self.count.to_dict()}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Unit:
        count = data.get("instructions")
        return Unit(str(data["name"]), str(data["kind"]), tuple(data["nodes"]),
                    data.get("reference"), tuple(int(x) for x in data.get("removed_call_lines",
                                                                          ())),
                    tuple(int(x) for x in data.get("value_call_lines", ())),
                    data.get("source"), data.get("binary"),
                    None if count is None else InstructionCount.from_dict(count),
                    str(data.get("status", "ok")), str(data.get("reason", "")))


@dataclass(frozen=True)
class Signature(Result):
    """An application signature (Salinas Hilburg 2020, 2.1): the executables of the independent paths of
    one program for one input, with their instruction counts.

    ``args`` are the program's arguments; ``steps_arg`` (1-based, as argv) the one that is the
    trip count of its main loop, or None. ``directory`` is where the executables are (set when
    the signature is built or loaded; not stored). ``workdir`` is the directory the program
    runs in (relative input files).
    """

    program: str
    source: str
    cc: str
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...]
    args: tuple[str, ...]
    steps_arg: int | None
    counter: str
    graph: CallGraph
    paths: tuple[tuple[str, ...], ...]
    units: tuple[Unit, ...]
    build_time_s: float
    workdir: str
    notes: tuple[str, ...] = ()
    created: str = ""
    directory: str = field(default="", compare=False)

    KIND: ClassVar[str] = KIND

    # --- lookups -------------------------------------------------------------------------
    @property
    def steps(self) -> int | None:
        """The real trip count (the value of ``steps_arg``), or None."""
        return None if self.steps_arg is None else int(self.args[self.steps_arg - 1])

    def unit(self, name: str) -> Unit:
        for u in self.units:
            if u.name == name:
                return u
        raise KeyError(name)

    @property
    def base(self) -> Unit:
        return next(u for u in self.units if u.kind == "base")

    @property
    def path_units(self) -> tuple[Unit, ...]:
        return tuple(u for u in self.units if u.kind == "path")

    @property
    def original(self) -> Unit | None:
        return next((u for u in self.units if u.kind == "original"), None)

    def argv(self, unit: Unit | str, steps: int | None = None) -> list[str]:
        """Command line of ``unit`` at trip count ``steps`` (None: the real arguments)."""
        if isinstance(unit, str):
            unit = self.unit(unit)
        if unit.binary is None:
            raise UsageError(f"{unit.label}: no executable ({unit.reason or unit.status})")
        args = list(self.args)
        if steps is not None:
            if self.steps_arg is None:
                raise UsageError("this signature was built without a trip-count argument "
                                 "(steps_arg): it runs with its real arguments only",
                                 parameter="steps", value=steps)
            args[self.steps_arg - 1] = str(int(steps))
        return [str(Path(self.directory) / unit.binary), *args]

    def path_instructions(self, unit: Unit | str, steps: int | None = None) -> float:
        """I_EP of a path: its executable's instructions minus its reference's (at
        ``steps``; None: the real arguments). NaN when either was not counted."""
        if isinstance(unit, str):
            unit = self.unit(unit)
        if unit.count is None:
            return math.nan
        if unit.reference is None:
            return unit.count.at(steps)
        ref = self.unit(unit.reference)
        if ref.count is None:
            return math.nan
        return unit.count.at(steps) - ref.count.at(steps)

    @property
    def instructions_estimate(self) -> float:
        """I_app estimate: main's own code once plus every path that was counted (eq. 4.1)."""
        base = self.base.count
        total = base.at_args if base is not None else math.nan
        for u in self.path_units:
            if u.ok:
                total += max(self.path_instructions(u), 0.0)
        return total

    @property
    def instructions_program(self) -> float:
        """Instructions of the unmodified program when counted (else NaN)."""
        original = self.original
        if original is None or original.count is None:
            return math.nan
        return original.count.at_args

    @property
    def instruction_error(self) -> float:
        """Eq. 4.13 in percent (NaN when the program was not counted)."""
        real = self.instructions_program
        return abs(real - self.instructions_estimate) / real * 100 if real else math.nan

    # --- JSON --------------------------------------------------------------------------
    def __repr__(self) -> str:
        return short_repr(
            self, self.program, f"{len(self.units)} units", f"{len(self.paths)} paths",
            self.counter)

    def to_dict(self) -> dict[str, Any]:
        return plain({
            "kind": KIND, "version": VERSION, "program": self.program, "source": self.source,
            "cc": self.cc, "cflags": list(self.cflags), "ldflags": list(self.ldflags),
            "args": list(self.args), "steps_arg": self.steps_arg, "steps": self.steps,
            "counter": self.counter, "workdir": self.workdir, "created": self.created,
            "build_time_s": self.build_time_s, "notes": list(self.notes),
            "paths": [list(p) for p in self.paths],
            "units": [u.to_dict() for u in self.units],
            "instructions": {
                "per_path": {u.label: self.path_instructions(u) for u in self.path_units},
                "main_own_code": None if self.base.count is None else self.base.count.at_args,
                "estimate": self.instructions_estimate,
                "program": self.instructions_program,
                "error_percent": self.instruction_error},
            "graph": self.graph.to_dict(),
        })

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str | None = None,
                  directory: str | os.PathLike[str] = "") -> Signature:
        check_version(data, KIND, VERSION, source)
        try:
            return cls(
                str(data["program"]), str(data["source"]), str(data["cc"]),
                tuple(data["cflags"]), tuple(data["ldflags"]), tuple(data["args"]),
                None if data.get("steps_arg") is None else int(data["steps_arg"]),
                str(data["counter"]), CallGraph.from_dict(data["graph"], source),
                tuple(tuple(p) for p in data["paths"]),
                tuple(Unit.from_dict(u) for u in data["units"]),
                float(data["build_time_s"]), str(data.get("workdir", ".")),
                tuple(data.get("notes", ())), str(data.get("created", "")), str(directory))
        except PhasekitError:  # a nested part's own message (an InputError is a ValueError)
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed signature: {exc!r}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """One row per executable: name, kind, label (the path), status, and its
        instructions at the real arguments (a path's less its reference's: I_EP; NaN when
        not counted)."""
        import pandas as pd

        def instructions(u: Unit) -> float:
            if u.kind == "path":
                return self.path_instructions(u)
            return math.nan if u.count is None else u.count.at_args

        return pd.DataFrame([{"name": u.name, "kind": u.kind, "label": u.label,
                              "status": u.status, "instructions": instructions(u)}
                             for u in self.units],
                            columns=["name", "kind", "label", "status", "instructions"])

    def present(self, name: str | None = None) -> Presentation:
        """The headline (paths, instructions estimated, how far from the program's count),
        the executables (``name``: the program, default its file's) and the build's notes
        (:mod:`phasekit.signature.present`)."""
        from phasekit.signature.present import signature_presentation

        return signature_presentation(self, name)

    def plot(self, ax: Axes | None = None) -> Figure:
        """Instructions of main's own code and of each independent path (horizontal bars),
        with the program's when it was counted."""
        from phasekit.plot.energy import target_axes

        table = self.summary()
        table = table[table["kind"].isin(["base", "path", "original"])]
        fig, ax = target_axes(ax, height=max(2.5, 0.35 * len(table) + 1.2))
        colours = {"base": "tab:gray", "path": "tab:blue", "original": "black"}
        y = np.arange(len(table))
        ax.barh(y, table["instructions"].fillna(0.0), color=[colours[k] for k in table["kind"]])
        ax.set_yticks(y, labels=list(table["label"]))
        ax.invert_yaxis()
        ax.set_xlabel("instructions")
        error = self.instruction_error
        ax.set_title(f"{self.program}: signature of {len(self.path_units)} paths"
                     + (f", estimate off by {error:.2g} %" if math.isfinite(error) else ""),
                     fontsize="medium")
        ax.grid(True, axis="x", alpha=0.3)
        return fig

    def save(self, directory: str | os.PathLike[str] | None = None) -> Path:
        """Write ``signature.json`` into the signature directory (atomically); a path ending
        in ``.json`` is the file to write instead (the :class:`Result` contract)."""
        from phasekit.io.atomic import atomic_write_text

        given = Path(directory or self.directory)
        target = given if given.suffix.lower() == ".json" else given / SIGNATURE_FILE
        atomic_write_text(target, json.dumps(self.to_dict(), indent=2) + "\n")
        return target


def load_signature(path: str | os.PathLike[str]) -> Signature:
    """Read a signature directory (or its ``signature.json``)."""
    path = Path(path)
    file = path / SIGNATURE_FILE if path.is_dir() else path
    if path.is_dir() and not file.exists():
        raise InputError("not a signature: no signature.json (build one with 'phasekit "
                         "signature build')", path=str(path))
    data = read_json(file, "a signature (signature.json)")
    if not isinstance(data, dict):
        raise InputError("expected a JSON object (a signature)", path=str(file))
    return Signature.from_dict(data, str(file), file.parent.resolve())


# --- compiling -------------------------------------------------------------------------------
_COMPILER_MESSAGE = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
                               r"(?:fatal )?error:\s*(?P<msg>.*)$", re.M)


def compile_c(cc: str, cflags: Sequence[str], ldflags: Sequence[str], source: Path,
              output: Path) -> tuple[int | None, str] | None:
    """Compile ``source`` into ``output``; None when it compiles, else (line, message)."""
    command = [cc, *cflags, "-o", str(output), str(source), *ldflags]
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              check=False, timeout=600)  # a binary source: binary messages
    except OSError as exc:
        raise UnsupportedError(f"cannot run the compiler {cc}: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        return None, f"{shlex.join(command)} did not finish within 600 s"
    if done.returncode == 0:
        return None
    text = done.stderr or done.stdout
    match = _COMPILER_MESSAGE.search(text)
    if match:
        return int(match.group("line")), f"error: {match.group('msg').strip()}"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # a link error: the linker's own line ("undefined reference to `main'") says most
    for key in ("undefined reference", "error:", "error"):
        found = [ln for ln in lines if key in ln]
        if found:
            return None, found[0].split(": ", 1)[-1] if key == "undefined reference" \
                else found[0]
    return None, (lines[0] if lines else f"{cc} exited with status {done.returncode}")


# --- counting instructions -------------------------------------------------------------------
def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def exit_reason(returncode: int, stderr: str = "") -> str:
    """Why a run failed, in words: the signal or the exit status, and the last message."""
    if returncode < 0:
        what = f"crashed ({_signal_name(-returncode)})"
    elif returncode > 128 and "Process terminating with default action of signal" in stderr:
        what = f"crashed ({_signal_name(returncode - 128)})"
    else:
        what = f"exited with status {returncode}"
    lines = [ln for ln in stderr.splitlines()
             if ln.strip() and not ln.startswith("==") and "valgrind" not in ln.lower()]
    return what + (f": {lines[-1].strip()[:200]}" if lines else "")


def callgrind_events(argv: Sequence[str], *, cwd: str | None = None,
                     timeout: float | None = PROBE_TIMEOUT, options: Sequence[str] = (),
                     valgrind: str = "valgrind") -> dict[str, float]:
    """The event totals of one run of ``argv`` under callgrind (``Ir`` always; cache and
    branch events with ``options`` such as ``--cache-sim=yes``). RuntimeError with the reason
    when the program fails or outlives ``timeout``."""
    exe = shutil.which(valgrind)
    if exe is None:
        raise UnsupportedError("valgrind not found: instructions are counted with callgrind "
                               "where no hardware counter exists (Debian: apt-get install "
                               "valgrind)")
    with tempfile.TemporaryDirectory(prefix="phasekit-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        command = [exe, "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-line=no",
                   "--dump-instr=no", "--compress-strings=no", *options, *argv]
        try:
            done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True, errors="replace", check=False, timeout=timeout,
                                  cwd=cwd)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"did not finish within {timeout:g} s under callgrind") from None
        if done.returncode != 0:
            raise RuntimeError(exit_reason(done.returncode, done.stderr))
        try:
            text = out.read_text(encoding="utf-8", errors="replace")
        except OSError:
            raise RuntimeError("callgrind wrote no output") from None
    events = re.search(r"^events:\s*(.+)$", text, re.M)
    totals = re.search(r"^(?:summary|totals):\s*(.+)$", text, re.M)
    if events is None or totals is None:
        raise RuntimeError("no event totals in callgrind's output")
    names = events.group(1).split()
    values = [float(v) for v in totals.group(1).split()]
    counts = dict(zip(names, values, strict=False))
    if "Ir" not in counts:
        raise RuntimeError("no instruction total in callgrind's output")
    return counts


def count_callgrind(argv: Sequence[str], *, cwd: str | None = None,
                    timeout: float = PROBE_TIMEOUT, valgrind: str = "valgrind") -> float:
    """Instructions (Ir) of one run of ``argv`` under callgrind. RuntimeError with the reason
    when the program fails."""
    return callgrind_events(argv, cwd=cwd, timeout=timeout, valgrind=valgrind)["Ir"]


def count_perf(argv: Sequence[str], *, cwd: str | None = None,
               timeout: float = PROBE_TIMEOUT) -> float:
    """Instructions retired by one run of ``argv`` (perf_event hardware counter, counting
    from the program's exec, user and kernel space when allowed)."""
    from phasekit.record.recorder import PausedChild
    from phasekit.record.sources.perf_event import PerfHardwareSource

    source = PerfHardwareSource(events=["instructions"], enable_on_exec=True)
    previous = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        child = PausedChild(list(argv), subprocess.DEVNULL)
    finally:
        os.chdir(previous)
    try:
        source.open("process", child.pid)
        child.release()
        try:
            child.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"did not finish within {timeout:g} s") from None
        count = source.read()[0]
        code = child.process.returncode
        if code:
            raise RuntimeError(exit_reason(code))
        return float(count)
    finally:
        source.close()
        child.abandon(1.0)


def hardware_instructions_available() -> bool:
    from phasekit.record.sources.perf_event import PerfHardwareSource

    try:
        availability = PerfHardwareSource(events=["instructions"]).probe()
    except Exception:
        return False
    return availability.available


def _choose_counter(counter: str) -> str:
    if counter not in ("auto", "callgrind", "perf"):
        raise UsageError("expected auto, callgrind or perf", parameter="counter", value=counter)
    if counter == "auto":
        return "perf" if hardware_instructions_available() else "callgrind"
    if counter == "perf" and not hardware_instructions_available():
        raise UnsupportedError("counter perf: no hardware instructions counter here (see "
                               "'phasekit sources'); use callgrind")
    return counter


# --- building --------------------------------------------------------------------------------
def _units(graph: CallGraph, paths: Sequence[tuple[str, ...]]) -> list[Unit]:
    """base, one unit per path with its reference, the shared prefixes (module docstring)."""
    units = [Unit("base", "base", (graph.root,))]
    prefixes: dict[tuple[str, ...], str] = {}
    previous: tuple[str, ...] | None = None
    real_paths = [p for p in paths if len(p) > 1]
    for index, path in enumerate(real_paths, start=1):
        reference = "base"
        if previous is not None:
            shared = 0
            while shared < min(len(path), len(previous)) and path[shared] == previous[shared]:
                shared += 1
            prefix = path[:shared]
            if len(prefix) > 1:
                if prefix not in prefixes:
                    prefixes[prefix] = f"prefix{len(prefixes) + 1}"
                    units.append(Unit(prefixes[prefix], "prefix", prefix))
                reference = prefixes[prefix]
        units.append(Unit(f"path{index}", "path", path, reference))
        previous = path
    return units


def _check_args(args: Sequence[str], steps_arg: int | None) -> None:
    if steps_arg is None:
        return
    if not 1 <= steps_arg <= len(args):
        raise UsageError(f"the program has {len(args)} argument(s) (1 is the first)",
                         parameter="steps_arg", value=steps_arg)
    try:
        value = int(args[steps_arg - 1])
    except ValueError:
        raise UsageError(f"argument {args[steps_arg - 1]!r} is not a whole number of steps",
                         parameter="steps_arg", value=steps_arg) from None
    if value < 0:
        raise UsageError(f"{value} steps is negative", parameter="steps_arg", value=steps_arg)


def build_signature(source: str | os.PathLike[str], directory: str | os.PathLike[str], *,
                    args: Sequence[str] = (), cflags: Sequence[str] = ("-O2",),
                    ldflags: Sequence[str] = ("-lm",), cc: str = "cc",
                    steps_arg: int | None = None,
                    probe_steps: Sequence[int] = PROBE_STEPS, counter: str = "auto",
                    count_program: bool = True, max_paths: int = MAX_PATHS,
                    workers: int | None = None, workdir: str | None = None,
                    doxygen: str = "doxygen", progress: Progress | None = None) -> Signature:
    """Build the signature of C program ``source`` run with ``args`` into ``directory``.

    Compiles the program (InputError naming the file, the line and the compiler's message
    when it does not compile), extracts its call graph and paths, writes and compiles one
    source per executable (``directory/src``, ``directory/bin``), and counts their
    instructions (module docstring), ``workers`` at a time (default: the usable cores). A
    path whose copy does not compile or whose executable fails is kept in the signature as
    failed with its reason; the others go on. Everything is built in a temporary sibling of
    ``directory``, renamed onto it at the end (:func:`signature_directory`): a build that
    fails leaves nothing, and a signature being rebuilt stays as it was until the new one is
    complete.
    """
    started = time.perf_counter()
    source = input_file(source, "a C program")  # a FIFO or a device: refused, not waited on
    directory = Path(directory)
    args = tuple(str(a) for a in args)
    cflags, ldflags = tuple(cflags), tuple(ldflags)
    _check_args(args, steps_arg)
    probe_steps = tuple(sorted({int(k) for k in probe_steps}))
    if steps_arg is not None and (len(probe_steps) < 2 or probe_steps[0] < 0):
        raise UsageError("give at least two different non-negative trip counts",
                         parameter="probe_steps")
    if shutil.which(cc) is None:
        raise UnsupportedError(f"compiler {cc} not found")
    try:
        text = source.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=str(source)) from None
    counter = _choose_counter(counter)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with signature_directory(directory) as building:
        signature = _build(source, text, building, args=args, cflags=cflags, ldflags=ldflags,
                           cc=cc, steps_arg=steps_arg, probe_steps=probe_steps,
                           counter=counter, count_program=count_program, max_paths=max_paths,
                           workers=workers, workdir=workdir, doxygen=doxygen,
                           report=progress or (lambda stage, fraction: None), started=started)
    return replace(signature, directory=str(directory.resolve()))


def check_signature_directory(directory: str | os.PathLike[str]) -> None:
    """UsageError unless ``directory`` can take a signature: absent (in an existing folder),
    empty, or holding a signature (which a build replaces)."""
    directory = Path(directory)
    named = _directory_parameter(directory)
    if directory.exists() or directory.is_symlink():
        if not directory.is_dir():
            raise UsageError("exists and is not a directory", **named)
        if not (directory / SIGNATURE_FILE).exists() and any(directory.iterdir()):
            raise UsageError("exists, is not empty and holds no signature; give a new "
                             "directory", **named)
    elif not directory.parent.is_dir():
        raise UsageError(f"directory {directory.parent} does not exist", **named)


def _directory_parameter(directory: Path) -> dict[str, Any]:
    """How a UsageError names the signature's directory: the parameter ``directory``, the
    command line's ``-o``."""
    return {"parameter": "directory", "value": os.fspath(directory), "option": "-o"}


@contextlib.contextmanager
def signature_directory(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a new temporary sibling of ``directory`` to build in; when the block succeeds it
    is renamed onto ``directory`` (a signature there is replaced), when it raises it is
    removed and ``directory`` is left as it was (:func:`check_signature_directory` first)."""
    directory = Path(directory)
    check_signature_directory(directory)
    try:
        building = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}.",
                                         suffix=".building"))
    except OSError as exc:
        raise UsageError(f"cannot write in {directory.parent} ({exc.strerror or exc})",
                         **_directory_parameter(directory)) from None
    old: Path | None = None
    try:
        yield building
        if directory.exists():
            old = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}.",
                                        suffix=".old"))
            os.replace(directory, old)  # an empty folder or the signature being rebuilt
        os.replace(building, directory)
    except BaseException:
        if old is not None and not directory.exists():
            os.replace(old, directory)  # the rename failed: the old signature stays
        elif old is not None:
            shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(building, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _build(source: Path, text: str, directory: Path, *, args: tuple[str, ...],
           cflags: tuple[str, ...], ldflags: tuple[str, ...], cc: str, steps_arg: int | None,
           probe_steps: tuple[int, ...], counter: str, count_program: bool, max_paths: int,
           workers: int | None, workdir: str | None, doxygen: str, report: Progress,
           started: float) -> Signature:
    """:func:`build_signature`'s work, in ``directory`` (a new, empty folder)."""
    (directory / "src").mkdir()
    (directory / "bin").mkdir()
    notes: list[str] = []

    report("compiling the program", 0.0)
    original_src = directory / "src" / "program.c"
    original_src.write_text(text, encoding="utf-8", errors="surrogateescape")
    failed = compile_c(cc, cflags, ldflags, original_src, directory / "bin" / "program")
    if failed is not None:
        line, message = failed
        raise InputError(f"does not compile ({shlex.join([cc, *cflags])}): {message}",
                         path=str(source), line=line)

    report("call graph (Doxygen)", 0.05)
    graph = call_graph(source, text=text, doxygen=doxygen)
    paths = independent_paths(graph, max_paths=max_paths)
    units = _units(graph, paths)
    if count_program:
        units.append(Unit("original", "original", (), source="src/program.c",
                          binary="bin/program"))

    report("compiling the paths", 0.1)
    built: list[Unit] = []
    for unit in units:
        if unit.kind == "original":
            built.append(unit)
            continue
        removed = sites_to_remove(graph, unit.nodes)
        edited = remove_calls(text, removed)
        src = directory / "src" / f"{unit.name}.c"
        src.write_text(edited, encoding="utf-8", errors="surrogateescape")
        value_calls = tuple(s.line for s in removed if not s.statement)
        unit = replace(unit, removed=tuple(s.line for s in removed), value_calls=value_calls,
                       source=f"src/{unit.name}.c")
        if value_calls:
            notes.append(f"{unit.label}: the value of the call(s) removed at line(s) "
                         f"{', '.join(map(str, sorted(set(value_calls))))} is replaced by 0")
        failed = compile_c(cc, cflags, ldflags, src, directory / "bin" / unit.name)
        if failed is not None:
            line, message = failed
            where = f"{src.name}:{line}: " if line else f"{src.name}: "
            unit = replace(unit, status="failed",
                           reason=f"does not compile after removing calls: {where}{message}")
        else:
            unit = replace(unit, binary=f"bin/{unit.name}")
        built.append(unit)

    provisional = Signature(source.name, str(source.resolve()), cc, cflags, ldflags, args,
                            steps_arg, counter, graph, paths, tuple(built), 0.0,
                            str(Path(workdir or os.getcwd()).resolve()),
                            directory=str(directory.resolve()))
    counted = _count_all(provisional, probe_steps, counter, workers, report)
    base = next(u for u in counted if u.kind == "base")
    if not base.ok:
        raise InputError(f"{base.label}: {base.reason}; without it no path can be measured",
                         path=str(source))
    original = next((u for u in counted if u.kind == "original"), None)
    if original is not None and not original.ok:
        raise InputError(f"the program {original.reason} with arguments "
                         f"{shlex.join(args) or '(none)'}", path=str(source))
    for unit in counted:
        if unit.kind == "path" and not unit.ok:
            notes.append(f"{unit.label}: {unit.reason}; left out (it may depend on data "
                         "that another path computes, the thesis's limitation)")
        if unit.count is not None and unit.count.residual > 1e-3:
            notes.append(f"{unit.label}: instructions are not linear in the trip count "
                         f"(residual {unit.count.residual:.2%}); the extrapolation is "
                         "approximate")
    signature = replace(provisional, units=tuple(counted),
                        build_time_s=time.perf_counter() - started, notes=tuple(notes),
                        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    for unit in signature.path_units:
        if unit.ok and signature.path_instructions(unit) <= 0:
            notes.append(f"{unit.label}: no instruction of its own beyond its reference's; "
                         "its segment is empty")
    signature = replace(signature, notes=tuple(notes))
    signature.save()
    report("done", 1.0)
    return signature


def _count_all(signature: Signature, probe_steps: tuple[int, ...], counter: str,
               workers: int | None, report: Progress) -> list[Unit]:
    """Instruction counts of every unit that compiled, ``workers`` runs at a time."""
    steps = signature.steps
    plan: list[tuple[int, int | None]] = []
    for index, unit in enumerate(signature.units):
        if unit.binary is None:
            continue
        for k in (probe_steps if steps is not None else (None,)):
            plan.append((index, k))
    count = count_perf if counter == "perf" else count_callgrind
    results: dict[tuple[int, int | None], float | str] = {}
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if counter == "perf":
        workers = 1  # native runs are short, and count_perf changes the working directory

    def one(item: tuple[int, int | None]) -> tuple[tuple[int, int | None], float | str]:
        index, k = item
        argv = signature.argv(signature.units[index], k)
        try:
            return item, count(argv, cwd=signature.workdir)
        except UnsupportedError:  # no valgrind, no counters: not this run's failure
            raise
        except RuntimeError as exc:
            return item, str(exc)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for done, (item, value) in enumerate(pool.map(one, plan), start=1):
            results[item] = value
            report(f"counting instructions ({counter})", 0.1 + 0.9 * done / max(len(plan), 1))
    out: list[Unit] = []
    for index, unit in enumerate(signature.units):
        if unit.binary is None:
            out.append(unit)
            continue
        values = [(k, results[(index, k)]) for k in (probe_steps if steps is not None
                                                      else (None,))]
        errors = [v for _, v in values if isinstance(v, str)]
        if errors:
            where = "" if steps is None else " (trip count " + ", ".join(
                str(k) for k, v in values if isinstance(v, str)) + ")"
            out.append(replace(unit, status="failed", reason=f"{errors[0]}{where}"))
            continue
        probes = [(k, float(v)) for k, v in values]
        out.append(replace(unit, count=InstructionCount.fit(probes, steps)))
    return out
