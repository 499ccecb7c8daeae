"""The fuzz suite: every verb that reads a file, on several hundred bad inputs
(tests/fuzz.py), each answered with an exit code in {2, 3, 4, 5}, one line on stderr, no
traceback, no hang and no output left behind; the odd but valid ones must succeed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # several hundred commands: a minute or more

FUZZ = Path(__file__).resolve().parent / "fuzz.py"


def test_every_bad_input_gets_one_line_and_a_distinct_exit_code(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(FUZZ), str(tmp_path)], capture_output=True,
                          text=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(outcomes) >= 300
    failed = [f"{o['id']}: {'; '.join(o['problems'])} | {o['stderr']}" for o in outcomes
              if o["problems"]]
    assert not failed, f"{len(failed)} of {len(outcomes)} cases:\n" + "\n".join(failed)
    verbs = {o["id"].split("-")[0] for o in outcomes}
    assert len(verbs) >= 15
    codes = {o["code"] for o in outcomes}
    assert {0, 3} <= codes  # valid odd inputs succeed, bad data is exit 3
