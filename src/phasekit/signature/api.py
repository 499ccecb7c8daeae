"""``pk.signature``: the verb of ``phasekit signature run`` (the Python front door)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike

if TYPE_CHECKING:
    from phasekit.signature.paths import Signature
    from phasekit.signature.reconstruct import SignatureEstimate

__all__ = ["signature"]


def _power_model(value: Any) -> Any:
    """A power model from a model, its JSON file, or a power-model fit (its model)."""
    if isinstance(value, str | os.PathLike):
        from phasekit.signature.powermodels import read_power_model

        return read_power_model(value)
    return getattr(value, "model", value)


def signature(signature: Signature | PathLike, *, power_model: Any = None,
              **options: Any) -> SignatureEstimate:
    """Run a signature's partial runs and estimate the program's time and energy
    (``phasekit signature run``; Salinas Hilburg 2020, 4.1.4-4.1.6):
    :func:`phasekit.signature.reconstruct.run_signature`.

    Parameters
    ----------
    signature
        A :class:`~phasekit.signature.paths.Signature` or its directory (``phasekit
        signature build``).
    power_model
        A power model, its JSON file, or a power-model fit (its model).
    **options
        ``p``, ``s``, ``interval``, ``compare``, ``cores``, ``mode``, ``timeout``,
        ``repeats``.
    """
    from phasekit.signature.paths import Signature, load_signature
    from phasekit.signature.reconstruct import run_signature

    if not isinstance(signature, Signature):
        signature = load_signature(signature)
    return run_signature(signature, power_model=_power_model(power_model), **options)
