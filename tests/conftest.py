"""Fixtures and hooks shared by the test modules.

- ``seed_campaign_file``: a synthetic energy campaign of known truth written to a file, once
  per session for each set of options;
- ``external_data``: real measurements without a license to copy them into the repository,
  read where they are; the test is skipped without them;
- the ``needs_<tool>`` markers (declared in pyproject.toml): a test that starts an external
  program is skipped, with the Debian package to install, when the program is not on the
  PATH, and fails instead when PHASEKIT_REQUIRE_TOOLS=1 (CI, which installs them all).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: Real measurements kept beside the repository, never in it (no license to copy them).
EXTERNAL_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: Set to 1, a missing tool fails the tests that need it instead of skipping them.
REQUIRE_TOOLS = "PHASEKIT_REQUIRE_TOOLS"


@dataclass(frozen=True)
class Tool:
    """External programs a marker stands for: every group must have one name on the PATH."""

    groups: tuple[tuple[str, ...], ...]
    package: str

    def missing(self) -> list[str]:
        return [" or ".join(names) for names in self.groups
                if not any(shutil.which(name) for name in names)]


def _chromium() -> Tool:
    """The browser test_report_browser.py drives: PHASEKIT_CHROMIUM when set."""
    named = os.environ.get("PHASEKIT_CHROMIUM")
    names = (named,) if named else ("chromium", "chromium-browser", "google-chrome",
                                    "google-chrome-stable")
    return Tool((names,), "chromium")


TOOLS: dict[str, Callable[[], Tool]] = {
    "needs_gcc": lambda: Tool((("gcc",), ("cc",)), "gcc libc6-dev"),
    "needs_doxygen": lambda: Tool((("doxygen",),), "doxygen"),
    "needs_valgrind": lambda: Tool((("valgrind",),), "valgrind"),
    "needs_chromium": _chromium,
    "needs_prometheus": lambda: Tool((("prometheus",), ("promtool",)), "prometheus"),
}


def pytest_configure(config: pytest.Config) -> None:
    declared = {line.split(":", 1)[0].strip() for line in config.getini("markers")}
    undeclared = sorted(set(TOOLS) - declared)
    if undeclared:
        raise pytest.UsageError(f"markers not declared in pyproject.toml: {undeclared}")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or fail, with PHASEKIT_REQUIRE_TOOLS=1) a test whose tools are missing, before
    its fixtures start anything."""
    missing: list[str] = []
    packages: list[str] = []
    for name, tool_of in TOOLS.items():
        if item.get_closest_marker(name) is not None:
            tool = tool_of()
            if absent := tool.missing():
                missing += absent
                packages.append(tool.package)
    if not missing:
        return
    reason = (f"needs {', '.join(missing)} on the PATH "
              f"(Debian: apt-get install {' '.join(packages)})")
    if os.environ.get(REQUIRE_TOOLS) == "1":
        pytest.fail(f"{reason}; {REQUIRE_TOOLS}=1 makes a missing tool a failure",
                    pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def seed_campaign_file(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``seed_campaign_file(**options)``: ``phasekit.synth.campaigns.seed_campaign(**options)``
    written as a campaign file (``suffix`` ``.json``, ``.jsonl`` or ``.csv``), once per session
    for each set of options. Tests read it and write their outputs elsewhere."""
    from phasekit.campaign import write_campaign
    from phasekit.synth.campaigns import seed_campaign

    written: dict[str, Path] = {}

    def make(*, suffix: str = ".json", **options: Any) -> Path:
        key = repr((suffix, sorted(options.items())))
        if key not in written:
            path = tmp_path_factory.mktemp("campaign") / f"campaign{suffix}"
            write_campaign(seed_campaign(**options).campaign, path)
            written[key] = path
        return written[key]

    return make


@pytest.fixture(scope="session")
def external_data() -> Callable[[str], Path]:
    """``external_data("energy/pascal_dev")``: that file or folder of real measurements, read
    where it is (no license to copy it into the repository); skips the test without it."""

    def find(relative: str) -> Path:
        path = EXTERNAL_DATA / relative
        if not path.exists():
            pytest.skip(f"no {path}: real measurements with no license to copy them into "
                        "the repository, read only where they are")
        return path

    return find
