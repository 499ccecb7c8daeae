"""Phase detection speed: offline vectors per second with 8 sensors, and the median
time of one streaming ``update``, for both methods (ev, ev-literal).

Offline: :func:`phasekit.phases.detect` on 1 million random step-like vectors of 8 sensors,
after a warm-up call (numba's compiled step functions load from its cache or compile);
best of 3. Streaming: ``make_detector(...).update(vector)`` timed one call at a time over
20 000 vectors of the same kind (after 1 000 warm-up updates); median and 99th percentile.
Targets: offline >= 1 million vectors/s, streaming update <= 10 us median.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import _common

SECTION = "phases_speed"
METHODS = ("ev", "ev-literal")


def vectors(n: int, d: int = 8, seed: int = 0) -> np.ndarray:
    """Steps of random length (50-500 vectors) between random levels, log-normal noise."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(50, 500, n // 50 + 1)
    levels = rng.uniform(0.01, 5.0, (lengths.size, d))
    X = np.repeat(levels, lengths, axis=0)[:n]
    return X * rng.lognormal(0.0, 0.1, X.shape)


def offline_rate(X: np.ndarray, method: str) -> float:
    from phasekit.phases import detect

    detect(X[:1000], method=method)  # warm-up: load the compiled kernels
    best = min(_timed(lambda: detect(X, method=method)) for _ in range(3))
    return X.shape[0] / best


def _timed(f) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def streaming_times(X: np.ndarray, method: str) -> tuple[float, float]:
    from phasekit.phases import make_detector

    detector = make_detector(method, X.shape[1])
    for x in X[:1000]:
        detector.update(x)
    times = []
    clock = time.perf_counter_ns
    for x in X[1000:]:
        start = clock()
        detector.update(x)
        times.append(clock() - start)
    times.sort()
    return statistics.median(times) / 1e3, times[int(0.99 * (len(times) - 1))] / 1e3


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="tiny sizes (smoke test)")
    args = parser.parse_args(argv)
    bench = _common.Run()
    n_offline, n_stream = (20_000, 3_000) if args.quick else (1_000_000, 21_000)
    X = vectors(n_offline)
    rows = []
    for method in METHODS:
        rate = offline_rate(X, method)
        median, p99 = streaming_times(X[:n_stream], method)
        rows.append([method, f"{rate / 1e6:.2f} M/s",
                     "meets" if rate >= 1e6 else "**misses**", f"{median:.2f} us",
                     f"{p99:.2f} us", "meets" if median <= 10 else "**misses**"])
    header = ["method", "offline vectors/s (8 sensors)", ">= 1 M/s", "streaming update median",
              "p99", "<= 10 us"]
    print(_common.text_table(header, rows))
    md = "\n".join([
        "## Phase detection speed (`benchmarks/phases_speed.py`)", "",
        *_common.machine_lines(bench),
        f"- Offline: `detect` on {n_offline:,} vectors of 8 sensors (steps of 50-500 vectors, "
        "log-normal noise), best of 3 after a warm-up; streaming: one `update` at a time over "
        f"{n_stream - 1000:,} vectors after 1,000 warm-up updates (the same compiled step "
        "function as offline, called per vector from Python).", "",
        _common.markdown_table(header, rows, "lrlrrl"),
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
