"""``phasekit info``, ``sources`` and ``campaign run|import`` print what the library presents:
a headline, then the tables, then the notes (:mod:`phasekit.present`); Python gets the same
presentation."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from helpers import run, stopped_counters
from phasekit.campaign import Campaign, Run, write_campaign
from phasekit.io.api import describe, present_info, read_trace
from phasekit.io.info_present import span, trace_presentation
from phasekit.profile import Profile
from phasekit.record.api import present_sources, sources_paragraphs

DATA = Path(__file__).parent / "data"
CLI = Path(__file__).resolve().parents[1] / "src" / "phasekit" / "cli"


def _lines(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if line.strip()]


# --- info: profiles ------------------------------------------------------------------------------
@pytest.fixture()
def gappy() -> Profile:
    """2 metrics, 400 samples at 5 ms, 3 of them missing a value of ``b``."""
    values = np.column_stack([np.arange(400.0), np.ones(400)])
    values[[10, 20, 30], 1] = np.nan
    return Profile(values, period=0.005, metrics=["a", "b"], units={"a": "B"}, node="node03")


def test_span_reads_as_a_person_does() -> None:
    assert [span(s) for s in (0.005, 1.0, 300.0, 11723.0)] == ["5 ms", "1 s", "5 min", "3.26 h"]


def test_profile_presentation_says_what_describe_says(gappy: Profile) -> None:
    shown = present_info(gappy, "node03.csv")
    # the headline goes on to say which metric lacks data, for how long and where (data quality)
    assert shown.headline == ("node03.csv: 2 metrics, 2 s at 5 ms, 3 samples with a missing "
                              "value; b: no value for 15 ms of 2 s (0.75 %), in 3 spans, the "
                              "longest from 50 ms to 55 ms")
    facts, metrics, _ = shown.views  # then the "Data quality" table
    assert dict(facts.rows) == {"samples": "400 (3 with a missing value)",
                                "period": "0.005 s (200 Hz)", "duration": "2 s",
                                "start": "0.0", "node": "node03"}
    stats = describe(gappy)["metric_stats"]
    assert metrics.headers == ("metric", "unit", "missing", "min", "mean", "max")
    assert metrics.rows == (("a", "B", "0", "0", "199.5", "399"), ("b", "", "3", "1", "1", "1"))
    assert [int(r[2]) for r in metrics.rows] == [s["n_missing"] for s in stats.values()]
    assert present_info(gappy).headline.startswith("node03: ")  # named by its node


def test_cli_info_prints_the_headline_then_every_fact(gappy: Profile, tmp_path: Path) -> None:
    from phasekit.io import write_profile

    path = tmp_path / "node03.csv"
    write_profile(gappy, path)
    code, out, err = run("info", path)
    assert code == 0, err
    lines = _lines(out)
    assert lines[0].startswith(f"{path}: 2 metrics, 2 s at 5 ms, 3 samples with a missing "
                               "value; b: no value")  # and where (data quality)
    for fact in ("samples    400 (3 with a missing value)", "period     0.005 s (200 Hz)",
                 "duration   2 s", "node       node03"):
        assert fact in lines
    assert lines.index("Profile") < lines.index("Metrics")
    assert any(line.split() == ["b", "3", "1", "1", "1"] for line in lines)


# --- info: traces --------------------------------------------------------------------------------
def test_trace_presentation_says_what_the_summary_says() -> None:
    trace = read_trace(DATA / "paraver" / "lulesh_7+1_chop8.prv.gz")
    shown = present_info(trace, "lulesh.prv")
    assert shown.headline == ("lulesh.prv: Paraver trace of 8 ranks, 856 MPI calls "
                              "(148 signatures) over 567 ms, 4 counters")
    facts, calls = shown.views
    assert dict(facts.rows)["ranks"] == "8 (1 thread(s) per rank)"
    assert dict(facts.rows)["format"] == "paraver, application 1"
    summary = trace.summary()
    assert [(r[0], int(r[1])) for r in calls.rows] == [(k, v["count"])
                                                      for k, v in summary["calls"].items()]
    assert shown.notes == ()


def test_a_trace_without_calls_says_why_in_a_note() -> None:
    described = {"format": "otf2", "application": None, "n_ranks": 2, "threads_per_rank": [],
                 "duration_s": 0.0, "n_calls": 0, "n_signatures": 0, "counters": [],
                 "calls": {}, "explanation": "no MPI calls in this trace"}
    shown = trace_presentation(described, "t.otf2")
    assert shown.headline == "t.otf2: OTF2 trace of 2 ranks, no MPI calls over 0 ms"
    assert [v.title for v in shown.views] == ["Trace"]
    assert dict(shown.views[0].rows)["counters"] == "none"
    assert shown.notes == ("note: no MPI calls in this trace",)


def test_cli_info_on_a_trace_prints_the_headline_first() -> None:
    trace = DATA / "paraver" / "lulesh_7+1_chop8.prv.gz"
    code, out, _ = run("info", trace)
    assert code == 0
    lines = _lines(out)
    assert lines[0].startswith(f"{trace}: Paraver trace of 8 ranks")
    assert "MPI calls   856 (148 signatures)" in lines and "MPI calls" in lines


# --- sources -------------------------------------------------------------------------------------
LISTING = [
    {"name": "hw", "available": False, "reason": "no PMU", "metrics": [],
     "unavailable_metrics": {"cycles": "no PMU"}, "command_metrics": []},
    {"name": "proc", "available": True, "reason": None,
     "metrics": [{"name": "cpu_user_s"}, {"name": "mem_used_bytes"}],
     "unavailable_metrics": {"psi": "no /proc/pressure"},
     "command_metrics": [{"name": "cmd_rss_bytes"}]},
]


def test_sources_presentation_and_its_paragraphs() -> None:
    shown = present_sources(LISTING)
    assert shown.headline == ("1 of 2 recording sources can run here (proc): 2 metrics, 1 more "
                              "with a command; hw cannot")
    (table,) = shown.views
    assert table.rows == (
        ("hw", "no", "-", "no PMU\nunavailable: cycles"),
        ("proc", "yes", "cpu_user_s, mem_used_bytes\nwith a command: cmd_rss_bytes",
         "psi: no /proc/pressure"))
    assert shown.notes[0].startswith("Command sources (phasekit record --sensor")
    text = sources_paragraphs(shown, 100)
    assert text.splitlines()[:13] == [
        shown.headline, "", "Recording sources on this machine", "",
        "hw: not available", "  metrics: -", "  reason: no PMU", "  unavailable: cycles",
        "proc: available", "  metrics: cpu_user_s, mem_used_bytes",
        "  with a command: cmd_rss_bytes", "  note: psi: no /proc/pressure", ""]
    assert max(len(line) for line in sources_paragraphs(shown, 40).splitlines()) <= 40


def test_no_source_available_is_said_first() -> None:
    shown = present_sources(LISTING[:1])
    assert shown.headline == "none of the 1 recording source can run here: hw"


# --- campaigns -----------------------------------------------------------------------------------
@pytest.fixture()
def campaign() -> Campaign:
    runs = [Run(threads=t, input=i, status="ok", time_s=2.0 / t, energy_j=10.0 / t,
                regions={"solve": ((0.0, 1.0 / t),)}) for t in (1, 2) for i in ("s", "l")]
    runs.append(Run(threads=4, input="l", status="failed", reason="exit code 3", time_s=0.5))
    return Campaign(runs=tuple(runs), program="./app {input}", inputs=("s", "l"),
                    meta={"energy": "energy from RAPL (package domains)"})


def test_campaign_presentation(campaign: Campaign) -> None:
    shown = campaign.present("c.json")
    assert shown.headline == ("c.json: 5 runs of ./app {input}, 1 failed, over 5 "
                              "configurations (threads 1-4, inputs s, l); energy from RAPL")
    (table,) = shown.views
    assert table.title == "c.json: 5 runs"
    assert table.headers == ("threads", "input", "repetition", "status", "time_s", "energy_j",
                             "power_w", "region:solve")
    assert table.rows[0] == ("1", "s", "1", "ok", "2", "10", "5", "1")
    assert table.rows[-1] == ("4", "l", "1", "failed", "0.5", "-", "-", "-")
    assert shown.notes == ("note: energy from RAPL (package domains)",
                           "1 run(s) failed; their reasons are in the file")
    assert campaign.present().views[0].title == "Campaign: 5 runs of ./app {input}"


def test_cli_campaign_import_prints_the_presentation(campaign: Campaign,
                                                     tmp_path: Path) -> None:
    source = tmp_path / "c.json"
    write_campaign(campaign, source)
    code, out, err = run("campaign", "import", source, "-o", tmp_path / "copy.json")
    assert code == 0, err
    lines = _lines(out)
    assert lines[0] == campaign.present("c.json").headline
    assert lines[1] == "c.json: 5 runs"
    assert lines[-3:] == ["note: energy from RAPL (package domains)",
                          "1 run(s) failed; their reasons are in the file",
                          f"wrote campaign: {tmp_path / 'copy.json'}"]
    code, out, _ = run("campaign", "import", source, "--json")
    assert json.loads(out) == campaign.to_dict()


# --- the commands build no table themselves ------------------------------------------------------
@pytest.mark.parametrize("command", ["info", "sources", "campaign"])
def test_the_command_builds_no_table(command: str) -> None:
    tree = ast.parse((CLI / f"{command}.py").read_text(encoding="utf-8"))
    imported = {alias.name if isinstance(node, ast.Import) else f"{node.module}"
                for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                for alias in node.names}
    assert not {name for name in imported if name.startswith("rich")}, imported


def test_a_presentation_shows_itself_in_a_notebook() -> None:
    """Jupyter displays a Presentation by itself: the headline, each table, the notes; and
    print() gives the same words as text."""
    from phasekit.present import Presentation, View

    shown = Presentation("3 phases <of 2 kinds>", (View("Phases", ("#", "start (s)"),
                                                         (("1", "0"), ("2", "5"))),),
                         ("note: a & b",))
    page = shown._repr_html_()
    assert page.index("3 phases &lt;of 2 kinds&gt;") < page.index("<caption>Phases</caption>")
    assert '<td style="text-align:left">2</td>' in page and "<i>note: a &amp; b</i>" in page
    assert str(shown) == shown.to_text() and str(shown).startswith("3 phases <of 2 kinds>")


# --- info: data quality --------------------------------------------------------------------------
@pytest.fixture()
def stopped() -> Profile:
    """351 s at 20 ms whose counters read zero from 88 s to 263 s (IPC has no value there),
    beside a DRAM counter measured throughout."""
    instructions, cycles, period = stopped_counters()
    t = np.arange(instructions.size) * period
    with np.errstate(invalid="ignore"):
        ipc = instructions / cycles
    dram = 1e6 + 1e4 * np.sin(t / 3)
    return Profile(np.column_stack([ipc, instructions, cycles, dram]), period=period,
                   metrics=["ipc", "instructions", "cycles", "dram_rd"])


def test_info_says_which_metric_lacks_data_and_where(stopped: Profile) -> None:
    from phasekit.quality import data_quality

    shown = present_info(stopped, "spec.csv")
    assert shown.headline == (
        "spec.csv: 4 metrics, 5.86 min at 20 ms, 8750 samples with a missing value; ipc: no "
        "value for 175 s of 352 s (50 %), from 88 s to 263 s (counters read zero); 2 more "
        "metrics lack data: instructions (50 %), cycles (50 %)")
    assert [v.title for v in shown.views] == ["Profile", "Metrics", "Data quality"]
    rows = {row[0]: row for row in shown.views[2].rows}
    assert rows["ipc"][1:3] == ("50 %", "8750 (50 %)")
    assert rows["ipc"][5] == "88 s to 263 s: no value (counters read zero)"
    assert rows["cycles"][3:] == ("175 s", "-", "88 s to 263 s: reads zero")
    assert rows["dram_rd"][1:] == ("100 %", "0", "-", "-", "-")
    assert describe(stopped)["quality"] == data_quality(stopped).to_dict()


def test_info_json_carries_the_quality(stopped: Profile, tmp_path: Path) -> None:
    from phasekit.io import write_profile

    path = tmp_path / "spec.parquet"
    write_profile(stopped, path)
    code, out, err = run("info", path, "--json")
    assert code == 0, err
    quality = json.loads(out)["quality"]
    assert quality["metrics"]["ipc"]["coverage"] == pytest.approx(0.5022, abs=1e-4)
    assert quality["metrics"]["ipc"]["spans"] == [
        {"start_s": pytest.approx(88.0), "end_s": pytest.approx(263.0), "kind": "missing",
         "cause": "counters read zero"}]
    assert quality["metrics"]["dram_rd"]["coverage"] == 1.0 and not quality["complete"]
    code, out, err = run("info", path)
    lines = _lines(out)
    assert "ipc: no value for 175 s of 352 s (50 %)" in lines[0]
    assert lines.index("Metrics") < lines.index("Data quality")
    assert any(line.split()[:2] == ["cycles", "50"] and line.endswith("88 s to 263 s: reads zero")
               for line in lines)


def test_info_on_a_fully_measured_profile_says_so() -> None:
    shown = present_info(Profile(np.column_stack([np.sin(np.arange(400.0)), np.full(400, 2.0)]),
                                 period=0.005, metrics=["a", "b"]), "full.csv")
    assert shown.headline == ("full.csv: 2 metrics, 2 s at 5 ms, every metric has data over "
                              "the whole run (b is constant)")
    assert [row[1] for row in shown.views[2].rows] == ["100 %", "100 %"]
    assert shown.views[2].rows[1][5] == "constant (2) over the whole run"
