"""The loop structure of an MPI application from its execution trace (Martínez Vera).

:func:`structure` runs Martínez Vera's workflow on a :class:`~phasekit.trace.Trace`: reduction
(:mod:`.reduce`), clustering (:mod:`.cluster`), loop merge (:mod:`.loops`), inter-rank
reduction (:mod:`.ranks`) and pseudocode (:mod:`.pseudocode`). It reports, rather than
prints silently, what makes a structure doubtful: clusters that held two loops (aliasing,
undone), loops whose calls repeat different numbers of times or that repeat as evenly
across their parent's iterations as inside one (cluster split), calls made once inside a
loop, loops that overlap in time without nesting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.options import Options, Rule
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.structure.cluster import EPS, MIN_PTS, cluster_entries, split_aliased
from phasekit.structure.loops import InferredLoop, build_loops, nest, split_suspect
from phasekit.structure.mainloop import (
    extents,
    loop_place,
    loop_span_facts,
)
from phasekit.structure.pseudocode import (
    Row,
    call_stats,
    format_count,
    format_size,
    format_time,
    rows,
)
from phasekit.structure.ranks import CallItem, IfItem, Item, LoopItem, arrange
from phasekit.structure.reduce import MIN_EXPLAINED, Reduction, reduce_trace
from phasekit.structure.table import PSEUDOCODE_COLUMNS, headline, loop_records, main_loop
from phasekit.structure.timeline import timelines
from phasekit.trace import Trace
from phasekit.verbmodule import make_callable

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = ["EPS", "MIN_EXPLAINED", "MIN_PTS", "StructureAnalysis", "StructureOptions",
           "StructureResult", "format_size", "format_time", "loop_records", "outline",
           "structure"]

RESULT_KIND = "structure"
#: Version 4 adds the main loop's iterations per rank (``timeline``, for the figure);
#: version 3 adds the main loop (``main_loop``: its id) and, per loop, where it is
#: (``function``, ``site``, ``first_call_in``) and, per top-level loop, its span of time and
#: share in MPI; version 2 renamed the kind to snake_case (one style for every kind), with
#: version 1's layout, whose kind :data:`OLD_KIND` is still read. Older versions read.
RESULT_VERSION = 4
OLD_KIND = "mpi-structure-result"


@dataclass(frozen=True, eq=False)
class StructureAnalysis:
    """The analysis objects behind a structure, for Python callers that walk them (the
    reduction, the program body of items, the inferred loops, the loop of each clustered
    entry, the pseudocode rows). Not saved: a result read from JSON has none."""

    reduction: Reduction
    body: list[Item]
    loops: list[InferredLoop]
    labels: dict[int, int]
    rows: list[Row]


@dataclass(frozen=True, eq=False)
class StructureResult(Result):
    """The structure of a trace, as its JSON holds it (``to_dict`` documents the fields):
    the trace's summary, the loops (nested, program order), the calls and the body outside
    loops, the filtered and unplaced calls, the diagnostics, the pseudocode rows and, when
    kept, the clustered calls. ``analysis`` holds the objects they were built from and
    ``reading_notes`` what the trace's reader said of it (a missing .pcf...) when the result
    was computed in this process (neither is saved: None and () when read back)."""

    KIND: ClassVar[str] = RESULT_KIND

    trace: Mapping[str, Any]
    parameters: Mapping[str, Any]
    loop_tree: tuple[Mapping[str, Any], ...]
    calls: tuple[Mapping[str, Any], ...]
    body_refs: tuple[Mapping[str, Any], ...]
    filtered: tuple[Mapping[str, Any], ...]
    unplaced: tuple[Mapping[str, Any], ...]
    diagnostics: list[str]
    explanation: str
    pseudocode: tuple[Mapping[str, str], ...]
    clusters: tuple[Mapping[str, Any], ...] | None = None
    pseudocode_full: tuple[Mapping[str, str], ...] | None = None
    #: The main loop's and its inner loops' iterations per rank
    #: (:func:`phasekit.structure.timeline.loop_timeline`); () before version 4.
    timeline: tuple[Mapping[str, Any], ...] = ()
    analysis: StructureAnalysis | None = field(default=None, repr=False)
    reading_notes: tuple[str, ...] = field(default=(), repr=False)

    # --- the analysis objects (computed results only) ---------------------------------------
    def _analysis(self) -> StructureAnalysis:
        if self.analysis is None:
            raise UsageError("this structure was read from JSON, which keeps the loops "
                             "(loop_tree), the pseudocode and the clusters but not the analysis "
                             "objects (reduction, body, loops); run structure() on the trace")
        return self.analysis

    @property
    def reduction(self) -> Reduction:
        return self._analysis().reduction

    @property
    def body(self) -> list[Item]:
        return self._analysis().body

    @property
    def loops(self) -> list[InferredLoop]:
        return self._analysis().loops

    @property
    def labels(self) -> dict[int, int]:
        return self._analysis().labels

    @property
    def rows(self) -> list[Row]:
        return self._analysis().rows

    @property
    def top_loops(self) -> list[InferredLoop]:
        """The top-level loops in program order."""
        return _loops_in(self.body)

    # --- what the JSON holds ----------------------------------------------------------------
    @property
    def main_loop(self) -> dict[str, Any] | None:
        """The main loop's record (the top-level loop spanning the most time: its ``id``,
        ``function``, ``site``, ``iterations``, ``iteration_time_s``, ``run_share``,
        ``mpi_share``... as in :attr:`loop_tree`), None without loops."""
        found = main_loop(self.loop_tree)
        return None if found is None else dict(found)

    @property
    def n_loops(self) -> int:
        """Loops at every depth."""
        return len(loop_records(self.loop_tree))

    def __repr__(self) -> str:
        return short_repr(
            self, f"{self.n_loops} loops", f"{len(self.loop_tree)} at the top level",
            f"{len(self.pseudocode)} rows", self.explanation or None)

    def to_dict(self, *, clusters: bool = True) -> dict[str, Any]:
        """The JSON contract: ``{"loops": [...top-level, program order...], ...}``; each
        loop has ``iterations`` (per iteration of its parent), ``iteration_time_s``, nested
        ``loops`` and its ``calls``; ``body`` gives the order with conditional blocks;
        ``pseudocode`` the rows of :meth:`table`; ``clusters`` (``clusters=True`` and when
        the result has them) every repeated call per rank with its loop."""
        data: dict[str, Any] = {
            "kind": RESULT_KIND, "version": RESULT_VERSION, "trace": dict(self.trace),
            "parameters": dict(self.parameters), "loops": list(self.loop_tree),
            "calls": list(self.calls), "body": list(self.body_refs),
            "filtered": list(self.filtered), "unplaced": list(self.unplaced),
            "diagnostics": list(self.diagnostics), "explanation": self.explanation,
            "pseudocode": self.table(),
            "pseudocode_full": self.table(full=True),
            "main_loop": None if (main := self.main_loop) is None else main["id"],
        }
        if clusters and self.clusters is not None:
            data["clusters"] = list(self.clusters)
        if self.timeline:
            data["timeline"] = list(self.timeline)
        return plain(data)

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> StructureResult:
        """A result from its JSON (``to_dict``, ``phasekit structure -o``; kind
        ``structure``, or ``mpi-structure-result`` version 1 as written before). A file
        written before the pseudocode was saved reads with no pseudocode rows."""
        if isinstance(data, dict) and data.get("kind") == OLD_KIND:
            check_version(data, OLD_KIND, 1, source)
        else:
            check_version(data, RESULT_KIND, RESULT_VERSION, source)
        try:
            def records(key: str) -> tuple[dict[str, Any], ...]:
                return tuple(dict(item) for item in data.get(key) or [])

            def text_rows(key: str) -> tuple[dict[str, str], ...]:
                return tuple({c: str(row[c]) for c in PSEUDOCODE_COLUMNS}
                             for row in data.get(key) or [])

            clusters = data.get("clusters")
            return StructureResult(
                trace=dict(data["trace"]), parameters=dict(data.get("parameters") or {}),
                loop_tree=records("loops"), calls=records("calls"), body_refs=records("body"),
                filtered=records("filtered"), unplaced=records("unplaced"),
                diagnostics=[str(d) for d in data.get("diagnostics") or []],
                explanation=str(data.get("explanation") or ""),
                pseudocode=text_rows("pseudocode"),
                pseudocode_full=text_rows("pseudocode_full") if "pseudocode_full" in data
                else None,
                clusters=None if clusters is None else tuple(dict(c) for c in clusters),
                timeline=records("timeline"))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed structure result: {exc}", path=source) from None

    def present(self, name: str | None = None, *, full: bool = False) -> Presentation:
        """The headline (the main loop: where, its iterations, its share of the run and of
        that in MPI), the pseudocode, the loops and the notes (:mod:`.table`); ``name``: the
        trace file, in the title; ``full``: every call site in the pseudocode (the default
        writes a run of one-call conditional blocks of one MPI call as one row)."""
        from phasekit.structure.table import presentation

        return presentation(self, name, full=full)

    def table(self, *, full: bool = False) -> list[dict[str, str]]:
        """The pseudocode rows as text cells (FILE, LINE, PSEUDOCODE, E(TIME), E(SIZE),
        E(IPC)), indented with ": " per level as in the paper's console output; compact
        (:meth:`present`) unless ``full``."""
        rows = self.pseudocode_full if full and self.pseudocode_full is not None \
            else self.pseudocode
        return [dict(row) for row in rows]

    def summary(self) -> pd.DataFrame:
        """The pseudocode table as the CLI prints it: one row per line (function, loop,
        conditional block, call), text cells; ``attrs`` holds the headline and the main
        loop's record (:attr:`main_loop`)."""
        import pandas as pd

        frame = pd.DataFrame(self.table(), columns=list(PSEUDOCODE_COLUMNS))
        frame.attrs.update(headline=headline(self), main_loop=self.main_loop)
        return frame

    def plot(self, ax: Axes | None = None, *, detail: bool = False) -> Figure:
        """The main loop's iterations per rank over time, their time in MPI shaded and the
        loops inside it below (``phasekit structure --plot``); with ``detail``, or for a
        result saved before the timeline was (version 3), the clustering scatter (every
        repeated call per rank, repetitions against mean time between them, coloured by
        loop; ``--plot --detail``)."""
        from phasekit.plot.structure import structure_figure, timeline_figure

        if self.timeline and not detail:
            return timeline_figure(self, ax=ax)
        return structure_figure(self, ax=ax)

    def loop_records(self) -> list[dict[str, Any]]:
        """Every loop of :attr:`loop_tree`, depth first (:func:`loop_records`)."""
        return loop_records(self.loop_tree)


