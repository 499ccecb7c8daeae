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


class _Renderer:
    def __init__(self, reduction: Reduction) -> None:
        self.reduction = reduction
        self.out: list[Row] = []

    def functions(self, item: Item) -> tuple[_Node, ...]:
        """The function frames above ``item``: a call's callers, a block's common ones."""
        if isinstance(item, CallItem):
            frames = self.reduction.signatures[item.signature].frames
            return tuple((f, frames[j - 1][1] if j else "") for j, (f, _) in enumerate(frames))
        chains = [self.functions(child) for child in item.body]
        common: list[_Node] = []
        for level in zip(*chains, strict=False):
            if any(node != level[0] for node in level):
                break
            common.append(level[0])
        return tuple(common)

    def render(self, items: Sequence[Item], done: int, depth: int) -> None:
        chains = [self.functions(item) for item in items]
        i = 0
        while i < len(items):
            if len(chains[i]) > done:
                node = chains[i][done]
                j = i + 1
                while j < len(items) and len(chains[j]) > done and chains[j][done] == node:
                    j += 1
                self.out.append(Row(*_split_site(node[1]), depth, function_text(node[0])))
                self.render(items[i:j], done + 1, depth + 1)
                i = j
                continue
            self.item(items[i], done, depth)
            i += 1

    def item(self, item: Item, done: int, depth: int) -> None:
        if isinstance(item, CallItem):
            signature = self.reduction.signatures[item.signature]
            stats = call_stats(self.reduction, item.entries)
            self.out.append(Row(*_split_site(signature.site), depth, signature.call, *stats))
        elif isinstance(item, LoopItem):
            loop = item.loop
            self.out.append(Row("", "", depth, f"FOR 1 TO {format_count(loop.iterations_per_outer)}"
                                               f" [id={loop.id}]"))
            self.render(item.body, done, depth + 1)
            self.out.append(Row("", "", depth, "END LOOP"))
        else:
            assert isinstance(item, IfItem)
            self.out.append(Row("", "", depth, f"IF rank in {format_ranks(item.ranks)}"))
            self.render(item.body, done, depth + 1)


def rows(reduction: Reduction, body: Sequence[Item]) -> list[Row]:
    """The pseudocode table of a program body (module docstring)."""
    renderer = _Renderer(reduction)
    renderer.render(body, 0, 0)
    return renderer.out
