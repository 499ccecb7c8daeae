"""The Table II view of a periodicity analysis (Phase-TA, section IV-B), as data.

:func:`profile_row` is the seed's row for one profile (T_exe, #rp(#i)[#pa], %period) and
:func:`pattern_rows` one row per representative pattern, largest coverage first; numbers
as they are (fractions for coverage). ``PeriodicityResult.summary()`` and the command line's
tables (which format them, :data:`PATTERN_HEADERS`) are built from these.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PATTERN_HEADERS", "PROFILE_HEADERS", "pattern_rows", "profile_row"]

#: Column of :func:`pattern_rows` -> its header in the seed's notation (the CLI's table).
PATTERN_HEADERS = {"pattern": "#", "period_s": "period (s)", "length": "length",
                   "instances": "#i", "regions": "regions", "mean_consecutive": "[#pa]",
                   "coverage": "%period", "wgss": "WGSS", "dba_iterations": "DBA it."}
#: Column of :func:`profile_row` -> its meaning in the seed's Table II.
PROFILE_HEADERS = {"duration_s": "T_exe (s)", "patterns": "#rp", "instances": "#i",
                   "mean_consecutive": "[#pa]", "coverage": "%period"}


def profile_row(result: Any) -> dict[str, Any]:
    """The seed's Table II row of one analyzed profile: T_exe (s), the number of patterns
    #rp, of instances #i, the mean consecutive instances [#pa] and %period (a fraction)."""
    return {"duration_s": result.duration_s, "patterns": len(result.patterns),
            "instances": result.n_instances, "mean_consecutive": result.mean_consecutive,
            "coverage": result.coverage}


def pattern_rows(result: Any) -> list[dict[str, Any]]:
    """One row per representative pattern (1-based ``pattern``), largest coverage first:
    period (s), length (samples), instances, periodic regions, mean consecutive instances,
    coverage (a fraction), WGSS and DBA iterations."""
    return [{"pattern": i, "period_s": p.period_s, "length": p.length,
             "instances": p.n_instances, "regions": p.n_regions,
             "mean_consecutive": p.mean_consecutive, "coverage": p.coverage, "wgss": p.wgss,
             "dba_iterations": p.dba_iterations}
            for i, p in enumerate(result.patterns, start=1)]
