"""Every scale of repetition: nested periodicities found by ``analyze`` (its ``scales``).

A synthetic nested suite (``phasekit.synth.nested.generate_nested``): an inner cycle repeated
k = 2..20 times inside an outer cycle marked by a phase of another level and shape
(``outer="phase"``, ratios k + 0.3..1.5) or by an amplitude envelope (``outer="envelope"``,
ratio k), under four conditions (clean: 5 % noise; noisy: 15 %; drift: 2 % period jitter;
gaps: 3 % of the samples missing in runs), several seeds and inner periods. A case is found
when ``result.scales`` holds a scale within 10 % of the inner period and one within 10 % of
the outer period whose ratio to it is within 10 % of the true ratio; any other scale counts
as a false extra scale. Controls: single-scale profiles (``outer="none"``) under the same
conditions, and the Phase-TA-like suite (``phasekit.synth.generate``: NEMO-, HPCG- and
OpenFOAM-like, 10 minutes): any scale beyond the dominant one is a false extra scale.
Time: ``analyze`` on 10-minute profiles at 5 ms with and without the search for other scales
(``phasekit.periodicity.scales``), best of three.

Run: ``python benchmarks/nested_scales.py [--quick] [--results FILE]`` (``--quick``: a few
cases of each kind, one timing).
"""

from __future__ import annotations

import importlib
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

import _common
from phasekit.periodicity import analyze
from phasekit.synth import KINDS, generate
from phasekit.synth.nested import generate_nested

analyze_module = importlib.import_module("phasekit.periodicity.analyze")
SECTION = "nested_scales"
REPEATS = (2, 3, 4, 6, 8, 12, 16, 20)
MARKERS = (0.37, 0.6, 1.0, 1.5)
CONDITIONS: dict[str, dict[str, float]] = {
    "clean": {"noise": 0.05}, "noisy": {"noise": 0.15},
    "drift": {"noise": 0.05, "drift": 0.02}, "gaps": {"noise": 0.05, "gaps": 0.03},
}
INNER_S = (1.0, 0.6, 2.3)
PERIOD = 0.02
TOLERANCE = 0.1
OUTER_CYCLES = 10


@dataclass(frozen=True)
class Case:
    suite: str
    outer: str
    repeats: int
    marker: float
    condition: str
    seed: int
    inner_s: float

    def make(self) -> tuple[Any, Any]:
        ratio = self.repeats + (self.marker if self.outer == "phase" else 0.0)
        minutes = max(3.0, OUTER_CYCLES * ratio * self.inner_s / 60.0)
        shape = {"marker": self.marker} if self.outer == "phase" else {}
        return generate_nested(inner_s=self.inner_s, repeats=self.repeats, outer=self.outer,
                               **shape, minutes=minutes, period=PERIOD, seed=self.seed,
                               **CONDITIONS[self.condition])


def cases(quick: bool) -> list[Case]:
    out: list[Case] = []
    seeds = (0,) if quick else (0, 1)
    repeats = (3, 6, 16) if quick else REPEATS
    conditions = ("clean", "drift") if quick else tuple(CONDITIONS)
    for seed in seeds:
        for i, k in enumerate(repeats):
            for j, condition in enumerate(conditions):
                marker = MARKERS[(i + j + seed) % len(MARKERS)]
                inner = INNER_S[(i + 2 * j + seed) % len(INNER_S)]
                out.append(Case("nested", "phase", k, marker, condition, seed, inner))
    for i, k in enumerate(repeats):
        for j, condition in enumerate(conditions):
            out.append(Case("nested", "envelope", k, 0.0, condition, 2,
                            INNER_S[(i + j) % len(INNER_S)]))
    for seed in range(2 if quick else 6):
        for j, condition in enumerate(conditions):
            out.append(Case("control", "none", 6, 0.0, condition, seed,
                            INNER_S[(seed + j) % len(INNER_S)]))
    return out


def near(value: float, target: float) -> bool:
    return abs(value - target) <= TOLERANCE * target


