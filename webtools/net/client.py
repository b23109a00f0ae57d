"""The guarded HTTP client: the one place in webtools that opens URLs chosen by users or the model.

Where the check happens (see docs/security.md): not on the URL's host name, which parsers disagree
about, but in the connection class that urllib3 asks for a socket. It resolves the host once, refuses
when *any* address is refused (so a name cannot hide a private address behind a public one), dials only
the addresses it checked (no second lookup, so DNS rebinding has nothing to rebind), and checks the
connected socket's peer address before the first byte is sent (and again before each request on a
reused keep-alive connection). TLS is unchanged: the certificate is verified against the host name,
which is also the SNI name.

Everything else that could leak or hang is closed here too: no environment proxies, no cookie jar
that keeps anything, no credentials from the URL or ``.netrc``, one deadline for the whole exchange,
and a byte limit counted after decompression.
"""
from __future__ import annotations

import concurrent.futures
import http.client
import http.cookiejar
import inspect
import io
import json as jsonlib
import socket
import sys
import threading
import time
from typing import Any, Callable, Iterable, Mapping, Protocol

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import DecodeError, LocationParseError
from urllib3.poolmanager import PoolManager
from urllib3.util.request import ACCEPT_ENCODING

from .errors import (
    AddressNotAllowed,
    BodyTooLarge,
    Cancelled,
    ConnectionFailed,
    FetchTimeout,
    InvalidURL,
    NetError,
    RedirectNotAllowed,
    TooManyRedirects,
    display_url,
)
from .policy import DEFAULT_POLICY, AddressPolicy, IPAddress, parse_address
from .urls import URL, read_url

__all__ = ["HttpClient", "Response", "client_for", "system_resolver"]

Resolver = Callable[[str, int], Iterable[str]]

# Only codings urllib3 decodes with an output limit, so a bomb stops at the byte limit. Its decoders
# take ``max_length`` since urllib3 2.6 (CVE-2025-66471); older ones expand a whole network read at
# once, so with them nothing but identity is asked for. zstd is left out even when urllib3 could
# decode it: one less decoder to trust.
_LIMITED_DECODERS = "max_length" in inspect.signature(urllib3.response.ContentDecoder.decompress).parameters
ACCEPTED_CODINGS = (
    ", ".join(c for c in ("gzip", "deflate", "br") if c in ACCEPT_ENCODING.split(","))
    if _LIMITED_DECODERS else "identity"
)

_CHUNK = 64 * 1024
# While waiting for bytes, wake this often to look at the cancel signal and the deadline.
_POLL_SECONDS = 0.2


class CancelSignal(Protocol):
    def is_set(self) -> bool: ...


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``getaddrinfo`` gives for ``host``, in its order, each once."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


# ---------------------------------------------------------------------------------------------------
# One deadline for connect, headers and body


class _Deadline:
    """The single deadline of one ``open()`` (or one ``follow()``), shared by every socket operation."""

    __slots__ = ("timeout", "at", "cancel", "url")
    url: URL | str

    def __init__(self, timeout: float, cancel: CancelSignal | None):
        if timeout is None or timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        self.timeout = timeout
        self.at = time.monotonic() + timeout
        self.cancel = cancel
        self.url = ""

    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def remaining(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.timeout_error()
        return left

    def check(self) -> float:
        """Raise ``Cancelled`` or ``FetchTimeout`` if either has come; else the seconds left."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled(f"The request to {display_url(self.url)} was cancelled.")
        return self.remaining()

    def timeout_error(self) -> FetchTimeout:
        return FetchTimeout(f"Fetching {display_url(self.url)} did not finish within {self.timeout:g} seconds.")


# The deadline of the request this thread is sending. requests and urllib3 give no way to hand a
# per-request object to the connection, so ``_open`` sets it around ``Session.send`` only.
_local = threading.local()


def _current_deadline() -> _Deadline | None:
    return getattr(_local, "deadline", None)


class _DeadlineReader(io.RawIOBase):
    """Raw reader under http.client's buffered reader: each ``recv`` waits at most until the deadline,
    in short slices so that the cancel signal is seen. A server that trickles its status line, headers or
    body a byte at a time is cut off at the deadline, which per-read socket timeouts would never do."""

    def __init__(self, sock: socket.socket, deadline: _Deadline):
        super().__init__()
        self._sock = sock
        self._deadline = deadline
        # Holds the socket's io reference the way ``sock.makefile()`` does, so that http.client
        # closing the connection early ("Connection: close") does not close the fd under the body.
        self._ref = sock.makefile("rb", buffering=0)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while True:
            left = self._deadline.check()
            self._sock.settimeout(min(left, _POLL_SECONDS))
            try:
                return self._sock.recv_into(buffer)
            except (TimeoutError, InterruptedError):
                continue

    def close(self) -> None:
        if not self.closed:
            self._ref.close()
        super().close()


class _DeadlineSocketView:
    """What http.client's response sees as its socket: ``makefile`` yields the deadline reader."""

    def __init__(self, sock: socket.socket, deadline: _Deadline):
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline), buffer_size=_CHUNK)


