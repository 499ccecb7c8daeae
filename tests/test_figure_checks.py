"""Every figure is checked as drawn (:mod:`figure_checks`): texts inside the figure, legends
off the data, a unit on every numeric axis. First on control figures that break each rule
(so the checks can fail), then on every result kind's ``plot()`` and on every figure the
report draws, from the results of tests/test_report.py (generated data of every kind)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from figure_checks import figure_problems
from phasekit import results
from phasekit.plot.common import figure
from test_report import build_results

#: Results that are not a phasekit result kind of their own (a campaign, what energy plot
#: saved) or are built to break the report (hostile names, an unknown kind).
NOT_PLOTTED = {"campaign", "energy_view", "evil", "mystery"}


@pytest.fixture(scope="module")
def result_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_results(tmp_path_factory.getbasetemp() / "report-results")


def test_the_checks_catch_each_broken_rule() -> None:
    fig = figure(6.0, 3.0)
    ax = fig.add_subplot()
    x = np.linspace(0.0, 1.0, 50)
    ax.plot(x, np.ones_like(x), label="a legend as wide as the data")
    ax.legend(loc="center", fontsize=30)
    ax.set_xlabel("time")  # no unit
    ax.set_ylabel("energy (J)")
    fig.text(0.9, 0.5, "a note that runs off the right edge of the figure")
    problems = figure_problems(fig)
    assert any("outside the figure" in p for p in problems), problems
    assert any(p.startswith("legend covers") for p in problems), problems
    assert any("x axis" in p and "no unit" in p for p in problems), problems
    assert not any("y axis" in p for p in problems), problems
    good = figure(6.0, 3.0)
    ax = good.add_subplot()
    ax.plot(x, x, label="line")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cores")
    assert figure_problems(good) == []


def _plotted(result_files: dict[str, Path]) -> list[tuple[str, Any]]:
    out = []
    for kind, path in result_files.items():
        if kind not in NOT_PLOTTED:
            out.append((kind, results.from_data(json.loads(path.read_text(encoding="utf-8")))))
    return out


def test_every_result_plot_passes_the_checks(result_files: dict[str, Path]) -> None:
    failures = {}
    plotted = _plotted(result_files)
    assert len(plotted) >= 9
    for kind, result in plotted:
        problems = figure_problems(result.plot())
        if problems:
            failures[kind] = problems
    assert failures == {}


def test_every_report_figure_passes_the_checks(result_files: dict[str, Path],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from phasekit.report.api import report
    from phasekit.report.svg import FigureMaker

    drawn: list[tuple[str, list[str]]] = []
    original = FigureMaker.from_figure

    def checked(self: FigureMaker, fig: Any, caption: str = "") -> Any:
        drawn.append((caption or (fig.axes[0].get_title() if fig.axes else "?"),
                       figure_problems(fig)))
        return original(self, fig, caption)

    monkeypatch.setattr(FigureMaker, "from_figure", checked)
    chosen = [p for kind, p in result_files.items() if kind not in ("evil", "mystery")]
    report(chosen, output=result_files["campaign"].parent / "checked.html")
    assert len(drawn) >= 15
    failures = [(what[:60], problems) for what, problems in drawn if problems]
    assert failures == [], "\n".join(map(str, failures))
