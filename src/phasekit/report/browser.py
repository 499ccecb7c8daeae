"""A report opened in a real browser: headless Chromium driven over the DevTools protocol, to
measure how a report reads (its height, where the summary starts, the size of figure text)
or to take a screenshot of part of it.

It needs a Chromium or Chrome binary (Debian: ``apt-get install chromium``; or name one in
``PHASEKIT_CHROMIUM``) and ``websocket-client`` (in the ``test`` extra). The report's browser
tests and ``benchmarks/report_size.py`` use it.
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

__all__ = ["BrowserError", "HeadlessChromium", "find_chromium", "headless_chromium"]

#: Seconds to wait for the browser to start, a page to load or an answer.
TIMEOUT = 60.0
#: The candidates for the browser on the PATH, when ``PHASEKIT_CHROMIUM`` names none.
BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserError(RuntimeError):
    """The browser did not start, did not load the page, or refused a command."""


def find_chromium() -> str | None:
    """The browser to drive: ``PHASEKIT_CHROMIUM``, else the first of :data:`BINARIES` on the
    PATH; None without one."""
    named = os.environ.get("PHASEKIT_CHROMIUM")
    for name in [named] if named else BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


class HeadlessChromium:
    """One headless Chromium and one page over the DevTools protocol, its profile and log
    in ``folder``; the window ``width`` x ``height`` CSS pixels at scale 1."""

    def __init__(self, binary: str, folder: Path, *, width: int = 1280, height: int = 900,
                 timeout: float = TIMEOUT) -> None:
        import websocket  # websocket-client: the test extra

        self.size = (width, height)
        self.timeout = timeout
        profile = folder / "chromium-profile"
        profile.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "chromium.log"
        self.log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--hide-scrollbars", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--force-device-scale-factor=1", f"--window-size={width},{height}",
             "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        try:
            port = self._port(profile / "DevToolsActivePort")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                        timeout=timeout) as answer:
                page = next(t for t in json.load(answer) if t.get("type") == "page")
            self.ws = websocket.create_connection(page["webSocketDebuggerUrl"],
                                                  timeout=timeout, suppress_origin=True)
        except BaseException:
            self.close()
            raise
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _port(self, active: Path) -> int:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.flush()
                raise BrowserError(f"Chromium exited with code {self.process.returncode}: "
                                   + self.log_path.read_text(errors="replace")[-2000:])
            with contextlib.suppress(OSError, ValueError, IndexError):
                return int(active.read_text().split()[0])
            time.sleep(0.05)
        raise BrowserError(f"Chromium did not open its DevTools port in {self.timeout:g} s")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command, keep the events that arrive before its answer, return its result."""
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == mine:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def open(self, path: Path, width: int | None = None) -> None:
        """Load ``path`` in a window ``width`` pixels wide (default the browser's), wait for
        its load event, then let late events arrive."""
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width or self.size[0],
                  height=self.size[1], deviceScaleFactor=1, mobile=False)
        self.events.clear()
        self.call("Page.navigate", url=path.resolve().as_uri())
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise BrowserError(f"{path.name} did not load in {self.timeout:g} s")
            self.events.append(json.loads(self.ws.recv()))
        self.evaluate("new Promise(r => requestAnimationFrame(() => setTimeout(r, 300)))")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(str(result["exceptionDetails"]))
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
        """The URLs the page asked for."""
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, x: float, y: float, width: float, height: float) -> np.ndarray:
        """The page's pixels in a rectangle (CSS pixels from the top of the document), RGB
        in 0..1."""
        from matplotlib.image import imread

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
def headless_chromium(folder: Path, binary: str | None = None, **options: Any
                      ) -> Iterator[HeadlessChromium]:
    """A :class:`HeadlessChromium` closed on leaving; ``binary`` defaults to
    :func:`find_chromium`'s (BrowserError without one)."""
    binary = binary or find_chromium()
    if binary is None:
        raise BrowserError("no Chromium: install Debian's package (apt-get install chromium) "
                           "or name a Chromium or Chrome binary in PHASEKIT_CHROMIUM")
    browser = HeadlessChromium(binary, folder, **options)
    try:
        yield browser
    finally:
        browser.close()
