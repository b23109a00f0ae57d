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
    """Name resolution, connection, TLS or the HTTP exchange failed; ``kind`` says which (one of the
    constants below), and the message says it in words. ``url`` is the URL whose request failed, when
    the client knows it (``HttpClient`` sets it: after redirects it may not be the first one)."""

    #: The name has no address: it does not exist (or its name server says so).
    NO_ADDRESS = "no_address"
    #: No name server answered: typically a machine without a network.
    NAME_SERVICE = "name_service"
    #: No route to the host's network: the network is unreachable from this server.
    UNREACHABLE = "unreachable"
    #: The host answered, refusing the connection: nothing listens on that port.
    REFUSED = "refused"
    #: The connection was reset or closed before an answer came.
    RESET = "reset"
    #: The TLS handshake failed, or the certificate could not be verified.
    TLS = "tls"
    #: Anything else.
    FAILED = "failed"

    #: The kinds that mean this server could not find or reach the host at all.
    UNREACHED = frozenset({NO_ADDRESS, NAME_SERVICE, UNREACHABLE})

    def __init__(self, message: str, kind: str = FAILED, url: URL | None = None):
        super().__init__(message)
        self.kind = kind
        self.url = url

    def for_url(self, url: URL) -> ConnectionFailed:
        """The same failure told of ``url``, another URL of the same origin (the page whose robots.txt
        request failed): the message names ``url`` where it named the failed one."""
        message = str(self) if self.url is None else str(self).replace(self.url.display(), url.display())
        return ConnectionFailed(message, self.kind, url)


#: What the messages of the ``UNREACHED`` kinds say, after the host.
_NO_ADDRESS = "could not be found: no address is registered for that name."
_NO_NAME_SERVER = ("could not be looked up: no name server answered "
                   "(the network may be unreachable from this server).")
_NO_ROUTE = "could not be reached: the network is unreachable from this server."


def no_address(host: str) -> str:
    return f"The host {host} {_NO_ADDRESS}"


def no_name_server(host: str) -> str:
    return f"The host {host} {_NO_NAME_SERVER}"


def no_route(host_port: str) -> str:
    return f"{host_port} {_NO_ROUTE}"


def no_network(message: str) -> bool:
    """Whether ``message``, the text of a ``ConnectionFailed`` as a tool passed it on, says that this
    server could not find or reach the host at all (``ConnectionFailed.UNREACHED``): what ``manage.py
    webtools check`` reports as a machine without a network rather than as a broken set-up."""
    return any(phrase in message for phrase in (_NO_ADDRESS, _NO_NAME_SERVER, _NO_ROUTE))


class Cancelled(NetError):
    """The caller's cancel signal was set."""

    code = UNAVAILABLE
