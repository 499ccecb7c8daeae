"""The HTML report (phasekit.report, phasekit report): every kind renders, strings from the
inputs are escaped, the page is self-contained, unknown or malformed results fall back, bad
input files are one-line errors, and the demo writes its report.

:func:`build_results` writes one result of every kind the report draws (real ones, from the
verbs on small synthetic inputs, plus a hand-built cross-node result, an unknown kind and
results whose names are HTML); tests/test_report_browser.py opens their report in Chromium.
"""

from __future__ import annotations

import copy
import functools
import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import helpers
from phasekit.campaign import write_campaign
from phasekit.cli.common import write_json
from phasekit.io import write_profile
from phasekit.periodicity import PeriodicityResult, analyze
from phasekit.periodicity.analyze import PREVIEW_POINTS, profile_preview
from phasekit.profile import Profile
from phasekit.report import ReportItem, build_report
from phasekit.report.html import Safe
from phasekit.synth import generate
from phasekit.synth.campaigns import seed_campaign
from phasekit.synth.power import generate_fingerprint_runs, generate_power_profiles
from phasekit.synth.traces import SUITE, write_paraver

run = helpers.run

EVIL = "<script>alert(1)</script>"
EVIL_ATTR = "\" onmouseover=\"alert(2)"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"

#: Figures (inline SVG) each kind's section must hold, at least.
FIGURES = {"periodicity": 2, "multinode_analysis": 3, "phases": 1, "structure": 1,
           "campaign": 2, "energy_view": 2, "energy_choice": 1, "energy_fit": 1, "phase_division": 1,
           "fingerprints": 1, "schedule": 1}


def _ok(*args: str | Path) -> None:
    code, _, err = run(*args)
    assert code == 0, f"phasekit {' '.join(map(str, args))}: {err}"


def multinode_result(periodicity: dict[str, Any]) -> dict[str, Any]:
    """A cross-node result by hand, in the shape of phasekit.periodicity.nodes: five nodes
    with the patterns of ``periodicity`` (one with an HTML name; node-05 an outlier), and a
    file that failed."""
    names = ["node-01", "node-02", EVIL, "node-04", "node-05"]
    nodes = []
    for i, name in enumerate(names):
        patterns = []
        for k, p in enumerate(periodicity["patterns"]):
            pattern = {key: value for key, value in p.items() if key != "instances"}
            pattern.update(period_s=p["period_s"] * (1.0 + 0.002 * i), reference_pattern=k,
                           distance=0.0 if name == "node-02" else 0.003 + 0.001 * i)
            patterns.append(pattern)
        coverage = 0.75 - 0.01 * i
        if name == "node-05":  # the outlier: little periodic, slower, another shape
            coverage = 0.12
            for pattern in patterns:
                pattern.update(period_s=pattern["period_s"] * 1.3, coverage=0.12,
                               distance=0.08)
        nodes.append({"node": name, "file": f"runs/{name}.parquet", "duration_s": 60.0,
                      "sampling_period_s": 0.005, "n_samples": 12000, "n_valid": 12000,
                      "metrics": ["ipc"], "window": 256, "coverage": coverage,
                      "n_instances": 41, "mean_consecutive": 41.0, "patterns": patterns,
                      "explanation": ""})
    return {"kind": "multinode_analysis", "version": 1, "nodes": nodes,
            "agreement": {"threshold": 0.01, "reference": "node-02", "agree": False,
                          "n_nodes": 5, "n_agree": 4, "max_distance": 0.08,
                          "patterns": [{"pattern": 0, "period_s": 1.1, "mean": 1.4,
                                        "n_nodes": 5, "n_agree": 4, "median_distance": 0.005,
                                        "max_distance": 0.08, "max_node": "node-05"}],
                          "disagreeing": ["node-05"], "explanation": ""},
            "outliers": [{"node": "node-05", "file": "runs/node-05.parquet",
                          "reasons": ["coverage", "period"],
                          "details": ["periodic share 12.0 % where the median node's is "
                                      "73.0 %", "pattern 1 lasts 1.43 s"]},
                         {"node": EVIL, "file": "x", "reasons": ["pattern"],
                          "details": [f"{EVIL} is odd"]}],
            "errors": [{"file": f"runs/{EVIL}.csv", "message": "no such file",
                        "exit_code": 3}],
            "params": {"threshold": 0.01}}


