"""Runs and configurations as NumPy columns, without pandas (0.25 s to import): what the
energy tables, fit, choice and suggestions read (``Campaign.table`` and
:func:`phasekit.energy.fit.configurations` are the same as DataFrames)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.campaign import REGION_PREFIX, Campaign

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NO_INPUT", "NUMERIC_COLUMNS", "Configurations", "campaign_run_columns",
           "input_label"]

#: Label of an input when the campaign has none (a program without inputs).
NO_INPUT = "-"
#: The numeric columns of a run.
NUMERIC_COLUMNS = ("threads", "cores", "frequency_ghz", "time_s", "energy_j")


def input_label(v: Any) -> str:
    """An input label as a string: numbers as ``%g`` (1.0 -> "1"), missing as
    :data:`NO_INPUT`."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or type(v).__name__ == "NAType":
        return NO_INPUT
    if isinstance(v, float | np.floating):
        return f"{float(v):g}"
    if isinstance(v, np.integer):
        return str(int(v))
    return str(v).strip() or NO_INPUT


def campaign_run_columns(campaign: Campaign) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The columns of every run of ``campaign`` (as :meth:`Campaign.table` has them, without
    pandas) and the mask of the ok runs."""
    runs = campaign.runs

    def floats(name: str) -> np.ndarray:
        return np.fromiter((math.nan if (v := getattr(r, name)) is None else v for r in runs),
                           dtype=float, count=len(runs))

    columns = {name: floats(name) for name in NUMERIC_COLUMNS}
    columns["input"] = np.array([input_label(r.input) for r in runs], dtype=object)
    for name in campaign.region_names:
        columns[REGION_PREFIX + name] = np.fromiter(
            (r.region_time(name) if name in r.regions else math.nan for r in runs),
            dtype=float, count=len(runs))
    return columns, np.fromiter((r.ok for r in runs), dtype=bool, count=len(runs))


class Configurations:
    """One row per configuration as NumPy columns: what
    :func:`phasekit.energy.fit.configurations` returns as a DataFrame, without pandas (0.2-0.25 s
    to import, a third of the ``energy fit`` command when it used pandas). ``configs[name]`` is
    a column, ``len(configs)`` the number of rows; :meth:`of` takes a DataFrame of the same
    columns too."""

    __slots__ = ("columns",)

    def __init__(self, columns: Mapping[str, np.ndarray]) -> None:
        self.columns = dict(columns)

    @classmethod
    def of(cls, data: Configurations | pd.DataFrame) -> Configurations:
        """``data`` itself, or a DataFrame of the same columns as NumPy columns."""
        if isinstance(data, Configurations):
            return data
        return cls({str(name): data[name].to_numpy() for name in data.columns})

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    def __len__(self) -> int:
        return len(self.columns["energy_j"])

    def __repr__(self) -> str:
        return f"Configurations({len(self)} configurations)"

    def select(self, rows: np.ndarray) -> Configurations:
        """The rows ``rows`` (a mask or indices), renumbered from 0."""
        return Configurations({k: v[rows] for k, v in self.columns.items()})

    def row(self, i: int) -> dict[str, Any]:
        """Row ``i`` as a dict of column name to value."""
        return {k: v[i] for k, v in self.columns.items()}

    def to_frame(self) -> pd.DataFrame:
        """The columns as a DataFrame (:func:`phasekit.energy.fit.configurations`'s)."""
        import pandas as pd

        return pd.DataFrame(self.columns)

    def _repr_html_(self) -> str:
        """In a notebook: the table (:meth:`to_frame`)."""
        return str(self.to_frame()._repr_html_())
