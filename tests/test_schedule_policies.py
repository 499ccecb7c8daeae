"""Scheduling policies as plug-ins: a policy is one class and one registry line, and then
``schedule_batch``, ``"all"`` and ``phasekit schedule --policy`` take it like the built-in
ones; unknown names, and bad registrations, are usage errors naming the parameter."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from tests.helpers import run

from phasekit.errors import UsageError
from phasekit.schedule import (
    POLICIES,
    Batch,
    DataCenter,
    Plan,
    PlanRequest,
    Policy,
    register_policy,
    schedule_batch,
)
from phasekit.schedule.policies import sa_levels_within

THREADS = [4, 4, 4, 4]
TIMES = [10.0, 5.0, 3.0, 4.0]
POWERS = [20.0, 10.0, 30.0, 5.0]
CSV = "task,threads,time_s,power_w\n" + "".join(
    f"t{i},{c},{t:g},{p:g}\n"
    for i, (c, t, p) in enumerate(zip(THREADS, TIMES, POWERS, strict=True)))


@pytest.fixture
def registry() -> Iterator[dict[str, Policy]]:
    """The registry, restored after the test: its plug-ins stay out of the other tests."""
    saved = dict(POLICIES)
    yield POLICIES
    POLICIES.clear()
    POLICIES.update(saved)


def one_server() -> type[Policy]:
    """The plug-in of the design notes: one class and one registry line."""

    @register_policy
    class OneServer(Policy):
        name = "one-server"
        description = "every task on server 0, in submission order"
        requests: ClassVar[list[PlanRequest]] = []

        def plan(self, request: PlanRequest) -> Plan:
            self.requests.append(request)
            n = len(request.time_s)
            return Plan(policy=self.name, kind="per_server", order=np.arange(n),
                        server=np.zeros(n, dtype=np.int64))

    return OneServer


def batch() -> Batch:
    return Batch(names=tuple(f"t{i}" for i in range(len(TIMES))), threads=THREADS,
                 time_s=TIMES, power_w=POWERS)


def test_the_built_in_policies_are_registered_in_the_order_of_all() -> None:
    assert list(POLICIES)[:4] == ["rr", "heuristic", "sa", "milp"]
    assert all(p.description and "\n" not in p.description for p in POLICIES.values())


def test_a_plug_in_policy_runs_end_to_end(registry: dict[str, Policy]) -> None:
    """Every task needs a whole server: on server 0 they run one after the other, in
    submission order, and the data center pays its static power until the last ends."""
    one_server()
    dc = DataCenter(2, 4)
    result = schedule_batch(batch(), dc, policies=["one-server", "rr"], time_limit_s=5.0)
    assert [p.policy for p in result.policies] == ["rr", "one-server"]  # the registry's order
    got = result.get("one-server")
    ends = np.cumsum(TIMES)
    assert got.server.tolist() == [0] * len(TIMES)
    assert got.start_s.tolist() == pytest.approx([0.0, *ends[:-1]])
    assert got.makespan_s == pytest.approx(ends[-1])
    energy = dc.pue * (dc.servers * dc.static_w * ends[-1] + np.dot(POWERS, TIMES))
    assert got.energy_j == pytest.approx(energy)
    rr = result.baseline.energy_j
    assert got.saving_vs_rr == pytest.approx(100 * (rr - energy) / rr) and got.saving_vs_rr < 0


def test_all_runs_a_plug_in_last_with_its_share_of_the_limit(
        registry: dict[str, Policy]) -> None:
    """A plug-in that is not long-running gets the whole limit and no progress bar; "all"
    runs it after the built-in policies and hands it their plans."""
    policy = one_server()
    result = schedule_batch(batch(), DataCenter(2, 4), policies="all", time_limit_s=2.0,
                            sa_iterations=1, progress=lambda stage, fraction: None)
    assert [p.policy for p in result.policies] == ["rr", "heuristic", "sa", "milp",
                                                   "one-server"]
    (request,) = policy.requests
    assert request.budget_s == request.time_limit_s == 2.0 and request.progress is None
    assert list(request.planned) == ["rr", "heuristic", "sa", "milp"]


def test_a_long_running_plug_in_shares_the_limit_with_the_annealing(
        registry: dict[str, Policy]) -> None:
    @register_policy
    class Patient(Policy):
        name = "patient"
        description = "round robin, after thinking about it for its whole share"
        long_running = True
        budgets: ClassVar[list[float]] = []

        def plan(self, request: PlanRequest) -> Plan:
            self.budgets.append(request.budget_s)
            return Plan(policy=self.name, kind="list", order=np.arange(len(request.time_s)))

    big = Batch(names=tuple(map(str, range(40))), threads=np.ones(40, dtype=int),
                time_s=np.arange(1.0, 41.0), power_w=np.ones(40))
    result = schedule_batch(big, DataCenter(2, 4), policies=["sa", "patient"], time_limit_s=0.2,
                            reserve_s=0.0)
    assert Patient.budgets == [0.1]
    sa = result.get("sa").info
    assert sa["levels_allowed"] == sa_levels_within(0.1, 40, 40)


def test_all_leaves_out_a_policy_that_cannot_take_the_batch(
        registry: dict[str, Policy]) -> None:
    @register_policy
    class Picky(Policy):
        name = "picky"
        description = "round robin, on batches of at most 3 tasks"

        def left_out(self, n_tasks: int, dc: DataCenter) -> str | None:
            return None if n_tasks <= 3 else f"picky left out: {n_tasks} tasks (at most 3)"

        def plan(self, request: PlanRequest) -> Plan:
            return Plan(policy=self.name, kind="list", order=np.arange(len(request.time_s)))

    dc = DataCenter(2, 4)
    everything = schedule_batch(batch(), dc, policies="all", time_limit_s=2.0, sa_iterations=1)
    assert "picky" not in [p.policy for p in everything.policies]
    assert "picky left out: 4 tasks (at most 3)" in everything.notes
    named = schedule_batch(batch(), dc, policies="picky", time_limit_s=2.0)
    assert [p.policy for p in named.policies] == ["picky"]


def test_an_unknown_policy_names_the_parameter_and_the_registered_ones(
        registry: dict[str, Policy]) -> None:
    one_server()
    with pytest.raises(UsageError) as info:
        schedule_batch(batch(), DataCenter(2, 4), policies=["rr", "fifo"])
    error = info.value  # the value given (ScheduleOptions.rules), the unknown name said
    assert (error.parameter, error.value) == ("policies", ("rr", "fifo"))
    assert str(error).startswith("policies=('rr', 'fifo'): unknown policy 'fifo'; ")
    assert "rr, heuristic, sa, milp, one-server or all" in str(error)
    assert "--" not in str(error)
    with pytest.raises(UsageError) as info:
        schedule_batch(batch(), DataCenter(2, 4), policies="fifo")
    assert str(info.value).startswith("policies='fifo': unknown policy; expected one of ")


def test_registering_checks_the_name_and_the_description(
        registry: dict[str, Policy]) -> None:
    one_server()
    before = dict(POLICIES)

    def make(name: object, description: object) -> type[Policy]:
        return type("Bad", (Policy,), {"name": name, "description": description,
                                       "plan": lambda self, request: None})

    for name, description, parameter in [("one-server", "again", "name"),
                                         ("all", "every policy", "name"),
                                         ("two words", "spaces", "name"),
                                         ("terse", "", "description"),
                                         ("wordy", "two\nlines", "description")]:
        with pytest.raises(UsageError) as info:
            register_policy(make(name, description))
        assert info.value.parameter == parameter
    assert before == POLICIES


def test_the_command_line_takes_its_policies_from_the_registry(
        tmp_path: Path, registry: dict[str, Policy]) -> None:
    one_server()
    path = tmp_path / "batch.csv"
    path.write_text(CSV)
    code, out, err = run("schedule", "--help")
    assert code == 0, err
    assert "rr|heuristic|sa|milp|one-server|all" in out
    assert "one-server (every task on server 0, in submission order)" in " ".join(out.split())
    code, out, err = run("schedule", path, "--servers", "2", "--cores", "4", "--policy",
                         "one-server", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["policy"] == "one-server" and data["makespan_s"] == pytest.approx(sum(TIMES))
    code, out, err = run("schedule", path, "--servers", "2", "--cores", "4", "--policy",
                         "one-server")
    assert code == 0 and "one-server" in out, err
    code, _, err = run("schedule", path, "--servers", "2", "--cores", "4", "--policy", "fifo")
    assert code == 2 and "rr, heuristic, sa, milp, one-server or all" in err
    assert err.startswith("phasekit: error: --policy fifo: ")


def test_a_plug_in_policy_shows_by_its_label_and_says_how_its_run_went(
        tmp_path: Path, registry: dict[str, Policy]) -> None:
    """Its ``label`` names it in the headline, the table, its line after the table (from
    ``detail``) and the figure; the built-in policies' labels come from the registry too."""

    @register_policy
    class OneServer(Policy):
        name = "one-server"
        label = "all on server 0"
        description = "every task on server 0, in submission order"

        def plan(self, request: PlanRequest) -> Plan:
            n = len(request.time_s)
            return Plan(policy=self.name, kind="per_server", order=np.arange(n),
                        server=np.zeros(n, dtype=np.int64), info={"tasks": n})

        def detail(self, info: Mapping[str, Any]) -> str:
            return f"{info['tasks']} tasks in submission order"

    path = tmp_path / "batch.csv"
    path.write_text(CSV)
    code, out, err = run("schedule", path, "--servers", "2", "--cores", "4", "--policy",
                         "one-server")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("no policy saves energy against round robin for 4 tasks on "
                               "2 x 4 cores: the best, all on server 0, uses ")
    assert any(line.split()[:4] == ["all", "on", "server", "0"] for line in lines[2:])
    assert "all on server 0: 4 tasks in submission order" in lines
    result = schedule_batch(batch(), DataCenter(2, 4), policies=["heuristic", "one-server"],
                            time_limit_s=5.0)
    figure = result.plot()
    titles = [ax.get_title(loc="left") for ax in figure.axes]
    assert titles[0].startswith("LTF heuristic: ") and titles[1].startswith("all on server 0: ")
    legend = [t.get_text() for t in figure.axes[-1].get_legend().get_texts()]
    assert legend == ["LTF heuristic", "all on server 0"]
    shown = result.present("b.csv")
    assert [row[0] for row in shown.views[0].rows] == ["LTF heuristic", "all on server 0"]


def test_library_errors_name_the_parameter_and_no_command_line_option() -> None:
    """A Python caller reads ``name=value: detail``, never an option of ``phasekit
    schedule`` it did not use."""
    from phasekit.schedule import milp_schedule, simulated_annealing
    from phasekit.synth.batches import generate_batch

    b = batch()
    calls = {
        "servers": lambda: DataCenter(0, 4),
        "pue": lambda: DataCenter(2, 4, pue=0.5),
        "time_limit_s": lambda: schedule_batch(b, DataCenter(2, 4), time_limit_s=0.0),
        "init": lambda: simulated_annealing(b.threads, b.time_s, DataCenter(2, 4), init="x"),
        "formulation": lambda: milp_schedule(b.threads, b.time_s, DataCenter(2, 4),
                                             formulation="x"),
    }
    for parameter, call in calls.items():
        with pytest.raises(UsageError) as info:
            call()
        assert info.value.parameter == parameter
        assert str(info.value).startswith(f"{parameter}=") and "--" not in str(info.value)
    large = generate_batch(300, seed=0)
    with pytest.raises(UsageError, match="too large") as info:
        milp_schedule(large.threads, large.time_s, DataCenter(10, 12))
    assert "--" not in str(info.value)
