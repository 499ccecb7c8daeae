"""One pattern per loop: the merge of same-period patterns (``phasekit.periodicity.merge``).

``analyze`` merges clusters of one period whose shapes differ only at noise level: the
Euclidean distance of the clusters' mean instances (resampled to one length and turned to one
phase) against ``max(v_A, v_B) (1/n_A + 1/n_B) + r`` (instance variance over the instance
counts, plus the sampling's time resolution), merged up to ``MERGE_RATIO`` (4). This script
runs every profile twice, without the merge (``merge.MERGE_RATIO = -1``: the previous
behaviour) and with it, and reports the pattern counts, the coverage and, where the truth is
known, the adjusted Rand index (ARI) of sample labels:

- noise-free: 19 cycles of 200 ms sampled at 5 ms (sine, square-ish tanh(3 sin), triangle,
  sawtooth, 30 % pulse), at 4 starting phases; one loop each;
- one shape, two regions: 30 cycles of one shape, an aperiodic stretch, 30 more cycles of
  the same shape at another phase; noise 1 %, 4 %, 10 %, 20 % of the range; one loop;
- two shapes, same period: the same with two different shapes of one period (sine/square,
  sine/sawtooth, sine/triangle, square/pulse, sawtooth/triangle, sine/two-harmonic): two
  loops;
- the ground-truth suite of ``benchmarks/cut_criterion.py`` (NEMO-, HPCG- and OpenFOAM-like
  profiles, and its same-length pairs, two loops of one period in one profile), seeds 0..3;
- recordings of the demo's workload (``phasekit demo``: 40 iterations of 0.4 s, a checkpoint
  every 10), made by this script (``--demo-runs``, default 5) and earlier ones given
  (``--recordings``), analyzed with the default and with each of the three metrics the
  workload's process records (one loop);
- real files: tests/data/lulesh_chop8_dram_10ms.csv and the DCSLab perf series (at 0.2 s)
  when kept beside the checkout (no truth: counts and merges only).

The pair table lists, for every two patterns of one period (within 5 %) found without the
merge, the rule's ratio and whether they are one loop (same true label, or the demo's single
loop) or two, and how many pairs of each kind a ratio of 1 to 6 would merge.

Run: ``python benchmarks/pattern_merge.py [--quick] [--demo-runs N] [--recordings FILE ...]``
(``--quick``: four small profiles, no recording, no RESULTS.md unless ``--results``).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

import _common
from cut_criterion import PAIRS, predicted_labels, same_length
from phasekit.io import read_profile
from phasekit.metrics.periodicity import labels_ari
from phasekit.periodicity import analyze, merge
from phasekit.periodicity.analyze import (
    PeriodicityResult,
    analysis_matrix,
    bridge_gaps,
    padded,
)
from phasekit.periodicity.average import Average
from phasekit.periodicity.tune import ALPHA
from phasekit.profile import Profile
from phasekit.synth import KINDS, generate

SECTION = "pattern_merge"
HERE = Path(__file__).resolve().parent
LULESH = HERE.parent / "tests" / "data" / "lulesh_chop8_dram_10ms.csv"
DCSLAB = HERE.parent.parent / "shared" / "data" / "phases" / "dcslab"
DEMO_METRICS = ("task_clock", "page_faults", "context_switches")
RATIOS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
NOISES = (0.01, 0.04, 0.1, 0.2)
CYCLE = 40  # samples of 5 ms: 200 ms

SHAPES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sine": lambda p: 0.5 + 0.5 * np.sin(p),
    "square": lambda p: (np.sin(p) > 0).astype(float),
    "saw": lambda p: (p / (2 * np.pi)) % 1,
    "tri": lambda p: 1 - 2 * np.abs((p / (2 * np.pi)) % 1 - 0.5),
    "pulse": lambda p: ((p / (2 * np.pi)) % 1 < 0.25).astype(float),
    "bumps": lambda p: 0.5 + 0.3 * np.sin(p) + 0.2 * np.sin(3 * p),
}
CLEAN: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sine": np.sin, "square-ish": lambda p: np.tanh(3 * np.sin(p)),
    "triangle": lambda p: np.abs((p / (2 * np.pi)) % 1 - 0.5),
    "sawtooth": lambda p: (p / (2 * np.pi)) % 1,
    "pulse": lambda p: ((p / (2 * np.pi)) % 1 < 0.3).astype(float) + 1,
}
TWO = (("sine", "square"), ("sine", "saw"), ("sine", "tri"), ("square", "pulse"),
       ("saw", "tri"), ("sine", "bumps"))
ONE = ("sine", "square", "saw", "bumps")


def noise_free(shape: str, phase: float) -> Profile:
    """19 cycles of 200 ms sampled at 5 ms, starting at ``phase`` (radians)."""
    t = np.arange(19 * CYCLE) * 0.005
    values = CLEAN[shape](2 * np.pi * t / 0.2 + phase)
    return Profile(values=values[:, None], period=0.005, metrics=("x",), node=f"clean-{shape}")


def two_regions(first: str, second: str, seed: int, noise: float, cycles: int = 30
                ) -> tuple[Profile, np.ndarray]:
    """``cycles`` of ``first``, an aperiodic stretch, ``cycles`` of ``second`` at a random
    phase, with Gaussian noise of ``noise`` (the shapes span 0..1); and the true label of
    every sample (-1 aperiodic; one label when the shapes are the same)."""
    rng = np.random.default_rng(seed)
    phase = 2 * np.pi * np.arange(CYCLE * cycles) / CYCLE

    def aperiodic(n: int) -> np.ndarray:
        return np.cumsum(rng.normal(0, 0.05, n)) % 1

    parts = [aperiodic(100), SHAPES[first](phase), aperiodic(150),
             SHAPES[second](phase + rng.uniform(0, 2 * np.pi)), aperiodic(100)]
    values = np.concatenate(parts)
    values = values + rng.normal(0, noise, values.size)
    second_label = 0 if first == second else 1
    labels = np.concatenate([np.full(100, -1), np.zeros(CYCLE * cycles, np.int64),
                             np.full(150, -1), np.full(CYCLE * cycles, second_label),
                             np.full(100, -1)])
    profile = Profile(values=values[:, None], period=0.005, metrics=("x",),
                      node=f"{first}+{second}")
    return profile, labels


def synthetic_truth(profile: Profile, truth) -> np.ndarray:
    """The truth's sample labels, the periodicities below alpha set aperiodic (as in
    cut_criterion.py: phasekit drops them by design)."""
    expected = [k for k in range(len(truth.labels)) if truth.coverage(k) >= ALPHA]
    labels = truth.sample_labels()
    labels[~np.isin(labels, expected)] = -1
    return labels


def analyses(profile: Profile, metrics: list[str] | None) -> tuple[PeriodicityResult, PeriodicityResult]:
    """The analysis without the merge, and with it."""
    default = merge.MERGE_RATIO
    merge.MERGE_RATIO = -1.0
    try:
        before = analyze(profile, metrics=metrics)
    finally:
        merge.MERGE_RATIO = default
    return before, analyze(profile, metrics=metrics)


def pattern_cluster(x: np.ndarray, result: PeriodicityResult, k: int) -> merge.Cluster:
    """Pattern ``k`` of ``result`` as the merge sees a cluster; ``x`` the analyzed values."""
    p = result.patterns[k]
    return merge.Cluster(padded(x, p.starts, p.lengths), p.starts, p.lengths,
                         Average(p.values, p.wgss, p.dba_iterations, ()))


def majority(starts: np.ndarray, lengths: np.ndarray, labels: np.ndarray) -> int:
    middle = labels[np.clip(starts + lengths // 2, 0, labels.size - 1)]
    values, counts = np.unique(middle, return_counts=True)
    return int(values[np.argmax(counts)])


def pairs(profile: Profile, result: PeriodicityResult, labels: np.ndarray | None,
          one_loop: bool) -> list[dict]:
    """Every two patterns of one period in ``result`` (without the merge): the rule's ratio and
    the truth (one loop, two loops, or None when unknown)."""
    tolerance = float(result.params["length_tolerance"])
    x, valid = analysis_matrix(profile, result.metrics, result.params.get("smoothing"))
    x, _ = bridge_gaps(x, valid, int(result.params["max_gap"]))  # as analyze() does
    clusters = [pattern_cluster(x, result, k) for k in range(len(result.patterns))]
    out = []
    for i, a in enumerate(clusters):
        for b in clusters[i + 1:]:
            if not merge.same_period(a, b, tolerance):
                continue
            into, other = (a, b) if a.n_instances >= b.n_instances else (b, a)
            found = merge.compare(into, other)
            if labels is not None:
                la, lb = (majority(c.starts, c.lengths, labels) for c in (a, b))
                same = None if min(la, lb) < 0 else la == lb
            else:
                same = True if one_loop else None
            out.append({"ratio": found.ratio, "same": same, "sizes": (into.n_instances,
                                                                      other.n_instances)})
    return out


def run_case(suite: str, name: str, profile: Profile, *, labels: np.ndarray | None = None,
             expected: int | None = None, metrics: list[str] | None = None,
             one_loop: bool = False, noise: float | None = None) -> dict:
    before, after = analyses(profile, metrics)
    row = {"suite": suite, "name": name, "expected": expected, "noise": noise,
           "before": len(before.patterns), "after": len(after.patterns),
           "coverage_before": before.coverage, "coverage_after": after.coverage,
           "merged": len(after.params.get("merged", [])),
           "pairs": pairs(profile, before, labels, one_loop)}
    if labels is not None:
        row["ari_before"] = labels_ari(labels, predicted_labels(profile.n_samples, before))
        row["ari_after"] = labels_ari(labels, predicted_labels(profile.n_samples, after))
    print(f"  {suite} {name}: patterns {row['before']} -> {row['after']}"
          + (f" (truth {expected})" if expected is not None else "")
          + f", coverage {before.coverage:.3f} -> {after.coverage:.3f}"
          + (f", ARI {row['ari_before']:.3f} -> {row['ari_after']:.3f}" if labels is not None
             else ""), file=sys.stderr, flush=True)
    return row


def demo_recordings(runs: int) -> list[Path]:
    from periodicity_real import run_demo

    folder = Path(tempfile.mkdtemp(prefix="pattern-merge-"))
    paths = []
    for k in range(runs):
        run_demo(folder / f"run{k}", 40)
        paths.append(folder / f"run{k}" / "demo" / "recording.parquet")
        print(f"  recorded demo run {k + 1}/{runs}", file=sys.stderr, flush=True)
    return paths


def evaluate(quick: bool, recordings: list[Path]) -> list[dict]:
    rows = []
    phases = (0.3,) if quick else (0.0, 0.3, 1.0, 2.0)
    for shape in (("square-ish",) if quick else CLEAN):
        for phase in phases:
            rows.append(run_case("noise-free", f"{shape} phase {phase:g}",
                                 noise_free(shape, phase), expected=1, one_loop=True))
    seeds = (0,) if quick else range(5)
    noises = (0.04,) if quick else NOISES
    for noise in noises:
        for shape in (ONE[:1] if quick else ONE):
            for seed in seeds:
                profile, labels = two_regions(shape, shape, seed, noise)
                rows.append(run_case("one shape, two regions", f"{shape} noise {noise:g} s{seed}",
                                     profile, labels=labels, expected=1, noise=noise))
        for first, second in (TWO[:1] if quick else TWO):
            for seed in seeds:
                profile, labels = two_regions(first, second, seed, noise)
                rows.append(run_case("two shapes, same period",
                                     f"{first}/{second} noise {noise:g} s{seed}", profile,
                                     labels=labels, expected=2, noise=noise))
    if quick:
        profile, truth = generate("nemo", minutes=2.0, seed=0)
        rows.append(run_case("ground truth", "nemo s0", profile,
                             labels=synthetic_truth(profile, truth), expected=len(truth.labels)))
        return rows
    for kind in KINDS:
        for seed in range(4):
            profile, truth = generate(kind, minutes=10.0, seed=seed)
            labels = synthetic_truth(profile, truth)
            rows.append(run_case("ground truth", f"{kind} s{seed}", profile, labels=labels,
                                 expected=len(np.unique(labels[labels >= 0]))))
    for pair in PAIRS:
        for seed in range(4):
            profile, truth = same_length(*pair, seed=seed, minutes=10.0)
            labels = synthetic_truth(profile, truth)
            rows.append(run_case("ground truth, same-length pairs", f"{pair[0]}+{pair[2]} s{seed}",
                                 profile, labels=labels,
                                 expected=len(np.unique(labels[labels >= 0]))))
    for k, path in enumerate(recordings):
        profile = read_profile(path)
        rows.append(run_case("demo recordings", f"run {k + 1} default", profile, expected=1,
                             one_loop=True))
        for metric in DEMO_METRICS:
            if metric in profile.metrics:
                rows.append(run_case("demo recordings, one metric", f"run {k + 1} {metric}",
                                     profile, metrics=[metric], expected=1, one_loop=True))
    rows.append(run_case("real files", "lulesh_chop8_dram_10ms", read_profile(LULESH)))
    for path in sorted(DCSLAB.glob("**/*.csv")) if DCSLAB.is_dir() else []:
        rows.append(run_case("real files", "dcslab " + "/".join(path.parts[-2:]),
                             read_profile(path, period=0.2)))
    return rows


def suite_table(rows: list[dict]) -> tuple[list[str], list[list[object]]]:
    header = ["suite", "profiles", "patterns = truth (before -> after)", "mean patterns",
              "mean coverage", "mean ARI", "merges"]
    table = []
    for suite in dict.fromkeys(r["suite"] for r in rows):
        sel = [r for r in rows if r["suite"] == suite]
        known = [r for r in sel if r["expected"] is not None]
        exact = (f"{sum(r['before'] == r['expected'] for r in known)} -> "
                 f"{sum(r['after'] == r['expected'] for r in known)} of {len(known)}"
                 if known else "-")
        ari = [r for r in sel if "ari_before" in r]
        table.append([
            suite, len(sel), exact,
            f"{statistics.fmean(r['before'] for r in sel):.2f} -> "
            f"{statistics.fmean(r['after'] for r in sel):.2f}",
            f"{100 * statistics.fmean(r['coverage_before'] for r in sel):.1f} -> "
            f"{100 * statistics.fmean(r['coverage_after'] for r in sel):.1f} %",
            (f"{statistics.fmean(r['ari_before'] for r in ari):.3f} -> "
             f"{statistics.fmean(r['ari_after'] for r in ari):.3f}" if ari else "-"),
            sum(r["merged"] for r in sel)])
    return header, table


def changed_table(rows: list[dict]) -> tuple[list[str], list[list[object]]]:
    header = ["suite", "profile", "patterns", "truth", "coverage", "ARI"]
    table = []
    for r in rows:
        if r["before"] == r["after"] and abs(r["coverage_before"] - r["coverage_after"]) < 1e-9:
            continue
        table.append([r["suite"], r["name"], f"{r['before']} -> {r['after']}",
                      "-" if r["expected"] is None else r["expected"],
                      f"{100 * r['coverage_before']:.1f} -> {100 * r['coverage_after']:.1f} %",
                      (f"{r['ari_before']:.3f} -> {r['ari_after']:.3f}" if "ari_before" in r
                       else "-")])
    return header, table


def _noise_band(row: dict) -> str:
    return "noise 20 %" if row["noise"] is not None and row["noise"] >= 0.2 else "other"


def sweep_table(rows: list[dict]) -> tuple[list[str], list[list[object]], dict]:
    """Pairs of one period (without the merge) that each ratio would merge, by truth."""
    found = [(p, _noise_band(r)) for r in rows for p in r["pairs"] if p["same"] is not None]
    one = [p for p, _ in found if p["same"]]
    two = [p for p, band in found if not p["same"] and band == "other"]
    two_noisy = [p for p, band in found if not p["same"] and band != "other"]
    header = ["ratio", f"one loop merged (of {len(one)})",
              f"two loops merged, noise <= 10 % (of {len(two)})",
              f"two loops merged, noise 20 % (of {len(two_noisy)})"]
    table = []
    for ratio in RATIOS:
        mark = " (default)" if ratio == merge.MERGE_RATIO else ""
        table.append([f"{ratio:g}{mark}", sum(p["ratio"] <= ratio for p in one),
                      sum(p["ratio"] <= ratio for p in two),
                      sum(p["ratio"] <= ratio for p in two_noisy)])
    extremes = {"one": sorted(p["ratio"] for p in one), "two": sorted(p["ratio"] for p in two),
                "two_noisy": sorted(p["ratio"] for p in two_noisy)}
    return header, table, extremes


def verdict(extremes: dict) -> str:
    one, two, noisy = extremes["one"], extremes["two"], extremes["two_noisy"]
    above = [r for r in one if r > merge.MERGE_RATIO]
    text = (f"Pairs of one loop: {len(one) - len(above)} of {len(one)} at ratio <= "
            f"{merge.MERGE_RATIO:g}")
    if above:
        text += f" (the others at {', '.join(f'{r:.3g}' for r in above)})"
    if two:
        text += (f"; pairs of two loops up to 10 % noise: least ratio {two[0]:.3g} "
                 f"({sum(r <= merge.MERGE_RATIO for r in two)} of {len(two)} merged)")
    if noisy:
        text += (f"; at 20 % noise: least ratio {noisy[0]:.3g} "
                 f"({sum(r <= merge.MERGE_RATIO for r in noisy)} of {len(noisy)} merged)")
    return text + "."


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="four small profiles, no recording (smoke test)")
    parser.add_argument("--demo-runs", type=int, default=5,
                        help="recordings of the demo's workload to make (default 5)")
    parser.add_argument("--recordings", type=Path, nargs="*", default=[],
                        help="demo recordings made earlier, analyzed too")
    args = parser.parse_args(argv)
    bench = _common.Run()
    recordings = [] if args.quick else [*args.recordings, *demo_recordings(args.demo_runs)]
    rows = evaluate(args.quick, recordings)
    header, table = suite_table(rows)
    sweep_header, sweep, extremes = sweep_table(rows)
    changed_header, changed = changed_table(rows)
    conclusion = verdict(extremes)
    print(_common.text_table(header, table))
    print()
    print(_common.text_table(sweep_header, sweep))
    print()
    print(_common.text_table(changed_header, changed))
    print()
    print(conclusion)
    recorded = (f"{len(recordings)} recordings of `phasekit demo` (40 iterations)"
                if recordings else "no demo recording")
    md = "\n".join([
        "## Merging same-period patterns (`benchmarks/pattern_merge.py`)",
        "",
        *_common.machine_lines(bench),
        f"- Whole script: {bench.elapsed() / 60:.1f} min, {len(rows)} profiles, each analyzed "
        "without the merge (before) and with it (after), every parameter at its default; "
        f"{recorded}.",
        "- Rule (`phasekit.periodicity.merge`): two clusters of one period (5 %) merge when "
        "the Euclidean distance of their mean instances (one length, one phase) is at most "
        f"{merge.MERGE_RATIO:g} x (max instance variance x (1/n_A + 1/n_B) + time resolution).",
        "- patterns = truth: profiles whose pattern count equals the true number of loops "
        "(before -> after). ARI: adjusted Rand index of sample labels against the truth (-1 "
        "outside every instance). Coverage in % of the valid samples.",
        "",
        _common.markdown_table(header, table, "lrlllll"),
        "",
        "### Pairs of one period, by the ratio that would merge them",
        "",
        "Every two patterns of one period found without the merge; one loop: the same true "
        "label (the demo: its single loop), two loops: different labels.",
        "",
        _common.markdown_table(sweep_header, sweep, "lrrr"),
        "",
        "### Profiles whose result changed",
        "",
        _common.markdown_table(changed_header, changed, "llllll") if changed else "(none)",
        "",
        "### Verdict",
        "",
        conclusion,
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
