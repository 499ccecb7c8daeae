"""``pk.signature``: the verb of ``phasekit signature run`` (the Python front door)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike

if TYPE_CHECKING:
    from phasekit.signature.paths import Signature
    from phasekit.signature.reconstruct import SignatureEstimate

__all__ = ["build", "figure", "kernel", "kernels", "load_signature", "signature"]


def _power_model(value: Any) -> Any:
    """A power model from a model, its JSON file, or a power-model fit (its model)."""
    if isinstance(value, str | os.PathLike):
        from phasekit.signature.powermodels import read_power_model

        return read_power_model(value)
    return getattr(value, "model", value)


def signature(signature: Signature | PathLike, *, power_model: Any = None,
              **options: Any) -> SignatureEstimate:
    """Run a signature's partial runs and estimate the program's time and energy
    (``phasekit signature run``; Salinas Hilburg 2020, 4.1.4-4.1.6):
    :func:`phasekit.signature.reconstruct.run_signature`.

    Parameters
    ----------
    signature
        A :class:`~phasekit.signature.paths.Signature` or its directory (``phasekit
        signature build``).
    power_model
        A power model, its JSON file, or a power-model fit (its model).
    **options
        ``p``, ``s``, ``interval``, ``compare``, ``cores``, ``mode``, ``timeout``,
        ``repeats``.
    """
    from phasekit.signature.paths import Signature, load_signature
    from phasekit.signature.reconstruct import run_signature

    if not isinstance(signature, Signature):
        signature = load_signature(signature)
    return run_signature(signature, power_model=_power_model(power_model), **options)


def build(source: PathLike, directory: PathLike, **options: Any) -> Signature:
    """Build the signature of a C program into ``directory`` (``phasekit signature build``;
    Salinas Hilburg 2020, 4.1.1-4.1.3): call graph, independent paths, one executable each,
    their instructions. The directory is checked first (absent in an existing folder, empty,
    or holding a signature, which the build replaces), then
    :func:`phasekit.signature.paths.build_signature` builds.

    Parameters
    ----------
    source
        The C program (one file; local headers may be included); :func:`kernel` gives a
        bundled one.
    directory
        The signature directory to write.
    **options
        ``args``, ``cflags``, ``ldflags``, ``cc``, ``steps_arg``, ``probe_steps``,
        ``counter``, ``count_program``, ``progress``, ... of ``build_signature``.
    """
    from phasekit.signature.paths import build_signature, check_signature_directory

    check_signature_directory(directory)  # before compiling: built in a sibling, renamed
    return build_signature(source, directory, **options)


def kernels() -> list[str]:
    """The names of the bundled kernels (:data:`phasekit.signature.paths.KERNELS`).

    Returns
    -------
    list of str
        What :func:`kernel` takes.
    """
    from phasekit.signature.paths import KERNELS

    return list(KERNELS)


def kernel(name: str) -> tuple[Path, tuple[str, ...], int]:
    """A bundled kernel (:func:`kernels`): its C file, its default arguments (a full run of
    a second or two on one core) and which argument is its trip count (1 = the first).

    Parameters
    ----------
    name
        One of :func:`kernels`; UsageError otherwise.
    """
    from phasekit.signature.paths import KERNELS, kernel_source

    source = kernel_source(name)
    args, steps_arg = KERNELS[name]
    return source, args, steps_arg


def load_signature(path: PathLike) -> Signature:
    """Read a signature built by :func:`build`: :func:`phasekit.signature.paths.load_signature`.

    Parameters
    ----------
    path
        The signature directory or its ``signature.json``.
    """
    from phasekit.signature.paths import load_signature as load

    return load(path)


def figure(estimate: SignatureEstimate, path: PathLike) -> Path:
    """Write the figure of a signature's estimate (what ``phasekit signature run --plot``
    writes): the reconstructed power profile, and the program's when it was run too
    (:meth:`~phasekit.signature.reconstruct.SignatureEstimate.plot`).

    Parameters
    ----------
    estimate
        What :func:`signature` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).

    Returns
    -------
    Path
        The file written.
    """
    from phasekit.plot.common import save

    return save(estimate.plot(), path)
