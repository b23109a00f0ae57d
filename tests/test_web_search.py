"""The web search plugin end to end: options and user settings, who searches with which engine and key,
the tool's input rules, its output and citations, and every error the model may see.

Engines are recorded answers served by a loopback server that ``WEBTOOLS["ENGINE_URLS"]`` points the
plugin at; nothing reaches the internet.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from webtools.exceptions import ToolCancelled, ToolError
from webtools.net import AddressPolicy, HttpClient, client_for
from webtools.plugins.web_search import NOT_SET_UP, SECRET_QUERY, WebSearchPlugin
from webtools.plugins.web_search import search as shared
from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import Engine, Request, Search, SearchResult
from webtools.plugins.web_search.resolution import NEEDS_OWN_ENGINE, NOT_AVAILABLE
from webtools.runtime import Ingesters, PluginSetup, Registry, Turn
from webtools.testing import tool_context_for_test

from .servers import LoopbackServer, Reply

FIXTURES = Path(__file__).parent / "fixtures" / "search"
ADMIN_KEY = "admin-key-0123456789abcdef"
USER_KEY = "user-key-fedcba9876543210"
EXPECTED_URLS = [
    "https://www.djangoproject.com/",
    "https://docs.djangoproject.com/en/5.2/",
    "https://example.net/long",
    "https://www.python.org/about/",
]


# -- a loopback engine --------------------------------------------------------------------------------


class EngineServer:
    """A ``tests.servers.LoopbackServer`` serving recorded engine answers by path; ``requests`` are the
    requests it got, as dicts (method, path, query, headers, body)."""

    def __init__(self) -> None:
        self.loopback = LoopbackServer().start()
        self.base = self.loopback.origin

    @property
    def requests(self) -> list[dict]:
        return [
            {
                "method": r.method,
                "path": r.path,
                "query": parse_qs(r.query),
                "headers": r.headers,
                "body": r.body,
            }
            for r in self.loopback.requests
        ]

    def route(
        self,
        path: str,
        body: str | bytes,
        status: int = 200,
        content_type: str = "application/json",
        delay: float = 0.0,
    ) -> None:
        reply = Reply(status, {"Content-Type": content_type}, body)
        if delay:

            def slow(request, reply=reply):
                time.sleep(delay)
                return reply

            self.loopback.route(path, slow)
        else:
            self.loopback.route(path, reply)

    def record(self, engine_id: str, status: int = 200, name: str | None = None, delay: float = 0.0) -> None:
        """Serve the recorded answer ``name`` at ``/<engine_id>``; by default the engine's constructed
        answer (the six standard entries) or, for engines without one, its real recorded answer."""
        html = engine_id == "duckduckgo"
        if name is None:
            constructed = f"{engine_id}.html" if html else f"{engine_id}.json"
            name = constructed if (FIXTURES / constructed).exists() else f"{engine_id}_recorded.json"
        if not (FIXTURES / name).exists():
            return  # no answer to serve (SOURCES.md says why): the path answers 404
        self.route(
            f"/{engine_id}",
            (FIXTURES / name).read_bytes(),
            status,
            "text/html; charset=utf-8" if html else "application/json",
            delay,
        )

    def close(self) -> None:
        self.loopback.stop()


@pytest.fixture
def server(settings):
    srv = EngineServer()
    for engine in ENGINES:
        srv.record(engine.id)
    srv.route("/search", (FIXTURES / "searxng.json").read_bytes())  # a SearXNG base URL is the server's root
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": {e.id: f"{srv.base}/{e.id}" for e in ENGINES}}
    yield srv
    srv.close()


@pytest.fixture
def plain():
    with HttpClient(policy=None) as client:
        yield client


@pytest.fixture
def guarded():
    """The guarded client with the default policy: loopback is refused."""
    with client_for(False) as client:
        yield client


# -- helpers ------------------------------------------------------------------------------------------


def options(plugin: WebSearchPlugin | None = None, **values) -> dict:
    """The operator's options, validated by the plugin's own form."""
    plugin = plugin or WebSearchPlugin()
    data = {**plugin.default_options(), "engine": "brave", "api_key": ADMIN_KEY, **values}
    form = plugin.options_form(data=data)
    assert form.is_valid(), form.errors
    return form.cleaned_data


def tool(opts: dict, plugin: WebSearchPlugin | None = None, configured: bool = True):
    plugin = plugin or WebSearchPlugin()
    registry = Registry()
    plugin.setup(PluginSetup("web_search", opts, registry, Ingesters(), configured=configured))
    return registry, registry.get("web_search")


def call(opts: dict, input: dict, *, http, fetch=None, roles=("user",), user_settings=None, plugin=None):
    """Run one call of the tool's handler directly (no Turn, so no Turn-level masking)."""
    _, web_search = tool(opts, plugin)
    ctx, cited = tool_context_for_test(
        fetch=fetch or http, http=http, roles=set(roles), settings=user_settings or {}
    )
    return web_search.handler(input, ctx), cited, ctx


