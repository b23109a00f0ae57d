"""MCP ``2026-07-28``: no session, so a conversation is kept in Django's cache, and a URL is confirmed
through an ``input_required`` result.

- ``StoredConversation``: what a conversation carries from call to call (the URLs it has seen, its
  turn cache) is read from Django's cache (``WEBTOOLS["CACHE"]``, the limits' own) before each request
  and written back after it, kept
  ``WEBTOOLS["MCP"]["CONVERSATION_TTL"]`` seconds after the last call, each tool's turn cache cut to
  its ``MAX_CACHED`` newest entries. It is keyed by the user and by
  the conversation the client names in the request's ``_meta`` (``CONVERSATION_META_KEY``); a client
  that names none has one conversation per user. ``max_uses`` is not kept here: it counts per user
  across every session and conversation (``server.user_turn``), so naming a new conversation does not
  reset it.
- ``confirm_or_ask``: a fetch of a URL the conversation has not seen is answered with an
  ``input_required`` result holding one ``elicitation/create`` form (the same question as on a
  session); the client asks its user and sends the call again with the answer in
  ``params.inputResponses`` and the ``requestState`` it was given.
- ``request_state_boundary``: the SDK's middleware sealing ``requestState`` (AES-GCM, bound to the
  call, its arguments, the user and ten minutes) under keys derived from Django's ``SECRET_KEY`` (and
  ``SECRET_KEY_FALLBACKS``), so every worker of a deployment verifies what any other sealed.
"""
from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from typing import Any

import anyio
import mcp.types as types

from webtools import conf
from webtools.runtime import ToolResult
from webtools.runtime.provenance import ConversationUrls

from .conversation import (
    CONFIRM_SCHEMA, SERVER_NAME, Conversation, TurnFor, accepted, can_show_form, question, refused,
)

logger = logging.getLogger("webtools.mcp")

#: The ``_meta`` key naming the client's conversation on a ``2026-07-28`` request (any string up to
#: ``MAX_CONVERSATION`` characters; longer or not a string counts as none).
CONVERSATION_META_KEY = "webtools/conversation"
MAX_CONVERSATION = 256
#: The key of the confirmation in ``inputRequests`` and ``inputResponses``.
CONFIRM_KEY = "confirm_url"
#: The most entries of each tool's turn cache a stored conversation keeps (its newest): a page read
#: again after more reads than this is fetched again, as it would be in a new conversation.
MAX_CACHED = 16
#: Seconds a sealed ``requestState`` stays valid: the time the user has to answer.
REQUEST_STATE_TTL = 600.0
_SALT = "webtools.mcp.request_state"


class StoredConversation:
    """One user's conversation as Django's cache keeps it between stateless requests."""

    def __init__(self, user_pk: Any, conversation: str) -> None:
        digest = hashlib.sha256(conversation.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        self.key = f"webtools:mcp:conversation:{user_pk}:{digest}"
        #: The conversation id handed to each turn (the client's own text is not logged).
        self.name = f"mcp-{digest[:16]}"

    @classmethod
    def of(cls, user: Any, meta: Mapping[str, Any] | None) -> StoredConversation:
        """The conversation a request's ``_meta`` names for ``user`` (theirs alone), or their default one."""
        named = (meta or {}).get(CONVERSATION_META_KEY)
        if not isinstance(named, str) or len(named) > MAX_CONVERSATION:
            named = ""
        return cls(getattr(user, "pk", None), named)

    async def load(self, turn_for: TurnFor) -> Conversation:
        """The conversation as it was after its last call (a new one when none is kept)."""
        kept = await anyio.to_thread.run_sync(self._read)
        return Conversation(turn_for, urls=ConversationUrls.restore(kept.get("urls", ())),
                            turn_cache=dict(kept.get("turn_cache") or {}))

    async def save(self, conversation: Conversation) -> None:
        """Keep ``conversation`` for its next call, adding to what a concurrent call kept meanwhile."""
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._write, conversation.urls.snapshot(), dict(conversation.turn_cache))

    def _read(self) -> dict:
        from webtools.stores import cache

        try:
            kept = cache().get(self.key)
        except Exception:  # a value that no longer unpickles, a cache server away: start afresh
            logger.warning("A stored MCP conversation could not be read; it starts afresh.", exc_info=True)
            return {}
        return kept if isinstance(kept, dict) else {}

    def _write(self, urls: list[str], turn_cache: dict) -> None:
        from webtools.stores import cache

        kept = self._read()
        urls = sorted(set(urls) | set(kept.get("urls", ())))
        turn_cache = merged_turn_cache(kept.get("turn_cache") or {}, turn_cache)
        ttl = float(conf.mcp_setting("CONVERSATION_TTL"))
        try:
            cache().set(self.key, {"urls": urls, "turn_cache": turn_cache}, timeout=ttl)
        except Exception:  # a turn cache entry the cache cannot store: keep the URLs at least
            logger.warning("An MCP conversation's turn cache could not be stored; its URLs were.", exc_info=True)
            cache().set(self.key, {"urls": urls}, timeout=ttl)


