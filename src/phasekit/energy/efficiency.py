"""Parallel efficiency and per-configuration energy of a campaign: the PaScal Viewer's data.

Silva 2024, section 3.10.1 (Figs. 3.5-3.7, the PaScal Viewer): one efficiency
diagram per region and one for the whole program, x = input, y = thread count, where
efficiency = speedup / processing units and speedup = T(1 thread) / T(p) for the same input.
Figs. 3.8-3.9 add the traditional plots (speedup and energy over cores per input) and
section 4.11 (Figs. 4.11-4.12) the energy-time Pareto frontier over configurations; this
module computes their tables, :mod:`phasekit.plot.energy` draws them.

:func:`efficiency_table` works from time alone (a campaign recorded on a virtual machine has no
frequency and no energy). Choices the thesis leaves open, ours:

- Processing units are the thread counts; a campaign without threads (PaScal Analyzer output
  keyed by cores) uses the core counts. When threads and cores were varied independently, the
  runs on the largest core count are used (``cores=`` chooses another), and a note says so.
- Several frequencies: the efficiency is computed at one of them, the highest unless
  ``frequency=`` is given (the speedup must compare runs at the same frequency), noted.
- Time of a cell: the mean over the ``ok`` repetitions with a positive time. A region's time
  is the ``region:NAME`` column of :meth:`Campaign.table` (the union of its threads'
  intervals, Silva 2024 section 3.2).
- Reference time: T(1) when the input ran on one thread; otherwise the smallest thread count
  p0 that ran, assuming linear speedup up to it, T(1) ~ p0 T(p0): the efficiency at p0 is then
  1 by construction and the others are relative to it (they overestimate the true efficiency
  when the speedup up to p0 is below p0). A note names the inputs concerned.
- Inputs in the campaign's declared order (``Campaign.inputs``, smallest first, the thesis's
  convention that input k+1 needs twice the sequential time of input k), else numerically
  when every label is a number, else in order of appearance.
- Energy without time (PaScal's tables of frequency_ghz, cores, input, energy_j): the
  configurations keep their energy (:func:`configuration_table`, the per-input energy
  heatmaps), :func:`efficiency_tables` is empty and the note :data:`NO_TIME_NOTE` says why;
  :func:`efficiency_table` refuses them (InputError).

The tables are computed with NumPy alone (:class:`RunColumns`), so that ``phasekit energy
plot`` does not import pandas (0.25 s of a 1 s command); pandas is imported where a caller
asks for a DataFrame (:func:`campaign_frame`, ``to_frame()``, ``ConfigurationTable.frame``)
or passes one in.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.campaign import REGION_PREFIX, Campaign
from phasekit.energy.columns import (
    NO_INPUT,
    NUMERIC_COLUMNS,
    campaign_run_columns,
    input_label,
)
from phasekit.errors import InputError, UsageError
from phasekit.io.table import to_number
from phasekit.results import Result, check_version, plain

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = [
    "NO_TIME_NOTE",
    "ConfigurationTable",
    "EfficiencyTable",
    "RunColumns",
    "campaign_columns",
    "campaign_frame",
    "configuration_table",
    "efficiency_table",
    "efficiency_tables",
    "pareto_mask",
]

EFFICIENCY_VERSION = 1
#: The note of a campaign that measured energy but no run time (PaScal's tables).
NO_TIME_NOTE = "no run times: efficiency and the time-energy frontier need time_s"
_FREQ_TOL = 1e-6  # GHz: frequencies equal within 1 kHz


# --- the runs as columns -----------------------------------------------------------------------
def _floats(values: Any) -> np.ndarray:
    """A column as float64, NaN where a cell is not a number."""
    array = np.asarray(values)
    if array.dtype.kind in "biuf":
        return array.astype(float)
    return np.fromiter(map(to_number, array.ravel().tolist()), dtype=float,
                       count=array.size)


def _input_order(present: Sequence[str], declared: Sequence[str]) -> tuple[str, ...]:
    """Declared order first, then numeric order when every label is a number, else appearance."""
    seen = list(dict.fromkeys(present))
    ordered = [x for x in dict.fromkeys(map(str, declared)) if x in seen]
    rest = [x for x in seen if x not in ordered]
    numbers = [to_number(x) for x in rest]
    if rest and not any(math.isnan(v) for v in numbers):
        rest = [x for _, x in sorted(zip(numbers, rest, strict=True))]
    return tuple(ordered + rest)


class RunColumns:
    """The ok runs of a campaign as NumPy columns, and the input order (:func:`campaign_columns`).

    ``columns`` maps threads, cores, frequency_ghz, time_s, energy_j (float64, NaN when not
    measured) and each ``region:NAME`` (float64) to arrays of one value per run, and ``input``
    to an object array of labels (strings); ``inputs`` is the input order.
    """

    __slots__ = ("columns", "inputs")

    def __init__(self, columns: Mapping[str, np.ndarray], inputs: Sequence[str]) -> None:
        self.columns = dict(columns)
        self.inputs = tuple(inputs)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    def __len__(self) -> int:
        return len(self.columns["input"])

    def __repr__(self) -> str:
        return f"RunColumns({len(self)} runs, inputs {', '.join(self.inputs) or '-'})"

    @property
    def regions(self) -> tuple[str, ...]:
        """The regions' names (their columns without the ``region:`` prefix)."""
        return tuple(c[len(REGION_PREFIX):] for c in self.columns if c.startswith(REGION_PREFIX))

    @property
    def has_time(self) -> bool:
        """Whether any run has a positive time (energy-only campaigns have none)."""
        return bool(np.any(self.columns["time_s"] > 0))

    def select(self, mask: np.ndarray) -> RunColumns:
        """The runs where ``mask`` is true, and the inputs still present, in order."""
        mask = np.asarray(mask, dtype=bool)
        columns = {k: v[mask] for k, v in self.columns.items()}
        present = set(columns["input"].tolist())
        return RunColumns(columns, tuple(x for x in self.inputs if x in present))

    def to_frame(self) -> pd.DataFrame:
        """The columns as a DataFrame (:func:`campaign_frame`'s)."""
        import pandas as pd

        return pd.DataFrame({k: pd.Series(v, dtype=object) if v.dtype == object else v
                             for k, v in self.columns.items()})


