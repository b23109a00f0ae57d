"""The streamable HTTP door: MCP at ``/mcp/`` in front of the host's Django ASGI application.

``mount_mcp(get_asgi_application())`` returns an ASGI application that answers ``/mcp/`` with the SDK's
``StreamableHTTPSessionManager`` and passes every other request to Django. Each MCP request carries the
user's DRF token (``Authorization: Bearer <key>`` or ``Authorization: Token <key>``), checked by DRF's
own ``TokenAuthentication`` before the SDK sees the request: a missing or bad token is answered 401
and reaches no session. A session belongs to the user who opened it: the SDK answers 404 to a request
for it with another user's token. Each session is one conversation (``server.Conversation``), each of its
requests a turn with that user's roles, switches, engine and keys as they are at that moment.

Before the SDK sees a body, the door reads it with the project's own JSON limits (``json_input``):
nesting past ``MAX_DEPTH``, a number too long to convert, bytes that are not UTF-8 or text that cannot be
stored are answered 400 with a JSON-RPC parse error, never a 500. A user has at most
``WEBTOOLS["MCP"]["SESSIONS_PER_USER"]`` sessions open (opening one more closes their oldest idle one, or
is answered 429 with ``Retry-After`` when all are busy), and a session lives at most ``SESSION_MAX_AGE``
seconds: after that its id answers 404 and the client opens a new one.

A request for ``2026-07-28`` (its ``MCP-Protocol-Version`` header) has no session: it passes the same
token check and body limits, then goes to the SDK's single-exchange path, and its conversation is kept
in Django's cache (``stateless``); the session cap and age do not apply to it.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from webtools import conf
from webtools.runtime import json_input

from .server import build_server, user_turn, with_database

logger = logging.getLogger("webtools.mcp")

PATH = "/mcp/"
#: The scope key holding the Django user the request's token belongs to.
USER_KEY = "webtools.user"
KEYWORDS = (b"bearer", b"token")
UNAUTHORIZED = "Send the user's API token: Authorization: Bearer <token>."
TOO_MANY_SESSIONS = "Too many open MCP sessions for this user, all of them busy: retry later."
EXPIRED = "Session not found: it reached its maximum age. Open a new session."
#: The largest body read (the SDK's own default limit).
MAX_BODY_BYTES = 4 * 1024 * 1024
#: Seconds a client is told to wait when all its sessions are busy.
RETRY_AFTER = 5
#: JSON-RPC's codes for a body that is not JSON, and for a refused request.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def _start_turn(user: Any, conversation: str, **carried: Any):
    return user_turn(user, conversation, **carried)


def _user_for(context: Any) -> Any:
    return context.request.scope[USER_KEY]


def _conversation_for(context: Any) -> str:
    session = context.request.headers.get("mcp-session-id") or ""
    return f"mcp-{session}" if session else "mcp"


def _authenticate(key: str) -> Any:
    """The active user owning the DRF token ``key``, or None (DRF's own check: unknown key, inactive
    user)."""
    from rest_framework.authentication import TokenAuthentication
    from rest_framework.exceptions import AuthenticationFailed

    try:
        user, _token = TokenAuthentication().authenticate_credentials(key)
    except AuthenticationFailed:
        return None
    return user


def token_from(scope: dict) -> str | None:
    """The key of an ``Authorization: Bearer|Token <key>`` header, or None."""
    for name, value in scope.get("headers") or ():
        if name.lower() == b"authorization":
            parts = value.split()
            if len(parts) == 2 and parts[0].lower() in KEYWORDS:
                try:
                    return parts[1].decode("ascii")
                except UnicodeDecodeError:
                    return None
    return None


@dataclass
class _Session:
    """What the door knows of an open session: whose it is, its age, whether a request is in flight."""

    user: Any
    opened: float
    last: float
    busy: int = 0


class MCPMount:
    """ASGI: ``/mcp/`` to the MCP session manager (after token authentication), the rest to ``app``.

    The session manager needs a running task group: it is started by the ASGI lifespan's startup
    (and stopped, ending every session and its turn, at shutdown), or on the first MCP request when the
    server sends no lifespan events. ``sessions_per_user`` and ``session_max_age`` default to
    ``WEBTOOLS["MCP"]``'s ``SESSIONS_PER_USER`` and ``SESSION_MAX_AGE``.
    """

    def __init__(self, app: Any, path: str = PATH, *, session_idle_timeout: float | None = 30 * 60,
                 sessions_per_user: int | None = None, session_max_age: float | None = None,
                 clock: Any = time.monotonic) -> None:
        self.app = app
        self.path = "/" + path.strip("/") + "/"
        self.manager = StreamableHTTPSessionManager(
            # ``_start_turn`` is looked up at each request, so it can be replaced (tests do).
            app=build_server(_user_for, lambda user, conversation, **carried: _start_turn(user, conversation,
                                                                                          **carried),
                             _conversation_for),
            session_idle_timeout=session_idle_timeout,
            max_request_body_size=MAX_BODY_BYTES,
        )
        self.sessions_per_user = sessions_per_user
        self.session_max_age = session_max_age
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        self._opening: dict[Any, int] = {}
        self._started = False
        self._lock = anyio.Lock()
        self._stop: anyio.Event | None = None
        self._stopped: anyio.Event | None = None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http" and (scope["path"] + "/").startswith(self.path):
            await self._mcp(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    # -- MCP requests ------------------------------------------------------------------------------

    async def _mcp(self, scope: dict, receive: Any, send: Any) -> None:
        key = token_from(scope)
        user = await with_database(_authenticate)(key) if key else None
        if user is None:
            await _unauthorized(send)
            return
        if scope.get("method") == "POST":
            receive, problem = await _read_json(scope, receive)
            if problem is not None:
                await _json_error(send, *problem)
                return
        await self.start()
        scope = dict(scope)
        scope[USER_KEY] = user
        # The SDK ties a session to the credential that opened it and refuses it to any other.
        scope["user"] = AuthenticatedUser(AccessToken(token="drf", client_id="webtools", scopes=[],
                                                      subject=str(user.pk)))
        if stateless_request(scope):
            # 2026-07-28: no session to open, count or age; each request stands alone (the SDK routes it).
            await self.manager.handle_request(scope, receive, send)
            return
        session_id = _header(scope, b"mcp-session-id")
        if session_id is None:
            await self._open(user.pk, scope, receive, send)
            return
        session = self._sessions.get(session_id)
        if session is not None and session.user == user.pk:
            if self._clock() - session.opened > self._max_age():
                await self._close(session_id)
                await _json_error(send, 404, INVALID_REQUEST, EXPIRED)
                return
            # A call in flight (a POST) keeps the session busy; the GET stream a client holds open does not.
            busy = scope.get("method") == "POST"
            session.busy += busy
            try:
                await self.manager.handle_request(scope, receive, send)
            finally:
                session.busy -= busy
                session.last = self._clock()
            return
        # Unknown, or another user's: the SDK answers 404 as if it did not exist.
        await self.manager.handle_request(scope, receive, send)

    # -- sessions per user --------------------------------------------------------------------------

    def _max_age(self) -> float:
        return float(self.session_max_age if self.session_max_age is not None
                     else conf.mcp_setting("SESSION_MAX_AGE"))

    def _cap(self) -> int:
        return int(self.sessions_per_user if self.sessions_per_user is not None
                   else conf.mcp_setting("SESSIONS_PER_USER"))

    def open_sessions(self, user_pk: Any) -> list[str]:
        """The ids of ``user_pk``'s open sessions, oldest first (sessions the SDK ended are forgotten)."""
        live = self.manager._server_instances
        for session_id in [s for s in self._sessions if s not in live]:
            del self._sessions[session_id]
        mine = [(info.opened, s) for s, info in self._sessions.items() if info.user == user_pk]
        return [s for _opened, s in sorted(mine)]

    async def _open(self, user_pk: Any, scope: dict, receive: Any, send: Any) -> None:
        """A request that may open a session: admitted under the user's cap, by closing their oldest idle
        session if need be, else answered 429."""
        if scope.get("method") == "POST":
            mine = self.open_sessions(user_pk)
            if len(mine) + self._opening.get(user_pk, 0) >= self._cap():
                idle = sorted((self._sessions[s].last, s) for s in mine if not self._sessions[s].busy)
                if not idle:
                    await _json_error(send, 429, INVALID_REQUEST, TOO_MANY_SESSIONS,
                                      [(b"retry-after", str(RETRY_AFTER).encode())])
                    return
                await self._close(idle[0][1])
        opened: dict[str, str] = {}

        def settle() -> None:  # no longer opening: open (and counted in ``_sessions``), or refused
            self._opening[user_pk] -= 1
            if not self._opening[user_pk]:
                del self._opening[user_pk]

        async def watch(message: dict) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                found = _header(message, b"mcp-session-id")
                if found and "id" not in opened:
                    opened["id"] = found
                    now = self._clock()
                    self._sessions[found] = _Session(user_pk, now, now, busy=1)
                    settle()
            await send(message)

        self._opening[user_pk] = self._opening.get(user_pk, 0) + 1
        try:
            await self.manager.handle_request(scope, receive, watch)
        finally:
            if "id" not in opened:
                settle()
            elif opened["id"] in self._sessions:
                self._sessions[opened["id"]].busy -= 1
                self._sessions[opened["id"]].last = self._clock()

    async def _close(self, session_id: str) -> None:
        """End a session as its idle timeout would: its id answers 404 from now on, its calls stop."""
        self._sessions.pop(session_id, None)
        transport = self.manager._server_instances.get(session_id)
        if transport is not None:
            # The SDK (pinned) has no public call for this; it is what its idle timeout runs.
            await self.manager._discard_session(session_id, transport)

    # -- the session manager's lifetime -----------------------------------------------------------

    async def start(self) -> None:
        """Start the session manager in the background, once."""
        async with self._lock:
            if self._started:
                return
            self._started = True
            self._stop, self._stopped = anyio.Event(), anyio.Event()
            ready = anyio.Event()

            async def run() -> None:
                try:
                    async with self.manager.run():
                        ready.set()
                        await self._stop.wait()
                finally:
                    self._stopped.set()

            import asyncio

            # A task of the server's loop, not of this request: it outlives the request.
            self._task = asyncio.get_running_loop().create_task(run())
            await ready.wait()

    async def stop(self) -> None:
        """End every session (each cancels its turn) and stop the session manager."""
        if self._started and self._stop is not None:
            self._stop.set()
            await self._stopped.wait()

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as err:  # pragma: no cover - the SDK failing to start
                    await send({"type": "lifespan.startup.failed", "message": str(err)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


def stateless_request(scope: dict) -> bool:
    """Whether a request is for a protocol version without sessions: its ``MCP-Protocol-Version`` header
    names anything but a handshake version (``2026-07-28``, or a version the SDK will refuse), as the
    SDK's own router decides."""
    version = _header(scope, b"mcp-protocol-version")
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


def _header(scope_or_message: dict, name: bytes) -> str | None:
    for key, value in scope_or_message.get("headers") or ():
        if key.lower() == name:
            try:
                return value.decode("ascii")
            except UnicodeDecodeError:
                return None
    return None


async def _read_json(scope: dict, receive: Any) -> tuple[Any, tuple[int, int, str] | None]:
    """Read a POST's whole body and check it with the project's JSON limits. Returns a ``receive`` that
    gives the SDK the same body, and the problem ``(status, code, message)`` or None."""
    body = bytearray()
    trailing: list[dict] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            trailing.append(message)
            break
        body += message.get("body", b"")
        if len(body) > MAX_BODY_BYTES:
            return receive, (413, INVALID_REQUEST, "The request body is too large.")
        if not message.get("more_body", False):
            break
    problem = None
    try:
        value = json_input.loads(bytes(body))
        if json_input.text_problem(value):
            problem = (400, PARSE_ERROR, f"Parse error: {json_input.UNSTORABLE}")
    except json_input.JSONInputError as err:
        problem = (400, PARSE_ERROR, f"Parse error: {err}")
    queue = [{"type": "http.request", "body": bytes(body), "more_body": False}, *trailing]

    async def replay() -> dict:
        if queue:
            return queue.pop(0)
        return await receive()

    return replay, problem


async def _json_error(send: Any, status: int, code: int, message: str,
                      headers: list[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *headers,
    ]})
    await send({"type": "http.response.body", "body": body})


async def _unauthorized(send: Any) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": UNAUTHORIZED}}).encode()
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="webtools"'),
    ]})
    await send({"type": "http.response.body", "body": body})


def mount_mcp(app: Any, path: str = PATH, **options: Any) -> MCPMount:
    """``app`` (the host's Django ASGI application) with MCP's streamable HTTP endpoint at ``path``."""
    return MCPMount(app, path, **options)


__all__ = ["MCPMount", "mount_mcp", "token_from"]
