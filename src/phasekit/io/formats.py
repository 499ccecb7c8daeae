"""The formats phasekit reads and writes: one :class:`Format` each, in :data:`FORMATS`.

A format is its name, how it is recognized (its file name endings, a test of its first bytes,
a folder, a URL scheme) and the functions that read and write it. Each reader is in its own
module and is named ``"module:function"``, imported when first used, so that importing
:mod:`phasekit.io` imports no reader (pyarrow, pandas). A new format is a module with its
reader and one :func:`register` line::

    register(Format("toy", "toyformat:read_toy", (".toy",)))

How :func:`read_profile` picks a profile's format, in order: a name that does not say its
format (:data:`SNIFFED_SUFFIXES`, or no suffix) is tested by the formats' content tests
(``perf stat -I -x`` and ``likwid-perfctr -t`` output saved as ``.csv`` or ``.txt``); then the
longest name ending decides; then what :func:`~phasekit.io.inputs.content_kind` sees in the
content (a CSV with a time column under another name, Parquet's magic bytes). A stream has
no name: its content decides (CSV when no test recognizes it). A trace's name (or an OTF2
archive) makes it read as a trace and binned into a profile (:mod:`phasekit.trace_profile`).
:func:`read_trace` goes by the name or a folder a format claims (an OTF2 archive).
:func:`read_any` reads anything: a URL by its scheme, a trace, a folder (a signature),
phasekit's JSON by its name, else a profile.
"""

from __future__ import annotations

import gzip
import inspect
import io
import os
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from phasekit.errors import InputError, UsageError
from phasekit.io.inputs import (
    HINTS,
    content_kind,
    input_file,
    is_stream,
    looks_like,
    read_bytes,
    source_name,
)
from phasekit.profile import Profile

if TYPE_CHECKING:
    from phasekit.trace import Trace

__all__ = [
    "FORMATS",
    "PROFILE",
    "PROMETHEUS_SCHEMES",
    "SNIFFED_SUFFIXES",
    "TRACE",
    "Format",
    "format_named",
    "formats",
    "head_bytes",
    "profile_format",
    "read_any",
    "read_profile",
    "read_trace",
    "register",
    "sniff_profile_format",
    "suffixes",
    "trace_format",
    "url_format",
    "write_profile",
]

#: :attr:`Format.kind` of the formats :func:`read_profile` and :func:`write_profile` take.
PROFILE = "profile"
#: :attr:`Format.kind` of the formats :func:`read_trace` takes.
TRACE = "trace"
#: Names whose content is tested before their ending decides (as are names without a suffix).
SNIFFED_SUFFIXES: tuple[str, ...] = (".csv", ".csv.gz", ".txt", ".log", ".out")
#: Bytes of a file's start that the content tests see.
SNIFF_BYTES = 16384
#: Bytes of a file's start that :func:`~phasekit.io.inputs.content_kind` reads.
_KIND_BYTES = 4096
#: URL schemes of a Prometheus server and the HTTP scheme each stands for.
PROMETHEUS_SCHEMES = {"prometheus": "http", "prometheus+http": "http",
                      "prometheus+https": "https"}

Source = str | os.PathLike[str] | IO[bytes]