def _table_raw(data: Any, source: str | None) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The columns of a table (a DataFrame or a mapping of column name to values) and the
    mask of its ok runs; InputError naming ``source`` and the column when a required column
    is missing."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(data, pandas.DataFrame):
        names = {str(c).strip(): c for c in data.columns}

        def numeric(name: str) -> np.ndarray:
            return pandas.to_numeric(data[names[name]], errors="coerce").to_numpy(
                dtype=float, na_value=np.nan)

        def cells(name: str) -> list[Any]:
            return data[names[name]].tolist()
    elif isinstance(data, Mapping):
        names = {str(c).strip(): c for c in data}

        def numeric(name: str) -> np.ndarray:
            return _floats(data[names[name]])

        def cells(name: str) -> list[Any]:
            return np.asarray(data[names[name]], dtype=object).tolist()
    else:
        raise TypeError("expected a Campaign, a DataFrame or a mapping of columns, got "
                        f"{type(data).__name__}")
    if "time_s" not in names and "energy_j" not in names:
        raise InputError("missing column; expected the run time in seconds (time_s) or the "
                         "energy in joules (energy_j), and threads or cores, input",
                         path=source, column="time_s")
    if "threads" not in names and "cores" not in names:
        raise InputError("missing column; expected threads or cores", path=source,
                         column="threads")
    n = len(cells(next(iter(names)))) if names else 0
    columns = {name: numeric(name) if name in names else np.full(n, np.nan)
               for name in NUMERIC_COLUMNS}
    columns["input"] = (np.array([input_label(v) for v in cells("input")], dtype=object)
                        if "input" in names else np.full(n, NO_INPUT, dtype=object))
    for name in names:
        if name.startswith(REGION_PREFIX) and len(name) > len(REGION_PREFIX):
            columns[name] = numeric(name)
    ok = np.ones(n, dtype=bool)
    if "status" in names:
        ok = np.array([str(v).strip() in ("ok", "nan", "None", "") for v in cells("status")],
                      dtype=bool)
    return columns, ok


