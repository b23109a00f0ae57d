"""The limits' store and the shared cache of the Django shell, handed to each turn by ``host.start_turn``.

Where each count lives, so that it holds across worker processes and servers:

- daily counts (a user's searches on the operator's key) and usage: in the database, as rows changed by
  one conditional ``UPDATE`` each, which PostgreSQL and SQLite both apply atomically;
- per-minute and other fixed windows, slots of calls in progress and engines' cool-downs: in Django's cache
  (``WEBTOOLS["CACHE"]``, default ``"default"``), with ``add`` and ``incr``, which Redis, Memcached and
  the local-memory cache do atomically. The local-memory cache is per process: with several workers use
  Redis (docs/deploy.md). The database and file caches do not increment atomically.

Part of the Django shell: imports ``models``, ``conf`` and the runtime (whose store and cache
interfaces it implements); only the host imports it.
"""
from __future__ import annotations

import functools
import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

from django.core.cache import caches
from django.db import DatabaseError, IntegrityError, connections, transaction
from django.db.models import F

from . import conf
from .runtime import limits
from .runtime.limits import CONCURRENT, DAY, MINUTE, WINDOW, Counter, Usage, minute_window, utc_day, window_of

logger = logging.getLogger("webtools.limits")

PREFIX = "webtools:limits"
#: The most slots a concurrency limit may have (slots are scanned to count them).
MAX_SLOTS = 64
#: Seconds a per-minute window is kept: its minute and the next, for calls that release late.
WINDOW_TTL = 120


def cache():
    return caches[conf.get_setting("CACHE")]


def _database(method):
    """Run a method that uses the database; on a thread other than the turn's (``Turn.call_many`` runs
    calls on its own threads), close that thread's connection afterwards, which Django, closing
    connections only at the end of a request, would otherwise leave open."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        finally:
            if threading.get_ident() != self._owner:
                connections.close_all()

    return wrapper


class DjangoStore:
    """A ``runtime.limits.LimitStore`` over the database and Django's cache."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self._clock = clock or limits.wall_clock
        self.cache = cache()
        self._owner = threading.get_ident()

    # -- the store interface ------------------------------------------------------------------------

    @_database
    def count(self, counter: Counter) -> int:
        if counter.kind in (MINUTE, WINDOW):
            return int(self.cache.get(self._window_key(counter, self._window(counter)), 0))
        if counter.kind == DAY:
            from .models import DailyCount

            row = DailyCount.objects.filter(name=counter.name, day=utc_day(self._clock())).first()
            return row.count if row else 0
        return sum(1 for value in self.cache.get_many(self._slot_keys(counter.name)).values() if value)

    @_database
    def reserve(self, counter: Counter, limit: int) -> str | None:
        if counter.kind in (MINUTE, WINDOW):
            return self._reserve_window(counter, limit)
        if counter.kind == DAY:
            return self._reserve_day(counter.name, limit)
        return self._reserve_slot(counter, limit)

    @_database
    def release(self, counter: Counter, token: str) -> None:
        if counter.kind in (MINUTE, WINDOW):
            try:
                self.cache.decr(self._window_key(counter, int(token)))
            except ValueError:
                pass  # the window is gone: nothing to give back
        elif counter.kind == DAY:
            from .models import DailyCount

            DailyCount.objects.filter(name=counter.name, day=token, count__gt=0).update(count=F("count") - 1)
        else:
            index, _, mark = token.partition(":")
            key = self._slot_keys(counter.name)[int(index)]
            if self.cache.get(key) == mark:
                self.cache.delete(key)

    def cool_down(self, name: str, seconds: float) -> None:
        self.cache.set(f"{PREFIX}:cool:{name}", 1, timeout=max(1, round(seconds)))

    def cooling(self, name: str) -> bool:
        return self.cache.get(f"{PREFIX}:cool:{name}") is not None

    @_database
    def record(self, usage: Usage) -> None:
        """Count one request in the usage table. Bookkeeping: a database error is logged, never turned
        into a failed call (the limits themselves fail closed, in ``reserve``)."""
        try:
            self._record(usage)
        except DatabaseError:
            logger.warning("Usage of %s by user %s could not be recorded.", usage.tool, usage.user or "-",
                           exc_info=True)

    def _record(self, usage: Usage) -> None:
        from .models import Usage as UsageRow

        fields = {
            "user_id": usage.user or None,
            "tool": usage.tool,
            "engine": usage.engine,
            "day": utc_day(self._clock()),
            "operator_key": usage.operator_key,
        }
        if UsageRow.objects.filter(**fields).update(requests=F("requests") + 1):
            return
        try:
            with transaction.atomic():
                UsageRow.objects.create(**fields, requests=1)
        except IntegrityError:  # another worker created the row first
            UsageRow.objects.filter(**fields).update(requests=F("requests") + 1)

    # -- the kinds ----------------------------------------------------------------------------------

    @staticmethod
    def _window_key(counter: Counter, window: int) -> str:
        if counter.kind == MINUTE:
            return f"{PREFIX}:minute:{counter.name}:{window}"
        return f"{PREFIX}:window:{counter.name}:{round(counter.ttl)}:{window}"

    def _window(self, counter: Counter) -> int:
        now = self._clock()
        return minute_window(now) if counter.kind == MINUTE else window_of(counter, now)

    @staticmethod
    def _slot_keys(name: str) -> list[str]:
        return [f"{PREFIX}:slot:{name}:{i}" for i in range(MAX_SLOTS)]

    def _reserve_window(self, counter: Counter, limit: int) -> str | None:
        window = self._window(counter)
        key = self._window_key(counter, window)
        # Kept for its window and the next, for calls that release late.
        ttl = WINDOW_TTL if counter.kind == MINUTE else 2 * max(1, round(counter.ttl))
        for _ in range(2):
            self.cache.add(key, 0, timeout=ttl)
            try:
                value = self.cache.incr(key)
                break
            except ValueError:
                continue  # expired between add and incr: add it again
        else:
            return None
        if value > limit:
            # Over by this call: take it back. Callers racing here may be refused while the count is
            # briefly high, but none gets past the limit.
            self.cache.decr(key)
            return None
        return str(window)

    def _reserve_day(self, name: str, limit: int) -> str | None:
        from .models import DailyCount

        day = utc_day(self._clock())
        DailyCount.objects.get_or_create(name=name, day=day)
        taken = DailyCount.objects.filter(name=name, day=day, count__lt=limit).update(count=F("count") + 1)
        return day.isoformat() if taken else None

    def _reserve_slot(self, counter: Counter, limit: int) -> str | None:
        mark = uuid.uuid4().hex
        ttl = max(1, round(counter.ttl))
        for index, key in enumerate(self._slot_keys(counter.name)[: min(limit, MAX_SLOTS)]):
            if self.cache.add(key, mark, timeout=ttl):
                return f"{index}:{mark}"
        return None


class DjangoCache:
    """The shared cache of results (``runtime.cache.SharedCache``) in Django's cache."""

    def __init__(self) -> None:
        self.cache = cache()

    def get(self, key: str) -> Any | None:
        return self.cache.get(key)

    def set(self, key: str, value: Any, ttl: int) -> None:
        self.cache.set(key, value, timeout=ttl)


__all__ = ["CONCURRENT", "DAY", "MINUTE", "DjangoCache", "DjangoStore"]
