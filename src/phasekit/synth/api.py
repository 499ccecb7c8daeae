"""``phasekit synth``: synthetic inputs of every verb with their ground truth (the public
door to :mod:`phasekit.synth`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike

if TYPE_CHECKING:
    from pathlib import Path

    from phasekit.profile import Profile
    from phasekit.synth.periodic import Truth

__all__ = ["generate", "synth", "write_truth"]


def synth(kind: str, output: PathLike, *, minutes: float | None = None,
          repetitions: int | None = None, idle: float = 30.0, nodes: int | None = None,
          pascal: bool = False, seed: int = 0, period: float | None = None) -> dict[str, Any]:
    """Write synthetic data with known ground truth, for any verb to try without
    measurements (``phasekit synth``); the truth goes beside it as ``OUTPUT.truth.json``.

    Parameters
    ----------
    kind
        ``nemo``, ``hpcg``, ``openfoam``: an IPC profile with periodicity truth (Phase-TA);
        ``bench_1`` (NPB MG, BT, EP, IS, CG back to back), ``bench_2`` (the same with idle
        periods between them): counter profiles with phase truth (Tsafack Chetsa et al.);
        ``nodes``: a folder of node profiles of one job, a slow and an idle node planted from
        4 nodes on; ``power``: power profiles per configuration (JSON); ``counters``: a CSV of
        counters C1..C14 and ``power_w``; ``campaign``: a PARSEC-like campaign over
        frequencies, cores and inputs; ``fingerprints``: a folder of runs of 4 programs x 3
        inputs.
    output
        A profile (``.csv``, ``.tsv``, ``.csv.gz``, ``.parquet``), a folder for nodes and
        fingerprints, ``.json`` for power, ``.csv`` for counters, ``.json``/``.csv``/``.jsonl``
        for a campaign.
    minutes
        Duration (default 10; counters: 30, one sample every 2 s); for bench_1/bench_2 the
        number of repetitions closest to it.
    repetitions
        bench_1/bench_2: runs of the whole sequence (default 1).
    idle
        bench_2: idle seconds after every workload.
    nodes
        nodes: the number of nodes (default 8).
    pascal
        campaign: write PaScal Analyzer's JSON layout.
    seed
        Random seed (same seed, same data).
    period
        Sampling period in seconds (default 0.005; 1 for bench_1/bench_2).

    Returns
    -------
    dict
        What was written: the files (``profile``, ``folder``, ``table``, ``campaign`` or
        ``profiles``, and ``truth``), the kind, the seed, counts of what the truth holds, and
        ``lines``: one sentence per file written.
    """
    from phasekit.synth.files import write_synthetic

    return write_synthetic(kind, output, minutes=minutes, repetitions=repetitions, idle=idle,
                           nodes=nodes, pascal=pascal, seed=seed, period=period)


def generate(kind: str, *, minutes: float = 10.0, seed: int = 0, period: float = 0.005
             ) -> tuple[Profile, Truth]:
    """A periodic IPC profile and its truth (Phase-TA's workloads), without writing them:
    :func:`phasekit.synth.generate`.

    Parameters
    ----------
    kind
        ``nemo``, ``hpcg`` or ``openfoam``.
    minutes, seed, period
        Duration, random seed and sampling period in seconds.
    """
    from phasekit.synth import generate as make

    return make(kind, minutes=minutes, seed=seed, period=period)


def write_truth(truth: Truth, data: PathLike) -> Path:
    """Write the truth of a synthesized file beside it, ``DATA.truth.json``, atomically;
    returns that path.

    Parameters
    ----------
    truth
        The truth :func:`generate` gave with the profile.
    data
        The synthesized file the truth is of.
    """
    from phasekit.synth import truth_path
    from phasekit.synth import write_truth as write

    return write(truth, truth_path(data))
