"""Logging outbound proxies on 127.0.0.1, standing in for an operator's egress proxy in tests.

``HttpProxy`` speaks HTTP/1.1 proxying: ``CONNECT host:port`` tunnels and absolute-form requests
(``GET http://host:port/path``), which it forwards with the client's Host header as received.
``Socks5Proxy`` speaks SOCKS5 (RFC 1928) with no authentication or user name and password (RFC 1929).
Both record what they were asked for in ``log`` (``"CONNECT 127.0.0.1:4433"``, ``"GET
http://127.0.0.1:8080/x"``, ``"SOCKS 127.0.0.1:8080"``) and the credentials they received in
``credentials``; ``names`` maps host names a client asks for by name to the address the proxy uses,
and a name not in it is refused. Nothing here reaches beyond loopback.
"""
from __future__ import annotations

import base64
import ipaddress
import selectors
import socket
import socketserver
import ssl
import struct
import threading

__all__ = ["HttpProxy", "Socks5Proxy"]


def _relay(a: socket.socket, b: socket.socket) -> None:
    with selectors.DefaultSelector() as selector:
        selector.register(a, selectors.EVENT_READ, b)
        selector.register(b, selectors.EVENT_READ, a)
        while True:
            events = selector.select(timeout=10)
            if not events:
                return
            for key, _ in events:
                data = key.fileobj.recv(65536)
                # A TLS socket may hold decrypted bytes that select() cannot see: drain them too.
                while isinstance(key.fileobj, ssl.SSLSocket) and key.fileobj.pending():
                    data += key.fileobj.recv(65536)
                if not data:
                    return
                key.data.sendall(data)


def _read_head(sock: socket.socket) -> bytes:
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            break
        head += chunk
    return head


class _Proxy:
    def __init__(self, *, username: str = "", password: str = "", names: dict[str, str] | None = None,
                 tls: ssl.SSLContext | None = None):
        self.username, self.password = username, password
        self.tls = tls
        self.names = dict(names or {})
        self.log: list[str] = []
        self.credentials: list[tuple[str, str]] = []
        self.headers: list[dict[str, str]] = []
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    sock = self.request
                    if owner.tls is not None:
                        sock = owner.tls.wrap_socket(sock, server_side=True)
                    owner._handle(sock)
                except OSError:
                    pass

        class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _address(self, host: str) -> str | None:
        try:
            return str(ipaddress.ip_address(host.strip("[]")))
        except ValueError:
            return self.names.get(host)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class HttpProxy(_Proxy):
    """An HTTP proxy; with ``tls`` (a server context), an HTTPS proxy: TLS to the proxy itself."""

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    def url(self, with_credentials: bool = True) -> str:
        auth = f"{self.username}:{self.password}@" if with_credentials and self.username else ""
        return f"{self.scheme}://{auth}127.0.0.1:{self.port}"

    def _handle(self, sock: socket.socket) -> None:
        head = _read_head(sock)
        if not head:
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target, _version = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        self.log.append(f"{method} {target}")
        self.headers.append(headers)
        auth = headers.get("proxy-authorization", "")
        if auth.startswith("Basic "):
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            self.credentials.append((user, password))
        if self.username and auth != "Basic " + base64.b64encode(
                f"{self.username}:{self.password}".encode()).decode():
            sock.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n"
                         b"Proxy-Authenticate: Basic realm=\"egress\"\r\nConnection: close\r\n\r\n")
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            address = self._address(host)
            if address is None:
                sock.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            upstream = socket.create_connection((address, int(port)), timeout=10)
            sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            with upstream:
                _relay(sock, upstream)
            return
        # Absolute form: forward to the URL's authority, the client's headers (Host included) as they are.
        rest = target.split("://", 1)[1]
        authority, _, path = rest.partition("/")
        host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "80")
        address = self._address(host)
        if address is None:
            sock.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        kept = [line for line in lines[1:] if line and not line.lower().startswith(("proxy-", "connection:"))]
        request = "\r\n".join([f"{method} /{path} HTTP/1.1", *kept, "Connection: close"]) + "\r\n\r\n"
        with socket.create_connection((address, int(port or 80)), timeout=10) as upstream:
            upstream.sendall(request.encode("latin-1"))
            while True:
                data = upstream.recv(65536)
                if not data:
                    break
                sock.sendall(data)


class Socks5Proxy(_Proxy):
    scheme = "socks5"

    def url(self, with_credentials: bool = True) -> str:
        auth = f"{self.username}:{self.password}@" if with_credentials and self.username else ""
        return f"socks5://{auth}127.0.0.1:{self.port}"

    def _recv(self, sock: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise OSError("closed")
            data += chunk
        return data

    def _handle(self, sock: socket.socket) -> None:
        _version, count = self._recv(sock, 2)
        methods = self._recv(sock, count)
        wanted = 2 if self.username else 0
        if wanted not in methods:
            sock.sendall(b"\x05\xff")
            return
        sock.sendall(bytes([5, wanted]))
        if wanted == 2:
            _v, ulen = self._recv(sock, 2)
            user = self._recv(sock, ulen).decode()
            (plen,) = self._recv(sock, 1)
            password = self._recv(sock, plen).decode()
            self.credentials.append((user, password))
            ok = (user, password) == (self.username, self.password)
            sock.sendall(b"\x01\x00" if ok else b"\x01\x01")
            if not ok:
                return
        _v, command, _r, kind = self._recv(sock, 4)
        if kind == 1:
            host = socket.inet_ntop(socket.AF_INET, self._recv(sock, 4))
        elif kind == 4:
            host = socket.inet_ntop(socket.AF_INET6, self._recv(sock, 16))
        else:
            (length,) = self._recv(sock, 1)
            host = self._recv(sock, length).decode()
        (port,) = struct.unpack("!H", self._recv(sock, 2))
        self.log.append(f"SOCKS {host}:{port}" if kind != 3 else f"SOCKS name {host}:{port}")
        address = self._address(host)
        if command != 1 or address is None:
            sock.sendall(b"\x05\x04\x00\x01" + bytes(6))
            return
        upstream = socket.create_connection((address, port), timeout=10)
        sock.sendall(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack("!H", port))
        with upstream:
            _relay(sock, upstream)
