"""Pseudocode construction (Martínez Vera, "Pseudocode construction"): the console table.

Rows of FILE, LINE, PSEUDOCODE, E(TIME), E(SIZE), E(IPC) as in the paper's example output:
``FOR 1 TO N [id=k]`` ... ``END LOOP`` for loops, ``IF rank in [...]`` for conditional
blocks, and calls with the file and line they are made at. Call paths are factored as the
paper describes: the frames every call of a block shares are written once above the block
("extracting common call path levels from code blocks"), and consecutive calls sharing more
frames share those rows too ("removing contiguous repetitive information"). A function row
shows where its caller calls it; a call row its own line; E(TIME) is the mean time in the
call, E(SIZE) the mean bytes it moves, E(IPC) the mean IPC of the computation burst before it.

Hoisting the common frames above a loop writes the loop inside the deepest function all its
calls go through; the trace cannot tell whether the loop is there or one level up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from phasekit.results import format_count
from phasekit.structure.ranks import CallItem, IfItem, Item, LoopItem
from phasekit.structure.reduce import Reduction

__all__ = ["Row", "call_stats", "format_count", "format_ranks", "format_size", "format_time",
           "function_text", "rows"]

_Node = tuple[str, str]


@dataclass(frozen=True)
class Row:
    """One line of the pseudocode table."""

    file: str
    line: str
    depth: int
    text: str
    time_s: float = float("nan")
    size_bytes: float = float("nan")
    ipc: float = float("nan")


def call_stats(reduction: Reduction, entries: np.ndarray) -> tuple[float, float, float]:
    """E(TIME) in s, E(SIZE) in bytes, E(IPC) over the calls of ``entries``."""
    count = float(reduction.it[entries].sum())
    n_ipc = float(reduction.n_ipc[entries].sum())
    return (float(reduction.sum_duration[entries].sum()) / count if count else float("nan"),
            float(reduction.sum_bytes[entries].sum()) / count if count else float("nan"),
            float(reduction.sum_ipc[entries].sum()) / n_ipc if n_ipc else float("nan"))


def format_ranks(ranks: Sequence[int]) -> str:
    """``[0, 2, 4-7]``: runs of consecutive ranks as ranges."""
    parts: list[str] = []
    ordered = sorted(ranks)
    start = prev = ordered[0] if ordered else 0
    for r in [*ordered[1:], None]:
        if r is not None and r == prev + 1:
            prev = r
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if r is not None:
            start = prev = r
    return "[" + ", ".join(parts) + "]" if ordered else "[]"


def format_time(seconds: float) -> str:
    """Seconds in the pseudocode's units (s, ms, us, ns)."""
    if not np.isfinite(seconds):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.2f}{unit}"
    return f"{seconds * 1e9:.0f}ns"


def format_size(size: float) -> str:
    """Bytes in the pseudocode's units (B, KB, MB, GB)."""
    if not np.isfinite(size) or size == 0:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f}{unit}"
    return f"{size:.1f}B"


#: A name that ends in a parameter list, maybe qualified: ``int main(int, char**)``,
#: ``A::f(int) const &`` (a demangled C++ name).
_PARAMETERS_RE = re.compile(r"\)(?:\s*(?:const|volatile|noexcept|&&|&))*\s*$")


def function_text(name: str) -> str:
    """A function's row: ``name()``, or ``name`` when it already has its parameter list."""
    return name if _PARAMETERS_RE.search(name) else f"{name}()"


def _split_site(site: str) -> tuple[str, str]:
    file, _, line = site.rpartition(":")
    return (file, line) if line.isdigit() else (site, "")


#: Point-to-point calls: a run of them made by different ranks at different lines is a
#: neighbour exchange (each rank talks to the neighbours it has).
POINT_TO_POINT = frozenset({
    "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Sendrecv", "MPI_Sendrecv_replace",
    "MPI_Ssend", "MPI_Issend", "MPI_Bsend", "MPI_Rsend", "MPI_Wait", "MPI_Test", "MPI_Probe",
    "MPI_Iprobe"})
#: The fewest consecutive conditional blocks making calls of one MPI function that the
#: compact pseudocode writes as one row (our choice: two still read well as they are).
MIN_GROUP = 3


