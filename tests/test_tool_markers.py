"""The ``needs_<tool>`` markers (tests/conftest.py): a test whose tool is not on the PATH is
skipped with the tool and its Debian package named, or fails with PHASEKIT_REQUIRE_TOOLS=1;
a test whose tool is there runs. Checked in a pytest of its own, on a PATH made for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

TESTS = """
import pytest

pytestmark = pytest.mark.needs_valgrind


@pytest.mark.needs_doxygen
def test_doxygen_and_valgrind():
    pass


def test_valgrind():
    pass
"""

OTHERS = """
import pytest


@pytest.mark.needs_doxygen
def test_doxygen():
    pass


@pytest.mark.needs_gcc
def test_gcc():
    pass
"""


def _pytest(folder: Path, require: bool) -> subprocess.CompletedProcess[str]:
    """pytest in ``folder`` with only ``folder/bin`` on the PATH."""
    # CI and BUILD_NUMBER make pytest print the short summary untruncated
    env = {k: v for k, v in os.environ.items()
           if k not in ("PHASEKIT_REQUIRE_TOOLS", "CI", "BUILD_NUMBER")}
    env["PATH"] = str(folder / "bin")
    if require:
        env["PHASEKIT_REQUIRE_TOOLS"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rsE", "-p", "no:cacheprovider",
                           str(folder)], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_a_missing_tool_skips_with_its_package_or_fails_when_required(
        tmp_path: Path, request: pytest.FixtureRequest) -> None:
    # this suite's conftest.py and markers; a bin/ with a fake doxygen
    (tmp_path / "conftest.py").write_text((HERE / "conftest.py").read_text())
    markers = "\n".join(f"    {line}" for line in request.config.getini("markers"))
    (tmp_path / "pytest.ini").write_text(f"[pytest]\naddopts = --strict-markers\n"
                                         f"markers =\n{markers}\n")
    (tmp_path / "test_valgrind.py").write_text(TESTS)
    (tmp_path / "test_others.py").write_text(OTHERS)
    fake = tmp_path / "bin" / "doxygen"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    valgrind = "needs valgrind on the PATH (Debian: apt-get install valgrind)"
    gcc = "needs gcc, cc on the PATH (Debian: apt-get install gcc libc6-dev)"

    done = _pytest(tmp_path, require=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 3 skipped" in done.stdout, done.stdout  # test_doxygen ran
    assert "SKIPPED [2] conftest.py" in done.stdout and f"{valgrind}\n" in done.stdout
    assert f"{gcc}\n" in done.stdout and "doxygen on" not in done.stdout

    done = _pytest(tmp_path, require=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed, 3 errors" in done.stdout and "skipped" not in done.stdout, done.stdout
    required = "; PHASEKIT_REQUIRE_TOOLS=1 makes a missing tool a failure"
    # one line per error in the ERRORS section, whatever the summary's width
    assert done.stdout.count(f"\n{valgrind}{required}\n") == 2, done.stdout
    assert done.stdout.count(f"\n{gcc}{required}\n") == 1, done.stdout
