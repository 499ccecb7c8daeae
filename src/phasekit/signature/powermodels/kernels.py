"""The numba kernels of grammatical evolution: the postfix interpreter
(:func:`evaluate_program`), its forward-mode Jacobian, and the Levenberg-Marquardt fit of an
expression's constants with an intercept and a scale (:func:`fit_constants`).

They stay in one module: numba's cache (``cache=True``) is invalidated by a change of the
file a kernel is defined in, not of the files of the kernels it calls.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["evaluate_program", "fit_constants"]


@njit(cache=True, error_model="numpy")
def evaluate_program(ops: np.ndarray, args: np.ndarray, consts: np.ndarray, X: np.ndarray
                     ) -> np.ndarray:  # pragma: no cover - numba
    """The value of the postfix program (``ops``, ``args``, ``consts``) on every row of X."""
    n = X.shape[0]
    out = np.empty(n)
    stack = np.empty(ops.shape[0] + 1)
    for i in range(n):
        sp = 0
        for t in range(ops.shape[0]):
            op = ops[t]
            if op == 0:
                stack[sp] = X[i, args[t]]
                sp += 1
            elif op == 1:
                stack[sp] = consts[args[t]]
                sp += 1
            elif op <= 5:
                b = stack[sp - 1]
                a = stack[sp - 2]
                sp -= 1
                if op == 2:
                    stack[sp - 1] = a + b
                elif op == 3:
                    stack[sp - 1] = a - b
                elif op == 4:
                    stack[sp - 1] = a * b
                else:
                    stack[sp - 1] = a / b
            else:
                a = stack[sp - 1]
                if op == 6:
                    stack[sp - 1] = -a
                elif op == 7:
                    stack[sp - 1] = np.sin(a)
                elif op == 8:
                    stack[sp - 1] = np.cos(a)
                elif op == 9:
                    stack[sp - 1] = np.log(a)
                elif op == 10:
                    stack[sp - 1] = np.exp(a)
                else:
                    stack[sp - 1] = np.sqrt(a)
        out[i] = stack[0]
    return out


@njit(cache=True, error_model="numpy")
def _evaluate_jacobian(ops: np.ndarray, args: np.ndarray, consts: np.ndarray, X: np.ndarray,
                       f: np.ndarray, J: np.ndarray) -> None:  # pragma: no cover - numba
    """Values ``f`` and derivatives ``J[i, j] = d f_i / d consts[j]`` (forward mode)."""
    k = consts.shape[0]
    L = ops.shape[0] + 1
    sv = np.empty(L)
    sd = np.empty((L, k))
    for i in range(X.shape[0]):
        sp = 0
        for t in range(ops.shape[0]):
            op = ops[t]
            if op == 0 or op == 1:
                for j in range(k):
                    sd[sp, j] = 0.0
                if op == 0:
                    sv[sp] = X[i, args[t]]
                else:
                    sv[sp] = consts[args[t]]
                    sd[sp, args[t]] = 1.0
                sp += 1
            elif op <= 5:
                b = sv[sp - 1]
                a = sv[sp - 2]
                q = sp - 2
                r = sp - 1
                if op == 2:
                    sv[q] = a + b
                    for j in range(k):
                        sd[q, j] += sd[r, j]
                elif op == 3:
                    sv[q] = a - b
                    for j in range(k):
                        sd[q, j] -= sd[r, j]
                elif op == 4:
                    sv[q] = a * b
                    for j in range(k):
                        sd[q, j] = sd[q, j] * b + a * sd[r, j]
                else:
                    sv[q] = a / b
                    for j in range(k):
                        sd[q, j] = (sd[q, j] - a / b * sd[r, j]) / b
                sp -= 1
            else:
                q = sp - 1
                a = sv[q]
                if op == 6:
                    sv[q] = -a
                    g = -1.0
                elif op == 7:
                    sv[q] = np.sin(a)
                    g = np.cos(a)
                elif op == 8:
                    sv[q] = np.cos(a)
                    g = -np.sin(a)
                elif op == 9:
                    sv[q] = np.log(a)
                    g = 1.0 / a
                elif op == 10:
                    sv[q] = np.exp(a)
                    g = sv[q]
                else:
                    sv[q] = np.sqrt(a)
                    g = 0.5 / sv[q]
                for j in range(k):
                    sd[q, j] *= g
        f[i] = sv[0]
        for j in range(k):
            J[i, j] = sd[0, j]


@njit(cache=True)
def _solve(M: np.ndarray, rhs: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Gaussian elimination with partial pivoting; NaNs when singular."""
    n = rhs.shape[0]
    A = M.copy()
    b = rhs.copy()
    for c in range(n):
        p = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[p, c]):
                p = r
        if not abs(A[p, c]) > 1e-300:
            return np.full(n, np.nan)
        if p != c:
            for j in range(n):
                A[c, j], A[p, j] = A[p, j], A[c, j]
            b[c], b[p] = b[p], b[c]
        for r in range(c + 1, n):
            m = A[r, c] / A[c, c]
            if m != 0.0:
                for j in range(c, n):
                    A[r, j] -= m * A[c, j]
                b[r] -= m * b[c]
    x = np.empty(n)
    for c in range(n - 1, -1, -1):
        s = b[c]
        for j in range(c + 1, n):
            s -= A[c, j] * x[j]
        x[c] = s / A[c, c]
    return x


