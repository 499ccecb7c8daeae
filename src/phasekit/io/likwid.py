"""LIKWID ``likwid-perfctr -t <interval>`` timeline output as a Profile.

The format, from the sources
----------------------------
In timeline mode ``likwid-perfctr`` (``src/applications/likwid-perfctr.lua`` of LIKWID 5.x,
GPL-3.0; read in the fork breiters/likwid at commit ae1f94da and in a later upstream version
with ROCm support, identical in these lines) prints, before measuring, on **stdout**::

    # HWThreads: 0|1|2|3
    # GID|MetricsCount|CpuCount|Total runtime [s]|Runtime (RDTSC) [s]|...|CPI|...

one ``# GID|...`` line per group given with ``-g``, listing the group's derived metrics
(``# GID|EventCount|CpuCount|Total runtime [s]|EVENT|...`` for a custom event set without
metrics). Then, after every interval, one line on **stderr** (``print_stderr``) built as
``table.concat(outList, timeline_delim)``: the id of the group measured in that interval, the
number of metrics (or events), the number of CPUs, the time since the start of the measurement
in seconds (``likwid.getClock(start, stop)``, ``start`` taken once), then the values of the
last interval from ``likwid.getLastMetrics()`` (or ``getLastResults()``), **metric by metric,
CPU by CPU within a metric** (``for i,l1 in pairs(results[gid]) do for j,value in pairs(l1)``).
``timeline_delim`` is a space, or a comma with ``-O``; with ``-o FILE`` both the header (then
delimited like the data) and the lines go to the file. Values are Lua ``tostring`` numbers;
LIKWID prints ``-`` (its ``nan2value``) for a metric it cannot compute. With several groups
``likwid-perfctr`` switches group every interval, so the lines alternate between group ids.

Older versions print the same lines with other headers: LIKWID 4.1 ``# CORES: 0|1|2|3`` and
space-delimited lines (a real excerpt is in RRZE-HPC/likwid issue #49, 2016), LIKWID 4.3
``# Cores: 0|1|2|3``, the ``# GID|MetricsCount|...`` header and comma-delimited lines with
``-`` values (issue #206, 2019). The metric-major order is confirmed by the real line of issue
#206 (the ``-`` of an idle CPU recur at the same position in every metric).

What phasekit makes of it (our choices)
---------------------------------------
- Sample times are the ``Total runtime [s]`` column; the values are those of the interval
  ending then. Header and data lines may come in one file (``likwid-perfctr ... > out 2>&1``)
  interleaved with the application's output, which is skipped. Without a ``# GID`` header
  for the group the metric names are unknown: InputError saying to capture stdout as well.
- Per-CPU values become node values: **sum** for extensive quantities (raw event counts, data
  volumes and bandwidths ``[MBytes/s]`` ``[GBytes]``, work rates ``[MFLOP/s]`` ``[MUOPS/s]``,
  energy ``[J]`` and power ``[W]``), **mean** for everything else (CPI and other ratios and
  rates per instruction, ``Clock [MHz]``, runtimes ``[s]``, ``[%]``, temperatures). LIKWID
  measures socket-level (Uncore, RAPL) metrics on one CPU per socket and reports 0 on the
  others, so their sum is the socket total. ``-`` (and ``nan``, ``inf``) are missing values,
  ignored by the sum and the mean (a CPU idle for a whole interval has no CPI); a metric
  missing on every CPU is NaN.
- With several groups, one group is read (the first, or ``group=``), with a warning: each
  group is sampled every ``n_groups`` intervals.
- Names: ``CPI`` -> ``cpi``, ``IPC`` -> ``ipc``, the fixed counters ``INSTR_RETIRED_ANY`` ->
  ``instructions``, ``CPU_CLK_UNHALTED_CORE`` -> ``cycles``, ``CPU_CLK_UNHALTED_REF`` ->
  ``ref_cycles``; other names are kept with every run of non-alphanumeric characters turned
  into ``_`` and the ``[unit]`` split off (``DP [MFLOP/s]`` -> ``DP``, ``Runtime (RDTSC) [s]``
  -> ``Runtime_RDTSC``); LIKWID's names are kept in ``meta["source_names"]`` and still name
  the metric (``--metric CPI``, ``--metric "Runtime (RDTSC) [s]"``). Units with a decimal
  prefix (LIKWID's kB, MB, GB are powers of 1000) are converted: ``MBytes/s`` -> ``B/s``,
  ``GBytes`` -> ``B``, ``MFLOP/s`` -> ``FLOP/s``, ``MHz`` -> ``Hz``...
- As for perf (:mod:`phasekit.io.perfstat`): a shorter last interval is dropped, the period is
  the median step rounded to the shortest decimal within 1 %, irregular steps are resampled
  with a warning and missing intervals become NaN rows.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io.csv import RowLocator, TimeColumn, build_profile, parse_column_name, select_metrics
from phasekit.io.inputs import source_name
from phasekit.io.perfstat import drop_partial_last, nominal_period, read_text, unique_names
from phasekit.profile import SOURCE_NAMES_KEY, Profile

__all__ = [
    "LIKWID_NAMES",
    "LikwidGroup",
    "LikwidTimeline",
    "likwid_metric_name",
    "looks_like_likwid",
    "parse_likwid_timeline",
    "read_likwid_profile",
]

#: LIKWID metric and event names with an obvious phasekit name.
LIKWID_NAMES: dict[str, str] = {
    "CPI": "cpi", "IPC": "ipc", "INSTR_RETIRED_ANY": "instructions",
    "CPU_CLK_UNHALTED_CORE": "cycles", "CPU_CLK_UNHALTED_REF": "ref_cycles",
}
_PREFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_PREFIXED_UNIT = re.compile(r"([kKMGT])(Bytes|Byte|B|FLOP|FLOPS|UOPS|IOPS|Hz)(/s)?")
_BASE_UNITS = {"Bytes": "B", "Byte": "B", "B": "B", "FLOP": "FLOP", "FLOPS": "FLOP",
               "UOPS": "UOPS", "IOPS": "IOPS", "Hz": "Hz"}
_SUM_UNIT = re.compile(r"[kKMGT]?(?:Bytes|Byte|B|FLOP|FLOPS|UOPS|IOPS)(?:/s)?|[mkM]?[JW]")
_MEAN_EVENT = re.compile(r".*(?:TEMP|VOLTAGE|VOLT).*", re.IGNORECASE)
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]+")
_HEADER = re.compile(r"[ \t]*#[ \t]*GID(?P<d>[|,\t ])(?P<kind>MetricsCount|EventCount)(?P=d)"
                     r"CpuCount(?P=d)Total runtime \[s\](?:(?P=d)(?P<names>.*))?")
_CPUS = re.compile(r"[ \t]*#?[ \t]*(?:HWThreads|CORES|Cores)[ \t]*[:,| \t][ \t]*(?P<list>.*)")
_DATA = r"^[ \t]*\d+[ ,]+\d+[ ,]+\d+[ ,]+[-+]?(?:\d|\.\d)"
_MISSING = {"-", "nan", "-nan", "+nan", "inf", "-inf", "+inf", "NaN", "-NaN"}


def looks_like_likwid(head: str) -> bool:
    """Whether the first few KB of a file look like ``likwid-perfctr -t`` output: a
    ``# GID|MetricsCount|...`` header, or a ``# HWThreads``/``# CORES`` line and timeline
    lines (so that the reader can say what is missing)."""
    lines = [line for line in head.split("\n", 400)[:400] if len(line) <= 100_000]
    if any(_HEADER.match(line) for line in lines):
        return True
    has_cpus = any(re.match(r"[ \t]*#[ \t]*(?:HWThreads|CORES|Cores)[ \t]*[:,|]", line)
                   for line in lines)
    return has_cpus and any(re.match(_DATA, line) for line in lines)


# --- names and units ------------------------------------------------------------------------
def likwid_metric_name(header: str) -> tuple[str, str | None]:
    """``(phasekit name, LIKWID unit)`` of a header cell such as ``DP [MFLOP/s]``."""
    name, unit = parse_column_name(header)
    alias = LIKWID_NAMES.get(name.strip())
    return (alias if alias is not None else (_NON_ALNUM.sub("_", name).strip("_") or "metric"),
            unit)


def _source_names(header: str, name: str) -> tuple[str, ...]:
    """The names LIKWID gives a metric that phasekit renamed to ``name``: the header cell
    without its unit (``Runtime (RDTSC)``, ``CPI``) and with it (``DP [MFLOP/s]``)."""
    given = (parse_column_name(header)[0], header.strip())
    return tuple(n for n in dict.fromkeys(given) if n and n != name)


def _unit(unit: str | None) -> tuple[str | None, float]:
    """phasekit unit and factor for a LIKWID unit (decimal prefixes removed)."""
    if not unit:
        return None, 1.0
    match = _PREFIXED_UNIT.fullmatch(unit)
    if match is None:
        return unit, 1.0
    base = _BASE_UNITS[match.group(2)] + (match.group(3) or "")
    return base, _PREFIXES[match.group(1)]


def _rule(name: str, unit: str | None, events: bool) -> str:
    """``"sum"`` or ``"mean"`` for aggregating a metric over CPUs (module docstring)."""
    if events:
        return "mean" if _MEAN_EVENT.fullmatch(name) else "sum"
    return "sum" if unit and _SUM_UNIT.fullmatch(unit) else "mean"


# --- parsing --------------------------------------------------------------------------------
@dataclass(frozen=True)
class LikwidGroup:
    """The samples of one group: ``values[i, m, c]`` is metric ``m`` on CPU ``c`` in sample i."""

    gid: int
    kind: str  # "MetricsCount" or "EventCount"
    names: tuple[str, ...]  # header cells, e.g. "DP [MFLOP/s]"
    header_line: int
    times: np.ndarray  # "Total runtime [s]" of every sample
    values: np.ndarray  # (n_samples, n_metrics, n_cpus), NaN for "-"
    lines: np.ndarray  # file line of every sample


@dataclass(frozen=True)
class LikwidTimeline:
    """What a timeline file holds: the CPU list and the groups with samples."""

    cpus: tuple[int, ...] | None
    groups: dict[int, LikwidGroup]
    skipped_lines: int = 0
    headers: dict[int, tuple[str, tuple[str, ...] | None, int]] = field(default_factory=dict)


def _line_error(where: str, line: int, message: str) -> InputError:
    return InputError(message, path=where, line=line)


def parse_likwid_timeline(text: str, where: str) -> LikwidTimeline:
    """Parse ``likwid-perfctr -t`` output (see the module docstring); InputError on bad lines."""
    import pandas as pd

    text_lines = text.split("\n")
    lines = pa.array(text_lines, type=pa.large_string())
    stripped = pc.utf8_trim_whitespace(lines)
    comment = pc.starts_with(stripped, "#").to_numpy(zero_copy_only=False)
    is_data = pc.match_substring_regex(lines, _DATA).to_numpy(zero_copy_only=False)

    cpus: tuple[int, ...] | None = None
    headers: dict[int, tuple[str, tuple[str, ...] | None, int]] = {}
    for k in np.flatnonzero(comment | pc.match_substring_regex(
            lines, r"^[ \t]*(?:HWThreads|CORES|Cores)[ \t]*:").to_numpy(zero_copy_only=False)):
        line = text_lines[k]
        match = _HEADER.match(line)
        if match:
            names_text = match.group("names") or ""
            delim = match.group("d")
            names = (tuple(c.strip() for c in names_text.split(delim)) if delim != " "
                     else None) if names_text.strip() else ()
            if names is not None and names and names[-1] == "":
                names = names[:-1]
            headers[len(headers) + 1] = (match.group("kind"), names, int(k) + 1)
            continue
        match = _CPUS.match(line)
        if match and cpus is None:
            items = [c for c in re.split(r"[|,\s]+", match.group("list").strip()) if c]
            if items and all(c.isdigit() for c in items):
                cpus = tuple(int(c) for c in items)
    blank = pc.equal(stripped, "").to_numpy(zero_copy_only=False)
    skipped = int((~is_data & ~comment & ~blank).sum())

    index = np.flatnonzero(is_data)
    if not len(index):
        if headers:
            raise InputError("no timeline lines: the file has the '# GID|...' header but no "
                             "samples; likwid-perfctr prints them on stderr, capture both "
                             "streams (likwid-perfctr -t ... > out.txt 2>&1)", path=where)
        raise InputError("no likwid-perfctr timeline lines; expected lines of group id, "
                         "count, CPU count, time and values, after a '# GID|MetricsCount|"
                         "CpuCount|Total runtime [s]|...' header", path=where)
    rows = pc.utf8_trim_whitespace(lines.take(pa.array(index)))
    tokens = pc.split_pattern_regex(rows, r"[ ,]+")
    lengths = pc.list_value_length(tokens).to_numpy(zero_copy_only=False).astype(np.int64)
    flat = pc.list_flatten(tokens).to_numpy(zero_copy_only=False).astype(object)
    offsets = np.concatenate(([0], np.cumsum(lengths)))[:-1]
    missing = np.isin(flat, list(_MISSING))
    numbers = pd.to_numeric(pd.Series(np.where(missing, "nan", flat)), errors="coerce"
                            ).to_numpy(dtype=np.float64, copy=True)
    bad = np.isnan(numbers) & ~missing
    if bad.any():
        j = int(np.argmax(bad))
        row = int(np.searchsorted(offsets, j, side="right")) - 1
        raise _line_error(where, int(index[row]) + 1, f"expected a number or '-', found "
                          f"{str(flat[j])[:40]!r}")
    numbers[np.isinf(numbers)] = np.nan
    head = numbers[offsets[:, None] + np.arange(4)]
    line_no = index + 1
    gid, count, ncpu, times = head[:, 0], head[:, 1], head[:, 2], head[:, 3]
    unreadable = (np.isnan(head).any(axis=1) | (head[:, :3] > 1e9).any(axis=1)
                  | (count < 1) | (ncpu < 1))
    expected = np.where(unreadable, -1.0, 4 + count * ncpu)
    wrong = unreadable | (expected != lengths)
    if wrong.any():
        r = int(np.argmax(wrong))
        if unreadable[r]:
            message = ("expected the group id, the number of metrics and of CPUs (positive "
                       "integers) and the time in seconds as the first four fields")
        else:
            message = (f"expected 4 + {int(count[r])} x {int(ncpu[r])} = {int(expected[r])} "
                       f"fields (group id, count, CPU count, time, then one value per metric "
                       f"and CPU), found {int(lengths[r])}")
        raise _line_error(where, int(line_no[r]), message)

    groups: dict[int, LikwidGroup] = {}
    for g in pd.unique(gid):
        member = np.flatnonzero(gid == g)
        first = int(member[0])
        if int(g) not in headers:
            raise _line_error(where, int(line_no[first]), (
                f"no '# GID|MetricsCount|CpuCount|Total runtime [s]|...' header for group "
                f"{int(g)}, so the metric names are unknown: likwid-perfctr prints the header "
                "on stdout and the samples on stderr, capture both "
                "(likwid-perfctr -t ... > out.txt 2>&1)"))
        kind, names, header_line = headers[int(g)]
        n_metrics, n_cpus = int(count[first]), int(ncpu[first])
        odd = (count[member] != n_metrics) | (ncpu[member] != n_cpus)
        if odd.any():
            r = int(member[int(np.argmax(odd))])
            raise _line_error(where, int(line_no[r]), (
                f"group {int(g)} has {int(count[r])} values for {int(ncpu[r])} CPUs here but "
                f"{n_metrics} for {n_cpus} at line {int(line_no[first])}"))
        if names is None:
            names = tuple(f"metric_{m + 1}" for m in range(n_metrics))
            warnings.warn(f"{where}: the header of group {int(g)} (line {header_line}) is "
                          "space-delimited and cannot be split into names; metrics are named "
                          "metric_1...", PhasekitWarning, stacklevel=3)
        if len(names) != n_metrics:
            raise _line_error(where, int(line_no[first]), (
                f"group {int(g)} has {len(names)} names in its header (line {header_line}) "
                f"but this line holds {n_metrics} values per CPU"))
        if cpus is not None and len(cpus) != n_cpus:
            raise _line_error(where, int(line_no[first]), (
                f"the CPU list has {len(cpus)} CPUs but this line holds values for {n_cpus}"))
        width = n_metrics * n_cpus
        block = numbers[offsets[member][:, None] + 4 + np.arange(width)]
        groups[int(g)] = LikwidGroup(
            gid=int(g), kind=kind, names=names, header_line=header_line,
            times=times[member], values=block.reshape(len(member), n_metrics, n_cpus),
            lines=line_no[member])
    return LikwidTimeline(cpus=cpus, groups=groups, skipped_lines=skipped, headers=headers)


def _aggregate(values: np.ndarray, rule: str) -> np.ndarray:
    """Sum or mean over CPUs (last axis) ignoring NaN; NaN where every CPU is NaN."""
    valid = np.isfinite(values)
    total = np.where(valid, values, 0.0).sum(axis=-1)
    n = valid.sum(axis=-1)
    out = total if rule == "sum" else total / np.maximum(n, 1)
    return np.where(n > 0, out, np.nan)


def read_likwid_profile(path: str | Path | IO[bytes], *,
                        metrics: Sequence[str] | str | None = None,
                        group: int | None = None) -> Profile:
    """Read ``likwid-perfctr -t`` timeline output (a file or a binary stream) as a Profile of
    node values.

    ``group`` chooses the group (its GID) when the file holds several (default: the first,
    with a warning). ``metrics`` selects and orders metrics by their phasekit names. Per-CPU
    values are summed or averaged (module docstring); bad content raises :class:`InputError`
    naming the file and the line.

    Example::

        profile = read_likwid_profile("timeline.txt")  # likwid-perfctr -C 0-3 -g MEM -t 100ms
    """
    import pandas as pd

    where = str(Path(path)) if isinstance(path, str | os.PathLike) else source_name(path)
    text = read_text(path, "likwid-perfctr timeline output")
    timeline = parse_likwid_timeline(text, where)
    gids = list(timeline.groups)
    if group is None:
        gid = gids[0]
        if len(gids) > 1:
            warnings.warn(f"{where}: the file holds groups {', '.join(map(str, gids))} "
                          f"measured in turn; read group {gid} (read_likwid_profile(path, "
                          "group=GID) reads another)", PhasekitWarning, stacklevel=2)
    elif group in timeline.groups:
        gid = group
    else:
        raise UsageError(f"no group {group} in {where}; it has groups "
                         + ", ".join(map(str, gids)))
    data = timeline.groups[gid]
    events = data.kind == "EventCount"
    names_units = [likwid_metric_name(h) for h in data.names]
    names = unique_names([n for n, _ in names_units])
    rules = {name: _rule(header if events else parse_column_name(header)[0], unit, events)
             for name, header, (_, unit) in zip(names, data.names, names_units, strict=True)}
    values = np.empty((len(data.times), len(names)))
    units: dict[str, str] = {}
    for m, (name, (_, unit)) in enumerate(zip(names, names_units, strict=True)):
        new_unit, factor = _unit(unit)
        values[:, m] = _aggregate(data.values[:, m, :], rules[name]) * factor
        if new_unit:
            units[name] = new_unit
    sources = {name: _source_names(header, name)
               for name, header in zip(names, data.names, strict=True)}
    sources = {name: given for name, given in sources.items() if given}
    chosen = select_metrics(names, metrics, where, sources)

    times, lines = data.times, data.lines
    back = np.flatnonzero(np.diff(times) <= 0)
    if len(back):
        k = int(back[0]) + 1
        raise InputError(f"the time goes from {times[k - 1]:.6g} to {times[k]:.6g} s: a second "
                         "run starts here or lines were repeated; phasekit reads one run with "
                         "increasing times", path=where, line=int(lines[k]))
    partial = drop_partial_last(times)
    if partial:
        last = float(times[-1])
        times, lines, values = times[:-1], lines[:-1], values[:-1]
    selected = [names[j] for j in chosen]
    column = TimeColumn(times - times[0], float(times[0]), pd.Series(times), 1e-9)
    period = nominal_period(times)
    profile = build_profile(
        times=column, values=values[:, chosen], metrics=selected,
        units={m: units[m] for m in selected if m in units}, loc=RowLocator(where, lines),
        time_name="Total runtime [s]",
        metadata=None if period is None else {"period": period}, stacklevel=2)
    meta: dict[str, Any] = {
        "format": "likwid-perfctr -t",
        "group": gid, "groups_in_file": gids, "kind": "events" if events else "metrics",
        "cpus": list(timeline.cpus) if timeline.cpus is not None else int(
            data.values.shape[2]),
        "names": {name: data.names[j] for name, j in zip(selected, chosen, strict=True)},
        "aggregation": {name: rules[name] for name in selected},
    }
    if timeline.skipped_lines:
        meta["skipped_lines"] = timeline.skipped_lines
    if partial:
        meta["dropped_partial_interval_s"] = last
    renamed = {name: list(sources[name]) for name in selected if name in sources}
    return profile.replace(meta={**profile.meta, "likwid": meta,
                                 **({SOURCE_NAMES_KEY: renamed} if renamed else {})})
