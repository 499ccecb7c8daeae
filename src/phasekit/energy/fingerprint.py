"""Application fingerprints and their clustering (Silva 2024, ch. 3.8.4 and 5.10; notes §4).

A run's fingerprint is its counter-ratio series ``I_sz = I / I_m`` (total over memory
instructions, eq. 5.1) as a function of the fraction of execution, post-processed as in
Fig. 3.4: median filter, B-spline resampling to a common number of points, x normalized to
0-100 % of execution, Savitzky-Golay smoothing, values normalized to 0-100 %. Runs are
compared with the Canberra distance (eq. 5.2) and clustered hierarchically with Ward's
linkage (ch. 5.10.2).

Choices the thesis leaves open (ours):

- Samples where the numerator or the denominator is missing (NaN) or the denominator is not
  positive are dropped; the remaining samples are taken as evenly spread over the run.
- Median filter: kernel 5 samples (removes isolated spikes up to 2 samples long), shrunk to
  the largest odd size <= the run's length, zeros beyond the ends (``scipy.signal.medfilt``,
  computed in NumPy).
- B-spline: cubic interpolating spline (``scipy.interpolate.make_interp_spline``, k = 3, or
  lower for runs under 4 samples) through the filtered samples at x = sample index / (n - 1),
  evaluated at 101 points (0, 1, ..., 100 % of execution). A run with more than 4 x 101
  samples is first averaged in 4 x 101 equal bins, so that the resampling does not alias its
  noise.
- Savitzky-Golay: window 11 points (about 10 % of the execution), polynomial order 3
  (``scipy.signal.savgol_filter``, mode "interp", computed in NumPy): it removes what is
  left of sample noise and keeps features spanning at least ~10 % of the run.
- Value normalization last (after smoothing), min-max to 0-100 (a constant series becomes 0),
  so that curves of the same shape at another scale match (ch. 5.10.2, Fig. 5.14).
- Ward's linkage on Canberra distances (as the thesis; scipy applies the Lance-Williams
  update to any dissimilarity, Ward's variance interpretation holds only for Euclidean ones).
- Number of clusters: given, or, when every run's program is known, the k (2..n-1) whose
  cut maximizes the adjusted Rand index with the programs, ties to the smallest k (the
  thesis: "the number of clusters that maximize the occurrence of the same program with
  different input sizes in the same cluster", which alone would pick one cluster);
  otherwise the k (2..min(n-1, 20)) with the largest mean silhouette on the Canberra
  distances, ties to the smallest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from phasekit.errors import InputError, UsageError
from phasekit.profile import Profile
from phasekit.results import Result, check_version, plain, short_repr
from phasekit.verbmodule import make_callable

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from phasekit.present import Presentation

__all__ = [
    "DENOMINATORS",
    "MIN_POINTS",
    "VERSION",
    "FingerprintResult",
    "check_options",
    "cluster_fingerprints",
    "fingerprint",
    "fingerprint_profiles",
    "ratio_series",
]

VERSION = 1
_KIND = "fingerprints"
#: Memory-instruction counters tried in order when no ratio is given: a column, or a sum.
DENOMINATORS = ("mem_instructions", "memory_instructions", "mem_inst_retired_all",
                "mem_loads+mem_stores", "loads+stores",
                "mem_inst_retired_all_loads+mem_inst_retired_all_stores")
_POINTS = 101
#: The fewest points of a fingerprint that runs are clustered on (our choice: a curve of
#: fewer points has next to no shape to compare).
MIN_POINTS = 5
_BINS_PER_POINT = 4


def _terms(profile: Profile, expr: str) -> tuple[np.ndarray, str] | None:
    """The sum of the columns named in ``expr`` (``a`` or ``a+b``; a source name or another
    case also names a column, :meth:`Profile.find`) and ``expr`` in stored names; None when
    one is missing."""
    names = [s.strip() for s in expr.split("+")]
    found = [profile.find(n) if n else None for n in names]
    if not all(found):
        return None
    stored = [str(n) for n in found]
    return (np.sum([np.asarray(profile.column(n), dtype=np.float64) for n in stored], axis=0),
            "+".join(stored))


def _split_ratio(ratio: str) -> tuple[str, str]:
    """``(NUM, DEN)`` of a ratio ``NUM/DEN``; UsageError otherwise."""
    if ratio.count("/") != 1:
        raise UsageError("expected NUM/DEN (each a column or a+b)", parameter="ratio",
                         value=ratio)
    num, den = (s.strip() for s in ratio.split("/"))
    return num, den


def ratio_series(profile: Profile, ratio: str | None = None) -> tuple[np.ndarray, str]:
    """Per-sample ``NUM / DEN`` of a profile (default instructions over the first memory
    counter of :data:`DENOMINATORS` the profile has; each side a column or ``a+b``).

    Returns the valid ratios (module docstring) and the ratio used, as ``"NUM/DEN"`` in the
    profile's column names. A counter of a given ``ratio`` that the profile lacks is a
    UsageError naming the columns it has; without ``ratio``, a missing counter is an
    InputError (the profile lacks what a fingerprint needs).
    """
    if ratio is not None:
        num_expr, den_expr = _split_ratio(ratio)
        candidates = [den_expr]
    else:
        num_expr, candidates = "instructions", list(DENOMINATORS)
    numerator = _terms(profile, num_expr)
    if numerator is None:
        lacking = f"no counter {num_expr!r}; the profile has: " + ", ".join(profile.metrics)
        if ratio is not None:
            raise UsageError(lacking, parameter="ratio", value=ratio)
        raise InputError(lacking)
    for den_expr in candidates:
        denominator = _terms(profile, den_expr)
        if denominator is not None:
            break
    else:
        if ratio is not None:
            raise UsageError(f"no counter {candidates[0]!r}; the profile has: "
                             + ", ".join(profile.metrics), parameter="ratio", value=ratio)
        raise InputError(f"no memory-instruction counter ({' or '.join(candidates)}); the "
                         "profile has: " + ", ".join(profile.metrics)
                         + " (name one in the ratio, NUM/DEN)")
    (num, num_name), (den, den_name) = numerator, denominator
    with np.errstate(divide="ignore", invalid="ignore"):
        r = num / den
    valid = np.isfinite(r) & (den > 0)
    return r[valid], f"{num_name}/{den_name}"


def fingerprint(values: Any, *, n_points: int = _POINTS, median_kernel: int = 5,
                savgol_window: int = 11, savgol_order: int = 3) -> np.ndarray:
    """The post-processed fingerprint of one ratio series (Fig. 3.4; choices in the module
    docstring): ``n_points`` values in 0..100 at 0..100 % of the execution."""
    from scipy.interpolate import make_interp_spline

    y = np.asarray(values, dtype=np.float64).reshape(-1)
    y = y[np.isfinite(y)]
    if y.size < 2:
        raise InputError(f"a fingerprint needs at least 2 valid samples, got {y.size}")
    if n_points < 2 or median_kernel < 1 or savgol_order < 0:
        raise UsageError("fingerprint: n_points >= 2, median_kernel >= 1, savgol_order >= 0")
    kernel = min(median_kernel, y.size if y.size % 2 else y.size - 1)
    if kernel >= 3:
        y = _medfilt(y, kernel - (1 - kernel % 2))
    bins = _BINS_PER_POINT * n_points
    if y.size > bins:
        edges = np.linspace(0, y.size, bins + 1).round().astype(np.int64)
        y = np.add.reduceat(y, edges[:-1]) / np.diff(edges)
    x = np.linspace(0.0, 1.0, y.size)
    spline = make_interp_spline(x, y, k=min(3, y.size - 1))
    z = spline(np.linspace(0.0, 1.0, n_points))
    window = min(savgol_window, n_points if n_points % 2 else n_points - 1)
    if window > savgol_order and window >= 3:
        z = _savgol_interp(z, window, savgol_order)
    low, high = float(z.min()), float(z.max())
    if high - low <= 1e-12 * max(abs(high), 1.0):
        return np.zeros(n_points)
    return 100.0 * (z - low) / (high - low)


# The median and Savitzky-Golay filters are here in NumPy, not scipy.signal's, so that
# fingerprinting does not import scipy.signal (and with it scipy.stats): a quarter of a
# second of the command's start-up. tests/test_fingerprint_filters.py compares them with
# scipy's on random series.
def _medfilt(y: np.ndarray, kernel: int) -> np.ndarray:
    """``scipy.signal.medfilt(y, kernel)`` of a 1-D float series (odd ``kernel``): the median
    of each window, the series padded with zeros at both ends. Bit for bit the same: a
    median of an odd count is one of the window's values (with -0.0 in the series, a zero
    median may carry the other sign)."""
    half = kernel // 2
    padded = np.concatenate((np.zeros(half), y, np.zeros(half)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, kernel)
    return np.partition(windows, half, axis=1)[:, half]


def _savgol_interp(x: np.ndarray, window: int, order: int) -> np.ndarray:
    """``scipy.signal.savgol_filter(x, window, order, mode="interp")`` of a 1-D float
    series (``order < window <= x.size``), its operations in scipy's order: the
    least-squares filter coefficients (``savgol_coeffs``), their correlation in
    ``scipy.ndimage.convolve1d``'s summation order inside, and at each end a polynomial of
    degree ``order`` fitted to the first (last) ``window`` samples, evaluated at the first
    (last) ``window // 2`` ones."""
    half, odd = divmod(window, 2)
    eps = float(np.finfo(np.float64).eps)
    # savgol_coeffs(window, order): the design matrix of the flipped window positions.
    pos = half if odd else half - 0.5
    t = np.arange(-pos, window - pos, dtype=np.float64)[::-1]
    a = t ** np.arange(order + 1, dtype=np.float64).reshape(-1, 1)
    unit = np.zeros(order + 1)
    unit[0] = 1.0
    coeffs = np.linalg.lstsq(a, unit, rcond=eps * max(a.shape))[0]
    # convolve1d(x, coeffs, mode="constant") inside the edges: correlation with the reversed
    # weights (origin -1 for an even window), summed as ndimage's NI_Correlate1D sums (pairs
    # first when the weights are symmetric, or antisymmetric, within DBL_EPSILON).
    fw = coeffs[::-1]
    size1, size2 = window // 2, window - window // 2 - 1
    n = x.size
    out = np.empty(n)
    shift = 0 if odd else 1
    lo, hi = half, n - half  # the samples the edge fits do not overwrite

    def at(offset: int) -> np.ndarray:  # x[i + offset] for i in lo..hi-1
        return x[lo + shift + offset:hi + shift + offset]

    right, left = fw[size1 + 1:], fw[:size1][::-1]  # fw[size1 + i], fw[size1 - i]
    if odd and np.all(np.abs(right - left) <= eps):
        acc = at(0) * fw[size1]
        for jj in range(-size1, 0):
            acc += (at(jj) + at(-jj)) * fw[size1 + jj]
    elif odd and np.all(np.abs(right + left) <= eps):  # near-identity filters, order ~ window
        acc = at(0) * fw[size1]
        for jj in range(-size1, 0):
            acc += (at(jj) - at(-jj)) * fw[size1 + jj]
    else:
        acc = at(size2) * fw[size1 + size2]
        for jj in range(-size1, size2):
            acc += at(jj) * fw[size1 + jj]
    out[lo:hi] = acc
    # _fit_edges_polyfit: polyfit (scaled Vandermonde, least squares), then Horner.
    u = np.arange(window, dtype=np.float64)
    lhs = u[:, None] ** np.arange(order, -1, -1, dtype=np.float64)[None, :]
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    lhs /= scale
    for edge, (start, stop), put in ((x[:window], (0, half), slice(0, half)),
                                     (x[n - window:], (window - half, window),
                                      slice(n - half, n))):
        poly = (np.linalg.lstsq(lhs, edge.reshape(-1, 1), rcond=window * eps)[0].T / scale).T
        val = np.zeros((stop - start, 1))
        for j in range(order + 1):
            val = val * u[start:stop, None] + poly[j]
        out[put] = val[:, 0]
    return out


