"""The MCP door, driven by the official ``mcp`` SDK's own client over both transports.

Streamable HTTP: the demo host's ASGI application (Django with ``mount_mcp``) served by uvicorn on
127.0.0.1, the real web_search (a recorded Brave answer from loopback) and web_fetch. stdio:
``manage.py webtools mcp --user NAME`` started as a subprocess on a file database.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.servers import LoopbackServer, Reply
from tests.test_integrations_openai import BRAVE_KEY, WRAPPED, save_options
from tests.test_integrations_openai import web  # noqa: F401  (the fixture)
from webtools.plugins.web_fetch.tool import NOT_FROM_CONVERSATION

ROOT = Path(__file__).resolve().parents[1]


# -- the HTTP door -----------------------------------------------------------------------------------


@pytest.fixture
def mcp_url(transactional_db):
    """The demo host's ASGI application (Django + MCP at /mcp/) served by uvicorn on a free port."""
    import uvicorn
    from django.core.asgi import get_asgi_application

    from webtools.mcp.asgi import mount_mcp

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = mount_mcp(get_asgi_application())
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp/"
    server.should_exit = True
    thread.join(10)
    sock.close()


def token_for(user) -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.get_or_create(user=user)[0].key


def over_http(url: str, token: str, steps, *, scheme: str = "Bearer"):
    """Open one MCP session with the SDK's client, run ``await steps(session)``, close the session."""

    async def main():
        async with httpx.AsyncClient(headers={"Authorization": f"{scheme} {token}"}, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as (read, write, _session_id):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await steps(session)

    return anyio.run(main)


def texts(result) -> list[str]:
    return [block.text for block in result.content if block.type == "text"]


def links(result) -> list[tuple[str, str]]:
    return [(str(block.uri), block.name) for block in result.content if block.type == "resource_link"]


def test_http_lists_the_users_tools_exactly_as_openai_tools_gives_them(web, mcp_url):  # noqa: F811
    from webtools.host import start_turn

    user, _, _ = web

    async def steps(session):
        return (await session.list_tools()).tools

    listed = over_http(mcp_url, token_for(user), steps)
    with start_turn(user) as turn:
        expected = [tool["function"] for tool in turn.openai_tools()]
    assert [t.name for t in listed] == ["web_search", "web_fetch"]
    assert [{"name": t.name, "description": t.description, "parameters": t.inputSchema} for t in listed] == expected


def test_http_call_returns_the_wrapped_text_and_the_sources_as_resource_links(web, mcp_url):  # noqa: F811
    user, engine, _ = web

    async def steps(session):
        return await session.call_tool("web_search", {"query": "django orm", "max_results": 2})

    result = over_http(mcp_url, token_for(user), steps, scheme="Token")
    assert result.isError is False
    (text,) = texts(result)
    assert WRAPPED.match(text) and "https://docs.djangoproject.com/en/5.2/" in text
    assert links(result) == [("https://www.djangoproject.com/", "Django & the web"),
                             ("https://docs.djangoproject.com/en/5.2/", "Django documentation | Django")]
    assert engine.requests[0].headers["X-Subscription-Token"] == BRAVE_KEY
    assert BRAVE_KEY not in result.model_dump_json()


def test_http_requests_leave_no_database_connection_open(web, mcp_url, monkeypatch):  # noqa: F811
    # The door reads the database off the event loop, in a thread that lives as long as the process, and
    # runs tools in worker threads. Django closes a request's connections when the request ends; the door
    # is not a Django view, so it must close them itself (on PostgreSQL an open one is a session, which,
    # among other things, keeps the test database from being dropped).
    from django.db.backends.base.base import BaseDatabaseWrapper

    user, _, _ = web
    used = {}
    ensure_connection = BaseDatabaseWrapper.ensure_connection

    def recording(connection):
        if threading.current_thread() is not threading.main_thread():
            used[id(connection)] = (threading.current_thread().name, connection)
        return ensure_connection(connection)

    async def steps(session):
        await session.list_tools()
        return await session.call_tool("web_search", {"query": "django orm", "max_results": 2})

    monkeypatch.setattr(BaseDatabaseWrapper, "ensure_connection", recording)
    assert over_http(mcp_url, token_for(user), steps).isError is False
    monkeypatch.undo()
    assert used, "the door read nothing from the database"
    assert [name for name, connection in used.values() if connection.connection is not None] == []


def test_http_one_session_is_one_turn_and_a_url_from_nowhere_is_a_tool_error(web, mcp_url):  # noqa: F811
    user, _, site = web
    # djangoproject.com is denied, so a fetch that passes the provenance check stops there, offline.
    from webtools.models import PluginOptions

    PluginOptions.objects.filter(plugin="web_fetch").delete()
    save_options("web_fetch", deny_domains=["djangoproject.com"])
    result_url = "https://www.djangoproject.com/"

    async def search_then_fetch(session):
        await session.call_tool("web_search", {"query": "django"})
        return (await session.call_tool("web_fetch", {"url": result_url}),
                await session.call_tool("web_fetch", {"url": site.url("/article")}))

    from_results, from_nowhere = over_http(mcp_url, token_for(user), search_then_fetch)
    assert from_results.isError and "is not allowed" in texts(from_results)[0]
    assert from_nowhere.isError and NOT_FROM_CONVERSATION in texts(from_nowhere)[0]
    assert site.hits("/article") == 0

    async def fetch_only(session):
        return await session.call_tool("web_fetch", {"url": result_url})

    # A new session is a new turn: the search results of the last one are not part of it.
    again = over_http(mcp_url, token_for(user), fetch_only)
    assert again.isError and NOT_FROM_CONVERSATION in texts(again)[0]


def test_http_the_operators_limits_hold_and_a_session_is_one_answer_for_them(web, mcp_url):  # noqa: F811
    from webtools.models import PluginOptions

    user, engine, _ = web
    PluginOptions.objects.filter(plugin="web_search").delete()
    save_options("web_search", engine="brave", api_key=BRAVE_KEY, enabled_by_default=True, max_uses=1)

    async def search_twice(session):
        return [await session.call_tool("web_search", {"query": f"django {n}"}) for n in (1, 2)]

    first, second = over_http(mcp_url, token_for(user), search_twice)
    assert first.isError is False
    assert second.isError and "The search limit for this answer is reached." in texts(second)[0]
    assert len(engine.requests) == 1
    (again, _) = over_http(mcp_url, token_for(user), search_twice)
    assert again.isError is False and len(engine.requests) == 2


def test_http_a_user_without_the_tool_neither_sees_nor_calls_it(web, mcp_url):  # noqa: F811
    from webtools.models import UserToolSetting

    user, _, site = web
    UserToolSetting.objects.create(user=user, tool="web_fetch", enabled=False)

    async def steps(session):
        return (await session.list_tools()).tools, await session.call_tool("web_fetch", {"url": site.url("/")})

    listed, result = over_http(mcp_url, token_for(user), steps)
    assert [t.name for t in listed] == ["web_search"]
    assert result.isError and json.loads(texts(result)[0]) == {
        "error": "The tool 'web_fetch' is not available in this turn."}


def test_http_a_bad_or_missing_token_is_refused_before_any_session(web, mcp_url):  # noqa: F811
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic ZGFuYTpwdw=="}):
        response = httpx.post(mcp_url, json=init, headers={**headers, **auth}, timeout=10)
        assert response.status_code == 401, auth
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "mcp-session-id" not in response.headers

    async def steps(session):  # pragma: no cover - never reached
        return await session.list_tools()

    # The SDK's client gives up at once with the HTTP error, inside its task group's ExceptionGroup.
    with pytest.raises(ExceptionGroup) as failure:
        over_http(mcp_url, "not-a-token", steps)
    (error,) = failure.value.exceptions
    assert isinstance(error, httpx.HTTPStatusError) and error.response.status_code == 401


def test_http_a_session_answers_only_the_user_who_opened_it_and_ends_its_turn(
        web, mcp_url, monkeypatch, django_user_model):  # noqa: F811
    from webtools.mcp import asgi

    user, _, _ = web
    other_token = token_for(django_user_model.objects.create_user("erin", password="pw-erin-123"))
    turns = []
    real = asgi._start_turn
    monkeypatch.setattr(asgi, "_start_turn", lambda *args: turns.append(real(*args)) or turns[-1])
    token = token_for(user)

    async def main():
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with streamable_http_client(mcp_url, http_client=http) as (read, write, get_session_id):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.list_tools()
                    # Another user's token with this session's id: as if the session did not exist.
                    stolen = await http.post(mcp_url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                                             headers={"Authorization": f"Bearer {other_token}",
                                                      "mcp-session-id": get_session_id(),
                                                      "mcp-protocol-version": "2025-06-18",
                                                      "Accept": "application/json, text/event-stream"})
                    return get_session_id(), stolen.status_code

    session_id, status = anyio.run(main)
    assert status == 404
    assert len(turns) == 1 and turns[0].conversation == f"mcp-{session_id}"
    deadline = time.monotonic() + 5
    while not turns[0].closed and time.monotonic() < deadline:  # the client's DELETE ends the session
        time.sleep(0.02)
    assert turns[0].closed and turns[0].signal.cancelled


# -- the stdio door ----------------------------------------------------------------------------------

SETUP = """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from webtools.host import get_plugin, validate_settings
from webtools.models import PluginOptions, UserToolSetting
User = get_user_model()
User.objects.create_user("dana", password="pw-dana-123")
erin = User.objects.create_user("erin", password="pw-erin-123")
UserToolSetting.objects.create(user=erin, tool="web_fetch", enabled=False)
plugin = get_plugin("web_fetch")
checked = validate_settings(plugin.options_form, {**plugin.default_options(), "only_conversation_urls": False})
PluginOptions.objects.create(plugin="web_fetch", values=checked.values)
"""


@pytest.fixture(scope="module")
def stdio_env(tmp_path_factory):
    database = tmp_path_factory.mktemp("mcp") / "db.sqlite3"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.mcp_stdio_settings",
           "DATABASE_URL": f"sqlite:///{database}", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SETUP], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return env


