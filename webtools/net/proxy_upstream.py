"""Outbound proxies: the operator's proxy between webtools and the web, with the guard kept whole.

``UpstreamProxy.read(url)`` reads ``http://``, ``https://`` or ``socks5://`` proxy URLs (credentials in
the URL's user info); ``str()`` and ``repr()`` never show the credentials. ``ProxiedAdapter`` is the
``requests`` adapter of a client with a proxy: urllib3's ``ProxyManager`` (HTTP and HTTPS proxies) or
``SOCKSProxyManager`` (PySocks) carry the requests.

For a guarded client the guard decides before the proxy hears anything: the target's name is resolved
and every address checked (a private target is refused here), and the proxy is then asked for one of
those addresses by IP, never by name, so it cannot resolve the name to somewhere else:

- https: ``CONNECT 93.184.215.14:443`` (or SOCKS5 to that address), then TLS inside the tunnel with the
  host name as SNI and as the name the certificate must carry;
- http through an HTTP(S) proxy: ``GET http://93.184.215.14/path`` with ``Host: example.com``; through a
  SOCKS proxy, a tunnel to the address and an ordinary request with that Host header.

The plain client (the operator's own endpoints: engines, rendering services) asks its proxy by name,
as any proxied client does. The proxy's own address is the operator's choice and is not checked.

May import ``connection``, ``deadline``, ``errors``, ``policy`` and ``urls`` of ``webtools.net``.
"""
from __future__ import annotations

import base64
import socket
import ssl
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager, ProxyManager

from .connection import _DeadlineConnectionMixin, _Guard
from .deadline import _current_deadline, _Deadline
from .errors import ConnectionFailed
from .urls import URL

SCHEMES = ("http", "https", "socks5")
DEFAULT_PORTS = {"http": 8080, "https": 443, "socks5": 1080}
#: The most of a CONNECT answer's head read before the tunnel is given up.
MAX_CONNECT_HEAD = 16 * 1024


@dataclass(frozen=True)
class UpstreamProxy:
    """An outbound proxy: scheme, host, port and credentials. Its text forms show no credentials."""

    scheme: str
    host: str
    port: int
    username: str = field(default="", repr=False)
    password: str = field(default="", repr=False, compare=True)

    @classmethod
    def read(cls, url: str) -> UpstreamProxy:
        """The proxy of ``url``, or ``ValueError`` saying what is wrong without repeating the URL (which
        may hold a password)."""
        if not isinstance(url, str) or not url.strip():
            raise ValueError("A proxy URL must be a non-empty string.")
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError as err:
            raise ValueError("The proxy URL cannot be read (its host or port is malformed).") from err
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES:
            raise ValueError(f"A proxy URL must start with http://, https:// or socks5://, not {scheme or 'nothing'}.")
        if not parts.hostname:
            raise ValueError("The proxy URL names no host.")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError("A proxy URL is scheme://[user:password@]host[:port], with no path or query.")
        return cls(scheme, parts.hostname, port or DEFAULT_PORTS[scheme],
                   unquote(parts.username or ""), unquote(parts.password or ""))

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def url(self) -> str:
        """The proxy's URL without credentials, for urllib3."""
        return str(self)

    def authorization(self) -> dict[str, str]:
        """``Proxy-Authorization: Basic ...`` for an HTTP(S) proxy with credentials (RFC 9110 11.7.1)."""
        if not self.username and not self.password:
            return {}
        token = base64.b64encode(f"{self.username}:{self.password}".encode()).decode("ascii")
        return {"Proxy-Authorization": f"Basic {token}"}

    def manager(self, **pool_kw: Any) -> PoolManager:
        """urllib3's manager for this proxy, with connections that keep the request's one deadline."""
        if self.scheme == "socks5":
            from urllib3.contrib.socks import SOCKSProxyManager

            manager: PoolManager = SOCKSProxyManager(
                str(self), username=self.username or None, password=self.password or None, **pool_kw)
            manager.pool_classes_by_scheme = _socks_pools()
            return manager
        manager = ProxyManager(self.url, proxy_headers=self.authorization(), **pool_kw)
        manager.pool_classes_by_scheme = dict(_POOLS)
        return manager

    def tunnel(self, address: str, port: int, timeout: float, ca_certs: str | None = None) -> socket.socket:
        """A raw tunnel through the proxy to ``address`` (an IP checked by the guard, or an admin-set name)
        and ``port``: for the guarding proxy's CONNECT, whose bytes it relays. An HTTPS proxy's
        certificate is checked against ``ca_certs`` (the client's bundle), else the system's CAs, as
        urllib3 checks it for requests."""
        if self.scheme == "socks5":
            import socks

            return socks.create_connection(
                (address, port), timeout=timeout, proxy_type=socks.SOCKS5, proxy_addr=self.host,
                proxy_port=self.port, proxy_username=self.username or None,
                proxy_password=self.password or None, proxy_rdns=False)
        sock = socket.create_connection((self.host, self.port), timeout=timeout)
        try:
            if self.scheme == "https":
                sock = ssl.create_default_context(cafile=ca_certs).wrap_socket(sock, server_hostname=self.host)
            authority = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
            head = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}",
                    *(f"{name}: {value}" for name, value in self.authorization().items())]
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            answer = _read_head(sock)
            status = answer.split(b" ", 2)[1] if answer.count(b" ") >= 1 else b""
            if status != b"200":
                raise ConnectionFailed(f"The proxy {self} refused the tunnel to {authority} "
                                       f"(HTTP {status.decode('ascii', 'replace')[:3] or '?'}).")
        except BaseException:
            sock.close()
            raise
        return sock


