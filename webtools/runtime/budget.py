"""A reading budget: how long one call may spend turning downloaded bytes into text.

The guarded client's deadline covers the network only. Extraction, PDF and feed reading take a
``Deadline`` and call ``check()`` between steps and inside their loops, so that a call the runtime has
given up on stops burning CPU, and a hostile page (an 8 MB PDF content stream, a 5 MB table) ends in a
clear tool error instead of a minute of work.
"""
from __future__ import annotations

import time

from webtools.exceptions import URL_NOT_ACCESSIBLE, ToolCancelled, ToolError


class ReadingTooLong(ToolError):
    """The document could not be read within the call's time budget."""

    code = URL_NOT_ACCESSIBLE

    def __init__(self, message: str = "The page took too long to read."):
        super().__init__(message)


class Deadline:
    """A point in time (``time.monotonic``) after which reading stops, plus the turn's cancel signal.

    ``Deadline(None)`` never expires: what plain callers and tests of extraction use.
    """

    def __init__(self, seconds: float | None, signal=None):
        self.expires_at = None if seconds is None else time.monotonic() + seconds
        self.signal = signal

    @classmethod
    def never(cls) -> Deadline:
        return cls(None)

    def remaining(self) -> float | None:
        """Seconds left, never negative; None when there is no limit."""
        if self.expires_at is None:
            return None
        return max(0.0, self.expires_at - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and time.monotonic() >= self.expires_at

    def check(self) -> None:
        """Raise ``ToolCancelled`` when the turn was cancelled, ``ReadingTooLong`` when time is up."""
        if self.signal is not None and self.signal.is_set():
            raise ToolCancelled()
        if self.expired:
            raise ReadingTooLong()