def campaign_columns(data: Campaign | pd.DataFrame | Mapping[str, Any] | RunColumns, *,
                     source: str | None = None, inputs: Sequence[str] = ()) -> RunColumns:
    """The ``ok`` runs of ``data`` as NumPy columns with the input order (no pandas).

    ``data`` is a :class:`Campaign`, or a table with its columns (``input``, ``threads`` or
    ``cores``, ``time_s`` or ``energy_j`` or both; optionally ``frequency_ghz``, ``status``,
    ``region:NAME``) as a DataFrame or a mapping of column name to values (what
    :func:`phasekit.io.table.read_csv_columns` returns), or :class:`RunColumns` (returned as
    they are, in the order ``inputs`` when given). Thread and core counts below 1 are read as
    not measured. InputError naming ``source`` and the column when a required column is
    missing or no run has a positive time or energy.
    """
    if isinstance(data, RunColumns):
        if not inputs:
            return data
        return RunColumns(data.columns, _input_order(data["input"].tolist(), inputs))
    if isinstance(data, Campaign):
        columns, ok = campaign_run_columns(data)
        inputs = tuple(inputs) or data.inputs
    else:
        columns, ok = _table_raw(data, source)
    for name in ("threads", "cores"):
        values = columns[name]
        columns[name] = np.where(np.isfinite(values) & ~(values >= 1), np.nan, values)
    columns = {k: v[ok] for k, v in columns.items()}
    if not (np.isfinite(columns["threads"]).any() or np.isfinite(columns["cores"]).any()):
        raise InputError("no run has a thread or core count", path=source, column="threads")
    if not ((columns["time_s"] > 0).any() or (columns["energy_j"] > 0).any()):
        raise InputError("no successful run with a positive time_s or energy_j: nothing to "
                         "plot", path=source, column="time_s")
    return RunColumns(columns, _input_order(columns["input"].tolist(), inputs))


