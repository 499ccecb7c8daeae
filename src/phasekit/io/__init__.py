"""Reading and writing phasekit's input models; one module per format.

Profiles: :func:`read_profile` and :func:`write_profile` pick the format from the file name
(:data:`PROFILE_SUFFIXES`): CSV (``.csv``, ``.tsv``, gzip-compressed ``.csv.gz``/``.tsv.gz``)
or Parquet (``.parquet``, ``.pq``). Every writer is atomic (:mod:`phasekit.io.atomic`).
:func:`read_profile` also reads the output of ``perf stat -I -x,`` and ``likwid-perfctr -t``,
recognized by content (:func:`sniff_profile_format`) when the name is ambiguous.

Traces: :func:`read_trace` reads a :class:`~phasekit.trace.Trace` from a Paraver trace
(``.prv``, ``.prv.gz``; :mod:`phasekit.io.paraver`) or an OTF2 archive (its ``.otf2`` anchor
file; :mod:`phasekit.io.otf2`, the ``otf2`` extra). :func:`is_trace` tells a trace from a
profile by its name (:data:`TRACE_SUFFIXES`).
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from phasekit.errors import InputError, UsageError
from phasekit.io.atomic import atomic_path, atomic_write_bytes, atomic_write_text
from phasekit.io.inputs import HINTS, content_kind, input_file, looks_like
from phasekit.io.table import read_csv_table
from phasekit.profile import Profile

if TYPE_CHECKING:
    from phasekit.trace import Trace

__all__ = [
    "CSV_SUFFIXES",
    "PROFILE_SUFFIXES",
    "TRACE_SUFFIXES",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "is_csv",
    "is_trace",
    "profile_format",
    "read_csv_table",
    "read_profile",
    "read_trace",
    "sniff_profile_format",
    "trace_format",
    "write_profile",
]

#: File name endings of profile files and their format (compared case-insensitively).
_PROFILE_FORMATS: dict[str, str] = {
    ".csv": "csv", ".csv.gz": "csv", ".tsv": "csv", ".tsv.gz": "csv",
    ".parquet": "parquet", ".pq": "parquet",
    ".arrows": "arrow", ".arrow": "arrow",
}
#: The file name endings :func:`read_profile` and :func:`write_profile` understand.
PROFILE_SUFFIXES: tuple[str, ...] = tuple(_PROFILE_FORMATS)

# format -> (module, reader, writer or None); modules are imported on first use.
_PROFILE_IO: dict[str, tuple[str, str, str | None]] = {
    "csv": ("phasekit.io.csv", "read_csv_profile", "write_csv_profile"),
    "parquet": ("phasekit.io.parquet", "read_parquet_profile", "write_parquet_profile"),
    "arrow": ("phasekit.io.arrow", "read_arrow_profile", "write_arrow_profile"),
    "perfstat": ("phasekit.io.perfstat", "read_perfstat_profile", None),
    "likwid": ("phasekit.io.likwid", "read_likwid_profile", None),
}
#: Read-only formats recognized by content: format -> (module, test of the file's first text).
_PROFILE_SNIFFERS: dict[str, tuple[str, str]] = {
    "perfstat": ("phasekit.io.perfstat", "looks_like_perfstat"),
    "likwid": ("phasekit.io.likwid", "looks_like_likwid"),
}
#: Names whose content is sniffed (as are names without a suffix); others go by their suffix.
_SNIFFED_SUFFIXES: tuple[str, ...] = (".csv", ".csv.gz", ".txt", ".log", ".out")
_SNIFF_BYTES = 16384


def profile_format(path: str | os.PathLike[str]) -> str:
    """The profile format of ``path`` from its name: ``"csv"`` or ``"parquet"``.

    Raises UsageError for a name with no known profile suffix.
    """
    name = Path(path).name.lower()
    for suffix in sorted(_PROFILE_FORMATS, key=len, reverse=True):
        if name.endswith(suffix) and len(name) > len(suffix):
            return _PROFILE_FORMATS[suffix]
    raise UsageError(f"cannot tell the profile format of {os.fspath(path)!r} from its name; "
                     "expected a name ending in " + ", ".join(PROFILE_SUFFIXES))


def _function(fmt: str, which: int) -> Callable[..., object]:
    if fmt not in _PROFILE_IO:
        raise UsageError(f"unknown profile format {fmt!r}; expected one of "
                         + ", ".join(_PROFILE_IO))
    entry = _PROFILE_IO[fmt]
    if entry[which] is None:
        raise UsageError(f"{fmt} profiles can be read but not written; write CSV or Parquet")
    return getattr(import_module(entry[0]), str(entry[which]))


def sniff_profile_format(path: str | os.PathLike[str]) -> str | None:
    """The tool-output format the first bytes of ``path`` look like (``"perfstat"``,
    ``"likwid"``), or None (also for a file that cannot be read: the reader says why)."""
    try:
        with open(path, "rb") as file:
            head = file.read(_SNIFF_BYTES)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as file:
                head = file.read(_SNIFF_BYTES)
    except (OSError, EOFError, zlib.error):
        return None
    text = head.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    for fmt, (module, function) in _PROFILE_SNIFFERS.items():
        if getattr(import_module(module), function)(text):
            return fmt
    return None


def _read_format(path: str | os.PathLike[str]) -> str:
    """The format to read ``path`` with: sniffed for ambiguous names, else from the name;
    InputError when neither tells (saying what the content looks like)."""
    input_file(path, "a profile")
    name = Path(path).name.lower()
    if name.endswith(_SNIFFED_SUFFIXES) or not Path(name).suffix:
        sniffed = sniff_profile_format(path)
        if sniffed is not None:
            return sniffed
    if any(name.endswith(s) and len(name) > len(s) for s in _PROFILE_FORMATS):
        return profile_format(path)
    kind = content_kind(path)
    if kind == "profile_csv":
        return "csv"
    if kind == "parquet":
        return "parquet"
    hint = HINTS.get(kind or "")
    raise InputError(
        (f"this looks like {hint}" if hint else "not a profile phasekit can read")
        + "; expected a profile: CSV, Parquet, Arrow, perf stat -I -x or likwid-perfctr -t "
        "output (named " + ", ".join(PROFILE_SUFFIXES) + ")", path=os.fspath(path))


def read_profile(path: str | os.PathLike[str], *, metrics: Sequence[str] | str | None = None,
                 format: str | None = None, period: float | None = None) -> Profile:
    """Read a Profile from a CSV or Parquet file, chosen by the file name (or ``format``).

    Files named ``.csv``, ``.txt``, ``.log``, ``.out`` or without a suffix are first sniffed
    for ``perf stat -I -x`` and ``likwid-perfctr -t`` output (:mod:`phasekit.io.perfstat`,
    :mod:`phasekit.io.likwid`); other ``.csv`` content goes to the CSV reader, other content
    of the remaining names is a UsageError (their name does not say CSV).

    ``metrics`` selects and orders the metrics to read (UsageError listing the available ones
    when one is missing). Irregular sampling is resampled onto a regular grid with a
    :class:`~phasekit.errors.PhasekitWarning`; missing samples are NaN. Bad content raises
    :class:`~phasekit.errors.InputError` naming the file and the line or column.

    ``period`` (seconds) reads a CSV without a time column: one row every ``period``
    (:func:`~phasekit.io.csv.read_csv_profile`); other formats carry their times.

    Example::

        profile = read_profile("run.csv", metrics=["dram_rd", "dram_wr"])
        mg = read_profile("MG.csv", period=0.2)    # perf stat rows every 200 ms, no time
    """
    fmt = format or _read_format(path)
    if period is None:
        profile = _function(fmt, 1)(Path(path), metrics=metrics)
    elif fmt == "csv":
        profile = _function(fmt, 1)(Path(path), metrics=metrics, period=period)
    else:
        raise UsageError(f"{os.fspath(path)}: a period is given only to a CSV profile without "
                         f"a time column; this is a {fmt} file, which has its own times")
    assert isinstance(profile, Profile)
    return profile


def write_profile(profile: Profile, path: str | os.PathLike[str], *,
                  format: str | None = None) -> None:
    """Write ``profile`` atomically as CSV or Parquet, chosen by the file name (or ``format``).

    The file keeps the period, start, units, node and meta, so :func:`read_profile` gives the
    same profile back.
    """
    if not isinstance(profile, Profile):
        raise UsageError(f"write_profile expects a Profile, got {type(profile).__name__}")
    writer = _function(format or profile_format(path), 2)
    writer(profile, Path(path))


# --- traces ----------------------------------------------------------------------------------
#: File name endings of trace files and their format (compared case-insensitively).
_TRACE_FORMATS: dict[str, str] = {".prv": "paraver", ".prv.gz": "paraver", ".otf2": "otf2"}
#: The file name endings :func:`read_trace` understands.
TRACE_SUFFIXES: tuple[str, ...] = tuple(_TRACE_FORMATS)
_TRACE_IO: dict[str, tuple[str, str]] = {
    "paraver": ("phasekit.io.paraver", "read_paraver"),
    "otf2": ("phasekit.io.otf2", "read_otf2"),
}


def trace_format(path: str | os.PathLike[str]) -> str | None:
    """``"paraver"`` or ``"otf2"`` from the name of ``path`` (an OTF2 archive directory
    holding one ``.otf2`` anchor counts as OTF2), or None when the name is not a trace's."""
    p = Path(path)
    name = p.name.lower()
    for suffix in sorted(_TRACE_FORMATS, key=len, reverse=True):
        if name.endswith(suffix) and len(name) > len(suffix):
            return _TRACE_FORMATS[suffix]
    if p.is_dir() and len(list(p.glob("*.otf2"))) == 1:
        return "otf2"
    return None


