"""Opening an input file: the one path every reader takes.

- :func:`input_file` refuses at once, with an :class:`~phasekit.errors.InputError` (exit code
  3), what is not a readable regular file: a missing path, a folder, a FIFO or a device
  (reading one would wait for a writer that may never come).
- :func:`read_bytes` reads it (or a binary stream: :func:`is_stream`) whole and inflates gzip
  data; :func:`read_text` decodes UTF-8
  (a byte that is not says where); :func:`read_json` parses JSON whose numbers are all finite
  (``NaN``, ``Infinity`` and ``1e999`` are refused with their line and column).
- :func:`looks_like` tells what a file's content is (a Paraver trace, a campaign, a result,
  an executable...) and which command reads it, for the error of a reader that was given the
  wrong kind of file.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import stat
import zlib
from pathlib import Path
from typing import IO, Any

from phasekit.errors import InputError

__all__ = ["HINTS", "LARGEST", "content_kind", "input_file", "is_stream", "loads", "looks_like",
           "parse_json", "read_bytes", "read_json", "read_text", "source_name"]

#: The largest magnitude a measured value may have: a larger one is a unit or export error,
#: and its square (distances, variances) overflows float64.
LARGEST = 1e100
#: Bytes of a file's start that :func:`looks_like` reads.
_HEAD_BYTES = 4096
_KINDS = {"S_ISFIFO": "a FIFO (named pipe)", "S_ISCHR": "a character device",
          "S_ISBLK": "a block device", "S_ISSOCK": "a socket"}


def input_file(path: str | os.PathLike[str], what: str = "a file") -> Path:
    """``path`` if it is a regular file this process may read; InputError otherwise."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError("no such file" + _cut_recording(path), path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", path=str(path)) from None
    if stat.S_ISDIR(mode):
        raise InputError(f"is a folder; expected {what}", path=str(path))
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS.items() if getattr(stat, test)(mode)),
                    "not a regular file")
        raise InputError(f"is {kind}, not a regular file; expected {what} (phasekit reads "
                         "files whole: write the data to a file first)", path=str(path))
    if not os.access(path, os.R_OK):
        raise InputError("cannot read the file (permission denied)", path=str(path))
    return path


def _cut_recording(path: Path) -> str:
    """For a missing recording whose ``.partial.arrows`` stream is there (``phasekit record``
    killed before it finalized), where its samples are; else ""."""
    partial = path.with_name(path.name + ".partial.arrows")
    if path.name and partial.is_file():
        return (f"; the recording was cut: its samples are in {partial.name} (phasekit "
                "info/analyze read it)")
    return ""


def is_stream(source: object) -> bool:
    """Whether ``source`` is an open stream (``sys.stdin.buffer``, ``io.BytesIO``) rather than
    a path."""
    return hasattr(source, "read") and not isinstance(source, str | os.PathLike)


def source_name(source: str | os.PathLike[str] | IO[bytes]) -> str:
    """How messages name ``source``: the path, or a stream's ``name`` (``<stdin>``) or
    ``<stream>``."""
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<stream>"


def read_bytes(path: str | os.PathLike[str] | IO[bytes], what: str = "a file") -> bytes:
    """The content of ``path`` (or of a stream, read to its end: a text stream's as UTF-8),
    inflated when it is gzip data."""
    if isinstance(path, str | os.PathLike):
        file = input_file(path, what)
        where = str(file)
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read the file ({exc.strerror or exc})",
                             path=where) from None
    else:
        where = source_name(path)
        try:
            raw = path.read()
        except OSError as exc:
            raise InputError(f"cannot read the stream ({exc.strerror or exc})",
                             path=where) from None
        if isinstance(raw, str):  # a text stream (sys.stdin rather than sys.stdin.buffer)
            raw = raw.encode("utf-8")
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"damaged gzip data ({exc or 'cut short'}); expected {what}",
                             path=where) from None
    return raw


def read_text(path: str | os.PathLike[str], what: str = "a text file") -> str:
    """The content of ``path`` as UTF-8 text (a UTF-8 byte-order mark is dropped)."""
    raw = read_bytes(path, what)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        hint = looks_like(path, raw[:_HEAD_BYTES])
        raise InputError(f"not UTF-8 text (byte {exc.start}); expected {what}"
                         + (f"; this looks like {hint}" if hint else ""),
                         path=str(path), line=line) from None


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows; expected a finite number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a float64; expected a finite number")
    return value


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_refuse_constant)


