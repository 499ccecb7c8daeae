"""Back-to-back sequences of real recorded runs, with their junctions as the true change points.

Real counter series of single applications (one table per run, the same metrics in each) are
cut and put one after the other, as if the applications had run back to back on one node:
the truth is where one run ends and the next starts. benchmarks/phases_real.py builds its real phase-detection
benchmark this way from the dcslab perf series (200 ms rows,
4-6 applications, up to 300 rows each). The generator is seeded; the runs are the caller's
(phasekit ships none of them: see :func:`read_headed_table` for the one-header-line CSV they
come in).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.profile import Profile

__all__ = ["BackToBack", "back_to_back", "common_metrics", "read_headed_table"]


@dataclass(frozen=True, eq=False)
class BackToBack:
    """A sequence: its profile, the run of each segment, and the change points (the row
    where each run after the first starts)."""

    profile: Profile
    runs: tuple[str, ...]
    change_points: tuple[int, ...]
    offsets: tuple[int, ...]


def read_headed_table(path: str | Path) -> tuple[tuple[str, ...], np.ndarray]:
    """A CSV of one header line of metric names and rows of numbers, no time column (the
    dcslab series); an InputError names the file and the line of a bad row."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        raise InputError("empty file: expected a header line of metric names", path=path)
    names = tuple(h.strip() for h in lines[0].split(","))
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split(",")
        if len(cells) != len(names):
            raise InputError(f"line {number}: {len(cells)} values, expected {len(names)}",
                             path=path)
        try:
            rows.append([float(c) for c in cells])
        except ValueError:
            raise InputError(f"line {number}: expected numbers", path=path) from None
    return names, np.array(rows, dtype=np.float64).reshape(len(rows), len(names))


def common_metrics(runs: Mapping[str, tuple[Sequence[str], np.ndarray]]) -> tuple[str, ...]:
    """The metrics every run has, in the first run's order."""
    tables = list(runs.values())
    if not tables:
        raise UsageError("no runs to build a sequence from")
    shared = set.intersection(*(set(names) for names, _ in tables))
    return tuple(m for m in tables[0][0] if m in shared)


def back_to_back(runs: Mapping[str, tuple[Sequence[str], np.ndarray]], *, seed: int,
                 period: float = 0.2, n_runs: tuple[int, int] = (4, 6),
                 max_rows: int = 300, min_rows: int = 20) -> BackToBack:
    """A seeded sequence of ``n_runs`` (inclusive range) distinct runs from ``runs`` (name ->
    (metric names, rows x metrics)), each cut to at most ``max_rows`` consecutive rows at a
    random offset; runs shorter than ``min_rows`` are not used, and only the metrics every run
    has are kept (:func:`common_metrics`). Neighbours are always different runs."""
    metrics = common_metrics(runs)
    tables = {name: rows[:, [list(names).index(m) for m in metrics]]
              for name, (names, rows) in runs.items()}
    usable = sorted(name for name, rows in tables.items() if rows.shape[0] >= min_rows)
    low, high = n_runs
    if not 1 <= low <= high:
        raise UsageError("expected (low, high) with 1 <= low <= high", parameter="n_runs",
                         value=n_runs)
    if len(usable) < high:
        raise UsageError(f"{len(usable)} runs of at least {min_rows} rows; {high} needed")
    rng = np.random.default_rng(seed)
    count = int(rng.integers(low, high + 1))
    chosen = [usable[i] for i in rng.permutation(len(usable))[:count]]
    blocks, offsets, starts = [], [], []
    position = 0
    for name in chosen:
        rows = tables[name]
        length = min(rows.shape[0], max_rows)
        offset = int(rng.integers(0, rows.shape[0] - length + 1))
        blocks.append(rows[offset:offset + length])
        offsets.append(offset)
        starts.append(position)
        position += length
    profile = Profile(values=np.vstack(blocks), period=period, metrics=metrics,
                      node=f"back-to-back-{seed}",
                      meta={"back_to_back": {"runs": chosen, "offsets": offsets}})
    return BackToBack(profile=profile, runs=tuple(chosen), change_points=tuple(starts[1:]),
                      offsets=tuple(offsets))
