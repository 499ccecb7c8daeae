"""Region markers (Silva 2024 §3.2): Python and C markers write the same lines; a region's time
is the union of its threads' intervals."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from phasekit.errors import InputError
from phasekit.regions import ENV, c_header, read_regions, region, union_length


def test_union_counts_overlaps_once() -> None:
    assert union_length([(1, 0, 10), (2, 5, 15), (3, 20, 30), (4, 21, 22)]) == 25
    assert union_length([(1, 0, 10), (1, 0, 10)]) == 10
    assert union_length([]) == 0


def test_python_markers_from_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marks = tmp_path / "regions.txt"
    monkeypatch.setenv(ENV, str(marks))

    def work() -> None:
        with region("solve"):
            time.sleep(0.05)

    with region("main"):
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    got = read_regions(marks)
    assert len(got["solve"]) == 4 and len(got["main"]) == 1
    assert len({thread for thread, _, _ in got["solve"]}) == 4
    solve, main = union_length(got["solve"]), union_length(got["main"])
    assert 0.05e9 <= solve <= main  # concurrent threads: counted once, inside main
    assert solve < 4 * 0.05e9


def test_markers_do_nothing_outside_a_campaign(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with region("x"):
        pass


@pytest.mark.parametrize("text, line", [("S a 1 10\nE a 1 20\nE a 1 30\n", 3),
                                        ("S a 1 10\n", 1), ("S a 1\n", 1),
                                        ("S a 1 10\nX a 1 20\n", 2)])
def test_bad_marker_files_name_the_line(tmp_path: Path, text: str, line: int) -> None:
    marks = tmp_path / "m.txt"
    marks.write_text(text)
    with pytest.raises(InputError) as info:
        read_regions(marks)
    assert info.value.line == line


@pytest.mark.needs_gcc
def test_c_header_markers(tmp_path: Path) -> None:
    source = tmp_path / "prog.c"
    source.write_text(f'#include "{c_header()}"\n' + r"""
#include <pthread.h>
static void *work(void *arg) {
    (void)arg;
    phasekit_region_start("kernel");
    struct timespec d = {0, 20000000};
    nanosleep(&d, NULL);
    phasekit_region_stop("kernel");
    return NULL;
}
int main(void) {
    pthread_t t[3];
    phasekit_region_start("all");
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    phasekit_region_stop("all");
    return 0;
}
""")
    exe = tmp_path / "prog"
    subprocess.run(["gcc", "-O1", "-Wall", "-Werror", "-pthread", str(source), "-o", str(exe)],
                   check=True)
    marks = tmp_path / "regions.txt"
    subprocess.run([str(exe)], check=True, env={ENV: str(marks)})
    got = read_regions(marks)
    assert len(got["kernel"]) == 3 and len({t for t, _, _ in got["kernel"]}) == 3
    assert 0.02e9 <= union_length(got["kernel"]) <= union_length(got["all"])
    subprocess.run([str(exe)], check=True, env={})  # without the variable: nothing, no crash
