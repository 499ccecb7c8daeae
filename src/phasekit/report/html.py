"""HTML building blocks of the report: escaping, tables, notes, figures, the page.

Everything that comes from an input file goes through :func:`esc` (``html.escape``); markup the
report builds itself is a :class:`Safe` string, so that a table or a paragraph escapes what it
is given unless it is already markup. The page has no script and no external resource: one
inline style sheet, figures as inline SVG.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Safe", "Section", "beside", "esc", "fmt", "kv_table", "note", "page", "table"]


class Safe(str):
    """Markup built by the report: not escaped again."""

    __slots__ = ()


def esc(value: Any) -> Safe:
    """``value`` as HTML text: escaped (quotes too) unless it is :class:`Safe` already."""
    if isinstance(value, Safe):
        return value
    return Safe(html.escape(str(value), quote=True))


def join(parts: Iterable[Any]) -> Safe:
    """Fragments joined, each escaped unless it is markup."""
    return Safe("".join(esc(p) for p in parts))


def tag(name: str, content: Any = "", **attrs: Any) -> Safe:
    """``<name attrs>content</name>``; attribute values and content are escaped
    (``class_`` stands for ``class``)."""
    attributes = "".join(f' {k.rstrip("_").replace("_", "-")}="{esc(v)}"'
                         for k, v in attrs.items() if v is not None)
    return Safe(f"<{name}{attributes}>{esc(content)}</{name}>")


#: Numbers below this read in grouped digits (78,480); larger ones keep their exponent.
GROUPED_BELOW = 1e12


def fmt(value: Any, spec: str = ".4g", unit: str = "") -> str:
    """A number for a table: ``spec`` for finite numbers, "-" for None or NaN; anything else
    as text."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value}{unit}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "-"
        text = f"{value:{spec}}"
        if "e+" in text and abs(value) < GROUPED_BELOW:  # 78,480 rather than 7.848e+04
            text = f"{value:,.0f}"
        return f"{text}{unit}"
    return str(value)


def duration(seconds: Any) -> str:
    """A duration in the unit a person reads it in: ``42.5 s``, ``13.2 min``, ``21.8 h``; "-"
    when not a number."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) \
            or not math.isfinite(seconds):
        return "-"
    if abs(seconds) >= 2 * 3600:
        return f"{seconds / 3600:.1f} h"
    if abs(seconds) >= 2 * 60:
        return f"{seconds / 60:.1f} min"
    return fmt(float(seconds), ".4g", " s")


def percent(value: Any, digits: int = 1) -> str:
    """A fraction (0..1) as a percentage, "-" when not a number."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return f"{100 * value:.{digits}f}%"
    return "-"


#: Rows a table shows before the rest is folded away (a first screen; our choice).
FIRST_ROWS = 15
#: A table folds only when this many rows or more would be folded.
FOLD_AT_LEAST = 5


def table(header: Sequence[Any], rows: Iterable[Sequence[Any]], *,
          row_classes: Sequence[str | None] | None = None, numeric: Sequence[bool] | None = None,
          caption: str | None = None, limit: int | None = None, class_: str | None = None
          ) -> Safe:
    """A table; every cell escaped unless it is markup. ``numeric`` right-aligns columns;
    ``limit`` keeps the first rows and says how many were left out; ``class_`` styles it.
    Beyond :data:`FIRST_ROWS` rows the rest is folded (``<details>``, open on a click)."""
    rows = list(rows)
    shown = rows if limit is None else rows[:limit]
    aligned = list(numeric) if numeric is not None else [False] * len(header)
    head = "".join(tag("th", h, class_="num" if aligned[i] else None)
                   for i, h in enumerate(header))

    def body(first: int, last: int) -> str:
        out = []
        for r in range(first, last):
            cls = row_classes[r] if row_classes is not None and r < len(row_classes) else None
            cells = "".join(tag("td", c, class_="num" if i < len(aligned) and aligned[i]
                                else None) for i, c in enumerate(shown[r]))
            out.append(tag("tr", Safe(cells), class_=cls))
        return "".join(out)

    cls = f' class="{esc(class_)}"' if class_ else ""

    def drawn(first: int, last: int, cap: str = "") -> str:
        return (f'<div class="scroll"><table{cls}>{cap}<thead><tr>{head}</tr></thead>'
                f'<tbody>{body(first, last)}</tbody></table></div>')

    cap = str(tag("caption", caption)) if caption else ""
    visible = len(shown)
    if len(shown) >= FIRST_ROWS + FOLD_AT_LEAST:
        visible = FIRST_ROWS
    html = drawn(0, visible, cap)
    if visible < len(shown):
        html += str(details(f"{len(shown) - visible} more rows", Safe(drawn(visible,
                                                                           len(shown)))))
    more = ""
    if len(rows) > len(shown):
        more = note(f"{len(rows) - len(shown)} more rows not shown (of {len(rows)}).")
    return Safe(html + more)


