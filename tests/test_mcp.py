"""The MCP door, driven by the official ``mcp`` SDK's own client over both transports.

Streamable HTTP: the demo host's ASGI application (Django with ``mount_mcp``) served by uvicorn on
127.0.0.1, the real web_search (a recorded Brave answer from loopback) and web_fetch. stdio:
``manage.py webtools mcp --user NAME`` started as a subprocess on a file database.
"""
from __future__ import annotations

import contextlib
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
import mcp.types as types
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.servers import LoopbackServer, Reply
from tests.test_integrations_openai import BRAVE_KEY, WRAPPED, save_options
from tests.test_integrations_openai import web  # noqa: F401  (the fixture)
from webtools.plugins.web_fetch.tool import NOT_FROM_CONVERSATION
from webtools.plugins.web_fetch.schema import OUTPUT_SCHEMA as FETCH_OUTPUT
from webtools.plugins.web_search import OUTPUT_SCHEMA as SEARCH_OUTPUT
from webtools.runtime import Turn

ROOT = Path(__file__).resolve().parents[1]


# -- the HTTP door -----------------------------------------------------------------------------------


@pytest.fixture
def mcp_server(transactional_db):
    """The demo host's ASGI application (Django + MCP at /mcp/) served by uvicorn on a free port:
    ``(url, the MCPMount)``."""
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
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp/", app
    server.should_exit = True
    thread.join(10)
    sock.close()


@pytest.fixture
def mcp_url(mcp_server):
    return mcp_server[0]


def token_for(user) -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.get_or_create(user=user)[0].key


def over_http(url: str, token: str, steps, *, scheme: str = "Bearer", elicitation=None, mode: str = "legacy"):
    """Open one MCP connection with the SDK's (2.x) client, run ``await steps(client)``, close it.
    ``mode``: "legacy" opens a ``2025-11-25`` session (``initialize``), "2026-07-28" sends stateless
    requests. ``elicitation``: the client's answer to the server's questions (none: it declares no
    elicitation)."""

    async def main():
        async with httpx2.AsyncClient(headers={"Authorization": f"{scheme} {token}"}, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=mode,
                              elicitation_callback=elicitation) as client:
                return await steps(client)

    return anyio.run(main)


def texts(result) -> list[str]:
    return [block.text for block in result.content if block.type == "text"]


def links(result) -> list[tuple[str, str]]:
    return [(str(block.uri), block.name) for block in result.content if block.type == "resource_link"]


def test_http_lists_the_users_tools_exactly_as_openai_tools_gives_them(web, mcp_url):  # noqa: F811
    from webtools.host import start_turn

    user, _, _ = web

    async def steps(session):
        return (await session.list_tools()).tools, (await session.list_tools()).tools

    listed, again = over_http(mcp_url, token_for(user), steps)
    with start_turn(user) as turn:
        expected = [tool["function"] for tool in turn.openai_tools()]
    assert [t.name for t in listed] == ["web_search", "web_fetch"]
    assert [{"name": t.name, "description": t.description, "parameters": t.input_schema} for t in listed] == expected
    assert [t.output_schema for t in listed] == [SEARCH_OUTPUT, FETCH_OUTPUT]
    assert [t.model_dump() for t in again] == [t.model_dump() for t in listed]  # a stable list


def test_http_call_returns_the_wrapped_text_and_the_sources_as_resource_links(web, mcp_url):  # noqa: F811
    user, engine, _ = web

    async def steps(session):
        return await session.call_tool("web_search", {"query": "django orm", "max_results": 2})

    result = over_http(mcp_url, token_for(user), steps, scheme="Token")
    assert result.is_error is False
    (text,) = texts(result)
    assert WRAPPED.match(text) and "https://docs.djangoproject.com/en/5.2/" in text
    # The output itself, as structuredContent (the SDK's client checked it against outputSchema).
    assert result.structured_content["engine"] == "brave"
    assert [r["url"] for r in result.structured_content["results"]] == [
        "https://www.djangoproject.com/", "https://docs.djangoproject.com/en/5.2/"]
    assert json.dumps(result.structured_content, ensure_ascii=False) in text
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
    assert over_http(mcp_url, token_for(user), steps).is_error is False
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
    assert from_results.is_error and "is not allowed" in texts(from_results)[0]
    # This client cannot ask its user (no elicitation): refused, with what the user can do.
    assert from_nowhere.is_error and "this client cannot ask the user" in texts(from_nowhere)[0]
    assert "search for the page first" in texts(from_nowhere)[0]
    assert site.hits("/article") == 0

    async def fetch_only(session):
        return await session.call_tool("web_fetch", {"url": result_url})

    # A new session starts afresh: the search results of the last one are not part of it.
    again = over_http(mcp_url, token_for(user), fetch_only)
    assert again.is_error and "this client cannot ask the user" in texts(again)[0]


