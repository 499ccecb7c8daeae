"""The Campaign: runs of a program over configurations, with their sensors (docs/design.md).

A :class:`Run` is one execution of the program in one configuration — ``threads``, ``cores``,
``frequency_ghz``, ``input`` (a label: ``"3"``, ``"large"``), ``repetition`` — with its status
(``"ok"`` or ``"failed"`` with a ``reason``), wall-clock ``start_s``/``stop_s`` (seconds, any
epoch), ``time_s`` (default ``stop_s - start_s``), ``energy_j``, optional sensor series
(``name -> ((timestamp, value), ...)``; a value is a float or, for counter vectors, a tuple of
floats) and regions (``name -> ((start, stop), ...)``, one interval per thread or per entry).
A region's time is the length of the **union** of its intervals: overlapping threads count
once (Silva 2024, section 3.2; notes, section 1), unlike TAU which sums them.

A :class:`Campaign` holds the runs in the order they were made, the program, the declared input
order (``inputs``: labels in increasing size, used to number non-numeric inputs 1, 2, ...) and
``meta``. :meth:`Campaign.table` is the tidy view, one row per run::

    threads cores frequency_ghz input repetition status reason start_s stop_s time_s energy_j
    power_w region:NAME...

(``threads``/``cores`` nullable integers, NaN for what was not measured; ``power_w`` =
energy / time; one ``region:NAME`` column per region, its union time in seconds). Campaigns
and runs are immutable by convention: treat the table as read-only (``.copy()`` to modify).

Files. :meth:`Campaign.to_dict`/:meth:`~Campaign.from_dict` are versioned JSON (``"kind":
"campaign"``). For a campaign being measured there is an append-friendly JSON-lines log
(``.jsonl``): a header line (``{"kind": "campaign", "version": 1, "format": "jsonl", "program",
"inputs", "meta"}``) then one run per line, each appended and fsynced by :func:`append_run`, so
that an interrupted campaign keeps every finished run and can resume (:meth:`Campaign.done`
gives the configurations already measured). A line cut short by a crash is skipped with a
warning on reading, and the next append starts a fresh line after it. :func:`read_campaign`
reads our JSON, our JSON lines and PaScal Analyzer JSON (:mod:`phasekit.io.pascal`);
:func:`write_campaign` writes JSON or JSON lines (by the suffix) atomically.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.results import check_version, plain
from phasekit.runs import (
    CAMPAIGN_VERSION,
    CONFIG_COLUMNS,
    REGION_PREFIX,
    STATUSES,
    Campaign,
    Run,
    campaign_from_header,
    union_length,
)

__all__ = [
    "CAMPAIGN_VERSION",
    "CONFIG_COLUMNS",
    "REGION_PREFIX",
    "STATUSES",
    "Campaign",
    "Run",
    "append_run",
    "read_campaign",
    "union_length",
    "write_campaign",
]


def _header_line(program: str, inputs: Sequence[str], meta: Mapping[str, Any]) -> str:
    header = {"kind": "campaign", "version": CAMPAIGN_VERSION, "format": "jsonl",
              "program": program, "inputs": [str(i) for i in inputs], "meta": plain(dict(meta))}
    return json.dumps(header, separators=(",", ":"))


def append_run(path: str | os.PathLike[str], run: Run, *, program: str = "",
               inputs: Sequence[str] = (), meta: Mapping[str, Any] | None = None) -> None:
    """Append ``run`` as one line to the JSON-lines log ``path`` and fsync it.

    A new (or empty) file gets the header line first, from ``program``, ``inputs`` and ``meta``
    (ignored for an existing log). When the file ends in a line cut short by a crash, the run
    starts a new line (the cut line is skipped with a warning by :func:`read_campaign`). A
    whole-JSON campaign file is refused (UsageError): rewrite it with :func:`write_campaign`.
    """
    target = Path(path)
    line = json.dumps(run.to_dict(), separators=(",", ":"))
    prefix = ""
    try:
        size = target.stat().st_size
    except FileNotFoundError:
        size = 0
    except OSError as exc:
        raise UsageError(f"cannot append to {target}: {exc.strerror or exc}") from None
    if size == 0:
        prefix = _header_line(program, inputs, meta or {}) + "\n"
    else:
        with open(target, "rb") as fh:
            first = fh.readline()
            fh.seek(-1, os.SEEK_END)
            last = fh.read(1)
        try:
            head = json.loads(first)
        except ValueError:
            head = None
        if not (isinstance(head, dict) and head.get("format") == "jsonl"):
            raise UsageError(f"cannot append to {target}: not a phasekit JSON-lines campaign "
                             "log (its first line is not the log header)")
        if last != b"\n":
            prefix = "\n"
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as exc:
        raise UsageError(f"cannot append to {target}: {exc.strerror or exc}") from None
    try:
        os.write(fd, (prefix + line + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def write_campaign(campaign: Campaign, path: str | os.PathLike[str], *,
                   pascal: bool = False) -> None:
    """Write ``campaign`` atomically: its tidy table for a ``.csv`` name, PaScal Analyzer JSON
    with ``pascal``, JSON lines for a ``.jsonl`` name, indented JSON otherwise."""
    from phasekit.io.atomic import atomic_write_text

    target = Path(path)
    if target.suffix.lower() == ".csv":
        atomic_write_text(target, campaign.table().to_csv(index=False))
    elif pascal:
        from phasekit.io.pascal import write_pascal

        write_pascal(campaign, target)
    elif target.suffix.lower() == ".jsonl":
        lines = [_header_line(campaign.program, campaign.inputs, campaign.meta)]
        lines += [json.dumps(r.to_dict(), separators=(",", ":")) for r in campaign.runs]
        atomic_write_text(target, "\n".join(lines) + "\n")
    else:
        atomic_write_text(target, json.dumps(campaign.to_dict(), indent=1) + "\n")


def read_campaign(path: str | os.PathLike[str]) -> Campaign:
    """Read a campaign: our JSON, our JSON-lines log or a PaScal Analyzer JSON.

    InputError (naming the file, and the line for JSON lines) on anything else.
    """
    from phasekit.io.inputs import loads, read_text

    source = os.fspath(path)
    text = read_text(path, "a campaign JSON")
    if not text.strip():
        raise InputError("empty file; expected a campaign JSON or JSON-lines log", path=source)
    try:
        data = loads(text)
    except json.JSONDecodeError:
        data = None
    except ValueError as exc:  # a number that is not finite
        raise InputError(str(exc), path=source) from None
    if isinstance(data, dict) and data.get("format") != "jsonl":
        if "config" in data and "data" in data and "kind" not in data:
            from phasekit.io.pascal import from_pascal

            return from_pascal(data, source=source)
        if "kind" not in data and not {"config", "data"} & set(data):
            raise InputError("not a phasekit campaign (no \"kind\": \"campaign\") nor a PaScal "
                             "Analyzer JSON (no \"config\" and \"data\")", path=source)
        if "kind" not in data:
            missing = "config" if "config" not in data else "data"
            raise InputError(f"PaScal Analyzer JSON without its \"{missing}\" section",
                             path=source)
        return Campaign.from_dict(data, source)
    return _read_jsonl(text, source)


def _read_jsonl(text: str, source: str) -> Campaign:
    from phasekit.io.inputs import loads

    lines = text.split("\n")
    header: dict[str, Any] | None = None
    runs: list[Run] = []
    skipped: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = loads(line)
        except json.JSONDecodeError:
            if header is None and not runs:
                raise InputError("not JSON: expected a campaign JSON, a JSON-lines campaign log "
                                 "or a PaScal Analyzer JSON", path=source, line=number) from None
            skipped.append(number)
            continue
        except ValueError as exc:  # a number that is not finite
            raise InputError(str(exc), path=source, line=number) from None
        if header is None and not runs and isinstance(item, dict) and "kind" in item:
            check_version(item, "campaign", CAMPAIGN_VERSION, source)
            header = item
            continue
        try:
            runs.append(Run.from_dict(item))
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"bad run: {exc}", path=source, line=number) from None
    if skipped:
        where = ", ".join(map(str, skipped[:5])) + (" ..." if len(skipped) > 5 else "")
        warnings.warn(f"{source}: skipped {len(skipped)} line(s) cut short or not JSON (line "
                      f"{where}), probably an interrupted write; kept {len(runs)} run(s)",
                      PhasekitWarning, stacklevel=3)
    return campaign_from_header(header or {}, tuple(runs), source)