def _read_head(sock: socket.socket) -> bytes:
    """The status line and headers of a CONNECT answer, read a byte at a time so that nothing of the
    tunnel after them is taken."""
    head = bytearray()
    while not head.endswith(b"\r\n\r\n"):
        byte = sock.recv(1)
        if not byte or len(head) > MAX_CONNECT_HEAD:
            raise ConnectionFailed("The proxy closed the connection before opening the tunnel.")
        head += byte
    return bytes(head)


# Connections to the proxy (or through SOCKS) that read the answer under the request's one deadline. They
# are not the guard's: the socket's peer is the operator's proxy; the target was checked before.


def _deadline_pool(pool: type, connection: type) -> type:
    """A pool of ``pool``'s kind whose connections are ``connection``, kept to the request's deadline."""
    kept = type(f"Deadline{connection.__name__}", (_DeadlineConnectionMixin, connection), {})
    return type(f"Deadline{pool.__name__}", (pool,), {"ConnectionCls": kept})


_POOLS = {"http": _deadline_pool(HTTPConnectionPool, HTTPConnection),
          "https": _deadline_pool(HTTPSConnectionPool, HTTPSConnection)}


def _socks_pools() -> dict[str, type]:
    from urllib3.contrib.socks import SOCKSConnection, SOCKSHTTPSConnection

    return {"http": _deadline_pool(HTTPConnectionPool, SOCKSConnection),
            "https": _deadline_pool(HTTPSConnectionPool, SOCKSHTTPSConnection)}


# The address the adapter chose for the request this thread is sending (one adapter serves many threads).
_pinned = threading.local()


class ProxiedAdapter(HTTPAdapter):
    """The ``requests`` adapter of a client with a proxy. For a guarded client, each request's target
    (the URL the client is sending, from its deadline) is resolved and checked by the guard, and the
    proxy is asked for the first checked address, the Host header and TLS keeping the name."""

    def __init__(self, guard: _Guard, proxy: UpstreamProxy, **kwargs: Any):
        self._guard = guard
        self._proxy = proxy
        super().__init__(**kwargs)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        self._pool_connections, self._pool_maxsize, self._pool_block = connections, maxsize, block
        self.poolmanager = self._proxy.manager(num_pools=connections, maxsize=maxsize, block=block, **pool_kwargs)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        raise ConnectionFailed("Proxies are set on the client, not per request.")

    def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        url = _current_deadline().url  # type: ignore[union-attr]
        try:
            response = super().send(request, *args, **kwargs)
        except requests.exceptions.ProxyError as err:
            raise ConnectionFailed(f"The outbound proxy {self._proxy} could not open the way to "
                                   f"{url.display()}.") from err
        if response.status_code == 407 and self._proxy.scheme != "socks5" and url.scheme == "http":
            response.close()
            raise ConnectionFailed(f"The outbound proxy {self._proxy} refused its credentials (HTTP 407).")
        return response

    def _target(self) -> tuple[URL, str]:
        deadline = _current_deadline()
        if deadline is None or not isinstance(deadline.url, URL):
            raise ConnectionFailed("A proxied request was sent outside the client.")
        url = deadline.url
        if self._guard.policy is None:
            return url, url.host
        return url, str(self._guard.addresses(url.host, url.port, deadline)[0])

    def get_connection_with_tls_context(self, request: Any, verify: Any, proxies: Any = None, cert: Any = None):
        url, address = self._target()
        _scheme, pool_kwargs = self.build_connection_pool_key_attributes(request, verify, cert)
        if url.scheme == "https" and address != url.host:
            # TLS with the name: SNI and the certificate check are the host's, not the address's.
            pool_kwargs = {**pool_kwargs, "server_hostname": url.host, "assert_hostname": url.host}
        request.headers["Host"] = url.netloc
        _pinned.address = address
        return self.poolmanager.connection_from_host(address, url.port, url.scheme, pool_kwargs=pool_kwargs)

    def request_url(self, request: Any, proxies: Any) -> str:
        url, address = _current_deadline().url, _pinned.address  # type: ignore[union-attr]
        if url.scheme == "http" and self._proxy.scheme != "socks5":
            host = f"[{address}]" if ":" in address else address
            port = "" if url.port == 80 else f":{url.port}"
            return f"http://{host}{port}{url.target}"  # absolute form, to the pinned address
        return url.target


def pinned_tunnel(guard: _Guard, proxy: UpstreamProxy, url: URL, deadline: _Deadline, timeout: float,
                  ca_certs: str | None = None) -> socket.socket:
    """A raw tunnel to ``url``'s host through ``proxy``: to its first checked address for a guarded
    client, by name for the plain one."""
    address = url.host if guard.policy is None else str(guard.addresses(url.host, url.port, deadline)[0])
    try:
        return proxy.tunnel(address, url.port, timeout, ca_certs)
    except ConnectionFailed:
        raise
    except OSError as err:
        raise ConnectionFailed(f"The proxy {proxy} could not open a tunnel to {url.display()}.") from err