def test_http_max_uses_counts_a_users_calls_across_sessions_in_the_window(
        web, mcp_url, settings, django_user_model):  # noqa: F811
    from webtools.models import PluginOptions

    user, engine, _ = web
    # A window far longer than the test, so that its calls never straddle two windows.
    settings.WEBTOOLS = {**settings.WEBTOOLS, "MCP": {"USES_WINDOW": 10 ** 9}}
    PluginOptions.objects.filter(plugin="web_search").delete()
    save_options("web_search", engine="brave", api_key=BRAVE_KEY, enabled_by_default=True, max_uses=2)

    async def search_twice(session):
        return [await session.call_tool("web_search", {"query": f"django {n}"}) for n in (1, 2)]

    first, second = over_http(mcp_url, token_for(user), search_twice)
    assert first.is_error is False and second.is_error is False
    # A new session does not start a new count: that was the way around max_uses.
    third, fourth = over_http(mcp_url, token_for(user), search_twice)
    assert third.is_error and "The search limit for this answer is reached." in texts(third)[0]
    assert fourth.is_error and len(engine.requests) == 2
    # Another user's calls count apart.
    erin = django_user_model.objects.create_user("erin", password="pw-erin-123")
    assert [r.is_error for r in over_http(mcp_url, token_for(erin), search_twice)] == [False, False]
    assert len(engine.requests) == 4


def test_http_a_user_without_the_tool_neither_sees_nor_calls_it(web, mcp_url):  # noqa: F811
    from webtools.models import UserToolSetting

    user, _, site = web
    UserToolSetting.objects.create(user=user, tool="web_fetch", enabled=False)

    async def steps(session):
        return (await session.list_tools()).tools, await session.call_tool("web_fetch", {"url": site.url("/")})

    listed, result = over_http(mcp_url, token_for(user), steps)
    assert [t.name for t in listed] == ["web_search"]
    assert result.is_error and json.loads(texts(result)[0]) == {
        "error": "The tool 'web_fetch' is not available in this turn.", "error_code": "unavailable"}


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

    # The SDK's client gives up at once with the door's JSON-RPC error, inside its task group's ExceptionGroup.
    with pytest.raises(ExceptionGroup) as failure:
        over_http(mcp_url, "not-a-token", steps)
    (error,) = leaves(failure.value)
    assert isinstance(error, MCPError) and error.error.code == -32001
    assert "Authorization: Bearer <token>" in error.error.message


def leaves(group: BaseExceptionGroup) -> list[BaseException]:
    """The exceptions inside ``group`` and the groups nested in it."""
    return [leaf for error in group.exceptions
            for leaf in (leaves(error) if isinstance(error, BaseExceptionGroup) else [error])]


