"""PaScal Analyzer JSON: read it into a :class:`~phasekit.campaign.Campaign`, write one back.

Layout (Silva 2024, Listing 3.3; notes, section 1)::

    {"config": {"pkg", "execdate", "kernel", "hostname", "command", ...,
                "data_descriptor": {"keys": ["cores", "frequency", "input", "repetitions"],
                                    "values": ["start_time", "stop_time", ...],
                                    "extras": {"sensors": {"values": ["ipmi", ...]}}},
                "arguments": ["input1", ...]},
     "data": {"32;2.3;1;1": {"start_time": t0, "stop_time": t1,
                             "sensors": {"ipmi": [[watts, timestamp], ...], ...}}, ...}}

Reading:

- Each data key is the configuration's values joined with ``";"`` in the order of
  ``data_descriptor.keys`` (``"data descriptor"`` with a space, as printed in the thesis, is
  accepted too; a file without it is refused unless the caller names ``default_keys``, e.g.
  :data:`DEFAULT_KEYS`, the thesis's order). Key names are matched case-insensitively:
  ``cores``/``core``/``ncores``, ``threads``/``nthreads``, ``frequency``/``freq``/
  ``frequencies``, ``input``/``inputs``/``argument``, ``repetitions``/``repetition``/``rep``;
  any other key is kept in ``Run.extra``. An empty field is a missing value.
  :func:`parse_keys` and :func:`key_values` are these rules alone, for readers of one part of
  a file (:func:`phasekit.energy.phasediv.power_profiles_from_pascal`).
- Frequencies appear in GHz in some files and in kHz in others (the thesis's API example uses
  ``CPUFrequencies(2800000)``). The unit is detected once per file from the largest value: below
  100 GHz, below 10^5 MHz, below 10^8 kHz, else Hz; all are converted to GHz and the detected
  unit is kept in ``meta["pascal"]["frequency_unit"]``.
- The input field is kept as the run's input label (the thesis numbers inputs 1..N; the
  command-line arguments of each input are ``config.arguments``, kept in ``meta``).
- ``start_time``/``stop_time`` are required (seconds); ``time_s`` is their difference unless a
  ``time_s`` value is present (written by :func:`to_pascal`).
- Sensor series are lists of ``[reading, timestamp]`` pairs (a reading may be a list: counter
  vectors); they become ``(timestamp, reading)`` pairs in ``Run.sensors``.
- Energy: an ``energy_j`` (or ``energy``) value when present; otherwise the power sensor —
  the first sensor named ``ipmi``, then one whose name contains ``power``, ``watt`` or
  ``rapl`` (read as watts; the thesis integrates IPMI power) — integrated over
  [start_time, stop_time] after linear (first-order) interpolation, the trapezoid rule
  (Silva 2024, section 4.8: "interpolating the power samples using the first-order method and
  then integrating"). Power outside the samples' span is held at the nearest sample (our
  choice). When the samples do not overlap the run at all (another clock), the energy is
  their mean power times the run time, with a warning. No power sensor, no energy.
- Our extensions (thesis silent): ``"failed": reason`` marks a failed run; ``"regions":
  {name: [[start, stop], ...]}`` holds regions; ``time_s`` and ``energy_j`` values.

Writing (:func:`to_pascal`, :func:`write_pascal`) produces the same layout with keys
``threads`` (when any run has threads), ``cores`` (when any has cores), ``frequency``,
``input``, ``repetitions``, frequencies in GHz (default) or kHz; importing the export gives the
same runs back. Runs sharing a key (a failed run retried) cannot all be kept: the last ok run
of each key is written, with a warning.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io.inputs import read_json
from phasekit.results import plain
from phasekit.runs import Campaign, Run

__all__ = [
    "DEFAULT_KEYS",
    "FREQUENCY_UNITS",
    "ParsedKeys",
    "detect_frequency_unit",
    "entry_number",
    "from_pascal",
    "input_order",
    "integrate_power",
    "is_pascal",
    "key_fields",
    "key_values",
    "parse_keys",
    "power_sensor",
    "power_series",
    "read_pascal",
    "to_pascal",
    "write_pascal",
]

#: Frequency units: how many make one GHz (values are divided by it, so that 2200000 kHz is
#: exactly 2.2 GHz).
FREQUENCY_UNITS = {"ghz": 1.0, "mhz": 1e3, "khz": 1e6, "hz": 1e9}
#: The key order of the thesis's files (Listing 3.3), for readers that accept a file without
#: ``data_descriptor`` (``from_pascal(..., default_keys=DEFAULT_KEYS)``).
DEFAULT_KEYS = ("cores", "frequency", "input", "repetitions")
_KEY_ALIASES = {
    "cores": ("cores", "core", "ncores", "active_cores"),
    "threads": ("threads", "thread", "nthreads", "omp_num_threads"),
    "frequency_ghz": ("frequency", "frequencies", "freq", "frequency_ghz", "cpu_frequency"),
    "input": ("input", "inputs", "argument", "arguments"),
    "repetition": ("repetitions", "repetition", "rep", "reps"),
}
_FIELD_OF = {alias: name for name, aliases in _KEY_ALIASES.items() for alias in aliases}
_RESERVED = {"start_time", "stop_time", "time_s", "energy_j", "energy", "sensors", "regions",
             "failed"}


def is_pascal(data: Any) -> bool:
    """Whether ``data`` (parsed JSON) looks like a PaScal Analyzer file."""
    return isinstance(data, dict) and "config" in data and "data" in data and "kind" not in data


def detect_frequency_unit(values: Sequence[float]) -> str:
    """The unit of a file's frequencies from the largest value (see the module docstring)."""
    top = max(values)
    if top < 100:
        return "ghz"
    if top < 1e5:
        return "mhz"
    if top < 1e8:
        return "khz"
    return "hz"


