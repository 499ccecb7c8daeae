"""Naive reference implementations (plain Python, small inputs) of the fast kernels.

Written from the definitions in the docstrings, independently of the kernels, the way
stumpy checks its kernels against tests/naive.py.
"""

from __future__ import annotations

import bisect

import numpy as np

INF = float("inf")


def in_band(i: int, j: int, n: int, m: int, radius: int) -> bool:
    if n == 1 or m == 1:
        return True
    return abs(i * (m - 1) - j * (n - 1)) <= radius * max(n - 1, m - 1)


def dtw2_matrix(a: np.ndarray, b: np.ndarray, radius: int) -> list[list[float]]:
    """Cumulative cost matrix of DTW_2 (squared pointwise Euclidean distance)."""
    a = np.atleast_2d(a.T).T
    b = np.atleast_2d(b.T).T
    n, m = len(a), len(b)
    cost = [[INF] * m for _ in range(n)]
    for i in range(n):
        for j in range(m):
            if not in_band(i, j, n, m, radius):
                continue
            local = sum((float(a[i][d]) - float(b[j][d])) ** 2 for d in range(a.shape[1]))
            if i == 0 and j == 0:
                cost[i][j] = local
                continue
            candidates = []
            if i > 0:
                candidates.append(cost[i - 1][j])
            if j > 0:
                candidates.append(cost[i][j - 1])
            if i > 0 and j > 0:
                candidates.append(cost[i - 1][j - 1])
            cost[i][j] = local + min(candidates)
    return cost


def dtw2(a: np.ndarray, b: np.ndarray, radius: int) -> float:
    cost = dtw2_matrix(a, b, radius)
    return cost[-1][-1]


def dtw2_path(a: np.ndarray, b: np.ndarray, radius: int,
              cost: list[list[float]] | None = None) -> list[tuple[int, int]]:
    """The optimal DTW_2 path from (0, 0) to the end, walked back through the cost matrix
    (ties: diagonal, then up, then left)."""
    cost = dtw2_matrix(a, b, radius) if cost is None else cost
    i, j = len(a) - 1, len(b) - 1
    path = [(i, j)]
    while (i, j) != (0, 0):
        if i == 0:
            j -= 1
        elif j == 0:
            i -= 1
        else:
            options = [(cost[i - 1][j - 1], (i - 1, j - 1)), (cost[i - 1][j], (i - 1, j)),
                       (cost[i][j - 1], (i, j - 1))]
            best = min(value for value, _ in options)
            i, j = next(step for value, step in options if value == best)
        path.append((i, j))
    return path[::-1]


def path_sums(average: np.ndarray, series: np.ndarray, radius: int
              ) -> tuple[float, np.ndarray, np.ndarray]:
    """DTW_2 of ``average`` to ``series``, and per point of ``average`` the sum and the number
    of the points of ``series`` that the optimal path aligns with it (zeros when no path
    stays in the band)."""
    average = np.atleast_2d(average.T).T
    series = np.atleast_2d(series.T).T
    sums = np.zeros(average.shape)
    counts = np.zeros(len(average))
    cost = dtw2_matrix(average, series, radius)
    if cost[-1][-1] < INF:
        for i, j in dtw2_path(average, series, radius, cost):
            sums[i] += series[j]
            counts[i] += 1
    return cost[-1][-1], sums, counts


def dba_step(average: np.ndarray, series: list[np.ndarray], radius: int) -> tuple[np.ndarray, float]:
    """One DBA iteration: align each series with the average, move every point of the average
    to the mean of the points aligned with it. Returns the new average and the WGSS of the old."""
    average = np.atleast_2d(average.T).T
    n, dims = average.shape
    sums = [[0.0] * dims for _ in range(n)]
    counts = [0] * n
    wgss = 0.0
    for s in series:
        s = np.atleast_2d(s.T).T
        cost = dtw2_matrix(average, s, radius)
        wgss += cost[-1][-1]
        for i, j in dtw2_path(average, s, radius, cost):
            for d in range(dims):
                sums[i][d] += float(s[j][d])
            counts[i] += 1
    new = np.array([[sums[i][d] / counts[i] for d in range(dims)] for i in range(n)])
    return new, wgss