@njit(cache=True)
def _normal_equations(J: np.ndarray, r: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """J'J and J'r summed row by row in a fixed order: the same bits on every CPU, where
    BLAS picks its kernel (and its order of summation) by the processor, and the search
    of expressions then takes another path from the first differing digit."""
    n, m = J.shape
    A = np.zeros((m, m))
    g = np.zeros(m)
    for i in range(n):
        for a in range(m):
            g[a] += J[i, a] * r[i]
            for b in range(a, m):
                A[a, b] += J[i, a] * J[i, b]
    for a in range(m):
        for b in range(a):
            A[a, b] = A[b, a]
    return A, g


@njit(cache=True, error_model="numpy")
def fit_constants(ops: np.ndarray, args: np.ndarray, c0: np.ndarray, X: np.ndarray,
                  y: np.ndarray, max_iter: int) -> tuple[np.ndarray, float]:  # pragma: no cover
    """Least-squares fit of ``y ~ a + b * f(X; c)`` over (a, b, c) by Levenberg-Marquardt,
    starting at ``c0`` with (a, b) from a linear regression of y on f(X; c0).

    Returns ``[a, b, c...]`` and the sum of squared residuals (inf when f is not finite)."""
    n = X.shape[0]
    k = c0.shape[0]
    m = k + 2
    params = np.empty(m)
    params[2:] = c0
    f = np.empty(n)
    Jf = np.empty((n, k))
    _evaluate_jacobian(ops, args, params[2:], X, f, Jf)
    if not np.all(np.isfinite(f)):
        params[0] = 0.0
        params[1] = 0.0
        return params, np.inf
    fm = f.mean()
    ym = y.mean()
    sff = np.sum((f - fm) ** 2)
    if sff > 1e-12 * max(1.0, fm * fm) * n:
        params[1] = np.sum((f - fm) * (y - ym)) / sff
    else:
        params[1] = 0.0
    params[0] = ym - params[1] * fm
    r = params[0] + params[1] * f - y
    cost = np.sum(r * r)
    if params[1] == 0.0 or k == 0:
        return params, cost
    lam = 1e-3
    gain = 0.0
    J = np.empty((n, m))
    trial = np.empty(m)
    for _ in range(max_iter):
        for i in range(n):
            J[i, 0] = 1.0
            J[i, 1] = f[i]
            for j in range(k):
                J[i, 2 + j] = params[1] * Jf[i, j]
        if not np.all(np.isfinite(J)):
            break
        A, g = _normal_equations(J, r)
        top = 0.0
        for j in range(m):
            top = max(top, A[j, j])
        accepted = False
        for _attempt in range(10):
            M = A.copy()
            for j in range(m):
                M[j, j] += lam * (A[j, j] + 1e-9 * top + 1e-300)
            step = _solve(M, -g)
            if not np.all(np.isfinite(step)):
                lam *= 10.0
                continue
            for j in range(m):
                trial[j] = params[j] + step[j]
            ft = evaluate_program(ops, args, trial[2:], X)
            rt = trial[0] + trial[1] * ft - y
            ct = np.sum(rt * rt)
            if np.isfinite(ct) and ct < cost:
                gain = (cost - ct) / max(cost, 1e-300)
                params[:] = trial
                cost = ct
                lam = max(lam / 3.0, 1e-12)
                accepted = True
                break
            lam *= 4.0
        if not accepted or gain < 1e-9:
            break
        _evaluate_jacobian(ops, args, params[2:], X, f, Jf)
        r = params[0] + params[1] * f - y
    return params, cost