def integrate_power(timestamps: Sequence[float], watts: Sequence[float], start: float,
                    stop: float) -> float:
    """Energy (J) over [start, stop] of power samples joined linearly (trapezoid rule).

    Power before the first and after the last sample is held at that sample.
    """
    t = np.asarray(timestamps, dtype=float)
    w = np.asarray(watts, dtype=float)
    keep = np.isfinite(t) & np.isfinite(w)
    t, w = t[keep], w[keep]
    if t.size == 0 or not stop > start:
        return float("nan") if t.size == 0 else 0.0
    order = np.argsort(t, kind="stable")
    t, w = t[order], w[order]
    inside = (t > start) & (t < stop)
    grid = np.concatenate(([start], t[inside], [stop]))
    values = np.interp(grid, t, w)
    return float(np.sum(np.diff(grid) * (values[1:] + values[:-1]) / 2.0))


def power_sensor(names: Sequence[str]) -> str | None:
    """The sensor read as power (W): ``ipmi`` first, then ``*power*``, ``*watt*``, ``*rapl*``."""
    lower = {n.lower(): n for n in names}
    if "ipmi" in lower:
        return lower["ipmi"]
    for word in ("ipmi", "power", "watt", "rapl"):
        for low, name in lower.items():
            if word in low:
                return name
    return None


def read_pascal(path: str | os.PathLike[str]) -> Campaign:
    """Read a PaScal Analyzer JSON file; InputError naming the file on anything unexpected."""
    data = read_json(path, "a PaScal Analyzer JSON")
    source = os.fspath(path)
    return from_pascal(data, source=source)


def key_fields(keys: Sequence[str]) -> list[str]:
    """The :class:`~phasekit.campaign.Run` field each ``data_descriptor`` key fills (``cores``,
    ``threads``, ``frequency_ghz``, ``input``, ``repetition``), or the key itself for any other
    key (kept in ``Run.extra``)."""
    return [_FIELD_OF.get(k.strip().lower(), k) for k in keys]


def input_order(label: str) -> tuple[int, float, str]:
    """Sort key of input (or repetition) labels: numbers first, in numeric order, then text."""
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


class ParsedKeys(NamedTuple):
    """The configuration keys of a PaScal file (:func:`parse_keys`)."""

    keys: list[str]
    """The key names of ``data_descriptor.keys`` (or the default keys)."""
    fields: list[str]
    """The field each key fills (:func:`key_fields`)."""
    entries: list[tuple[str, dict[str, str]]]
    """Per data key, in file order: ``(key, {field: text})``, texts stripped."""
    unit: str
    """The frequency unit of the file (:func:`detect_frequency_unit`; ``"ghz"`` without
    frequencies)."""