def test_http_a_session_answers_only_the_user_who_opened_it_and_each_call_is_a_turn(
        web, mcp_server, monkeypatch, django_user_model):  # noqa: F811
    from webtools.mcp import asgi

    mcp_url, mount = mcp_server
    user, _, _ = web
    other_token = token_for(django_user_model.objects.create_user("erin", password="pw-erin-123"))
    turns = []
    real = asgi._start_turn
    monkeypatch.setattr(asgi, "_start_turn", lambda *args, **kw: turns.append(real(*args, **kw)) or turns[-1])
    token = token_for(user)

    async def main():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client:
                await client.list_tools()
                await client.call_tool("web_search", {"query": "django"})
                (session_id,) = mount.open_sessions(user.pk)
                # Another user's token with this session's id: as if the session did not exist.
                stolen = await http.post(mcp_url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                                         headers={"Authorization": f"Bearer {other_token}",
                                                  "mcp-session-id": session_id,
                                                  "mcp-protocol-version": "2025-06-18",
                                                  "Accept": "application/json, text/event-stream"})
                return session_id, stolen.status_code

    session_id, status = anyio.run(main)
    assert status == 404
    # One turn per request, each for this session's conversation, each ended with its request; the
    # search's results were carried from the call's turn to the session.
    assert len(turns) == 2 and {t.conversation for t in turns} == {f"mcp-{session_id}"}
    assert all(t.closed for t in turns)
    assert "https://www.djangoproject.com/" in turns[1].urls


def test_http_each_call_reads_the_users_switches_and_roles_afresh(web, mcp_url):  # noqa: F811
    from webtools.models import UserToolSetting

    user, _, _ = web

    async def steps(session):
        before = [t.name for t in (await session.list_tools()).tools]
        await anyio.to_thread.run_sync(
            lambda: UserToolSetting.objects.create(user=user, tool="web_search", enabled=False))
        after = [t.name for t in (await session.list_tools()).tools]
        return before, after, await session.call_tool("web_search", {"query": "django"})

    before, after, refused = over_http(mcp_url, token_for(user), steps)
    assert before == ["web_search", "web_fetch"] and after == ["web_fetch"]
    assert refused.is_error and "is not available in this turn" in texts(refused)[0]


def test_http_a_deleted_session_cancels_its_call_in_progress(web, mcp_server, monkeypatch):  # noqa: F811
    # The request's cancellation stops the turn of a call still fetching; and since the SDK enters the
    # server's lifespan once, not per session, the conversation (its turn cache) is ended by the
    # connection's own teardown.
    from webtools.mcp import asgi
    from webtools.mcp.conversation import Conversation

    url, mount = mcp_server
    user, _, site = web
    turns = []
    real = asgi._start_turn
    monkeypatch.setattr(asgi, "_start_turn", lambda *args, **kw: turns.append(real(*args, **kw)) or turns[-1])
    ended = []
    end = Conversation.end
    monkeypatch.setattr(Conversation, "end", lambda self: ended.append(self) or end(self))
    token = token_for(user)
    deleted = []

    async def main():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy",
                              elicitation_callback=accepting([])) as client:
                async with anyio.create_task_group() as group:
                    async def call():
                        with contextlib.suppress(Exception):
                            await client.call_tool("web_fetch", {"url": site.url("/slow")})

                    group.start_soon(call)
                    with anyio.fail_after(20):
                        while site.hits("/slow") == 0:  # the page is being read, one byte at a time
                            await anyio.sleep(0.05)
                        (session_id,) = mount.open_sessions(user.pk)
                        response = await http.delete(url, headers={"mcp-session-id": session_id,
                                                                   "mcp-protocol-version": "2025-11-25"})
                        deleted.append(response.status_code)
                        while not (turns[-1].signal.cancelled and ended):
                            await anyio.sleep(0.05)
                    group.cancel_scope.cancel()

    with contextlib.suppress(BaseExceptionGroup):  # the client's own DELETE on leaving finds no session
        anyio.run(main)
    assert deleted == [200]
    assert turns[-1].signal.cancelled and mount.open_sessions(user.pk) == []
    (conversation,) = ended
    assert conversation.ended and conversation.turn_cache == {}


def test_ending_a_session_cancels_its_calls_in_progress():
    from webtools.mcp.server import Conversation
    from webtools.runtime import Registry, Tool

    started, stopped = threading.Event(), threading.Event()

    def wait(input, ctx):
        started.set()
        ctx.signal.wait(10)
        stopped.set()
        return "stopped" if ctx.cancelled else "timed out"

    registry = Registry()
    registry.register(Tool("wait", "", {"type": "object"}, wait), "test")
    conversation = Conversation(
        lambda user, name, **carried: Turn(registry=registry, requested_tools=["wait"], **carried))

    async def main():
        turn = await conversation.turn(None, "c")
        async with anyio.create_task_group() as group:
            group.start_soon(conversation.call, turn, "wait", {})
            assert await anyio.to_thread.run_sync(started.wait, 10)
            conversation.end()
        return turn

    turn = anyio.run(main)
    assert stopped.wait(5) and turn.signal.cancelled and turn.closed