def _load(function: Callable[..., Any] | str) -> Callable[..., Any]:
    """``function`` itself, or the function a ``"module:function"`` string names."""
    if callable(function):
        return function
    module, _, name = function.partition(":")
    return getattr(import_module(module), name)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Format:
    """One format: how it is recognized and the functions that read (and write) it.

    Functions are callables or ``"module:function"`` strings, imported on first use.

    - ``reader(source, **options)``: a profile reader takes the path (a stream too, with
      ``streams``) and ``metrics=`` (the names to read, None for all), and returns a
      :class:`~phasekit.profile.Profile`; a trace reader returns a
      :class:`~phasekit.trace.Trace`; other kinds are read by :func:`read_any` only.
    - ``suffixes``: file name endings (compared case-insensitively).
    - ``kind``: :data:`PROFILE`, :data:`TRACE`, or what else :func:`read_any` returns.
    - ``title``: the format in messages (default ``name``).
    - ``writer(profile, path)``: writes the file atomically (profiles only).
    - ``sniffer(text) -> bool``: whether the first :data:`SNIFF_BYTES` of a file (inflated,
      as text) are this format's; tried before the name's ending for
      :data:`SNIFFED_SUFFIXES`.
    - ``content_kinds``: the :func:`~phasekit.io.inputs.content_kind` values read with this
      format when no name ending matched.
    - ``folder(path) -> bool``: whether a folder is this format's.
    - ``schemes``: URL schemes (``prometheus://``).
    - ``streams``: the reader also takes a binary stream.
    """

    name: str
    reader: Callable[..., Any] | str
    suffixes: tuple[str, ...] = ()
    kind: str = PROFILE
    title: str = ""
    writer: Callable[[Profile, Path], None] | str | None = None
    sniffer: Callable[[str], bool] | str | None = None
    content_kinds: tuple[str, ...] = ()
    folder: Callable[[Path], bool] | str | None = None
    schemes: tuple[str, ...] = ()
    streams: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.suffixes, str) or not all(
                isinstance(s, str) and s.startswith(".") for s in self.suffixes):
            raise UsageError("expected file name endings starting with '.'",
                             parameter="suffixes", value=self.suffixes)
        object.__setattr__(self, "suffixes", tuple(s.lower() for s in self.suffixes))
        object.__setattr__(self, "title", self.title or self.name)

    def ending(self, path: str | os.PathLike[str]) -> str | None:
        """The longest of :attr:`suffixes` the name of ``path`` ends with (with something
        before it), or None."""
        name = Path(path).name.lower()
        found = [s for s in self.suffixes if name.endswith(s) and len(name) > len(s)]
        return max(found, key=len) if found else None

    def sniff(self, path_or_head: str | os.PathLike[str] | bytes) -> bool:
        """Whether a file's first bytes (or the file at a path) look like this format; False
        without a ``sniffer`` or when the file cannot be read (the reader says why)."""
        if self.sniffer is None:
            return False
        head = path_or_head if isinstance(path_or_head, bytes) else head_bytes(path_or_head)
        if head is None:
            return False
        text = head.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        return bool(_load(self.sniffer)(text))

    def claims(self, folder: str | os.PathLike[str]) -> bool:
        """Whether the folder ``folder`` is in this format."""
        return self.folder is not None and bool(_load(self.folder)(Path(folder)))

    def accepts(self, keyword: str) -> bool:
        """Whether the reader takes the keyword argument ``keyword``."""
        parameters = inspect.signature(_load(self.reader)).parameters
        return keyword in parameters or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())

    def read(self, source: Source, **options: Any) -> Any:
        """What ``source`` (a path, a stream with :attr:`streams`, a URL with
        :attr:`schemes`) holds, read by the reader with ``options``."""
        if is_stream(source) and not self.streams:
            raise UsageError(f"{source_name(source)}: {self.title} is read from a file, not a "
                             "stream; save the data to a file first")
        return _load(self.reader)(source, **options)

    def write(self, profile: Profile, path: str | os.PathLike[str]) -> None:
        """Write ``profile`` to ``path`` in this format; UsageError for a read-only format."""
        if self.writer is None:
            raise UsageError(f"{self.name} profiles can be read but not written; write CSV or "
                             "Parquet")
        _load(self.writer)(profile, Path(path))


#: Every format, by name, in the order they are tried.
FORMATS: dict[str, Format] = {}


def register(fmt: Format, *, replace: bool = False) -> Format:
    """Add ``fmt`` to :data:`FORMATS` (after the others: the earlier win ties); a name that is
    taken is a UsageError unless ``replace``."""
    if fmt.name in FORMATS and not replace:
        raise UsageError(f"a format named {fmt.name!r} is registered already; pass "
                         "replace=True to replace it")
    FORMATS[fmt.name] = fmt
    return fmt


register(Format("csv", "phasekit.io.csv:read_csv_profile", (".csv", ".csv.gz", ".tsv", ".tsv.gz"),
                title="CSV", writer="phasekit.io.csv:write_csv_profile",
                content_kinds=("profile_csv",), streams=True))
register(Format("parquet", "phasekit.io.parquet:read_parquet_profile", (".parquet", ".pq"),
                title="Parquet", writer="phasekit.io.parquet:write_parquet_profile",
                content_kinds=("parquet",)))
register(Format("arrow", "phasekit.io.arrow:read_arrow_profile", (".arrows", ".arrow"),
                title="Arrow", writer="phasekit.io.arrow:write_arrow_profile"))
register(Format("perfstat", "phasekit.io.perfstat:read_perfstat_profile",
                title="perf stat -I -x", sniffer="phasekit.io.perfstat:looks_like_perfstat",
                streams=True))
register(Format("likwid", "phasekit.io.likwid:read_likwid_profile", title="likwid-perfctr -t",
                sniffer="phasekit.io.likwid:looks_like_likwid", streams=True))
