"""The installed distribution's version, read when asked."""

from __future__ import annotations

from functools import cache

__all__ = ["version"]


@cache
def version() -> str:
    """phasekit's version (importlib.metadata: 10 ms, so read when asked; "0.0.0" when
    running from a source tree without installation)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("phasekit")
    except PackageNotFoundError:
        return "0.0.0"
