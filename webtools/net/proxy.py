"""The guarding forward proxy: the only way out of the network for a headless browser.

A browser is the widest SSRF surface there is (tags, CSS, fetch, WebSocket, workers, beacons, redirects),
so the renderer gives it no network of its own: every request it makes arrives here, as an HTTP
absolute-form request (``GET http://host/path``) or as a ``CONNECT host:443`` tunnel, and goes out
through the guarded client's rules:

- absolute-form requests are sent by the guarded ``HttpClient`` itself (the one URL reading, resolve
  once, dial only checked addresses, check the peer, one deadline, a byte limit after decompression),
  one request per connection, and a redirect is handed back to the browser, whose next request comes
  here again;
- a ``CONNECT`` is allowed to ports 80 and 443 only; its host is resolved once, every address checked,
  the connected peer checked, and then the bytes (TLS, which the proxy cannot read) are relayed under
  the same byte and time limits;
- the browser's own background traffic (updates, sync, safe browsing, ...) is refused by host.

**Sessions.** A renderer opens one session per render (``open_session``) and gives the page's browser
context the session's token as its proxy credentials. With ``ProxyRules.sessions_only`` (the renderer's
proxy), a request without a live session's token gets a ``407`` and goes nowhere: the browser's own
traffic, which belongs to no page, never leaves. A session's ``refuse_host(host)`` is the operator's
domain lists for that render: every subrequest of the page (scripts, fetch, XHR, iframes, WebSockets)
is held to them for as long as the session lives. The navigations of the page's main frame are
checked by the renderer itself, hop by hop, with robots.txt too (``render.py``).

Every refusal is logged at DEBUG (a page can cause any number of them).

May import ``client``, ``errors`` and ``urls``; only web_fetch's renderer (``render``, ``navigation``) uses it.
"""
from __future__ import annotations

import base64
import binascii
import logging
import os
import secrets
import selectors
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .client import HttpClient
from .errors import AddressNotAllowed, BodyTooLarge, FetchTimeout, InvalidURL, NetError
from .urls import URL, display_url, read_url

logger = logging.getLogger("webtools.proxy")

#: CONNECT tunnels go to the web's two ports only: not to mail, database or SSH servers of a public host.
CONNECT_PORTS = frozenset({80, 443})

#: Hosts that Chromium talks to on its own (updates, sync, safe browsing, autofill, translation, field
#: trials); a page never needs them, and the renderer must not phone home. Suffix match.
BACKGROUND_HOSTS = (
    "googleapis.com", "gvt1.com", "gvt2.com", "gstatic.com", "clients1.google.com", "clients2.google.com",
    "clients3.google.com", "clients4.google.com", "clients5.google.com", "clients6.google.com",
    "clientservices.googleapis.com", "accounts.google.com", "update.googleapis.com",
    "safebrowsing.google.com", "safebrowsing.googleapis.com", "optimizationguide-pa.googleapis.com",
    "content-autofill.googleapis.com", "translate.googleapis.com", "chrome.google.com",
    "chromewebstore.googleapis.com", "redirector.gvt1.com", "edgedl.me.gvt1.com",
)

_HEAD_LIMIT = 64 * 1024
_BODY_LIMIT = 10 * 1024 * 1024
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te",
    "trailer", "transfer-encoding", "upgrade", "accept-encoding", "content-length", "host",
})
RESPONSE_DROPPED = frozenset({
    "connection", "keep-alive", "proxy-connection", "transfer-encoding", "content-encoding", "content-length",
    "trailer", "upgrade",
})


@dataclass
class ProxyEvent:
    """One request the proxy saw: what was asked for, and whether it went out (for audit and tests)."""

    method: str
    target: str
    allowed: bool
    reason: str = ""
    #: The render session the request came with (its label), or "" for none.
    session: str = ""


class Refused(Exception):
    """A request the proxy answers itself with ``status`` and a short reason."""

    def __init__(self, status: int, reason: str, headers: tuple[str, ...] = ()):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = headers


