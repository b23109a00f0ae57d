"""The two kinds of error: ``ToolError`` for the model, ``ImproperlyConfigured`` for the operator.

Part of the base: imports nothing of webtools, and every part may import it.
"""
from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured


class ToolError(Exception):
    """A failure the model can read and act on, such as "The Brave API key was rejected."

    The message is shown to the model and the user, so it never holds a secret. ``code``, when set, is a
    stable name for the kind of failure (``URL_NOT_IN_PRIOR_CONTEXT``) that a door can act on.
    """

    code: str | None = None

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


#: A URL was refused because it had not appeared in the conversation (URL provenance).
URL_NOT_IN_PRIOR_CONTEXT = "url_not_in_prior_context"


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