def read_json(path: str | os.PathLike[str], what: str = "a JSON file") -> Any:
    """The JSON value of ``path``; every number finite (InputError at its line otherwise)."""
    text = read_text(path, what)
    if not text.strip():
        raise InputError(f"empty file; expected {what}", path=str(path))
    return parse_json(text, str(path), what)


def loads(text: str) -> Any:
    """``json.loads`` with finite numbers only: ValueError (a json.JSONDecodeError for bad
    syntax) otherwise."""
    return _DECODER.decode(text)


def parse_json(text: str, where: str, what: str = "JSON") -> Any:
    """``text`` parsed as JSON with finite numbers only; InputError naming ``where``."""
    try:
        value, end = _DECODER.raw_decode(text, len(text) - len(text.lstrip()))
    except json.JSONDecodeError as exc:
        hint = "" if text.lstrip()[:1] in "{[" else looks_like(where, text[:_HEAD_BYTES].encode())
        raise InputError(f"not valid JSON: {exc.msg} (column {exc.colno}); expected {what}"
                         + (f"; this looks like {hint}" if hint else ""),
                         path=where, line=exc.lineno) from None
    except ValueError as exc:  # a number refused by _finite or _refuse_constant
        raise InputError(str(exc), path=where) from None
    if text[end:].strip():
        extra = len(text) - len(text[end:].lstrip())
        line = text.count("\n", 0, extra) + 1
        raise InputError(f"more after the JSON value; expected {what}", path=where, line=line)
    return value


def content_kind(path: str | os.PathLike[str], head: bytes | None = None) -> str | None:
    """The kind of file ``path``'s first bytes (or ``head``) show, a key of :data:`HINTS`, or
    None."""
    if head is None:
        try:
            with open(input_file(path), "rb") as file:
                head = file.read(_HEAD_BYTES)
        except (InputError, OSError):
            return None
        if head[:2] == b"\x1f\x8b":
            try:
                head = gzip.GzipFile(fileobj=io.BytesIO(head)).read(_HEAD_BYTES)
            except (OSError, EOFError, zlib.error):
                return "gzip"
    start = head.lstrip()
    if head[:4] == b"\x7fELF":
        return "elf"
    if head[:4] == b"PAR1":
        return "parquet"
    if head.startswith(b"#Paraver"):
        return "paraver"
    if start.startswith(b"{"):
        text = start.decode("utf-8", errors="replace")
        for kind in ("campaign", "power_profiles", "signature"):
            if f'"kind": "{kind}"' in text or f'"kind":"{kind}"' in text:
                return kind
        return "result" if '"kind"' in text else None
    if b"OTF2" in head[:64]:
        return "otf2"
    if b"\0" in head:
        return "binary"
    first = next((line for line in start.split(b"\n") if not line.startswith(b"#")), b"")
    cells = {c.strip() for c in first.decode("utf-8", errors="replace").lower()
             .replace(";", ",").replace("\t", ",").split(",")}
    if {"threads", "time_s"} <= cells or {"cores", "energy_j"} <= cells:
        return "campaign_table"
    if cells & {"timestamp", "timestamp_s", "time", "time_s", "t"}:
        return "profile_csv"
    return None


def looks_like(path: str | os.PathLike[str], head: bytes | None = None) -> str | None:
    """What the content of ``path`` looks like and the command that reads it, or None."""
    kind = content_kind(path, head)
    return None if kind is None else HINTS[kind]


#: What each :func:`content_kind` is, and what reads it.
HINTS = {
    "elf": "an executable (ELF): phasekit reads the files a program writes, not the program",
    "parquet": "a Parquet file (a profile: use `phasekit analyze`, `info` or `phases`)",
    "paraver": "a Paraver trace (use `phasekit structure`)",
    "otf2": "an OTF2 file (use `phasekit structure` on the archive's .otf2 anchor file)",
    "gzip": "damaged gzip data",
    "binary": "binary data, not text",
    "campaign": "a campaign (use `phasekit energy fit|choose|plot`)",
    "power_profiles": "power profiles (use `phasekit energy phasediv`)",
    "signature": "an application signature (use `phasekit signature run`)",
    "result": "a phasekit result (use `phasekit report` or `phasekit.load`)",
    "campaign_table": "a campaign table (use `phasekit energy`)",
    "profile_csv": "a profile CSV (use `phasekit analyze`, `info` or `phases`)",
}
