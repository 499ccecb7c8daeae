"""Linux ``perf stat`` interval output (``perf stat -I <ms> -x,``) as a Profile.

What is read
------------
``perf stat -I MS -x SEP`` prints, every MS milliseconds, one line per event (and per CPU,
core, socket... when asked), to stderr or to the ``-o FILE``. The fields, in order, as printed
by ``tools/perf/util/stat-display.c`` (read in torvalds/linux, the 6.1/6.2-era version with
``prepare_interval``, ``print_aggr_id_csv``, ``print_counter_value_csv``,
``print_noise_pct_csv``, ``print_running_csv``, ``print_metric_csv`` and ``new_line_csv``;
GPL-2.0) and documented under "CSV FORMAT" in ``tools/perf/Documentation/perf-stat.txt``:

1. the interval time, ``%lu.%09lu`` seconds since the start (the *end* of the interval whose
   counts follow; perf pads it with spaces);
2. with ``-A``/``--no-aggr``: ``CPU3``; ``--per-socket``: ``S0`` then the number of CPUs
   aggregated; ``--per-die``: ``S0-D0`` and the number; ``--per-core``: ``S0-D0-C1`` and the
   number; ``--per-node``: ``N0`` and the number; ``--per-thread``: ``comm-pid``;
3. the counter value, already scaled by perf for multiplexing (``%.2f`` or ``%.0f``), or
   ``<not counted>`` (the counter did not run in that interval: for a per-task run, the task
   was not scheduled) or ``<not supported>`` (no such counter, e.g. hardware events in a VM);
4. the unit (``msec`` for task-clock and cpu-clock, often empty); 5. the event name as given
   (``cycles:u``, ``cpu/event=0x3c,umask=0x0/``, which may itself hold the separator);
6. with ``-r N`` only: the variance as ``x.xx%``;
7. the run time of the counter (ns) and the percentage of the interval it was enabled
   (``%.2f``; below 100 when perf multiplexed counters);
8. perf's derived metric value and its unit (``insn per cycle``, ``CPUs utilized``, ``/sec``),
   both empty when there is none; further metrics of the same event come on continuation
   lines with empty value and event fields.

``-o FILE`` starts the file with ``# started on <ctime>`` and a blank line; output on stderr
may interleave the application's own lines. All of this was checked against real output of
perf 6.1 on this project's machine (the samples in ``tests/data/perfstat_*``).

What phasekit makes of it (our choices)
---------------------------------------
- One metric per event; the time of a sample is perf's interval time. Lines that are not perf
  lines (application output, blank lines, comments) are skipped and counted in the meta;
  continuation lines (metric only) are skipped. A line that starts like a perf line (an
  interval time and the separator) but does not parse is an InputError naming the line.
- Per-CPU/core/socket/thread values are **summed** to a node total. When one of them is
  missing or ``<not counted>`` in an interval, that interval's total is NaN rather than a
  partial sum that would look like a drop in activity.
- ``<not counted>`` becomes NaN. An event that never has a value (typically
  ``<not supported>`` everywhere) is dropped with a :class:`PhasekitWarning`; the meta lists it.
- perf's derived metric columns (``insn per cycle``, ``CPUs utilized``, ``/sec``) are not
  imported: they are ratios of imported counts (phasekit derives ``ipc`` from ``instructions``
  and ``cycles`` itself).
- Names: ``instructions``, ``cycles`` (``cpu-cycles``), ``ref_cycles``, ``cache_references``,
  ``cache_misses``, ``branches`` (``branch-instructions``), ``branch_misses``, ``task_clock``,
  ``context_switches`` (``cs``), ``page_faults`` (``faults``), ``cpu_migrations``
  (``migrations``); these drop a modifier or PMU (``cycles:u``, ``cpu/cycles/``) unless two
  events would then share a name (``cycles:u`` and ``cycles:k`` give ``cycles_u`` and
  ``cycles_k``). Other events keep their name with every run of non-alphanumeric characters
  turned into ``_`` (``L1-dcache-load-misses`` -> ``L1_dcache_load_misses``). perf's own
  name is kept in ``meta["source_names"]``: ``cpu-clock``, ``cs`` or ``cycles:u`` still name
  the metric wherever a metric is asked for by name (:meth:`phasekit.profile.Profile.resolve`).
- Units: ``msec``/``usec``/``nsec`` values are converted to seconds (task-clock becomes CPU
  seconds per interval: 2.0 on two busy CPUs over a one-second interval), ``Joules`` -> ``J``,
  ``KiB``/``MiB``/``GiB`` -> bytes; other units are kept as perf prints them.
- The enabled percentage (multiplexing) is kept in ``meta["perf_stat"]["enabled_pct"]`` (min
  and mean per metric, averaged over CPUs) and, for metrics perf multiplexed, per sample in
  ``meta["perf_stat"]["enabled_pct_series"]``.
- A last interval shorter than the others (perf prints one when the command exits) is dropped:
  its counts cover a fraction of a period. The sampling period is the median step rounded to
  the shortest decimal within 1 % (perf's ``-I 200`` gives 0.2 s, not the 0.2012 s its timer
  overhead makes on a busy machine); steps that stray more than 1 % from it make
  :func:`~phasekit.io.csv.regularize` resample with a warning (on a loaded machine perf's
  timer often does), and missing intervals become NaN rows.
- Not read: ``perf stat`` without ``-I`` (one total, no series: InputError saying so), ``-j``
  JSON, ``--metric-only`` tables, several runs in one file (``-r N`` or ``--append``: InputError
  at the line where the interval time goes back), multi-character separators.
"""

