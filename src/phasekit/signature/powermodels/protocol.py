"""What every power model shares: the :class:`PowerModel` protocol, the version of stored
models (kind ``"power_model"``) and the error scores (Salinas Hilburg 2020, section 4.2)."""

from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

__all__ = ["MODEL_VERSION", "PowerModel", "errors"]

MODEL_VERSION = 2  # 2: GE models carry output bounds (a version 1 model reads as unbounded)


@runtime_checkable
class PowerModel(Protocol):
    """What the signature pipeline needs from a power model."""

    @property
    def features(self) -> tuple[str, ...]: ...

    def predict(self, X: pd.DataFrame) -> np.ndarray: ...

    def to_dict(self) -> dict[str, Any]: ...


# --- errors and input checks -----------------------------------------------------------------
def errors(predicted: Any, measured: Any) -> dict[str, float]:
    """RMSE and MAE (W) and MPE (mean |error| / |measured|, percent, over non-zero
    measurements) of ``predicted`` against ``measured``; NaN when empty."""
    p = np.asarray(predicted, float)
    m = np.asarray(measured, float)
    if p.size == 0:
        return {"rmse": math.nan, "mae": math.nan, "mpe": math.nan}
    e = p - m
    nonzero = m != 0
    mpe = float(np.mean(np.abs(e[nonzero]) / np.abs(m[nonzero])) * 100) if nonzero.any() \
        else math.nan
    return {"rmse": float(np.sqrt(np.mean(e**2))), "mae": float(np.mean(np.abs(e))),
            "mpe": mpe}
