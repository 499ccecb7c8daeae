"""The Paraver reader's own machinery (phasekit.io.paraver and its compiled kernel): its two
line parsers agree, gzip streams are read as gzip reads them, message sizes go to the calls
of threads whose entries are out of order. The reader against the format's ground truth and
the naive parser: tests/test_trace_io.py.
"""

from __future__ import annotations

import gzip
import itertools
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from phasekit.errors import InputError, PhasekitWarning
from phasekit.io import _paraver
from phasekit.io.paraver import read_paraver
from test_trace_io import random_trace

HEADER = "#Paraver (01/01/2024 at 10:00):1000_ns:1(2):1:2(1:1,1:1),0\n"


def _read(path: Path, **kwargs) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhasekitWarning)
        return read_paraver(path, **kwargs).calls


@pytest.mark.parametrize("seed", range(4))
def test_fast_and_exact_parsers_agree(tmp_path: Path, seed: int) -> None:
    """Lines of the simple form take the fast way; the same records with \\r\\n or with
    fields of 17-20 digits (leading zeros) take the exact way: the same calls."""
    text = random_trace(seed, n_steps=300, n_counters=3)
    padded = re.sub(r"^(2:\d+:\d+:\d+:\d+:)(\d+)", lambda m: m.group(1) + m.group(2).zfill(19),
                    text, flags=re.MULTILINE)
    assert padded != text
    frames = []
    for i, variant in enumerate([text, text.replace("\n", "\r\n"), padded]):
        prv = tmp_path / f"v{i}.prv"
        prv.write_bytes(variant.encode())
        frames.append(_read(prv, chunk_bytes=97 + seed))
    for frame in frames[1:]:
        pd.testing.assert_frame_equal(frame, frames[0])


def test_gzip_members_and_padding(tmp_path: Path) -> None:
    """Several gzip members, zero padding between them (as gzip itself reads them)."""
    text = random_trace(7, n_steps=400).encode()
    plain = tmp_path / "t.prv"
    plain.write_bytes(text)
    cut = [0, len(text) // 3, len(text) // 2, len(text)]
    packed = tmp_path / "t.prv.gz"
    with open(packed, "wb") as out:
        for a, b in itertools.pairwise(cut):
            out.write(gzip.compress(text[a:b]) + b"\x00" * 7)
    assert gzip.decompress(packed.read_bytes().replace(b"\x00" * 7, b"")) == text
    pd.testing.assert_frame_equal(_read(packed, chunk_bytes=1000), _read(plain))


@pytest.mark.parametrize("tail", [b"garbage", b"\x1f\x8b\x08"])
def test_gzip_trailing_junk_is_an_input_error(tmp_path: Path, tail: bytes) -> None:
    prv = tmp_path / "t.prv.gz"
    prv.write_bytes(gzip.compress(random_trace(3).encode()) + tail)
    with pytest.raises(InputError, match="decompress") as info:
        _read(prv)
    assert info.value.path == str(prv)


def test_gzip_bad_checksum_is_an_input_error(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(random_trace(4).encode()))
    data[-8] ^= 0xFF  # the CRC-32 of the member
    prv = tmp_path / "t.prv.gz"
    prv.write_bytes(bytes(data))
    with pytest.raises(InputError, match="decompress"):
        _read(prv)


def test_entries_out_of_order_still_find_their_messages(tmp_path: Path) -> None:
    """A thread whose calls are not in time order in the file: the message at t=55 belongs
    to the call entered at 50 (exit 60), written after the one entered at 100."""
    prv = tmp_path / "t.prv"
    prv.write_text(HEADER
                   + "2:1:1:1:1:100:50000001:3\n2:1:1:1:1:150:50000001:0\n"
                   + "2:1:1:1:1:50:50000001:4\n2:1:1:1:1:60:50000001:0\n"
                   + "2:1:1:2:1:10:50000001:3\n2:1:1:2:1:20:50000001:0\n"
                   + "3:1:1:1:1:55:56:2:1:2:1:15:16:4096:1\n")
    calls = _read(prv)
    assert calls["rank"].tolist() == [0, 0, 1]
    # rows of a rank keep program order until the contract's sort by time
    got = {(r, round(t * 1e9)): b for r, t, b in zip(calls["rank"], calls["time_s"],
                                                      calls["bytes"], strict=True)}
    assert got == {(0, 50): 4096.0, (0, 100): 0.0, (1, 10): 4096.0}


def test_the_kernels_reject_bad_arrays() -> None:
    """The C kernels check the types and sizes of what they are given instead of writing
    out of bounds."""
    dest = np.arange(4, dtype=np.int32)
    with pytest.raises(TypeError):
        _paraver.scatter_values(np.zeros(4, np.float32), dest, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="scatter_values"):
        _paraver.scatter_values(np.zeros(4), dest, np.zeros(3))  # a place past the output
    with pytest.raises(ValueError, match="scatter_codes"):  # an id past the remap table
        _paraver.scatter_codes(np.array([0, 1, 2, 5], np.int32), dest, np.zeros(3, np.int64),
                               np.empty(4, np.int8))
    with pytest.raises(ValueError, match="group_rows"):  # a thread id past the threads
        _paraver.group_rows(np.array([0, 3], np.int32), np.ones(2, np.int64), 1,
                            np.empty(2, np.int32), np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="27 arguments"):
        _paraver.scan()
    out = np.zeros(4)
    _paraver.scatter_values(np.arange(4.0), dest[::-1].copy(), out)
    assert out.tolist() == [3.0, 2.0, 1.0, 0.0]
