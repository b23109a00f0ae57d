"""Reading in a worker process with a hard time limit, so no document can outlive its call.

Checks of the ``Deadline`` inside reading loops end most reading on time, but some work cannot be
interrupted from inside: pypdf extracts one page's text in one call, and a 28 KB PDF whose pages share
an 8 MB content stream keeps it busy for 20 s of CPU a page. A thread cannot be stopped in Python; a
process can. So the reading of downloaded bytes (HTML extraction, feeds, PDF text) runs in a warm worker
process, and when the call's deadline passes (plus ``GRACE_SECONDS``) or the turn is cancelled, the
caller kills the worker and answers at once. The runtime never keeps burning CPU for a call it gave up on.

A worker is a fresh interpreter (``python -c``, talking over a socket pair), never a ``fork`` of a Django
process whose other threads may hold locks, and, unlike ``multiprocessing``'s ``spawn`` and
``forkserver`` methods, it does not re-run the host's ``__main__`` script. Starting one costs about a
second of CPU (imports; see docs/security.md for the figures), paid on first use and after a kill;
otherwise a worker serves call after call. At most ``MAX_WORKERS`` read at once; a call waits for a
free worker within its deadline. A worker's address space is limited (``MEMORY_LIMIT_BYTES``), and a
worker left holding much memory after a call is replaced (``RETIRE_RSS_BYTES``).

The function a worker runs is sent by reference (a module-level function), with its arguments pickled.
It receives ``deadline=`` a ``Deadline`` with the call's remaining time (the turn's cancel signal stays
in the caller, which watches it). A generator function may ``yield`` parts as it goes (a PDF's pages):
the caller gets each through ``on_item`` at once, so a call cut short still has the parts read so far.
"""
from __future__ import annotations

import atexit
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from webtools.exceptions import URL_NOT_ACCESSIBLE, ToolCancelled, ToolError

from .budget import Deadline, ReadingTooLong

logger = logging.getLogger("webtools.workers")

#: How many documents are read at once in one web process; reading is CPU-bound, so more than the
#: machine's cores only makes each slower.
MAX_WORKERS = max(2, os.cpu_count() or 1)
#: How long past the deadline a worker may still answer before it is killed: the time its own checks
#: of the deadline need to notice and report.
GRACE_SECONDS = 0.5
#: How often a waiting caller looks at the turn's cancel signal.
POLL_SECONDS = 0.05
#: How often a worker checks that its web process is still there.
PARENT_CHECK_SECONDS = 1.0
#: A worker is replaced after this many calls, so that memory a parser never gave back is returned.
MAX_TASKS_PER_WORKER = 200
#: The address space a worker may use (``RLIMIT_AS``); past it, reading fails with "The document is too
#: large to read." A 3 MB HTML table, the most ``max_html_bytes`` hands over by default, peaks near
#: 500 MB. None: no limit.
MEMORY_LIMIT_BYTES: int | None = 2 * 1024 ** 3
#: A worker left holding more than this much memory after a call (parsers keep what they grew to) is
#: replaced rather than kept idle.
RETIRE_RSS_BYTES = 256 * 1024 ** 2

#: The interpreter workers run in: this one, unless the host embeds Python in a program that is not
#: (uWSGI, mod_wsgi), where it must name a Python executable with the same packages.
PYTHON: str | None = None

_BOOTSTRAP = "import sys; from webtools.runtime.workers import _main; _main(*map(int, sys.argv[1:]))"


class ReadingFailed(ToolError):
    """The worker process died while reading (a crash in a C parser, or the operating system killed it)."""

    code = URL_NOT_ACCESSIBLE

    def __init__(self, message: str = "The document could not be read: its reader stopped unexpectedly."):
        super().__init__(message)


class _Worker:
    def __init__(self, memory_limit: int | None) -> None:
        parent, child = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
        try:
            self.process = subprocess.Popen(
                [PYTHON or sys.executable, "-c", _BOOTSTRAP, str(child.fileno()), str(memory_limit or 0)],
                pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, env=env,
            )
        finally:
            child.close()
        self.conn = Connection(parent.detach())
        self.tasks = 0
        self.rss = 0  # bytes, as the worker reported after its last call

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: nothing the worker runs can delay or catch it
        self.process.wait()
        self.conn.close()


