"""Atomic file output: write a temporary file next to the target, fsync it, then rename.

Every writer in phasekit goes through :func:`atomic_path` (docs/design.md, Conventions:
"Outputs are written atomically"): a reader never sees a half-written file, and an
interrupted or failed write leaves the previous file (if any) untouched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from phasekit.errors import UsageError

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path in the directory of ``path``; on success move it onto ``path``.

    Write the output to the yielded path. When the block exits normally the temporary file is
    fsynced and renamed onto ``path`` with :func:`os.replace` (atomic on POSIX and Windows), and
    the directory is fsynced. When the block raises, the temporary file is removed and ``path``
    is left as it was. The temporary name ends with the target's suffix, so libraries that infer
    a format from the extension (pandas, matplotlib) still do. The final file gets the usual
    permissions (``0o666 & ~umask``) or those of the file it replaces.
    """
    target = Path(path)
    directory = target.parent
    try:
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.",
                                        suffix=f".tmp{target.suffix}")
    except FileNotFoundError:
        raise UsageError(f"cannot write {target}: directory {directory} does not exist") from None
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        _fsync(tmp)
        os.chmod(tmp, _final_mode(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_directory(directory)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (newlines are written as ``\\n`` on every OS)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding=encoding, newline="\n") as fh:
        fh.write(text)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable; not every platform or file system can open a directory."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _final_mode(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)  # there is no way to read the umask without setting it
        os.umask(umask)
        return 0o666 & ~umask