def error_of(opts: dict, input: dict, **kwargs) -> str:
    with pytest.raises(ToolError) as info:
        call(opts, input, **kwargs)
    return str(info.value)


def urls(output: dict) -> list[str]:
    return [r["url"] for r in output["results"]]


# -- options ------------------------------------------------------------------------------------------


def test_options_without_an_engine_are_refused():
    plugin = WebSearchPlugin()
    form = plugin.options_form(data={**plugin.default_options()})
    assert not form.is_valid()
    assert "engine" in form.errors


@pytest.mark.parametrize(
    "engine,field,message",
    [
        ("brave", "api_key", "Enter the API key that Brave needs."),
        ("kagi", "api_key", "Enter the API key that Kagi needs."),
        ("searxng", "base_url", "Enter the base URL that SearXNG needs."),
        ("google", "cx", "Enter the Search engine ID (cx) that Google Programmable Search needs."),
    ],
)
def test_options_missing_what_the_engine_needs_are_refused_on_that_field(engine, field, message):
    plugin = WebSearchPlugin()
    data = {**plugin.default_options(), "engine": engine, "api_key": ADMIN_KEY if field != "api_key" else ""}
    form = plugin.options_form(data=data)
    assert not form.is_valid()
    assert form.errors[field] == [message]


def test_options_defaults_follow_the_seed():
    defaults = WebSearchPlugin().default_options()
    assert defaults["engine"] is None
    assert defaults["admin_engine_roles"] == ["user"]
    assert (defaults["enabled_by_default"], defaults["user_toggle"], defaults["user_engines"]) == (
        False,
        True,
        True,
    )
    assert defaults["max_results"] == 5
    assert defaults["safe_search"] == "moderate"
    assert defaults["blocked_domains"] == []


@pytest.mark.parametrize(
    "field,value",
    [
        ("max_results", 0),
        ("max_results", 21),
        ("country", "USA"),
        ("safe_search", "some"),
        ("base_url", "ftp://searx.example.org"),
        ("blocked_domains", "https://spam.example/path"),
    ],
)
def test_options_out_of_range_are_refused(field, value):
    plugin = WebSearchPlugin()
    form = plugin.options_form(
        data={
            **plugin.default_options(),
            "engine": "searxng",
            "base_url": "http://searxng:8080",
            field: value,
        }
    )
    assert not form.is_valid()
    assert field in form.errors


@pytest.mark.parametrize("value, stored", [
    ("http://SearXNG:8080/", "http://searxng:8080"),
    ("https://search.%65xample.com/searx/", "https://search.example.com/searx"),
])
def test_a_base_url_is_stored_as_the_client_will_read_it(value, stored):
    assert options(engine="searxng", api_key="", base_url=value)["base_url"] == stored


@pytest.mark.parametrize("value, reason", [
    ("http://searx.example.org\\@10.0.0.5/", "backslash"),
    ("http://admin:s3cret@searxng:8080", "user name or password"),
    ("http://searxng:99999", "outside 1-65535"),
    ("http://searxng:8080/?format=json", "without a query"),
])
def test_a_base_url_that_cannot_be_read_unambiguously_is_refused_saying_why(value, reason):
    plugin = WebSearchPlugin()
    form = plugin.options_form(data={**plugin.default_options(), "engine": "searxng", "base_url": value})
    assert not form.is_valid()
    assert reason in " ".join(form.errors["base_url"])


def test_options_accept_an_internal_searxng_address_and_normalize_lists():
    opts = options(
        engine="searxng",
        api_key="",
        base_url="http://searxng:8080/",
        country="de",
        blocked_domains="Spam.Example\nads.example",
    )
    assert opts["base_url"] == "http://searxng:8080"
    assert opts["country"] == "DE"
    assert opts["blocked_domains"] == ["spam.example", "ads.example"]


def test_show_when_derives_from_the_engine_list():
    rules = WebSearchPlugin().show_when
    assert rules["api_key"] == ("engine", tuple(e.id for e in ENGINES if e.needs_key))
    assert rules["base_url"] == ("engine", ("searxng", "yacy"))
    assert rules["cx"] == ("engine", ("google",))
    # The reranker's model and key hang on the reranker, not the engine (rerank.py).
    assert set(rules) == {"api_key", "base_url", "cx", "safe_search", "country", "rerank_model", "rerank_api_key"}
    assert rules["rerank_api_key"] == rules["rerank_model"] == ("rerank_with", ("jina", "cohere"))


