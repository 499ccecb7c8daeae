"""How the nodes of one run read (Phase-TA, IV-B): the headline (do the nodes' patterns
agree, which nodes stand out), one row per node, the agreement per reference pattern, the
outliers and the notes; what the command line, the report and a notebook show
(:mod:`phasekit.present`)."""

from __future__ import annotations

from typing import Any

from phasekit.many_table import file_stem
from phasekit.present import Presentation, View, listed, percent

__all__ = ["agreement_line", "headline", "presentation"]

#: Outliers named in the headline at most (the rest are counted).
NAMED = 3


def _limit(result: Any) -> str:
    return f"{100 * result.agreement.threshold:g}%"


def agreement_line(result: Any) -> str:
    """The agreement check in one sentence (``agreement: ...``)."""
    a = result.agreement
    if a.agree is None:
        return f"agreement: {a.explanation}"
    if a.agree:
        return (f"agreement: the patterns of all {a.n_nodes} nodes agree (largest distance "
                f"{percent(a.max_distance)} <= {_limit(result)})")
    return (f"agreement: no, {a.n_nodes - a.n_agree} of {a.n_nodes} nodes have a pattern "
            f"further than {_limit(result)} from the reference's or miss one: "
            + ", ".join(a.disagreeing))



def _min_nodes(result: Any) -> int:
    return int(result.params.get("min_nodes", 3))


def headline(result: Any) -> str:
    """One line in plain words: whether the patterns of the nodes agree (how far the
    furthest is), which nodes stand out and why, how many inputs failed."""
    a = result.agreement
    if a.agree is None:
        line = a.explanation or "nothing to compare"
    elif a.agree:
        line = (f"the patterns of all {a.n_nodes} nodes agree (largest distance "
                f"{percent(a.max_distance)} <= {_limit(result)})")
    else:
        line = (f"the patterns of {a.n_nodes - a.n_agree} of {a.n_nodes} nodes disagree with "
                f"the reference node {a.reference}'s (further than {_limit(result)}, or "
                f"missing): {listed(list(a.disagreeing), NAMED)}")
    if result.outliers:
        n = len(result.outliers)
        line += (f"; {n} outlier{'s' if n > 1 else ''}: "
                 + listed([f"{o.node} ({', '.join(o.reasons)})" for o in result.outliers], NAMED))
    elif len(result.nodes) >= _min_nodes(result):
        line += "; no outlier"
    if result.errors:
        total = len(result.nodes) + len(result.errors)
        line += f"; {len(result.errors)} of {total} inputs failed"
    return line


def _nodes_views(result: Any) -> tuple[View, View]:
    """The nodes in plain words, and the same in Phase-TA's Table II notation (detail)."""
    agreement = result.agreement
    flagged = {o.node: o for o in result.outliers}
    # the file column only when the node names do not say which file is which
    files = any(file_stem(n.file) != n.node for n in result.nodes)
    plain, notation = [], []
    for node in result.nodes:
        distances = [p.distance for p in node.patterns if p.distance is not None]
        distance = ("reference" if node.node == agreement.reference else
                    percent(max(distances)) if distances else "-")
        reasons = ", ".join(flagged[node.node].reasons) if node.node in flagged else ""
        plain.append((node.node, f"{node.duration_s:.3f}",
                      f"{node.patterns[0].period_s:.4g}" if node.patterns else "-",
                      str(node.n_instances), str(len(node.patterns)), percent(node.coverage),
                      distance, reasons, *([node.file] if files else [])))
        notation.append((node.node, f"{node.duration_s:.3f}",
                         f"{len(node.patterns)}({node.n_instances})[{node.mean_consecutive:.1f}]",
                         percent(node.coverage)))
    headers = ("node", "run (s)", "period (s)", "repeats", "patterns", "periodic",
               "distance to reference", "outlier", *(["file"] if files else []))
    return (View("Nodes", headers, tuple(plain), numeric=(False, *[True] * 6, False, False),
                 wrap=(False,) * 7 + (True, True)),
            View("Nodes in Phase-TA's notation (Table II per node: T_exe, #rp(#i)[#pa], "
                 "%period)", ("node", "T_exe (s)", "#rp(#i)[#pa]", "%period"),
                 tuple(notation), numeric=(False, True, True, True), detail=True))


def presentation(result: Any, name: str | None = None) -> Presentation:
    """The nodes of ``result`` as a person reads them (``name`` is not used: each node names
    itself): the headline, the nodes, the agreement per reference pattern, the outliers, then
    every disagreeing node when the headline names only the first."""
    a = result.agreement
    views = list(_nodes_views(result))
    if a.patterns:
        views.append(View(
            f"Agreement with the reference node {a.reference} (Phase-TA, IV-B: mean DTW "
            f"distance per associated point <= {_limit(result)} of the pattern mean)",
            ("pattern", "period (s)", "mean", "nodes", "within", "median", "max", "at"),
            tuple((str(p.pattern + 1), f"{p.period_s:.4g}", f"{p.mean:.4g}",
                   f"{p.n_nodes}/{a.n_nodes}", str(p.n_agree), percent(p.median_distance),
                   percent(p.max_distance), p.max_node or "") for p in a.patterns),
            numeric=(True,) * 7 + (False,), wrap=(False,) * 7 + (True,)))
    if result.outliers:
        z = result.params.get("outlier_z", 3.5)
        views.append(View(
            f"Outliers (nodes that stand out: median +- {z:g} robust deviations)",
            ("node", "reasons", "details"),
            tuple((o.node, ", ".join(o.reasons), "; ".join(o.details)) for o in result.outliers),
            numeric=(False,) * 3, wrap=(True,) * 3))
    # the headline says whether the nodes agree; the full list only when it was cut short
    cut_short = a.agree is False and len(a.disagreeing) > NAMED
    notes = (agreement_line(result),) if cut_short else ()
    return Presentation(headline(result), tuple(views), notes)