def merged_turn_cache(kept: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, dict]:
    """A conversation's turn cache as stored: per tool, what a concurrent call kept meanwhile and then
    this call's entries (this call's win on the same key), each tool's cut to its ``MAX_CACHED`` newest
    entries, so a conversation stays a bounded size in the shared cache however long it runs."""
    merged: dict[str, dict] = {}
    for tool in {**kept, **new}:
        entries = {**_entries(kept.get(tool)), **_entries(new.get(tool))}
        merged[tool] = dict(list(entries.items())[-MAX_CACHED:])
    return merged


def _entries(cache: Any) -> dict:
    return dict(cache) if isinstance(cache, Mapping) else {}


def answer_to(params: types.CallToolRequestParams, url: str) -> bool | None:
    """The user's answer about ``url`` in a retried call: None when this call carries no answer to a
    question about ``url`` (then it is asked), else whether they said yes."""
    try:
        state = json.loads(params.request_state) if params.request_state else None
    except ValueError:
        state = None
    if not isinstance(state, dict) or state.get("confirm") != url:
        return None
    return accepted((params.input_responses or {}).get(CONFIRM_KEY))


def confirm_or_ask(context: Any, params: types.CallToolRequestParams, conversation: Conversation,
                   result: ToolResult) -> types.InputRequiredResult | ToolResult | None:
    """The call refused for a URL the conversation had not seen, on ``2026-07-28``: None when the user
    said yes (run the call again), the question to return when they have not been asked, or the
    refusal (a no, or a client that declared no form elicitation in the request's capabilities)."""
    url = result.unseen_url or ""
    if not can_show_form(context.session.client_capabilities):
        return refused(result, None)
    answer = answer_to(params, url)
    if answer is None:
        ask = types.ElicitRequest(params=types.ElicitRequestFormParams(message=question(url),
                                                                       requested_schema=CONFIRM_SCHEMA))
        # The state names the URL asked about; the boundary seals it to this call and this user.
        return types.InputRequiredResult(input_requests={CONFIRM_KEY: ask}, request_state=json.dumps({"confirm": url}))
    return None if answer else refused(result, False)


def request_state_keys() -> list[str]:
    """The ``requestState`` keys: one derived from ``SECRET_KEY`` (sealing), then one from each of
    ``SECRET_KEY_FALLBACKS`` (still opening what the previous key sealed), as Django rotates its own."""
    from django.conf import settings
    from django.utils.crypto import salted_hmac

    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", ())]
    return [salted_hmac(_SALT, "requestState", secret=secret, algorithm="sha256").hexdigest() for secret in secrets]


def request_state_boundary(user_for: Any) -> Any:
    """The SDK's ``RequestStateBoundary`` with keys every worker shares (``request_state_keys``), bound
    to the request's user."""
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

    def principal(context: Any) -> str:
        return f"user:{getattr(user_for(context), 'pk', '')}"

    security = RequestStateSecurity(keys=request_state_keys(), ttl=REQUEST_STATE_TTL, bind_principal=principal)
    return RequestStateBoundary(security, default_audience=SERVER_NAME)


__all__ = ["CONFIRM_KEY", "CONVERSATION_META_KEY", "StoredConversation", "answer_to", "confirm_or_ask",
           "request_state_boundary", "request_state_keys"]
