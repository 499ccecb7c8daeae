"""Parallel efficiency and per-configuration energy of a campaign: the PaScal Viewer's data.

Seed 002, section 3.10.1 (Figs. 3.5-3.7; notes, section 1 "PaScal Viewer"): one efficiency
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
  intervals, seed 002 section 3.2).
- Reference time: T(1) when the input ran on one thread; otherwise the smallest thread count
  p0 that ran, assuming linear speedup up to it, T(1) ~ p0 T(p0): the efficiency at p0 is then
  1 by construction and the others are relative to it (they overestimate the true efficiency
  when the speedup up to p0 is below p0). A note names the inputs concerned.
- Inputs in the campaign's declared order (``Campaign.inputs``, smallest first, the thesis's
  convention that input k+1 needs twice the sequential time of input k), else numerically
  when every label is a number, else in order of appearance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from phasekit.campaign import REGION_PREFIX, Campaign
from phasekit.errors import InputError, UsageError
from phasekit.results import Result, check_version, plain

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "ConfigurationTable",
    "EfficiencyTable",
    "campaign_frame",
    "configuration_table",
    "efficiency_table",
    "efficiency_tables",
    "pareto_mask",
]

EFFICIENCY_VERSION = 1
#: Label of an input when the campaign has none (a program without inputs).
NO_INPUT = "-"
_FREQ_TOL = 1e-6  # GHz: frequencies equal within 1 kHz


# --- the tidy frame ----------------------------------------------------------------------------
def _labels(values: pd.Series) -> pd.Series:
    """Input labels as strings: numbers as ``%g`` (1.0 -> "1"), missing as :data:`NO_INPUT`."""
    def label(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
            return NO_INPUT
        if isinstance(v, float | np.floating):
            return f"{float(v):g}"
        if isinstance(v, np.integer):
            return str(int(v))
        return str(v).strip() or NO_INPUT

    return values.map(label).astype(object)


def _input_order(present: Sequence[str], declared: Sequence[str]) -> tuple[str, ...]:
    """Declared order first, then numeric order when every label is a number, else appearance."""
    seen = list(dict.fromkeys(present))
    ordered = [x for x in dict.fromkeys(map(str, declared)) if x in seen]
    rest = [x for x in seen if x not in ordered]
    numbers = pd.to_numeric(pd.Series(rest, dtype=object), errors="coerce")
    if rest and not numbers.isna().any():
        rest = [x for _, x in sorted(zip(numbers.tolist(), rest, strict=True))]
    return tuple(ordered + rest)


def campaign_frame(data: Campaign | pd.DataFrame, *, source: str | None = None,
                   inputs: Sequence[str] = ()) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The ``ok`` runs of ``data`` as a tidy frame, and the input order.

    ``data`` is a :class:`Campaign` or a table with its columns (``time_s``, ``input`` and
    ``threads`` or ``cores``; optionally ``frequency_ghz``, ``energy_j``, ``status``,
    ``region:NAME``). The frame has numeric ``threads``, ``cores``, ``frequency_ghz``,
    ``time_s``, ``energy_j`` (NaN when not measured), ``input`` labels (strings) and the region
    columns. InputError naming ``source`` and the column when a required column is missing or
    no run has a positive time.
    """
    if isinstance(data, Campaign):
        table = data.table()
        inputs = tuple(inputs) or data.inputs
    elif isinstance(data, pd.DataFrame):
        table = data
    else:
        raise TypeError(f"expected a Campaign or a DataFrame, got {type(data).__name__}")
    columns = {str(c).strip(): c for c in table.columns}
    if "time_s" not in columns:
        raise InputError("missing column; expected the run time in seconds (time_s) and "
                         "threads or cores, input", path=source, column="time_s")
    if "threads" not in columns and "cores" not in columns:
        raise InputError("missing column; expected threads or cores", path=source,
                         column="threads")
    ok = pd.Series(True, index=table.index)
    if "status" in columns:
        ok = table[columns["status"]].astype(str).str.strip().isin(["ok", "nan", "None", ""])

    def numeric(name: str) -> pd.Series:
        if name not in columns:
            return pd.Series(np.nan, index=table.index, dtype=float)
        return pd.to_numeric(table[columns[name]], errors="coerce").astype(float)

    frame = pd.DataFrame({
        "threads": numeric("threads"), "cores": numeric("cores"),
        "frequency_ghz": numeric("frequency_ghz"),
        "input": (_labels(table[columns["input"]]) if "input" in columns
                  else pd.Series(NO_INPUT, index=table.index, dtype=object)),
        "time_s": numeric("time_s"), "energy_j": numeric("energy_j"),
    })
    for name, column in columns.items():
        if name.startswith(REGION_PREFIX) and len(name) > len(REGION_PREFIX):
            frame[name] = pd.to_numeric(table[column], errors="coerce").astype(float)
    for name in ("threads", "cores"):
        bad = frame[name].notna() & ~(frame[name] >= 1)
        frame.loc[bad, name] = np.nan
    frame = frame[ok.to_numpy()]
    if frame["threads"].isna().all() and frame["cores"].isna().all():
        raise InputError("no run has a thread or core count", path=source, column="threads")
    if not (frame["time_s"] > 0).any():
        raise InputError("no successful run with a positive time_s: nothing to plot",
                         path=source, column="time_s")
    return frame.reset_index(drop=True), _input_order(frame["input"].tolist(), inputs)


