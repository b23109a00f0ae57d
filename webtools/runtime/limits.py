"""Limits that protect the operator's key, the engines and the server: the rules, over a small store.

The rules are plain Python; what they count lives in a ``LimitStore``. Three kinds of counter:

- ``MINUTE``: calls in the current minute (a fixed window of the wall clock), for the per-minute guards.
- ``DAY``: calls on the current UTC day, for the daily quota on the operator's key.
- ``WINDOW``: calls in the current fixed window of ``ttl`` seconds of the wall clock (an MCP user's
  ``max_uses``, which has no answer to count in).
- ``CONCURRENT``: calls in progress, as slots, for concurrent fetches and each engine's concurrency. A
  slot expires ``ttl`` seconds after it was taken, so a worker that dies holding one cannot block the
  others for good.

A store implements ``count``, ``reserve`` and ``release`` for each kind, cool-downs (an engine that
failed is skipped for a while) and usage records. ``MemoryStore`` keeps them in one process: what a
``Turn`` built without a store uses, and the reference for the shell's store (``webtools.stores``),
which keeps them in the database and Django's cache so that they hold across worker processes and
servers.

Counts are exact under concurrency: ``reserve`` adds one only while the count is below the limit, in one
atomic step, so no caller ever gets past a quota, not even by one call.
"""
from __future__ import annotations

import datetime as dt
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from webtools.exceptions import TOO_MANY_REQUESTS, ToolCancelled, ToolError

MINUTE = "minute"
DAY = "day"
CONCURRENT = "concurrent"
WINDOW = "window"
KINDS = (MINUTE, DAY, CONCURRENT, WINDOW)

#: How long a call waits in line for a busy engine before trying the next one.
QUEUE_SECONDS = 5.0
#: How often a waiting call looks for a free slot.
POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Counter:
    """What is counted: a ``kind`` and a ``name`` such as ``web_search:user:42`` or ``engine:brave``.

    Names are made of ids (plugin, engine, user primary key), never of user input, so they are safe as
    cache keys.
    """

    kind: str
    name: str
    #: ``CONCURRENT``: seconds after which a slot its holder never gave back is free again; ``WINDOW``: the
    #: window's length in seconds.
    ttl: float = 120.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Unknown counter kind {self.kind!r}.")


@dataclass(frozen=True)
class Usage:
    """One request sent on someone's behalf, for the operator's usage table and cost estimate."""

    user: str
    tool: str
    engine: str = ""
    #: Whether the request spent the operator's key (or the server's address, for keyless engines).
    operator_key: bool = True


class LimitStore(Protocol):
    """Where the counts live. Every method is safe to call from many threads (and, for the shell's
    store, many processes) at once."""

    def count(self, counter: Counter) -> int:
        """The current count: calls in this minute or day, or slots held."""

    def reserve(self, counter: Counter, limit: int) -> str | None:
        """Add one when the count is below ``limit``, atomically; a token for ``release``, or None."""

    def release(self, counter: Counter, token: str) -> None:
        """Give back what ``reserve`` took (a slot, or a call that was never sent)."""

    def cool_down(self, name: str, seconds: float) -> None:
        """Mark ``name`` (an engine) as failing for ``seconds``."""

    def cooling(self, name: str) -> bool:
        """Whether ``name`` is in a cool-down."""

    def record(self, usage: Usage) -> None:
        """Count one request sent, for the usage table."""


def wall_clock() -> float:
    """The clock the stores read unless given one: seconds since the epoch (tests set it back to the
    start of a minute, so that a test's calls never straddle two per-minute windows)."""
    return time.time()