def test_safe_search_and_country_show_only_for_engines_that_pass_them_on():
    rules = WebSearchPlugin().show_when
    assert set(rules["safe_search"][1]) == {
        "duckduckgo", "brave", "searxng", "google", "exa", "serpapi", "searchapi", "serpstack", "mojeek", "youcom"
    }
    assert set(rules["country"][1]) == {
        "brave", "firecrawl", "google", "exa", "serper", "serpapi", "searchapi", "serpstack", "serply",
        "perplexity", "mojeek", "youcom",
    }
    assert "tavily" not in rules["country"][1] and "kagi" not in rules["safe_search"][1]


def test_user_settings_offer_default_and_every_engine():
    form = WebSearchPlugin().user_settings_form(options())
    choices = [value for value, _ in form.base_fields["engine"].choices]
    assert choices == ["default", *(e.id for e in ENGINES)]
    assert form.base_fields["engine"].initial == "default"
    assert {"api_key", "base_url"} <= set(form.base_fields)


def test_user_settings_need_a_key_for_a_keyed_engine_other_than_the_operators():
    form_class = WebSearchPlugin().user_settings_form(options())
    kagi = form_class(data={"engine": "kagi"})
    assert not kagi.is_valid()
    assert kagi.errors["api_key"] == ["Add your Kagi API key."]
    assert form_class(data={"engine": "brave"}).is_valid()  # the operator's engine; their key may fill it
    assert form_class(data={"engine": "default"}).is_valid()


def test_user_engines_off_removes_the_user_settings():
    assert WebSearchPlugin().user_settings_form(options(user_engines=False)) is None


# -- a test engine passed in ----------------------------------------------------------------------------


class EchoEngine(Engine):
    """A test engine: GET <endpoint>?query=..., answering {"hits": [{"name", "link"}]}."""

    id = "echo"
    name = "Echo"
    needs_key = True
    endpoint = "https://echo.invalid/search"
    operators = ("echo:word",)

    def request(self, search: Search) -> Request:
        return Request(
            "GET", search.endpoint, headers={"X-Echo-Key": search.api_key}, params={"query": search.query}
        )

    def parse(self, body: str) -> list[SearchResult]:
        return [SearchResult(hit["name"], hit["link"]) for hit in self.load_json(body)["hits"]]


def test_test_engine_passed_to_the_plugin_is_selectable_and_validated():
    plugin = WebSearchPlugin(engines=[EchoEngine()])
    form = plugin.options_form(data={**plugin.default_options(), "engine": "echo"})
    assert not form.is_valid()
    assert form.errors["api_key"] == ["Enter the API key that Echo needs."]
    assert plugin.options_form(data={**plugin.default_options(), "engine": "brave", "api_key": "x"}).errors[
        "engine"
    ]
    assert plugin.show_when["api_key"] == ("engine", ("echo",))
    assert [v for v, _ in plugin.user_settings_form({"engine": "echo"}).base_fields["engine"].choices] == [
        "default",
        "echo",
    ]


def test_test_engine_searches_through_the_shared_code(server, plain, settings):
    plugin = WebSearchPlugin(engines=[EchoEngine()])
    server.route("/echo", json.dumps({"hits": [{"name": "<i>Hi</i>", "link": "https://echo.example/"}]}))
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": {"echo": f"{server.base}/echo"}}
    opts = options(plugin, engine="echo")
    output, cited, _ = call(opts, {"query": "hello"}, http=plain, plugin=plugin)
    assert output == {"results": [{"title": "Hi", "url": "https://echo.example/", "snippet": ""}], "engine": "echo"}
    assert server.requests[-1]["headers"]["X-Echo-Key"] == ADMIN_KEY
    assert tool(opts, plugin)[1].description.endswith("Supported operators: echo:word.")


# -- the tool as registered -------------------------------------------------------------------------------


def test_tool_is_untrusted_and_follows_the_switch_options():
    _, web_search = tool(options(enabled_by_default=True, user_toggle=False))
    assert web_search.name == "web_search"
    assert web_search.untrusted is True
    assert (web_search.default_enabled, web_search.user_toggle) == (True, False)
    _, web_search = tool(options())
    assert (web_search.default_enabled, web_search.user_toggle) == (False, True)


def test_description_lists_the_operators_engines_operators():
    _, web_search = tool(options())
    assert web_search.description == (
        "Search the web. Returns a title, URL, and snippet for each result. "
        'Supported operators: site:example.com, "exact phrase", -term, filetype:pdf, intitle:word.'
    )
    _, web_search = tool(options(engine="tavily"))
    assert web_search.description == "Search the web. Returns a title, URL, and snippet for each result."


