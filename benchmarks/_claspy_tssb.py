"""Run claspy's BinaryClaSPSegmentation (default parameters) on TSSB series; print JSON.

Run by ``segmentation_tssb.py`` inside a separate virtual environment that has claspy (claspy
pins numpy and numba versions older than phasekit's), so it imports nothing from phasekit.

    python _claspy_tssb.py DATA_DIR NAME [NAME ...]

prints one JSON object: ``{"version": ..., "series": {NAME: {"change_points": [...],
"seconds": ..., "window": ...}}, "first_call_seconds": ...}``. Each series is timed warm: a
first untimed call on a short series loads numba's cache (or compiles) and is timed apart.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np


def main(argv: list[str]) -> int:
    data = Path(argv[0])
    names = argv[1:]
    t0 = time.perf_counter()
    from claspy.segmentation import BinaryClaSPSegmentation

    warm = np.sin(np.linspace(0, 60 * np.pi, 2000)) + np.r_[np.zeros(1000), np.ones(1000)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        BinaryClaSPSegmentation().fit_predict(warm)
    first = time.perf_counter() - t0
    out: dict[str, object] = {"version": importlib.metadata.version("claspy"),
                              "first_call_seconds": first, "series": {}}
    for name in names:
        x = np.loadtxt(data / f"{name}.txt", dtype=np.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            seg = BinaryClaSPSegmentation()
            cps = seg.fit_predict(x)
            dt = time.perf_counter() - t
        out["series"][name] = {"change_points": [int(c) for c in cps], "seconds": dt,
                               "window": int(seg.window_size), "n": len(x)}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
