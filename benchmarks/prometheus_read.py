"""Reading node profiles from a local Prometheus server, beside their analysis.

64 nodes x 1 hour at 5 s (two metrics each: a periodic IPC-like series with a 2-minute
iteration and a memory-bandwidth-like one), written into a temporary TSDB with ``promtool
tsdb create-blocks-from openmetrics``; Debian's ``prometheus`` serves it on loopback. Timed, as
medians of several rounds: ``phasekit.io.prometheus.read_prometheus`` of all the nodes (the
range queries, their JSON and the grid), and Phase-TA on the 64 profiles (``analyze`` one
after the other in this process, then ``compare_nodes``).

Run: ``python benchmarks/prometheus_read.py`` (``--quick``: 4 nodes, one round).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _common

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import prometheus_server as ps  # the tests' launcher of a real server

STEP_S = 5.0
ROUNDS = 5


def node_profiles(n_nodes: int, hours: float, seed: int = 0) -> dict[str, object]:
    """``n_nodes`` profiles at 5 s: a 24-sample (2-minute) iteration template repeated, with
    noise and a per-node offset of the iterations."""
    from phasekit.profile import Profile

    rng = np.random.default_rng(seed)
    n = int(hours * 3600 / STEP_S)
    template = np.cumsum(rng.normal(size=24))
    template = 1.0 + 0.3 * (template - template.mean()) / template.std()
    out = {}
    for k in range(n_nodes):
        shift = int(rng.integers(0, 24))
        ipc = np.resize(np.roll(template, shift), n) + rng.normal(0, 0.02, n)
        bandwidth = 2e9 * (2.0 - ipc) + rng.normal(0, 2e7, n)
        out[f"node{k:03d}"] = Profile(values=np.column_stack([ipc, bandwidth]), period=STEP_S,
                                      metrics=("ipc", "mem_bw"), units={"mem_bw": "B/s"})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="4 nodes, one round")
    parser.add_argument("--nodes", type=int, default=None, help="nodes (default 64)")
    parser.add_argument("--hours", type=float, default=1.0, help="hours per node (default 1)")
    args = parser.parse_args(argv)
    from phasekit.io.prometheus import read_prometheus
    from phasekit.periodicity import analyze
    from phasekit.periodicity.nodes import NodeSummary, compare_nodes

    bench = _common.Run()
    n_nodes = args.nodes or (4 if args.quick else 64)
    rounds = 1 if args.quick else ROUNDS
    profiles = node_profiles(n_nodes, args.hours)
    n_samples = next(iter(profiles.values())).n_samples
    start = float(int(time.time()) - 86400)
    end = start + (n_samples - 1) * STEP_S
    queries = [f"{m}={ps.metric_name(m)}" for m in ("ipc", "mem_bw")]
    with tempfile.TemporaryDirectory(prefix="phasekit-prometheus-") as tmp:
        folder = Path(tmp)
        (folder / "data").mkdir()
        began = time.perf_counter()
        ps.backfill(profiles, folder / "data", start)
        backfill_s = time.perf_counter() - began
        read_s, analyze_s = [], []
        with ps.running(folder) as server:
            for _ in range(rounds):
                began = time.perf_counter()
                read = read_prometheus(server.url, queries, start=start, end=end, step=STEP_S)
                read_s.append(time.perf_counter() - began)
                began = time.perf_counter()
                summaries = [NodeSummary.from_result(analyze(p, workers=1), file=p.node)
                             for p in read]
                comparison = compare_nodes(summaries)
                analyze_s.append(time.perf_counter() - began)
    exact = all(np.allclose(p.values, profiles[p.node].values) for p in read)
    periods = sorted({round(n.patterns[0].period_s, 1) for n in summaries if n.patterns})
    rows = [("read_prometheus, all nodes", _common.seconds(statistics.median(read_s))),
            ("analyze + compare_nodes, all nodes", _common.seconds(statistics.median(analyze_s))),
            ("promtool backfill (setup, not phasekit)", _common.seconds(backfill_s))]
    body = "\n".join([
        "## Profiles from Prometheus (`benchmarks/prometheus_read.py`)", "",
        *_common.machine_lines(bench),
        f"- Prometheus {ps.prometheus_version()} on 127.0.0.1, TSDB backfilled with promtool; "
        f"{n_nodes} nodes x {args.hours:g} h at {STEP_S:g} s = {n_samples} samples x 2 "
        f"metrics per node; medians of {rounds} round(s), one process.",
        "",
        _common.markdown_table(("step", "time"), rows),
        "",
        f"- Read back equal to the profiles written: {exact}; main periods found: "
        f"{', '.join(f'{p:g} s' for p in periods)} (truth 120 s); nodes within the agreement "
        f"threshold of the reference: {comparison.agreement.n_agree} of "
        f"{comparison.agreement.n_nodes}; outliers: {len(comparison.outliers)}.",
    ])
    print(_common.text_table(("step", "time"), rows))
    _common.publish("prometheus_read", body, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
