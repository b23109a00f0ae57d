"""Interop: the official SDK's clients of both lines against webtools' MCP server.

- The 2.x client (the main environment's ``mcp``) speaking ``2026-07-28``: stateless, over streamable
  HTTP and stdio; the tools listed and called, ``structuredContent`` checked by the client against
  ``outputSchema``; a URL the conversation has not seen confirmed through ``input_required`` by a user
  who accepts, one who declines, and a client without elicitation (the page counts its requests).
- The 1.x client (``mcp==1.30.0`` in ``.venv-mcp1``, ``tests/mcp1/client.py``, run as a subprocess):
  over stdio and HTTP, with its ``initialize`` handshake and sessions, as before the move to 2.x.

The servers are the ones of ``tests/test_mcp.py``: the demo host's ASGI application under uvicorn on
127.0.0.1, and ``manage.py webtools mcp --user NAME`` on a file database.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import mcp.types as types
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.servers import LoopbackServer, Reply
from tests.test_integrations_openai import BRAVE_KEY, WRAPPED, save_options
from tests.test_integrations_openai import web  # noqa: F401  (the fixture)
from tests.test_mcp import SETUP as STDIO_SETUP
from tests.test_mcp import (  # noqa: F401  (fixtures)
    accepting, declining, links, mcp_server, mcp_url, over_http, over_stdio, stdio_provenance_env, texts, token_for,
)
from webtools.plugins.web_fetch.schema import OUTPUT_SCHEMA as FETCH_OUTPUT
from webtools.plugins.web_search import OUTPUT_SCHEMA as SEARCH_OUTPUT

ROOT = Path(__file__).resolve().parents[1]
MODERN = "2026-07-28"
MCP1 = ROOT / ".venv-mcp1"
PAGE = ("<html><head><title>Tides</title></head><body><article><p>" + "The Moon pulls the sea. " * 40
        + "</p></article></body></html>")


def conversation(name: str) -> dict:
    from webtools.mcp.stateless import CONVERSATION_META_KEY

    return {CONVERSATION_META_KEY: name}


# -- the 2.x client, 2026-07-28, over streamable HTTP ------------------------------------------------


def test_http_2026_lists_and_calls_both_tools_with_structured_content(web, mcp_server):  # noqa: F811
    url, mount = mcp_server
    user, engine, site = web

    async def steps(client):
        listed = await client.list_tools()
        searched = await client.call_tool("web_search", {"query": "django orm", "max_results": 2})
        fetched = await client.call_tool("web_fetch", {"url": site.url("/article")})
        return client.protocol_version, listed, searched, fetched

    asked = []
    version, listed, searched, fetched = over_http(url, token_for(user), steps, mode=MODERN,
                                                   elicitation=accepting(asked))
    assert version == MODERN
    assert mount.open_sessions(user.pk) == []  # stateless: no session was opened
    assert [t.name for t in listed.tools] == ["web_search", "web_fetch"]
    assert [t.output_schema for t in listed.tools] == [SEARCH_OUTPUT, FETCH_OUTPUT]
    # The list is the user's own, and may be kept for a minute.
    assert (listed.ttl_ms, listed.cache_scope) == (60_000, "private")
    # The client checked each structuredContent against the tool's outputSchema; the text is wrapped.
    assert searched.is_error is False and searched.structured_content["engine"] == "brave"
    assert [r["url"] for r in searched.structured_content["results"]] == [
        "https://www.djangoproject.com/", "https://docs.djangoproject.com/en/5.2/"]
    assert WRAPPED.match(texts(searched)[0])
    assert links(searched)[0] == ("https://www.djangoproject.com/", "Django & the web")
    assert fetched.is_error is False and fetched.structured_content["url"] == site.url("/article")
    assert WRAPPED.match(texts(fetched)[0]) and len(asked) == 1
    assert BRAVE_KEY not in searched.model_dump_json() and len(engine.requests) == 1


def test_http_2026_an_unseen_url_is_confirmed_through_input_required(web, mcp_url):  # noqa: F811
    user, _, site = web
    token = token_for(user)
    url = site.url("/article?lang=en")

    async def fetch_twice(client):
        return [await client.call_tool("web_fetch", {"url": url}, meta=conversation("yes")) for _ in range(2)]

    async def fetch(client):
        return await client.call_tool("web_fetch", {"url": url}, meta=conversation("no"))

    no = []
    declined = over_http(mcp_url, token, fetch, mode=MODERN, elicitation=declining(no))
    cannot = over_http(mcp_url, token, fetch, mode=MODERN)
    assert site.hits("/article") == 0
    yes = []
    first, second = over_http(mcp_url, token, fetch_twice, mode=MODERN, elicitation=accepting(yes))

    # Asked once: the yes was kept in the conversation (Django's cache), and so was the page, which the
    # second call read from the turn cache kept there.
    (question,) = yes
    assert "Site: 127.0.0.1\n" in question.message and f"Address: {url}\n" in question.message
    assert question.requested_schema["properties"]["fetch"]["type"] == "boolean"
    assert first.is_error is False and second.is_error is False and site.hits("/article") == 1
    assert len(no) == 1 and declined.is_error
    assert "The user declined to let this address be fetched" in texts(declined)[0]
    assert cannot.is_error and "this client cannot ask the user" in texts(cannot)[0]
    for refused in (declined, cannot):
        assert refused.structured_content["error_code"] == "url_not_in_prior_context"
        assert "lang=en" not in texts(refused)[0]


def test_http_2026_conversations_are_kept_apart_and_per_user(web, mcp_url, django_user_model):  # noqa: F811
    user, _, site = web
    url = site.url("/article")

    def fetch_in(name):
        async def steps(client):
            meta = conversation(name) if name is not None else None
            return await client.call_tool("web_fetch", {"url": url}, meta=meta)
        return steps

    asked = []
    for name in ("a", "a", "b", None, None):
        assert over_http(mcp_url, token_for(user), fetch_in(name), mode=MODERN,
                         elicitation=accepting(asked)).is_error is False
    # "a" asked once, "b" once, the user's default conversation (no _meta) once.
    assert len(asked) == 3
    # Another user naming the same conversation has their own.
    erin = django_user_model.objects.create_user("erin", password="pw-erin-123")
    over_http(mcp_url, token_for(erin), fetch_in("a"), mode=MODERN, elicitation=accepting(asked))
    assert len(asked) == 4


def test_http_2026_max_uses_counts_per_user_whatever_conversation_is_named(web, mcp_url, settings):  # noqa: F811
    from webtools.models import PluginOptions

    user, engine, _ = web
    settings.WEBTOOLS = {**settings.WEBTOOLS, "MCP": {"USES_WINDOW": 10 ** 9}}
    PluginOptions.objects.filter(plugin="web_search").delete()
    save_options("web_search", engine="brave", api_key=BRAVE_KEY, enabled_by_default=True, max_uses=2)

    async def steps(client):
        return [await client.call_tool("web_search", {"query": f"django {n}"}, meta=conversation(str(n)))
                for n in range(3)]

    results = over_http(mcp_url, token_for(user), steps, mode=MODERN)
    assert [r.is_error for r in results] == [False, False, True]
    assert "The search limit for this answer is reached." in texts(results[2])[0] and len(engine.requests) == 2


def post_2026(url: str, token: str, params: dict) -> httpx.Response:
    """A ``2026-07-28`` ``tools/call`` by hand, from a client declaring form elicitation (no token: no
    ``Authorization`` header)."""
    from mcp.types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

    meta = {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {"elicitation": {"form": {}}}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(url, json=body, timeout=30, headers={
        **auth, "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": params["name"]})


def test_http_2026_an_answer_needs_the_sealed_state_of_its_own_question(web, mcp_url, django_user_model):  # noqa: F811
    user, _, site = web
    token = token_for(user)
    call = {"name": "web_fetch", "arguments": {"url": site.url("/article")}}
    yes = {"confirm_url": {"action": "accept", "content": {"fetch": True}}}

    # A yes nobody was asked for: the question is put (input_required), nothing is fetched.
    unasked = post_2026(mcp_url, token, {**call, "inputResponses": yes}).json()["result"]
    assert unasked["resultType"] == "input_required" and list(unasked["inputRequests"]) == ["confirm_url"]
    state = unasked["requestState"]
    assert site.url("/article") not in state  # sealed: the client cannot read it
    # A forged or altered state is refused.
    for forged in ("v1.forged", state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")):
        error = post_2026(mcp_url, token, {**call, "inputResponses": yes, "requestState": forged}).json()["error"]
        assert error["message"] == "Invalid or expired requestState"
    # The state of a question about another call, or given to another user, answers nothing.
    other = post_2026(mcp_url, token, {"name": "web_fetch", "arguments": {"url": site.url("/robots.txt")},
                                       "inputResponses": yes, "requestState": state}).json()
    assert other["error"]["message"] == "Invalid or expired requestState"
    erin = token_for(django_user_model.objects.create_user("erin", password="pw-erin-123"))
    stolen = post_2026(mcp_url, erin, {**call, "inputResponses": yes, "requestState": state}).json()
    assert stolen["error"]["message"] == "Invalid or expired requestState"
    assert site.hits("/article") == 0
    # Its own state with the yes: read.
    answered = post_2026(mcp_url, token, {**call, "inputResponses": yes, "requestState": state}).json()["result"]
    assert answered["resultType"] == "complete" and answered["isError"] is False
    assert site.hits("/article") == 1


def test_http_2026_a_call_starts_one_turn_and_no_tool_marks_a_header_parameter(
        web, mcp_url, monkeypatch):  # noqa: F811
    # The SDK checks a stateless call's Mcp-Param-* headers against the tool's x-mcp-header parameters,
    # running tools/list (a turn's start) to find them unless told there are none: webtools has none.
    from webtools.host import start_turn
    from webtools.mcp import asgi
    from webtools.mcp.server import tool_list

    user, _, _ = web
    with start_turn(user) as turn:
        schemas = [tool.input_schema for tool in tool_list(turn)]
    assert len(schemas) == 2 and "x-mcp-header" not in json.dumps(schemas)
    turns = []
    real = asgi._start_turn
    monkeypatch.setattr(asgi, "_start_turn", lambda *args, **kw: turns.append(real(*args, **kw)) or turns[-1])
    response = post_2026(mcp_url, token_for(user), {"name": "web_search", "arguments": {"query": "django"}})
    assert response.json()["result"]["isError"] is False and len(turns) == 1


def test_http_2026_requests_pass_the_same_token_check(web, mcp_url):  # noqa: F811
    user, _, site = web
    call = {"name": "web_fetch", "arguments": {"url": site.url("/article")}}
    for token in ("", "not-a-token"):
        response = post_2026(mcp_url, token, call)
        assert response.status_code == 401 and response.headers["www-authenticate"].startswith("Bearer")
    assert post_2026(mcp_url, token_for(user), call).status_code == 200
    assert site.hits("/article") == 0


def test_http_a_2x_client_in_auto_mode_discovers_2026(web, mcp_server):  # noqa: F811
    url, mount = mcp_server
    user, _, _ = web

    async def steps(client):
        return client.protocol_version, [t.name for t in (await client.list_tools()).tools]

    assert over_http(url, token_for(user), steps, mode="auto") == (MODERN, ["web_search", "web_fetch"])
    assert mount.open_sessions(user.pk) == []


def test_the_request_state_key_is_every_workers_and_follows_the_secret_key(settings):
    """Two workers (two servers built apart) open each other's sealed states: the key comes from
    ``SECRET_KEY``, not from the process. Another ``SECRET_KEY`` opens nothing, unless the old one is
    among ``SECRET_KEY_FALLBACKS``."""
    from types import SimpleNamespace

    from mcp.server.context import ServerRequestContext
    from mcp.shared.exceptions import MCPError

    from webtools.mcp.stateless import request_state_boundary

    user = SimpleNamespace(pk=7)
    params = {"name": "web_fetch", "arguments": {"url": "https://a.example/"}}

    def context(state=None):
        return ServerRequestContext(session=None, lifespan_context=None, protocol_version=MODERN,
                                    method="tools/call", params={**params, "requestState": state})

    async def seal():
        async def ask(ctx):
            return types.InputRequiredResult(input_requests={}, request_state="asked")
        return (await request_state_boundary(lambda ctx: user)(context(), ask)).request_state

    async def open_with(boundary, token):
        seen = []

        async def handler(ctx):
            seen.append(ctx.params["requestState"])
            return {}
        await boundary(context(token), handler)
        return seen

    token = anyio.run(seal)
    assert anyio.run(open_with, request_state_boundary(lambda ctx: user), token) == ["asked"]
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    with pytest.raises(MCPError, match="Invalid or expired requestState"):
        anyio.run(open_with, request_state_boundary(lambda ctx: user), token)
    settings.SECRET_KEY_FALLBACKS = [__import__("tests.settings", fromlist=["SECRET_KEY"]).SECRET_KEY]
    assert anyio.run(open_with, request_state_boundary(lambda ctx: user), token) == ["asked"]


# -- the 2.x client, 2026-07-28, over stdio ----------------------------------------------------------


@pytest.fixture(scope="module")
def stdio_search_env(tmp_path_factory):
    """A stdio server's environment whose user has both tools: web_search on a loopback engine answering
    as Brave (a recorded answer), web_fetch keeping its default (only URLs the conversation has seen,
    or the user confirms). Yields ``(env, engine)``."""
    from tests.test_integrations_openai import SEARCH_FIXTURE

    database = tmp_path_factory.mktemp("mcp-search") / "db.sqlite3"
    answer = Reply(200, {"Content-Type": "application/json"}, SEARCH_FIXTURE.read_bytes())
    with LoopbackServer({"*": answer}) as engine:
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.mcp_stdio_settings", "PYTHONPATH": str(ROOT),
               "DATABASE_URL": f"sqlite:///{database}", "WEBTOOLS_TEST_BRAVE_URL": engine.url("/res/v1/web/search")}
        setup = STDIO_SETUP.replace('"only_conversation_urls": False', '"only_conversation_urls": True') + (
            "from tests.test_integrations_openai import save_options\n"
            f"save_options('web_search', engine='brave', api_key={BRAVE_KEY!r}, enabled_by_default=True)\n")
        done = subprocess.run([sys.executable, "-c", setup], env=env, cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        yield env, engine


def test_stdio_2026_lists_and_calls_both_tools_and_confirms(stdio_search_env):
    env, engine = stdio_search_env
    with LoopbackServer({"/robots.txt": Reply(404, {}, ""),
                         "/tides": Reply(200, {"Content-Type": "text/html; charset=utf-8"}, PAGE)}) as site:
        url = site.url("/tides")

        async def steps(client):
            return (client.protocol_version, await client.list_tools(),
                    await client.call_tool("web_search", {"query": "django orm", "max_results": 2}),
                    await client.call_tool("web_fetch", {"url": url}),
                    await client.call_tool("web_fetch", {"url": url}))

        async def fetch(client):
            return await client.call_tool("web_fetch", {"url": url}, meta=conversation("other"))

        no = []
        declined = over_stdio(env, "dana", fetch, elicitation=declining(no), mode=MODERN)
        cannot = over_stdio(env, "dana", fetch, mode=MODERN)
        assert site.hits("/tides") == 0
        yes = []
        version, listed, searched, first, again = over_stdio(env, "dana", steps, elicitation=accepting(yes),
                                                             mode=MODERN)
        assert site.hits("/tides") == 1

    assert version == MODERN and [t.name for t in listed.tools] == ["web_search", "web_fetch"]
    assert [t.output_schema for t in listed.tools] == [SEARCH_OUTPUT, FETCH_OUTPUT]
    # structuredContent as the client checked it against outputSchema; the text wrapped.
    assert searched.is_error is False and searched.structured_content["engine"] == "brave"
    assert WRAPPED.match(texts(searched)[0]) and len(engine.requests) == 1
    assert first.is_error is False and "The Moon pulls the sea." in texts(first)[0]
    assert first.structured_content["url"] == url and again.is_error is False
    assert len(yes) == 1 and f"Address: {url}\n" in yes[0].message
    assert len(no) == 1 and declined.is_error and "The user declined" in texts(declined)[0]
    assert cannot.is_error and "this client cannot ask the user" in texts(cannot)[0]


# -- the 1.x client (.venv-mcp1), 2025-11-25 sessions ----------------------------------------------


@pytest.fixture(scope="session")
def mcp1_python() -> Path:
    """The 1.x client's interpreter, built by ``make .venv-mcp1/.installed`` if it is not there yet
    (``make test`` builds it first; a worktree that runs pytest alone gets it here)."""
    stamp = MCP1 / ".installed"
    if not stamp.exists():
        done = subprocess.run(["make", ".venv-mcp1/.installed"], cwd=ROOT, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
    return MCP1 / "bin" / "python"


def mcp1(python: Path, plan: dict) -> dict:
    done = subprocess.run([str(python), str(ROOT / "tests" / "mcp1" / "client.py"), json.dumps(plan)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_1x_client_is_the_1x_sdk(mcp1_python):
    version = subprocess.run([str(mcp1_python), "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    assert version == "1.30.0"


def test_1x_client_over_http_lists_and_calls(web, mcp_url, mcp1_python):  # noqa: F811
    user, _, site = web
    out = mcp1(mcp1_python, {
        "transport": "http", "url": mcp_url, "token": token_for(user), "elicitation": "accept",
        "steps": [["list"], ["call", "web_search", {"query": "django orm", "max_results": 2}],
                  ["call", "web_fetch", {"url": site.url("/article")}]],
    })
    listed, searched, fetched = out["steps"]
    assert out["protocol"] == "2025-11-25"
    assert [t["name"] for t in listed["tools"]] == ["web_search", "web_fetch"]
    assert [t["outputSchema"] for t in listed["tools"]] == [SEARCH_OUTPUT, FETCH_OUTPUT]
    assert searched["isError"] is False and searched["structuredContent"]["engine"] == "brave"
    assert WRAPPED.match(searched["content"][0]["text"])
    # The pasted URL was put to the 1.x client's user through elicitation, and read.
    assert len(out["asked"]) == 1 and f"Address: {site.url('/article')}\n" in out["asked"][0]["message"]
    assert fetched["isError"] is False and site.hits("/article") == 1


def test_1x_client_over_stdio_lists_calls_and_confirms(stdio_provenance_env, mcp1_python):  # noqa: F811
    with LoopbackServer({"/robots.txt": Reply(404, {}, ""),
                         "/tides": Reply(200, {"Content-Type": "text/html; charset=utf-8"}, PAGE)}) as site:
        url = site.url("/tides")
        stdio = {"transport": "stdio", "command": [sys.executable, "manage.py", "webtools", "mcp", "--user", "dana"],
                 "env": stdio_provenance_env, "cwd": str(ROOT)}
        steps = [["list"], ["call", "web_fetch", {"url": url}]]
        results = {how: mcp1(mcp1_python, {**stdio, "elicitation": how, "steps": steps}) for how in ("decline", None)}
        assert site.hits("/tides") == 0
        results["accept"] = mcp1(mcp1_python, {**stdio, "elicitation": "accept",
                                               "steps": [["call", "web_fetch", {"url": url}]]})
        assert site.hits("/tides") == 1

    listed, declined = results["decline"]["steps"]
    assert [t["name"] for t in listed["tools"]] == ["web_fetch"]
    assert declined["isError"] and "The user declined" in declined["content"][0]["text"]
    assert "this client cannot ask the user" in results[None]["steps"][1]["content"][0]["text"]
    (fetched,) = results["accept"]["steps"]
    assert fetched["isError"] is False and fetched["structuredContent"]["url"] == url
    assert "The Moon pulls the sea." in fetched["content"][0]["text"]


# -- what the stateless door reads from a request -----------------------------------------------------

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=10)


@given(state=st.one_of(st.none(), st.text(max_size=40), JSON.map(json.dumps)),
       response=st.one_of(st.none(), st.fixed_dictionaries({"action": st.sampled_from(["accept", "decline", "cancel"]),
                                                           "content": st.one_of(st.none(), st.dictionaries(
                                                               st.sampled_from(["fetch", "other"]),
                                                               st.one_of(st.booleans(), st.text(max_size=3)),
                                                               max_size=2))})))
@hypothesis_settings(max_examples=200, deadline=None)
def test_only_a_yes_to_the_question_about_this_very_url_confirms_it(state, response):
    from webtools.mcp.stateless import CONFIRM_KEY, answer_to

    url = "https://a.example/x"
    params = types.CallToolRequestParams(name="web_fetch", arguments={"url": url}, request_state=state,
                                         input_responses={CONFIRM_KEY: response} if response is not None else None)
    answer = answer_to(params, url)
    about_this_url = state is not None and state == json.dumps({"confirm": url})
    yes = response is not None and response["action"] == "accept" and (response["content"] or {}).get("fetch") is True
    assert answer == (None if not about_this_url else yes)


@given(named=st.one_of(st.none(), JSON, st.text(max_size=300)), other=st.text(max_size=20))
@hypothesis_settings(max_examples=200, deadline=None)
def test_a_conversation_is_the_users_own_whatever_meta_names_it(named, other):
    from types import SimpleNamespace

    from webtools.mcp.stateless import CONVERSATION_META_KEY, MAX_CONVERSATION, StoredConversation

    meta = {CONVERSATION_META_KEY: named}
    dana, erin = SimpleNamespace(pk=1), SimpleNamespace(pk=2)
    mine = StoredConversation.of(dana, meta)
    assert mine.key != StoredConversation.of(erin, meta).key  # never another user's
    assert mine.key.startswith("webtools:mcp:conversation:1:") and len(mine.key) < 100
    counts = isinstance(named, str) and len(named) <= MAX_CONVERSATION
    assert (mine.key == StoredConversation.of(dana, None).key) == (not counts or named == "")
    if counts and other != named:
        assert StoredConversation.of(dana, {CONVERSATION_META_KEY: other}).key != mine.key


# -- a stored conversation stays bounded, and concurrent calls keep each other's pages ------------------

CACHES = st.dictionaries(st.sampled_from(["web_fetch", "web_search"]),
                         st.dictionaries(st.text(max_size=4), st.integers(), max_size=40), max_size=2)


@given(kept=CACHES, new=CACHES)
@hypothesis_settings(max_examples=200, deadline=None)
def test_a_stored_turn_cache_keeps_the_newest_entries_of_each_tool_within_its_bound(kept, new):
    from webtools.mcp.stateless import MAX_CACHED, merged_turn_cache

    merged = merged_turn_cache(kept, new)
    assert set(merged) == set(kept) | set(new)
    for tool, entries in merged.items():
        both = {**kept.get(tool, {}), **new.get(tool, {})}
        assert len(entries) == min(len(both), MAX_CACHED)
        assert list(entries.items()) == list(both.items())[-MAX_CACHED:]  # the newest, this call's on a tie


@pytest.mark.django_db
def test_two_calls_of_one_conversation_at_once_keep_each_others_pages():
    from types import SimpleNamespace

    from webtools.mcp.stateless import MAX_CACHED, StoredConversation

    stored = StoredConversation.of(SimpleNamespace(pk=7), {})
    first = anyio.run(stored.load, lambda *args, **kwargs: None)
    second = anyio.run(stored.load, lambda *args, **kwargs: None)  # both loaded before either saved
    first.turn_cache["web_fetch"] = {"https://a.example/": "page a"}
    second.turn_cache["web_fetch"] = {"https://b.example/": "page b"}
    anyio.run(stored.save, first)
    anyio.run(stored.save, second)
    after = anyio.run(stored.load, lambda *args, **kwargs: None)
    assert after.turn_cache["web_fetch"] == {"https://a.example/": "page a", "https://b.example/": "page b"}

    many = anyio.run(stored.load, lambda *args, **kwargs: None)
    many.turn_cache["web_fetch"] = {f"https://{i}.example/": "page" for i in range(3 * MAX_CACHED)}
    anyio.run(stored.save, many)
    kept = anyio.run(stored.load, lambda *args, **kwargs: None).turn_cache["web_fetch"]
    assert list(kept) == [f"https://{i}.example/" for i in range(2 * MAX_CACHED, 3 * MAX_CACHED)]
