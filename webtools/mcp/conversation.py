"""What an MCP conversation carries, and the question put to the user about a URL it has not seen.

Shared by both protocol eras (``server`` for sessions, ``stateless`` for ``2026-07-28``): the
``Conversation`` (the URLs it has seen, its turn cache, its calls in progress), the turn of one request
(``user_turn``), and the confirmation's question, form and refusals.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import anyio
import mcp.types as types
from asgiref.sync import sync_to_async
from django.db import close_old_connections

from webtools import conf
from webtools.net import read_url
from webtools.net.urls import display_url
from webtools.runtime import ToolResult, Turn
from webtools.runtime.limits import WindowUses
from webtools.runtime.provenance import ConversationUrls
from webtools.runtime.wrapping import model_text

SERVER_NAME = "webtools"

#: The question put to the user about a URL the conversation has not seen (``{host}``, ``{url}``).
CONFIRM_QUESTION = (
    "The assistant wants to read a web page that did not come from this conversation's searches or pages.\n\n"
    "Site: {host}\n"
    "Address: {url}\n\n"
    "Yes: webtools sends one request to exactly this address and the assistant reads the page.\n"
    "No: nothing is sent, and the assistant is told you declined."
)
#: The form of the question: one yes/no answer.
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {
        "fetch": {
            "type": "boolean",
            "title": "Read this page",
            "description": "Yes sends one request to the address shown; no sends nothing.",
            "default": True,
        },
    },
    "required": ["fetch"],
}
DECLINED = "The user declined to let this address be fetched ({url}). Nothing was sent to it."
CANNOT_ASK = (
    "This address did not come from this conversation's searches or pages, and this client cannot ask the "
    "user to confirm it ({url}), so nothing was sent. Tell the user: to read it, search for the page first "
    "and fetch it from the results, or use a client that can ask them (MCP elicitation), or ask the operator."
)

#: ``user_for(request_context) -> user`` names the user of a request (the stdio command's fixed user,
#: or the one the HTTP door authenticated); ``turn_for(user, conversation, **carried) -> Turn`` starts
#: the turn of one request, carrying the conversation's ``urls`` and ``turn_cache`` (``host.start_turn``).
UserFor = Callable[[Any], Any]
TurnFor = Callable[..., Turn]


def user_turn(user: Any, conversation: str, **carried: Any) -> Turn:
    """The turn of one MCP request: ``host.start_turn`` (roles, switches, keys and the operator's options
    read now), with each tool's ``max_uses`` counted per user across all their sessions and
    conversations, in windows of ``WEBTOOLS["MCP"]["USES_WINDOW"]`` seconds, in the limits' shared store."""
    from webtools.host import start_turn
    from webtools.stores import DjangoStore

    uses = WindowUses(DjangoStore(), str(getattr(user, "pk", "") or ""), float(conf.mcp_setting("USES_WINDOW")))
    return start_turn(user, conversation=conversation, uses=uses, **carried)


def with_database(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func``, which reads the database, as a coroutine function: run off the event loop in Django's
    thread for sync code, with that thread's connections closed before and after as Django closes them
    around a request (``close_old_connections``, which keeps them under ``CONN_MAX_AGE``). The MCP doors
    are not Django views, so no ``request_finished`` closes them, and that thread lives as long as the
    process: without this, its connection stays open for good (PostgreSQL counts it as a session)."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        close_old_connections()
        try:
            return func(*args, **kwargs)
        finally:
            close_old_connections()

    return sync_to_async(run)


class Conversation:
    """What one conversation carries from call to call: the URLs it has seen, its turn cache, its calls
    in progress. Each request runs in a turn of its own, started for it (``turn_for``), so the user's
    roles, switches and keys and the operator's options are read afresh on every call; a session's
    conversation belongs to the user of its first request only."""

    def __init__(self, turn_for: TurnFor, urls: ConversationUrls | None = None,
                 turn_cache: dict | None = None) -> None:
        self._turn_for = turn_for
        self.urls = urls if urls is not None else ConversationUrls()
        self.turn_cache: dict = turn_cache if turn_cache is not None else {}
        self._running: set[Turn] = set()
        self._user_pk: Any = None
        self._owned = False
        self.ended = False

    async def turn(self, user: Any, conversation: str) -> Turn:
        pk = getattr(user, "pk", None)
        if not self._owned:
            self._owned, self._user_pk = True, pk
        elif pk != self._user_pk:
            raise PermissionError("This MCP session belongs to another user.")
        if self.ended:
            raise PermissionError("This MCP session has ended.")
        # start_turn reads the database: off the event loop, as Django requires.
        return await with_database(self._turn_for)(user, conversation, urls=self.urls, turn_cache=self.turn_cache)

    async def call(self, turn: Turn, name: str, arguments: Any) -> ToolResult:
        """Run one call in ``turn`` (a worker thread: tools block on the network), then end the turn. If
        the request is cancelled the thread is left to the turn's signal, which is set."""
        self._running.add(turn)
        try:
            return await anyio.to_thread.run_sync(turn.call, name, arguments, abandon_on_cancel=True)
        except BaseException:
            turn.cancel()
            raise
        finally:
            self._running.discard(turn)
            turn.close()

    def end(self) -> None:
        """The conversation is over: its calls in progress are cancelled, which stops their fetches."""
        self.ended = True
        for turn in list(self._running):
            turn.cancel()
        self.turn_cache.clear()


def refusal(result: ToolResult, message: str) -> ToolResult:
    """``result`` (a call refused for a URL the conversation had not seen) with ``message`` as its error."""
    output = {"error": message}
    return dataclasses.replace(result, output=output, model_text=model_text(output, result.untrusted))


def refused(result: ToolResult, answer: bool | None) -> ToolResult:
    """The refusal for a no (``answer`` False) or a client that cannot ask (None). The message, like
    every error, shows the address without its query (docs/security.md)."""
    message = CANNOT_ASK if answer is None else DECLINED
    return refusal(result, message.format(url=display_url(result.unseen_url or "")))


def can_show_form(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether a client with ``capabilities`` can put a form question to its user. An empty
    ``elicitation: {}`` means form mode (the spec's default); a client declaring only URL mode cannot."""
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and not (elicitation.form is None and elicitation.url is not None)


def question(url: str) -> str:
    """The question about ``url``: its host and its whole address, in the form the server connects to."""
    return CONFIRM_QUESTION.format(host=read_url(url).host, url=url)


def accepted(answer: Any) -> bool:
    """Whether an ``ElicitResult`` is a yes: ``accept`` with ``fetch: true``."""
    return getattr(answer, "action", None) == "accept" and (getattr(answer, "content", None) or {}).get("fetch") is True


__all__ = [
    "CANNOT_ASK", "CONFIRM_QUESTION", "CONFIRM_SCHEMA", "DECLINED", "SERVER_NAME", "Conversation", "TurnFor",
    "UserFor", "accepted", "can_show_form", "question", "refusal", "refused", "user_turn", "with_database",
]