def _walk(items: Sequence[Item]) -> list[Item]:
    out: list[Item] = []
    for item in items:
        out.append(item)
        if isinstance(item, LoopItem | IfItem):
            out.extend(_walk(item.body))
    return out


def _direct(items: Sequence[Item]) -> list[Item]:
    """The items directly in a body, conditional blocks opened."""
    out: list[Item] = []
    for item in items:
        out.extend(_direct(item.body) if isinstance(item, IfItem) else [item])
    return out


def _loops_in(items: Sequence[Item]) -> list[InferredLoop]:
    """The loops directly in ``items``, each once, in order of first occurrence."""
    return list(dict.fromkeys(i.loop for i in _direct(items) if isinstance(i, LoopItem)))


def _calls_in(items: Sequence[Item]) -> list[int]:
    """The signatures called directly in ``items``, each once, in order of first occurrence."""
    return list(dict.fromkeys(i.signature for i in _direct(items) if isinstance(i, CallItem)))


def _first_occurrences(body: Sequence[Item]) -> dict[int, LoopItem]:
    out: dict[int, LoopItem] = {}
    for item in _walk(body):
        if isinstance(item, LoopItem):
            out.setdefault(item.loop.id, item)
    return out


def _entries_of(items: Sequence[Item], signature: int) -> np.ndarray:
    found = [i.entries for i in _direct(items)
             if isinstance(i, CallItem) and i.signature == signature]
    return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)