def test_unconfigured_plugin_registers_a_tool_that_says_so():
    plugin = WebSearchPlugin()
    _, web_search = tool(plugin.default_options(), plugin, configured=False)
    assert web_search.default_enabled is False
    ctx, _ = tool_context_for_test(fetch=object(), http=object())
    with pytest.raises(ToolError, match="not set up yet"):
        web_search.handler({"query": "django"}, ctx)
    assert NOT_SET_UP.startswith("Web search is not set up yet")


def test_input_schema_caps_max_results_at_the_option():
    _, web_search = tool(options(max_results=3))
    schema = web_search.input_schema
    assert schema["properties"]["max_results"]["maximum"] == 3
    assert schema["properties"]["query"]["maxLength"] == 400
    assert schema["properties"]["freshness"]["enum"] == ["day", "week", "month", "year"]
    # query or queries, which the tool checks: some providers refuse a top-level anyOf.
    assert "required" not in schema and schema["properties"]["queries"]["maxItems"] == 5


# -- resolution rule 1: the operator's engine ------------------------------------------------------------


def test_default_user_engine_searches_with_the_operators_engine_and_key(server, plain):
    output, cited, _ = call(options(), {"query": "django"}, http=plain, user_settings={"engine": "default"})
    assert urls(output) == EXPECTED_URLS
    request = server.requests[-1]
    assert (request["method"], request["path"]) == ("GET", "/brave")
    assert request["headers"]["X-Subscription-Token"] == ADMIN_KEY
    assert request["query"]["q"] == ["django"]


def test_user_without_settings_searches_with_the_operators_engine(server, plain):
    output, _, _ = call(options(engine="kagi"), {"query": "django"}, http=plain)
    assert urls(output) == EXPECTED_URLS
    assert server.requests[-1]["headers"]["Authorization"] == f"Bot {ADMIN_KEY}"


def test_user_engines_off_ignores_the_users_stored_engine(server, plain):
    stale = {"engine": "kagi", "api_key": USER_KEY}
    output, _, _ = call(options(user_engines=False), {"query": "django"}, http=plain, user_settings=stale)
    assert urls(output) == EXPECTED_URLS
    assert server.requests[-1]["path"] == "/brave"
    assert server.requests[-1]["headers"]["X-Subscription-Token"] == ADMIN_KEY


# -- resolution rule 2: the user's engine ------------------------------------------------------------------


def test_user_engine_searches_with_the_users_key(server, plain):
    output, _, _ = call(
        options(), {"query": "django"}, http=plain, user_settings={"engine": "kagi", "api_key": USER_KEY}
    )
    assert urls(output) == EXPECTED_URLS
    assert server.requests[-1]["path"] == "/kagi"
    assert server.requests[-1]["headers"]["Authorization"] == f"Bot {USER_KEY}"


def test_user_picking_the_operators_engine_without_a_key_uses_the_operators_key(server, plain):
    call(options(), {"query": "django"}, http=plain, user_settings={"engine": "brave", "api_key": ""})
    assert server.requests[-1]["headers"]["X-Subscription-Token"] == ADMIN_KEY


def test_user_picking_the_operators_engine_with_a_key_uses_their_own(server, plain):
    call(options(), {"query": "django"}, http=plain, user_settings={"engine": "brave", "api_key": USER_KEY})
    assert server.requests[-1]["headers"]["X-Subscription-Token"] == USER_KEY


def test_user_engine_without_its_key_is_an_error_and_sends_nothing(server, plain):
    message = error_of(options(), {"query": "django"}, http=plain, user_settings={"engine": "kagi"})
    assert message == "Add your Kagi API key in the web search settings."
    assert server.requests == []


def test_user_searxng_without_a_base_url_is_an_error(server, plain):
    message = error_of(options(), {"query": "django"}, http=plain, user_settings={"engine": "searxng"})
    assert message == "Add your SearXNG base URL in the web search settings."


def test_user_google_without_cx_is_an_error(server, plain):
    message = error_of(
        options(), {"query": "django"}, http=plain, user_settings={"engine": "google", "api_key": USER_KEY}
    )
    assert message == "Add your Google Programmable Search Search engine ID (cx) in the web search settings."


def test_a_users_own_google_key_never_borrows_the_operators_cx(server, plain):
    # The user's key makes the search the user's account: the operator's values fill no blank beside it.
    opts = options(engine="google", cx="admin-cx")
    message = error_of(opts, {"query": "django"}, http=plain,
                       user_settings={"engine": "google", "api_key": USER_KEY})
    assert message == "Add your Google Programmable Search Search engine ID (cx) in the web search settings."
    assert server.requests == []
    call(opts, {"query": "django"}, http=plain,
         user_settings={"engine": "google", "api_key": USER_KEY, "cx": "user-cx"})
    request = server.requests[-1]
    assert request["query"]["cx"] == ["user-cx"] and request["headers"]["X-Goog-Api-Key"] == USER_KEY


