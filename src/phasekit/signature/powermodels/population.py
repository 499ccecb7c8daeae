"""The mapping and compiling of a whole population of genomes in numba: the semantics of
:func:`~phasekit.signature.powermodels.grammar.map_genome` followed by
:func:`~phasekit.signature.powermodels.expression.compile_expression`, on a grammar flattened
into arrays (:func:`grammar_tables`).

The op codes (``OP_*`` of :mod:`~phasekit.signature.powermodels.expression`, which the
interpreter in :mod:`~phasekit.signature.powermodels.kernels` spells as numbers) are compiled
into these kernels as constants; numba's cache does not see a change of another file, so a
change of the codes must touch this file and that one too.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from phasekit.signature.powermodels.expression import (
    BINARY_OPS,
    FUNCTIONS,
    OP_ADD,
    OP_CONST,
    OP_DIV,
    OP_NEG,
    OP_SIN,
    OP_SUB,
    OP_VAR,
)
from phasekit.signature.powermodels.grammar import Grammar

__all__ = ["grammar_tables", "map_population"]

T_DIGIT, T_DOT, T_OPEN, T_CLOSE, T_BINARY, T_FUNCTION, T_VAR, T_OTHER = range(8)


@functools.lru_cache(maxsize=32)
def grammar_tables(grammar: Grammar, variables: tuple[str, ...]
                   ) -> tuple[np.ndarray, ...]:
    """``grammar`` as flat arrays for :func:`map_population`: rule -> productions ->
    symbols (a non-terminal as its rule index, a terminal t as ``-t - 1``) and, per
    terminal, its kind and value."""
    index = {lhs: i for i, (lhs, _) in enumerate(grammar.rules)}
    terminals: dict[str, int] = {}
    kinds: list[int] = []
    values: list[int] = []
    variable = {v: i for i, v in enumerate(variables)}

    def terminal(token: str) -> int:
        if token not in terminals:
            terminals[token] = len(kinds)
            if token.isdigit() and len(token) == 1:
                kinds.append(T_DIGIT)
                values.append(int(token))
            elif token == ".":
                kinds.append(T_DOT)
                values.append(0)
            elif token in ("(", ")"):
                kinds.append(T_OPEN if token == "(" else T_CLOSE)
                values.append(0)
            elif token in BINARY_OPS:
                kinds.append(T_BINARY)
                values.append(BINARY_OPS[token])
            elif token in FUNCTIONS:
                kinds.append(T_FUNCTION)
                values.append(FUNCTIONS[token])
            elif token in variable:
                kinds.append(T_VAR)
                values.append(variable[token])
            else:
                kinds.append(T_OTHER)
                values.append(0)
        return terminals[token]

    rule_start = [0]
    prod_start = [0]
    symbols: list[int] = []
    for _, productions in grammar.rules:
        for production in productions:
            for symbol in production:
                symbols.append(index[symbol] if symbol in index else -terminal(symbol) - 1)
            prod_start.append(len(symbols))
        rule_start.append(len(prod_start) - 1)
    longest = max(len(p) for _, prods in grammar.rules for p in prods)
    return (np.asarray(rule_start, np.int64), np.asarray(prod_start, np.int64),
            np.asarray(symbols, np.int64), np.asarray(kinds, np.int64),
            np.asarray(values, np.int64), np.int64(longest))


@njit(cache=True)
def _map_one(genome: np.ndarray, wraps: int, rule_start: np.ndarray, prod_start: np.ndarray,
             symbols: np.ndarray, kinds: np.ndarray, values: np.ndarray, longest: int,
             max_nodes: int, ops: np.ndarray, args: np.ndarray, consts: np.ndarray
             ) -> tuple[int, int, int, int]:  # pragma: no cover - numba
    """Map and compile one genome (the semantics of :func:`map_genome` followed by
    :func:`compile_expression`): returns (number of ops, number of constants, codons read,
    status: 1 valid, 0 codons ran out or malformed, -1 longer than ``max_nodes``, -2 no
    variable)."""
    n = genome.shape[0]
    budget = n * (wraps + 1)
    cap = budget * longest + 2
    stack = np.empty(cap, np.int64)
    tokens = np.empty(cap, np.int64)
    sp = 1
    stack[0] = 0
    nt = 0
    index = 0
    wrap = 0
    while sp > 0:
        sp -= 1
        symbol = stack[sp]
        if symbol < 0:
            tokens[nt] = -symbol - 1
            nt += 1
            continue
        if index >= n:
            if wrap >= wraps:
                return 0, 0, wrap * n + index, 0
            index = 0
            wrap += 1
        first = rule_start[symbol]
        count = rule_start[symbol + 1] - first
        production = first + genome[index] % count
        index += 1
        lo = prod_start[production]
        hi = prod_start[production + 1]
        if sp + (hi - lo) > cap:
            return 0, 0, wrap * n + index, 0
        for j in range(hi - 1, lo - 1, -1):
            stack[sp] = symbols[j]
            sp += 1
    used = wrap * n + index
    # shunting-yard: + - (1) < * / (2) < unary minus (3); functions apply to a parenthesis
    opstack = np.empty(nt + 1, np.int64)  # op codes; -1 marks an open parenthesis
    top = 0
    n_ops = 0
    n_consts = 0
    depth = 0
    has_var = False
    expect = True
    i = 0
    while i < nt:
        kind = kinds[tokens[i]]
        value = values[tokens[i]]
        if kind in (T_DIGIT, T_DOT):
            if not expect:
                return 0, 0, used, 0
            mantissa = 0.0  # all digits as an integer, then / 10^decimals: correctly
            decimals = 0    # rounded, as float("d.d") is
            dots = 0
            digits = 0
            while i < nt and (kinds[tokens[i]] == T_DIGIT or kinds[tokens[i]] == T_DOT):
                if kinds[tokens[i]] == T_DOT:
                    dots += 1
                else:
                    digits += 1
                    mantissa = mantissa * 10.0 + values[tokens[i]]
                    if dots > 0:
                        decimals += 1
                i += 1
            if dots > 1 or digits == 0:
                return 0, 0, used, 0
            if n_ops >= max_nodes:
                return 0, 0, used, -1
            ops[n_ops] = OP_CONST
            args[n_ops] = n_consts
            consts[n_consts] = mantissa / 10.0 ** decimals
            n_ops += 1
            n_consts += 1
            depth += 1
            expect = False
            continue
        if kind == T_VAR:
            if not expect:
                return 0, 0, used, 0
            if n_ops >= max_nodes:
                return 0, 0, used, -1
            ops[n_ops] = OP_VAR
            args[n_ops] = value
            n_ops += 1
            depth += 1
            has_var = True
            expect = False
        elif kind == T_FUNCTION:
            if not expect or i + 1 >= nt or kinds[tokens[i + 1]] != T_OPEN:
                return 0, 0, used, 0
            opstack[top] = value
            top += 1
        elif kind == T_OPEN:
            if not expect:
                return 0, 0, used, 0
            opstack[top] = -1
            top += 1
        elif kind == T_CLOSE:
            if expect:
                return 0, 0, used, 0
            while top > 0 and opstack[top - 1] != -1:
                top -= 1
                op = opstack[top]
                if n_ops >= max_nodes:
                    return 0, 0, used, -1
                ops[n_ops] = op
                args[n_ops] = 0
                n_ops += 1
                if op <= OP_DIV:
                    depth -= 1
            if top == 0:
                return 0, 0, used, 0
            top -= 1
            if top > 0 and opstack[top - 1] >= OP_SIN:
                top -= 1
                if n_ops >= max_nodes:
                    return 0, 0, used, -1
                ops[n_ops] = opstack[top]
                args[n_ops] = 0
                n_ops += 1
        elif kind == T_BINARY:
            if expect:
                if value == OP_SUB:
                    opstack[top] = OP_NEG
                    top += 1
                elif value != OP_ADD:
                    return 0, 0, used, 0
            else:
                rank = 1 if value <= OP_SUB else 2
                while top > 0:
                    other = opstack[top - 1]
                    if other == OP_NEG:
                        other_rank = 3
                    elif OP_ADD <= other <= OP_DIV:
                        other_rank = 1 if other <= OP_SUB else 2
                    else:
                        break
                    if other_rank < rank:
                        break
                    top -= 1
                    if n_ops >= max_nodes:
                        return 0, 0, used, -1
                    ops[n_ops] = other
                    args[n_ops] = 0
                    n_ops += 1
                    if other <= OP_DIV:
                        depth -= 1
                opstack[top] = value
                top += 1
                expect = True
        else:
            return 0, 0, used, 0
        i += 1
    if expect:
        return 0, 0, used, 0
    while top > 0:
        top -= 1
        op = opstack[top]
        if op == -1 or op >= OP_SIN:
            return 0, 0, used, 0
        if n_ops >= max_nodes:
            return 0, 0, used, -1
        ops[n_ops] = op
        args[n_ops] = 0
        n_ops += 1
        if op <= OP_DIV:
            depth -= 1
    if depth != 1:
        return 0, 0, used, 0
    if not has_var:
        return n_ops, n_consts, used, -2
    return n_ops, n_consts, used, 1


@njit(cache=True)
def map_population(genomes: np.ndarray, wraps: int, rule_start: np.ndarray,
                   prod_start: np.ndarray, symbols: np.ndarray, kinds: np.ndarray,
                   values: np.ndarray, longest: int, max_nodes: int
                   ) -> tuple[np.ndarray, ...]:  # pragma: no cover - numba
    """Every genome mapped and compiled (:func:`_map_one`): ops, args, constants, their
    counts, codons read and status, one row a genome."""
    m = genomes.shape[0]
    ops = np.zeros((m, max_nodes), np.int64)
    args = np.zeros((m, max_nodes), np.int64)
    consts = np.zeros((m, max_nodes), np.float64)
    n_ops = np.zeros(m, np.int64)
    n_consts = np.zeros(m, np.int64)
    used = np.zeros(m, np.int64)
    status = np.zeros(m, np.int64)
    for g in range(m):
        a, b, c, d = _map_one(genomes[g], wraps, rule_start, prod_start, symbols, kinds,
                              values, longest, max_nodes, ops[g], args[g], consts[g])
        n_ops[g] = a
        n_consts[g] = b
        used[g] = c
        status[g] = d
    return ops, args, consts, n_ops, n_consts, used, status
