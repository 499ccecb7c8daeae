"""Patterns of the nodes of one run compared: agreement and outliers (Phase-TA, section IV-B).

A job runs on many nodes and each node has its own profile, hence its own patterns. Phase-TA
(IV-B, Fig. 4) finds the patterns of the 16 node profiles of a run "almost identical":
for each pair of related patterns, DTW / assoc_DTW <= 0.01 x mean(patterns), "the average
distance, according to the DTW, between two related points of two representative patterns
is lesser than 1 % of the average value of the points" of the patterns.

What :func:`compare_nodes` does with that, and where it departs from Phase-TA:

- A **reference node** instead of every pair: with hundreds of nodes the pairs grow as the
  square. The reference is the medoid of the nodes' main patterns (largest coverage) among
  the nodes with the most common number of patterns: the node whose median distance to the
  others is least (ours: at most :data:`REFERENCE_CANDIDATES` = 16 candidates, scored against
  at most :data:`REFERENCE_SAMPLE` = 64 nodes, both evenly spaced among the nodes, so that
  choosing the reference costs the same for 64 nodes or 5 000; the association below is
  linear in the number of nodes).
- **Association**: every node's patterns are matched one to one with the reference's
  (Hungarian assignment on the distance below), a pair being allowed only when the periods
  are within a factor :data:`MAX_PERIOD_RATIO` (ours) of each other. A reference pattern left
  unmatched is *missing* on that node; a node pattern left unmatched is *extra*.
- **Distance per associated point**: patterns are cycles cut at a phase each analysis chooses,
  so a node's pattern is first rotated to the reference's phase (circular cross-correlation,
  as for sub-profiles in :func:`phasekit.periodicity.relevance`). The distance is then
  Phase-TA's DTW / assoc_DTW: the mean Euclidean distance of the associated point pairs, along
  the optimal path of phasekit's DTW_2 (:mod:`phasekit.distance`, band 10 % as in the
  analysis; :func:`dtw_path` reads the path from its kernel). Phase-TA's DTW takes the path
  that minimizes the sum of the distances themselves; phasekit has DTW_2 kernels only, and
  on the same path the root mean square, sqrt(DTW_2 / assoc), would be 2 to 3 times the mean
  on patterns whose differences sit at a few sharp edges, far stricter than Phase-TA. It is
  divided by the mean absolute value of the points of both patterns (Phase-TA's
  "mean(patterns)" for a positive metric such as IPC; defined also for the z-scores of a
  joint analysis).
- **Agreement**: all nodes agree when every node has a pattern associated with each of the
  reference's, every one within :data:`THRESHOLD` = 1 % (Phase-TA's figure).

Outliers are nodes that stand out from the others, by robust statistics: a value is off when
its modified z-score |x - median| / (1.4826 MAD) exceeds :data:`OUTLIER_Z` = 3.5 (Iglewicz
and Hoaglin's recommended cut-off; ours) *and* it is further from the median than a floor,
so that nodes that all agree within the analysis' own variability (MAD near 0) are not
flagged for trifles. Reasons:

- ``pattern``: a pattern's distance to the reference is off, by more than the threshold
  itself (1 % of the pattern mean: a node stands out when it is further from the reference
  than the median node by more than Phase-TA's tolerance);
- ``period``: a pattern's period is off, by more than :data:`PERIOD_FLOOR` = 5 % of the
  median (the length tolerance with which the analysis groups instances,
  :mod:`phasekit.periodicity.tune`): a slow node;
- ``patterns``: the node misses a pattern that most nodes have, or has a periodicity that
  most nodes do not have; patterns covering less than :data:`MARGINAL` = 10 % of a profile
  are left out of this rule, as is a second pattern of a periodicity the node already has
  (same period within 5 %): with alpha = 5 % (Phase-TA, III-B), a marginal cluster more or less,
  or one periodicity split in two clusters, is the analysis' own variability;
- ``coverage``: its periodic share is off, by more than :data:`COVERAGE_FLOOR` = 10 points
  (2 alpha, for the same reason).

Fewer than :data:`MIN_NODES` = 3 nodes give no outlier: with two, neither stands out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.distance import band_radius
from phasekit.distance.dtw import dtw2_path_accumulate
from phasekit.errors import InputError, UsageError
from phasekit.periodicity import align
from phasekit.periodicity.analyze import BAND, PatternCounts, PeriodicityResult
from phasekit.results import NodeError, Result, check_version, plain, short_repr

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = [
    "COVERAGE_FLOOR",
    "KIND",
    "MARGINAL",
    "MAX_PERIOD_RATIO",
    "OUTLIER_Z",
    "PERIOD_FLOOR",
    "THRESHOLD",
    "Agreement",
    "MultiNodeResult",
    "NodeError",
    "NodePattern",
    "NodeSummary",
    "Outlier",
    "PatternAgreement",
    "compare_nodes",
    "dtw_path",
    "pattern_distance",
]

KIND = "multinode_analysis"
RESULT_VERSION = 1
THRESHOLD = 0.01
OUTLIER_Z = 3.5
MAD_SCALE = 1.4826  # MAD to standard deviation for normal data
COVERAGE_FLOOR = 0.10
PERIOD_FLOOR = 0.05
MARGINAL = 0.10
MAX_PERIOD_RATIO = 1.5
REFERENCE_CANDIDATES = 16
REFERENCE_SAMPLE = 64
MIN_NODES = 3


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


# --- per node --------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class NodePattern:
    """One pattern of one node, without its instances (a few hundred values: what a worker
    sends back). After :func:`compare_nodes`, ``reference`` is the index of the reference
    pattern it is associated with (None: extra) and ``distance`` its relative distance."""

    values: np.ndarray
    period_s: float
    coverage: float
    n_instances: int
    n_regions: int
    mean_consecutive: float
    wgss: float
    dba_iterations: int
    reference: int | None = None
    distance: float | None = None

    @property
    def length(self) -> int:
        return int(self.values.shape[0])

    def to_dict(self) -> dict[str, Any]:
        return {"period_s": self.period_s, "length": self.length,
                "n_instances": self.n_instances, "coverage": self.coverage, "wgss": self.wgss,
                "n_regions": self.n_regions, "mean_consecutive": self.mean_consecutive,
                "dba_iterations": self.dba_iterations, "values": self.values,
                "reference_pattern": self.reference, "distance": self.distance}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> NodePattern:
        values = np.asarray(data["values"], dtype=float)
        reference = data.get("reference_pattern")
        return NodePattern(values=values.reshape(values.shape[0], -1),
                           period_s=float(data["period_s"]), coverage=float(data["coverage"]),
                           n_instances=int(data["n_instances"]), n_regions=int(data["n_regions"]),
                           mean_consecutive=float(data["mean_consecutive"]),
                           wgss=float(data["wgss"]), dba_iterations=int(data["dba_iterations"]),
                           reference=None if reference is None else int(reference),
                           distance=_number(data.get("distance")))


@dataclass(frozen=True, eq=False)
class NodeSummary(PatternCounts):
    """What the analysis of one node's profile leaves for the comparison (Phase-TA, Table II
    per node, and the patterns)."""

    node: str
    file: str
    duration_s: float
    sampling_period: float
    n_samples: int
    n_valid: int
    metrics: tuple[str, ...]
    window: int
    coverage: float
    patterns: tuple[NodePattern, ...]
    explanation: str = ""

    @staticmethod
    def from_result(result: PeriodicityResult, *, file: str, node: str | None = None
                    ) -> NodeSummary:
        """The summary of ``result``, analyzed from ``file``; ``node`` defaults to the
        result's node name."""
        patterns = tuple(NodePattern(values=p.values, period_s=p.period_s, coverage=p.coverage,
                                     n_instances=p.n_instances, n_regions=p.n_regions,
                                     mean_consecutive=p.mean_consecutive, wgss=p.wgss,
                                     dba_iterations=p.dba_iterations) for p in result.patterns)
        return NodeSummary(node=result.node if node is None else node, file=file,
                           duration_s=result.duration_s, sampling_period=result.sampling_period,
                           n_samples=result.n_samples, n_valid=result.n_valid,
                           metrics=result.metrics, window=result.window,
                           coverage=result.coverage, patterns=patterns,
                           explanation=result.explanation)

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "file": self.file, "duration_s": self.duration_s,
                "sampling_period_s": self.sampling_period, "n_samples": self.n_samples,
                "n_valid": self.n_valid, "metrics": list(self.metrics), "window": self.window,
                "coverage": self.coverage, "n_instances": self.n_instances,
                "mean_consecutive": self.mean_consecutive,
                "patterns": [p.to_dict() for p in self.patterns],
                "explanation": self.explanation}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> NodeSummary:
        return NodeSummary(node=str(data["node"]), file=str(data["file"]),
                           duration_s=float(data["duration_s"]),
                           sampling_period=float(data["sampling_period_s"]),
                           n_samples=int(data["n_samples"]), n_valid=int(data["n_valid"]),
                           metrics=tuple(str(m) for m in data["metrics"]),
                           window=int(data["window"]), coverage=float(data["coverage"]),
                           patterns=tuple(NodePattern.from_dict(p) for p in data["patterns"]),
                           explanation=str(data.get("explanation", "")))


