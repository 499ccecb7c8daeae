"""Printing: an evolved expression in raw counter units, its constants folded
(:func:`equation`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from phasekit.signature.powermodels.expression import (
    FUNCTION_NAMES,
    OP_ADD,
    OP_DIV,
    OP_NEG,
    OP_SUB,
    Node,
)

__all__ = ["NUMPY_FUNCTIONS", "equation"]

# A sum is a constant plus coefficient x product terms; a product is a sorted tuple of
# (factor text, exponent). Factors are counters, functions and sums that cannot be expanded
# (written in parentheses, divided by their own first constant so that they read "(k*C4 + 1)").
_Product = tuple[tuple[str, int], ...]


@dataclass
class _Sum:
    const: float = 0.0
    terms: dict[_Product, float] = field(default_factory=dict)

    def scaled(self, k: float) -> _Sum:
        return _Sum(self.const * k, {p: c * k for p, c in self.terms.items()})

    def single(self) -> tuple[_Product, float] | None:
        """The one term of a monomial (no constant, one term), else None."""
        return next(iter(self.terms.items())) if self.const == 0 and len(self.terms) == 1 \
            else None


def _fmt(value: float, digits: int = 4) -> str:
    return f"{value:.{digits}g}"


def _times(a: _Product, b: _Product) -> _Product:
    power: dict[str, int] = {}
    for text, e in (*a, *b):
        power[text] = power.get(text, 0) + e
    return tuple(sorted((t, e) for t, e in power.items() if e))


def _plus(a: _Sum, b: _Sum, sign: float = 1.0) -> _Sum:
    terms = dict(a.terms)
    for p, c in b.terms.items():
        terms[p] = terms.get(p, 0.0) + sign * c
    return _Sum(a.const + sign * b.const, {p: c for p, c in terms.items() if c != 0})


def _monomial(product: _Product, coef: float) -> _Sum:
    return _Sum(coef, {}) if not product else _Sum(0.0, {product: coef})


def _expand(a: _Sum, product: _Product, coef: float) -> _Sum:
    """``a`` times one term."""
    out = _monomial(product, coef * a.const) if a.const else _Sum()
    for p, c in a.terms.items():
        out = _plus(out, _monomial(_times(p, product), c * coef))
    return out


def _factor(s: _Sum, digits: int, names: Sequence[str]) -> tuple[float, str]:
    """A sum that stays a factor: its content (the constant, else the first coefficient) and
    the parenthesized rest."""
    content = s.const if s.const else next(iter(s.terms.values()))
    return content, f"({_sum_text(s.scaled(1.0 / content), digits, names)})"


def _symbolic(tree: Node, consts: Sequence[float], scales: Sequence[float], digits: int,
              names: Sequence[str]) -> _Sum:
    """``tree`` (over x_j = counter_j / scale_j) as a sum in raw counter units."""
    kind = tree[0]
    if kind == "const":
        return _Sum(float(consts[tree[1]]))
    if kind == "var":
        return _Sum(0.0, {((names[tree[1]], 1),): 1.0 / scales[tree[1]]})
    if kind == "un":
        inner = _symbolic(tree[2], consts, scales, digits, names)
        if tree[1] == OP_NEG:
            return inner.scaled(-1.0)
        function = FUNCTION_NAMES[tree[1]]
        if not inner.terms:
            return _Sum(float(getattr(np, function)(inner.const)))
        return _Sum(0.0, {((f"{function}({_sum_text(inner, digits, names)})", 1),): 1.0})
    a = _symbolic(tree[2], consts, scales, digits, names)
    b = _symbolic(tree[3], consts, scales, digits, names)
    op = tree[1]
    if op in (OP_ADD, OP_SUB):
        return _plus(a, b, 1.0 if op == OP_ADD else -1.0)
    if op == OP_DIV:
        if not b.terms:
            return a.scaled(1.0 / b.const if b.const else math.inf)
        one = b.single()
        if one is not None:
            inverse = (tuple((t, -e) for t, e in one[0]), 1.0 / one[1])
        else:
            content, text = _factor(b, digits, names)
            inverse = (((text, -1),), 1.0 / content)
        if a.terms and a.single() is None:  # (a + b*C1)/(...) stays one fraction
            content, text = _factor(a, digits, names)
            return _monomial(_times(((text, 1),), inverse[0]), content * inverse[1])
        return _expand(a, *inverse)
    if not a.terms:
        return b.scaled(a.const)
    if not b.terms:
        return a.scaled(b.const)
    for x, y in ((a, b), (b, a)):
        one = y.single()
        if one is not None:
            return _expand(x, *one)
    (ka, ta), (kb, tb) = _factor(a, digits, names), _factor(b, digits, names)
    return _monomial(_times(((ta, 1),), ((tb, 1),)), ka * kb)


def _sum_text(s: _Sum, digits: int, names: Sequence[str]) -> str:
    parts: list[tuple[bool, str]] = []
    if s.const or not s.terms:
        parts.append((s.const < 0, _fmt(abs(s.const), digits)))
    for product, coef in s.terms.items():
        up = [t for t, e in product if e > 0 for _ in range(e)]
        down = [t for t, e in product if e < 0 for _ in range(-e)]
        magnitude = _fmt(abs(coef), digits)
        head = up if magnitude == "1" and up else [magnitude, *up]
        parts.append((coef < 0, "*".join(head) + "".join(f"/{t}" for t in down)))
    text = ""
    for k, (negative, part) in enumerate(parts):
        if k == 0:
            text = f"-{part}" if negative else part
        else:
            text += f" {'-' if negative else '+'} {part}"
    return text


def equation(tree: Node, consts: Sequence[float], scales: Sequence[float], intercept: float,
             slope: float, digits: int, names: Sequence[str]) -> str:
    """``intercept + slope * tree`` as text in raw counter units (``names``), constants folded,
    ``digits`` significant digits."""
    body = _symbolic(tree, consts, scales, digits, names).scaled(slope)
    return _sum_text(_plus(_Sum(intercept), body), digits, names)


#: The functions of the printed text, to evaluate it (:attr:`GEPowerModel.text`).
NUMPY_FUNCTIONS = {"sin": np.sin, "cos": np.cos, "log": np.log, "exp": np.exp, "sqrt": np.sqrt}
