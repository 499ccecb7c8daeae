"""How a periodicity analysis reads.

:func:`profile_row` is Phase-TA's Table II row for one profile (T_exe, #rp(#i)[#pa],
%period; section IV-B) and :func:`pattern_rows` one row per representative pattern, largest
coverage first; numbers as they are (fractions for coverage). ``PeriodicityResult.summary()``
is built from these, and :func:`presentation` is what the command line, the report and a
notebook show: the headline and the tables in plain words (what repeats, how often, over
how much of the run), the notes, and the paper's notation as detail views (``--detail``).
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


#: Below this share of measured samples the headline gives the coverage of the run beside
#: that of the measured samples (ours: a lost sample here and there changes nothing a person
#: reads).
MEASURED_ENOUGH = 0.99


def measured_share(result: Any) -> float:
    """Share of the analyzed samples that hold a value (the coverage is a share of those)."""
    return result.n_valid / result.n_samples if result.n_samples else 1.0


def of_the_run(result: Any, coverage: float, share: str) -> str:
    """``coverage`` (of the measured samples) as a person reads it: ``83.45% of the run``,
    or ``83.45% of the measured samples, 41.7% of the run`` when values are missing."""
    measured = measured_share(result)
    if measured >= MEASURED_ENOUGH:
        return f"{percent(coverage)} of the {share}"
    return (f"{percent(coverage)} of the measured samples, {percent(coverage * measured)} of "
            f"the {share}")


def headline(result: Any) -> str:
    """One line in plain words: what repeats, how often, over how much of the run (and of
    the measured samples, when values are missing), and the other scales it repeats at
    (:func:`scales_line`)."""
    metrics = "+".join(result.metrics)
    share = "window" if result.params.get("window_s") is not None else "run"
    if not result.patterns:
        return f"no periodicity found in {metrics}"
    main = result.patterns[0]
    others = len(result.patterns) - 1
    more = f" and {others} more pattern{'s' if others > 1 else ''}" if others else ""
    if main.n_instances < 2:  # the short-profile mode: a cycle seen, not seen to repeat
        return (f"{metrics}: one cycle of {main.period_s:.4g} s over "
                f"{of_the_run(result, main.coverage, share)}, too short a {share} to see it "
                f"repeat{more}")
    line = (f"{metrics} repeats every {main.period_s:.4g} s, {main.n_instances} times, over "
            f"{of_the_run(result, main.coverage, share)}{more}")
    if others:
        line += f" (periodic over {of_the_run(result, result.coverage, share)} in all)"
    return f"{line}; {scales}" if (scales := scales_line(result)) else line


def verdict_line(result: Any) -> str | None:
    """Why the metric choice's quick pass and the analysis disagree, when they do: the
    choice's single detector pass counts every instance it sees, the analysis keeps only
    patterns of at least ``min_instances`` repetitions over ``alpha`` of the profile."""
    choice = result.params.get("metric_choice") or {}
    seen = ((choice.get("scores") or {}).get(choice.get("metric")) or {}).get("coverage")
    if not seen or result.coverage >= 0.5 * seen:
        return None
    kept = ("kept no pattern" if not result.patterns
            else f"kept patterns over {percent(result.coverage)}")
    return (f"why the figures differ: the metric choice's quick pass saw {seen:.0%} of the "
            f"run periodic, but the analysis {kept}: a pattern needs at least "
            f"{result.params.get('min_instances', 3)} repetitions that look alike, over at "
            f"least {percent(result.params.get('alpha', 0.05), 0)} of the run")


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


#: The plain columns of the patterns table: what a person reads first.
PLAIN_PATTERN_HEADERS = {"pattern": "pattern", "period_s": "period (s)",
                         "instances": "repeats", "regions": "regions",
                         "coverage": "share of the measured run"}
#: The plain columns of the scales table.
PLAIN_SCALE_HEADERS = {"period_s": "period (s)", "instances": "repeats",
                       "coverage": "share of the measured run", "relation": "relation",
                       "source": "found by"}


def presentation(result: Any, name: str | None = None) -> Presentation:
    """The result as a person reads it: the headline, the patterns (period, repeats,
    regions, share), the scales when it repeats at more than one (ours), the notes (why
    nothing was found, missing data, why two figures differ, the settings, how the metric
    was chosen), and Phase-TA's notation as detail views (Table II for the profile,
    ``name`` its file; the patterns' length, [#pa], WGSS and DBA iterations)."""
    row = profile_row(result)
    views = []
    if result.patterns:
        views.append(view("Patterns", PLAIN_PATTERN_HEADERS, pattern_rows(result),
                          formats=PATTERN_FORMATS))
    if len(getattr(result, "scales", ())) > 1:
        views.append(view("Scales", PLAIN_SCALE_HEADERS, scale_rows(result),
                          formats={"period_s": "{:.4g}".format, "coverage": percent},
                          text=("relation", "source")))
    views.append(View("In Phase-TA's notation (Table II: T_exe, #patterns(#instances)"
                      "[mean consecutive instances], %period)",
                      ("profile", "T_exe (s)", "#rp(#i)[#pa]", "%period"),
                      ((name or result.node or "-", f"{row['duration_s']:.3f}",
                        f"{row['patterns']}({row['instances']})[{row['mean_consecutive']:.1f}]",
                        percent(row["coverage"])),),
                      numeric=(False, True, True, True), wrap=(True, False, False, False),
                      detail=True))
    if result.patterns:
        notation = view("Patterns in Phase-TA's notation (length in samples, #i instances, "
                        "[#pa] per region, WGSS of the instances to their average, DBA "
                        "iterations)", PATTERN_HEADERS, pattern_rows(result),
                        formats=PATTERN_FORMATS)
        views.append(View(notation.title, notation.headers, notation.rows, notation.numeric,
                          notation.wrap, detail=True))
    notes = [f"note: {result.explanation}"] if result.explanation else []
    if approximated := result.params.get("approximations"):
        notes.append("long run, approximated: " + "; ".join(approximated))
    if missing := result.params.get("data_quality"):
        notes.append(f"missing data: {missing}")
    if binned := result.params.get("binned"):
        notes.append(binned)
    notes += [f"loop: {link['sentence']}" for link in result.params.get("loops") or ()]
    if lead := result.params.get("lead"):
        notes.append(lead)
    if folded := result.params.get("fold"):
        notes.append(f"folded: {folded}")
    for merged in result.params.get("merged") or ():
        sizes = " + ".join(str(m.get("n_instances")) for m in merged.get("from", ()))
        notes.append(f"merged {len(merged.get('from', ()))} clusters of one period whose "
                     f"shapes differ only at noise level into pattern {merged['into'] + 1} "
                     f"({sizes} instances, distance {merged['ratio']:.2g} x noise)")
    if line := verdict_line(result):
        notes.append(line)
    plural = "s" if len(result.metrics) > 1 else ""
    joint = " (jointly, dependent DTW)" if plural else ""
    settings = [*([f"profile: {name}"] if name else []),
                f"metric{plural}: {', '.join(result.metrics)}{joint}",
                f"window L = {result.window} samples "
                f"({result.window * result.sampling_period:.4g} s)"]
    if result.params.get("window_s") is not None:
        end = result.offset_s + result.duration_s
        settings.append(f"analyzed {result.offset_s:g}-{end:g} s of the profile")
    notes.append("; ".join(settings))
    if line := metric_choice_line(result):
        notes.append(line)
    return Presentation(headline(result), tuple(views), tuple(notes))
