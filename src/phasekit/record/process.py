"""Starting the commands an analysis measures (analyses do not start processes).

:func:`start_command` is how :mod:`phasekit.signature.manager` runs each executable of a
signature; the recorder's own child is :class:`phasekit.record.recorder.PausedChild`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from typing import IO, Any

from phasekit.errors import UsageError

__all__ = ["kill_group", "start_command"]


def start_command(argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
                  stderr: IO[Any] | int | None = None,
                  core: int | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a session of its own (so that its whole group can be signalled),
    stdin and stdout closed, stderr to ``stderr``, pinned to ``core`` when given and the
    system allows it. UsageError naming the program when it cannot be started."""
    argv = list(argv)
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=stderr, cwd=cwd, start_new_session=True)
    except OSError as exc:
        raise UsageError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    if core is not None and hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(process.pid, {core})
    return process


def kill_group(pid: int, signum: int = signal.SIGKILL) -> None:
    """``signum`` to the process group led by ``pid`` (one :func:`start_command` started);
    nothing when it is gone already or not ours."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)