def evil_periodicity(periodicity: dict[str, Any]) -> dict[str, Any]:
    """``periodicity`` with its node, metric and unit names made of HTML and mathtext."""
    data = copy.deepcopy(periodicity)
    old = data["metrics"][0]
    new = f"{EVIL}$x^{{2$"
    data["node"] = f"{EVIL}{EVIL_ATTR}"
    data["metrics"] = [new]
    data["params"]["metrics"] = [new]
    preview = data["preview"]["profile"]
    preview["metrics"] = [new]
    preview["units"] = {new: "<b>IPC</b>"}
    data["explanation"] = ""
    assert old != new
    return data


@functools.cache
def build_results(folder: Path) -> dict[str, Path]:
    """One result file per kind (module docstring), written once per test session."""
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    profile, _ = generate("nemo", minutes=1, seed=0)
    out["periodicity"] = folder / "periodicity.json"
    write_json(out["periodicity"], analyze(profile).to_dict())
    _ok("synth", "bench_1", "--repetitions", "1", "--seed", "0", "-o", folder / "bench.parquet")
    out["phases"] = folder / "phases.json"
    _ok("phases", folder / "bench.parquet", "-o", out["phases"])
    write_paraver(SUITE["test-2"], folder / "test-2.prv")
    out["structure"] = folder / "structure.json"
    _ok("structure", folder / "test-2.prv", "-o", out["structure"])
    campaign = seed_campaign(seed=0, frequencies=(1.2, 2.2), cores=(1, 2, 4, 8),
                             inputs=(1, 2)).campaign
    out["campaign"] = folder / "campaign.json"
    write_campaign(campaign, out["campaign"])
    out["energy_view"] = folder / "view.json"
    _ok("energy", "plot", out["campaign"], "-o", out["energy_view"])
    out["energy_fit"] = folder / "fit.json"
    _ok("energy", "fit", out["campaign"], "--model", "seed", "--train", "10", "--seed", "1",
        "-o", out["energy_fit"])
    out["energy_choice"] = folder / "choice.json"
    _ok("energy", "choose", out["campaign"], "-o", out["energy_choice"])
    power, _ = generate_power_profiles(cores=(1, 2, 4), freqs_ghz=(1.2, 2.4), seed=0)
    (folder / "profiles.json").write_text(json.dumps(power.to_dict()), encoding="utf-8")
    out["phase_division"] = folder / "division.json"
    _ok("energy", "phases", folder / "profiles.json", "--max-phases", "8", "-o",
        out["phase_division"])
    runs = []
    for i, profile_run in enumerate(generate_fingerprint_runs(programs=2, inputs=2, seed=2)):
        runs.append(folder / f"run{i}.parquet")
        write_profile(profile_run, runs[-1])
    out["fingerprints"] = folder / "fingerprints.json"
    _ok("fingerprint", *runs, "-o", out["fingerprints"])
    out["schedule"] = folder / "schedule.json"
    _ok("schedule", "synth:small", "--policy", "heuristic", "-o", out["schedule"])
    periodicity = json.loads(out["periodicity"].read_text(encoding="utf-8"))
    hand = {"multinode_analysis": multinode_result(periodicity),
            "evil": evil_periodicity(periodicity),
            "mystery": {"kind": "mystery", "version": 3, "name": EVIL,
                        EVIL: "a key that is HTML", "rows": [{"a": EVIL, "b": 1.5}]}}
    for kind, data in hand.items():
        out[kind] = folder / f"{kind}.json"
        out[kind].write_text(json.dumps(data), encoding="utf-8")
    return out


@functools.cache
def build_html(folder: Path) -> str:
    """The report of every result of :func:`build_results`, written to folder/report.html."""
    files = build_results(folder)
    target = folder / "report.html"
    _ok("report", *files.values(), "-o", target, "--title", f"all kinds {EVIL}")
    return target.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_results(tmp_path_factory.getbasetemp() / "report-results")


@pytest.fixture(scope="module")
def report_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_html(tmp_path_factory.getbasetemp() / "report-results")


