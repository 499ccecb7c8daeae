"""Reading and writing the files of the verbs: the public door to :mod:`phasekit.io`.

What a command (or a Python caller) needs beyond :func:`phasekit.read`: a profile from a file
or from standard input with every error naming it, a trace naming its file, what a profile or
a trace holds (``phasekit info``), campaign files, and several outputs written together or not
at all.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from phasekit.arguments import PathLike
from phasekit.errors import PhasekitError, UsageError

if TYPE_CHECKING:
    import pandas as pd

    from phasekit.present import Presentation
    from phasekit.profile import Profile
    from phasekit.runs import Campaign
    from phasekit.trace import Trace

__all__ = [
    "STDIN",
    "STDIN_NAME",
    "describe",
    "is_trace",
    "present_info",
    "profile_format",
    "prometheus_files",
    "prometheus_url",
    "read_campaign",
    "read_csv_table",
    "read_profile",
    "read_profile_stream",
    "read_trace",
    "write_campaign",
    "write_files",
    "write_profile",
]

#: The name of a profile that reads a CSV profile from standard input.
STDIN = "-"
#: How errors and warnings name standard input.
STDIN_NAME = "<stdin>"


# --- profiles and traces -----------------------------------------------------------------------
def read_profile(source: PathLike, *, period: float | None = None) -> Profile:
    """The profile in ``source``, every error naming the file.

    Parameters
    ----------
    source
        A profile file (any format :func:`phasekit.io.read_profile` reads), or ``"-"``: a CSV
        profile on standard input (:func:`read_profile_stream`).
    period
        Seconds between two rows of a CSV profile without a time column.
    """
    if os.fspath(source) != STDIN:
        from phasekit.io import read_profile as read_file
        from phasekit.io.naming import name_file

        try:
            return read_file(source, period=period)
        except PhasekitError as exc:
            raise name_file(exc, source) from exc
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("-: reads a CSV profile from stdin, which is a terminal; pipe one in "
                         "(my-sampler | phasekit analyze -) or give a file")
    return read_profile_stream(sys.stdin.buffer, period=period)


def read_profile_stream(stream: BinaryIO, *, period: float | None = None,
                        name: str = STDIN_NAME) -> Profile:
    """The CSV profile a binary stream holds (phasekit's own, with its ``# phasekit:`` line,
    or any CSV the CSV reader takes), read to its end; errors and warnings name it ``name``.

    Parameters
    ----------
    stream
        A binary stream, e.g. ``sys.stdin.buffer``.
    period
        Seconds between two rows of a CSV profile without a time column.
    name
        How messages name the stream.
    """
    import tempfile

    from phasekit.io import read_profile as read_file

    data = stream.read()
    with tempfile.TemporaryDirectory(prefix="phasekit-stdin-") as folder:
        temporary = Path(folder) / "stdin.csv"
        temporary.write_bytes(data)

        def renamed(text: str) -> str:
            return text.replace(str(temporary), name)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                profile = read_file(temporary, format="csv", period=period)
            except PhasekitError as exc:
                try:
                    error = type(exc)(renamed(str(exc)))
                except TypeError:  # a subclass with another signature
                    raise exc from None
                raise error from None
    for warning in caught:
        warnings.warn_explicit(renamed(str(warning.message)), warning.category,
                               warning.filename, warning.lineno)
    return profile


def is_trace(path: PathLike) -> bool:
    """Whether ``path`` names a trace (Paraver or OTF2) rather than a profile.

    Parameters
    ----------
    path
        A file name; only the name is looked at.
    """
    from phasekit.io import is_trace as named_trace

    return named_trace(path)


def read_trace(path: PathLike) -> Trace:
    """The trace in ``path`` (Paraver ``.prv``/``.prv.gz``, OTF2), every error naming the file.

    Parameters
    ----------
    path
        The trace file (:func:`phasekit.io.read_trace`).
    """
    from phasekit.io import read_trace as read_file
    from phasekit.io.naming import name_file

    try:
        return read_file(path)
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


def describe(data: Profile | Trace) -> dict[str, Any]:
    """What a profile or a trace holds, as ``phasekit info --json`` prints it.

    Parameters
    ----------
    data
        A :class:`~phasekit.profile.Profile`: its ``n_samples``, ``period_s``,
        ``duration_s``, ``metrics``, ``start``, ``node``, ``units``, ``n_missing`` (samples
        with a missing value), ``metric_stats`` (unit, missing values, min, mean and max of
        each metric) and ``quality`` (per metric the missing values, the spans without valid
        data, the share of the run with valid data, and the sampling gaps:
        :meth:`phasekit.quality.DataQuality.to_dict` of :func:`phasekit.quality.data_quality`);
        or a :class:`~phasekit.trace.Trace`: its summary
        (:meth:`~phasekit.trace.Trace.summary`: ranks, calls per type, duration, counters).
    """
    import datetime as _dt

    import numpy as np

    from phasekit.profile import Profile
    from phasekit.quality import data_quality

    if not isinstance(data, Profile):
        return data.summary()
    profile = data
    start = profile.start.isoformat() if isinstance(profile.start, _dt.datetime) else profile.start
    values = profile.values
    finite = np.isfinite(values)
    stats: dict[str, dict[str, Any]] = {}
    for j, name in enumerate(profile.metrics):
        column = values[finite[:, j], j]
        stats[name] = {
            "unit": profile.units.get(name),
            "n_missing": int(profile.n_samples - column.size),
            "min": float(column.min()) if column.size else None,
            "mean": float(column.mean()) if column.size else None,
            "max": float(column.max()) if column.size else None,
        }
    return {
        "n_samples": profile.n_samples, "period_s": profile.period,
        "duration_s": profile.duration, "metrics": list(profile.metrics),
        "start": start, "node": profile.node, "units": dict(profile.units),
        "n_missing": int((~finite.all(axis=1)).sum()), "metric_stats": stats,
        "quality": data_quality(profile).to_dict(),
    }


def present_info(data: Profile | Trace, name: str | None = None) -> Presentation:
    """What a profile or a trace holds, as ``phasekit info`` prints it: a headline in plain
    words (``run.csv: 12 metrics, 10 min at 5 ms, every metric has data over the whole run``,
    or which metric lacks data for how long and where), a table of its facts and one row per
    metric (a profile: then the "Data quality" table, :mod:`phasekit.quality`) or per MPI
    call (a trace) (:mod:`phasekit.io.info_present`); the same facts as :func:`describe`.

    Parameters
    ----------
    data
        A :class:`~phasekit.profile.Profile` or a :class:`~phasekit.trace.Trace`.
    name
        How the headline names it (its file); by default a profile's node, else "profile",
        or "trace".
    """
    from phasekit.io.info_present import profile_presentation, trace_presentation
    from phasekit.profile import Profile

    present = profile_presentation if isinstance(data, Profile) else trace_presentation
    return present(describe(data), name)


def profile_format(path: PathLike) -> str:
    """The profile format a file name says (``"csv"``, ``"parquet"``, ``"arrow"``...).

    Parameters
    ----------
    path
        A file name; UsageError when its ending names no profile format.
    """
    from phasekit.io import profile_format as format_of

    return format_of(path)


def write_profile(profile: Profile, path: PathLike) -> None:
    """Write ``profile`` atomically in the format its file name says (CSV, Parquet, Arrow).

    Parameters
    ----------
    profile
        The profile; the file keeps its period, start, units, node and meta.
    path
        Where to write it (:func:`phasekit.io.write_profile`).
    """
    from phasekit.io import write_profile as write_file

    write_file(profile, path)


# --- tables and campaigns ----------------------------------------------------------------------
def read_csv_table(path: PathLike) -> pd.DataFrame:
    """A CSV/TSV table (optionally ``.gz``) as a DataFrame, every error naming the file.

    Parameters
    ----------
    path
        The table (:func:`phasekit.io.read_csv_table`).
    """
    from phasekit.io import read_csv_table as read_file

    return read_file(path)


def read_campaign(path: PathLike) -> Campaign:
    """A campaign file: ours (``.json``, the ``.jsonl`` log, ``.csv``) or PaScal Analyzer's
    JSON (frequencies in GHz or kHz, sensors as [value, timestamp] pairs).

    Parameters
    ----------
    path
        The campaign file (:func:`phasekit.campaign.read_campaign`).
    """
    from phasekit.campaign import read_campaign as read_file

    return read_file(path)


def write_campaign(campaign: Campaign, path: PathLike, *, pascal: bool = False) -> None:
    """Write a campaign atomically in the layout its file name says: ``.json`` (ours),
    ``.csv`` (a tidy table) or ``.jsonl`` (a log).

    Parameters
    ----------
    campaign
        The campaign.
    path
        Where to write it (:func:`phasekit.campaign.write_campaign`).
    pascal
        Write PaScal Analyzer's JSON layout instead of ours.
    """
    from phasekit.campaign import write_campaign as write_file

    write_file(campaign, path, pascal=pascal)


# --- Prometheus --------------------------------------------------------------------------------
def prometheus_url(text: str) -> str | None:
    """The Prometheus URL ``text`` names, or None. A path made of it (``prometheus:/host:9090``:
    a path collapses ``//``) names it too.

    Parameters
    ----------
    text
        A command-line argument or a path.
    """
    from phasekit.io import is_prometheus_url

    scheme, colon, rest = text.partition(":")
    url = f"{scheme}://{rest.lstrip('/')}"
    return url if colon and is_prometheus_url(url) else None


def prometheus_files(url: str, queries: Sequence[str], folder: PathLike, *, start: str,
                     end: str = "now", step: str = "5s", label: str = "instance",
                     progress: Callable[[float], None] | None = None
                     ) -> list[tuple[Path, str]]:
    """Fetch one profile per node from a Prometheus server and write each into ``folder``
    as ``NODE.parquet``, so that the nodes can be analyzed as files.

    Parameters
    ----------
    url
        The server, ``prometheus://HOST:PORT``.
    queries
        PromQL range queries, one series per node each (``[NAME=]PROMQL``).
    folder
        An existing folder for the files.
    start, end, step, label
        The range, its sampling period and the label naming the node
        (:func:`phasekit.io.prometheus.read_prometheus`).
    progress
        Called with the fraction of the range queries done.

    Returns
    -------
    list of (Path, str)
        Each node's file and how messages name it: the server and the label selecting the
        node (``http://host:9090 instance="node1:9100"``).
    """
    from phasekit.io import write_profile as write_file
    from phasekit.io.prometheus import node_source, read_prometheus

    profiles = read_prometheus(url, list(queries), start=start, end=end, step=step,
                               label=label, progress=progress)
    folder = Path(folder)
    files: list[tuple[Path, str]] = []
    for profile in profiles:
        name = "".join(c if c.isalnum() or c in "._-:" else "_" for c in profile.node)
        path = folder / f"{name or 'node'}.parquet"
        if path.exists():  # two node names alike once made file names
            path = folder / f"{name or 'node'}-{len(files)}.parquet"
        write_file(profile, path)
        files.append((path, node_source(profile) or f"{url} {label}={profile.node!r}"))
    return files


# --- outputs -----------------------------------------------------------------------------------
def write_files(writers: Iterable[tuple[PathLike, Callable[[Path], object]]]) -> None:
    """Write every file, or none: each to a temporary sibling of its path, all renamed onto
    their paths once every one is written. When one fails the temporary files are removed and
    the files of those names are left as they were.

    Parameters
    ----------
    writers
        ``(path, write)`` pairs; ``write(temporary)`` writes the file to the path it is given
        (whose name ends as ``path`` does).
    """
    from phasekit.io.atomic import atomic_path

    with contextlib.ExitStack() as stack:
        for path, write in writers:
            write(stack.enter_context(atomic_path(path)))


# --- traces as profiles ------------------------------------------------------------------------
__all__ += ["binning_note", "describe_trace", "present_trace", "read_trace_profile"]


def read_trace_profile(path: PathLike, *, bin_s: float | None = None,
                       ranks: Sequence[int] | int | None = None) -> Profile:
    """The counters of the trace in ``path`` binned into one profile, every error naming the
    file (what ``phasekit analyze|phases TRACE`` analyze).

    Parameters
    ----------
    path
        A Paraver (``.prv``, ``.prv.gz``) or OTF2 (``.otf2`` anchor) trace.
    bin_s
        Width of a bin in seconds; default from the trace's event density
        (:func:`phasekit.trace_profile.choose_bin`).
    ranks
        The ranks whose counters are summed (default all); counters sampled on their own
        (uncore) are node-wide and stay.
    """
    from phasekit.io.naming import name_file

    trace = read_trace(path)
    try:
        return trace.profile(bin_s=bin_s, ranks=ranks)  # type: ignore[no-any-return]
    except PhasekitError as exc:
        raise name_file(exc, path) from exc


def describe_trace(trace: Trace, *, bin_s: float | None = None,
                   ranks: Sequence[int] | int | None = None) -> dict[str, Any]:
    """What a trace holds, as ``phasekit info TRACE --json`` prints it: :func:`describe`'s
    summary, its ``profile`` (bin, why, metrics) for this bin and these ranks.

    Parameters
    ----------
    trace
        A :class:`~phasekit.trace.Trace`.
    bin_s
        The bin to describe (default: the trace's default bin).
    ranks
        The ranks to bin (default all).
    """
    return trace.summary(bin_s=bin_s, ranks=ranks)


def present_trace(trace: Trace, name: str | None = None, *, bin_s: float | None = None,
                  ranks: Sequence[int] | int | None = None) -> Presentation:
    """What a trace holds, as ``phasekit info TRACE`` prints it (:func:`present_info`), its
    profile for this bin and these ranks.

    Parameters
    ----------
    trace
        A :class:`~phasekit.trace.Trace`.
    name
        How the headline names it (its file); by default "trace".
    bin_s
        The bin to describe (default: the trace's default bin).
    ranks
        The ranks to bin (default all).
    """
    from phasekit.io.info_present import trace_presentation

    return trace_presentation(describe_trace(trace, bin_s=bin_s, ranks=ranks), name)


def binning_note(profile: Profile) -> str | None:
    """The note that says a profile was binned from a trace, at which bin and over which ranks
    (``phasekit analyze|phases TRACE`` print it); None for any other profile.

    Parameters
    ----------
    profile
        A profile, e.g. :func:`read_trace_profile`'s.
    """
    from phasekit.trace_profile import binning_note as note

    return note(profile)
