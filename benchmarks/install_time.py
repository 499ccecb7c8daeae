"""Installation as a new user meets it: ``pip install .`` from a clean clone into a fresh
virtual environment, without pip's cache, then the first commands.

Each round clones the repository's HEAD into a temporary folder, makes a venv, and times
``pip install --no-cache-dir .`` (the build compiles the C kernels and runs the numba
warm-up into the wheel). It then lists what the install left in the checkout (``git status
--ignored``: nothing is the goal), and times the first ``phasekit demo --synthetic`` and the
first and second ``phasekit schedule`` of a 66-task batch with ``--time-limit 5s`` (their
plans must be the same: no kernel compiles after the install).

Run: ``python benchmarks/install_time.py`` (about 2 minutes a round on 2 cores; ``--rounds``).
``--quick`` only prints what a round does: the install is the measurement, and has no
smaller version.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common

SECTION = "install_time"
ROOT = Path(__file__).resolve().parent.parent
TITLE = "## Installing from a clean clone (`benchmarks/install_time.py`)"


def timed(argv: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=3600)
    return time.perf_counter() - started, done


def one_round(scratch: Path) -> dict[str, object]:
    checkout, venv = scratch / "phasekit", scratch / "venv"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(checkout)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install_s, done = timed([str(venv / "bin" / "pip"), "install", "-q", "--no-cache-dir", "."],
                            checkout)
    if done.returncode:
        raise SystemExit(f"pip install failed:\n{done.stderr[-2000:]}")
    left = subprocess.run(["git", "status", "--short", "--ignored"], cwd=checkout,
                          capture_output=True, text=True, check=True).stdout.split("\n")
    phasekit = str(venv / "bin" / "phasekit")
    demo_s, done = timed([phasekit, "demo", "--synthetic"], scratch)
    batch = scratch / "batch.csv"
    subprocess.run([str(venv / "bin" / "python"), "-c",
                    "from phasekit.schedule.batch import write_batch\n"
                    "from phasekit.synth.batches import generate_batch\n"
                    f"write_batch(generate_batch(66, seed=0), {str(batch)!r})"], check=True)
    plans, times = [], []
    for k in range(2):
        out = scratch / f"schedule{k}.json"
        seconds, done = timed([phasekit, "schedule", str(batch), "--servers", "5", "--cores",
                               "12", "--time-limit", "5s", "-o", str(out)], scratch)
        if done.returncode:
            raise SystemExit(f"phasekit schedule failed:\n{done.stderr[-2000:]}")
        policies = json.loads(out.read_text())["policies"]
        plans.append([p.get("order") for p in policies])
        times.append(seconds)
    return {"install_s": install_s, "left": [line for line in left if line.strip()],
            "demo_s": demo_s, "schedule_s": times, "same_plan": plans[0] == plans[1]}


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="print what a round does, install nothing")
    parser.add_argument("--rounds", type=int, default=1, help="installs to time (default 1)")
    args = parser.parse_args(argv)
    if args.quick:
        print("a round: git clone, python -m venv, pip install --no-cache-dir ., phasekit demo "
              "--synthetic, phasekit schedule (66 tasks, --time-limit 5s) twice")
        return 0
    bench = _common.Run()
    rounds = []
    for k in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="phasekit-install-") as scratch:
            rounds.append(one_round(Path(scratch)))
        print(f"round {k + 1}: {rounds[-1]}", file=sys.stderr, flush=True)
    header = ["round", "pip install --no-cache-dir . (s)", "left in the checkout",
              "first `phasekit demo --synthetic` (s)", "`phasekit schedule` first, second (s)",
              "same plan"]
    rows = [[k + 1, f"{r['install_s']:.1f}", ", ".join(r["left"]) or "nothing",  # type: ignore[arg-type]
             f"{r['demo_s']:.2f}", ", ".join(f"{s:.2f}" for s in r["schedule_s"]),  # type: ignore[attr-defined]
             "yes" if r["same_plan"] else "no"] for k, r in enumerate(rounds)]
    print(_common.text_table(header, rows))
    body = "\n".join([
        TITLE, "",
        *_common.machine_lines(bench),
        f"- Command: `python benchmarks/install_time.py --rounds {args.rounds}`. Each round: a "
        "clean clone of HEAD, a fresh venv, `pip install --no-cache-dir .` (dependencies from "
        "the package index, the C kernels and the numba warm-up built into the wheel), then "
        "the first commands of the installed package. The load average says whether other "
        "jobs shared the machine: the install's time depends on it.",
        "",
        _common.markdown_table(header, rows, "rrlrrl"),
    ])
    _common.publish(SECTION, body, args.results, quick=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
