"""Every scale of repetition: the nested generator's truth, ``result.scales`` on nested and
single-scale profiles, its JSON and its presentation."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

import phasekit as pk
from helpers import DATA, analysis_module, run, without_second_look
from phasekit.errors import UsageError
from phasekit.io import write_profile
from phasekit.periodicity import PeriodicityResult, analyze
from phasekit.periodicity import scales as sc
from phasekit.periodicity.tune import TuningStep, scan_peaks
from phasekit.synth import generate
from phasekit.synth.nested import NestedTruth, generate_nested


def near(value: float, target: float, tolerance: float = 0.1) -> bool:
    return abs(value - target) <= tolerance * target


# --- the generator ---------------------------------------------------------------------------
def test_nested_truth_holds_its_periods_and_instances() -> None:
    profile, truth = generate_nested(inner_s=1.0, repeats=4, marker=0.5, minutes=2.0,
                                     period=0.02, seed=3)
    assert truth.inner_period == 50 and truth.outer_period == pytest.approx(225)
    assert truth.ratio == pytest.approx(4.5) and truth.outer_period_s == pytest.approx(4.5)
    assert truth.n_samples == profile.n_samples == 6000 and profile.period == 0.02
    assert np.all(truth.inner["length"] == 50) and np.all(truth.outer["length"] == 225)
    for start, length in truth.outer:  # each outer cycle holds `repeats` inner instances
        inside = ((truth.inner["start"] >= start)
                  & (truth.inner["start"] + truth.inner["length"] <= start + length))
        assert inside.sum() == 4
    again, _ = generate_nested(inner_s=1.0, repeats=4, marker=0.5, minutes=2.0, period=0.02,
                               seed=3)
    assert np.array_equal(profile.values, again.values)
    assert NestedTruth.from_dict(json.loads(json.dumps(truth.to_dict()))).ratio == truth.ratio


def test_envelope_single_scale_drift_and_gaps() -> None:
    _, envelope = generate_nested(outer="envelope", repeats=5, minutes=2.0)
    assert envelope.outer_period == pytest.approx(5 * envelope.inner_period)
    _, single = generate_nested(outer="none", minutes=2.0)
    assert not single.nested and single.outer.size == 0 and single.ratio == 0
    _, drifting = generate_nested(drift=0.05, minutes=2.0)
    assert np.unique(drifting.inner["length"]).size > 3
    gappy, _ = generate_nested(gaps=0.1, minutes=2.0)
    assert 0.08 < np.isnan(gappy.values).mean() < 0.15


@pytest.mark.parametrize("bad", [{"repeats": 1}, {"outer": "spiral"}, {"gaps": 0.7},
                                 {"inner_s": 0.01}, {"depth": 1.5}])
def test_bad_generator_arguments_name_the_parameter(bad: dict) -> None:
    with pytest.raises(UsageError) as caught:
        generate_nested(**bad)
    assert caught.value.parameter == next(iter(bad))


# --- the evidence ------------------------------------------------------------------------------
def test_scan_peaks_are_the_local_maxima_of_the_coverage() -> None:
    steps = [TuningStep(w, c) for w, c in [(32, 0.0), (64, 0.6), (128, 0.88), (256, 0.8),
                                            (512, 0.4), (738, 0.93), (748, 0.93), (2048, 0.6),
                                            (4096, 0.02), (9000, 0.03)]]
    assert scan_peaks(steps) == [128, 738]
    assert scan_peaks(steps, alpha=0.01) == [128, 738, 9000]


def test_a_multiple_of_the_period_has_no_outer_structure() -> None:
    """On a single-scale profile, repeating every 4 periods is no better than repeating
    every 1, 2 or 3 periods; on a nested one the outer period repeats clearly better."""
    single, truth = generate_nested(outer="none", inner_s=1.0, minutes=3.0, seed=1)
    b = truth.inner_period
    starts = np.arange(int(truth.inner["start"][0]) + 4 * b, single.n_samples - 4 * b, 4 * b)
    flat = sc.outer_structure(single.values, starts.astype(np.int64),
                              np.full(starts.size, 4 * b, np.int64), b)
    nested, truth = generate_nested(inner_s=1.0, repeats=4, marker=0.5, minutes=3.0, seed=1)
    outer = truth.outer[1:]
    clear = sc.outer_structure(nested.values, outer["start"], outer["length"],
                               truth.inner_period)
    assert abs(flat) < sc.STRUCTURE < clear


def test_instances_at_a_known_period_follow_the_cycle() -> None:
    profile, truth = generate_nested(inner_s=1.0, repeats=3, marker=0.6, minutes=2.0, seed=2)
    starts, lengths = sc.instances_at(profile.values, truth.outer_period)
    assert starts.size >= truth.outer.size - 2
    assert near(float(lengths.mean()), truth.outer_period, 0.03)


# --- the analysis ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    {"inner_s": 2.3, "repeats": 6, "marker": 0.37, "minutes": 6.0},  # the SPEC-like run
    {"inner_s": 1.0, "repeats": 2, "marker": 0.6, "minutes": 3.0},
    {"inner_s": 0.6, "repeats": 12, "marker": 1.0, "minutes": 3.0, "noise": 0.15},
    {"inner_s": 1.0, "repeats": 8, "outer": "envelope", "minutes": 3.0},
    {"inner_s": 1.0, "repeats": 6, "marker": 0.6, "minutes": 4.0, "drift": 0.02},
    {"inner_s": 1.0, "repeats": 5, "marker": 0.4, "minutes": 4.0, "gaps": 0.03, "seed": 1},
])
def test_both_scales_are_found_with_their_ratio(case: dict) -> None:
    profile, truth = generate_nested(**case)
    result = analyze(profile, metrics=["ipc"])
    periods = [s.period_s for s in result.scales]
    assert len(periods) == 2, periods
    inner, outer = result.scales
    assert near(inner.period_s, truth.inner_period_s)
    assert near(outer.period_s, truth.outer_period_s)
    assert near(outer.ratio, truth.ratio) and inner.ratio == 0
    assert sum(s.dominant for s in result.scales) == 1
    dominant = next(s for s in result.scales if s.dominant)
    assert dominant.period_s == result.patterns[0].period_s
    assert outer.structure >= sc.STRUCTURE and outer.nested >= sc.NESTED
    assert all(s.n_instances >= 3 and s.coverage >= 0.05 for s in result.scales)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_single_scale_profile_has_one_scale(seed: int) -> None:
    profile, truth = generate_nested(outer="none", inner_s=1.0, minutes=3.0, seed=seed,
                                     noise=0.1)
    result = analyze(profile, metrics=["ipc"])
    assert len(result.scales) == 1 and result.scales[0].dominant
    assert near(result.scales[0].period_s, truth.inner_period_s)


@pytest.mark.parametrize("kind", ["nemo", "hpcg"])
def test_phase_ta_like_profiles_keep_one_scale(kind: str) -> None:
    result = analyze(generate(kind, minutes=2.0, seed=1)[0])
    assert [s.period_s for s in result.scales] == [result.patterns[0].period_s]


# --- the result --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def nested() -> PeriodicityResult:
    profile, _ = generate_nested(inner_s=1.0, repeats=6, marker=0.37, minutes=3.0)
    return analyze(profile, metrics=["ipc"])


def test_scales_round_trip_through_json(nested: PeriodicityResult, tmp_path) -> None:
    data = nested.to_dict()
    assert data["version"] == 2 and len(data["scales"]) == 2
    back = PeriodicityResult.from_dict(json.loads(json.dumps(data)))
    assert back.to_dict() == json.loads(json.dumps(data))
    for a, b in zip(back.scales, nested.scales, strict=True):
        assert a.period_s == b.period_s and a.dominant == b.dominant and a.ratio == b.ratio
        assert np.array_equal(a.starts, b.starts) and np.array_equal(a.lengths, b.lengths)
    nested.save(tmp_path / "r.json")
    assert len(pk.load(tmp_path / "r.json").scales) == 2


def test_a_result_of_the_previous_version_reads_without_scales(
        nested: PeriodicityResult) -> None:
    old = nested.to_dict()
    del old["scales"]
    old["version"] = 1
    back = PeriodicityResult.from_dict(json.loads(json.dumps(old)))
    assert back.scales == () and back.patterns[0].period_s == nested.patterns[0].period_s
    shown = back.present()
    assert "inside" not in shown.headline and "Scales" not in [v.title for v in shown.views]


def test_the_presentation_names_the_other_scale(nested: PeriodicityResult) -> None:
    shown = nested.present("p.csv")
    inner, outer = nested.scales
    if inner.dominant:
        assert shown.headline.endswith(f"; inside a {outer.period_s:.4g} s cycle "
                                       f"({outer.n_instances} times, {outer.ratio:.3g} x the "
                                       f"{inner.period_s:.4g} s one)")
    else:
        assert shown.headline.endswith(f"; a {inner.period_s:.4g} s cycle inside it "
                                       f"({inner.n_instances} times)")
    plain = shown.shown().views
    assert [v.title for v in plain][-1] == "Scales"
    rows = plain[-1].rows
    assert rows[0][0] == f"{inner.period_s:.4g}" and rows[1][0] == f"{outer.period_s:.4g}"
    assert rows[1][3].startswith(f"{outer.ratio:.3g} x the {inner.period_s:.4g} s cycle")
    assert [("dominant" in row[3]) for row in rows] == [inner.dominant, outer.dominant]


def test_single_scale_presentation_is_unchanged() -> None:
    profile, _ = generate_nested(outer="none", inner_s=1.0, minutes=3.0, seed=0)
    shown = analyze(profile, metrics=["ipc"]).present()
    assert [v.title for v in shown.shown().views] == ["Patterns"]
    assert "inside" not in shown.headline


def test_the_command_line_prints_the_scales(tmp_path) -> None:
    profile, _ = generate_nested(inner_s=1.0, repeats=6, marker=0.37, minutes=3.0)
    path = tmp_path / "nested.csv"
    write_profile(profile, path)
    code, out, _ = run("analyze", path)
    headline = out.splitlines()[0]
    assert code == 0 and "Scales" in out
    assert "; inside a " in headline or " cycle inside it (" in headline


# --- which cycle leads ---------------------------------------------------------------------------
def test_the_cycle_inside_leads_when_it_covers_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """16 inner cycles and a phase per outer cycle, 11 outer cycles in the run: the window
    tuning prefers the outer cycle, whose pattern covers less than the inner one's."""
    case = {"inner_s": 0.6, "repeats": 16, "marker": 0.37, "minutes": 3.0, "noise": 0.05,
            "drift": 0.02, "seed": 0}
    profile, truth = generate_nested(**case)
    result = analyze(profile, metrics=["ipc"])
    led = result.patterns[0]
    assert near(led.period_s, truth.inner_period_s, 0.05)
    inner, outer = result.scales
    assert inner.dominant and near(outer.period_s, truth.outer_period_s, 0.05)
    lead = result.params["lead"]
    assert lead in result.present().notes

    without_second_look(monkeypatch)
    before = analyze(profile, metrics=["ipc"])
    assert near(before.patterns[0].period_s, truth.outer_period_s, 0.05)
    assert led.coverage > before.coverage and "lead" not in before.params
    assert lead == (f"the {led.period_s:.4g} s cycle leads: as one pattern it covers "
                    f"{100 * led.coverage:.1f}% of the measured run, more than all the "
                    f"patterns of a first analysis ({100 * before.coverage:.1f}%), whose window "
                    f"tuning preferred the {before.patterns[0].period_s:.4g} s cycle around it")


