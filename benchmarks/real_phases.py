"""Record real programs run back to back, with the true change points: the real-data fixture
for phase detection, so that it is judged on real data, not only on generated data.

A driver runs real programs one after the other, each for a fixed time (``timeout``),
under ``phasekit record`` (node scope, every source that works here, 1 s sampling as in
Tsafack Chetsa et al.), and logs when each one starts and ends; the recording and its truth
(``FILE.truth.json``: segments with labels, change times in seconds from the recording's
start) are written to ``--output`` (default tests/data/real_backtoback_1s.parquet).

Programs (all real, from the base system and numpy): ``numpy`` (dense matrix products:
floating-point compute), ``gzip`` (compression of pseudo-random data: integer compute and
kernel time reading /dev/urandom), ``dd`` (1 MiB direct writes: disk and I/O wait),
``sort`` (``shuf`` then ``sort -n`` of 10 million numbers: memory and CPU), ``stream`` (numpy
array copies: memory bandwidth), ``idle`` (sleep). Run it on an otherwise idle machine:
the sources are node-wide.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE.parent / "tests" / "data" / "real_backtoback_1s.parquet"

PROGRAMS = {
    "numpy": [sys.executable, "-c",
              "import numpy as np\na = np.random.rand(600, 600)\nwhile True: a = (a @ a) / 600"],
    "gzip": ["sh", "-c", "while :; do head -c 50000000 /dev/urandom | gzip -6 > /dev/null; done"],
    "dd": ["sh", "-c", "while :; do dd if=/dev/zero of={dir}/dd.bin bs=1M count=200 "
                       "oflag=direct status=none; done"],
    "sort": ["sh", "-c", "while :; do seq 1 10000000 | shuf | sort -n > /dev/null; done"],
    "stream": [sys.executable, "-c",
               "import numpy as np\na = np.ones(25_000_000)\nb = np.empty_like(a)\n"
               "while True: np.copyto(b, a); np.copyto(a, b)"],
    "idle": ["sleep", "3600"],
}
#: The sequence: (program, seconds); recurring programs test identification.
SEQUENCE = [("numpy", 30), ("idle", 20), ("gzip", 30), ("dd", 30), ("idle", 20), ("sort", 30),
            ("stream", 30), ("numpy", 30), ("gzip", 30), ("idle", 20), ("dd", 30)]

DRIVER = r"""
import json, subprocess, sys, time
plan = json.loads(sys.argv[1])
log = []
for label, seconds, argv in plan:
    start = time.time()
    subprocess.run(["timeout", "-s", "KILL", str(seconds), *argv], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    log.append([label, start, time.time()])
with open(sys.argv[2], "w") as fh:
    json.dump(log, fh)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every program's duration (0.1 for a quick try)")
    args = parser.parse_args(argv)

    from phasekit.io import read_profile
    from phasekit.record import Recorder, builtin_sources, select_sources

    scratch = args.output.parent
    log_file = args.output.with_name(args.output.name + ".log.json")
    plan = [(label, max(1.0, seconds * args.scale),
             [a.replace("{dir}", str(scratch)) for a in PROGRAMS[label]])
            for label, seconds in SEQUENCE]
    sources = select_sources(None, builtin_sources())
    print(f"recording {len(plan)} programs, about {sum(p[1] for p in plan):.0f} s, with "
          f"{', '.join(s.name for s in sources)} ...", file=sys.stderr)
    started = time.time()
    Recorder(sources, interval=args.interval).run(
        args.output, command=[sys.executable, "-c", DRIVER, json.dumps(plan), str(log_file)])
    profile = read_profile(args.output)
    start = profile.meta["recording"]["start_utc"]
    import datetime as _dt

    t0 = _dt.datetime.fromisoformat(start).timestamp()
    log = json.loads(log_file.read_text())
    log_file.unlink()
    (scratch / "dd.bin").unlink(missing_ok=True)
    segments = [{"label": label, "start_s": round(a - t0, 3), "end_s": round(b - t0, 3)}
                for label, a, b in log]
    truth = {"kind": "real-phases", "version": 1, "interval_s": args.interval,
             "segments": segments,
             "change_times_s": [s["start_s"] for s in segments[1:]],
             "recorded": {"host": profile.meta["recording"]["host"],
                          "sources": [s.name for s in sources],
                          "wall_s": round(time.time() - started, 1)},
             "programs": {k: " ".join(v) for k, v in PROGRAMS.items()}}
    truth_file = args.output.with_name(args.output.name + ".truth.json")
    truth_file.write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output} ({profile.n_samples} samples) and {truth_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
