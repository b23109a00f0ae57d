"""Helpers for tests of tool plugins, including third-party ones.

Imports only the runtime and ``net``: what a third-party plugin's tests have too.
"""
from __future__ import annotations

from typing import Any

from .runtime import CancelSignal, Citation, Citations, Ingesters, ToolContext


def tool_context_for_test(
    fetch: Any = None,
    user: str = "test-user",
    conversation: str = "test-conversation",
    *,
    roles: frozenset[str] | set[str] = frozenset({"user"}),
    http: Any = None,
    settings: dict[str, Any] | None = None,
    ingesters: Ingesters | None = None,
    user_agent: str = "webtools",
) -> tuple[ToolContext, list[Citation]]:
    """A ``ToolContext`` for calling a handler directly, and the list its ``cite`` calls fill.

    ``fetch`` defaults to the guarded client with the default policy, so a test cannot reach a private
    address by accident; pass a client built with ``AddressPolicy.with_overrides`` to use loopback servers.
    """
    if fetch is None:
        from .net import client_for

        fetch = client_for(False)
    recorded: list[Citation] = []

    class _Recording(Citations):
        def add(self, url, title=None):
            citation = super().add(url, title)
            if citation is not None:
                recorded.append(citation)
            return citation

    ctx = ToolContext(
        user=user,
        conversation=conversation,
        roles=frozenset(roles),
        signal=CancelSignal(),
        fetch=fetch,
        http=http if http is not None else fetch,
        citations=_Recording(),
        turn_cache={},
        ingesters=ingesters or Ingesters(),
        settings=settings or {},
        user_agent=user_agent,
    )
    return ctx, recorded
