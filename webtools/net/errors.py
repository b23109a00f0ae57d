"""Errors of the guarded HTTP client.

Every ``str()`` here is a sentence fit for the model and the user. It names the URL without its user
info, query or fragment (an admin-configured engine URL can carry an API key in its query string), and
never repeats a low-level exception's text, which can quote the full URL; the low-level error is kept
as ``__cause__`` for logs.

Imports nothing of webtools: ``urls`` raises these, so this module may not import ``urls`` (the URL
in an error is shown by ``URL.display``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from webtools.exceptions import INVALID_TOOL_INPUT, UNAVAILABLE, URL_NOT_ACCESSIBLE, URL_NOT_ALLOWED

if TYPE_CHECKING:
    from .urls import URL


class NetError(Exception):
    """Base of every error the guarded client raises; ``str()`` is written for the model, ``code`` is its
    kind among the tools' error codes (``webtools.exceptions``)."""

    code = URL_NOT_ACCESSIBLE


class InvalidURL(NetError):
    """The URL cannot be parsed or breaks a URL rule (scheme, user info); nothing was sent."""

    code = INVALID_TOOL_INPUT


class AddressNotAllowed(NetError):
    """The host resolves to (or the socket reached) an address the policy refuses."""

    code = URL_NOT_ALLOWED

    def __init__(self, address: str, reason: str, url: str | None = None, *, connected: bool = False):
        self.address = address
        self.reason = reason
        self.url = url
        self.connected = connected
        super().__init__(self._message())

    def _message(self) -> str:
        verb = "is connected to" if self.connected else "resolves to"
        what = f"The address {self.url}" if self.url else "The address"
        return f"{what} is not allowed: it {verb} {self.reason} ({self.address})."

    def for_url(self, url: URL) -> AddressNotAllowed:
        """The same refusal, naming the URL that was asked for (as ``URL.display`` shows it)."""
        return AddressNotAllowed(self.address, self.reason, url.display(), connected=self.connected)


class RedirectNotAllowed(NetError):
    """A 3xx arrived and the caller asked for redirects to be refused."""


class TooManyRedirects(NetError):
    """More hops than allowed (this also ends redirect loops)."""


class FetchTimeout(NetError):
    """The one deadline for connect, headers and body passed."""


class BodyTooLarge(NetError):
    """The decompressed body passed the byte limit."""


class ConnectionFailed(NetError):
    """Name resolution, connection, TLS or the HTTP exchange failed."""


class Cancelled(NetError):
    """The caller's cancel signal was set."""

    code = UNAVAILABLE
