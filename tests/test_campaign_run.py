"""The campaign runner on this machine (Silva 2024 §3.1): real runs of a small program over
threads and inputs, failures recorded, resume after an interruption, frequency refused up
front on a VM, energy from an external power command."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from phasekit.campaign import Run, append_run, read_campaign
from phasekit.cli import main
from phasekit.errors import UnsupportedError, UsageError
from phasekit.record.actuators import frequency_support, usable_cpus
from phasekit.record.runner import CampaignPlan, run_campaign

PROGRAM = """
import os, sys, time, threading
from phasekit.regions import region
arg = sys.argv[1]
if arg == "bad":
    print("no such input", file=sys.stderr)
    sys.exit(3)
if arg == "slow":
    time.sleep(30)
n = int(os.environ.get("OMP_NUM_THREADS", "1"))
def work():
    with region("kernel"):
        time.sleep(0.05 if arg == "a" else 0.15)
with region("main"):
    threads = [threading.Thread(target=work) for _ in range(n)]
    [t.start() for t in threads]
    [t.join() for t in threads]
print(len(os.sched_getaffinity(0)), file=open(os.environ["AFFINITY_OUT"], "a"))
"""


@pytest.fixture()
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    monkeypatch.setenv("AFFINITY_OUT", str(tmp_path / "affinity.txt"))
    return [sys.executable, str(script), "{input}"]


@pytest.mark.slow
def test_runs_every_configuration_with_regions(program: list[str], tmp_path: Path) -> None:
    plan = CampaignPlan(tuple(program), threads=(1, 2), cores=(1,), inputs=("a", "b"),
                        repetitions=2, use_rapl=False)
    campaign = run_campaign(plan, tmp_path / "c.jsonl")
    table = campaign.table()
    assert len(table) == 8 and set(table["status"]) == {"ok"}
    assert sorted(set(zip(table["threads"], table["input"], strict=True))) == [
        (1, "a"), (1, "b"), (2, "a"), (2, "b")]
    kernel = table["region:kernel"]
    short, long = kernel[table["input"] == "a"], kernel[table["input"] == "b"]
    assert (short >= 0.05).all() and (long >= 0.15).all() and (long < 0.3).all()
    # two threads run the kernel at the same time: counted once (union), not twice
    two = table[(table["threads"] == 2) & (table["input"] == "b")]["region:kernel"]
    assert (two < 0.3).all()
    assert (table["region:main"] >= kernel).all() and (table["time_s"] >= table["region:main"]).all()
    pinned = (tmp_path / "affinity.txt").read_text().split()
    assert pinned == ["1"] * 8


def test_failures_are_recorded_and_the_campaign_goes_on(program: list[str], tmp_path: Path
                                                         ) -> None:
    # "a" must end within the limit: Python's start took up to 0.7 s under load; "slow" 30 s
    plan = CampaignPlan(tuple(program), inputs=("bad", "slow", "a"), timeout_s=5.0,
                        use_rapl=False)
    campaign = run_campaign(plan, tmp_path / "c.jsonl")
    runs = {r.input: r for r in campaign.runs}
    assert runs["bad"].status == "failed" and "exit code 3" in runs["bad"].reason
    assert "no such input" in runs["bad"].reason
    assert runs["slow"].status == "failed" and "timed out" in runs["slow"].reason
    assert runs["a"].ok


def test_resume_skips_what_is_done(program: list[str], tmp_path: Path) -> None:
    log = tmp_path / "c.jsonl"
    append_run(log, Run(threads=1, input="a", repetition=1, time_s=9.0))  # done before a crash
    plan = CampaignPlan(tuple(program), threads=(1,), inputs=("a", "b"), use_rapl=False)
    campaign = run_campaign(plan, log)
    assert len(campaign) == 2
    assert [r.time_s for r in campaign.runs if r.input == "a"] == [9.0]  # not run again


def test_energy_from_a_power_command(program: list[str], tmp_path: Path) -> None:
    meter = tmp_path / "meter.sh"
    meter.write_text("#!/bin/sh\necho 'Current Power : 42.5 Watts'\n")
    meter.chmod(0o755)
    plan = CampaignPlan(tuple(program), inputs=("b",), power_command=str(meter),
                        power_interval_s=0.05)
    run = run_campaign(plan, tmp_path / "c.jsonl").runs[0]
    assert run.energy_j == pytest.approx(42.5 * run.time_s, rel=0.2)
    assert len(run.sensors["power_w"]) >= 2


def test_refusals_come_before_any_run(program: list[str], tmp_path: Path) -> None:
    log = tmp_path / "c.jsonl"
    with pytest.raises(UsageError, match="may use"):
        run_campaign(CampaignPlan(tuple(program), cores=(len(usable_cpus()) + 1,)), log)
    if not frequency_support(usable_cpus())[0]:  # this VM: no cpufreq
        with pytest.raises(UnsupportedError, match="cpufreq"):
            run_campaign(CampaignPlan(tuple(program), frequencies_ghz=(1.2,)), log)
    assert not log.exists()


@pytest.mark.slow
def test_cli_run_writes_json_csv_and_pascal(program: list[str], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c.json"
    main(["campaign", "run", "--threads", "1,2", "--inputs", "a", "-o", str(out), "--",
          *program])
    printed = capsys.readouterr().out
    assert "wrote campaign" in printed and "energy not measured" in printed
    assert len(read_campaign(out)) == 2 and not (tmp_path / "c.json.partial.jsonl").exists()
    main(["campaign", "run", "--inputs", "a", "--pascal", "-o", str(tmp_path / "p.json"), "--",
          *program])
    capsys.readouterr()
    assert "data" in json.loads((tmp_path / "p.json").read_text())
    assert len(read_campaign(tmp_path / "p.json")) == 1
    main(["campaign", "import", str(tmp_path / "p.json"), "-o", str(tmp_path / "t.csv")])
    assert (tmp_path / "t.csv").read_text().startswith("threads,")


def test_cli_refuses_frequency_on_this_machine(program: list[str], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    if frequency_support(usable_cpus())[0]:
        pytest.skip("this machine can set frequencies")  # only on a VM without cpufreq
    with pytest.raises(SystemExit) as info:
        main(["campaign", "run", "--freqs", "1.2", "-o", str(tmp_path / "c.json"), "--",
              *program])
    assert info.value.code == 4 and "cpufreq" in capsys.readouterr().err


WORKER = """
import os, sys, time
from multiprocessing import Process
def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
work = 0.15 * float(sys.argv[1])
threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
spin(0.1 * work)
procs = [Process(target=spin, args=(0.9 * work / threads,)) for _ in range(threads)]
[p.start() for p in procs]
[p.join() for p in procs]
"""


def test_energy_estimate_from_cpu_time(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    plan = CampaignPlan((sys.executable, str(script), "{input}"), threads=(2,), inputs=("2",),
                        power_estimate_w=(10.0, 6.0))
    campaign = run_campaign(plan, tmp_path / "c.jsonl")
    run = campaign.runs[0]
    cpu = run.extra["cpu_time_s"]
    assert cpu >= 0.29  # the program's 0.3 s of work, in two processes
    assert run.energy_j == pytest.approx(10.0 * run.time_s + 6.0 * cpu, rel=0.02)
    assert "ESTIMATED" in campaign.meta["energy"]
    with pytest.raises(UsageError, match="give one energy sensor"):
        CampaignPlan(plan.command, power_estimate_w=(1.0, 1.0), power_command="meter")
    with pytest.raises(UsageError, match=r"^power_estimate_w=\(-1.0, 1.0\): expected \(static W"
                       ) as caught:
        CampaignPlan(plan.command, power_estimate_w=(-1.0, 1.0))
    assert caught.value.command_line().startswith("--power-estimate -1,1: expected")


@pytest.mark.slow
def test_this_machine_runs_fits_and_chooses_end_to_end(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """A campaign end to end: threads and inputs on this VM (frequency refused above), energy
    estimated from CPU time, the thesis's model fitted (``--model seed``, its former name),
    configurations chosen."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    out = tmp_path / "vm.json"
    main(["campaign", "run", "--threads", "1,2", "--inputs", "1,2", "--power-estimate", "10,6",
          "-o", str(out), "--", sys.executable, str(script), "{input}"])
    assert "energy ESTIMATED" in capsys.readouterr().out
    main(["energy", "fit", str(out), "--model", "seed", "--json"])
    fit = json.loads(capsys.readouterr().out)
    assert fit["n_train"] == 4 and not fit["frequency_controlled"]
    assert {"c2"} <= set(fit["fixed"]) and fit["mpe_train"] < 25
    main(["energy", "choose", str(out), "--model", "seed", "--json"])
    choice = json.loads(capsys.readouterr().out)
    assert [c["input_label"] for c in choice["choices"]] == ["1", "2"]
    for c in choice["choices"]:
        assert c["best"]["cores"] in (1, 2) and c["best"]["frequency_ghz"] is None
        assert set(c["savings_predicted"]) == {"worst", "random", "best"}
        assert c["savings_predicted"]["worst"] >= 0


