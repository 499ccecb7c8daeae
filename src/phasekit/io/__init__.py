"""Reading and writing phasekit's input models; one module per format.

Profiles: :func:`read_profile` and :func:`write_profile` pick the format from the file name
(:data:`PROFILE_SUFFIXES`): CSV (``.csv``, ``.tsv``, gzip-compressed ``.csv.gz``/``.tsv.gz``)
or Parquet (``.parquet``, ``.pq``). Every writer is atomic (:mod:`phasekit.io.atomic`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path

from phasekit.errors import UsageError
from phasekit.io.atomic import atomic_path, atomic_write_bytes, atomic_write_text
from phasekit.profile import Profile

__all__ = [
    "PROFILE_SUFFIXES",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "profile_format",
    "read_profile",
    "write_profile",
]

#: File name endings of profile files and their format (compared case-insensitively).
_PROFILE_FORMATS: dict[str, str] = {
    ".csv": "csv", ".csv.gz": "csv", ".tsv": "csv", ".tsv.gz": "csv",
    ".parquet": "parquet", ".pq": "parquet",
}
#: The file name endings :func:`read_profile` and :func:`write_profile` understand.
PROFILE_SUFFIXES: tuple[str, ...] = tuple(_PROFILE_FORMATS)

# format -> (module, reader, writer); modules are imported on first use (pyarrow is heavy).
_PROFILE_IO: dict[str, tuple[str, str, str]] = {
    "csv": ("phasekit.io.csv", "read_csv_profile", "write_csv_profile"),
    "parquet": ("phasekit.io.parquet", "read_parquet_profile", "write_parquet_profile"),
}


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
    return getattr(import_module(entry[0]), entry[which])


def read_profile(path: str | os.PathLike[str], *, metrics: Sequence[str] | str | None = None,
                 format: str | None = None) -> Profile:
    """Read a Profile from a CSV or Parquet file, chosen by the file name (or ``format``).

    ``metrics`` selects and orders the metrics to read (UsageError listing the available ones
    when one is missing). Irregular sampling is resampled onto a regular grid with a
    :class:`~phasekit.errors.PhasekitWarning`; missing samples are NaN. Bad content raises
    :class:`~phasekit.errors.InputError` naming the file and the line or column.

    Example::

        profile = read_profile("run.csv", metrics=["dram_rd", "dram_wr"])
    """
    reader = _function(format or profile_format(path), 1)
    profile = reader(Path(path), metrics=metrics)
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