def minute_window(now: float) -> int:
    return int(now // 60)


def utc_day(now: float) -> dt.date:
    return dt.datetime.fromtimestamp(now, dt.timezone.utc).date()


def window_of(counter: Counter, now: float) -> int:
    """The index of the fixed ``WINDOW`` of ``counter.ttl`` seconds that ``now`` falls in."""
    return int(now // max(1.0, counter.ttl))


class MemoryStore:
    """A ``LimitStore`` in this process's memory: exact across threads, not across processes."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self._clock = clock or wall_clock
        self._lock = threading.Lock()
        self._counts: dict[tuple, int] = {}
        self._slots: dict[str, dict[str, float]] = {}
        self._cool: dict[str, float] = {}
        self.usage: dict[Usage, int] = {}

    def _key(self, counter: Counter) -> tuple:
        now = self._clock()
        if counter.kind == WINDOW:
            return (counter.kind, counter.name, counter.ttl, window_of(counter, now))
        window = minute_window(now) if counter.kind == MINUTE else utc_day(now)
        return (counter.kind, counter.name, window)

    def _live_slots(self, counter: Counter) -> dict[str, float]:
        slots = self._slots.setdefault(counter.name, {})
        now = self._clock()
        for token in [t for t, expires in slots.items() if expires <= now]:
            del slots[token]
        return slots

    def count(self, counter: Counter) -> int:
        with self._lock:
            if counter.kind == CONCURRENT:
                return len(self._live_slots(counter))
            return self._counts.get(self._key(counter), 0)

    def reserve(self, counter: Counter, limit: int) -> str | None:
        token = uuid.uuid4().hex
        with self._lock:
            if counter.kind == CONCURRENT:
                slots = self._live_slots(counter)
                if len(slots) >= limit:
                    return None
                slots[token] = self._clock() + counter.ttl
                return token
            key = self._key(counter)
            if self._counts.get(key, 0) >= limit:
                return None
            self._counts[key] = self._counts.get(key, 0) + 1
            return token

    def release(self, counter: Counter, token: str) -> None:
        with self._lock:
            if counter.kind == CONCURRENT:
                self._slots.get(counter.name, {}).pop(token, None)
                return
            key = self._key(counter)
            if self._counts.get(key, 0) > 0:
                self._counts[key] -= 1

    def cool_down(self, name: str, seconds: float) -> None:
        with self._lock:
            self._cool[name] = self._clock() + seconds

    def cooling(self, name: str) -> bool:
        with self._lock:
            return self._cool.get(name, 0.0) > self._clock()

    def record(self, usage: Usage) -> None:
        with self._lock:
            self.usage[usage] = self.usage.get(usage, 0) + 1


# -- the rules ----------------------------------------------------------------------------------------


@dataclass
class Reservation:
    """A call counted against a limit; ``release()`` gives it back (idempotent)."""

    store: LimitStore
    counter: Counter
    token: str | None

    def release(self) -> None:
        if self.token is not None:
            self.store.release(self.counter, self.token)
            self.token = None


class AnswerUses:
    """``max_uses`` of one answer: each tool's calls counted in this object (a turn's own count)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._uses: dict[str, int] = {}

    def take(self, tool: str, limit: int) -> Reservation | None:
        """Count a call of ``tool``; None when ``limit`` (0: none) calls were counted already. The
        reservation gives the call back when it sent nothing (``release``)."""
        with self._lock:
            used = self._uses.get(tool, 0)
            if limit and used >= limit:
                return None
            self._uses[tool] = used + 1
        return Reservation(self, Counter(WINDOW, tool), "")  # type: ignore[arg-type]

    def release(self, counter: Counter, token: str) -> None:
        with self._lock:
            if self._uses.get(counter.name, 0) > 0:
                self._uses[counter.name] -= 1


class WindowUses:
    """``max_uses`` where no answer can be seen (an MCP client's calls): each tool's calls counted per
    user across all their sessions, in fixed windows of ``seconds``, in the shared ``store``. Opening a
    new session does not start a new count."""

    def __init__(self, store: LimitStore, user: str, seconds: float) -> None:
        self.store, self.user, self.seconds = store, user, seconds

    def take(self, tool: str, limit: int) -> Reservation | None:
        counter = Counter(WINDOW, f"{tool}:uses:user:{self.user or '-'}", ttl=self.seconds)
        if not limit:
            return Reservation(self.store, counter, None)
        token = self.store.reserve(counter, limit)
        return None if token is None else Reservation(self.store, counter, token)


def take(store: LimitStore, counter: Counter, limit: int, message: str) -> Reservation:
    """Count one call against ``limit`` (0: no limit, nothing counted) or raise ``ToolError(message)``."""
    if limit <= 0:
        return Reservation(store, counter, None)
    token = store.reserve(counter, limit)
    if token is None:
        raise ToolError(message, TOO_MANY_REQUESTS)
    return Reservation(store, counter, token)


class Busy(ToolError):
    """Every slot stayed taken for as long as the call could wait."""

    code = TOO_MANY_REQUESTS


@contextmanager
def slot(
    store: LimitStore,
    counter: Counter,
    limit: int,
    message: str,
    *,
    wait: float = 0.0,
    signal=None,
) -> Iterator[None]:
    """Hold one of ``limit`` slots while the block runs (0: no limit), waiting up to ``wait`` seconds in
    line for one; raises ``Busy(message)`` when none came free, ``ToolCancelled`` when the turn ends."""
    if limit <= 0:
        yield
        return
    give_up = time.monotonic() + max(0.0, wait)
    while True:
        token = store.reserve(counter, limit)
        if token is not None:
            break
        if signal is not None and signal.is_set():
            raise ToolCancelled()
        left = give_up - time.monotonic()
        if left <= 0:
            raise Busy(message)
        pause = min(POLL_SECONDS, left)
        if signal is not None:
            signal.wait(pause)
        else:
            time.sleep(pause)
    try:
        yield
    finally:
        store.release(counter, token)


__all__ = [
    "CONCURRENT",
    "DAY",
    "MINUTE",
    "WINDOW",
    "AnswerUses",
    "Busy",
    "Counter",
    "LimitStore",
    "MemoryStore",
    "Reservation",
    "Usage",
    "slot",
    "WindowUses",
    "take",
]
