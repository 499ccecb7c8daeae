"""A Fortran particle-in-cell code's MPI skeleton as Extrae traces it, with its ground truth.

:func:`fortran_pic` gives the :class:`~phasekit.synth.traces.Program` on ``n_ranks`` ranks
(:data:`PIC_RANKS`: the 1, 4 and 16 of the traces it follows), :func:`structure_truth` what a
structure analysis should find in it (:class:`StructureTruth`), :func:`write_fortran_pic`
writes the trace with the labels Extrae gives a gfortran binary (``names="extrae-fortran"``)
and the truth. Its shape, what such a trace shows:

- set-up: MPI_Init, MPI_Comm_size and MPI_Comm_rank (``mpi_routines::mpi_minimal_init``), three
  MPI_Bcast of the input deck, the initial field exchange (four MPI_Sendrecv Extrae recorded
  without call site), then a loop over the 2 particle species (one MPI_Allreduce each);
- the time-step loop, 10 iterations: the time step's MPI_Allreduce (``timestep::set_dt``),
  a particle loop whose trip count is drawn per time step from 58 to 66 (MPI_Allreduce at
  ``current_smooth.F90:31``), then a field-exchange loop over the 3 field components, each
  four MPI_Sendrecv without call site (the same signature as the set-up's);
- finalization: MPI_Allreduce once (the timing summary), MPI_Finalize.

The ranks form a periodic 2-D Cartesian grid (1x1, 2x2, 4x4); each exchange sends to the
neighbour in +x, -x, +y and -y and receives from the opposite one. Work per rank shrinks as
ranks grow (strong scaling). Line numbers and procedure names are our choice, in the style of
such a code.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasekit.errors import UsageError
from phasekit.synth.traces import Call, Loop, Program, parse_frame, write_paraver

__all__ = ["MAIN_LOOP", "PIC_RANKS", "CallTruth", "LoopTruth", "StructureTruth", "fortran_pic",
           "pic_suite", "structure_truth", "write_fortran_pic"]

#: The rank counts of the traces the program follows.
PIC_RANKS = (1, 4, 16)
#: The name of the time-step loop (:attr:`StructureTruth.main_loop`).
MAIN_LOOP = "time step"
#: Places of a call relative to the main loop (:attr:`CallTruth.place`).
SET_UP, IN_MAIN_LOOP, FINALIZATION = "set-up", "main loop", "finalization"

_TIME_STEPS = 10
_PARTICLE_TRIPS = range(58, 67)
_SPECIES = 2
_FIELD_COMPONENTS = 3
_CELLS = 512  # per side of the global grid
_GHOSTS = 3


def _grid(n_ranks: int) -> tuple[int, int]:
    """The most square ``nx x ny = n_ranks`` (as MPI_Dims_create), nx >= ny."""
    ny = max(d for d in range(1, math.isqrt(n_ranks) + 1) if n_ranks % d == 0)
    return n_ranks // ny, ny


def _field_exchange(n_ranks: int, burst_s: float) -> tuple[Call, ...]:
    """Four MPI_Sendrecv without call site: to the +x, -x, +y, -y neighbour."""
    nx, ny = _grid(n_ranks)
    halo = _GHOSTS * (_CELLS // min(nx, ny)) * 8

    def shifted(dx: int, dy: int) -> dict[int, int]:
        return {r: (r // nx + dy) % ny * nx + (r % nx + dx) % nx for r in range(n_ranks)}

    return tuple(Call("MPI_Sendrecv", (), peer=shifted(dx, dy), bytes=halo,
                      burst_s=burst_s if k == 0 else 2e-5, duration_s=2e-5)
                 for k, (dx, dy) in enumerate(((1, 0), (-1, 0), (0, 1), (0, -1))))


def fortran_pic(n_ranks: int) -> Program:
    """The particle-in-cell program on ``n_ranks`` ranks (module docstring)."""
    if isinstance(n_ranks, bool) or not isinstance(n_ranks, int) or n_ranks < 1:
        raise UsageError("expected a positive number of ranks", parameter="n_ranks",
                         value=n_ranks)
    work = 4.0 / n_ranks  # the 4-rank run's bursts, scaled
    init = "MAIN__@epoch2d.F90:72"

    def call(name: str, *path: str, **kw: Any) -> Call:
        return Call(name, tuple(path), **kw)

    set_up = (
        call("MPI_Init", init, "mpi_routines::mpi_minimal_init@mpi_routines.F90:31",
             burst_s=5e-3),
        call("MPI_Comm_size", init, "mpi_routines::mpi_minimal_init@mpi_routines.F90:33",
             burst_s=1e-5),
        call("MPI_Comm_rank", init, "mpi_routines::mpi_minimal_init@mpi_routines.F90:34",
             burst_s=1e-5),
        *[call("MPI_Bcast", "MAIN__@epoch2d.F90:95", f"deck::read_deck@deck.F90:{line}",
               bytes=size, burst_s=2e-4)
          for line, size in ((212, 1024), (230, 64), (247, 4096))],
        *_field_exchange(n_ranks, 1e-3 * work),
        Loop(_SPECIES, (call("MPI_Allreduce", "MAIN__@epoch2d.F90:101",
                             "setup::setup_species@setup.F90:384", bytes=8,
                             burst_s=2e-2 * work),),
             name="species set-up", site="setup::setup_species@setup.F90:380"),
    )
    time_step = Loop(_TIME_STEPS, (
        call("MPI_Allreduce", "MAIN__@epoch2d.F90:152", "timestep::set_dt@timestep.F90:88",
             bytes=8, burst_s=2e-4 * work),
        Loop(_PARTICLE_TRIPS, (call(
            "MPI_Allreduce", "MAIN__@epoch2d.F90:165",
            "particles::push_particles@particles.F90:402",
            "current_smooth::smooth_current@current_smooth.F90:31", bytes=8 * _CELLS,
            burst_s=1.5e-3 * work),),
             name="particles", site="particles::push_particles@particles.F90:398"),
        Loop(_FIELD_COMPONENTS, _field_exchange(n_ranks, 1e-4 * work),
             name="field exchange", site="boundary::field_bc@boundary.F90:118"),
    ), name=MAIN_LOOP, site="MAIN__@epoch2d.F90:150")
    finalization = (
        call("MPI_Allreduce", "MAIN__@epoch2d.F90:231", "timer::timer_summary@timer.F90:88",
             bytes=8, burst_s=2e-3),
        call("MPI_Finalize", "MAIN__@epoch2d.F90:240",
             "mpi_routines::mpi_close@mpi_routines.F90:61", burst_s=1e-3),
    )
    return Program(f"fortran-pic-{n_ranks}", n_ranks, (*set_up, time_step, *finalization),
                   binary="epoch2d",
                   description="a Fortran particle-in-cell code: set-up, 10 time steps "
                               "(a particle loop of 58-66 iterations, a field exchange "
                               "without call sites), finalization")


def pic_suite() -> dict[str, Program]:
    """The program at each of :data:`PIC_RANKS`, by name. Apart from
    :data:`phasekit.synth.traces.SUITE`, whose programs the structure analysis already
    recovers exactly."""
    programs = [fortran_pic(n) for n in PIC_RANKS]
    return {p.name: p for p in programs}


# --------------------------------------------------------------------------- the truth
def _label(call: Call | CallTruth) -> str:
    name = call.name if isinstance(call, Call) else call.call
    return f"{name} at {call.site}" if call.site else f"{name} (no call site)"


@dataclass(frozen=True)
class LoopTruth:
    """A loop as generated: ``name``; ``parent`` (None at the top level); ``iterations``
    per iteration of the parent as (fewest, most), equal when the count is fixed; the loop
    statement's ``function`` and ``site`` ("file:line"), "" when not given; ``calls``: the
    calls directly in its body, each ``"MPI_X at file:line"`` or ``"MPI_X (no call site)"``."""

    name: str
    parent: str | None
    iterations: tuple[int, int]
    function: str
    site: str
    calls: tuple[str, ...]

    @property
    def varies(self) -> bool:
        return self.iterations[0] != self.iterations[1]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "parent": self.parent, "iterations": list(self.iterations),
                "function": self.function, "site": self.site, "calls": list(self.calls)}


@dataclass(frozen=True)
class CallTruth:
    """A call site as generated: the MPI ``call``, the ``function`` making it and its ``site``
    ("file:line"; both "" for a call without call-site information), its ``place`` (set-up,
    main loop, finalization), the innermost ``loop`` around it (None: made once per run),
    the ``ranks`` making it."""

    call: str
    function: str
    site: str
    place: str
    loop: str | None
    ranks: tuple[int, ...]

    @property
    def label(self) -> str:
        return _label(self)

    def to_dict(self) -> dict[str, Any]:
        return {"call": self.call, "function": self.function, "site": self.site,
                "place": self.place, "loop": self.loop, "ranks": list(self.ranks)}


@dataclass(frozen=True)
class StructureTruth:
    """What a structure analysis of the program's trace should find: the ``main_loop``, every
    loop outer before inner in program order (``loops``) and every call site (``calls``), with
    the functions named as the source does (``module::procedure``, ``file:line``)."""

    program: str
    n_ranks: int
    main_loop: LoopTruth
    loops: tuple[LoopTruth, ...]
    calls: tuple[CallTruth, ...]

    def once(self, place: str) -> tuple[CallTruth, ...]:
        """The calls made once per run at ``place`` ("set-up" or "finalization")."""
        return tuple(c for c in self.calls if c.place == place and c.loop is None)

    @property
    def siteless(self) -> tuple[CallTruth, ...]:
        """The calls without call-site information, with the loop each belongs to."""
        return tuple(c for c in self.calls if not c.site)

    def loop(self, name: str) -> LoopTruth:
        found = [loop for loop in self.loops if loop.name == name]
        if not found:
            raise UsageError(f"no loop named {name!r}; loops: "
                             f"{', '.join(loop.name for loop in self.loops)}")
        return found[0]

    def to_dict(self) -> dict[str, Any]:
        return {"program": self.program, "n_ranks": self.n_ranks,
                "main_loop": self.main_loop.name,
                "loops": [loop.to_dict() for loop in self.loops],
                "calls": [c.to_dict() for c in self.calls]}


def structure_truth(program: Program, main_loop: str = MAIN_LOOP) -> StructureTruth:
    """The truth of any program whose loops are named: ``main_loop`` is the name of a
    top-level loop; calls before it are set-up, after it finalization."""
    names = [loop.name for loop in program.loops()]
    if not all(names) or len(set(names)) != len(names):
        raise UsageError(f"{program.name}: every loop needs a name of its own, not {names}")
    top = [i for i, node in enumerate(program.body)
           if isinstance(node, Loop) and node.name == main_loop]
    if not top:
        raise UsageError(f"{program.name}: no top-level loop named {main_loop!r}")
    everyone = tuple(range(program.n_ranks))
    loops: list[LoopTruth] = []
    calls: list[CallTruth] = []

    def walk(body: tuple[Call | Loop, ...], place: str | None, parent: Loop | None) -> None:
        for index, node in enumerate(body):
            where = place or (SET_UP if index < top[0] else
                              IN_MAIN_LOOP if index == top[0] else FINALIZATION)
            if isinstance(node, Call):
                function = parse_frame(node.path[-1])[0] if node.path else ""
                ranks = everyone if node.ranks is None else \
                    tuple(r for r in node.ranks if r in everyone)
                calls.append(CallTruth(node.name, function, node.site, where,
                                       parent.name if parent else None, ranks))
                continue
            function, file, line = parse_frame(node.site) if node.site else ("", "", 0)
            loops.append(LoopTruth(
                node.name, parent.name if parent else None, node.count_range(), function,
                f"{file}:{line}" if node.site else "",
                tuple(_label(c) for c in node.body if isinstance(c, Call))))
            walk(node.body, where, node)

    walk(program.body, None, None)
    # loops were appended parent first: the order of Program.loops()
    return StructureTruth(program.name, program.n_ranks,
                          next(loop for loop in loops if loop.name == main_loop),
                          tuple(loops), tuple(calls))


def write_fortran_pic(path: str | os.PathLike[str], n_ranks: int, *, seed: int = 0
                      ) -> dict[str, Path]:
    """Write the program on ``n_ranks`` ranks as Extrae would for a gfortran binary
    (:func:`~phasekit.synth.traces.write_paraver` with ``names="extrae-fortran"``); its
    truth JSON adds ``structure`` (:meth:`StructureTruth.to_dict`)."""
    program = fortran_pic(n_ranks)
    return write_paraver(program, path, seed=seed, names="extrae-fortran",
                         truth={"structure": structure_truth(program).to_dict()})