def campaign_frame(data: Campaign | pd.DataFrame | Mapping[str, Any], *,
                   source: str | None = None, inputs: Sequence[str] = ()
                   ) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The ``ok`` runs of ``data`` as a tidy frame, and the input order.

    ``data`` as :func:`campaign_columns` takes it. The frame has numeric ``threads``,
    ``cores``, ``frequency_ghz``, ``time_s``, ``energy_j`` (NaN when not measured), ``input``
    labels (strings) and the region columns. InputError naming ``source`` and the column when
    a required column is missing or no run has a positive time or energy.
    """
    runs = campaign_columns(data, source=source, inputs=inputs)
    frame = runs.to_frame()
    return frame[["threads", "cores", "frequency_ghz", "input", "time_s", "energy_j",
                  *(c for c in frame.columns if c.startswith(REGION_PREFIX))]], runs.inputs


def _fmt(value: float) -> str:
    return f"{value:g}"


# --- efficiency --------------------------------------------------------------------------------
@dataclass(frozen=True)
class EfficiencyTable(Result):
    """Efficiency (speedup / processing units) over inputs x thread counts, Silva 2024 §3.10.1.

    Arrays are ``(len(counts), len(inputs))``, NaN where nothing was measured: ``time_s`` (mean
    over ok repetitions), ``runs`` (repetitions averaged), ``speedup`` and ``efficiency``.
    ``reference[j]`` is the thread count whose time gives input j's T(1) (1, or p0 when the
    input has no 1-thread run: T(1) ~ p0 T(p0)), ``reference_time_s[j]`` that T(1).
    """

    region: str | None
    unit: str
    inputs: tuple[str, ...]
    counts: tuple[int, ...]
    time_s: np.ndarray = field(repr=False)
    runs: np.ndarray = field(repr=False)
    speedup: np.ndarray = field(repr=False)
    efficiency: np.ndarray = field(repr=False)
    reference: tuple[int, ...] = ()
    reference_time_s: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    frequency_ghz: float | None = None
    cores: int | None = None
    notes: tuple[str, ...] = ()

    KIND: ClassVar[str] = "efficiency"

    @property
    def name(self) -> str:
        """``"program"`` for the whole program, else the region's name."""
        return "program" if self.region is None else self.region

    @property
    def estimated(self) -> tuple[bool, ...]:
        """Per input: whether T(1) was estimated from p0 > 1 threads."""
        return tuple(r != 1 for r in self.reference)

    def _rows(self) -> list[dict[str, Any]]:
        rows = []
        for j, label in enumerate(self.inputs):
            for i, p in enumerate(self.counts):
                if self.runs[i, j] > 0:
                    rows.append({"input": label, self.unit: p, "runs": int(self.runs[i, j]),
                                 "time_s": float(self.time_s[i, j]),
                                 "speedup": float(self.speedup[i, j]),
                                 "efficiency": float(self.efficiency[i, j])})
        return rows

    def to_frame(self) -> pd.DataFrame:
        """One row per measured (input, count): input, threads (or cores), runs, time_s,
        speedup, efficiency."""
        import pandas as pd

        return pd.DataFrame(self._rows(), columns=["input", self.unit, "runs", "time_s",
                                                   "speedup", "efficiency"])

    def to_dict(self) -> dict[str, Any]:
        reference = [{"input": label, self.unit: p, "time_s": t, "estimated": p != 1}
                     for label, p, t in zip(self.inputs, self.reference,
                                            self.reference_time_s.tolist(), strict=True)]
        return plain({
            "kind": "efficiency", "version": EFFICIENCY_VERSION, "region": self.region,
            "unit": self.unit, "frequency_ghz": self.frequency_ghz, "cores": self.cores,
            "inputs": list(self.inputs), "counts": list(self.counts), "reference": reference,
            "rows": self._rows(), "notes": list(self.notes),
        })

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str | None = None) -> EfficiencyTable:
        check_version(data, cls.KIND, EFFICIENCY_VERSION, source)
        try:
            unit = str(data["unit"])
            inputs = tuple(str(x) for x in data["inputs"])
            counts = tuple(int(p) for p in data["counts"])
            shape = (len(counts), len(inputs))
            arrays = {k: np.full(shape, np.nan) for k in ("time_s", "speedup", "efficiency")}
            runs = np.zeros(shape, dtype=np.int64)
            row_of = {p: i for i, p in enumerate(counts)}
            col_of = {x: j for j, x in enumerate(inputs)}
            for r in data["rows"]:
                i, j = row_of[int(r[unit])], col_of[str(r["input"])]
                runs[i, j] = int(r["runs"])
                for k, a in arrays.items():
                    a[i, j] = np.nan if r.get(k) is None else float(r[k])
            by_input = {str(r["input"]): r for r in data.get("reference", ())}
            reference = tuple(int(by_input[x][unit]) for x in inputs)
            t1 = np.array([np.nan if by_input[x]["time_s"] is None else
                           float(by_input[x]["time_s"]) for x in inputs])
            frequency, cores = data.get("frequency_ghz"), data.get("cores")
            return cls(region=data.get("region"), unit=unit, inputs=inputs, counts=counts,
                       runs=runs, reference=reference, reference_time_s=t1,
                       frequency_ghz=None if frequency is None else float(frequency),
                       cores=None if cores is None else int(cores),
                       notes=tuple(str(n) for n in data.get("notes", ())), **arrays)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed efficiency result: {exc!r}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """One row per measured (input, thread count): :meth:`to_frame`."""
        return self.to_frame()

    def present(self, name: str | None = None) -> Presentation:
        """The headline (the efficiency at the largest count), the table as the Viewer's
        diagram reads, the notes (:func:`phasekit.energy.table.efficiency_presentation`)."""
        from phasekit.energy.table import efficiency_presentation

        return efficiency_presentation(self, name)

    def plot(self, ax: Axes | None = None, *, mode: str = "discrete") -> Figure:
        """The efficiency heatmap (``phasekit energy plot --kind efficiency``), discrete or
        smoothed."""
        from phasekit.plot.energy import draw_efficiency, target_axes

        fig, ax = target_axes(ax)
        draw_efficiency(ax, self, mode)
        return fig


def _select_frequency(freqs_run: np.ndarray, frequency: float | None,
                      notes: list[str]) -> tuple[np.ndarray, float | None]:
    """The mask of the runs at the chosen frequency (every run when none was measured) and
    that frequency."""
    freqs = np.unique(freqs_run[np.isfinite(freqs_run)])
    if frequency is not None:
        if freqs.size == 0:
            raise UsageError("the campaign has no frequency (recorded without frequency "
                             "control)", parameter="frequency", value=frequency)
        close = np.abs(freqs - frequency) <= _FREQ_TOL
        if not close.any():
            raise UsageError(f"no run at {frequency:g} GHz; the campaign has "
                             + ", ".join(_fmt(f) for f in freqs) + " GHz",
                             parameter="frequency", value=frequency)
        chosen = float(freqs[close][0])
    elif freqs.size == 0:
        return np.ones(freqs_run.shape, dtype=bool), None
    else:
        chosen = float(freqs.max())
        if freqs.size > 1:
            notes.append(f"{freqs.size} frequencies measured; efficiency at the highest, "
                         f"{chosen:g} GHz (speedups compare runs at one frequency)")
    return np.abs(freqs_run - chosen) <= _FREQ_TOL, chosen


