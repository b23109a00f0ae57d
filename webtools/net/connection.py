"""Where the address check happens: the guard and the urllib3 connection classes that call it.

Not on the URL's host name, which parsers disagree about, but in the connection class that urllib3 asks
for a socket (see docs/security.md). ``_Guard`` resolves the host once, refuses when *any* address is
refused (so a name cannot hide a private address behind a public one), dials only the addresses it
checked (no second lookup, so DNS rebinding has nothing to rebind), and checks the connected socket's
peer address before the first byte is sent (and again before each request on a reused keep-alive
connection). TLS is unchanged: the certificate is verified against the host name, which is also the
SNI name. The pools, pool manager and ``requests`` adapter here carry the guard to every connection and
refuse per-request proxies (a client's outbound proxy is ``proxy_upstream``'s, which keeps the guard).

May import ``deadline``, ``errors`` and ``policy`` of ``webtools.net``; the client imports this.
"""
from __future__ import annotations

import concurrent.futures
import errno
import socket
import sys
import threading
from typing import Any, Callable, Iterable

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager

from .deadline import _current_deadline, _Deadline, _DeadlineHTTPResponse
from .errors import AddressNotAllowed, ConnectionFailed, no_address, no_name_server, no_route
from .policy import AddressPolicy, IPAddress, parse_address

Resolver = Callable[[str, int], Iterable[str]]

#: getaddrinfo's answers that the name has no address, and that no name server could be asked.
_NO_SUCH_NAME = {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}
_NAME_SERVER_DOWN = {socket.EAI_AGAIN, socket.EAI_FAIL}
#: connect's errors that mean no route: this server is not on a network that leads there.
_NO_ROUTE = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN}


def _connect_failed(where: str, err: OSError | None) -> ConnectionFailed:
    """What the last failed ``connect`` to ``where`` (``host:port``) says, in words."""
    if isinstance(err, ConnectionRefusedError):
        return ConnectionFailed(f"{where} refused the connection: nothing accepts connections on that port.",
                                ConnectionFailed.REFUSED)
    if isinstance(err, ConnectionResetError):
        return ConnectionFailed(f"{where} reset the connection.", ConnectionFailed.RESET)
    if isinstance(err, TimeoutError):
        return ConnectionFailed(f"{where} did not accept the connection in time.")
    if err is not None and err.errno in _NO_ROUTE:
        return ConnectionFailed(no_route(where), ConnectionFailed.UNREACHABLE)
    return ConnectionFailed(f"Could not connect to {where}.")


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``getaddrinfo`` gives for ``host``, in its order, each once."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


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
                allowed, reason = self.policy.verdict(address, host)
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
        except socket.gaierror as err:
            if err.errno in _NO_SUCH_NAME:
                raise ConnectionFailed(no_address(host), ConnectionFailed.NO_ADDRESS) from err
            if err.errno in _NAME_SERVER_DOWN:
                raise ConnectionFailed(no_name_server(host), ConnectionFailed.NAME_SERVICE) from err
            raise ConnectionFailed(f"The host {host} could not be found.") from err
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
                self.check_peer(sock, host)
            except BaseException:
                sock.close()
                raise
            return sock
        raise _connect_failed(_host_port(host.strip("[]"), port), last_error) from last_error

    def check_peer(self, sock: socket.socket, host: str | None = None) -> None:
        """The last word: the address this socket is actually connected to (for the name ``host``)."""
        if self.policy is None:
            return
        peer = sock.getpeername()[0]
        allowed, reason = self.policy.verdict(peer, host)
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


class _DeadlineConnectionMixin:
    """Reads the answer, and sends, under the one deadline of the request being sent."""

    response_class = _DeadlineHTTPResponse
    #: The socket the last request went out on: a request sent on the same one again is on a reused
    #: keep-alive connection (``self.sock`` alone does not say it: urllib3 opens a new HTTPS
    #: connection before it sends on it).
    _sent_on: socket.socket | None = None

    def request(self, *args: Any, **kwargs: Any) -> None:
        deadline = _current_deadline()
        if deadline is not None:
            deadline.reused = self.sock is not None and self.sock is self._sent_on  # type: ignore[attr-defined]
        super().request(*args, **kwargs)  # type: ignore[misc]
        self._sent_on = self.sock  # type: ignore[attr-defined]

    def send(self, data: Any) -> None:
        deadline = _current_deadline()
        if deadline is not None and self.sock is not None:  # type: ignore[attr-defined]
            self.sock.settimeout(deadline.check())  # type: ignore[attr-defined]
        super().send(data)  # type: ignore[misc]


class _GuardedConnectionMixin(_DeadlineConnectionMixin):
    """Replaces urllib3's ``create_connection`` (which would resolve the name again) with a dial of
    the addresses the guard checked, then checks the peer before anything is written."""

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
            self._guard.check_peer(self.sock, self._dns_host)  # type: ignore[attr-defined]
        super().request(*args, **kwargs)  # type: ignore[misc]


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
