"""The call graph of a C program from its source (Salinas Hilburg 2020, 4.1.1: the "Call Graph Set" module).

Tool: Doxygen's XML output (Debian package ``doxygen``; the thesis uses Doxygen too). Why not
GNU cflow, the smaller tool: cflow 1.7 (Debian 12) misses every call inside the braced body of
a C99 ``for (int i = 0; ...) { ... }`` loop (``static void f(int n) { for (int q = 0; q < n;
q++) { k(); } }`` gives ``f`` no callee), the most common loop form of HPC kernels; Doxygen
1.9 finds these calls. Doxygen also gives each function's definition and body lines.

What Doxygen does not give, and how we get it. Its references are by name and say nothing of
where a call is: a local variable named like a function, or a function whose address is taken
(``qsort(v, n, 8, cmp)``), is a reference but not a call. Removing calls needs their exact
place, so a small C tokenizer (:func:`scan_source`: comments, string and character literals and
preprocessor lines skipped; parentheses and braces matched) finds, in each function body,
every call ``name(...)`` of a function defined in the file, with its line, its character span
and whether it is a whole statement (``f(x);``) or part of an expression (``y = f(x);``). The
graph's edges are these calls. Each disagreement with Doxygen is kept in ``notes``: a
reference without a call (not an edge) or a call Doxygen did not report (kept as an edge, the
source is the authority).

Scope. One C file (local headers may be included); functions defined in it are the nodes;
library functions (declared elsewhere: ``malloc``, ``printf``, ``sqrt``) are not, and calls to
them always stay. Calls hidden in macros, and calls through function pointers, are not seen
(neither tool expands the program's macros into calls we could remove).
"""

from __future__ import annotations

import bisect
import hashlib
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasekit.errors import InputError, UnsupportedError
from phasekit.results import check_version

__all__ = [
    "CallGraph",
    "CallSite",
    "Function",
    "call_graph",
    "doxygen_references",
    "scan_source",
]

KIND = "callgraph"
VERSION = 1

_TOKEN = re.compile(r"""
    (?P<nl>\n)
  | (?P<ws>[ \t\r\f\v]+|\\\n)
  | (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>"(?:\\.|[^"\\\n])*"?)
  | (?P<char>'(?:\\.|[^'\\\n])*'?)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<punct>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\.\.\.|\#\#|.)
""", re.S | re.X)

#: Words after which ``name(`` declares rather than calls (``static void f(int);``).
_DECLARATION_WORDS = frozenset((
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
    "bool", "struct", "union", "enum", "static", "extern", "const", "volatile", "register",
    "inline", "typedef", "auto", "restrict", "__restrict", "size_t"))
#: Control keywords whose parenthesized header ends before a statement.
_CONTROL = frozenset(("if", "while", "for", "switch"))
_KEYWORDS = _DECLARATION_WORDS | _CONTROL | frozenset((
    "return", "sizeof", "do", "else", "case", "default", "goto", "break", "continue",
    "_Alignof", "_Generic", "__attribute__", "__typeof__", "typeof", "asm", "__asm__"))


@dataclass(frozen=True)
class Token:
    kind: str  # ident, number, punct, string, char
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Function:
    """A function defined in the file: lines of its name and body (1-based), body span."""

    name: str
    line: int
    body_start_line: int
    body_end_line: int
    body_start: int = field(default=0, compare=False)
    body_end: int = field(default=0, compare=False)


@dataclass(frozen=True)
class CallSite:
    """One call ``callee(...)`` inside ``caller``: line (1-based), character span of the call
    expression in the source (name to closing parenthesis), and whether it is a whole
    statement (``callee(...);``), which can be replaced by ``(void)0``."""

    caller: str
    callee: str
    line: int
    start: int
    end: int
    statement: bool


