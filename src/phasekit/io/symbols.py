"""Function names and call sites as a programmer writes them, from trace labels.

Tracers label a frame with the symbol the linker sees. :func:`function_name` turns that
into the name in the source:

- Extrae abbreviates a long name as ``PREFIX..SUFFIX [FULL NAME]``: the full name is kept;
- gfortran module procedures ``__mod_MOD_proc``, Intel Fortran ``mod_mp_proc_``, NAG
  ``mod_MP_proc`` and flang ``_QMmodPproc`` read ``mod::proc``; flang's ``_QPproc`` reads
  ``proc`` and its main program ``_QQmain`` reads ``MAIN__``, gfortran's and Intel's name for
  it (their ``main`` is the C entry point that calls it);
- Itanium C++ symbols (``_Z...``) are demangled by the C++ runtime's ``__cxa_demangle``
  when it loads (else kept as they are);
- GCC's clone suffixes (``.constprop.0``, ``.isra.0``, ``.part.0``, ``.cold``, ``.3``) and
  the demangler's ``[clone .constprop.0]`` are dropped: a clone is the same function;
- nested template brackets are closed as C++11 writes them (``vector<vector<int>>``, not
  ``> >``), which also keeps ``" > "``, the call path's separator, out of names.

A plain ``proc_`` is kept: it may be a Fortran procedure or a C function of that name.
Names that are already clean (``main``, ``A::f(int) const``) are returned unchanged.

:func:`site_label` turns Extrae's ``LINE (FILE, MODULE)`` into ``FILE:LINE``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["UNKNOWN_LABELS", "demangle_cxx", "function_name", "site_label"]

#: What Extrae writes for a frame or a line it could not translate.
UNKNOWN_LABELS = frozenset({"Unresolved", "_NOT_Found"})

#: The name gfortran and Intel Fortran give the main program.
FORTRAN_MAIN = "MAIN__"

_CLONE_SUFFIX = re.compile(
    r"(?P<stem>[A-Za-z_$][\w$]*?)"
    r"(?:\.(?:constprop|isra|part|lto_priv|localalias|cold)(?:\.\d+)?|\.\d+)+")
_DEMANGLED_CLONE = re.compile(r"(?:\s*\[clone [^\]]*\])+$")
_GFORTRAN_MODULE = re.compile(r"__(?P<module>[a-z0-9_$]+?)_MOD_(?P<proc>[\w$]+)")
_INTEL_MODULE = re.compile(r"(?P<module>[a-z][a-z0-9_$]*?)_mp_(?P<proc>[a-z][a-z0-9_$]*)_")
_NAG_MODULE = re.compile(r"(?P<module>[a-z][a-z0-9_$]*?)_MP_(?P<proc>[a-z][a-z0-9_$]*)")
_FLANG_PART = re.compile(r"(?P<tag>[A-Z])(?P<name>[a-z0-9_$]+)")
_SITE = re.compile(r"(?P<line>\d+)\s*\((?P<place>.*)\)", re.DOTALL)
_BRACKETED_SITE = re.compile(r"(?P<short>\d+\s*\(.*?\))\s*\[(?P<full>\d+\s*\(.*\))\]",
                             re.DOTALL)


def _is_abbreviation(short: str, full: str) -> bool:
    """Whether ``short`` is ``full`` with a middle part replaced by ``..``."""
    start = short.find("..")
    while start >= 0:
        head, tail = short[:start], short[start + 2:]
        if (len(full) >= len(head) + len(tail) and full.startswith(head)
                and full.endswith(tail)):
            return True
        start = short.find("..", start + 1)
    return False


def _unabbreviated(label: str) -> str:
    """``"__mpi_ro..mal_init [__mpi_routines_MOD_mpi_minimal_init]"`` -> the full name."""
    if not label.endswith("]"):
        return label
    start = label.find(" [")
    while start >= 0:
        short, full = label[:start].rstrip(), label[start + 2:-1].strip()
        if full and _is_abbreviation(short, full):
            return full
        start = label.find(" [", start + 1)
    return label


def _runtime_libraries() -> Iterator[str]:
    import ctypes.util

    yield "libstdc++.so.6"
    yield "libc++.so.1"
    for name in ("stdc++", "c++abi"):
        found = ctypes.util.find_library(name)
        if found:
            yield found


@functools.cache
def _cxa_demangle() -> Callable[[str], str | None] | None:
    """The C++ runtime's ``__cxa_demangle`` as ``symbol -> name or None``, or None when no
    runtime library loads (looked up at the first C++ symbol)."""
    import ctypes

    for library in _runtime_libraries():
        try:
            cxa_demangle = ctypes.CDLL(library).__cxa_demangle
            free = ctypes.CDLL(None).free  # the C library the runtime allocates with
        except (OSError, AttributeError):
            continue
        cxa_demangle.restype = ctypes.c_void_p
        cxa_demangle.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.POINTER(ctypes.c_int)]
        free.argtypes = [ctypes.c_void_p]
        free.restype = None

        def demangle(symbol: str, cxa_demangle: Any = cxa_demangle,
                     free: Any = free) -> str | None:
            status = ctypes.c_int(0)
            out = cxa_demangle(symbol.encode(), None, None, ctypes.byref(status))
            if status.value != 0 or not out:
                return None
            try:
                return ctypes.string_at(out).decode("utf-8", errors="replace")
            finally:
                free(out)

        return demangle
    return None


def demangle_cxx(symbol: str) -> str:
    """An Itanium C++ symbol (``_ZN6Domain5forceEv``) demangled (``Domain::force()``);
    ``symbol`` unchanged when it is not one or no C++ runtime library could be loaded."""
    mangled = symbol[1:] if symbol.startswith("__Z") else symbol  # Mach-O's extra "_"
    demangle = _cxa_demangle() if mangled.startswith("_Z") else None
    return (demangle(mangled) or symbol) if demangle is not None else symbol


def _flang_name(symbol: str) -> str | None:
    """``_QMmodPproc`` -> ``mod::proc``, ``_QFhostPinner`` -> ``host::inner``, ``_QPproc``
    -> ``proc``, ``_QQmain`` -> ``MAIN__``; None for the other uniqued names (data,
    types, blocks)."""
    if symbol == "_QQmain":
        return FORTRAN_MAIN
    parts = _FLANG_PART.findall(symbol[2:])
    if "".join(tag + name for tag, name in parts) != symbol[2:] or not parts:
        return None
    *scopes, (last_tag, proc) = parts
    if last_tag != "P" or any(tag not in "MSF" for tag, _ in scopes):
        return None
    # a submodule's procedures are its ancestor module's, as gfortran names them
    return "::".join([name for tag, name in scopes if tag != "S"] + [proc])


@functools.lru_cache(maxsize=1 << 16)
def function_name(label: str) -> str:
    """One clean name for a .pcf or OTF2 function label.

    Examples
    --------
    >>> function_name("__mpi_ro..mal_init [__mpi_routines_MOD_mpi_minimal_init]")
    'mpi_routines::mpi_minimal_init'
    >>> function_name("mod_mp_proc_"), function_name("_QMmodPproc")
    ('mod::proc', 'mod::proc')
    >>> function_name("CalcForceForNodes(Domain&)")
    'CalcForceForNodes(Domain&)'
    """
    name = _unabbreviated(label.strip())
    clone = _CLONE_SUFFIX.fullmatch(name)
    if clone:
        name = clone.group("stem")
    if name.startswith(("_Z", "__Z")):
        return _closed_templates(_DEMANGLED_CLONE.sub("", demangle_cxx(name)))
    if name.startswith("_Q"):
        return _flang_name(name) or name
    for pattern in (_GFORTRAN_MODULE, _INTEL_MODULE, _NAG_MODULE):
        match = pattern.fullmatch(name)
        if match:
            return f"{match.group('module')}::{match.group('proc')}"
    return _closed_templates(name)


def _closed_templates(name: str) -> str:
    while "> >" in name:
        name = name.replace("> >", ">>")
    return name


@functools.lru_cache(maxsize=1 << 16)
def site_label(label: str) -> str:
    """A call site as ``FILE:LINE`` from Extrae's ``LINE (FILE, MODULE)`` or ``LINE (FILE)``.

    Extrae's ``LINE (SHORT) [LINE (FILE, MODULE)]`` (a long file name abbreviated) gives the
    full file; an abbreviation alone (``31 (current_..oth.F90, epoch2d)``) is kept. Unknown
    places keep Extrae's word (``0 (Unresolved)`` -> ``Unresolved``, the same for
    ``_NOT_Found``); a line in a library without source (``0 (., libc-2.28.so)``) names the
    library. Other labels are returned stripped.

    Examples
    --------
    >>> site_label("31 (current_smooth.F90, epoch2d)")
    'current_smooth.F90:31'
    >>> site_label("0 (Unresolved)")
    'Unresolved'
    """
    text = label.strip()
    bracketed = _BRACKETED_SITE.fullmatch(text)
    if bracketed:
        text = bracketed.group("full")
    match = _SITE.fullmatch(text)
    if match is None:
        return text
    place = match.group("place").strip()
    file, comma, module = place.rpartition(",")
    if not comma:
        file, module = place, ""
    file, module = file.strip(), module.strip()
    if file in UNKNOWN_LABELS:
        return file
    if file in ("", ".", "??"):
        return module or text
    return f"{file}:{match.group('line')}"
