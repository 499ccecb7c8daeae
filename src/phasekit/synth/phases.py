"""The synthetic benchmarks of Tsafack Chetsa et al. (§III-B) as counter profiles with phase ground truth.

Tsafack Chetsa et al. (GreenCom 2013) detects system phase changes from execution
vectors (EVs, §III-A): per-second counts of retired instructions, LLC references and misses,
branches and branch misses, network bytes sent/received and disk reads/writes, each divided by
the cycles of the interval. It evaluates the detector (§III-B/C) on two synthetic benchmarks
run on a two-node cluster: ``bench_1`` runs the NPB-3.3 kernels MG, BT, EP, IS and CG back to
back; ``bench_2`` is the same with a 30 s idle period after each workload; for the evaluation
``bench_2`` is run five times in a row. A change of workload is the "significant behaviour
change" to detect (§III-C).

:func:`generate_bench` builds such a run for one node (MPI over two nodes, 16 ranks here):
per-interval counts of ``cycles``, ``instructions``, ``cache_references``, ``cache_misses``
(the LLC), ``branches``, ``branch_misses``, ``net_tx_bytes``, ``net_rx_bytes``,
``disk_read_bytes`` and ``disk_write_bytes``, so that dividing by ``cycles`` gives the paper's
EVs, and a :class:`PhaseTruth` with one segment per workload (and per idle period).

**The node (our choice).** Two sockets of 8 cores at a 2.5 GHz all-core clock: a fully busy
node counts ``C_MAX`` = 4e10 unhalted cycles per second; MPI busy-polls, so cores waiting for
messages stay busy. 16 ranks per node, 32 in all, a fast interconnect (~1 GB/s per direction
at most in the runs below). Memory traffic of ~20-30 GB/s for the memory-bound kernels
(LLC misses × 64 B).

**Signatures (our choice, not given by the paper).** Main-body means (time averages; the
within-kernel structure below is normalized to keep them): cycles per second, then per cycle,
then bytes per second per direction::

    kernel  cycles/s  IPC   LLC ref/c  LLC miss/c  br/c   br miss/c  net B/s  disk B/s  duration
    MG      3.90e10   0.85  0.020      0.0080      0.055  0.00055    180 MB   0         ~63 s
    BT      3.95e10   1.75  0.006      0.0015      0.035  0.00020    250 MB   0         ~170 s
    EP      3.95e10   2.10  0.0004     0.00003     0.120  0.00300    2 kB     0         ~41 s
    IS      3.85e10   0.75  0.030      0.0120      0.110  0.00700    600 MB   0         ~36 s
    CG      3.90e10   0.55  0.028      0.0110      0.075  0.00110    220 MB   0         ~86 s
    idle    4.0e8     0.60  0.012      0.0030      0.140  0.00400    1.5-3 kB ~13 kB w   idle_s

Rationale: EP generates Gaussian pairs in registers: high IPC, almost no LLC traffic, no
communication until a final reduction; its accept/reject test (acceptance pi/4) makes ~2.5 %
of its branches mispredicted. MG sweeps large grids (memory-bound, ~20 GB/s) and exchanges
halos with every neighbour. IS is integer code (branches ~15 % of instructions, ~6 %
mispredicted on random keys) with random bucket accesses and an all-to-all key exchange every
iteration: the heaviest network user. CG's sparse matrix-vector products are memory-latency
bound (lowest IPC) with a transpose exchange and reductions every inner iteration. BT is
floating-point heavy with few branches, cache-friendly, with face exchanges. Idle: the kernel
and daemons keep ~1 % of the cycles busy with branchy, cache-cold code; a network heartbeat
and ext4 journal commits every 5 s.

**Within a workload** (the paper's "micro phases", §III-B, Fig. 1(c); and the large
fluctuations on which a literal detector fires). A node-level counter sampled every second
averages whatever the ranks do in that second: sub-steps much shorter than a second (BT's
solves, CG's reductions) leave only a beat between the iteration and the sampling period;
sub-steps of a second or more (MG's V-cycles, IS's exchanges) show. Iteration counts and
lengths follow NPB-3.3 class C on 32 ranks (earlier versions of this generator had BT with 20
steps of 8 s and CG with 31 iterations of 2.4 s, and MG's coarse levels taking a quarter of a
V-cycle: sub-steps of 1-2 s with swings that per-second node counters of NPB do not show,
and that made even an offline change-point method report dozens of false changes; the
paper's own data, Figs. 1-3, has within-workload fluctuations well under its changes of
workload). What is left is what we expect of such counters:

- start-up, 1.5-3 s: process launch by mpirun on two nodes, MPI wire-up, first touch of the
  memory (cycles ramp up to ~55 %, IPC ~0.9, streaming LLC misses), disk reads of ~40 MB/s
  the first time a kernel runs (binary and libraries), ~0.4 MB/s later (page cache), a few
  MB/s of network;
- set-up, as long as NPB's own "initialization time" for class C on 32 ranks: MG's zran3
  (2 s, IPC 1.4), BT's initialize/exact_rhs (1 s), IS's key generation (1.5 s,
  compute-bound, no network), CG's makea (3 s, branchy, little network). An earlier version
  had 2-4 s of start-up and 4-7 s of set-up: several times NPB's, so that start-up and set-up
  made a phase of their own of up to 11 s in every workload;
- the main loop as NPB runs it, with NPB-3.3's iteration counts (class C): MG 20 V-cycles of
  ~2.7 s (fine levels memory-bound with large halos, going down then up, ~88 % of a cycle;
  the coarse levels, cached with small messages, ~12 %: each level has 1/8 of the work of
  the one above); BT 200 time steps of ~0.8 s made of compute_rhs (face exchange),
  x/y/z_solve (z with the worst stride) and add; EP one flat loop of ~36 s; IS 11
  iterations of ~2.2 s (local ranking, then the all-to-all exchange: network x2, IPC of the
  polling loop); CG 75 outer iterations of ~1.1 s (conj_grad, then the residual norm and
  its reductions); IS ends with full_verify (2 s, memory-bound);
- teardown, 0.2-0.6 s: MPI_Finalize, output and exit (cycles down to ~35 %, IPC ~1). NPB's
  verification is one more evaluation of the kernel's residual or norm with the kernel's own
  code, so it is part of the main loop here. An earlier version had 1-2.5 s of teardown with
  its own signature, so that the end of every workload looked like a phase of its own;
- iteration lengths jitter by 2 % and their amplitudes by 3 % per metric; a slow drift of
  every metric (a random walk, ~4 % over 100 s); turbo decay of ~3 % of the cycles of the
  compute-bound EP and BT over the first minute; sub-step edges are smoothed over 0.4 s
  (ranks do not switch together);
- OS noise over the whole run: daemon bursts at Poisson times (one per 40 s on average,
  0.2-6 s, half a core on average, some with disk writes or network traffic) that displace the
  workload's cycles, a monitoring agent every 10 s and journal commits every 5 s: these
  dominate the idle periods (the paper's false positives in idle, §III-C);
- multiplicative log-normal measurement noise per metric and sample (1 % on cycles up to 20 %
  on disk bytes at 1 s, three times larger on an idle node, growing as 1/sqrt(period) for
  shorter periods), and a common factor (interval jitter) that cancels in the EVs.

Repetitions of a kernel are alike but not identical: new noise, bursts and drift, iteration
periods drawn per repetition (3 %), signature levels per repetition (1.5 %), start-up and
teardown lengths, and cold disk reads only on a kernel's first run.

Workload boundaries fall at arbitrary times, not on sample edges: the counts are integrated
on a grid of at most 0.125 s and summed per sample, so a sample straddling a change mixes
both sides. The profile holds the whole samples of the run (a last partial interval is
dropped); the truth keeps the exact boundaries.
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.profile import Profile
from phasekit.synth.periodic import read_json_truth, write_json_truth

__all__ = [
    "BENCH_KINDS",
    "BENCH_METRICS",
    "C_MAX",
    "PHASE_TRUTH_VERSION",
    "SIGNATURES",
    "WORKLOADS",
    "PhaseTruth",
    "generate_bench",
    "nominal_bench_duration",
    "read_phase_truth",
    "write_phase_truth",
]

BENCH_KINDS: tuple[str, ...] = ("bench_1", "bench_2")
WORKLOADS: tuple[str, ...] = ("MG", "BT", "EP", "IS", "CG")  # Tsafack Chetsa et al. §III-B, in this order
BENCH_METRICS: tuple[str, ...] = (
    "cycles", "instructions", "cache_references", "cache_misses", "branches", "branch_misses",
    "net_tx_bytes", "net_rx_bytes", "disk_read_bytes", "disk_write_bytes",
)
_UNITS = {m: ("B" if m.endswith("_bytes") else "") for m in BENCH_METRICS}
PHASE_TRUTH_VERSION = 1
_TRUTH_TYPE = "phase_segments"

C_MAX = 16 * 2.5e9  # cycles/s of the fully busy node: 16 cores at 2.5 GHz (our choice)
_CPU = slice(1, 6)  # columns counted per cycle
_IO = slice(6, 10)  # columns in bytes per second
_FINE_STEP = 0.125  # s: longest integration step
_SMOOTH_S = 0.4  # s: sub-step edges smoothed over this (ranks do not switch together)
_NOISE = np.array([0.008, 0.012, 0.03, 0.04, 0.012, 0.03, 0.08, 0.08, 0.2, 0.2])  # at 1 s
_COMMON_NOISE = 0.004  # interval jitter: one factor on every metric of a sample
_IDLE_NOISE_GAIN = 2.0  # noise x (1 + 2 (1 - utilization))
_DRIFT = 0.004  # per sqrt(s): log-random walk of every metric
_ITER_JITTER = 0.02  # length of each iteration
_AMP_JITTER = 0.03  # amplitude of each iteration, per metric
_REP_PERIOD_JITTER = 0.03  # iteration period of a repetition
_REP_LEVEL_JITTER = 0.015  # signature level of a repetition, per metric


def _sig(util: float, ipc: float, refs: float, misses: float, br: float, bm: float,
         net: float, rx: float | None = None, dr: float = 0.0, dw: float = 0.0) -> np.ndarray:
    """A signature: cycles/s, five rates per cycle, four byte rates (B/s)."""
    return np.array([util * C_MAX, ipc, refs, misses, br, bm, net,
                     net if rx is None else rx, dr, dw])


@dataclass(frozen=True)
class _Kernel:
    label: str
    main: np.ndarray  # time-averaged signature of the main loop
    n_iter: int  # iterations of the main loop
    iter_s: float  # nominal iteration length (s)
    fractions: tuple[float, ...]  # sub-step shares of an iteration
    factors: np.ndarray  # (sub-steps, 10) modulation of ``main``; normalized to mean 1
    init_s: float = 0.0
    init: np.ndarray | None = None
    tail_s: float = 0.0
    tail: np.ndarray | None = None
    turbo: bool = False


def _factors(fractions: Sequence[float], **columns: Sequence[float]) -> np.ndarray:
    """Sub-step modulation: 1 unless given (``ipc``, ``refs``, ``misses``, ``br``, ``bm``,
    ``net``, ``cycles``), each column rescaled to a time-weighted mean of 1."""
    index = {"cycles": [0], "ipc": [1], "refs": [2], "misses": [3], "br": [4], "bm": [5],
             "net": [6, 7]}
    f = np.ones((len(fractions), 10))
    for name, values in columns.items():
        f[:, index[name]] = np.asarray(values, float)[:, None]
    w = np.asarray(fractions, float)
    return f / (w @ f)


_MG_FR = (0.45, 0.12, 0.43)  # fine levels down, coarse levels (~1/8 of the work), fine levels up
_BT_FR = (0.22, 0.24, 0.24, 0.24, 0.06)  # compute_rhs, x_solve, y_solve, z_solve, add
_IS_FR = (0.55, 0.45)  # local ranking, all-to-all key exchange
_CG_FR = (0.88, 0.12)  # conj_grad inner iterations, residual norm and reductions

_KERNELS: dict[str, _Kernel] = {
    "MG": _Kernel(
        "MG", _sig(0.975, 0.85, 0.020, 0.0080, 0.055, 0.00055, 180e6), 20, 2.7, _MG_FR,
        _factors(_MG_FR, ipc=(0.9, 1.25, 0.95), refs=(1.15, 0.8, 1.0), misses=(1.25, 0.6, 1.1),
                 br=(1.0, 1.15, 1.0), bm=(1.0, 1.5, 1.0), net=(1.3, 0.5, 1.1)),
        init_s=2.0, init=_sig(0.97, 1.4, 0.010, 0.0030, 0.065, 0.0008, 2e6)),
    "BT": _Kernel(
        "BT", _sig(0.9875, 1.75, 0.006, 0.0015, 0.035, 0.0002, 250e6), 200, 0.8, _BT_FR,
        _factors(_BT_FR, ipc=(0.85, 1.15, 1.1, 0.95, 0.7), refs=(1.2, 0.85, 0.9, 1.15, 1.3),
                 misses=(1.3, 0.7, 0.85, 1.35, 1.6), br=(1.0, 1.0, 1.0, 1.0, 0.7),
                 net=(2.2, 0.6, 0.6, 0.6, 0.2)),
        init_s=1.0, init=_sig(0.98, 1.3, 0.008, 0.0020, 0.05, 0.0005, 5e6), turbo=True),
    "EP": _Kernel(
        "EP", _sig(0.9875, 2.10, 0.0004, 0.00003, 0.12, 0.0030, 2e3), 1, 36.0, (1.0,),
        np.ones((1, 10)), turbo=True),
    "IS": _Kernel(
        "IS", _sig(0.9625, 0.75, 0.030, 0.0120, 0.11, 0.0070, 600e6), 11, 2.2, _IS_FR,
        _factors(_IS_FR, cycles=(1.02, 0.97), ipc=(0.85, 1.2), refs=(1.2, 0.75),
                 misses=(1.3, 0.65), bm=(1.3, 0.6), net=(0.15, 2.0)),
        init_s=1.5, init=_sig(0.97, 1.6, 0.004, 0.0010, 0.09, 0.0010, 5e3),
        tail_s=2.0, tail=_sig(0.95, 0.7, 0.030, 0.0140, 0.10, 0.0080, 20e6)),
    "CG": _Kernel(
        "CG", _sig(0.975, 0.55, 0.028, 0.0110, 0.075, 0.0011, 220e6), 75, 1.1, _CG_FR,
        _factors(_CG_FR, ipc=(1.0, 1.2), misses=(1.0, 0.75), net=(1.0, 0.6)),
        init_s=3.0, init=_sig(0.97, 1.0, 0.012, 0.0030, 0.13, 0.0040, 1e6)),
}

_STARTUP = _sig(0.55, 0.9, 0.020, 0.0090, 0.13, 0.0040, 2e6, dw=0.1e6)
_STARTUP_S = (1.5, 3.0)  # mpirun over two nodes and MPI_Init
_COLD_READ = 40e6  # B/s: binary and libraries from disk, first run of a kernel
_WARM_READ = 0.4e6  # B/s: from the page cache
_TEARDOWN = _sig(0.35, 1.0, 0.015, 0.0050, 0.12, 0.0030, 0.5e6, dw=0.3e6)
_TEARDOWN_S = (0.2, 0.6)  # MPI_Finalize and exit; verification runs the kernel's own code
_IDLE = _sig(0.01, 0.6, 0.012, 0.0030, 0.14, 0.0040, 1.5e3, rx=3e3)  # background, always on
_DAEMON = _sig(0.0, 0.8, 0.020, 0.0050, 0.17, 0.0060, 0.0)  # cycles from the burst
_BURST_RATE = 1.0 / 40.0  # daemon bursts per second
_MONITOR = (10.0, 0.25, 1.2e9)  # every 10 s, 0.25 s of 1.2e9 cycles/s
_JOURNAL = (5.0, 0.25, 64e3)  # every 5 s, 64 kB written over 0.25 s

#: Main-loop mean signature of every workload and of the idle node (per second or per cycle).
SIGNATURES: Mapping[str, Mapping[str, float]] = {
    label: {
        "cycles_per_s": float(s[0]), "ipc": float(s[1]), "cache_references_per_cycle": float(s[2]),
        "cache_misses_per_cycle": float(s[3]), "branches_per_cycle": float(s[4]),
        "branch_misses_per_cycle": float(s[5]), "net_tx_bytes_per_s": float(s[6]),
        "net_rx_bytes_per_s": float(s[7]), "disk_read_bytes_per_s": float(s[8]),
        "disk_write_bytes_per_s": float(s[9]),
    }
    for label, s in [*((k.label, k.main) for k in _KERNELS.values()), ("idle", _IDLE)]
}


# --- ground truth ----------------------------------------------------------------------
@dataclass(frozen=True)
class PhaseTruth:
    """The workloads of a synthetic run: ``segments`` of ``(start_s, end_s, label)``.

    Segments are in time order without overlap (times in seconds from the profile start);
    labels name the workload (``"MG"``, ..., ``"idle"``). A change of segment is a phase
    change to detect (Tsafack Chetsa et al. §III-C: "a change of workload"). ``n_samples`` and ``period``
    describe the profile the truth belongs to.
    """

    segments: tuple[tuple[float, float, str], ...]
    n_samples: int
    period: float
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        try:
            segs = tuple((float(a), float(b), str(lab)) for a, b, lab in self.segments)
        except (TypeError, ValueError):
            raise UsageError("phase truth segments must be (start_s, end_s, label) triples"
                             ) from None
        starts = np.array([s[0] for s in segs])
        ends = np.array([s[1] for s in segs])
        if not (np.all(np.isfinite(starts)) and np.all(np.isfinite(ends))):
            raise UsageError("phase truth segment times must be finite")
        if np.any(ends <= starts):
            raise UsageError("phase truth segments must end after they start")
        if np.any(starts[1:] < ends[:-1] - 1e-9):
            raise UsageError("phase truth segments must be in time order without overlap")
        if any(not s[2] for s in segs):
            raise UsageError("phase truth segment labels must be non-empty")
        if int(self.n_samples) < 0:
            raise UsageError(f"n_samples must be non-negative, got {self.n_samples}")
        if not (np.isfinite(self.period) and self.period > 0):
            raise UsageError(f"sampling period must be positive, got {self.period}")
        object.__setattr__(self, "segments", segs)
        object.__setattr__(self, "n_samples", int(self.n_samples))
        object.__setattr__(self, "period", float(self.period))
        object.__setattr__(self, "meta", dict(self.meta))

    # --- columns -----------------------------------------------------------------------
    @property
    def starts_s(self) -> np.ndarray:
        return np.array([s[0] for s in self.segments], dtype=np.float64)

    @property
    def ends_s(self) -> np.ndarray:
        return np.array([s[1] for s in self.segments], dtype=np.float64)

    @property
    def labels(self) -> tuple[str, ...]:
        """The label of every segment."""
        return tuple(s[2] for s in self.segments)

    @property
    def label_names(self) -> tuple[str, ...]:
        """The distinct labels in order of first appearance."""
        return tuple(dict.fromkeys(self.labels))

    @property
    def change_times_s(self) -> np.ndarray:
        """The true phase changes: the start of every segment but the first (Tsafack Chetsa et al. §III-C)."""
        return self.starts_s[1:]

    @property
    def duration_s(self) -> float:
        """End of the last segment (0 without segments)."""
        return self.segments[-1][1] if self.segments else 0.0

    def sample_labels(self, n_samples: int | None = None, period: float | None = None
                      ) -> np.ndarray:
        """The label of every sample (a string array; ``""`` outside every segment).

        Sample ``i`` covers ``[i * period, (i + 1) * period)`` and takes the label of the
        segment holding its midpoint (a sample straddling a change goes to the side it
        mostly lies in). Defaults: the profile's ``n_samples`` and ``period``.
        """
        n = self.n_samples if n_samples is None else int(n_samples)
        p = self.period if period is None else float(period)
        if n < 0 or not (np.isfinite(p) and p > 0):
            raise UsageError(f"need n_samples >= 0 and a positive period, got {n} and {p}")
        width = max((len(s) for s in self.labels), default=1)
        out = np.full(n, "", dtype=f"<U{max(width, 1)}")
        if not self.segments or n == 0:
            return out
        mid = (np.arange(n) + 0.5) * p
        j = np.searchsorted(self.starts_s, mid, side="right") - 1
        inside = (j >= 0) & (mid < self.ends_s[np.maximum(j, 0)])
        out[inside] = np.asarray(self.labels)[j[inside]]
        return out

    # --- serialization -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, ``{"version": 1, "type": "phase_segments", ...}``."""
        return {
            "version": PHASE_TRUTH_VERSION,
            "type": _TRUTH_TYPE,
            "n_samples": self.n_samples,
            "period": self.period,
            "segments": {"start_s": self.starts_s.tolist(), "end_s": self.ends_s.tolist(),
                         "label": list(self.labels)},
            "change_times_s": self.change_times_s.tolist(),
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PhaseTruth:
        """Inverse of :meth:`to_dict`; raises :class:`InputError` on a malformed dict."""
        if not isinstance(data, Mapping):
            raise InputError("phase truth must be a JSON object")
        if data.get("type") != _TRUTH_TYPE:
            raise InputError(f"not a phase truth: type {data.get('type')!r}, "
                             f"expected {_TRUTH_TYPE!r}")
        if data.get("version") != PHASE_TRUTH_VERSION:
            raise InputError(f"unsupported phase truth version {data.get('version')!r}, "
                             f"expected {PHASE_TRUTH_VERSION}")
        try:
            seg = data["segments"]
            starts, ends, labels = seg["start_s"], seg["end_s"], seg["label"]
            if not (len(starts) == len(ends) == len(labels)):
                raise InputError("phase truth segments: start_s, end_s and label differ in "
                                 "length")
            if not all(isinstance(x, str) for x in labels):
                raise InputError("phase truth segment labels must be strings")
            return cls(segments=tuple(zip(starts, ends, labels, strict=True)),
                       n_samples=int(data["n_samples"]), period=float(data["period"]),
                       meta=dict(data.get("meta", {})))
        except KeyError as exc:
            raise InputError(f"phase truth lacks the field {exc.args[0]!r}") from None
        except (TypeError, ValueError, UsageError) as exc:
            raise InputError(f"malformed phase truth: {exc}") from None

    def __repr__(self) -> str:
        return (f"PhaseTruth(segments={len(self.segments)}, labels={list(self.label_names)}, "
                f"duration={self.duration_s:.1f} s, n_samples={self.n_samples})")


def write_phase_truth(truth: PhaseTruth, path: str | os.PathLike[str]) -> Path:
    """Write ``truth`` as JSON atomically; use ``truth_path(profile)`` for ``FILE.truth.json``."""
    return write_json_truth(truth.to_dict(), path)


def read_phase_truth(path: str | os.PathLike[str]) -> PhaseTruth:
    """Read a truth file written by :func:`write_phase_truth`."""
    return read_json_truth(path, PhaseTruth.from_dict)


# --- layout ----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Plan:
    """One run of a kernel: part boundaries (local seconds) and per-run draws."""

    kernel: _Kernel
    startup_s: float
    iterations: np.ndarray  # iteration edges, local seconds (n_iter + 1)
    teardown_s: float
    cold: bool
    level: np.ndarray  # (10,) signature level of this repetition
    amp: np.ndarray  # (n_iter, 10) amplitude jitter of every iteration

    @property
    def init_end(self) -> float:
        return self.startup_s + self.kernel.init_s

    @property
    def tail_end(self) -> float:
        return float(self.iterations[-1]) + self.kernel.tail_s

    @property
    def duration(self) -> float:
        return self.tail_end + self.teardown_s


def _plan(kernel: _Kernel, rng: np.random.Generator, *, cold: bool) -> _Plan:
    startup = float(rng.uniform(*_STARTUP_S))
    teardown = float(rng.uniform(*_TEARDOWN_S))
    period = kernel.iter_s * math.exp(rng.normal(0.0, _REP_PERIOD_JITTER))
    lengths = period * np.exp(rng.normal(0.0, _ITER_JITTER, kernel.n_iter))
    edges = startup + kernel.init_s + np.concatenate(([0.0], np.cumsum(lengths)))
    level = np.exp(rng.normal(0.0, _REP_LEVEL_JITTER, 10))
    level[7] = level[6] * math.exp(rng.normal(0.0, 0.02))  # tx and rx move together
    amp = np.exp(rng.normal(0.0, _AMP_JITTER, (kernel.n_iter, 10)))
    amp[:, 0] = np.exp(rng.normal(0.0, _AMP_JITTER / 3, kernel.n_iter))  # cycles: steadier
    amp[:, 7] = amp[:, 6]
    return _Plan(kernel, startup, edges, teardown, cold, level, amp)


def _nominal_duration(kernel: _Kernel) -> float:
    return (sum(_STARTUP_S) / 2 + kernel.init_s + kernel.n_iter * kernel.iter_s
            + kernel.tail_s + sum(_TEARDOWN_S) / 2)


def nominal_bench_duration(kind: str, *, idle_s: float = 30.0) -> float:
    """Expected duration (s) of one repetition of ``kind`` (without jitter)."""
    _check_kind(kind)
    work = sum(_nominal_duration(_KERNELS[k]) for k in WORKLOADS)
    return work + (len(WORKLOADS) * idle_s if kind == "bench_2" else 0.0)


def _check_kind(kind: str) -> None:
    if kind not in BENCH_KINDS:
        raise UsageError(f"unknown benchmark; choose one of: {', '.join(BENCH_KINDS)}",
                         parameter="kind", value=kind)


# --- rendering -------------------------------------------------------------------------
def _to_rates(state: np.ndarray) -> np.ndarray:
    """Signatures (cycles/s, per cycle, B/s) to count rates (per second) in place."""
    state[:, _CPU] *= state[:, :1]
    return state


def _random_walk(rng: np.random.Generator, tau: np.ndarray, sigma: float, columns: int
                 ) -> np.ndarray:
    """Log-drift: a random walk with knots every 5 s, zero-mean over ``tau``."""
    span = float(tau[-1] - tau[0]) if tau.size else 0.0
    knots = np.arange(0.0, span + 5.0, 5.0)
    steps = rng.normal(0.0, sigma * math.sqrt(5.0), (knots.size, columns))
    steps[0] = 0.0
    walk = np.cumsum(steps, axis=0)
    out = np.column_stack([np.interp(tau - tau[0], knots, walk[:, c]) for c in range(columns)])
    return out - out.mean(axis=0)


def _render(plan: _Plan, tau: np.ndarray, rng: np.random.Generator, dt: float) -> np.ndarray:
    """Count rates (per second; cycles, counts, bytes) of one kernel run at local times tau."""
    k = plan.kernel
    state = np.zeros((tau.size, 10))  # every part is set below; zeros keep the start-up rows clean
    edges = np.array([plan.startup_s, plan.init_end, float(plan.iterations[-1]), plan.tail_end])
    part = np.searchsorted(edges, tau, side="right")  # 0 start-up, 1 init, 2 loop, 3 tail, 4 end

    # main loop: sub-step of every point, with per-iteration amplitude jitter
    loop = part == 2
    it = np.clip(np.searchsorted(plan.iterations, tau[loop], side="right") - 1, 0, k.n_iter - 1)
    phase = (tau[loop] - plan.iterations[it]) / np.diff(plan.iterations)[it]
    sub = np.searchsorted(np.cumsum(k.fractions)[:-1], phase, side="right")
    state[loop] = k.main * k.factors[sub] * plan.amp[it]
    if k.init is not None:
        state[part == 1] = k.init
    if k.tail is not None:
        state[part == 3] = k.tail
    state[part <= 3] *= plan.level  # the repetition's level, for the workload's own parts

    # start-up: cycles ramp over the first second; disk reads cold or warm
    up = part == 0
    state[up] = _STARTUP
    state[up, 0] *= np.minimum(1.0, 0.2 + tau[up])
    state[up, 8] = _COLD_READ if plan.cold else _WARM_READ
    # teardown: cycles fall over its last half second
    down = part == 4
    state[down] = _TEARDOWN
    state[down, 0] *= np.clip((plan.duration - tau[down]) / 0.5, 0.1, 1.0)

    # slow drift, turbo decay of the cycles of compute-bound kernels
    state *= np.exp(_random_walk(rng, tau, _DRIFT, 10))
    if k.turbo:
        state[:, 0] *= 1.0 - 0.03 * (1.0 - np.exp(-np.maximum(tau - plan.startup_s, 0) / 30.0))
    state[:, 0] = np.minimum(state[:, 0], C_MAX)
    rates = _to_rates(state)
    width = max(1, round(_SMOOTH_S / dt))
    return _moving_mean(rates, width) if width > 1 else rates


def _moving_mean(x: np.ndarray, size: int) -> np.ndarray:
    """The mean of ``size`` samples around each row of ``x`` (edges repeated), bit for bit
    ``scipy.ndimage.uniform_filter1d(x, size, axis=0, mode="nearest")``: scipy's running sum
    (the first window added in order from 0, then one sample in and one out per row, each
    mean the sum over ``size``), in NumPy (``cumsum`` adds in order) so that generating a
    profile does not import scipy.ndimage (0.1 s; the tests compare the two)."""
    n, before = x.shape[0], size // 2
    ext = np.concatenate([np.repeat(x[:1], before, axis=0), x,
                          np.repeat(x[-1:], size - before - 1, axis=0)])
    steps = np.concatenate([np.zeros((1, *x.shape[1:])), ext[:size],
                            ext[size:size + n - 1] - ext[:n - 1]])
    return np.cumsum(steps, axis=0)[size:] / size


def _pulses(t: np.ndarray, dt: float, starts: np.ndarray, durations: np.ndarray,
            totals: np.ndarray) -> np.ndarray:
    """Rates of rectangular pulses on the grid ``t`` (step ``dt``), each of total ``totals[i]``
    (columns) spread over at least one grid point: a difference array, no loop."""
    lo = np.searchsorted(t, starts)
    hi = np.maximum(np.searchsorted(t, starts + durations), lo + 1)
    keep = lo < t.size
    lo, hi, totals = lo[keep], np.minimum(hi[keep], t.size), totals[keep]
    height = totals / ((hi - lo) * dt)[:, None]
    diff = np.zeros((t.size + 1, totals.shape[1]))
    np.add.at(diff, lo, height)
    np.add.at(diff, hi, -height)
    return np.cumsum(diff[:-1], axis=0)


def _os_noise(rng: np.random.Generator, t: np.ndarray, dt: float, total: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """Daemon cycles/s and their byte rates (tx, rx, read, write) on the grid."""
    n = int(rng.poisson(total * _BURST_RATE))
    at = rng.uniform(0.0, total, n)
    dur = np.clip(rng.lognormal(math.log(1.2), 0.6, n), 0.2, 6.0)
    cyc = np.minimum(rng.lognormal(math.log(1.2e9), 0.7, n), 0.5 * C_MAX)
    io = np.zeros((n, 4))
    net = rng.random(n) < 0.25
    io[net, 0] = rng.lognormal(math.log(1e6), 1.0, int(net.sum()))
    io[net, 1] = io[net, 0] * rng.uniform(0.5, 2.0, int(net.sum()))
    disk = rng.random(n) < 0.4
    io[disk, 3] = rng.lognormal(math.log(3e6), 1.0, int(disk.sum()))
    # periodic tasks: a monitoring agent and ext4 journal commits
    every, width, c = _MONITOR
    mon = np.arange(rng.uniform(0, every), total, every)
    jevery, jwidth, jbytes = _JOURNAL
    jour = np.arange(rng.uniform(0, jevery), total, jevery)
    starts = np.concatenate((at, mon, jour))
    durs = np.concatenate((dur, np.full(mon.size, width), np.full(jour.size, jwidth)))
    totals = np.zeros((starts.size, 5))
    totals[:n, 0] = cyc * dur
    totals[:n, 1:] = io * dur[:, None]
    totals[n:n + mon.size, 0] = c * width
    totals[n:n + mon.size, 1:3] = 2e3  # the agent ships its sample
    totals[n + mon.size:, 4] = jbytes * np.exp(rng.normal(0.0, 0.5, jour.size))
    rates = _pulses(t, dt, starts, durs, totals)
    return rates[:, 0], rates[:, 1:]


# --- generator -------------------------------------------------------------------------
def generate_bench(kind: str, *, repetitions: int = 1, seed: int = 0, period: float = 1.0,
                   idle_s: float = 30.0) -> tuple[Profile, PhaseTruth]:
    """A counter profile of Tsafack Chetsa et al.'s ``bench_1`` or ``bench_2`` (§III-B) and its truth.

    ``bench_1`` runs MG, BT, EP, IS and CG back to back; ``bench_2`` adds ``idle_s`` seconds
    of idle after every workload (the paper: 30 s); ``repetitions`` runs the whole sequence that
    many times in a row (the paper, §III-C: five runs of ``bench_2``). Samples every ``period``
    seconds (the paper, §III-A: 1 s; 0.01-10 s accepted); ``idle_s`` is ignored by ``bench_1``.
    Same arguments, same profile. The signatures and the within-workload structure are
    described in this module's docstring.
    """
    _check_kind(kind)
    if isinstance(repetitions, bool) or int(repetitions) != repetitions or not (
            1 <= repetitions <= 1000):
        raise UsageError("expected an integer from 1 to 1000", parameter="repetitions",
                         value=repetitions)
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise UsageError("expected a non-negative integer", parameter="seed", value=seed)
    if not (np.isfinite(period) and 0.01 <= period <= 10.0):
        raise UsageError("expected a sampling period from 0.01 to 10 s", parameter="period",
                         value=period)
    if kind == "bench_2" and not (np.isfinite(idle_s) and idle_s > 0):
        raise UsageError("expected a positive number of seconds", parameter="idle_s",
                         value=idle_s, option="--idle")
    repetitions, seed, period = int(repetitions), int(seed), float(period)
    idle = float(idle_s) if kind == "bench_2" else 0.0
    code = zlib.crc32(kind.encode())
    layout_rng, render_rng, noise_rng = (np.random.default_rng([seed, code, i])
                                         for i in (1, 2, 3))

    # layout: the segments and one plan per workload run
    segments: list[tuple[float, float, str]] = []
    plans: list[tuple[float, _Plan]] = []
    parts: list[list[float | str]] = []
    seen: set[str] = set()
    t0 = 0.0
    for _ in range(repetitions):
        for label in WORKLOADS:
            plan = _plan(_KERNELS[label], layout_rng, cold=label not in seen)
            seen.add(label)
            plans.append((t0, plan))
            segments.append((t0, t0 + plan.duration, label))
            bounds = [0.0, plan.startup_s, plan.init_end, float(plan.iterations[-1]),
                      plan.tail_end, plan.duration]
            for name, a, b in zip(("startup", "init", "loop", "tail", "teardown"),
                                  bounds[:-1], bounds[1:], strict=True):
                if b > a:
                    parts.append([t0 + a, t0 + b, label, name])
            t0 += plan.duration
            if idle:
                segments.append((t0, t0 + idle, "idle"))
                t0 += idle
    total = t0
    n = math.floor(total / period + 1e-9)
    sub = max(1, math.ceil(period / _FINE_STEP - 1e-9))
    dt = period / sub
    t = (np.arange(n * sub) + 0.5) * dt

    # the workloads' count rates, then the node around them
    app = np.zeros((t.size, 10))
    for start, plan in plans:
        lo, hi = np.searchsorted(t, [start, start + plan.duration])
        if hi > lo:
            app[lo:hi] = _render(plan, t[lo:hi] - start, render_rng, dt)
    util = np.minimum(app[:, 0] / C_MAX, 1.0)
    daemon_cycles, daemon_io = _os_noise(render_rng, t, dt, total)
    displaced = 1.0 - np.minimum(daemon_cycles / C_MAX, 0.9)
    rates = app
    rates[:, :6] *= displaced[:, None]  # a daemon takes its cycles from the workload's cores
    background = _to_rates(np.tile(_IDLE, (t.size, 1)))
    background[:, :6] *= (1.0 - util)[:, None]
    background[:, 6:8] *= np.exp(_random_walk(render_rng, t, 0.01, 2))
    daemon = np.tile(_DAEMON, (t.size, 1))
    daemon[:, 0] = daemon_cycles
    daemon[:, _IO] = daemon_io
    _to_rates(daemon)
    rates += background + daemon

    # per-sample counts, then measurement noise
    counts = np.clip(rates.reshape(n, sub, 10).sum(axis=1) * dt, 0.0, None)  # cumsum round-off
    busy = np.clip(counts[:, 0] / (C_MAX * period), 0.0, 1.0)
    sigma = _NOISE * math.sqrt(1.0 / period) * (1.0 + _IDLE_NOISE_GAIN * (1.0 - busy))[:, None]
    noise = sigma * noise_rng.standard_normal((n, 10)) - 0.5 * sigma**2
    noise += noise_rng.normal(0.0, _COMMON_NOISE, (n, 1))
    values = np.rint(counts * np.exp(noise)) + 0.0  # + 0.0: no negative zeros

    meta: dict[str, Any] = {"synth": kind, "seed": seed, "repetitions": repetitions}
    if kind == "bench_2":
        meta["idle_s"] = idle
    truth = PhaseTruth(segments=tuple(segments), n_samples=n, period=period,
                       meta={**meta, "parts": parts})
    profile = Profile(values=values, period=period, metrics=BENCH_METRICS, units=_UNITS,
                      node=f"synth-{kind}", meta=meta)
    return profile, truth