@dataclass
class ProxyRules:
    """What the proxy allows, besides the guarded client's address policy."""

    max_bytes: int = 20_000_000
    timeout: float = 30.0
    connect_ports: frozenset[int] = CONNECT_PORTS
    background_hosts: tuple[str, ...] = BACKGROUND_HOSTS
    events: list[ProxyEvent] = field(default_factory=list)
    max_events: int = 1000
    #: Serve only requests that carry a live session's token (``GuardingProxy.open_session``).
    sessions_only: bool = False

    def record(self, event: ProxyEvent) -> None:
        if len(self.events) < self.max_events:
            self.events.append(event)
        if not event.allowed:
            shown = event.target
            if "://" in shown:
                try:
                    shown = display_url(shown)  # no query string in logs: it may carry anything
                except NetError:
                    shown = "an unreadable URL"
            logger.debug("proxy refused %s %s: %s", event.method, shown, event.reason)


@dataclass
class ProxySession:
    """One render's hold on the proxy: its token, its domain rules and what it asked for."""

    token: str
    label: str
    #: ``refuse_host(host)``: why the operator's lists refuse ``host``, or None (``domains.refusal``).
    refuse_host: Callable[[str], str | None] | None = None
    events: list[ProxyEvent] = field(default_factory=list)

    def record(self, event: ProxyEvent) -> None:
        if len(self.events) < 1000:
            self.events.append(event)


#: The user name a session's browser context gives with its token (the token is the password).
SESSION_USER = "webtools"