class WorkerPool:
    """Warm reading workers for one process: ``pool.call(func, *args, deadline=...)``."""

    def __init__(
        self, max_workers: int = MAX_WORKERS, *, memory_limit: int | None = MEMORY_LIMIT_BYTES,
        retire_rss: int = RETIRE_RSS_BYTES, grace: float = GRACE_SECONDS,
    ) -> None:
        self.max_workers = max_workers
        self.grace = grace
        self.memory_limit = memory_limit
        self.retire_rss = retire_rss
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._idle: list[_Worker] = []
        self._slots = threading.BoundedSemaphore(self.max_workers)

    def _acquire(self, deadline: Deadline) -> _Worker:
        with self._lock:
            if self._pid != os.getpid():
                # A forked host process (a pre-forking server): the workers belong to the parent.
                self._reset()
            slots = self._slots
        while not slots.acquire(timeout=POLL_SECONDS):
            deadline.check()
        try:
            with self._lock:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        return worker
                    worker.kill()
            return _Worker(self.memory_limit)
        except BaseException:
            slots.release()
            raise

    def _release(self, worker: _Worker, *, reusable: bool) -> None:
        worker.tasks += 1
        keep = (reusable and worker.tasks < MAX_TASKS_PER_WORKER and worker.rss < self.retire_rss
                and worker.alive())
        with self._lock:
            same_process = self._pid == os.getpid()
            if keep and same_process:
                self._idle.append(worker)
            slots = self._slots
        if not keep:
            worker.kill()
        if same_process:
            slots.release()

    def call(
        self, func: Callable[..., Any], *args: Any, deadline: Deadline,
        on_item: Callable[[Any], None] | None = None, **kwargs: Any,
    ) -> Any:
        """``func(*args, deadline=..., **kwargs)`` in a worker; its return value, or its exception.

        Raises ``ReadingTooLong`` when the deadline passes (the worker is killed if it has not stopped
        by itself within ``GRACE_SECONDS``), ``ToolCancelled`` as soon as the turn is cancelled, and
        ``ReadingFailed`` when the worker dies. Parts a generator ``func`` yields go to ``on_item``.
        """
        deadline.check()
        worker = self._acquire(deadline)
        reusable = False
        try:
            worker.conn.send((func, args, kwargs, deadline.remaining()))
            while True:
                kind, value = self._receive(worker, deadline)
                if kind == "item":
                    if on_item is not None:
                        on_item(value)
                    continue
                reusable = True
                if kind == "done":
                    return value
                raise value
        finally:
            self._release(worker, reusable=reusable)

    def _receive(self, worker: _Worker, deadline: Deadline) -> tuple[str, Any]:
        remaining = deadline.remaining()
        hard_stop = None if remaining is None else time.monotonic() + remaining + self.grace
        while True:
            if deadline.signal is not None and deadline.signal.is_set():
                raise ToolCancelled()
            wait = POLL_SECONDS if hard_stop is None else min(POLL_SECONDS, hard_stop - time.monotonic())
            if wait <= 0:
                raise ReadingTooLong()
            try:
                if worker.conn.poll(wait):
                    message = worker.conn.recv()
                    break
            except (EOFError, OSError) as err:
                raise ReadingFailed() from err
        kind, value, trace, worker.rss = message
        if kind == "error" and not isinstance(value, ToolError):
            logger.error("Reading a document failed in a worker process.\n%s", trace)
            if isinstance(value, MemoryError):
                return kind, ToolError("The document is too large to read.", URL_NOT_ACCESSIBLE)
        return kind, value

    def shutdown(self) -> None:
        """Stop the idle workers (the next call starts new ones)."""
        with self._lock:
            if self._pid != os.getpid():  # a forked process: those workers are its parent's to stop
                self._reset()
                return
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


def _main(fd: int, memory_limit: int = 0) -> None:
    """A worker process's entry point: serve the caller at the other end of socket ``fd``."""
    if memory_limit:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    _serve(Connection(fd))


def _exit_with_parent(parent: int) -> None:
    """End the worker when its web process is gone, even in the middle of a page: nobody waits for it.

    (Linux's ``PR_SET_PDEATHSIG`` would fire when the *thread* that started the worker ends, and workers
    are started from request threads.)"""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(1)


def _serve(conn) -> None:
    """The worker's loop: one task at a time, each answered with ``(kind, value, traceback)``."""
    while True:
        try:
            func, args, kwargs, seconds = conn.recv()
        except (EOFError, OSError):
            return
        try:
            result = func(*args, deadline=Deadline(seconds), **kwargs)
            if hasattr(result, "__next__") and hasattr(result, "send"):  # a generator: stream its parts
                result = _stream(result, conn)
            conn.send(("done", result, "", _rss()))
        except BaseException as err:  # everything goes back to the caller, KeyboardInterrupt included
            trace = "".join(traceback.format_exception(err))
            try:
                conn.send(("error", err, trace, _rss()))
            except Exception:  # an exception that does not pickle: send what it said
                conn.send(("error", RuntimeError(f"{type(err).__name__}: {err}"), trace, _rss()))


def _rss() -> int:
    """This process's resident memory in bytes (Linux); 0 where /proc cannot tell."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _stream(generator, conn) -> Any:
    while True:
        try:
            item = next(generator)
        except StopIteration as stop:
            return stop.value
        conn.send(("item", item, "", 0))


_pool = WorkerPool()
# Idle workers would end on their own when this process's end of their socket closes; stopping them at
# exit also spares the interpreter's warnings about subprocesses still running.
atexit.register(lambda: _pool.shutdown())


def call(
    func: Callable[..., Any], *args: Any, deadline: Deadline, on_item: Callable[[Any], None] | None = None,
    **kwargs: Any,
) -> Any:
    """Run ``func`` in the process-wide worker pool under ``deadline``; see ``WorkerPool.call``."""
    return _pool.call(func, *args, deadline=deadline, on_item=on_item, **kwargs)


def shutdown() -> None:
    """Stop the process-wide pool's idle workers."""
    _pool.shutdown()