@dataclass(frozen=True)
class CallGraph:
    """Functions of one C file and the calls between them (the edges), from ``root``.

    ``sha256`` identifies the source text the character spans refer to; ``tool`` says what
    produced the references; ``notes`` every disagreement between the tool and the source.
    """

    source: str
    sha256: str
    root: str
    functions: tuple[Function, ...]
    sites: tuple[CallSite, ...]
    tool: str
    notes: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.functions)

    def callees(self, name: str) -> tuple[str, ...]:
        """Functions ``name`` calls, in the order of their first call in the source."""
        seen: dict[str, None] = {}
        for site in self.sites:
            if site.caller == name:
                seen.setdefault(site.callee)
        return tuple(seen)

    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        seen: dict[tuple[str, str], None] = {}
        for site in self.sites:
            seen.setdefault((site.caller, site.callee))
        return tuple(seen)

    def reachable(self) -> tuple[str, ...]:
        """Functions reachable from the root, in depth-first order."""
        order: list[str] = []
        stack = [self.root]
        while stack:
            name = stack.pop()
            if name in order:
                continue
            order.append(name)
            stack.extend(reversed([c for c in self.callees(name) if c not in order]))
        return tuple(order)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": KIND, "version": VERSION, "source": self.source, "sha256": self.sha256,
            "root": self.root, "tool": self.tool, "notes": list(self.notes),
            "functions": [{"name": f.name, "line": f.line, "body_lines": [f.body_start_line,
                                                                          f.body_end_line],
                           "body_span": [f.body_start, f.body_end]} for f in self.functions],
            "calls": [{"caller": s.caller, "callee": s.callee, "line": s.line,
                       "span": [s.start, s.end], "statement": s.statement}
                      for s in self.sites],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str | None = None) -> CallGraph:
        check_version(data, KIND, VERSION, source)
        try:
            functions = tuple(Function(f["name"], int(f["line"]), int(f["body_lines"][0]),
                                       int(f["body_lines"][1]), int(f["body_span"][0]),
                                       int(f["body_span"][1])) for f in data["functions"])
            sites = tuple(CallSite(c["caller"], c["callee"], int(c["line"]), int(c["span"][0]),
                                   int(c["span"][1]), bool(c["statement"]))
                          for c in data["calls"])
            return cls(str(data["source"]), str(data["sha256"]), str(data["root"]), functions,
                       sites, str(data["tool"]), tuple(data.get("notes", ())))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InputError(f"malformed call graph: {exc!r}", path=source) from None


# --- the tokenizer ---------------------------------------------------------------------------
def tokenize(text: str) -> list[Token]:
    """Tokens of C source ``text``: comments, whitespace and preprocessor lines dropped."""
    tokens: list[Token] = []
    line_start = True  # only whitespace since the last newline
    pos, n = 0, len(text)
    while pos < n:
        match = _TOKEN.match(text, pos)
        assert match is not None  # the last alternative matches any character
        kind = match.lastgroup or "punct"
        end = match.end()
        if kind == "nl":
            line_start = True
        elif kind in ("ws", "comment"):
            pass
        elif line_start and match.group() == "#":  # a directive, with its continuations
            end = pos
            while True:
                newline = text.find("\n", end)
                if newline < 0:
                    end = n
                    break
                # a continuation ends with a backslash; a comment may also span lines
                segment = text[pos:newline]
                if segment.count("/*") > segment.count("*/"):
                    close = text.find("*/", newline)
                    end = n if close < 0 else close + 2
                    continue
                if text[newline - 1:newline] == "\\":
                    end = newline + 1
                    continue
                end = newline
                break
        else:
            line_start = False
            tokens.append(Token(kind, match.group(), pos, end))
        pos = end
    return tokens


def _matching(tokens: list[Token]) -> dict[int, int]:
    """Index of the matching bracket for every (, ), {, }, [ and ] (both directions)."""
    pairs = {")": "(", "}": "{", "]": "["}
    match: dict[int, int] = {}
    stacks: dict[str, list[int]] = {"(": [], "{": [], "[": []}
    for i, tok in enumerate(tokens):
        if tok.kind != "punct":
            continue
        if tok.text in stacks:
            stacks[tok.text].append(i)
        elif tok.text in pairs and stacks[pairs[tok.text]]:
            j = stacks[pairs[tok.text]].pop()
            match[i], match[j] = j, i
    return match


class _Lines:
    def __init__(self, text: str) -> None:
        self._newlines = [i for i, c in enumerate(text) if c == "\n"]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._newlines, offset - 1) + 1


