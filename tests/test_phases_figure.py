"""The figure of a phase detection (phasekit.plot.phases): it passes the figure checks on
generated and real profiles, shows the sensors that truly change between phases, gives every
phase id its own colour, draws the spans on the result's boundaries, explains the score above
the limit that started no phase, and reads the same as the timeline of the result alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from figure_checks import figure_problems
from phasekit import UsageError
from phasekit.phases import PhaseResult, phases
from phasekit.plot.phases import (
    PHASE_COLORS,
    driving_sensors,
    phase_style,
    phases_figure,
    plot_phases,
    timeline,
    timeline_figure,
)
from phasekit.profile import Profile
from phasekit.synth import generate_bench

#: The sensors of the controlled profile that change between its phases, and by how much.
PLANTED = {"s2": (100.0, 300.0, 150.0), "s5": (50.0, 20.0, 60.0)}
SEGMENT = 80


@pytest.fixture(scope="module")
def bench() -> tuple[Profile, PhaseResult, np.ndarray]:
    profile, truth = generate_bench("bench_1", seed=0)
    return profile, phases(profile), np.asarray(truth.change_times_s, float)


def controlled_profile(seed: int = 0, *, bursts: bool = True) -> Profile:
    """Three phases of ``SEGMENT`` samples in which only the ``PLANTED`` sensors change
    level; the others are noise alike in every phase, one of them in large bursts (with
    ``bursts``)."""
    rng = np.random.default_rng(seed)
    n = 3 * SEGMENT
    names = [f"s{j}" for j in range(8)]
    values = np.empty((n, len(names)))
    for j, name in enumerate(names):
        levels = PLANTED.get(name, (80.0,) * 3)
        level = np.repeat(levels, SEGMENT)
        values[:, j] = level * (1 + 0.03 * rng.standard_normal(n))
    if bursts:
        values[:, names.index("s7")] = 10 + 400 * (rng.random(n) < 0.08) * rng.random(n)
    return Profile(values=values, period=1.0, metrics=tuple(names))


def naive_changes(values: np.ndarray, bounds: list[int]) -> np.ndarray:
    """Per sensor, the mean over the true boundaries of |difference of the means of the two
    segments| / their mean standard deviation, written with loops."""
    edges = [0, *bounds, values.shape[0]]
    out = np.zeros(values.shape[1])
    for j in range(values.shape[1]):
        total = 0.0
        for k in range(len(edges) - 2):
            left = values[edges[k]:edges[k + 1], j]
            right = values[edges[k + 1]:edges[k + 2], j]
            total += abs(right.mean() - left.mean()) / ((left.std() + right.std()) / 2)
        out[j] = total / (len(edges) - 2)
    return out


def strip_spans(ax: Axes) -> list[tuple[float, float, str, str]]:
    """(start, end, colour, hatch) of the phase bars of a strip, in time order."""
    spans = []
    for collection in ax.collections:
        if isinstance(collection, PolyCollection):
            xy = collection.get_paths()[0].vertices
            spans.append((float(xy[:, 0].min()), float(xy[:, 0].max()),
                          to_hex(collection.get_facecolor()[0]), collection.get_hatch() or ""))
    return sorted(spans)


def sensor_panels(fig: Figure) -> list[str]:
    """The sensor names of a phases figure's sensor panels, top to bottom."""
    return [ax.get_ylabel().split("\n")[0] for ax in fig.axes[1:]
            if not ax.get_ylabel().startswith(("detector", "Manhattan"))]


# --- the checks ----------------------------------------------------------------------------
def test_the_figure_passes_the_checks_on_a_generated_bench(bench) -> None:
    profile, result, truth = bench
    assert len(result.phases) >= 3
    for sensors in (4, "all"):
        fig = phases_figure(profile, result, true_changes_s=truth, sensors=sensors)
        assert figure_problems(fig) == [], sensors
    assert figure_problems(timeline_figure(result)) == []
    assert figure_problems(timeline(
        [p.to_dict() for p in result.phases], result.duration_s, result.score, result.limit,
        result.period, "the report's call")) == []
    assert fig.axes[-1].get_xlabel() == "time since the profile start (min)"  # 364 s


def test_the_figure_passes_the_checks_on_real_counters(
        external_data: Callable[[str], Path]) -> None:
    from phasekit.synth.backtoback import back_to_back, read_headed_table

    runs = {str(f): read_headed_table(f)
            for f in sorted(external_data("phases/dcslab").rglob("*.csv"))}
    sequence = back_to_back(runs, seed=0)
    profile = sequence.profile
    result = phases(profile)
    assert len(result.sensors) >= 10 and len(result.phases) >= 3
    truth = [profile.period * c for c in sequence.change_points]
    for sensors in (4, "all"):
        fig = phases_figure(profile, result, true_changes_s=truth, sensors=sensors)
        assert figure_problems(fig) == [], sensors
    assert figure_problems(timeline_figure(result)) == []


# --- the sensors -----------------------------------------------------------------------------
def test_the_driving_sensors_are_those_that_change_between_phases() -> None:
    for seed in range(3):
        profile = controlled_profile(seed)
        result = phases(profile, method="ev")
        starts = [p.start_index for p in result.phases]
        assert len(starts) == 3 and all(abs(s - t) <= 2 for s, t in
                                        zip(starts[1:], (SEGMENT, 2 * SEGMENT), strict=True))
        vectors = result.vectors(profile)
        assert set(driving_sensors(vectors.values, vectors.sensors, starts, 2)) == set(PLANTED)
        naive = naive_changes(profile.values, [SEGMENT, 2 * SEGMENT])
        top = [profile.metrics[j] for j in np.argsort(-naive)[:2]]
        assert set(top) == set(PLANTED)
        fig = phases_figure(profile, result)
        assert set(sensor_panels(fig)[:2]) == set(PLANTED) and len(sensor_panels(fig)) == 4
        assert "s7" not in sensor_panels(fig)[:2]  # bursts are no change