def over_stdio(env: dict, username: str, steps):
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "webtools", "mcp", "--user", username],
                                   env=env, cwd=str(ROOT))

    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await steps(session)

    return anyio.run(main)


def test_stdio_lists_calls_and_reports_errors_for_the_named_user(stdio_env):
    page = "<html><head><title>Tides</title></head><body><article><p>" + "The Moon pulls the sea. " * 40 + \
        "</p></article></body></html>"
    with LoopbackServer({"/": Reply(200, {"Content-Type": "text/html; charset=utf-8"}, page)}) as site:

        async def steps(session):
            listed = (await session.list_tools()).tools
            return (listed, await session.call_tool("web_fetch", {"url": site.url("/")}),
                    await session.call_tool("web_fetch", {"url": "ftp://example.com/file"}),
                    await session.call_tool("web_fetch", {"url": site.url("/"), "offset": "x"}))

        listed, fetched, refused, invalid = over_stdio(stdio_env, "dana", steps)

    assert [t.name for t in listed] == ["web_fetch"]
    assert fetched.isError is False and WRAPPED.match(texts(fetched)[0])
    assert "The Moon pulls the sea." in texts(fetched)[0]
    assert links(fetched) == [(site.url("/"), "Tides")]
    assert refused.isError and "Only http and https URLs can be fetched" in texts(refused)[0]
    assert invalid.isError and texts(invalid)[0].find("Invalid input for web_fetch: offset") != -1


def test_stdio_a_user_without_the_tool_neither_sees_nor_calls_it(stdio_env):
    async def steps(session):
        return (await session.list_tools()).tools, await session.call_tool("web_fetch", {"url": "https://a.example/"})

    listed, result = over_stdio(stdio_env, "erin", steps)
    assert listed == []
    assert result.isError and json.loads(texts(result)[0]) == {
        "error": "The tool 'web_fetch' is not available in this turn."}


def test_stdio_refuses_an_unknown_user_before_serving(stdio_env):
    done = subprocess.run([sys.executable, "manage.py", "webtools", "mcp", "--user", "nobody"], env=stdio_env,
                          cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "No user named 'nobody'." in done.stderr and done.stdout == ""


def test_the_demo_hosts_asgi_application_serves_mcp_at_slash_mcp():
    from project.asgi import application

    from webtools.mcp.asgi import MCPMount

    assert isinstance(application, MCPMount) and application.path == "/mcp/"