class _Renderer:
    def __init__(self, reduction: Reduction, compact: bool) -> None:
        self.reduction = reduction
        self.compact = compact
        self.out: list[Row] = []

    def functions(self, item: Item) -> tuple[_Node, ...] | None:
        """The function frames above ``item``: a call's callers, a block's common ones; None
        for a call the trace gives no call path (it can sit in any function)."""
        if isinstance(item, CallItem):
            frames = self.reduction.signatures[item.signature].frames
            if not frames:
                return None
            return tuple((f, frames[j - 1][1] if j else "") for j, (f, _) in enumerate(frames))
        chains = [chain for child in item.body if (chain := self.functions(child)) is not None]
        if not chains:
            return None
        common: list[_Node] = []
        for level in zip(*chains, strict=False):
            if any(node != level[0] for node in level):
                break
            common.append(level[0])
        return tuple(common)

    def render(self, items: Sequence[Item], done: int, depth: int) -> None:
        chains = [self.functions(item) for item in items]

        def goes_through(j: int, node: _Node) -> bool:
            chain = chains[j]
            return chain is None or (len(chain) > done and chain[done] == node)

        i = 0
        while i < len(items):
            chain = chains[i]
            if chain is not None and len(chain) > done:
                node = chain[done]
                j = i + 1
                while j < len(items) and goes_through(j, node):
                    j += 1
                while j > i + 1 and chains[j - 1] is None:  # trailing calls without a path
                    j -= 1                                  # stay outside the function
                self.out.append(Row(*_split_site(node[1]), depth, function_text(node[0])))
                self.render(items[i:j], done + 1, depth + 1)
                i = j
                continue
            j = self._group_end(items, i) if self.compact else i + 1
            if j - i >= MIN_GROUP:
                self.group(items[i:j], depth)
            else:
                self.item(items[i], done, depth)
                j = i + 1
            i = j

    def _calls_of_block(self, item: Item) -> list[CallItem] | None:
        """The calls of a conditional block that makes only calls of one MPI function, else
        None."""
        if not isinstance(item, IfItem) or not item.body \
                or not all(isinstance(child, CallItem) for child in item.body):
            return None
        calls = [child for child in item.body if isinstance(child, CallItem)]
        names = {self.reduction.signatures[c.signature].call for c in calls}
        return calls if len(names) == 1 else None

    def _group_end(self, items: Sequence[Item], i: int) -> int:
        """The end of the run of conditional blocks from ``i`` that make only calls of the
        same MPI function."""
        first = self._calls_of_block(items[i])
        if first is None:
            return i + 1
        name = self.reduction.signatures[first[0].signature].call
        j = i + 1
        while j < len(items) and (calls := self._calls_of_block(items[j])) is not None \
                and self.reduction.signatures[calls[0].signature].call == name:
            j += 1
        return j

    def group(self, items: Sequence[Item], depth: int) -> None:
        """One row for a run of conditional blocks making calls of one MPI function."""
        calls = [call for item in items for call in self._calls_of_block(item) or []]
        signatures = [self.reduction.signatures[c.signature] for c in calls]
        sites = [_split_site(s.site) for s in signatures]
        files = {file for file, _ in sites}
        lines = [int(line) for _, line in sites if line]
        n_sites = len(set(sites))
        name = signatures[0].call
        ranks = sorted({r for c in calls for r in c.ranks})
        how = "by neighbour" if name in POINT_TO_POINT else "by rank"
        where = (f", lines {min(lines)}-{max(lines)}" if len(files) == 1 and lines
                 else f", {len(files)} files" if len(files) > 1 else "")
        text = f"{name} at {n_sites} sites{where}: on ranks {format_ranks(ranks)}, {how}"
        entries = np.concatenate([c.entries for c in calls])
        file = sites[0][0] if len(files) == 1 else ""
        line = str(min(lines)) if len(files) == 1 and lines else ""
        self.out.append(Row(file, line, depth, text, *call_stats(self.reduction, entries)))

    def item(self, item: Item, done: int, depth: int) -> None:
        if isinstance(item, CallItem):
            signature = self.reduction.signatures[item.signature]
            stats = call_stats(self.reduction, item.entries)
            self.out.append(Row(*_split_site(signature.site), depth, signature.call, *stats))
        elif isinstance(item, LoopItem):
            loop = item.loop
            trips = loop.trip_counts()
            count = (f"{trips.min()}-{trips.max()}" if trips.min() != trips.max()
                     else format_count(loop.iterations_per_outer))
            self.out.append(Row("", "", depth, f"FOR 1 TO {count} [id={loop.id}]"))
            self.render(item.body, done, depth + 1)
            self.out.append(Row("", "", depth, "END LOOP"))
        else:
            assert isinstance(item, IfItem)
            self.out.append(Row("", "", depth, f"IF rank in {format_ranks(item.ranks)}"))
            self.render(item.body, done, depth + 1)


def rows(reduction: Reduction, body: Sequence[Item], *, compact: bool = False) -> list[Row]:
    """The pseudocode table of a program body (module docstring); ``compact``: a run of at
    least :data:`MIN_GROUP` conditional blocks that make only calls of the same MPI function
    (a neighbour exchange written once per direction) as one row."""
    renderer = _Renderer(reduction, compact)
    renderer.render(body, 0, 0)
    return renderer.out
