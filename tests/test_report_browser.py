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

import base64
import contextlib
import io
import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.image import imread, imsave

from test_report import build_html

pytestmark = pytest.mark.needs_chromium

VIEWPORT = (1280, 900)
TIMEOUT = 60.0
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
    """The browser to drive: PHASEKIT_CHROMIUM, else chromium (Debian), chromium-browser or
    Chrome on the PATH (without one, tests/conftest.py has skipped or failed the test)."""
    named = os.environ.get("PHASEKIT_CHROMIUM")
    candidates = [named] if named else ["chromium", "chromium-browser", "google-chrome",
                                        "google-chrome-stable"]
    for name in candidates:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("no Chromium to test the report in: install Debian's package "
                "(apt-get install chromium; .ci/run does) or set PHASEKIT_CHROMIUM")


class Chromium:
    """One headless Chromium and one page, over the DevTools protocol."""

    def __init__(self, binary: str, folder: Path) -> None:
        try:
            import websocket
        except ImportError:
            pytest.fail("websocket-client is part of the test extra: pip install -e '.[test]'")
        profile = folder / "chromium-profile"
        profile.mkdir(parents=True, exist_ok=True)
        self.log = (folder / "chromium.log").open("wb")
        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--hide-scrollbars", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--force-device-scale-factor=1", f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}",
             "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        try:
            port = self._port(profile / "DevToolsActivePort", folder / "chromium.log")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                        timeout=TIMEOUT) as answer:
                targets = json.load(answer)
            page = next(t for t in targets if t.get("type") == "page")
            self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=TIMEOUT,
                                                  suppress_origin=True)
        except BaseException:
            self.close()
            raise
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _port(self, active: Path, log: Path) -> int:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"Chromium exited with code {self.process.returncode}: "
                            + log.read_text(errors="replace")[-2000:])
            with contextlib.suppress(OSError, ValueError, IndexError):
                return int(active.read_text().split()[0])
            time.sleep(0.05)
        pytest.fail(f"Chromium did not open its DevTools port in {TIMEOUT:g} s")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command, keep the events that arrive before its answer, return its result."""
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == mine:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def open(self, path: Path, width: int = VIEWPORT[0]) -> None:
        """Load ``path`` in a window ``width`` pixels wide and wait for its load event, then
        let late events arrive."""
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=VIEWPORT[1],
                  deviceScaleFactor=1, mobile=False)
        self.call("Page.navigate", url=path.resolve().as_uri())
        deadline = time.monotonic() + TIMEOUT
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.monotonic() < deadline, "the page did not load"
            self.events.append(json.loads(self.ws.recv()))
        self.evaluate("new Promise(r => requestAnimationFrame(() => setTimeout(r, 300)))")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries (failed loads...)."""
        out = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                described = details.get("exception", {}).get("description")
                out.append(f"exception: {described or details.get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error",
                                                                                 "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                  for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                out.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
        return out

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, x: float, y: float, width: float, height: float) -> np.ndarray:
        """The page's pixels in a rectangle (CSS pixels from the top of the document), RGB in
        0..1."""
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": x, "y": y, "width": width, "height": height, "scale": 1})
        return imread(io.BytesIO(base64.b64decode(data["data"])), format="png")[..., :3]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@contextlib.contextmanager
def chromium(folder: Path) -> Iterator[Chromium]:
    browser = Chromium(chromium_binary(), folder)
    try:
        yield browser
    finally:
        browser.close()


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


def figures_on_page(browser: Chromium) -> list[dict[str, Any]]:
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
        assert len(shown) == html.count('<figure class="fig">') >= 15
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