def _definitions(tokens: list[Token], match: dict[int, int], lines: _Lines
                 ) -> list[tuple[Function, int, int]]:
    """Function definitions at file scope: (function, index of ``{``, index of ``}``)."""
    out: list[tuple[Function, int, int]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "punct" and tok.text == "{":
            close = match.get(i)
            name_index = _definition_name(tokens, match, i)
            if name_index is not None and close is not None:
                name = tokens[name_index]
                out.append((Function(name.text, lines.line(name.start), lines.line(tok.start),
                                     lines.line(tokens[close].start), tok.start,
                                     tokens[close].end), i, close))
            if close is None:
                break
            i = close + 1  # skip the body (or a struct, an initializer) at file scope
            continue
        i += 1
    return out


def _definition_name(tokens: list[Token], match: dict[int, int], brace: int) -> int | None:
    """Index of the function name when the ``{`` at ``brace`` opens a function body."""
    j = brace - 1
    # skip __attribute__((...)) and similar trailing specifiers
    while j >= 0 and tokens[j].text == ")" and j in match:
        open_ = match[j]
        before = open_ - 1
        if before >= 0 and tokens[before].text == "(" and before in match:
            before -= 1  # __attribute__((x)): the outer parenthesis
        if before >= 0 and tokens[before].text in ("__attribute__", "__declspec", "__asm__",
                                                   "asm"):
            j = before - 1
            continue
        # the parameter list: the name is just before it
        name = open_ - 1
        if name >= 0 and tokens[name].kind == "ident" and tokens[name].text not in _KEYWORDS:
            return name
        return None
    return None


def _is_statement(tokens: list[Token], match: dict[int, int], first: int, last: int) -> bool:
    """Whether the call spanning tokens ``first``..``last`` is a whole expression statement."""
    if last + 1 >= len(tokens) or tokens[last + 1].text != ";":
        return False
    if first == 0:
        return False
    prev = tokens[first - 1]
    if prev.text in (";", "{", "}") or prev.text in ("else", "do"):
        return True
    if prev.text == ")" and (first - 1) in match:
        before = match[first - 1] - 1
        return before >= 0 and tokens[before].text in _CONTROL
    if prev.text == ":":  # a label or case, not the ':' of a conditional expression
        k = first - 2
        depth = 0
        while k >= 0 and tokens[k].text not in (";", "{", "}"):
            if tokens[k].text == "?" and depth == 0:
                return False
            if tokens[k].text in (")", "]"):
                depth += 1
            elif tokens[k].text in ("(", "["):
                depth -= 1
            k -= 1
        return True
    return False


def scan_source(text: str, names: set[str] | None = None
                ) -> tuple[tuple[Function, ...], tuple[CallSite, ...]]:
    """Function definitions of C source ``text`` and the calls in their bodies.

    Only calls to ``names`` (default: the functions defined in ``text``) are returned.
    A ``name(`` after ``.``/``->`` (a member) or after a type word (a local declaration) is
    not a call.
    """
    tokens = tokenize(text)
    match = _matching(tokens)
    lines = _Lines(text)
    definitions = _definitions(tokens, match, lines)
    defined = {f.name for f, _, _ in definitions}
    wanted = defined if names is None else set(names)
    sites: list[CallSite] = []
    for function, open_, close in definitions:
        for i in range(open_ + 1, close):
            tok = tokens[i]
            if tok.kind != "ident" or tok.text not in wanted:
                continue
            if i + 1 >= close or tokens[i + 1].text != "(" or (i + 1) not in match:
                continue
            prev = tokens[i - 1]
            if prev.text in (".", "->") or prev.text in _DECLARATION_WORDS:
                continue
            if prev.text == "*" and tokens[i - 2].text in _DECLARATION_WORDS:
                continue  # "double *f(int);" declares
            last = match[i + 1]
            sites.append(CallSite(function.name, tok.text, lines.line(tok.start), tok.start,
                                  tokens[last].end, _is_statement(tokens, match, i, last)))
    return tuple(f for f, _, _ in definitions), tuple(sites)


# --- Doxygen ---------------------------------------------------------------------------------
_DOXYFILE = """\
INPUT                  = "{input}"
OUTPUT_DIRECTORY       = "{output}"
GENERATE_XML           = YES
XML_PROGRAMLISTING     = NO
GENERATE_HTML          = NO
GENERATE_LATEX         = NO
GENERATE_RTF           = NO
GENERATE_MAN           = NO
EXTRACT_ALL            = YES
EXTRACT_STATIC         = YES
EXTRACT_LOCAL_CLASSES  = YES
REFERENCES_RELATION    = YES
REFERENCED_BY_RELATION = NO
OPTIMIZE_OUTPUT_FOR_C  = YES
CASE_SENSE_NAMES       = YES
RECURSIVE              = NO
QUIET                  = YES
WARNINGS               = NO
WARN_IF_UNDOCUMENTED   = NO
HAVE_DOT               = NO
"""


def doxygen_version(doxygen: str = "doxygen") -> str:
    exe = shutil.which(doxygen)
    if exe is None:
        raise UnsupportedError(f"{doxygen} not found: the call graph comes from Doxygen's XML "
                               "output (Debian: apt-get install doxygen)")
    done = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False,
                          timeout=60)
    return f"doxygen {done.stdout.strip() or '?'}"


