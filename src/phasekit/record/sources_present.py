"""How ``phasekit sources`` reads: the recording sources of this machine, as a
:class:`~phasekit.present.Presentation` (:mod:`phasekit.present`).

The headline says how many sources can run here and what they measure; the table has one row
per source (whether it is available, its metrics and those it records of a command, why it
cannot run or what to know of it); the note says what command sources are.
:func:`paragraphs` writes the same presentation as plain text for a pipe: a paragraph per
source, wrapped between words (a metric name or a path is never split).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from phasekit.present import Presentation, View, listed, plural

__all__ = ["COMMAND_SOURCES_NOTE", "PIPED_WIDTH", "TITLE", "headline", "paragraphs",
           "presentation"]

#: The title of the table of sources.
TITLE = "Recording sources on this machine"
#: What command sources are (``phasekit record --sensor``).
COMMAND_SOURCES_NOTE = ("Command sources (phasekit record --sensor NAME=COMMAND) run any "
                        "program that prints a number, such as an IPMI or GPU power reader.")
#: Width of :func:`paragraphs`: a plain paragraph per source, wrapped between words, instead of
#: a table as wide as its longest cell.
PIPED_WIDTH = 80
#: The cell of the "metrics" column that starts the metrics recorded of a command.
WITH_A_COMMAND = "with a command: "
#: Sources the headline names before "and N more".
NAMED = 4


def _names(metrics: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(m["name"] for m in metrics)


def _metrics(entry: Mapping[str, Any]) -> str:
    """The source's metrics, then those it records of a command's own process tree."""
    cell = _names(entry["metrics"]) or "-"
    if entry["command_metrics"]:
        cell += "\n" + WITH_A_COMMAND + _names(entry["command_metrics"])
    return cell


def _reasons(entry: Mapping[str, Any]) -> str:
    """Why the source cannot run (or what to know of it), then the metrics it cannot record,
    grouped by why."""
    reasons = [entry["reason"]] if entry["reason"] else []
    by_reason: dict[str, list[str]] = {}
    for name, why in entry["unavailable_metrics"].items():
        by_reason.setdefault(why, []).append(name)
    reasons += [f"{', '.join(names)}: {why}" if why != entry["reason"]
                else f"unavailable: {', '.join(names)}" for why, names in by_reason.items()]
    return "\n".join(reasons)


def headline(listing: Sequence[Mapping[str, Any]]) -> str:
    """``2 of 4 recording sources can run here (perf-sw, proc): 18 metrics, 14 more with a
    command; perf-hw, rapl cannot``."""
    able = [e for e in listing if e["available"]]
    unable = [e["name"] for e in listing if not e["available"]]
    if not able:
        return (f"none of the {plural(len(listing), 'recording source')} can run here"
                + (f": {listed(unable, NAMED)}" if unable else ""))
    metrics = sum(len(e["metrics"]) for e in able)
    of_command = sum(len(e["command_metrics"]) for e in able)
    line = (f"{len(able)} of {plural(len(listing), 'recording source')} can run here "
            f"({listed([e['name'] for e in able], NAMED)}): {plural(metrics, 'metric')}")
    if of_command:
        line += f", {of_command} more with a command"
    return line + (f"; {listed(unable, NAMED)} cannot" if unable else "")


def presentation(listing: Sequence[Mapping[str, Any]]) -> Presentation:
    """The sources of ``listing`` (:func:`phasekit.record.api.list_sources`): the headline,
    one row per source (source, available, metrics, reason) and what command sources are."""
    rows = tuple((e["name"], "yes" if e["available"] else "no", _metrics(e), _reasons(e))
                 for e in listing)
    table = View(TITLE, ("source", "available", "metrics", "reason"), rows,
                 numeric=(False,) * 4, wrap=(False, False, True, True))
    return Presentation(headline(listing), (table,), (COMMAND_SOURCES_NOTE,))


def paragraphs(shown: Presentation, width: int = PIPED_WIDTH) -> str:
    """``shown`` (:func:`presentation`) as text for a pipe: the headline, the title, then a
    paragraph per source (``NAME: available`` or ``not available``, its metrics, and why:
    ``reason:``, or what to know: ``note:``), then the notes; indented and wrapped at
    ``width`` between words (a metric name or a path is never split)."""

    def wrapped(text: str, first: str = "", rest: str = "") -> list[str]:
        return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                             break_long_words=False, break_on_hyphens=False) or [first.rstrip()]

    lines = [*wrapped(shown.headline), ""]
    for table in shown.views:
        lines += [table.title, ""]
        for name, available, metrics, reasons in table.rows:
            able = available == "yes"
            lines.append(f"{name}: {'available' if able else 'not available'}")
            for k, part in enumerate(metrics.split("\n")):
                label = "  metrics: " if k == 0 and not part.startswith(WITH_A_COMMAND) else "  "
                lines += wrapped(part, label, "      ")
            for reason in filter(None, reasons.split("\n")):
                label = ("  " if reason.startswith("unavailable:")
                         else "  reason: " if not able else "  note: ")
                lines += wrapped(reason, label, "      ")
    for note in shown.notes:
        lines += ["", *wrapped(note)]
    return "\n".join(lines) + "\n"
