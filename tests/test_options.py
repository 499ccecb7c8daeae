"""The options of every analysis: declared once as a frozen dataclass, checked once with the
parameter named, given as ``options=`` or as keywords, never both (phasekit.options)."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass
from typing import ClassVar

import pytest

import phasekit
from phasekit.errors import UsageError
from phasekit.options import Options


def _all_options() -> list[type[Options]]:
    """Every Options subclass defined in the library (its modules imported first)."""
    for module in pkgutil.walk_packages(phasekit.__path__, "phasekit."):
        if ".cli" not in module.name and not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    found: list[type[Options]] = []
    todo = [Options]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("phasekit."):
                found.append(sub)
            todo.append(sub)
    return sorted(set(found), key=lambda c: c.__name__)


OPTIONS = _all_options()


@dataclass(frozen=True)
class Tiny(Options):
    size: int = 3
    share: float = 0.5

    def rules(self):
        return [("size", self.size >= 1, "expected at least 1"),
                ("share", 0 <= self.share <= 1, "expected a share in [0, 1]")]


def test_a_rule_that_fails_names_its_parameter_and_value() -> None:
    with pytest.raises(UsageError) as caught:
        Tiny(size=0)
    assert caught.value.parameter == "size" and caught.value.value == 0
    assert caught.value.command_line() == "--size 0: expected at least 1"
    with pytest.raises(UsageError) as caught:
        Tiny(share=2.0)
    assert caught.value.parameter == "share"


def test_options_or_keywords_never_both() -> None:
    assert Tiny.of(None, {"size": 4}, verb="tiny") == Tiny(size=4)
    given = Tiny(size=5)
    assert Tiny.of(given, {}, verb="tiny") is given
    with pytest.raises(UsageError) as caught:
        Tiny.of(given, {"share": 0.1}, verb="tiny")
    assert caught.value.parameter == "options" and "share" in str(caught.value)
    with pytest.raises(TypeError, match=r"tiny\(\) got an unexpected keyword argument 'sise'"):
        Tiny.of(None, {"sise": 4}, verb="tiny")
    with pytest.raises(UsageError, match="expected a Tiny"):
        Tiny.of({"size": 4}, {}, verb="tiny")  # type: ignore[arg-type]


def test_the_library_declares_its_options_on_the_base() -> None:
    assert "PeriodicityOptions" in {c.__name__ for c in OPTIONS}


#: Values for the fields an options class requires (no default): a schedule's machine.
REQUIRED = {"servers": 2, "cores": 4}


@pytest.mark.parametrize("cls", OPTIONS, ids=lambda c: c.__name__)
def test_every_options_class_is_a_frozen_value_with_checked_defaults(cls: type[Options]) -> None:
    required = {f.name: REQUIRED[f.name] for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    default = cls(**required)  # the defaults pass their own rules
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    assert cls.of(None, required, verb="f") == default and hash(default) == hash(cls(**required))
    assert set(default.to_dict()) == set(cls.names())
    assert all(flag.startswith("-") for flag in cls.FLAGS.values()), cls.FLAGS
    if cls.names():  # a private base may declare none
        first = cls.names()[0]
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(default, first, getattr(default, first))
    for name, _holds, expected in default.rules():
        assert name in cls.names(), f"{cls.__name__}: a rule on {name!r}, not a field"
        assert expected.strip(), f"{cls.__name__}.{name}: a rule without its expectation"
    assert cls.__doc__ and cls.__doc__.strip()


#: (command path, options class name): the commands whose flags set an analysis's options.
COMMAND_OPTIONS = [(("analyze",), "PeriodicityOptions"), (("phases",), "PhaseOptions"),
                   (("structure",), "StructureOptions"), (("energy", "fit"), "FitOptions"),
                   (("energy", "choose"), "ChooseOptions"),
                   (("energy", "suggest"), "SuggestOptions"),
                   (("powermodel", "fit"), "PowerModelOptions"), (("schedule",), "ScheduleOptions")]


@pytest.mark.parametrize(("path", "name"), COMMAND_OPTIONS, ids=lambda v: " ".join(v)
                         if isinstance(v, tuple) else v)
def test_a_flag_defaults_to_its_options_default(path: tuple[str, ...], name: str) -> None:
    """A flag named as an option (``--min-pts`` / ``min_pts``) is either unset (None: the
    library's default applies) or set to the default its options class declares: the
    command line does not keep a second copy that could drift."""
    from phasekit.cli import _build_verb

    command = _build_verb(path[0])
    for sub in path[1:]:
        command = command.commands[sub]
    cls = next(c for c in OPTIONS if c.__name__ == name)
    defaults = cls().to_dict()
    shared = [p for p in command.params if p.name in defaults]
    assert shared, f"phasekit {' '.join(path)} sets none of {name}'s fields"
    for flag in shared:
        if flag.default is not None:
            assert flag.default == defaults[flag.name], (
                f"phasekit {' '.join(path)} --{flag.name.replace('_', '-')} defaults to "
                f"{flag.default!r}, {name}.{flag.name} to {defaults[flag.name]!r}")


def test_a_parameter_named_otherwise_on_the_command_line_says_its_flag() -> None:
    @dataclass(frozen=True)
    class Limited(Options):
        FLAGS: ClassVar[dict[str, str]] = {"max_time_s": "--max-time"}
        max_time_s: float | None = None

        def rules(self):
            return [("max_time_s", self.max_time_s is None or self.max_time_s > 0,
                     "expected a positive time")]

    with pytest.raises(UsageError) as caught:
        Limited(max_time_s=-1.0)
    assert caught.value.parameter == "max_time_s"
    assert caught.value.command_line() == "--max-time -1: expected a positive time"
