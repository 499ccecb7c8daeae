"""Figures: every figure function writes a readable, non-blank image in every case."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from phasekit.errors import UsageError
from phasekit.periodicity import PeriodicityResult, analyze
from phasekit.plot import plot_analysis, plot_patterns, plot_profile
from phasekit.profile import Profile
from phasekit.synth import generate

FIGURES = {"profile": plot_profile, "patterns": plot_patterns, "analysis": plot_analysis}


@pytest.fixture(scope="module")
def periodic() -> tuple[Profile, PeriodicityResult]:
    profile, _ = generate("nemo", minutes=2, seed=0)
    result = analyze(profile)
    assert result.patterns
    return profile, result


@pytest.fixture(scope="module")
def empty() -> tuple[Profile, PeriodicityResult]:
    rng = np.random.default_rng(0)
    profile = Profile(values=rng.normal(size=4000), period=0.005, metrics=("noise",))
    result = analyze(profile)
    assert not result.patterns
    return profile, result


@pytest.fixture(scope="module")
def joint_window_gaps() -> tuple[Profile, PeriodicityResult]:
    """Two metrics analyzed jointly, on a window of a profile with a NaN gap."""
    profile, _ = generate("nemo", minutes=3, seed=1)
    ipc = np.array(profile.values[:, 0])
    rng = np.random.default_rng(1)
    other = 2.0 * ipc + rng.normal(0.0, 0.05, ipc.size)
    ipc[20_000:20_400] = np.nan
    profile = Profile(values=np.column_stack([ipc, other]), period=profile.period,
                      metrics=("ipc", "bw"), units={"bw": "B/s"})
    result = analyze(profile, metrics=["ipc", "bw"], window_s=(20.0, 160.0))
    assert result.patterns and result.offset_s == pytest.approx(20.0)
    return profile, result


def assert_image(path: Path) -> None:
    assert path.is_file() and path.stat().st_size > 0
    pixels = imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 200 and pixels.shape[1] > 400
    assert float(pixels.std()) > 0.0  # not blank


@pytest.mark.parametrize("name", FIGURES)
@pytest.mark.parametrize("case", ["periodic", "empty", "joint_window_gaps"])
def test_figure_written(name: str, case: str, request: pytest.FixtureRequest,
                        tmp_path: Path) -> None:
    profile, result = request.getfixturevalue(case)
    path = tmp_path / f"{name}.png"
    assert FIGURES[name](profile, result, path) == path
    assert_image(path)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_patterns_other_format_and_options(periodic: tuple[Profile, PeriodicityResult],
                                           tmp_path: Path) -> None:
    profile, result = periodic
    path = plot_patterns(profile, result, tmp_path / "p.svg", n_instances=3, seed=5)
    assert path.read_text(encoding="utf-8").lstrip().startswith("<?xml")


def test_unknown_format_is_a_usage_error(periodic: tuple[Profile, PeriodicityResult],
                                         tmp_path: Path) -> None:
    profile, result = periodic
    with pytest.raises(UsageError, match="figure format"):
        plot_profile(profile, result, tmp_path / "figure.nope")
    assert not list(tmp_path.iterdir())


def test_missing_directory_is_a_usage_error(periodic: tuple[Profile, PeriodicityResult],
                                            tmp_path: Path) -> None:
    profile, result = periodic
    with pytest.raises(UsageError, match="does not exist"):
        plot_analysis(profile, result, tmp_path / "no" / "figure.png")


def test_result_round_trip_plots(periodic: tuple[Profile, PeriodicityResult],
                                 tmp_path: Path) -> None:
    """A result read back from JSON (as from ``analyze -o``) plots like the original."""
    profile, result = periodic
    again = PeriodicityResult.from_dict(result.to_dict())
    assert_image(plot_analysis(profile, again, tmp_path / "a.png"))


def test_names_with_dollar_signs_are_drawn_as_written(tmp_path: Path) -> None:
    """A metric named like a broken mathtext expression is a label, not TeX: without the
    escape its figure cannot be drawn at all (matplotlib's parser rejects it)."""
    rng = np.random.default_rng(0)
    name = r"cost$\frac{$"
    profile = Profile(values=rng.normal(size=4000), period=0.005, metrics=(name,))
    result = analyze(profile)
    assert_image(plot_profile(profile, result, tmp_path / "dollars.png"))


def test_literal_text_keeps_log_ticks_in_mathtext() -> None:
    from phasekit.plot.common import figure, literal_text

    fig = figure(4, 3)
    ax = fig.add_subplot()
    ax.plot([1, 10, 100], [1, 2, 3])
    ax.set_xscale("log")
    ax.set_title("cost $5 and $6")
    ax.set_yticks([1, 2], labels=["node$1$", "plain"])
    literal_text(fig)
    literal_text(fig)  # twice: nothing escaped twice
    fig.canvas.draw()
    shown = {t.get_text(): t._preprocess_math(t.get_text()) for t in
             [ax.title, *ax.get_yticklabels(), *ax.get_xticklabels()]}
    assert shown["cost \\$5 and \\$6"] == ("cost $5 and $6", False)
    assert shown["node\\$1\\$"] == ("node$1$", False)
    assert any(math and "10^" in text for text, math in shown.values())


def test_fingerprint_figure_keeps_a_long_ratio_inside_the_figure() -> None:
    """The ratio used to name the y axis, and a long one ran off the figure; it is in the
    title now, wrapped at the figure's edge, and every label stays inside."""
    import dataclasses

    from matplotlib.text import Text

    from phasekit.energy.fingerprint import fingerprint_profiles
    from phasekit.plot.fingerprint import fingerprints_figure
    from phasekit.synth.power import generate_fingerprint_runs

    runs = generate_fingerprint_runs(programs=2, inputs=2, seed=1)
    result = fingerprint_profiles(runs, names=[f"run{i}" for i in range(len(runs))])
    ratio = "inst_retired.any/mem_inst_retired.all_loads+mem_inst_retired.all_stores"
    fig = fingerprints_figure(dataclasses.replace(result, ratio=ratio))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    box = fig.bbox
    texts = [t for ax in fig.axes for t in (ax.xaxis.label, ax.yaxis.label, ax.title)
             if t.get_text()]  # the wrapped title is measured unwrapped: checked below
    assert texts
    for text in texts:
        extent = text.get_window_extent(renderer)
        assert (extent.x0 >= box.x0 - 1 and extent.x1 <= box.x1 + 1
                and extent.y0 >= box.y0 - 1 and extent.y1 <= box.y1 + 1), text.get_text()
    titles = [t.get_text() for t in fig.findobj(Text) if t.get_wrap()]
    assert titles == ["Fingerprints of inst_retired.any / mem_inst_retired.all_loads + "
                      "mem_inst_retired.all_stores, coloured by cluster"]


def test_the_profile_panel_reads_the_run_as_it_was() -> None:
    """A profile on the file's own clock (starting at 161.42 s), with a stretch without data
    and one of idle counters reading 0: the axis starts at 161.42, each stretch is shaded
    and named where it is, and the figure passes the figure checks."""
    import dataclasses

    from figure_checks import figure_problems
    from phasekit.plot.periodicity import profile_figure

    profile, _ = generate("nemo", minutes=2, seed=0)
    values = np.array(profile.values[:, 0])
    step = profile.period
    values[4000:5000] = np.nan
    values[12000:14000] = 0.0
    shifted = dataclasses.replace(profile, values=values[:, None], start=161.42)
    fig = profile_figure(shifted, analyze(shifted))
    ax = fig.axes[0]
    assert ax.get_xlim()[0] == pytest.approx(161.42)
    assert ax.get_xlabel() == "time, as the file counts it (s)"
    named = {t.get_text(): t.get_position()[0] for t in ax.texts}
    assert named["no data"] == pytest.approx(161.42 + 4500 * step, abs=2 * step)
    assert named["reads 0"] == pytest.approx(161.42 + 13000 * step, abs=2 * step)
    assert figure_problems(fig) == []


def test_a_dense_profile_is_drawn_as_its_envelope_and_mean() -> None:
    """Tens of thousands of samples: the least and the most of each stretch as a band, and
    their mean, instead of one line of every sample."""
    from phasekit.plot.periodicity import DENSE, ENVELOPE_BINS, profile_figure

    profile, _ = generate("nemo", minutes=3, seed=1)
    assert profile.n_samples > DENSE
    ax = profile_figure(profile, analyze(profile)).axes[0]
    band = [c for c in ax.collections if c.get_paths()]
    assert band, "no envelope"
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
    assert max(len(line.get_xdata()) for line in lines) == ENVELOPE_BINS
    k = -(-profile.n_samples // ENVELOPE_BINS)
    values = profile.values[:, 0]
    mean = next(line for line in lines if len(line.get_xdata()) == ENVELOPE_BINS)
    assert mean.get_ydata()[3] == pytest.approx(np.nanmean(values[3 * k:4 * k]))


def test_an_outer_cycle_is_bracketed_over_its_inner_ones() -> None:
    """A 2.3 s cycle six times inside a 14.6 s one: each scale's instances as brackets at
    the top of the profile panel, the outer one highest, both named in the legend."""
    from phasekit.plot.periodicity import profile_figure
    from phasekit.synth.nested import generate_nested

    profile, _ = generate_nested(seed=0)
    result = analyze(profile)
    scales = sorted(result.scales, key=lambda s: -s.period_s)
    assert len(scales) == 2 and scales[0].period_s > 5 * scales[1].period_s
    ax = profile_figure(profile, result).axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(label.startswith("outer cycle 14.") for label in labels)
    assert any(label.startswith("inner cycle 2.3") for label in labels)
    brackets = [c for c in ax.collections if hasattr(c, "get_segments")
                and c.get_transform() == ax.get_xaxis_transform()]
    assert [len(c.get_segments()) for c in brackets] == [3 * s.n_instances for s in scales]
    heights = [c.get_segments()[0][0][1] for c in brackets]
    assert heights[0] > heights[1]