class _DeadlineHTTPResponse(http.client.HTTPResponse):
    def __init__(self, sock: Any, *args: Any, **kwargs: Any):
        deadline = _current_deadline()
        if deadline is not None:
            sock = _DeadlineSocketView(sock, deadline)
        super().__init__(sock, *args, **kwargs)


# ---------------------------------------------------------------------------------------------------
# The guard and the connection classes that call it


class _Guard:
    """Resolves once and judges addresses; shared by every connection of one client."""

    def __init__(self, policy: AddressPolicy | None, resolver: Resolver | None):
        self.policy = policy
        self.resolver = resolver or system_resolver

    def addresses(self, host: str, port: int, deadline: _Deadline | None = None) -> list[IPAddress]:
        """The checked addresses to dial for ``host``; refuses if any one of them is refused."""
        host = host.strip("[]")
        try:
            # An IP literal needs no lookup; "127.0.0.1." is one too, as browsers read it.
            found: Iterable[str] = [str(parse_address(host.rstrip(".")))]
        except ValueError:
            found = self._resolve(host, port, deadline)
        try:
            addresses = list(dict.fromkeys(parse_address(a) for a in found))
        except ValueError as err:
            raise ConnectionFailed(f"The host {host} could not be resolved to an IP address.") from err
        if not addresses:
            raise ConnectionFailed(f"The host {host} could not be found.")
        if self.policy is not None:
            for address in addresses:
                allowed, reason = self.policy.verdict(address)
                if not allowed:
                    raise AddressNotAllowed(str(address), reason, f"http://{_host_port(host, port)}/")
        return addresses

    def _resolve(self, host: str, port: int, deadline: _Deadline | None) -> Iterable[str]:
        # getaddrinfo has no timeout of its own, and a name server that answers slowly (on purpose,
        # it may be the attacker's) must not outlast the deadline: wait for the lookup in a worker.
        try:
            if deadline is None:
                return self.resolver(host, port)
            future = _resolver_pool().submit(self.resolver, host, port)
            try:
                return future.result(timeout=deadline.check())
            except concurrent.futures.TimeoutError:
                future.cancel()
                raise deadline.timeout_error() from None
        except (OSError, UnicodeError) as err:
            raise ConnectionFailed(f"The host {host} could not be found.") from err

    def dial(self, host: str, port: int, deadline: _Deadline | None = None, *, timeout: Any = None,
             socket_options: Iterable[tuple] | None = None) -> socket.socket:
        """A TCP socket connected to one of the checked addresses of ``host``, its peer checked.

        What urllib3's connections use instead of ``create_connection`` (which would resolve again),
        and what the guarding proxy dials for a browser's CONNECT.
        """
        last_error: OSError | None = None
        for address in self.addresses(host, port, deadline):
            left = timeout
            if deadline is not None:
                remaining = deadline.check()
                left = remaining if not isinstance(timeout, (int, float)) else min(timeout, remaining)
            family = socket.AF_INET if address.version == 4 else socket.AF_INET6
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                for option in socket_options or ():
                    sock.setsockopt(*option)
                if isinstance(left, (int, float)):
                    sock.settimeout(left)
                sock.connect(_sockaddr(address, port))
            except TimeoutError as err:
                sock.close()
                if deadline is not None and deadline.expired():
                    raise deadline.timeout_error() from err
                last_error = err
                continue
            except OSError as err:
                sock.close()
                last_error = err
                continue
            try:
                self.check_peer(sock)
            except BaseException:
                sock.close()
                raise
            return sock
        raise ConnectionFailed(f"Could not connect to {_host_port(host.strip('[]'), port)}.") from last_error

    def check_peer(self, sock: socket.socket) -> None:
        """The last word: the address this socket is actually connected to."""
        if self.policy is None:
            return
        peer = sock.getpeername()[0]
        allowed, reason = self.policy.verdict(peer)
        if not allowed:
            raise AddressNotAllowed(str(parse_address(peer)), reason, connected=True)


