"""``pk.record``: the verb of ``phasekit record`` (the Python front door), and the doors of
``phasekit sources`` and ``phasekit campaign run``."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike

if TYPE_CHECKING:
    from phasekit.present import Presentation
    from phasekit.record.recorder import RecordingSummary
    from phasekit.runs import Campaign

__all__ = ["available_sources", "list_sources", "present_sources", "record", "run_campaign",
           "sources_paragraphs"]


def record(command: Sequence[str] | None, *, output: PathLike, interval: float = 0.005,
           duration: float | None = None, metrics: Sequence[str] | None = None,
           sources: Sequence[str] | None = None, scope: str | None = None,
           sensors: Sequence[tuple[str, str]] = (), sensor_interval: float = 1.0,
           status: Callable[[float, int], None] | None = None,
           command_stdout: int | None = None) -> RecordingSummary:
    """Record a profile of this machine while ``command`` runs (or for ``duration``
    seconds) into ``output`` (``phasekit record``): :class:`phasekit.record.Recorder`.

    Parameters
    ----------
    command
        The program and its arguments (None: record for ``duration`` seconds).
    output
        The recording's file; read it with :func:`phasekit.read`.
    interval, duration
        Seconds between samples; how long to record without a command.
    metrics
        Names to keep (default: all).
    sources
        Names of built-in sources (default: every one that can run here).
    scope
        "both" (default with a command: the node and the command's own process tree,
        ``cmd_...``), "node" or "process".
    sensors
        ``(name, command)`` pairs: an external command printing a number (an IPMI or GPU
        power reader), recorded as metric ``name``
        (:class:`~phasekit.record.sources.command.CommandSource`).
    sensor_interval
        Seconds between two runs of each sensor's command.
    status
        Called as ``status(elapsed_s, n_samples)`` after every chunk written.
    command_stdout
        A file descriptor for the command's standard output (default: ours).

    Returns
    -------
    RecordingSummary
        The recording's summary; the command's exit code is ``summary.exit_code``.
    """
    from phasekit.record import Recorder, builtin_sources, select_sources

    chosen = select_sources(None if sources is None else list(sources), builtin_sources())
    if sensors:
        from phasekit.record.sources.command import CommandSource

        chosen += [CommandSource(name, program, interval=sensor_interval)
                   for name, program in sensors]
    recorder = Recorder(chosen, interval=interval, metrics=metrics, scope=scope)  # type: ignore[arg-type]
    return recorder.run(output, command=None if not command else list(command),
                        duration=duration, status=status, command_stdout=command_stdout)


def available_sources() -> list[str]:
    """The names of the built-in recording sources that can run on this machine, in the
    order their metrics appear in a recording (:func:`list_sources` says why the others
    cannot)."""
    from phasekit.record import builtin_sources, select_sources

    return [source.name for source in select_sources(None, builtin_sources())]


def list_sources() -> list[dict[str, Any]]:
    """Every built-in recording source, whether it can run here and what it measures
    (``phasekit sources``).

    Returns
    -------
    list of dict
        One ``{name, available, reason, metrics, unavailable_metrics, command_metrics}`` per
        source: ``reason`` why it cannot run (or None); ``metrics`` and ``command_metrics``
        (what it records of a command's own process tree, named ``cmd_...``) as ``{name,
        unit, kind}``; ``unavailable_metrics``: metric name -> why not.
    """
    from phasekit.record import builtin_sources, command_sources, probe_all

    listing: list[dict[str, Any]] = []
    found = builtin_sources()
    own = {name: probe_all([s])[0] if s is not None else None
           for name, s in command_sources(found).items()}
    for availability in probe_all(found):
        mine = own.get(availability.name)
        listing.append({
            "name": availability.name, "available": availability.available,
            "reason": availability.reason or None,
            "metrics": [{"name": m.name, "unit": m.rate_unit or m.unit, "kind": m.kind}
                        for m in availability.metrics],
            "unavailable_metrics": dict(availability.unavailable_metrics),
            "command_metrics": [{"name": m.name, "unit": m.rate_unit or m.unit, "kind": m.kind}
                                for m in (mine.metrics if mine and availability.available
                                          else ())],
        })
    return listing


def present_sources(listing: Sequence[Mapping[str, Any]] | None = None) -> Presentation:
    """The recording sources of this machine as ``phasekit sources`` prints them: a headline
    in plain words (how many sources can run, what they measure), one row per source
    (available, metrics, why not) and what command sources are
    (:mod:`phasekit.record.sources_present`).

    Parameters
    ----------
    listing
        What :func:`list_sources` returns (default: asks it).
    """
    from phasekit.record.sources_present import presentation

    return presentation(list_sources() if listing is None else listing)


def sources_paragraphs(shown: Presentation, width: int = 80) -> str:
    """:func:`present_sources` as plain text for a pipe or a file: the headline, then a
    paragraph per source (``NAME: available`` or ``not available``, its metrics, and why),
    then the notes, wrapped between words within ``width`` columns (a metric name or a path
    is never split), where the table would be hundreds of columns wide.

    Parameters
    ----------
    shown
        What :func:`present_sources` returns.
    width
        The longest line (a word longer than it stays whole).
    """
    from phasekit.record.sources_present import paragraphs

    return paragraphs(shown, width)


def run_campaign(command: Sequence[str], output: PathLike, *,
                 threads: Sequence[int | None] = (None,), cores: Sequence[int | None] = (None,),
                 frequencies_ghz: Sequence[float | None] = (None,),
                 inputs: Sequence[str | None] = (None,), repetitions: int = 1,
                 idle_s: float = 0.0, timeout_s: float | None = None,
                 power_command: str | None = None, power_interval_s: float = 1.0,
                 power_estimate_w: Sequence[float] | None = None,
                 profile_dir: PathLike | None = None, pascal: bool = False,
                 progress: Callable[[int, int, str], None] | None = None) -> Campaign:
    """Run a program once per configuration and repetition, measuring time, energy and the
    regions it marks (``phasekit campaign run``; Silva 2024, PaScal Analyzer):
    :func:`phasekit.record.runner.run_campaign`.

    Runs are appended to ``OUTPUT.partial.jsonl`` as they end (running the same campaign again
    resumes from it); at the end the campaign is written to ``output`` and that log removed.

    Parameters
    ----------
    command
        The program and its arguments; ``{input}`` is replaced by each of ``inputs``.
    output
        The campaign file: ``.json`` (ours), ``.csv`` (a tidy table) or ``.jsonl`` (the log
        itself).
    threads, cores, frequencies_ghz, inputs
        The values of each actuator (None: leave it alone): ``OMP_NUM_THREADS``, the first N
        CPUs (affinity), CPU frequencies (userspace governor), the program's inputs.
    repetitions
        Runs per configuration.
    idle_s, timeout_s
        Idle seconds between runs; seconds after which a run is stopped and recorded as failed.
    power_command, power_interval_s
        A command printing the power in watts, and how often it is sampled (default meter:
        RAPL when present).
    power_estimate_w
        No meter: (static W, per-core W) to estimate energy from wall and CPU time.
    profile_dir
        Also record a profile of each run there, one Parquet file per run.
    pascal
        Write ``output`` in PaScal Analyzer's JSON layout.
    progress
        Called as ``progress(done, total, label)`` after each run.
    """
    from phasekit.campaign import write_campaign
    from phasekit.record.runner import CampaignPlan
    from phasekit.record.runner import run_campaign as run_plan

    plan = CampaignPlan(
        command=tuple(command), threads=tuple(threads), cores=tuple(cores),
        frequencies_ghz=tuple(frequencies_ghz), inputs=tuple(inputs), repetitions=repetitions,
        idle_s=idle_s, timeout_s=timeout_s, power_command=power_command,
        power_interval_s=power_interval_s,
        power_estimate_w=None if power_estimate_w is None else tuple(power_estimate_w),  # type: ignore[arg-type]
        profile_dir=None if profile_dir is None else Path(profile_dir))
    output = Path(os.fspath(output))
    log = output if output.suffix.lower() == ".jsonl" else \
        output.with_name(output.name + ".partial.jsonl")
    campaign = run_plan(plan, log, progress=progress)
    if log != output:
        write_campaign(campaign, output, pascal=pascal)
        log.unlink()
    return campaign