def parse_keys(data: Any, *, source: str | None = None,
               default_keys: Sequence[str] | None = None) -> ParsedKeys:
    """Check the layout of parsed PaScal JSON and split its data keys (module docstring);
    ``default_keys`` as in :func:`from_pascal`. InputError naming ``source`` otherwise."""
    if not isinstance(data, dict):
        raise InputError("expected a PaScal Analyzer JSON object with \"config\" and \"data\"",
                         path=source)
    for section in ("config", "data"):
        if not isinstance(data.get(section), dict):
            raise InputError(f"PaScal Analyzer JSON: missing or malformed \"{section}\" section "
                             "(expected an object)", path=source)
    config: dict[str, Any] = data["config"]
    descriptor = config.get("data_descriptor", config.get("data descriptor"))
    if default_keys is not None and (descriptor is None or (isinstance(descriptor, dict)
                                                            and "keys" not in descriptor)):
        descriptor = {"keys": list(default_keys)}
    if not isinstance(descriptor, dict):
        raise InputError("PaScal Analyzer JSON: missing \"config.data_descriptor\" (the key "
                         "names of the configurations)", path=source)
    keys = descriptor.get("keys")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
        raise InputError("PaScal Analyzer JSON: \"config.data_descriptor.keys\" must be a "
                         "non-empty list of key names", path=source)
    fields = key_fields(keys)
    if len(set(fields)) != len(fields):
        raise InputError(f"PaScal Analyzer JSON: repeated key in data_descriptor.keys {keys}",
                         path=source)
    parsed: list[tuple[str, dict[str, str]]] = []
    for key in data["data"]:
        parts = str(key).split(";")
        if len(parts) != len(keys):
            raise InputError(f"data key {key!r} has {len(parts)} field(s); data_descriptor.keys "
                             f"names {len(keys)} ({';'.join(keys)})", path=source)
        parsed.append((key, dict(zip(fields, (p.strip() for p in parts), strict=True))))
    unit = "ghz"
    if "frequency_ghz" in fields:
        values = []
        for key, config_values in parsed:
            text = config_values["frequency_ghz"]
            if text:
                values.append(_number(text, key, "frequency", source))
        if values:
            unit = detect_frequency_unit(values)
            low = min(values) / FREQUENCY_UNITS[unit]
            if not low > 0:
                raise InputError(f"frequencies must be positive (found {min(values)!r})",
                                 path=source)
    return ParsedKeys(list(keys), fields, parsed, unit)


def key_values(key: str, values: Mapping[str, str], unit: str,
               source: str | None = None) -> dict[str, Any]:
    """The configuration of one data key from its texts (``ParsedKeys.entries``): ``cores``,
    ``threads`` and ``repetition`` as numbers, ``frequency_ghz`` in GHz (from ``unit``),
    ``input`` as text, None where empty; any other key under ``"extra"`` as text."""
    config: dict[str, Any] = {"extra": {}}
    for name, text in values.items():
        if name in ("cores", "threads", "repetition"):
            config[name] = None if text == "" else _number(text, key, name, source)
        elif name == "frequency_ghz":
            config[name] = (None if text == ""
                            else _number(text, key, "frequency", source) / FREQUENCY_UNITS[unit])
        elif name == "input":
            config[name] = text or None
        else:
            config["extra"][name] = text
    return config


def from_pascal(data: Any, *, source: str | None = None,
                default_keys: Sequence[str] | None = None) -> Campaign:
    """A Campaign from parsed PaScal Analyzer JSON (see the module docstring).

    ``default_keys``: the key names when the file has no ``data_descriptor`` (or it has no
    ``keys``); without it such a file is an InputError.
    """
    keys, _, parsed, unit = parse_keys(data, source=source, default_keys=default_keys)
    config: dict[str, Any] = data["config"]
    entries = data["data"]
    sensor_names: dict[str, None] = {}
    for key, _ in parsed:
        entry = entries[key]
        if isinstance(entry, dict) and isinstance(entry.get("sensors"), dict):
            sensor_names.update(dict.fromkeys(entry["sensors"]))
    energy_sensor = power_sensor(list(sensor_names))
    runs = []
    disjoint = 0
    for key, values in parsed:
        run, was_disjoint = _run(key, entries[key], values, unit, energy_sensor, source)
        runs.append(run)
        disjoint += was_disjoint
    if disjoint:
        warnings.warn(f"{source or 'PaScal JSON'}: the {energy_sensor!r} samples of {disjoint} "
                      "run(s) do not overlap the run's start/stop times (another clock?); their "
                      "energy is the mean power times the run time", PhasekitWarning,
                      stacklevel=2)
    arguments = config.get("arguments")
    kept = {k: v for k, v in config.items() if k not in ("data_descriptor", "data descriptor")}
    meta = {"format": "pascal", "frequency_unit": unit, "energy_sensor": energy_sensor,
            "keys": list(keys), "config": kept}
    inputs: list[str] = []
    for _, values in parsed:
        label = values.get("input")
        if label and label not in inputs:
            inputs.append(label)
    inputs.sort(key=input_order)
    program = config.get("command") or config.get("pkg") or ""
    return Campaign(runs=tuple(runs), program=str(program), inputs=tuple(inputs),
                    meta={"pascal": meta, **({"arguments": arguments} if arguments else {})})


