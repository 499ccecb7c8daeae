"""The result contract and helpers shared by result dataclasses.

Every analysis returns a result that derives from :class:`Result`: a frozen dataclass with a
``kind`` (snake_case, registered in :data:`REGISTRY`), a ``version``, ``to_dict`` /
``from_dict`` (versioned JSON, NumPy arrays as lists), ``save(path)`` (atomic) and
:func:`load`; a short ``repr``; ``summary()`` (a pandas DataFrame: the table a user would
look at first), ``plot(ax=None)`` (a matplotlib Figure) and ``_repr_html_`` (the summary and
the figure inline, for Jupyter). Also the record of an input that failed among several
(:class:`NodeError`)."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, UsageError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

#: Every saved result kind: ``kind`` -> (module, class). :func:`load`, ``phasekit.read`` and
#: the report look kinds up here; a result class names its kind in ``KIND``.
REGISTRY: dict[str, tuple[str, str]] = {
    "periodicity": ("phasekit.periodicity.analyze", "PeriodicityResult"),
    "multinode_analysis": ("phasekit.periodicity.nodes", "MultiNodeResult"),
    "phases": ("phasekit.phases.analyze", "PhaseResult"),
    "multinode_phases": ("phasekit.many", "MultiPhaseResult"),
    "multi_structure": ("phasekit.many", "MultiStructureResult"),
    "structure": ("phasekit.structure", "StructureResult"),
    "mpi-structure-result": ("phasekit.structure", "StructureResult"),  # before version 2
    "energy_fit": ("phasekit.energy.fit", "EnergyFitResult"),
    "energy_choice": ("phasekit.energy.choose", "ChoiceResult"),
    "energy_suggest": ("phasekit.energy.suggest", "SuggestResult"),
    "fingerprints": ("phasekit.energy.fingerprint", "FingerprintResult"),
    "phase_division": ("phasekit.energy.phasediv", "PhaseDivision"),
    "schedule": ("phasekit.schedule.simulate", "ScheduleResult"),
    "batch": ("phasekit.schedule.batch", "Batch"),
    "signature": ("phasekit.signature.paths", "Signature"),
    "signature_estimate": ("phasekit.signature.reconstruct", "SignatureEstimate"),
    "power_model_fit": ("phasekit.signature.powermodels.fit", "PowerModelFit"),
    "power_model_eval": ("phasekit.signature.powermodels.fit", "PowerModelEval"),
    "coalloc_model": ("phasekit.signature.coalloc", "CoallocModel"),
    "efficiency": ("phasekit.energy.efficiency", "EfficiencyTable"),
    "folded": ("phasekit.folding.fold", "FoldedResult"),
}


def result_class(kind: str) -> type:
    """The class registered for ``kind`` (imported on first use); UsageError otherwise."""
    try:
        module, name = REGISTRY[kind]
    except KeyError:
        raise UsageError(f"unknown result kind {kind!r}; known: {', '.join(sorted(REGISTRY))}"
                         ) from None
    return getattr(import_module(module), name)


def from_data(data: Any, source: str | None = None) -> Any:
    """The result a JSON object holds, by its ``kind``."""
    kind = data.get("kind") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in REGISTRY:
        raise InputError(f"not a phasekit result: expected a JSON object whose \"kind\" is one "
                         f"of {', '.join(sorted(REGISTRY))}", path=source)
    return result_class(kind).from_dict(data, source=source)


def load(path: str | Path) -> Any:
    """Read a saved result (``result.save(path)``, ``phasekit <verb> -o path``).

    Parameters
    ----------
    path
        The result's JSON file.

    Returns
    -------
    Any
        The result, of the class its ``"kind"`` names (:data:`REGISTRY`); an
        :class:`~phasekit.errors.InputError` naming the file when it holds no result.
    """
    from phasekit.io.inputs import read_json

    data = read_json(path, "a phasekit result (JSON)")
    return from_data(data, source=str(path))


class Result:
    """The base of every result (module docstring). Subclasses are dataclasses that set
    ``KIND`` and implement ``to_dict``, ``from_dict``, ``summary`` and ``plot``; ``save`` and
    ``_repr_html_`` come from here."""

    KIND: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def summary(self) -> pd.DataFrame:
        """The table a user looks at first (one row per pattern, phase, loop, choice...)."""
        raise NotImplementedError

    def plot(self, ax: Axes | None = None) -> Figure:
        """The result's figure; on ``ax`` when given (its figure is returned)."""
        raise NotImplementedError

    def present(self, name: str | None = None) -> Presentation:
        """How the result reads (:mod:`phasekit.present`): a headline in plain words, its
        tables and its notes, as the command line, the report and a notebook show it;
        ``name`` names the input (a file) where a table has a column for it. By default the
        short ``repr`` and :meth:`summary`."""
        from phasekit.present import Presentation, frame_view

        return Presentation(repr(self), (frame_view(type(self).__name__, self.summary()),))

    def saved_dict(self) -> dict[str, Any]:
        """The JSON object :meth:`save` writes and ``phasekit <verb> -o`` too (default:
        :meth:`to_dict`; a result whose file also keeps series for its figure says so)."""
        return self.to_dict()

    def save(self, path: str | Path) -> Path:
        """Write the versioned JSON to ``path`` atomically; :func:`load` reads it back."""
        from phasekit.io.atomic import atomic_write_text

        atomic_write_text(path, dumps(self.saved_dict()))
        return Path(path)

    def _repr_html_(self) -> str:
        return result_html(self)


