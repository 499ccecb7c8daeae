"""Function names and call sites as the source writes them (phasekit.io.symbols), and the
Paraver and OTF2 readers' call paths built from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasekit.io import symbols
from phasekit.io.paraver import read_paraver
from phasekit.io.symbols import demangle_cxx, function_name, site_label
from phasekit.trace import PATH_SEP

DATA = Path(__file__).parent / "data"

FUNCTIONS = [
    # Extrae's "abbreviation [full name]" of gfortran module procedures (a real code)
    ("__mpi_ro..mal_init [__mpi_routines_MOD_mpi_minimal_init]",
     "mpi_routines::mpi_minimal_init"),
    ("__bounda..field_bc [__boundary_MOD_field_bc]", "boundary::field_bc"),
    ("Domain::..ndexSets [Domain::CreateRegionIndexSets]", "Domain::CreateRegionIndexSets"),
    ("_ZN6Do..forceEv [_ZN6Domain5forceEv]", "Domain::force()"),
    # the main program: gfortran and Intel call it MAIN__, flang _QQmain
    ("MAIN__", "MAIN__"),
    ("_QQmain", "MAIN__"),
    # module procedures of each compiler
    ("__boundary_MOD_field_bc", "boundary::field_bc"),
    ("__my_mod_MOD_do_it", "my_mod::do_it"),
    ("mod_mp_proc_", "mod::proc"),
    ("mpi_routines_mp_mpi_minimal_init_", "mpi_routines::mpi_minimal_init"),
    ("mod_MP_proc", "mod::proc"),
    ("_QMmodPproc", "mod::proc"),
    ("_QMmodSsubPproc", "mod::proc"),
    ("_QFhostPinner", "host::inner"),
    ("_QPproc", "proc"),
    # GCC clones are the function they were cloned from
    ("__boundary_MOD_field_bc.constprop.0", "boundary::field_bc"),
    ("solve.isra.0", "solve"),
    ("solve.part.1.cold", "solve"),
    ("inner.3", "inner"),
    # kept: ambiguous or already clean
    ("proc_", "proc_"),
    ("main", "main"),
    ("main._omp_fn.0", "main._omp_fn.0"),
    ("CalcForceForNodes(Domain&)", "CalcForceForNodes(Domain&)"),
    ("A::f(int) const", "A::f(int) const"),
    ("int main(int, char**)", "int main(int, char**)"),
    ("CommSend", "CommSend"),
    ("Unresolved", "Unresolved"),
    ("_NOT_Found", "_NOT_Found"),
    ("_QMmodEvar", "_QMmodEvar"),  # a flang variable, not a procedure
    ("operator[] [x]", "operator[] [x]"),  # brackets that are no abbreviation
    ("a..b", "a..b"),
    ("  padded  ", "padded"),
]


@pytest.mark.parametrize(("label", "name"), FUNCTIONS)
def test_function_name(label: str, name: str) -> None:
    assert function_name(label) == name


SITES = [
    ("31 (current_smooth.F90, epoch2d)", "current_smooth.F90:31"),
    ("101 (lulesh-comm.cc, lulesh2.0)", "lulesh-comm.cc:101"),
    ("101 (lulesh-comm.cc)", "lulesh-comm.cc:101"),  # no module
    ("31 (current_..oth.F90, epoch2d)", "current_..oth.F90:31"),  # only the abbreviation
    ("31 (current_..oth.F90) [31 (current_smooth.F90, epoch2d)]", "current_smooth.F90:31"),
    ("31 (current_..oth.F90) [31 (current_smooth.F90)]", "current_smooth.F90:31"),
    ("12 (my file.f90, my app)", "my file.f90:12"),  # spaces
    ("12 (grid(2d).f90, app)", "grid(2d).f90:12"),  # parentheses in the file name
    ("12 (solver.f90, app (deleted))", "solver.f90:12"),  # and in the module
    ("12 (solver.f90,app)", "solver.f90:12"),
    ("  7  ( a.c ,  b )  ", "a.c:7"),
    ("0 (Unresolved)", "Unresolved"),
    ("0 (_NOT_Found)", "_NOT_Found"),
    ("0 (., libc-2.28.so)", "libc-2.28.so"),  # a library without line information
    ("Unresolved", "Unresolved"),
    ("no site here", "no site here"),
]


@pytest.mark.parametrize(("label", "site"), SITES)
def test_site_label(label: str, site: str) -> None:
    assert site_label(label) == site


@pytest.mark.skipif(symbols._cxa_demangle() is None, reason="no C++ runtime library loads")
@pytest.mark.parametrize(("symbol", "name"), [
    ("_ZN6Domain5forceEv", "Domain::force()"),
    ("_Z17CalcForceForNodesR6Domain", "CalcForceForNodes(Domain&)"),
    ("_ZNK1A1fEi", "A::f(int) const"),
    ("__ZN6Domain5forceEv", "Domain::force()"),  # Mach-O's extra underscore
    ("_ZN6Domain5forceEv.constprop.0", "Domain::force()"),
    ("_Z1fSt6vectorIS_IiSaIiEESaIS1_EE",
     "f(std::vector<std::vector<int, std::allocator<int>>, "
     "std::allocator<std::vector<int, std::allocator<int>>>>)"),
])
def test_cxx_symbols_are_demangled(symbol: str, name: str) -> None:
    assert function_name(symbol) == name
    assert PATH_SEP not in function_name(symbol)


def test_without_a_cxx_runtime_symbols_stay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symbols, "_cxa_demangle", lambda: None)
    assert demangle_cxx("_ZN6Domain5forceEv") == "_ZN6Domain5forceEv"
    assert demangle_cxx("_Znot_a_symbol") == "_Znot_a_symbol"


def test_bad_cxx_symbols_stay() -> None:
    assert demangle_cxx("_Znot_a_symbol") == "_Znot_a_symbol"
    assert demangle_cxx("main") == "main"


PCF = """\
EVENT_TYPE
0    50000001    MPI Point-to-point
VALUES
3   MPI_Send
4   MPI_Recv
0   Outside MPI