def _call_dicts(red: Reduction, signatures: list[int], items: Sequence[Item]
                ) -> list[dict[str, Any]]:
    out = []
    for s in signatures:
        sig = red.signatures[s]
        entries = _entries_of(items, s)
        e_time, e_size, e_ipc = call_stats(red, entries)
        out.append({"call": sig.call, "path": [f for f, _ in sig.frames],
                    "lines": [site for _, site in sig.frames], "site": sig.site,
                    "ranks": sorted({int(r) for r in red.rank[entries]}),
                    "count": int(red.it[entries].sum()), "e_time_s": e_time,
                    "e_size_bytes": e_size, "e_ipc": e_ipc})
    return out


def _body_refs(items: Sequence[Item], calls: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, CallItem):
            out.append({"call": calls.index(item.signature)})
        elif isinstance(item, LoopItem):
            out.append({"loop": item.loop.id})
        else:
            out.append({"if": list(item.ranks), "body": _body_refs(item.body, calls)})
    return out


def _loop_dict(red: Reduction, item: LoopItem) -> dict[str, Any]:
    loop = item.loop
    calls = _calls_in(item.body)
    children = _first_occurrences(item.body)
    trips = loop.trip_counts()
    return {
        "id": loop.id, **loop_place(red, loop),
        "iterations": round(loop.iterations_per_outer),
        "iterations_per_outer": loop.iterations_per_outer, "iterations_total": loop.it,
        "iterations_range": [int(trips.min()), int(trips.max())],
        "iteration_time_s": loop.iteration_time_s(),
        "mean_time_between_repetitions_s": loop.imt,
        "explained": float(np.median(red.delta[loop.entries])),
        "ranks": list(loop.all_ranks()),
        "loops": [_loop_dict(red, children[child.id]) for child in _loops_in(item.body)],
        "calls": _call_dicts(red, calls, item.body),
        "body": _body_refs(item.body, calls),
    }


