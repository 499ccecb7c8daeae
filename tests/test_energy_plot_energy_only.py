"""``phasekit energy plot`` of campaigns that measured energy but no run time (PaScal's tables
of frequency_ghz, cores, input, energy_j), and its path without pandas.

The energy-only table is written here (the real PaScal tables carry no license to copy them
into the repository: they are read where they are, and the test skips without them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import helpers
from phasekit.energy.efficiency import (
    NO_TIME_NOTE,
    campaign_columns,
    campaign_frame,
    configuration_table,
    efficiency_table,
    efficiency_tables,
    pareto_mask,
)
from phasekit.errors import InputError
from phasekit.io.table import read_csv_columns
from phasekit.plot.energy import energy_figure

run = helpers.run
PNG = b"\x89PNG\r\n\x1a\n"
FREQUENCIES = (1.2, 1.6, 2.0)
CORES = (1, 2, 4, 8)


def energy(f: float, p: int, n: int) -> float:
    """A PaScal-like energy: static power over a time that shrinks with cores and frequency,
    plus dynamic power growing with f^3; its least is inside the grid."""
    time_s = n * 10.0 * (0.2 + 0.8 / p) / f
    return time_s * (20.0 + p * (2.0 + 1.5 * f**3))


def energy_only_csv(tmp_path: Path) -> Path:
    """frequency_ghz, cores, input, energy_j over 3 x 4 x 2 configurations, as PaScal's
    tables have them (floats everywhere)."""
    lines = ["frequency_ghz,cores,input,energy_j"]
    lines += [f"{f},{float(p)},{float(n)},{energy(f, p, n)!r}"
              for n in (1, 2) for f in FREQUENCIES for p in CORES]
    path = tmp_path / "pascal.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def least(n: int) -> tuple[float, float, int]:
    """The least energy of input ``n`` and its (frequency, cores)."""
    return min((energy(f, p, n), f, p) for f in FREQUENCIES for p in CORES)


# --- library -------------------------------------------------------------------------------------
def test_energy_only_tables(tmp_path: Path) -> None:
    columns = read_csv_columns(energy_only_csv(tmp_path))
    runs = campaign_columns(columns)
    assert not runs.has_time and runs.inputs == ("1.0", "2.0") and len(runs) == 24
    assert efficiency_tables(columns) == ()
    with pytest.raises(InputError, match="time_s"):
        efficiency_table(columns, source="pascal.csv")
    configs = configuration_table(columns)
    assert configs.has_energy and not configs.has_time and configs.unit == "cores"
    assert configs.notes == (NO_TIME_NOTE,)
    assert configs.frequencies == FREQUENCIES and len(configs) == 24
    assert not configs.columns["pareto"].any()  # no time: no time-energy frontier
    assert np.isnan(configs.columns["time_s"]).all()
    for label, n in (("1.0", 1), ("2.0", 2)):
        mine = configs.columns["input"] == label
        k = np.argmin(np.where(mine, configs.columns["energy_j"], np.inf))
        e, f, p = least(n)
        assert configs.columns["energy_j"][k] == pytest.approx(e)
        assert (configs.columns["frequency_ghz"][k], configs.columns["cores"][k]) == (f, p)
    # the same through pandas, for library callers
    frame = configs.frame
    assert list(frame.columns) == ["input", "cores", "threads", "frequency_ghz", "time_s",
                                   "energy_j", "power_w", "runs", "pareto"]
    assert frame["energy_j"].to_numpy() == pytest.approx(configs.columns["energy_j"])
    data = json.loads(json.dumps(configs.to_dict()))
    assert data["has_time"] is False and data["configurations"][0]["time_s"] is None
    tidy, order = campaign_frame(columns)
    assert order == ("1.0", "2.0") and tidy["time_s"].isna().all() and len(tidy) == 24


def test_energy_only_figure(tmp_path: Path) -> None:
    configs = configuration_table(read_csv_columns(energy_only_csv(tmp_path)))
    fig = energy_figure(configs=configs)
    titles = [ax.get_title() for ax in fig.axes]
    assert "energy vs time, every input" not in titles  # needs time
    assert len(fig.axes) == 3  # one heatmap per input and the colour bar
    assert any(NO_TIME_NOTE in t.get_text() for t in fig.texts)
    for k, n in enumerate((1, 2)):
        ax = fig.axes[k]
        e, f, p = least(n)
        assert ax.get_title() == f"input {n:.1f}: least {e:.4g} J"
        image = ax.get_images()[0].get_array()
        assert image.shape == (len(CORES), len(FREQUENCIES))
        assert image.min() == pytest.approx(1.0)  # relative to the input's least
        i, j = CORES.index(p), FREQUENCIES.index(f)
        assert image[i, j] == pytest.approx(1.0)
        box = next(line for line in ax.get_lines() if line.get_linewidth() > 2)
        assert np.nanmin(box.get_xdata()) == j - 0.5 and np.nanmin(box.get_ydata()) == i - 0.5
        assert not [line for line in ax.get_lines() if line.get_marker() == "o"]  # no frontier


@pytest.mark.parametrize("seed", range(5))
def test_pareto_mask_is_choose_pareto_front(seed: int) -> None:
    """pareto_mask against a naive dominance check; choose.pareto_front gives its points,
    fastest first."""
    from phasekit.energy.choose import pareto_front

    rng = np.random.default_rng(seed)
    t = rng.integers(1, 9, 60).astype(float)  # ties on purpose
    e = rng.integers(1, 9, 60).astype(float)
    t[rng.integers(0, 60, 3)] = np.nan
    e[rng.integers(0, 60, 3)] = np.inf
    mask = pareto_mask(t, e)
    assert sorted(np.flatnonzero(mask)) == sorted(pareto_front(t, e).tolist())
    # naive: finite, and no point at least as good in both and better in one; of exact
    # duplicates the first
    finite = np.isfinite(t) & np.isfinite(e)
    naive = [bool(finite[i]) and not any(
        finite[k] and ((t[k] <= t[i] and e[k] <= e[i] and (t[k] < t[i] or e[k] < e[i]))
                       or (t[k] == t[i] and e[k] == e[i] and k < i))
        for k in range(t.size)) for i in range(t.size)]
    assert mask.tolist() == naive
    front = pareto_front(t, e)
    assert np.all(np.diff(t[front]) > 0)  # fastest first
    assert not pareto_mask(np.zeros(0), np.zeros(0)).any()


# --- command line ----------------------------------------------------------------------------
def test_cli_energy_only_table(tmp_path: Path) -> None:
    path, figure = energy_only_csv(tmp_path), tmp_path / "pascal.png"
    code, out, err = run("energy", "plot", path, "--plot", figure)
    assert code == 0, err
    assert figure.read_bytes()[:8] == PNG
    assert out.count(NO_TIME_NOTE) == 1 and f"note: {NO_TIME_NOTE}" in out
    e, f, p = least(1)
    assert f"input 1.0: least energy {e:.4g} J at {p} cores, {f:g} GHz" in out
    assert "Efficiency" not in out
    code, out, err = run("energy", "plot", path, "--json", "--input", "2.0")
    assert code == 0, err
    data = json.loads(out)
    assert data["efficiency"] == [] and data["has_energy"] is True and data["has_time"] is False
    assert data["notes"] == [NO_TIME_NOTE]
    assert {c["input"] for c in data["configurations"]} == {"2.0"}
    assert not any(c["pareto"] for c in data["configurations"])
    code, out, err = run("energy", "plot", path, "--kind", "efficiency")
    assert code == 3 and out == ""
    assert err.startswith("phasekit: error:") and "time_s" in err and "pascal.csv" in err
    assert len(err.strip().splitlines()) == 1


PROBE = """
import contextlib, io, json, sys
sys.argv = ["phasekit", *json.loads(sys.argv[1])]
from phasekit.cli import entry_point
with contextlib.redirect_stdout(io.StringIO()):
    try:
        entry_point()
    except SystemExit as exc:
        assert exc.code in (0, None), exc.code
