"""Inter-rank reduction (Martínez Vera, "Inter-rank reduction"): one body per loop for all ranks.

Under the SPMD assumption ranks run the same code and differ only where the code branches on
the rank. For each loop body (and the program's top level) we

1. order, per rank, its calls and sub-loops by when they first occur on that rank;
2. merge the per-rank orders: ranks with the same order form a group, and the groups are
   merged one by one along their longest common subsequence; what two groups share becomes
   one item made by the union of their ranks, what only one has keeps its ranks. Where two
   groups have different items at the same place (rank 0 receives while rank 1 sends), no
   timestamp orders them; we put first the item written earlier in the source (its call
   path's file:line, outermost first), the order the code most likely has;
3. arrange consecutive items made by the same ranks, when those are not all the body's ranks,
   into conditional blocks ``IF rank in [...]``.

A call two groups order differently (ping-pong: rank 0 sends then receives, rank 1 receives
then sends) appears twice, once per block, which is what the code does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from phasekit.structure.loops import InferredLoop
from phasekit.structure.reduce import Reduction

__all__ = ["CallItem", "IfItem", "Item", "LoopItem", "arrange"]


@dataclass(eq=False)
class CallItem:
    """One MPI call (signature) in a body, made by ``ranks``; ``entries``: its reduced
    entries on those ranks."""

    signature: int
    ranks: tuple[int, ...]
    entries: np.ndarray


@dataclass(eq=False)
class LoopItem:
    loop: InferredLoop
    ranks: tuple[int, ...]
    body: list[Item] = field(default_factory=list)


@dataclass(eq=False)
class IfItem:
    ranks: tuple[int, ...]
    body: list[Item] = field(default_factory=list)


Item = CallItem | LoopItem | IfItem
_Key = tuple[str, int]


def _source_key(reduction: Reduction, entries: np.ndarray) -> tuple:
    return min(reduction.signatures[int(s)].source_key()
               for s in np.unique(reduction.signature[entries]))


def _merge_pair(merged: list[tuple[_Key, frozenset[int]]], ranks: frozenset[int],
                seq: list[_Key], source: dict[_Key, tuple]
                ) -> list[tuple[_Key, frozenset[int]]]:
    """Merge one group's order ``seq`` (made by ``ranks``) into ``merged`` along their
    longest common subsequence; runs only one side has go in source order."""
    a = [k for k, _ in merged]
    n, m = len(a), len(seq)
    lcs = [[0] * (m + 1) for _ in range(n + 1)]  # lcs[i][j]: of a[i:] and seq[j:]
    for i in range(n - 1, -1, -1):
        row, below = lcs[i], lcs[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == seq[j] else max(below[j], row[j + 1])
    out: list[tuple[_Key, frozenset[int]]] = []
    only_a: list[tuple[_Key, frozenset[int]]] = []
    only_b: list[tuple[_Key, frozenset[int]]] = []

    def flush() -> None:
        for run in sorted((run for run in (only_a, only_b) if run),
                          key=lambda run: source[run[0][0]]):
            out.extend(run)
        only_a.clear()
        only_b.clear()

    i = j = 0
    while i < n or j < m:
        if i < n and j < m and a[i] == seq[j] and lcs[i][j] == lcs[i + 1][j + 1] + 1:
            flush()
            out.append((a[i], merged[i][1] | ranks))
            i += 1
            j += 1
        elif j >= m or (i < n and lcs[i + 1][j] >= lcs[i][j + 1]):
            only_a.append(merged[i])
            i += 1
        else:
            only_b.append((seq[j], ranks))
            j += 1
    flush()
    return out


def _merge(groups: Sequence[tuple[frozenset[int], list[_Key]]], source: dict[_Key, tuple]
           ) -> list[tuple[_Key, frozenset[int]]]:
    """The per-group orders merged into one list of (item, ranks making it)."""
    merged: list[tuple[_Key, frozenset[int]]] = [(k, groups[0][0]) for k in groups[0][1]]
    for ranks, seq in groups[1:]:
        merged = _merge_pair(merged, ranks, seq, source)
    return merged


def arrange(reduction: Reduction, own: np.ndarray, children: Sequence[InferredLoop],
            body_ranks: tuple[int, ...]) -> list[Item]:
    """The body made of the entries ``own`` and the loops ``children``, merged over ranks
    and arranged in conditional blocks (module docstring). Sub-loop bodies are arranged
    recursively."""
    first: dict[_Key, dict[int, float]] = {}
    source: dict[_Key, tuple] = {}
    for e in own:
        key = ("call", int(reduction.signature[e]))
        first.setdefault(key, {})[int(reduction.rank[e])] = float(reduction.first[e])
    for k, child in enumerate(children):
        key = ("loop", k)
        entries = child.all_entries()
        for r in np.unique(reduction.rank[entries]):
            on = entries[reduction.rank[entries] == r]
            first.setdefault(key, {})[int(r)] = float(reduction.first[on].min())
        source[key] = _source_key(reduction, entries)
    for key in first:
        if key[0] == "call":
            source[key] = reduction.signatures[key[1]].source_key()
    per_rank: dict[tuple[_Key, ...], set[int]] = {}
    for r in body_ranks:
        seq = sorted((k for k in first if r in first[k]), key=lambda k: first[k][r])
        if seq:
            per_rank.setdefault(tuple(seq), set()).add(r)
    groups = sorted(((frozenset(ranks), list(seq)) for seq, ranks in per_rank.items()),
                    key=lambda g: min(g[0]))
    merged = _merge(groups, source) if groups else []
    items: list[Item] = []
    for key, ranks in merged:
        rank_tuple = tuple(sorted(ranks))
        if key[0] == "call":
            mine = own[(reduction.signature[own] == key[1])
                       & np.isin(reduction.rank[own], rank_tuple)]
            item: Item = CallItem(key[1], rank_tuple, mine)
        else:
            child = children[key[1]]
            item = LoopItem(child, rank_tuple,
                            arrange(reduction, child.entries, child.children, rank_tuple))
        if rank_tuple != tuple(body_ranks):
            if items and isinstance(items[-1], IfItem) and items[-1].ranks == rank_tuple:
                items[-1].body.append(item)
                continue
            item = IfItem(rank_tuple, [item])
        items.append(item)
    return items