_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _resolver_pool() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="webtools-dns")
        return _pool


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _sockaddr(address: IPAddress, port: int) -> tuple:
    if address.version == 4:
        return (str(address), port)
    return (str(address), port, 0, 0)


class _GuardedConnectionMixin:
    """Replaces urllib3's ``create_connection`` (which would resolve the name again) with a dial of
    the addresses the guard checked, then checks the peer before anything is written."""

    response_class = _DeadlineHTTPResponse
    _guard: _Guard

    def __init__(self, *args: Any, guard: _Guard, **kwargs: Any):
        self._guard = guard
        super().__init__(*args, **kwargs)

    def _new_conn(self) -> socket.socket:
        sock = self._guard.dial(
            self._dns_host, self.port, _current_deadline(),  # type: ignore[attr-defined]
            timeout=self.timeout, socket_options=self.socket_options,  # type: ignore[attr-defined]
        )
        sys.audit("http.client.connect", self, self.host, self.port)  # type: ignore[attr-defined]
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        if self.sock is not None:  # type: ignore[attr-defined]
            # A pooled keep-alive connection: checked when it was opened, and checked again here,
            # so reuse can never skip the guard.
            self._guard.check_peer(self.sock)  # type: ignore[attr-defined]
        super().request(*args, **kwargs)  # type: ignore[misc]

    def send(self, data: Any) -> None:
        deadline = _current_deadline()
        if deadline is not None and self.sock is not None:  # type: ignore[attr-defined]
            self.sock.settimeout(deadline.check())  # type: ignore[attr-defined]
        super().send(data)  # type: ignore[misc]


class _GuardedHTTPConnection(_GuardedConnectionMixin, HTTPConnection):
    pass


class _GuardedHTTPSConnection(_GuardedConnectionMixin, HTTPSConnection):
    pass


class _GuardedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class _GuardedPoolManager(PoolManager):
    """Pools (one per scheme, host and port) whose connections all carry the guard."""

    def __init__(self, guard: _Guard, **kwargs: Any):
        super().__init__(**kwargs)
        self._guard = guard
        self.pool_classes_by_scheme = {
            "http": _GuardedHTTPConnectionPool,
            "https": _GuardedHTTPSConnectionPool,
        }

    def _new_pool(self, scheme: str, host: str, port: int, request_context: dict[str, Any] | None = None):
        context = dict(self.connection_pool_kw if request_context is None else request_context)
        context["guard"] = self._guard
        return super()._new_pool(scheme, host, port, context)


class _GuardedAdapter(HTTPAdapter):
    def __init__(self, guard: _Guard, **kwargs: Any):
        self._guard = guard  # before super().__init__, which builds the pool manager
        super().__init__(**kwargs)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False,
                         **pool_kwargs: Any) -> None:
        self._pool_connections, self._pool_maxsize, self._pool_block = connections, maxsize, block
        self.poolmanager = _GuardedPoolManager(
            self._guard, num_pools=connections, maxsize=maxsize, block=block, **pool_kwargs
        )

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        # A proxy would make the proxy's address the one checked, not the target's.
        raise ConnectionFailed("Proxies are not used by this client.")


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


