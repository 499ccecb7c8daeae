"""What the Python verbs accept as their data: an object or the file that holds it."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from phasekit.profile import Profile

if TYPE_CHECKING:
    from phasekit.errors import PhasekitError
    from phasekit.trace import Trace

PathLike = str | os.PathLike[str]

__all__ = ["PathLike", "as_names", "as_profile", "as_trace", "callers_names", "name_file"]


def as_profile(data: Profile | Trace | PathLike) -> Profile:
    """``data`` if it is a :class:`Profile`, else the profile its file holds; a
    :class:`~phasekit.trace.Trace`, or a trace's file, binned into one at its default bin,
    every rank summed (:meth:`~phasekit.trace.Trace.profile`)."""
    if isinstance(data, Profile):
        return data
    from phasekit.trace import Trace

    if isinstance(data, Trace):
        return data.profile()  # type: ignore[no-any-return]
    from phasekit.io import read_profile

    return read_profile(data)


def as_trace(data: Trace | PathLike) -> Trace:
    """``data`` if it is a :class:`~phasekit.trace.Trace`, else the trace its file holds."""
    from phasekit.trace import Trace

    if isinstance(data, Trace):
        return data
    from phasekit.io import read_trace

    return read_trace(data)


def as_names(value: Sequence[str] | str | None) -> list[str] | None:
    """A name or names as a list (None stays None)."""
    return [value] if isinstance(value, str) else None if value is None else list(value)


def name_file(error: PhasekitError, path: PathLike) -> PhasekitError:
    """``error`` with the file it came from in front of its message, unless it already names
    it or is about a parameter (the file is not at fault then).

    Parameters
    ----------
    error
        An error raised while reading or analyzing ``path``.
    path
        The file (:func:`phasekit.io.naming.name_file`).
    """
    from phasekit.io.naming import name_file as named

    return named(error, path)


@contextmanager
def callers_names(renames: Mapping[str, str], source: PathLike | None = None
                  ) -> Iterator[None]:
    """Errors raised inside, as the caller of a verb reads them: a usage error about a
    parameter the verb names otherwise is raised under the verb's name (``{"n_train":
    "train"}``); any other phasekit error is named after the input ``source`` when given."""
    from phasekit.errors import PhasekitError, UsageError

    try:
        yield
    except UsageError as exc:
        if exc.parameter in renames:
            raise exc.renamed(renames[exc.parameter]) from None
        if source is None:
            raise
        raise name_file(exc, source) from exc
    except PhasekitError as exc:
        if source is None:
            raise
        raise name_file(exc, source) from exc