def delta_curve(x: np.ndarray, window_start: int, half: int) -> list[float]:
    """delta(k), k = 0..L-1: RSW = x[w+L : w+2L] against the L samples starting k earlier,
    squared distance over the sum of squares about the pooled mean of both."""
    x = np.atleast_2d(x.T).T
    rsw = window_start + half
    out = [0.0]
    for k in range(1, half):
        right = x[rsw:rsw + half].tolist()
        shifted = x[rsw - k:rsw - k + half].tolist()
        distance = 0.0
        spread = 0.0
        for d in range(x.shape[1]):
            r = [row[d] for row in right]
            s = [row[d] for row in shifted]
            pooled = (sum(r) + sum(s)) / (2 * half)
            distance += sum((a - b) ** 2 for a, b in zip(r, s, strict=True))
            spread += sum((a - pooled) ** 2 for a in r) + sum((b - pooled) ** 2 for b in s)
        out.append(1.0 if spread <= 1e-12 * half else distance / spread)
    return out


def base_period(delta: list[float], min_period: int, near_zero: float, rise: float,
                multiple_tolerance: float = 0.02, refine_tolerance: float = 0.03) -> int:
    """The detector's rule, from its docstring: first rise, global minimum k*, family of local
    minima with delta <= 2 near_zero of which k* is a multiple, smallest member, refined."""
    last = len(delta) - 1
    risen = [k for k in range(1, last + 1) if delta[k] >= rise]
    if not risen:
        return 0
    first = max(risen[0], min_period)
    if first > last:
        return 0
    k_star = min(range(first, last + 1), key=lambda k: (delta[k], k))
    if delta[k_star] > near_zero:
        return 0
    for k in range(first, k_star + 1):
        local_min = (k == 1 or delta[k - 1] >= delta[k]) and (k == last or delta[k + 1] >= delta[k])
        multiple = round(k_star / k)
        if (delta[k] <= 2 * near_zero and local_min and multiple >= 1
                and abs(k_star - multiple * k) <= max(1.0, multiple_tolerance * k_star)):
            spread = max(1, int(refine_tolerance * k))
            around = range(max(first, k - spread), min(last, k + spread) + 1)
            return min(around, key=lambda j: (delta[j], abs(j - k) if j != k else -1))
    return k_star


def block_delta(x: np.ndarray, a: int, b: int, length: int) -> float:
    """delta between x[a:a+length] and x[b:b+length] (pooled mean), plain Python."""
    x = np.atleast_2d(x.T).T
    distance = spread = 0.0
    for d in range(x.shape[1]):
        r = [float(v) for v in x[a:a + length, d]]
        s = [float(v) for v in x[b:b + length, d]]
        pooled = (sum(r) + sum(s)) / (2 * length)
        distance += sum((p - q) ** 2 for p, q in zip(r, s, strict=True))
        spread += sum((p - pooled) ** 2 for p in r) + sum((q - pooled) ** 2 for q in s)
    return 1.0 if spread <= 1e-12 * length else distance / spread


def detect(x: np.ndarray, half: int, *, min_period: int = 4, near_zero: float = 0.25,
           rise: float = 0.5, aperiodic_step: float = 0.25) -> list[tuple[int, int, int, bool]]:
    """The detector's pass as its docstring states it: (start, length, count, leading) per batch."""
    n = len(x)
    step = max(1, int(aperiodic_step * half))
    batches: list[tuple[int, int, int, bool]] = []
    w = 0
    previous_periodic = False
    while w + 2 * half <= n:
        rsw = w + half
        k = base_period(delta_curve(x, w, half), min_period, near_zero, rise)
        limit = half
        if k == 0 and previous_periodic:
            k, limit = batches[-1][1], min(half, n - rsw)
        count = 0
        if k > 0:
            while count < limit // k and block_delta(x, rsw + count * k, rsw + (count - 1) * k,
                                                     k) <= 2 * near_zero:
                count += 1
        if count > 0:
            opens = not previous_periodic and limit == half
            batches.append((rsw - k if opens else rsw, k, count + 1 if opens else count, opens))
            w += k * count
            previous_periodic = True
        else:
            w += step
            previous_periodic = False
    return batches


