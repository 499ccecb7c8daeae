"""phasekit.parallel: per-file work serially, on local processes and on a Dask LocalCluster;
a failing item never stops the others; the multi-file CLI through Dask."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

import helpers
from phasekit import parallel
from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io import write_profile
from phasekit.parallel import expand_inputs, map_files, worker_threads
from phasekit.results import json_close
from phasekit.synth import generate_nodes

# --- module-level tasks: local processes and Dask import them by name ------------------------


def square(item: str) -> tuple[int, int, int]:
    """The square of the number in ``item``, the thread budget the task saw and numba's
    thread count; a bad number is an InputError, ``warn`` a PhasekitWarning, ``boom`` an
    internal error."""
    import numba

    if item == "boom":
        raise RuntimeError("boom")
    if item.startswith("warn"):
        warnings.warn("resampled onto a regular grid", PhasekitWarning, stacklevel=1)
        item = item[4:]
    try:
        value = int(item)
    except ValueError:
        raise InputError(f"expected a number, got {item!r}", path=item) from None
    return value * value, worker_threads(), int(numba.get_num_threads())


def die_on_three(item: str) -> int:
    """Kills its own process on "3" (as the out-of-memory killer would)."""
    if item == "3":
        os._exit(9)
    return int(item)


def crash(item: str) -> int:
    """Crashes its own process on "segv" (as a fault in native code would)."""
    if item == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    return int(item)


# --- serial ----------------------------------------------------------------------------------
def test_serial_keeps_order_and_isolates_failures() -> None:
    outcomes = map_files(square, ["3", "x", "boom", "warn4", "5"], workers=1)
    assert [o.item for o in outcomes] == ["3", "x", "boom", "warn4", "5"]
    assert [o.value[0] if o.ok else None for o in outcomes] == [9, None, None, 16, 25]
    bad, internal = outcomes[1].failure, outcomes[2].failure
    assert bad is not None and bad.exit_code == 3 and bad.error == "InputError"
    assert bad.message.startswith("x: ") and "expected a number" in bad.message
    assert internal is not None and internal.exit_code == 1
    assert internal.message == "boom: internal error: RuntimeError: boom"
    assert "Traceback" in internal.traceback and "\n" not in internal.message
    assert outcomes[3].warnings == ("resampled onto a regular grid",)
    assert outcomes[0].warnings == ()


def test_serial_leaves_the_thread_budget_alone() -> None:
    import numba

    (outcome,) = map_files(square, ["2"], workers=1)
    assert outcome.value == (4, parallel.available_cores(), numba.get_num_threads())


def test_progress_reaches_one() -> None:
    seen: list[tuple[str, float]] = []
    handed: list[bool] = []
    map_files(square, ["1", "2", "x"], workers=1, progress=lambda s, f: seen.append((s, f)),
              started=lambda: handed.append(True))
    assert seen[0] == ("0/3 files", 0.0) and seen[-1] == ("3/3 files", 1.0)
    assert handed == []  # serially there are no workers to hand the items to
    assert [f for _, f in seen] == sorted(f for _, f in seen)


def test_bad_worker_counts() -> None:
    with pytest.raises(UsageError, match=r"workers=0: expected at least 1"):
        map_files(square, ["1"], workers=0)
    assert map_files(square, [], workers=4) == []


def assert_same_outcomes(got: list, serial: list, items: list[str]) -> None:
    """The same items in order, values, failure messages and warnings as the serial run."""
    assert [o.item for o in got] == items
    assert [o.value[0] if o.ok else None for o in got] == [
        o.value[0] if o.ok else None for o in serial]
    assert [o.failure.message if o.failure else None for o in got] == [
        o.failure.message if o.failure else None for o in serial]
    assert got[3].warnings == serial[3].warnings


# --- local processes -------------------------------------------------------------------------
@pytest.mark.slow
def test_processes_give_what_serial_gives() -> None:
    items = ["3", "x", "boom", "warn4", "5", "6"]
    serial = map_files(square, items, workers=1)
    seen: list[float | str] = []
    spread = map_files(square, items, workers=2, progress=lambda s, f: seen.append(f),
                       started=lambda: seen.append("started"))
    assert_same_outcomes(spread, serial, items)
    # each of 2 workers gets its share of the cores (at least one thread), numba included
    budget = max(1, parallel.available_cores() // 2)
    assert {o.value[1:] for o in spread if o.ok} == {(budget, budget)}
    # started once, when the items are handed out, before any of them is reported done
    assert seen[:2] == [0.0, "started"] and seen.count("started") == 1
    assert seen[-1] == 1.0 and len(seen) == len(items) + 2


@pytest.mark.slow
def test_a_dying_worker_fails_its_item_only() -> None:
    items = [str(i) for i in range(6)]
    outcomes = map_files(die_on_three, items, workers=2)
    assert [o.value for o in outcomes] == [0, 1, 2, None, 4, 5]
    failure = outcomes[3].failure
    assert failure is not None and failure.exit_code == 1
    assert failure.message.startswith("3: the worker process died")


# --- inputs ----------------------------------------------------------------------------------
def test_expand_inputs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "sub").mkdir(parents=True)
    for name in ("b.csv", "a.parquet", "notes.txt", "sub/c.csv", "C.CSV.GZ"):
        (run / name).write_text("x")
    empty = tmp_path / "empty"
    empty.mkdir()
    files, problems = expand_inputs(
        [run, str(run / "*.csv"), tmp_path / "missing.csv", empty, str(tmp_path / "zz*.csv"),
         str(run / "**" / "*.csv")], (".csv", ".csv.gz", ".parquet"))
    # the folder (its profiles, sorted, not its subfolder), the pattern adds nothing new, the
    # missing file is kept (its reader says so), the recursive pattern adds the subfolder's
    assert [str(f.relative_to(tmp_path)) for f in files] == [
        "run/C.CSV.GZ", "run/a.parquet", "run/b.csv", "missing.csv", "run/sub/c.csv"]
    assert [(Path(a).name, reason.split(" (")[0]) for a, reason in problems] == [
        ("empty", "no input in this folder"), ("zz*.csv", "no file matches this pattern")]


# --- Dask ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster():  # type: ignore[no-untyped-def]
    """A LocalCluster of 2 worker processes (1 thread, 1 GiB each), started once."""
    import distributed  # a dependency (dask[distributed]): a missing one fails, never skips

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  memory_limit="1GiB", dashboard_address=None) as local:
        yield local


@pytest.mark.slow
def test_dask_gives_what_serial_gives(cluster) -> None:  # type: ignore[no-untyped-def]
    items = ["3", "x", "boom", "warn4", "5"]
    serial = map_files(square, items, workers=1)
    seen: list[float | str] = []
    remote = map_files(square, items, scheduler=cluster.scheduler_address,
                       progress=lambda s, f: seen.append(f),
                       started=lambda: seen.append("started"))
    assert_same_outcomes(remote, serial, items)
    assert {o.value[1:] for o in remote if o.ok} == {(1, 1)}  # one thread per Dask task
    assert seen[:2] == [0.0, "started"] and seen.count("started") == 1
    assert seen[-1] == 1.0


def test_unreachable_scheduler_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", 0.5)
    with pytest.raises(UsageError, match="cannot connect to a Dask scheduler"):
        map_files(square, ["1"], scheduler="tcp://127.0.0.1:9")


def test_cli_on_dask_matches_local(cluster, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``analyze FOLDER --scheduler``: the same JSON as in this process; a bad file is one
    line on stderr naming it as given, exit code 5."""
    profiles, _ = generate_nodes("nemo", n_nodes=3, minutes=1.0, seed=4, outliers=("shape",))
    folder = tmp_path / "run"
    folder.mkdir()
    for profile in profiles:
        write_profile(profile, folder / f"{profile.node}.parquet")
    (folder / "bad.csv").write_text("timestamp_s,ipc\n0,1\n0.005,oops\n")
    code, out, err = helpers.run("analyze", folder, "--json", "--scheduler",
                                 cluster.scheduler_address)
    assert code == 5, err
    assert err.count("\n") == 1 and err.startswith(f"phasekit: error: {folder / 'bad.csv'}")
    remote = json.loads(out)
    code, out, _ = helpers.run("analyze", folder, "--json", "--workers", "1")
    local = json.loads(out)
    assert code == 5
    for key in ("nodes", "agreement", "outliers", "errors"):
        assert json_close(remote[key], local[key]), key
    assert [n["node"] for n in remote["nodes"]] == ["node00", "node01", "node02"]


