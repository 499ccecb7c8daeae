"""What each command imports (start-up is most of a command's time): a verb that
starts importing a heavy package it does not need fails here. Budgets are the heavy
packages each verb may load, measured on the inputs below; the rest must stay out."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import DATA
from phasekit.io import write_profile
from phasekit.periodicity import analyze
from phasekit.synth.periodic import generate
from phasekit.synth.power import generate_fingerprint_runs

HEAVY = ("numba", "scipy", "pandas", "pyarrow", "sklearn", "matplotlib", "dask", "distributed",
         "highspy", "tslearn", "dtaidistance",
         # the heaviest parts of scipy: 0.25 s of start-up (scipy.signal imports scipy.stats)
         "scipy.signal", "scipy.stats")
PROBE = """
import contextlib, io, json, sys
sys.argv, heavy = ["phasekit", *json.loads(sys.argv[1])], json.loads(sys.argv[2])
from phasekit.cli import entry_point
code = 0
with contextlib.redirect_stdout(io.StringIO()):
    try:
        entry_point()
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "heavy": [m for m in heavy if m in sys.modules]}))
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory,
           seed_campaign_file: Callable[..., Path]) -> dict[str, Path | str]:
    folder = tmp_path_factory.mktemp("budget")
    profile, _ = generate("nemo", minutes=1.0, seed=1)
    write_profile(profile, folder / "profile.parquet")
    (folder / "analysis.json").write_text(json.dumps(analyze(profile).to_dict()))
    runs = []
    for run in generate_fingerprint_runs(programs=2, inputs=2, seed=0):
        runs.append(folder / f"{run.meta['program']}-{run.meta['input']}.parquet")
        write_profile(run, runs[-1])
    return {"profile": folder / "profile.parquet",
            "campaign": seed_campaign_file(seed=0, frequencies=(1.2, 2.4), cores=(1, 2, 4),
                                           inputs=(1, 2)),
            "recording": DATA / "real_backtoback_1s.parquet",
            "trace": DATA / "paraver" / "lulesh_7+1_chop8.prv.gz",
            "analysis": folder / "analysis.json", "runs": " ".join(map(str, runs)),
            "out": folder}


#: verb arguments (with {name} for an input) -> the heavy packages it may import.
BUDGETS = {
    "--help": set(),
    "info {profile} --json": {"pyarrow"},
    "analyze {profile} --json": {"pyarrow"},  # the kernels are C
    "phases {recording} --json": {"numba", "scipy", "pyarrow"},
    "structure {trace} --json": set(),  # C reader, NumPy arrays: no numba, no pandas
    "energy fit {campaign} --json": set(),  # the fit and its table reader are NumPy's
    "energy choose {campaign} --json": set(),
    "energy suggest {campaign} --json": set(),
    "report {analysis} -o {out}/report.html": {"matplotlib"},
    # pandas: pyarrow imports it to write a column from a NumPy array (phasekit.io.parquet)
    "synth nemo --minutes 1 -o {out}/synth.parquet": {"pyarrow", "pandas"},
    # the scores without scikit-learn, the filters without scipy.signal (NumPy)
    "fingerprint {runs} --json": {"scipy", "pyarrow"},
}


@pytest.mark.parametrize("command", list(BUDGETS))
def test_each_verb_imports_only_its_budget(command: str, inputs: dict[str, Path | str]
                                           ) -> None:
    argv = command.format(**{k: str(v) for k, v in inputs.items()}).split()
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY)],
                          capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["code"] in (0, None), f"{command}: exit {got['code']}"
    extra = set(got["heavy"]) - BUDGETS[command]
    assert not extra, f"phasekit {command} now imports {sorted(extra)}"