from __future__ import annotations

import logging
import math
import os
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from phasekit.errors import InputError, PhasekitWarning
from phasekit.io.csv import (
    REGULARITY_TOLERANCE,
    RowLocator,
    TimeColumn,
    build_profile,
    read_input_bytes,
    select_metrics,
)
from phasekit.io.inputs import source_name
from phasekit.profile import SOURCE_NAMES_KEY, Profile

__all__ = [
    "PERF_EVENT_NAMES",
    "looks_like_perfstat",
    "nominal_period",
    "perf_metric_names",
    "read_perfstat_profile",
    "read_text",
]

logger = logging.getLogger(__name__)

#: perf event names (lower case) with an obvious phasekit name.
PERF_EVENT_NAMES: dict[str, str] = {
    "instructions": "instructions",
    "cycles": "cycles", "cpu-cycles": "cycles",
    "ref-cycles": "ref_cycles",
    "cache-references": "cache_references",
    "cache-misses": "cache_misses",
    "branches": "branches", "branch-instructions": "branches",
    "branch-misses": "branch_misses",
    "task-clock": "task_clock",
    "context-switches": "context_switches", "cs": "context_switches",
    "page-faults": "page_faults", "faults": "page_faults",
    "cpu-migrations": "cpu_migrations", "migrations": "cpu_migrations",
}
#: perf units converted to phasekit units: unit -> (new unit, factor).
_UNITS: dict[str, tuple[str, float]] = {
    "msec": ("s", 1e-3), "ms": ("s", 1e-3), "usec": ("s", 1e-6), "us": ("s", 1e-6),
    "nsec": ("s", 1e-9), "ns": ("s", 1e-9), "sec": ("s", 1.0), "s": ("s", 1.0),
    "Joules": ("J", 1.0), "KiB": ("B", 2.0**10), "MiB": ("B", 2.0**20), "GiB": ("B", 2.0**30),
}
NOT_COUNTED = "<not counted>"
NOT_SUPPORTED = "<not supported>"
#: The nominal period is the shortest decimal within this fraction of the median step (the
#: regularity tolerance of :func:`~phasekit.io.csv.regularize`, so that it accepts it).
NOMINAL_TOLERANCE = REGULARITY_TOLERANCE

