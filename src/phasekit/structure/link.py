"""Which loop of the program makes each periodic pattern: Phase-TA's patterns linked to
Martínez Vera's loops, with the source lines of the loop's MPI calls.

A periodic pattern (:class:`~phasekit.periodicity.analyze.PeriodicityResult`) has a period
and instances (start and end times); a loop of a structure
(:class:`~phasekit.structure.StructureResult`) has an iteration time (the mean time between
repetitions of its first MPI call inside one iteration of its parent), iterations and,
from the trace, the time span of every iteration on every rank. A pattern is the loop whose
iterations it repeats with:

1. *period*: the pattern's period ``P`` is ``k`` iterations of the loop (``k = 1``: one
   iteration per instance; ``k > 1``: an instance spans ``k`` iterations) or ``1/m`` of one
   (the pattern repeats ``m`` times inside each iteration: an inner loop without MPI calls,
   which the structure cannot see), within ``tolerance`` (10 %, ours):
   ``|P - kT| / kT <= tolerance``. Only multiples with ``k * tolerance < 0.5`` are tried:
   beyond that every period lies within the tolerance of some multiple.
2. *time*: at least ``min_overlap`` (half, ours) of the time of the pattern's instances lies
   inside the loop's iterations (the union over ranks; the last iteration of each run of
   iterations has no next repetition to end it and is taken to last one mean iteration,
   cut at the end of the trace).

The score ranks the loops that pass: ``overlap x (1 - period error) / multiple`` (the
multiple ``k`` or ``m``: one iteration per instance is the plainest reading). The best loop
is the link; the others are listed. A pattern no loop passes says so, with the nearest loop
by period.

The *call sites* of a loop are the source lines of its MPI calls (its nested loops' too, in
program order) at the outermost caller level the trace records (Extrae's caller levels: the
line in the outermost function known, e.g. ``lulesh.cc:1158``, where the loop's code calls
down to MPI); the MPI calls' own lines are kept too (``mpi_sites``).

The iteration spans need the analysis objects of the structure (its anchors' timestamps); a
structure read back from JSON has none, and its analysis is run again on ``trace`` with the
structure's parameters (its loops must come out the same). Without a trace, patterns are
linked by period alone and the link says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.errors import UsageError
from phasekit.options import Options, Rule
from phasekit.results import format_count, plain

if TYPE_CHECKING:
    from phasekit.periodicity.analyze import PeriodicityResult
    from phasekit.structure import StructureResult
    from phasekit.structure.loops import InferredLoop
    from phasekit.trace import Trace

__all__ = ["MIN_OVERLAP", "TOLERANCE", "Iteration", "LinkOptions", "PatternLoop",
           "analyzed", "link_patterns", "loop_iterations", "loop_sites", "seconds"]

#: A pattern's period must be within this fraction of k loop iterations (ours).
TOLERANCE = 0.1
#: Least share of a pattern's instances' time inside the loop's iterations (ours).
MIN_OVERLAP = 0.5


@dataclass(frozen=True)
class LinkOptions(Options):
    """The tuning parameters of :func:`link_patterns`: ``tolerance``, how far (a fraction)
    a pattern's period may be from a whole number of loop iterations (10 %, ours);
    ``min_overlap``, the least share of the pattern's instances' time inside the loop's
    iterations (half, ours)."""

    tolerance: float = TOLERANCE
    min_overlap: float = MIN_OVERLAP

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        return [
            ("tolerance", 0 < self.tolerance < 0.5, "expected a fraction in (0, 0.5)"),
            ("min_overlap", 0 <= self.min_overlap <= 1, "expected a share in [0, 1]"),
        ]


@dataclass(frozen=True)
class Iteration:
    """One iteration of a loop on one rank: from an entry of the loop's first MPI call (its
    anchor) to the next (``complete``), or, for the last of a run of iterations, to one mean
    iteration later (``complete`` False: estimated, cut at the trace's end)."""

    start_s: float
    end_s: float
    rank: int
    complete: bool


@dataclass(frozen=True)
class PatternLoop:
    """A periodic pattern and the loop that makes it (``loop`` None: none found).

    ``pattern`` is 0-based (the sentence says ``pattern 1`` for 0, as the tables do);
    ``multiple`` is the loop iterations per pattern instance (2.0: an instance spans two
    iterations; 0.5: two instances per iteration); ``period_error`` the relative distance
    of the period to that multiple of the iteration time; ``overlap`` the share of the
    instances' time inside the loop's iterations (None when the spans are unknown);
    ``lag_s`` the median time from the start of the loop iteration nearest each instance's
    start to that start (how much later the pattern starts than the iterations); ``sites``
    the loop's call sites (outermost caller level), ``mpi_sites`` its MPI calls' lines;
    ``others`` the other loops that matched, best first; ``nearest`` for a pattern without
    a loop, the loop closest by period."""

    pattern: int
    period_s: float
    n_instances: int
    loop: int | None
    iterations: float | None = None
    iterations_total: int | None = None
    iteration_time_s: float | None = None
    multiple: float | None = None
    period_error: float | None = None
    overlap: float | None = None
    score: float = 0.0
    lag_s: float | None = None
    sites: tuple[str, ...] = ()
    mpi_sites: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    others: tuple[int, ...] = ()
    nearest: int | None = None

    @property
    def sentence(self) -> str:
        """The link in plain words: ``pattern 1, 0.34 s x 1, is loop 0 (2 iterations of
        0.345 s) at lulesh.cc:1158``."""
        head = (f"pattern {self.pattern + 1}, {seconds(self.period_s)} \u00d7 "
                f"{self.n_instances}")
        if self.loop is None:
            near = (f" (nearest by period: loop {self.nearest}, "
                    f"{seconds(self.iteration_time_s)} per iteration)"
                    if self.nearest is not None and self.iteration_time_s else "")
            return f"{head}, matches no loop{near}"
        assert self.multiple is not None and self.iteration_time_s is not None
        iterations = format_count(self.iterations or 0.0)
        loop = (f"loop {self.loop} ({iterations} iteration"
                f"{'' if iterations == '1' else 's'} of {seconds(self.iteration_time_s)})")
        if abs(self.multiple - 1) < 1e-9:
            verb = f"is {loop}"
        elif self.multiple > 1:
            verb = f"spans {round(self.multiple)} iterations of {loop}"
        else:
            verb = f"repeats {round(1 / self.multiple)} times per iteration of {loop}"
        where = f" at {self.sites[0]}" if self.sites else ""
        more = f" (and {len(self.sites) - 1} more call sites)" if len(self.sites) > 1 else ""
        how = f"period within {100 * (self.period_error or 0.0):.1f} %"
        if self.overlap is not None:
            how += f", {100 * self.overlap:.0f} % of its time in the loop"
        else:
            how += ", matched by period alone"
        return f"{head}, {verb}{where}{more}: {how}"

    def to_dict(self) -> dict[str, Any]:
        """The link as JSON: every field and the ``sentence``."""
        return plain({
            "pattern": self.pattern, "period_s": self.period_s,
            "n_instances": self.n_instances, "loop": self.loop,
            "iterations": self.iterations, "iterations_total": self.iterations_total,
            "iteration_time_s": self.iteration_time_s, "multiple": self.multiple,
            "period_error": self.period_error, "overlap": self.overlap, "score": self.score,
            "lag_s": self.lag_s, "sites": list(self.sites), "mpi_sites": list(self.mpi_sites),
            "calls": list(self.calls), "others": list(self.others), "nearest": self.nearest,
            "sentence": self.sentence})

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> PatternLoop:
        """A link from :meth:`to_dict`'s JSON (the sentence is made again)."""
        def number(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        def whole(key: str) -> int | None:
            value = data.get(key)
            return None if value is None else int(value)

        return PatternLoop(
            pattern=int(data["pattern"]), period_s=float(data["period_s"]),
            n_instances=int(data["n_instances"]), loop=whole("loop"),
            iterations=number("iterations"), iterations_total=whole("iterations_total"),
            iteration_time_s=number("iteration_time_s"), multiple=number("multiple"),
            period_error=number("period_error"), overlap=number("overlap"),
            score=float(data.get("score") or 0.0), lag_s=number("lag_s"),
            sites=tuple(map(str, data.get("sites") or ())),
            mpi_sites=tuple(map(str, data.get("mpi_sites") or ())),
            calls=tuple(map(str, data.get("calls") or ())),
            others=tuple(int(i) for i in data.get("others") or ()), nearest=whole("nearest"))


def seconds(value: float | None) -> str:
    """A time as a person reads it: ``0.345 s``, ``12.5 ms``, ``80 us``; ``-`` if unknown."""
    if value is None or not math.isfinite(value):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(value) >= 0.1 * scale or unit == "us":
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} s"  # pragma: no cover


# --- the loops ---------------------------------------------------------------------------------
def _outermost(lines: Sequence[str], site: str) -> str:
    return next((line for line in lines if line), site)


def loop_sites(loop: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """The call sites of a loop record (JSON ``loop_tree`` layout) and its nested loops, in
    program order, each once: the outermost caller level's line, the MPI call's own line and
    the call's name (module docstring)."""
    calls = list(loop.get("calls") or [])
    children = {child.get("id"): child for child in loop.get("loops") or []}
    outer: list[str] = []
    inner: list[str] = []
    names: list[str] = []

    def add(call: Mapping[str, Any]) -> None:
        site = str(call.get("site") or "")
        outer.append(_outermost([str(s) for s in call.get("lines") or []], site))
        inner.append(site)
        names.append(str(call.get("call") or "?"))

    def walk(body: Sequence[Mapping[str, Any]]) -> None:
        for item in body:
            if isinstance(item.get("call"), int) and item["call"] < len(calls):
                add(calls[item["call"]])
            elif item.get("loop") in children:
                child_outer, child_inner, child_names = loop_sites(children[item["loop"]])
                outer.extend(child_outer)
                inner.extend(child_inner)
                names.extend(child_names)
            elif "if" in item:
                walk(item.get("body") or [])

    walk(loop.get("body") or [])
    if not outer:  # a record without its body: its calls, then its loops'
        for call in calls:
            add(call)
        for child in children.values():
            for part, found in zip((outer, inner, names), loop_sites(child), strict=True):
                part.extend(found)

    def once(items: list[str]) -> list[str]:
        return [s for s in dict.fromkeys(items) if s]

    return once(outer), once(inner), once(names)


def analyzed(result: StructureResult, trace: Trace | None) -> StructureResult | None:
    """``result`` when it holds its analysis objects; else the structure of ``trace`` with
    ``result``'s parameters, checked to give the same loops (UsageError otherwise); None
    without a trace."""
    if result.analysis is not None:
        return result
    if trace is None:
        return None
    from phasekit.structure import StructureOptions, structure

    given = result.parameters
    keys = {k: given[k] for k in StructureOptions.names() if given.get(k) is not None}
    again = structure(trace, rank=given.get("rank"), **keys)

    def shape(r: StructureResult) -> list[tuple[Any, Any]]:
        return [(loop.get("id"), loop.get("iterations_total")) for loop in r.loop_records()]

    if shape(again) != shape(result):
        raise UsageError("this trace does not give the loops of this structure (another "
                         "trace, or other parameters?)", parameter="trace")
    return again


def _loop_object(result: StructureResult, loop_id: int) -> InferredLoop:
    for loop in result.loops:
        if loop.id == loop_id:
            return loop
    known = ", ".join(str(loop.id) for loop in sorted(result.loops, key=lambda x: x.id))
    raise UsageError(f"no loop {loop_id} in this structure (loops: {known or 'none'})",
                     parameter="loop_id", value=loop_id)


def _iterations_of(loop: InferredLoop, end_s: float) -> list[Iteration]:
    mean = loop.iteration_time_s()
    out: list[Iteration] = []
    for rank in sorted(loop.anchor):
        times = np.sort(loop.anchor[rank])
        if times.size == 0:
            continue
        if loop.parent is not None:
            cut = np.searchsorted(loop.parent.anchor_on(rank), times, side="right")
            same = cut[1:] == cut[:-1]
        else:
            same = np.ones(max(times.size - 1, 0), bool)
        gaps = np.diff(times)[same]
        step = float(gaps.mean()) if gaps.size else mean
        for i, start in enumerate(times):
            if i < times.size - 1 and same[i]:
                out.append(Iteration(float(start), float(times[i + 1]), int(rank), True))
            elif math.isfinite(step):
                out.append(Iteration(float(start), float(min(start + step, end_s)), int(rank),
                                     False))
    return out


def loop_iterations(result: StructureResult, loop_id: int, trace: Trace | None = None, *,
                    complete: bool = True) -> list[Iteration]:
    """The iterations of loop ``loop_id`` on each of its ranks, in rank then time order
    (:class:`Iteration`: an anchor call's entry to the next inside one iteration of the
    parent loop); ``complete=False`` adds the last of each run of iterations, its end
    estimated (module docstring). A structure read from JSON needs ``trace``
    (:func:`analyzed`)."""
    full = analyzed(result, trace)
    if full is None:
        raise UsageError("the iterations of a loop need the structure's analysis: this one "
                         "was read from JSON; give the trace too", parameter="trace")
    loop = _loop_object(full, loop_id)
    end_s = float(full.trace.get("duration_s") or math.inf)
    found = _iterations_of(loop, end_s if end_s > 0 else math.inf)
    return [it for it in found if it.complete or not complete]


# --- the link ----------------------------------------------------------------------------------
def _union(spans: Sequence[tuple[float, float]]) -> np.ndarray:
    """Sorted disjoint intervals covering ``spans`` (n x 2)."""
    if not spans:
        return np.zeros((0, 2))
    order = sorted((float(a), float(b)) for a, b in spans if b > a)
    merged: list[list[float]] = []
    for a, b in order:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return np.array(merged).reshape(-1, 2)


def _inside(spans: np.ndarray, union: np.ndarray) -> float:
    """The time of ``spans`` (n x 2) inside the disjoint intervals ``union``."""
    total = 0.0
    for a, b in spans:
        lo = np.maximum(union[:, 0], a)
        hi = np.minimum(union[:, 1], b)
        total += float(np.clip(hi - lo, 0.0, None).sum())
    return total


def pattern_spans(result: PeriodicityResult, pattern: int) -> np.ndarray:
    """The instances of one pattern of ``result`` as (start, end) seconds from the start of
    the profile it was computed on (n x 2)."""
    if not 0 <= pattern < len(result.patterns):
        raise UsageError(f"the analysis found {len(result.patterns)} pattern(s)",
                         parameter="pattern", value=pattern)
    chosen = result.patterns[pattern]
    start = result.offset_s + chosen.starts * result.sampling_period
    return np.column_stack([start, start + chosen.lengths * result.sampling_period])


def _multiple(period: float, iteration: float, tolerance: float
              ) -> tuple[float, float] | None:
    """(multiple, error) of the nearest allowed multiple within ``tolerance``, else None."""
    ratio = period / iteration
    tried = [float(k) for k in range(1, math.ceil(0.5 / tolerance))
             if k * tolerance < 0.5]
    tried += [1.0 / m for m in range(2, math.ceil(0.5 / tolerance)) if m * tolerance < 0.5]
    best = min(tried, key=lambda k: abs(ratio - k) / k)
    error = abs(ratio - best) / best
    return (best, error) if error <= tolerance else None


@dataclass(frozen=True)
class _Candidate:
    record: Mapping[str, Any]
    iteration_s: float
    spans: np.ndarray | None  # the union of its iterations, or None when unknown
    starts: dict[int, np.ndarray]  # the iterations' starts on each rank, sorted


def link_patterns(periodicity_result: PeriodicityResult, structure_result: StructureResult,
                  trace: Trace | None = None, *, options: LinkOptions | None = None,
                  **keywords: Any) -> list[PatternLoop]:
    """Each pattern of ``periodicity_result`` linked to the loop of ``structure_result``
    that makes it (module docstring: the rule), in pattern order.

    ``trace``: the trace both were computed from, needed when ``structure_result`` was read
    from JSON (without it the link is by period alone). ``options``: :class:`LinkOptions`
    (``tolerance``, ``min_overlap``), or the same as keywords, never both.
    """
    o = LinkOptions.of(options, keywords, verb="link_patterns")
    full = analyzed(structure_result, trace)
    candidates: list[_Candidate] = []
    by_id = {loop.id: loop for loop in full.loops} if full is not None else {}
    end_s = float(structure_result.trace.get("duration_s") or math.inf)
    for record in structure_result.loop_records():
        iteration = record.get("iteration_time_s")
        if iteration is None or not math.isfinite(float(iteration)) or float(iteration) <= 0:
            continue
        spans, starts = None, {}
        if full is not None and record.get("id") in by_id:
            its = _iterations_of(by_id[record["id"]], end_s if end_s > 0 else math.inf)
            spans = _union([(it.start_s, it.end_s) for it in its])
            for rank in sorted({it.rank for it in its}):
                starts[rank] = np.sort([it.start_s for it in its if it.rank == rank])
        candidates.append(_Candidate(record, float(iteration), spans, starts))
    return [_link_one(periodicity_result, p, candidates, o)
            for p in range(len(periodicity_result.patterns))]


def _lag(instance_starts: np.ndarray, starts: Mapping[int, np.ndarray]) -> float:
    """The median over instances of the median over ranks of the time from the rank's
    iteration start nearest the instance's start to the instance's start."""
    per_rank = []
    for times in starts.values():
        after = np.clip(np.searchsorted(times, instance_starts), 0, times.size - 1)
        before = np.clip(after - 1, 0, times.size - 1)
        near = np.where(np.abs(times[before] - instance_starts)
                        <= np.abs(times[after] - instance_starts), times[before], times[after])
        per_rank.append(instance_starts - near)
    return float(np.median(np.median(np.array(per_rank), axis=0)))


def _link_one(result: PeriodicityResult, index: int, candidates: Sequence[_Candidate],
              o: LinkOptions) -> PatternLoop:
    pattern = result.patterns[index]
    instances = pattern_spans(result, index)
    length = float(np.sum(instances[:, 1] - instances[:, 0]))
    period = float(pattern.period_s)
    scored: list[tuple[float, _Candidate, float, float, float | None]] = []
    for c in candidates:
        found = _multiple(period, c.iteration_s, o.tolerance)
        if found is None:
            continue
        multiple, error = found
        overlap = None
        if c.spans is not None:
            overlap = _inside(instances, c.spans) / length if length > 0 else 0.0
            if overlap < o.min_overlap:
                continue
        score = (1.0 if overlap is None else overlap) * (1 - error) / max(multiple,
                                                                          1 / multiple)
        scored.append((score, c, multiple, error, overlap))
    base = {"pattern": index, "period_s": period, "n_instances": pattern.n_instances}
    if not scored:
        nearest = min(candidates, key=lambda c: abs(math.log(period / c.iteration_s)),
                      default=None)
        return PatternLoop(**base, loop=None,
                           nearest=None if nearest is None else int(nearest.record["id"]),
                           iteration_time_s=None if nearest is None else nearest.iteration_s)
    scored.sort(key=lambda s: -s[0])
    score, best, multiple, error, overlap = scored[0]
    record = best.record
    lag = _lag(instances[:, 0], best.starts) if best.starts else None
    outer, inner, names = loop_sites(record)
    return PatternLoop(
        **base, loop=int(record["id"]),
        iterations=float(record.get("iterations_per_outer", record.get("iterations", 0))),
        iterations_total=int(record.get("iterations_total") or 0),
        iteration_time_s=best.iteration_s, multiple=multiple, period_error=error,
        overlap=overlap, score=score, lag_s=lag, sites=tuple(outer), mpi_sites=tuple(inner),
        calls=tuple(names), others=tuple(int(s[1].record["id"]) for s in scored[1:]))
