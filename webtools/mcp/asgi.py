"""The streamable HTTP door: MCP at ``/mcp/`` in front of the host's Django ASGI application.

``mount_mcp(get_asgi_application())`` returns an ASGI application that answers ``/mcp/`` with the SDK's
``StreamableHTTPSessionManager`` and passes every other request to Django. Each MCP request carries the
user's DRF token (``Authorization: Bearer <key>`` or ``Authorization: Token <key>``), checked by DRF's
own ``TokenAuthentication`` before the SDK sees the request: a missing or bad token is answered 401
and reaches no session. A session belongs to the user who opened it: the SDK answers 404 to a request
for it with another user's token. Each session is one turn, with that user's switches, engine and keys.
"""
from __future__ import annotations

import json
import logging
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from .server import build_server, with_database

logger = logging.getLogger("webtools.mcp")

PATH = "/mcp/"
#: The scope key holding the Django user the request's token belongs to.
USER_KEY = "webtools.user"
KEYWORDS = (b"bearer", b"token")
UNAUTHORIZED = "Send the user's API token: Authorization: Bearer <token>."


def _start_turn(user: Any, conversation: str):
    from webtools.host import start_turn

    return start_turn(user, conversation=conversation)


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


class MCPMount:
    """ASGI: ``/mcp/`` to the MCP session manager (after token authentication), the rest to ``app``.

    The session manager needs a running task group: it is started by the ASGI lifespan's startup
    (and stopped, ending every session and its turn, at shutdown), or on the first MCP request when the
    server sends no lifespan events.
    """

    def __init__(self, app: Any, path: str = PATH, *, session_idle_timeout: float | None = 30 * 60) -> None:
        self.app = app
        self.path = "/" + path.strip("/") + "/"
        self.manager = StreamableHTTPSessionManager(
            # ``_start_turn`` is looked up at each session's start, so it can be replaced (tests do).
            app=build_server(_user_for, lambda user, conversation: _start_turn(user, conversation),
                             _conversation_for),
            session_idle_timeout=session_idle_timeout,
        )
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
        await self.start()
        scope = dict(scope)
        scope[USER_KEY] = user
        # The SDK ties a session to the credential that opened it and refuses it to any other.
        scope["user"] = AuthenticatedUser(AccessToken(token="drf", client_id="webtools", scopes=[],
                                                      subject=str(user.pk)))
        await self.manager.handle_request(scope, receive, send)

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
