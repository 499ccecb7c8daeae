"""Evaluation of phase-change detection and phase identification (Tsafack Chetsa et al., §III-C and §IV-B).

Tsafack Chetsa et al. scores a detector with three figures (§III-C): the *sensitivity*, the share of the
true changes (changes of workload) that are detected, extra detections not lowering it; the
*number of false positives*, detections where no change occurred; and the *mean detection
time*, the mean delay between a change and its detection, false positives not counted. The
seed does not say how a detection is paired with a change; :func:`evaluate_changes` makes
that explicit with a tolerance window. Identification (§IV-B: "identifies more than 95 % of
recurring phases"; "none of the idle periods is identified with any of the workloads") is
scored by :func:`identification_rate`.

Times are seconds on the profile's time axis. The functions take plain arrays; a truth is
anything with ``segments`` of ``(start_s, end_s, label)`` (``phasekit.synth.PhaseTruth``) or
such a sequence itself.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from phasekit.errors import UsageError

__all__ = [
    "ChangeScores",
    "IdentificationScores",
    "evaluate_changes",
    "identification_rate",
]


def _times(values: Any, parameter: str) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        raise UsageError("expected finite times in seconds", parameter=parameter)
    return np.sort(x, kind="stable")


def _nan_to_none(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _item(x: Any) -> Any:
    """A numpy scalar as a plain Python value (for JSON)."""
    return x.item() if isinstance(x, np.generic) else x


# --- change detection ------------------------------------------------------------------
@dataclass(frozen=True)
class ChangeScores:
    """Sensitivity, false positives and detection time of detected phase changes (Tsafack Chetsa et al.
    §III-C), with the pairing behind them.

    ``sensitivity`` and ``mean_detection_time_s`` are NaN when undefined (no true change, no
    matched pair); ``matches`` holds ``(true_s, detected_s)`` pairs in time order, ``missed``
    the undetected true changes, ``false_positive_times`` the unmatched detections.
    """

    sensitivity: float
    false_positives: int
    mean_detection_time_s: float
    n_true: int
    n_detected: int
    matches: tuple[tuple[float, float], ...]
    missed: tuple[float, ...]
    false_positive_times: tuple[float, ...]
    tolerance_s: float
    early_s: float

    @property
    def n_matched(self) -> int:
        return len(self.matches)

    @property
    def delays_s(self) -> np.ndarray:
        """Detection time (detected - true) of every matched pair."""
        return np.array([d - t for t, d in self.matches], dtype=np.float64)

    @property
    def precision(self) -> float:
        """Share of the detections matched to a true change (NaN without detections)."""
        return self.n_matched / self.n_detected if self.n_detected else math.nan

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes ``None``)."""
        return {
            "sensitivity": _nan_to_none(self.sensitivity),
            "false_positives": self.false_positives,
            "mean_detection_time_s": _nan_to_none(self.mean_detection_time_s),
            "n_true": self.n_true,
            "n_detected": self.n_detected,
            "n_matched": self.n_matched,
            "precision": _nan_to_none(self.precision),
            "matches": [list(m) for m in self.matches],
            "missed": list(self.missed),
            "false_positive_times": list(self.false_positive_times),
            "tolerance_s": self.tolerance_s,
            "early_s": self.early_s,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChangeScores:
        """Inverse of :meth:`to_dict`."""
        def num(key: str) -> float:
            value = data[key]
            return math.nan if value is None else float(value)

        return cls(
            sensitivity=num("sensitivity"), false_positives=int(data["false_positives"]),
            mean_detection_time_s=num("mean_detection_time_s"), n_true=int(data["n_true"]),
            n_detected=int(data["n_detected"]),
            matches=tuple((float(a), float(b)) for a, b in data["matches"]),
            missed=tuple(float(x) for x in data["missed"]),
            false_positive_times=tuple(float(x) for x in data["false_positive_times"]),
            tolerance_s=float(data["tolerance_s"]), early_s=float(data["early_s"]),
        )


def evaluate_changes(detected_s: Any, true_s: Any, *, tolerance_s: float,
                     early_s: float = 1.0) -> ChangeScores:
    """Score detected phase changes against the true ones (Tsafack Chetsa et al. §III-C).

    **Pairing (our definition; the paper gives none).** True change ``c_k`` (in time order)
    owns the window ``[c_k - early_s, min(c_k + tolerance_s, c_{k+1} - early_s))``, closed
    at ``c_k + tolerance_s`` when that comes first: a detection up to ``tolerance_s`` after
    the change, or up to ``early_s`` before it, but never one that already falls in the next
    change's window. The windows are disjoint, so the pairing is one-to-one: each true change
    is matched with the *earliest* detection in its window; the other detections in it
    (double detections) and detections in no window are false positives.

    ``early_s`` defaults to 1 s, one sampling interval of the paper (§III-A): a detector that
    stamps a change with the start of the first sample showing it reports a change that
    happened inside that sample up to one interval early. Use ``early_s=0`` to count only
    detections at or after the change.

    - ``sensitivity`` = matched true changes / true changes (extra detections do not lower
      it, as in the paper); NaN without true changes.
    - ``false_positives`` = detections matched to no true change.
    - ``mean_detection_time_s`` = mean of (detected - true) over the matched pairs (negative
      for an early detection); NaN without a match.

    Inputs are times in seconds, in any order (they are sorted); duplicates are allowed.
    """
    if not (np.isfinite(tolerance_s) and tolerance_s >= 0):
        raise UsageError("expected a number of seconds >= 0", parameter="tolerance_s",
                         value=tolerance_s)
    if not (np.isfinite(early_s) and early_s >= 0):
        raise UsageError("expected a number of seconds >= 0", parameter="early_s",
                         value=early_s)
    det = _times(detected_s, "detected_s")
    true = _times(true_s, "true_s")
    n_true, n_det = true.size, det.size
    lo = true - early_s
    next_open = np.append(true[1:] - early_s, np.inf)
    late = true + tolerance_s
    # the earliest detection at or after each window's opening, if it lies inside the window:
    # closed at c + tolerance, open at the next window's opening (windows stay disjoint)
    first = np.searchsorted(det, lo, side="left")
    cand = det[np.minimum(first, max(n_det - 1, 0))] if n_det else np.full(n_true, np.nan)
    inside = (first < n_det) & np.where(late < next_open, cand <= late, cand < next_open)
    matched_det = first[inside]
    used = np.zeros(n_det, dtype=bool)
    used[matched_det] = True
    pairs = tuple(zip(true[inside].tolist(), det[matched_det].tolist(), strict=True))
    delays = det[matched_det] - true[inside]
    return ChangeScores(
        sensitivity=float(inside.sum() / n_true) if n_true else math.nan,
        false_positives=int(n_det - used.sum()),
        mean_detection_time_s=float(delays.mean()) if delays.size else math.nan,
        n_true=int(n_true), n_detected=int(n_det), matches=pairs,
        missed=tuple(true[~inside].tolist()),
        false_positive_times=tuple(det[~used].tolist()),
        tolerance_s=float(tolerance_s), early_s=float(early_s),
    )


# --- identification --------------------------------------------------------------------
@dataclass(frozen=True)
class IdentificationScores:
    """How consistently detected phase ids follow the recurring workloads (Tsafack Chetsa et al. §IV-B).

    Per true segment (in the truth's order): ``dominant_ids`` (``None`` where no detected
    phase overlaps it) and ``dominant_shares`` (share of the segment's duration covered by
    that id). ``per_label`` maps a label to ``(identified, recurrences)``; ``confusions``
    lists ``(label_a, label_b, id)`` for two different labels sharing a dominant id.
    """

    rate: float
    identified: int
    recurrences: int
    per_label: Mapping[str, tuple[int, int]]
    confusions: tuple[tuple[str, str, Hashable], ...]
    dominant_ids: tuple[Hashable | None, ...]
    dominant_shares: tuple[float, ...]
    segment_labels: tuple[str, ...]
    reference: str

    def confused(self, label: str) -> set[str]:
        """The labels sharing a dominant id with ``label``."""
        return {b if a == label else a for a, b, _ in self.confusions if label in (a, b)}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes ``None``)."""
        return {
            "rate": _nan_to_none(self.rate),
            "identified": self.identified,
            "recurrences": self.recurrences,
            "per_label": {k: {"identified": i, "recurrences": r}
                          for k, (i, r) in self.per_label.items()},
            "confusions": [{"labels": [a, b], "id": _item(i)} for a, b, i in self.confusions],
            "dominant_ids": [_item(i) for i in self.dominant_ids],
            "dominant_shares": list(self.dominant_shares),
            "segment_labels": list(self.segment_labels),
            "reference": self.reference,
        }


def _segments(truth: Any) -> list[tuple[float, float, str]]:
    segs = getattr(truth, "segments", truth)
    try:
        out = [(float(a), float(b), str(lab)) for a, b, lab in segs]
    except (TypeError, ValueError):
        raise UsageError("truth must be a PhaseTruth or (start_s, end_s, label) triples"
                         ) from None
    if any(not (math.isfinite(a) and math.isfinite(b) and b > a) for a, b, _ in out):
        raise UsageError("truth segments must be finite and end after they start")
    return out


def identification_rate(phase_ids: Sequence[Hashable] | np.ndarray, phase_starts_s: Any,
                        phase_ends_s: Any, truth: Any, *,
                        labels: Sequence[str] | None = None,
                        reference: Literal["first", "any"] = "first") -> IdentificationScores:
    """Share of recurring workloads given the id of their earlier occurrence (Tsafack Chetsa et al. §IV-B).

    Detected phases are ``(phase_ids[i], phase_starts_s[i], phase_ends_s[i])``; ids are
    integers or strings (one id may label many phases: identified phases share an id).

    **Definition (ours; the paper gives none).**

    1. The *dominant id* of a true segment is the detected id covering most of its duration
       (overlap in seconds, summed over the phases with that id; ties go to the id that sorts
       first). A segment no detected phase overlaps has none.
    2. The occurrences of a label are its segments in time order. With ``reference="first"``
       (default) a later occurrence is *identified* when its dominant id equals the dominant
       id of the label's first occurrence: the id under which a configuration would have been
       learned. With ``"any"``, when it equals the dominant id of any earlier occurrence.
       A segment without a dominant id is never identified and, as a first occurrence, lets
       none of its recurrences be identified under ``"first"``.
    3. ``rate`` = identified recurrences / recurrences (occurrences after the first), summed
       over ``labels`` (default: every label of the truth, idle included); NaN when no label
       recurs.
    4. ``confusions``: every pair of different labels (among all the truth's labels) with
       segments sharing a dominant id, with that id, e.g. ``("EP", "idle", 3)``: Tsafack Chetsa et al.
       notes that idle is never identified with a workload.
    """
    if reference not in ("first", "any"):
        raise UsageError("expected 'first' or 'any'", parameter="reference", value=reference)
    ids = np.asarray(phase_ids).ravel()
    starts = np.asarray(phase_starts_s, dtype=np.float64).ravel()
    ends = np.asarray(phase_ends_s, dtype=np.float64).ravel()
    if not (ids.size == starts.size == ends.size):
        raise UsageError(f"{ids.size} phase ids, {starts.size} starts and {ends.size} ends: "
                         "they must have one entry per detected phase")
    if not (np.all(np.isfinite(starts)) and np.all(np.isfinite(ends))):
        raise UsageError("detected phase times must be finite")
    if np.any(ends < starts):
        raise UsageError("detected phases must not end before they start")
    segs = _segments(truth)
    seg_labels = [lab for _, _, lab in segs]
    chosen = list(dict.fromkeys(seg_labels)) if labels is None else [str(x) for x in labels]
    unknown = sorted(set(chosen) - set(seg_labels))
    if unknown:
        raise UsageError(f"labels not in the truth: {', '.join(unknown)}")

    # overlap (s) of every segment with every distinct id: (segments x phases) @ one-hot
    uniq, code = np.unique(ids, return_inverse=True) if ids.size else (ids, np.zeros(0, int))
    a = np.array([s for s, _, _ in segs], dtype=np.float64)[:, None]
    b = np.array([e for _, e, _ in segs], dtype=np.float64)[:, None]
    ov = np.clip(np.minimum(b, ends[None, :]) - np.maximum(a, starts[None, :]), 0.0, None)
    per_id = np.zeros((len(segs), uniq.size))
    np.add.at(per_id.T, code, ov.T)
    best = per_id.argmax(axis=1) if uniq.size else np.zeros(len(segs), dtype=int)
    best_ov = per_id[np.arange(len(segs)), best] if uniq.size else np.zeros(len(segs))
    has = best_ov > 0
    dominant: list[Hashable | None] = [_item(uniq[j]) if h else None
                                       for j, h in zip(best, has, strict=True)]
    shares = (best_ov / (b[:, 0] - a[:, 0])).tolist()

    per_label: dict[str, tuple[int, int]] = {}
    for lab in chosen:
        occ = [dominant[i] for i, s in enumerate(seg_labels) if s == lab]
        if reference == "first":
            ok = [d is not None and d == occ[0] for d in occ[1:]]
        else:
            ok = [d is not None and d in occ[:k + 1] for k, d in enumerate(occ[1:])]
        per_label[lab] = (int(sum(ok)), len(occ) - 1)
    identified = sum(i for i, _ in per_label.values())
    recurrences = sum(r for _, r in per_label.values())

    order = list(dict.fromkeys(seg_labels))
    by_id: dict[Hashable, list[str]] = {}
    for d, lab in zip(dominant, seg_labels, strict=True):
        if d is not None and lab not in by_id.setdefault(d, []):
            by_id[d].append(lab)
    confusions = tuple(
        (x, y, d)
        for d, labs in by_id.items()
        for i, x in enumerate(sorted(labs, key=order.index))
        for y in sorted(labs, key=order.index)[i + 1:]
    )
    return IdentificationScores(
        rate=identified / recurrences if recurrences else math.nan,
        identified=int(identified), recurrences=int(recurrences), per_label=per_label,
        confusions=confusions, dominant_ids=tuple(dominant), dominant_shares=tuple(shares),
        segment_labels=tuple(seg_labels), reference=reference,
    )