def squared_euclidean(A: np.ndarray, B: np.ndarray) -> list[list[float]]:
    """Squared Euclidean distance between every row of A and every row of B."""
    return [[sum((float(p) - float(q)) ** 2 for p, q in zip(a, b, strict=True)) for b in B]
            for a in A]


def nearest_pairs(Y: np.ndarray, k: int) -> set[tuple[int, int]]:
    """Pairs (i, j), i < j, where j is among the k nearest other rows of i or the reverse
    (distinct distances assumed)."""
    distances = squared_euclidean(Y, Y)
    pairs = set()
    for i, row in enumerate(distances):
        others = sorted((d, j) for j, d in enumerate(row) if j != i)[:k]
        pairs |= {(min(i, j), max(i, j)) for _, j in others}
    return pairs


def resample_series(X: np.ndarray, lengths: np.ndarray, length: int) -> np.ndarray:
    """Each padded series linearly interpolated by np.interp from its own evenly spaced grid
    on [0, 1] to ``length`` evenly spaced points, flattened (n x length*d)."""
    n, _, dims = X.shape
    target = np.linspace(0.0, 1.0, length)
    out = np.empty((n, length, dims))
    for i in range(n):
        source = np.linspace(0.0, 1.0, int(lengths[i]))
        for d in range(dims):
            out[i, :, d] = np.interp(target, source, X[i, :int(lengths[i]), d])
    return out.reshape(n, length * dims)


# --- Paraver traces (phasekit.io.paraver) ------------------------------------------------------
def paraver_calls(text: str, application: int = 1) -> list[dict]:
    """The MPI calls of a Paraver trace, read line by line from the format's definitions
    (module docstring of phasekit.io.paraver), for small traces.

    One dict per MPI call entry of ``application`` in file order: task, thread (1-based),
    entry, exit (ns; None when the trace never leaves the call), type, value, levels
    (tuple of (level, function value, line value)), bytes (collective sizes plus messages
    whose logical time falls in the call), burst_start (previous exit on the thread, else the
    thread's first record), counters ({type: summed reads of the burst}).
    """
    lines = text.split("\n")
    calls: list[dict] = []
    open_call: dict[tuple[int, int], dict | None] = {}
    last_exit: dict[tuple[int, int], int] = {}
    first: dict[tuple[int, int], int] = {}
    burst: dict[tuple[int, int], dict[int, float]] = {}
    messages: list[tuple[tuple[int, int], int, int]] = []
    for raw in lines[1:]:
        line = raw.rstrip("\r")
        if not line or line.startswith("#") or line.startswith("c:"):
            continue
        fields = [int(f) for f in line.split(":")]
        kind = fields[0]
        if kind == 3:
            if fields[2] == application:
                messages.append(((fields[3], fields[4]), fields[5], fields[13]))
            if fields[8] == application:
                messages.append(((fields[9], fields[10]), fields[11], fields[13]))
            continue
        if fields[2] != application:
            continue
        key = (fields[3], fields[4])
        t = fields[5]
        first[key] = min(first.get(key, t), t)
        if kind == 1:
            continue
        pairs = list(zip(fields[6::2], fields[7::2], strict=True))
        mpi = [(ty, va) for ty, va in pairs if 50000001 <= ty <= 50099999]
        entries = [p for p in mpi if p[1] != 0]
        exits = [p for p in mpi if p[1] == 0]
        counters = [(ty, va) for ty, va in pairs if 42000000 <= ty <= 49999999]
        current = open_call.get(key)
        if exits:
            if current is not None:
                current["exit"] = t
                open_call[key] = current = None
            else:
                burst[key] = {}
            last_exit[key] = t
        in_burst = bool(entries) or not (exits or current is not None
                                         or last_exit.get(key) == t)
        if in_burst:
            sums = burst.setdefault(key, {})
            for ty, va in counters:
                sums[ty] = sums.get(ty, 0.0) + va
        if entries:
            ty, va = entries[0]
            levels = {}
            for pty, pva in pairs:
                if 70000000 < pty < 70000017:
                    levels.setdefault(pty - 70000000, [-1, -1])[0] = pva
                elif 80000000 < pty < 80000017:
                    levels.setdefault(pty - 80000000, [-1, -1])[1] = pva
            call = {
                "task": key[0], "thread": key[1], "entry": t, "exit": None, "type": ty,
                "value": va,
                "levels": tuple(sorted((lv, f, ln) for lv, (f, ln) in levels.items())),
                "bytes": float(sum(v for pt, v in pairs if pt in (50100001, 50100002))),
                "burst_start": last_exit.get(key, first[key]),
                "counters": dict(burst.get(key, {})),
            }
            burst[key] = {}
            calls.append(call)
            open_call[key] = call
    per_thread: dict[tuple[int, int], list[dict]] = {}
    for call in calls:
        per_thread.setdefault((call["task"], call["thread"]), []).append(call)
    entries = {key: [c["entry"] for c in mine] for key, mine in per_thread.items()}
    for key, t, size in messages:  # the last call of the thread entered at or before t
        mine = per_thread.get(key, [])
        k = bisect.bisect_right(entries.get(key, []), t) - 1
        if k >= 0 and (mine[k]["exit"] is None or t <= mine[k]["exit"]):
            mine[k]["bytes"] += size
    return calls


