"""Per-file work run serially, on local processes or on a Dask cluster (docs/design.md).

One call, :func:`map_files`, applies a function to every item (a file) and returns one
:class:`Outcome` per item, in the order of the items: the function's value, or a
:class:`Failure` (one line naming the item, an exit code). A bad file is a failure of its own
item; the other items still run. Three ways to run:

- serially in this process (``workers=1``): what one profile has always used;
- ``workers=N`` local worker processes (capped at the usable cores, with a note): each is a
  fresh interpreter that imports phasekit and the task's module, and never the caller's
  script, so a plain script with no ``if __name__ == "__main__":`` guard works (the standard
  library's spawn and forkserver re-run such a script in every worker; a fork of a process
  whose numba or OpenMP threads are running can deadlock);
- a Dask cluster (a ``dask.distributed.Client`` as ``client``, or ``scheduler="tcp://HOST:PORT"``):
  the items must be readable by the workers (a shared file system), and phasekit installed
  there.

Memory is bounded per worker by construction (our choice): a task is one file, read by the
worker itself (the parent never holds the data), and what comes back is a small summary, not
the data. A local worker is replaced after
:data:`MAX_TASKS_PER_CHILD` tasks, so that what one file leaves behind (allocator
fragmentation, caches) cannot pile up over hundreds of files; the parent replaces it between
two tasks (``ProcessPoolExecutor``'s own ``max_tasks_per_child`` deadlocks on Python 3.11 and
3.12 when it replaces a worker, so runs of more than 100 files per worker hung). A restart
costs an interpreter start, about a second, so it is rare. A local worker that dies (killed
by the out-of-memory killer, a crash in native code) fails only the item it was running,
which is tried once more, alone, after the others; the failure says how the process ended
(the signal, or its exit code and last line of standard error), not a guess.
On Dask the cluster's own limits hold (``memory_limit`` of each worker: its nanny
restarts a worker past 95 % of it; the scheduler gives up on a task after
``distributed.scheduler.allowed-failures`` restarts, reported here as that item's failure),
and a cluster left with no worker at all for :data:`NO_WORKERS_TIMEOUT` seconds (its last
worker died and no nanny restarts it) fails the items not done, instead of waiting forever.
Every task runs in :func:`roomy_heap`, which matters where the environment fixes glibc's
malloc thresholds, as Dask's nanny does: the heap is kept while the task runs and given
back after it.

Threads: N local workers each get ``cores // N`` numba threads, so that N workers do not
oversubscribe the machine; a Dask task gets one thread (a Dask worker runs one
task per thread it has, so the cluster's layout already fills the cores). The function reads
its budget with :func:`worker_threads`. Serially, nothing is changed.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import ctypes
import functools
import gc
import glob
import json
import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from phasekit.errors import PhasekitError, PhasekitWarning, UnsupportedError, UsageError

__all__ = [
    "MAX_TASKS_PER_CHILD",
    "Failure",
    "Outcome",
    "available_cores",
    "call",
    "describe",
    "expand_inputs",
    "has_magic",
    "map_files",
    "roomy_heap",
    "worker_threads",
]

T = TypeVar("T")
R = TypeVar("R")
Progress = Callable[[str, float], None]

#: Tasks a local worker process runs before it is replaced (memory bound; module docstring).
MAX_TASKS_PER_CHILD = 100
#: Seconds to wait for a Dask scheduler to answer.
CONNECT_TIMEOUT = 10.0
#: Seconds a Dask cluster may have no worker at all while items remain (its last worker
#: died without a nanny to restart it, or left) before those items are reported as failed
#: rather than waited for (our choice: longer than a nanny takes to restart a worker).
NO_WORKERS_TIMEOUT = 60.0
#: How often the Dask cluster's workers are counted while no item finishes.
WORKER_CHECK_S = 1.0

_log = logging.getLogger(__name__)
_budget = threading.local()


@dataclass(frozen=True)
class Failure:
    """Why one item failed: a one-line ``message`` naming it, the CLI's ``exit_code`` for it
    (2 usage, 3 input, 4 unsupported, 1 anything else), the exception's class name and, for
    ``--debug``, its traceback."""

    message: str
    exit_code: int
    error: str
    traceback: str = ""
    #: The error itself when it is about a parameter of the call (the same for every item:
    #: the caller's, not the item's), for the caller to raise once.
    usage: UsageError | None = None
    #: The message as the command line says it (the option for the parameter), when it
    #: differs from ``message``.
    command_line: str = ""


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """What became of one item: its ``value``, or its ``failure``; and the
    :class:`~phasekit.errors.PhasekitWarning` messages raised while it ran."""

    item: Any
    value: R | None = None
    failure: Failure | None = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.failure is None


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_threads() -> int:
    """The threads the current task may use: set by :func:`map_files` in a worker, all the
    cores otherwise."""
    return int(getattr(_budget, "threads", 0) or available_cores())


# --- inputs ----------------------------------------------------------------------------------
def has_magic(text: str) -> bool:
    """Whether ``text`` is a glob pattern (``*``, ``?`` or ``[``)."""
    return glob.has_magic(text)


def expand_inputs(args: Sequence[str | os.PathLike[str]], suffixes: Sequence[str]
                  ) -> tuple[list[Path], list[tuple[str, str]]]:
    """The files named by ``args``: a folder gives its files whose names end in one of
    ``suffixes`` (not its subfolders: a folder is one run), a glob pattern that names no
    existing path its matches (``**`` included), anything else itself (a missing file is
    reported by whoever reads it). Sorted within a folder or a pattern, duplicates dropped.

    Returns the files and, for arguments that name none, ``(argument, reason)`` pairs.
    """
    ends = tuple(s.lower() for s in suffixes)
    files: list[Path] = []
    problems: list[tuple[str, str]] = []
    seen: set[str] = set()

    def add(path: Path) -> None:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            files.append(path)

    for arg in args:
        text = os.fspath(arg)
        path = Path(text)
        if path.is_dir():
            found = sorted(p for p in path.iterdir()
                           if p.is_file() and p.name.lower().endswith(ends))
            if not found:
                problems.append((text, "no input in this folder (expected names ending in "
                                       + ", ".join(suffixes) + "; subfolders are not "
                                       f"searched: give them, or a pattern such as "
                                       f"'{text.rstrip('/')}/**/*{suffixes[0]}')"))
            for p in found:
                add(p)
        elif has_magic(text) and not path.exists():
            matches = sorted(Path(m) for m in glob.glob(text, recursive=True))
            matches = [m for m in matches if m.is_file()]
            if not matches:
                problems.append((text, "no file matches this pattern"))
            for p in matches:
                add(p)
        else:
            add(path)
    return files, problems


# --- running ---------------------------------------------------------------------------------
def map_files(func: Callable[[T], R], items: Iterable[T], *, workers: int | None = 1,
              scheduler: str | None = None, client: Any = None,
              progress: Progress | None = None,
              max_tasks_per_child: int | None = MAX_TASKS_PER_CHILD,
              started: Callable[[], None] | None = None) -> list[Outcome[R]]:
    """``func(item)`` for every item, serially (``workers=1``), on ``workers`` local processes
    (None: one per core), on the Dask ``client`` (a ``dask.distributed.Client``, left open) or
    on the Dask cluster at ``scheduler`` (a client opened for the call); one :class:`Outcome` per
    item, in order. An exception of ``func`` is that item's :class:`Failure`; the others
    still run. ``progress(stage, fraction)`` is called as items finish; ``started()`` once
    the items are handed to local processes or to the cluster (not serially), so that the
    caller can prepare what comes next (in a thread) without delaying their start.

    For processes and Dask, ``func`` and the items must pickle (a module-level function, or
    a ``functools.partial`` of one, and paths). Raises UsageError when the scheduler cannot
    be reached, UnsupportedError when dask.distributed is not installed.
    """
    todo = list(items)
    report = progress or (lambda stage, fraction: None)
    if workers is not None and workers < 1:
        raise UsageError("expected at least 1", parameter="workers", value=workers)
    handed = started or (lambda: None)
    if client is not None and scheduler is not None:
        raise UsageError("give a Dask client or a scheduler address, not both")
    if client is not None:
        return _on_dask(func, todo, client, report, handed)
    if scheduler is not None:
        with _connect(scheduler) as opened:
            return _on_dask(func, todo, opened, report, handed)
    count = _usable_workers(workers, len(todo))
    if count == 1:
        return _serially(func, todo, report)
    return _on_processes(func, todo, count, report, max_tasks_per_child, handed)


def _usable_workers(workers: int | None, items: int) -> int:
    """The worker processes for ``items`` items: ``workers`` (None: one per core), no more
    than the items nor than the cores this process may use, with a
    :class:`~phasekit.errors.PhasekitWarning` when the cores cap it: more processes than
    cores only add interpreter starts and contention (8 workers on 2 cores took 10 s where
    1 took 1.1 s, for 8 small nodes)."""
    cores = available_cores()
    count = min(workers or cores, max(1, items))
    if count > cores:
        warnings.warn(f"{workers} workers asked for, but this process may use {cores} "
                      f"core(s): using {cores} worker process(es)", PhasekitWarning,
                      stacklevel=3)
        return cores
    return count


class _Ticker:
    """Counts finished items for the progress callback."""

    def __init__(self, total: int, report: Progress) -> None:
        self.total, self.done, self.report = total, 0, report
        report(f"0/{total} files", 0.0)

    def tick(self) -> None:
        self.done += 1
        self.report(f"{self.done}/{self.total} files", self.done / max(1, self.total))


def call(func: Callable[[T], R], item: T, threads: int | None = None) -> Outcome[R]:
    """``func(item)`` as an :class:`Outcome` (the task every mode runs); ``threads`` is the
    budget of :func:`worker_threads` and of numba for the call (None: unchanged)."""
    previous = getattr(_budget, "threads", None)
    numba_threads = _set_numba_threads(threads) if threads else None
    _budget.threads = threads
    with warnings.catch_warnings(record=True) as caught, roomy_heap():
        warnings.simplefilter("always", PhasekitWarning)
        try:
            value = func(item)
            failure = None
        except Exception as exc:  # every failure of an item is its own; BaseException is not
            value, failure = None, describe(exc, item)
        finally:
            _budget.threads = previous
            if numba_threads is not None:
                _set_numba_threads(numba_threads)
    messages = tuple(str(w.message) for w in caught if issubclass(w.category, PhasekitWarning))
    for w in caught:
        if not issubclass(w.category, PhasekitWarning):
            _log.debug("%s: %s: %s", item, w.category.__name__, w.message)
    return Outcome(item=item, value=value, failure=failure, warnings=messages)


#: Environment variables by which glibc's malloc thresholds are fixed (dask.distributed's
#: nanny sets ``MALLOC_TRIM_THRESHOLD_=65536`` for every worker it starts).
HEAP_ENVIRONMENT = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
                    "MALLOC_MMAP_MAX_")
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)
#: Thresholds during a task: glibc's own dynamic ceiling for mmap (32 MiB on 64-bit), and a
#: trim threshold of twice that, as its dynamic adjustment sets.
TASK_MMAP_THRESHOLD = 32 << 20
TASK_TRIM_THRESHOLD = 2 * TASK_MMAP_THRESHOLD
_GLIBC_DEFAULT_THRESHOLD = 128 << 10
_INT_MAX = 2**31 - 1
_heap_lock = threading.Lock()
_heap_tasks = 0


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc on Linux (mallopt and malloc_trim), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - present in glibc only
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.mallopt.restype = ctypes.c_int
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        return libc
    except Exception:  # musl, a static interpreter: nothing to tune
        return None


@contextlib.contextmanager
def roomy_heap() -> Iterator[None]:
    """Around one task: when the environment fixes glibc's malloc thresholds (a Dask
    worker's ``MALLOC_TRIM_THRESHOLD_=65536``), raise them while the task runs, then put
    them back and return the free memory to the system (``malloc_trim``), as the fixed
    thresholds intend.

    Why: setting any of them turns off glibc's dynamic mmap threshold, so every array over
    128 KiB becomes a fresh mmap, zeroed page by page by the kernel, and is unmapped when
    freed. An analysis allocates many such temporaries: 19 000 page faults per node against
    3 600, and 0.05 s of system time against 0.01 s, about 9 % of a 0.5 s node (10-minute
    NEMO profile at 5 ms, ad-hoc measurement). The thresholds are process-wide: on a worker
    running several tasks at once they stay raised until the last one ends, then the memory
    goes back. Elsewhere (no such variable, or not glibc on Linux) nothing is changed.
    """
    global _heap_tasks
    libc = _glibc() if any(name in os.environ for name in HEAP_ENVIRONMENT) else None
    if libc is None:
        yield
        return
    with _heap_lock:
        if _heap_tasks == 0:
            libc.mallopt(_M_MMAP_THRESHOLD, TASK_MMAP_THRESHOLD)
            libc.mallopt(_M_TRIM_THRESHOLD, TASK_TRIM_THRESHOLD)
        _heap_tasks += 1
    try:
        yield
    finally:
        with _heap_lock:
            _heap_tasks -= 1
            if _heap_tasks == 0:
                libc.mallopt(_M_MMAP_THRESHOLD, _environment_threshold("MALLOC_MMAP_THRESHOLD_"))
                libc.mallopt(_M_TRIM_THRESHOLD, _environment_threshold("MALLOC_TRIM_THRESHOLD_"))
                libc.malloc_trim(0)


def _environment_threshold(name: str) -> int:
    """The threshold the environment sets, as glibc reads it (decimal, 0x hex or 0 octal),
    within mallopt's int; glibc's default when it sets none."""
    try:
        return min(max(int(os.environ[name], 0), 0), _INT_MAX)
    except (KeyError, ValueError):
        return _GLIBC_DEFAULT_THRESHOLD


def describe(exc: BaseException, item: object) -> Failure:
    """A :class:`Failure` for ``exc`` raised on ``item``: its message with the item in front
    unless it starts with it already; PhasekitErrors keep their exit code, anything else
    is 1."""
    where = os.fspath(item) if isinstance(item, str | os.PathLike) else str(item)
    text = " ".join(str(exc).split())
    if isinstance(exc, PhasekitError):
        message, code = text, int(exc.exit_code)
    elif isinstance(exc, MemoryError):
        message, code = f"out of memory: {text}".rstrip(": "), 1
    else:
        message, code = f"internal error: {type(exc).__name__}: {text}", 1
    if not message.startswith(where):
        message = f"{where}: {message}"
    usage = (exc if isinstance(exc, UsageError) and exc.parameter is not None
             and exc.file is None else None)  # the call's error, not one file's
    said = ""
    if isinstance(exc, UsageError) and exc.parameter is not None:
        said = " ".join(exc.command_line().split())
        said = said if said.startswith(where) else f"{where}: {said}"
    return Failure(message=message, exit_code=code, error=type(exc).__name__,
                   traceback="".join(traceback.format_exception(exc)), usage=usage,
                   command_line=said)


def _set_numba_threads(threads: int) -> int | None:
    """Set numba's thread count for the calling thread; the previous count (None without
    numba)."""
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a dependency
        return None
    previous = int(numba.get_num_threads())
    numba.set_num_threads(max(1, min(int(threads), int(numba.config.NUMBA_NUM_THREADS))))
    return previous


def _serially(func: Callable[[T], R], items: list[T], report: Progress) -> list[Outcome[R]]:
    ticker = _Ticker(len(items), report)
    outcomes = []
    for item in items:
        outcomes.append(call(func, item))
        ticker.tick()
    return outcomes


def _announce(started: Callable[[], None]) -> None:
    """Call the ``started`` callback of :func:`map_files`; its failure (it only prepares what
    comes next) is logged, not raised."""
    try:
        started()
    except Exception:
        _log.debug("the started callback failed", exc_info=True)


def _init_worker(threads: int) -> None:
    """Set-up of a local worker process: size numba's thread pool before numba is imported
    there, and freeze the garbage collector's objects when the worker exits (the
    interpreter's teardown would otherwise collect the analyses' objects several times, about
    0.4 s during which the parent waits; see :func:`phasekit.cli.entry_point`)."""
    os.environ["NUMBA_NUM_THREADS"] = str(threads)
    atexit.register(gc.freeze)


# --- local worker processes ------------------------------------------------------------------
# A worker is ``python -c WORKER_CODE``: it reads tasks from the pipe that was its standard
# input and writes outcomes to the pipe that was its standard output, each a pickle after its
# 8-byte length (a task's own prints go to standard error, and what it starts gets
# /dev/null as standard input). It never imports the caller's ``__main__``
# (multiprocessing's spawn and forkserver re-run a script that has no
# ``if __name__ == "__main__":`` guard in every worker), and the parent always knows which
# item a worker was running when it died. Workers are replaced by the parent itself, between
# two tasks (ProcessPoolExecutor's own ``max_tasks_per_child`` deadlocks on Python 3.11 and
# 3.12 when a worker is replaced: python/cpython#115634).
_HEADER = struct.Struct(">Q")
#: The caller's ``sys.path``, handed to a worker before it imports phasekit (so that it
#: imports the same phasekit, and the task's module, as the caller).
PATH_VARIABLE = "PHASEKIT_WORKER_PATH"
WORKER_CODE = ("import json, os, sys; "
               f"sys.path[:] = json.loads(os.environ.pop({PATH_VARIABLE!r})); "
               "from phasekit.parallel import _worker_main; _worker_main()")
#: Lines of a worker's standard error kept to explain its death.
STDERR_LINES = 20


def _frame(obj: object) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def _send(stream: Any, frame: bytes) -> None:
    stream.write(frame)
    stream.flush()


def _receive(stream: Any) -> Any:
    """The next pickled object on ``stream``; EOFError at its end."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def _worker_main() -> None:
    """The loop of a local worker process: its thread budget first, then one
    ``(task, item)`` after another until the task pipe ends. Ctrl-C is the parent's to
    handle (it ends its workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tasks = os.fdopen(os.dup(0), "rb")
    results = os.fdopen(os.dup(1), "wb")
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.dup2(2, 1)
    _init_worker(_receive(tasks)["threads"])
    while True:
        try:
            task, item = _receive(tasks)
        except EOFError:
            break
        except Exception as exc:  # the task does not unpickle here (a module it names is
            # missing on this side): that item's failure, not the worker's
            _send(results, _frame(Outcome(item=None, failure=describe(exc, "task"))))
            continue
        outcome = task(item)
        try:
            frame = _frame(outcome)
        except Exception as exc:  # the function's value does not pickle
            frame = _frame(Outcome(item=item, failure=describe(exc, item),
                                   warnings=outcome.warnings))
        _send(results, frame)
    results.close()


class _WorkerDied(Exception):
    """The worker process ended while it ran an item; ``reason`` says how, in words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Worker:
    """One local worker process, started at once, and the tasks it has run."""

    def __init__(self, threads: int) -> None:
        env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
        env[PATH_VARIABLE] = json.dumps(sys.path)
        self.process = subprocess.Popen([sys.executable, "-c", WORKER_CODE],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env)
        self.tasks = 0
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._drain = threading.Thread(target=self._keep_stderr, daemon=True)
        self._drain.start()
        try:
            _send(self.process.stdin, _frame({"threads": threads}))
        except OSError:
            raise _WorkerDied(self.reason()) from None

    def _keep_stderr(self) -> None:
        """Pass the worker's standard error on (a task's prints, numba's messages), keeping
        its last lines for :meth:`reason`."""
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            line = raw.decode(errors="replace")
            self.stderr.append(line.rstrip("\n"))
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(line)

    def run(self, frame: bytes, item: Any) -> Outcome[Any]:
        """The task pickled in ``frame`` (:func:`_frame` of ``(task, item)``) run in the
        worker; :class:`_WorkerDied` if it ends meanwhile."""
        self.tasks += 1
        try:
            _send(self.process.stdin, frame)
            outcome = _receive(self.process.stdout)
        except (EOFError, OSError):
            raise _WorkerDied(self.reason()) from None
        if outcome.item is None and outcome.failure is not None:  # the task did not unpickle
            outcome = Outcome(item=item, failure=_naming(outcome.failure, item))
        return outcome

    def reason(self) -> str:
        """How the worker ended, in words (waits for it to end)."""
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._drain.join(timeout=1)
        if code < 0:
            name = _signal_name(-code)
            if -code == signal.SIGKILL:
                return (f"killed by {name} (the kernel's out-of-memory killer sends it; "
                        "'dmesg' tells whether it did)")
            return f"killed by {name}"
        last = next((line for line in reversed(self.stderr) if line.strip()), "")
        return f"exit code {code}" + (f": {last.strip()}" if last else "")

    def close(self) -> None:
        """End the worker after its current task (its task pipe ends), and reap it in the
        background."""
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]
        threading.Thread(target=self.process.wait, daemon=True).start()

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _naming(failure: Failure, item: object) -> Failure:
    """``failure`` (made where the item was not known) naming ``item``."""
    where = os.fspath(item) if isinstance(item, str | os.PathLike) else str(item)
    message = failure.message.removeprefix("task: ")
    return replace(failure, message=f"{where}: {message}")


