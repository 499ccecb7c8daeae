"""Training, test and validation rows: a time-ordered split (the last rows in time) or a
seeded random one (:data:`SPLITS`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from phasekit.errors import UsageError
from phasekit.signature.powermodels.features import is_time_column

__all__ = ["SPLITS", "split_rows", "time_order", "validation_rows"]

SPLITS = ("time", "random")


def time_order(table: pd.DataFrame) -> tuple[np.ndarray, str | None]:
    """Row indices in time order and the column that gave it: the first time-like column
    (:func:`~phasekit.signature.powermodels.features.is_time_column`: time, timestamp_s, t,
    sample, index...) that is all numbers or all dates, else
    the row order (None). Ties keep the row order."""
    for name in table.columns:
        if not is_time_column(str(name)):
            continue
        column = table[name]
        values = pd.to_numeric(column, errors="coerce")
        if values.isna().any():
            try:
                values = pd.to_datetime(column, errors="coerce", utc=True)
            except (TypeError, ValueError):
                continue
            if values.isna().any():
                continue
        return np.argsort(values.to_numpy(), kind="stable"), str(name)
    return np.arange(len(table)), None


def split_rows(n: int, test_fraction: float, seed: int, *, split: str = "random",
               order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Train and test row indices; at least one training row. ``split="random"``: a seeded
    random share, both sorted; ``"time"``: the test rows are the last ``test_fraction`` of
    ``order`` (the time order, default the row order) and the training rows are given in
    that order (the order :func:`fit_ge` validates in)."""
    if not 0 <= test_fraction < 1:
        raise UsageError("expected 0 <= fraction < 1", parameter="test_fraction",
                         value=test_fraction)
    if split not in SPLITS:
        raise UsageError(f"expected one of {', '.join(SPLITS)}", parameter="split",
                         value=split)
    n_test = min(round(test_fraction * n), n - 1)
    if split == "time":
        order = np.arange(n) if order is None else np.asarray(order)
        return order[: n - n_test], np.sort(order[n - n_test:])
    order = np.random.default_rng([seed, 3]).permutation(n)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def validation_rows(n: int, validation: float, split: str, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Evolution and validation rows: the last ``validation`` share (``split="time"``) or a
    random one; no validation rows when either part would have fewer than 10 rows."""
    if split not in SPLITS:
        raise UsageError(f"expected one of {', '.join(SPLITS)}", parameter="split",
                         value=split)
    if not 0 <= validation < 1:
        raise UsageError("expected 0 <= share < 1", parameter="validation",
                         value=validation)
    n_val = round(validation * n)
    if n_val < 10 or n - n_val < 10:
        return np.arange(n), np.arange(0)
    if split == "time":
        return np.arange(n - n_val), np.arange(n - n_val, n)
    order = rng.permutation(n)
    return np.sort(order[n_val:]), np.sort(order[:n_val])
