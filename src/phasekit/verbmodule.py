"""Modules that are also the verbs of the Python front door.

``pk.periodicity(profile)``, ``pk.phases(...)``, ``pk.structure(...)``, ``pk.schedule(...)``,
``pk.signature(...)``, ``pk.record(...)``, ``pk.energy.fit(...)`` and ``pk.energy.choose(...)``
are the CLI's words, and each is also the name of a subpackage or module. Python binds a
submodule to its parent's attribute whenever it is first imported, so a plain function
``phasekit.periodicity`` would be replaced by the package as soon as anything imported
``phasekit.periodicity.analyze``. Instead each of these modules is made callable: calling it
runs its verb (defined in :mod:`phasekit`, registered in ``phasekit.VERBS``), and everything
else about it (``phasekit.periodicity.analyze``, ``from phasekit.energy.fit import
fit_energy``) is unchanged. ``inspect.signature`` and ``help`` follow ``__wrapped__`` to the
verb.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["VerbModule", "make_callable"]


class VerbModule(types.ModuleType):
    """A module whose call runs its verb (``__wrapped__``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)


def make_callable(name: str) -> None:
    """Make the (loaded) module ``name`` callable as the verb ``phasekit.VERBS[name]``."""
    import phasekit

    module = sys.modules[name]
    module.__class__ = VerbModule
    module.__wrapped__ = phasekit.VERBS[name]  # type: ignore[attr-defined]
