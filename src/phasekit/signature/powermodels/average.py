"""The average of power models (:class:`AveragePowerModel`): what ``model="auto"`` takes when
validation cannot tell its best candidates apart. Not in the thesis.

Two models whose errors are equally large but not the same errors average into a model with
smaller errors (Bates and Granger 1969): the mean of predictions errs by the mean of the
errors, whose square is at most the mean of the squares, and less by the part of the errors
the models do not share. Stored as JSON with each member's own stored form."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from phasekit.results import plain
from phasekit.signature.powermodels.ge import GEPowerModel
from phasekit.signature.powermodels.protocol import MODEL_VERSION

__all__ = ["AveragePowerModel", "average_label", "kind_label"]

#: How each model kind reads in a sentence.
LABELS = {"linear": "linear", "pls": "PLS", "ge": "GE", "boosting": "gradient boosting",
          "server": "server"}


def kind_label(kind: str) -> str:
    """``kind`` (a stored model's ``model`` field) as it reads in a sentence."""
    return LABELS.get(kind, kind)


def average_label(kinds: Sequence[str]) -> str:
    """``average of GE and gradient boosting`` for ``kinds`` ("ge", "boosting")."""
    names = [kind_label(kind) for kind in kinds]
    listed = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else "".join(names)
    return f"average of {listed}"


def _formula(model: Any) -> str:
    """A member's formula in raw counter units, or what it is in words (trees)."""
    if isinstance(model, GEPowerModel):
        return model.text.partition(" = ")[2]
    return str(model.expression)


@dataclass(frozen=True)
class AveragePowerModel:
    """The mean of the ``members``' predictions (W), each member reading its own counters."""

    members: tuple[Any, ...]

    @property
    def kinds(self) -> tuple[str, ...]:
        """The members' kinds (linear, pls, ge, boosting), in order."""
        return tuple(str(member.to_dict()["model"]) for member in self.members)

    @property
    def label(self) -> str:
        """``average of GE and gradient boosting``."""
        return average_label(self.kinds)

    @property
    def features(self) -> tuple[str, ...]:
        """Every counter a member reads, in the order first read."""
        return tuple(dict.fromkeys(f for member in self.members for f in member.features))

    @property
    def target(self) -> str:
        return str(getattr(self.members[0], "target", "power_w"))

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.mean([np.asarray(member.predict(X), float) for member in self.members],
                       axis=0)

    @property
    def expression(self) -> str:
        """Each member's formula or description, as the average of them."""
        return f"the average of ({') and ('.join(_formula(m) for m in self.members)})"

    @property
    def text(self) -> str:
        return f"{self.target} = {self.expression}"

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model", "version": MODEL_VERSION, "model": "average",
                      "target": self.target, "features": list(self.features),
                      "expression": self.expression,
                      "members": [member.to_dict() for member in self.members]})

    @staticmethod
    def of(members: Sequence[Any]) -> AveragePowerModel:
        """The average of ``members`` (at least two models)."""
        if len(members) < 2:
            raise ValueError("an average needs at least two models")
        return AveragePowerModel(tuple(members))
