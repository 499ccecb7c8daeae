"""How a periodicity analysis reads (Phase-TA, section IV-B, Table II).

:func:`profile_row` is Table II's row for one profile (T_exe, #rp(#i)[#pa], %period) and
:func:`pattern_rows` one row per representative pattern, largest coverage first; numbers
as they are (fractions for coverage). ``PeriodicityResult.summary()`` is built from these,
and :func:`presentation` (the headline, the tables as a person reads them, the notes) is
what the command line, the report and a notebook show.
"""

from __future__ import annotations

from typing import Any

from phasekit.present import Presentation, View, percent, view

__all__ = ["PATTERN_FORMATS", "PATTERN_HEADERS", "PROFILE_HEADERS", "SCALE_HEADERS", "headline",
           "metric_choice_line", "pattern_rows", "presentation", "profile_row", "scale_rows",
           "scales_line"]

#: Column of :func:`pattern_rows` -> its header in Phase-TA's notation.
PATTERN_HEADERS = {"pattern": "#", "period_s": "period (s)", "length": "length",
                   "instances": "#i", "regions": "regions", "mean_consecutive": "[#pa]",
                   "coverage": "%period", "wgss": "WGSS", "dba_iterations": "DBA it."}
#: Column of :func:`profile_row` -> its meaning in Phase-TA's Table II.
PROFILE_HEADERS = {"duration_s": "T_exe (s)", "patterns": "#rp", "instances": "#i",
                   "mean_consecutive": "[#pa]", "coverage": "%period"}


def profile_row(result: Any) -> dict[str, Any]:
    """Table II's row of one analyzed profile (Phase-TA): T_exe (s), the number of patterns
    #rp, of instances #i, the mean consecutive instances [#pa] and %period (a fraction)."""
    return {"duration_s": result.duration_s, "patterns": len(result.patterns),
            "instances": result.n_instances, "mean_consecutive": result.mean_consecutive,
            "coverage": result.coverage}


def pattern_rows(result: Any) -> list[dict[str, Any]]:
    """One row per representative pattern (1-based ``pattern``), largest coverage first:
    period (s), length (samples), instances, periodic regions, mean consecutive instances,
    coverage (a fraction), WGSS and DBA iterations."""
    return [{"pattern": i, "period_s": p.period_s, "length": p.length,
             "instances": p.n_instances, "regions": p.n_regions,
             "mean_consecutive": p.mean_consecutive, "coverage": p.coverage, "wgss": p.wgss,
             "dba_iterations": p.dba_iterations}
            for i, p in enumerate(result.patterns, start=1)]


#: Column of :func:`scale_rows` -> its header.
SCALE_HEADERS = {"period_s": "period (s)", "instances": "#i", "coverage": "%period",
                 "relation": "relation", "source": "found by"}


def scale_rows(result: Any) -> list[dict[str, Any]]:
    """One row per scale at which the profile repeats (``result.scales``), shortest first:
    period (s), instances, coverage (a fraction), how it relates to the next shorter scale
    ("6.37 x the 2.3 s cycle"; the dominant one says so) and where it was found
    (:mod:`phasekit.periodicity.scales`)."""
    rows = []
    for i, scale in enumerate(result.scales):
        relation = (f"{scale.ratio:.3g} x the {result.scales[i - 1].period_s:.4g} s cycle"
                    if i and scale.ratio else "")
        if scale.dominant:
            relation = f"{relation}, dominant" if relation else "dominant"
        rows.append({"period_s": scale.period_s, "instances": scale.n_instances,
                     "coverage": scale.coverage, "relation": relation,
                     "source": scale.source})
    return rows


def scales_line(result: Any) -> str:
    """The other scales in a few words, relative to the dominant one ("inside a 14.66 s
    cycle (24 times)"), "" when the profile repeats at one scale."""
    scales = tuple(getattr(result, "scales", ()))
    at = next((i for i, s in enumerate(scales) if s.dominant), None)
    if at is None or len(scales) < 2:
        return ""
    parts = [f"inside a {s.period_s:.4g} s cycle ({s.n_instances} times, "
             f"{s.ratio:.3g} x the {scales[i - 1].period_s:.4g} s one)"
             for i, s in enumerate(scales) if i > at]
    parts += [f"a {s.period_s:.4g} s cycle inside it ({s.n_instances} times)"
              for s in reversed(scales[:at])]
    return "; ".join(parts)


