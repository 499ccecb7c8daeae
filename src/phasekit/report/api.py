"""``phasekit report``: one self-contained HTML page of any results (the public door to
:mod:`phasekit.report`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from phasekit.arguments import PathLike
from phasekit.errors import InputError, PhasekitError, PhasekitWarning
from phasekit.report import ReportItem

if TYPE_CHECKING:
    from phasekit.results import Result

__all__ = ["ReportItem", "load_result", "report", "write_report"]


def load_result(path: PathLike) -> ReportItem:
    """A result file as a report item: a JSON object with a ``"kind"``, as a verb saves it
    (a campaign may be its ``.jsonl`` log). A kind without a view of its own warns
    (:class:`~phasekit.errors.PhasekitWarning`) and is shown as tables of its values.

    Parameters
    ----------
    path
        The file; InputError naming it when it holds no result.
    """
    from phasekit.io.inputs import input_file, read_json

    path = Path(path)
    input_file(path, "a phasekit result (JSON)")
    if path.name.lower().endswith(".jsonl"):
        from phasekit.campaign import read_campaign

        try:
            return ReportItem(str(path), read_campaign(path).to_dict())
        except PhasekitError as exc:
            raise InputError(f"not a campaign log: {exc}", path=str(path)) from None
    data = read_json(path, "a phasekit result (JSON)")
    if not isinstance(data, dict):
        raise InputError(f"a JSON {type(data).__name__}, not an object; expected a phasekit "
                         "result (an object with a \"kind\")", path=str(path))
    if not isinstance(data.get("kind"), str) or not data["kind"]:
        raise InputError("no \"kind\": expected a phasekit result, as written by a verb's -o "
                         "(e.g. phasekit analyze -o RESULT.json)", path=str(path))
    from phasekit.report.kinds import RENDERERS

    if data["kind"] not in RENDERERS:
        warnings.warn(f"{path}: no view for results of kind {data['kind']!r}; the report shows "
                      "its values as tables", PhasekitWarning, stacklevel=2)
    return ReportItem(str(path), data)


def write_report(path: PathLike, items: Sequence[ReportItem], *,
                 title: str = "phasekit report",
                 progress: Callable[[str, float], None] | None = None) -> Path:
    """Write the HTML report of ``items`` to ``path`` atomically; returns the path.

    Parameters
    ----------
    path
        The page to write.
    items
        The results, each with the name of where it came from (:class:`ReportItem`).
    title
        The page's title.
    progress
        Called as ``progress(stage, fraction)`` as each result is drawn.
    """
    from phasekit.report import write_report as write_page

    return write_page(path, items, title=title, progress=progress)


def report(results: Sequence[PathLike | ReportItem | Result], output: PathLike = "report.html",
           *, title: str = "phasekit report",
           progress: Callable[[str, float], None] | None = None) -> Path:
    """Write one self-contained HTML report of results: tables and figures per result, by
    its kind (``phasekit report``). Figures are inline SVG, there is no script and nothing
    to fetch; strings from the results are escaped.

    Parameters
    ----------
    results
        Result files (:func:`load_result`), report items, or results
        (:class:`~phasekit.results.Result`, named by their kind).
    output
        The page to write.
    title
        The page's title.
    progress
        Called as ``progress(stage, fraction)`` as each result is drawn.

    Returns
    -------
    Path
        ``output``.
    """
    from phasekit.results import Result

    items = [entry if isinstance(entry, ReportItem)
             else ReportItem(entry.KIND, entry.saved_dict()) if isinstance(entry, Result)
             else load_result(entry) for entry in results]
    return write_report(output, items, title=title, progress=progress)
