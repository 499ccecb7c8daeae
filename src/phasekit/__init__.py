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
``pk.energy.fit``, ``pk.energy.choose`` and ``pk.energy.suggest`` are the subpackages and
modules of those names, made callable (:mod:`phasekit.verbmodule` says why); each runs the
function of the same name in its package's ``api`` module (:data:`VERBS`). ``pk.periodicity_many``,
``pk.phases_many`` and ``pk.structure_many`` run one analysis over several files
(:mod:`phasekit.many`). ``import phasekit`` imports NumPy and
nothing heavier; a verb imports what it uses when it is first called or named.
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import Any

from phasekit.errors import InputError, PhasekitError, UnsupportedError, UsageError
from phasekit.profile import Profile
from phasekit.results import REGISTRY, Result, load

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

    Parameters
    ----------
    path
        A file, a directory (an OTF2 trace, a signature) or a ``prometheus://`` URL.
    **options
        Keywords of a URL's reader (``prometheus://``: ``queries``, ``start``, ``end``,
        ``step``, ``label``); a file or directory takes none (UsageError).

    Returns
    -------
    Any
        What the file holds, as listed above: a :class:`Profile` (a list of them, one per
        node, from Prometheus), a :class:`~phasekit.trace.Trace`, a result, a power model,
        power profiles, a :class:`~phasekit.runs.Campaign` or a
        :class:`~phasekit.signature.paths.Signature`.
    """
    from phasekit.io.formats import read_any

    return read_any(path, **options)


#: Each callable module (:mod:`phasekit.verbmodule`) and the verb it runs, ``"module:function"``.
VERBS: dict[str, str] = {
    "phasekit.periodicity": "phasekit.periodicity.api:periodicity",
    "phasekit.phases": "phasekit.phases.api:phases",
    "phasekit.structure": "phasekit.structure.api:structure",
    "phasekit.energy.fit": "phasekit.energy.api:fit",
    "phasekit.energy.choose": "phasekit.energy.api:choose",
    "phasekit.energy.suggest": "phasekit.energy.api:suggest",
    "phasekit.energy.phasediv": "phasekit.energy.api:phasediv",
    "phasekit.energy.fingerprint": "phasekit.energy.api:fingerprint",
    "phasekit.schedule": "phasekit.schedule.api:schedule",
    "phasekit.signature": "phasekit.signature.api:signature",
    "phasekit.record": "phasekit.record.api:record",
}
#: Subpackages reached as attributes (``pk.energy``), imported on first use.
_LAZY = ("periodicity", "phases", "structure", "energy", "powermodel", "schedule",
         "signature", "record")
#: The many-input verbs (:mod:`phasekit.many`: several files on local processes or a Dask
#: client), imported on first use.
_MANY = ("periodicity_many", "phases_many", "structure_many")


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from phasekit.version import version

        globals()["__version__"] = value = version()
        return value
    if name in _LAZY:
        return import_module(f"{__name__}.{name}")  # binds itself as this attribute
    if name in _MANY:
        return getattr(import_module(f"{__name__}.many"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_MANY) | {"__version__"})
