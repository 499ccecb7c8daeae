"""The demo's built-in iterative workload: a main loop whose period is known in advance.

``python -m phasekit.record.workload --iterations 60`` runs a main loop in which every
iteration does, each step for a fixed share of a fixed wall-clock period (so the period does
not depend on the machine's speed and a test can check the analysis finds it):

1. compute-bound: floating-point arithmetic on a small array that stays in cache;
2. memory-bound: a fresh large array is touched page by page (page faults) and streamed;
3. I/O: a block is written to a scratch file and flushed to disk (fsync);
4. idle: sleep until the iteration's end;

and every ``checkpoint_every`` iterations a checkpoint writes a larger file (an aperiodic
excursion between iterations, as the OpenFOAM-like profile of Phase-TA has; none after the
last iteration, where it would only lengthen the recording's aperiodic tail). Prints one line per iteration
with ``--verbose``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from phasekit.io.atomic import atomic_write_text

__all__ = ["Workload", "main"]


@dataclass(frozen=True)
class Workload:
    """Shares of the iteration period per step (they sum to 1 with the idle rest)."""

    period: float = 0.4
    compute: float = 0.35
    memory: float = 0.25
    io: float = 0.15
    memory_mb: int = 48
    io_kb: int = 256
    io_blocks: int = 4
    checkpoint_every: int = 10
    checkpoint_s: float = 0.3
    checkpoint_mb: int = 16

    def run(self, iterations: int, directory: str | None = None, verbose: bool = False,
            log: str | None = None) -> None:
        """Run ``iterations`` iterations; with ``log``, write each iteration's start and end
        (wall-clock seconds since the epoch, as a recording's ``start_utc``) to that JSON
        file when the run ends: the truth an analysis of its recording is checked against."""
        spans: list[tuple[float, float]] = []
        small = np.random.default_rng(0).random(4096)
        block = os.urandom(self.io_kb * 1024)
        checkpoint_block = os.urandom(1 << 20)
        with tempfile.TemporaryDirectory(prefix="phasekit-workload-", dir=directory) as scratch:
            scratch_file = os.path.join(scratch, "step.dat")
            checkpoint_file = os.path.join(scratch, "checkpoint.dat")
            start = time.monotonic()
            for i in range(iterations):
                begin = time.monotonic()
                wall_begin = time.time()
                _compute(small, begin + self.compute * self.period)
                _memory(self.memory_mb, begin + (self.compute + self.memory) * self.period)
                _write(scratch_file, block, begin + (self.compute + self.memory + self.io)
                       * self.period, limit_blocks=self.io_blocks)
                _sleep_until(begin + self.period)
                spans.append((wall_begin, wall_begin + time.monotonic() - begin))
                if self._checkpoint_after(i, iterations):
                    _write(checkpoint_file, checkpoint_block, time.monotonic() + self.checkpoint_s,
                           limit_blocks=self.checkpoint_mb)
                    _sleep_until(begin + self.period + self.checkpoint_s)
                if verbose:
                    print(f"iteration {i + 1}/{iterations} at {time.monotonic() - start:.3f} s",
                          flush=True)
        if log is not None:
            atomic_write_text(log, json.dumps({"period_s": self.period, "iterations": spans}))


    def _checkpoint_after(self, index: int, iterations: int) -> bool:
        """Whether iteration ``index`` (from 0) ends with a checkpoint: every
        ``checkpoint_every``-th one, except the last of the run."""
        done = index + 1
        return bool(self.checkpoint_every) and done % self.checkpoint_every == 0 \
            and done < iterations


def _compute(data: np.ndarray, until: float) -> None:
    value = data.copy()
    while time.monotonic() < until:
        for _ in range(20):
            value = np.sqrt(value * value + 1.0) - 0.5


def _memory(megabytes: int, until: float) -> None:
    while time.monotonic() < until:
        fresh = np.empty(megabytes << 17)  # float64: megabytes MB, new pages every pass
        fresh[::512] = 1.0  # touch every page (4 KiB = 512 float64)
        total = float(fresh[::8].sum())
        del fresh, total


def _write(path: str, block: bytes, until: float, limit_blocks: int) -> None:
    written = 0
    with open(path, "wb") as fh:
        while True:
            fh.write(block)
            fh.flush()
            os.fsync(fh.fileno())
            written += 1
            if time.monotonic() >= until or written >= limit_blocks:
                break
    _sleep_until(until)


def _sleep_until(deadline: float) -> None:
    delay = deadline - time.monotonic()
    if delay > 0:
        time.sleep(delay)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m phasekit.record.workload",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--period", type=float, default=Workload.period,
                        help="seconds per iteration (default %(default)s)")
    parser.add_argument("--checkpoint-every", type=int, default=Workload.checkpoint_every,
                        help="iterations between checkpoints, 0 for none")
    parser.add_argument("--dir", default=None, help="scratch directory (default: the system's)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--log", default=None,
                        help="write each iteration's start and end (epoch seconds) to this "
                             "JSON file")
    args = parser.parse_args(argv)
    if args.iterations < 1 or args.period <= 0:
        parser.error("--iterations and --period must be positive")
    Workload(period=args.period, checkpoint_every=args.checkpoint_every).run(
        args.iterations, directory=args.dir, verbose=args.verbose, log=args.log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