def sections(page: str) -> dict[str, str]:
    """Each section's HTML by the kind in its heading (the first of a kind)."""
    out: dict[str, str] = {}
    for part in page.split("<section ")[1:]:
        match = re.search(r'<span class="kind">([^<]*)</span>', part)
        assert match is not None
        out.setdefault(match.group(1), part)
    return out


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# --- every kind ------------------------------------------------------------------------------
def test_every_supported_kind_renders_with_its_figures(report_html: str,
                                                       results: dict[str, Path]) -> None:
    found = sections(report_html)
    for kind, count in FIGURES.items():
        assert kind in found, kind
        body = found[kind]
        assert body.count("<svg ") >= count, (kind, body.count("<svg "))
        assert 'class="fail"' not in body, (kind, re.findall(r'<p class="fail">(.*?)</p>', body))
        assert "No dedicated view" not in body
    assert report_html.count("<section ") == len(results)
    # what each view is for, in its words
    assert "Table II" in found["periodicity"] and "instances" in found["periodicity"]
    assert "FOR 1 TO 10 [id=0]" in found["structure"]
    assert "MPI_Barrier" in found["structure"]
    assert "Efficiency (speedup / threads)" in found["campaign"]
    # a saved view reads as the campaign it was made of: the same tables
    assert "Efficiency (speedup / threads)" in found["energy_view"]
    assert "Pareto" in found["energy_choice"] and "Phase ids" in found["phases"]
    multinode = found["multinode_analysis"]
    nodes_table, outliers_table = multinode.split("<caption>Outliers (nodes that stand out")
    nodes_table, notation = nodes_table.split("<details>", 1)  # Table II folded away
    assert "#rp(#i)[#pa]" in notation and "#rp" not in nodes_table
    assert nodes_table.count('<tr class="outlier">') == 2  # node-05 and the HTML-named node
    assert nodes_table.count("<td>coverage, period</td>") == 1  # node-05's reasons in its row
    assert outliers_table.count('<tr class="outlier">') == 2
    assert "periodic share 12.0 % where the median node" in multinode
    assert ("the patterns of 1 of 5 nodes disagree with the reference node node-02&#x27;s "
            "(further than 1%, or missing): node-05") in multinode
    assert "Agreement with the reference node node-02" in multinode
    assert "could not be analyzed" in multinode and "no such file" in multinode


def test_the_report_says_what_the_command_line_says(results: dict[str, Path]) -> None:
    """The multinode and structure sections show their result's presentation: its headline,
    its first table (every row), its notes, then its other tables in a block folded under a
    summary naming them, in that order."""
    from phasekit.periodicity.nodes import MultiNodeResult
    from phasekit.structure import StructureResult

    for kind, cls in (("multinode_analysis", MultiNodeResult), ("structure", StructureResult)):
        data = load(results[kind])
        shown = cls.from_dict(data).present()
        page = build_report([ReportItem(f"{kind}.json", data)])
        texts = [shown.headline]
        first, *rest = shown.views
        texts += [first.title, *(cell for row in first.rows for cell in row)]
        texts += list(shown.notes)
        if rest:
            texts.append("<details><summary>")
        for view in rest:
            texts += [view.title, *(cell for row in view.rows for cell in row)]
        at = 0
        for text in texts:
            wanted = text if text.startswith("<details>") else html.escape(text, quote=True)
            found = page.find(wanted, at)
            assert found >= 0, (kind, text)
            at = found + len(wanted) if text.strip() else at


def test_header_names_files_version_and_has_contents(report_html: str,
                                                     results: dict[str, Path]) -> None:
    import phasekit

    head = report_html.split("<section ")[0]
    assert f"phasekit {phasekit.__version__}" in head and "generated " in head
    assert "Summary" in head
    for path in results.values():
        assert str(path) in head
    assert f"<title>all kinds {ESCAPED}</title>" in report_html


def test_the_summary_leads_with_each_answer(results: dict[str, Path]) -> None:
    """Each result's headline (what the command line prints first) is in the summary at the
    top, linked to its section, which is named by its file; long tables are folded."""
    from phasekit.results import from_data

    items = [ReportItem(str(results[kind]), load(results[kind]))
             for kind in ("periodicity", "structure", "energy_choice")]
    page = build_report(items)
    head = page.split("<section ", 1)[0]
    for item in items:
        headline = from_data(dict(item.data)).present().headline
        assert html.escape(headline, quote=True) in head, item.kind
        assert f"({Path(item.source).name})" in head
    anchors = re.findall(r'<nav class="summary">.*?</nav>', page, re.S)[0]
    for anchor in re.findall(r'href="#([^"]+)"', anchors):
        assert f'<section id="{anchor}">' in page
    long_table = build_report([ReportItem("long.json", {"kind": "unknown", "rows": [
        {"a": i, "b": 2 * i} for i in range(40)]})])
    assert "25 more rows</summary>" in long_table