def is_background_host(host: str, hosts: Iterable[str] = BACKGROUND_HOSTS) -> bool:
    host = host.lower().rstrip(".")
    return any(host == h or host.endswith("." + h) for h in hosts)


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        rules = self.server.rules
        deadline = time.monotonic() + rules.timeout
        sock.settimeout(rules.timeout)
        method = target = ""
        self.session: ProxySession | None = None
        try:
            head, rest = _read_head(sock)
            request_line, *header_lines = head.split(b"\r\n")
            try:
                method, target, version = request_line.decode("ascii").split(" ")
            except (UnicodeDecodeError, ValueError):
                raise Refused(400, "bad request line") from None
            headers = _parse_headers(header_lines)
            self.session = self._session(headers)
            if rules.sessions_only and self.session is None:
                raise Refused(407, "no render session: not a page's request",
                              (f'Proxy-Authenticate: Basic realm="{SESSION_USER}"',))
            if method == "CONNECT":
                self._connect(sock, target, rules, deadline, rest)
            else:
                self._forward(sock, method, target, headers, rules, rest)
        except Refused as err:
            self._record(rules, ProxyEvent(method, target, False, err.reason))
            _reply(sock, err.status, err.reason, err.headers)
        except (OSError, NetError) as err:
            logger.debug("proxy connection ended: %s", err)

    def _session(self, headers: list[tuple[str, str]]) -> ProxySession | None:
        """The live session whose token the request carries (``Proxy-Authorization: Basic``)."""
        for name, value in headers:
            if name.lower() != "proxy-authorization":
                continue
            scheme, _, encoded = value.partition(" ")
            if scheme.lower() != "basic":
                return None
            try:
                user, _, token = base64.b64decode(encoded.strip(), validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return None
            session = self.server.sessions.get(token) if user == SESSION_USER else None
            if session is not None and secrets.compare_digest(session.token, token):
                return session
            return None
        return None

    def _record(self, rules: ProxyRules, event: ProxyEvent) -> None:
        if self.session is not None:
            event.session = self.session.label
            self.session.record(event)
        rules.record(event)

    def _check(self, url: URL, rules: ProxyRules) -> None:
        if is_background_host(url.host, rules.background_hosts):
            raise Refused(403, "browser background traffic is not allowed")
        if self.session is not None and self.session.refuse_host is not None:
            why = self.session.refuse_host(url.host)
            if why:
                raise Refused(403, f"the address {url.host} is not allowed: {why}")

    def _connect(self, sock: socket.socket, authority: str, rules: ProxyRules, deadline: float,
                 rest: bytes) -> None:
        url = _read(f"https://{authority}/")
        if url.target != "/":
            raise Refused(400, "CONNECT needs host:port")
        if url.port not in rules.connect_ports:
            raise Refused(403, f"CONNECT to port {url.port} is not allowed")
        self._check(url, rules)
        try:
            upstream = self.server.client.connect(url, timeout=max(0.1, deadline - time.monotonic()))
        except AddressNotAllowed as err:
            raise Refused(403, str(err)) from err
        except NetError as err:
            raise Refused(502, str(err)) from err
        self._record(rules, ProxyEvent("CONNECT", authority, True))
        with upstream:
            sock.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            _relay(sock, upstream, deadline, rules.max_bytes)

    def _forward(self, sock: socket.socket, method: str, url: str, headers: list[tuple[str, str]],
                 rules: ProxyRules, rest: bytes) -> None:
        if not url.lower().startswith("http://"):
            # https goes through CONNECT; ws:// arrives as http:// with Upgrade, which is refused below.
            raise Refused(400, "only absolute http:// requests and CONNECT are served")
        if any(name.lower() == "upgrade" for name, _ in headers):
            raise Refused(403, "protocol upgrades (WebSocket) are only allowed through CONNECT")
        canonical = _read(url)
        self._check(canonical, rules)
        body = _read_body(sock, headers, rest)
        forwarded = {name: value for name, value in headers if name.lower() not in HOP_BY_HOP}
        try:
            response = self.server.client.open(
                method, str(canonical), headers=forwarded, data=body or None, timeout=rules.timeout, redirects="return",
            )
        except (AddressNotAllowed, InvalidURL) as err:
            raise Refused(403, str(err)) from err
        except FetchTimeout as err:
            raise Refused(504, str(err)) from err
        except NetError as err:
            raise Refused(502, str(err)) from err
        with response:
            try:
                data = b"" if method == "HEAD" else response.read(rules.max_bytes, on_too_large="error")
            except BodyTooLarge as err:
                raise Refused(502, str(err)) from err
            self._record(rules, ProxyEvent(method, str(canonical), True))
            lines = [f"HTTP/1.1 {response.status_code} {_reason(response.status_code)}"]
            for name, value in response.headers.items():
                if name.lower() not in RESPONSE_DROPPED:
                    lines.append(f"{name}: {value}")
            lines += [f"Content-Length: {len(data)}", "Connection: close", "", ""]
            sock.sendall("\r\n".join(lines).encode("latin-1", "replace") + data)


def _read(url: str) -> URL:
    """The one reading of a URL (``webtools.net.urls``), its refusals as a 400."""
    try:
        return read_url(url)
    except InvalidURL as err:
        raise Refused(400, str(err)) from err


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"


def _read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    buf = b""
    while b"\r\n\r\n" not in buf:
        if len(buf) > _HEAD_LIMIT:
            raise Refused(431, "request head too large")
        chunk = sock.recv(8192)
        if not chunk:
            raise OSError("closed before the request head")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    return head, rest


def _parse_headers(lines: list[bytes]) -> list[tuple[str, str]]:
    headers = []
    for line in lines:
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep or not name or name != name.strip():
            raise Refused(400, "bad header line")
        headers.append((name, value.strip()))
    return headers


def _read_body(sock: socket.socket, headers: list[tuple[str, str]], rest: bytes) -> bytes:
    values = {name.lower(): value for name, value in headers}
    if "transfer-encoding" in values:
        raise Refused(411, "chunked request bodies are not supported")
    length = values.get("content-length", "0")
    if not length.isdigit() or int(length) > _BODY_LIMIT:
        raise Refused(413, "request body too large")
    need = int(length)
    body = rest[:need]
    while len(body) < need:
        chunk = sock.recv(min(65536, need - len(body)))
        if not chunk:
            raise OSError("closed inside the request body")
        body += chunk
    return body


def _reply(sock: socket.socket, status: int, reason: str, headers: tuple[str, ...] = ()) -> None:
    text = f"webtools proxy: {reason}\n".encode("utf-8", "replace")
    extra = "".join(f"{header}\r\n" for header in headers)
    head = (f"HTTP/1.1 {status} {_reason(status)}\r\nContent-Type: text/plain; charset=utf-8\r\n{extra}"
            f"Content-Length: {len(text)}\r\nConnection: close\r\n\r\n").encode("ascii")
    try:
        sock.sendall(head + text)
    except OSError:
        pass


def _relay(a: socket.socket, b: socket.socket, deadline: float, max_bytes: int) -> None:
    """Copy bytes both ways until either side closes, the deadline passes or ``max_bytes`` went by."""
    moved = 0
    a.setblocking(False)
    b.setblocking(False)
    with selectors.DefaultSelector() as selector:
        selector.register(a, selectors.EVENT_READ, b)
        selector.register(b, selectors.EVENT_READ, a)
        while moved <= max_bytes:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            for key, _ in selector.select(timeout=min(left, 1.0)):
                try:
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                except (BlockingIOError, InterruptedError):
                    continue
                if not data:
                    return
                moved += len(data)
                key.data.setblocking(True)
                key.data.settimeout(max(0.1, deadline - time.monotonic()))
                key.data.sendall(data)
                key.data.setblocking(False)


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    client: HttpClient
    rules: ProxyRules
    sessions: dict[str, ProxySession]


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    client: HttpClient
    rules: ProxyRules
    sessions: dict[str, ProxySession]


class GuardingProxy:
    """A forward proxy on a loopback port or a Unix socket that sends everything through ``client``.

    ``client`` is the guarded client (``client_for(...)``): its address policy is the proxy's. Use as a
    context manager, or ``start()`` and ``close()``.
    """

    def __init__(self, client: HttpClient, rules: ProxyRules | None = None, *, unix_path: str | None = None):
        self.client = client
        self.rules = rules or ProxyRules()
        self.unix_path = unix_path
        if unix_path is not None:
            self._server: socketserver.BaseServer = _UnixServer(unix_path, _Handler)
            os.chmod(unix_path, 0o600)
        else:
            self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.client = client  # type: ignore[attr-defined]
        self._server.rules = self.rules  # type: ignore[attr-defined]
        self.sessions: dict[str, ProxySession] = {}
        self._server.sessions = self.sessions  # type: ignore[attr-defined]
        self._labels = 0
        self._thread: threading.Thread | None = None

    def open_session(self, refuse_host: Callable[[str], str | None] | None = None) -> ProxySession:
        """A new session: requests carrying its token (``Proxy-Authorization: Basic`` of
        ``SESSION_USER`` and the token) are held to ``refuse_host`` until ``close_session``."""
        self._labels += 1
        session = ProxySession(secrets.token_urlsafe(24), f"render-{self._labels}", refuse_host)
        self.sessions[session.token] = session
        return session

    def close_session(self, session: ProxySession) -> None:
        """End ``session``: its token is refused from now on."""
        self.sessions.pop(session.token, None)

    @property
    def address(self) -> str:
        """``host:port`` for a TCP proxy, the socket path for a Unix one."""
        if self.unix_path is not None:
            return self.unix_path
        host, port = self._server.server_address[:2]  # type: ignore[misc]
        return f"{host}:{port}"

    def start(self) -> GuardingProxy:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="webtools-proxy", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(5)
            self._thread = None
        self._server.server_close()
        if self.unix_path is not None:
            try:
                os.unlink(self.unix_path)
            except FileNotFoundError:
                pass

    def __enter__(self) -> GuardingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