def accepting(asked):
    """A client whose user says yes to every question (``asked`` collects the questions)."""

    async def answer(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"fetch": True})

    return answer


def declining(asked):
    async def answer(context, params):
        asked.append(params)
        return types.ElicitResult(action="decline")

    return answer


def test_only_a_client_that_can_show_a_form_is_asked():
    from types import SimpleNamespace

    from webtools.mcp.server import ask_user

    asked = []

    async def elicit_form(message, schema, related_request_id=None):
        asked.append(message)
        return types.ElicitResult(action="accept", content={"fetch": True})

    def context(elicitation):
        capabilities = types.ClientCapabilities(elicitation=elicitation)
        return SimpleNamespace(session=SimpleNamespace(client_capabilities=capabilities, elicit_form=elicit_form),
                               request_id=1)

    url = "https://a.example/x"
    answers = [anyio.run(ask_user, context(elicitation), url) for elicitation in (
        None,
        types.ElicitationCapability(url=types.UrlElicitationCapability()),
        types.ElicitationCapability(),
        types.ElicitationCapability(form=types.FormElicitationCapability()),
    )]
    assert answers == [None, None, True, True] and len(asked) == 2


def test_http_with_confirmation_off_the_rule_stands_and_nobody_is_asked(web, mcp_url, settings):  # noqa: F811
    user, _, site = web
    settings.WEBTOOLS = {**settings.WEBTOOLS, "MCP": {"CONFIRM_URLS": False}}
    asked = []

    async def steps(session):
        return await session.call_tool("web_fetch", {"url": site.url("/article")})

    result = over_http(mcp_url, token_for(user), steps, elicitation=accepting(asked))
    assert result.is_error and NOT_FROM_CONVERSATION in texts(result)[0]
    assert asked == [] and site.hits("/article") == 0


def test_http_a_confirmed_url_is_read_and_asked_about_once(web, mcp_url):  # noqa: F811
    user, _, site = web
    asked = []

    async def steps(session):
        return [await session.call_tool("web_fetch", {"url": site.url("/article")}) for _ in range(2)]

    first, second = over_http(mcp_url, token_for(user), steps, elicitation=accepting(asked))
    assert first.is_error is False and second.is_error is False
    assert len(asked) == 1 and site.url("/article") in asked[0].message
    assert site.hits("/article") == 1  # the second call read the session's turn cache


BAD_BODIES = [
    ("deep nesting", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + b"[" * 100_000 + b"]" * 100_000
     + b"}"),
    ("a 5,000-digit integer", b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "ping"}'),
    ("invalid UTF-8", b'{"jsonrpc": "2.0", "id": 1, "method": "p\xff\xfeing"}'),
    ("a lone surrogate", b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}'),
    ("not JSON", b'{"jsonrpc": '),
]