def figure_png(figure: Figure) -> bytes:
    """A figure as PNG bytes (closed afterwards, so notebooks do not draw it twice)."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    finally:
        plt.close(figure)
    return buffer.getvalue()


def result_html(result: Any) -> str:
    """Jupyter's view of a result: its short repr as a title, ``summary()`` as a table and
    ``plot()`` inline; a part that cannot be drawn says why in one line."""
    try:
        title = repr(result)
    except Exception as exc:  # a view must not raise in a notebook
        title = f"{type(result).__name__} (no repr: {exc})"
    parts = [f"<p><b>{html.escape(title)}</b></p>"]
    try:
        parts.append(result.present()._repr_html_())
    except Exception as exc:  # a view must not raise in a notebook
        parts.append(f"<p><i>no summary: {html.escape(str(exc))}</i></p>")
    try:
        png = base64.b64encode(figure_png(result.plot())).decode("ascii")
        parts.append(f'<img src="data:image/png;base64,{png}"/>')
    except Exception as exc:
        parts.append(f"<p><i>no figure: {html.escape(str(exc))}</i></p>")
    return "\n".join(parts)


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


#: The longest ``repr`` of a result (a short repr naming its kind and headline).
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


def format_count(value: float) -> str:
    """Iterations as Martínez Vera prints them: an integer when it is one, else one decimal."""
    return str(round(value)) if abs(value - round(value)) < 0.05 else f"{value:.1f}"


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


def json_number(value: Any) -> float:
    """A JSON value as a float; NaN when it is not a number (a result read from a file may
    hold null or text where a number was)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def json_array(values: Any) -> np.ndarray:
    """A float array from a JSON list (anything not a number as NaN)."""
    if not isinstance(values, list):
        return np.full(0, np.nan)
    return np.array([json_number(v) if not isinstance(v, list) else math.nan for v in values])


def phase_spans(phases: Any) -> list[tuple[float, float, int]]:
    """(start, end, id) of the phase records (``start_s``, ``end_s``, ``id``) whose three are
    numbers."""
    out = []
    for p in phases or []:
        if not isinstance(p, dict):
            continue
        start, end, pid = (json_number(p.get(k)) for k in ("start_s", "end_s", "id"))
        if math.isfinite(start) and math.isfinite(end) and math.isfinite(pid):
            out.append((start, end, int(pid)))
    return out
