"""``pk.powermodel``: the verbs of ``phasekit powermodel`` (the Python front door)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from phasekit.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from phasekit.signature.powermodels.fit import PowerModelFit

__all__ = ["fit"]


def fit(table: pd.DataFrame | str | os.PathLike[str], *, target: str = "power_w",
        model: str = "linear", **options: Any) -> PowerModelFit:
    """Fit a power model of ``target`` on counters and score it on held-out rows
    (``phasekit powermodel fit``; Salinas Hilburg 2020, chapter 3):
    :func:`phasekit.signature.powermodels.fit_power_model`.

    ``table``: a DataFrame of counters and measured power, one row per sample, or its CSV
    file. ``model``: "linear", "pls" or "ge"; other keywords (``features``, ``seed``,
    ``test_fraction``, ``split``, ``server``, ``generations``, ...) go to ``fit_power_model``.
    """
    import pandas as pd

    from phasekit.signature.powermodels import fit_power_model

    source = None
    if not isinstance(table, pd.DataFrame):
        from phasekit.io import read_csv_table

        source = os.fspath(table)
        table = read_csv_table(table)
        if len(table) == 0:
            raise InputError("the table has no rows", path=source)
    options.setdefault("source", source)
    return fit_power_model(table, target=target, model=model, **options)