def test_a_user_without_a_key_on_the_operators_google_searches_on_the_operators_account(server, plain):
    opts = options(engine="google", cx="admin-cx")
    call(opts, {"query": "django"}, http=plain, user_settings={"engine": "google"})
    request = server.requests[-1]
    assert request["query"]["cx"] == ["admin-cx"] and request["headers"]["X-Goog-Api-Key"] == ADMIN_KEY


# -- roles ------------------------------------------------------------------------------------------------


def test_user_outside_the_roles_cannot_use_the_operators_engine(server, plain):
    opts = options(admin_engine_roles=["staff"])
    assert error_of(opts, {"query": "django"}, http=plain, roles={"user"}) == NEEDS_OWN_ENGINE
    assert NEEDS_OWN_ENGINE == "Add your own search engine in the web search settings to search the web."
    assert server.requests == []


def test_user_outside_the_roles_with_user_engines_off_is_told_search_is_unavailable(server, plain):
    opts = options(admin_engine_roles=["staff"], user_engines=False)
    assert error_of(opts, {"query": "django"}, http=plain, roles={"user"}) == NOT_AVAILABLE
    assert NOT_AVAILABLE == "Web search isn't available to you."


def test_operators_key_never_fills_a_blank_for_a_user_outside_the_roles(server, plain):
    opts = options(admin_engine_roles=["staff"])
    message = error_of(
        opts, {"query": "django"}, http=plain, roles={"user"}, user_settings={"engine": "brave"}
    )
    assert message == "Add your Brave API key in the web search settings."
    assert server.requests == []


def test_user_outside_the_roles_can_search_with_their_own_engine(server, plain):
    opts = options(admin_engine_roles=["staff"])
    output, _, _ = call(
        opts,
        {"query": "django"},
        http=plain,
        roles={"user"},
        user_settings={"engine": "brave", "api_key": USER_KEY},
    )
    assert urls(output) == EXPECTED_URLS
    assert server.requests[-1]["headers"]["X-Subscription-Token"] == USER_KEY


def test_user_holding_one_of_the_roles_uses_the_operators_engine(server, plain):
    opts = options(admin_engine_roles=["staff", "researchers"])
    output, _, _ = call(opts, {"query": "django"}, http=plain, roles={"user", "researchers"})
    assert urls(output) == EXPECTED_URLS


def test_roles_come_from_the_turn(server, plain):
    opts = options(admin_engine_roles=["staff"])
    registry, _ = tool(opts)
    with Turn(
        registry=registry, requested_tools=["web_search"], roles={"user", "staff"}, fetch=plain, http=plain
    ) as turn:
        assert not turn.call("web_search", {"query": "django"}).is_error
    with Turn(
        registry=registry, requested_tools=["web_search"], roles={"user"}, fetch=plain, http=plain
    ) as turn:
        assert turn.call("web_search", {"query": "django"}).output == {
            "error": NEEDS_OWN_ENGINE, "error_code": "unavailable"}


# -- guarded and plain clients --------------------------------------------------------------------------


def test_users_searxng_on_a_private_address_is_refused_by_the_guarded_client(server, plain, guarded):
    user = {"engine": "searxng", "base_url": server.base}
    message = error_of(options(), {"query": "django"}, http=plain, fetch=guarded, user_settings=user)
    assert message.startswith("SearXNG could not be reached: The address")
    assert "not allowed" in message
    assert server.requests == []


def test_operators_searxng_on_a_private_address_works_through_the_plain_client(server, plain, guarded):
    opts = options(engine="searxng", api_key="", base_url=server.base)
    output, _, _ = call(opts, {"query": "django"}, http=plain, fetch=guarded)
    assert urls(output) == EXPECTED_URLS
    request = server.requests[-1]
    assert request["path"] == "/search"
    assert request["query"]["format"] == ["json"]


def test_user_picking_the_operators_searxng_without_a_base_url_uses_the_plain_client(server, plain, guarded):
    opts = options(engine="searxng", api_key="", base_url=server.base)
    output, _, _ = call(
        opts, {"query": "django"}, http=plain, fetch=guarded, user_settings={"engine": "searxng"}
    )
    assert urls(output) == EXPECTED_URLS


def test_users_searxng_goes_through_the_fetch_client(server, plain):
    """With a guard that lets loopback stand in for a public host, the user's instance answers."""
    with client_for(False, policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"])) as fetch:
        output, _, _ = call(
            options(),
            {"query": "django"},
            http=object(),
            fetch=fetch,
            user_settings={"engine": "searxng", "base_url": server.base},
        )
    assert urls(output) == EXPECTED_URLS


# -- input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "sk_live_" + "a1B2c3D4e5" * 4,
        "what is ghp_abcdefghijklmnopqrstuvwxyz0123456789ABCD",
        "token " + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo+/=-_0123456789",
    ],
)
def test_query_holding_a_key_like_run_is_refused_before_sending(server, plain, query):
    assert error_of(options(), {"query": query}, http=plain) == SECRET_QUERY
    assert server.requests == []