_SEPARATORS = (",", ";", "\t", "|", ":")
_TIME = r"[ \t]*\d+\.\d+"
_AGGR = r"CPU\d+|S\d+(?:-D\d+)?(?:-[CL]\d+)?|N\d+|[^{s}\n]+-\d+"
_VALUE = r"[-+]?\d+(?:\.\d+)?|<not counted>|<not supported>"
_MODIFIERS = re.compile(r"(.+?):([ukhIGHpPSDWebR]{1,8})")
_PMU_EVENT = re.compile(r"([\w.-]+)/([^/]*)/([ukhIGHpPSDWebR]*)")
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]+")
_STARTED_ON = re.compile(r"#\s*started on\s+(.*\S)")
# A summary without -I: value, unit, event, run time, percentage.
_NO_INTERVAL = re.compile(r"[ \t]*(?:[-+]?\d+(?:\.\d+)?|<not counted>|<not supported>)"
                          r"([,;\t|:])[^\n]*?\1[A-Za-z][^\n]*?\1\d+\1\d+\.\d\d(?:\1|$)")


def _escape(sep: str) -> str:
    return "\\t" if sep == "\t" else re.escape(sep)


def _counter_pattern(sep: str, *, strict: bool = False) -> str:
    """RE2 (and Python) pattern of one counter line with separator ``sep`` (named groups).

    ``strict`` (for sniffing) asks for what perf always prints: nine decimals in the time, a
    unit that is empty or starts with a letter, an event starting with a letter, two decimals
    in the percentage; so that a numeric CSV row is never taken for a perf line.
    """
    s, not_s = _escape(sep), f"[^{_escape(sep)}\n]"
    aggr = _AGGR.format(s=_escape(sep))
    time = r"[ \t]*\d+\.\d{9}" if strict else _TIME
    unit = rf"(?:[A-Za-z%/]{not_s}*)?" if strict else f"{not_s}*"
    event = rf"[A-Za-z_]{not_s}*?(?:{s}{not_s}*?)*?" if strict else rf"{not_s}.*?"
    pct = r"\d+\.\d\d" if strict else r"\d+(?:\.\d+)?"
    return (rf"^(?P<time>{time}){s}(?:(?P<aggr>{aggr}){s}(?:(?P<nr>\d+){s})?)?"
            rf"(?P<value>{_VALUE}){s}(?P<unit>{unit}){s}(?P<event>{event})"
            rf"{s}(?P<run>\d+){s}(?P<pct>{pct})"
            rf"(?:{s}(?P<mval>{not_s}*){s}(?P<munit>{not_s}*))?[ \t]*$")


def _continuation_pattern(sep: str) -> str:
    """A line with an interval time whose value field is empty (a metric-only line)."""
    s = _escape(sep)
    aggr = _AGGR.format(s=_escape(sep))
    return rf"^{_TIME}{s}(?:(?:{aggr}){s}(?:\d+{s})?)?{s}"


# --- reading text ---------------------------------------------------------------------------
def read_text(path: str | Path | IO[bytes], what: str) -> str:
    """The text of ``path`` or of a binary stream (gzip allowed), line ends normalized;
    InputError naming the file.

    Bytes that are not UTF-8 are replaced (the lines they are in will not parse as ``what``); a
    NUL byte means a binary file and is an InputError.
    """
    raw = read_input_bytes(path)
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise InputError(f"binary data (a NUL byte); expected {what} text", path=_where(path),
                         line=raw.count(b"\n", 0, nul) + 1)
    text = raw.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InputError(f"empty file; expected {what}", path=_where(path))
    return text


def _where(path: str | Path | IO[bytes]) -> str:
    """How messages name a file (its path as a Path prints it) or a stream."""
    return str(Path(path)) if isinstance(path, str | os.PathLike) else source_name(path)


