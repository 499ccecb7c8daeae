"""The campaign model: :class:`Run` and :class:`Campaign`, described in :mod:`phasekit.campaign`
(import them from there). They are here, below every reader and writer of campaign files
(:mod:`phasekit.campaign`, :mod:`phasekit.io.pascal`), so that those can import them without
importing each other."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from phasekit.errors import InputError
from phasekit.results import check_version, plain, short_repr

if TYPE_CHECKING:
    import pandas as pd

    from phasekit.present import Presentation

CAMPAIGN_VERSION = 1
STATUSES = ("ok", "failed")
#: Configuration columns of the table, in order.
CONFIG_COLUMNS = ("threads", "cores", "frequency_ghz", "input", "repetition")
REGION_PREFIX = "region:"


def union_length(intervals: Iterable[Sequence[float]]) -> float:
    """Length of the union of ``[start, stop]`` intervals (overlaps counted once)."""
    a = np.asarray(list(intervals), dtype=float).reshape(-1, 2)
    if a.size == 0:
        return 0.0
    a = a[np.argsort(a[:, 0], kind="stable")]
    starts, stops = a[:, 0], np.maximum(a[:, 1], a[:, 0])
    reach = np.maximum.accumulate(stops)
    new = np.r_[True, starts[1:] > reach[:-1]]
    first = np.flatnonzero(new)
    ends = np.maximum.reduceat(stops, first)
    return float(np.sum(ends - starts[first]))


def _opt_int(value: Any, name: str, minimum: int = 1) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not float(value).is_integer() or int(value) < minimum:
        kind = "a positive" if minimum == 1 else "a non-negative"
        raise ValueError(f"{name} must be {kind} integer, got {value!r}")
    return int(value)


def _opt_float(value: Any, name: str, *, positive: bool = False) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or (positive and number <= 0):
        kind = "a positive finite number" if positive else "a finite number"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return number


def _sample_value(value: Any) -> float | tuple[float, ...]:
    if isinstance(value, list | tuple | np.ndarray):
        return tuple(float(v) for v in value)
    return float(value)


@dataclass(frozen=True)
class Run:
    """One execution of the program in one configuration (see the module docstring)."""

    threads: int | None = None
    cores: int | None = None
    frequency_ghz: float | None = None
    input: str | None = None
    repetition: int = 1
    status: str = "ok"
    reason: str | None = None
    start_s: float | None = None
    stop_s: float | None = None
    time_s: float | None = None
    energy_j: float | None = None
    sensors: Mapping[str, tuple[tuple[float, Any], ...]] = field(default_factory=dict)
    regions: Mapping[str, tuple[tuple[float, float], ...]] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Normalize types (the dataclass is frozen: object.__setattr__ in construction only).
        fix = object.__setattr__
        fix(self, "threads", _opt_int(self.threads, "threads"))
        fix(self, "cores", _opt_int(self.cores, "cores"))
        fix(self, "frequency_ghz", _opt_float(self.frequency_ghz, "frequency_ghz",
                                              positive=True))
        fix(self, "input", None if self.input is None else str(self.input))
        rep = _opt_int(self.repetition, "repetition", minimum=0)
        fix(self, "repetition", 1 if rep is None else rep)
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r}")
        fix(self, "start_s", _opt_float(self.start_s, "start_s"))
        fix(self, "stop_s", _opt_float(self.stop_s, "stop_s"))
        time_s = _opt_float(self.time_s, "time_s")
        if time_s is None and self.start_s is not None and self.stop_s is not None:
            time_s = self.stop_s - self.start_s
        if time_s is not None and time_s < 0:
            raise ValueError(f"time_s must not be negative, got {time_s!r}")
        fix(self, "time_s", time_s)
        energy = _opt_float(self.energy_j, "energy_j")
        if energy is not None and energy < 0:
            raise ValueError(f"energy_j must not be negative, got {energy!r}")
        fix(self, "energy_j", energy)
        sensors = {}
        for name, series in dict(self.sensors).items():
            sensors[str(name)] = tuple((float(t), _sample_value(v)) for t, v in series)
        fix(self, "sensors", sensors)
        regions = {}
        for name, intervals in dict(self.regions).items():
            pairs = tuple((float(a), float(b)) for a, b in intervals)
            if any(not (math.isfinite(a) and math.isfinite(b)) or b < a for a, b in pairs):
                raise ValueError(f"region {name!r}: intervals must be finite with stop >= start")
            regions[str(name)] = pairs
        fix(self, "regions", regions)
        fix(self, "extra", dict(self.extra))

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def key(self) -> tuple[int | None, int | None, float | None, str | None, int]:
        """The configuration and repetition: (threads, cores, frequency_ghz, input, repetition)."""
        return (self.threads, self.cores, self.frequency_ghz, self.input, self.repetition)

    @property
    def power_w(self) -> float | None:
        """Mean power over the run (energy / time)."""
        if self.energy_j is None or not self.time_s:
            return None
        return self.energy_j / self.time_s

    def region_time(self, name: str) -> float:
        """Time of region ``name``: the length of the union of its intervals."""
        return union_length(self.regions[name])

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "threads": self.threads, "cores": self.cores, "frequency_ghz": self.frequency_ghz,
            "input": self.input, "repetition": self.repetition, "status": self.status,
            "reason": self.reason, "start_s": self.start_s, "stop_s": self.stop_s,
            "time_s": self.time_s, "energy_j": self.energy_j,
        }
        if self.sensors:
            data["sensors"] = {k: [[t, list(v) if isinstance(v, tuple) else v] for t, v in s]
                               for k, s in self.sensors.items()}
        if self.regions:
            data["regions"] = {k: [list(i) for i in s] for k, s in self.regions.items()}
        if self.extra:
            data["extra"] = dict(self.extra)
        return plain(data)

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Run:
        """A run from its :meth:`to_dict` form; ValueError/TypeError on bad fields."""
        if not isinstance(data, Mapping):
            raise TypeError("a run must be a JSON object")
        known = {f for f in Run.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(map(repr, unknown))} in a run")
        return Run(**{k: v for k, v in data.items() if v is not None})


@dataclass(frozen=True)
class Campaign:
    """Runs of one program over configurations (see the module docstring)."""

    runs: tuple[Run, ...] = ()
    program: str = ""
    inputs: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", tuple(self.runs))
        object.__setattr__(self, "inputs", tuple(str(i) for i in self.inputs))
        object.__setattr__(self, "meta", dict(self.meta))
        for run in self.runs:
            if not isinstance(run, Run):
                raise TypeError(f"runs must be Run objects, got {type(run).__name__}")

    def __len__(self) -> int:
        return len(self.runs)

    @cached_property
    def region_names(self) -> tuple[str, ...]:
        names: dict[str, None] = {}
        for run in self.runs:
            names.update(dict.fromkeys(run.regions))
        return tuple(names)

    @property
    def region_columns(self) -> tuple[str, ...]:
        """The column of each region in :meth:`table` (``region:NAME``)."""
        return tuple(REGION_PREFIX + name for name in self.region_names)

    @cached_property
    def sensor_names(self) -> tuple[str, ...]:
        names: dict[str, None] = {}
        for run in self.runs:
            names.update(dict.fromkeys(run.sensors))
        return tuple(names)

    @cached_property
    def _table(self) -> pd.DataFrame:
        import pandas as pd

        rows = {c: [] for c in (*CONFIG_COLUMNS, "status", "reason", "start_s", "stop_s",
                                "time_s", "energy_j", "power_w")}
        regions = {name: [] for name in self.region_names}
        for run in self.runs:
            for column in rows:
                rows[column].append(getattr(run, column))
            for name, values in regions.items():
                values.append(run.region_time(name) if name in run.regions else np.nan)
        table = pd.DataFrame({
            "threads": pd.array(rows["threads"], dtype="Int64"),
            "cores": pd.array(rows["cores"], dtype="Int64"),
            "frequency_ghz": _floats(rows["frequency_ghz"]),
            "input": pd.array(rows["input"], dtype="object"),
            "repetition": np.asarray(rows["repetition"], dtype=np.int64),
            "status": pd.array(rows["status"], dtype="object"),
            "reason": pd.array(rows["reason"], dtype="object"),
            **{c: _floats(rows[c]) for c in ("start_s", "stop_s", "time_s", "energy_j",
                                             "power_w")},
            **{REGION_PREFIX + n: np.asarray(v, dtype=float) for n, v in regions.items()},
        })
        return table

    def table(self) -> pd.DataFrame:
        """The tidy table, one row per run, in run order (read-only by convention)."""
        return self._table

    def present(self, name: str | None = None) -> Presentation:
        """How the campaign reads (:mod:`phasekit.campaign_present`), as ``phasekit campaign
        run|import`` print it: a headline in plain words (runs, failures, configurations,
        energy), one row per run, then how the energy was obtained and how many runs failed;
        ``name`` names its file."""
        from phasekit.campaign_present import presentation

        return presentation(self, name)

    def ok_runs(self) -> Campaign:
        """The campaign without its failed runs."""
        return replace(self, runs=tuple(r for r in self.runs if r.ok))

    def with_run(self, run: Run) -> Campaign:
        """A new campaign with ``run`` appended."""
        return replace(self, runs=(*self.runs, run))

    def done(self) -> set[tuple[int | None, int | None, float | None, str | None, int]]:
        """Keys (:attr:`Run.key`) of the runs that finished ``ok``: what a resume can skip."""
        return {r.key for r in self.runs if r.ok}

    def header(self) -> dict[str, Any]:
        return {"kind": "campaign", "version": CAMPAIGN_VERSION, "program": self.program,
                "inputs": list(self.inputs), "meta": plain(dict(self.meta))}

    def __repr__(self) -> str:
        return short_repr(
            self, self.program or None, f"{len(self.runs)} runs",
            f"inputs {', '.join(self.inputs)}" if self.inputs else None)

    def to_dict(self) -> dict[str, Any]:
        return {**self.header(), "runs": [r.to_dict() for r in self.runs]}

    @staticmethod
    def from_dict(data: Mapping[str, Any], source: str | None = None) -> Campaign:
        """A campaign from :meth:`to_dict`; InputError naming ``source`` and the run."""
        check_version(dict(data) if isinstance(data, Mapping) else data, "campaign",
                      CAMPAIGN_VERSION, source)
        runs = data.get("runs")
        if not isinstance(runs, list):
            raise InputError("expected \"runs\": a list of runs", path=source)
        parsed = []
        for k, item in enumerate(runs):
            try:
                parsed.append(Run.from_dict(item))
            except (TypeError, ValueError, OverflowError) as exc:
                raise InputError(f"run {k}: {exc}", path=source) from None
        return campaign_from_header(data, tuple(parsed), source)


def _floats(values: Sequence[float | None]) -> np.ndarray:
    return np.asarray([np.nan if v is None else v for v in values], dtype=float)


def campaign_from_header(header: Mapping[str, Any], runs: tuple[Run, ...],
                         source: str | None) -> Campaign:
    """The campaign of ``runs`` with the ``program``, ``inputs`` and ``meta`` of ``header``
    (a campaign's JSON or the header line of its JSON-lines log); InputError naming
    ``source`` when they are malformed."""
    program = header.get("program") or ""
    inputs = header.get("inputs") or []
    meta = header.get("meta") or {}
    if not isinstance(program, str) or not isinstance(inputs, list) or not isinstance(meta, dict):
        raise InputError("\"program\" must be a string, \"inputs\" a list and \"meta\" an object",
                         path=source)
    return Campaign(runs=runs, program=program, inputs=tuple(inputs), meta=meta)