def test_query_with_a_39_character_run_is_sent(server, plain):
    call(options(), {"query": "x" * 39 + " django"}, http=plain)
    assert len(server.requests) == 1


@pytest.mark.parametrize("query", ["", "   "])
def test_empty_query_is_refused(server, plain, query):
    assert error_of(options(), {"query": query}, http=plain) == "The query is empty."


def test_turn_refuses_a_query_over_400_characters(server, plain):
    registry, _ = tool(options())
    with Turn(
        registry=registry, requested_tools=["web_search"], roles={"user"}, fetch=plain, http=plain
    ) as turn:
        result = turn.call("web_search", {"query": "a " * 201})
    assert result.is_error and "Invalid input for web_search" in result.output["error"]
    assert server.requests == []


def test_turn_refuses_max_results_above_the_option(server, plain):
    registry, _ = tool(options(max_results=3))
    with Turn(
        registry=registry, requested_tools=["web_search"], roles={"user"}, fetch=plain, http=plain
    ) as turn:
        result = turn.call("web_search", {"query": "django", "max_results": 4})
    assert result.is_error and "max_results" in result.output["error"]


def test_invalid_domain_in_the_input_is_an_error(server, plain):
    message = error_of(
        options(), {"query": "django", "allowed_domains": ["https://python.org/x"]}, http=plain
    )
    assert "is not a domain name such as example.com" in message


# -- output ---------------------------------------------------------------------------------------------


def test_results_are_clean_cut_and_cited(server, plain):
    output, cited, _ = call(options(), {"query": "django"}, http=plain)
    results = output["results"]
    assert results[0] == {
        "title": "Django & the web",
        "url": "https://www.djangoproject.com/",
        "snippet": "The web framework for perfectionists with deadlines.",
        "published": "2024-05-01T00:00:00Z",
        "page_age": "May 1, 2024",
    }
    assert len(results[2]["snippet"]) == 500
    assert [(c.url, c.title) for c in cited] == [(r["url"], r["title"]) for r in results]
    assert "notes" not in output


def test_results_are_cut_to_max_results(server, plain):
    output, cited, _ = call(options(max_results=2), {"query": "django"}, http=plain)
    assert urls(output) == EXPECTED_URLS[:2]
    assert len(cited) == 2
    assert server.requests[-1]["query"]["count"] == ["2"]


def test_max_results_in_the_input_narrows_but_never_widens(server, plain):
    output, _, _ = call(options(max_results=3), {"query": "django", "max_results": 1}, http=plain)
    assert urls(output) == EXPECTED_URLS[:1]
    output, _, _ = call(options(max_results=3), {"query": "django", "max_results": 20}, http=plain)
    assert urls(output) == EXPECTED_URLS[:3]


def test_turn_wraps_the_output_as_untrusted_and_collects_citations(server, plain):
    registry, _ = tool(options())
    with Turn(
        registry=registry, requested_tools=["web_search"], roles={"user"}, fetch=plain, http=plain
    ) as turn:
        result = turn.call("web_search", {"query": "django"})
        assert result.untrusted and "<untrusted_tool_output" in result.model_text
        assert [c.url for c in turn.citations] == EXPECTED_URLS


# -- freshness and domains ------------------------------------------------------------------------------


def test_freshness_is_passed_to_an_engine_that_supports_it(server, plain):
    output, _, _ = call(options(), {"query": "django", "freshness": "week"}, http=plain)
    assert server.requests[-1]["query"]["freshness"] == ["pw"]
    assert "notes" not in output


def test_freshness_an_engine_cannot_apply_is_said_in_the_output(server, plain):
    output, _, _ = call(options(engine="kagi"), {"query": "django", "freshness": "day"}, http=plain)
    assert output["notes"] == [
        "Kagi cannot limit results by date, so freshness was not applied; check the published dates."
    ]
    assert urls(output) == EXPECTED_URLS


def test_allowed_domains_drop_other_results_even_when_the_engine_ignores_them(server, plain):
    output, cited, _ = call(
        options(), {"query": "django", "allowed_domains": ["djangoproject.com"]}, http=plain
    )
    assert urls(output) == EXPECTED_URLS[:2]
    assert [c.url for c in cited] == EXPECTED_URLS[:2]
    assert output["notes"] == [
        "Brave does not filter by domain, so 2 results from other domains were removed after the search."
    ]
    assert server.requests[-1]["query"]["count"] == ["20"]  # a full page, since some will be dropped


