"""Phase-TA's Fig. 5 (section IV-C): how relevant is a sub-profile's pattern to the whole profile?

For each synthetic kind a long profile (60 minutes; longer when the initialization would not
leave room for a 45-minute sub-profile, see below) is analyzed as the reference. Then for
every duration of 1, 3, 5, 10, 15, 30 and 45 minutes, 11 sub-profiles at random offsets
(seeded) are analyzed with ``analyze(profile, window_s=(start, end))``. Sub-profiles are
drawn uniformly inside the main periodic region (from the first to the end of the last true
instance of the label with the largest true coverage, from the ``Truth``), so that none
overlaps the initialization (Phase-TA IV-C) nor the finalization; OpenFOAM-like checkpoints lie
inside that region and stay in (a short sub-profile may fall entirely in one and find
nothing).

For each sub-profile, its highest-coverage pattern s is scored by
``relevance(s, reference, profile, pattern=r)``, r being the reference's highest-coverage
pattern: the sub-profile WGSS, wgss(s, I), against the reference WGSS, wgss(r, I), I being
the instances the reference pattern was inferred from (Phase-TA IV-C). We report per duration the
mean +- standard deviation of the ratio sub/reference and the mean number of instances of
the sub-profile pattern, and draw ``benchmarks/fig5.png`` like Phase-TA's Fig. 5.

A sub-profile pattern counts as "the same periodicity" as the reference (Phase-TA checked
this) when its length is within 10 % of the reference pattern's; others are reported apart
and left out of the means.

``phasekit.synth`` scales every part of a profile with its duration, the initialization
included (HPCG-like: about 40 % of the profile before the compute periodicity, which covers
57 %). The reference is therefore lengthened to ceil(46 / (share of the main region)) minutes
when 60 minutes would not fit a 45-minute sub-profile inside the main region.

Run: ``python benchmarks/subprofiles.py [--quick]`` (``--quick``: one kind, a 4-minute
reference, two 1-minute sub-profiles; writes neither RESULTS.md nor the figure unless
``--results`` / ``--figure`` are given).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import _common
from phasekit.periodicity import analyze, relevance
from phasekit.synth import KINDS, generate

DURATIONS = (1, 3, 5, 10, 15, 30, 45)
N_SUB = 11
REFERENCE_MINUTES = 60.0
SEED = 0
SAME_LENGTH = 0.10
SECTION = "subprofiles"
FIGURE = _common.HERE / "fig5.png"


def main_region(truth) -> tuple[float, float]:
    """Seconds from the start to the first instance and to the end of the last instance of
    the label with the largest true coverage: the application's steady state."""
    label = max(range(len(truth.labels)), key=truth.coverage)
    mine = truth.instance_labels == label
    first = int(truth.starts[mine][0])
    last = int(truth.starts[mine][-1] + truth.lengths[mine][-1])
    return first * truth.period, last * truth.period


def reference_profile(kind: str, minutes: float, longest: float):
    """The long profile, lengthened when its steady state cannot hold ``longest`` minutes
    (the generator scales initialization and finalization with the duration)."""
    profile, truth = generate(kind, minutes=minutes, seed=SEED)
    lo, hi = main_region(truth)
    if hi - lo < 60.0 * longest:
        share = (hi - lo) / profile.duration
        minutes = float(math.ceil((longest + 1.0) / share))
        profile, truth = generate(kind, minutes=minutes, seed=SEED)
    return profile, truth, minutes


def run_kind(kind: str, reference_minutes: float, durations, n_sub: int) -> dict:
    profile, truth, minutes = reference_profile(kind, reference_minutes, max(durations))
    start = time.perf_counter()
    reference = analyze(profile)
    ref_seconds = time.perf_counter() - start
    if not reference.patterns:
        raise SystemExit(f"the {kind} reference found no pattern")
    ref = reference.patterns[0]
    ref_wgss = relevance(ref.values, reference, profile, pattern=0)["reference_wgss"]
    lo, hi = main_region(truth)
    print(f"{kind}: reference {minutes:g} min, {ref.n_instances} instances of {ref.length} "
          f"samples, WGSS {ref_wgss:.4g} ({ref_seconds:.1f} s); offsets from {lo:.0f} s",
          file=sys.stderr, flush=True)
    rng = np.random.default_rng([SEED, KINDS.index(kind), 5])
    subs = []
    for duration in durations:
        span = 60.0 * duration
        for k in range(n_sub):
            offset = float(rng.uniform(lo, hi - span))
            start = time.perf_counter()
            result = analyze(profile, window_s=(offset, offset + span))
            elapsed = time.perf_counter() - start
            entry = {"duration": duration, "offset": offset, "seconds": elapsed,
                     "found": bool(result.patterns)}
            if result.patterns:
                top = result.patterns[0]
                rel = relevance(top.values, reference, profile, pattern=0)
                entry.update({
                    "n_instances": top.n_instances, "length": top.length,
                    "same": abs(top.length - ref.length) <= SAME_LENGTH * ref.length,
                    "sub_wgss": rel["sub_wgss"], "ratio": rel["ratio"],
                    "dba_iterations": top.dba_iterations,
                })
            subs.append(entry)
            print(f"  {kind} {duration} min #{k}: offset {offset:.0f} s, "
                  + (f"{entry['n_instances']} instances of {entry['length']}, ratio "
                     f"{entry['ratio']:.3f}" if entry["found"] else "no pattern")
                  + f" ({elapsed:.1f} s)", file=sys.stderr, flush=True)
    return {"kind": kind, "minutes": minutes, "ref_instances": ref.n_instances,
            "ref_length": ref.length, "ref_wgss": ref_wgss, "ref_seconds": ref_seconds,
            "ref_dba_iterations": ref.dba_iterations, "region": (lo, hi), "subs": subs}