# --- comparison ------------------------------------------------------------------------------
@dataclass(frozen=True)
class PatternAgreement:
    """How the nodes' patterns associated with one reference pattern agree with it."""

    pattern: int
    period_s: float
    mean: float
    n_nodes: int
    n_agree: int
    median_distance: float | None
    max_distance: float | None
    max_node: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "period_s": self.period_s, "mean": self.mean,
                "n_nodes": self.n_nodes, "n_agree": self.n_agree,
                "median_distance": self.median_distance, "max_distance": self.max_distance,
                "max_node": self.max_node}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> PatternAgreement:
        return PatternAgreement(pattern=int(data["pattern"]), period_s=float(data["period_s"]),
                                mean=float(data["mean"]), n_nodes=int(data["n_nodes"]),
                                n_agree=int(data["n_agree"]),
                                median_distance=_number(data.get("median_distance")),
                                max_distance=_number(data.get("max_distance")),
                                max_node=data.get("max_node"))


@dataclass(frozen=True)
class Agreement:
    """Phase-TA's check over all nodes (IV-B): ``agree`` when every node has a pattern within
    ``threshold`` of each reference pattern; None when fewer than two nodes have patterns
    (nothing to compare; ``explanation`` says why)."""

    threshold: float
    reference: str | None
    agree: bool | None
    n_nodes: int
    n_agree: int
    max_distance: float | None
    patterns: tuple[PatternAgreement, ...]
    disagreeing: tuple[str, ...] = ()
    explanation: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "reference": self.reference, "agree": self.agree,
                "n_nodes": self.n_nodes, "n_agree": self.n_agree,
                "max_distance": self.max_distance,
                "patterns": [p.to_dict() for p in self.patterns],
                "disagreeing": list(self.disagreeing), "explanation": self.explanation}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Agreement:
        agree = data.get("agree")
        return Agreement(threshold=float(data["threshold"]), reference=data.get("reference"),
                         agree=None if agree is None else bool(agree),
                         n_nodes=int(data["n_nodes"]), n_agree=int(data["n_agree"]),
                         max_distance=_number(data.get("max_distance")),
                         patterns=tuple(PatternAgreement.from_dict(p) for p in data["patterns"]),
                         disagreeing=tuple(str(n) for n in data.get("disagreeing", [])),
                         explanation=str(data.get("explanation", "")))