def judge(case: Case, result: Any, truth: Any) -> dict[str, Any]:
    periods = [s.period_s for s in result.scales]
    row = {"case": case, "scales": periods, "found": False, "extra": 0,
           "dominant": result.patterns[0].period_s if result.patterns else float("nan")}
    if case.outer == "none":
        row["found"] = any(near(p, truth.inner_period_s) for p in periods)
        row["extra"] = max(0, len(periods) - 1)
        return row
    inner = [s for s in result.scales if near(s.period_s, truth.inner_period_s)]
    outer = [s for s in result.scales if near(s.period_s, truth.outer_period_s)]
    row["found"] = any(near(o.period_s / i.period_s, truth.ratio) for i in inner for o in outer)
    row["extra"] = len(periods) - bool(inner) - bool(outer)
    row["ratio"] = (outer[0].period_s / inner[0].period_s) if inner and outer else float("nan")
    return row


def run_suite(quick: bool) -> list[dict[str, Any]]:
    rows = []
    for case in cases(quick):
        profile, truth = case.make()
        result = analyze(profile, metrics=["ipc"])
        row = judge(case, result, truth)
        rows.append(row)
        scales = ", ".join(f"{p:.3g}" for p in row["scales"])
        true = f"{truth.inner_period_s:.3g}" + (f" / {truth.outer_period_s:.3g}"
                                                 if truth.nested else "")
        verdict = ("ok" if row["found"] else "MISSED") + (f", {row['extra']} extra"
                                                         if row["extra"] else "")
        print(f"  {case.outer} k={case.repeats} marker={case.marker:g} {case.condition} "
              f"seed {case.seed} inner {case.inner_s:g} s: scales {scales} s (truth {true}) "
              f"{verdict}", file=sys.stderr, flush=True)
    return rows


def run_phase_ta(quick: bool) -> list[dict[str, Any]]:
    rows = []
    seeds = (0,) if quick else (0, 1, 2, 3)
    for kind in KINDS:
        for seed in seeds:
            profile, _ = generate(kind, minutes=2.0 if quick else 10.0, seed=seed)
            result = analyze(profile)
            rows.append({"kind": kind, "seed": seed, "extra": max(0, len(result.scales) - 1),
                         "scales": [s.period_s for s in result.scales]})
            scales = ", ".join(f"{s.period_s:.3g}" for s in result.scales)
            print(f"  {kind} seed {seed}: scales {scales} s", file=sys.stderr, flush=True)
    return rows


def _dominant_only(x, patterns, **keywords):  # the analysis without the search for scales
    return ()


def timing(quick: bool) -> list[list[object]]:
    """Seconds of ``analyze`` on 10-minute 5 ms profiles, with and without the scale search
    (best of three runs each)."""
    profiles = {
        "nested 2.3 s x 6.37 (10 min, 5 ms)": generate_nested(minutes=10.0, period=0.005,
                                                              noise=0.1, drift=0.01)[0],
        "envelope 1 s x 8 (10 min, 5 ms)": generate_nested(inner_s=1.0, repeats=8,
                                                           outer="envelope", minutes=10.0,
                                                           period=0.005, noise=0.1)[0],
        "NEMO-like (10 min, 5 ms)": generate("nemo", minutes=10.0, seed=0)[0],
    }
    if quick:
        profiles = dict(list(profiles.items())[:1])
    search = analyze_module._scales
    rows = []
    for name, profile in profiles.items():
        times = {}
        for label, finder in (("without", _dominant_only), ("with", search)):
            analyze_module._scales = finder
            best = float("inf")
            try:
                for _ in range(1 if quick else 3):
                    start = time.perf_counter()
                    result = analyze(profile, metrics=["ipc"])
                    best = min(best, time.perf_counter() - start)
            finally:
                analyze_module._scales = search
            times[label] = best
        rows.append([name, f"{times['without']:.2f} s", f"{times['with']:.2f} s",
                     f"+{100 * (times['with'] / times['without'] - 1):.0f} %",
                     ", ".join(f"{s.period_s:.3g} s" for s in result.scales)])
    return rows


def summary(rows: list[dict[str, Any]]) -> list[list[object]]:
    table = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        case = row["case"]
        groups.setdefault((case.outer, case.condition), []).append(row)
        groups.setdefault((case.outer, "all"), []).append(row)
    for (outer, condition), sel in groups.items():
        found = sum(r["found"] for r in sel)
        extra = sum(r["extra"] > 0 for r in sel)
        what = "one scale (the inner period)" if outer == "none" else "both scales, ratio within 10 %"
        table.append([outer, condition, len(sel), what,
                      f"{found}/{len(sel)} ({100 * found / len(sel):.0f} %)",
                      f"{extra}/{len(sel)}"])
    return table


