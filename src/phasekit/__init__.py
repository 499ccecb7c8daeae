"""phasekit: what an HPC application does over time, without knowing its code."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from phasekit.errors import InputError, PhasekitError, UnsupportedError, UsageError
from phasekit.profile import Profile

try:
    __version__ = version("phasekit")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"

__all__ = [
    "InputError",
    "PhasekitError",
    "Profile",
    "UnsupportedError",
    "UsageError",
    "__version__",
]
