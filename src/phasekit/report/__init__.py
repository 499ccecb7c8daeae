"""The HTML report: one self-contained page showing whatever results it is given.

:func:`build_report` takes results as they are stored (their JSON, as dicts, with the name of
the file each came from) and returns the page: a short header (how many results, when, the
phasekit version), a summary that leads with the answers (each result's headline, the line the
command line prints first, beside its title (after it in a narrow window), which links to its
section and names its file on hover), and one section per result, named by what it is, its node
or trace and its file, drawn by the renderer of its ``"kind"``
(:data:`phasekit.report.kinds.RENDERERS`); a kind without one, or a result its renderer cannot
read, is shown generically (its values and JSON), never an error. In a window 1240 px wide or
more a section sets its figures beside its words (:func:`phasekit.report.html.beside`);
narrower, under them, in a column of 1100 px at most. Figures are inline SVG, the style sheet
is inline, there is no script: the file is viewed without network access. Every string from a
result is escaped.

The report reads no file (the CLI does, :mod:`phasekit.cli.report`) and writes none
(:func:`write_report` writes atomically).
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.report.html import Safe, Section, join, note, page, tag

if TYPE_CHECKING:
    from phasekit.report.svg import FigureMaker

__all__ = ["ReportItem", "build_report", "write_report"]

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReportItem:
    """One result for the report: its JSON and where it came from (a file name)."""

    source: str
    data: Mapping[str, Any]

    @property
    def kind(self) -> str:
        kind = self.data.get("kind")
        return kind if isinstance(kind, str) else "unknown"


def _anchor(index: int, kind: str) -> str:
    return f"r{index}-" + (re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-") or "result")


def _section(index: int, item: ReportItem, maker: FigureMaker) -> Section:
    from phasekit.report.kinds import RENDERERS, generic, title_of

    kind = item.kind
    renderer = RENDERERS.get(kind)
    body: Safe
    if renderer is None:
        body = join([note(f"No dedicated view for this kind of result ({kind}): its values "
                          "follow."), generic(item.data, maker)])
    else:
        try:
            body = renderer(item.data, maker)
        except Exception as exc:  # a malformed result: shown generically, the report goes on
            _LOG.warning("report: %s: cannot show as %s: %s: %s", item.source, kind,
                         type(exc).__name__, exc)
            body = join([note(f"This {kind} result could not be shown as such "
                              f"({type(exc).__name__}: {exc}); its values follow.", "fail"),
                         generic(item.data, maker)])
    return Section(anchor=_anchor(index, kind),
                   title=f"{title_of(kind, item.data)} ({_file_name(item.source)})",
                   source=item.source, kind=kind, body=body, headline=_headline(item))


def _file_name(source: str) -> str:
    return Path(source).name or source


def _headline(item: ReportItem) -> str:
    """The result's one line in plain words (its presentation's headline), or "" when the
    result cannot be read as its kind."""
    from phasekit.results import REGISTRY, from_data

    if item.kind not in REGISTRY:
        return ""
    try:
        return str(from_data(dict(item.data), source=item.source).present().headline)
    except Exception:  # shown generically in its section, which says why
        return ""


def build_report(items: Sequence[ReportItem], *, title: str = "phasekit report",
                 now: _dt.datetime | None = None,
                 progress: Callable[[str, float], None] | None = None) -> str:
    """The HTML page of ``items`` (module docstring); ``now`` for the header (default: the
    current local time); ``progress(stage, fraction)`` is told of each result drawn."""
    from phasekit.report.svg import FigureMaker
    from phasekit.version import version

    maker = FigureMaker()
    sections = []
    for i, item in enumerate(items, start=1):
        if progress is not None:
            progress(f"{item.kind} ({i}/{len(items)})", (i - 1) / max(1, len(items)))
        sections.append(_section(i, item, maker))
    when = (now or _dt.datetime.now().astimezone()).isoformat(timespec="seconds")
    header = join([tag("p", f"{len(sections)} result{'s' if len(sections) != 1 else ''}, "
                            f"generated {when} by phasekit {version()}", class_="meta"),
                   "" if sections else note("No result given.")])
    return page(title, header, sections,
                footer=f"phasekit {version()}: a self-contained page (no script, no "
                       "network); figures drawn with matplotlib.")


def write_report(path: str | os.PathLike[str], items: Sequence[ReportItem], **options: Any
                 ) -> Path:
    """Write the report of ``items`` to ``path`` atomically; returns the path."""
    from phasekit.io.atomic import atomic_write_text

    target = Path(path)
    atomic_write_text(target, build_report(items, **options))
    return target
