"""Helpers shared by the test modules: where the test data is, the in-process CLI runner and
input corruption."""

from __future__ import annotations

import contextlib
import importlib
import io
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from hypothesis import strategies as st

from phasekit.cli import main

#: The repository's root.
ROOT = Path(__file__).resolve().parents[1]
#: The data files the tests read (real recordings, traces and tool outputs, with provenance).
DATA = ROOT / "tests" / "data"


def analysis_module() -> ModuleType:
    """phasekit.periodicity.analyze, the module (the package's ``analyze`` is the function)."""
    return importlib.import_module("phasekit.periodicity.analyze")


def without_second_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """The periodicity analysis as it was before its second look below a long dominant
    cycle (``_inner_window_cap`` never asks for one)."""
    monkeypatch.setattr(analysis_module(), "_inner_window_cap", lambda result, options: None)


def run(*args: str | Path) -> tuple[int, str, str]:
    """Run ``phasekit ARGS`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


@st.composite
def corrupted(draw: st.DrawFn, sources: list[bytes], junk: st.SearchStrategy[bytes],
              lines: bool = False) -> bytes:
    """One of ``sources`` with 1 to 3 random corruptions: a flipped byte, a truncation, an
    insertion of ``junk``, a deletion, and with ``lines`` a dropped or duplicated line."""
    kinds = ["flip", "truncate", "insert", "delete"] + (["drop_line", "dup_line"] if lines
                                                         else [])
    data = bytearray(draw(st.sampled_from(sources)))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[at] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(junk)
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 20))]
        elif kind in ("drop_line", "dup_line"):
            rows = bytes(data).split(b"\n")
            k = draw(st.integers(0, max(len(rows) - 1, 0)))
            if kind == "drop_line":
                del rows[k:k + draw(st.integers(1, 3))]
            else:
                rows.insert(k, rows[k] if rows else b"")
            data = bytearray(b"\n".join(rows))
    return bytes(data)


def stopped_counters() -> tuple[np.ndarray, np.ndarray, float]:
    """A SPEC-like run, 351 s at 20 ms, whose counters read zero from 88 s to 263 s:
    (instructions, cycles, the period); IPC has no value there."""
    n, period = 17_578, 0.02
    t = np.arange(n) * period
    cycles = 1e7 + 1e5 * np.cos(t)
    instructions = cycles * (1 + 0.5 * np.sin(t))
    off = (t >= 88) & (t < 263)
    cycles[off] = instructions[off] = 0.0
    return instructions, cycles, period
