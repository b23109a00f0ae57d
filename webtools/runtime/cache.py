"""The shared cache of tool results: an interface, its key, and an in-process implementation.

Off unless the operator sets a plugin's ``cache_ttl_seconds``. The Django shell hands over Django's
cache (shared by every worker when it is Redis), through ``webtools.stores.DjangoCache``.

A key is a digest of everything that decides a result: the canonical request, the engine, and every
policy that filters or changes the answer (domain lists, the user's own engine). Two calls share an entry
only when they would have produced the same result under the same rules, so no user ever sees results
produced under another's policy.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from typing import Any, Protocol

#: The ``use_cache`` input a tool offers when its operator turned the shared cache on: ``false`` skips
#: the kept answer (the fresh one replaces it).
USE_CACHE = {
    "type": "boolean",
    "description": "false: a fresh answer, not a copy the server kept from an earlier call. Set it only "
    "when the user asks for the latest.",
}


class SharedCache(Protocol):
    def get(self, key: str) -> Any | None:
        """The stored value, or None."""

    def set(self, key: str, value: Any, ttl: int) -> None:
        """Store a JSON-serialisable ``value`` for ``ttl`` seconds."""


def cache_key(tool: str, *parts: Any) -> str:
    """``webtools:<tool>:<sha256>`` of ``parts`` as canonical JSON: short, and safe for any backend."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=list)
    return f"webtools:{tool}:{hashlib.sha256(text.encode()).hexdigest()}"


class MemoryCache:
    """A ``SharedCache`` in this process's memory, for tests and hosts without Django's cache."""

    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._items: dict[str, tuple[float, str]] = {}

    def get(self, key: str) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is None or item[0] <= self._clock():
                self._items.pop(key, None)
                return None
            return json.loads(item[1])

    def set(self, key: str, value: Any, ttl: int) -> None:
        with self._lock:
            self._items[key] = (self._clock() + ttl, json.dumps(value))
