"""One renderer per result kind: a result's JSON (a dict) to the HTML of its section.

A renderer reads the keys it knows, defensively (a missing or odd value shows as "-"), builds
tables with :mod:`phasekit.report.html` (which escapes every cell) and figures with
:class:`~phasekit.report.svg.FigureMaker` (a figure that cannot be drawn becomes a note). A
kind without a renderer, or a renderer that fails on a malformed result, falls back to
:func:`generic`: the result's values as tables, escaped, and its JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from phasekit.report import figures
from phasekit.report.html import (
    Safe,
    details,
    fmt,
    is_scalar,
    join,
    kv_table,
    mapping_rows,
    note,
    percent,
    table,
    tag,
)
from phasekit.report.svg import FigureMaker
from phasekit.results import json_array as array
from phasekit.results import json_number as number
from phasekit.results import plain

__all__ = ["RENDERERS", "generic", "title_of"]

Renderer = Callable[[Mapping[str, Any], FigureMaker], Safe]

#: Rows of a table shown at most (the rest is counted).
MAX_ROWS = 100
#: Characters of raw JSON shown at most in the fallback.
MAX_JSON = 60_000


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in _list(value) if isinstance(v, Mapping)]


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _seconds(value: Any) -> str:
    return fmt(number(value), ".4g", " s")


def h3(text: Any) -> Safe:
    return tag("h3", text)


# --- fallback --------------------------------------------------------------------------------
def generic(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """Any result: its scalar values (nested ones as ``a.b``), each list of objects as a table
    (their scalar fields), and the JSON itself, collapsed."""
    parts = [kv_table(mapping_rows(data))]
    for key, value in data.items():
        rows = _dicts(value)
        if not rows:
            continue
        columns: list[str] = []
        for row in rows[:MAX_ROWS]:
            columns += [k for k, v in row.items() if is_scalar(v) and k not in columns]
        columns = columns[:12]
        if not columns:
            continue
        parts.append(h3(key))
        parts.append(table(columns, ([fmt(row.get(c)) for c in columns] for row in rows),
                           limit=MAX_ROWS))
    text = json.dumps(data, indent=1, default=str)
    if len(text) > MAX_JSON:
        text = text[:MAX_JSON] + f"\n... ({len(text) - MAX_JSON} more characters)"
    parts.append(details("the result as JSON", tag("pre", text)))
    return join(parts)


# --- periodicity (Phase-TA) ------------------------------------------------------------------
def presented(shown: Any, *, limit: int = MAX_ROWS) -> Safe:
    """A result's own :class:`~phasekit.present.Presentation`: the headline, its tables,
    its notes (the same words as the command line)."""
    parts = [tag("p", shown.headline, class_="headline")]
    parts += [table(v.headers, v.rows, numeric=[v.is_numeric(c) for c in range(len(v.headers))],
                    caption=v.title, limit=limit) for v in shown.views]
    parts += [note(line) for line in shown.notes]
    return join(parts)


def periodicity(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (headline, Table II, the patterns, notes), the profile with
    its periodic regions and the patterns over their instances (from the result's preview;
    without one, the regions alone)."""
    from phasekit.periodicity import PeriodicityResult

    result = PeriodicityResult.from_dict(dict(data))
    parts = [presented(result.present())]
    preview = _map(result.preview.get("profile"))
    parts.append(maker.safely("the profile figure", lambda: _profile_figure(result, maker)))
    if not preview:
        parts.append(note("This result carries no profile preview (written by an older "
                          "phasekit): the figure shows where the periodic regions are, not "
                          "the metric; analyze the profile again to get both."))
    if result.patterns:
        parts.append(maker.safely("the patterns figure", lambda: maker.from_figure(
            figures.instances_figure(
                [plain(p.to_dict()) for p in result.patterns],
                _dicts(result.preview.get("instances")), list(result.metrics),
                result.sampling_period, {str(k): str(v) for k, v in _map(
                    preview.get("units")).items()}),
            "Each representative pattern (thick) over random instances it was inferred from "
            "(thin), like the seed's Fig. 3.")))
    return join(parts)


