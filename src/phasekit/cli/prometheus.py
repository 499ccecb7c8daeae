"""``prometheus://HOST:PORT`` as the input of ``analyze``, ``phases`` and ``info``.

The options below are shared by the three verbs. :func:`expand` fetches the nodes' profiles
and writes each into a temporary folder as ``NODE.parquet``
(:func:`phasekit.io.api.prometheus_files`), and hands the verb those files, so that one node takes the single-profile
path and several take the many-node one (local workers or ``--scheduler``, the agreement and
outlier report) with nothing else to change. Results and messages name each node by its
server and label (``http://host:9090 instance="node1:9100"``), not by that file.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from phasekit.cli.common import progress_reporter
from phasekit.errors import UsageError
from phasekit.io.api import prometheus_url

QueryOption = Annotated[list[str] | None, typer.Option(
    "--query", "-q", metavar="[NAME=]PROMQL", show_default=False,
    help="With prometheus://HOST:PORT: a PromQL range query, one series per node (aggregate "
         "with sum by (instance) (...)); repeat for several metrics. Counters are read as "
         "stored: ask for rate(...) in PromQL.")]
StartOption = Annotated[str | None, typer.Option(
    "--start", metavar="TIME", show_default=False,
    help="With prometheus://: start of the range (unix seconds, ISO-8601, now-1h).")]
EndOption = Annotated[str, typer.Option(
    "--end", metavar="TIME", help="With prometheus://: end of the range.")]
StepOption = Annotated[str, typer.Option(
    "--step", metavar="DURATION", help="With prometheus://: the sampling period (5s, 1m).")]
LabelOption = Annotated[str, typer.Option(
    "--label", metavar="NAME", help="With prometheus://: the label naming the node.")]


def url_of(path: Path) -> str | None:
    """The Prometheus URL a command-line argument names (the CLI's Path turned ``://`` into
    ``:/``), or None."""
    return prometheus_url(str(path))


def expand(inputs: Sequence[Path], *, query: Sequence[str] | None, start: str | None,
           end: str, step: str, label: str, quiet: bool) -> list[Path]:
    """``inputs`` as files: a Prometheus URL becomes one Parquet file per node (in a folder
    removed when the command ends); files are returned as they are."""
    urls = [u for u in map(url_of, inputs) if u is not None]
    if not urls:
        if query:
            raise UsageError("--query applies to a prometheus://HOST:PORT input")
        return list(inputs)
    if len(inputs) != 1:
        raise UsageError("prometheus://HOST:PORT: give it alone (its nodes are the inputs)")
    if not query:
        raise UsageError(f"{urls[0]}: give the series with --query [NAME=]PROMQL")
    if start is None:
        raise UsageError(f"{urls[0]}: give the range's --start (and --end, default now)")
    from phasekit.io.api import prometheus_files
    from phasekit.many import show_file_as

    folder = Path(tempfile.mkdtemp(prefix="phasekit-prometheus-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    with progress_reporter(not quiet, f"reading {urls[0]}") as progress:
        files = prometheus_files(urls[0], query, folder, start=start, end=end, step=step,
                                 label=label,
                                 progress=None if progress is None
                                 else (lambda f: progress("range queries", f)))
    for path, name in files:
        show_file_as(path, name)
    return [path for path, _ in files]
