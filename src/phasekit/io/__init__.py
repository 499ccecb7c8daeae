"""Reading and writing phasekit's input models; one module per format.

Every format is a :class:`~phasekit.io.formats.Format` in the registry
:data:`~phasekit.io.formats.FORMATS` (:mod:`phasekit.io.formats`): its name, how it is
recognized, and its reader and writer, each in its own module here. A new format is a module
and one :func:`~phasekit.io.formats.register` line.

Profiles: :func:`read_profile` and :func:`write_profile` pick the format from the file name
(:data:`PROFILE_SUFFIXES`): CSV (``.csv``, ``.tsv``, gzip-compressed ``.csv.gz``/``.tsv.gz``),
Parquet (``.parquet``, ``.pq``) or Arrow IPC (``.arrows``, ``.arrow``). Every writer is atomic
(:mod:`phasekit.io.atomic`). :func:`read_profile` also reads the output of ``perf stat -I
-x,`` and ``likwid-perfctr -t``, recognized by content (:func:`sniff_profile_format`) when the
name is ambiguous, and a binary stream of CSV, perf or LIKWID output (``sys.stdin.buffer``).

Traces: :func:`read_trace` reads a :class:`~phasekit.trace.Trace` from a Paraver trace
(``.prv``, ``.prv.gz``; :mod:`phasekit.io.paraver`) or an OTF2 archive (its ``.otf2`` anchor
file; :mod:`phasekit.io.otf2`, the ``otf2`` extra). :func:`is_trace` tells a trace from a
profile by its name (:data:`TRACE_SUFFIXES`).

Anything: :func:`read_any` (``phasekit.read``) reads a profile, a trace, a Prometheus server,
a saved result, a campaign or a signature by its name and content.
"""

from __future__ import annotations

import os
from pathlib import Path

from phasekit.io.atomic import atomic_path, atomic_write_bytes, atomic_write_text
from phasekit.io.formats import (
    FORMATS,
    PROFILE,
    PROMETHEUS_SCHEMES,
    TRACE,
    Format,
    profile_format,
    read_any,
    read_profile,
    read_trace,
    register,
    sniff_profile_format,
    suffixes,
    trace_format,
    write_profile,
)
from phasekit.io.table import read_csv_table

__all__ = [
    "CSV_SUFFIXES",
    "FORMATS",
    "PROFILE_SUFFIXES",
    "PROMETHEUS_SCHEMES",
    "TRACE_SUFFIXES",
    "Format",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "is_csv",
    "is_prometheus_url",
    "is_trace",
    "profile_format",
    "read_any",
    "read_csv_table",
    "read_profile",
    "read_trace",
    "register",
    "sniff_profile_format",
    "trace_format",
    "write_profile",
]

#: The file name endings of the built-in profile formats (:func:`read_profile` and
#: :func:`write_profile` understand them; ``phasekit.io.formats.suffixes("profile")`` also
#: has those of formats registered later).
PROFILE_SUFFIXES: tuple[str, ...] = suffixes(PROFILE)
#: The file name endings of the built-in trace formats (:func:`read_trace`).
TRACE_SUFFIXES: tuple[str, ...] = suffixes(TRACE)


def is_trace(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a trace (Paraver or OTF2) rather than a profile."""
    return trace_format(path) is not None


# --- Prometheus ------------------------------------------------------------------------------
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
