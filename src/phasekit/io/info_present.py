"""How ``phasekit info`` reads: what a profile or a trace holds, as a
:class:`~phasekit.present.Presentation` (:mod:`phasekit.present`).

A profile: the headline (its metrics, how long, how often sampled, how many samples miss a
value, and which metric lacks data for how long and where, or that every metric has data
over the whole run: :meth:`phasekit.quality.DataQuality.headline`), its facts (samples,
period, duration, start, node), one row per metric (unit, missing values, min, mean, max),
and the "Data quality" table (per metric: the share of the run with valid data, the samples
without a value, the seconds that read zero or frozen, and the spans, the longest 3 first)
with a note on the sampling gaps (:mod:`phasekit.quality`). A trace: the headline (its format, ranks, MPI calls and
duration), its facts (format, ranks, duration, MPI calls, counters, the counters it samples on
its own, and the profile ``phasekit analyze|phases`` bin it into: bins, why that bin, metrics)
and one row per MPI call (count, time in call, bytes). Both are built from what :func:`phasekit.io.api.describe`
returns, so the text and ``phasekit info --json`` say the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from phasekit.present import Presentation, View, listed, plural
from phasekit.quality import DataQuality

__all__ = ["FACT_HEADERS", "TRACE_FORMATS", "profile_headline", "profile_presentation", "span",
           "trace_headline", "trace_presentation"]

#: Headers of a table of facts (one fact a row).
FACT_HEADERS = ("property", "value")
#: How a trace format (``Trace.format``) is named in a sentence.
TRACE_FORMATS = {"paraver": "Paraver", "otf2": "OTF2"}


def span(seconds: float) -> str:
    """A duration as a person reads it: ms below a second, seconds up to 2 minutes, minutes
    up to 2 hours, then hours (``0.005`` -> ``5 ms``, ``600`` -> ``10 min``)."""
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    if seconds < 120:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def _facts(title: str, rows: list[tuple[str, str]]) -> View:
    return View(title, FACT_HEADERS, tuple(rows), numeric=(False, False), wrap=(False, True))


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


# --- profiles ----------------------------------------------------------------------------------
def profile_headline(described: Mapping[str, Any], name: str) -> str:
    """``node03.csv: 12 metrics, 10 min at 5 ms, 8793 samples with a missing value; ipc: no
    value for 175 s of 351 s (50 %), from 88 s to 263 s (counters read zero)``, or ``node03.csv:
    12 metrics, 10 min at 5 ms, every metric has data over the whole run``."""
    missing = described["n_missing"]
    gaps = (f"{plural(missing, 'sample')} with a missing value" if missing
            else "no missing value")
    quality = _quality(described)
    if quality is not None and quality.complete and not missing:
        gaps = quality.headline()
    elif quality is not None:
        gaps += f"; {quality.headline()}"
    return (f"{name}: {plural(len(described['metrics']), 'metric')}, "
            f"{span(described['duration_s'])} at {span(described['period_s'])}, {gaps}")


def _quality(described: Mapping[str, Any]) -> DataQuality | None:
    data = described.get("quality")
    return None if data is None else DataQuality.from_dict(data)


def profile_presentation(described: Mapping[str, Any], name: str | None = None
                         ) -> Presentation:
    """What a profile holds (``described``: :func:`phasekit.io.api.describe` of it; ``name``:
    its file or node, by default its node): the headline, its facts, its metrics and their
    data quality (with a note on the sampling gaps)."""
    name = name or described.get("node") or "profile"
    period = described["period_s"]
    facts = [("samples", f"{described['n_samples']} ({described['n_missing']} with a missing "
                         "value)"),
             ("period", f"{period:g} s ({1 / period:g} Hz)"),
             ("duration", f"{described['duration_s']:.6g} s"),
             ("start", str(described["start"]))]
    if described.get("node"):
        facts.append(("node", described["node"]))
    metrics = View("Metrics", ("metric", "unit", "missing", "min", "mean", "max"),
                   tuple((metric, s["unit"] or "", str(s["n_missing"]),
                          *(_number(s[k]) for k in ("min", "mean", "max")))
                         for metric, s in described["metric_stats"].items()),
                   numeric=(False, False, True, True, True, True))
    views = [_facts("Profile", facts), metrics]
    quality = _quality(described)
    if quality is not None:
        views.append(quality.view())
    return Presentation(profile_headline(described, name), tuple(views),
                        quality.notes() if quality is not None else ())


# --- traces ------------------------------------------------------------------------------------
def trace_headline(described: Mapping[str, Any], name: str) -> str:
    """``lulesh.prv: Paraver trace of 8 ranks, 856 MPI calls (148 signatures) over 567 ms``."""
    kind = TRACE_FORMATS.get(described["format"], described["format"])
    calls = (f"{described['n_calls']} MPI calls ({described['n_signatures']} signatures)"
             if described["n_calls"] else "no MPI calls")
    counters = len(described["counters"])
    return (f"{name}: {kind} trace of {plural(described['n_ranks'], 'rank')}, {calls} over "
            f"{span(described['duration_s'])}"
            + (f", {plural(counters, 'counter')}" if counters else ""))


def trace_presentation(described: Mapping[str, Any], name: str | None = None) -> Presentation:
    """What a trace holds (``described``: :func:`phasekit.io.api.describe` of it, the trace's
    summary; ``name``: its file): the headline, its facts, its MPI calls (when it has any)
    and why it says little (its explanation, when it has one)."""
    application = (f", application {described['application']}"
                   if described.get("application") is not None else "")
    threads = sorted(set(described["threads_per_rank"]))
    facts = [("format", f"{described['format']}{application}"),
             ("ranks", f"{described['n_ranks']} ({'/'.join(map(str, threads)) or 0} "
                       "thread(s) per rank)"),
             ("duration", f"{described['duration_s']:.6g} s"),
             ("MPI calls", f"{described['n_calls']} ({described['n_signatures']} signatures)"),
             ("counters", ", ".join(described["counters"]) or "none")]
    sampled, sources = described.get("sampled_counters") or [], described.get("sampled_sources")
    if sampled:
        facts.append(("sampled", f"{plural(len(sampled), 'counter')} read on their own by "
                                 f"{plural(len(sources or ()), 'task')}: {listed(sampled)}"))
    plan = described.get("profile")
    if plan:
        size, _, why = plan["bin_rule"].partition(": ")
        facts.append(("profile", f"{plural(plan['n_bins'], 'bin')} of {size} ({why}); "
                                 f"{plural(len(plan['metrics']), 'metric')}: "
                                 f"{listed(plan['metrics'], 6)}"))
    views = [_facts("Trace", facts)]
    if described["calls"]:
        views.append(View("MPI calls", ("call", "count", "time in call", "bytes"),
                          tuple((call, str(s["count"]), f"{s['time_s']:.6g} s",
                                 f"{s['bytes']:.6g}")
                                for call, s in described["calls"].items()),
                          numeric=(False, True, True, True)))
    notes = (f"note: {described['explanation']}",) if described.get("explanation") else ()
    return Presentation(trace_headline(described, name or "trace"), tuple(views), notes)
