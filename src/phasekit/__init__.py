"""phasekit: what an HPC application does over time, without knowing its code.

The Python front door speaks the CLI's words::

    import phasekit as pk
    prof = pk.read("run.parquet")              # Profile, Trace, Campaign or a saved result
    res = pk.periodicity(prof, metrics=["ipc"])  # PeriodicityResult
    pk.phases(prof); pk.structure("run.prv"); pk.energy.fit("campaign.json")
    nodes = pk.periodicity_many("runs/job42/", workers=8)  # or client=dask Client

Each verb takes its data first (a path, or the object the library function takes) and its
options as keywords, and returns the library function's result. ``pk.periodicity``,
``pk.phases``, ``pk.structure``, ``pk.schedule``, ``pk.signature``, ``pk.record``,
``pk.energy.fit`` and ``pk.energy.choose`` are the subpackages and modules of those names,
made callable (:mod:`phasekit.verbmodule` says why). ``pk.periodicity_many``,
``pk.phases_many`` and ``pk.structure_many`` run one analysis over several files
(:mod:`phasekit.many`). ``import phasekit`` imports NumPy and
nothing heavier; a verb imports what it uses when it is first called or named.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.errors import InputError, PhasekitError, UnsupportedError, UsageError
from phasekit.profile import Profile
from phasekit.results import REGISTRY, Result, from_data, load

if TYPE_CHECKING:
    import pandas as pd

    from phasekit.energy.choose import ChoiceResult
    from phasekit.energy.fit import EnergyFitResult
    from phasekit.energy.suggest import SuggestResult
    from phasekit.periodicity import PeriodicityResult
    from phasekit.phases import PhaseResult
    from phasekit.record import RecordingSummary
    from phasekit.runs import Campaign
    from phasekit.schedule.batch import Batch
    from phasekit.schedule.simulate import ScheduleResult
    from phasekit.signature.paths import Signature
    from phasekit.signature.reconstruct import SignatureEstimate
    from phasekit.structure import StructureResult
    from phasekit.trace import Trace

__all__ = [
    "VERBS",
    "InputError",
    "PhasekitError",
    "Profile",
    "Result",
    "UnsupportedError",
    "UsageError",
    "__version__",
    "energy",
    "load",
    "periodicity",
    "periodicity_many",
    "phases",
    "phases_many",
    "powermodel",
    "read",
    "record",
    "schedule",
    "signature",
    "structure",
    "structure_many",
]

PathLike = str | os.PathLike[str]

# --- read ------------------------------------------------------------------------------------
#: Saved results ``read`` understands: JSON kind -> (module, class with ``from_dict``).
#: Kept for callers of the first API: the registry of result kinds.
RESULT_KINDS = REGISTRY
_JSON_SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz")


def _json_head(path: Path) -> Any:
    """The JSON value of ``path`` (or of its first line, for JSON lines); None if neither."""
    import json

    from phasekit.io.inputs import loads, read_text

    text = read_text(path, "a JSON file")
    try:
        return loads(text)
    except json.JSONDecodeError:
        first = next((line for line in text.splitlines() if line.strip()), "")
        try:
            return loads(first)
        except json.JSONDecodeError:
            return None
    except ValueError as exc:  # a number that is not finite
        raise InputError(str(exc), path=str(path)) from None


def read(path: PathLike, **options: Any) -> Any:
    """Read ``path`` into what it holds, by its content (``phasekit analyze``, ``structure``,
    ``energy fit``, ... each read one of these).

    - ``prometheus://HOST:PORT``: one :class:`Profile` per node from a Prometheus server's
      range queries; ``options`` are those of :func:`phasekit.io.prometheus.read_prometheus`
      (``queries``, ``start``, ``end``, ``step``, ``label``), e.g.
      ``read("prometheus://localhost:9090", queries=["node_load1"], start="now-1h")``;

    - a trace (Paraver ``.prv``/``.prv.gz``, an OTF2 anchor or archive directory): a
      :class:`~phasekit.trace.Trace`;
    - JSON with ``"kind"`` of a saved result (:data:`RESULT_KINDS`, e.g. ``phasekit analyze
      -o``): that result; a power model (``"kind": "power_model"``): the model; power
      profiles (``"kind": "power_profiles"``, ``phasekit energy phasediv``'s input); a campaign
      (ours, JSON lines, or PaScal Analyzer JSON): a :class:`~phasekit.runs.Campaign`;
    - a signature directory (``phasekit signature build``): its
      :class:`~phasekit.signature.paths.Signature`;
    - anything else: a :class:`Profile` (CSV, Parquet, a recording, ``perf stat -I`` or
      ``likwid-perfctr -t`` output), as :func:`phasekit.io.read_profile`.

    Errors are :class:`InputError` (bad content) or :class:`UsageError` (a name that says no
    format), both ``ValueError``; they name the file.
    """
    from phasekit.io import is_prometheus_url, is_trace, read_profile, read_trace

    if is_prometheus_url(path):
        from phasekit.io.prometheus import read_prometheus

        return read_prometheus(str(path), **options)
    if options:
        raise UsageError(f"read() options {', '.join(options)} apply to prometheus:// only")
    path = Path(path)
    if is_trace(path):
        return read_trace(path)
    if path.is_dir():
        from phasekit.signature.paths import SIGNATURE_FILE, load_signature

        if (path / SIGNATURE_FILE).is_file():
            return load_signature(path)
        raise UsageError(f"{path}: a directory that is neither an OTF2 trace nor a signature; "
                         "read its files one at a time")
    if path.name.lower().endswith(_JSON_SUFFIXES):
        data = _json_head(path)
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind in RESULT_KINDS:
            return from_data(data, source=str(path))
        if kind == "power_profiles":
            from phasekit.energy.phasediv import power_profiles_from_dict

            return power_profiles_from_dict(data, source=str(path))
        if kind == "power_model":
            from phasekit.signature.reconstruct import load_power_model

            return load_power_model(data, str(path))
        if kind not in (None, "campaign"):
            raise InputError(f"a phasekit {kind!r} result, which read() does not know; it "
                             f"reads {', '.join(sorted(RESULT_KINDS))}, power_model, "
                             "power_profiles and campaign", path=str(path))
        from phasekit.campaign import read_campaign

        return read_campaign(path)
    return read_profile(path)


def _profile(data: Profile | PathLike) -> Profile:
    if isinstance(data, Profile):
        return data
    from phasekit.io import read_profile

    return read_profile(data)


def _names(value: Sequence[str] | str | None) -> list[str] | None:
    return [value] if isinstance(value, str) else None if value is None else list(value)


# --- analyses ----------------------------------------------------------------------------------
def _periodicity(profile: Profile | PathLike, *, metrics: Sequence[str] | str | None = None,
                 window: tuple[float | None, float | None] | None = None,
                 **options: Any) -> PeriodicityResult:
    """Periodicities and representative patterns of a profile (``phasekit analyze``; seed
    000): :func:`phasekit.periodicity.analyze`.

    ``profile``: a :class:`Profile` or its file. ``metrics``: a name or names (default: ipc
    when present or computable, else the most periodic metric). ``window``: (start, end)
    seconds from the profile start, either may be None. Other keywords go to
    :func:`~phasekit.periodicity.analyze` (``half_window``, ``band``, ``cut_ratio``, ...).
    """
    from phasekit.periodicity import analyze

    return analyze(_profile(profile), metrics=_names(metrics), window_s=window, **options)


def _phases(profile: Profile | PathLike, *, method: str = "auto",
            threshold: float | None = None, smooth: int = 1,
            metrics: Sequence[str] | str | None = None,
            sensors: Sequence[str] | str | None = None, **options: Any) -> PhaseResult:
    """Phase changes and recurring phases of a profile (``phasekit phases``; Tsafack Chetsa et al.):
    :func:`phasekit.phases.phases`, whose keywords are these and the detector's
    (``metrics``: the metrics forming the execution vectors, the CLI's ``--metric``;
    ``sensors``: its former name)."""
    from phasekit.phases import phases

    return phases(_profile(profile), method=method, threshold=threshold, smooth=smooth,
                  metrics=_names(metrics), sensors=_names(sensors), **options)


def _structure(trace: Trace | PathLike, *, rank: int | None = None,
               **options: Any) -> StructureResult:
    """The loop structure of an MPI trace (``phasekit structure``; Martínez Vera):
    :func:`phasekit.structure.structure` (``eps``, ``min_pts``, ``min_explained``).
    ``trace``: a :class:`~phasekit.trace.Trace` or its file (Paraver, OTF2)."""
    from phasekit.structure import structure
    from phasekit.trace import Trace

    if not isinstance(trace, Trace):
        from phasekit.io import read_trace

        trace = read_trace(trace)
    return structure(trace, rank=rank, **options)


# --- energy ------------------------------------------------------------------------------------
def _configurations(data: Campaign | pd.DataFrame | PathLike) -> pd.DataFrame:
    """One row per configuration from a campaign, a table of runs, or their file (as
    ``phasekit energy fit TABLE`` reads it)."""
    import pandas as pd

    from phasekit.energy.fit import configurations
    from phasekit.runs import Campaign

    if isinstance(data, Campaign | pd.DataFrame):
        return configurations(data)
    from phasekit.io import is_csv, read_csv_table

    if is_csv(data):
        return configurations(read_csv_table(data), source=os.fspath(data))
    from phasekit.campaign import read_campaign

    return configurations(read_campaign(data), source=os.fspath(data))


def _energy_fit(data: Campaign | pd.DataFrame | PathLike, *, model: str = "extended",
                train: int | None = None, **options: Any) -> EnergyFitResult:
    """Fit the energy model E(f, p, N) (``phasekit energy fit``; Silva 2024):
    :func:`phasekit.energy.fit.fit_energy` on the configurations of ``data`` (a campaign,
    a table of runs, or its file). ``train``: fit on that many configurations, scored on the
    others (``n_train``); other keywords (``design``, ``seed``, ``baselines``, ``input``,
    ``loss``, ...) go to ``fit_energy``."""
    from phasekit.energy.fit import fit_energy

    return fit_energy(_configurations(data), model=model, n_train=train, **options)


def _energy_choose(data: Campaign | pd.DataFrame | PathLike, *,
                   fit: EnergyFitResult | PathLike | None = None,
                   inputs: Sequence[str | float] | str | float | None = None,
                   frequencies: Sequence[float] | None = None,
                   cores: Sequence[int] | None = None, max_time_s: float | None = None,
                   max_cores: int | None = None, min_frequency_ghz: float | None = None,
                   max_frequency_ghz: float | None = None, user_cores: int | None = None,
                   model: str = "extended", train: int | None = None,
                   design: str = "doptimal", seed: int = 0, uncertainty: bool = True,
                   tolerance: float | None = None) -> ChoiceResult:
    """The minimum-energy configuration for each input (``phasekit energy choose``; seed
    002): :func:`phasekit.energy.choose.choose`, as the CLI runs it.

    ``data``: the measured campaign (a campaign, a table of runs, or its file). ``fit``: an
    :class:`~phasekit.energy.fit.EnergyFitResult` (or its JSON file); without it the model is
    fitted here (``model``, ``train``, ``design``, ``seed``). ``inputs``: labels or numbers
    (default: every input of ``data``); ``frequencies`` and ``cores``: the grid (default:
    those of ``data``). With ``uncertainty`` (the CLI's default) each choice says how sure it
    is (an ensemble of refits, ``tolerance`` percent of expected regret). Unlike the CLI's
    JSON, the result does not carry the configurations to measure next:
    :func:`phasekit.energy.workflow.fit_then_choose` returns them with the result.
    """
    import pandas as pd

    from phasekit.energy.choose import TOLERANCE
    from phasekit.energy.fit import EnergyFitResult
    from phasekit.energy.workflow import fit_then_choose
    from phasekit.runs import Campaign

    if fit is not None and not isinstance(fit, EnergyFitResult):
        path = os.fspath(fit)
        fit = read(path)
        if not isinstance(fit, EnergyFitResult):
            raise InputError("not an energy_fit result", path=path)
    return fit_then_choose(
        _configurations(data), fit=fit, inputs=inputs, frequencies=frequencies, cores=cores,
        max_time_s=max_time_s, max_cores=max_cores, min_frequency_ghz=min_frequency_ghz,
        max_frequency_ghz=max_frequency_ghz, user_cores=user_cores, model=model, train=train,
        design=design, seed=seed, uncertainty=uncertainty,
        tolerance=TOLERANCE if tolerance is None else tolerance,
        source=None if isinstance(data, Campaign | pd.DataFrame) else os.fspath(data)).result


def _energy_suggest(data: Campaign | pd.DataFrame | PathLike, *, k: int = 5,
                    frequencies: Sequence[float] | None = None,
                    cores: Sequence[int] | None = None, model: str = "extended",
                    seed: int = 0, **limits: Any) -> SuggestResult:
    """The next configurations to measure (``phasekit energy suggest``; the
    active-learning loop on the energy model of PaScal, Silva et al.):
    :func:`phasekit.energy.suggest.suggest` from every configuration measured in ``data``
    (a campaign, a table of runs, or its file). ``frequencies`` and ``cores``: the grid to
    choose from (default: those of ``data``); ``limits``: ``max_time_s``, ``max_cores``,
    ``min_frequency_ghz``, ``max_frequency_ghz``, ``tolerance``."""
    from phasekit.energy.suggest import suggest

    return suggest(_configurations(data), k=k, frequencies_ghz=tuple(frequencies or ()),
                   cores=tuple(cores or ()), model=model, seed=seed, **limits)


# --- schedule, signature, record ---------------------------------------------------------------
def _schedule(batch: Batch | PathLike, *, servers: int, cores: int,
              policies: Sequence[str] | str = "all", **options: Any) -> ScheduleResult:
    """Plan a batch of tasks on ``servers`` x ``cores`` with each policy and compare their
    energy (``phasekit schedule``; Salinas Hilburg 2020, chapter 5):
    :func:`phasekit.schedule.simulate.schedule_batch` (``seed``, ``time_limit_s``,
    ``estimated``, ``sa_iterations``). ``batch``: a :class:`~phasekit.schedule.batch.Batch`
    or its CSV file (:func:`~phasekit.schedule.batch.read_batch`)."""
    from phasekit.schedule.batch import Batch, read_batch
    from phasekit.schedule.simulate import DataCenter, schedule_batch

    if not isinstance(batch, Batch):
        batch = read_batch(batch)
    dc = DataCenter(servers=servers, cores=cores)
    batch.check_fits(dc.cores)
    return schedule_batch(batch, dc, policies=policies, **options)


def _signature(signature: Signature | PathLike, *, power_model: Any = None,
               **options: Any) -> SignatureEstimate:
    """Run a signature's partial runs and estimate the program's time and energy
    (``phasekit signature run``; Salinas Hilburg 2020, 4.1.4-4.1.6):
    :func:`phasekit.signature.reconstruct.run_signature` (``p``, ``s``, ``interval``,
    ``compare``, ``cores``, ``mode``, ``timeout``, ``repeats``). ``signature``: a
    :class:`~phasekit.signature.paths.Signature` or its directory (``phasekit signature
    build``); ``power_model``: a model, its JSON file, or a power-model fit (its model)."""
    from phasekit.signature.paths import Signature, load_signature
    from phasekit.signature.reconstruct import run_signature

    if not isinstance(signature, Signature):
        signature = load_signature(signature)
    if isinstance(power_model, str | os.PathLike):
        power_model = read(power_model)
    power_model = getattr(power_model, "model", power_model)  # a fit result holds its model
    return run_signature(signature, power_model=power_model, **options)


def _record(command: Sequence[str] | None, *, output: PathLike,
            interval: float = 0.005, duration: float | None = None,
            metrics: Sequence[str] | None = None, sources: Sequence[str] | None = None,
            scope: str | None = None) -> RecordingSummary:
    """Record a profile of this machine while ``command`` runs (or for ``duration``
    seconds) into ``output`` (``phasekit record``): :class:`phasekit.record.Recorder`.

    ``sources``: names of built-in sources (default: every one that can run here);
    ``metrics``: names to keep (default all); ``scope``: "both" (default with a command: the
    node and the command's own process tree, ``cmd_...``), "node" or "process". Returns the
    recording's summary; read the profile with :func:`read`. The command's exit code is
    ``summary.exit_code``.
    """
    from phasekit.record import Recorder, builtin_sources, select_sources

    chosen = select_sources(None if sources is None else list(sources), builtin_sources())
    recorder = Recorder(chosen, interval=interval, metrics=metrics, scope=scope)  # type: ignore[arg-type]
    return recorder.run(output, command=None if not command else list(command),
                        duration=duration)


#: The callable modules (:mod:`phasekit.verbmodule`) and the verb each runs.
VERBS: dict[str, Callable[..., Any]] = {
    "phasekit.periodicity": _periodicity,
    "phasekit.phases": _phases,
    "phasekit.structure": _structure,
    "phasekit.energy.fit": _energy_fit,
    "phasekit.energy.choose": _energy_choose,
    "phasekit.energy.suggest": _energy_suggest,
    "phasekit.schedule": _schedule,
    "phasekit.signature": _signature,
    "phasekit.record": _record,
}
#: Subpackages reached as attributes (``pk.energy``), imported on first use.
_LAZY = ("periodicity", "phases", "structure", "energy", "powermodel", "schedule",
         "signature", "record")
#: The many-input verbs (:mod:`phasekit.many`: several files on local processes or a Dask
#: client), imported on first use.
_MANY = ("periodicity_many", "phases_many", "structure_many")


def _version() -> str:
    """The installed distribution's version (importlib.metadata: 10 ms, so read when asked)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("phasekit")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0.0.0"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()["__version__"] = value = _version()
        return value
    if name in _LAZY:
        return import_module(f"{__name__}.{name}")  # binds itself as this attribute
    if name in _MANY:
        return getattr(import_module(f"{__name__}.many"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_MANY) | {"__version__"})