def is_trace(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a trace (Paraver or OTF2) rather than a profile."""
    return trace_format(path) is not None


def read_trace(path: str | os.PathLike[str], *, format: str | None = None,
               **kwargs: object) -> Trace:
    """Read a Trace from a Paraver (.prv, .prv.gz) or OTF2 (.otf2 anchor) trace.

    Keyword arguments go to the format's reader (:func:`phasekit.io.paraver.read_paraver`:
    ``application``, ``pcf``, ``row``; :func:`phasekit.io.otf2.read_otf2`). Bad content raises
    :class:`~phasekit.errors.InputError` naming the file and line; a trace without MPI calls
    is an empty Trace with an ``explanation``.

    Example::

        trace = read_trace("lulesh.prv")
        print(trace.call_counts())
    """
    if not Path(path).is_dir():  # an OTF2 archive may be given as its folder
        input_file(path, "a trace")
    fmt = format or trace_format(path)
    if fmt is None:
        hint = looks_like(path)
        raise InputError((f"this looks like {hint}" if hint else "not a trace phasekit can read")
                         + "; expected a Paraver or OTF2 trace (named "
                         + ", ".join(TRACE_SUFFIXES) + ")", path=os.fspath(path))
    if fmt not in _TRACE_IO:
        raise UsageError(f"unknown trace format {fmt!r}; expected one of " + ", ".join(_TRACE_IO))
    from phasekit.trace import Trace

    module, function = _TRACE_IO[fmt]
    reader = getattr(import_module(module), function)
    trace = reader(Path(path), **kwargs)
    assert isinstance(trace, Trace)
    return trace


# --- Prometheus ------------------------------------------------------------------------------
#: URL schemes of a Prometheus server and the HTTP scheme each stands for
#: (:mod:`phasekit.io.prometheus`, imported when used).
PROMETHEUS_SCHEMES = {"prometheus": "http", "prometheus+http": "http",
                      "prometheus+https": "https"}


def is_prometheus_url(text: object) -> bool:
    """Whether ``text`` names a Prometheus server (``prometheus://HOST:PORT``)."""
    return (isinstance(text, str) and "://" in text
            and text.split("://", 1)[0].lower() in PROMETHEUS_SCHEMES)


# --- tables ----------------------------------------------------------------------------------
#: File names read as CSV/TSV tables (optionally ``.gz``) by :func:`read_csv_table`.
CSV_SUFFIXES = (".csv", ".tsv", ".txt")


def is_csv(path: str | os.PathLike[str]) -> bool:
    """Whether the name of ``path`` is a CSV/TSV table's (optionally ``.gz``)."""
    return Path(path).name.lower().removesuffix(".gz").endswith(CSV_SUFFIXES)
