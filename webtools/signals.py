"""Signals for auditing: every tool call, and each search, fetch and failure.

Receivers get keyword arguments only; none of them ever carries a key or a page's content:

- ``tool_called``: every call. ``tool``, ``plugin``, ``user`` (primary key as text), ``conversation``,
  ``duration_ms``, ``outcome`` (``ok``, ``error`` or ``cancelled``), ``details`` (what the tool recorded:
  web search records ``engine`` and ``results``; web fetch ``host``, ``status`` and ``content_type``).
- ``search_performed``: a ``web_search`` call, same arguments.
- ``page_fetched``: a ``web_fetch`` call, same arguments.
- ``tool_failed``: a call that ended in an error, same arguments plus ``error`` (the message the model saw).

Each call is also logged as one structured line on the ``webtools.audit`` logger.

Part of the base: imports nothing of webtools; the host sends them, receivers are the host project's.
"""
from __future__ import annotations

import json
import logging

from django.dispatch import Signal

tool_called = Signal()
search_performed = Signal()
page_fetched = Signal()
tool_failed = Signal()

audit_logger = logging.getLogger("webtools.audit")

_BY_TOOL = {"web_search": search_performed, "web_fetch": page_fetched}
_BASE = ("tool", "plugin", "user", "conversation", "duration_ms", "outcome", "error")


def send_call_signals(result, event: dict) -> None:
    """The runtime's ``on_call`` hook: log the call and send the signals."""
    base = {key: event.get(key) for key in _BASE if key != "error"}
    details = {key: value for key, value in event.items() if key not in _BASE}
    audit_logger.info("tool_call %s", json.dumps({**base, **details}, default=str, sort_keys=True))
    tool_called.send(sender=result.tool, details=details, **base)
    if result.tool in _BY_TOOL:
        _BY_TOOL[result.tool].send(sender=result.tool, details=details, **base)
    if result.is_error:
        tool_failed.send(sender=result.tool, details=details, error=event.get("error"), **base)
