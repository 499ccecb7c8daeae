"""What the shape method's block means cost in accuracy: the TSSB series segmented exactly
and on means of 2, 3 and 4 samples, scored against their truth.

Long series (over 32 768 samples) are segmented on block means
(``phasekit.phases.shape.shape_change_points``, ``exact_up_to``); the TSSB series are
shorter, so their default is the exact search. Here the block means are forced on them
(``exact_up_to = ceil(n / f)``, so that each block holds ``f`` samples) to measure what the
approximation loses where the truth is known: F1 (margin 1 % of the series, as the TSSB
evaluation) and Covering, mean over the series.

Data: the TSSB series kept beside the checkout (``segmentation/tssb_dev``; ``--data DIR``).
Run: ``python benchmarks/shape_coarse.py [--quick]`` (``--quick``: three series; writes
RESULTS.md only with ``--results``).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

import _common
from segmentation_tssb import DATA, QUICK, read_desc

SECTION = "shape_coarse"
FACTORS = (1, 2, 3, 4)


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="three series")
    parser.add_argument("--data", type=Path, default=DATA, help="the TSSB folder (desc.txt)")
    args = parser.parse_args(argv)
    if not (args.data / "desc.txt").exists():
        print(f"no TSSB series in {args.data}: nothing to measure")
        return 0
    from phasekit.metrics.segmentation import score_segmentation
    from phasekit.phases.shape import shape_change_points

    run = _common.Run()
    series = read_desc(args.data, QUICK if args.quick else None)
    scores = {f: [] for f in FACTORS}
    seconds = dict.fromkeys(FACTORS, 0.0)
    for name, x, truth in series:
        n = len(x)
        for f in FACTORS:
            start = time.perf_counter()
            cut = None if f == 1 else max(80, math.ceil(n / f))
            found = shape_change_points(x, exact_up_to=cut)
            seconds[f] += time.perf_counter() - start
            s = score_segmentation(truth, found.change_points, n, margin=int(0.01 * n))
            scores[f].append((s.f1, s.covering))
        print(name, n, *(f"{scores[f][-1][0]:.3f}" for f in FACTORS), flush=True)
    rows = []
    for f in FACTORS:
        values = np.array(scores[f])
        exact = np.array(scores[1])[:, 0].mean()
        rows.append(["exact" if f == 1 else f"means of {f}", f"{values[:, 0].mean():.3f}",
                     f"{values[:, 1].mean():.3f}", f"{values[:, 0].mean() - exact:+.3f}",
                     _common.seconds(seconds[f])])
    body = "\n".join([
        "## Shape segmentation on block means (`benchmarks/shape_coarse.py`)", "",
        *_common.machine_lines(run),
        f"- {_common.cores_used()}; total {_common.seconds(run.elapsed())}. "
        f"{len(series)} TSSB series ({sum(len(s[1]) for s in series):,} samples); F1 with a "
        "margin of 1 % of the series and Covering, means; the block means forced "
        "(`exact_up_to = ceil(n / f)`; by default series under 32 768 samples, as all of "
        "these, are segmented exactly).", "",
        _common.markdown_table(["search", "mean F1", "mean Covering", "F1 - exact", "time"],
                               rows, "lrrrr")])
    return _common.finish(SECTION, body, args)


if __name__ == "__main__":
    sys.exit(main())