print(json.dumps([m for m in ("pandas", "scipy") if m in sys.modules]))
"""


@pytest.mark.slow
def test_cli_plot_imports_no_pandas(tmp_path: Path,
                                   seed_campaign_file: Callable[..., Path]) -> None:
    """Reading a campaign or a CSV, the tables and the figure: NumPy and matplotlib only."""
    campaign = seed_campaign_file(seed=0, frequencies=(1.2, 2.4), cores=(1, 2, 4), inputs=(1, 2))
    for source in (campaign, energy_only_csv(tmp_path)):
        argv = ["energy", "plot", str(source), "--plot", str(tmp_path / "f.png"), "--json"]
        done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv)],
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout.strip().splitlines()[-1]) == [], source.name


# --- the real PaScal tables (not copied into tests/data: no license) -----------------------
@pytest.mark.slow
def test_every_real_pascal_table_plots(tmp_path: Path,
                                      external_data: Callable[[str], Path]) -> None:
    files = sorted(external_data("energy/pascal_dev").glob("*.csv"))
    assert files
    for path in files:
        columns = read_csv_columns(path)
        configs = configuration_table(columns, source=str(path))
        assert configs.has_energy and not configs.has_time, path.name
        assert efficiency_tables(columns) == ()
        fig = energy_figure(configs=configs)
        assert len(fig.axes) == len(configs.inputs) + 1, path.name
        energies = configs.columns["energy_j"]
        for ax, label in zip(fig.axes, configs.inputs, strict=False):
            mine = energies[configs.columns["input"] == label]
            assert ax.get_title() == f"input {label}: least {np.nanmin(mine):.4g} J", path.name
            assert np.nanmin(ax.get_images()[0].get_array()) == pytest.approx(1.0)
    figure = tmp_path / "real.png"
    code, out, err = run("energy", "plot", files[0], "--plot", figure)
    assert code == 0, err
    assert figure.read_bytes()[:8] == PNG and f"note: {NO_TIME_NOTE}" in out


# --- energy choose on an energy-only table: no time column, limit or frontier in time ---------
def test_cli_choose_energy_only_has_no_time(tmp_path: Path) -> None:
    from phasekit.energy.table import NO_TIME_CHOICE_NOTE

    path, figure = energy_only_csv(tmp_path), tmp_path / "choice.png"
    code, out, err = run("energy", "choose", path, "--no-uncertainty", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["with_time"] is False
    for choice, n in zip(data["choices"], (1, 2), strict=True):
        best = choice["best"]
        e, f, p = least(n)  # fitted on every configuration: the measured least
        assert (best["frequency_ghz"], best["cores"]) == (f, p)
        assert best["measured_energy_j"] == pytest.approx(e)
        assert best["time_s"] is None and best["power_w"] is None and choice["pareto"] == []
    code, out, err = run("energy", "choose", path, "--no-uncertainty", "--input", "1.0",
                         "--plot", figure)
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.lstrip().startswith("input "))
    assert "time" not in header and "predicted J" in header
    assert f"note: {NO_TIME_CHOICE_NOTE}" in out
    assert "Pareto frontier (time, energy)" not in out  # the timed campaign's frontier line
    assert figure.read_bytes()[:8] == PNG


def test_choose_energy_only_figure_never_plots_a_model_time(tmp_path: Path) -> None:
    """An energy-only campaign's choice figure: energy over frequency x cores, predicted and
    measured; no axis is a time (the model's "time" is no time), and the star is on the
    chosen configuration, the campaign's least here."""
    from phasekit.energy.fit import configurations
    from phasekit.energy.workflow import fit_then_choose
    from phasekit.io.table import read_csv_table

    configs = configurations(read_csv_table(energy_only_csv(tmp_path)))
    result = fit_then_choose(configs, inputs=["1.0"], uncertainty=False).result
    fig = result.plot()
    assert not any("time" in label for ax in fig.axes
                   for label in (ax.get_xlabel(), ax.get_ylabel()))
    model, measured = (ax for ax in fig.axes if ax.get_images())
    assert (model.get_xlabel(), model.get_ylabel()) == ("frequency (GHz)", "cores")
    best = result.choices[0].best
    for ax in (model, measured):
        star = next(line for line in ax.get_lines() if line.get_marker() == "*")
        assert (star.get_xdata()[0], star.get_ydata()[0]) == (
            list(FREQUENCIES).index(best.frequency_ghz), list(CORES).index(best.cores))


def test_choose_refuses_a_time_limit_without_times(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from phasekit.energy.fit import configurations
    from phasekit.energy.workflow import fit_then_choose
    from phasekit.errors import UsageError
    from phasekit.io.table import read_csv_table

    path = energy_only_csv(tmp_path)
    with pytest.raises(UsageError, match=r"max_time_s=60\.0: the campaign measured energy "
                                         r"but no run time"):
        fit_then_choose(configurations(read_csv_table(path)), max_time_s=60.0)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was fitted")

    monkeypatch.setattr("phasekit.energy.fit.fit_energy", never)  # checked before the fit
    code, out, err = run("energy", "choose", path, "--max-time", "30s")
    assert code == 2 and out == ""
    assert err.strip() == ("phasekit: error: --max-time 30s: pascal.csv measured energy but no "
                           "run time; there is no time to limit")
