"""The node profiles of one run, with planted outlier nodes (Phase-TA, section IV-B).

Phase-TA runs each application on 16 nodes, one profile per node, and finds their patterns
"almost identical" (IV-B, Fig. 4). :func:`generate_nodes` makes such a run from one synthetic
profile of :func:`phasekit.synth.generate` (the run: its layout, templates and instance
lengths are the same on every node) and gives every node its own perturbations (ours):

- a start lag of up to :data:`MAX_LAG_S` = 1 s (the profilers do not start together);
- a slowly varying clock rate, 1 + N(0, :data:`RATE_JITTER` = 0.5 %) between knots every
  :data:`RATE_KNOT_S` = 2 s (a node is a little ahead or behind, so its instance lengths
  differ);
- its own instances: each the template resampled to its length, scaled by
  1 + N(0, 3 %) and offset by N(0, 1 %) (the run generator's amplitude jitter), plus
  measurement noise of :data:`NODE_NOISE` = 2 % of the main template's range (half the run
  generator's 4 %: with 4 %, the DBA patterns of two nodes running the same iterations
  already differ by 1 to 1.5 % per associated point, more than the paper observed between
  its nodes; the aperiodic parts keep the run's samples);
- a gain of 1 + N(0, :data:`GAIN_JITTER` = 0.2 %) (a node's counters read a little higher).

Even so, the patterns of normal nodes land at 0.5 to 1.5 % of their mean from one another
(DBA's own variability), around the paper's 1 % threshold; planted outliers stand out clearly.

Outlier nodes (:data:`OUTLIER_KINDS`), planted on nodes drawn at random:

- ``shape``: every instance of the main periodicity carries a bump of
  :data:`SHAPE_BUMP` = 50 % of the template's range (a Gaussian of 10 % of the iteration
  around its 45 % point): the node does something the others do not, its pattern differs;
- ``slow``: the node runs :data:`SLOW` = 15 % slower (longer period, longer profile);
- ``idle``: the node is stalled (low, aperiodic IPC) from 35 % to 70 % of its profile (its
  periodic share drops).

The truth of each node (:class:`~phasekit.synth.Truth`) is the run's, mapped through the
node's clock; :class:`NodesTruth` names the outliers, and :data:`EXPECTED_REASONS` the
reason :func:`phasekit.periodicity.nodes.compare_nodes` should give for each kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phasekit.errors import UsageError
from phasekit.profile import Profile
from phasekit.synth.periodic import (
    INSTANCE_DTYPE,
    IPC_RANGE,
    OFFSET_JITTER,
    SCALE_JITTER,
    Truth,
    generate,
    kind_code,
)

__all__ = ["EXPECTED_REASONS", "OUTLIER_KINDS", "NodesTruth", "generate_nodes"]

OUTLIER_KINDS: tuple[str, ...] = ("shape", "slow", "idle")
#: The outlier reason phasekit.periodicity.nodes should give for each planted kind.
EXPECTED_REASONS: Mapping[str, str] = {"shape": "pattern", "slow": "period",
                                       "idle": "coverage"}
MAX_LAG_S = 1.0
RATE_JITTER = 0.005
RATE_KNOT_S = 2.0
GAIN_JITTER = 0.002
NODE_NOISE = 0.02
SHAPE_BUMP = 0.5
SLOW = 0.15
IDLE = (0.35, 0.70)


@dataclass(frozen=True, eq=False)
class NodesTruth:
    """What was planted in a run of node profiles: node names in order, the outlier kind of
    the outlier nodes, each node's truth, and the run's parameters."""

    nodes: tuple[str, ...]
    outliers: Mapping[str, str]
    truths: tuple[Truth, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def normal(self) -> tuple[str, ...]:
        """The nodes without a planted outlier."""
        return tuple(n for n in self.nodes if n not in self.outliers)

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": list(self.nodes), "outliers": dict(self.outliers),
                "truths": [t.to_dict() for t in self.truths], "meta": dict(self.meta)}

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> NodesTruth:
        return NodesTruth(nodes=tuple(data["nodes"]), outliers=dict(data["outliers"]),
                          truths=tuple(Truth.from_dict(t) for t in data["truths"]),
                          meta=dict(data.get("meta", {})))


def generate_nodes(kind: str = "nemo", *, n_nodes: int = 16, minutes: float = 10.0,
                   seed: int = 0, period: float = 0.005, outliers: Sequence[str] = ()
                   ) -> tuple[list[Profile], NodesTruth]:
    """``n_nodes`` IPC profiles of one synthetic run of ``kind`` (:data:`phasekit.synth.KINDS`)
    and their truth; ``outliers`` lists the kinds of outlier nodes to plant (each on a node
    of its own, drawn with ``seed``). Nodes are named ``node00``, ``node01``, ... The same
    arguments give the same profiles.
    """
    if int(n_nodes) != n_nodes or n_nodes < 1:
        raise UsageError("expected a positive integer", parameter="n_nodes", value=n_nodes,
                         option="--nodes")
    unknown = sorted(set(outliers) - set(OUTLIER_KINDS))
    if unknown:
        raise UsageError(f"unknown outlier kind(s) {', '.join(unknown)}; choose among: "
                         + ", ".join(OUTLIER_KINDS), parameter="outliers")
    if len(outliers) > n_nodes:
        raise UsageError(f"{len(outliers)} outliers do not fit on {n_nodes} nodes")
    run, truth = generate(kind, minutes=minutes, seed=seed, period=period)
    x = run.values[:, 0]
    main = max(range(len(truth.labels)), key=truth.coverage)
    span = float(np.ptp(truth.templates[main]))
    rng = np.random.default_rng([seed, kind_code("nodes"), n_nodes])
    planted = rng.choice(n_nodes, size=len(outliers), replace=False)
    kinds = {int(i): k for i, k in zip(planted, outliers, strict=True)}
    width = len(str(n_nodes - 1))
    names = tuple(f"node{i:0{max(2, width)}d}" for i in range(n_nodes))
    profiles, truths = [], []
    for i, name in enumerate(names):
        node_rng = np.random.default_rng([seed, kind_code("node"), i])
        values, node_truth = _node(x, truth, node_rng, kinds.get(i), main, span, period)
        meta = {"synth": kind, "seed": seed, "minutes": minutes, "node": i,
                "outlier": kinds.get(i)}
        profiles.append(Profile(values=values[:, None], period=period, metrics=("ipc",),
                                node=name, meta=meta))
        truths.append(node_truth)
    nodes_truth = NodesTruth(nodes=names, outliers={names[i]: k for i, k in sorted(kinds.items())},
                             truths=tuple(truths),
                             meta={"synth": kind, "seed": seed, "minutes": minutes,
                                   "period": period, "n_nodes": n_nodes})
    return profiles, nodes_truth


def _node(x: np.ndarray, truth: Truth, rng: np.random.Generator, outlier: str | None,
          main: int, span: float, period: float) -> tuple[np.ndarray, Truth]:
    """One node's samples and truth from the run's samples ``x`` and truth (module
    docstring): the run's aperiodic parts through the node's clock, its instances drawn
    afresh from the templates at the lengths the clock gives them."""
    n = x.size
    lag = float(rng.uniform(0.0, MAX_LAG_S / period))
    steps = int(n * (1.0 + SLOW) * 1.1) + 8  # enough clock steps to cover the whole run
    knots = max(2, int(steps * period / RATE_KNOT_S) + 2)
    rate = 1.0 + rng.normal(0.0, RATE_JITTER, knots)
    rate = np.interp(np.linspace(0, knots - 1, steps), np.arange(knots), rate)
    if outlier == "slow":
        rate /= 1.0 + SLOW
    positions = lag + np.concatenate([[0.0], np.cumsum(rate)])
    positions = positions[positions <= n - 1]
    values = np.interp(positions, np.arange(n), x)

    starts, ends = truth.starts, truth.starts + truth.lengths
    first = np.searchsorted(positions, starts)
    last = np.searchsorted(positions, ends)
    keep = (starts >= lag) & (ends <= positions[-1]) & (last > first)
    instances = np.zeros(int(keep.sum()), dtype=INSTANCE_DTYPE)
    instances["start"], instances["length"] = first[keep], (last - first)[keep]
    instances["label"] = truth.instance_labels[keep]
    if outlier == "idle":
        lo, hi = (round(f * values.size) for f in IDLE)
        values[lo:hi] = 0.3 + 0.05 * np.abs(rng.normal(0.0, 1.0, hi - lo))
        inside = (instances["start"] + instances["length"] > lo) & (instances["start"] < hi)
        instances = instances[~inside]

    for label, template in truth.templates.items():
        chosen = instances[instances["label"] == label]
        lengths = chosen["length"]
        which = np.repeat(np.arange(chosen.size), lengths)
        offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        phase = offsets / lengths[which]  # in [0, 1): where in its iteration a sample falls
        cycle = np.interp(phase * template.size, np.arange(template.size), template,
                          period=template.size)
        scale = 1.0 + rng.normal(0.0, SCALE_JITTER, chosen.size)
        shift = rng.normal(0.0, OFFSET_JITTER, chosen.size)
        cycle = cycle * scale[which] + shift[which]
        if outlier == "shape" and label == main:
            cycle += SHAPE_BUMP * span * np.exp(-(((phase - 0.45) / 0.1) ** 2))
        values[chosen["start"][which] + offsets] = cycle
    values = values * (1.0 + rng.normal(0.0, GAIN_JITTER))
    values = values + rng.normal(0.0, NODE_NOISE * span, values.size)
    np.clip(values, *IPC_RANGE, out=values)
    node_truth = Truth(instances=instances, labels=truth.labels, templates=truth.templates,
                       n_samples=values.size, period=period,
                       meta={**truth.meta, "outlier": outlier})
    return values, node_truth