def _unknown_region(name: str, known: Sequence[str]) -> UsageError:
    return UsageError(f"no region {name!r}; the campaign has "
                      + (", ".join(repr(k) for k in known) if known else "no regions"))


def efficiency_table(data: Campaign | pd.DataFrame | Mapping[str, Any] | RunColumns, *,
                     region: str | None = None, frequency: float | None = None,
                     cores: int | None = None, inputs: Sequence[str] = (),
                     source: str | None = None) -> EfficiencyTable:
    """The efficiency diagram's data of the whole program (``region=None``) or one region.

    Silva 2024, section 3.10.1 (the PaScal Viewer): efficiency = speedup / processing units,
    speedup = T(1) / T(p) per input, over inputs x thread counts. ``data`` is a Campaign or a
    table as accepted by :func:`campaign_columns`. ``frequency`` (GHz) picks the frequency
    when several were measured (default: the highest); ``cores`` the core count when threads
    and cores were varied independently (default: the largest); ``inputs`` the input order
    when ``data`` is a table. See the module docstring for the reference time without a
    1-thread run. UsageError for an unknown region or frequency; InputError when nothing was
    measured, or only energy (no time_s: no speedup).
    """
    runs = campaign_columns(data, source=source, inputs=inputs)
    notes: list[str] = []
    if region is None:
        column = "time_s"
        if not runs.has_time:
            raise InputError("no successful run with a positive time_s (energy only): "
                             "efficiency needs run times", path=source, column=column)
    else:
        column = REGION_PREFIX + str(region)
        if column not in runs:
            raise _unknown_region(str(region), runs.regions)
    keep, chosen = _select_frequency(runs["frequency_ghz"], frequency, notes)
    threads, cores_run = runs["threads"], runs["cores"]
    unit = "threads" if np.isfinite(threads[keep]).any() else "cores"
    units, other = (threads, cores_run) if unit == "threads" else (cores_run, threads)
    labels_run = runs["input"]
    fixed: int | None = None
    if cores is not None and unit == "cores":
        raise UsageError("the campaign varies cores only (no thread counts); its "
                         "efficiency is over the core counts", parameter="cores", value=cores)
    both = keep & np.isfinite(units) & np.isfinite(other)
    pairs = (labels_run[both], units[both])  # some (input, unit) ran at several of the other
    spread = len(_groups(*pairs, other[both])[1]) > len(_groups(*pairs)[1])
    if cores is not None or spread:
        available = np.unique(other[keep & np.isfinite(other)])
        if cores is not None and unit == "threads":
            if cores not in available:
                raise UsageError(f"no run on {cores} cores; the campaign has "
                                 + ", ".join(str(int(c)) for c in available),
                                 parameter="cores", value=cores)
            fixed = int(cores)
        elif unit == "threads":
            fixed = int(available.max())
            notes.append(f"threads and cores were varied independently; efficiency on "
                         f"{fixed} cores")
        if fixed is not None:
            keep = keep & (np.isnan(cores_run) | (cores_run == fixed))
    keep = keep & np.isfinite(units) & (runs[column] > 0)
    if not keep.any():
        what = "the run time" if region is None else f"region {region!r}"
        at = "" if chosen is None else f" at {chosen:g} GHz"
        raise InputError(f"no successful run with a positive time for {what}{at}",
                         path=source, column=column)
    values, p_run, label_run = runs[column][keep], units[keep], labels_run[keep]
    present = set(label_run.tolist())
    labels = tuple(x for x in runs.inputs if x in present)
    counts = tuple(int(p) for p in np.unique(p_run))
    col = {x: j for j, x in enumerate(labels)}
    rows = np.searchsorted(np.asarray(counts, dtype=float), p_run)
    cells = rows * len(labels) + np.fromiter((col[x] for x in label_run.tolist()), dtype=np.int64,
                                              count=label_run.size)
    size = len(counts) * len(labels)
    runs_n = np.bincount(cells, minlength=size).reshape(len(counts), len(labels))
    with np.errstate(invalid="ignore", divide="ignore"):
        time_s = (np.bincount(cells, weights=values, minlength=size).reshape(runs_n.shape)
                  / runs_n)
    time_s[runs_n == 0] = np.nan
    reference = []
    t1 = np.full(len(labels), np.nan)
    for j in range(len(labels)):
        measured = np.flatnonzero(runs_n[:, j] > 0)
        p0 = counts[measured[0]]  # counts are sorted: the smallest measured count
        reference.append(p0)
        t1[j] = p0 * time_s[measured[0], j]
    estimated: dict[int, list[str]] = {}
    for label, p0 in zip(labels, reference, strict=True):
        if p0 != 1:
            estimated.setdefault(p0, []).append(label)
    for p0, which in estimated.items():
        noun = "input" if len(which) == 1 else "inputs"
        notes.append(f"{noun} {', '.join(which)}: no 1-{unit[:-1]} run; T(1) estimated as "
                     f"{p0} x T({p0}) assuming linear speedup up to {p0} {unit} (efficiency "
                     f"relative to {p0}; too high if the speedup up to {p0} is below {p0})")
    speedup = t1[None, :] / time_s
    efficiency = speedup / np.asarray(counts, dtype=float)[:, None]
    return EfficiencyTable(region=region, unit=unit, inputs=labels, counts=counts,
                           time_s=time_s, runs=runs_n.astype(np.int64), speedup=speedup,
                           efficiency=efficiency, reference=tuple(reference),
                           reference_time_s=t1, frequency_ghz=chosen, cores=fixed,
                           notes=tuple(notes))


