"""Synthetic IPC profiles with known periodicities, shaped like Phase-TA's applications.

Phase-TA (§IV-B, Table II) analyzes node-level IPC profiles sampled every 5 ms of
three applications. The generators below reproduce their layout:

- ``nemo``: one periodicity of ~220 samples covering ~77 % of the profile, between an
  aperiodic initialization (~15 %) and finalization (~8 %).
- ``hpcg``: two initialization periodicities (~150 then ~165 samples, ~32 % together, close
  lengths but different shapes), then one compute periodicity (~300 samples, ~57 %); the
  remaining ~11 % is aperiodic (start, between initialization and compute, end).
- ``openfoam``: an aperiodic start, then five bunches of a ~520-sample periodicity (~70 % in
  all), each followed by an aperiodic checkpoint I/O phase of irregular duration (~25 % in all;
  §IV-B: "each run of icoFOAM contained five checkpoints").

Every periodic instance is its template with amplitude jitter, temporal warping (samples
inserted and deleted) and measurement noise; the exact instances are returned as a
:class:`Truth`. Lengths are given at 5 ms and scale with ``period`` so that an iteration keeps
its duration in seconds; a coarser sampling is the finer run averaged over each interval.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.io.atomic import atomic_write_text
from phasekit.metrics.periodicity import coverage as _coverage
from phasekit.metrics.periodicity import periodic_regions as _periodic_regions
from phasekit.metrics.periodicity import sample_labels as _sample_labels
from phasekit.profile import Profile

T = TypeVar("T")

__all__ = [
    "INSTANCE_DTYPE",
    "IPC_RANGE",
    "KINDS",
    "OFFSET_JITTER",
    "SCALE_JITTER",
    "TRUTH_VERSION",
    "Truth",
    "generate",
    "kind_code",
    "read_truth",
    "truth_path",
    "write_truth",
]

KINDS: tuple[str, ...] = ("nemo", "hpcg", "openfoam")
TRUTH_VERSION = 1
INSTANCE_DTYPE = np.dtype([("start", np.int64), ("length", np.int64), ("label", np.int64)])

_BASE_PERIOD = 0.005  # s; Phase-TA §II-B: counters "sampled and aggregated every 5 ms"
SCALE_JITTER = 0.03  # instance amplitude: scale by 1 + N(0, 0.03)
OFFSET_JITTER = 0.01  # instance amplitude: offset by N(0, 0.01)
_WARP = 0.02  # insertions/deletions per instance: about +-2 % of the length
_NOISE = 0.04  # measurement noise: sigma = 4 % of the template's range
_MIN_LENGTH = 8  # shortest template (samples) we accept after scaling by the period
_MIN_APERIODIC = 8  # shortest aperiodic segment (samples)
IPC_RANGE = (0.05, 3.0)  # physical clip: instructions per reference cycle


# --- ground truth ----------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Truth:
    """The periodic instances planted in a synthetic profile.

    ``instances`` is a structured array (:data:`INSTANCE_DTYPE`: ``start``, ``length``,
    ``label``; sample indices, time order, no overlap); ``labels[i]`` names label id ``i``;
    ``templates[i]`` is the noiseless pattern of label ``i`` at its nominal length.
    """

    instances: np.ndarray
    labels: tuple[str, ...]
    templates: Mapping[int, np.ndarray]
    n_samples: int
    period: float
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        inst = np.asarray(self.instances)
        if inst.dtype != INSTANCE_DTYPE:
            if inst.dtype.names is None or not {"start", "length", "label"} <= set(inst.dtype.names):
                raise UsageError("truth instances need the fields start, length and label")
            inst = inst.astype(INSTANCE_DTYPE)
        inst = np.array(inst.ravel(), dtype=INSTANCE_DTYPE)
        labels = tuple(str(x) for x in self.labels)
        n = int(self.n_samples)
        starts, lengths, ids = inst["start"], inst["length"], inst["label"]
        if np.any(lengths <= 0):
            raise UsageError("truth instances must have positive lengths")
        if inst.size and (starts[0] < 0 or starts[-1] + lengths[-1] > n):
            raise UsageError(f"truth instances must lie within the {n} samples")
        if np.any(starts[1:] < starts[:-1] + lengths[:-1]):
            raise UsageError("truth instances must be in time order without overlap")
        if np.any((ids < 0) | (ids >= len(labels))):
            raise UsageError(f"truth instance labels must be ids 0..{len(labels) - 1}")
        templates: dict[int, np.ndarray] = {}
        for key, value in self.templates.items():
            k = int(key)
            if not 0 <= k < len(labels):
                raise UsageError(f"template for unknown label id {k}")
            t = np.array(value, dtype=np.float64).ravel()
            t.setflags(write=False)
            templates[k] = t
        if not (np.isfinite(self.period) and self.period > 0):
            raise UsageError(f"sampling period must be positive, got {self.period}")
        inst.setflags(write=False)
        object.__setattr__(self, "instances", inst)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "templates", templates)
        object.__setattr__(self, "n_samples", n)
        object.__setattr__(self, "period", float(self.period))
        object.__setattr__(self, "meta", dict(self.meta))

    # --- columns -----------------------------------------------------------------------
    @property
    def starts(self) -> np.ndarray:
        return self.instances["start"]

    @property
    def lengths(self) -> np.ndarray:
        return self.instances["length"]

    @property
    def instance_labels(self) -> np.ndarray:
        """Label id of every instance."""
        return self.instances["label"]

    # --- derived -----------------------------------------------------------------------
    def label_id(self, label: int | str) -> int:
        """The id of ``label`` given by id or by name."""
        if isinstance(label, str):
            try:
                return self.labels.index(label)
            except ValueError:
                raise UsageError(
                    f"no label {label!r}; the labels are: {', '.join(self.labels)}"
                ) from None
        if not 0 <= int(label) < len(self.labels):
            raise UsageError(f"no label id {label}; ids are 0..{len(self.labels) - 1}")
        return int(label)

    def mean_length(self, label: int | str) -> float:
        """Mean instance length (samples) of one label; NaN if it has no instance."""
        lengths = self.lengths[self.instance_labels == self.label_id(label)]
        return float(lengths.mean()) if lengths.size else float("nan")

    def coverage(self, label: int | str | None = None) -> float:
        """Share of the samples inside instances (of ``label`` only, when given)."""
        mask = slice(None) if label is None else self.instance_labels == self.label_id(label)
        return _coverage(self.n_samples, self.starts[mask], self.lengths[mask])

    def sample_labels(self) -> np.ndarray:
        """Label id of every sample, ``-1`` outside the instances."""
        return _sample_labels(self.n_samples, self.starts, self.lengths, self.instance_labels)

    def regions(self) -> list[tuple[int, int, int]]:
        """Periodic regions as ``(label id, first instance index, instance count)``."""
        return _periodic_regions(self.starts, self.lengths, self.instance_labels, tolerance=0)

    # --- serialization -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, ``{"version": 1, ...}``."""
        return {
            "version": TRUTH_VERSION,
            "n_samples": self.n_samples,
            "period": self.period,
            "labels": list(self.labels),
            "instances": {name: self.instances[name].tolist() for name in ("start", "length", "label")},
            "templates": {str(k): v.tolist() for k, v in sorted(self.templates.items())},
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Truth:
        """Inverse of :meth:`to_dict`; raises :class:`InputError` on a malformed dict."""
        if not isinstance(data, Mapping):
            raise InputError("truth must be a JSON object")
        version = data.get("version")
        if version != TRUTH_VERSION:
            raise InputError(f"unsupported truth version {version!r}, expected {TRUTH_VERSION}")
        try:
            raw = data["instances"]
            inst = np.zeros(len(raw["start"]), dtype=INSTANCE_DTYPE)
            for name in ("start", "length", "label"):
                inst[name] = np.asarray(raw[name], dtype=np.int64)
            return cls(
                instances=inst,
                labels=tuple(data["labels"]),
                templates={int(k): np.asarray(v, dtype=np.float64)
                           for k, v in data.get("templates", {}).items()},
                n_samples=int(data["n_samples"]),
                period=float(data["period"]),
                meta=dict(data.get("meta", {})),
            )
        except KeyError as exc:
            raise InputError(f"truth lacks the field {exc.args[0]!r}") from None
        except (TypeError, ValueError, UsageError) as exc:
            raise InputError(f"malformed truth: {exc}") from None

    def __repr__(self) -> str:
        return (f"Truth(n_samples={self.n_samples}, instances={self.instances.size}, "
                f"labels={list(self.labels)}, coverage={self.coverage():.3f})")


def truth_path(profile_path: str | os.PathLike[str]) -> Path:
    """Where the truth of a synthesized file goes: ``FILE`` → ``FILE.truth.json``."""
    p = Path(profile_path)
    return p.with_name(p.name + ".truth.json")


def write_truth(truth: Truth, path: str | os.PathLike[str]) -> Path:
    """Write ``truth`` as JSON atomically (temporary file in the same folder, then rename)."""
    return write_json_truth(truth.to_dict(), path)


def read_truth(path: str | os.PathLike[str]) -> Truth:
    """Read a truth file written by :func:`write_truth`."""
    return read_json_truth(path, Truth.from_dict)


def write_json_truth(data: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write a truth object's dict as compact JSON atomically (every truth kind)."""
    target = Path(path)
    atomic_write_text(target, json.dumps(data, separators=(",", ":")))
    return target


def read_json_truth(path: str | os.PathLike[str], parse: Callable[[Any], T]) -> T:
    """Read a truth JSON file with ``parse`` (a ``from_dict``); errors name the file."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise InputError(f"cannot read truth file: {exc.strerror}", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", path=str(path), line=exc.lineno) from None
    try:
        return parse(data)
    except InputError as exc:
        raise InputError(str(exc), path=str(path)) from None


# --- layouts ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Periodic:
    label: str
    length: int  # nominal samples at 5 ms
    share: float  # target share of the profile


@dataclass(frozen=True)
class _Aperiodic:
    style: str  # "init", "final", "io"
    share: float


# template level ranges (IPC) and segment-type weights (plateau, ramp, dip, spike)
_STYLES: dict[tuple[str, str], tuple[float, float, tuple[float, ...]]] = {
    ("nemo", "compute"): (0.7, 2.2, (0.4, 0.2, 0.2, 0.2)),
    ("hpcg", "init-a"): (1.0, 2.1, (0.55, 0.05, 0.3, 0.1)),
    ("hpcg", "init-b"): (0.3, 1.2, (0.1, 0.5, 0.05, 0.35)),
    ("hpcg", "compute"): (0.5, 1.9, (0.4, 0.2, 0.2, 0.2)),
    ("openfoam", "compute"): (0.6, 1.8, (0.35, 0.25, 0.2, 0.2)),
}


def _layout(kind: str, rng: np.random.Generator) -> list[_Periodic | _Aperiodic]:
    if kind == "nemo":
        return [_Aperiodic("init", 0.15), _Periodic("compute", 220, 0.77), _Aperiodic("final", 0.08)]
    if kind == "hpcg":
        return [_Aperiodic("init", 0.04), _Periodic("init-a", 150, 0.15),
                _Periodic("init-b", 165, 0.17), _Aperiodic("init", 0.04),
                _Periodic("compute", 300, 0.57), _Aperiodic("final", 0.03)]
    # openfoam: equal bunches of time steps, checkpoints of irregular durations
    io = 0.25 * rng.dirichlet(np.full(5, 4.0))
    parts: list[_Periodic | _Aperiodic] = [_Aperiodic("init", 0.05)]
    for share in io:
        parts += [_Periodic("compute", 520, 0.70 / 5), _Aperiodic("io", float(share))]
    return parts


def kind_code(kind: str) -> int:
    """A stable seed component for a name (CRC-32 of its bytes)."""
    return zlib.crc32(kind.encode())


# --- templates -------------------------------------------------------------------------
def _bump(width: int) -> np.ndarray:
    x = np.linspace(-2.0, 2.0, width)
    return np.exp(-x * x)


def _template(rng: np.random.Generator, length: int, lo: float, hi: float,
              weights: tuple[float, ...]) -> np.ndarray:
    """A smooth, structured iteration: plateaus, ramps and short dips and spikes."""
    min_width = max(3, length // 40)
    n_seg = min(int(rng.integers(5, 9)), max(2, length // min_width))
    kinds = ["ramp", "dip", *rng.choice(["plateau", "ramp", "dip", "spike"], size=n_seg - 2,
                                        p=np.asarray(weights) / np.sum(weights))]
    rng.shuffle(kinds)
    widths = min_width + np.floor(rng.dirichlet(np.full(n_seg, 2.5)) * (length - n_seg * min_width))
    widths = widths.astype(np.int64)
    widths[int(rng.integers(n_seg))] += length - int(widths.sum())
    span = hi - lo
    out = np.empty(length)
    level = lo + span * rng.uniform(0.3, 0.9)
    pos = 0
    for kind, w in zip(kinds, widths, strict=True):
        new = level
        while abs(new - level) < 0.25 * span:  # a visible change of level at every segment
            new = lo + span * rng.uniform(0.15, 0.95)
        if kind == "ramp":
            seg = np.linspace(level, new, w)
        else:
            seg = np.full(w, new)
            bw = int(min(w, max(3, rng.integers(3, 11) * length // 200)))
            at = int(rng.integers(0, w - bw + 1))
            if kind == "dip":
                seg[at:at + bw] -= (new - lo + 0.05) * 0.9 * _bump(bw)
            elif kind == "spike":
                seg[at:at + bw] += (hi - new + 0.1 * span) * _bump(bw)
        out[pos:pos + w] = seg
        pos += w
        level = new
    kernel = np.ones(3) / 3
    smooth = np.convolve(np.pad(out, 1, mode="edge"), kernel, mode="valid")
    return np.clip(smooth, lo - 0.1, hi + 0.15 * span)


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of two shapes after resampling ``a`` to the length of ``b``."""
    a_on_b = np.interp(np.linspace(0, a.size - 1, b.size), np.arange(a.size), a)
    return float(np.corrcoef(a_on_b, b)[0, 1])


def _templates(kind: str, seed: int, periodic: list[_Periodic], scale: float
               ) -> dict[str, np.ndarray]:
    """One template per label, from ``(seed, kind, label)`` only (not from the duration)."""
    out: dict[str, np.ndarray] = {}
    for p in periodic:
        if p.label in out:
            continue
        rng = np.random.default_rng([seed, kind_code(kind), kind_code(p.label)])
        lo, hi, weights = _STYLES[(kind, p.label)]
        length = round(p.length * scale)
        t = _template(rng, length, lo, hi, weights)
        # labels of similar lengths (hpcg init-a / init-b) get clearly different shapes:
        # redraw until the correlation with every such template is below 0.3
        for _ in range(100):
            if not any(abs(q.size - length) <= 0.2 * length and _correlation(q, t) > 0.3
                       for q in out.values()):
                break
            t = _template(rng, length, lo, hi, weights)
        out[p.label] = t
    return out


# --- signal pieces ---------------------------------------------------------------------
def _instances(rng: np.random.Generator, template: np.ndarray, count: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """``count`` consecutive warped, jittered (noiseless) instances and their lengths."""
    length = template.size
    d = max(1, round(_WARP * length))
    net = rng.integers(-d, d + 1, size=count)  # length change of each instance
    pairs = rng.integers(0, d + 1, size=count)  # extra insert+delete pairs: warping at equal length
    n_ins = pairs + np.maximum(net, 0)
    n_del = pairs + np.maximum(-net, 0)
    m = int((n_ins + n_del).max())
    counts = np.ones((count, length), dtype=np.int64)
    if m:
        pos = np.argsort(rng.random((count, length)), axis=1)[:, :m]  # distinct positions per row
        rank = np.arange(m)
        rows = np.broadcast_to(np.arange(count)[:, None], (count, m))
        ins = rank < n_ins[:, None]
        dele = (rank >= n_ins[:, None]) & (rank < (n_ins + n_del)[:, None])
        counts[rows[ins], pos[ins]] = 2
        counts[rows[dele], pos[dele]] = 0
    lengths = counts.sum(axis=1)
    flat = counts.ravel()
    src = np.repeat(np.tile(np.arange(length, dtype=np.float64), count), flat)
    first = np.cumsum(flat) - flat
    src[first[flat == 2] + 1] += 0.5  # an inserted sample interpolates between its neighbours
    values = np.interp(src, np.arange(length), template)
    which = np.repeat(np.arange(count), lengths)
    scale = 1.0 + rng.normal(0.0, SCALE_JITTER, count)
    offset = rng.normal(0.0, OFFSET_JITTER, count)
    return values * scale[which] + offset[which], lengths


_APERIODIC: dict[str, tuple[float, float, float, float]] = {
    # level range (IPC), mean level duration (samples at 5 ms), mean gap between bursts
    "init": (0.35, 1.8, 120.0, 400.0),
    "final": (0.3, 1.4, 90.0, 300.0),
    "io": (0.15, 0.55, 60.0, 120.0),
}


def _aperiodic(rng: np.random.Generator, n: int, style: str, scale: float) -> np.ndarray:
    """Non-repeating activity: piecewise levels of random durations, a drift, and bursts."""
    lo, hi, mean_dur, burst_gap = _APERIODIC[style]
    mean_dur *= scale
    # piecewise levels, durations log-normal (heavy spread: no characteristic length)
    dur = np.empty(0, dtype=np.int64)
    while dur.sum() < n:  # one draw almost always suffices
        more = rng.lognormal(np.log(mean_dur) - 0.5, 1.0, int(n / mean_dur * 3) + 8)
        dur = np.concatenate((dur, np.maximum(2, np.round(more)).astype(np.int64)))
    levels = rng.uniform(lo, hi, dur.size)
    x = np.repeat(levels, dur)[:n]
    # drift: a Brownian bridge of standard deviation 0.1
    if n > 2:
        walk = np.cumsum(rng.normal(0.0, 1.0, n))
        walk -= np.linspace(walk[0], walk[-1], n)
        x += 0.1 * walk / (walk.std() or 1.0)
    # I/O-like bursts at Poisson times, random widths and heights (a difference array)
    n_bursts = int(rng.poisson(n / (burst_gap * scale)))
    if n_bursts:
        at = rng.integers(0, n, n_bursts)
        width = np.maximum(1, np.round(rng.lognormal(np.log(12 * scale), 0.7, n_bursts)))
        end = np.minimum(n, at + width.astype(np.int64))
        up = (rng.random(n_bursts) < 0.6) | (style == "io")
        # bursts add IPC; drops (stalls) remove a share of it, so that IPC stays positive
        height = np.where(up, rng.uniform(0.2, 0.8, n_bursts), rng.uniform(0.3, 0.7, n_bursts))
        diff = np.zeros((2, n + 1))
        np.add.at(diff, (up.astype(np.int64), at), height)
        np.add.at(diff, (up.astype(np.int64), end), -height)
        steps = np.cumsum(diff[:, :n], axis=1)
        x = x * (1.0 - np.minimum(steps[0], 0.8)) + steps[1]
    # smooth floor at 0.2 IPC (softplus): a stalled node still retires some instructions
    return 0.2 + 0.05 * np.logaddexp(0.0, (x - 0.2) / 0.05)


# --- generator -------------------------------------------------------------------------
def generate(kind: str, *, minutes: float = 10.0, seed: int = 0,
             period: float = _BASE_PERIOD) -> tuple[Profile, Truth]:
    """A synthetic IPC profile of ``kind`` (one of :data:`KINDS`) and its ground truth.

    ``minutes`` of samples every ``period`` seconds (Phase-TA §II-B: 5 ms). The same
    ``kind`` and ``seed`` give the same templates at any duration; the same arguments give the
    same profile. Shares of the profile (our choice, from Phase-TA Table II and §IV-B) hold
    within a few points from 1 to 60 minutes. A ``period`` coarser than 5 ms is the run
    generated at ``period / f`` (``f = round(period / 5 ms)``) and averaged over each
    ``period``, as a monitoring system that reads its counters once per interval records it:
    the iterations keep their jitter in seconds (about 2 %), where warping an 11-sample
    template by whole samples made it 9-18 %.
    """
    if kind not in KINDS:
        raise UsageError(f"unknown synthetic kind; choose one of: {', '.join(KINDS)}",
                         parameter="kind", value=kind)
    if not (np.isfinite(minutes) and minutes > 0):
        raise UsageError("expected a positive number", parameter="minutes", value=minutes)
    if not (np.isfinite(period) and period > 0):
        raise UsageError("expected a positive number of seconds", parameter="period",
                         value=period)
    if int(seed) != seed or seed < 0:
        raise UsageError("expected a non-negative integer", parameter="seed", value=seed)
    seed = int(seed)
    layout = _layout(kind, np.random.default_rng([seed, kind_code(kind), 1]))
    shortest = min(p.length for p in layout if isinstance(p, _Periodic))
    if round(shortest * _BASE_PERIOD / period) < _MIN_LENGTH:
        raise UsageError(f"too long for {kind!r}: its shortest iteration would last fewer "
                         f"than {_MIN_LENGTH} samples", parameter="period", value=period)
    factor = max(1, round(period / _BASE_PERIOD))
    if factor == 1:
        return _generate(kind, minutes, seed, period)
    fine, truth = _generate(kind, minutes, seed, period / factor)
    return _averaged(fine, truth, factor, period)


def _averaged(fine: Profile, truth: Truth, factor: int, period: float
              ) -> tuple[Profile, Truth]:
    """The run sampled ``factor`` times coarser: every value the mean over its interval (as
    a counter read once per interval gives), every instance from the interval its start
    falls in to the one its end falls in."""
    n = fine.values.shape[0] // factor
    values = fine.values[:n * factor].reshape(n, factor, -1).mean(axis=1)
    ends = np.minimum(np.rint((truth.instances["start"] + truth.instances["length"])
                              / factor), n).astype(np.int64)
    starts = np.rint(truth.instances["start"] / factor).astype(np.int64)
    keep = ends > starts
    instances = np.zeros(int(keep.sum()), dtype=INSTANCE_DTYPE)
    instances["start"] = starts[keep]
    instances["length"] = (ends - starts)[keep]
    instances["label"] = truth.instances["label"][keep]
    templates = {label: t[:t.size // factor * factor].reshape(-1, factor).mean(axis=1)
                 for label, t in truth.templates.items()}
    coarse = Truth(instances=instances, labels=truth.labels, templates=templates,
                   n_samples=n, period=period, meta=truth.meta)
    profile = Profile(values=values, period=period, metrics=fine.metrics, node=fine.node,
                      meta=fine.meta)
    return profile, coarse


def _generate(kind: str, minutes: float, seed: int, period: float) -> tuple[Profile, Truth]:
    """:func:`generate` at ``period`` itself (at most the 5 ms the lengths are given at)."""
    n = round(minutes * 60.0 / period)
    scale = _BASE_PERIOD / period
    rng = np.random.default_rng([seed, kind_code(kind), 1])
    parts = _layout(kind, rng)
    periodic = [p for p in parts if isinstance(p, _Periodic)]
    templates = _templates(kind, seed, periodic, scale)
    names = list(templates)
    main = templates["compute"]
    sigma_aperiodic = _NOISE * float(np.ptp(main))

    # periodic regions first (their lengths vary with warping), aperiodic parts share the rest
    # instance counts per label from the label's total share (rounding once, not per region),
    # spread evenly over its regions, at least 2 per region (Phase-TA §II-A)
    counts: dict[int, int] = {}
    for label in names:
        regions = [i for i, p in enumerate(parts) if isinstance(p, _Periodic) and p.label == label]
        share = sum(parts[i].share for i in regions)
        total = max(2 * len(regions), round(share * n / templates[label].size))
        per, extra = divmod(total, len(regions))
        counts.update({i: per + (j < extra) for j, i in enumerate(regions)})
    generated = {i: _instances(rng, templates[parts[i].label], c) for i, c in counts.items()}
    rest = n - sum(int(lengths.sum()) for _, lengths in generated.values())
    aperiodic = [i for i, p in enumerate(parts) if isinstance(p, _Aperiodic)]
    shares = np.array([parts[i].share for i in aperiodic])
    ideal = max(rest, 0) * shares / shares.sum()
    sizes = np.floor(ideal).astype(np.int64)
    sizes[np.argsort(sizes - ideal, kind="stable")[: max(rest, 0) - int(sizes.sum())]] += 1
    if sizes.min() < _MIN_APERIODIC:
        raise UsageError(f"too short for {kind!r} at {period} s per sample; try at least "
                         "1 minute", parameter="minutes", value=minutes)

    pieces: list[np.ndarray] = []
    sigmas: list[np.ndarray] = []
    starts: list[np.ndarray] = []
    lengths_all: list[np.ndarray] = []
    labels_all: list[np.ndarray] = []
    size_of = dict(zip(aperiodic, sizes.tolist(), strict=True))
    pos = 0
    for i, p in enumerate(parts):
        if isinstance(p, _Periodic):
            values, lengths = generated[i]
            starts.append(pos + np.cumsum(lengths) - lengths)
            lengths_all.append(lengths)
            labels_all.append(np.full(lengths.size, names.index(p.label)))
            sigma = _NOISE * float(np.ptp(templates[p.label]))
        else:
            values = _aperiodic(rng, size_of[i], p.style, scale)
            sigma = sigma_aperiodic
        pieces.append(values)
        sigmas.append(np.full(values.size, sigma))
        pos += values.size
    signal = np.concatenate(pieces)
    signal += rng.normal(0.0, 1.0, n) * np.concatenate(sigmas)
    np.clip(signal, *IPC_RANGE, out=signal)

    instances = np.zeros(sum(x.size for x in starts), dtype=INSTANCE_DTYPE)
    instances["start"] = np.concatenate(starts)
    instances["length"] = np.concatenate(lengths_all)
    instances["label"] = np.concatenate(labels_all)
    meta = {"synth": kind, "seed": seed, "minutes": minutes}
    truth = Truth(instances=instances, labels=tuple(names),
                  templates={names.index(k): v for k, v in templates.items()},
                  n_samples=n, period=period, meta=meta)
    profile = Profile(values=signal[:, None], period=period, metrics=("ipc",),
                      node=f"synth-{kind}", meta=meta)
    return profile, truth
