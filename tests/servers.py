"""Loopback HTTP servers that stand in for the web in tests (nothing here reaches the internet).

A server is a thread on 127.0.0.1 (or ``::1``, or another loopback address such as 127.0.0.2) with a
random port and a route table::

    from tests.servers import LoopbackServer, Reply, redirect, raw, trickle

    with LoopbackServer({
        "/": Reply(200, {"Content-Type": "text/html"}, "<p>hello</p>"),
        "/old": redirect("/"),                      # 302 with a Location header
        "/api": lambda req: Reply(200, {}, req.query),  # computed from the request
        "/slow": trickle(b"x" * 100, delay=0.05),   # raw: body written a byte at a time
    }) as server:
        server.url("/old")          # "http://127.0.0.1:PORT/old"
        server.requests             # [Recorded(method, path, query, headers, body), ...] in arrival order
        server.hits("/")            # how many requests reached "/"

Route values:

- ``Reply(status, headers, body)`` or a plain ``(status, headers, body)`` tuple. ``body`` is bytes, str
  (UTF-8) or an iterable of bytes, which is streamed with chunked encoding (or as it comes when the
  headers carry ``Content-Length`` or ``Connection: close``), so tests can serve bodies far larger than
  memory.
- a callable ``(Recorded) -> Reply | tuple``.
- ``raw(fn)``: ``fn(request: Recorded, handler)`` writes the whole response itself to ``handler.wfile``
  (malformed responses, trickled headers, hanging servers); the connection is closed afterwards.

A ``"*"`` route answers every path without its own route; other paths get 404. ``server.route(path,
value)`` adds routes after start. Pytest fixture: ``from tests.servers import http_server  # noqa: F401``
in a test module gives each test that asks for ``http_server`` an empty server on 127.0.0.1 (add routes
with ``route``). ``LoopbackServer(tls=context)`` serves HTTPS;
``make_tls_context(tmp_path, ["public.test"])`` makes a test CA and a certificate for those names and
returns ``(server_context, ca_file)``; ``server.sni_names`` records the SNI names clients sent.
"""
from __future__ import annotations

import datetime
import email.message
import http.server
import socket
import ssl
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Union

import pytest

__all__ = [
    "InFlight",
    "LoopbackServer",
    "Recorded",
    "Reply",
    "brotli_bomb",
    "gzip_bomb",
    "http_server",
    "ipv6_available",
    "make_tls_context",
    "raw",
    "redirect",
    "trickle",
    "trickle_headers",
]


@dataclass
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    query: str
    headers: email.message.Message
    body: bytes
    client: tuple = ()


class Reply(NamedTuple):
    status: int = 200
    headers: Mapping[str, str] = {}
    body: Union[bytes, str, Iterable[bytes]] = b""


@dataclass(frozen=True)
class raw:  # noqa: N801 - reads as a marker in route tables: raw(fn)
    """A handler that writes the whole response itself: ``fn(request, handler)``."""

    fn: Callable[[Recorded, http.server.BaseHTTPRequestHandler], None]


Route = Union[Reply, tuple, Callable[[Recorded], Any], raw]


def redirect(location: str, status: int = 302) -> Reply:
    return Reply(status, {"Location": location, "Content-Length": "0"}, b"")