# --- shape segmentation (phasekit.phases.shape), after claspy ---------------------------------
def znorm_knn(x: np.ndarray, w: int, k: int, stride: int = 1) -> list[list[int]]:
    """The k nearest subsequences (length w, starting every ``stride`` samples, z-normalized
    Euclidean distance, trivial matches starting within w // 2 samples excluded) of every
    subsequence, nearest first, as indices of the subsequences."""
    subs = []
    for i in range(0, len(x) - w + 1, stride):
        s = [float(v) for v in x[i:i + w]]
        mean = sum(s) / w
        sd = (sum((v - mean) ** 2 for v in s) / w) ** 0.5
        subs.append([(v - mean) / sd for v in s])
    out = []
    for i, a in enumerate(subs):
        dists = sorted((sum((p - q) ** 2 for p, q in zip(a, b, strict=True)), j)
                       for j, b in enumerate(subs) if abs(i - j) * stride > w // 2)
        out.append([j for _, j in dists[:k]])
    return out


def clasp_split_score(neighbours: list[list[int]], split: int, w: int) -> tuple[float, list[int]]:
    """claspy's score of one split: subsequences labelled 0 left of ``split`` and 1 from it
    on, each predicted by the majority label of its neighbours, the w subsequences before the
    split predicted 1; ROC AUC with the predictions as truth and the labels as scores (claspy's
    argument order). Returns (score or -inf, predictions)."""
    m = len(neighbours)
    true = [int(i >= split) for i in range(m)]
    pred = []
    for i in range(m):
        ones = sum(true[j] for j in neighbours[i])
        pred.append(int(ones > len(neighbours[i]) - ones))
    for i in range(max(0, split - w), split):
        pred[i] = 1
    pos = [true[i] for i in range(m) if pred[i] == 1]
    neg = [true[i] for i in range(m) if pred[i] == 0]
    if not pos or not neg:
        return -INF, pred
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg)), pred


def rank_sum_p(left: list[int], right: list[int]) -> float:
    """Two-sided p of the Wilcoxon rank-sum test (normal approximation, average ranks for
    ties, no tie correction of the variance), as claspy computes it."""
    values = sorted(left + right)
    ranks: dict[int, float] = {}
    for v in set(values):
        first = values.index(v) + 1
        last = len(values) - values[::-1].index(v)
        ranks[v] = (first + last) / 2
    n1, n2 = len(left), len(right)
    s = sum(ranks[v] for v in left)
    z = (s - n1 * (n1 + n2 + 1) / 2) / ((n1 * n2 * (n1 + n2 + 1) / 12) ** 0.5)
    import math

    return math.erfc(abs(z) / 2 ** 0.5)


