"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``, which .ci/run
installs) driven over the DevTools protocol (a websocket, ``websocket-client`` from the test
extra).

The report of every kind (tests/test_report.py's results) must load with no console error, no
uncaught exception and no request but the file itself and ``data:`` URLs; every figure must be
on screen, fit the 1100-pixel column, have legible text, and its screenshot must not be blank.
A control page (a white figure, an empty frame, a console error, a request) shows that these
checks fail when they should. The tests are marked ``needs_chromium``: without Chromium they
are skipped, or fail with PHASEKIT_REQUIRE_TOOLS=1 (as in CI); install it with
``apt-get install chromium``, or name a Chromium or Chrome binary in PHASEKIT_CHROMIUM.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.image import imsave

from phasekit.report.browser import HeadlessChromium, find_chromium, headless_chromium
from test_report import build_html

pytestmark = pytest.mark.needs_chromium

VIEWPORT = (1280, 900)
#: A figure is blank when fewer than this share of its pixels are not (near) white, ...
MIN_INK = 0.02
#: ... or it has fewer distinct colours than this (quantized to 32 levels per channel), ...
MIN_COLOURS = 8
#: ... or fewer pixels in colour than this: the report's figures draw their data in colour,
#: axes and text in black and grey (an empty frame is blank).
MIN_COLOURFUL = 100
#: Smallest text in a figure, in CSS pixels as displayed.
MIN_TEXT_PX = 7.0


def chromium_binary() -> str:
    """The browser to drive (:func:`phasekit.report.browser.find_chromium`; without one,
    tests/conftest.py has skipped or failed the test)."""
    found = find_chromium()
    if found is None:
        pytest.fail("no Chromium to test the report in: install Debian's package "
                    "(apt-get install chromium; .ci/run does) or set PHASEKIT_CHROMIUM")
    return found


@contextlib.contextmanager
def chromium(folder: Path) -> Iterator[HeadlessChromium]:
    try:
        import websocket  # noqa: F401
    except ImportError:
        pytest.fail("websocket-client is part of the test extra: pip install -e '.[test]'")
    with headless_chromium(folder, chromium_binary(), width=VIEWPORT[0],
                           height=VIEWPORT[1]) as browser:
        yield browser


def blank(pixels: np.ndarray) -> bool:
    """Whether a screenshot of a figure shows no data: almost only white, a handful of
    colours, or nothing in colour (an empty frame)."""
    ink = float(np.mean(pixels.min(axis=2) < 0.9))
    colours = np.unique((pixels * 31).round().astype(np.int64) @ np.array([1, 32, 1024]))
    colourful = int(np.count_nonzero(pixels.max(axis=2) - pixels.min(axis=2) > 0.1))
    return ink < MIN_INK or colours.size < MIN_COLOURS or colourful < MIN_COLOURFUL


FIGURES_JS = """
Array.from(document.querySelectorAll('figure.fig svg')).map(svg => {
  const r = svg.getBoundingClientRect();
  const box = svg.viewBox.baseVal;
  const scale = box && box.width ? r.width / box.width : 1;
  const sizes = Array.from(svg.querySelectorAll('text')).map(
      t => parseFloat(getComputedStyle(t).fontSize) * scale).filter(s => s > 0);
  return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width,
          height: r.height, text: sizes.length ? Math.min(...sizes) : null,
          section: svg.closest('section') ? svg.closest('section').id : null};
})
"""


def figures_on_page(browser: HeadlessChromium) -> list[dict[str, Any]]:
    return browser.evaluate(FIGURES_JS)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.getbasetemp() / "report-results"
    build_html(folder)
    return folder / "report.html"


@pytest.mark.slow
def test_report_renders_in_headless_chromium(report_file: Path, tmp_path: Path) -> None:
    html = report_file.read_text(encoding="utf-8")
    with chromium(tmp_path) as browser:
        browser.open(report_file)
        assert browser.errors() == []
        own = report_file.resolve().as_uri()
        assert [u for u in browser.requests() if u != own and not u.startswith("data:")] == []
        assert browser.evaluate("document.title").startswith("all kinds <script>")
        overflow = browser.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than the window"
        browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        shown = figures_on_page(browser)
        assert len(shown) == html.count('<figure class="fig"') >= 15
        top = browser.screenshot(0, 0, *VIEWPORT)
        imsave(tmp_path / "top.png", top)  # to look at when a check fails
        assert not blank(top)
        for i, fig in enumerate(shown):
            where = f"figure {i + 1} in {fig['section']}"
            assert 300 <= fig["width"] <= 1100 and fig["height"] >= 120, (where, fig)
            assert fig["text"] is not None and fig["text"] >= MIN_TEXT_PX, (where, fig)
            pixels = browser.screenshot(fig["x"], fig["y"], fig["width"], fig["height"])
            assert pixels.shape[0] >= 100 and pixels.shape[1] >= 280, where
            assert not blank(pixels), where


def test_the_checks_catch_a_blank_figure_an_error_and_a_request(tmp_path: Path) -> None:
    control = tmp_path / "control.html"
    control.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>control</title></head><body>"
        "<figure class='fig'><svg width='800' height='300' viewBox='0 0 800 300'>"
        "<rect width='800' height='300' fill='white'/><text x='10' y='20' font-size='5'>"
        "tiny</text></svg></figure>"
        "<figure class='fig'><svg width='800' height='300' viewBox='0 0 800 300'>"
        "<path d='M60 20 V260 H780' stroke='black' stroke-width='2' fill='none'/>"
        "<text x='300' y='290' font-size='16'>an empty frame: axes, no data</text>"
        "<text x='10' y='140' font-size='16'>energy (J)</text></svg></figure>"
        "<figure class='fig'><svg width='800' height='300' viewBox='0 0 800 300'>"
        "<path d='M60 20 V260 H780' stroke='black' stroke-width='2' fill='none'/>"
        "<path d='M60 250 L200 60 L400 200 L780 40' stroke='#1f77b4' stroke-width='3' "
        "fill='none'/><text x='300' y='290' font-size='16'>a line: data</text></svg></figure>"
        "<script>console.error('control error')</script>"
        "<img src='http://127.0.0.1:9/x.png' alt=''></body></html>", encoding="utf-8")
    with chromium(tmp_path) as browser:
        browser.open(control)
        assert any("control error" in e for e in browser.errors())
        assert "http://127.0.0.1:9/x.png" in browser.requests()
        white, frame, line = figures_on_page(browser)
        assert white["text"] < MIN_TEXT_PX <= frame["text"]
        assert [blank(browser.screenshot(f["x"], f["y"], f["width"], f["height"]))
                for f in (white, frame, line)] == [True, True, False]