def test_the_outer_cycle_keeps_the_lead_when_it_covers_more() -> None:
    case = {"inner_s": 1.0, "repeats": 16, "marker": 0.37, "minutes": 3.0, "noise": 0.15,
            "seed": 1}
    profile, truth = generate_nested(**case)
    result = analyze(profile, metrics=["ipc"])
    assert near(result.patterns[0].period_s, truth.outer_period_s, 0.05)
    assert near(result.scales[0].period_s, truth.inner_period_s, 0.05)
    assert result.scales[0].coverage > result.coverage  # why a second look was taken
    said = re.fullmatch(rf"the {result.patterns[0].period_s:.4g} s cycle leads, though the "
                        r"(\S+) s cycle inside it covers more in the scales table: analyzed "
                        r"with the window L up to (\d+) samples, it forms one pattern over "
                        rf"([0-9.]+)% of the measured run, less than this analysis's "
                        rf"{100 * result.coverage:.1f}%", result.params["lead"])
    assert said, result.params["lead"]
    assert int(said.group(2)) == int(0.75 * result.patterns[0].lengths.mean())
    assert near(float(said.group(1)), truth.inner_period_s, 0.05)
    assert float(said.group(3)) < 100 * result.coverage


@pytest.fixture(scope="module")
def recorded() -> pk.Profile:
    """The demo's workload recorded beside two CPU-bound jobs (tests/data/README-import.md)."""
    return pk.read(DATA / "real_demo_disk_writes.parquet")