def per_duration(run: dict, duration: float) -> dict:
    sel = [s for s in run["subs"] if s["duration"] == duration]
    good = [s for s in sel if s["found"] and s["same"]]
    ratios = [s["ratio"] for s in good]
    return {
        "n": len(sel), "good": len(good),
        "missing": sum(not s["found"] for s in sel),
        "other": sum(s["found"] and not s["same"] for s in sel),
        "mean": statistics.fmean(ratios) if ratios else math.nan,
        "std": statistics.stdev(ratios) if len(ratios) > 1 else 0.0,
        "min": min(ratios) if ratios else math.nan,
        "max": max(ratios) if ratios else math.nan,
        "below": sum(r < 1.0 for r in ratios),
        "instances": statistics.fmean(s["n_instances"] for s in good) if good else math.nan,
        "iterations": statistics.fmean(s["dba_iterations"] for s in good) if good else math.nan,
        "wgss": [s["sub_wgss"] for s in good],
        "seconds": statistics.fmean(s["seconds"] for s in sel),
    }


def figure(runs: list[dict], durations, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(4.6 * len(runs), 4.2), squeeze=False)
    for ax, run in zip(axes[0], runs, strict=True):
        xs, means, stds, counts = [], [], [], []
        for d in durations:
            stat = per_duration(run, d)
            ax.plot([d] * len(stat["wgss"]), stat["wgss"], "x", color="0.45", ms=5)
            if stat["wgss"]:
                xs.append(d)
                means.append(statistics.fmean(stat["wgss"]))
                stds.append(statistics.stdev(stat["wgss"]) if len(stat["wgss"]) > 1 else 0.0)
                counts.append(stat["instances"])
        ax.errorbar(xs, means, yerr=stds, fmt="D", color="tab:red", ms=6, capsize=4,
                    label="mean +- std")
        for x, y, c in zip(xs, means, counts, strict=True):
            ax.annotate(f"{c:.0f}", (x, y), textcoords="offset points", xytext=(6, 6),
                        fontsize=8)
        ax.axhline(run["ref_wgss"], color="tab:blue", lw=1.5,
                   label=f"reference ({run['minutes']:g} min, {run['ref_instances']} inst.)")
        ax.set_title(f"{run['kind']}-like")
        ax.set_xlabel("sub-profile duration (minutes)")
        ax.set_xticks(list(durations))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    axes[0][0].set_ylabel("WGSS against the reference instances")
    fig.suptitle("Sub-profile WGSS vs duration (numbers: mean instances of the sub-profile "
                 "pattern)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=None)
    parser.add_argument("--results", type=Path, default=None,
                        help="RESULTS.md to update (default benchmarks/RESULTS.md; "
                             "not written in --quick mode unless given)")
    parser.add_argument("--figure", type=Path, default=None,
                        help="figure to write (default benchmarks/fig5.png; "
                             "not written in --quick mode unless given)")
    args = parser.parse_args(argv)
    bench = _common.Run()
    if args.quick:
        kinds, ref_minutes, durations, n_sub = args.kinds or ["nemo"], 4.0, (1,), 2
    else:
        kinds, ref_minutes = args.kinds or list(KINDS), REFERENCE_MINUTES
        durations, n_sub = DURATIONS, N_SUB
    runs = [run_kind(kind, ref_minutes, durations, n_sub) for kind in kinds]

    header = ["kind", "duration", "sub/ref WGSS: mean +- std", "min-max", "sub < ref",
              "mean instances", "mean DBA iterations", "same periodicity / subs",
              "mean time / sub"]
    table = []
    for run in runs:
        for d in durations:
            s = per_duration(run, d)
            notes = []
            if s["missing"]:
                notes.append(f"{s['missing']} found nothing")
            if s["other"]:
                notes.append(f"{s['other']} another periodicity")
            table.append([run["kind"], f"{d} min", f"{s['mean']:.3f} +- {s['std']:.3f}",
                          f"{s['min']:.3f}-{s['max']:.3f}", s["below"],
                          f"{s['instances']:.0f}", f"{s['iterations']:.1f}",
                          f"{s['good']}/{s['n']}" + (f" ({'; '.join(notes)})" if notes else ""),
                          _common.seconds(s["seconds"])])
    ref_header = ["kind", "reference", "instances", "pattern length", "reference WGSS",
                  "DBA iterations", "analysis time", "sub-profiles within"]
    ref_table = [[r["kind"], f"{r['minutes']:g} min", r["ref_instances"], r["ref_length"],
                  f"{r['ref_wgss']:.4g}", r["ref_dba_iterations"],
                  _common.seconds(r["ref_seconds"]),
                  f"{r['region'][0] / 60:.1f}-{r['region'][1] / 60:.1f} min"]
                 for r in runs]

    # Phase-TA's two summary figures
    shortest = [per_duration(r, durations[0])["mean"] for r in runs]
    near_100 = []
    for r in runs:
        candidates = [(d, per_duration(r, d)) for d in durations]
        candidates = [(d, s) for d, s in candidates if s["instances"] >= 100]
        if candidates:
            d, s = min(candidates, key=lambda c: c[1]["instances"])
            near_100.append((r["kind"], d, s["instances"], s["mean"]))
    each = ", ".join(f"{run['kind']} {100 * (m - 1):+.1f} %"
                     for run, m in zip(runs, shortest, strict=True))
    lines = [
        f"Shortest sub-profiles ({durations[0]} min): sub-profile WGSS on average "
        f"{100 * (statistics.fmean(shortest) - 1):+.1f} % against the reference over the "
        f"kinds ({each}); Phase-TA: +37.0 % (up to +67.3 % for OpenFOAM).",
    ]
    if near_100:
        lines.append(
            "Durations whose mean instance count is the closest to 100 while >= 100: "
            + ", ".join(f"{k} {d} min ({n:.0f} instances, {100 * (m - 1):+.1f} %)"
                        for k, d, n, m in near_100)
            + f"; on average {100 * (statistics.fmean(m for *_, m in near_100) - 1):+.1f} % "
            "(Phase-TA: +12.1 %, up to +24.4 % for NEMO).")
    print(_common.text_table(ref_header, ref_table))
    print()
    print(_common.text_table(header, table))
    print()
    print("\n".join(lines))

    figure_path = args.figure or (None if args.quick else FIGURE)
    if figure_path is not None:
        figure(runs, durations, figure_path)
        print(f"\nwrote {figure_path}")
    elapsed = bench.elapsed()
    md = "\n".join([
        "## Sub-profiles, Phase-TA's Fig. 5 (`benchmarks/subprofiles.py`)",
        "",
        *_common.machine_lines(bench),
        f"- Whole script: {elapsed / 60:.1f} min. For each kind, `generate(kind, minutes=M, "
        f"seed={SEED})` is the reference profile; {n_sub} sub-profiles per duration at "
        "random offsets (seeded) inside the main periodic region (after the initialization, "
        "before the finalization; OpenFOAM-like checkpoints stay in), analyzed with "
        "`analyze(profile, window_s=(start, end))`; each one's highest-coverage pattern is "
        "scored with `relevance(pattern.values, reference, profile, pattern=0)`, 0 being the "
        "reference's highest-coverage pattern. Ratio = sub-profile WGSS / reference WGSS "
        "(both against all the reference pattern's instances; 1 = as good as the reference).",
        "- A reference is longer than 60 minutes when needed (HPCG-like): the generator "
        "scales the initialization (about 40 % of an HPCG-like profile) with the duration, and "
        "a 45-minute sub-profile must fit in the main region.",
        "- Statistics over the sub-profiles whose top pattern has the reference's periodicity "
        f"(length within {SAME_LENGTH:.0%}); the others are counted in the \"same "
        "periodicity\" column.",
        "",
        _common.markdown_table(ref_header, ref_table),
        "",
        _common.markdown_table(header, table, "llrrrrrrr"),
        "",
        *[f"- {line}" for line in lines],
        "",
        f"Figure: `{FIGURE.name}` (crosses: sub-profiles; diamonds and bars: mean +- std; "
        "numbers: mean instances; blue line: reference WGSS).",
        "",
        f"![Fig. 5 reproduction]({FIGURE.name})",
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
