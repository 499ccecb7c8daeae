"""Expressions: tokens -> tree -> postfix program. :func:`compile_expression` parses an
expression (a string, or the terminals of a phenotype) by recursive descent into a tree and a
:class:`Program` of op codes (``OP_*``) that the numba interpreter
(:mod:`~phasekit.signature.powermodels.kernels`) runs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "BINARY_OPS",
    "FUNCTIONS",
    "FUNCTION_NAMES",
    "OP_ADD",
    "OP_CONST",
    "OP_COS",
    "OP_DIV",
    "OP_EXP",
    "OP_LOG",
    "OP_MUL",
    "OP_NEG",
    "OP_SIN",
    "OP_SQRT",
    "OP_SUB",
    "OP_VAR",
    "Node",
    "Program",
    "compile_expression",
    "merge_numbers",
]

OP_VAR, OP_CONST, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG = 0, 1, 2, 3, 4, 5, 6
OP_SIN, OP_COS, OP_LOG, OP_EXP, OP_SQRT = 7, 8, 9, 10, 11
#: Op codes of the operators and of the functions (``FUNCTION_NAMES``: the other way round).
BINARY_OPS = {"+": OP_ADD, "-": OP_SUB, "*": OP_MUL, "/": OP_DIV}
FUNCTIONS = {"sin": OP_SIN, "cos": OP_COS, "log": OP_LOG, "exp": OP_EXP, "sqrt": OP_SQRT}
_SYMBOL = {v: k for k, v in BINARY_OPS.items()}
FUNCTION_NAMES = {v: k for k, v in FUNCTIONS.items()}


def merge_numbers(tokens: Sequence[str]) -> list[str]:
    """Join runs of digit and '.' tokens (the phenotype of ``<dig>.<dig>``) into numbers."""
    out: list[str] = []
    for token in tokens:
        if (token.isdigit() or token == ".") and out and re.fullmatch(r"[\d.]+", out[-1]):
            out[-1] += token
        else:
            out.append(token)
    return out


# tree nodes: ("const", index) | ("var", j) | ("bin", op, left, right) | ("un", op, child)
Node = tuple[Any, ...]


class _Parser:
    """Recursive descent with the usual precedence: + - < * / < unary minus < atoms."""

    def __init__(self, tokens: Sequence[str], variables: Mapping[str, int]) -> None:
        self.tokens = list(tokens)
        self.pos = 0
        self.variables = variables
        self.values: list[float] = []

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise ValueError("unexpected end of expression")
        self.pos += 1
        return token

    def parse(self) -> Node:
        node = self.sum()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()!r}")
        return node

    def sum(self) -> Node:
        node = self.product()
        while self.peek() in ("+", "-"):
            op = BINARY_OPS[self.take()]
            node = ("bin", op, node, self.product())
        return node

    def product(self) -> Node:
        node = self.unary()
        while self.peek() in ("*", "/"):
            op = BINARY_OPS[self.take()]
            node = ("bin", op, node, self.unary())
        return node

    def unary(self) -> Node:
        if self.peek() == "-":
            self.take()
            return ("un", OP_NEG, self.unary())
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.atom()

    def atom(self) -> Node:
        token = self.take()
        if token == "(":
            node = self.sum()
            if self.take() != ")":
                raise ValueError("expected ')'")
            return node
        if token in FUNCTIONS:
            if self.take() != "(":
                raise ValueError(f"expected '(' after {token}")
            node = self.sum()
            if self.take() != ")":
                raise ValueError("expected ')'")
            return ("un", FUNCTIONS[token], node)
        if token in self.variables:
            return ("var", self.variables[token])
        try:
            value = float(token)
        except ValueError:
            raise ValueError(f"unknown symbol {token!r}") from None
        self.values.append(value)
        return ("const", len(self.values) - 1)


@dataclass(frozen=True)
class Program:
    """A compiled expression: postfix ``ops`` and ``args`` (variable or constant index), the
    constants' initial values, and the tree (for printing)."""

    ops: np.ndarray
    args: np.ndarray
    constants: np.ndarray
    tree: Node
    n_vars_used: int

    @property
    def key(self) -> bytes:
        """The structure without the constants' values (two expressions that differ only in
        their constants are the same model once the constants are fitted)."""
        return self.ops.tobytes() + b"|" + self.args.tobytes()

    def __len__(self) -> int:
        return len(self.ops)


def _emit(node: Node, ops: list[int], args: list[int]) -> None:
    kind = node[0]
    if kind == "const":
        ops.append(OP_CONST)
        args.append(node[1])
    elif kind == "var":
        ops.append(OP_VAR)
        args.append(node[1])
    elif kind == "bin":
        _emit(node[2], ops, args)
        _emit(node[3], ops, args)
        ops.append(node[1])
        args.append(0)
    else:
        _emit(node[2], ops, args)
        ops.append(node[1])
        args.append(0)


def compile_expression(text: str | Sequence[str], variables: Sequence[str]) -> Program:
    """Parse an expression (a string, or the terminal tokens of a phenotype) over
    ``variables`` into a :class:`Program`. Raises ValueError on a malformed expression."""
    if isinstance(text, str):
        tokens = re.findall(r"\d+\.\d*|\d*\.\d+|\d+|[A-Za-z_][A-Za-z0-9_]*|\S", text)
    else:
        tokens = merge_numbers(text)
    parser = _Parser(tokens, {v: i for i, v in enumerate(variables)})
    tree = parser.parse()
    ops: list[int] = []
    args: list[int] = []
    _emit(tree, ops, args)
    used = len({a for o, a in zip(ops, args, strict=True) if o == OP_VAR})
    return Program(ops=np.asarray(ops, np.int64), args=np.asarray(args, np.int64),
                   constants=np.asarray(parser.values, float), tree=tree, n_vars_used=used)