def _entry_dict(red: Reduction, e: int) -> dict[str, Any]:
    sig = red.signatures[int(red.signature[e])]
    return {"rank": int(red.rank[e]), "call": sig.call, "site": sig.site,
            "repetitions": int(red.it[e]), "mean_time_between_s": float(red.imt[e]),
            "explained": float(red.delta[e]), "first_s": float(red.first[e])}


def _spans(red: Reduction, loop: InferredLoop, rank: int, cuts: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Iterations of the parent (``cuts``: its anchor; empty for top-level loops) in which
    ``loop``'s subtree calls on ``rank``, and its first and last call time in each."""
    entries = loop.all_entries()
    on = entries[red.rank[entries] == rank]
    times = np.sort(np.concatenate([red.timestamps(int(e)) for e in on])) if on.size \
        else np.zeros(0)
    bins = np.searchsorted(cuts, times, side="right")
    present, start = np.unique(bins, return_index=True)
    end = np.r_[start[1:], times.size] - 1
    return present, times[start], times[end]


def _interleaved(red: Reduction, a: InferredLoop, b: InferredLoop) -> int | None:
    """A rank on which sibling loops ``a`` and ``b`` overlap in time (by more than a tenth
    of the shorter) in most iterations of their parent (in the run, for top-level loops)."""
    for rank in sorted(set(a.all_ranks()) & set(b.all_ranks())):
        cuts = a.parent.anchor_on(rank) if a.parent is not None else np.zeros(0)
        bins_a, a0, a1 = _spans(red, a, rank, cuts)
        bins_b, b0, b1 = _spans(red, b, rank, cuts)
        _, ia, ib = np.intersect1d(bins_a, bins_b, return_indices=True)
        if not ia.size:
            continue
        shorter = np.minimum(a1[ia] - a0[ia], b1[ib] - b0[ib])
        overlap = np.minimum(a1[ia], b1[ib]) - np.maximum(a0[ia], b0[ib])
        if np.count_nonzero((shorter > 0) & (overlap > 0.1 * shorter)) > ia.size / 2:
            return rank
    return None


def _number(body: Sequence[Item]) -> None:
    next_id = 0
    for item in _walk(body):
        if isinstance(item, LoopItem) and item.loop.id < 0:
            item.loop.id = next_id
            next_id += 1


def _diagnose(red: Reduction, loops: list[InferredLoop], splits: list[list[int]],
              label_loop: dict[int, InferredLoop]) -> list[str]:
    notes = []
    for new_labels in splits:
        ids = ", ".join(str(label_loop[label].id) for label in new_labels)
        notes.append(f"cluster aliasing: loops {ids} have the same repetitions and time between "
                     "them and fell in one cluster; told apart by when they run")
    for loop in loops:
        counts = red.it[loop.entries]
        if counts.min() != counts.max():
            notes.append(f"cluster split: the calls of loop {loop.id} repeat between "
                         f"{counts.min()} and {counts.max()} times; some may be made in only "
                         "some iterations")
        if split_suspect(loop):
            assert loop.parent is not None
            notes.append(f"cluster split?: loop {loop.id} ({format_count(loop.iterations_per_outer)}"
                         f" per iteration of loop {loop.parent.id}) repeats as evenly across "
                         f"loop {loop.parent.id}'s iterations as inside one; loop "
                         f"{loop.parent.id}'s own calls may be calls made every "
                         f"{format_count(loop.iterations_per_outer)}th iteration of one loop")
    for group in [[loop for loop in loops if loop.parent is None]] + \
            [loop.children for loop in loops]:
        for a_index, a in enumerate(group):
            for b in group[a_index + 1:]:
                rank = _interleaved(red, a, b)
                if rank is not None:
                    notes.append(f"loops {a.id} and {b.id} overlap in time on rank {rank} "
                                 "without one nesting in the other: their relation is uncertain")
    return notes


@dataclass(frozen=True)
class StructureOptions(Options):
    """The tuning parameters of :func:`structure`, declared and checked once:
    ``structure(trace, options=StructureOptions(eps=0.3))`` or, equally, ``structure(trace,
    eps=0.3)``; kept, compared and changed with :func:`dataclasses.replace`.

    ``eps``/``min_pts``: DBSCAN's parameters in the log10 space of repetitions and mean time
    between them (Martínez Vera: 0.2 and 1, :mod:`.cluster`); ``min_explained``: the
    explained-time threshold below which repeated calls are filtered (ours: 1 %,
    :mod:`.reduce`). A value out of range is a :class:`~phasekit.errors.UsageError` naming
    the parameter.
    """

    eps: float = EPS
    min_pts: int = MIN_PTS
    min_explained: float = MIN_EXPLAINED

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        return [
            ("eps", self.eps > 0, "expected a positive number"),
            ("min_pts", self.min_pts >= 1, "expected at least 1"),
            ("min_explained", 0 <= self.min_explained < 1, "expected a share in [0, 1)"),
        ]


def structure(trace: Trace, *, rank: int | None = None,
              options: StructureOptions | None = None, **keywords: Any) -> StructureResult:
    """The loop structure of ``trace`` (Martínez Vera's workflow; module docstring).

    ``rank``: analyze one rank only; ``options``: the tuning parameters as one
    :class:`StructureOptions` (``eps``, ``min_pts``, ``min_explained``; defaults and their
    sources there), or the same as keywords, never both.
    """
    o = StructureOptions.of(options, keywords, verb="structure")
    if rank is not None and not 0 <= rank < trace.n_ranks:
        raise UsageError(f"not in this trace (ranks 0 to {trace.n_ranks - 1})", parameter="rank",
                         value=rank)
    red = reduce_trace(trace, min_explained=o.min_explained)
    chosen = red.rank == rank if rank is not None else np.ones(red.n_entries, bool)
    candidates = np.flatnonzero(red.repeated & chosen)
    labels = cluster_entries(red, candidates, eps=o.eps, min_pts=o.min_pts)
    labels, splits = split_aliased(red, candidates, labels)
    loops = build_loops(red, candidates[labels >= 0], labels[labels >= 0])
    top = nest(red, loops)
    label_loop = {loop.label: loop for loop in loops}
    once = np.flatnonzero((red.it == 1) & chosen)
    unplaced, straight = [], []
    spans = [extents(red, loop) for loop in top]
    for e in once:
        r, t = int(red.rank[e]), float(red.first[e])
        inside = any(lo < t < hi for ext in spans for lo, hi in [ext.get(r, (0.0, 0.0))])
        (unplaced if inside else straight).append(int(e))
    ranks = tuple(sorted({int(r) for r in red.rank[chosen]}))
    body = arrange(red, np.asarray(straight, np.int64), top, ranks)
    _number(body)
    diagnostics = _diagnose(red, loops, splits, label_loop)
    explanation = ""
    if trace.empty:
        explanation = trace.explanation or "the trace holds no MPI call"
    elif not loops:
        explanation = ("no loop found: no MPI call repeats" if not (red.it[chosen] > 1).any()
                       else "no loop found: the repeated calls explain less than "
                            f"{o.min_explained:.0%} of the run each")
    entry_label = {int(e): label_loop[int(lab)].id
                   for e, lab in zip(candidates, labels, strict=True) if lab >= 0}
    table = rows(red, body)
    occurrences = _first_occurrences(body)
    straight_calls = _calls_in(body)
    info = {"sources": list(trace.sources), "format": trace.format, "n_ranks": trace.n_ranks,
            "duration_s": trace.duration_s, "n_calls": trace.n_calls}
    loop_tree = tuple(plain({**_loop_dict(red, occurrences[loop.id]),
                             **loop_span_facts(red, loop, trace.duration_s)})
                      for loop in _loops_in(body))
    main = main_loop(loop_tree)
    return StructureResult(
        trace=plain(info),
        parameters={**o.to_dict(), "rank": rank},
        loop_tree=loop_tree,
        timeline=timelines(  # plain Python lists and numbers already
            red, loops, None if main is None else int(main["id"]),
            *(np.asarray(trace.arrays[c]) for c in ("rank", "time_s", "duration_s"))),
        calls=tuple(plain(_call_dicts(red, straight_calls, body))),
        body_refs=tuple(plain(_body_refs(body, straight_calls))),
        filtered=tuple(plain(_entry_dict(red, e)) for e in np.flatnonzero(red.filtered)),
        unplaced=tuple(plain(_entry_dict(red, e)) for e in unplaced),
        diagnostics=diagnostics, explanation=explanation,
        pseudocode=tuple(_text_row(r) for r in rows(red, body, compact=True)),
        pseudocode_full=tuple(_text_row(r) for r in table),
        clusters=tuple(plain({**_entry_dict(red, e), "loop": entry_label.get(int(e))})
                       for e in np.flatnonzero(red.it > 1)),
        analysis=StructureAnalysis(red, body, loops, entry_label, table),
        reading_notes=(str(trace.meta["note"]),) if trace.meta.get("note") else ())


def _text_row(r: Row) -> dict[str, str]:
    """A pseudocode row as the text cells Martínez Vera prints, indented ": " per level."""
    return {"FILE": r.file, "LINE": r.line, "PSEUDOCODE": ": " * r.depth + r.text,
            "E(TIME)": format_time(r.time_s), "E(SIZE)": format_size(r.size_bytes),
            "E(IPC)": "-" if not np.isfinite(r.ipc) else f"{r.ipc:.2f}"}


def outline(items: Sequence[Item], reduction: Reduction, ranks: tuple[int, ...] | None = None
            ) -> tuple[tuple[Any, ...], ...]:
    """A canonical form of a body to compare structures: ``("call", name, site, ranks)`` and
    ``("loop", iterations, body, ranks)``, where ``ranks`` is None for an item made by every
    rank of its block and the sorted ranks inside an ``IF rank in [...]``."""
    out: list[tuple[Any, ...]] = []
    for item in items:
        if isinstance(item, IfItem):
            out.extend(outline(item.body, reduction, item.ranks))
        elif isinstance(item, CallItem):
            sig = reduction.signatures[item.signature]
            out.append(("call", sig.call, sig.site, ranks))
        else:
            out.append(("loop", round(item.loop.iterations_per_outer),
                        outline(item.body, reduction), ranks))
    return tuple(out)


make_callable(__name__, "phasekit.structure.api:structure")  # pk.structure(...) runs it
