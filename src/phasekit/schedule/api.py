"""``pk.schedule``: the verb of ``phasekit schedule`` (the Python front door)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike

if TYPE_CHECKING:
    from phasekit.schedule.batch import Batch
    from phasekit.schedule.registry import Policy
    from phasekit.schedule.simulate import ScheduleOptions, ScheduleResult

__all__ = ["figure", "policies", "policy_names", "read_batch", "scenario", "schedule",
           "write_batch"]


def schedule(batch: Batch | PathLike, *, estimated: tuple[str, str | None] | None = None,
             progress: Callable[[str, float], None] | None = None,
             started: float | None = None, options: ScheduleOptions | None = None,
             **keywords: Any) -> ScheduleResult:
    """Plan a batch of tasks on ``servers`` x ``cores`` with each policy and compare their
    energy (``phasekit schedule``; Salinas Hilburg 2020, chapter 5):
    :func:`phasekit.schedule.simulate.schedule_batch`.

    Parameters
    ----------
    batch
        A :class:`~phasekit.schedule.batch.Batch` or its CSV file.
    estimated
        ``(time column, power column or None)`` of the batch to plan with instead of the
        true times and powers (the plans are executed on the truth).
    progress
        ``progress(stage, fraction)``, told how far the long-running policies are.
    started
        The ``time.perf_counter()`` reading ``time_limit_s`` counts from (default: the
        call).
    options
        The tuning parameters as one :class:`~phasekit.schedule.simulate.ScheduleOptions`,
        or none of them.
    **keywords
        The same parameters as keywords (never with ``options``): the fields of
        :class:`~phasekit.schedule.simulate.ScheduleOptions`: ``servers`` and ``cores``
        (the data center, required), ``policies`` (a policy name, names, or "all"), ``seed``,
        ``time_limit_s``, ``sa_iterations``, ``reserve_s`` and ``extra_reserve_s``
        (seconds of ``time_limit_s`` kept beyond ``reserve_s``, e.g. for drawing the
        figure afterwards).
    """
    from phasekit.schedule.batch import Batch, read_batch
    from phasekit.schedule.simulate import ScheduleOptions, schedule_batch

    o = ScheduleOptions.of(options, keywords, verb="schedule")
    dc = o.datacenter
    if not isinstance(batch, Batch):
        batch = read_batch(batch)
    batch.check_fits(dc.cores)
    return schedule_batch(batch, dc, policies=o.policies, estimated=estimated, seed=o.seed,
                          time_limit_s=o.time_limit_s, sa_iterations=o.sa_iterations,
                          progress=progress, started=started,
                          reserve_s=o.reserve_s + o.extra_reserve_s)


def policies() -> Mapping[str, Policy]:
    """The registered scheduling policies by name, in the order of ``policies="all"``
    (:data:`phasekit.schedule.registry.POLICIES`).

    Returns
    -------
    Mapping
        A read-only view of the registry: name -> :class:`~phasekit.schedule.registry.Policy`
        (its ``description``, ``label``, and whether it is ``long_running``).
    """
    from phasekit.schedule.registry import POLICIES

    return MappingProxyType(POLICIES)


def policy_names(asked: Sequence[str] | str) -> list[str]:
    """The registered policies that ``asked`` (a name, names, or "all") names, in the
    registry's order; UsageError naming the first unknown one
    (:func:`phasekit.schedule.registry.requested_policies`).

    Parameters
    ----------
    asked
        What :func:`schedule`'s ``policies`` takes.
    """
    from phasekit.schedule.registry import requested_policies

    return requested_policies(asked)


def read_batch(path: PathLike, *, columns: Mapping[str, str] | None = None,
               optional_columns: Mapping[str, str] | None = None) -> Batch:
    """Read a batch CSV (columns ``task, threads, time_s, power_w``):
    :func:`phasekit.schedule.batch.read_batch`.

    Parameters
    ----------
    path
        The CSV file.
    columns
        Further columns to read into ``Batch.extra``, each with its kind: ``"time"``
        (seconds > 0) or ``"power"`` (watts >= 0), e.g. ``{"est_time_s": "time"}``; a
        column the file does not have is a UsageError.
    optional_columns
        The same, read only when the file has them.
    """
    from phasekit.schedule.batch import read_batch as read

    return read(path, columns=columns, optional_columns=optional_columns)


def write_batch(batch: Batch, path: PathLike) -> Path:
    """Write a batch as CSV, atomically (what :func:`read_batch` reads):
    :func:`phasekit.schedule.batch.write_batch`.

    Parameters
    ----------
    batch
        The batch.
    path
        The CSV file to write.
    """
    from phasekit.schedule.batch import write_batch as write

    return write(batch, path)


def scenario(name: str, *, seed: int = 0) -> tuple[Batch, int, int]:
    """The batch and data centre of one of the thesis's scenarios (Salinas Hilburg 2020,
    section 5.3.2; what ``phasekit schedule synth:NAME[:SEED]`` schedules):
    :func:`phasekit.synth.batches.scenario_batch`.

    Parameters
    ----------
    name
        ``"small"`` (66 tasks on 5 x 12 cores) or ``"large"`` (900 on 50 x 12).
    seed
        The seed of the random batch.

    Returns
    -------
    tuple
        The batch (with estimated columns ``est_time_s`` and ``est_power_w``), the number
        of servers and the cores per server.
    """
    from phasekit.synth.batches import scenario_batch

    batch, data_centre = scenario_batch(name, seed=seed)
    return batch, data_centre.servers, data_centre.cores


def figure(result: ScheduleResult, path: PathLike,
           policies: tuple[str, ...] | None = None) -> Path:
    """Write the figure of a schedule (what ``phasekit schedule --plot`` writes): a Gantt
    chart per server and core, and the data-centre power, of each policy
    (:func:`phasekit.plot.schedule.plot_schedule`).

    Parameters
    ----------
    result
        What :func:`schedule` returned.
    path
        The file to write; its extension names the format (.png, .svg, .pdf, ...).
    policies
        The policies drawn (default: every one of ``result``).

    Returns
    -------
    Path
        The file written.
    """
    from phasekit.plot.schedule import plot_schedule

    return plot_schedule(result, path, policies)