def test_blocked_domains_from_the_input_and_the_options_both_apply(server, plain):
    opts = options(blocked_domains="python.org")
    output, _, _ = call(opts, {"query": "django", "blocked_domains": ["docs.djangoproject.com"]}, http=plain)
    assert urls(output) == ["https://www.djangoproject.com/", "https://example.net/long"]


def test_operators_blocked_domains_cover_subdomains(server, plain):
    output, _, _ = call(options(blocked_domains="djangoproject.com"), {"query": "django"}, http=plain)
    assert urls(output) == ["https://example.net/long", "https://www.python.org/about/"]


def test_domain_lists_judge_the_host_the_client_would_connect_to_however_it_is_spelled():
    raw = [
        SearchResult("a", "https://%62locked.com/x"),
        SearchResult("b", "https://BLOCKED.com./y"),
        SearchResult("c", "https://ｂｌｏｃｋｅｄ.com/z"),
        SearchResult("d", "https://sub.blocked%2ecom/"),
        SearchResult("e", "https://Fine.example:443/ok#top"),
        SearchResult("f", "https://blocked.com\\@fine.example/"),  # urllib: fine.example; urllib3: blocked.com
    ]
    out, filtered = shared.clean_results(raw, count=10, blocked_domains=["blocked.com"])
    assert [r["url"] for r in out] == ["https://fine.example/ok"]  # the canonical form web_fetch reads
    assert filtered == 4
    out, filtered = shared.clean_results(raw, count=10, allowed_domains=["fine.example"])
    assert [r["url"] for r in out] == ["https://fine.example/ok"]
    assert filtered == 4


def test_domains_go_to_an_engine_that_filters_and_are_still_applied_after(server, plain):
    opts = options(engine="tavily", blocked_domains="python.org")
    output, _, _ = call(opts, {"query": "django", "allowed_domains": ["djangoproject.com"]}, http=plain)
    body = json.loads(server.requests[-1]["body"])
    assert body["include_domains"] == ["djangoproject.com"]
    assert body["exclude_domains"] == ["python.org"]
    assert body["max_results"] == 5
    assert urls(output) == EXPECTED_URLS[:2]
    assert "notes" not in output


def test_safe_search_and_country_options_reach_the_engine(server, plain):
    call(options(safe_search="strict", country="fr"), {"query": "django"}, http=plain)
    query = server.requests[-1]["query"]
    assert (query["safesearch"], query["country"]) == (["strict"], ["FR"])


# -- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "engine,status,fixture,message",
    [
        ("brave", 401, None, "The Brave API key was rejected."),
        ("brave", 403, None, "The Brave API key was rejected."),
        ("brave", 422, "brave_422_invalid_token.json", "The Brave API key was rejected."),
        ("brave", 429, "brave_429.json", "Brave's rate limit was reached."),
        ("tavily", 432, "tavily_432.json", "Tavily's plan usage limit was reached."),
        ("tavily", 433, "tavily_433.json", "Tavily's pay-as-you-go limit was reached."),
        ("brave", 500, None, "Brave search failed (HTTP 500)."),
        ("kagi", 401, "kagi_401.json", "The Kagi API key was rejected."),
    ],
)
def test_http_errors_become_messages_naming_the_engine(server, plain, engine, status, fixture, message):
    if fixture:
        server.record(engine, status, fixture)
    else:
        server.route(f"/{engine}", "<html>error</html>", status, "text/html")
    assert error_of(options(engine=engine), {"query": "django"}, http=plain) == message


def test_searxng_403_says_to_enable_json(server, plain):
    server.route("/search", "<html>Forbidden</html>", 403, "text/html")
    opts = options(engine="searxng", api_key="", base_url=server.base)
    message = error_of(opts, {"query": "django"}, http=plain)
    assert message.startswith("The SearXNG instance refused the JSON format (HTTP 403)")


@pytest.mark.parametrize(
    "status,fixture",
    [(200, "duckduckgo_block.html"), (202, "duckduckgo.html"), (403, "duckduckgo_block.html")],
)
def test_duckduckgo_block_is_an_error_not_an_empty_result(server, plain, status, fixture):
    server.record("duckduckgo", status, fixture)
    message = error_of(options(engine="duckduckgo", api_key=""), {"query": "django"}, http=plain)
    assert message.startswith("DuckDuckGo blocked the search")


def test_duckduckgo_is_searched_with_a_form_post(server, plain):
    output, _, _ = call(options(engine="duckduckgo", api_key=""), {"query": "django"}, http=plain)
    assert urls(output) == EXPECTED_URLS
    request = server.requests[-1]
    assert request["method"] == "POST"
    assert parse_qs(request["body"].decode()) == {"q": ["django"], "kp": ["-1"]}