def test_periodicity_figures_show_the_profile_and_the_instances(results: dict[str, Path]
                                                                ) -> None:
    data = load(results["periodicity"])
    body = build_report([ReportItem("p.json", data)])
    # the profile line (an envelope of 2000 points) and 10 instance curves + the pattern
    figures_svg = re.findall(r"<svg .*?</svg>", body, flags=re.DOTALL)
    assert len(figures_svg) == 2
    vertices = max(p.count("L") for p in re.findall(r'<path d="([^"]*)"', figures_svg[0]))
    assert vertices > 0.9 * PREVIEW_POINTS  # a line through every preview point
    assert figures_svg[1].count("stroke: #1f77b4; stroke-opacity: 0.45") == 10
    # the representative pattern: one thick black line through its points (it was all NaN,
    # hence missing, when the pattern's arrays reached the figure unconverted)
    thick = re.findall(r'<path d="([^"]*)"[^>]*style="[^"]*stroke: #000000; stroke-width: 2\.4',
                       figures_svg[1])
    assert max((t.count("L") for t in thick), default=0) > 10  # (the legend has its own)


def test_figures_say_how_narrow_they_may_be_drawn(report_html: str) -> None:
    """A figure carries the width at which its smallest text (of a ``<text>``; a ``<tspan>``
    is styled as its text) reads at MIN_TEXT_PX; the figures beside a result's words are
    never narrower than the widest of them."""
    import math

    from phasekit.report.html import FIT, beside
    from phasekit.report.svg import MIN_TEXT_PX, narrowest

    svg = ('<svg width="648pt" viewBox="0 0 648 300"><text style="font-size: 10px">a</text>'
           '<text style="font-size: 8px">b<tspan style="font-size: 5px">c</tspan></text></svg>')
    assert narrowest(svg) == math.ceil(648 * MIN_TEXT_PX / 8) == 584
    assert narrowest('<svg viewBox="0 0 10 10"><g/></svg>') is None
    pair = beside("words", Safe(f'<figure {FIT}="500"></figure><figure {FIT}="640"></figure>'))
    assert '<div class="words">words</div><div class="figures" style="--fit: 640px">' in pair
    assert beside("words", "") == "words"
    figures = re.findall(r'<figure class="fig"( data-fit="\d+")?>', report_html)
    assert len(figures) >= 15 and all(figures)


def test_ids_in_figures_are_unique(report_html: str) -> None:
    ids = re.findall(r'\sid="([^"]+)"', report_html)
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, sorted(duplicates)[:10]
    for ref in re.findall(r'(?:href="#|url\(#)([^")]+)', report_html):
        assert ref in ids, ref


# --- escaping and self-containment ----------------------------------------------------------
def test_strings_from_inputs_are_escaped(report_html: str) -> None:
    assert EVIL not in report_html and "<script" not in report_html.lower()
    assert "<b>IPC</b>" not in report_html and "onmouseover=\"alert" not in report_html
    assert ESCAPED in report_html
    found = sections(report_html)
    for kind in ("multinode_analysis", "mystery"):
        assert ESCAPED in found[kind], kind
    evil = [s for s in report_html.split("<section ")[1:] if "&quot; onmouseover" in s]
    assert evil, "the periodicity result with HTML names"
    assert "not drawn" not in evil[0]  # a metric name with $ is not parsed as mathtext
    assert evil[0].count("<svg ") == 2


def test_report_is_self_contained(report_html: str) -> None:
    lower = report_html.lower()
    for needle in ("<script", "<link", "<iframe", "<object", "<embed", "@import", "<base"):
        assert needle not in lower, needle
    for attr, value in re.findall(r'\s((?:xlink:)?href|src|srcset|action|poster)\s*=\s*"([^"]*)"',
                                  report_html):
        assert value.startswith(("#", "data:")), (attr, value[:80])
    assert not re.search(r"url\(\s*['\"]?(?!#|data:)", report_html)
    assert not re.search(r"(src|href)\s*=\s*['\"]?\s*(https?:)?//", lower)


