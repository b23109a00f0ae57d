"""One deadline for the whole exchange: connect, status line, headers and body.

Owns ``_Deadline`` (the single deadline of one ``open()`` or ``follow()``, with the caller's cancel
signal), the thread-local through which the connection classes find the deadline of the request being
sent, and the raw reader under http.client that waits for each ``recv`` at most until the deadline, so a
server trickling bytes is cut off. Used by ``connection`` (dialling), ``response`` (reading the body) and
``client``. May import only ``errors`` and ``urls`` of ``webtools.net``.
"""
from __future__ import annotations

import http.client
import io
import socket
import threading
import time
from typing import Any, Protocol

from .errors import Cancelled, FetchTimeout
from .urls import URL, display_url

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

    __slots__ = ("timeout", "at", "cancel", "url", "reused")
    url: URL | str
    #: Whether the request now being sent went out on a kept-alive connection that had carried an
    #: earlier request (set by the connection classes; ``client`` may send such a request again).
    reused: bool

    def __init__(self, timeout: float, cancel: CancelSignal | None):
        if timeout is None or timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        self.timeout = timeout
        self.at = time.monotonic() + timeout
        self.cancel = cancel
        self.url = ""
        self.reused = False

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