FAMILY = """
import os, subprocess, sys, time
out = sys.argv[1]
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open(out + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()} {child.pid}")
os.rename(out + ".tmp", out)
time.sleep(60)
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.parametrize("profiled, terminal", [(False, False), (True, False), (True, True)])
def test_sigkill_of_the_campaign_stops_the_measured_program(tmp_path: Path, profiled: bool,
                                                             terminal: bool) -> None:
    """A campaign killed with SIGKILL cannot clean up: the program and the processes it
    started must still stop with it, not run on as orphans; also when the campaign was
    started from a terminal (a program that could read it would share its process group)."""
    script, pids = tmp_path / "family.py", tmp_path / "pids.txt"
    script.write_text(FAMILY)
    extra = ["--profile-dir", str(tmp_path / "profiles")] if profiled else []
    main_end, terminal_end = pty.openpty() if terminal else (-1, subprocess.DEVNULL)
    campaign = subprocess.Popen(
        [sys.executable, "-m", "phasekit.cli", "campaign", "run", "--timeout", "120s",
         *extra, "-o", str(tmp_path / "c.json"), "--", sys.executable, str(script),
         str(pids)], stdin=terminal_end, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    if terminal:
        os.close(terminal_end)
    family: list[int] = []
    try:
        assert wait_for(pids.exists, 30), "the program did not start"
        family = [int(p) for p in pids.read_text().split()]
        assert all(alive(p) for p in family)
        campaign.kill()
        campaign.wait(timeout=10)
        assert wait_for(lambda: not any(alive(p) for p in family), 10), \
            "the measured program outlived its campaign"
    finally:
        for pid in family:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        campaign.kill()
        campaign.wait(timeout=10)
        if terminal:
            os.close(main_end)


@pytest.mark.slow
def test_a_timed_out_run_stops_the_processes_it_started(tmp_path: Path) -> None:
    script, pids = tmp_path / "family.py", tmp_path / "pids.txt"
    script.write_text(FAMILY)
    family: list[int] = []
    try:
        plan = CampaignPlan((sys.executable, str(script), str(pids)), timeout_s=2.0,
                            use_rapl=False)
        run = run_campaign(plan, tmp_path / "c.jsonl").runs[0]
        assert run.status == "failed" and "timed out" in run.reason
        family = [int(p) for p in pids.read_text().split()]
        assert wait_for(lambda: not any(alive(p) for p in family), 5), \
            "a process of the timed-out run is still running"
    finally:
        for pid in family:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_a_program_that_leaves_a_process_behind_ends_when_it_exits(tmp_path: Path) -> None:
    """The run ends with the program, not with what it left running (which holds the
    program's standard error open), and what it left is stopped."""
    pid_file = tmp_path / "left.pid"
    plan = CampaignPlan(("sh", "-c", f"sleep 60 & echo $! > {pid_file}; exit 0"),
                        timeout_s=20.0, use_rapl=False, power_estimate_w=(10.0, 6.0))
    started = time.monotonic()
    run = run_campaign(plan, tmp_path / "c.jsonl").runs[0]
    assert run.status == "ok", run.reason
    assert time.monotonic() - started < 10  # not the 20 s timeout, nor the 60 s sleep
    left = int(pid_file.read_text())
    try:
        assert wait_for(lambda: not alive(left), 5), "the process it left is still running"
    finally:
        with contextlib.suppress(OSError):
            os.kill(left, signal.SIGKILL)


@pytest.mark.slow
def test_a_retried_run_replaces_its_failure(program: list[str], tmp_path: Path) -> None:
    log = tmp_path / "c.jsonl"
    plan = CampaignPlan(tuple(program), inputs=("a", "b"), use_rapl=False)
    program_name = shlex.join(plan.command)
    append_run(log, Run(input="a", repetition=1, time_s=9.0), program=program_name)
    append_run(log, Run(input="b", repetition=1, status="failed", reason="exit code 1"))
    campaign = run_campaign(plan, log)
    assert [(r.input, r.status) for r in campaign.runs] == [("a", "ok"), ("b", "ok")]
    assert [r.time_s for r in campaign.runs if r.input == "a"] == [9.0]  # kept, not rerun
    assert len(read_campaign(log)) == 2  # the log on disk too
    main(["campaign", "run", "--inputs", "a,b", "-o", str(tmp_path / "c.json"), "--",
          *program])  # nothing failed: nothing to drop
    assert len(read_campaign(tmp_path / "c.json")) == 2


def test_a_run_that_fails_again_keeps_only_its_last_failure(program: list[str],
                                                            tmp_path: Path) -> None:
    log = tmp_path / "c.jsonl"
    plan = CampaignPlan(tuple(program), inputs=("bad",), use_rapl=False)
    append_run(log, Run(input="bad", repetition=1, status="failed", reason="killed"),
               program=shlex.join(plan.command))
    campaign = run_campaign(plan, log)
    assert [r.reason for r in campaign.runs] == ["exit code 3: no such input"]
