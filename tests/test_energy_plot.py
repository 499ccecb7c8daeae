"""PaScal Viewer's views (PaScal Suite, Silva 2024): efficiency tables, figures, ``energy plot``.

Efficiencies are checked against hand-computed values of T(p) = T1 (0.1 + 0.9 / p), whose
efficiency is 1 / (0.1 p + 0.9).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

import helpers
from phasekit.campaign import Campaign, Run, write_campaign
from phasekit.energy.api import HEATMAP_MODES, campaign_runs, campaign_views, plot_campaign
from phasekit.energy.efficiency import (
    ConfigurationTable,
    configuration_table,
    efficiency_table,
    efficiency_tables,
    pareto_mask,
)
from phasekit.errors import InputError, UsageError
from phasekit.plot.common import literal_text
from phasekit.plot.energy import (
    MODES,
    _compact,
    _nice_ticks,
    energy_figure,
    plot_energy,
    smooth_grid,
)
from phasekit.synth.campaigns import seed_campaign

run = helpers.run
PNG = b"\x89PNG\r\n\x1a\n"
T1 = {"small": 10.0, "large": 40.0}


def amdahl(t1: float, p: int) -> float:
    return t1 * (0.1 + 0.9 / p)


def vm_campaign(threads: tuple[int, ...] = (1, 2, 4, 8), reps: int = 2) -> Campaign:
    """Threads x inputs on a 'virtual machine': no frequency, no energy; two regions: 'solve'
    scales perfectly, 'serial' not at all. Repetitions at +-1 % average to the exact time."""
    runs = []
    for label in ("large", "small"):  # appearance order differs from the declared order
        for p in threads:
            for r in range(1, reps + 1):
                t = amdahl(T1[label], p) * (1 + (0.01 if r % 2 else -0.01) * (reps > 1))
                solve = 0.9 * T1[label] / p
                runs.append(Run(threads=p, input=label, repetition=r, start_s=100.0,
                                stop_s=100.0 + t,
                                regions={"solve": ((0.0, solve),), "serial": ((0.0, 1.0),)}))
    runs.append(Run(threads=8, input="small", repetition=9, status="failed", reason="timeout",
                    time_s=1e6))
    return Campaign(runs=tuple(runs), program="app", inputs=("small", "large"))


def expected(p: int) -> float:
    return 1.0 / (0.1 * p + 0.9)


# --- efficiency --------------------------------------------------------------------------------
def test_efficiency_matches_hand_computed_values() -> None:
    table = efficiency_table(vm_campaign())
    assert table.inputs == ("small", "large")
    assert table.counts == (1, 2, 4, 8) and table.unit == "threads"
    assert table.frequency_ghz is None and table.notes == ()
    assert table.reference == (1, 1) and not any(table.estimated)
    assert (table.runs == 2).all()  # the failed run is left out
    for i, p in enumerate(table.counts):
        for j, label in enumerate(table.inputs):
            assert table.time_s[i, j] == pytest.approx(amdahl(T1[label], p), rel=1e-12)
            assert table.speedup[i, j] == pytest.approx(p * expected(p), rel=1e-12)
            assert table.efficiency[i, j] == pytest.approx(expected(p), rel=1e-12)
    assert table.efficiency[1, 0] == pytest.approx(1 / 1.1)  # 2 threads
    assert table.efficiency[3, 1] == pytest.approx(1 / 1.7)  # 8 threads
    frame = table.to_frame()
    assert list(frame.columns) == ["input", "threads", "runs", "time_s", "speedup", "efficiency"]
    assert len(frame) == 8
    data = json.loads(json.dumps(table.to_dict()))
    assert data["kind"] == "efficiency" and data["region"] is None
    assert data["rows"][1]["efficiency"] == pytest.approx(1 / 1.1)


def test_reference_falls_back_to_the_fewest_threads_with_a_note() -> None:
    campaign = vm_campaign(threads=(2, 4, 8), reps=1)
    table = efficiency_table(campaign)
    assert table.reference == (2, 2) and all(table.estimated)
    # T(1) ~ 2 T(2): efficiency(p) = 2 T(2) / (p T(p))
    for i, p in enumerate(table.counts):
        want = 2 * amdahl(1.0, 2) / (p * amdahl(1.0, p))
        assert table.efficiency[i] == pytest.approx([want, want])
    assert table.efficiency[0, 0] == 1.0
    assert table.efficiency[1, 0] == pytest.approx(1.1 / 1.3)
    assert len(table.notes) == 1
    assert "no 1-thread run" in table.notes[0] and "2 x T(2)" in table.notes[0]
    assert "small, large" in table.notes[0]
    # One input with a 1-thread run, the other without.
    runs = [*campaign.runs, Run(threads=1, input="large", time_s=amdahl(40.0, 1))]
    mixed = efficiency_table(Campaign(runs=tuple(runs), inputs=("small", "large")))
    assert mixed.reference == (2, 1)
    assert mixed.efficiency[mixed.counts.index(8), 1] == pytest.approx(expected(8))
    assert "input small:" in mixed.notes[0]


def test_region_tables() -> None:
    tables = efficiency_tables(vm_campaign())
    assert [t.name for t in tables] == ["program", "solve", "serial"]
    program, solve, serial = tables
    assert np.allclose(program.efficiency, efficiency_table(vm_campaign()).efficiency)
    assert np.allclose(solve.efficiency, 1.0)
    counts = np.asarray(serial.counts, dtype=float)[:, None]
    assert np.allclose(serial.efficiency, np.broadcast_to(1 / counts, serial.efficiency.shape))
    only = efficiency_tables(vm_campaign(), regions=["serial"])
    assert [t.name for t in only] == ["program", "serial"]
    with pytest.raises(UsageError, match=r"no region 'nope'.*'solve', 'serial'"):
        efficiency_tables(vm_campaign(), regions=["nope"])
    with pytest.raises(UsageError, match="no region"):
        efficiency_table(vm_campaign(), region="nope")


def test_frequency_is_fixed_and_said() -> None:
    runs = []
    for f, scale in ((1.0, 2.0), (2.0, 1.0)):
        for p in (1, 2, 4):
            runs.append(Run(threads=p, cores=p, frequency_ghz=f, input="1",
                            time_s=scale * amdahl(10.0, p) * (1.0 if f == 2.0 else 1 + 0.1 * p)))
    campaign = Campaign(runs=tuple(runs))
    table = efficiency_table(campaign)
    assert table.frequency_ghz == 2.0
    assert "2 frequencies measured; efficiency at the highest, 2 GHz" in table.notes[0]
    assert table.efficiency[:, 0] == pytest.approx([expected(p) for p in (1, 2, 4)])
    slow = efficiency_table(campaign, frequency=1.0)
    assert slow.frequency_ghz == 1.0 and slow.notes == ()
    assert slow.efficiency[2, 0] == pytest.approx(expected(4) * 1.1 / 1.4)
    with pytest.raises(UsageError, match="no run at 3 GHz; the campaign has 1, 2 GHz"):
        efficiency_table(campaign, frequency=3.0)
    with pytest.raises(UsageError, match="no frequency"):
        efficiency_table(vm_campaign(), frequency=2.0)


def test_independent_threads_and_cores_use_the_most_cores() -> None:
    # t threads on c cores: oversubscribed (t > c) runs are 50 % slower
    runs = [Run(threads=t, cores=c, input="1",
                time_s=amdahl(10.0, min(t, c)) * (1 + 0.5 * (t > c)))
            for t in (1, 2, 4) for c in (1, 4)]
    table = efficiency_table(Campaign(runs=tuple(runs)))
    assert table.cores == 4 and "varied independently" in table.notes[0]
    assert table.efficiency[:, 0] == pytest.approx([expected(p) for p in (1, 2, 4)])
    one = efficiency_table(Campaign(runs=tuple(runs)), cores=1)
    assert one.cores == 1 and one.efficiency[2, 0] == pytest.approx(1 / (4 * 1.5))


def test_input_order_and_table_input() -> None:
    rows = [{"threads": p, "input": label, "time_s": amdahl(t1, p), "status": "ok"}
            for label, t1 in (("10", 8.0), ("2", 2.0), ("3", 3.0)) for p in (1, 2)]
    frame = pd.DataFrame(rows)
    assert efficiency_table(frame).inputs == ("2", "3", "10")  # numeric
    frame["input"] = frame["input"].map({"10": "huge", "2": "tiny", "3": "mid"})
    assert efficiency_table(frame).inputs == ("huge", "tiny", "mid")  # appearance
    assert efficiency_table(frame, inputs=("tiny", "mid", "huge")).inputs == ("tiny", "mid",
                                                                             "huge")
    with pytest.raises(InputError, match="time_s"):
        efficiency_table(frame.drop(columns="time_s"), source="t.csv")
    with pytest.raises(InputError, match="positive time"):
        efficiency_table(frame.assign(time_s=np.nan), source="t.csv")


# --- configurations and the Pareto frontier ---------------------------------------------------
def naive_pareto(t: np.ndarray, e: np.ndarray) -> np.ndarray:
    keep = np.zeros(t.size, dtype=bool)
    for i in range(t.size):
        dominated = any((t[j] <= t[i] and e[j] <= e[i]) and (t[j] < t[i] or e[j] < e[i])
                        for j in range(t.size))
        duplicate = any(t[j] == t[i] and e[j] == e[i] for j in range(i))
        keep[i] = not dominated and not duplicate
    return keep


@pytest.mark.parametrize("seed", range(5))
def test_pareto_mask_matches_the_naive_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    t = rng.integers(1, 12, 40).astype(float)  # ties on purpose
    e = rng.integers(1, 12, 40).astype(float)
    assert (pareto_mask(t, e) == naive_pareto(t, e)).all()
    e[3] = np.nan
    assert not pareto_mask(t, e)[3]


def test_configuration_table_and_frontier() -> None:
    campaign = seed_campaign(seed=0, frequencies=(1.2, 1.7, 2.2), cores=(1, 4, 16),
                             inputs=(1, 2)).campaign
    configs = configuration_table(campaign)
    assert configs.has_energy and configs.unit == "cores" and configs.inputs == ("1", "2")
    assert configs.frequencies == (1.2, 1.7, 2.2)
    frame = configs.frame
    assert len(frame) == 18 and set(frame["runs"]) == {1}
    for label in configs.inputs:
        rows = frame[frame["input"] == label]
        assert rows.loc[rows["energy_j"].idxmin(), "pareto"]
        assert rows.loc[rows["time_s"].idxmin(), "pareto"]
        assert (rows["pareto"] == naive_pareto(rows["time_s"].to_numpy(),
                                               rows["energy_j"].to_numpy())).all()
    assert np.allclose(frame["power_w"], frame["energy_j"] / frame["time_s"])
    # what energy plot -o saves reads back as the same table (the report's energy_view)
    again = ConfigurationTable.from_dict(json.loads(json.dumps(configs.to_dict())))
    pd.testing.assert_frame_equal(again.frame, frame)
    assert (again.inputs, again.has_energy, again.has_time, again.unit) == (
        configs.inputs, configs.has_energy, configs.has_time, configs.unit)


def test_time_only_campaign() -> None:
    configs = configuration_table(vm_campaign())
    assert not configs.has_energy and configs.unit == "threads"
    assert configs.notes == ("no energy measured: energy panels skipped (time only)",)
    assert not configs.frame["pareto"].any()


# --- figures -----------------------------------------------------------------------------------
def test_smooth_grid() -> None:
    values = np.array([[1.0, 0.8, 0.6], [0.5, 0.4, 0.3]])
    x, y = np.arange(3.0), np.arange(2.0)
    xs, ys, grid = smooth_grid(values, x, y, mesh=5)
    assert grid.shape == (5, 5) and xs[-1] == 2.0 and ys[-1] == 1.0
    assert grid[0, 0] == pytest.approx(1.0) and grid[-1, -1] == pytest.approx(0.3)
    assert grid[0, 2] == pytest.approx(0.8)  # x = 1 on the first row
    assert grid[2, 0] == pytest.approx(0.75)  # bilinear between the rows
    holed = values.copy()
    holed[0, 1] = np.nan
    _, _, grid = smooth_grid(holed, x, y, mesh=5)
    assert np.isfinite(grid).all() and grid.min() >= 0.3 - 1e-12 and grid.max() <= 1 + 1e-12
    _, _, line = smooth_grid(values[:1], x, y[:1], mesh=5)
    assert line.shape == (1, 5) and line[0] == pytest.approx([1.0, 0.9, 0.8, 0.7, 0.6])
    _, _, one = smooth_grid(np.array([[0.7]]), x[:1], y[:1])
    assert one.shape == (1, 1) and one[0, 0] == 0.7


def test_smooth_grid_is_scipys_bilinear_on_uneven_grids() -> None:
    from scipy.interpolate import RegularGridInterpolator

    rng = np.random.default_rng(3)
    for _ in range(10):
        ny, nx = rng.integers(2, 8, size=2)
        x, y = np.cumsum(rng.random(nx) + 0.1), np.cumsum(rng.random(ny) + 0.1)
        values = rng.random((ny, nx))
        xs, ys, grid = smooth_grid(values, x, y, mesh=17)
        gy, gx = np.meshgrid(ys, xs, indexing="ij")
        expected = RegularGridInterpolator((y, x), values)(np.column_stack([gy.ravel(),
                                                                            gx.ravel()]))
        assert grid == pytest.approx(expected.reshape(gy.shape), abs=1e-12)


def test_plot_time_only_campaign(tmp_path: Path) -> None:
    campaign = vm_campaign()
    path = plot_energy(tmp_path / "vm.png", tables=efficiency_tables(campaign)[:1],
                       configs=configuration_table(campaign), mode="smoothed")
    assert path.read_bytes()[:8] == PNG
    with pytest.raises(UsageError, match="mode"):
        plot_energy(tmp_path / "x.png", tables=efficiency_tables(campaign), mode="wavy")


def drawn_inside(fig: Figure) -> None:
    """Every Axes of ``fig``, its labels and title included, lies inside the figure (the
    layout is fixed by hand, not by constrained layout), and no text is mathtext."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        box = ax.get_tightbbox(renderer)
        assert box.x0 >= -1 and box.y0 >= -1, ax.get_title()
        assert box.x1 <= fig.bbox.x1 + 1 and box.y1 <= fig.bbox.y1 + 1, ax.get_title()
    assert not any(re.search(r"(?<!\\)\$", t.get_text()) for t in fig.findobj(Text))