register(Format("paraver", "phasekit.io.paraver:read_paraver", (".prv", ".prv.gz"), kind=TRACE,
                title="Paraver"))
register(Format("otf2", "phasekit.io.otf2:read_otf2", (".otf2",), kind=TRACE, title="OTF2",
                folder="phasekit.io.otf2:is_archive"))
register(Format("prometheus", "phasekit.io.prometheus:read_prometheus", kind="profiles",
                title="Prometheus", schemes=tuple(PROMETHEUS_SCHEMES)))
register(Format("signature", "phasekit.signature.paths:load_signature", kind="signature",
                folder="phasekit.io.saved:is_signature"))
register(Format("saved", "phasekit.io.saved:read_saved", (".json", ".jsonl", ".json.gz",
                                                           ".jsonl.gz"),
                kind="saved", title="phasekit JSON"))


# --- finding a format ------------------------------------------------------------------------
def formats(kind: str | None = None) -> list[Format]:
    """The registered formats of ``kind`` (all when None), in registry order."""
    return [f for f in FORMATS.values() if kind is None or f.kind == kind]


def suffixes(kind: str | None = None) -> tuple[str, ...]:
    """The file name endings of the formats of ``kind``."""
    return tuple(s for f in formats(kind) for s in f.suffixes)


def format_named(name: str, kind: str) -> Format:
    """The format ``name`` of ``kind`` (a ``format=`` argument); UsageError listing them."""
    fmt = FORMATS.get(name)
    if fmt is None or fmt.kind != kind:
        raise UsageError(f"unknown {kind} format {name!r}; expected one of "
                         + ", ".join(f.name for f in formats(kind)))
    return fmt


def _by_ending(path: str | os.PathLike[str], kind: str) -> Format | None:
    """The format of ``kind`` with the longest ending the name of ``path`` has."""
    best: tuple[int, Format] | None = None
    for fmt in formats(kind):
        ending = fmt.ending(path)
        if ending is not None and (best is None or len(ending) > best[0]):
            best = (len(ending), fmt)
    return None if best is None else best[1]


def url_format(text: object) -> Format | None:
    """The format whose URL scheme ``text`` has (``prometheus://HOST:PORT``), or None."""
    if not (isinstance(text, str) and "://" in text):
        return None
    scheme = text.split("://", 1)[0].lower()
    return next((f for f in FORMATS.values() if scheme in f.schemes), None)


def head_bytes(path: str | os.PathLike[str]) -> bytes | None:
    """The first :data:`SNIFF_BYTES` of ``path`` (inflated when gzip), or None when it cannot
    be read."""
    try:
        with open(path, "rb") as file:
            head = file.read(SNIFF_BYTES)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as file:
                head = file.read(SNIFF_BYTES)
    except (OSError, EOFError, zlib.error):
        return None
    return head


def _either(titles: Sequence[str]) -> str:
    """``A, B or C``."""
    return " or ".join(filter(None, [", ".join(titles[:-1]), titles[-1]]))


# --- profiles --------------------------------------------------------------------------------
def profile_format(path: str | os.PathLike[str]) -> str:
    """The name of the profile format of ``path`` from its name (``"csv"``, ``"parquet"``,
    ``"arrow"``...); UsageError for a name with no known profile ending."""
    fmt = _by_ending(path, PROFILE)
    if fmt is None:
        raise UsageError(f"cannot tell the profile format of {os.fspath(path)!r} from its name; "
                         "expected a name ending in " + ", ".join(suffixes(PROFILE)))
    return fmt.name


def _sniffed(head: bytes) -> Format | None:
    return next((f for f in formats(PROFILE) if f.sniff(head)), None)


def sniff_profile_format(path: str | os.PathLike[str]) -> str | None:
    """The name of the profile format whose content test the first bytes of ``path`` pass
    (``"perfstat"``, ``"likwid"``), or None (also for a file that cannot be read: the reader
    says why)."""
    head = head_bytes(path)
    fmt = None if head is None else _sniffed(head)
    return None if fmt is None else fmt.name


def _no_profile(path: str, kind: str | None) -> InputError:
    hint = HINTS.get(kind or "")
    return InputError(
        (f"this looks like {hint}" if hint else "not a profile phasekit can read")
        + f"; expected a profile: {_either([f.title for f in formats(PROFILE)])} output (named "
        + ", ".join(suffixes(PROFILE)) + ")", path=path)