# --- fallbacks -------------------------------------------------------------------------------
def test_unknown_kind_is_shown_generically() -> None:
    page = build_report([ReportItem("x.json", {"kind": "mystery", "version": 2, "answer": 42,
                                               "nested": {"deep": "value"},
                                               "items": [{"a": 1}, {"a": 2}]})])
    assert "No dedicated view for this kind of result (mystery)" in page
    assert "nested.deep" in page and "value" in page and "42" in page
    assert "the result as JSON" in page


@pytest.mark.parametrize("data", [
    {"kind": "periodicity", "version": 1, "patterns": "no"},
    {"kind": "phases", "version": 1, "phases": [{"start_s": "a", "id": None}], "score": [1, "x"]},
    {"kind": "mpi-structure-result", "body": [{"loop": 7}, {"call": 99}, {"if": 3}]},
    {"kind": "multinode_analysis", "nodes": [{"node": 1, "patterns": [{"values": "bad"}]}],
     "agreement": {"m": [[1, 2], [3]]}, "outliers": [None, 3, {"x": 1}]},
    {"kind": "campaign", "version": 1, "runs": [{"config": "?"}]},
    {"kind": "energy_choice", "choices": [{"pareto": [{"time_s": "x"}], "best": 3}]},
    {"kind": "schedule", "policies": [{"policy": EVIL}]},
    {"kind": "fingerprints", "runs": [{"name": EVIL, "fingerprint": [1, 2]}]},
])
def test_malformed_results_never_fail_the_report(data: dict[str, Any]) -> None:
    page = build_report([ReportItem("bad.json", data)])
    assert "<section " in page and EVIL not in page


def test_agreement_matrices_are_drawn_node_against_node(results: dict[str, Path]) -> None:
    """A node x node matrix in the agreement data is drawn as a heatmap after the
    presentation; the hand-made result without one keeps its three figures."""
    data = multinode_result(load(results["periodicity"]))
    plain_page = build_report([ReportItem("m.json", data)])
    assert plain_page.count("<svg ") == FIGURES["multinode_analysis"]
    distance = [[abs(i - j) * 0.01 for j in range(5)] for i in range(5)]
    data["agreement"]["distance"] = distance
    page = build_report([ReportItem("m.json", data)])
    assert page.count("<svg ") == FIGURES["multinode_analysis"] + 1
    assert "Agreement: distance, node against node." in page and 'class="fail"' not in page
    assert page.index("Agreement: distance") > page.index('<p class="headline">')


def test_fingerprints_without_their_series_have_no_figure(results: dict[str, Path]) -> None:
    data = load(results["fingerprints"])
    assert FIGURES["fingerprints"] == build_report(
        [ReportItem("f.json", data)]).count("<svg ")
    for row in data["runs"]:
        row["fingerprint"] = []
    body = build_report([ReportItem("f.json", data)])
    assert '<p class="headline">' in body and "<svg " not in body
    assert 'class="fail"' not in body


