"""``pk.schedule``: the verb of ``phasekit schedule`` (the Python front door)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from phasekit.arguments import PathLike

if TYPE_CHECKING:
    from phasekit.schedule.batch import Batch
    from phasekit.schedule.simulate import ScheduleResult

__all__ = ["schedule"]


def schedule(batch: Batch | PathLike, *, servers: int, cores: int,
             policies: Sequence[str] | str = "all", **options: Any) -> ScheduleResult:
    """Plan a batch of tasks on ``servers`` x ``cores`` with each policy and compare their
    energy (``phasekit schedule``; Salinas Hilburg 2020, chapter 5):
    :func:`phasekit.schedule.simulate.schedule_batch`.

    Parameters
    ----------
    batch
        A :class:`~phasekit.schedule.batch.Batch` or its CSV file.
    servers, cores
        The data centre: that many servers of that many cores.
    policies
        A policy name, names, or "all".
    **options
        ``seed``, ``time_limit_s``, ``estimated``, ``sa_iterations``.
    """
    from phasekit.schedule.batch import Batch, read_batch
    from phasekit.schedule.simulate import DataCenter, schedule_batch

    if not isinstance(batch, Batch):
        batch = read_batch(batch)
    dc = DataCenter(servers=servers, cores=cores)
    batch.check_fits(dc.cores)
    return schedule_batch(batch, dc, policies=policies, **options)