#: How each column of :func:`pattern_rows` is written for a person.
PATTERN_FORMATS = {"period_s": "{:.4g}".format, "mean_consecutive": "{:.1f}".format,
                   "coverage": percent, "wgss": "{:.4g}".format}


def headline(result: Any) -> str:
    """One line in plain words: what repeats, how often, over how much of the run, and the
    other scales it repeats at (:func:`scales_line`)."""
    metrics = "+".join(result.metrics)
    share = "window" if result.params.get("window_s") is not None else "profile"
    if not result.patterns:
        return f"no periodicity found in {metrics}"
    main = result.patterns[0]
    others = len(result.patterns) - 1
    more = f" and {others} more pattern{'s' if others > 1 else ''}" if others else ""
    if main.n_instances < 2:  # the short-profile mode: a cycle seen, not seen to repeat
        return (f"{metrics}: one cycle of {main.period_s:.4g} s over "
                f"{percent(main.coverage)} of the {share}, too short a {share} to see it "
                f"repeat{more}")
    line = (f"{metrics} repeats every {main.period_s:.4g} s ({main.n_instances} times, "
            f"{percent(main.coverage)} of the {share}){more}; periodic over "
            f"{percent(result.coverage)} of the {share}")
    return f"{line}; {scales}" if (scales := scales_line(result)) else line


def metric_choice_line(result: Any) -> str | None:
    """One line on how the default metric was chosen (None when the caller named it), and
    on any quantized counter analyzed as its moving average."""
    choice = result.params.get("metric_choice") or {}
    parts = []
    if choice.get("rule") not in (None, "given"):
        parts.append(f"metric chosen: {choice.get('metric')} ({choice.get('reason')})")
    for name, width in (result.params.get("smoothing") or {}).items():
        parts.append(f"{name}: a quantized counter, analyzed as its moving average over "
                     f"{width} samples ({width * result.sampling_period:.3g} s)")
    return "; ".join(parts) or None


def presentation(result: Any, name: str | None = None) -> Presentation:
    """The result as a person reads it: the headline, Table II for the profile (``name``:
    its file), the patterns, the scales when it repeats at more than one (ours), then the
    notes (why nothing was found, the settings used, how the metric was chosen)."""
    row = profile_row(result)
    table_ii = View("Periodicities (Phase-TA, Table II)",
                    ("profile", "T_exe (s)", "#rp(#i)[#pa]", "%period"),
                    ((name or result.node or "-", f"{row['duration_s']:.3f}",
                      f"{row['patterns']}({row['instances']})[{row['mean_consecutive']:.1f}]",
                      percent(row["coverage"])),),
                    numeric=(False, True, True, True), wrap=(True, False, False, False))
    views = [table_ii]
    if result.patterns:
        views.append(view("Patterns", PATTERN_HEADERS, pattern_rows(result),
                          formats=PATTERN_FORMATS))
    if len(getattr(result, "scales", ())) > 1:
        views.append(view("Scales", SCALE_HEADERS, scale_rows(result),
                          formats={"period_s": "{:.4g}".format, "coverage": percent},
                          text=("relation", "source")))
    notes = [f"note: {result.explanation}"] if result.explanation else []
    plural = "s" if len(result.metrics) > 1 else ""
    joint = " (jointly, dependent DTW)" if plural else ""
    settings = [f"metric{plural}: {', '.join(result.metrics)}{joint}",
                f"window L = {result.window} samples "
                f"({result.window * result.sampling_period:.4g} s)"]
    if result.params.get("window_s") is not None:
        end = result.offset_s + result.duration_s
        settings.append(f"analyzed {result.offset_s:g}-{end:g} s of the profile")
    notes.append("; ".join(settings))
    if line := metric_choice_line(result):
        notes.append(line)
    return Presentation(headline(result), tuple(views), tuple(notes))