def _profile_figure(result: Any, maker: FigureMaker) -> Safe:
    from phasekit.plot.periodicity import preview_profile, profile_figure

    preview = _map(result.preview.get("profile"))
    if preview:
        caption = ("The analyzed metric over the whole profile with its periodic regions shaded, "
                   "one colour per pattern" + (" (a min/max envelope of the samples)"
                                               if preview.get("envelope") else "") + ".")
    else:
        caption = "Where the periodic regions are (no profile preview in this result)."
    return maker.from_figure(profile_figure(preview_profile(result), result), caption)


# --- many nodes ------------------------------------------------------------------------------
def _outliers(data: Mapping[str, Any], names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Outlier node name -> (reasons, details), from objects (``node``, ``reasons``,
    ``details``), names or node indices."""

    def text(value: Any) -> str:
        return "; ".join(str(v) for v in value) if isinstance(value, list) else str(value or "")

    out: dict[str, tuple[str, str]] = {}
    for item in _list(data.get("outliers")):
        if isinstance(item, str):
            out[item] = ("", "")
        elif isinstance(item, int) and not isinstance(item, bool) and 0 <= item < len(names):
            out[names[item]] = ("", "")
        elif isinstance(item, Mapping):
            name = item.get("node", item.get("name", item.get("index")))
            if isinstance(name, int) and not isinstance(name, bool) and 0 <= name < len(names):
                name = names[name]
            reasons = text(item.get("reasons", item.get("reason")))
            out[str(name)] = (reasons.replace(";", ","),
                              text(item.get("details", item.get("explanation"))) or reasons)
    return out


def _distance(pattern: Mapping[str, Any]) -> float:
    return number(pattern.get("distance"))


def multinode(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The cross-node view: whether the nodes agree (Phase-TA, IV-B), a table of nodes
    (coverage, patterns, distance to the reference; outliers highlighted with why), the
    agreement per pattern, and figures of coverage, distance and periods per node."""
    nodes = _dicts(data.get("nodes"))
    names = [str(n.get("node", n.get("file", f"node {i}"))) for i, n in enumerate(nodes)]
    outliers = _outliers(data, names)
    agreement = _map(data.get("agreement"))
    reference = agreement.get("reference")
    threshold = number(agreement.get("threshold"))
    coverage = np.array([number(n.get("coverage")) for n in nodes])
    patterns = [sorted(_dicts(n.get("patterns")),
                       key=lambda p: -np.nan_to_num(number(p.get("coverage"))))
                for n in nodes]
    distances = [[_distance(p) for p in pats if math.isfinite(_distance(p))]
                 for pats in patterns]
    rows, classes = [], []
    for name, n, pats, dist in zip(names, nodes, patterns, distances, strict=True):
        flag = name in outliers
        badges = [tag("span", "outlier", class_="badge")] if flag else []
        if reference is not None and name == str(reference):
            badges.append(tag("span", "reference", class_="kind"))
        main = pats[0] if pats else {}
        rows.append([join([name, *badges]), n.get("file", "-"), _seconds(n.get("duration_s")),
                     percent(number(n.get("coverage"))), len(pats),
                     _seconds(main.get("period_s")) if main else "-",
                     ", ".join(f"{number(p.get('period_s')):.3g} s" for p in pats[1:4])
                     + (" ..." if len(pats) > 4 else ""),
                     percent(max(dist), 2) if dist else "-",
                     outliers[name][0] if flag else ""])
        classes.append("outlier" if flag else None)
    finite = coverage[np.isfinite(coverage)]
    summary = [("nodes", str(len(nodes))), ("outliers", str(len(outliers))),
               ("reference node", reference if reference is not None else "-"),
               ("coverage: median (min-max)",
                f"{percent(float(np.median(finite)))} ({percent(float(finite.min()))}-"
                f"{percent(float(finite.max()))})" if finite.size else "-")]
    parts = [_verdict(agreement, len(nodes)), kv_table(summary)]
    unknown = [o for o in outliers if o not in names]
    if unknown:
        parts.append(note("outliers not among the nodes: " + ", ".join(unknown), "warn"))
    parts.append(table(["node", "file", "duration", "coverage", "patterns", "main period",
                        "other periods", "distance to the reference (max)", "outlier"],
                       rows, row_classes=classes,
                       numeric=[False, False, True, True, True, True, False, True, False],
                       caption="Nodes (outliers highlighted)", limit=500))
    if outliers:
        files = dict(zip(names, (n.get("file", "-") for n in nodes), strict=True))
        parts.append(table(["node", "file", "why"],
                           ([name, files.get(name, "-"), why or "-"]
                            for name, (_, why) in outliers.items()),
                           row_classes=["outlier"] * len(outliers), caption="Outliers",
                           limit=500))
    errors = _dicts(data.get("errors"))
    if errors:
        parts.append(note(f"{len(errors)} file(s) could not be analyzed:", "warn"))
        parts.append(table(["file", "error"], ([e.get("file", "-"), e.get("message", "-")]
                                               for e in errors), limit=MAX_ROWS))
    if agreement:
        parts.append(h3("Agreement between nodes"))
        parts.append(_agreement(agreement, names, maker))
    flags = [name in outliers for name in names]
    if nodes:
        parts.append(maker.safely("the coverage figure", lambda: maker.from_figure(
            figures.coverage_figure(names, coverage, flags),
            "Share of each node's run in periodic regions; outliers in red.")))
    if any(distances):
        parts.append(maker.safely("the distance figure", lambda: maker.from_figure(
            figures.distance_figure(names, distances, threshold, flags),
            "Distance of each node's patterns to the reference node's, per associated point, "
            "relative to the pattern mean (Phase-TA, IV-B); the dashed line is the agreement "
            "threshold.")))
    if nodes:
        parts.append(maker.safely("the periods figure", lambda: maker.from_figure(
            figures.node_patterns_figure(names, patterns, flags, names.index(str(reference))
                                         if str(reference) in names else 0),
            "Left: the period of every pattern found on each node (marker area: coverage); "
            "nodes that agree line up. Right: each node's main pattern over one period, "
            "turned to the reference node's phase.")))
    return join(parts)


def _verdict(agreement: Mapping[str, Any], n_nodes: int) -> Safe:
    """One sentence: do the nodes agree (the seed's check), and if not, how many do."""
    agree = agreement.get("agree")
    threshold = percent(number(agreement.get("threshold")), 2)
    reference = agreement.get("reference")
    if agree is True:
        return note(f"All {n_nodes} nodes agree: every pattern is within {threshold} of the "
                    f"reference node {reference}'s (Phase-TA, IV-B).")
    if agree is False:
        disagreeing = [str(d) for d in _list(agreement.get("disagreeing"))]
        more = (": " + ", ".join(disagreeing[:20]) + (" ..." if len(disagreeing) > 20 else "")
                if disagreeing else "")
        return note(f"{fmt(agreement.get('n_agree'))} of {fmt(agreement.get('n_nodes'))} nodes "
                    f"agree within {threshold} of the reference node {reference}; "
                    f"{len(disagreeing)} do not{more}.", "warn")
    return note(str(agreement.get("explanation") or "No agreement check in this result."))


def _agreement(agreement: Mapping[str, Any], names: Sequence[str], maker: FigureMaker) -> Safe:
    parts = []
    rows = [(k, v) for k, v in mapping_rows(agreement) if k != "disagreeing"]
    if rows:
        parts.append(kv_table(rows))
    for key, value in agreement.items():
        matrix = _matrix(value)
        if matrix is not None:
            labels = list(names) if matrix.shape[0] == len(names) else [
                str(i) for i in range(matrix.shape[0])]
            parts.append(maker.safely(f"the {key} figure", lambda m=matrix, k=key, lab=labels:
                                      maker.from_figure(figures.agreement_figure(lab, m, str(k)),
                                                        f"Agreement: {k}, node against node.")))
            continue
        items = _dicts(value)
        if key == "patterns" and items:
            parts.append(table(
                ["pattern", "period", "nodes with it", "within the threshold",
                 "median distance", "max distance", "farthest node"],
                ([fmt(number(p.get("pattern")) + 1, ".0f"), _seconds(p.get("period_s")),
                  fmt(p.get("n_nodes")), fmt(p.get("n_agree")),
                  percent(number(p.get("median_distance")), 2),
                  percent(number(p.get("max_distance")), 2), p.get("max_node", "-")]
                 for p in items),
                numeric=[True] * 6 + [False], caption="Per pattern of the reference node",
                limit=MAX_ROWS))
        elif items:
            columns = list(dict.fromkeys(k for row in items for k, v in row.items()
                                         if is_scalar(v)))[:12]
            parts.append(table(columns, ([fmt(r.get(c)) for c in columns] for r in items),
                               caption=str(key), limit=MAX_ROWS))
    return join(parts)


def _matrix(value: Any) -> np.ndarray | None:
    """A square matrix of numbers (2 x 2 or larger), else None."""
    if not (isinstance(value, list) and len(value) >= 2 and all(
            isinstance(r, list) and len(r) == len(value) for r in value)):
        return None
    matrix = np.array([[number(v) for v in r] for r in value], dtype=float)
    return matrix if np.isfinite(matrix).any() else None


# --- phases (Tsafack Chetsa et al.) -----------------------------------------------------------------------
def phases(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (headline, phases, phase ids, representative vectors,
    notes) and the phase timeline."""
    from phasekit.phases.analyze import PhaseResult

    result = PhaseResult.from_dict(dict(data))
    items = _dicts(data.get("phases"))
    title = (f"{result.node or 'profile'}: {len(result.phases)} phases, {result.n_ids} ids "
             f"({result.method})")
    figure = maker.safely("the phase timeline", lambda: maker.from_figure(
        figures.phases_figure(items, result.duration_s, array(data.get("score")),
                              array(data.get("limit")), result.period, title),
        "Top: phases in time order, coloured by id (recurring phases share a colour). Middle: "
        "one row per id. Bottom (when the result has it): the detector's score and limit."))
    return join([presented(result.present()), figure])


# --- structure (Martínez Vera) --------------------------------------------------------------------
def structure(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The pseudocode of the loops (the seed's console table), the loops, the diagnostics and
    the clustering scatter."""
    from phasekit.structure import format_time

    trace = _map(data.get("trace"))
    params = _map(data.get("parameters"))
    rows = [("trace", ", ".join(str(s) for s in _list(trace.get("sources"))) or "-"),
            ("format", trace.get("format", "-")), ("ranks", fmt(trace.get("n_ranks"))),
            ("duration", _seconds(trace.get("duration_s"))),
            ("MPI calls", fmt(trace.get("n_calls"))),
            ("parameters", ", ".join(f"{k} {fmt(v)}" for k, v in params.items()))]
    parts = [kv_table(rows)]
    if data.get("explanation"):
        parts.append(note(data["explanation"]))
    for text in _list(data.get("diagnostics")):
        parts.append(note(f"note: {text}", "warn"))
    loops = {d.get("id"): d for d in _dicts(data.get("loops"))}
    columns = ["FILE", "LINE", "PSEUDOCODE", "E(TIME)", "E(SIZE)", "E(IPC)"]
    code = _dicts(data.get("pseudocode"))
    if code:
        parts.append(table(columns, ([str(row.get(c, "")) for c in columns] for row in code),
                           numeric=[False, True, False, True, True, True],
                           caption="Pseudocode (Martínez Vera)", limit=2000, class_="code"))
    elif loops:
        parts.append(note("This result has no pseudocode table (written before phasekit "
                          "structure included it): run phasekit structure again to see it."))
    flat: list[Mapping[str, Any]] = []

    def walk(items: list[Mapping[str, Any]], parent: Any) -> None:
        for loop in items:
            flat.append({**loop, "parent": parent})
            walk(_dicts(loop.get("loops")), loop.get("id"))

    walk(list(loops.values()), None)
    if flat:
        parts.append(table(
            ["loop", "in loop", "iterations", "total", "iteration time", "ranks", "explained"],
            ([fmt(lp.get("id")), fmt(lp.get("parent")), fmt(lp.get("iterations")),
              fmt(lp.get("iterations_total")),
              format_time(number(lp.get("iteration_time_s"))),
              _ranks(lp.get("ranks")), percent(number(lp.get("explained")))] for lp in flat),
            numeric=[True] * 5 + [False, True], caption="Loops", limit=MAX_ROWS))
    for key, what in (("unplaced", "calls made once inside a loop, left out"),
                      ("filtered", "repeated calls filtered (explained time below the "
                                   "threshold)")):
        if _list(data.get(key)):
            parts.append(note(f"{len(_list(data.get(key)))} {what}."))
    clusters = _dicts(data.get("clusters"))
    if clusters:
        eps = number(params.get("eps"))
        parts.append(maker.safely("the clustering figure", lambda: maker.from_figure(
            figures.clusters_figure(clusters, eps if math.isfinite(eps) else 0.2),
            "Every reduced MPI call per rank in the space DBSCAN clusters in, coloured by "
            "the loop it was assigned to.")))
    return join(parts)


def _ranks(value: Any) -> str:
    from phasekit.structure.pseudocode import format_ranks

    ranks = [int(r) for r in _list(value) if isinstance(r, int)]
    return format_ranks(ranks) if ranks else "-"


# --- energy (Silva 2024) -----------------------------------------------------------------------
def campaign(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The PaScal Viewer's diagrams: efficiency heatmaps per region and for the program, and
    energy and time over configurations with the Pareto frontier (``phasekit energy plot``)."""
    from phasekit.campaign import Campaign
    from phasekit.energy.efficiency import configuration_table, efficiency_tables
    from phasekit.plot.energy import energy_figure

    runs = _dicts(data.get("runs"))
    ok = sum(1 for r in runs if r.get("status", "ok") == "ok")
    rows = [("program", " ".join(str(a) for a in _list(data.get("program"))) or
             str(data.get("program", "-"))),
            ("runs", f"{len(runs)} ({ok} ok)"),
            ("inputs", ", ".join(str(i) for i in _list(data.get("inputs"))) or "-")]
    parts = [kv_table(rows)]
    campaign_ = Campaign.from_dict(dict(data))
    tables = efficiency_tables(campaign_)
    configs = configuration_table(campaign_)
    for t in tables:
        parts.append(table([t.unit, *t.inputs],
                           ([p, *(fmt(v, ".2f") for v in t.efficiency[i])]
                            for i, p in enumerate(t.counts)),
                           numeric=[True] * (len(t.inputs) + 1),
                           caption=f"Efficiency (speedup / {t.unit}) of {t.name}; columns: "
                                   "inputs"))
    mode = "both" if len(tables) <= 2 else "discrete"
    if tables:
        parts.append(maker.safely("the efficiency heatmaps", lambda: maker.from_figure(
            energy_figure(tables=tables, mode=mode),
            "Parallel efficiency over inputs and thread counts, one cell per configuration "
            "(and interpolated), Silva 2024 section 3.10.1.")))
    if configs.inputs:
        parts.append(maker.safely("the energy and time figure", lambda: maker.from_figure(
            energy_figure(configs=configs),
            "Per input: energy over frequency and cores relative to the input's least (boxed), "
            "the time-energy Pareto frontier dotted, and energy against time of every input "
            "with the frontiers (Silva 2024, section 4.11); time relative to the fastest when no "
            "energy was measured, the energy heatmaps alone when no time was.")))
    for text in dict.fromkeys([*(n for t in tables for n in t.notes), *configs.notes]):
        parts.append(note(text))
    return join(parts)


def energy_choice(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The minimum-energy configuration per input, the savings against ondemand, and the
    Pareto frontier (Silva 2024, section 4.12)."""
    grid = _map(data.get("grid"))
    limits = {k: v for k, v in _map(data.get("limits")).items() if v is not None}
    rows = [("model", data.get("model", "-")),
            ("grid", f"{len(_list(grid.get('frequencies_ghz'))) or 'uncontrolled'} "
                     f"frequencies x {len(_list(grid.get('cores')))} core counts"),
            ("limits", ", ".join(f"{k} {fmt(v)}" for k, v in limits.items()) or "none"),
            ("baseline", data.get("baseline", "-"))]
    parts = [kv_table(rows)]
    choices = _dicts(data.get("choices"))
    policies = list(dict.fromkeys(k for c in choices for k in _map(c.get("savings_predicted"))))
    out = []
    for c in choices:
        best = _map(c.get("best"))
        saved = _map(c.get("savings_predicted"))
        measured = _map(c.get("savings_measured"))
        out.append([c.get("input_label", fmt(c.get("input"))),
                    fmt(best.get("cores")) if best else "-",
                    fmt(number(best.get("frequency_ghz")), ".3g", " GHz") if best else "-",
                    _seconds(best.get("time_s")) if best else "-",
                    fmt(number(best.get("energy_j")), ".4g", " J") if best else "-",
                    fmt(number(best.get("power_w")), ".4g", " W") if best else "-",
                    *(f"{fmt(number(saved.get(k)), '.1f')} ({fmt(number(measured.get(k)), '.1f')})"
                      for k in policies),
                    c.get("reason", "") or ("extrapolated input" if c.get("extrapolated")
                                             else "")])
    parts.append(table(["input", "cores", "frequency", "time", "energy", "power",
                        *(f"saving vs {k} (%)" for k in policies), "note"], out,
                       numeric=[False, *([True] * (5 + len(policies))), False],
                       caption="Minimum-energy configuration per input; savings predicted "
                               "(measured)"))
    if any(_dicts(c.get("pareto")) for c in choices):
        parts.append(maker.safely("the Pareto figure", lambda: maker.from_figure(
            figures.pareto_figure([c for c in choices if _dicts(c.get("pareto"))]),
            "Predicted energy against time: the Pareto frontier and the minimum-energy "
            "choice (star).")))
    return join(parts)


def energy_fit(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The fitted energy model: parameters, accuracy against the baselines."""
    rows = [("model", data.get("model", "-")), ("design", data.get("design", "-")),
            ("configurations", f"{fmt(data.get('n_configs'))} ({fmt(data.get('n_train'))} to "
                               f"train, {fmt(data.get('n_holdout'))} held out)"),
            ("MPE energy train / holdout", f"{fmt(number(data.get('mpe_train')), '.2f')}% / "
                                           f"{fmt(number(data.get('mpe_holdout')), '.2f')}%"),
            ("MPE time train / holdout", f"{fmt(number(data.get('mpe_time_train')), '.2f')}% / "
                                         f"{fmt(number(data.get('mpe_time_holdout')), '.2f')}%"),
            ("frequency controlled", fmt(data.get("frequency_controlled"))),
            ("fit time", _seconds(data.get("fit_time_s")))]
    parts = [kv_table(rows)]
    if data.get("explanation"):
        parts.append(note(data["explanation"]))
    params = _map(data.get("params"))
    if params:
        fixed = {str(f) for f in _list(data.get("fixed"))}
        parts.append(table(["parameter", "value", ""],
                           ([k, fmt(number(v), ".6g"), "held" if k in fixed else ""]
                            for k, v in params.items()),
                           numeric=[False, True, False], caption="Parameters"))
    models = [(f"{data.get('model', 'model')} (this fit)", number(data.get("mpe_train")),
               number(data.get("mpe_holdout")))]
    for group in ("other_models", "baselines"):
        for name, scores in _map(data.get(group)).items():
            scores = _map(scores)
            models.append((str(name), number(scores.get("mpe_train")),
                           number(scores.get("mpe_holdout"))))
    if len(models) > 1:
        parts.append(table(["model", "MPE train (%)", "MPE holdout (%)"],
                           ([m, fmt(a, ".2f"), fmt(b, ".2f")] for m, a, b in models),
                           numeric=[False, True, True], caption="Accuracy"))
    if any(math.isfinite(a) or math.isfinite(b) for _, a, b in models):
        parts.append(maker.safely("the accuracy figure", lambda: maker.from_figure(
            figures.accuracy_figure(models), "Mean percentage error of the energy.")))
    return join(parts)


def phase_division(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """Energy against the number of phases and the chosen configuration per phase
    (``phasekit energy phasediv``, Silva 2024 chapter 5)."""
    from phasekit.energy.phasediv import PhaseDivision
    from phasekit.plot.energy_phases import energy_phases_figure

    single = _map(data.get("single"))
    rows = [("method", f"{data.get('method', '-')} ({data.get('integrator', '-')} integrator, "
                       f"grid {fmt(data.get('grid'))})"),
            ("configurations", fmt(data.get("n_configs"))),
            ("best", f"{fmt(data.get('best_k'))} phase(s): {fmt(number(data.get('energy_j')))} J"
                     f" in {_seconds(data.get('time_s'))}"),
            ("best single configuration", f"{single.get('config', '-')}: "
                                          f"{fmt(number(single.get('energy_j')))} J in "
                                          f"{_seconds(single.get('time_s'))}"),
            ("savings", percent(number(data.get("savings")), 2))]
    parts = [kv_table(rows)]
    if data.get("explanation"):
        parts.append(note(data["explanation"]))
    parts.append(maker.safely("the phase division figure", lambda: maker.from_figure(
        energy_phases_figure(PhaseDivision.from_dict(dict(data))),
        "Left: energy against the number of phases. Right: the configuration chosen over the "
        "execution.")))
    parts.append(table(["#", "from", "to", "configuration", "energy", "time"],
                       ([i, percent(number(p.get("start"))), percent(number(p.get("end"))),
                         p.get("config", "-"), fmt(number(p.get("energy_j")), ".4g", " J"),
                         _seconds(p.get("time_s"))]
                        for i, p in enumerate(_dicts(data.get("phases")), start=1)),
                       numeric=[True, True, True, False, True, True],
                       caption="Phases of the best division (share of the execution)",
                       limit=MAX_ROWS))
    return join(parts)


def fingerprints(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """Programs clustered by their fingerprints (``phasekit fingerprint``)."""
    from phasekit.energy.fingerprint import FingerprintResult
    from phasekit.plot.fingerprint import fingerprints_figure

    rows = [("ratio", data.get("ratio", "-")), ("clusters", fmt(data.get("n_clusters"))),
            ("rule", data.get("k_rule", "-")), ("ARI with the programs", fmt(data.get("ari"))),
            ("mean silhouette", fmt(data.get("silhouette")))]
    parts = [kv_table(rows)]
    runs = _dicts(data.get("runs"))
    if runs and "fingerprint" in runs[0]:
        parts.append(maker.safely("the fingerprint figure", lambda: maker.from_figure(
            fingerprints_figure(FingerprintResult.from_dict(dict(data))),
            "Left: the Ward dendrogram on Canberra distances. Right: the fingerprints, "
            "coloured by cluster.")))
    parts.append(table(["run", "program", "cluster"],
                       ([r.get("name", "-"), r.get("program", "-"), fmt(r.get("cluster"))]
                        for r in runs), caption="Runs", limit=MAX_ROWS))
    return join(parts)


def schedule(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """Policies compared on a simulated data center, with their Gantt charts and power
    (``phasekit schedule``, Salinas Hilburg 2020 chapter 5)."""
    from phasekit.plot.schedule import schedule_figure
    from phasekit.schedule.simulate import ScheduleResult

    dc = _map(data.get("datacenter"))
    rows = [("data center", f"{fmt(dc.get('servers'))} servers x {fmt(dc.get('cores'))} cores, "
                            f"PUE {fmt(dc.get('pue'))}"),
            ("tasks", fmt(data.get("n_tasks"))), ("planned with", data.get("planned_with", "-")),
            ("lower bound on the makespan", _seconds(data.get("lower_bound_s")))]
    parts = [kv_table(rows)]
    for text in _list(data.get("notes")):
        parts.append(note(text))
    policies = _dicts(data.get("policies"))
    parts.append(table(["policy", "makespan", "energy", "saving vs round robin", "run time"],
                       ([p.get("policy", "-"), _seconds(p.get("makespan_s")),
                         fmt(number(p.get("energy_j")) / 1e6, ".4g", " MJ"),
                         fmt(number(p.get("saving_vs_rr")), ".2f", " %"),
                         _seconds(p.get("runtime_s"))] for p in policies),
                       numeric=[False, True, True, True, True], caption="Policies"))
    if policies:
        parts.append(maker.safely("the schedule figure", lambda: maker.from_figure(
            schedule_figure(ScheduleResult.from_dict(dict(data))),
            "A Gantt chart per policy (one row per core of each server) and the data-center "
            "power over time.")))
    return join(parts)


def demo_comparison(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """How ``phasekit demo`` compares with what it knows: the recorded workload's iteration
    period against the one found, with the recording's timing; or, with ``--synthetic``, the
    analysis against the generated profile's ground truth."""
    if "expected_period_s" in data:  # the built-in workload, recorded here
        found = number(data.get("found_period_s"))
        error = number(data.get("period_error"))
        choice = _map(data.get("metric_choice"))
        metrics = ", ".join(str(m) for m in _list(data.get("metrics"))) or "-"
        rows = [("known iteration period", _seconds(data.get("expected_period_s"))),
                ("period found", "no periodicity found" if not math.isfinite(found)
                 else f"{_seconds(found)} ({percent(error)} off)"),
                ("coverage", percent(number(data.get("coverage")))),
                ("metric", metrics + (f" ({choice['reason']})" if choice.get("reason") else ""))]
        recording = _map(data.get("recording"))
        if recording:
            sources = ", ".join(str(x) for x in _list(recording.get("sources"))) or "-"
            jitter = _map(recording.get("jitter_s"))
            rows += [("samples", fmt(recording.get("n_samples"))),
                     ("interval", f"{fmt(number(recording.get('interval_s')) * 1e3, '.3g')} ms "
                                  f"(achieved "
                                  f"{fmt(number(recording.get('achieved_interval_s')) * 1e3)} "
                                  "ms)"),
                     ("jitter p99", fmt(number(jitter.get("p99")) * 1e3, ".3g", " ms")),
                     ("sources", sources),
                     ("stopped by", recording.get("stopped_by", "-"))]
        return kv_table(rows)
    rows = [("coverage", f"{percent(number(data.get('coverage')))} (true "
                         f"{percent(number(data.get('true_coverage')))})"),
            ("patterns", f"{fmt(data.get('patterns'))} (true {fmt(data.get('true_patterns'))})"),
            ("adjusted Rand index of the samples' patterns", fmt(number(data.get("ari")), ".3f"))]
    return join([kv_table(rows), note("Against the ground truth of the generated profile: "
                                      "which samples belong to which pattern.")])


#: The renderer of each result kind; any other kind gets :func:`generic`.
RENDERERS: dict[str, Renderer] = {
    "periodicity": periodicity,
    "multinode_analysis": multinode,
    "phases": phases,
    "structure": structure,
    "mpi-structure-result": structure,  # the kind's name before version 2
    "campaign": campaign,
    "energy_choice": energy_choice,
    "energy_fit": energy_fit,
    "phase_division": phase_division,
    "fingerprints": fingerprints,
    "schedule": schedule,
    "demo_comparison": demo_comparison,
}

_TITLES = {
    "periodicity": "Periodicity", "multinode_analysis": "Many nodes", "phases": "Phases",
    "structure": "Loop structure", "mpi-structure-result": "Loop structure", "campaign": "Energy campaign",
    "energy_choice": "Energy-optimal configurations", "energy_fit": "Energy model",
    "phase_division": "Energy phase division", "fingerprints": "Fingerprints",
    "schedule": "Schedule", "demo_comparison": "How the demo compares",
}


def title_of(kind: str, data: Mapping[str, Any]) -> str:
    """A section title: what the result is, and of what node or trace when it says."""
    what = _TITLES.get(kind, kind.replace("_", " ").replace("-", " ").capitalize() or "Result")
    node = data.get("node")
    if isinstance(node, str) and node:
        return f"{what}: {node}"
    return what
