"""Profile reconstruction and energy estimation from a signature's partial runs (Salinas Hilburg 2020,
4.1.5-4.1.6, eq. 2.1-2.2, 4.5-4.14).

Segments. The reconstructed profile is main's own code (its input setup: every executable
repeats it, the program runs it once), then every independent path in order; each segment
holds constant counter values, the mean rates of its run's counter window (eq. 4.5), for
its estimated time (eq. 4.8-4.9). Sampled every sm seconds, it gives the power P^[n] through
a power model and the energy E^ = (sum P^[n]) x sm (eq. 2.2 / 4.11).

Time of a segment, T'_EP: the time the path's own work takes on the CPU (what a dedicated
core would take).
- Hardware counters: T'_EP = I_EP / (IPC_EP x f) (eq. 4.7), IPC = instructions / cycles
  and f = cycles per second on the CPU (task clock) over the counter window (eq. 4.6), I_EP
  the build's exclusive instruction count.
- Simulated (callgrind's cache and branch simulation, :mod:`phasekit.signature.manager`):
  as with software counters below, the simulated cycles standing for the CPU time; IPC and
  frequency are reported from the simulated counters.
- Software counters only (no IPC, no frequency): each executable ran 1 and k steps; its CPU
  time is t(k) = a + b k through the two runs (b: time per step between them, over an exact
  instruction count: the software stand-in for the window's IPC; a: the one-off costs such as
  the first touch of its arrays), extrapolated to the real trip count K, and T'_EP =
  t_path(K) - t_reference(K), the reference being main alone or the shared prefix (see
  :mod:`phasekit.signature.paths`). The time per instruction reported is T'_EP / I_EP.
  Without a trip count, t(K) is the measured full run of each executable.
Counter rates are per second of wall time, as recorded; on a machine shared with other jobs
a process is on the CPU only a fraction ``busy`` (its task_clock rate) of the time, so a
segment lasts T'_EP / busy seconds in the reconstructed profile, which keeps its rates and
its duration consistent (busy = 1 on a dedicated core, where the two times agree).

Power model. Any object with ``features`` (column names), ``predict(X: DataFrame) -> watts``
and ``to_dict()`` (:mod:`phasekit.signature.powermodels`). Its features must be metrics of the
runs, as rates per second (task_clock: busy cores; instructions, cycles: per second). The
default, where nothing better exists (this machine has no energy meter to fit one), is an
assumed dynamic CPU power of 6 W per busy core (the thesis estimates dynamic energy, eq.
4.11): with it the energy is 6 W x CPU time, for the estimate and the program alike, which
the result says.

Comparison. With a full run of the program measured by the same sources and sampling
(:func:`phasekit.signature.manager.run_program`), its energy is the same power model applied
to its measured counters, sample by sample (and a meter's reading too where RAPL exists);
errors follow eq. 4.12-4.13 (time: T' against the program's CPU time) and the compression
ratios eq. 2.1 (CR = T_app / sum of the partial times), 4.1.4.1 (T_sig as the parallel wall
time) and 4.14 (CR_fr, build included), T_app being the program's wall time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import pandas as pd

from phasekit.errors import UsageError
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.signature.manager import (
    ManagerResult,
    PartialRun,
    SourceFactory,
    execute_signature,
    merge_results,
    run_program,
)
from phasekit.signature.paths import Signature, Unit

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = [
    "PowerModelLike",
    "Segment",
    "SignatureEstimate",
    "default_power_model",
    "load_power_model",
    "reconstruct",
    "run_signature",
]

KIND = "signature_estimate"
VERSION = 1
#: Dynamic CPU power per busy core of the default model (W): the campaign benchmark's
#: ``--power-estimate 10,6`` without its static 10 W, since the thesis estimates dynamic energy.
DEFAULT_CORE_W = 6.0


class PowerModelLike(Protocol):
    @property
    def features(self) -> tuple[str, ...]: ...

    def predict(self, X: pd.DataFrame) -> np.ndarray: ...

    def to_dict(self) -> dict[str, Any]: ...


def default_power_model() -> PowerModelLike:
    """P_dyn = 6 W x busy cores (task_clock): an assumed dynamic CPU power model (module
    docstring), as a linear model of :mod:`phasekit.signature.powermodels`."""
    from phasekit.signature.powermodels import LinearPowerModel

    return LinearPowerModel(
        method="linear", features=("task_clock",), intercept=0.0,
        coefficients=(DEFAULT_CORE_W,),
        meta={"description": f"assumed dynamic CPU power: {DEFAULT_CORE_W:g} W per busy core "
                             "(task_clock); not fitted, not measured (no energy meter on this "
                             "machine)"})


def load_power_model(data: dict[str, Any], source: str | None = None) -> PowerModelLike:
    """A power model from its ``to_dict()`` (kind "power_model")."""
    from phasekit.signature.powermodels import power_model_from_dict

    return power_model_from_dict(data, source)


def _describe(model: PowerModelLike) -> str:
    meta = getattr(model, "meta", None) or {}
    if isinstance(meta, dict) and meta.get("description"):
        return str(meta["description"])
    expression = getattr(model, "expression", None)
    return f"{type(model).__name__}: {expression}" if expression else type(model).__name__


# --- results ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Segment:
    """One segment of the reconstructed profile: main's own code or one path."""

    label: str
    unit: str
    kind: str  # "main" or "path"
    instructions: float
    time_s: float
    tpi_s: float
    ipc: float
    frequency_hz: float
    counters: dict[str, float]
    power_w: float
    energy_j: float
    samples: int
    run_steps: tuple[int | None, ...]
    partial_cpu_s: float
    partial_wall_s: float
    fraction: float  # share of the segment's instructions the longest partial run executed
    stopped_by: str
    stable: bool
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "unit": self.unit, "kind": self.kind,
                "instructions": self.instructions, "time_s": self.time_s,
                "time_per_instruction_s": self.tpi_s, "ipc": self.ipc,
                "frequency_hz": self.frequency_hz, "counters": dict(self.counters),
                "power_w": self.power_w, "energy_j": self.energy_j, "samples": self.samples,
                "run_steps": list(self.run_steps), "partial_cpu_s": self.partial_cpu_s,
                "partial_wall_s": self.partial_wall_s, "fraction": self.fraction,
                "stopped_by": self.stopped_by, "stable": self.stable, "method": self.method}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Segment:
        def num(key: str) -> float:
            value = d.get(key)
            return math.nan if value is None else float(value)

        return Segment(str(d["label"]), str(d["unit"]), str(d["kind"]), num("instructions"),
                       num("time_s"), num("time_per_instruction_s"), num("ipc"),
                       num("frequency_hz"),
                       {k: (math.nan if v is None else float(v))
                        for k, v in d.get("counters", {}).items()},
                       num("power_w"), num("energy_j"), int(d.get("samples", 0)),
                       tuple(d.get("run_steps", ())), num("partial_cpu_s"),
                       num("partial_wall_s"), num("fraction"), str(d.get("stopped_by", "")),
                       bool(d.get("stable", False)), str(d.get("method", "")))


