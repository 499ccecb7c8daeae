"""How a folded result reads: the headline, the tables of its counts and ratios, the notes
(:mod:`phasekit.present`). Everything here reads the result's JSON fields, so a result read
back from a file reads as the one just computed.

The figures a person reads first, per metric: the *busiest tenth* of the instance (the
tenth of it, among the consecutive tenths of the positions, where the mean share grows the
most) and its *pace* (the share it holds over a tenth: 1 is an even pace, 2.3 means 23 % of
the count in 10 % of the time), the quietest tenth likewise; for a ratio (ipc, mpi_share)
its highest and lowest tenth. The *spread* of a count is how far its instances disagree:
the largest interquartile range of the share over the positions (0.03: at worst, the middle
half of the instances lie within 3 % of the count of each other); of a ratio, the
interquartile range of its whole-instance values over their median.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from phasekit.present import Presentation, View, plural

__all__ = ["SUMMARY_COLUMNS", "TENTH", "extremes", "headline", "main_curve", "presentation",
           "summary_rows"]

#: The window of the busiest and quietest stretch: a tenth of the instance.
TENTH = 0.1
SUMMARY_COLUMNS = ("metric", "kind", "instances", "per_instance", "high_from", "high_to",
                   "high", "low_from", "low_to", "low", "spread")


def _window(result: Any) -> int:
    return max(1, round(TENTH * (result.positions.size - 1)))


def extremes(result: Any, curve: Any) -> tuple[tuple[float, float, float],
                                               tuple[float, float, float]]:
    """The highest and lowest tenth of a curve: ``(from, to, value)`` each, positions as
    fractions of the instance; the value is the pace of a count, the level of a ratio (NaN
    when unknown)."""
    w = _window(result)
    positions = result.positions
    nan = (math.nan, math.nan, math.nan)
    if curve.kind == "count":
        if curve.share is None or curve.n_instances == 0:
            return nan, nan
        share = np.asarray(curve.share["mean"], float)
        gained = share[w:] - share[:-w]
        span = positions[w:] - positions[:-w]
        values = gained / span
    else:
        if curve.level is None or curve.n_instances == 0:
            return nan, nan
        level = np.asarray(curve.level["mean"], float)
        with np.errstate(invalid="ignore"):
            values = np.convolve(np.nan_to_num(level), np.ones(w), "valid") / np.maximum(
                np.convolve(np.isfinite(level).astype(float), np.ones(w), "valid"), 1)
        values[np.convolve(np.isfinite(level).astype(float), np.ones(w), "valid") == 0] = np.nan
    if not np.isfinite(values).any():
        return nan, nan
    hi, lo = int(np.nanargmax(values)), int(np.nanargmin(values))
    return ((float(positions[hi]), float(positions[hi + w]), float(values[hi])),
            (float(positions[lo]), float(positions[lo + w]), float(values[lo])))


def _spread(curve: Any) -> float:
    if curve.n_instances < 2:
        return math.nan
    if curve.kind == "count" and curve.share is not None:
        return float(np.nanmax(np.asarray(curve.share["q75"]) - np.asarray(curve.share["q25"])))
    total = curve.total
    median = float(total.get("median", math.nan))
    if not math.isfinite(median) or median == 0:
        return math.nan
    return float((total["q75"] - total["q25"]) / abs(median))


def summary_rows(result: Any) -> list[dict[str, Any]]:
    """One row per metric (:data:`SUMMARY_COLUMNS`; positions as fractions): its kind,
    instances, mean count (or ratio) per instance, highest and lowest tenth and their pace
    (or level), and the spread (module docstring)."""
    rows = []
    for curve in result.curves:
        (hi_from, hi_to, high), (lo_from, lo_to, low) = extremes(result, curve)
        rows.append({"metric": curve.metric, "kind": curve.kind,
                     "instances": curve.n_instances,
                     "per_instance": float(curve.total.get("mean", math.nan)),
                     "high_from": hi_from, "high_to": hi_to, "high": high,
                     "low_from": lo_from, "low_to": lo_to, "low": low,
                     "spread": _spread(curve)})
    return rows


def main_curve(result: Any) -> Any | None:
    """The count the headline speaks of: the metric the pattern was found in, else
    instructions, else the first count with instances."""
    counts = [c for c in result.curves if c.kind == "count" and c.n_instances > 0]
    wanted = [*(result.origin.get("metrics") or []), "instructions"]
    for name in wanted:
        for c in counts:
            if c.metric == name:
                return c
    return counts[0] if counts else None


def _seconds(value: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if value >= 0.1 * scale or unit == "us":
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} s"  # pragma: no cover


def _span(start: float, end: float) -> str:
    return f"{100 * start:.0f}-{100 * end:.0f} %"


def _origin(result: Any) -> str:
    origin = result.origin
    if origin.get("of") == "loop":
        sites = origin.get("sites") or []
        return f" (loop {origin.get('loop')}" + (f" at {sites[0]})" if sites else ")")
    if origin.get("of") == "pattern":
        return (f" (pattern {int(origin.get('pattern', 0)) + 1}, period "
                f"{_seconds(float(origin.get('period_s') or math.nan))})")
    return ""


def headline(result: Any) -> str:
    """One line: how many instances of how long were folded, of what, where the main count
    runs fastest and how much, the range of ipc, and how well the instances agree."""
    n = result.n_instances
    what = "iteration" if result.origin.get("of") == "loop" else "instance"
    ranks = np.asarray(result.ranks)
    counted = plural(n, what)
    if ranks.size and (ranks >= 0).all():
        per_rank = np.unique(ranks, return_counts=True)[1]
        counted = (f"{plural(int(per_rank[0]), what)} \u00d7 {per_rank.size} ranks"
                   if (per_rank == per_rank[0]).all() else
                   f"{plural(n, what)} on {per_rank.size} ranks")
    line = (f"{counted} of {_seconds(float(result.duration_s.get('mean', math.nan)))}"
            f" folded{_origin(result)}")
    main = main_curve(result)
    if main is None:
        return line + ": no counter to fold"
    (start, end, pace), _ = extremes(result, main)
    if math.isfinite(pace):
        line += (f": the busiest tenth, {_span(start, end)}, holds "
                 f"{100 * pace * (end - start):.0f} % of the {main.metric} ({pace:.1f}\u00d7 "
                 "an even pace)")
    for c in result.curves:
        if c.metric == "ipc" and c.n_instances:
            (_, _, high), (_, _, low) = extremes(result, c)
            if math.isfinite(high) and math.isfinite(low):
                line += f"; ipc {low:.2f} to {high:.2f} by tenth"
    spread = _spread(main)
    if n == 1:
        line += "; one instance: none to compare it with"
    elif math.isfinite(spread):
        line += f"; the {what}s agree within {100 * spread:.0f} % of the count"
    return line


def _percent(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{100 * value:.0f} %"


def _times(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{value:.2f}\u00d7"


def _level(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{value:.3g}"


def _where(start: float, end: float) -> str:
    return "-" if not math.isfinite(start) else _span(start, end)


def presentation(result: Any, name: str | None = None) -> Presentation:
    """The folded result as a person reads it: the headline, the counts (per instance, the
    busiest and quietest tenth and their pace, the spread), the ratios (their whole-instance
    value, highest and lowest tenth), then the notes; ``name`` names the source in the
    titles (default its file)."""
    shown = name or str(result.source.get("name") or "the source")
    rows = summary_rows(result)
    counts = [r for r in rows if r["kind"] == "count"]
    ratios = [r for r in rows if r["kind"] != "count"]
    views = []
    if counts:
        views.append(View(
            f"Folded counts of {shown} (per instance, 0-100 % of it)",
            ("metric", "instances", "per instance", "busiest tenth", "pace", "quietest tenth",
             "pace", "spread"),
            tuple((r["metric"], str(r["instances"]), _level(r["per_instance"]),
                   _where(r["high_from"], r["high_to"]), _times(r["high"]),
                   _where(r["low_from"], r["low_to"]), _times(r["low"]), _percent(r["spread"]))
                  for r in counts),
            numeric=(False, True, True, False, True, False, True, True)))
    if ratios:
        views.append(View(
            f"Folded ratios of {shown}",
            ("metric", "instances", "whole instance", "highest tenth", "level",
             "lowest tenth", "level", "spread"),
            tuple((r["metric"], str(r["instances"]), _level(r["per_instance"]),
                   _where(r["high_from"], r["high_to"]), _level(r["high"]),
                   _where(r["low_from"], r["low_to"]), _level(r["low"]), _percent(r["spread"]))
                  for r in ratios),
            numeric=(False, True, True, False, True, False, True, True)))
    source = result.source
    method = (f"folded at {source.get('resolution', '?')} resolution on "
              f"{result.positions.size} positions per instance; mean, median and quartiles "
              "over the instances, no curve fitted (Folding, BSC, fits one through samples); "
              "pace 1 = the instance's mean pace")
    return Presentation(headline(result), tuple(views), (*result.notes, method))