def efficiency_tables(data: Campaign | pd.DataFrame | Mapping[str, Any] | RunColumns, *,
                      regions: Sequence[str] | None = None, frequency: float | None = None,
                      cores: int | None = None, inputs: Sequence[str] = (),
                      source: str | None = None) -> tuple[EfficiencyTable, ...]:
    """The whole program's table, then one per region (all of them when ``regions`` is None).

    A region without a single positive time in the chosen runs is left out (it never ran
    there); a region named in ``regions`` that does not exist is a UsageError. A campaign
    that measured energy but no time has no efficiency: the empty tuple
    (:func:`configuration_table` notes :data:`NO_TIME_NOTE`).
    """
    runs = campaign_columns(data, source=source, inputs=inputs)
    known = runs.regions
    if regions is None:
        names = list(known)
    else:
        names = list(dict.fromkeys(map(str, regions)))
        missing = [n for n in names if n not in known]
        if missing:
            raise _unknown_region(missing[0], known)
    if not runs.has_time:
        return ()
    kwargs = {"frequency": frequency, "cores": cores, "source": source}
    tables = [efficiency_table(runs, **kwargs)]
    for name in names:
        try:
            tables.append(efficiency_table(runs, region=name, **kwargs))
        except InputError:
            if regions is not None:
                raise
    return tuple(tables)


# --- configurations, energy and the Pareto frontier ------------------------------------------
def pareto_mask(time_s: np.ndarray, energy_j: np.ndarray) -> np.ndarray:
    """Mask of the (time, energy) Pareto-efficient points, those no other point beats in both
    (Silva 2024, section 4.11, Figs. 4.11-4.12): of equal times the lower energy, of exact
    duplicates the first, non-finite points never. Here rather than in
    phasekit.energy.choose (whose :func:`~phasekit.energy.choose.pareto_front` orders these
    points), which imports pandas and the model fit that ``phasekit energy plot`` does not
    need."""
    t, e = np.asarray(time_s, dtype=float), np.asarray(energy_j, dtype=float)
    mask = np.zeros(t.shape, dtype=bool)
    finite = np.flatnonzero(np.isfinite(t) & np.isfinite(e))
    if finite.size:
        order = finite[np.lexsort((e[finite], t[finite]))]  # by time, then energy: stable
        lowest = np.minimum.accumulate(np.concatenate([[np.inf], e[order][:-1]]))
        mask[order[e[order] < lowest]] = True
    return mask


