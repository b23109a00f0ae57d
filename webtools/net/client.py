"""The guarded HTTP client: the one place in webtools that opens URLs chosen by users or the model.

Owns ``HttpClient`` (one ``requests`` session per client: ``open``, ``request``, ``connect`` for the
guarding proxy's tunnels, and ``follow``, which follows redirects by hand, each hop through the guard
again) and ``client_for``. The address check itself is in ``connection``, the one deadline in
``deadline``, reading the body in ``response``, the operator's outbound proxies in ``proxy_upstream``.
Everything else that could leak or hang is closed here: no environment proxies, no cookie jar that keeps
anything, no credentials from the URL or ``.netrc``.

May import every other module of ``webtools.net`` except ``proxy`` (which imports this).
"""
from __future__ import annotations

import http.client
import http.cookiejar
import socket
from typing import Any, Callable, Mapping

import requests
import urllib3
from urllib3.exceptions import LocationParseError

from .connection import Resolver, _GuardedAdapter, _Guard, system_resolver
from .deadline import CancelSignal, _current_deadline, _Deadline, _local
from .errors import (
    AddressNotAllowed,
    ConnectionFailed,
    InvalidURL,
    NetError,
    RedirectNotAllowed,
    TooManyRedirects,
)
from .policy import DEFAULT_POLICY, AddressPolicy
from .proxy_upstream import ProxiedAdapter, UpstreamProxy, pinned_tunnel
from .response import ACCEPTED_CODINGS, Response
from .urls import URL, display_url, read_url

__all__ = ["HttpClient", "Response", "client_for", "system_resolver"]

#: Methods sent again when a reused keep-alive connection closes before it answers: those that may be
#: repeated without a second effect (RFC 9110 9.2.2; browsers resend them so).
_RESENDABLE = frozenset({"GET", "HEAD", "OPTIONS"})
#: At most this many resends per request: each one drops the closed connection, and a client may hold
#: several idle connections to the host that one server restart closed together.
_RESENDS = 3


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """Nothing is stored and nothing is sent: one fetch must not carry state into the next."""

    def set_ok(self, cookie: Any, request: Any) -> bool:
        return False

    def return_ok(self, cookie: Any, request: Any) -> bool:
        return False

    def domain_return_ok(self, domain: str, request: Any) -> bool:
        return False

    def path_return_ok(self, path: str, request: Any) -> bool:
        return False


