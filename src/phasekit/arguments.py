"""What the Python verbs accept as their data: an object or the file that holds it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from phasekit.profile import Profile

if TYPE_CHECKING:
    from phasekit.trace import Trace

PathLike = str | os.PathLike[str]

__all__ = ["PathLike", "as_names", "as_profile", "as_trace"]


def as_profile(data: Profile | PathLike) -> Profile:
    """``data`` if it is a :class:`Profile`, else the profile its file holds."""
    if isinstance(data, Profile):
        return data
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