def kv_table(items: Iterable[tuple[Any, Any]]) -> Safe:
    """A two-column table of names and values."""
    rows = "".join(f"<tr>{tag('th', k)}{tag('td', v)}</tr>" for k, v in items)
    return Safe(f'<div class="scroll"><table class="kv"><tbody>{rows}</tbody></table></div>')


def note(text: Any, kind: str = "note") -> Safe:
    """A paragraph set off as a note (``kind``: note, warn, or fail: what the report could not
    show)."""
    return tag("p", text, class_=kind)


def details(summary: Any, content: Any) -> Safe:
    """A collapsed block."""
    return Safe(f"<details>{tag('summary', summary)}{esc(content)}</details>")


#: The attribute of a ``<figure>`` giving the narrowest width (CSS px) at which its text
#: still reads (:class:`phasekit.report.svg.FigureMaker` writes it).
FIT = "data-fit"
_FIT = re.compile(FIT + r'="(\d+)"')


def beside(text: Any, figures: Any) -> Safe:
    """A result's words (headline, tables, notes) and its figures: side by side where the
    page is wide enough for both (the words on the left, the figures never narrower than
    the widest :data:`FIT` among them, folded ones too), the figures under the words
    otherwise (a narrow window, or a table too wide to share the line)."""
    if not figures:
        return esc(text)
    fits = [int(width) for width in _FIT.findall(str(figures))]
    style = f' style="--fit: {max(fits)}px"' if fits else ""
    return Safe(f'<div class="beside"><div class="words">{esc(text)}</div>'
                f'<div class="figures"{style}>{esc(figures)}</div></div>')


@dataclass(frozen=True)
class Section:
    """One result's part of the report; ``headline``: its one line in plain words (what the
    command line prints first; empty when the result has none)."""

    anchor: str
    title: str
    source: str
    kind: str
    body: Safe
    headline: str = ""


_STYLE = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial,
       sans-serif; color: #1d1d1f; background: #fff; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 12px 24px 32px; }
