"""Grammars in BNF and the genotype-to-phenotype mapping of grammatical evolution (Salinas Hilburg 2020,
Appendix A): :func:`parse_bnf`, the thesis's grammars (:data:`GRAMMARS`), :func:`map_genome`
(the plain-Python mapping; :mod:`~phasekit.signature.powermodels.population` maps a whole
population in numba with the same semantics)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from phasekit.errors import UsageError

__all__ = ["GRAMMARS", "Grammar", "build_grammar", "map_genome", "parse_bnf"]


@dataclass(frozen=True)
class Grammar:
    """A BNF grammar: ``rules`` in order (the first is the start symbol), each a
    non-terminal ``"<name>"`` with its productions (tuples of symbols; a terminal is any
    symbol not in angle brackets)."""

    rules: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]
    name: str = "custom"

    @property
    def start(self) -> str:
        return self.rules[0][0]

    @property
    def n_rules(self) -> int:
        return len(self.rules)

    def table(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        return dict(self.rules)


_BNF_SYMBOL = re.compile(r"<[^<>\s]+>|[A-Za-z_][A-Za-z0-9_]*|\d|\S")


def parse_bnf(text: str, name: str = "custom") -> Grammar:
    """A :class:`Grammar` from lines ``<lhs> ::= a | b | ...``. Terminals are split into
    tokens: names (``sin``, ``x3``), single digits and single other characters."""
    rules: list[tuple[str, tuple[tuple[str, ...], ...]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "::=" not in line:
            raise UsageError(f"grammar line {number}: expected '<symbol> ::= ...'")
        lhs, rhs = (part.strip() for part in line.split("::=", 1))
        if not re.fullmatch(r"<[^<>\s]+>", lhs):
            raise UsageError(f"grammar line {number}: {lhs!r} is not a <non-terminal>")
        productions = tuple(tuple(_BNF_SYMBOL.findall(alt)) for alt in rhs.split("|"))
        if any(not p for p in productions):
            raise UsageError(f"grammar line {number}: an empty production")
        rules.append((lhs, productions))
    if not rules:
        raise UsageError("the grammar has no rules")
    defined = {lhs for lhs, _ in rules}
    for lhs, productions in rules:
        for production in productions:
            for symbol in production:
                if symbol.startswith("<") and symbol not in defined:
                    raise UsageError(f"grammar: {symbol} (used by {lhs}) is not defined")
    return Grammar(rules=tuple(rules), name=name)


#: Grammar 1 of the thesis (section 4.3.2) with ``{vars}`` for the variables. We read
#: ``<expr><op><expr>`` as one node of the expression tree, written with parentheses: the
#: published models (4.20) nest sub-expressions, which a flat reading cannot produce.
GRAMMARS: dict[str, str] = {
    "thesis": """
        <expr> ::= (<expr><op><expr>) | <cte>*<var>*<var> | <cte>*<var>/<var> | <cte>
        <op> ::= + | - | * | /
        <var> ::= {vars}
        <cte> ::= <dig>.<dig>
        <dig> ::= 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9
    """,
    # Grammar 2 is garbled in the text; what can be read of it, and the co-allocation
    # models it produced (4.22), add a linear term <cte>*<var> to Grammar 1.
    "extended": """
        <expr> ::= (<expr><op><expr>) | <cte>*<var>*<var> | <cte>*<var>/<var> | <cte>*<var> | <cte>
        <op> ::= + | - | * | /
        <var> ::= {vars}
        <cte> ::= <dig>.<dig>
        <dig> ::= 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9
    """,
}


def build_grammar(name_or_text: str, n_vars: int) -> Grammar:
    """The named grammar (:data:`GRAMMARS`) or a BNF text, with variables ``x0 .. x{n-1}``
    in place of ``{vars}``."""
    if n_vars < 1:
        raise UsageError("a grammar needs at least one variable")
    text = GRAMMARS.get(name_or_text, name_or_text)
    name = name_or_text if name_or_text in GRAMMARS else "custom"
    if "::=" not in text:
        raise UsageError(f"expected one of {', '.join(GRAMMARS)} or a BNF text",
                         parameter="grammar", value=name_or_text)
    return parse_bnf(text.replace("{vars}", " | ".join(f"x{i}" for i in range(n_vars))), name)


def map_genome(genome: Sequence[int] | np.ndarray, grammar: Grammar, *, wraps: int = 3
               ) -> tuple[list[str] | None, int]:
    """Decode ``genome`` (codons 0..255) with ``grammar``: the terminals of the phenotype
    (None when the codons run out after ``wraps`` wraps) and the number of codons read.

    Leftmost derivation; each non-terminal takes the production ``codon mod number of
    choices`` (eq. A.2). Every non-terminal reads a codon, single-choice ones too (as the
    authors' JECO library does; the thesis's example has no single-choice rule).
    """
    table = grammar.table()
    codons = [int(c) for c in genome]
    n = len(codons)
    if n == 0:
        return None, 0
    out: list[str] = []
    stack = [grammar.start]
    index = 0
    wrap = 0
    while stack:
        symbol = stack.pop()
        productions = table.get(symbol)
        if productions is None:
            out.append(symbol)
            continue
        if index >= n:
            if wrap >= wraps:
                return None, wrap * n + index
            index = 0
            wrap += 1
        production = productions[codons[index] % len(productions)]
        index += 1
        stack.extend(reversed(production))
    return out, wrap * n + index