def _number(text: str, key: str, what: str, source: str | None) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"data key {key!r}: {what} {text!r} is not a number",
                         path=source) from None
    if not math.isfinite(value):
        raise InputError(f"data key {key!r}: {what} {text!r} is not finite", path=source)
    return value


def _run(key: str, entry: Any, values: Mapping[str, str], unit: str, energy_sensor: str | None,
         source: str | None) -> tuple[Run, bool]:
    where = f"data entry {key!r}"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected an object with start_time, stop_time and sensors",
                         path=source)
    config = key_values(key, values, unit, source)
    failed = entry.get("failed")
    times = {}
    for name in ("start_time", "stop_time"):
        value = entry.get(name)
        if value is None and failed is None:
            raise InputError(f"{where}: missing \"{name}\"", path=source)
        if value is not None:
            times[name] = entry_number(value, where, name, source)
    sensors: dict[str, list[tuple[float, Any]]] = {}
    raw_sensors = entry.get("sensors") or {}
    if not isinstance(raw_sensors, dict):
        raise InputError(f"{where}: \"sensors\" must be an object of series", path=source)
    for name, series in raw_sensors.items():
        if not isinstance(series, list):
            raise InputError(f"{where}: sensor {name!r} must be a list of [reading, timestamp] "
                             "pairs", path=source)
        pairs = []
        for sample in series:
            if not (isinstance(sample, list) and len(sample) == 2):
                raise InputError(f"{where}: sensor {name!r}: expected [reading, timestamp] "
                                 f"pairs, found {sample!r:.60}", path=source)
            reading, stamp = sample
            try:
                value = (tuple(float(v) for v in reading) if isinstance(reading, list)
                         else float(reading))
                pairs.append((float(stamp), value))
            except (TypeError, ValueError, OverflowError):
                raise InputError(f"{where}: sensor {name!r}: reading and timestamp must be "
                                 f"numbers, found {sample!r:.60}", path=source) from None
        sensors[str(name)] = pairs
    energy = entry.get("energy_j", entry.get("energy"))
    disjoint = False
    if energy is not None:
        energy = entry_number(energy, where, "energy_j", source)
    elif energy_sensor in sensors and len(times) == 2:
        samples = [(t, v) for t, v in sensors[energy_sensor] if isinstance(v, float)]
        if samples:
            stamps = np.array([t for t, _ in samples])
            watts = np.array([v for _, v in samples])
            start, stop = times["start_time"], times["stop_time"]
            if stamps.max() < start or stamps.min() > stop:
                disjoint = True
                energy = float(np.mean(watts)) * (stop - start)
            else:
                energy = integrate_power(stamps, watts, start, stop)
    time_s = entry.get("time_s")
    regions = entry.get("regions") or {}
    if not isinstance(regions, dict):
        raise InputError(f"{where}: \"regions\" must be an object {{name: [[start, stop], ...]}}",
                         path=source)
    extra = dict(config.pop("extra"))
    for name, value in entry.items():
        if name not in _RESERVED:
            extra.setdefault(name, value)
    try:
        run = Run(**config, status="failed" if failed is not None else "ok",
                  reason=None if failed is None else str(failed),
                  start_s=times.get("start_time"), stop_s=times.get("stop_time"),
                  time_s=time_s, energy_j=energy, sensors=sensors, regions=regions, extra=extra)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{where}: {exc}", path=source) from None
    return run, disjoint


