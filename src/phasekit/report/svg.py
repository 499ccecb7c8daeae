"""Matplotlib figures as inline SVG for the report.

Text stays text (``svg.fonttype`` none: smaller, searchable; matplotlib escapes it, quotes are
escaped here too), the XML prologue, the metadata block and the comments are dropped, and
every ``id`` (with the references to it) gets a prefix unique in the report, so that several
figures in one page do not share clip paths or markers. Each ``<figure>`` carries the narrowest
width at which its smallest text still reads (:data:`~phasekit.report.html.FIT`,
:data:`MIN_TEXT_PX`): where the page sets figures beside their words, they are never drawn
narrower.
"""

from __future__ import annotations

import io
import logging
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from phasekit.report.html import FIT, Safe, esc, note

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FigureMaker"]

_LOG = logging.getLogger(__name__)
_RC = {"svg.fonttype": "none", "svg.hashsalt": "phasekit-report"}
_TAG = re.compile(r"<[^<>]+>")
_TEXT = re.compile(r"(?<=>)[^<>]+(?=<)")
_ID = re.compile(r'(\sid=")([^"]+")')
_HREF = re.compile(r'((?:xlink:)?href="#)([^"]+")')
_URL = re.compile(r"(url\(#)([^)]+\))")
_VIEW_WIDTH = re.compile(r'<svg [^>]*viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ')
_TEXT_SIZE = re.compile(r'<text [^>]*font-size: ?([\d.]+)px')

#: Smallest text of a figure as shown (CSS px) where the page may narrow it (7 px: the
#: browser test's limit, and a little to spare).
MIN_TEXT_PX = 7.2


def narrowest(svg: str) -> int | None:
    """The width (CSS px) at which the smallest text of ``svg`` (its ``<text>`` elements, as
    the browser styles them) is shown at :data:`MIN_TEXT_PX`; None without a viewBox or
    text."""
    width = _VIEW_WIDTH.search(svg)
    sizes = [float(size) for size in _TEXT_SIZE.findall(svg) if float(size) > 0]
    if width is None or not sizes:
        return None
    return math.ceil(float(width.group(1)) * MIN_TEXT_PX / min(sizes))


class FigureMaker:
    """Turns figures into ``<figure>`` markup with ids unique in one report."""

    def __init__(self) -> None:
        self.count = 0

    def _inline(self, svg: str) -> Safe:
        self.count += 1
        prefix = f"f{self.count}-"
        start = svg.find("<svg")
        svg = svg[start:] if start >= 0 else svg
        svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.DOTALL)
        svg = re.sub(r"<!--.*?-->", "", svg, flags=re.DOTALL)  # matplotlib's text, again
        # text as html.escape(quote=True) writes it (matplotlib leaves quotes as they are)
        svg = _TEXT.sub(lambda m: m.group(0).replace('"', "&quot;").replace("'", "&#x27;"),
                        svg)

        seen: dict[str, int] = {}

        def unique(match: re.Match[str]) -> str:
            # matplotlib names an image by a hash of its pixels: two identical images of one
            # figure (the same heatmap for two inputs) share an id that nothing refers to
            name = match.group(2)
            seen[name] = seen.get(name, 0) + 1
            again = f"-{seen[name]}" if seen[name] > 1 else ""
            return match.group(1) + prefix + name[:-1] + again + '"'

        def fix(match: re.Match[str]) -> str:
            text = match.group(0)
            text = _ID.sub(unique, text)
            text = _HREF.sub(lambda m: m.group(1) + prefix + m.group(2), text)
            return _URL.sub(lambda m: m.group(1) + prefix + m.group(2), text)

        svg = _TAG.sub(fix, svg)
        svg = svg.replace("<svg ", '<svg role="img" ', 1)
        return Safe(svg.strip())

    def _wrap(self, svg: Safe, caption: str) -> Safe:
        cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
        fit = narrowest(svg)
        narrowest_width = f' {FIT}="{fit}"' if fit is not None else ""
        return Safe(f'<figure class="fig"{narrowest_width}>{svg}{cap}</figure>')

    def from_figure(self, fig: Figure, caption: str = "") -> Safe:
        """A figure drawn here (on its own canvas)."""
        import matplotlib

        from phasekit.plot.common import literal_text

        buffer = io.StringIO()
        literal_text(fig)
        with matplotlib.rc_context(_RC):
            fig.savefig(buffer, format="svg")
        return self._wrap(self._inline(buffer.getvalue()), caption)

    def safely(self, what: str, make: Callable[[], Safe]) -> Safe:
        """``make()``, or a note saying the figure could not be drawn (never an exception:
        a report shows what it can)."""
        try:
            return make()
        except Exception as exc:  # any bad input data: the report goes on without this figure
            _LOG.warning("report: %s not drawn: %s: %s", what, type(exc).__name__, exc)
            return note(f"{what}: not drawn ({type(exc).__name__}: {exc})", "fail")