def _by_content(kind: str | None) -> Format | None:
    return next((f for f in formats(PROFILE) if kind is not None and kind in f.content_kinds),
                None)


def _read_format(path: str | os.PathLike[str]) -> Format:
    """The format to read the file ``path`` with (module docstring); InputError when nothing
    tells, saying what the content looks like."""
    input_file(path, "a profile")
    name = Path(path).name.lower()
    if name.endswith(SNIFFED_SUFFIXES) or not Path(name).suffix:
        sniffed = sniff_profile_format(path)
        if sniffed is not None:
            return FORMATS[sniffed]
    fmt = _by_ending(path, PROFILE)
    if fmt is not None:
        return fmt
    kind = content_kind(path)
    fmt = _by_content(kind)
    if fmt is None:
        raise _no_profile(os.fspath(path), kind)
    return fmt


def _stream_format(where: str, data: bytes) -> Format:
    """The format of a stream's content ``data`` (it has no name to go by): CSV unless a
    content test says otherwise, so that the CSV reader says what is wrong."""
    kind = content_kind(where, data[:_KIND_BYTES])
    return _sniffed(data[:SNIFF_BYTES]) or _by_content(kind) or FORMATS["csv"]


def read_profile(path: Source, *, metrics: Sequence[str] | str | None = None,
                 format: str | None = None, period: float | None = None) -> Profile:
    """Read a Profile from a file in one of the profile :data:`FORMATS`, chosen by its name
    and content (module docstring) or by ``format`` (a name: ``"csv"``, ``"parquet"``...).

    Files named ``.csv``, ``.txt``, ``.log``, ``.out`` or without a suffix are first tested
    for ``perf stat -I -x`` and ``likwid-perfctr -t`` output (:mod:`phasekit.io.perfstat`,
    :mod:`phasekit.io.likwid`); other ``.csv`` content goes to the CSV reader, other content
    of the remaining names is an InputError (their name does not say CSV). ``path`` may be a
    binary stream (``sys.stdin.buffer``) of a CSV, perf or LIKWID profile (or of a registered
    format that takes streams): its content says which, CSV when no test recognizes it.

    ``metrics`` selects and orders the metrics to read (UsageError listing the available ones
    when one is missing). Irregular sampling is resampled onto a regular grid with a
    :class:`~phasekit.errors.PhasekitWarning`; missing samples are NaN. Bad content raises
    :class:`~phasekit.errors.InputError` naming the file and the line or column.

    ``period`` (seconds) reads a CSV without a time column: one row every ``period``
    (:func:`~phasekit.io.csv.read_csv_profile`); other formats carry their times.

    A trace (a name :func:`read_trace` takes: Paraver ``.prv``/``.prv.gz``, an OTF2 anchor
    or archive) is read and its counters binned at the default bin, every rank summed
    (:meth:`Trace.profile <phasekit.trace.Trace.profile>`; for another bin or ranks call it
    on :func:`read_trace`'s trace).

    Example::

        profile = read_profile("run.csv", metrics=["dram_rd", "dram_wr"])
        mg = read_profile("MG.csv", period=0.2)    # perf stat rows every 200 ms, no time
        piped = read_profile(sys.stdin.buffer)     # my-sampler | python script.py
    """
    source: Path | io.BytesIO
    if isinstance(path, str | os.PathLike) and format is None and trace_format(path):
        if period is not None:
            raise UsageError("is given only to a CSV profile without a time column; a trace "
                             "has its own times (its bin: bin_s of Trace.profile)",
                             parameter="period", value=period, file=os.fspath(path))
        binned = read_trace(path).profile()
        return binned if metrics is None else binned.select(
            [metrics] if isinstance(metrics, str) else list(metrics))
    if isinstance(path, str | os.PathLike):
        where, source = os.fspath(path), Path(path)
        name = format or _read_format(path).name
    else:  # a stream, read whole here to test its content
        where = source_name(path)
        data = read_bytes(path, "a profile")
        name = format or _stream_format(where, data).name
        source = io.BytesIO(data)
        source.name = where  # how messages name it
    options: dict[str, Any] = {"metrics": metrics}
    if period is not None:
        named = FORMATS.get(name)
        if named is None or named.kind != PROFILE or not named.accepts("period"):
            raise UsageError(f"{where}: a period is given only to a CSV profile without a "
                             f"time column; this is a {name} file, which has its own times")
        options["period"] = period
    fmt = format_named(name, PROFILE)
    profile = fmt.read(source, **options)
    if not isinstance(profile, Profile):
        raise TypeError(f"the {fmt.name} reader returned {type(profile).__name__}, not a "
                        "Profile")
    return profile