def power_series(series: Any, what: str, source: str | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """A series of ``[watts, timestamp]`` number pairs -> (timestamps, watts), sorted by time
    (stable); InputError naming ``what`` when it is not a non-empty list of such pairs."""
    try:
        array = np.asarray(series, dtype=np.float64) if isinstance(series, list) else None
    except (TypeError, ValueError, OverflowError):
        array = None
    if array is None or array.ndim != 2 or array.shape[1] != 2 or array.shape[0] == 0:
        raise InputError(f"{what}: expected a non-empty list of [watts, timestamp] pairs of "
                         "numbers", path=source)
    order = np.argsort(array[:, 1], kind="stable")
    return array[order, 1], array[order, 0]


def entry_number(value: Any, where: str, name: str, source: str | None = None) -> float:
    """A number of a data entry (``start_time``...); InputError naming ``where`` and ``name``
    when it is not a finite number."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{where}: \"{name}\" must be a number, found {value!r:.40}",
                         path=source) from None
    if not math.isfinite(number):
        raise InputError(f"{where}: \"{name}\" is not finite", path=source)
    return number


def _format_frequency(ghz: float | None, unit: str) -> str:
    if ghz is None:
        return ""
    if unit == "ghz":
        return repr(float(ghz))
    return str(round(ghz * FREQUENCY_UNITS[unit]))


def to_pascal(campaign: Campaign, *, frequency_unit: str = "ghz") -> dict[str, Any]:
    """The PaScal Analyzer JSON of ``campaign`` (see the module docstring)."""
    unit = frequency_unit.lower()
    if unit not in FREQUENCY_UNITS:
        raise UsageError(f"frequency unit {frequency_unit!r}: expected one of "
                         + ", ".join(FREQUENCY_UNITS))
    runs = campaign.runs
    keys = []
    if any(r.threads is not None for r in runs):
        keys.append(("threads", "threads"))
    if any(r.cores is not None for r in runs) or not keys:
        keys.append(("cores", "cores"))
    keys += [("frequency", "frequency_ghz"), ("input", "input"), ("repetitions", "repetition")]
    extra_keys = sorted({k for r in runs for k in r.extra if isinstance(r.extra[k], str)
                         and k in _extra_key_names(campaign)})
    keys += [(k, k) for k in extra_keys]
    data: dict[str, Any] = {}
    sensor_names: dict[str, None] = {}
    replaced = 0
    for run in runs:
        fields = []
        for name, attr in keys:
            if attr == "frequency_ghz":
                fields.append(_format_frequency(run.frequency_ghz, unit))
            elif attr in ("threads", "cores", "input", "repetition"):
                value = getattr(run, attr)
                fields.append("" if value is None else str(value))
            else:
                fields.append(str(run.extra.get(name, "")))
        key = ";".join(fields)
        if key in data:
            replaced += 1
            if run.ok is False and "failed" not in data[key]:
                continue  # an ok run of this key is already there: keep it
        entry: dict[str, Any] = {}
        if run.start_s is not None:
            entry["start_time"] = run.start_s
        if run.stop_s is not None:
            entry["stop_time"] = run.stop_s
        if run.time_s is not None:
            entry["time_s"] = run.time_s
        if run.energy_j is not None:
            entry["energy_j"] = run.energy_j
        if not run.ok:
            entry["failed"] = run.reason or "failed"
        if run.sensors:
            entry["sensors"] = {n: [[list(v) if isinstance(v, tuple) else v, t] for t, v in s]
                                for n, s in run.sensors.items()}
            sensor_names.update(dict.fromkeys(run.sensors))
        if run.regions:
            entry["regions"] = {n: [list(i) for i in s] for n, s in run.regions.items()}
        for name, value in run.extra.items():
            if name not in extra_keys and name not in _RESERVED:
                entry[name] = value
        data[key] = entry
    if replaced:
        warnings.warn(f"{replaced} run(s) share a configuration and repetition with another "
                      "run; a PaScal file holds one per key: kept the last ok run of each",
                      PhasekitWarning, stacklevel=2)
    pascal_meta = campaign.meta.get("pascal", {}) if isinstance(campaign.meta, Mapping) else {}
    config = dict(pascal_meta.get("config", {})) if isinstance(pascal_meta, Mapping) else {}
    config.setdefault("pkg", "phasekit")
    if campaign.program:
        config.setdefault("command", campaign.program)
    arguments = campaign.meta.get("arguments") if isinstance(campaign.meta, Mapping) else None
    config.setdefault("arguments", list(arguments) if arguments else list(campaign.inputs))
    config["data_descriptor"] = {
        "keys": [name for name, _ in keys],
        "values": ["start_time", "stop_time", "time_s", "energy_j"],
        "extras": {"sensors": {"values": list(sensor_names)}},
    }
    return plain({"config": config, "data": data})


def _extra_key_names(campaign: Campaign) -> set[str]:
    """Extra configuration keys that came from a PaScal key (kept as keys on export)."""
    pascal_meta = campaign.meta.get("pascal") if isinstance(campaign.meta, Mapping) else None
    if not isinstance(pascal_meta, Mapping):
        return set()
    return {k for k in pascal_meta.get("keys", []) if k.strip().lower() not in _FIELD_OF}


def write_pascal(campaign: Campaign, path: str | os.PathLike[str], *,
                 frequency_unit: str = "ghz") -> None:
    """Write ``campaign`` as PaScal Analyzer JSON, atomically."""
    from phasekit.io.atomic import atomic_write_text

    atomic_write_text(path, json.dumps(to_pascal(campaign, frequency_unit=frequency_unit),
                                       indent=1) + "\n")
