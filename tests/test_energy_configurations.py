"""The table of configurations without pandas (``configuration_columns``) against pandas's
group-by of the same runs (the reference it replaces), on CSV files read both ways."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from phasekit.energy.fit import Configurations, configuration_columns, configurations, fit_energy
from phasekit.errors import InputError
from phasekit.io.table import read_csv_columns, read_csv_table


def reference(table: pd.DataFrame, inputs: tuple[str, ...] = ()) -> pd.DataFrame:
    """Per (input, cores, frequency): mean energy, mean time over the positive ones, runs, the
    first label: pandas's group-by, the way the table was built before."""
    table = table.copy()
    if "cores" not in table.columns:
        table["cores"] = table["threads"]
    if "status" in table.columns:
        table = table[table["status"].astype(str) == "ok"]
    controlled = ("frequency_ghz" in table.columns
                  and pd.to_numeric(table["frequency_ghz"], errors="coerce").notna().any())
    number = pd.to_numeric(table["input"], errors="coerce")
    if number.isna().any():
        ranks: dict[str, int] = {}
        for label in [*inputs, *table["input"].astype(str)]:
            ranks.setdefault(label, len(ranks) + 1)
        number = table["input"].astype(str).map(ranks)
    out = pd.DataFrame({
        "frequency_ghz": (pd.to_numeric(table["frequency_ghz"], errors="coerce") if controlled
                          else np.nan),
        "cores": pd.to_numeric(table["cores"], errors="coerce").astype(float),
        "input": number.astype(float),
        "energy_j": pd.to_numeric(table["energy_j"], errors="coerce").astype(float),
        "time_s": (pd.to_numeric(table["time_s"], errors="coerce").astype(float)
                   if "time_s" in table.columns else np.nan),
        "input_label": table["input"].astype(str)})
    usable = ((out["cores"] >= 1) & (out["input"] > 0) & (out["energy_j"] > 0))
    if controlled:
        usable &= out["frequency_ghz"] > 0
    out = out[usable]
    out.loc[~(out["time_s"] > 0), "time_s"] = np.nan
    grouped = out.groupby(["input", "cores", "frequency_ghz"], sort=True, dropna=False)
    return grouped.agg(energy_j=("energy_j", "mean"), time_s=("time_s", "mean"),
                       runs=("energy_j", "size"),
                       input_label=("input_label", "first")).reset_index()[
        ["frequency_ghz", "cores", "input", "energy_j", "time_s", "runs", "input_label"]]


TABLES = {
    "repeated runs, a failed one, a missing time": (
        "frequency_ghz,cores,input,energy_j,time_s,status\n"
        "2.0,4,1.0,10.0,2.0,ok\n1.5,4,1.0,12.0,3.0,ok\n2.0,4,1.0,14.0,,ok\n"
        "2.0,8,1.0,8.0,1.0,failed\n2.0,8,1.0,9.0,1.5,ok\n2.0,4,2.0,20.0,4.0,ok\n"
        "1.5,8,2.0,18.0,0,ok\n"),
    "text inputs, threads for cores, no time": (
        "threads,input,frequency_ghz,energy_j\n"
        "2,large,2.2,30\n2,small,2.2,10\n4,small,2.2,7\n4,large,1.8,25\n2,small,2.2,12\n"),
    "frequency not controlled, unusable rows": (
        "cores,input,frequency_ghz,energy_j,time_s\n"
        "1,1,,5.0,1.0\n2,1,,3.0,0.6\n2,1,,0,0.5\n0,1,,4.0,1.0\n4,2,,6.0,0.7\n2,1,,3.4,0.5\n"),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_numpy_columns_match_the_pandas_group_by(name: str, tmp_path: Path) -> None:
    path = tmp_path / "campaign.csv"
    path.write_text(TABLES[name])
    expected = reference(read_csv_table(path))
    with pytest.warns() if "unusable" in name else contextlib.nullcontext():
        from_columns = configuration_columns(read_csv_columns(path), source=str(path))
    got = from_columns.to_frame()
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True),
                                  check_dtype=False)
    # the same from a DataFrame of the same file, and as a DataFrame
    with pytest.warns() if "unusable" in name else contextlib.nullcontext():
        frame = configurations(read_csv_table(path), source=str(path))
    pd.testing.assert_frame_equal(frame, got)


def test_a_fit_is_the_same_from_columns_and_from_a_dataframe(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = ["frequency_ghz,cores,input,energy_j,time_s"]
    for f in (1.2, 1.6, 2.0, 2.4):
        for p in (1, 2, 4, 8, 16):
            for n in (1, 2):
                t = n * (0.1 + 0.9 / p) * (2.4 / f) ** 0.8
                rows.append(f"{f},{p},{n},{t * (5 + 3 * p + 4 * f ** 2) * rng.uniform(0.97, 1.03)},"
                            f"{t}")
    path = tmp_path / "campaign.csv"
    path.write_text("\n".join(rows) + "\n")
    columns = configuration_columns(read_csv_columns(path))
    assert isinstance(columns, Configurations) and len(columns) == 40
    a = fit_energy(columns, n_train=12, compare=False)
    b = fit_energy(configurations(read_csv_table(path)), n_train=12, compare=False)
    assert a.params == b.params and a.mpe_holdout == b.mpe_holdout and a.train == b.train
    assert fit_energy(columns, input="2", compare=False).n_configs == 20


def test_no_energy_says_so(tmp_path: Path) -> None:
    path = tmp_path / "campaign.csv"
    path.write_text("frequency_ghz,cores,input,energy_j\n2.0,4,1,\n2.0,8,1,\n")
    with pytest.raises(InputError, match="measured no energy"):
        configuration_columns(read_csv_columns(path), source=str(path))
    path.write_text("frequency_ghz,cores,energy_j\n2.0,4,1\n")
    with pytest.raises(InputError, match="missing column"):
        configuration_columns(read_csv_columns(path), source=str(path))


def test_threads_stand_for_cores_and_missing_inputs_are_labelled(tmp_path: Path) -> None:
    table = {"threads": np.array([2.0, 4.0, 4.0]), "cores": np.array([np.nan] * 3),
             "input": np.array([None, None, "big"], dtype=object),
             "frequency_ghz": np.array([2.0, 2.0, 2.0]), "energy_j": np.array([5.0, 3.0, 9.0])}
    got = configuration_columns(table)
    assert got["cores"].tolist() == [2.0, 4.0, 4.0]
    assert sorted(got["input_label"].tolist()) == ["-", "-", "big"]
    with pytest.raises(InputError, match="columns of different lengths"):
        configuration_columns({**table, "energy_j": np.array([5.0, 3.0])}, source="t.csv")
