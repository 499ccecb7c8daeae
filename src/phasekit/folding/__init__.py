"""Folding: how counters evolve within one iteration of a loop or one instance of a periodic
pattern, averaged over many (the BSC Folding tool's idea, :mod:`.fold`)."""

from phasekit.folding.fold import (
    FoldedCurve,
    FoldedResult,
    FoldOptions,
    fold,
    fold_loop,
    fold_pattern,
)

__all__ = ["FoldOptions", "FoldedCurve", "FoldedResult", "fold", "fold_loop", "fold_pattern"]