#: The columns of :class:`ConfigurationTable`, in order.
CONFIGURATION_COLUMNS = ("input", "cores", "threads", "frequency_ghz", "time_s", "energy_j",
                         "power_w", "runs", "pareto")


@dataclass(frozen=True)
class ConfigurationTable:
    """Mean time and energy per configuration (input, cores, frequency), Silva 2024 Figs.
    3.8-3.9 and 4.11.

    ``columns`` maps input (labels), cores (the core count, or the thread count when cores
    were not set; int64), threads, frequency_ghz (NaN when not controlled), time_s, energy_j
    (NaN when not measured), power_w, runs and pareto (on the per-input (time, energy)
    frontier) to NumPy arrays of one value per configuration; :attr:`frame` is the same as a
    DataFrame. ``has_energy`` and ``has_time`` say whether any energy and any time were
    measured, ``unit`` whether the ``cores`` column holds core counts (``"cores"``) or, in a
    campaign that set none, thread counts (``"threads"``).
    """

    columns: Mapping[str, np.ndarray] = field(repr=False)
    inputs: tuple[str, ...]
    has_energy: bool
    unit: str = "cores"
    notes: tuple[str, ...] = ()
    has_time: bool = True

    def __len__(self) -> int:
        return len(self.columns["input"])

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame, one row per configuration, columns
        :data:`CONFIGURATION_COLUMNS`."""
        import pandas as pd

        return pd.DataFrame({c: self.columns[c] for c in CONFIGURATION_COLUMNS})

    @property
    def frequencies(self) -> tuple[float, ...]:
        f = self.columns["frequency_ghz"]
        return tuple(float(v) for v in np.unique(f[np.isfinite(f)]))

    def records(self) -> list[dict[str, Any]]:
        """One dict per configuration (JSON-ready: NaN as None)."""
        values = [np.asarray(self.columns[c]).tolist() for c in CONFIGURATION_COLUMNS]
        return plain([dict(zip(CONFIGURATION_COLUMNS, row, strict=True))
                      for row in zip(*values, strict=True)])

    def present(self, name: str | None = None) -> Presentation:
        """The headline (where each input used the least energy), each input's least energy
        and frontier, the notes (:func:`phasekit.energy.table.configuration_presentation`)."""
        from phasekit.energy.table import configuration_presentation

        return configuration_presentation(self, name)

    def to_dict(self) -> dict[str, Any]:
        return plain({"inputs": list(self.inputs), "has_energy": self.has_energy,
                      "has_time": self.has_time, "unit": self.unit,
                      "configurations": self.records(), "notes": list(self.notes)})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConfigurationTable:
        """The table :meth:`to_dict` wrote (``inputs`` default: in the order of the rows)."""
        records = [r for r in data["configurations"] if isinstance(r, Mapping)]

        def column(name: str, dtype: Any) -> np.ndarray:
            return np.array([r.get(name) for r in records], dtype=dtype)

        columns = {"input": np.array([str(r.get("input")) for r in records], dtype=object),
                   "cores": column("cores", float).astype(np.int64),
                   **{c: column(c, float) for c in ("threads", "frequency_ghz", "time_s",
                                                    "energy_j", "power_w")},
                   "runs": column("runs", float).astype(np.int64),
                   "pareto": np.array([bool(r.get("pareto")) for r in records], bool)}
        inputs = tuple(str(x) for x in data.get("inputs") or
                       dict.fromkeys(columns["input"].tolist()))
        return cls(columns=columns, inputs=inputs, has_energy=bool(data.get("has_energy")),
                   unit=str(data.get("unit", "cores")),
                   notes=tuple(str(n) for n in data.get("notes") or ()),
                   has_time=bool(data.get("has_time", True)))


def _groups(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group numbers of the rows by their ``keys`` (NaN equal to NaN), numbered in order of
    first appearance (pandas's ``groupby(sort=False, dropna=False)``), and each group's first
    row."""
    codes = [np.unique(k, return_inverse=True)[1].ravel() for k in keys]
    dims = [int(c.max()) + 1 if c.size else 1 for c in codes]
    combined = np.ravel_multi_index(codes, dims) if codes[0].size else np.zeros(0, np.int64)
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse.ravel()], first[order]