def test_a_recorded_run_leads_with_its_iterations(recorded: pk.Profile,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """On the bytes written, its 0.4 s iterations lead, inside the 4.3 s checkpoint cycle,
    which the first analysis's pattern gives (found at that analysis's window)."""
    for metrics in (["disk_write_bytes"], None):
        result = analyze(recorded, metrics=metrics)
        assert result.patterns[0].period_s == pytest.approx(0.4, rel=0.02)
        assert [round(s.period_s, 1) for s in result.scales] == [0.4, 4.3]
        headline = result.present().headline
        assert "every 0.4 s" in headline and "inside a 4.31 s cycle" in headline
    outer = result.scales[1]
    without_second_look(monkeypatch)
    before = analyze(recorded, metrics=["disk_write_bytes"])
    assert before.patterns[0].period_s == pytest.approx(4.3, rel=0.02)
    assert outer.source == "first analysis" and outer.window == before.window
    assert np.array_equal(outer.starts, before.patterns[0].starts)


def test_the_outer_cycle_leads_when_the_second_look_loses_it_or_splits(
        recorded: pk.Profile, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cycle inside leads only as one pattern covering more than the whole first
    analysis and with the outer cycle still a scale (else a sub-cycle split into
    near-duplicates, or one that hides the outer cycle, would lead)."""
    module = analysis_module()
    inner = analyze(recorded, metrics=["disk_write_bytes"])
    without_second_look(monkeypatch)
    outer = analyze(recorded, metrics=["disk_write_bytes"])
    assert module._lead_with_inner(outer, inner, 323).patterns[0].period_s == \
        inner.patterns[0].period_s
    lost = replace(inner, scales=inner.scales[:1])
    kept = module._lead_with_inner(outer, lost, 323)
    assert kept.patterns == outer.patterns
    assert kept.params["lead"] == (
        f"the 4.31 s cycle leads, though the {inner.patterns[0].period_s:.4g} s cycle inside it "
        "covers more in the scales table: analyzed with the window L up to 323 samples, it "
        "leads, but the 4.31 s cycle is no longer found")
    first = inner.patterns[0]
    split = replace(inner, patterns=(replace(first, coverage=0.4), replace(first, coverage=0.4)),
                    coverage=0.8)
    kept = module._lead_with_inner(outer, split, 323)
    assert kept.patterns == outer.patterns
    assert kept.params["lead"].endswith(
        f"samples, it forms one pattern over 40.0% of the measured run, less than this "
        f"analysis's {100 * outer.coverage:.1f}%")
    double = replace(inner, patterns=(replace(first, period_s=3.5),))
    assert module._lead_with_inner(outer, double, 323) is outer