@pytest.mark.parametrize("why, body", BAD_BODIES, ids=[why for why, _ in BAD_BODIES])
def test_http_a_malformed_body_is_a_400_parse_error_never_a_500(web, mcp_url, why, body):  # noqa: F811
    user, _, _ = web
    headers = {"Authorization": f"Bearer {token_for(user)}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    response = httpx.post(mcp_url, content=body, headers=headers, timeout=30)
    assert response.status_code == 400, why
    error = response.json()["error"]
    assert error["code"] == -32700 and error["message"].startswith("Parse error")
    assert "mcp-session-id" not in response.headers


def test_http_a_body_over_four_mib_is_a_413_before_it_is_parsed(web, mcp_url):  # noqa: F811
    user, _, _ = web
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"a" * (4 * 1024 * 1024) + b'"}}'
    response = httpx.post(mcp_url, content=body, timeout=30, headers={
        "Authorization": f"Bearer {token_for(user)}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    assert response.status_code == 413 and response.json()["error"]["message"] == "The request body is too large."


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=20))
@hypothesis_settings(max_examples=60, deadline=None)
def test_the_door_reads_a_body_as_json_input_does(value):
    from webtools.mcp.asgi import _read_json
    from webtools.runtime import json_input

    body = json.dumps(value).encode()

    async def read():
        messages = [{"type": "http.request", "body": body[:7], "more_body": True},
                    {"type": "http.request", "body": body[7:], "more_body": False}]

        async def receive():
            return messages.pop(0)

        replay, problem = await _read_json({}, receive)
        return (await replay())["body"], problem

    replayed, problem = anyio.run(read)
    assert replayed == body  # the SDK reads the very bytes the client sent
    assert (problem is None) == (json_input.text_problem(json_input.loads(body)) is None)


def initialize(url: str, token: str, **headers) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    return httpx.post(url, json=body, timeout=10, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream", **headers})


def tools_list(url: str, token: str, session_id: str) -> httpx.Response:
    return httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, timeout=10, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
        "mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"})


def test_http_a_new_session_past_the_cap_closes_the_users_oldest_idle_one(
        web, mcp_server, django_user_model):  # noqa: F811
    url, mount = mcp_server
    user, _, _ = web
    mount.sessions_per_user = 2
    token = token_for(user)
    ids = [initialize(url, token).headers["mcp-session-id"] for _ in range(3)]
    assert len(set(ids)) == 3
    assert tools_list(url, token, ids[0]).status_code == 404  # the oldest was closed
    assert [tools_list(url, token, i).status_code for i in ids[1:]] == [200, 200]
    assert mount.open_sessions(user.pk) == ids[1:]
    # Another user's sessions are theirs: their cap, not this user's.
    erin = token_for(django_user_model.objects.create_user("erin", password="pw-erin-123"))
    assert initialize(url, erin).status_code == 200 and len(mount.open_sessions(user.pk)) == 2


def test_http_a_new_session_past_the_cap_is_a_429_while_every_session_is_busy(web, mcp_server):  # noqa: F811
    url, mount = mcp_server
    user, _, site = web
    mount.sessions_per_user = 2
    token = token_for(user)
    asking = [anyio.Event(), anyio.Event()]

    async def one_session(index, results):
        release = anyio.Event()

        async def answer(context, params):  # the user takes their time: the call stays in flight
            asking[index].set()
            await release.wait()
            return types.ElicitResult(action="decline")

        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy",
                              elicitation_callback=answer) as client:
                results["release"].append(release)
                results["calls"].append(await client.call_tool("web_fetch", {"url": site.url("/article")}))

    async def main():
        results = {"release": [], "calls": []}
        async with anyio.create_task_group() as group:
            for index in range(2):
                group.start_soon(one_session, index, results)
            for event in asking:
                await event.wait()
            refused = await anyio.to_thread.run_sync(initialize, url, token)
            for release in results["release"]:
                release.set()
        return refused, results["calls"]

    refused, calls = anyio.run(main)
    assert refused.status_code == 429 and refused.headers["retry-after"] == "5"
    assert "mcp-session-id" not in refused.headers
    assert [c.is_error for c in calls] == [True, True] and site.hits("/article") == 0


def test_http_a_session_past_its_maximum_age_answers_404(web, mcp_server):  # noqa: F811
    url, mount = mcp_server
    user, _, _ = web
    now = [1000.0]
    mount._clock = lambda: now[0]
    mount.session_max_age = 60
    token = token_for(user)
    session_id = initialize(url, token).headers["mcp-session-id"]
    now[0] += 59
    assert tools_list(url, token, session_id).status_code == 200
    now[0] += 2
    expired = tools_list(url, token, session_id)
    assert expired.status_code == 404 and "maximum age" in expired.json()["error"]["message"]
    assert tools_list(url, token, session_id).status_code == 404
    assert mount.open_sessions(user.pk) == []


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