def suss_score(x: np.ndarray, w: int) -> float:
    """claspy's SuSS score of width w: mean over the windows ending at samples w..n-1 of the
    distance between the window's (mean, std, max - min) and the whole series', / sqrt(w)."""
    x = [float(v) for v in x]
    n = len(x)
    mean = sum(x) / n
    std = (sum((v - mean) ** 2 for v in x) / n) ** 0.5
    rng = max(x) - min(x)
    total = 0.0
    for t in range(w, n):
        win = x[t - w + 1:t + 1]
        m = sum(win) / w
        sd = (sum((v - m) ** 2 for v in win) / w) ** 0.5
        r = max(win) - min(win)
        total += ((m - mean) ** 2 + (sd - std) ** 2 + (r - rng) ** 2) ** 0.5
    return total / (n - w) / w ** 0.5


# --- phase alignment (phasekit.periodicity.align) ----------------------------------------------
def extend_instances(lo: int, count: int, k: int, first: int, end: int, verified: np.ndarray,
                     valid: np.ndarray, clean: np.ndarray, threshold: float) -> tuple[int, int]:
    """``count`` instances of ``k`` from ``lo`` extended one at a time on the left, then on the
    right, while the new instance lies on samples no batch verified (outside [first, end) on
    the right) and the pair of instances at the boundary are valid samples with block_delta
    <= threshold (align's docstring)."""
    n = len(clean)

    def free(a: int, b: int) -> bool:
        return not verified[max(a, 0):min(b, n)].any()

    def periodic(a: int) -> bool:
        return (a - k >= 0 and a + k <= n and bool(valid[a - k:a + k].all())
                and block_delta(clean, a, a - k, k) <= threshold)

    while free(lo - k, first) and periodic(lo):
        lo, count = lo - k, count + 1
    while free(max(lo + count * k, end), lo + (count + 1) * k) and periodic(lo + count * k):
        count += 1
    return lo, count


def phase_cover(phase: int, members: list[int], reference_length: int, rotation: np.ndarray,
                length: np.ndarray, first: np.ndarray, end: np.ndarray, verified: np.ndarray,
                valid: np.ndarray, clean: np.ndarray, threshold: float) -> int:
    """Samples in the union of the members' instances cut ``phase`` samples of the reference
    after its calmest point (rounded half to even, as np.round) and extended."""
    union: set[int] = set()
    for b in members:
        k, f, e = int(length[b]), int(first[b]), int(end[b])
        lo = f + int(np.round((int(rotation[b]) + phase) * k / reference_length)) % k
        lo, count = extend_instances(lo, (e - lo) // k, k, f, e, verified, valid, clean, threshold)
        union |= set(range(lo, lo + count * k))
    return len(union)


# --- metric choice (phasekit.periodicity.strength) ---------------------------------------------
def periodic_strength(x: np.ndarray, min_lag: int) -> tuple[float, int]:
    """The autocorrelation peak past the first zero crossing, from strength's docstring, by
    direct sums (no FFT, no block means): r(k) = sum_t y_t y_{t+k} / sum_t y_t^2 of x minus its
    least-squares line (gaps count as zero), the largest r(k) for k in [max(k0, min_lag),
    n // 3], k0 the first lag with r(k) < 0."""
    n = len(x)
    valid = np.isfinite(x)
    if valid.sum() < 16 or n // 3 <= min_lag:
        return 0.0, 0
    t = np.flatnonzero(valid).astype(float)
    v = x[valid]
    slope = float(np.sum((t - t.mean()) * (v - v.mean())) / np.sum((t - t.mean()) ** 2))
    y = np.zeros(n)
    y[valid] = v - v.mean() - slope * (t - t.mean())
    energy = float(np.sum(y * y))
    if not energy > 1e-24 * float(np.sum(v * v)):
        return 0.0, 0
    r = [float(np.dot(y[:n - k], y[k:])) / energy for k in range(n // 3 + 1)]
    below = [k for k in range(1, len(r)) if r[k] < 0]
    if not below or max(min_lag, below[0]) > n // 3:
        return 0.0, 0
    start = max(min_lag, below[0])
    lag = max(range(start, len(r)), key=lambda k: (r[k], -k))
    return max(0.0, r[lag]), lag