def _group_mean(group: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """The mean of the finite ``values`` of each of the ``n`` groups, NaN for none."""
    finite = np.isfinite(values)
    count = np.bincount(group, weights=finite, minlength=n)
    total = np.bincount(group, weights=np.where(finite, values, 0.0), minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


def configuration_table(data: Campaign | pd.DataFrame | Mapping[str, Any] | RunColumns, *,
                        inputs: Sequence[str] = (), source: str | None = None
                        ) -> ConfigurationTable:
    """Mean time and energy of every configuration over its ok repetitions, per input.

    The processing units are the core count (the thread count when no cores were set: energy
    follows the cores in use). When several thread counts ran on the same cores, frequency and
    input, the one with the least energy (time without energy) stands for the configuration,
    noted. The Pareto frontier (:func:`pareto_mask`) is computed per input. A campaign that
    measured energy but no time (PaScal's tables) keeps the runs with a positive energy, with
    no frontier, and the note :data:`NO_TIME_NOTE`.
    """
    runs = campaign_columns(data, source=source, inputs=inputs)
    order = runs.inputs
    notes: list[str] = []
    has_time = runs.has_time
    keep = runs["time_s"] > 0 if has_time else runs["energy_j"] > 0
    unit = "cores" if np.isfinite(runs["cores"][keep]).any() else "threads"
    cores = np.where(np.isfinite(runs["cores"]), runs["cores"], runs["threads"])
    keep &= np.isfinite(cores)
    labels, cores = runs["input"][keep], cores[keep]
    threads, freq = runs["threads"][keep], runs["frequency_ghz"][keep]
    time_run, energy_run = runs["time_s"][keep], runs["energy_j"][keep]
    energy_run = np.where(energy_run > 0, energy_run, np.nan)
    has_energy = bool(np.isfinite(energy_run).any())
    group, first = _groups(labels, cores, threads, freq)
    n = first.size
    table: dict[str, np.ndarray] = {
        "input": labels[first], "cores": cores[first], "threads": threads[first],
        "frequency_ghz": freq[first], "time_s": _group_mean(group, time_run, n),
        "energy_j": _group_mean(group, energy_run, n),
        "runs": np.bincount(group, minlength=n).astype(np.int64),
    }
    with np.errstate(invalid="ignore", divide="ignore"):
        table["power_w"] = table["energy_j"] / table["time_s"]
    # One row per (input, cores, frequency): the best thread count where several ran.
    if has_energy:
        score = np.where(np.isnan(table["energy_j"]), table["time_s"], table["energy_j"])
    else:
        score = table["time_s"]
    config, _ = _groups(table["input"], table["cores"], table["frequency_ghz"])
    if np.bincount(config).max(initial=0) > 1:
        notes.append("several thread counts ran on the same cores and frequency; each "
                     "configuration shows its " + ("least-energy" if has_energy else "fastest")
                     + " thread count")
        ranked = np.lexsort((np.arange(n), np.where(np.isnan(score), np.inf, score), config))
        best = ranked[np.r_[True, config[ranked][1:] != config[ranked][:-1]]]
        table = {k: v[best] for k, v in table.items()}
    rank = {x: k for k, x in enumerate(order)}
    position = np.fromiter((rank.get(x, len(order)) for x in table["input"].tolist()),
                           dtype=np.int64, count=table["input"].size)
    ordered = np.lexsort((table["frequency_ghz"], table["cores"], position))
    table = {k: v[ordered] for k, v in table.items()}
    table["cores"] = table["cores"].astype(np.int64)
    pareto = np.zeros(table["input"].size, dtype=bool)
    if has_energy and has_time:
        for label in dict.fromkeys(table["input"].tolist()):
            rows = np.flatnonzero(table["input"] == label)
            pareto[rows] = pareto_mask(table["time_s"][rows], table["energy_j"][rows])
    elif not has_energy:
        notes.append("no energy measured: energy panels skipped (time only)")
    if not has_time:
        notes.append(NO_TIME_NOTE)
    table["pareto"] = pareto
    present = set(table["input"].tolist())
    return ConfigurationTable(columns={c: table[c] for c in CONFIGURATION_COLUMNS},
                              inputs=tuple(x for x in order if x in present),
                              has_energy=has_energy, unit=unit, notes=tuple(notes),
                              has_time=has_time)
