"""Do the commands still give the same results? Every verb run on real measurements by an
earlier revision and by this checkout, their ``-o`` JSON compared key by key.

A refactoring promises unchanged results; this checks it on data nobody here made: the 24
DCSLab counter series (``analyze`` and ``phases`` at 0.2 s), the LULESH DRAM profile
(``analyze``) and Paraver trace (``structure``), 8 PaScal campaigns (``energy fit --train
10``), 3 of them chosen from and suggested for (``energy choose|suggest --train 12``), and a
synthetic counter table and batch (``powermodel fit --model pls``, ``schedule --policy
all``). The earlier revision is checked out with ``git worktree`` into a temporary folder,
with this checkout's compiled extensions copied in (their C sources must not differ), and
both run as ``python -m phasekit.cli`` with their own ``src`` first on ``PYTHONPATH``. Keys
that time the run (``runtime_s``, ``fit_time_s``, ...) are left out, and so are notes that a
first run compiled numba's kernels (the earlier tree's cache starts empty).

Run: ``python benchmarks/same_results.py --base REV [--quick] [--results FILE]``
(``--quick``: one command per verb).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import _common

SECTION = "same_results"
TITLE = "## Same results after a change (benchmarks/same_results.py)"
SHARED = _common.HERE.parent.parent / "shared" / "data"
#: Keys whose values time the run: never the same twice.
TIMING = {"fit_time_s", "runtime_s", "elapsed_s", "solve_time_s", "time_limit_s", "time_s",
          "wall_s"}


def commands(data: Path, work: Path, quick: bool) -> list[list[str]]:
    """The commands to compare, each without its ``-o``."""
    dcslab = sorted((data / "phases" / "dcslab").rglob("*.csv"))
    pascal = sorted((data / "energy" / "pascal_dev").glob("*.csv"))
    if not dcslab or not pascal:
        raise SystemExit(f"no DCSLab series or PaScal campaigns under {data}")
    if quick:
        dcslab, pascal = dcslab[:1], pascal[:1]
    found = [[verb, str(f), "--period", "0.2"] for f in dcslab for verb in ("analyze", "phases")]
    found += [["analyze", str(data / "profiles" / "lulesh_chop8_dram_10ms.csv")],
              ["structure", str(data / "paraver" / "lulesh_chop8" / "lulesh_7+1_chop8.prv")]]
    found += [["energy", "fit", str(f), "--train", "10"] for f in pascal[:8]]
    for f in pascal[:3]:
        found += [["energy", "choose", str(f), "--train", "12", "--max-cores", "16"],
                  ["energy", "suggest", str(f), "--train", "12", "-k", "3"]]
    found += [["powermodel", "fit", str(work / "counters.csv"), "--model", "pls"],
              ["schedule", str(work / "batch.csv"), "--servers", "3", "--cores", "8",
               "--policy", "all"]]
    return found


def comparable(value: Any) -> Any:
    """``value`` without its timings and first-run compilation notes."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [comparable(v) for v in value
                if not (isinstance(v, str) and v.startswith("numba compiled"))]
    return value


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where ``a`` and ``b`` differ, as key paths."""
    if type(a) is not type(b):
        return [path or "/"]
    if isinstance(a, dict):
        return [d for k in sorted(set(a) | set(b))
                for d in ([f"{path}/{k}"] if k not in a or k not in b
                          else differences(a[k], b[k], f"{path}/{k}"))]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path} (length)"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [path]


def run(tree: Path, command: list[str], output: Path, cwd: Path) -> tuple[int, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", *command, "-o", str(output)],
                          env=env, capture_output=True, text=True, timeout=900, cwd=cwd,
                          check=False)
    if done.returncode != 0:
        return done.returncode, done.stderr.strip().splitlines()[-1:]
    return 0, comparable(json.loads(output.read_text(encoding="utf-8")))


def checkout(base: str, into: Path) -> Path:
    """The revision ``base`` in ``into``, with this checkout's compiled extensions."""
    tree = into / "base"
    subprocess.run(["git", "-C", str(_common.HERE.parent), "worktree", "add", "--detach", "-q",
                    str(tree), base], check=True)
    for built in (_common.HERE.parent / "src").rglob("*.so"):
        shutil.copy2(built, tree / built.relative_to(_common.HERE.parent))
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="one command per verb")
    parser.add_argument("--base", required=True, help="the earlier revision (a git commit)")
    parser.add_argument("--data", type=Path, default=SHARED,
                        help="the real measurements (default: those kept beside the checkout)")
    args = parser.parse_args(argv)
    bench = _common.Run()
    here = _common.HERE.parent
    with tempfile.TemporaryDirectory(prefix="same-results-") as folder:
        work = Path(folder)
        subprocess.run([sys.executable, "-m", "phasekit.cli", "synth", "counters", "--seed",
                        "1", "-o", str(work / "counters.csv")], check=True, capture_output=True)
        subprocess.run([sys.executable, "-c", "import phasekit.schedule.api as s; "
                        "b, _, _ = s.scenario('small'); s.write_batch(b, 'batch.csv')"],
                       check=True, cwd=work)
        tree = checkout(args.base, work)
        try:
            rows, same = [], 0
            for k, command in enumerate(commands(args.data, work, args.quick)):
                code_before, before = run(tree, command, work / f"before{k}.json", work)
                code_after, after = run(here, command, work / f"after{k}.json", work)
                where = ([f"exit code {code_before} -> {code_after}"]
                         if code_before != code_after else []) + differences(before, after)
                same += not where
                label = " ".join(Path(c).name if c.startswith("/") else c for c in command)
                rows.append((label, "same" if not where else "differs: " + ", ".join(where[:3])))
                print(f"{rows[-1][0]}: {rows[-1][1]}", flush=True)
        finally:
            subprocess.run(["git", "-C", str(here), "worktree", "remove", "--force",
                            str(tree)], check=False)
    changed = [r for r in rows if r[1] != "same"]
    summary = f"{same} of {len(rows)} commands give the same JSON as {args.base}"
    print(summary)
    body = "\n".join([
        TITLE, "",
        *_common.machine_lines(bench),
        f"- Command: `python benchmarks/same_results.py --base {args.base}` "
        f"({bench.elapsed() / 60:.1f} min): each command's `-o` JSON from the base revision "
        "and from this checkout, timings and first-run compilation notes left out.",
        f"- **{summary}**." + ("" if not changed else " Those that differ:"),
        "",
        *([_common.markdown_table(("command", "result"), changed, "ll")] if changed else []),
    ])
    _common.publish(SECTION, body, args.results, quick=args.quick)
    return 0 if not changed else 1


if __name__ == "__main__":
    sys.exit(main())
