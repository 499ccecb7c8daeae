"""How a clustering of fingerprints reads (Silva 2024, ch. 5.10): the headline (how many runs in
how many clusters, chosen how, and whether the clusters match the runs' programs), each run with
its cluster and nearest run in the dendrogram's order, and how the number of clusters was
chosen; what the command line, the report and a notebook show (:mod:`phasekit.present`)."""

from __future__ import annotations

from typing import Any

from phasekit.present import Presentation, View

__all__ = ["RULES", "headline", "presentation"]

#: How the number of clusters was chosen (``FingerprintResult.k_rule``), in words.
RULES = {"given": "given", "programs-ari": "best agreement with the profiles' programs",
         "silhouette": "best mean silhouette", "two-runs": "two runs"}


def _one_program_clusters(result: Any) -> int:
    """How many clusters hold the runs of one program only."""
    programs: dict[int, set[str]] = {}
    for cluster, program in zip(result.clusters.tolist(), result.programs, strict=True):
        programs.setdefault(int(cluster), set()).add(program)
    return sum(1 for found in programs.values() if len(found) == 1)


def headline(result: Any) -> str:
    """One line: runs, clusters, how their number was chosen, and (programs known) how many
    clusters hold one program's runs."""
    n, k = len(result.names), result.n_clusters
    rule = "as asked" if result.k_rule == "given" else RULES.get(result.k_rule, result.k_rule)
    if result.k_rule == "programs-ari" and result.ari is not None:
        rule += f", adjusted Rand index {result.ari:.3f}"
    elif result.k_rule == "silhouette" and result.silhouette is not None:
        rule += f" {result.silhouette:.3f}"
    line = f"{n} runs in {k} cluster{'s' if k != 1 else ''} ({rule})"
    if result.programs is not None:
        pure, kinds = _one_program_clusters(result), len(set(result.programs))
        share = ("every cluster holds" if pure == k else
                 f"{pure} of {k} clusters hold{'s' if pure == 1 else ''}")
        line += f"; {share} the runs of one program ({kinds} programs)"
    return line


def presentation(result: Any, name: str | None = None) -> Presentation:
    """Each run (in the dendrogram's leaf order) with its program when known, its cluster and
    its nearest other run (Canberra distance), then how the number of clusters was chosen.
    ``name`` is not used: the runs are named in the table."""
    known = result.programs is not None
    rows = []
    for i, j, distance in result.nearest():
        rows.append((result.names[i], *((result.programs[i],) if known else ()),
                     str(int(result.clusters[i])), f"{result.names[j]} ({distance:.3g})"))
    headers = ("run", *(("program",) if known else ()), "cluster", "nearest run")
    table = View(f"Fingerprints ({result.ratio}; Canberra distance, Ward linkage; Silva 2024 "
                 "ch. 5.10)", headers, tuple(rows),
                 numeric=tuple(h == "cluster" for h in headers),
                 wrap=tuple(h != "cluster" for h in headers))
    line = f"{result.n_clusters} cluster(s): {RULES.get(result.k_rule, result.k_rule)}"
    if result.ari is not None:
        line += f"; adjusted Rand index with the programs {result.ari:.3f}"
    if result.silhouette is not None:
        line += f"; mean silhouette {result.silhouette:.3f}"
    return Presentation(headline(result), (table,), (line,))