def _fmt(value: float) -> str:
    return f"{value:g}"


# --- efficiency --------------------------------------------------------------------------------
@dataclass(frozen=True)
class EfficiencyTable(Result):
    """Efficiency (speedup / processing units) over inputs x thread counts, seed 002 §3.10.1.

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

    def to_frame(self) -> pd.DataFrame:
        """One row per measured (input, count): input, threads (or cores), runs, time_s,
        speedup, efficiency."""
        rows = []
        for j, label in enumerate(self.inputs):
            for i, p in enumerate(self.counts):
                if self.runs[i, j] > 0:
                    rows.append({"input": label, self.unit: p, "runs": int(self.runs[i, j]),
                                 "time_s": self.time_s[i, j], "speedup": self.speedup[i, j],
                                 "efficiency": self.efficiency[i, j]})
        return pd.DataFrame(rows, columns=["input", self.unit, "runs", "time_s", "speedup",
                                           "efficiency"])

    def to_dict(self) -> dict[str, Any]:
        reference = [{"input": label, self.unit: p, "time_s": t, "estimated": p != 1}
                     for label, p, t in zip(self.inputs, self.reference,
                                            self.reference_time_s.tolist(), strict=True)]
        return plain({
            "kind": "efficiency", "version": EFFICIENCY_VERSION, "region": self.region,
            "unit": self.unit, "frequency_ghz": self.frequency_ghz, "cores": self.cores,
            "inputs": list(self.inputs), "counts": list(self.counts), "reference": reference,
            "rows": self.to_frame().to_dict(orient="records"), "notes": list(self.notes),
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

    def plot(self, ax: Axes | None = None, *, mode: str = "discrete") -> Figure:
        """The efficiency heatmap (``phasekit energy plot --kind efficiency``), discrete or
        smoothed."""
        from phasekit.plot.energy import draw_efficiency, target_axes

        fig, ax = target_axes(ax)
        draw_efficiency(ax, self, mode)
        return fig


def _select_frequency(frame: pd.DataFrame, frequency: float | None,
                      notes: list[str]) -> tuple[pd.DataFrame, float | None]:
    freqs = np.unique(frame["frequency_ghz"].dropna().to_numpy())
    if frequency is not None:
        if freqs.size == 0:
            raise UsageError(f"frequency {frequency:g} GHz: the campaign has no frequency "
                             "(recorded without frequency control)")
        close = np.abs(freqs - frequency) <= _FREQ_TOL
        if not close.any():
            raise UsageError(f"no run at {frequency:g} GHz; the campaign has "
                             + ", ".join(_fmt(f) for f in freqs) + " GHz")
        chosen = float(freqs[close][0])
    elif freqs.size == 0:
        return frame, None
    else:
        chosen = float(freqs.max())
        if freqs.size > 1:
            notes.append(f"{freqs.size} frequencies measured; efficiency at the highest, "
                         f"{chosen:g} GHz (speedups compare runs at one frequency)")
    keep = (frame["frequency_ghz"] - chosen).abs() <= _FREQ_TOL
    return frame[keep], chosen


def efficiency_table(data: Campaign | pd.DataFrame, *, region: str | None = None,
                     frequency: float | None = None, cores: int | None = None,
                     inputs: Sequence[str] = (), source: str | None = None) -> EfficiencyTable:
    """The efficiency diagram's data of the whole program (``region=None``) or one region.

    Seed 002, section 3.10.1 (the PaScal Viewer): efficiency = speedup / processing units,
    speedup = T(1) / T(p) per input, over inputs x thread counts. ``data`` is a Campaign or a
    table as accepted by :func:`campaign_frame`. ``frequency`` (GHz) picks the frequency when
    several were measured (default: the highest); ``cores`` the core count when threads and
    cores were varied independently (default: the largest); ``inputs`` the input order when
    ``data`` is a table. See the module docstring for the reference time without a 1-thread
    run. UsageError for an unknown region or frequency; InputError when nothing was measured.
    """
    frame, order = campaign_frame(data, source=source, inputs=inputs)
    notes: list[str] = []
    if region is None:
        column = "time_s"
    else:
        column = REGION_PREFIX + str(region)
        if column not in frame.columns:
            known = [c[len(REGION_PREFIX):] for c in frame.columns if c.startswith(REGION_PREFIX)]
            raise UsageError(f"no region {region!r}; the campaign has "
                             + (", ".join(repr(k) for k in known) if known else "no regions"))
    frame, chosen = _select_frequency(frame, frequency, notes)
    unit = "threads" if frame["threads"].notna().any() else "cores"
    other = "cores" if unit == "threads" else "threads"
    fixed: int | None = None
    if cores is not None and unit == "cores":
        raise UsageError(f"cores {cores}: the campaign varies cores only (no thread counts); "
                         "its efficiency is over the core counts")
    spread = frame.dropna(subset=[unit, other]).groupby(["input", unit])[other].nunique()
    if cores is not None or (spread > 1).any():
        available = np.unique(frame[other].dropna().to_numpy())
        if cores is not None and unit == "threads":
            if cores not in available:
                raise UsageError(f"no run on {cores} cores; the campaign has "
                                 + ", ".join(str(int(c)) for c in available))
            fixed = int(cores)
        elif unit == "threads":
            fixed = int(available.max())
            notes.append(f"threads and cores were varied independently; efficiency on "
                         f"{fixed} cores")
        if fixed is not None:
            frame = frame[frame["cores"].isna() | (frame["cores"] == fixed)]
    frame = frame.dropna(subset=[unit])
    values = frame[column]
    frame = frame[values > 0]
    if frame.empty:
        what = "the run time" if region is None else f"region {region!r}"
        at = "" if chosen is None else f" at {chosen:g} GHz"
        raise InputError(f"no successful run with a positive time for {what}{at}",
                         path=source, column=column)
    present = set(frame["input"])
    labels = tuple(x for x in order if x in present)
    counts = tuple(int(p) for p in np.unique(frame[unit].to_numpy()))
    grouped = frame.groupby(["input", unit])[column].agg(["mean", "size"])
    time_s = np.full((len(counts), len(labels)), np.nan)
    runs = np.zeros((len(counts), len(labels)), dtype=np.int64)
    row = {p: i for i, p in enumerate(counts)}
    col = {x: j for j, x in enumerate(labels)}
    for (label, p), item in grouped.iterrows():
        time_s[row[int(p)], col[label]] = item["mean"]
        runs[row[int(p)], col[label]] = int(item["size"])
    reference = []
    t1 = np.full(len(labels), np.nan)
    for j in range(len(labels)):
        measured = np.flatnonzero(runs[:, j] > 0)
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
                           time_s=time_s, runs=runs, speedup=speedup, efficiency=efficiency,
                           reference=tuple(reference), reference_time_s=t1,
                           frequency_ghz=chosen, cores=fixed, notes=tuple(notes))


def efficiency_tables(data: Campaign | pd.DataFrame, *, regions: Sequence[str] | None = None,
                      frequency: float | None = None, cores: int | None = None,
                      inputs: Sequence[str] = (), source: str | None = None
                      ) -> tuple[EfficiencyTable, ...]:
    """The whole program's table, then one per region (all of them when ``regions`` is None).

    A region without a single positive time in the chosen runs is left out (it never ran
    there); a region named in ``regions`` that does not exist is a UsageError.
    """
    frame, order = campaign_frame(data, source=source, inputs=inputs)
    known = [c[len(REGION_PREFIX):] for c in frame.columns if c.startswith(REGION_PREFIX)]
    if regions is None:
        names = known
    else:
        names = list(dict.fromkeys(map(str, regions)))
        missing = [n for n in names if n not in known]
        if missing:
            raise UsageError(f"no region {missing[0]!r}; the campaign has "
                             + (", ".join(repr(k) for k in known) if known else "no regions"))
    kwargs = {"frequency": frequency, "cores": cores, "inputs": order, "source": source}
    tables = [efficiency_table(frame, **kwargs)]
    for name in names:
        try:
            tables.append(efficiency_table(frame, region=name, **kwargs))
        except InputError:
            if regions is not None:
                raise
    return tuple(tables)


# --- configurations, energy and the Pareto frontier ------------------------------------------
def pareto_mask(time_s: np.ndarray, energy_j: np.ndarray) -> np.ndarray:
    """Mask of the (time, energy) Pareto-efficient points (seed 002, section 4.11, Figs.
    4.11-4.12): :func:`phasekit.energy.choose.pareto_front` as a boolean mask."""
    from phasekit.energy.choose import pareto_front

    mask = np.zeros(np.shape(time_s), dtype=bool)
    mask[pareto_front(time_s, energy_j)] = True
    return mask


@dataclass(frozen=True)
class ConfigurationTable:
    """Mean time and energy per configuration (input, cores, frequency), seed 002 Figs.
    3.8-3.9 and 4.11.

    ``frame`` has columns input, cores (the core count, or the thread count when cores were
    not set), threads, frequency_ghz (NaN when not controlled), time_s, energy_j, power_w,
    runs and pareto (on the per-input (time, energy) frontier); ``has_energy`` says whether any
    energy was measured, ``unit`` whether the ``cores`` column holds core counts (``"cores"``)
    or, in a campaign that set none, thread counts (``"threads"``).
    """

    frame: pd.DataFrame = field(repr=False)
    inputs: tuple[str, ...]
    has_energy: bool
    unit: str = "cores"
    notes: tuple[str, ...] = ()

    @property
    def frequencies(self) -> tuple[float, ...]:
        return tuple(float(f) for f in np.unique(self.frame["frequency_ghz"].dropna()))

    def to_dict(self) -> dict[str, Any]:
        return plain({"inputs": list(self.inputs), "has_energy": self.has_energy,
                      "unit": self.unit,
                      "configurations": self.frame.to_dict(orient="records"),
                      "notes": list(self.notes)})


def configuration_table(data: Campaign | pd.DataFrame, *, inputs: Sequence[str] = (),
                        source: str | None = None) -> ConfigurationTable:
    """Mean time and energy of every configuration over its ok repetitions, per input.

    The processing units are the core count (the thread count when no cores were set: energy
    follows the cores in use). When several thread counts ran on the same cores, frequency and
    input, the one with the least energy (time without energy) stands for the configuration,
    noted. The Pareto frontier (:func:`pareto_mask`) is computed per input.
    """
    frame, order = campaign_frame(data, source=source, inputs=inputs)
    notes: list[str] = []
    frame = frame[frame["time_s"] > 0].copy()
    unit = "cores" if frame["cores"].notna().any() else "threads"
    frame["cores"] = frame["cores"].fillna(frame["threads"])
    frame = frame.dropna(subset=["cores"])
    energy = frame["energy_j"].where(frame["energy_j"] > 0)
    frame["energy_j"] = energy
    has_energy = bool(energy.notna().any())
    keys = ["input", "cores", "threads", "frequency_ghz"]
    grouped = frame.groupby(keys, dropna=False, sort=False).agg(
        time_s=("time_s", "mean"), energy_j=("energy_j", "mean"), runs=("time_s", "size"))
    table = grouped.reset_index()
    table["power_w"] = table["energy_j"] / table["time_s"]
    # One row per (input, cores, frequency): the best thread count where several ran.
    score = table["energy_j"].fillna(table["time_s"]) if has_energy else table["time_s"]
    table = table.assign(_score=score.to_numpy())
    sizes = table.groupby(["input", "cores", "frequency_ghz"], dropna=False)["_score"].transform(
        "size")
    if (sizes > 1).any():
        notes.append("several thread counts ran on the same cores and frequency; each "
                     "configuration shows its " + ("least-energy" if has_energy else "fastest")
                     + " thread count")
        table = (table.sort_values("_score", kind="stable")
                 .drop_duplicates(["input", "cores", "frequency_ghz"], keep="first"))
    table = table.drop(columns="_score")
    rank = {x: k for k, x in enumerate(order)}
    table["_rank"] = table["input"].map(rank)
    table = table.sort_values(["_rank", "cores", "frequency_ghz"], kind="stable").drop(
        columns="_rank").reset_index(drop=True)
    table["cores"] = table["cores"].astype(int)
    pareto = np.zeros(len(table), dtype=bool)
    if has_energy:
        for _, index in table.groupby("input", sort=False).groups.items():
            rows = np.asarray(index)
            pareto[rows] = pareto_mask(table.loc[rows, "time_s"].to_numpy(),
                                        table.loc[rows, "energy_j"].to_numpy())
    else:
        notes.append("no energy measured: energy panels skipped (time only)")
    table["pareto"] = pareto
    present = set(table["input"])
    columns = ["input", "cores", "threads", "frequency_ghz", "time_s", "energy_j", "power_w",
               "runs", "pareto"]
    return ConfigurationTable(frame=table[columns], inputs=tuple(x for x in order if x in present),
                              has_energy=has_energy, unit=unit, notes=tuple(notes))
