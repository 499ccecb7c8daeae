"""Modules that are also the verbs of the Python front door.

``pk.periodicity(profile)``, ``pk.phases(...)``, ``pk.structure(...)``, ``pk.schedule(...)``,
``pk.signature(...)``, ``pk.record(...)``, ``pk.energy.fit(...)``, ``pk.energy.choose(...)``,
``pk.energy.suggest(...)``, ``pk.energy.phasediv(...)`` and ``pk.energy.fingerprint(...)``
are the CLI's words, and each is also the name of a subpackage
or module. Python binds a submodule to its parent's attribute whenever it is first imported,
so a plain function ``phasekit.periodicity`` would be replaced by the package as soon as
anything imported ``phasekit.periodicity.analyze``. Instead each of these modules is made
callable: calling it runs its verb, a function of the package's ``api`` module named by
``"module:function"`` and imported on the first call, and everything else about the module
(``phasekit.periodicity.analyze``, ``from phasekit.energy.fit import fit_energy``) is
unchanged. ``inspect.signature`` and ``help`` follow ``__wrapped__`` to the verb.

The verb is named rather than imported so that the library module made callable does not
import its own front door: ``phasekit.energy.fit`` is what ``phasekit.energy.api.fit`` runs.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import Any

__all__ = ["VerbModule", "make_callable"]


class VerbModule(types.ModuleType):
    """A module whose call runs its verb (``__wrapped__``, resolved from ``__verb__``)."""

    __verb__: str

    @property
    def __wrapped__(self) -> Any:
        module, _, function = self.__verb__.partition(":")
        return getattr(import_module(module), function)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)


def make_callable(name: str, verb: str) -> None:
    """Make the (loaded) module ``name`` callable as ``verb`` (``"package.api:function"``)."""
    module = sys.modules[name]
    module.__class__ = VerbModule
    module.__verb__ = verb  # type: ignore[attr-defined]