@dataclass(frozen=True)
class SignatureEstimate(Result):
    """Time and energy of a program estimated from its signature (and, when it was run for
    comparison, measured with the same sources)."""

    program: str
    args: tuple[str, ...]
    mode: str
    p: float
    s: int
    interval_s: float
    sources: tuple[str, ...]
    power_model: dict[str, Any]
    power_model_description: str
    segments: tuple[Segment, ...]
    time_s: float
    energy_j: float
    instructions: float
    missing: tuple[str, ...]
    t_sig_s: float
    t_sig_parallel_s: float
    build_time_s: float
    program_time_s: float = math.nan  # measured CPU time of the full run
    program_wall_s: float = math.nan
    program_energy_j: float = math.nan  # the power model on the measured counters
    program_meter_energy_j: float = math.nan
    program_instructions: float = math.nan
    program_counters: dict[str, float] = field(default_factory=dict)
    program_power: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    unmeasured: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    KIND: ClassVar[str] = KIND

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def compared(self) -> bool:
        return math.isfinite(self.program_time_s)

    @property
    def time_error(self) -> float:
        return _error(self.program_time_s, self.time_s)

    @property
    def energy_error(self) -> float:
        return _error(self.program_energy_j, self.energy_j)

    @property
    def meter_energy_error(self) -> float:
        return _error(self.program_meter_energy_j, self.energy_j)

    @property
    def instruction_error(self) -> float:
        return _error(self.program_instructions, self.instructions)

    @property
    def t_app_s(self) -> float:
        """T_app for the compression ratios: the measured wall time of the program when it
        was run, else the estimate."""
        return self.program_wall_s if self.compared else self.time_s

    @property
    def cr(self) -> float:
        """Eq. 2.1: T_app / sum of the partial runs' times."""
        return self.t_app_s / self.t_sig_s if self.t_sig_s > 0 else math.nan

    @property
    def cr_parallel(self) -> float:
        """T_app / the wall time of the parallel partial runs (4.1.4.1)."""
        return self.t_app_s / self.t_sig_parallel_s if self.t_sig_parallel_s > 0 else math.nan

    @property
    def cr_framework(self) -> float:
        """Eq. 4.14: T_app / (build + partial runs); NaN for simulated runs, whose times are
        not commensurable with the build's real time."""
        if self.mode == "simulated":
            return math.nan
        total = self.build_time_s + self.t_sig_parallel_s
        return self.t_app_s / total if total > 0 else math.nan

    def profile(self, metric: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The reconstructed profile sampled every sm: (times, power in W) or, with
        ``metric``, (times, that counter) (eq. 4.9)."""
        values = [seg.power_w if metric is None else seg.counters.get(metric, math.nan)
                  for seg in self.segments]
        counts = [seg.samples for seg in self.segments]
        series = np.repeat(np.asarray(values, float), counts)
        return np.arange(len(series)) * self.interval_s, series

    def __repr__(self) -> str:
        return short_repr(
            self, self.program, self.mode, f"time {self.time_s:.4g} s",
            f"energy {self.energy_j:.4g} J", f"{len(self.segments)} segments")

    def to_dict(self) -> dict[str, Any]:
        power = None
        if self.program_power is not None:
            power = {"times_s": self.program_power[0], "power_w": self.program_power[1]}
        return plain({
            "kind": KIND, "version": VERSION, "program": self.program, "args": list(self.args),
            "mode": self.mode, "p": self.p, "s": self.s, "interval_s": self.interval_s,
            "sources": list(self.sources), "power_model": self.power_model,
            "power_model_description": self.power_model_description,
            "segments": [seg.to_dict() for seg in self.segments],
            "estimate": {"time_s": self.time_s, "energy_j": self.energy_j,
                         "instructions": self.instructions, "complete": self.complete,
                         "missing": list(self.missing)},
            "program_run": None if not self.compared else {
                "time_s": self.program_time_s, "wall_s": self.program_wall_s,
                "energy_j": self.program_energy_j,
                "meter_energy_j": self.program_meter_energy_j,
                "instructions": self.program_instructions,
                "counters": dict(self.program_counters), "power": power},
            "errors_percent": {"time": self.time_error, "energy": self.energy_error,
                               "meter_energy": self.meter_energy_error,
                               "instructions": self.instruction_error},
            "compression": {"t_sig_s": self.t_sig_s, "t_sig_parallel_s": self.t_sig_parallel_s,
                            "build_time_s": self.build_time_s, "t_app_s": self.t_app_s,
                            "t_app_measured": self.compared, "cr": self.cr,
                            "cr_parallel": self.cr_parallel, "cr_framework": self.cr_framework},
            "unmeasured": list(self.unmeasured), "notes": list(self.notes),
        })

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str | None = None) -> SignatureEstimate:
        from phasekit.errors import InputError

        check_version(data, KIND, VERSION, source)

        def num(value: Any) -> float:
            return math.nan if value is None else float(value)

        try:
            est, run, comp = data["estimate"], data.get("program_run") or {}, data["compression"]
            power = run.get("power")
            return cls(
                str(data["program"]), tuple(data["args"]), str(data["mode"]), float(data["p"]),
                int(data["s"]), float(data["interval_s"]), tuple(data["sources"]),
                dict(data["power_model"]), str(data["power_model_description"]),
                tuple(Segment.from_dict(d) for d in data["segments"]), num(est["time_s"]),
                num(est["energy_j"]), num(est["instructions"]), tuple(est["missing"]),
                num(comp["t_sig_s"]), num(comp["t_sig_parallel_s"]),
                num(comp["build_time_s"]), num(run.get("time_s")), num(run.get("wall_s")),
                num(run.get("energy_j")), num(run.get("meter_energy_j")),
                num(run.get("instructions")),
                {k: num(v) for k, v in (run.get("counters") or {}).items()},
                None if not power else (np.asarray(power["times_s"], float),
                                        np.asarray([num(v) for v in power["power_w"]], float)),
                tuple(data.get("unmeasured", ())), tuple(data.get("notes", ())))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed signature estimate: {exc!r}", path=source) from None

    def summary(self) -> pd.DataFrame:
        """The segments table ``phasekit signature run`` prints: one row per segment (main's
        own code, each path) with its instructions, time (s), IPC, power (W, the model),
        energy (J), samples of the reconstructed profile and whether its rate was stable."""
        columns = ["label", "kind", "instructions", "time_s", "ipc", "power_w", "energy_j",
                   "samples", "stable", "stopped_by"]
        return pd.DataFrame([{c: getattr(s, c) for c in columns} for s in self.segments],
                            columns=columns)

    def present(self, name: str | None = None) -> Presentation:
        """The headline (the time and energy estimated, and measured when compared), the
        segments and totals (``name``: the program, default its file's) and the notes
        (:mod:`phasekit.signature.present`)."""
        from phasekit.signature.present import estimate_presentation

        return estimate_presentation(self, name)

    def plot(self, ax: Axes | None = None) -> Figure:
        """Power over time (``phasekit signature run --plot``): the reconstructed profile,
        constant per segment, and, when the program was run, its measured counters through
        the same power model."""
        from phasekit.plot.common import color
        from phasekit.plot.energy import target_axes

        fig, ax = target_axes(ax, height=4.5, width=12.0)
        start = 0.0
        for i, seg in enumerate(self.segments):
            length = seg.samples * self.interval_s  # T' / busy (module docstring)
            ax.hlines(seg.power_w, start, start + length, colors=color(i), linewidth=3,
                      label=f"{seg.label} (estimate)")
            start += length
        if self.program_power is not None:
            times, watts = self.program_power
            ax.step(times, watts, where="post", color="black", linewidth=0.8, alpha=0.7,
                    label="program, measured counters")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("power (W, model)")
        ax.set_title(f"{self.program}: reconstructed profile, estimated energy "
                     f"{self.energy_j:.3g} J"
                     + (f", {'simulated' if self.mode == 'simulated' else 'measured'} "
                        f"{self.program_energy_j:.3g} J" if self.compared else ""))
        if self.segments or self.program_power is not None:
            ax.legend(loc="lower right", fontsize="small")
        return fig


def _error(real: float, estimate: float) -> float:
    """Eq. 4.12 / 4.13 in percent (NaN when ``real`` is unknown or zero)."""
    if not (math.isfinite(real) and math.isfinite(estimate)) or real == 0:
        return math.nan
    return abs(real - estimate) / abs(real) * 100.0


# --- reconstruction --------------------------------------------------------------------------
#: Below this share of the longer run's instructions, the instructions between an
#: executable's two runs are too few to time (our choice): its time scales with its
#: instructions as a whole instead.
MIN_MARGINAL = 0.05


def _time_at_args(unit: Unit, runs: Sequence[PartialRun]) -> float:
    """CPU time of an executable at the program's real arguments, from its runs.

    Two runs (1 and k steps): the time per instruction between them, (t_k - t_1) / (I_k -
    I_1), carries the longer run to the real count I_K; when the instructions between them
    are under ``MIN_MARGINAL`` of I_k (main's own code, say), or their time is not positive
    (noise), the longer run's time is scaled by I_K / I_k. One run: its time, scaled the same
    way when it did not run the real arguments.
    """
    good = [r for r in runs if r.ok and math.isfinite(r.cpu_time_s)]
    if not good:
        return math.nan
    high = good[-1]
    count = unit.count
    if count is None or not math.isfinite(high.instructions) or high.instructions <= 0:
        return high.cpu_time_s
    full = count.at_args
    if len(good) > 1:
        low = good[0]
        d_instr = high.instructions - low.instructions
        d_time = high.cpu_time_s - low.cpu_time_s
        if d_instr > MIN_MARGINAL * high.instructions and d_time > 0:
            return high.cpu_time_s + d_time / d_instr * (full - high.instructions)
    return high.cpu_time_s * full / high.instructions


def _window_rates(run: PartialRun) -> tuple[float, float, float]:
    """(CPU seconds per instruction, IPC, frequency in Hz) over the counter window: eq. 4.6,
    with the seconds on the CPU (task clock) where the run has it, else wall seconds."""
    instructions, wall = run.window_totals("instructions")
    cycles, _ = run.window_totals("cycles")
    on_cpu, _ = run.window_totals("task_clock")
    seconds = on_cpu if math.isfinite(on_cpu) and on_cpu > 0 else wall
    tpi = seconds / instructions if instructions > 0 else math.nan
    ipc = instructions / cycles if cycles > 0 else math.nan
    freq = cycles / seconds if seconds > 0 and cycles > 0 else math.nan
    return tpi, ipc, freq


def _predict(model: PowerModelLike, rows: list[dict[str, float]], what: str) -> np.ndarray:
    features = tuple(model.features)
    available = sorted({k for row in rows for k in row})
    missing = [f for f in features if f not in available]
    if missing:
        raise UsageError(f"the power model needs {', '.join(missing)}, which {what} did not "
                         f"measure (measured: {', '.join(available) or 'nothing'}); its "
                         "features must be metrics of the runs, as rates per second")
    frame = pd.DataFrame([{f: row.get(f, math.nan) for f in features} for row in rows],
                         columns=list(features))
    return np.asarray(model.predict(frame), float).reshape(-1)


def reconstruct(signature: Signature, runs: ManagerResult, *,
                power_model: PowerModelLike | None = None,
                program: PartialRun | None = None,
                meter_energy_j: float = math.nan, meter_note: str = "") -> SignatureEstimate:
    """The time and energy estimate of ``signature`` from its partial ``runs`` (module
    docstring); compared with ``program`` (a full run measured the same way) when given."""
    model = power_model or default_power_model()
    steps = signature.steps
    notes = list(runs.notes) + list(signature.notes)
    missing: list[str] = []
    times: dict[str, float] = {}

    def unit_time(name: str) -> float:
        if name not in times:
            times[name] = _time_at_args(signature.unit(name), runs.runs_of(name))
        return times[name]

    plan: list[tuple[Unit, float, float, str]] = []  # unit, instructions, time, method
    base = signature.base
    for unit in (base, *signature.path_units):
        label = unit.label
        own = runs.runs_of(unit.name)
        if not unit.ok or not own or not all(r.ok for r in own):
            missing.append(label)
            continue
        if unit.kind == "base":
            instructions = unit.count.at_args if unit.count is not None else math.nan
        else:
            instructions = max(signature.path_instructions(unit), 0.0)
        if runs.mode == "hardware":
            tpi, _, _ = _window_rates(own[-1])
            method = "counter window (eq. 4.7)"
            if not (math.isfinite(tpi) and tpi > 0) and own[-1].instructions > 0:
                tpi = own[-1].cpu_time_s / own[-1].instructions  # a run too short to sample
                method = "whole run (no counter window)"
            plan.append((unit, instructions, instructions * tpi, method))
            continue
        reference = unit.reference
        t_ref = 0.0
        method = (f"t(K) from runs of {' and '.join(str(r.steps) for r in own)} steps"
                  if len(own) > 1 else "full run" if own[-1].steps == steps
                  else f"t(K) from a run of {own[-1].steps} steps")
        if reference is not None:
            t_ref = unit_time(reference)
            if not math.isfinite(t_ref) and reference != "base":
                notes.append(f"{label}: its reference {signature.unit(reference).label} has "
                             "no time; main's own code is subtracted instead (the shared "
                             "prefix's own code is counted twice)")
                t_ref = unit_time("base")
            if not math.isfinite(t_ref):
                t_ref = 0.0
            method += f", minus {signature.unit(reference).label}"
        t = unit_time(unit.name) - t_ref
        if t < 0:
            notes.append(f"{label}: its time is below its reference's by {-t * 1e3:.2f} ms "
                         "(measurement noise larger than its own time): counted as 0")
            t = 0.0
        plan.append((unit, instructions, t, method))

    counters = [runs.run(unit.name).counters() for unit, _, _, _ in plan]  # type: ignore[union-attr]
    for feature in getattr(model, "features", ()):
        known = [c[feature] for c in counters if math.isfinite(c.get(feature, math.nan))]
        gaps = [unit.label for (unit, _, _, _), c in zip(plan, counters, strict=True)
                if not math.isfinite(c.get(feature, math.nan))]
        if gaps and known:
            for c in counters:
                if not math.isfinite(c.get(feature, math.nan)):
                    c[feature] = float(np.mean(known))
            notes.append(f"{', '.join(gaps)}: no sample of {feature} (a run shorter than one "
                         "interval); the mean of the other segments is used")
    power = _predict(model, counters, "the partial runs") if plan else np.array([])
    sm = runs.interval
    segments: list[Segment] = []
    for (unit, instructions, t, method), c, watts in zip(plan, counters, power, strict=True):
        own = runs.runs_of(unit.name)
        longest = own[-1]
        tpi = t / instructions if instructions > 0 else math.nan
        ipc = freq = math.nan
        if runs.mode in ("hardware", "simulated"):
            _, ipc, freq = _window_rates(longest)
        busy = c.get("task_clock", math.nan)
        busy = busy if math.isfinite(busy) and busy > 0.01 else 1.0
        samples = max(round(t / busy / sm), 0)
        fraction = math.nan
        if unit.count is not None and longest.steps is not None and steps:
            share = (signature.path_instructions(unit, longest.steps) if unit.kind == "path"
                     else unit.count.at(longest.steps))
            fraction = share / instructions if instructions > 0 else math.nan
        segments.append(Segment(
            unit.label, unit.name, "main" if unit.kind == "base" else "path", instructions,
            t, tpi, ipc, freq, c, float(watts), float(watts) * samples * sm, samples,
            tuple(r.steps for r in own), float(sum(r.cpu_time_s for r in own)),
            float(sum(r.wall_time_s for r in own)), fraction, longest.stopped_by,
            longest.stable, method))
    if missing:
        share = sum(max(signature.path_instructions(u), 0.0) for u in signature.path_units
                    if u.label in missing and u.count is not None)
        total = signature.instructions_estimate
        notes.append("incomplete estimate: " + ", ".join(missing) + " could not be measured"
                     + (f" ({share / total:.1%} of the estimated instructions)"
                        if total and math.isfinite(share) and share else ""))
    unmeasured = list(runs.unmeasured)
    program_fields: dict[str, Any] = {}
    if program is not None:
        if not program.ok:
            notes.append(f"the full run of the program failed: {program.reason}; no "
                         "comparison")
        else:
            rows = program.rates
            valid = np.all(np.isfinite(rows), axis=1)
            edges = np.concatenate([[0.0], program.times])
            dt = np.diff(edges)
            energy = math.nan
            series = None
            if valid.any():
                frame_rows = [dict(zip(program.metrics, row, strict=True))
                              for row in rows[valid]]
                watts = _predict(model, frame_rows, "the program's run")
                energy = float(np.sum(watts * dt[valid]))
                series = (edges[:-1][valid], watts)  # sample start times
            program_fields = {
                "program_time_s": program.cpu_time_s, "program_wall_s": program.wall_time_s,
                "program_energy_j": energy, "program_meter_energy_j": meter_energy_j,
                "program_instructions": signature.instructions_program,
                "program_counters": {k: float(v) for k, v in zip(
                    program.metrics, np.nanmean(rows, axis=0) if len(rows) else [],
                    strict=False)},
                "program_power": series}
            if not math.isfinite(meter_energy_j):
                unmeasured.append("energy (" + (meter_note or "no meter") + "): the "
                                  "program's energy is the same power model applied to its "
                                  "measured counters, sample by sample")
    description = _describe(model)
    return SignatureEstimate(
        program=signature.program, args=signature.args, mode=runs.mode, p=runs.p, s=runs.s,
        interval_s=runs.interval, sources=runs.sources, power_model=model.to_dict(),
        power_model_description=description, segments=tuple(segments),
        time_s=float(sum(seg.time_s for seg in segments)),
        energy_j=float(sum(seg.energy_j for seg in segments)),
        instructions=float(sum(seg.instructions for seg in segments)),
        missing=tuple(missing), t_sig_s=runs.sum_partial_s,
        t_sig_parallel_s=runs.wall_time_s, build_time_s=signature.build_time_s,
        unmeasured=tuple(unmeasured), notes=tuple(dict.fromkeys(notes)), **program_fields)


def run_signature(signature: Signature, *, p: float = 5.0, s: int = 10,
                  interval: float = 0.005, power_model: PowerModelLike | None = None,
                  compare: bool = False, cores: Sequence[int] | int | None = None,
                  sources: SourceFactory | None = None, mode: str = "auto",
                  timeout: float | None = None, repeats: int = 1,
                  progress: Callable[[str, float], None] | None = None) -> SignatureEstimate:
    """Run ``signature``'s partial runs (:func:`~phasekit.signature.manager.
    execute_signature`) and reconstruct its time and energy; with ``compare`` also run the
    whole program, measured the same way (RAPL as a meter too where it exists).

    ``repeats`` (default 1, as the thesis) repeats every run and keeps the fastest (other
    jobs on a shared machine only add time); with ``compare`` the repeats are rounds of
    (partial runs, program run), so that both see the same moments of the machine's load.
    """
    model = power_model or default_power_model()
    for name in ("features", "predict", "to_dict"):
        if not hasattr(model, name):
            raise UsageError(f"the power model has no {name}: expected features, "
                             "predict(DataFrame) and to_dict()")
    if repeats < 1:
        raise UsageError("expected at least 1", parameter="repeats", value=repeats)
    rounds = repeats if compare and mode != "simulated" else 1  # simulation: deterministic
    results: list[ManagerResult] = []
    programs: list[PartialRun] = []
    meter_energy, meter_note = math.nan, ""
    for _ in range(rounds):
        results.append(execute_signature(
            signature, p=p, s=s, interval=interval, cores=cores, sources=sources, mode=mode,
            timeout=timeout, repeats=1 if compare else repeats, progress=progress))
        if compare:
            if progress:
                progress("the whole program (comparison)", 0.95)
            energy, meter_note, program = _measure_program(
                signature, interval, sources, timeout, results[-1].mode == "simulated")
            if not programs or (program.ok and (not programs[0].ok or program.cpu_time_s
                                                < programs[0].cpu_time_s)):
                programs, meter_energy = [program], energy
    runs = results[0] if len(results) == 1 else merge_results(results)
    return reconstruct(signature, runs, power_model=model,
                       program=programs[0] if programs else None,
                       meter_energy_j=meter_energy, meter_note=meter_note)


def _measure_program(signature: Signature, interval: float, sources: SourceFactory | None,
                     timeout: float | None, simulated: bool = False
                     ) -> tuple[float, str, PartialRun]:
    if simulated:
        program = run_program(signature, timeout=timeout, simulated=True)
        return math.nan, "a simulated run has no meter", program
    from phasekit.record.sources.rapl import RaplSource

    availability = RaplSource().probe()
    if not availability.available:
        program = run_program(signature, interval=interval, sources=sources, timeout=timeout)
        return math.nan, f"no RAPL: {availability.reason}", program
    from phasekit.record.runner import RaplMeter

    meter = RaplMeter()
    try:
        with meter.measure() as out:
            program = run_program(signature, interval=interval, sources=sources,
                                  timeout=timeout)
    finally:
        meter.close()
    return float(out.get("energy_j", math.nan)), "RAPL package energy (node-wide)", program