def _lines_matching(pattern: re.Pattern[str], text: str, *, max_lines: int = 400,
                    max_length: int = 2000) -> bool:
    """Whether one of the first ``max_lines`` lines (shorter than ``max_length``) matches."""
    for line in text.split("\n", max_lines)[:max_lines]:
        if len(line) <= max_length and pattern.match(line):
            return True
    return False


def looks_like_perfstat(head: str) -> bool:
    """Whether the first few KB of a file look like ``perf stat -x`` output.

    True when a line has the full shape of a counter line (interval time with nine decimals,
    value, unit, event, run time, enabled percentage) or when the file starts with perf's
    ``# started on`` line; also for ``perf stat -x`` output without ``-I`` so that the reader
    can say what is missing.
    """
    if re.match(r"\s*#\s*started on ", head):
        return True
    for sep in sorted({m.group(1) for m in re.finditer(r"(?m)^[ \t]*\d+\.\d{9}([,;\t|:])",
                                                       head)}):
        pattern = re.compile(_counter_pattern(sep, strict=True))
        if _lines_matching(pattern, head):
            return True
    return _lines_matching(_NO_INTERVAL, head)


# --- names ----------------------------------------------------------------------------------
def _normalized(text: str) -> str:
    return _NON_ALNUM.sub("_", text).strip("_") or "event"


def _split_event(event: str) -> tuple[str | None, str, str]:
    """``(pmu, base, modifiers)`` of a perf event name; the base is the whole name otherwise."""
    match = _PMU_EVENT.fullmatch(event)
    if match:
        return match.group(1), match.group(2), match.group(3)
    match = _MODIFIERS.fullmatch(event)
    if match and "/" not in match.group(1):
        return None, match.group(1), match.group(2)
    return None, event, ""


def _name_candidates(event: str) -> list[str]:
    """Names for an event, from the shortest to the most specific."""
    _, base, modifiers = _split_event(event.strip())
    full = _normalized(event)
    alias = PERF_EVENT_NAMES.get(base.lower())
    if alias is None:
        return [full]
    return [alias, alias + (f"_{_normalized(modifiers)}" if modifiers else ""), full]


def perf_metric_names(events: Sequence[str]) -> list[str]:
    """phasekit metric names for perf event names, unique, in the same order (module doc).

    An event takes the shortest of its candidate names that no other event takes; events
    that still collide get ``_2``, ``_3``... suffixes.
    """
    candidates = [_name_candidates(e) for e in events]
    level = [0] * len(events)
    while True:
        names = [c[k] for c, k in zip(candidates, level, strict=True)]
        counts = Counter(names)
        bumped = False
        for j, name in enumerate(names):
            if counts[name] > 1 and level[j] < len(candidates[j]) - 1:
                level[j] += 1
                bumped = True
        if not bumped:
            break
    return unique_names(names)


def unique_names(names: Sequence[str]) -> list[str]:
    """``names`` made unique in order: a repeated name gets ``_2``, ``_3``... (a suffix that
    is itself one of the names is skipped)."""
    taken = set(names)
    out: list[str] = []
    for name in names:
        unique, n = name, 1
        while unique in out or (unique != name and unique in taken):
            n += 1
            unique = f"{name}_{n}"
        out.append(unique)
    return out


# --- periods --------------------------------------------------------------------------------
def nominal_period(seconds: np.ndarray) -> float | None:
    """The tool's nominal sampling period: the median step of ``seconds`` rounded to the
    shortest decimal within :data:`NOMINAL_TOLERANCE` of it (None for fewer than 2 samples)."""
    if len(seconds) < 2:
        return None
    median = float(np.median(np.diff(seconds)))
    if not (math.isfinite(median) and median > 0):
        return None
    for digits in range(1, 16):
        candidate = float(f"{median:.{digits}g}")
        if candidate > 0 and abs(candidate - median) <= NOMINAL_TOLERANCE * median:
            return candidate
    return median