def test_the_sensors_keyword_and_the_units(bench, tmp_path: Path) -> None:
    profile, result, _ = bench
    assert len(sensor_panels(phases_figure(profile, result))) == 4
    assert sensor_panels(phases_figure(profile, result, sensors="all")) == driving_sensors(
        result.vectors(profile).values, result.sensors,
        [p.start_index for p in result.phases], None)
    assert sensor_panels(phases_figure(profile, result, sensors=1)) == driving_sensors(
        result.vectors(profile).values, result.sensors,
        [p.start_index for p in result.phases], 1)
    fig = phases_figure(profile, result, sensors=["instructions", "net_tx_bytes",
                                                  "cycles_per_s"])
    assert [ax.get_ylabel() for ax in fig.axes[1:4]] == [
        "instructions\n[per cycle]", "net_tx_bytes\n[B/cycle]", "cycles_per_s\n[cycles/s]"]
    assert sensor_panels(phases_figure(profile, result, sensors="branches")) == ["branches"]
    assert sensor_panels(phases_figure(profile, result, sensors=0)) == []
    for wrong in ("no_such_sensor", -1):
        with pytest.raises(UsageError, match="sensors"):
            phases_figure(profile, result, sensors=wrong)
    assert plot_phases(profile, result, tmp_path / "p.png").stat().st_size > 0


# --- colours and spans -----------------------------------------------------------------------
def test_phase_colours_are_distinct() -> None:
    assert len(set(PHASE_COLORS)) == len(PHASE_COLORS) >= 10
    records = [{"start_s": 10.0 * k, "end_s": 10.0 * (k + 1), "id": k + 1} for k in range(25)]
    fig = timeline(records, 250.0, np.array([]), np.array([]), 1.0, "25 ids")
    spans = strip_spans(fig.axes[0])
    assert len(spans) == 25 and len({(c, h) for *_, c, h in spans}) == 25
    assert len({c for *_, c, _ in spans[:len(PHASE_COLORS)]}) == len(PHASE_COLORS)
    assert [(c, h) for *_, c, h in spans] == [
        (to_hex(phase_style(k + 1)[0]), phase_style(k + 1)[1]) for k in range(25)]


def test_spans_follow_the_phase_boundaries(bench) -> None:
    profile, result, _ = bench
    fig = phases_figure(profile, result)
    scale = 60.0  # minutes
    expected = [(p.start_s / scale, p.end_s / scale) for p in result.phases]
    spans = strip_spans(fig.axes[0])
    np.testing.assert_allclose([(a, b) for a, b, *_ in spans], expected)
    assert [c for *_, c, _ in spans] == [to_hex(phase_style(p.id)[0]) for p in result.phases]
    for ax in fig.axes[1:]:
        shaded = sorted((float(v[:, 0].min()), float(v[:, 0].max()))
                        for v in (patch.get_path().transformed(patch.get_patch_transform())
                                  .vertices for patch in ax.patches))
        np.testing.assert_allclose(shaded, expected)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels and all(t in {f"phase {p.id}" for p in result.phases} | {str(p.id)
                                                                         for p in result.phases}
                          for t in labels)


# --- the score -------------------------------------------------------------------------------
def test_the_score_above_the_limit_without_a_change_is_explained() -> None:
    profile = controlled_profile(1, bursts=False)
    values = profile.values.copy()
    values[40, 3] *= 5.0  # a one-vector burst of one sensor: above the limit, no phase
    values[SEGMENT + 3, 3] *= 5.0  # the same in the new phase's first vectors
    profile = Profile(values=values, period=1.0, metrics=profile.metrics)
    result = phases(profile, method="ev")
    min_length = result.params["min_length"]
    fig = phases_figure(profile, result)
    ax = fig.axes[-1]
    title = ax.get_title(loc="left").replace("\n", " ")
    assert f"first {min_length} vectors (the minimum phase length" in title
    assert f"fewer than {result.params['confirm']} vectors in a row" in title
    marked = {}
    for collection in ax.collections:
        if collection.get_label().startswith(("minimum phase length", "burst")):
            marked[collection.get_label().split(" (")[0]] = collection.get_offsets()[:, 0] * 60
    assert np.isclose(marked["burst"], 40).any()  # minutes on the axis: 240 s
    assert np.isclose(marked["minimum phase length"], SEGMENT + 3).any()
    every = np.concatenate(list(marked.values()))
    for p in result.phases:  # the vectors of a change are not marked
        assert not ((every >= p.start_s - 1e-9) & (every <= p.detected_at_s + 1e-9)).any()
    literal = phases(profile, method="ev-literal", metrics=list(profile.metrics))
    fig = phases_figure(profile, literal)
    assert "falls back under it" in fig.axes[-1].get_title(loc="left").replace("\n", " ")


def test_the_timeline_reads_as_the_figure(bench) -> None:
    profile, result, _ = bench
    main, alone = phases_figure(profile, result), timeline_figure(result)
    assert strip_spans(main.axes[0]) == strip_spans(alone.axes[0])
    assert [t.get_text() for t in main.axes[0].texts] == [t.get_text()
                                                          for t in alone.axes[0].texts]
    assert main.axes[-1].get_title(loc="left") == alone.axes[-1].get_title(loc="left")
    assert main.axes[-1].get_xlabel() == alone.axes[-1].get_xlabel()
    assert [t.get_text() for t in main.axes[-1].get_legend().get_texts()] == [
        t.get_text() for t in alone.axes[-1].get_legend().get_texts()]
