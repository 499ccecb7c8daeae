"""Errors that name the file they came from (one line each, as the CLI prints them)."""

from __future__ import annotations

import os

from phasekit.errors import InputError, PhasekitError, UsageError

__all__ = ["name_file"]


def name_file(exc: PhasekitError, path: str | os.PathLike[str]) -> PhasekitError:
    """``exc`` with the file name in front of its message, unless it already names it or is
    about a parameter (a :class:`~phasekit.errors.UsageError` naming one: the file is not
    at fault)."""
    if isinstance(exc, UsageError) and exc.parameter is not None:
        return exc
    where = os.fspath(path)
    message = str(exc)
    if isinstance(exc, InputError):
        if exc.path is not None or message.startswith(where):
            return exc
        return InputError(message, path=where)
    if where in message:
        return exc
    try:
        return type(exc)(f"{where}: {message}")
    except TypeError:  # a subclass with another signature: keep it as it is
        return exc