def drop_partial_last(seconds: np.ndarray) -> bool:
    """Whether the last sample ends an interval shorter than the others (the run ended)."""
    if len(seconds) < 3:
        return False
    steps = np.diff(seconds)
    return bool(steps[-1] < (1 - REGULARITY_TOLERANCE) * float(np.median(steps[:-1])))


# --- parsing --------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Rows:
    """The counter lines of a perf stat file, one entry per line."""

    line: np.ndarray  # 1-based file line
    time: np.ndarray  # float seconds
    time_text: np.ndarray  # as printed
    aggr: np.ndarray  # CPU/core/socket/thread id, "" for none
    value: np.ndarray  # float, NaN for <not counted>/<not supported>
    marker: np.ndarray  # "", "<not counted>" or "<not supported>"
    unit: np.ndarray
    event: np.ndarray
    pct: np.ndarray


def _column(rows: pa.StructArray, name: str) -> np.ndarray:
    return np.asarray(rows.field(name).to_numpy(zero_copy_only=False), dtype=object)


def _floats(texts: pa.Array, lines: np.ndarray, where: str, what: str) -> np.ndarray:
    try:
        values = pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise InputError(f"cannot read {what} ({exc})", path=where) from None
    values = np.asarray(values, dtype=np.float64)
    bad = np.isinf(values)
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"{what} out of range; expected a finite number", path=where,
                         line=int(lines[k]))
    return values


def _separator(text: str, lines: pa.Array, where: str) -> tuple[str, pa.StructArray]:
    """The field separator (the one whose counter pattern matches most lines) and the matches."""
    candidates: set[str] = set()
    for k, match in enumerate(re.finditer(r"(?m)^[ \t]*\d+\.\d+([^\d\s.])", text)):
        candidates.add(match.group(1))
        if k >= 2000:  # enough lines to see every separator in use
            break
    best: tuple[int, str, pa.StructArray] | None = None
    for sep in sorted(candidates & set(_SEPARATORS)):
        matches = pc.extract_regex(lines, _counter_pattern(sep))
        count = len(matches) - matches.null_count
        if count and (best is None or count > best[0]):
            best = (count, sep, matches)
    if best is None:
        if _lines_matching(_NO_INTERVAL, text):
            raise InputError("perf stat output without interval times: record with "
                             "perf stat -I <ms> -x, ... to get a time series", path=where)
        raise InputError("no perf stat -I -x line found; expected lines like "
                         "'0.200299874,406.32,msec,task-clock,406320763,100.00,...' (interval "
                         "time, [CPU], value, unit, event, run time, enabled %, [metric])",
                         path=where)
    return best[1], best[2]


