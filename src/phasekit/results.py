"""Helpers shared by result dataclasses: versioned JSON with NumPy arrays as lists; the
record of an input that failed among several (:class:`NodeError`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from phasekit.errors import InputError


def plain(value: Any) -> Any:
    """A JSON-ready copy: arrays to lists, NumPy scalars to Python, NaN to None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        number = float(value)
        return None if not np.isfinite(number) else number
    if isinstance(value, np.bool_):
        return bool(value)
    return value


#: The longest ``repr`` of a result (issue 19: a short repr naming its kind and headline).
MAX_REPR = 300


def short_repr(result: object, *parts: object) -> str:
    """``Kind(part, part, ...)``: the class name and the parts given (None and "" left out),
    cut to :data:`MAX_REPR` characters; for the ``__repr__`` of a result, whose dataclass
    repr would print every array (a PeriodicityResult's ran to 25 000 characters)."""
    text = f"{type(result).__name__}({', '.join(str(p) for p in parts if p not in (None, ''))})"
    return text if len(text) <= MAX_REPR else text[:MAX_REPR - 4] + "...)"


def pct(value: float | None, scale: float = 1.0) -> str:
    """``12.3 %`` (``value`` x ``scale``), or ``n/a`` for None or NaN."""
    return "n/a" if value is None or not math.isfinite(value) else f"{value * scale:.1f} %"


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(plain(data), indent=2) + "\n"


def check_version(data: dict[str, Any], kind: str, supported: int, source: str | None = None) -> None:
    """Raise InputError unless ``data`` is a result of ``kind`` in a version we read."""
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise InputError(f"expected a phasekit {kind} result (a JSON object with \"kind\": \"{kind}\")",
                         path=source)
    version = data.get("version")
    if not isinstance(version, int) or version > supported:
        raise InputError(f"{kind} result version {version!r} is not supported (this phasekit reads up "
                         f"to version {supported})", path=source)


def json_close(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """Whether two JSON values are equal, numbers to the relative tolerance ``rel``: the same
    analysis on all cores and on one thread sums in different orders (numba's parallel
    reductions), so last digits may differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_close(a[k], b[k], rel) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_close(x, y, rel) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)
    return a == b


@dataclass(frozen=True)
class NodeError:
    """A node whose file could not be analyzed: the one-line message and its exit code."""

    file: str
    message: str
    exit_code: int

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "message": self.message, "exit_code": self.exit_code}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> NodeError:
        return NodeError(file=str(data["file"]), message=str(data["message"]),
                         exit_code=int(data["exit_code"]))