def test_energy_figure_shows_the_landscape_and_the_least_energy() -> None:
    campaign = seed_campaign(seed=0, frequencies=(1.2, 1.6, 2.0, 2.4), cores=(1, 2, 4, 8, 16),
                             inputs=(1, 2, 3)).campaign
    configs = configuration_table(campaign)
    fig = energy_figure(tables=efficiency_tables(campaign), configs=configs)
    assert fig.get_layout_engine() is None
    titles = [ax.get_title() for ax in fig.axes]
    # discrete, smoothed, their colour bar; energy vs time, one heatmap per input, colour bar
    assert titles[:2] == ["program (discrete)", "program (smoothed)"]
    assert titles[3] == "energy vs time, every input"
    frame = configs.frame
    for k, label in enumerate(configs.inputs):
        rows = frame[frame["input"] == label]
        best = rows.loc[rows["energy_j"].idxmin()]
        ax = fig.axes[4 + k]
        assert ax.get_title() == f"input {label}: least {best['energy_j']:.4g} J"
        image = ax.get_images()[0].get_array()
        assert image.shape == (5, 4)  # cores x frequencies
        i, j = np.unravel_index(np.ma.argmin(image), image.shape)
        assert (configs.frequencies[j], (1, 2, 4, 8, 16)[i]) == (
            pytest.approx(best["frequency_ghz"]), best["cores"])
        assert image.min() == pytest.approx(1.0)  # relative to the least energy
        box = next(line for line in ax.get_lines() if line.get_linewidth() > 2)
        assert np.nanmin(box.get_xdata()) == j - 0.5 and np.nanmin(box.get_ydata()) == i - 0.5
        dots = next(line for line in ax.get_lines() if line.get_marker() == "o")
        assert len(dots.get_xdata()) == int(rows["pareto"].sum())
    drawn_inside(fig)