header { border-bottom: 2px solid #d0d7de; margin-bottom: 8px; }
h1 { font-size: 1.6em; margin: 0.3em 0 0.1em; }
h2 { font-size: 1.3em; margin: 0; }
h3 { font-size: 1.05em; margin: 1em 0 0.3em; }
p { margin: 0.45em 0; }
section { border-top: 1px solid #d0d7de; margin-top: 1.1em; padding-top: 0.5em; }
.head { display: flex; flex-wrap: wrap; align-items: baseline; column-gap: 1em; }
.meta { color: #57606a; font-size: 0.9em; margin: 0.2em 0; }
.kind { font: 0.75em ui-monospace, "DejaVu Sans Mono", monospace; background: #eaeef2;
        border-radius: 4px; padding: 1px 6px; vertical-align: middle; color: #24292f; }
nav.summary h2 { margin: 0.2em 0; }
nav.summary ol { margin: 0 0 0.4em; padding: 0; list-style: none; counter-reset: result;
                 display: grid; grid-template-columns: fit-content(30em) minmax(0, 1fr);
                 column-gap: 1.2em; }
nav.summary li { display: grid; grid-column: 1 / -1; grid-template-columns: subgrid;
                 counter-increment: result; padding: 0.15em 0;
                 border-bottom: 1px solid #eaeef2; }
nav.summary .what::before { content: counter(result) ". "; color: #57606a; }
p.headline { font-weight: 600; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.3em 0 0.5em; font-size: 0.9em; }
caption { text-align: left; font-weight: 600; padding: 2px 0; }
th, td { padding: 2px 8px; border-bottom: 1px solid #e1e4e8; text-align: left;
         vertical-align: top; }
thead th { background: #f6f8fa; border-bottom: 2px solid #d0d7de; white-space: nowrap; }
table.kv th { background: #f6f8fa; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.outlier td { background: #ffebe9; }
tr.outlier td:first-child { box-shadow: inset 4px 0 0 #cf222e; }
.badge { background: #cf222e; color: #fff; border-radius: 8px; padding: 0 6px;
         font-size: 0.8em; margin-left: 4px; }
table.code td { font: 0.92em/1.3 ui-monospace, "DejaVu Sans Mono", monospace;
                white-space: pre; border-bottom: none; padding: 1px 10px; }
p.note { color: #57606a; font-size: 0.9em; margin: 0.3em 0; }
p.warn { background: #fff8c5; border-left: 4px solid #d4a72c; padding: 4px 10px; }
p.fail { background: #ffebe9; border-left: 4px solid #cf222e; padding: 4px 10px; }
figure { margin: 0.5em 0 0.6em; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #57606a; font-size: 0.88em; margin-top: 2px; }
details { margin: 0.3em 0; }
details pre { background: #f6f8fa; padding: 8px; overflow: auto; max-height: 420px;
              font-size: 0.82em; }
footer { color: #57606a; font-size: 0.85em; margin-top: 1.5em; }
@media (min-width: 1240px) {
  main { max-width: 1400px; }
  .beside { display: flex; flex-wrap: wrap; align-items: flex-start; column-gap: 24px; }
  .beside > .words { flex: 1 1 360px; max-width: 100%; }
  .beside > .figures { flex: 100 1 0; min-width: min(var(--fit, 0px), 100vw - 64px);
                       max-width: max(780px, var(--fit, 0px)); }
}
@media (max-width: 900px) {
  main { padding: 8px 12px 24px; }
  body { font-size: 14px; }
  thead th { white-space: normal; }
  th, td { padding: 2px 6px; }
  nav.summary ol, nav.summary li { display: block; }
  nav.summary .headline::before { content: " \\2014  "; color: #57606a; }
}
"""


def summary(sections: Sequence[Section]) -> Safe:
    """The answers first: per section, its title (a link to it, its file named on hover) and
    kind, beside its headline."""
    items = "".join(tag("li", join([
        tag("span", join([Safe(f'<a href="#{esc(s.anchor)}" title="{esc(s.source)}">'
                               f'{esc(s.title)}</a> '), tag("span", s.kind, class_="kind")]),
            class_="what"),
        tag("span", s.headline, class_="headline") if s.headline else ""]))
        for s in sections)
    return Safe(f'<nav class="summary">{tag("h2", "Summary")}<ol>{items}</ol></nav>')


def page(title: str, header: Safe, sections: Sequence[Section], footer: str = "") -> str:
    """The whole document: header, the summary (each section's headline, linked), the
    sections."""
    parts = [f"<header>{tag('h1', title)}{header}</header>"]
    if sections:
        parts.append(summary(sections))
    for s in sections:
        head = Safe(f"{esc(s.title)} {tag('span', s.kind, class_='kind')}")
        parts.append(f'<section id="{esc(s.anchor)}"><div class="head">{tag("h2", head)}'
                     f"{tag('p', Safe('from ' + str(tag('code', s.source))), class_='meta')}"
                     f"</div>{s.body}</section>")
    if footer:
        parts.append(tag("footer", footer))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(parts) + "\n</main>\n</body>\n</html>\n")


def mapping_rows(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Scalars of ``data`` (and of nested mappings, as ``a.b``) as (name, text) rows."""
    out: list[tuple[str, str]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.extend(mapping_rows(value, name + "."))
        elif is_scalar(value):
            out.append((name, fmt(value)))
        elif isinstance(value, list) and value and all(is_scalar(v) for v in value) \
                and len(value) <= 12:
            out.append((name, ", ".join(fmt(v) for v in value)))
    return out


def is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)