@pytest.mark.slow
@pytest.mark.parametrize("width", [800, 1400])
def test_the_report_reads_from_800_pixels(report_file: Path, tmp_path: Path,
                                          width: int) -> None:
    """At 800 and 1400 px: the summary of the answers starts in the first screen, the page
    does not scroll sideways, and every figure's smallest text is at least 7 px."""
    with chromium(tmp_path) as browser:
        browser.open(report_file, width=width)
        top = browser.evaluate(
            "document.querySelector('nav.summary').getBoundingClientRect().top")
        assert top < VIEWPORT[1] / 2, f"the summary starts at {top} px"
        overflow = browser.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than the window"
        browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        small = [(f["section"], round(f["text"], 2)) for f in figures_on_page(browser)
                 if f["text"] is not None and f["text"] < MIN_TEXT_PX]
        assert small == []


BESIDE_JS = """
Array.from(document.querySelectorAll('.beside')).map(pair => {
  const words = pair.querySelector('.words').getBoundingClientRect();
  const figures = pair.querySelector('.figures').getBoundingClientRect();
  return {section: pair.closest('section').id,
          beside: figures.left >= words.right && figures.top < words.bottom,
          under: figures.top >= words.bottom - 1};
})
"""


@pytest.mark.slow
def test_figures_sit_beside_their_words_on_a_wide_page(report_file: Path,
                                                      tmp_path: Path) -> None:
    """At 1400 px most results show their figures to the right of their words (a section
    with a table too wide to share the line keeps them under it); at 800 px every figure is
    under its words. Figure text stays legible either way (the test above)."""
    with chromium(tmp_path) as browser:
        browser.open(report_file, width=1400)
        wide = browser.evaluate(BESIDE_JS)
        browser.open(report_file, width=800)
        narrow = browser.evaluate(BESIDE_JS)
    assert len(wide) >= 10
    assert sum(pair["beside"] for pair in wide) >= len(wide) // 2, wide
    assert all(pair["beside"] or pair["under"] for pair in wide), wide
    assert all(pair["under"] for pair in narrow), narrow