def test_energy_figure_one_frequency_and_long_labels() -> None:
    runs = [Run(threads=p, cores=p, input=label, time_s=amdahl(t1, p),
                energy_j=amdahl(t1, p) * (10 + 5 * p))
            for label, t1 in (("a$very_long_input_name", 10.0), ("b", 20.0)) for p in (1, 2, 4)]
    campaign = Campaign(runs=tuple(runs))
    fig = energy_figure(tables=efficiency_tables(campaign),
                        configs=configuration_table(campaign))
    heat = [ax for ax in fig.axes if ax.get_title() == "every input"]
    assert len(heat) == 1 and heat[0].get_images()[0].get_array().shape == (3, 2)
    literal_text(fig)
    drawn_inside(fig)
    vm = vm_campaign()
    fig = energy_figure(configs=configuration_table(vm))
    assert len(fig.axes) == 2  # the time heatmap and its colour bar: no energy panel
    drawn_inside(fig)


@pytest.mark.parametrize("suffix", ["svg", "pdf"])
def test_energy_figure_vector_formats(tmp_path: Path, suffix: str) -> None:
    campaign = seed_campaign(seed=2, frequencies=(1.2, 2.2), cores=(1, 4),
                             inputs=(1, 2)).campaign
    path = plot_energy(tmp_path / f"e.{suffix}", tables=efficiency_tables(campaign),
                       configs=configuration_table(campaign), mode="discrete")
    head = path.read_bytes()[:64]
    assert head.lstrip().startswith(b"<?xml" if suffix == "svg" else b"%PDF")


