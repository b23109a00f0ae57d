"""Errors of the guarded HTTP client.

Every ``str()`` here is a sentence fit for the model and the user. It names the URL without its user
info, query or fragment (an admin-configured engine URL can carry an API key in its query string), and
never repeats a low-level exception's text, which can quote the full URL; the low-level error is kept
as ``__cause__`` for logs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .urls import URL


def display_url(url: str | URL) -> str:
    """``scheme://host[:port]/path`` of ``url`` (see ``URL.display``): what an error message may show.

    A URL with user info, which ``read_url`` refuses, is shown without it (an admin-set model server
    URL can carry credentials there); any other unreadable URL is not shown at all.
    """
    from .urls import read_url  # urls raises the errors defined here

    try:
        return read_url(url).display()
    except InvalidURL:
        pass
    if isinstance(url, str):
        scheme, sep, rest = url.strip().partition("://")
        authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        if sep and "@" in authority and "\\" not in authority:
            try:
                return read_url(f"{scheme}://{rest[authority.rindex('@') + 1:]}").display()
            except InvalidURL:
                pass
    return "(unreadable URL)"


class NetError(Exception):
    """Base of every error the guarded client raises; ``str()`` is written for the model."""


class InvalidURL(NetError):
    """The URL cannot be parsed or breaks a URL rule (scheme, user info); nothing was sent."""


class AddressNotAllowed(NetError):
    """The host resolves to (or the socket reached) an address the policy refuses."""

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

    def for_url(self, url: str) -> AddressNotAllowed:
        """The same refusal, naming the URL that was asked for."""
        return AddressNotAllowed(self.address, self.reason, display_url(url), connected=self.connected)


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