def test_a_result_is_reported_as_it_is_saved(results: dict[str, Path], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A result given to report() is shown from what its file holds (a phase result's
    score and limit series, drawn under the timeline), not from its short dict."""
    import phasekit.report.api as report_api
    from phasekit.results import load as load_saved

    result = load_saved(results["phases"])
    drawn: list[ReportItem] = []
    monkeypatch.setattr(report_api, "write_report",
                        lambda output, items, **_: drawn.extend(items) or Path(output))
    report_api.report([result], tmp_path / "r.html")
    assert [item.data for item in drawn] == [result.saved_dict()]
    assert len(drawn[0].data["score"]) > 0 and "score" not in result.to_dict()


def test_result_without_preview_still_shows_its_regions(results: dict[str, Path]) -> None:
    data = load(results["periodicity"])
    del data["preview"]
    body = build_report([ReportItem("old.json", data)])
    assert "carries no profile preview" in body
    assert body.count("<svg ") == 2 and 'class="fail"' not in body


# --- the preview in the periodicity result ---------------------------------------------------
def test_preview_is_small_keeps_spikes_and_round_trips(results: dict[str, Path]) -> None:
    data = load(results["periodicity"])
    preview = data["preview"]["profile"]
    assert preview["envelope"] and preview["n_samples"] == 12_000
    assert all(len(v) <= PREVIEW_POINTS for v in preview["values"])
    assert len(data["preview"]["instances"]) == len(data["patterns"])
    first = data["preview"]["instances"][0]
    assert len(first["values"]) == 10 and len(first["values"][0]) == len(data["metrics"])
    assert PeriodicityResult.from_dict(data).to_dict() == data
    old = {k: v for k, v in data.items() if k != "preview"}
    assert PeriodicityResult.from_dict(old).preview == {}

    values = np.zeros(10_001)
    values[7_777] = 5.0  # one spike: every-k-th sampling would miss it
    values[100] = np.nan
    spiky = Profile(values=values, period=0.01, metrics=("x",), units={"x": "W"})
    small = profile_preview(spiky, ["x"], points=200)
    kept = np.asarray(small["values"][0], dtype=float)
    assert kept.size <= 200 and np.nanmax(kept) == 5.0 and small["units"] == {"x": "W"}
    assert small["period_s"] * kept.size == pytest.approx(spiky.duration, rel=0.02)
    short = profile_preview(spiky.window(0, 5), ["x"], points=1000)
    assert not short["envelope"] and len(short["values"][0]) == 500


# --- the pseudocode in the report is the CLI's ----------------------------------------------
@pytest.mark.parametrize("name", ["test-2", "even-odd", "deep-paths", "nest-3",
                                  "master-worker"])
def test_report_shows_the_structure_table(name: str, tmp_path: Path) -> None:
    from phasekit.io import read_trace
    from phasekit.structure import structure

    write_paraver(SUITE[name], tmp_path / "t.prv")
    result = structure(read_trace(tmp_path / "t.prv"))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["pseudocode"] == result.table()
    page = build_report([ReportItem("t.json", data)])
    for row in result.table():
        assert html.escape(row["PSEUDOCODE"]) in page
    # monospace, spaces kept, so that the nesting lines up as on the command line
    assert '<table class="code"><caption>Loop structure of ' in page
    # one table, its rows beyond the first screen folded into a second one of the same style
    assert page.count('<table class="code"><caption>') == 1
    assert page.count('<table class="code">') == 1 + (len(result.table()) >= 20)
    older = {k: v for k, v in data.items() if k != "pseudocode"}
    assert "no pseudocode in this result (saved by an older phasekit)" in build_report(
        [ReportItem("t.json", older)])


# --- the command line ------------------------------------------------------------------------
def test_cli_writes_the_report_atomically(results: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    code, out, err = run("report", results["phases"], results["mystery"], "-o", target, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data == {"report": str(target), "results": [
        {"file": str(results["phases"]), "kind": "phases"},
        {"file": str(results["mystery"]), "kind": "mystery"}]}
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    code, out, _ = run("report", results["phases"], "-o", target)
    assert code == 0 and f"wrote report: {target}" in out


@pytest.mark.parametrize("content, expected", [
    (None, "no such file"),
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe\x00garbage", "not UTF-8 text (byte 0)"),
    (b'{"version": 1, "patterns": []}', 'no "kind"'),
    (b'[{"kind": "periodicity"}]', "not an object"),
    (b'{"kind": 3}', 'no "kind"'),
])
def test_cli_bad_input_is_one_line_naming_the_file(content: bytes | None, expected: str,
                                                   tmp_path: Path,
                                                   results: dict[str, Path]) -> None:
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_bytes(content)
    target = tmp_path / "r.html"
    code, out, err = run("report", results["phases"], bad, "-o", target)
    assert code == 3, err
    assert err.count("\n") == 1 and err.startswith("phasekit: error:")
    assert str(bad) in err and expected in err
    assert not target.exists() and out == ""


def test_cli_rejects_an_output_that_is_not_html(results: dict[str, Path], tmp_path: Path
                                                ) -> None:
    code, _, err = run("report", results["phases"], "-o", tmp_path / "r.png")
    assert code == 2 and "r.png" in err and err.count("\n") == 1
    code, _, err = run("report")
    assert code == 2


def test_cli_reads_a_campaign_log_and_has_help(tmp_path: Path,
                                               seed_campaign_file: Callable[..., Path]) -> None:
    from phasekit.campaign import read_campaign

    log = seed_campaign_file(suffix=".jsonl", seed=0, frequencies=(2.2,), cores=(1, 2),
                             inputs=(1,))
    code, out, err = run("report", log, "-o", tmp_path / "r.html", "--json")
    assert code == 0, err
    assert json.loads(out)["results"] == [{"file": str(log), "kind": "campaign"}]
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Efficiency (speedup / threads)" in page and 'class="fail"' not in page
    assert len(read_campaign(log).runs) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    code, _, err = run("report", bad, "-o", tmp_path / "r2.html")
    assert code == 3 and str(bad) in err and err.count("\n") == 1
    code, out, _ = run("report", "--help")
    assert code == 0 and "Example:" in out and "phasekit report" in out


@pytest.mark.slow
def test_demo_ends_by_writing_its_report(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    code, out, err = run("demo", "--synthetic", "-d", folder, "--json")
    assert code == 0, err
    files = json.loads(out)["files"]
    assert list(files)[-1] == "report" and files["report"] == str(folder / "report.html")
    page = Path(files["report"]).read_text(encoding="utf-8")
    found = sections(page)
    assert set(found) == {"periodicity", "demo_comparison"}
    assert found["periodicity"].count("<svg ") == 2
    assert "adjusted" not in found["periodicity"] and "ari" in found["demo_comparison"]


@pytest.mark.parametrize(("comparison", "shown"), [
    ({"expected_period_s": 0.4, "found_period_s": 0.398, "period_error": 0.005,
      "coverage": 0.75, "metrics": ["page_faults"],
      "metric_choice": {"rule": "strength", "metric": "page_faults", "reason": "no IPC"},
      "recording": {"n_samples": 420, "interval_s": 0.01, "achieved_interval_s": 0.01003,
                    "jitter_s": {"p99": 0.0035}, "sources": ["perf-sw", "proc"],
                    "stopped_by": "command exited"}},
     ["known iteration period", "0.4 s", "0.398 s (0.5% off)", "page_faults (no IPC)",
      "perf-sw, proc", "3.5 ms"]),
    ({"expected_period_s": 0.4, "found_period_s": None, "period_error": None,
      "coverage": 0.0, "metrics": ["x"]}, ["no periodicity found"]),
    ({"expected_period_s": 0.4, "found_period_s": 4.31, "period_error": 9.775,
      "iteration_scale_s": 0.401, "coverage": 0.73, "metrics": ["disk_write_bytes"]},
     ["4.31 s (977.5% off)", "iterations, inside the period found", "0.401 s (0.2% off)"]),
    ({"coverage": 0.889, "true_coverage": 0.89, "patterns": 3, "true_patterns": 3,
      "ari": 0.997}, ["88.9% (true 89.0%)", "3 (true 3)", "0.997"]),
])
def test_the_demos_comparison_has_its_own_view(comparison: dict[str, Any],
                                              shown: list[str]) -> None:
    """``phasekit demo``'s report shows its comparison, not the generic view."""
    page = build_report([ReportItem("phasekit demo", {"kind": "demo_comparison",
                                                      "version": 1, **comparison})])
    assert "No dedicated view" not in page and "How the demo compares" in page
    for text in shown:
        assert html.escape(text) in page, text


@pytest.mark.parametrize("kind", ["schedule", "fingerprints", "phase_division"])
def test_a_converted_kind_shows_its_own_presentation(kind: str, report_html: str,
                                                     results: dict[str, Path]) -> None:
    """The section of a schedule, of fingerprints and of a phase division renders the
    result's presentation: its headline, the titles of its tables and its notes, as the
    command line prints them."""
    from phasekit.results import from_data

    shown = from_data(load(results[kind])).present()
    body = sections(report_html)[kind]
    assert f'<p class="headline">{html.escape(shown.headline)}</p>' in body
    for view in shown.views:
        assert f"<caption>{html.escape(view.title)}</caption>" in body
    for line in shown.notes:
        assert html.escape(line) in body


def test_numbers_and_durations_read_in_human_units() -> None:
    from phasekit.report.html import duration, fmt

    assert fmt(78480.0) == "78,480" and fmt(-123456.7) == "-123,457"
    assert fmt(4.51e20) == "4.51e+20" and fmt(1.97e-13) == "1.97e-13" and fmt(12.3456) == "12.35"
    assert fmt(float("nan")) == "-" and fmt(None) == "-" and fmt(3) == "3"
    assert duration(42.51) == "42.51 s" and duration(300.0) == "5.0 min"
    assert duration(78480.0) == "21.8 h" and duration(None) == "-"