EVENT_TYPE
0    70000001    Caller at level 1
0    70000002    Caller at level 2
0    70000003    Caller at level 3
VALUES
0   End
1 Unresolved
2 MAIN__
3 __mpi_ro..mal_init [__mpi_routines_MOD_mpi_minimal_init]
4 __bounda..field_bc [__boundary_MOD_field_bc]
5 __current..smooth [__current_smooth_MOD_current_smooth]


EVENT_TYPE
0    80000001    Caller line at level 1
0    80000002    Caller line at level 2
0    80000003    Caller line at level 3
VALUES
0   End
1 0 (Unresolved)
2 12 (epoch2d.F90, epoch2d)
3 31 (current_..oth.F90) [31 (current_smooth.F90, epoch2d)]
4 77 (mpi_routines.F90, epoch2d)
5 205 (boundary.F90, epoch2d)

"""


def test_paraver_call_paths_read_as_the_source(tmp_path: Path) -> None:
    """A trace whose .pcf has Extrae's abbreviated labels: the call paths and sites name
    the Fortran procedures and files in full, once."""
    prv = tmp_path / "epoch.prv"
    prv.write_text(
        "#Paraver (01/01/2024 at 10:00):1000_ns:1(2):1:2(1:1,1:1),0\n"
        # rank 0: MAIN__ (12) > mpi_minimal_init (77) > MPI_Send
        "2:1:1:1:1:100:50000001:3:70000001:3:70000002:2:80000001:4:80000002:2\n"
        "2:1:1:1:1:150:50000001:0\n"
        # rank 1: MAIN__ (12) > current_smooth (31) > field_bc (205) > MPI_Recv
        "2:1:1:2:1:100:50000001:4:70000001:4:70000002:5:70000003:2"
        ":80000001:5:80000002:3:80000003:2\n"
        "2:1:1:2:1:160:50000001:0\n")
    prv.with_suffix(".pcf").write_text(PCF)
    calls = read_paraver(prv).calls
    assert [str(p) for p in calls["call_path"]] == [
        "MAIN__ > mpi_routines::mpi_minimal_init",
        "MAIN__ > current_smooth::current_smooth > boundary::field_bc"]
    assert [str(p) for p in calls["call_lines"]] == [
        "epoch2d.F90:12 > mpi_routines.F90:77",
        "epoch2d.F90:12 > current_smooth.F90:31 > boundary.F90:205"]
    assert [str(s) for s in calls["call_site"]] == ["mpi_routines.F90:77",
                                                    "boundary.F90:205"]
    labels = " ".join(map(str, [*calls["call_path"].cat.categories,
                                *calls["call_lines"].cat.categories]))
    assert ".." not in labels and "[" not in labels and "_MOD_" not in labels


def test_lulesh_names_are_unchanged() -> None:
    """The LULESH trace's names were already clean C++: the same call paths and sites as
    the reader gave before names were cleaned."""
    calls = read_paraver(DATA / "paraver" / "lulesh_7+1_chop8.prv.gz").calls
    paths = sorted({str(p) for p in calls["call_path"]})
    assert paths == [
        "Unresolved > CalcForceForNodes > CommRecv", "Unresolved > CalcForceForNodes > CommSBN",
        "Unresolved > CalcForceForNodes > CommSend", "Unresolved > CalcQForElems > CommMonoQ",
        "Unresolved > CalcQForElems > CommRecv", "Unresolved > CalcQForElems > CommSend",
        "Unresolved > LagrangeNodal > CommRecv", "Unresolved > LagrangeNodal > CommSend",
        "Unresolved > LagrangeNodal > CommSyncPosVel",
        "Unresolved > Unresolved > TimeIncrement"]
    sites = {str(s) for s in calls["call_site"]}
    assert len(sites) == 104 and "lulesh.cc:214" in sites
    assert all(s.startswith(("lulesh-comm.cc:", "lulesh.cc:")) for s in sites)
    assert len(calls["call_lines"].cat.categories) == 148
    frames = {f for lines in calls["call_lines"].cat.categories for f in lines.split(PATH_SEP)}
    assert {f for f in frames if not f.startswith("lulesh")} == {"Unresolved"}


def test_otf2_call_paths_read_as_the_source(tmp_path: Path) -> None:
    """An OTF2 archive whose regions carry compiler symbols: the call path names them as the
    source does; the MPI call keeps its name."""
    otf2 = pytest.importorskip("otf2")
    from phasekit.io.otf2 import read_otf2

    with otf2.writer.open(str(tmp_path / "run"), timer_resolution=10**9) as archive:
        node = archive.definitions.system_tree_node("node")
        rank = archive.definitions.location_group("MPI Rank 0", system_tree_parent=node)
        writer = archive.event_writer("Master thread", group=rank)
        main = archive.definitions.region("_QQmain")
        inner = archive.definitions.region("__boundary_MOD_field_bc.constprop.0")
        send = archive.definitions.region("MPI_Send", paradigm=otf2.Paradigm.MPI)
        for t, (event, region) in enumerate([("enter", main), ("enter", inner),
                                             ("enter", send), ("leave", send),
                                             ("leave", inner), ("leave", main)]):
            getattr(writer, event)(10 * (t + 1), region)
    calls = read_otf2(tmp_path / "run").calls
    assert [str(c) for c in calls["call"]] == ["MPI_Send"]
    assert [str(p) for p in calls["call_path"]] == ["MAIN__ > boundary::field_bc"]