def doxygen_references(path: str | Path, *, doxygen: str = "doxygen"
                       ) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Functions Doxygen finds defined in ``path``: name -> (body start line, referenced
    names, in Doxygen's order). Raises UnsupportedError without Doxygen."""
    version = doxygen_version(doxygen)
    path = Path(path).resolve()
    with tempfile.TemporaryDirectory(prefix="phasekit-doxygen-") as tmp:
        doxyfile = Path(tmp) / "Doxyfile"
        doxyfile.write_text(_DOXYFILE.format(input=path, output=tmp), encoding="utf-8")
        try:
            done = subprocess.run([shutil.which(doxygen) or doxygen, str(doxyfile)],
                                  capture_output=True, text=True, check=False, timeout=600,
                                  cwd=tmp)
        except subprocess.TimeoutExpired:
            raise UnsupportedError(f"{version} did not finish within 600 s on {path}") from None
        xml_dir = Path(tmp) / "xml"
        if done.returncode or not xml_dir.is_dir():
            message = (done.stderr.strip().splitlines() or ["no XML written"])[-1]
            raise UnsupportedError(f"{version} failed on {path}: {message}")
        ids: dict[str, str] = {}
        found: dict[str, tuple[int, list[str]]] = {}
        for xml_file in sorted(xml_dir.glob("*.xml")):
            if xml_file.name in ("index.xml", "Doxyfile.xml"):
                continue
            try:
                root = ET.parse(xml_file).getroot()
            except ET.ParseError:
                continue
            for member in root.iter("memberdef"):
                if member.get("kind") != "function":
                    continue
                location = member.find("location")
                name = member.findtext("name") or ""
                if location is None or not name:
                    continue
                try:
                    body = int(location.get("bodystart", "-1"))
                except ValueError:
                    body = -1
                if body < 1:
                    continue  # a declaration only
                ids[member.get("id", "")] = name
                refs = [r.get("refid", "") for r in member.findall("references")]
                found[name] = (body, refs)
    return {name: (body, tuple(dict.fromkeys(ids[r] for r in refs if r in ids)))
            for name, (body, refs) in found.items()}


def call_graph(path: str | Path, *, root: str = "main", doxygen: str = "doxygen",
               text: str | None = None) -> CallGraph:
    """The call graph of the C file ``path`` (module docstring).

    InputError when the file cannot be read or defines no ``root`` function; UnsupportedError
    without Doxygen.
    """
    path = Path(path)
    if text is None:
        from phasekit.io.inputs import input_file

        input_file(path, "a C program")  # a FIFO or a device: refused, not waited on
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
    functions, sites = scan_source(text)
    names = {f.name for f in functions}
    if root not in names:
        raise InputError(f"no function {root}() defined: the call graph starts at it",
                         path=str(path))
    duplicates = sorted({f.name for f in functions if sum(g.name == f.name
                                                          for g in functions) > 1})
    if duplicates:
        raise InputError("functions defined twice (inside #if branches?): "
                         + ", ".join(duplicates), path=str(path))
    references = doxygen_references(path, doxygen=doxygen)
    notes: list[str] = []
    for name in sorted(set(references) - names):
        notes.append(f"Doxygen reports a function {name}() that the source scan did not find "
                     "(defined through a macro?); its calls cannot be removed")
    for name in sorted(names - set(references)):
        notes.append(f"{name}() is defined in the source but Doxygen did not report it")
    called = {(s.caller, s.callee) for s in sites}
    for caller, (_, refs) in references.items():
        for callee in refs:
            if callee in names and caller in names and (caller, callee) not in called:
                notes.append(f"{caller}() refers to {callee} without calling it (a function "
                             "pointer or a variable of the same name): not an edge")
    for caller, callee in dict.fromkeys((s.caller, s.callee) for s in sites):
        if caller in references and callee not in references[caller][1]:
            line = next(s.line for s in sites if (s.caller, s.callee) == (caller, callee))
            notes.append(f"call {caller}() -> {callee}() at line {line} is not in Doxygen's "
                         "references; kept (the source is the authority)")
    digest = hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()
    return CallGraph(str(path), digest, root, functions, sites, doxygen_version(doxygen),
                     tuple(notes))