def trickle(body: bytes, delay: float, headers: Mapping[str, str] | None = None) -> raw:
    """Headers at once, then the body one byte every ``delay`` seconds (a slowloris-style server). It says
    ``Connection: close``, as it does close (a raw route's connection is not kept): a client that took the
    connection for kept sent its next request into one being closed, and failed by chance (a landing run
    and a fresh-clone run failed so on the budget test's redirect chain)."""

    def write(request: Recorded, handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        for name, value in {"Content-Length": str(len(body)), "Connection": "close", **(headers or {})}.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.flush()
        for i in range(len(body)):
            time.sleep(delay)
            handler.wfile.write(body[i:i + 1])
            handler.wfile.flush()

    return raw(write)


def trickle_headers(delay: float, count: int = 1000) -> raw:
    """A status line, then header lines one every ``delay`` seconds, never ending the headers."""

    def write(request: Recorded, handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        handler.wfile.flush()
        for i in range(count):
            time.sleep(delay)
            handler.wfile.write(b"X-Slow-%d: x\r\n" % i)
            handler.wfile.flush()

    return raw(write)


def gzip_bomb(size: int, block: int = 1 << 20) -> Reply:
    """``size`` bytes of zeros, gzip-compressed and generated as it is sent (1 GB is about 1 MB on the
    wire). Each block ends with a full flush, which resets the compressor, so every block after the
    first compresses to the same bytes: compress two, repeat the second."""

    def body() -> Iterator[bytes]:
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
        zeros = bytes(block)
        first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
        repeat = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
        blocks = size // block
        yield first
        for _ in range(blocks - 1):
            yield repeat
        tail = bytes(size - blocks * block)
        yield compressor.compress(tail) + compressor.flush()  # trailer: CRC32 and size of the whole

    return Reply(200, {"Content-Type": "text/plain", "Content-Encoding": "gzip"}, body())


def brotli_bomb(size: int, block: int = 1 << 20) -> Reply:
    """``size`` bytes of zeros, brotli-compressed as it is sent."""
    import brotli

    def body() -> Iterator[bytes]:
        compressor = brotli.Compressor(quality=1)
        zeros = bytes(block)
        for _ in range(size // block):
            out = compressor.process(zeros) + compressor.flush()
            if out:
                yield out
        yield compressor.finish()

    return Reply(200, {"Content-Type": "text/plain", "Content-Encoding": "br"}, body())


def ipv6_available() -> bool:
    """Whether this machine can listen on ``::1``."""
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so clients' connection pools are exercised
    # Headers and body go out in separate writes; with Nagle on, the second waits for the client's
    # delayed ACK (~40 ms per response on Linux).
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        tls = self.server.owner.tls
        if tls is not None:
            self.request.settimeout(10)
            self.request = tls.wrap_socket(self.request, server_side=True)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is not None:
            return self.rfile.read(int(length))
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return b""

    def _dispatch(self) -> None:
        path, _, query = self.path.partition("?")
        request = Recorded(self.command, path, query, self.headers, self._read_body(), self.client_address)
        owner = self.server.owner
        with owner._lock:
            owner.requests.append(request)
        route = owner.routes.get(path, owner.routes.get("*"))
        try:
            if route is None:
                self._write(Reply(404, {"Content-Type": "text/plain"}, b"not found"))
            elif isinstance(route, raw):
                self.close_connection = True
                route.fn(request, self)
            else:
                reply = route(request) if callable(route) and not isinstance(route, tuple) else route
                self._write(Reply(*reply))
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True  # the client went away: that is what many tests are about

    def _write(self, reply: Reply) -> None:
        status, headers, body = reply
        headers = dict(headers)
        names = {k.lower() for k in headers}
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.send_response(status)
        if isinstance(body, (bytes, bytearray)):
            if "content-length" not in names:
                headers["Content-Length"] = str(len(body))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            return
        chunked = "content-length" not in names and headers.get("Connection", "").lower() != "close"
        if chunked:
            headers["Transfer-Encoding"] = "chunked"
        elif "content-length" not in names:
            self.close_connection = True
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command == "HEAD":
            return
        for chunk in body:
            if not chunk:
                continue
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _dispatch


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # trickling handlers end on their own when the client hangs up
    allow_reuse_address = True
    owner: LoopbackServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up mid-response is expected, not a test failure


@dataclass
class LoopbackServer:
    """A threaded HTTP(S) server on a loopback address; a context manager (see the module docstring)."""

    routes: dict[str, Route] = field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = 0
    tls: ssl.SSLContext | None = None
    requests: list[Recorded] = field(default_factory=list, init=False)
    sni_names: list[str | None] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.routes = dict(self.routes)
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        if self.tls is not None:
            self.tls.sni_callback = self._record_sni

    def _record_sni(self, sslsocket: Any, name: str | None, context: Any) -> None:
        with self._lock:
            self.sni_names.append(name)

    def start(self) -> LoopbackServer:
        server_class = type("_ServerV6", (_Server,), {"address_family": socket.AF_INET6}) \
            if ":" in self.host else _Server
        self._server = server_class((self.host, self.port), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"loopback-server-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    def url(self, path: str = "/", host: str | None = None) -> str:
        """The URL of ``path`` here; ``host`` replaces the address (a fake name, a numeric spelling)."""
        if host is None:
            return self.origin + path
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def route(self, path: str, value: Route) -> None:
        self.routes[path] = value

    def hits(self, path: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if path is None or r.path == path)


def _san(x509: Any, name: str) -> Any:
    """A certificate's name for ``name``: an IP address entry for an address, else a DNS name."""
    import ipaddress

    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def make_tls_context(directory: Any, hostnames: Iterable[str]) -> tuple[ssl.SSLContext, str]:
    """A throwaway CA and a certificate for ``hostnames`` (names or IP addresses) signed by it, written
    under ``directory``.

    Returns the server's SSL context and the CA file a client must trust.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder().subject_name(name("webtools test CA")).issuer_name(name("webtools test CA"))
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    hostnames = list(hostnames)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(name(hostnames[0])).issuer_name(ca_cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([_san(x509, h) for h in hostnames]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file = f"{directory}/ca.pem"
    cert_file = f"{directory}/server.pem"
    key_file = f"{directory}/server.key"
    with open(ca_file, "wb") as f:
        f.write(ca_cert.public_bytes(serialization.Encoding.PEM))
    with open(cert_file, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_file, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return context, ca_file


@pytest.fixture
def http_server() -> Iterator[LoopbackServer]:
    """An empty loopback server on 127.0.0.1; add routes with ``http_server.route(path, value)``."""
    with LoopbackServer() as server:
        yield server


class InFlight:
    """A route that answers ``reply`` after ``delay`` seconds and remembers the most requests it was
    answering at once (``most``): what a test of a concurrency limit asserts."""

    def __init__(self, reply: Reply, delay: float = 0.2) -> None:
        self.reply, self.delay = reply, delay
        self.now = self.most = 0
        self._lock = threading.Lock()

    def __call__(self, request: Recorded) -> Reply:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.delay)
        with self._lock:
            self.now -= 1
        return self.reply
