"""What a tool gets for one call: who asks, the guarded fetch, citations, the turn cache."""
from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import regex

from webtools.exceptions import ToolCancelled
from webtools.net.errors import InvalidURL
from webtools.net.urls import read_url

from .ingesters import Ingesters
from .limits import LimitStore, MemoryStore

#: The lexicon's limit on a source title, counted in grapheme clusters (what a reader sees as one
#: character), so that a flag or a family emoji is never cut in half.
MAX_TITLE_GRAPHEMES = 300


class CancelSignal:
    """Set once when the turn is cancelled; tools and the HTTP clients check it between steps."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise ToolCancelled()


@dataclass(frozen=True)
class Citation:
    """A source link of the reply."""

    url: str
    title: str | None = None


def cut_graphemes(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` grapheme clusters."""
    for count, match in enumerate(regex.finditer(r"\X", text), 1):
        if count == limit:
            return text[: match.end()]
    return text


class Citations:
    """The reply's sources, in order, each URL once, whether a tool or the model provider cited it."""

    def __init__(self) -> None:
        self._items: list[Citation] = []
        self._urls: set[str] = set()
        self._lock = threading.Lock()

    def add(self, url: str, title: str | None = None) -> Citation | None:
        """Add a source in its canonical form (``read_url``); returns it, or None when it is not a
        readable http(s) URL or already cited."""
        if not isinstance(url, str):
            return None
        try:
            url = str(read_url(url))
        except InvalidURL:
            return None
        if title is not None:
            title = cut_graphemes(" ".join(str(title).split()), MAX_TITLE_GRAPHEMES) or None
        with self._lock:
            if url in self._urls:
                return None
            citation = Citation(url, title)
            self._urls.add(url)
            self._items.append(citation)
            return citation

    def __iter__(self):
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def as_list(self) -> list[dict]:
        return [{"url": c.url, "title": c.title} for c in self._items]


@dataclass
class ToolContext:
    """What a tool's handler receives.

    ``fetch`` is the guarded HTTP client for URLs chosen by users or the model (a plain client when the
    operator set ``ALLOW_PRIVATE_NETWORKS``); ``http`` is the plain client, for URLs the operator set in
    a plugin's options. ``settings`` are the user's settings of the tool's plugin, secrets decrypted.
    ``turn_cache`` is private to the tool and lives for one turn. ``limits`` is where per-user and
    per-engine counts live (``runtime.limits``); ``shared_cache`` is the cache shared by all turns and
    workers (``runtime.cache``), or None.
    """

    user: str
    conversation: str
    roles: frozenset[str]
    signal: CancelSignal
    fetch: Any
    http: Any
    citations: Citations
    turn_cache: dict
    ingesters: Ingesters
    settings: Mapping[str, Any] = field(default_factory=dict)
    user_agent: str = "webtools"
    #: Facts about this call for the audit trail (``engine``, ``host``, ``status``...), set with ``audit``.
    audit_details: dict = field(default_factory=dict)
    #: The URLs that appeared in the conversation (``webtools.runtime.provenance.ConversationUrls``:
    #: ``url in ctx.conversation_urls``). A ``Turn`` always sets it; None means no conversation is
    #: tracked (a handler called directly, as in ``tool_context_for_test``).
    conversation_urls: Any = None
    limits: LimitStore = field(default_factory=MemoryStore)
    shared_cache: Any = None
    #: The uses of the tool's ``max_uses`` this call may spend (``Tool.uses``); None: as many as it asks.
    uses_granted: int | None = None

    def audit(self, **details: Any) -> None:
        """Record facts about this call for the operator's audit signals and logs.

        Never pass a key, a query's secret-looking text or a page's content: only names, hosts, counts
        and statuses.
        """
        self.audit_details.update(details)

    def cite(self, url: str, title: str | None = None) -> None:
        """Add a source link to the reply: http(s) only, each URL once, the title cut to 300 graphemes."""
        self.citations.add(url, title)

    @property
    def cancelled(self) -> bool:
        return self.signal.cancelled
