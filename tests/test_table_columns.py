"""phasekit.io.table.read_csv_columns: read_csv_table's cells parsed without pandas, the way
pandas.to_numeric parses them (what is a number, integer or float columns, the same errors)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from phasekit.errors import InputError
from phasekit.io.inputs import LARGEST
from phasekit.io.table import read_csv_columns

CELLS = ["1", "+1", "-0", "01", "1.", ".5", "1e3", "2.5", "NAN", "1_000", "\u0661\u0662", "abc",
         "inf", "1e101", "9999999999999999999", "", "NA", "nan", "0x10", "-2.0"]


@pytest.mark.parametrize("seed", range(20))
def test_columns_parse_like_pandas_to_numeric(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    pool = list(rng.choice(CELLS, size=rng.integers(1, 5), replace=False))
    rows = [",".join(str(rng.choice(pool)) for _ in range(3)) for _ in range(rng.integers(1, 5))]
    path = tmp_path / "t.csv"
    path.write_text("a,time_s,input\n" + "\n".join(rows) + "\n")
    try:
        columns = read_csv_columns(path)
    except InputError as exc:
        columns = None
        message = str(exc)
    missing = {"", "NA", "nan"}
    expected_error = None  # pandas' verdict, column by column in header order
    for name, j in (("a", 0), ("time_s", 1)):
        cells = [r.split(",")[j] for r in rows]
        want = pd.to_numeric(pd.Series([None if c in missing else c for c in cells],
                                       dtype=object), errors="coerce")
        bad = want.isna().to_numpy() & ~np.isin(cells, list(missing))
        values = want.to_numpy(dtype=float, na_value=np.nan)
        if expected_error is None and bad.any() and not bad.all():
            expected_error = (name, "expected a number")
        elif expected_error is None and not bad.any() and np.any(~(np.abs(values) <= LARGEST)
                                                                  & ~np.isnan(values)):
            expected_error = (name, "plausible")
        elif expected_error is None and name == "time_s" and not bad.any() and np.any(values < 0):
            expected_error = (name, "negative")
        if columns is None:
            continue
        if bad.all():
            assert columns[name].tolist() == cells  # text
        else:
            assert not bad.any()
            assert np.array_equal(columns[name], want.to_numpy(dtype=float, na_value=np.nan),
                                  equal_nan=True)
            integer = want.dtype.kind in "iu" and not want.isna().any()
            assert (columns[name].dtype.kind in "iu") == integer
    assert columns is None or columns["input"].tolist() == [r.split(",")[2] for r in rows]
    assert (columns is None) == (expected_error is not None)
    if columns is None:
        assert expected_error is not None
        column, fragment = expected_error
        assert fragment in message and f"column '{column}'" in message, (expected_error, message)


def test_columns_edge_cells(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("n,big,x,input\n1,9999999999999999999,1_000,\u0661\n-0,1,abc,2\n")
    columns = read_csv_columns(path)
    assert columns["n"].dtype == np.int64 and columns["n"].tolist() == [1, 0]
    assert columns["big"].dtype == np.uint64  # pandas's choice beyond int64
    assert columns["x"].tolist() == ["1_000", "abc"]  # pandas reads neither as a number
    assert columns["input"].tolist() == ["\u0661", "2"]
    path.write_text("threads,time_s\n1,1_000\n2,3\n")
    with pytest.raises(InputError, match=r"line 2, column 'time_s': expected a number, found "
                                         r"'1_000'"):
        read_csv_columns(path)


def test_read_csv_columns_imports_no_pandas(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("threads,input,time_s\n1,a,2\n2,a,1.5\n")
    code = ("import sys\nfrom phasekit.io.table import read_csv_columns\n"
            f"read_csv_columns({str(path)!r})\nprint('pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"
