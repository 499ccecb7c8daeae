"""Application signatures, counter-based power models and speed-up models (Salinas Hilburg 2020)."""

# --- signatures (callgraph, paths, manager, reconstruct) -------------------------------------
from phasekit.signature.callgraph import CallGraph, CallSite, call_graph, scan_source
from phasekit.signature.coalloc import CoallocModel, fit_coalloc
from phasekit.signature.manager import (
    ManagerResult,
    PartialRun,
    execute_signature,
    find_change,
    run_program,
)
from phasekit.signature.paths import (
    KERNELS,
    Signature,
    build_signature,
    independent_paths,
    kernel_source,
    load_signature,
)
from phasekit.signature.powermodels import (
    GEPowerModel,
    LinearPowerModel,
    PowerModel,
    ServerPowerModel,
    fit_ge,
    fit_linear,
    fit_pls,
    fit_power_model,
    fit_server,
    power_model_from_dict,
)
from phasekit.signature.reconstruct import (
    Segment,
    SignatureEstimate,
    default_power_model,
    reconstruct,
    run_signature,
)
from phasekit.signature.speedup import THESIS_SPEEDUP, SpeedupModel, fit_speedup, scale_energy
from phasekit.verbmodule import make_callable

__all__ = [
    "KERNELS",
    "THESIS_SPEEDUP",
    "CallGraph",
    "CallSite",
    "CoallocModel",
    "GEPowerModel",
    "LinearPowerModel",
    "ManagerResult",
    "PartialRun",
    "PowerModel",
    "Segment",
    "ServerPowerModel",
    "Signature",
    "SignatureEstimate",
    "SpeedupModel",
    "build_signature",
    "call_graph",
    "default_power_model",
    "execute_signature",
    "find_change",
    "fit_coalloc",
    "fit_ge",
    "fit_linear",
    "fit_pls",
    "fit_power_model",
    "fit_server",
    "fit_speedup",
    "independent_paths",
    "kernel_source",
    "load_signature",
    "power_model_from_dict",
    "reconstruct",
    "run_program",
    "run_signature",
    "scale_energy",
    "scan_source",
]


make_callable(__name__, "phasekit.signature.api:signature")  # pk.signature(...) runs it
