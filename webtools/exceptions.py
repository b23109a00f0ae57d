"""The two kinds of error: ``ToolError`` for the model, ``ImproperlyConfigured`` for the operator.

Part of the base: imports nothing of webtools, and every part may import it.
"""
from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured


class ToolError(Exception):
    """A failure the model can read and act on, such as "The Brave API key was rejected."

    The message is shown to the model and the user, so it never holds a secret.
    """

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ToolCancelled(ToolError):
    """The turn was cancelled while the tool was running."""

    def __init__(self, message: str = "The turn was cancelled."):
        super().__init__(message)


class TurnError(Exception):
    """The turn cannot start as asked: an unknown tool was named, or tools for a model without tools."""


class WebtoolsConfigurationError(ImproperlyConfigured):
    """A configuration mistake found at start-up or save time; never swallowed as a tool error."""
