"""What the shape method's two approximations for long series cost in accuracy, where the
truth is known: the approximate neighbour search and the subsequences compared every f-th
sample, forced on series short enough for the exact search, and scored beside it.

Long series are searched with approximate neighbours (over 32 768 subsequences,
``exact_up_to``) and, above a million samples, compare only the subsequences that start
every ``f`` samples (``full_resolution_up_to``): ``phasekit.phases.shape``. The series here
are shorter, so their default is the exact search; the approximations are forced on them:

- ``approximate neighbours``: ``exact_up_to = 80``: every search of the binary segmentation
  finds its neighbours approximately;
- ``every f-th``: ``full_resolution_up_to = ceil(n / f)``, so that subsequences start every
  ``f`` samples; with exact neighbours (``exact_up_to = None``), or approximate ones as
  well (``+ approximate``, the path of a long series).

Data, both kept beside the checkout:
- the 25 TSSB series (``segmentation/tssb_dev``; ``--data DIR``): F1 with a margin of 1 % of
  the series (the TSSB evaluation) and Covering, means over the series;
- 20 seeded back-to-back sequences of the DCSLab perf series (``phases/dcslab``,
  ``--dcslab DIR``; 200 ms rows, as ``phases_real.py`` builds them): one series each, the
  IPC (instructions / cycles); truth the junctions; F1 with a margin of 5 samples (1 s).

Run: ``python benchmarks/shape_coarse.py [--quick]`` (``--quick``: three series of each;
writes RESULTS.md only with ``--results``).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import _common
from phases_real import DATA as DCSLAB
from phases_real import MARGIN as DCSLAB_MARGIN
from phases_real import load_runs
from segmentation_tssb import DATA, QUICK, read_desc

SECTION = "shape_coarse"


def every(n: int, f: int) -> int:
    """The ``full_resolution_up_to`` at which subsequences of ``n`` samples start every
    ``f`` samples."""
    return max(80, math.ceil(n / f))


SEARCHES: dict[str, Callable[[int], dict]] = {
    "exact": lambda n: {"exact_up_to": None, "full_resolution_up_to": None},
    "approximate neighbours": lambda n: {"exact_up_to": 80, "full_resolution_up_to": None},
    "every 2nd": lambda n: {"exact_up_to": None, "full_resolution_up_to": every(n, 2)},
    "every 2nd + approximate": lambda n: {"exact_up_to": 80, "full_resolution_up_to": every(n, 2)},
    "every 4th + approximate": lambda n: {"exact_up_to": 80, "full_resolution_up_to": every(n, 4)},
}


def dcslab_series(folder: Path, count: int) -> list[tuple[str, np.ndarray, list[int]]]:
    """IPC of ``count`` seeded back-to-back sequences, with their junctions."""
    from phasekit.synth.backtoback import back_to_back

    if not folder.is_dir():
        return []
    runs = load_runs(folder)
    out = []
    for seed in range(count):
        sequence = back_to_back(runs, seed=seed)
        metrics = list(sequence.profile.metrics)
        values = sequence.profile.values
        with np.errstate(invalid="ignore", divide="ignore"):  # 0 cycles: a gap, filled
            ipc = values[:, metrics.index("instructions")] / values[:, metrics.index("cycles")]
        out.append((f"dcslab-{seed}", ipc, [int(c) for c in sequence.change_points]))
    return out


def score(series: list[tuple[str, np.ndarray, list[int]]], margin: Callable[[int], int]
          ) -> dict[str, tuple[float, float, float]]:
    """Mean F1, mean Covering and seconds of every search over ``series``."""
    from phasekit.metrics.segmentation import score_segmentation
    from phasekit.phases.shape import shape_change_points

    values: dict[str, list[tuple[float, float]]] = {name: [] for name in SEARCHES}
    seconds = dict.fromkeys(SEARCHES, 0.0)
    for label, x, truth in series:
        n = len(x)
        for name, options in SEARCHES.items():
            start = time.perf_counter()
            found = shape_change_points(x, **options(n))
            seconds[name] += time.perf_counter() - start
            s = score_segmentation(truth, found.change_points, n, margin=margin(n))
            values[name].append((s.f1, s.covering))
        print(label, n, *(f"{values[name][-1][0]:.3f}" for name in SEARCHES), flush=True)
    return {name: (*np.mean(values[name], axis=0), seconds[name]) for name in SEARCHES}


def table(found: dict[str, tuple[float, float, float]]) -> str:
    exact = found["exact"][0]
    rows = [[name, f"{f1:.3f}", f"{covering:.3f}", f"{f1 - exact:+.3f}",
             _common.seconds(seconds)] for name, (f1, covering, seconds) in found.items()]
    return _common.markdown_table(["search", "mean F1", "mean Covering", "F1 - exact", "time"],
                                  rows, "lrrrr")


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="three series of each")
    parser.add_argument("--data", type=Path, default=DATA, help="the TSSB folder (desc.txt)")
    parser.add_argument("--dcslab", type=Path, default=DCSLAB, help="the DCSLab folder")
    args = parser.parse_args(argv)
    if not (args.data / "desc.txt").exists():
        print(f"no TSSB series in {args.data}: nothing to measure")
        return 0
    run = _common.Run()
    tssb = read_desc(args.data, QUICK if args.quick else None)
    real = dcslab_series(args.dcslab, 3 if args.quick else 20)
    parts = ["## The shape segmentation's approximations (`benchmarks/shape_coarse.py`)", "",
             *_common.machine_lines(run)]
    tables = [f"TSSB: {len(tssb)} series ({sum(len(s[1]) for s in tssb):,} samples), F1 "
              "with a margin of 1 % of the series", "",
              table(score(tssb, lambda n: int(0.01 * n)))]
    if real:
        tables += ["", f"DCSLab: {len(real)} back-to-back sequences of the real perf series "
                   f"(IPC, 200 ms rows, {sum(len(s[1]) for s in real):,} samples, "
                   f"{sum(len(s[2]) for s in real)} junctions), F1 with a margin of "
                   f"{DCSLAB_MARGIN} samples", "",
                   table(score(real, lambda n: DCSLAB_MARGIN))]
    parts += [f"- {_common.cores_used()}; total {_common.seconds(run.elapsed())}. The "
              "approximations forced on series short enough for the exact search (by default "
              "a search over more than 32 768 subsequences finds approximate neighbours, and "
              "a series of more than 1 048 576 samples compares the subsequences starting "
              "every f-th sample): `approximate neighbours` with `exact_up_to = 80` (every "
              "search), `every f-th` with `full_resolution_up_to = ceil(n / f)`, exact or "
              "`+ approximate` neighbours. Means over the series.",
              "", *tables]
    return _common.finish(SECTION, "\n".join(parts), args)


if __name__ == "__main__":
    sys.exit(main())