class HttpClient:
    """HTTP for URLs chosen by users or the model (``policy`` set), or for admin-set URLs (``policy=None``).

    ``resolver(host, port) -> [ip, ...]`` replaces ``getaddrinfo``; tests give fake names addresses
    with it. One client may be shared by the calls of a turn; its keep-alive pools are per host and
    every pooled connection was checked when it was opened and is checked again when reused.

    ``proxy`` (a URL, ``http://``, ``https://`` or ``socks5://``, credentials in its user info) sends
    everything through the operator's outbound proxy; a guarded client still resolves and checks each
    target first and asks the proxy for the checked address (``proxy_upstream``).
    """

    def __init__(
        self,
        *,
        policy: AddressPolicy | None = DEFAULT_POLICY,
        resolver: Resolver | None = None,
        user_agent: str | None = None,
        ca_certs: str | None = None,
        proxy: str | UpstreamProxy | None = None,
    ):
        self.policy = policy
        self.proxy = UpstreamProxy.read(proxy) if isinstance(proxy, str) else proxy
        self._guard = _Guard(policy, resolver)
        self._verify: bool | str = ca_certs or True
        session = requests.Session()
        session.trust_env = False  # no *_PROXY, no .netrc, no REQUESTS_CA_BUNDLE from the environment
        session.cookies = requests.cookies.RequestsCookieJar(policy=_NoCookies())
        session.adapters.clear()
        self._adapter = (_GuardedAdapter(self._guard) if self.proxy is None
                         else ProxiedAdapter(self._guard, self.proxy))
        session.mount("https://", self._adapter)
        session.mount("http://", self._adapter)
        session.headers["Accept-Encoding"] = ACCEPTED_CODINGS
        if user_agent:
            session.headers["User-Agent"] = user_agent
        self._session = session

    @property
    def resolver(self) -> Resolver:
        """What this client resolves host names with (``system_resolver`` unless a test gave one)."""
        return self._guard.resolver

    def clone(self) -> HttpClient:
        """A new client with this one's policy, resolver and CA bundle, and its own connections."""
        return HttpClient(policy=self.policy, resolver=self.resolver, proxy=self.proxy,
                          ca_certs=self._verify if isinstance(self._verify, str) else None)

    def __repr__(self) -> str:
        through = f" through {self.proxy}" if self.proxy is not None else ""
        return f"<HttpClient {'guarded' if self.policy is not None else 'plain'}{through}>"

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._session.close()

    def open(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        params: Any = None,
        data: Any = None,
        json: Any = None,
        timeout: float = 20.0,
        redirects: str = "refuse",
        cancel: CancelSignal | None = None,
    ) -> Response:
        """Send the request and return once the headers are in; the body is not read yet.

        ``timeout`` is one deadline for connect, headers and body (``read()`` keeps counting it down).
        ``redirects="refuse"`` turns a 3xx into ``RedirectNotAllowed``; ``"return"`` hands it back so
        the caller can check the next hop itself (``follow()`` does that).
        """
        if redirects not in ("refuse", "return"):
            raise ValueError('redirects must be "refuse" or "return"')
        deadline = _Deadline(timeout, cancel)
        response = self._open(method, read_url(url), deadline, headers, params, data, json)
        if response.is_redirect and redirects == "refuse":
            response.close()
            shown = response.next.display() if response.next else "an unreadable address"
            raise RedirectNotAllowed(
                f"{response.canonical.display()} redirects to {shown}; redirects are not followed here."
            )
        return response

    def connect(self, url: str | URL, *, timeout: float = 20.0, cancel: CancelSignal | None = None) -> socket.socket:
        """A raw TCP socket to ``url``'s host and port: resolved once, every address checked, the peer
        checked. For the guarding proxy's CONNECT tunnels, whose bytes (TLS) it relays but cannot read.
        """
        url = read_url(url)
        deadline = _Deadline(timeout, cancel)
        deadline.url = url
        try:
            if self.proxy is not None:
                return pinned_tunnel(self._guard, self.proxy, url, deadline, deadline.check(),
                                     self._verify if isinstance(self._verify, str) else None)
            return self._guard.dial(url.host, url.port, deadline, timeout=timeout)
        except AddressNotAllowed as err:
            raise err.for_url(url) from err

    def request(self, method: str, url: str, *, max_bytes: int, on_too_large: str = "error",
                **kwargs: Any) -> Response:
        """``open`` + ``read(max_bytes, on_too_large)`` + ``close``; ``content`` holds the body."""
        with self.open(method, url, **kwargs) as response:
            response.read(max_bytes, on_too_large)
        return response

    def follow(
        self,
        method: str,
        url: str,
        *,
        max_redirects: int = 5,
        check_hop: Callable[[URL], None] | None = None,
        headers: Mapping[str, str] | None = None,
        params: Any = None,
        data: Any = None,
        json: Any = None,
        timeout: float = 20.0,
        cancel: CancelSignal | None = None,
        sign: Callable[[URL], Mapping[str, str]] | None = None,
    ) -> Response:
        """Follow redirects by hand, each hop through the guard (and ``check_hop``) again.

        Every hop is read by ``read_url`` first (a Location against the URL it came from), and
        ``check_hop`` is given that reading, the URL the client then connects to. ``timeout`` is one
        deadline for all hops. ``sign(url)`` gives headers added to each hop's request for that hop's
        URL (a request signature covers the authority it is sent to). Returns the final response,
        opened and unread.
        """
        deadline = _Deadline(timeout, cancel)
        first = target = read_url(url)
        if params:
            # check_hop judges the URL that is sent, query parameters included.
            first = target = self._prepare("GET", target, None, params, None, None)[1]
            params = None
        hops = 0
        headers = dict(headers or {})
        while True:
            if check_hop is not None:
                check_hop(target)
            sent = {**headers, **sign(target)} if sign is not None else headers
            response = self._open(method, target, deadline, sent, params, data, json)
            if not response.is_redirect:
                return response
            response.close()
            if response.next is None:
                raise response.next_error or InvalidURL("The redirect cannot be followed.")
            status, previous, target = response.status_code, response.canonical, response.next
            hops += 1
            if hops > max_redirects:
                raise TooManyRedirects(f"{first.display()} redirected more than {max_redirects} times.")
            # RFC 9110 15.4.4: a 303 is fetched with GET; browsers also turn POST into GET on 301/302.
            verb = method.upper()
            if (status == 303 and verb != "HEAD") or (status in (301, 302) and verb == "POST"):
                method, data, json = "GET", None, None
                headers = {k: v for k, v in headers.items()
                           if k.lower() not in ("content-type", "content-length")}
            if previous.origin != target.origin:
                # What a caller meant for one site is not handed to the site it redirects to.
                headers = {k: v for k, v in headers.items()
                           if k.lower() not in ("authorization", "cookie", "proxy-authorization")}
            params = None  # already part of the first URL; a Location is a whole new URL

    # -------------------------------------------------------------------------------------------

    def _prepare(self, method: str, url: URL, headers: Any, params: Any, data: Any,
                 json: Any) -> tuple[requests.PreparedRequest, URL]:
        """The request for exactly ``str(url)`` (plus ``params``), and the reading of what is sent."""
        try:
            prepared = self._session.prepare_request(
                requests.Request(method=method.upper(), url=str(url), headers=headers, params=params,
                                 data=data, json=json)
            )
        except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
                requests.exceptions.InvalidSchema, LocationParseError, UnicodeError) as err:
            raise InvalidURL("The URL cannot be read.") from err
        sent = read_url(prepared.url or "")
        # Never expected: str(url) is a fixed point of requests' and urllib3's parsers (tested).
        if sent.origin != url.origin or (not params and sent != url):
            raise InvalidURL("The URL cannot be read unambiguously.")
        return prepared, sent

    def _open(self, method: str, url: URL, deadline: _Deadline, headers: Any, params: Any, data: Any,
              json: Any) -> Response:
        deadline.url = url
        prepared, sent = self._prepare(method, url, headers, params, data, json)
        deadline.url = sent
        resends = 0
        while True:
            try:
                return Response(self._send(prepared, deadline), sent, deadline, self._session)
            except ConnectionFailed as err:
                # A kept-alive connection the server closed as the request went out on it (its idle
                # timeout and our reuse crossed): nothing was answered, so a request that may be
                # repeated is sent again, as browsers do. The next attempt takes another pooled
                # connection or dials (and checks) a new one; a new connection that fails is final.
                if resends == _RESENDS or not (err.kind == ConnectionFailed.RESET and deadline.reused
                                               and prepared.method in _RESENDABLE
                                               and isinstance(prepared.body, (bytes, str, type(None)))):
                    raise
                resends += 1

    def _send(self, prepared: requests.PreparedRequest, deadline: _Deadline) -> requests.Response:
        """One attempt: ``prepared`` sent through the adapter under ``deadline``; failures as NetErrors."""
        previous = _current_deadline()
        _local.deadline = deadline
        deadline.reused = False
        try:
            left = deadline.check()
            # The adapter, not Session.send: told not to follow, Session.send still reads a 3xx body
            # whole (``resp.content``) outside any byte limit, and it feeds the session's cookie jar.
            return self._adapter.send(
                prepared, stream=True, timeout=left, verify=self._verify, proxies={}, cert=None,
            )
        except AddressNotAllowed as err:
            raise err.for_url(deadline.url) from err
        except ConnectionFailed as err:
            err.url = err.url or deadline.url
            raise
        except NetError:
            raise
        except requests.exceptions.SSLError as err:
            raise ConnectionFailed(
                f"The TLS connection to {display_url(deadline.url)} failed "
                "(the certificate could not be verified for this host name, or the handshake failed).",
                ConnectionFailed.TLS, deadline.url,
            ) from err
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError,
                http.client.HTTPException, OSError) as err:
            if deadline.expired() or isinstance(err, requests.exceptions.Timeout):
                raise deadline.timeout_error() from err
            if _caused_by(err, (ConnectionResetError, http.client.RemoteDisconnected)):
                raise ConnectionFailed(
                    f"The server of {display_url(deadline.url)} closed the connection before it answered.",
                    ConnectionFailed.RESET, deadline.url,
                ) from err
            raise ConnectionFailed(f"The request to {display_url(deadline.url)} failed.",
                                   url=deadline.url) from err
        finally:
            _local.deadline = previous


def _caused_by(err: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    """Whether ``err``, or an exception it was raised from or wraps, is one of ``kinds`` (requests and
    urllib3 wrap the socket's error in one or two of their own, in ``args`` or as the cause)."""
    todo, seen = [err], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kinds):
            return True
        todo += [e for e in (current.__cause__, current.__context__, *current.args) if isinstance(e, BaseException)]
    return False


def client_for(allow_private_networks: bool, policy: AddressPolicy | None = None,
               user_agent: str | None = None, proxy: str | None = None) -> HttpClient:
    """The client for URLs from users or the model: guarded by ``policy`` (the default table when
    None), or plain when the operator set ``ALLOW_PRIVATE_NETWORKS``; through ``proxy`` when set."""
    if allow_private_networks:
        return HttpClient(policy=None, user_agent=user_agent, proxy=proxy or None)
    return HttpClient(policy=policy or DEFAULT_POLICY, user_agent=user_agent, proxy=proxy or None)