def test_plain_tick_helpers() -> None:
    assert _nice_ticks(2.6, 113.0, 5) == [5.0, 10.0, 20.0, 50.0, 100.0]
    assert _nice_ticks(1.0, 12.0, 6) == [1.0, 2.0, 5.0, 10.0]
    assert len(_nice_ticks(1e-3, 1e6, 5)) <= 5
    assert [_compact(v) for v in (3, 300, 5000, 20000, 3e6)] == ["3", "300", "5000", "20k",
                                                                "3M"]


# --- command line ------------------------------------------------------------------------------
def test_cli_time_only_campaign(tmp_path: Path) -> None:
    path, figure = tmp_path / "vm.jsonl", tmp_path / "vm.png"
    write_campaign(vm_campaign(threads=(2, 4)), path)
    code, out, err = run("energy", "plot", path, "--mode", "discrete", "-o", figure)
    assert code == 0, err
    assert figure.read_bytes()[:8] == PNG
    assert "Efficiency (speedup / threads) of program" in out
    assert "of solve" in out and "of serial" in out
    assert "energy panels skipped" in out and "no 1-thread run" in out
    assert f"wrote figure: {figure}" in out


def test_cli_campaign_with_energy_json(tmp_path: Path,
                                      seed_campaign_file: Callable[..., Path]) -> None:
    options = {"seed": 1, "frequencies": (1.2, 2.2), "cores": (1, 2, 4), "inputs": (1, 2)}
    path, figure = seed_campaign_file(**options), tmp_path / "seed.svg"
    code, out, err = run("energy", "plot", path, "--kind", "energy", "--input", "2", "-o",
                         figure, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["kind"] == "energy_view" and data["view"] == "energy"  # not a result kind
    assert data["efficiency"] == [] and data["has_energy"] is True
    assert {c["input"] for c in data["configurations"]} == {"2"}
    assert any(c["pareto"] for c in data["configurations"])
    assert data["figure"] == str(figure) and figure.read_text().lstrip().startswith("<?xml")
    # the tidy CSV of the same campaign, efficiency only, at the lower frequency
    csv = seed_campaign_file(suffix=".csv", **options)
    code, out, err = run("energy", "plot", csv, "--kind", "efficiency", "--frequency", "1.2",
                         "--json")
    assert code == 0, err
    (table,) = json.loads(out)["efficiency"]
    assert table["frequency_ghz"] == 1.2 and table["inputs"] == ["1", "2"]
    assert {r["threads"] for r in table["rows"]} == {1, 2, 4}
    assert json.loads(out)["figure"] is None


def test_cli_without_a_figure_does_not_import_matplotlib(
        seed_campaign_file: Callable[..., Path]) -> None:
    """The tables and --json need NumPy only; matplotlib (0.3 s) loads for --plot."""
    assert HEATMAP_MODES == MODES
    path = seed_campaign_file(seed=1, frequencies=(1.2, 2.2), cores=(1, 2), inputs=(1,))
    code = ("import contextlib, io, sys\n"
            "from phasekit.cli import entry_point\n"
            f"sys.argv = ['phasekit', 'energy', 'plot', {str(path)!r}, '--json']\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            "        entry_point()\n"
            "    except SystemExit as exc:\n"
            "        assert exc.code in (0, None), exc.code\n"
            "print('matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"


@pytest.mark.parametrize("option, value", [("kind", "pie"), ("mode", "wavy")])
def test_views_refuse_an_unknown_kind_and_plot_an_unknown_mode(option: str, value: str,
                                                               tmp_path: Path) -> None:
    """The library refuses what the command line refuses, naming the parameter; the command
    says it with its option, before it reads the campaign."""
    runs = campaign_runs(vm_campaign())
    with pytest.raises(UsageError) as info:
        if option == "kind":
            campaign_views(runs, kind=value)
        else:
            plot_campaign(tmp_path / "x.png", tables=efficiency_tables(vm_campaign()), mode=value)
    assert (info.value.parameter, info.value.value) == (option, value)
    assert str(info.value).startswith(f"{option}={value!r}: expected one of ")
    code, out, err = run("energy", "plot", tmp_path / "missing.csv", f"--{option}", value)
    assert code == 2 and out == ""
    assert err.startswith(f"phasekit: error: --{option} {value}: expected one of ")


@pytest.mark.parametrize("name, content, args, expected", [
    ("missing.json", None, (), 3),
    ("notjson.json", "{not json", (), 3),
    ("notime.csv", "threads,input,power_w\n1,a,5\n2,a,3\n", (), 3),  # no time, no energy
    ("notime_energy.csv", "threads,input,energy_j\n1,a,5\n2,a,3\n", ("--kind", "efficiency"),
     3),
    ("nanotime.csv", "threads,input,time_s\n1,a,\n2,a,\n", (), 3),
    ("notime.json", '{"kind": "campaign", "version": 1, "runs": [{"threads": 1}]}', (), 3),
    ("ok.csv", "threads,input,time_s\n1,a,2\n2,a,1.2\n", ("--kind", "pie"), 2),
    ("ok.csv", "threads,input,time_s\n1,a,2\n2,a,1.2\n", ("--mode", "wavy"), 2),
    ("ok.csv", "threads,input,time_s\n1,a,2\n2,a,1.2\n", ("--region", "solve"), 2),
    ("ok.csv", "threads,input,time_s\n1,a,2\n2,a,1.2\n", ("--input", "b"), 2),
    ("ok.csv", "threads,input,time_s\n1,a,2\n2,a,1.2\n", ("-o", "figure.txt"), 2),
])
def test_cli_bad_input_is_one_clear_line(tmp_path: Path, name: str, content: str | None,
                                         args: tuple[str, ...], expected: int) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    args = tuple(str(tmp_path / a) if a.endswith(".txt") else a for a in args)
    code, out, err = run("energy", "plot", path, *args)
    assert code == expected, err
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("phasekit: error:")
    if expected == 3:
        assert name in err
    if "notime" in name:
        assert "time_s" in err


def test_the_within_5_percent_border_follows_the_cells_edges() -> None:
    """The border of a region of cells: one segment per cell side that faces a cell outside
    it (or the edge), so a 2 x 2 block has 8 and an L of three cells 8 too."""
    from phasekit.plot.common import figure
    from phasekit.plot.energy import _region_edges

    def segments(mask: list[list[bool]]) -> list[list[tuple[float, float]]]:
        ax = figure(3.0, 3.0).add_subplot()
        _region_edges(ax, np.array(mask))
        return [[(float(x), float(y)) for x, y in s] for c in ax.collections
                for s in c.get_segments()]

    assert len(segments([[True, True], [True, True]])) == 8
    corner = segments([[True, True], [True, False]])
    assert len(corner) == 8
    assert [(1.5, -0.5), (1.5, 0.5)] in corner  # the right side of cell (0, 1)
    assert [(0.5, 0.5), (1.5, 0.5)] in corner  # between cell (0, 1) and (1, 1), outside
    assert [(-0.5, 0.5), (0.5, 0.5)] not in corner  # between cells (0, 0) and (1, 0)
    assert segments([[False, False]]) == []