def write_profile(profile: Profile, path: str | os.PathLike[str], *,
                  format: str | None = None) -> None:
    """Write ``profile`` atomically in the format its file name says (or ``format``): CSV,
    Parquet or Arrow.

    The file keeps the period, start, units, node and meta, so :func:`read_profile` gives the
    same profile back.
    """
    if not isinstance(profile, Profile):
        raise UsageError(f"write_profile expects a Profile, got {type(profile).__name__}")
    format_named(format or profile_format(path), PROFILE).write(profile, path)


# --- traces ----------------------------------------------------------------------------------
def trace_format(path: str | os.PathLike[str]) -> str | None:
    """The name of the trace format of ``path`` (``"paraver"``, ``"otf2"``) from its name or,
    for a folder, the format that claims it (an OTF2 archive holding one ``.otf2`` anchor);
    None when it is not a trace's."""
    fmt = _by_ending(path, TRACE)
    if fmt is None and Path(path).is_dir():
        fmt = next((f for f in formats(TRACE) if f.claims(path)), None)
    return None if fmt is None else fmt.name


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
    from phasekit.trace import Trace

    if not Path(path).is_dir():  # an OTF2 archive may be given as its folder
        input_file(path, "a trace")
    name = format or trace_format(path)
    if name is None:
        hint = looks_like(path)
        raise InputError((f"this looks like {hint}" if hint else "not a trace phasekit can read")
                         + f"; expected a {_either([f.title for f in formats(TRACE)])} trace "
                         "(named " + ", ".join(suffixes(TRACE)) + ")", path=os.fspath(path))
    fmt = format_named(name, TRACE)
    trace = fmt.read(Path(path), **kwargs)
    if not isinstance(trace, Trace):
        raise TypeError(f"the {fmt.name} reader returned {type(trace).__name__}, not a Trace")
    return trace


# --- anything --------------------------------------------------------------------------------
def read_any(path: str | os.PathLike[str], **options: Any) -> Any:
    """Read ``path`` into what it holds, by its content (``phasekit.read`` is this function).

    - ``prometheus://HOST:PORT``: one :class:`~phasekit.profile.Profile` per node from a
      Prometheus server's range queries; ``options`` are those of
      :func:`phasekit.io.prometheus.read_prometheus` (``queries``, ``start``, ``end``,
      ``step``, ``label``), e.g. ``read_any("prometheus://localhost:9090",
      queries=["node_load1"], start="now-1h")``;
    - a trace (Paraver ``.prv``/``.prv.gz``, an OTF2 anchor or archive directory): a
      :class:`~phasekit.trace.Trace`;
    - JSON with ``"kind"`` of a saved result (:data:`phasekit.results.REGISTRY`, e.g.
      ``phasekit analyze -o``): that result; a power model (``"kind": "power_model"``): the
      model; power profiles (``"kind": "power_profiles"``, ``phasekit energy phasediv``'s
      input); a campaign (ours, JSON lines, or PaScal Analyzer JSON): a
      :class:`~phasekit.runs.Campaign` (:mod:`phasekit.io.saved`);
    - a signature directory (``phasekit signature build``): its
      :class:`~phasekit.signature.paths.Signature`;
    - anything else: a :class:`~phasekit.profile.Profile` (CSV, Parquet, a recording,
      ``perf stat -I`` or ``likwid-perfctr -t`` output, or a registered format), as
      :func:`read_profile`.

    Errors are :class:`~phasekit.errors.InputError` (bad content) or
    :class:`~phasekit.errors.UsageError` (a name that says no format), both ``ValueError``;
    they name the file.
    """
    url = url_format(path)
    if url is not None:
        return url.read(str(path), **options)
    if options:
        raise UsageError(f"read() options {', '.join(options)} apply to prometheus:// only")
    path = Path(path)
    if trace_format(path) is not None:
        return read_trace(path)
    if path.is_dir():
        for fmt in FORMATS.values():
            if fmt.kind != TRACE and fmt.claims(path):
                return fmt.read(path)
        raise UsageError(f"{path}: a directory that is neither an OTF2 trace nor a signature; "
                         "read its files one at a time")
    name = path.name.lower()
    for fmt in FORMATS.values():  # any name with the ending, as phasekit.read always took it
        if fmt.kind not in (PROFILE, TRACE) and name.endswith(fmt.suffixes):
            return fmt.read(path)
    return read_profile(path)
