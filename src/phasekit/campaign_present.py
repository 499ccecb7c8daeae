"""How a campaign reads (Silva 2024, PaScal Analyzer): what ``phasekit campaign run`` and
``phasekit campaign import`` print, as a :class:`~phasekit.present.Presentation`
(:mod:`phasekit.present`); :meth:`phasekit.runs.Campaign.present` returns it.

The headline says how many runs of which program, how many failed, over how many
configurations of what, and how the energy was obtained; the table has one row per run in
run order (the configuration columns and the measures this campaign holds); the notes say
how the energy was obtained in full and how many runs failed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from phasekit.present import Presentation, View, listed, plural

__all__ = ["RUN_COLUMNS", "headline", "presentation", "runs_view"]

#: Columns of :meth:`~phasekit.runs.Campaign.table` the runs table shows, in order (then each
#: region's), those the campaign has a value in.
RUN_COLUMNS = ("threads", "cores", "frequency_ghz", "input", "repetition", "status", "time_s",
               "energy_j", "power_w")
#: Columns of words (the others are numbers).
TEXT_COLUMNS = ("input", "status")
#: Inputs the headline names before "and N more".
NAMED = 3


def _missing(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    import pandas as pd

    return value is pd.NA


def _cell(value: Any) -> str:
    if _missing(value):
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def runs_view(campaign: Any, title: str) -> View:
    """One row per run, in run order: the columns of :data:`RUN_COLUMNS` and the regions'
    times that the campaign measured (``-`` where a run has none)."""
    table = campaign.table()
    columns = [c for c in RUN_COLUMNS if c in table.columns]
    columns += list(campaign.region_columns)
    columns = [c for c in columns if table[c].notna().any()]  # what this campaign measured
    values = [table[c].tolist() for c in columns]
    rows = tuple(tuple(_cell(v) for v in row) for row in zip(*values, strict=True))
    numeric = tuple(c not in TEXT_COLUMNS for c in columns)
    return View(title, tuple(str(c) for c in columns), rows, numeric=numeric,
                wrap=(False,) * len(columns))


def _range(values: Sequence[float], unit: str = "") -> str:
    low, high = min(values), max(values)
    return f"{low:g}{unit}" if low == high else f"{low:g}-{high:g}{unit}"


def _varied(campaign: Any) -> list[str]:
    """What the configurations vary: ``threads 1-32``, ``1.2-2.2 GHz``, ``inputs 1, 2, 3``."""
    parts = []
    for column, word in (("threads", "threads "), ("cores", "cores ")):
        found = {getattr(r, column) for r in campaign.runs} - {None}
        if len(found) > 1:
            parts.append(word + _range(sorted(found)))
    frequencies = {r.frequency_ghz for r in campaign.runs} - {None}
    if len(frequencies) > 1:
        parts.append(_range(sorted(frequencies), " GHz"))
    seen = {r.input for r in campaign.runs} - {None}
    if len(seen) > 1:
        order = [i for i in campaign.inputs if i in seen]
        order += sorted(seen - set(order))
        parts.append("inputs " + listed(order, NAMED))
    return parts


def _energy(campaign: Any) -> str:
    """How the energy was obtained, without its details (``energy ESTIMATED, not
    measured``, ``energy from RAPL``); for a campaign that does not say, whether it has any."""
    note = campaign.meta.get("energy")
    if isinstance(note, str) and note:
        return note.split(":")[0].split(" (")[0]
    measured = any(r.energy_j is not None and math.isfinite(r.energy_j) for r in campaign.runs)
    return "energy measured" if measured else "no energy"


def headline(campaign: Any, name: str | None = None) -> str:
    """``c.json: 4 runs of ./app {input}, all ok, over 4 configurations (threads 1-2, inputs
    2, 4); energy from RAPL``."""
    prefix = f"{name}: " if name else ""
    program = campaign.program or "a program"
    if not campaign.runs:
        return f"{prefix}no runs of {program}"
    failed = sum(not r.ok for r in campaign.runs)
    status = "all ok" if not failed else "all failed" if failed == len(campaign) \
        else f"{failed} failed"
    configurations = len({r.key[:4] for r in campaign.runs})
    varied = _varied(campaign)
    repetitions = max(r.repetition for r in campaign.runs)
    over = f"over {plural(configurations, 'configuration')}"
    if varied:
        over += f" ({', '.join(varied)})"
    if repetitions > 1:
        over += f" x {repetitions} repetitions"
    return (f"{prefix}{plural(len(campaign), 'run')} of {program}, {status}, {over}; "
            f"{_energy(campaign)}")


def presentation(campaign: Any, name: str | None = None) -> Presentation:
    """A campaign (``name``: its file): the headline, the runs table (titled ``NAME: N runs``,
    or ``Campaign: N runs of PROGRAM`` without a name), then how its energy was obtained and
    how many runs failed."""
    title = (f"{name}: {plural(len(campaign), 'run')}" if name
             else f"Campaign: {plural(len(campaign), 'run')} of {campaign.program}")
    notes = []
    note = campaign.meta.get("energy")
    if note:
        notes.append(f"note: {note}")
    failed = sum(not r.ok for r in campaign.runs)
    if failed:
        notes.append(f"{failed} run(s) failed; their reasons are in the file")
    return Presentation(headline(campaign, name), (runs_view(campaign, title),), tuple(notes))
