"""The many-input forms as library functions: ``pk.periodicity_many``,
``pk.phases_many`` and ``pk.structure_many`` give what the CLI prints for several files; on a
Dask client the workers never import ``phasekit.cli``; ``fit_then_choose`` is the CLI's
``energy choose`` in one call."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import helpers
import phasekit as pk
from phasekit.errors import UsageError
from phasekit.io import write_profile
from phasekit.many import MultiPhaseResult, MultiStructureResult
from phasekit.periodicity.nodes import MultiNodeResult
from phasekit.results import MAX_REPR, json_close
from phasekit.synth import generate_nodes
from phasekit.synth.traces import SUITE, write_paraver


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three 1-minute node profiles of one run and a bad file."""
    folder = tmp_path_factory.mktemp("many") / "run"
    folder.mkdir()
    profiles, _ = generate_nodes("nemo", n_nodes=3, minutes=1.0, seed=4)
    for profile in profiles:
        write_profile(profile, folder / f"{profile.node}.parquet")
    (folder / "bad.csv").write_text("timestamp_s,ipc\n0,1\n0.005,oops\n")
    return folder


def test_periodicity_many_is_the_cli(run_folder: Path) -> None:
    result = pk.periodicity_many(run_folder, workers=1)
    assert isinstance(result, MultiNodeResult)
    assert [n.node for n in result.nodes] == ["node00", "node01", "node02"]
    assert [Path(e.file).name for e in result.errors] == ["bad.csv"]
    assert len(repr(result)) <= MAX_REPR
    code, out, _ = helpers.run("analyze", run_folder, "--json", "--workers", "1")
    assert code == 5
    assert json_close(json.loads(json.dumps(result.to_dict())), json.loads(out))
    with pytest.raises(UsageError, match="once"):
        pk.periodicity_many(run_folder, metrics=["ipc", "ipc"])


def test_nothing_analyzed_is_a_result_with_errors(tmp_path: Path) -> None:
    result = pk.periodicity_many([tmp_path / "missing.csv", str(tmp_path / "none*.csv")],
                                 workers=1)
    assert result.nodes == () and len(result.errors) == 2
    assert all(e.exit_code == 3 for e in result.errors)
    assert sorted(e.message.split(": ")[-1] for e in result.errors) == [
        "no file matches this pattern", "no such file"]


@pytest.mark.slow
def test_phases_and_structure_many_round_trip(run_folder: Path, tmp_path: Path) -> None:
    phases = pk.phases_many(run_folder, workers=1, sensors="ipc")
    assert isinstance(phases, MultiPhaseResult)
    assert [n["node"] for n in phases.nodes] == ["node00", "node01", "node02"]
    assert MultiPhaseResult.from_dict(phases.to_dict()).to_dict() == phases.to_dict()
    assert len(repr(phases)) <= MAX_REPR
    with pytest.raises(UsageError, match=r"^method='nope': expected auto or one of"):
        pk.phases_many(run_folder, method="nope")
    write_paraver(SUITE["test-2"], tmp_path / "a.prv", seed=0)
    (tmp_path / "b.prv").write_text("#Paraver broken\n")
    structure = pk.structure_many(tmp_path, workers=1)
    assert isinstance(structure, MultiStructureResult)
    assert [Path(t["file"]).name for t in structure.traces] == ["a.prv"]
    assert [Path(e.file).name for e in structure.errors] == ["b.prv"]
    assert MultiStructureResult.from_dict(structure.to_dict()).to_dict() == structure.to_dict()


@pytest.mark.slow
def test_on_a_dask_client_workers_do_not_import_the_cli(run_folder: Path) -> None:
    import sys

    import distributed

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  memory_limit="1GiB", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        remote = pk.phases_many(run_folder, client=client, sensors=["ipc"])
        loaded = client.run(lambda: sorted(m for m in sys.modules if m.startswith("phasekit")))
        assert client.status == "running"  # the caller's client is left open
    local = pk.phases_many(run_folder, workers=1, sensors=["ipc"])
    assert json_close(json.loads(json.dumps(remote.to_dict())),
                      json.loads(json.dumps(local.to_dict())))
    (modules,) = loaded.values()
    assert "phasekit.many" in modules and "phasekit.phases" in modules
    assert not [m for m in modules if m.startswith("phasekit.cli")]


def test_client_and_scheduler_are_exclusive(run_folder: Path) -> None:
    with pytest.raises(UsageError, match="not both"):
        pk.phases_many(run_folder, client=object(), scheduler="tcp://127.0.0.1:9")


def test_fit_then_choose_is_the_verb(seed_campaign_file: Callable[..., Path]) -> None:
    from phasekit.energy.fit import configurations
    from phasekit.energy.workflow import fit_then_choose
    from phasekit.synth.campaigns import seed_campaign

    campaign = seed_campaign(seed=0, cores=(1, 2, 4, 8, 16)).campaign
    path = seed_campaign_file(seed=0, cores=(1, 2, 4, 8, 16))
    run = fit_then_choose(configurations(campaign), train=12, max_cores=8, uncertainty=False)
    assert run.ensemble is None and run.suggestions() == () and run.unsure == ()
    verb = pk.energy.choose(path, train=12, max_cores=8, uncertainty=False)
    assert json_close(json.loads(json.dumps(run.result.to_dict())),
                      json.loads(json.dumps(verb.to_dict())))
    with pytest.raises(UsageError, match="tolerance"):
        fit_then_choose(configurations(campaign), tolerance=-1.0)


@pytest.mark.slow
def test_small_inputs_run_in_this_process_unless_workers_are_asked_for(
        run_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """By default, files that total less than SMALL_INPUTS_BYTES are analysed serially
    (worker processes would take longer to start than the work); larger inputs, or an
    explicit worker count, go to worker processes (``started`` is called when they do)."""
    import os

    from phasekit import many
    from phasekit.parallel import available_cores

    total = sum(f.stat().st_size for f in run_folder.iterdir())
    assert total < many.SMALL_INPUTS_BYTES

    def handed(**options: object) -> bool:
        calls: list[bool] = []
        done = many.run_files(os.fspath, run_folder, suffixes=(".parquet",),
                              started=lambda: calls.append(True), **options)
        assert len(done.done) == len(list(run_folder.glob("*.parquet")))
        return bool(calls)

    assert not handed()
    assert handed(workers=2)
    monkeypatch.setattr(many, "SMALL_INPUTS_BYTES", 1)  # every input counts as large
    assert handed() == (available_cores() > 1)
