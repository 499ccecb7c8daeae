"""The options of ``pk.energy.fit``, ``pk.energy.choose`` and ``pk.energy.suggest``
(``phasekit energy fit|choose|suggest``), declared and checked once (:mod:`phasekit.options`).

Each verb takes its tuning parameters as keywords or as one of these frozen dataclasses,
never both: ``pk.energy.choose(data, train=10, max_cores=16)`` is ``pk.energy.choose(data,
options=ChooseOptions(train=10, max_cores=16))``. What the verb works on stays outside: the
data, the saved ``fit``, the ``inputs`` (or ``input``) to work for, ``progress``.

The grid (``frequencies``, ``cores``) is an option, not data: it is the machine's settings to
choose among (default: those the campaign measured), it shapes the answer as the limits do,
and its checks (positive, not empty) need no campaign. The checks that need one (``train``
below the number of configurations, ``user_cores`` among the core counts, limits that leave
no setting of the campaign's grid, a time limit on a campaign without times) are the
verbs'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from phasekit.energy.choose import LOSS, TOLERANCE
from phasekit.energy.fit import AUTO, BASELINES, DESIGNS, LOSSES
from phasekit.energy.models import MODEL_ALIASES, MODELS
from phasekit.energy.suggest import K
from phasekit.errors import UsageError
from phasekit.options import Options, Rule

__all__ = ["ChooseOptions", "FitOptions", "GridOptions", "SuggestOptions"]

#: The model names every verb takes (the current ones and their aliases, "seed" for "pt").
_MODEL_NAMES = (*MODELS, *MODEL_ALIASES)


def _one_of(names: Sequence[str]) -> str:
    return f"expected one of {', '.join(names)}"


def _as_tuple(options: Options, name: str, kind: type[int] | type[float] | type[str]
              ) -> None:
    """Field ``name`` of ``options`` (frozen) made a tuple of ``kind`` (None stays None), so
    that options compare and hash as values; UsageError naming it when it cannot be."""
    value = getattr(options, name)
    if value is None:
        return
    try:
        items = (value,) if isinstance(value, str) else tuple(value)
        converted = tuple(kind(v) for v in items)
    except (TypeError, ValueError):
        raise UsageError(f"expected a sequence of {kind.__name__}", parameter=name,
                         value=value) from None
    object.__setattr__(options, name, converted)


@dataclass(frozen=True)
class _EnergyOptions(Options):
    """What the three share: the sequences kept as tuples, and the flags of the parameters
    the command line names otherwise."""

    FLAGS: ClassVar[Mapping[str, str]] = {
        "k": "-k", "max_time_s": "--max-time", "min_frequency_ghz": "--min-frequency",
        "max_frequency_ghz": "--max-frequency"}
    #: The fields that are sequences, and the type of their items.
    SEQUENCES: ClassVar[dict[str, type[int] | type[float] | type[str]]] = {}

    def __post_init__(self) -> None:
        for name, kind in self.SEQUENCES.items():
            _as_tuple(self, name, kind)
        super().__post_init__()


def _model_and_design_rules(model: str, design: str, train: int | None,
                            models: Sequence[str]) -> list[Rule]:
    return [
        ("model", model in models, _one_of([m for m in models if m not in MODEL_ALIASES])),
        ("design", design in DESIGNS, _one_of(DESIGNS)),
        ("train", train is None or train >= 1,
         "expected at least 1 configuration, fewer than the campaign has"),
    ]


@dataclass(frozen=True)
class FitOptions(_EnergyOptions):
    """The tuning parameters of ``pk.energy.fit`` (``phasekit energy fit``; Silva 2024,
    4.8-4.10), declared and checked once: ``pk.energy.fit(data, options=FitOptions(train=10,
    seed=1))`` or, equally, ``pk.energy.fit(data, train=10, seed=1)``.

    ``model``: :data:`~phasekit.energy.MODELS` or "auto" (the one of lowest cross-validated
    loss). ``train``: fit on that many configurations chosen by ``design``
    (:data:`~phasekit.energy.DESIGNS`) with ``seed``, scored on the others (the result's
    ``n_train``; default: every configuration, no holdout). ``baselines``: the
    machine-learning baselines to score beside the model (:data:`~phasekit.energy.BASELINES`;
    they need ``train``). ``compare``: fit the other models on the same points. ``starts``:
    of the multi-start fit. ``use_time``: fit time with energy where every training
    configuration has one. ``loss``: as :func:`~phasekit.energy.fit_model` (default: the
    model's own; not with "auto"). A value out of range is a
    :class:`~phasekit.errors.UsageError` naming the parameter.
    """

    SEQUENCES: ClassVar[dict[str, type[int] | type[float] | type[str]]] = {"baselines": str}

    model: str = AUTO
    train: int | None = None
    design: str = "doptimal"
    seed: int = 0
    baselines: tuple[str, ...] = ()
    compare: bool = True
    starts: int = 8
    use_time: bool = True
    loss: str | None = None

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        unknown = [name for name in self.baselines if name not in BASELINES]
        return [
            *_model_and_design_rules(self.model, self.design, self.train,
                                     (*_MODEL_NAMES, AUTO)),
            ("baselines", not unknown,
             f"unknown baseline(s) {', '.join(unknown)}; expected some of "
             f"{', '.join(BASELINES)}"),
            ("starts", self.starts >= 1, "expected at least 1"),
            ("loss", self.loss is None or self.loss in LOSSES, _one_of(LOSSES)),
            ("loss", self.loss is None or self.model != AUTO,
             "the automatic selection (the default model) fits each candidate with its "
             "own loss; name the model to fit with this one"),
        ]


@dataclass(frozen=True)
class GridOptions(_EnergyOptions):
    """What :class:`ChooseOptions` and :class:`SuggestOptions` share: the model fitted
    (``model``, on ``train`` configurations chosen by ``design`` with ``seed``; as
    :class:`FitOptions`), the grid to choose from (``frequencies`` in GHz x ``cores``;
    default: those of the campaign) and the limits on it (``max_time_s`` per run,
    ``max_cores``, ``min_frequency_ghz``, ``max_frequency_ghz``), and ``tolerance`` (percent;
    its use is each subclass's)."""

    SEQUENCES: ClassVar[dict[str, type[int] | type[float] | type[str]]] = {
        "frequencies": float, "cores": int}

    model: str = AUTO
    train: int | None = None
    design: str = "doptimal"
    seed: int = 0
    frequencies: tuple[float, ...] | None = None
    cores: tuple[int, ...] | None = None
    max_time_s: float | None = None
    max_cores: int | None = None
    min_frequency_ghz: float | None = None
    max_frequency_ghz: float | None = None
    tolerance: float = TOLERANCE

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        def positive(value: float | None) -> bool:
            return value is None or (math.isfinite(value) and value > 0)

        frequencies = self.frequencies or ()
        return [
            *_model_and_design_rules(self.model, self.design, self.train,
                                     (*_MODEL_NAMES, AUTO)),
            ("frequencies", self.frequencies is None or bool(self.frequencies),
             "expected at least one frequency"),
            ("frequencies", all(positive(f) for f in frequencies),
             "expected positive frequencies in GHz"),
            ("cores", self.cores is None or (bool(self.cores) and min(self.cores) >= 1),
             "expected core counts of at least 1"),
            ("max_time_s", self.max_time_s is None or self.max_time_s > 0,
             "expected a positive time in seconds"),
            ("max_cores", self.max_cores is None or self.max_cores >= 1, "expected at least 1"),
            ("min_frequency_ghz", positive(self.min_frequency_ghz),
             "expected a positive frequency in GHz"),
            ("max_frequency_ghz", positive(self.max_frequency_ghz),
             "expected a positive frequency in GHz"),
            ("tolerance", isinstance(self.tolerance, int | float)
             and math.isfinite(self.tolerance) and self.tolerance >= 0,
             "expected a non-negative percentage"),
        ]


@dataclass(frozen=True)
class ChooseOptions(GridOptions):
    """The tuning parameters of ``pk.energy.choose`` (``phasekit energy choose``; Silva 2024,
    4.12), declared and checked once: ``pk.energy.choose(data, options=ChooseOptions(
    max_cores=16))`` or, equally, ``pk.energy.choose(data, max_cores=16)``.

    The model, the grid and its limits as :class:`GridOptions` (the model is fitted only
    without a saved ``fit``). ``user_cores``: the core count the user would run with (the
    baseline of the savings is ondemand at it; default: the worst, random and best core
    count). ``uncertainty``: refit the model into an ensemble to say how sure each choice is;
    a choice is unsure when the chance that it loses more than ``tolerance`` percent against
    the best exceeds :data:`phasekit.energy.choose.RISK` (default
    :data:`phasekit.energy.choose.LOSS`). A value out of range is a
    :class:`~phasekit.errors.UsageError` naming the parameter.
    """

    user_cores: int | None = None
    uncertainty: bool = True
    tolerance: float = LOSS


@dataclass(frozen=True)
class SuggestOptions(GridOptions):
    """The tuning parameters of ``pk.energy.suggest`` (``phasekit energy suggest``), declared
    and checked once: ``pk.energy.suggest(data, options=SuggestOptions(k=3))`` or, equally,
    ``pk.energy.suggest(data, k=3)``.

    ``k`` configurations to suggest (:data:`phasekit.energy.suggest.K`); the model, the grid
    and its limits as :class:`GridOptions`, where ``train`` takes only that many
    configurations of the campaign as measured (to try the loop on a campaign that measured
    everything). ``tolerance``: a configuration within that percent of the minimum under the
    fit or a refit is promising. A value out of range is a
    :class:`~phasekit.errors.UsageError` naming the parameter.
    """

    k: int = K

    def rules(self) -> list[Rule]:
        """The constraints on the fields (:class:`phasekit.options.Options`)."""
        return [("k", self.k >= 1, "expected at least 1 configuration to suggest"),
                *super().rules()]
