"""Errors phasekit raises at its boundaries; the CLI maps them to one line and an exit code.

Each also subclasses the closest built-in, so code that does not know phasekit can
catch them the usual way: :class:`UsageError` and :class:`InputError` are ``ValueError`` (a
value the caller passed, or data read from a file, is not acceptable), and
:class:`UnsupportedError` is a ``RuntimeError`` (nothing is wrong with the arguments; this
machine or installation cannot do it: no counters, no valgrind). ``RuntimeError`` rather than
``OSError`` because the reason is often not a system call's errno, and rather than
``NotImplementedError`` because phasekit does implement it, elsewhere. ``except PhasekitError``
still catches all three.
"""

from __future__ import annotations

import functools
import shlex
from typing import Any


class PhasekitError(Exception):
    """Base class: an expected failure that the CLI reports in one line."""

    exit_code = 1


_NO_VALUE = object()


class UsageError(PhasekitError, ValueError):
    """The user asked for something that cannot be done as asked (exit code 2).

    Given the ``parameter`` at fault (and its ``value``), the message names it as the
    caller wrote it: ``train=10: expected 1 to 5`` for a Python caller, and through
    :meth:`command_line` ``--train 10: expected 1 to 5`` for the command line (``option``
    when the option's name is not the parameter's with dashes).
    """

    exit_code = 2

    def __init__(self, message: str, *, parameter: str | None = None,
                 value: object = _NO_VALUE, option: str | None = None,
                 file: str | None = None) -> None:
        self.detail = message
        self.parameter = parameter
        self.value = value
        self.option = option
        self.file = file
        where = f"{file}: " if file is not None else ""
        if parameter is None:
            super().__init__(f"{where}{message}")
        elif value is _NO_VALUE:
            super().__init__(f"{where}{parameter}: {message}")
        else:
            super().__init__(f"{where}{parameter}={value!r}: {message}")

    def _fields(self) -> dict[str, Any]:
        named: dict[str, Any] = {"parameter": self.parameter, "option": self.option,
                                 "file": self.file}
        if self.value is not _NO_VALUE:
            named["value"] = self.value
        return named

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickled with its parameter and value (from a worker process to its parent)."""
        return functools.partial(type(self), **self._fields()), (self.detail,)

    def renamed(self, parameter: str, option: str | None = None) -> UsageError:
        """This error as told to the caller of a wrapper that names the parameter
        ``parameter`` (``option`` on the command line): the same detail and value."""
        return type(self)(self.detail, **(self._fields() | {"parameter": parameter,
                                                             "option": option}))

    @property
    def has_value(self) -> bool:
        """Whether the error carries the value at fault."""
        return self.value is not _NO_VALUE

    def as_typed(self, option: str, text: str | None = None) -> UsageError:
        """This error as the command line said it: ``option`` for the parameter and, when
        given and the error has a value, ``text`` for the value (``--max-time 30s``, not the
        30.0 seconds the library was given)."""
        fields = self._fields() | {"option": option}
        if text is not None and self.has_value:
            fields["value"] = text
        return type(self)(self.detail, **fields)

    def of_file(self, file: str) -> UsageError:
        """This error as one file's (``file`` in front): the value cannot be taken for that
        file only, so a run over several files goes on with the others."""
        return type(self)(self.detail, **(self._fields() | {"file": file}))

    def command_line(self) -> str:
        """The message as the command line says it: the option instead of the parameter."""
        if self.parameter is None:
            return str(self)
        where = f"{self.file}: " if self.file is not None else ""
        option = self.option or "--" + self.parameter.replace("_", "-")
        if self.value is _NO_VALUE:
            return f"{where}{option}: {self.detail}"
        return f"{where}{option} {_as_typed(self.value)}: {self.detail}"


def _as_typed(value: object) -> str:
    """``value`` as it is typed on a command line: ``0.5``, ``1,2``, ``'a b'``."""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):  # quoted when it ends like the message's colon would
        return shlex.quote(value) if not value.endswith(":") else f"'{value}'"
    if isinstance(value, tuple | list):
        return ",".join(_as_typed(v) for v in value)
    return str(value)


class InputError(PhasekitError, ValueError):
    """Bad input data: names the file, the line or column, and what was expected (exit code 3)."""

    exit_code = 3

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: str | None = None) -> None:
        self.path = path
        self.line = line
        self.column = column
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column!r}")
        prefix = ": ".join([", ".join(where)]) + ": " if where else ""
        super().__init__(prefix + message)


class UnsupportedError(PhasekitError, RuntimeError):
    """This machine cannot do what was asked (for example no hardware counters); says why (exit code 4)."""

    exit_code = 4


class PhasekitWarning(UserWarning):
    """Something was done to the input that the user should know about (e.g. resampling)."""