def _parse(text: str, where: str) -> tuple[_Rows, dict[str, Any]]:
    """Counter lines and facts about the file (separator, started-on, skipped lines)."""
    text_lines = text.split("\n")
    if text_lines and text_lines[-1] == "":
        text_lines.pop()
    lines = pa.array(text_lines, type=pa.large_string())
    sep, matches = _separator(text, lines, where)
    s = _escape(sep)
    is_counter = matches.is_valid().to_numpy(zero_copy_only=False)
    # perf prints the time with nine decimals: such a line that does not parse is a bad perf
    # line; any other line is the application's (or a comment) and is skipped.
    has_time = pc.match_substring_regex(lines, rf"^[ \t]*\d+\.\d{{9}}{s}").to_numpy(
        zero_copy_only=False)
    bad = has_time & ~is_counter
    if bad.any():  # unless they are metric-only continuation lines
        suspects = np.flatnonzero(bad)
        continuation = pc.match_substring_regex(lines.take(pa.array(suspects)),
                                                _continuation_pattern(sep))
        bad[suspects[continuation.to_numpy(zero_copy_only=False)]] = False
    if bad.any():
        k = int(np.argmax(bad))
        found = text_lines[k] if len(text_lines[k]) <= 80 else text_lines[k][:77] + "..."
        raise InputError(
            f"expected a perf stat -x{sep!r} counter line: interval time, [CPU/core/socket id"
            ", [CPU count]], value or <not counted>/<not supported>, unit, event, run time, "
            f"enabled %, [metric value, metric unit]; found {found!r}", path=where, line=k + 1)
    stripped = pc.utf8_trim_whitespace(lines)
    blank = pc.equal(stripped, "").to_numpy(zero_copy_only=False)
    comment = pc.starts_with(stripped, "#").to_numpy(zero_copy_only=False)
    foreign = ~is_counter & ~has_time & ~blank & ~comment
    facts: dict[str, Any] = {"separator": sep, "skipped_lines": int(foreign.sum())}
    started = [(k + 1, m.group(1)) for k in np.flatnonzero(comment)
               if (m := _STARTED_ON.match(text_lines[k].strip()))]
    if started:
        facts["started_on"] = started[0][1]
    facts["started_on_lines"] = [k for k, _ in started]
    if foreign.any():
        first = int(np.argmax(foreign))
        logger.info("%s: skipped %d lines that are not perf stat output (first: line %d)",
                    where, int(foreign.sum()), first + 1)

    index = np.flatnonzero(is_counter)
    rows = matches.filter(pa.array(is_counter))
    line_no = index + 1
    time_text = pc.utf8_trim_whitespace(rows.field("time"))
    time = _floats(time_text, line_no, where, "the interval time")
    value_text = rows.field("value")
    is_marker = pc.starts_with(value_text, "<")
    marker = np.asarray(pc.if_else(is_marker, value_text, pa.scalar("", pa.large_string()))
                        .to_numpy(zero_copy_only=False), dtype=object)
    numbers = pc.if_else(is_marker, pa.scalar(None, pa.large_string()), value_text)
    value = _floats(numbers, line_no, where, "a counter value")
    pct = _floats(rows.field("pct"), line_no, where, "the enabled percentage")
    event = rows.field("event")
    if pc.any(pc.ends_with(event, "%")).as_py():  # -r N: the variance follows the event
        event = pc.replace_substring_regex(event, rf"{s}[-+]?\d+(?:\.\d+)?%$", "")
    event = pc.utf8_trim_whitespace(event)
    return _Rows(line=line_no, time=time, time_text=np.asarray(
        time_text.to_numpy(zero_copy_only=False), dtype=object),
        aggr=_column(rows, "aggr"), value=value, marker=marker,
        unit=np.asarray(pc.utf8_trim_whitespace(rows.field("unit")).to_numpy(
            zero_copy_only=False), dtype=object),
        event=np.asarray(event.to_numpy(zero_copy_only=False), dtype=object), pct=pct), facts


def _aggregation_mode(ids: np.ndarray) -> str:
    given = np.flatnonzero(ids != "")
    first = str(ids[given[0]]) if len(given) else ""
    for mode, pattern in (("none", r""), ("cpu", r"CPU\d+"), ("socket", r"S\d+"),
                          ("die", r"S\d+-D\d+"), ("core", r"S\d+-D\d+-C\d+"),
                          ("cache", r"S\d+-D\d+-L\d+"), ("node", r"N\d+")):
        if re.fullmatch(pattern, first):
            return mode
    return "thread"


@dataclass(frozen=True)
class _Table:
    """Node totals: one row per interval, one column per event."""

    time: np.ndarray
    time_text: np.ndarray
    line: np.ndarray
    events: list[str]
    values: np.ndarray
    pct: np.ndarray
    units: dict[str, str]
    markers: dict[str, str]
    mode: str
    n_units: dict[str, int]