@dataclass(frozen=True)
class FingerprintResult(Result):
    """Fingerprints of runs and their Ward clustering (Silva 2024, ch. 5.10).

    ``fingerprints[i]``: run i's curve (0..100 at ``x_percent``); ``distances``: the square
    Canberra matrix; ``linkage``: scipy's (n-1) x 4 linkage matrix; ``clusters[i]``: 1-based
    cluster of run i; ``programs``: the known program of each run, when known (then ``ari``).
    """

    names: tuple[str, ...]
    ratio: str
    fingerprints: np.ndarray
    distances: np.ndarray
    linkage: np.ndarray
    clusters: np.ndarray
    n_clusters: int
    k_rule: str
    programs: tuple[str, ...] | None = None
    ari: float | None = None
    silhouette: float | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    KIND: ClassVar[str] = _KIND

    @property
    def x_percent(self) -> np.ndarray:
        return np.linspace(0.0, 100.0, self.fingerprints.shape[1])

    def __repr__(self) -> str:
        return short_repr(
            self, f"{len(self.names)} runs", f"{self.n_clusters} clusters")

    def to_dict(self, *, series: bool = True) -> dict[str, Any]:
        runs = []
        for i, name in enumerate(self.names):
            row: dict[str, Any] = {"name": name, "cluster": int(self.clusters[i])}
            if self.programs is not None:
                row["program"] = self.programs[i]
            if series:
                row["fingerprint"] = self.fingerprints[i]
            runs.append(row)
        out = {"kind": _KIND, "version": VERSION, "ratio": self.ratio,
               "n_clusters": self.n_clusters, "k_rule": self.k_rule, "ari": self.ari,
               "silhouette": self.silhouette, "runs": runs, "params": dict(self.params)}
        if series:
            out["distances"] = self.distances
            out["linkage"] = self.linkage
        return plain(out)

    def nearest(self) -> list[tuple[int, int, float]]:
        """Each run (in the dendrogram's leaf order) with its nearest other run and their
        Canberra distance: ``(run, nearest, distance)``, indices into ``names``."""
        from scipy.cluster.hierarchy import leaves_list

        out = []
        for i in leaves_list(self.linkage):
            d = np.array(self.distances[i], dtype=np.float64)
            d[i] = np.inf
            j = int(d.argmin())
            out.append((int(i), j, float(d[j])))
        return out

    def summary(self) -> pd.DataFrame:
        """One row per run in the dendrogram's leaf order, as the CLI prints it: ``run``,
        ``program`` (when known), ``cluster`` (1-based), the ``nearest`` run and its
        ``distance`` (Canberra)."""
        import pandas as pd

        rows = []
        for i, j, distance in self.nearest():
            row: dict[str, Any] = {"run": self.names[i]}
            if self.programs is not None:
                row["program"] = self.programs[i]
            rows.append({**row, "cluster": int(self.clusters[i]), "nearest": self.names[j],
                         "distance": distance})
        return pd.DataFrame(rows)

    def present(self, name: str | None = None) -> Presentation:
        """The headline (runs, clusters, how they match the programs), each run with its
        cluster and nearest run, and how the number of clusters was chosen
        (:mod:`phasekit.energy.fingerprint_present`)."""
        from phasekit.energy.fingerprint_present import presentation

        return presentation(self, name)

    def plot(self, ax: Axes | None = None) -> Figure:
        """The Ward dendrogram and the fingerprints coloured by cluster; on ``ax``, the
        fingerprints only (:func:`phasekit.plot.fingerprint.fingerprints_figure`)."""
        from phasekit.plot.fingerprint import fingerprints_figure

        return fingerprints_figure(self, ax)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str | None = None) -> FingerprintResult:
        check_version(dict(data), _KIND, VERSION, source)
        try:
            runs = data["runs"]
            programs = [r.get("program") for r in runs]
            return cls(
                names=tuple(str(r["name"]) for r in runs), ratio=str(data["ratio"]),
                fingerprints=np.asarray([r["fingerprint"] for r in runs], dtype=np.float64),
                distances=np.asarray(data["distances"], dtype=np.float64),
                linkage=np.asarray(data["linkage"], dtype=np.float64),
                clusters=np.asarray([r["cluster"] for r in runs], dtype=np.int64),
                n_clusters=int(data["n_clusters"]), k_rule=str(data["k_rule"]),
                programs=(tuple(str(p) for p in programs)
                          if all(p is not None for p in programs) else None),
                ari=None if data.get("ari") is None else float(data["ari"]),
                silhouette=None if data.get("silhouette") is None else float(data["silhouette"]),
                params=dict(data.get("params") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"fingerprints result: missing or bad field ({exc})",
                             path=source) from None


def _check_clustering(n_runs: int, n_clusters: int | None, n_points: int) -> None:
    if n_points < MIN_POINTS:
        raise UsageError(f"expected at least {MIN_POINTS}", parameter="n_points",
                         value=n_points, option="--points")
    if n_clusters is not None and not 1 <= n_clusters <= n_runs:
        raise UsageError(f"expected 1..{n_runs} (the number of runs)", parameter="n_clusters",
                         value=n_clusters, option="--clusters")


def check_options(n_runs: int, *, ratio: str | None = None, n_clusters: int | None = None,
                  n_points: int = _POINTS) -> None:
    """UsageError naming the first option that :func:`fingerprint_profiles` of ``n_runs``
    runs cannot take (fewer than two runs, a malformed ``ratio``, ``n_points`` below
    :data:`MIN_POINTS`, ``n_clusters`` outside 1..n_runs), before any run is read."""
    if n_runs < 2:
        raise UsageError(f"expected at least two profiles to compare, got {n_runs}",
                         parameter="profiles", option="PROFILE...")
    if ratio is not None:
        _split_ratio(ratio)  # a malformed ratio is said once, not of the first run
    _check_clustering(n_runs, n_clusters, n_points)


def cluster_fingerprints(series: Sequence[Any], *, names: Sequence[str] | None = None,
                         programs: Sequence[str] | None = None,
                         n_clusters: int | None = None, ratio: str = "",
                         n_points: int = _POINTS, median_kernel: int = 5,
                         savgol_window: int = 11, savgol_order: int = 3) -> FingerprintResult:
    """Fingerprint each ratio series, Canberra distances, Ward clustering (ch. 5.10.2).

    ``n_clusters`` None picks k by the rule of the module docstring.
    """
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import pdist, squareform

    n = len(series)
    if n < 2:
        raise UsageError(f"clustering needs at least 2 runs, got {n}")
    _check_clustering(n, n_clusters, n_points)
    names = tuple(str(s) for s in names) if names is not None else tuple(
        f"run{i}" for i in range(n))
    if len(names) != n or (programs is not None and len(programs) != n):
        raise UsageError("names and programs must have one entry per run")
    fps = np.empty((n, n_points))
    for i, s in enumerate(series):
        try:
            fps[i] = fingerprint(s, n_points=n_points, median_kernel=median_kernel,
                                 savgol_window=savgol_window, savgol_order=savgol_order)
        except InputError as exc:
            raise InputError(f"{names[i]}: {exc}") from None
    condensed = pdist(fps, "canberra")
    Z = linkage(condensed, method="ward")
    D = squareform(condensed)
    labels_by_k = {k: fcluster(Z, t=k, criterion="maxclust") for k in range(1, n + 1)}
    ari = sil = None
    progs = tuple(str(p) for p in programs) if programs is not None else None
    if n_clusters is not None:
        k, rule = int(n_clusters), "given"
    elif progs is not None and n > 2:
        scores = {k: _ari(progs, labels_by_k[k]) for k in range(2, n)}
        k, rule = max(scores, key=lambda q: (scores[q], -q)), "programs-ari"
    elif n > 2:
        scores = {k: _silhouette(D, labels_by_k[k]) for k in range(2, min(n - 1, 20) + 1)}
        k, rule = max(scores, key=lambda q: (scores[q], -q)), "silhouette"
    else:
        k, rule = 1, "two-runs"
    clusters = labels_by_k[k]
    if progs is not None:
        ari = _ari(progs, clusters)
    if 2 <= len(set(clusters.tolist())) <= n - 1:
        sil = _silhouette(D, clusters)
    params = {"n_points": n_points, "median_kernel": median_kernel,
              "savgol_window": savgol_window, "savgol_order": savgol_order,
              "distance": "canberra", "linkage": "ward"}
    return FingerprintResult(names=names, ratio=ratio, fingerprints=fps, distances=D,
                             linkage=Z, clusters=np.asarray(clusters, dtype=np.int64),
                             n_clusters=len(set(clusters.tolist())), k_rule=rule,
                             programs=progs, ari=ari, silhouette=sil, params=params)


def _ari(truth: Sequence[str], labels: np.ndarray) -> float:
    from phasekit.metrics import labels_ari

    return labels_ari(np.asarray(truth), labels)


# The silhouette is computed here, the way scikit-learn computes it (the tests compare the
# results bit for bit), so that fingerprinting does not import scikit-learn and, with it,
# pandas: 0.25 s of a command that takes under a second otherwise.
def _silhouette(D: np.ndarray, labels: np.ndarray) -> float:
    """The mean silhouette of ``labels`` on the distance matrix ``D``
    (``sklearn.metrics.silhouette_score(D, labels, metric="precomputed")``, its operations in
    its order); -1 unless 2 <= clusters <= n - 1."""
    if not 2 <= len(set(labels.tolist())) <= len(labels) - 1:
        return -1.0
    codes = np.unique(np.asarray(labels), return_inverse=True)[1].ravel()
    freqs = np.bincount(codes)
    D = np.asarray(D, dtype=float)
    n = codes.size
    sums = np.zeros((n, freqs.size))
    for i in range(n):
        sums[i] += np.bincount(codes, weights=D[i], minlength=freqs.size)
    rows = np.arange(n)
    intra = sums[rows, codes]
    sums[rows, codes] = np.inf
    sums /= freqs
    inter = sums.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        intra /= (freqs - 1).take(codes, mode="clip")
        scores = inter - intra
        scores /= np.maximum(intra, inter)
    return float(np.mean(np.nan_to_num(scores)))  # NaN: a run alone in its cluster, 0


def fingerprint_profiles(profiles: Sequence[Profile], *, names: Sequence[str] | None = None,
                         ratio: str | None = None, n_clusters: int | None = None,
                         programs: Sequence[str] | None = None, **kwargs: Any
                         ) -> FingerprintResult:
    """:func:`cluster_fingerprints` on profiles' ratio series (:func:`ratio_series`).

    ``programs`` default: every profile's ``meta["program"]`` when all have one.
    """
    check_options(len(profiles), ratio=ratio, n_clusters=n_clusters,
                  n_points=kwargs.get("n_points", _POINTS))
    names = tuple(names) if names is not None else tuple(
        str(p.meta.get("name", f"run{i}")) for i, p in enumerate(profiles))
    series, used = [], []
    for name, profile in zip(names, profiles, strict=True):
        try:
            r, how = ratio_series(profile, ratio)
        except InputError as exc:
            raise InputError(f"{name}: {exc}") from None
        except UsageError as exc:  # a column of the ratio that this run lacks
            raise UsageError(f"{name}: {exc.detail}", parameter=exc.parameter,
                             value=exc.value, option=exc.option) from None
        series.append(r)
        used.append(how)
    if programs is None and profiles and all("program" in p.meta for p in profiles):
        programs = [str(p.meta["program"]) for p in profiles]
    label = used[0] if len(set(used)) == 1 else "; ".join(sorted(set(used)))
    return cluster_fingerprints(series, names=names, programs=programs,
                                n_clusters=n_clusters, ratio=label, **kwargs)


make_callable(__name__, "phasekit.energy.api:fingerprint")  # pk.energy.fingerprint(...) runs it