@pytest.fixture(scope="module")
def stdio_provenance_env(tmp_path_factory):
    """A database whose web_fetch keeps its default: only URLs the session has seen (or the user
    confirms) are fetched."""
    database = tmp_path_factory.mktemp("mcp-provenance") / "db.sqlite3"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.mcp_stdio_settings",
           "DATABASE_URL": f"sqlite:///{database}", "PYTHONPATH": str(ROOT)}
    setup = SETUP.replace('"only_conversation_urls": False', '"only_conversation_urls": True')
    done = subprocess.run([sys.executable, "-c", setup], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return env


def over_stdio(env: dict, username: str, steps, elicitation=None, mode: str = "legacy"):
    """Start ``manage.py webtools mcp --user <username>`` and drive it with the SDK's (2.x) client."""
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "webtools", "mcp", "--user", username],
                                   env=env, cwd=str(ROOT))

    async def main():
        async with Client(params, mode=mode, elicitation_callback=elicitation) as client:
            return await steps(client)

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
    assert fetched.is_error is False and WRAPPED.match(texts(fetched)[0])
    assert "The Moon pulls the sea." in texts(fetched)[0]
    assert links(fetched) == [(site.url("/"), "Tides")]
    assert refused.is_error and "Only http and https URLs can be fetched" in texts(refused)[0]
    assert invalid.is_error and texts(invalid)[0].find("Invalid input for web_fetch: offset") != -1


def test_stdio_a_user_without_the_tool_neither_sees_nor_calls_it(stdio_env):
    async def steps(session):
        return (await session.list_tools()).tools, await session.call_tool("web_fetch", {"url": "https://a.example/"})

    listed, result = over_stdio(stdio_env, "erin", steps)
    assert listed == []
    assert result.is_error and json.loads(texts(result)[0]) == {
        "error": "The tool 'web_fetch' is not available in this turn.", "error_code": "unavailable"}


def test_stdio_a_pasted_url_is_read_only_when_the_user_confirms_it(stdio_provenance_env):
    page = "<html><head><title>Tides</title></head><body><article><p>" + "The Moon pulls the sea. " * 40 + \
        "</p></article></body></html>"
    with LoopbackServer({"/robots.txt": Reply(404, {}, ""),
                         "/tides": Reply(200, {"Content-Type": "text/html; charset=utf-8"}, page)}) as site:
        url = site.url("/tides?lang=en")

        async def fetch(session):
            return await session.call_tool("web_fetch", {"url": url})

        yes, no = [], []
        declined = over_stdio(stdio_provenance_env, "dana", fetch, elicitation=declining(no))
        assert site.hits("/tides") == 0
        cannot = over_stdio(stdio_provenance_env, "dana", fetch)
        assert site.hits("/tides") == 0
        confirmed = over_stdio(stdio_provenance_env, "dana", fetch, elicitation=accepting(yes))
        assert site.hits("/tides") == 1

    (question,) = yes
    assert "Site: 127.0.0.1\n" in question.message and f"Address: {url}\n" in question.message
    assert "Yes: webtools sends one request to exactly this address" in question.message
    assert question.requested_schema["properties"]["fetch"]["type"] == "boolean"
    assert confirmed.is_error is False and "The Moon pulls the sea." in texts(confirmed)[0]
    assert len(no) == 1 and declined.is_error
    assert "The user declined to let this address be fetched" in texts(declined)[0]
    assert cannot.is_error and "this client cannot ask the user" in texts(cannot)[0]
    for refused in (declined, cannot):
        assert refused.structured_content["error_code"] == "url_not_in_prior_context"
        # The question shows the whole address; an error message, never its query.
        assert site.url("/tides") in texts(refused)[0] and "lang=en" not in texts(refused)[0]
    assert confirmed.structured_content["url"] == url and confirmed.structured_content["offset"] == 0


def test_stdio_refuses_an_unknown_user_before_serving(stdio_env):
    done = subprocess.run([sys.executable, "manage.py", "webtools", "mcp", "--user", "nobody"], env=stdio_env,
                          cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "No user named 'nobody'." in done.stderr and done.stdout == ""


def test_the_demo_hosts_asgi_application_serves_mcp_at_slash_mcp():
    from project.asgi import application

    from webtools.mcp.asgi import MCPMount

    assert isinstance(application, MCPMount) and application.path == "/mcp/"