def _died(item: object, reason: str) -> Failure:
    return Failure(message=f"{item}: the worker process died while working on it ({reason})",
                   exit_code=1, error="WorkerDied")


def _check_importable(func: Callable[..., Any]) -> None:
    """A function defined in the caller's script (``__main__``) cannot be imported by a
    worker: UsageError naming the fix, before any worker starts."""
    inner = func
    while isinstance(inner, functools.partial):
        inner = inner.func
    if getattr(inner, "__module__", None) == "__main__":
        name = getattr(inner, "__qualname__", repr(inner))
        raise UsageError(f"{name} is defined in the script being run (__main__), which worker "
                         "processes do not import: define it in a module of its own, or run "
                         "with workers=1")


def _on_processes(func: Callable[[T], R], items: list[T], workers: int, report: Progress,
                  max_tasks_per_child: int | None, started: Callable[[], None]
                  ) -> list[Outcome[R]]:
    """Every item on ``workers`` local worker processes, each fed by a thread of its own;
    a worker is replaced after ``max_tasks_per_child`` tasks and when it dies. The item a
    worker died on is tried once more, alone, after the others; if its worker dies again,
    that is its failure. Anything else that goes wrong with an item (it does not pickle, a
    worker cannot start) is that item's failure."""
    _check_importable(func)
    threads = max(1, available_cores() // workers)
    task = functools.partial(call, func, threads=threads)
    ticker = _Ticker(len(items), report)
    outcomes: list[Outcome[R] | None] = [None] * len(items)
    died: list[int] = []
    lock = threading.Lock()
    queue = iter(range(len(items)))
    live: set[_Worker] = set()
    stop = threading.Event()

    def start() -> _Worker:
        worker = _Worker(threads)
        with lock:
            live.add(worker)
            if stop.is_set():  # interrupted while it started
                worker.kill()
        return worker

    def retire(worker: _Worker) -> None:
        with lock:
            live.discard(worker)
        if stop.is_set():
            worker.kill()
        else:
            worker.close()

    def attempt(i: int, worker: _Worker | None, retrying: bool
                ) -> tuple[Outcome[R] | None, _Worker | None]:
        """Item ``i`` on ``worker`` (started when None): its outcome (None: its worker died,
        to be retried) and the worker to go on with."""
        try:
            frame = _frame((task, items[i]))
        except Exception as exc:  # the function or the item does not pickle
            return Outcome(item=items[i], failure=describe(exc, items[i])), worker
        try:
            worker = worker or start()
            return worker.run(frame, items[i]), worker
        except _WorkerDied as exc:
            if worker is not None:
                with lock:
                    live.discard(worker)
            if not retrying:
                return None, None
            return Outcome(item=items[i], failure=_died(items[i], exc.reason)), None
        except Exception as exc:  # a worker that cannot start, a garbled reply
            if worker is not None:
                retire(worker)
            return Outcome(item=items[i], failure=describe(exc, items[i])), None

    def feed(source: Iterator[int], retrying: bool = False) -> None:
        worker: _Worker | None = None
        try:
            while not stop.is_set():
                with lock:
                    i = next(source, None)
                if i is None:
                    break
                if worker is not None and max_tasks_per_child and \
                        worker.tasks >= max_tasks_per_child:
                    retire(worker)
                    worker = None
                outcome, worker = attempt(i, worker, retrying)
                with lock:
                    if outcome is None:
                        died.append(i)
                        continue
                    outcomes[i] = outcome
                    with contextlib.suppress(Exception):  # a failing progress callback
                        ticker.tick()
        finally:
            if worker is not None:
                retire(worker)

    feeders = [threading.Thread(target=feed, args=(queue,), daemon=True)
               for _ in range(workers)]
    try:
        for feeder in feeders:
            feeder.start()
        _announce(started)
        for feeder in feeders:
            while feeder.is_alive():
                feeder.join(timeout=0.2)
        if died:
            _log.info("a worker process died; retrying %d file(s), each alone", len(died))
            feed(iter(sorted(died)), retrying=True)
    except BaseException:
        stop.set()
        with lock:
            doomed = list(live)
        for worker in doomed:
            worker.kill()
        raise
    missing = [items[i] for i, o in enumerate(outcomes) if o is None]
    if missing:  # never a shorter list than the items: that would pair results wrongly
        raise RuntimeError(f"no outcome for {len(missing)} item(s), first {missing[0]!r}")
    return outcomes  # type: ignore[return-value]


def _connect(scheduler: str) -> Any:
    """A dask.distributed client of the cluster at ``scheduler`` (UnsupportedError without
    dask.distributed, UsageError when it does not answer)."""
    try:
        from distributed import Client
    except ImportError:
        raise UnsupportedError("a Dask scheduler needs dask.distributed: pip install "
                               "'dask[distributed]'") from None
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise UsageError(f"cannot connect to a Dask scheduler: {' '.join(str(exc).split())}",
                         parameter="scheduler", value=scheduler) from None
    except (MemoryError, EOFError) as exc:  # something else answers there: its bytes are not
        # Dask's protocol (a proxy's reply read as a frame length of exabytes)
        raise UsageError(f"what answers there is not a Dask scheduler ({type(exc).__name__} "
                         "reading its reply)", parameter="scheduler", value=scheduler) from None


def _on_dask(func: Callable[[T], R], items: list[T], client: Any, report: Progress,
             started: Callable[[], None]) -> list[Outcome[R]]:
    from distributed import as_completed as dask_completed

    ticker = _Ticker(len(items), report)
    outcomes: list[Outcome[R] | None] = [None] * len(items)
    task = functools.partial(call, func, threads=1)
    futures = client.map(task, items, pure=False) if items else []
    index = {future.key: i for i, future in enumerate(futures)}
    if futures:
        _announce(started)
    completed = dask_completed(futures, loop=client.loop)
    alone_since: float | None = None  # since when the cluster has had no worker
    checked = time.monotonic()
    try:
        while not completed.is_empty():
            batch = completed.next_batch(block=False)
            for future in batch:
                i = index[future.key]
                try:
                    outcomes[i] = future.result()
                except Exception as exc:  # KilledWorker, a lost connection, a cancellation
                    outcomes[i] = Outcome(item=items[i], failure=_dask_failure(exc, items[i]))
                ticker.tick()
            now = time.monotonic()
            if batch:
                alone_since, checked = None, now
                continue
            _pause(completed)
            if now - checked < WORKER_CHECK_S:
                continue
            checked = now
            if _workers(client):
                alone_since = None
            elif alone_since is None:
                alone_since = now
            elif now - alone_since >= NO_WORKERS_TIMEOUT:
                left = [i for i, o in enumerate(outcomes) if o is None]
                client.cancel([futures[i] for i in left])
                for i in left:
                    outcomes[i] = Outcome(item=items[i], failure=Failure(
                        message=f"{items[i]}: no Dask worker left to run it (none on the "
                                f"cluster for {NO_WORKERS_TIMEOUT:g} s)",
                        exit_code=1, error="NoWorkers"))
                    ticker.tick()
                break
    except BaseException:
        client.cancel(futures)
        raise
    return [o for o in outcomes if o is not None]


def _pause(completed: Any) -> None:
    """Wait up to 50 ms for a Dask future of ``completed`` to finish."""
    condition = getattr(completed, "thread_condition", None)
    if condition is None:
        time.sleep(0.05)
        return
    with condition:
        condition.wait(timeout=0.05)


def _workers(client: Any) -> int:
    """The workers the cluster has now (0 when the scheduler does not answer)."""
    try:
        return len(client.nthreads())
    except Exception:  # a scheduler gone: no worker either
        return 0


def _dask_failure(exc: BaseException, item: object) -> Failure:
    """The failure of an item on Dask: a worker that died under it (``KilledWorker``: the
    scheduler gave up after ``allowed-failures`` retries) is said in those words, naming the
    item; anything else as :func:`describe`."""
    if type(exc).__name__ != "KilledWorker":
        return describe(exc, item)
    tries = getattr(exc, "allowed_failures", None)
    last = getattr(getattr(exc, "last_worker", None), "address", None)
    times = f"{tries + 1} time(s)" if isinstance(tries, int) else "again"
    return Failure(message=f"{item}: the Dask worker running it died, {times} (last: "
                           f"{last or 'unknown'}; killed, perhaps for lack of memory: see the "
                           "workers' logs)", exit_code=1, error="KilledWorker",
                   traceback="".join(traceback.format_exception(exc)))
