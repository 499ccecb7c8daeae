"""How a result reads: one headline, its tables, its notes, the same everywhere.

A result's :meth:`~phasekit.results.Result.present` returns a :class:`Presentation`: the
headline (one line in plain words: what repeats, how often, where, how sure), the
:class:`View` of each of its tables (cells already written as a person reads them) and the
notes that follow. The command line prints it (as text tables), the HTML report renders it
(as HTML tables) and a notebook shows it: a result is drawn by its own class, once.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["ZERO_RTOL", "Presentation", "View", "frame_view", "listed", "number", "percent",
           "plural", "quantity", "view"]


#: A value within this fraction of its scale is zero to rounding (:func:`number`).
ZERO_RTOL = 1e-9


def number(value: float, scale: float, spec: str = ".4g") -> str:
    """``value`` in format ``spec``, or ``0`` when it is zero to rounding: within
    :data:`ZERO_RTOL` of ``scale``, the magnitude it is read against (the largest parameter
    of a fit, the total of a breakdown). A solver's 3.192e-14 for a parameter at its bound
    prints as 0."""
    if math.isfinite(value) and math.isfinite(scale) and abs(value) <= ZERO_RTOL * abs(scale):
        return "0"
    return format(value, spec)


def quantity(value: float, digits: int = 4) -> str:
    """A measured value as a reader writes it: ``digits`` significant digits, ``1.234`` or
    ``0.00123`` as ``%g`` writes them, but grouped digits from ten thousand on (``14,220``,
    not ``1.422e+04``; below 1e15)."""
    if math.isfinite(value) and 1e4 <= abs(value) < 1e15:
        rounded = round(value, digits - 1 - math.floor(math.log10(abs(value))))
        return f"{rounded:,.0f}"
    return format(value, f".{digits}g")


def plural(count: int, noun: str) -> str:
    """``1 loop``, ``3 loops``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def listed(items: Sequence[str], named: int = 3) -> str:
    """The first ``named`` items, then how many more (``a, b, c and 2 more``)."""
    more = len(items) - named
    return ", ".join(items[:named]) + (f" and {more} more" if more > 0 else "")


def percent(fraction: float | None, digits: int = 2) -> str:
    """A fraction as a percentage (``0.5964`` -> ``59.64%``); ``-`` for None."""
    return "-" if fraction is None else f"{100 * fraction:.{digits}f}%"


@dataclass(frozen=True)
class View:
    """One table of a result as a person reads it: a title, the column headers, the rows
    as text, which columns hold numbers (aligned right) and which may wrap. A ``detail``
    view (the papers' own notation and working figures) is shown on request: the command
    line's ``--detail``, ``Presentation.shown(detail=True)``."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...] = ()
    wrap: tuple[bool, ...] = ()
    detail: bool = False

    def is_numeric(self, column: int) -> bool:
        return self.numeric[column] if column < len(self.numeric) else False

    def wraps(self, column: int) -> bool:
        return self.wrap[column] if column < len(self.wrap) else False

    def to_text(self) -> str:
        """Plain text, columns padded (for logs and ``repr``)."""
        cells = [list(self.headers), *map(list, self.rows)]
        widths = [max(len(row[c]) for row in cells) for c in range(len(self.headers))]
        lines = [self.title]
        for row in cells:
            lines.append("  ".join(cell.rjust(w) if self.is_numeric(c) else cell.ljust(w)
                                   for c, (cell, w) in enumerate(zip(row, widths, strict=True)))
                         .rstrip())
        return "\n".join(lines)

    def _repr_html_(self, max_rows: int = 40) -> str:
        """An HTML table (cells escaped; at most ``max_rows`` rows, the rest counted)."""
        def row(cells: Sequence[str], cell: str) -> str:
            return "<tr>" + "".join(
                f'<{cell} style="text-align:{"right" if self.is_numeric(c) else "left"}">'
                f"{html.escape(str(text))}</{cell}>" for c, text in enumerate(cells)) + "</tr>"

        body = [row(r, "td") for r in self.rows[:max_rows]]
        if len(self.rows) > max_rows:
            body.append(f"<tr><td colspan={len(self.headers)}>... {len(self.rows) - max_rows} "
                        "more rows</td></tr>")
        return (f"<table><caption>{html.escape(self.title)}</caption><thead>"
                f"{row(self.headers, 'th')}</thead><tbody>{''.join(body)}</tbody></table>")


def view(title: str, columns: Mapping[str, str], rows: Sequence[Mapping[str, Any]], *,
         formats: Mapping[str, Callable[[Any], str]] | None = None,
         text: Sequence[str] = ()) -> View:
    """A :class:`View` of ``rows`` (dicts): ``columns`` maps each key to its header;
    ``formats`` writes a key's values (default ``str``); keys in ``text`` are words (aligned
    left, may wrap), the others numbers."""
    formats = formats or {}
    keys = list(columns)
    return View(title, tuple(columns.values()),
                tuple(tuple(formats.get(k, str)(row[k]) for k in keys) for row in rows),
                numeric=tuple(k not in text for k in keys),
                wrap=tuple(k in text for k in keys))


def frame_view(title: str, frame: Any) -> View:
    """A :class:`View` of a DataFrame: numbers to 4 significant digits, missing ones empty."""
    import numpy as np

    def cell(value: Any) -> str:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return ""
        if isinstance(value, float | np.floating):
            return f"{value:.4g}"
        return str(value)

    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    numeric = tuple(is_numeric_dtype(d) and not is_bool_dtype(d) for d in frame.dtypes)
    return View(title, tuple(str(c) for c in frame.columns),
                tuple(tuple(cell(v) for v in row) for row in frame.itertuples(index=False)),
                numeric=numeric, wrap=tuple(not n for n in numeric))


@dataclass(frozen=True)
class Presentation:
    """What a result says: its ``headline``, its ``views`` (tables) and its ``notes``."""

    headline: str
    views: tuple[View, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def shown(self, detail: bool = False) -> Presentation:
        """The presentation as it is read by default (without the ``detail`` views), or
        whole with ``detail``."""
        if detail:
            return self
        return replace(self, views=tuple(v for v in self.views if not v.detail))

    def to_text(self) -> str:
        """Plain text: the headline, each table, the notes (for logs and ``print``)."""
        parts = [self.headline, *(v.to_text() for v in self.views), *self.notes]
        return "\n\n".join(p for p in parts if p)

    def __str__(self) -> str:
        """What is read by default (the ``detail`` views left out)."""
        return self.shown().to_text()

    def _repr_html_(self) -> str:
        """How a notebook shows it: the headline, the tables (a ``detail`` one collapsed),
        the notes in italics."""
        def drawn(v: View) -> str:
            if not v.detail:
                return v._repr_html_()
            return (f"<details><summary>In detail: {html.escape(v.title)}</summary>"
                    f"{v._repr_html_()}</details>")

        parts = [f"<p>{html.escape(self.headline)}</p>", *(drawn(v) for v in self.views),
                 *(f"<p><i>{html.escape(n)}</i></p>" for n in self.notes)]
        return "\n".join(parts)