def per_ratio(rows: list[dict[str, Any]]) -> list[list[object]]:
    table = []
    for k in sorted({r["case"].repeats for r in rows if r["case"].outer != "none"}):
        sel = [r for r in rows if r["case"].repeats == k and r["case"].outer != "none"]
        errors = [abs(r["ratio"] / (r["case"].repeats + (r["case"].marker if r["case"].outer
                                                           == "phase" else 0)) - 1)
                  for r in sel if r["found"]]
        table.append([k, len(sel), sum(r["found"] for r in sel),
                      f"{100 * statistics.fmean(errors):.1f} %" if errors else "n/a"])
    return table


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="a few cases of each kind and one timing")
    args = parser.parse_args(argv)
    bench = _common.Run()
    rows = run_suite(args.quick)
    phase_ta = run_phase_ta(args.quick)
    times = timing(args.quick)
    nested = [r for r in rows if r["case"].outer != "none"]
    controls = [r for r in rows if r["case"].outer == "none"]
    found = sum(r["found"] for r in nested)
    extra_nested = sum(r["extra"] for r in nested)
    false_controls = sum(r["extra"] > 0 for r in controls)
    false_phase_ta = sum(r["extra"] > 0 for r in phase_ta)
    header = ["outer cycle", "condition", "cases", "expected", "found", "with extra scales"]
    table = summary(rows)
    ratio_header = ["inner instances per outer cycle (k)", "cases", "found", "mean ratio error"]
    ratio_table = per_ratio(rows)
    time_header = ["profile", "analyze without the scale search", "with it", "extra",
                   "scales found"]
    verdict = (f"Nested: both scales with the right ratio in {found}/{len(nested)} cases "
               f"({100 * found / max(1, len(nested)):.1f} %), {extra_nested} extra scales in "
               f"all. Single-scale controls: {false_controls}/{len(controls)} with a false extra "
               f"scale; Phase-TA-like suite: {false_phase_ta}/{len(phase_ta)}.")
    print(_common.text_table(header, table))
    print()
    print(_common.text_table(ratio_header, ratio_table))
    print()
    print(_common.text_table(time_header, times))
    print()
    print(verdict)
    phase_ta_line = "; ".join(
        f"{r['kind']} seed {r['seed']}: " + ", ".join(f"{p:.3g}" for p in r["scales"]) + " s"
        for r in phase_ta)
    md = "\n".join([
        "## Nested periodicities: every scale (`benchmarks/nested_scales.py`)",
        "",
        *_common.machine_lines(bench),
        f"- Whole script: {bench.elapsed() / 60:.1f} min; `analyze(profile, metrics=['ipc'])` "
        "with every parameter at its default; its `scales` judged against the truth.",
        f"- Nested suite: `generate_nested` with k = {', '.join(map(str, REPEATS))} inner "
        f"instances per outer cycle; `phase` (a phase of another level once per cycle, "
        f"{', '.join(map(str, MARKERS))} inner periods long) and `envelope` (amplitude "
        f"falling by 60 % along the cycle); inner periods {', '.join(map(str, INNER_S))} s at "
        f"{PERIOD * 1000:g} ms, {OUTER_CYCLES} outer cycles (at least 3 minutes); conditions: "
        + "; ".join(f"{k} {v}" for k, v in CONDITIONS.items()) + ".",
        "- Found: a scale within 10 % of the inner period and one within 10 % of the outer "
        "period, their ratio within 10 % of the truth's; any other scale is an extra one.",
        "",
        _common.markdown_table(header, table, "llrlrr"),
        "",
        _common.markdown_table(ratio_header, ratio_table),
        "",
        f"Phase-TA-like suite (controls, `phasekit.synth.generate`): {phase_ta_line}.",
        "",
        "Time (best of three; the same analysis with the scale search replaced by the dominant "
        "scale only):",
        "",
        _common.markdown_table(time_header, times, "lrrrl"),
        "",
        "### Verdict",
        "",
        verdict,
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