def test_malformed_answer_is_an_error_naming_the_engine(server, plain):
    server.route("/brave", '{"web": {"results": [{"title": 3}]}}')
    assert (
        error_of(options(), {"query": "django"}, http=plain)
        == "Brave sent a response in an unexpected format."
    )
    server.route("/brave", "Down for maintenance", content_type="text/plain")
    assert error_of(options(), {"query": "django"}, http=plain) == "Brave sent a response that is not JSON."
    server.route("/brave", "<html>Checking your browser</html>", content_type="text/html")
    assert error_of(options(), {"query": "django"}, http=plain).startswith(
        "Brave sent a web page instead of search results: the search was blocked on the way"
    )


def test_timeout_is_an_error_saying_so(server, plain, monkeypatch):
    monkeypatch.setattr(shared, "TIMEOUT", 0.3)
    server.record("brave", delay=2.0)
    assert error_of(options(), {"query": "django"}, http=plain) == "Brave did not answer within 0.3 seconds."


def test_the_timeout_is_fifteen_seconds():
    assert shared.TIMEOUT == 15


def test_unreachable_engine_is_an_error_saying_so(server, plain, settings):
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": {"brave": "http://127.0.0.1:9/brave"}}
    message = error_of(options(), {"query": "django"}, http=plain)
    assert message.startswith("Brave could not be reached: ")


def test_cancelled_turn_stops_the_search(server, plain):
    _, web_search = tool(options())
    ctx, _ = tool_context_for_test(fetch=plain, http=plain)
    ctx.signal.cancel()
    with pytest.raises(ToolCancelled):
        web_search.handler({"query": "django"}, ctx)


# -- keys never leak ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "engine,status",
    [("brave", 401), ("kagi", 401), ("tavily", 432), ("google", 400), ("exa", 401), ("firecrawl", 401)],
)
def test_key_planted_in_an_error_body_is_masked_everywhere(server, plain, caplog, engine, status):
    caplog.set_level(logging.DEBUG)
    planted = {
        "brave": {"error": {"detail": f"Token {ADMIN_KEY} is invalid"}},
        "kagi": {"error": [{"code": 1, "msg": f"Bad token {ADMIN_KEY}"}]},
        "tavily": {"detail": {"error": f"Key {ADMIN_KEY} is over its limit"}},
        "google": {
            "error": {
                "code": 400,
                "message": f"API key {ADMIN_KEY} not valid",
                "errors": [{"reason": "keyInvalid"}],
            }
        },
        "exa": {"error": f"Invalid API key {ADMIN_KEY}"},
        "firecrawl": {"success": False, "error": f"Unauthorized: {ADMIN_KEY}"},
    }[engine]
    server.route(f"/{engine}", json.dumps(planted), status)
    opts = options(engine=engine, cx="cx-1")

    message = error_of(opts, {"query": "django"}, http=plain)
    assert ADMIN_KEY not in message and "said" not in message

    registry, _ = tool(opts)
    with Turn(
        registry=registry, requested_tools=["web_search"], roles={"user"}, fetch=plain, http=plain
    ) as turn:
        result = turn.call("web_search", {"query": "django"})
    assert result.is_error
    assert ADMIN_KEY not in json.dumps(result.output) and ADMIN_KEY not in result.model_text
    assert caplog.records  # the failure was logged ...
    assert ADMIN_KEY not in caplog.text  # ... without the key


def test_users_key_is_masked_too(server, plain):
    server.route("/kagi", json.dumps({"error": [{"msg": f"Bad token {USER_KEY}"}]}), 401)
    message = error_of(
        options(), {"query": "django"}, http=plain, user_settings={"engine": "kagi", "api_key": USER_KEY}
    )
    assert message == "The Kagi API key was rejected."


# -- through the host ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_manage_py_webtools_call_searches_a_recorded_engine(server, use_plugins):
    import io

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from webtools.models import PluginOptions

    use_plugins(WebSearchPlugin())
    row = PluginOptions.objects.create(plugin="web_search", values={"engine": "brave", "max_results": 3})
    row.set_secrets({"api_key": ADMIN_KEY})
    row.save()
    get_user_model().objects.create_superuser("root", password="pw-root-123")
    out = io.StringIO()
    call_command("webtools", "call", "web_search", "--input", '{"query": "django"}', stdout=out)

    result = json.loads(out.getvalue())
    assert result["is_error"] is False
    assert [r["url"] for r in result["output"]["results"]] == EXPECTED_URLS[:3]
    assert [c["url"] for c in result["citations"]] == EXPECTED_URLS[:3]
    assert server.requests[-1]["headers"]["X-Subscription-Token"] == ADMIN_KEY
    assert ADMIN_KEY not in out.getvalue()
