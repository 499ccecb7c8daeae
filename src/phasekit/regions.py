"""Region markers: a program tells a campaign when its regions start and stop (Silva 2024 §3.2).

PaScal's markers are ``pascal_start(id)`` / ``pascal_stop(id)`` calls that record a thread id
and a timestamp. Ours write one line per marker to the file named by the environment
variable :data:`ENV` (set by ``phasekit campaign run``; without it markers do nothing)::

    S <region> <thread> <CLOCK_MONOTONIC ns>
    E <region> <thread> <CLOCK_MONOTONIC ns>

Each line is one ``write`` on a file opened with ``O_APPEND``, shorter than PIPE_BUF, so
threads and processes can mark concurrently without a lock. Python code uses
:func:`region` (a context manager); C and C++ code include ``phasekit_regions.h``
(:func:`c_header` gives its path) and call ``phasekit_region_start("name")`` /
``phasekit_region_stop("name")``.

A region's time is the length of the union of its threads' [start, stop] intervals, counted
once however many threads run it (the thesis's definition, unlike TAU which sums threads);
regions may nest, and a thread may enter the same region again before leaving it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from phasekit.errors import InputError

__all__ = ["ENV", "c_header", "read_regions", "region", "union_length"]

#: The environment variable naming the marker file.
ENV = "PHASEKIT_REGIONS"

_lock = threading.Lock()
_fd: dict[str, int] = {}


def _mark(kind: str, name: str) -> None:
    path = os.environ.get(ENV)
    if not path:
        return
    if any(c.isspace() for c in name) or not name:
        raise ValueError(f"region name {name!r}: expected a non-empty name without spaces")
    with _lock:
        fd = _fd.get(path)
        if fd is None:
            fd = _fd[path] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, f"{kind} {name} {threading.get_native_id()} {time.monotonic_ns()}\n".encode())


@contextlib.contextmanager
def region(name: str) -> Iterator[None]:
    """Mark the code inside the ``with`` block as region ``name`` (no-op outside a campaign)."""
    _mark("S", name)
    try:
        yield
    finally:
        _mark("E", name)


def c_header() -> Path:
    """The path of ``phasekit_regions.h`` (the C/C++ markers)."""
    return Path(str(resources.files("phasekit") / "data" / "phasekit_regions.h"))


def read_regions(path: str | os.PathLike[str]) -> dict[str, list[tuple[int, int, int]]]:
    """The intervals of every region in a marker file: name -> [(thread, start_ns, stop_ns)].

    A stop without a start, a malformed line, or a start never stopped is an InputError
    naming the line.
    """
    intervals: dict[str, list[tuple[int, int, int]]] = {}
    open_starts: dict[tuple[str, int], list[tuple[int, int]]] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, text in enumerate(fh, start=1):
            parts = text.split()
            if not parts:
                continue
            if len(parts) != 4 or parts[0] not in ("S", "E") or not parts[2].isdigit() \
                    or not parts[3].isdigit():
                raise InputError(f"expected 'S|E REGION THREAD NANOSECONDS', got {text.strip()!r}",
                                 path=os.fspath(path), line=number)
            kind, name, thread, stamp = parts[0], parts[1], int(parts[2]), int(parts[3])
            stack = open_starts.setdefault((name, thread), [])
            if kind == "S":
                stack.append((stamp, number))
                continue
            if not stack:
                raise InputError(f"region {name!r} stops on thread {thread} without a start",
                                 path=os.fspath(path), line=number)
            start, _ = stack.pop()
            intervals.setdefault(name, []).append((thread, start, stamp))
    for (name, thread), stack in open_starts.items():
        if stack:
            raise InputError(f"region {name!r} starts on thread {thread} and never stops",
                             path=os.fspath(path), line=stack[0][1])
    return intervals


def union_length(intervals: list[tuple[int, int, int]]) -> int:
    """Length of the union of the [start, stop] intervals (the region's time, in ns)."""
    from phasekit.campaign import union_length as union

    return round(union([(start, stop) for _, start, stop in intervals]))
