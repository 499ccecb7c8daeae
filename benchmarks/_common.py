"""Shared helpers of the benchmark scripts: machine description, tables, RESULTS.md sections.

Each script owns one section of ``benchmarks/RESULTS.md``, delimited by
``<!-- NAME:start -->`` and ``<!-- NAME:end -->``, and rewrites only that section.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import importlib.metadata
import os
import platform
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
TITLE = (
    "# phasekit benchmarks\n\n"
    "Written by the scripts in this folder (see README.md); each script rewrites only its own "
    "section, between its markers. Figures are wall times on the machine named in each section.\n"
)
PACKAGES = ("phasekit", "numpy", "scipy", "numba", "scikit-learn", "tslearn", "dtaidistance",
            "matplotlib")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def ram_gib() -> float:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return float("nan")


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def versions(names: Sequence[str] = PACKAGES) -> str:
    parts = []
    for name in names:
        try:
            parts.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{name} (not installed)")
    return ", ".join(parts)


def git_state() -> str:
    """Short commit of the working tree, flagged when src/ has uncommitted changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=HERE.parent,
                               text=True, capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" + uncommitted changes in src/" if dirty else "")


def src_digest() -> str:
    """Digest of the phasekit sources (src/**/*.py), to tell whether they changed mid-run."""
    sha = hashlib.sha1()
    for path in sorted((HERE.parent / "src").rglob("*.py")):
        sha.update(str(path.relative_to(HERE.parent)).encode())
        sha.update(path.read_bytes())
    return sha.hexdigest()[:10]


class Run:
    """What is recorded at the start of a benchmark run: time, load and source digest."""

    def __init__(self) -> None:
        import time

        self.started = time.perf_counter()
        self.load = load_average()
        self.digest = src_digest()

    def elapsed(self) -> float:
        import time

        return time.perf_counter() - self.started


def arg_parser(doc: str | None, *, quick: str) -> argparse.ArgumentParser:
    """The options every benchmark has: ``--quick`` (what it does: ``quick``) and
    ``--results``; the description is the first paragraph of ``doc``."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument("--results", type=Path, default=None,
                        help="RESULTS.md to update (default benchmarks/RESULTS.md; "
                             "not written in --quick mode unless given)")
    return parser


def cores_used() -> str:
    """The CPU affinity of this run, as ``taskset -c`` would take it."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return "cores: unknown"
    if len(cpus) == os.cpu_count():
        return f"all {len(cpus)} cores"
    word = "One core" if len(cpus) == 1 else f"{len(cpus)} cores"
    return f"{word}, `taskset -c {','.join(map(str, cpus))}`"


def machine_lines(run: Run | None = None) -> list[str]:
    """Markdown bullet lines describing the machine and the run."""
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    source = f"phasekit commit {git_state()}, sources digest {src_digest()}"
    if run is not None and run.digest != src_digest():
        source += (f" (**the sources changed during the run**: digest {run.digest} at its "
                   "start)")
    lines = [
        f"- Date: {now}; {source}",
        f"- Machine: {cpu_model()}, {os.cpu_count()} cores, {ram_gib():.1f} GiB RAM, "
        f"{platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}; {versions()}",
    ]
    if run is not None:
        lines.append(f"- Load average (1/5/15 min) before the run: {run.load}; after: "
                     f"{load_average()} (the machine may be shared with other jobs)")
    return lines


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]],
                   align: str | None = None) -> str:
    """A GitHub markdown table; ``align`` is one letter per column (l/r), right by default."""
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---:" if a == "r" else ":---" for a in align]
    lines = ["| " + " | ".join(str(h) for h in header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def text_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned table for the terminal."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for k, row in enumerate(cells):
        out.append("  ".join(c.rjust(w) if i else c.ljust(w)
                             for i, (c, w) in enumerate(zip(row, widths, strict=True))))
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def write_section(name: str, body: str, path: Path = RESULTS) -> Path:
    """Replace the ``name`` section of ``path`` (appended when absent), atomically."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else TITLE
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text, count=1)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def publish(name: str, body: str, results: Path | None, *, quick: bool) -> None:
    """Write section ``name`` of ``results`` (default RESULTS.md; nothing in quick mode unless
    a file is given) and say so."""
    target = results or (None if quick else RESULTS)
    if target is not None:
        write_section(name, body, target)
        print(f"\nwrote the {name} section of {target}")


def finish(name: str, body: str, args: argparse.Namespace) -> int:
    """Print section ``name``'s ``body`` and publish it as ``args`` (``--results``,
    ``--quick``) say; the exit code."""
    print()
    print(body)
    publish(name, body, args.results, quick=args.quick)
    return 0


def seconds(value: float) -> str:
    """A duration with about three significant digits."""
    if value != value:  # NaN
        return "n/a"
    if value >= 100:
        return f"{value:.0f} s"
    if value >= 10:
        return f"{value:.1f} s"
    if value >= 0.1:
        return f"{value:.2f} s"
    return f"{value * 1000:.0f} ms"
