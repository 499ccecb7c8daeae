"""One renderer per result kind: a result's JSON (a dict) to the HTML of its section.

A renderer reads the result with its class's ``from_dict`` and shows its presentation (the
headline, tables and notes the command line prints), with tables built by
:mod:`phasekit.report.html` (which escapes every cell) and figures by
:class:`~phasekit.report.svg.FigureMaker` (a figure that cannot be drawn becomes a note). A
kind without a renderer, or a result its renderer cannot read (a partial or malformed one:
``from_dict`` fails on a missing or odd key), falls back to :func:`generic`: the result's
values as tables, escaped, and its JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from phasekit.present import plural
from phasekit.report import figures
from phasekit.report.html import (
    Safe,
    beside,
    details,
    duration,
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
from phasekit.results import json_number as number
from phasekit.results import plain

__all__ = ["RENDERERS", "generic", "title_of"]

Renderer = Callable[[Mapping[str, Any], FigureMaker], Safe]

#: Rows of a table shown at most (the rest is counted).
MAX_ROWS = 100
#: Characters of raw JSON shown at most in the fallback.
MAX_JSON = 60_000


#: A result's first table stays on show up to this many rows (a longer one folds with the
#: others; the pseudocode of a structure always shows).
FIRST_TABLE_ROWS = 12


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in _list(value) if isinstance(v, Mapping)]


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _seconds(value: Any) -> str:
    return duration(number(value))


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
def presented(shown: Any, *, limit: int = MAX_ROWS,
              class_of: Callable[[Any], str | None] | None = None,
              row_class: Callable[[Any, Any], str | None] | None = None,
              first_rows: int | None = FIRST_TABLE_ROWS) -> Safe:
    """A result's own :class:`~phasekit.present.Presentation`: the headline, its first
    table when it has at most ``first_rows`` rows (None: whatever its length), its notes
    (the same words as the command line), and its other tables in one collapsed block
    named by their titles, open on a click (the report leads with the answers and the
    figure; the papers' tables are a click away); ``class_of(view)`` styles a view's table
    (``"code"``: monospace, spaces kept) and ``row_class(view, row)`` a row's."""
    def drawn(v: Any) -> Safe:
        return table(v.headers, v.rows, numeric=[v.is_numeric(c) for c in range(len(v.headers))],
                     caption=v.title, limit=limit,
                     class_=class_of(v) if class_of is not None else None,
                     row_classes=None if row_class is None
                     else [row_class(v, row) for row in v.rows])

    views = list(shown.views)
    first = next((v for v in views if not getattr(v, "detail", False)), None)
    if first is not None and first_rows is not None and len(first.rows) > first_rows:
        first = None  # a long table: the figure shows the answer, the table is a click away
    rest = [v for v in views if v is not first]
    parts = [tag("p", shown.headline, class_="headline")]
    parts += [drawn(first)] if first is not None else []
    parts += [note(line) for line in shown.notes]
    if rest:
        names = "; ".join(_short(v.title) for v in rest)
        parts.append(details(f"{plural(len(rest), 'more table')}: {names}",
                             join([drawn(v) for v in rest])))
    return join(parts)


def folded(what: str, parts: list[Safe]) -> list[Safe]:
    """``parts`` (more figures of a result) in one collapsed block named ``what``, open on a
    click: a section shows the result's main figure; the others are a click away."""
    return [details(f"More figures: {what}", join(parts))] if parts else []


def _short(title: str, most: int = 60) -> str:
    """A table's title cut to its first clause, at most ``most`` characters."""
    head = title.split(":")[0].split(" (")[0].strip()
    return head if len(head) <= most else head[:most - 1] + "…"


def periodicity(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (headline, Table II, the patterns, notes), the profile with
    its periodic regions and the patterns over their instances (from the result's preview;
    without one, the regions alone)."""
    from phasekit.periodicity import PeriodicityResult

    result = PeriodicityResult.from_dict(dict(data))
    words = [presented(result.present())]
    preview = _map(result.preview.get("profile"))
    parts = [maker.safely("the profile figure", lambda: _profile_figure(result, maker))]
    if not preview:
        words.append(note("This result carries no profile preview (written by an older "
                          "phasekit): the figure shows where the periodic regions are, not "
                          "the metric; analyze the profile again to get both."))
    if result.patterns:
        parts += folded("each pattern over its instances", [maker.safely(
            "the patterns figure", lambda: maker.from_figure(
            figures.instances_figure(
                [plain(p.to_dict()) for p in result.patterns],
                _dicts(result.preview.get("instances")), list(result.metrics),
                result.sampling_period, {str(k): str(v) for k, v in _map(
                    preview.get("units")).items()}),
            "Each representative pattern (thick) over random instances it was inferred from "
            "(thin), like Phase-TA's Fig. 3."))])
    return beside(join(words), join(parts))


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
def multinode(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (headline, nodes, agreement per reference pattern, outliers,
    the agreement check) with the outliers' rows highlighted, the inputs that failed (the
    command line lists them on stderr), a heatmap of each node x node matrix of the
    agreement data, and figures of coverage, distance and periods per node."""
    from phasekit.periodicity.nodes import MultiNodeResult

    result = MultiNodeResult.from_dict(dict(data))
    flagged = {o.node for o in result.outliers}

    def outlier(v: Any, row: Any) -> str | None:  # a row of a node that stands out
        return "outlier" if v.headers[0] == "node" and row[0] in flagged else None

    words = [presented(result.present(), limit=500, row_class=outlier)]
    if result.errors:
        words.append(note(f"{len(result.errors)} file(s) could not be analyzed:", "warn"))
        words.append(table(["file", "error"], ([e.file, e.message] for e in result.errors),
                           limit=MAX_ROWS))
    names = [n.node for n in result.nodes]
    matrices = _agreement_matrices(_map(data.get("agreement")), names, maker)
    parts: list[Safe] = []
    more: list[Safe] = []
    flags = [name in flagged for name in names]
    coverage = np.array([n.coverage for n in result.nodes], dtype=float)
    patterns = [[plain(p.to_dict()) for p in sorted(n.patterns, key=lambda p: -p.coverage)]
                for n in result.nodes]
    distances = [[p.distance for p in n.patterns
                  if p.distance is not None and math.isfinite(p.distance)]
                 for n in result.nodes]
    reference = result.agreement.reference
    if names:
        parts.append(maker.safely("the coverage figure", lambda: maker.from_figure(
            figures.coverage_figure(names, coverage, flags),
            "Share of each node's run in periodic regions; outliers in red.")))
    if any(distances):
        more.append(maker.safely("the distance figure", lambda: maker.from_figure(
            figures.distance_figure(names, distances, result.agreement.threshold, flags),
            "Distance of each node's patterns to the reference node's, per associated point, "
            "relative to the pattern mean (Phase-TA, IV-B); the dashed line is the agreement "
            "threshold.")))
    if names:
        more.append(maker.safely("the periods figure", lambda: maker.from_figure(
            figures.node_patterns_figure(names, patterns, flags, names.index(reference)
                                         if reference in names else 0),
            "Left: the period of every pattern found on each node (marker area: coverage); "
            "nodes that agree line up. Right: each node's main pattern over one period, "
            "turned to the reference node's phase.")))
    parts += folded("distance to the reference, periods per node, agreement matrices",
                    [*more, *matrices])
    return beside(join(words), join(parts))


def _agreement_matrices(agreement: Mapping[str, Any], names: list[str], maker: FigureMaker
                        ) -> list[Safe]:
    """A heatmap of each node x node matrix in the result's agreement data (a similarity or
    a distance), labelled with the nodes when it has one row per node."""
    parts = []
    for key, value in agreement.items():
        matrix = _matrix(value)
        if matrix is None:
            continue
        labels = names if matrix.shape[0] == len(names) else [
            str(i) for i in range(matrix.shape[0])]
        parts.append(maker.safely(f"the {key} figure", lambda m=matrix, k=key, lab=labels:
                                  maker.from_figure(figures.agreement_figure(lab, m, str(k)),
                                                    f"Agreement: {k}, node against node.")))
    return parts


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
    figure = maker.safely("the phase timeline", lambda: maker.from_figure(
        result.plot(),
        "Top: phases in time order, coloured by id (recurring phases share a colour). Middle: "
        "one row per id. Bottom (when the result has it): the detector's score and limit."))
    return beside(presented(result.present()), figure)


# --- structure (Martínez Vera) --------------------------------------------------------------------
def structure(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (headline, the pseudocode as the command line prints it,
    the loops, the notes) and its figure: the main loop's iterations per rank over time
    (the clustering scatter for a result saved without the timeline)."""
    from phasekit.structure import PSEUDOCODE_COLUMNS, StructureResult

    result = StructureResult.from_dict(dict(data))
    words = presented(result.present(), limit=2000, first_rows=None, class_of=lambda view: (
        "code" if view.headers == PSEUDOCODE_COLUMNS else None))
    parts: list[Safe] = []
    if result.timeline:
        parts.append(maker.safely("the timeline", lambda: maker.from_figure(
            result.plot(), "The main loop's iterations per rank over time, alternating "
            "shades; darker at each block's foot: the share of the iteration spent in MPI; "
            "strips: the loops inside it.")))
    elif result.clusters:
        clusters = [dict(c) for c in result.clusters]
        eps = number(result.parameters.get("eps"))
        parts.append(maker.safely("the clustering figure", lambda: maker.from_figure(
            figures.clusters_figure(clusters, eps if math.isfinite(eps) else 0.2),
            "Every reduced MPI call per rank in the space DBSCAN clusters in, coloured by "
            "the loop it was assigned to.")))
    return beside(words, join(parts))


# --- energy (Silva 2024) -----------------------------------------------------------------------
def campaign(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The campaign's presentation as ``phasekit energy plot`` prints it (the efficiency
    tables, each input's least energy, the notes) and the PaScal Viewer's diagrams:
    efficiency heatmaps per region and for the program, and energy and time over
    configurations with the Pareto frontier."""
    from phasekit.campaign import Campaign
    from phasekit.energy.efficiency import configuration_table, efficiency_tables

    runs = _dicts(data.get("runs"))
    ok = sum(1 for r in runs if r.get("status", "ok") == "ok")
    rows = [("program", " ".join(str(a) for a in _list(data.get("program"))) or
             str(data.get("program", "-"))),
            ("runs", f"{len(runs)} ({ok} ok)"),
            ("inputs", ", ".join(str(i) for i in _list(data.get("inputs"))) or "-")]
    campaign_ = Campaign.from_dict(dict(data))
    return campaign_views(efficiency_tables(campaign_), configuration_table(campaign_), maker,
                          lead=kv_table(rows))


def energy_view(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """What ``phasekit energy plot -o`` saved (its efficiency tables and configurations),
    shown as a campaign is: the presentation and the PaScal Viewer's diagrams."""
    from phasekit.energy.efficiency import ConfigurationTable, EfficiencyTable

    tables = [EfficiencyTable.from_dict(dict(t)) for t in _dicts(data.get("efficiency"))]
    configs = None
    if _dicts(data.get("configurations")):
        configs = ConfigurationTable.from_dict({
            "configurations": data["configurations"], "has_energy": data.get("has_energy"),
            "has_time": data.get("has_time", True)})
    rows = [("campaign", str(data.get("campaign", "-"))), ("view", str(data.get("view", "-")))]
    return campaign_views(tables, configs, maker, lead=kv_table(rows),
                          trail=join(note(str(n)) for n in _list(data.get("notes"))))


def campaign_views(tables: list[Any], configs: Any | None, maker: FigureMaker, *,
                   lead: Safe | str = "", trail: Safe | str = "") -> Safe:
    """A campaign's presentation (:func:`phasekit.energy.table.campaign_presentation`)
    between ``lead`` and ``trail``, beside its efficiency heatmaps and its energy and time
    figure."""
    from phasekit.energy.table import campaign_presentation
    from phasekit.plot.energy import energy_figure

    words = join([lead, presented(campaign_presentation(tables, configs)), trail])
    parts: list[Safe] = []
    mode = "both" if len(tables) <= 2 else "discrete"
    if tables:
        parts.append(maker.safely("the efficiency heatmaps", lambda: maker.from_figure(
            energy_figure(tables=tables, mode=mode),
            "Parallel efficiency over inputs and thread counts, one cell per configuration "
            "(and interpolated), Silva 2024 section 3.10.1.")))
    if configs is not None and configs.inputs:
        energy = [maker.safely("the energy and time figure", lambda: maker.from_figure(
            energy_figure(configs=configs),
            "Per input: energy over frequency and cores relative to the input's least (boxed), "
            "the time-energy Pareto frontier dotted, and energy against time of every input "
            "with the frontiers (Silva 2024, section 4.11); time relative to the fastest when no "
            "energy was measured, the energy heatmaps alone when no time was."))]
        parts += folded("energy over the configurations", energy) if tables else energy
    return beside(words, join(parts))


def energy_choice(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (the minimum-energy configuration per input, the savings
    against ondemand, how sure, the notes; Silva 2024, section 4.12) and its figure (what
    ``energy choose --plot`` draws: per input, energy over frequency x cores predicted and
    measured, the choice and the lowest reading marked)."""
    from phasekit.energy.choose import ChoiceResult

    result = ChoiceResult.from_dict(dict(data))
    parts: list[Safe] = []
    if any(c.drawn_points() for c in result.choices):
        parts.append(maker.safely("the choice figure", lambda: maker.from_figure(
            result.plot(), "Per input: energy over frequency and cores as the model predicts "
            "it and as the campaign measured it, relative to the least (white line: within "
            "5 %); star: the choice, black box: the lowest reading.")))
    return beside(presented(result.present()), join(parts))


def energy_fit(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (the model's error on the configurations held out, every
    method's scores, the parameters, the notes) and the accuracy figure."""
    from phasekit.energy.fit import EnergyFitResult

    result = EnergyFitResult.from_dict(dict(data))
    parts: list[Safe] = []
    models = [(f"{result.model} (this fit)", result.mpe_train, result.mpe_holdout)]
    for group in (result.other_models, result.baselines):
        models += [(str(name), number(scores.get("mpe_train")),
                    number(scores.get("mpe_holdout"))) for name, scores in group.items()]
    if any(math.isfinite(a) or math.isfinite(b) for _, a, b in models):
        parts.append(maker.safely("the accuracy figure", lambda: maker.from_figure(
            figures.accuracy_figure(models), "Mean percentage error of the energy.")))
    return beside(presented(result.present()), join(parts))


def phase_division(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (headline, the phases of the best division, the energy
    against the number of phases, notes) and its figure (``phasekit energy phasediv``, Silva
    2024 chapter 5)."""
    from phasekit.energy.phasediv import PhaseDivision
    from phasekit.plot.energy_phases import energy_phases_figure

    result = PhaseDivision.from_dict(dict(data))
    figure = maker.safely("the phase division figure", lambda: maker.from_figure(
        energy_phases_figure(result),
        "Left: energy against the number of phases. Right: the configuration chosen over the "
        "execution."))
    return beside(presented(result.present()), figure)


def fingerprints(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (headline, each run's cluster and nearest run, how the number
    of clusters was chosen) and the dendrogram with the fingerprints (``phasekit
    fingerprint``)."""
    from phasekit.energy.fingerprint import FingerprintResult
    from phasekit.plot.fingerprint import fingerprints_figure

    result = FingerprintResult.from_dict(dict(data))
    parts: list[Safe] = []
    if result.fingerprints.size:  # the runs carry their fingerprint series
        parts.append(maker.safely("the fingerprint figure", lambda: maker.from_figure(
            fingerprints_figure(result),
            "Left: the Ward dendrogram on Canberra distances. Right: the fingerprints, "
            "coloured by cluster.")))
    return beside(presented(result.present()), join(parts))


def schedule(data: Mapping[str, Any], maker: FigureMaker) -> Safe:
    """The result's presentation (headline, the policies, notes) and the Gantt charts and
    power of the policies (``phasekit schedule``, Salinas Hilburg 2020 chapter 5)."""
    from phasekit.plot.schedule import schedule_figure
    from phasekit.schedule.simulate import ScheduleResult

    result = ScheduleResult.from_dict(dict(data))
    parts: list[Safe] = []
    if result.policies:
        parts.append(maker.safely("the schedule figure", lambda: maker.from_figure(
            schedule_figure(result),
            "A Gantt chart per policy (one row per core of each server) and the data-center "
            "power over time.")))
    return beside(presented(result.present()), join(parts))


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
        inner = number(data.get("iteration_scale_s"))
        expected = number(data.get("expected_period_s"))
        if math.isfinite(inner) and math.isfinite(error) and error > 0.05:
            rows.insert(2, ("iterations, inside the period found",
                            f"{_seconds(inner)} ({percent(abs(inner / expected - 1))} off)"))
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
    "energy_view": energy_view,
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
    "energy_view": "Energy campaign view",
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
    trace = _map(data.get("trace"))
    sources = _list(trace.get("sources"))
    name = sources[0] if sources else None
    if isinstance(name, str) and name:
        return f"{what}: {name.replace(chr(92), '/').rsplit('/', 1)[-1]}"
    return what