def _tabulate(rows: _Rows, where: str, facts: dict[str, Any]) -> _Table:
    """Check the order of the lines and sum per-CPU values to node totals per interval."""
    import pandas as pd

    back = np.flatnonzero(np.diff(rows.time) < 0)
    if len(back):
        k = int(back[0]) + 1
        appended = len(facts["started_on_lines"]) > 1
        raise InputError(
            f"the interval time goes back from {rows.time_text[k - 1]} to {rows.time_text[k]} "
            "s: a second perf run starts here ("
            + ("perf stat --append wrote several runs" if appended else "perf stat -r N repeats"
               " the run, or files were concatenated")
            + "); phasekit reads one run, keep the lines of one run", path=where,
            line=int(rows.line[k]))
    frame = pd.DataFrame({"time": rows.time, "aggr": rows.aggr, "event": rows.event,
                          "value": rows.value, "pct": rows.pct, "line": rows.line})
    duplicated = frame.duplicated(["time", "aggr", "event"]).to_numpy()
    if duplicated.any():
        k = int(np.argmax(duplicated))
        who = f" ({rows.aggr[k]})" if rows.aggr[k] else ""
        raise InputError(f"event {rows.event[k]!r}{who} appears twice at interval time "
                         f"{rows.time_text[k]} s; expected one line per event and interval",
                         path=where, line=int(rows.line[k]))
    events = list(pd.unique(rows.event))
    frame["missing"] = frame["value"].isna()
    frame.loc[frame["missing"], "pct"] = np.nan
    groups = frame.groupby(["time", "event"], sort=False)
    total = groups["value"].sum()
    missing = groups["missing"].any()
    count = groups["value"].size()
    pct = groups["pct"].mean()
    n_units = frame.groupby("event", sort=False)["aggr"].nunique()
    expected = n_units.reindex(total.index.get_level_values("event")).to_numpy()
    total = total.where(~missing.to_numpy() & (count.to_numpy() == expected))
    values = total.unstack("event").reindex(columns=events)
    pct_table = pct.unstack("event").reindex(columns=events, index=values.index)
    first = frame.groupby("time", sort=True).agg(line=("line", "min"))
    time_text = pd.Series(rows.time_text).groupby(rows.time).first()
    markers: dict[str, str] = {}
    units: dict[str, str] = {}
    for event in events:
        mask = rows.event == event
        kinds = set(pd.unique(rows.marker[mask])) - {""}
        if kinds:
            markers[event] = NOT_SUPPORTED if NOT_SUPPORTED in kinds else NOT_COUNTED
        given = rows.unit[mask]
        given = given[given != ""]
        if len(given):
            units[event] = str(given[0])
    return _Table(time=values.index.to_numpy(dtype=np.float64),
                  time_text=time_text.reindex(values.index).to_numpy(dtype=object),
                  line=first["line"].reindex(values.index).to_numpy(dtype=np.int64),
                  events=events, values=values.to_numpy(dtype=np.float64),
                  pct=pct_table.to_numpy(dtype=np.float64), units=units, markers=markers,
                  mode=_aggregation_mode(rows.aggr), n_units={e: int(n) for e, n in
                                                              n_units.items()})


def _summary(values: np.ndarray) -> dict[str, float | None]:
    finite = values[np.isfinite(values)]
    if not finite.size:
        return {"min": None, "mean": None}
    return {"min": float(finite.min()), "mean": float(finite.mean())}