@dataclass(frozen=True)
class Outlier:
    """A node that stands out: ``reasons`` among pattern, period, patterns, coverage (module
    docstring), and one human sentence per reason in ``details``."""

    node: str
    file: str
    reasons: tuple[str, ...]
    details: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "file": self.file, "reasons": list(self.reasons),
                "details": list(self.details)}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Outlier:
        return Outlier(node=str(data["node"]), file=str(data["file"]),
                       reasons=tuple(str(r) for r in data["reasons"]),
                       details=tuple(str(d) for d in data.get("details", [])))


@dataclass(frozen=True, eq=False)
class MultiNodeResult(Result):
    """The nodes of one run: each node's summary (patterns annotated with their association),
    the agreement check, the outliers, and the files that failed."""

    KIND: ClassVar[str] = KIND

    nodes: tuple[NodeSummary, ...]
    agreement: Agreement
    outliers: tuple[Outlier, ...]
    errors: tuple[NodeError, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return short_repr(
            self, f"{len(self.nodes)} nodes",
            {True: "patterns agree", False: "patterns disagree"}.get(self.agreement.agree),
            f"{len(self.outliers)} outliers", f"{len(self.errors)} errors" if self.errors else None)

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": KIND, "version": RESULT_VERSION,
                      "nodes": [n.to_dict() for n in self.nodes],
                      "agreement": self.agreement.to_dict(),
                      "outliers": [o.to_dict() for o in self.outliers],
                      "errors": [e.to_dict() for e in self.errors], "params": self.params})

    #: The columns of :meth:`summary`.
    SUMMARY_COLUMNS: ClassVar[tuple[str, ...]] = (
        "node", "file", "n_patterns", "period_s", "pattern_coverage", "coverage", "reference",
        "matches", "distance", "outlier", "error")

    @staticmethod
    def main_pattern(node: NodeSummary) -> NodePattern | None:
        """A node's main pattern: the one of largest coverage (None without patterns)."""
        return max(node.patterns, key=lambda p: p.coverage, default=None)

    def verdict(self) -> str:
        """The agreement check in one sentence (the ``agreement:`` line of :meth:`present`)."""
        from phasekit.periodicity.nodes_table import agreement_line

        return agreement_line(self)

    def present(self, name: str | None = None) -> Presentation:
        """The headline (do the nodes' patterns agree, which nodes stand out), one row per
        node (Phase-TA, Table II), the agreement per reference pattern, the outliers and the
        agreement check in one sentence (:mod:`.nodes_table`)."""
        from phasekit.periodicity.nodes_table import presentation

        return presentation(self, name)

    def summary(self) -> pd.DataFrame:
        """One row per node, in input order: ``n_patterns``; its main pattern's (largest
        coverage) ``period_s`` and ``pattern_coverage`` (fractions), the node's periodic
        share ``coverage``; whether it is the ``reference`` node, the reference pattern its
        main pattern ``matches`` (1-based; missing: none) and its ``distance`` to it (relative
        to the pattern mean: Phase-TA's 1 % rule); ``outlier``, the reasons it stands out
        ("" when it does not). Then one row per file that failed, its message in ``error``.
        ``attrs["agreement"]`` holds the agreement check (``agree``: True, False or None
        when there is nothing to compare), ``attrs["verdict"]`` it in one sentence and
        ``attrs["outliers"]`` the outlier details by node."""
        import pandas as pd

        flagged = {o.node: o for o in self.outliers}
        rows: list[dict[str, Any]] = []
        for node in self.nodes:
            main = self.main_pattern(node)
            rows.append({
                "node": node.node, "file": node.file, "n_patterns": len(node.patterns),
                "period_s": math.nan if main is None else main.period_s,
                "pattern_coverage": math.nan if main is None else main.coverage,
                "coverage": node.coverage, "reference": node.node == self.agreement.reference,
                "matches": None if main is None or main.reference is None else main.reference + 1,
                "distance": math.nan if main is None or main.distance is None else main.distance,
                "outlier": ", ".join(flagged[node.node].reasons) if node.node in flagged else "",
                "error": ""})
        for error in self.errors:
            rows.append({"node": "", "file": error.file, "n_patterns": None,
                         "period_s": math.nan, "pattern_coverage": math.nan,
                         "coverage": math.nan, "reference": False, "matches": None,
                         "distance": math.nan, "outlier": "", "error": error.message})
        table = pd.DataFrame(rows, columns=list(self.SUMMARY_COLUMNS))
        table = table.astype({"n_patterns": "Int64", "matches": "Int64", "reference": bool,
                              "period_s": float, "pattern_coverage": float, "coverage": float,
                              "distance": float})
        agreement = self.agreement.to_dict()
        agreement.pop("patterns")
        table.attrs["agreement"] = plain(agreement)
        table.attrs["verdict"] = self.verdict()
        table.attrs["outliers"] = {o.node: list(o.details) for o in self.outliers}
        return table

    def plot(self, ax: Axes | None = None) -> Figure:
        """Per node (one row each, input order): its main pattern's period (marker area: the
        pattern's coverage; the reference node's a star, the median dashed) and, beside it,
        its periodic share with the main pattern's part darker; outliers in red. On ``ax``,
        the periods only (its figure is returned)."""
        from phasekit.plot.common import figure, root_figure

        n = len(self.nodes)
        if ax is not None:
            self._draw_periods(ax)
            return root_figure(ax)
        fig = figure(10.5, max(2.6, min(1.1 + 0.26 * n, 9.0)))
        period_ax, coverage_ax = fig.subplots(1, 2, sharey=True, width_ratios=[1.3, 1.0])
        self._draw_periods(period_ax)
        self._draw_coverage(coverage_ax)
        verdict = self.verdict()
        if self.errors:
            verdict += f"; {len(self.errors)} file(s) failed"
        fig.suptitle(verdict if len(verdict) <= 150 else verdict[:146] + "...",
                     x=0.01, ha="left", fontsize="medium")
        return fig

    def _rows(self, ax: Axes) -> None:
        n = len(self.nodes)
        names = [node.node for node in self.nodes]
        if n <= 40:
            ax.set_yticks(range(n), labels=names, fontsize="small")
            ax.set_ylabel("node")
        else:
            ax.set_yticks([])
            ax.set_ylabel(f"{n} nodes (input order)")
        ax.set_ylim(max(n, 1) - 0.5, -0.5)

    def _draw_periods(self, ax: Axes) -> None:
        from matplotlib.lines import Line2D

        flagged = {o.node for o in self.outliers}
        periods = []
        for k, node in enumerate(self.nodes):
            main = self.main_pattern(node)
            if main is None:
                continue
            periods.append(main.period_s)
            reference = node.node == self.agreement.reference
            ax.scatter([main.period_s], [k], s=30 + 220 * max(main.coverage, 0.0),
                       marker="*" if reference else "o",
                       color="tab:red" if node.node in flagged else "tab:blue", alpha=0.8,
                       edgecolors="black", linewidths=0.5, zorder=3)
        self._rows(ax)
        handles = [Line2D([], [], ls="none", marker="o", color="tab:blue", label="node"),
                   Line2D([], [], ls="none", marker="o", color="tab:red", label="outlier")]
        if self.agreement.reference is not None:
            handles.append(Line2D([], [], ls="none", marker="*", color="gray", ms=10,
                                  label=f"reference ({self.agreement.reference})"))
        if periods:
            median = float(np.median(periods))
            ax.axvline(median, color="black", ls="--", lw=1, zorder=1)
            handles.append(Line2D([], [], color="black", ls="--", label=f"median {median:.4g} s"))
            spread = max(float(np.ptp(periods)), 0.02 * median)
            ax.set_xlim(min(periods) - spread, max(periods) + spread)
        else:
            ax.text(0.5, 0.5, "no periodicity found" if self.nodes else "no node analyzed",
                    ha="center", va="center", transform=ax.transAxes)
        ax.legend(handles=handles, loc="best", fontsize="small")
        ax.set_xlabel("main pattern's period (s)")
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_title("Main period per node (area: its coverage)", loc="left",
                     fontsize="medium")

    def _draw_coverage(self, ax: Axes) -> None:
        from matplotlib.patches import Patch

        flagged = {o.node for o in self.outliers}
        position = np.arange(len(self.nodes))
        share = np.array([100 * node.coverage for node in self.nodes])
        main = np.array([100 * (p.coverage if (p := self.main_pattern(node)) else 0.0)
                         for node in self.nodes])
        outlier = np.array([node.node in flagged for node in self.nodes], dtype=bool)
        light = np.where(outlier, "#f4a6a6", "#a6c8e8")
        dark = np.where(outlier, "tab:red", "tab:blue")
        ax.barh(position, np.nan_to_num(share), color=list(light), height=0.7)
        ax.barh(position, np.nan_to_num(main), color=list(dark), height=0.7)
        self._rows(ax)
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of the profile (%)")
        ax.grid(True, axis="x", alpha=0.3)
        ax.legend(handles=[Patch(color="tab:blue", label="main pattern"),
                           Patch(color="#a6c8e8", label="other patterns"),
                           Patch(color="tab:red", label="outlier")],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
        ax.set_title("Periodic coverage per node", loc="left", fontsize="medium")

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> MultiNodeResult:
        check_version(data, KIND, RESULT_VERSION, source)
        try:
            return MultiNodeResult(
                nodes=tuple(NodeSummary.from_dict(n) for n in data["nodes"]),
                agreement=Agreement.from_dict(data["agreement"]),
                outliers=tuple(Outlier.from_dict(o) for o in data["outliers"]),
                errors=tuple(NodeError.from_dict(e) for e in data.get("errors", [])),
                params=dict(data.get("params", {})))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed {KIND} result: {exc}", path=source) from None


def level(values: np.ndarray) -> float:
    """The mean absolute value of a pattern's points (Phase-TA's mean(patterns) for IPC)."""
    return float(np.mean(np.abs(values)))


def pattern_distance(reference: np.ndarray, pattern: np.ndarray, *, band: float | None = BAND
                     ) -> float:
    """Mean distance per associated point between two patterns (length x metrics) along their
    DTW_2 path, after rotating ``pattern`` to the phase of ``reference``, relative to the mean
    absolute value of the points of both (module docstring); inf for a zero mean."""
    ref = np.asarray(reference, dtype=np.float64).reshape(len(reference), -1)
    cand = np.asarray(pattern, dtype=np.float64).reshape(len(pattern), -1)
    if ref.shape[1] != cand.shape[1]:
        raise UsageError(f"patterns of {ref.shape[1]} and {cand.shape[1]} metrics cannot be "
                         "compared")
    cand = align.rotate_to(ref, cand)
    i, j = dtw_path(ref, cand, band=band)
    distances = np.sqrt(((ref[i] - cand[j]) ** 2).sum(axis=1))
    mean = level(np.concatenate([ref.ravel(), cand.ravel()]))
    return float(distances.mean()) / mean if mean > 0 else math.inf


#: Weight of the index channel with which :func:`dtw_path` reads the path (module docstring).
_INDEX_WEIGHT = 2.0 ** -40


def dtw_path(a: np.ndarray, b: np.ndarray, *, band: float | None = BAND
             ) -> tuple[np.ndarray, np.ndarray]:
    """The associated pairs ``(a[i[k]], b[j[k]])`` of the optimal DTW_2 path of two series
    (length x metrics), in path order.

    Read from phasekit.distance's DBA kernel, which adds up the points of ``b`` aligned with
    each point of ``a``: ``b`` is given one more channel holding ``2**-40 x`` its sample
    index (``a`` a channel of zeros), so the kernel's sums tell, for each ``i``, the sum of
    the ``j`` aligned with it. A DTW path is monotone, so those ``j`` are the consecutive
    indices from ``(sum - c (c - 1) / 2) / c`` on, ``c`` being their count (the sums are
    exact: multiples of 2**-40 below 2**13). The channel adds at most 2**-80 m**2 to a
    pointwise cost (m = len(b)): it can only break ties.
    """
    n, m = len(a), len(b)
    a2 = np.ascontiguousarray(np.column_stack([a.reshape(n, -1), np.zeros(n)]))
    b2 = np.ascontiguousarray(np.column_stack([b.reshape(m, -1), _INDEX_WEIGHT * np.arange(m)]))
    sums = np.zeros_like(a2)
    counts = np.zeros(n)
    dtw2_path_accumulate(a2, b2, band_radius(n, m, band), sums, counts)
    c = np.rint(counts).astype(np.int64)
    first = (np.rint(sums[:, -1] / _INDEX_WEIGHT).astype(np.int64) - c * (c - 1) // 2) // c
    i = np.repeat(np.arange(n), c)
    j = np.repeat(first, c) + np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
    return i, j


def _robust_off(values: np.ndarray, z: float) -> tuple[float, float]:
    """The median of ``values`` and the deviation from it beyond which a value is off
    (``z`` scaled MADs)."""
    median = float(np.median(values))
    mad = float(np.median(np.abs(values - median))) * MAD_SCALE
    return median, z * mad


def _reference(nodes: Sequence[NodeSummary], band: float | None) -> int | None:
    """Index of the reference node (module docstring), None when no node has a pattern."""
    holders = [i for i, n in enumerate(nodes) if n.patterns]
    if not holders:
        return None
    modal = Counter(len(nodes[i].patterns) for i in holders).most_common(1)[0][0]
    candidates = _spread([i for i in holders if len(nodes[i].patterns) == modal],
                         REFERENCE_CANDIDATES)
    if len(candidates) == 1:
        return candidates[0]
    others = _spread(holders, REFERENCE_SAMPLE)
    scores = []
    for c in candidates:
        main = nodes[c].patterns[0].values
        scores.append(float(np.median([
            0.0 if j == c else pattern_distance(main, nodes[j].patterns[0].values, band=band)
            for j in others])))
    return candidates[int(np.argmin(scores))]


def _spread(items: list[int], count: int) -> list[int]:
    """At most ``count`` of ``items``, evenly spaced (all of them when there are few)."""
    if len(items) <= count:
        return items
    picks = np.unique(np.linspace(0, len(items) - 1, count).round().astype(int))
    return [items[k] for k in picks]


def _associate(reference: NodeSummary, node: NodeSummary, band: float | None,
               max_period_ratio: float) -> tuple[NodePattern, ...]:
    """``node``'s patterns with ``reference`` and ``distance`` set (one-to-one, least total
    distance among pairs whose periods are within ``max_period_ratio``)."""
    from scipy.optimize import linear_sum_assignment

    ref, own = reference.patterns, node.patterns
    if not ref or not own:
        return tuple(replace(p, reference=None, distance=None) for p in own)
    cost = np.full((len(ref), len(own)), np.inf)
    for k, r in enumerate(ref):
        for j, p in enumerate(own):
            ratio = max(r.period_s, p.period_s) / max(min(r.period_s, p.period_s), 1e-300)
            if ratio <= max_period_ratio:
                cost[k, j] = pattern_distance(r.values, p.values, band=band)
    allowed = np.isfinite(cost)
    big = 1e6 * (1.0 + float(cost[allowed].max())) if allowed.any() else 1.0
    rows, cols = linear_sum_assignment(np.where(allowed, cost, big))
    matched = {int(j): int(k) for k, j in zip(rows, cols, strict=True) if allowed[k, j]}
    return tuple(replace(p, reference=matched.get(j),
                         distance=float(cost[matched[j], j]) if j in matched else None)
                 for j, p in enumerate(own))


def compare_nodes(nodes: Sequence[NodeSummary], *, threshold: float = THRESHOLD,
                  band: float | None = BAND, outlier_z: float = OUTLIER_Z,
                  coverage_floor: float = COVERAGE_FLOOR, period_floor: float = PERIOD_FLOOR,
                  max_period_ratio: float = MAX_PERIOD_RATIO,
                  errors: Sequence[NodeError] = ()) -> MultiNodeResult:
    """Compare the patterns of the nodes of one run: the agreement check of Phase-TA (IV-B:
    DTW per associated point <= 1 % of the pattern mean) against a reference node, and the
    nodes that stand out (module docstring for every default and where it comes from).

    ``nodes`` need unique names; ``errors`` (files that could not be analyzed) are carried
    into the result as they are.
    """
    names = [n.node for n in nodes]
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise UsageError("node names must be unique; repeated: " + ", ".join(repeated))
    rules = [(threshold > 0, "threshold", threshold, "expected a positive number"),
             (outlier_z > 0, "outlier_z", outlier_z, "expected a positive number"),
             (coverage_floor >= 0, "coverage_floor", coverage_floor, "expected a number >= 0"),
             (period_floor >= 0, "period_floor", period_floor, "expected a number >= 0"),
             (max_period_ratio >= 1, "max_period_ratio", max_period_ratio,
              "expected a number >= 1"),
             (band is None or 0 < band <= 1, "band", band, "expected a fraction in (0, 1], or none")]
    for ok, parameter, value, detail in rules:
        if not ok:
            raise UsageError(detail, parameter=parameter, value=value)
    params = {"threshold": threshold, "band": band, "outlier_z": outlier_z,
              "coverage_floor": coverage_floor, "period_floor": period_floor,
              "max_period_ratio": max_period_ratio, "min_nodes": MIN_NODES}
    ref_index = _reference(nodes, band)
    if ref_index is None:
        annotated = tuple(nodes)
        agreement = Agreement(threshold=threshold, reference=None, agree=None,
                              n_nodes=len(nodes), n_agree=0, max_distance=None, patterns=(),
                              explanation="no node was analyzed" if not nodes else
                              "no node has a periodicity: no pattern to compare")
    else:
        reference = nodes[ref_index]
        annotated = tuple(
            replace(n, patterns=tuple(replace(p, reference=k, distance=0.0)
                                      for k, p in enumerate(n.patterns)))
            if i == ref_index else
            replace(n, patterns=_associate(reference, n, band, max_period_ratio))
            for i, n in enumerate(nodes))
        agreement = _agreement(annotated, reference, threshold)
    reference_node = None if ref_index is None else annotated[ref_index]
    outliers = _outliers(annotated, reference_node, agreement, threshold=threshold, z=outlier_z,
                         coverage_floor=coverage_floor, period_floor=period_floor)
    return MultiNodeResult(nodes=annotated, agreement=agreement, outliers=outliers,
                           errors=tuple(errors), params=params)


def _by_reference(node: NodeSummary) -> dict[int, NodePattern]:
    return {p.reference: p for p in node.patterns if p.reference is not None}


def _agreement(nodes: Sequence[NodeSummary], reference: NodeSummary, threshold: float
               ) -> Agreement:
    per_pattern = []
    held = [_by_reference(n) for n in nodes]
    for k, r in enumerate(reference.patterns):
        found = [(n.node, h[k].distance) for n, h in zip(nodes, held, strict=True) if k in h]
        distances = np.array([d for _, d in found], dtype=float)
        worst = int(np.argmax(distances))
        per_pattern.append(PatternAgreement(
            pattern=k, period_s=r.period_s, mean=level(r.values), n_nodes=len(found),
            n_agree=int((distances <= threshold).sum()),
            median_distance=float(np.median(distances)), max_distance=float(distances[worst]),
            max_node=found[worst][0]))
    k_all = range(len(reference.patterns))
    agreeing = [all(k in h and h[k].distance <= threshold for k in k_all) for h in held]
    with_patterns = sum(1 for n in nodes if n.patterns)
    explanation = ""
    agree: bool | None = all(agreeing)
    if with_patterns < 2:
        agree = None
        explanation = ("only one node: nothing to compare" if len(nodes) < 2 else
                       "only one node has a periodicity: nothing to compare")
    return Agreement(threshold=threshold, reference=reference.node, agree=agree,
                     n_nodes=len(nodes), n_agree=sum(agreeing),
                     max_distance=max((p.max_distance for p in per_pattern), default=None),
                     patterns=tuple(per_pattern),
                     disagreeing=tuple(n.node for n, ok in zip(nodes, agreeing, strict=True)
                                       if not ok),
                     explanation=explanation)


def _percent(value: float) -> str:
    return f"{100 * value:.2f} %"


def _outliers(nodes: Sequence[NodeSummary], reference: NodeSummary | None,
              agreement: Agreement, *, threshold: float, z: float, coverage_floor: float,
              period_floor: float) -> tuple[Outlier, ...]:
    if len(nodes) < MIN_NODES:
        return ()
    found: dict[int, list[tuple[str, str]]] = {}

    def flag(i: int, reason: str, detail: str) -> None:
        found.setdefault(i, []).append((reason, detail))

    coverage = np.array([n.coverage for n in nodes])
    median, off = _robust_off(coverage, z)
    for i, c in enumerate(coverage):
        if abs(c - median) > max(coverage_floor, off):
            flag(i, "coverage", f"periodic share {100 * c:.1f} % where the median node's is "
                                f"{100 * median:.1f} %")
    held = [_by_reference(n) for n in nodes]
    for pa in agreement.patterns:
        k = pa.pattern
        members = [i for i, h in enumerate(held) if k in h]
        distances = np.array([held[i][k].distance for i in members], dtype=float)
        median, off = _robust_off(distances, z)
        for i, d in zip(members, distances, strict=True):
            if d - median > max(threshold, off):
                flag(i, "pattern", f"pattern {k + 1} is {_percent(d)} of its mean from the "
                                   f"reference's (median node {_percent(median)}, threshold "
                                   f"{_percent(threshold)})")
        periods = np.array([held[i][k].period_s for i in members], dtype=float)
        median, off = _robust_off(periods, z)
        for i, p in zip(members, periods, strict=True):
            if abs(p - median) > max(period_floor * median, off):
                flag(i, "period", f"pattern {k + 1} lasts {p:.4g} s where the median node's "
                                  f"lasts {median:.4g} s ({100 * (p / median - 1):+.1f} %)")
        if (reference is not None and 2 * len(members) > len(nodes)
                and reference.patterns[k].coverage >= MARGINAL):
            for i in sorted(set(range(len(nodes))) - set(members)):
                flag(i, "patterns", f"no pattern like the reference's pattern {k + 1} "
                                    f"(period {pa.period_s:.4g} s), which "
                                    f"{len(members)} of {len(nodes)} nodes have")

    def new_periodicity(node: NodeSummary, p: NodePattern) -> bool:
        """An unassociated pattern that is neither marginal nor a second cluster of a
        periodicity the node has."""
        if p.reference is not None or p.coverage < MARGINAL:
            return False
        return all(abs(p.period_s / q.period_s - 1) > period_floor
                   for q in node.patterns if q.reference is not None)

    extra = [[p for p in n.patterns if new_periodicity(n, p)] for n in nodes]
    with_extra = sum(1 for e in extra if e)
    if 2 * with_extra < len(nodes):
        for i, e in enumerate(extra):
            if e:
                periods = ", ".join(f"{p.period_s:.4g} s" for p in e)
                flag(i, "patterns", f"{len(e)} periodicit{'y' if len(e) == 1 else 'ies'} "
                                    f"that most nodes do not have (period {periods})")
    outliers = []
    for i in sorted(found):
        reasons = list(dict.fromkeys(reason for reason, _ in found[i]))
        outliers.append(Outlier(node=nodes[i].node, file=nodes[i].file, reasons=tuple(reasons),
                                details=tuple(detail for _, detail in found[i])))
    return tuple(outliers)