def test_a_local_worker_freezes_the_collector_when_it_exits() -> None:
    """The worker initializer freezes the collector at exit, so that a pool's shutdown does
    not wait for each worker's teardown to collect the analyses' objects again."""
    code = ("import atexit, gc\n"
            "atexit.register(lambda: print(gc.get_freeze_count() > 0))\n"
            "from phasekit.parallel import _init_worker\n"
            "_init_worker(1)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == "True"


HEAP_PROBE = """
import ctypes, resource, sys
if ctypes.CDLL(None).prctl(41, 1, 0, 0, 0) != 0:  # PR_SET_THP_DISABLE: small pages only
    sys.exit(77)
import numpy as np
from phasekit.parallel import roomy_heap

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

def churn():  # an analysis' temporaries: large arrays, allocated and freed again and again
    for _ in range(100):
        a = np.ones(1 << 20)
        del a

def faults(task):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    task()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

def kept():
    with roomy_heap():
        churn()

churn()
base = rss_mib()
print(faults(churn), faults(kept), rss_mib() - base)
"""


@pytest.mark.skipif(parallel._glibc() is None or os.sysconf("SC_PAGE_SIZE") != 4096,
                    reason="glibc's mallopt on Linux, counted in 4 KiB pages")
def test_a_task_under_fixed_malloc_thresholds_reuses_its_heap() -> None:
    """Under Dask's MALLOC_TRIM_THRESHOLD_ every large array is a fresh mmap, faulted in page
    by page; within roomy_heap the heap is reused, and given back when the task ends."""
    env = dict(os.environ, MALLOC_TRIM_THRESHOLD_="65536")
    done = subprocess.run([sys.executable, "-c", HEAP_PROBE], capture_output=True, text=True,
                          env=env, check=False, timeout=120)
    if done.returncode == 77:
        pytest.skip("this kernel cannot turn transparent huge pages off for a process")
    assert done.returncode == 0, done.stderr
    fixed, roomy, grown_mib = (float(x) for x in done.stdout.split())
    assert fixed > 100 * 2000  # 100 arrays of 8 MiB, 2048 pages each
    assert roomy < fixed / 20
    assert grown_mib < 4  # the memory went back to the system after the task
    env.pop("MALLOC_TRIM_THRESHOLD_")  # dynamic thresholds: nothing to change
    done = subprocess.run([sys.executable, "-c", HEAP_PROBE], capture_output=True, text=True,
                          env=env, check=True, timeout=120)
    plain, roomy, _ = (float(x) for x in done.stdout.split())
    assert plain < 1000 and roomy < 1000


class FakeLibc:
    """Records the malloc tuning calls roomy_heap makes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad, 0))
        return 1


def test_every_task_runs_in_a_roomy_heap_restored_after_the_last(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """call() raises the thresholds once for overlapping tasks, and restores the
    environment's values (hex as glibc reads them, glibc's default for the unset one) and
    trims when the last ends; with no such variable nothing is touched."""
    fake = FakeLibc()
    monkeypatch.setattr(parallel, "_glibc", lambda: fake)
    for name in parallel.HEAP_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    assert parallel.call(square, "3").value[0] == 9
    assert fake.calls == []
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "0x10000")
    raised = [("mallopt", -3, parallel.TASK_MMAP_THRESHOLD),
              ("mallopt", -1, parallel.TASK_TRIM_THRESHOLD)]
    restored = [("mallopt", -3, 128 << 10), ("mallopt", -1, 65536), ("malloc_trim", 0, 0)]
    assert parallel.call(square, "3").value[0] == 9
    assert fake.calls == [*raised, *restored]
    fake.calls.clear()
    with parallel.roomy_heap():
        assert fake.calls == raised
        assert parallel.call(square, "x").failure is not None  # a second task, overlapping
        assert fake.calls == raised
    assert fake.calls == [*raised, *restored]


def test_a_scheduler_address_where_something_else_answers_is_one_usage_error(
        tmp_path: Path) -> None:
    """An HTTP server (a proxy, say) at the --scheduler address: its reply read as Dask's
    frames once asked for exabytes of memory (an internal error); now one line."""
    import socket
    import threading

    from phasekit.errors import UsageError
    from phasekit.many import periodicity_many

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def answer() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 64)

    threading.Thread(target=answer, daemon=True).start()
    try:
        with pytest.raises(UsageError, match=r"^scheduler='tcp://127\.0\.0\.1:\d+': "):
            periodicity_many([tmp_path / "a.csv"], scheduler=f"tcp://{listener.getsockname()[0]}"
                                                             f":{listener.getsockname()[1]}")
    finally:
        listener.close()


# --- many inputs, as a user runs them --------------------------------------------------------
#: Seconds after which a run of many files counts as hung (each takes under 15 s here).
HANG_TIMEOUT = 240


@pytest.fixture(scope="module")
def five_hundred_nodes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """500 node profiles of 6 s at 5 ms: each of 2 local workers runs more than
    MAX_TASKS_PER_CHILD of them, so each is replaced on the way."""
    folder = tmp_path_factory.mktemp("many") / "run"
    subprocess.run([sys.executable, "-m", "phasekit.cli", "synth", "nodes", "--minutes", "0.1",
                    "--nodes", "500", "--seed", "1", "-o", str(folder)], check=True,
                   capture_output=True, timeout=HANG_TIMEOUT)
    assert len(list(folder.glob("*.parquet"))) == 500 > 2 * parallel.MAX_TASKS_PER_CHILD
    return folder


def analyzed_nodes(*args: str | Path) -> list[str]:
    """``phasekit analyze ARGS --json`` in a process of its own that fails the test (rather
    than hanging it) past HANG_TIMEOUT: the names of the nodes analysed."""
    try:
        done = subprocess.run([sys.executable, "-m", "phasekit.cli", "analyze", *map(str, args),
                               "--json"], capture_output=True, text=True, timeout=HANG_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"phasekit analyze {' '.join(map(str, args))} hung ({HANG_TIMEOUT} s)")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["errors"] == []
    return [node["node"] for node in result["nodes"]]


@pytest.mark.slow
def test_five_hundred_files_on_two_workers_replace_them_without_hanging(
        five_hundred_nodes: Path) -> None:
    nodes = analyzed_nodes(five_hundred_nodes, "--workers", "2")
    assert nodes == [f"node{i:03d}" for i in range(500)]


@pytest.mark.slow
def test_five_hundred_files_on_dask_finish(cluster, five_hundred_nodes: Path) -> None:  # type: ignore[no-untyped-def]
    nodes = analyzed_nodes(five_hundred_nodes, "--scheduler", cluster.scheduler_address)
    assert nodes == [f"node{i:03d}" for i in range(500)]


SCRIPT_WITHOUT_GUARD = """
import time
import phasekit as pk
started = time.monotonic()
result = pk.periodicity_many({folder!r}, workers=2)
print(len(result.nodes), len(result.errors), round(time.monotonic() - started, 2))
"""


def test_a_plain_script_without_a_main_guard_runs_its_nodes_on_two_workers(
        tmp_path: Path) -> None:
    """Worker processes never re-run the caller's script (multiprocessing's spawn does when
    it has no ``if __name__ == "__main__":`` guard, and every worker died)."""
    profiles, _ = generate_nodes("nemo", n_nodes=4, minutes=0.5, seed=2)
    folder = tmp_path / "job"
    folder.mkdir()
    for profile in profiles:
        write_profile(profile, folder / f"{profile.node}.parquet")
    script = tmp_path / "plain.py"
    script.write_text(SCRIPT_WITHOUT_GUARD.format(folder=str(folder)))
    serial = map_files(square, ["2"], workers=1)[0].value
    assert serial is not None
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    nodes, errors, seconds = done.stdout.split()
    assert (int(nodes), int(errors)) == (4, 0)
    assert float(seconds) < 10


def test_a_function_of_the_script_itself_is_refused_at_once_with_the_fix() -> None:
    code = ("from phasekit.parallel import map_files\n"
            "def twice(x):\n    return 2 * x\n"
            "try:\n    map_files(twice, [1, 2], workers=2)\n"
            "except ValueError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert "twice is defined in the script being run" in done.stdout
    assert "workers=1" in done.stdout


@pytest.mark.slow
def test_a_worker_killed_by_a_signal_is_said_so_not_blamed_on_memory() -> None:
    items = ["1", "segv", "2"]
    outcomes = map_files(crash, items, workers=2)
    assert [o.value for o in outcomes] == [1, None, 2]
    failure = outcomes[1].failure
    assert failure is not None
    assert "killed by SIGSEGV" in failure.message and "memory" not in failure.message


def test_more_workers_than_cores_are_capped_with_a_note(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    with pytest.warns(PhasekitWarning, match="8 workers asked for, but this process may use 2"):
        outcomes = map_files(square, ["1", "2", "3", "4"], workers=8)
    assert [o.value[0] for o in outcomes] == [1, 4, 9, 16]
    assert {o.value[1] for o in outcomes} == {1}  # 2 workers of one core each, not 8


def test_an_item_that_does_not_pickle_is_its_own_failure_not_a_shorter_list() -> None:
    items: list = ["1", threading.Lock(), "3"]
    outcomes = map_files(square, items, workers=2)
    assert len(outcomes) == 3 and [o.item for o in outcomes] == items
    assert outcomes[0].value[0] == 1 and outcomes[2].value[0] == 9
    failure = outcomes[1].failure
    assert failure is not None and "pickle" in failure.message


@pytest.mark.slow
def test_a_wrong_parameter_is_the_callers_error_once_in_its_own_words(tmp_path: Path) -> None:
    """A usage error about a parameter is the same for every file: raised once, as Python
    spells it, and on the command line as the option."""
    import phasekit as pk

    profiles, _ = generate_nodes("nemo", n_nodes=2, minutes=0.2, seed=3)
    for profile in profiles:
        write_profile(profile, tmp_path / f"{profile.node}.parquet")
    with pytest.raises(UsageError, match=r"^threshold=-1.0: expected a positive number"):
        pk.phases_many(tmp_path, method="ev", threshold=-1.0, workers=2)
    code, out, err = helpers.run("phases", tmp_path, "--method", "ev", "--threshold", "-1",
                                 "--workers", "2")
    assert code == 2 and out == ""
    assert err == "phasekit: error: --threshold -1: expected a positive number\n"
