"""The two kinds of error: ``ToolError`` for the model, ``ImproperlyConfigured`` for the operator.

Part of the base: imports nothing of webtools, and every part may import it.
"""
from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured


# The stable codes of error results (``error_code`` beside ``error``; the table is in docs/runtime.md): the
# vocabulary the providers' own web tools use, so a host or a model can tell failures apart without
# reading the message.
INVALID_TOOL_INPUT = "invalid_tool_input"
#: A URL refused because it had not appeared in the conversation (URL provenance).
URL_NOT_IN_PRIOR_CONTEXT = "url_not_in_prior_context"
#: Domain lists, robots.txt, private and internal addresses.
URL_NOT_ALLOWED = "url_not_allowed"
#: DNS, connection, TLS, timeouts, HTTP errors, a page that could not be read.
URL_NOT_ACCESSIBLE = "url_not_accessible"
URL_TOO_LONG = "url_too_long"
UNSUPPORTED_CONTENT_TYPE = "unsupported_content_type"
#: Rate limits and quotas, ours or an engine's.
TOO_MANY_REQUESTS = "too_many_requests"
MAX_USES_EXCEEDED = "max_uses_exceeded"
QUERY_TOO_LONG = "query_too_long"
#: No engine, an engine down, a tool not set up, an unexpected failure, a cancelled turn.
UNAVAILABLE = "unavailable"
ERROR_CODES = frozenset({
    INVALID_TOOL_INPUT, URL_NOT_IN_PRIOR_CONTEXT, URL_NOT_ALLOWED, URL_NOT_ACCESSIBLE, URL_TOO_LONG,
    UNSUPPORTED_CONTENT_TYPE, TOO_MANY_REQUESTS, MAX_USES_EXCEEDED, QUERY_TOO_LONG, UNAVAILABLE,
})


class ToolError(Exception):
    """A failure the model can read and act on, such as "The Brave API key was rejected."

    The message is shown to the model and the user, so it never holds a secret. ``code`` is its stable
    kind (one of ``ERROR_CODES``), given where the failure is understood; a kind of error may set its own
    default, and the runtime puts it beside the message as ``error_code``.
    """

    code = UNAVAILABLE

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            if code not in ERROR_CODES:
                raise ValueError(f"Unknown error code {code!r}.")
            self.code = code

    def __str__(self) -> str:
        return self.message


class UnseenURL(ToolError):
    """A URL refused by URL provenance before anything was sent to it. ``url`` is its canonical form, so a
    door that can ask the user (MCP) can show it and, on a yes, mark exactly that URL as seen."""

    code = URL_NOT_IN_PRIOR_CONTEXT

    def __init__(self, message: str, url: str):
        super().__init__(message)
        self.url = url


class ToolCancelled(ToolError):
    """The turn was cancelled while the tool was running."""

    def __init__(self, message: str = "The turn was cancelled."):
        super().__init__(message)


class TurnError(Exception):
    """The turn cannot start as asked: an unknown tool was named, or tools for a model without tools."""


class WebtoolsConfigurationError(ImproperlyConfigured):
    """A configuration mistake found at start-up or save time; never swallowed as a tool error."""
