"""How a phase analysis reads: the headline, the phases in time order, the representative
vector of each phase id, and the notes; what the command line, the report and a notebook
show (:mod:`phasekit.present`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from phasekit.present import Presentation, View, percent, quantity
from phasekit.quality import seconds

__all__ = ["headline", "left_out_line", "presentation", "short_name"]


def short_name(metric: str) -> str:
    """A metric's name short enough for a column header (``cache_misses`` -> ``llc_misses``)."""
    return (metric.replace("cache_", "llc_").replace("_bytes", "")
            .replace("instructions", "instr").replace("branch_misses", "br_miss")
            .replace("branches", "branch"))


def left_out_line(left_out: Mapping[str, str]) -> str:
    """One line naming the metrics that are not dimensions of the vectors and why (metrics
    with the same reason together); empty when there are none."""
    by_reason: dict[str, list[str]] = {}
    for metric, reason in left_out.items():
        by_reason.setdefault(reason, []).append(metric)
    return ("left out: " + "; ".join(f"{', '.join(metrics)} ({reason})"
                                     for reason, metrics in by_reason.items())
            if by_reason else "")


def headline(result: Any) -> str:
    """One line in plain words: how many phases of how many kinds, the kind (the tables' id)
    that takes most of the run (its share, and where when it is one phase) and the kind that
    recurs most otherwise (its phases and share of the run)."""
    n, kinds = len(result.phases), result.n_ids
    hours = result.duration_s / 3600
    line = (f"{n} phase{'s' if n != 1 else ''} of {kinds} kind{'s' if kinds != 1 else ''} "
            f"in {quantity(result.duration_s)} s" + (f" ({hours:.3g} h)" if hours >= 2 else ""))
    if n < 2 or kinds < 2 or not result.duration_s:
        return line
    by_id = _by_id(result)
    main = max(by_id, key=lambda i: by_id[i][1])
    count, time = by_id[main]
    line += f"; id {main} is {percent(time / result.duration_s)} of the run"
    if count == 1:
        phase = next(p for p in result.phases if p.id == main)
        line += f", from {quantity(phase.start_s)} to {quantity(phase.end_s)} s"
    else:
        line += f" in {count} phases"
    recurring = {i: (count, time) for i, (count, time) in by_id.items()
                 if count > 1 and i != main}
    if recurring:
        top = max(recurring, key=lambda i: recurring[i][1])
        count, time = recurring[top]
        line += (f"; id {top} occurs in {count} phases, "
                 f"{percent(time / result.duration_s)} of the run")
        if len(recurring) > 1:
            line += f" ({len(recurring) - 1} more id{'s' if len(recurring) > 2 else ''} recur)"
    return line


def _by_id(result: Any) -> dict[int, tuple[int, float]]:
    """Phase id -> (occurrences, total seconds), by id."""
    out: dict[int, tuple[int, float]] = {}
    for p in result.phases:
        count, time = out.get(p.id, (0, 0.0))
        out[p.id] = (count + 1, time + p.duration_s)
    return dict(sorted(out.items()))


def presentation(result: Any, name: str | None = None) -> Presentation:
    """The phases of ``result`` (``name``: its file, in the title) as a person reads them."""
    title = (f"Phases of {name or result.node or 'the profile'} (Tsafack Chetsa et al.; "
             f"{result.method}, threshold {result.threshold:g}, smoothing {result.smooth})")
    phases = View(title, ("#", "start (s)", "end (s)", "duration (s)", "id", "detected (s)"),
                  tuple((str(k), f"{p.start_s:.6g}", f"{p.end_s:.6g}", f"{p.duration_s:.6g}",
                         str(p.id), f"{p.detected_at_s:.6g}")
                        for k, p in enumerate(result.phases, start=1)),
                  numeric=(True,) * 6)
    unit = "per cycle" if result.normalization == "cycles" else "per second"
    first: dict[int, Any] = {}
    for phase in result.phases:
        first.setdefault(phase.id, phase)
    vectors = View(f"Representative vectors ({unit}; the first phase of each id)",
                   ("id", *(short_name(s) for s in result.sensors)),
                   tuple((str(i), *(f"{p.representative[s]:.3g}" for s in result.sensors))
                         for i, p in first.items()),
                   numeric=(True,) * (1 + len(result.sensors)),
                   wrap=(False,) + (True,) * len(result.sensors))
    total = result.duration_s
    ids = View("Phase ids", ("id", "occurrences", "time (s)", "share", "first at (s)"),
               tuple((str(i), str(count), f"{time:.4g}", percent(time / total) if total else "-",
                      f"{first[i].start_s:.6g}") for i, (count, time) in _by_id(result).items()),
               numeric=(True,) * 5)
    notes = []  # the headline counts the phases and their kinds
    if line := left_out_line(result.params.get("sensor_choice", {}).get("left_out") or {}):
        notes.append(line)
    if result.explanation:
        notes.append(f"note: {result.explanation}")
    if line := _approximated_line(result.params, result.period):
        notes.append(line)
    return Presentation(headline(result), (phases, ids, vectors), tuple(notes))


def _approximated_line(params: dict, period: float) -> str:
    """What the shape segmentation approximated on a long series, in one line ("" when
    nothing; ``period``: the sampling period, s)."""
    parts = []
    if params.get("approximate"):
        parts.append("the nearest subsequences found approximately (a k-d tree over "
                     "sketches), as the series is long")
    factor = int(params.get("coarse_factor", 1) or 1)
    if factor > 1:
        parts.append(f"subsequences compared every {factor} samples, so each boundary is "
                     f"placed within {factor} samples ({seconds(factor * period)})")
    return "long run, approximated: " + "; ".join(parts) if parts else ""
