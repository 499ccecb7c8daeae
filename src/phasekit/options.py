"""The options of an analysis, declared once and checked once (scikit-learn's style).

Every analysis takes its tuning parameters either as keywords or as one frozen dataclass of
them, never both: ``pk.periodicity(profile, band=0.2)`` is ``pk.periodicity(profile,
options=PeriodicityOptions(band=0.2))``. A subclass declares its fields with their defaults
and lists its constraints in :meth:`Options.rules`; a value out of range is a
:class:`~phasekit.errors.UsageError` naming the *parameter* (the command line prints it as
the flag spelled the same way with dashes, ``band`` as ``--band``). Options are values:
compared, hashed, kept in a result's ``params`` with :meth:`Options.to_dict`, and changed
with :func:`dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, TypeVar

from phasekit.errors import UsageError

__all__ = ["Options", "Rule"]

#: One constraint: (parameter, holds, what was expected).
Rule = tuple[str, bool, str]

_O = TypeVar("_O", bound="Options")


@dataclass(frozen=True)
class Options:
    """Base of every analysis's options (module docstring). Subclasses are frozen
    dataclasses whose fields are the parameters, and override :meth:`rules`."""

    #: The flag of each parameter the command line names otherwise than with dashes
    #: (``max_time_s`` is ``--max-time``): what an error's command line says.
    FLAGS: ClassVar[Mapping[str, str]] = {}

    def rules(self) -> Iterable[Rule]:
        """The constraints on the fields, each ``(parameter, holds, expected)``."""
        return ()

    def __post_init__(self) -> None:
        for name, holds, expected in self.rules():
            if not holds:
                raise UsageError(expected, parameter=name, value=getattr(self, name),
                                 option=self.FLAGS.get(name))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The parameters, in their declared order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def of(cls: type[_O], options: _O | None, keywords: Mapping[str, Any], *,
           verb: str) -> _O:
        """``options``, or the options that ``keywords`` name; never both.

        ``verb`` names the function in the error for a keyword it does not take, as Python
        says it (``analyze() got an unexpected keyword argument 'bnad'``).
        """
        unknown = sorted(set(keywords) - set(cls.names()))
        if unknown:
            raise TypeError(f"{verb}() got an unexpected keyword argument {unknown[0]!r}")
        if options is None:
            return cls(**keywords)
        if not isinstance(options, cls):
            raise UsageError(f"expected a {cls.__name__}, got {type(options).__name__}",
                             parameter="options")
        if keywords:
            raise UsageError(f"give options= or the keywords {', '.join(sorted(keywords))}, "
                             "not both", parameter="options")
        return options

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dictionary (what a result's ``params`` keeps)."""
        return asdict(self)