def read_perfstat_profile(path: str | Path | IO[bytes], *,
                          metrics: Sequence[str] | str | None = None) -> Profile:
    """Read ``perf stat -I <ms> -x,`` output (a ``-o`` file or captured stderr, or a binary
    stream of it) as a Profile.

    One metric per event, node totals (per-CPU values summed), perf's interval times, the
    period inferred (module docstring for every choice). ``metrics`` selects and orders
    metrics by their phasekit names. Bad content raises :class:`InputError` naming the file
    and the line; events without any value are dropped with a :class:`PhasekitWarning`.

    Example::

        profile = read_perfstat_profile("perf.csv")   # perf stat -I 100 -x, -a -o perf.csv ...
    """
    import pandas as pd

    where = _where(path)
    text = read_text(path, "perf stat -I -x output")
    rows, facts = _parse(text, where)
    table = _tabulate(rows, where, facts)

    keep = [j for j in range(len(table.events)) if np.isfinite(table.values[:, j]).any()]
    dropped = {e: table.markers.get(e, "no value") for j, e in enumerate(table.events)
               if j not in keep}
    if not keep:
        raise InputError("no event has a value: perf printed "
                         + ", ".join(f"{m} for {e}" for e, m in dropped.items())
                         + "; expected at least one counted event", path=where)
    if dropped:
        warnings.warn(f"{where}: dropped events without any value: "
                      + ", ".join(f"{e} ({m})" for e, m in dropped.items()),
                      PhasekitWarning, stacklevel=3)
    events = [table.events[j] for j in keep]
    names = perf_metric_names(events)
    values = table.values[:, keep].copy()
    pct = table.pct[:, keep]
    units: dict[str, str] = {}
    for j, (event, name) in enumerate(zip(events, names, strict=True)):
        unit = table.units.get(event)
        if unit in _UNITS:
            new_unit, factor = _UNITS[unit]
            values[:, j] *= factor
            units[name] = new_unit
        elif unit:
            units[name] = unit
    sources = {name: (event,) for name, event in zip(names, events, strict=True)
               if name != event}
    chosen = select_metrics(names, metrics, where, sources)

    time, time_text, line = table.time, table.time_text, table.line
    partial = drop_partial_last(time)
    if partial:
        last = float(time[-1])
        time, time_text, line = time[:-1], time_text[:-1], line[:-1]
        values, pct = values[:-1], pct[:-1]
    selected = [names[j] for j in chosen]
    pct_names = [f"\x00enabled:{name}" for name in selected]
    times = TimeColumn(time - time[0] if len(time) else time, float(time[0]) if len(time)
                       else 0.0, pd.Series(time_text), 2e-9)
    loc = RowLocator(where, line)
    period = nominal_period(time)
    profile = build_profile(
        times=times, values=np.column_stack([values[:, chosen], pct[:, chosen]]),
        metrics=selected + pct_names, units={m: units[m] for m in selected if m in units},
        loc=loc, time_name="interval time",
        metadata=None if period is None else {"period": period}, stacklevel=2)
    k = len(selected)
    grid_pct = profile.values[:, k:]
    perf_meta: dict[str, Any] = {
        "format": "perf stat -I -x",
        "separator": facts["separator"],
        "events": {name: events[j] for name, j in zip(selected, chosen, strict=True)},
        "aggregation": {"mode": table.mode, "rule": "sum",
                        "n_units": max(table.n_units.values()) if table.n_units else 0},
        "enabled_pct": {name: _summary(grid_pct[:, i]) for i, name in enumerate(selected)},
    }
    multiplexed = {name: [None if not np.isfinite(v) else float(v) for v in grid_pct[:, i]]
                   for i, name in enumerate(selected)
                   if (np.nan_to_num(grid_pct[:, i], nan=100.0) < 100.0).any()}
    if multiplexed:
        perf_meta["enabled_pct_series"] = multiplexed
    if "started_on" in facts:
        perf_meta["started_on"] = facts["started_on"]
    if dropped:
        perf_meta["dropped"] = dropped
    if facts["skipped_lines"]:
        perf_meta["skipped_lines"] = facts["skipped_lines"]
    if partial:
        perf_meta["dropped_partial_interval_s"] = last
    renamed = {name: sources[name][0] for name in selected if name in sources}
    return profile.replace(values=profile.values[:, :k], metrics=tuple(selected),
                           meta={**profile.meta, "perf_stat": perf_meta,
                                 **({SOURCE_NAMES_KEY: renamed} if renamed else {})})
