"""A result's presentation: the views a person reads by default, and the papers' notation
(``detail`` views) on request, the same in the terminal, a notebook and the report."""

from __future__ import annotations

import pytest

from phasekit.present import Presentation, View

PLAIN = View("Patterns", ("pattern", "period (s)"), (("1", "0.4"),))
NOTATION = View("In Phase-TA's notation (Table II)", ("#rp(#i)[#pa]",), (("1(40)[40.0]",),),
                detail=True)
SHOWN = Presentation("repeats every 0.4 s, 40 times", (PLAIN, NOTATION), ("a note",))


def test_detail_views_are_left_out_unless_asked() -> None:
    assert SHOWN.shown().views == (PLAIN,)
    assert SHOWN.shown(detail=True) is SHOWN
    assert "#rp" not in SHOWN.shown().to_text() and "#rp" in SHOWN.to_text()


def test_the_terminal_prints_the_notation_only_with_detail(
        capsys: pytest.CaptureFixture[str]) -> None:
    from phasekit.cli.render import show

    show(SHOWN)
    plain = capsys.readouterr().out
    show(SHOWN, detail=True)
    detailed = capsys.readouterr().out
    assert "repeats every 0.4 s" in plain and "Patterns" in plain and "#rp" not in plain
    assert "#rp(#i)[#pa]" in detailed and "1(40)[40.0]" in detailed


def test_a_notebook_and_the_report_fold_the_notation_away() -> None:
    from phasekit.report.kinds import presented

    for page in (SHOWN._repr_html_(), str(presented(SHOWN))):
        folded = page[page.index("<details>"):page.index("</details>")]
        assert "#rp(#i)[#pa]" in folded and "In Phase-TA" in folded
        assert "<caption>Patterns</caption>" in page[:page.index("<details>")]