# ---------------------------------------------------------------------------------------------------
# The public client


class Response:
    """One HTTP response whose body is read on demand under a byte limit. Use as a context manager.

    ``url`` is the canonical URL string that was requested and ``canonical`` its reading
    (``webtools.net.urls``). For a redirect, ``next`` is the Location read against it, or None and
    ``next_error`` says why it cannot be read; ``next_url`` is ``str(next)``.
    """

    def __init__(self, resp: requests.Response, url: URL, deadline: _Deadline, session: requests.Session):
        self._resp = resp
        self._raw = resp.raw
        self._deadline = deadline
        self._eof = False
        self._closed = False
        self.status_code: int = resp.status_code
        self.headers = resp.headers
        self.canonical = url
        self.url = str(url)
        self.content: bytes | None = None
        self.truncated = False
        self.is_redirect: bool = resp.is_redirect
        self.next: URL | None = None
        self.next_error: InvalidURL | None = None
        self.next_url: str | None = None
        if self.is_redirect:
            try:
                self.next = read_url(session.get_redirect_target(resp) or "", base=url)
            except InvalidURL as err:
                self.next_error = InvalidURL(
                    f"{url.display()} redirects to an address that cannot be followed: {err}"
                )
            else:
                self.next_url = str(self.next)

    def __repr__(self) -> str:
        return f"<Response {self.status_code} {self.canonical.display()}>"

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for param in self.headers.get("Content-Type", "").split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset":
                return value.strip().strip("\"'") or None
        return None

    def read(self, max_bytes: int, on_too_large: str = "error") -> bytes:
        """The decompressed body, at most ``max_bytes`` of it.

        ``on_too_large="error"`` raises ``BodyTooLarge`` past the limit; ``"truncate"`` keeps the first
        ``max_bytes`` and sets ``truncated``. Decompression is asked for at most what the limit still
        allows, so a gzip or brotli bomb costs memory near the limit, not near its expanded size.
        """
        if self.content is not None:
            return self.content
        if on_too_large not in ("error", "truncate"):
            raise ValueError('on_too_large must be "error" or "truncate"')
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        if self._closed:
            raise ConnectionFailed(
                f"The response from {self.canonical.display()} was closed before it was read."
            )
        coding = self.headers.get("Content-Encoding", "").strip().lower()
        length = self.headers.get("Content-Length", "")
        declared_too_large = length.isdigit() and int(length) > max_bytes
        if on_too_large == "error" and coding in ("", "identity") and declared_too_large:
            self.close()  # refused on its declared size, before a byte of the body is read
            raise self._too_large(max_bytes)
        buf = bytearray()
        try:
            while True:
                self._deadline.check()
                chunk = self._raw.read1(min(_CHUNK, max_bytes + 1 - len(buf)), decode_content=True)
                if not chunk:
                    self._eof = True
                    break
                buf += chunk
                if len(buf) > max_bytes:
                    if on_too_large == "error":
                        raise self._too_large(max_bytes)
                    del buf[max_bytes:]
                    self.truncated = True
                    break
        except NetError:
            self.close()
            raise
        except DecodeError as err:
            self.close()
            raise NetError(
                f"The response from {self.canonical.display()} could not be decoded "
                f"(Content-Encoding: {coding})."
            ) from err
        except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError) as err:
            self.close()
            if self._deadline.expired():
                raise self._deadline.timeout_error() from err
            raise ConnectionFailed(
                f"The connection to {self.canonical.display()} broke while the response was read."
            ) from err
        self.content = bytes(buf)
        del buf
        if not self._eof:
            self.close()
        return self.content

    def _too_large(self, max_bytes: int) -> BodyTooLarge:
        return BodyTooLarge(f"The response from {self.canonical.display()} is larger than {max_bytes} bytes.")

    def text(self) -> str:
        """The read body as text: the Content-Type charset, else UTF-8, undecodable bytes replaced."""
        if self.content is None:
            raise ValueError("read() the response before asking for its text")
        try:
            return self.content.decode(self.charset or "utf-8", errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        try:
            return jsonlib.loads(self.text())
        except ValueError as err:
            raise NetError(f"The response from {self.canonical.display()} is not valid JSON.") from err

    def close(self) -> None:
        """Give the connection back for reuse if the body was read to its end, else close it: a
        half-read connection must not be reused."""
        if self._closed:
            return
        self._closed = True
        if self._eof:
            self._raw.release_conn()
        else:
            self._resp.close()


class HttpClient:
    """HTTP for URLs chosen by users or the model (``policy`` set), or for admin-set URLs (``policy=None``).

    ``resolver(host, port) -> [ip, ...]`` replaces ``getaddrinfo``; tests give fake names addresses
    with it. One client may be shared by the calls of a turn; its keep-alive pools are per host and
    every pooled connection was checked when it was opened and is checked again when reused.
    """

    def __init__(
        self,
        *,
        policy: AddressPolicy | None = DEFAULT_POLICY,
        resolver: Resolver | None = None,
        user_agent: str | None = None,
        ca_certs: str | None = None,
    ):
        self.policy = policy
        self._guard = _Guard(policy, resolver)
        self._verify: bool | str = ca_certs or True
        session = requests.Session()
        session.trust_env = False  # no *_PROXY, no .netrc, no REQUESTS_CA_BUNDLE from the environment
        session.cookies = requests.cookies.RequestsCookieJar(policy=_NoCookies())
        session.adapters.clear()
        self._adapter = _GuardedAdapter(self._guard)
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
        return HttpClient(policy=self.policy, resolver=self.resolver,
                          ca_certs=self._verify if isinstance(self._verify, str) else None)

    def __repr__(self) -> str:
        return f"<HttpClient {'guarded' if self.policy is not None else 'plain'}>"

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
    ) -> Response:
        """Follow redirects by hand, each hop through the guard (and ``check_hop``) again.

        Every hop is read by ``read_url`` first (a Location against the URL it came from), and
        ``check_hop`` is given that reading, the URL the client then connects to. ``timeout`` is one
        deadline for all hops. Returns the final response, opened and unread.
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
            response = self._open(method, target, deadline, headers, params, data, json)
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
        previous = _current_deadline()
        _local.deadline = deadline
        try:
            left = deadline.check()
            # The adapter, not Session.send: told not to follow, Session.send still reads a 3xx body
            # whole (``resp.content``) outside any byte limit, and it feeds the session's cookie jar.
            resp = self._adapter.send(
                prepared, stream=True, timeout=left, verify=self._verify, proxies={}, cert=None,
            )
        except AddressNotAllowed as err:
            raise err.for_url(deadline.url) from err
        except NetError:
            raise
        except requests.exceptions.SSLError as err:
            raise ConnectionFailed(
                f"The TLS connection to {display_url(deadline.url)} failed "
                "(the certificate could not be verified for this host name, or the handshake failed)."
            ) from err
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError,
                http.client.HTTPException, OSError) as err:
            if deadline.expired() or isinstance(err, requests.exceptions.Timeout):
                raise deadline.timeout_error() from err
            raise ConnectionFailed(f"The request to {display_url(deadline.url)} failed.") from err
        finally:
            _local.deadline = previous
        return Response(resp, sent, deadline, self._session)


def client_for(allow_private_networks: bool, policy: AddressPolicy | None = None,
               user_agent: str | None = None) -> HttpClient:
    """The client for URLs from users or the model: guarded by ``policy`` (the default table when
    None), or plain when the operator set ``ALLOW_PRIVATE_NETWORKS``."""
    if allow_private_networks:
        return HttpClient(policy=None, user_agent=user_agent)
    return HttpClient(policy=policy or DEFAULT_POLICY, user_agent=user_agent)
