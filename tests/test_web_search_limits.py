"""web_search's limits, fallback engines and shared cache, against recorded engine answers on a loopback
server (see tests/test_web_search.py)."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from webtools.plugins.web_search import WebSearchPlugin
from webtools.plugins.web_search import search as shared
from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.duckduckgo import DuckDuckGoEngine
from webtools.runtime import Turn
from webtools.runtime.cache import MemoryCache
from webtools.runtime.limits import MemoryStore
from webtools.testing import tool_context_for_test

from .servers import InFlight, Reply
from .test_web_search import FIXTURES, USER_KEY, error_of, options, plain, server, tool, urls  # noqa: F401

SEARCH = {"query": "django"}


def turn(opts, *, http, user="1", roles=("user",), settings=None, limits=None, shared_cache=None, plugin=None):
    registry, _ = tool(opts, plugin)
    return Turn(
        registry=registry, requested_tools=["web_search"], user=user, roles=roles, fetch=http, http=http,
        settings={"web_search": settings or {}}, limits=limits, shared_cache=shared_cache,
    )


def search(opts, *, http, store, input=SEARCH, user="1", settings=None, cache=None, plugin=None, roles=("user",)):
    _, web_search = tool(opts, plugin)
    ctx, _ = tool_context_for_test(fetch=http, http=http, user=user, settings=settings or {}, roles=set(roles))
    ctx.limits, ctx.shared_cache = store, cache
    return web_search.handler(dict(input), ctx)


def error(opts, **kwargs) -> str:
    from webtools.exceptions import ToolError

    with pytest.raises(ToolError) as info:
        search(opts, **kwargs)
    return info.value.message


# -- per turn -----------------------------------------------------------------------------------------------


def test_the_call_past_max_uses_is_an_error_the_model_can_act_on(server, plain):
    with turn(options(max_uses=2), http=plain) as t:
        results = [t.call("web_search", SEARCH) for _ in range(3)]
    assert [r.is_error for r in results] == [False, False, True]
    assert results[2].output["error"].startswith("The search limit for this answer is reached.")
    assert server.loopback.hits("/brave") == 2


def test_max_uses_holds_for_calls_run_side_by_side(server, plain):
    with turn(options(max_uses=3), http=plain) as t:
        results = t.call_many([("web_search", SEARCH, None)] * 8)
    assert sum(not r.is_error for r in results) == 3
    assert server.loopback.hits("/brave") == 3


def test_max_uses_zero_is_no_limit(server, plain):
    with turn(options(max_uses=0), http=plain) as t:
        assert not any(t.call("web_search", SEARCH).is_error for _ in range(12))


def test_defaults_are_documented_values():
    defaults = WebSearchPlugin().default_options()
    assert {k: defaults[k] for k in (
        "max_uses", "user_daily_searches", "user_searches_per_minute", "engine_concurrency",
        "fallback_engines", "cache_ttl_seconds",
    )} == {
        "max_uses": 10, "user_daily_searches": 200, "user_searches_per_minute": 20, "engine_concurrency": 4,
        "fallback_engines": [], "cache_ttl_seconds": 0,
    }


# -- per user -----------------------------------------------------------------------------------------------


def test_searches_per_minute_stop_one_user_not_another(server, plain):
    store, opts = MemoryStore(), options(user_searches_per_minute=2)
    for _ in range(2):
        search(opts, http=plain, store=store, user="1")
    assert error(opts, http=plain, store=store, user="1").startswith("Searches are limited to 2 a minute")
    assert search(opts, http=plain, store=store, user="2")["results"]
    assert server.loopback.hits("/brave") == 3


def test_daily_searches_count_only_the_operators_key(server, plain):
    store, opts = MemoryStore(), options(user_daily_searches=2, user_searches_per_minute=0)
    for _ in range(2):
        search(opts, http=plain, store=store)
    message = error(opts, http=plain, store=store)
    assert message.startswith("Today's limit of 2 searches on this site's engine is reached")
    assert "Add your own engine" in message
    own = {"engine": "tavily", "api_key": USER_KEY}
    for _ in range(3):  # the user's own key: no daily limit
        assert search(opts, http=plain, store=store, settings=own)["engine"] == "tavily"


def test_users_own_key_still_meets_the_per_minute_guard(server, plain):
    store, opts = MemoryStore(), options(user_searches_per_minute=1)
    own = {"engine": "tavily", "api_key": USER_KEY}
    search(opts, http=plain, store=store, settings=own)
    assert error(opts, http=plain, store=store, settings=own).startswith("Searches are limited to 1 a minute")


def test_users_own_key_for_the_operators_engine_filled_from_the_options_counts_as_operators(server, plain):
    store, opts = MemoryStore(), options(user_daily_searches=1, user_searches_per_minute=0)
    picked = {"engine": "brave"}  # no key of their own: the operator's fills it in
    search(opts, http=plain, store=store, settings=picked)
    assert error(opts, http=plain, store=store, settings=picked).startswith("Today's limit of 1")


def test_daily_limit_holds_for_threads_at_once(server, plain):
    store, opts = MemoryStore(), options(user_daily_searches=5, user_searches_per_minute=0)

    def one(_):
        try:
            search(opts, http=plain, store=store)
            return True
        except Exception:
            return False

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(one, range(20))) == 5
    assert server.loopback.hits("/brave") == 5


# -- the engine's line and Retry-After -------------------------------------------------------------------


def test_engine_concurrency_holds_requests_in_line(server, plain):
    slow = InFlight(Reply(200, {"Content-Type": "application/json"}, (FIXTURES / "brave.json").read_bytes()))
    server.loopback.route("/brave", slow)
    store, opts = MemoryStore(), options(engine_concurrency=1, user_searches_per_minute=0)
    with ThreadPoolExecutor(4) as pool:
        outputs = list(pool.map(lambda u: search(opts, http=plain, store=store, user=str(u)), range(4)))
    assert all(o["results"] for o in outputs)
    assert slow.most == 1


def test_a_429_with_retry_after_is_retried_within_the_deadline(server, plain):
    answers = [
        Reply(
            429, {"Content-Type": "application/json", "Retry-After": "1"}, (FIXTURES / "brave_429.json").read_bytes()
        ),
        Reply(200, {"Content-Type": "application/json"}, (FIXTURES / "brave.json").read_bytes()),
    ]
    server.loopback.route("/brave", lambda request: answers.pop(0))
    started = time.monotonic()
    output = search(options(), http=plain, store=MemoryStore())
    assert output["engine"] == "brave" and output["results"]
    assert 1.0 <= time.monotonic() - started < 5
    assert server.loopback.hits("/brave") == 2


def test_a_retry_after_past_the_deadline_is_not_waited_for(server, plain):
    server.loopback.route("/brave", Reply(
        429, {"Content-Type": "application/json", "Retry-After": "120"}, (FIXTURES / "brave_429.json").read_bytes()
    ))
    started = time.monotonic()
    assert error(options(), http=plain, store=MemoryStore()).startswith("Brave's rate limit was reached.")
    assert time.monotonic() - started < 3


def test_retry_after_reads_seconds_and_http_dates():
    assert shared.retry_after("7") == 7
    assert shared.retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470) == 10
    assert shared.retry_after("soon") is None and shared.retry_after(None) is None


# -- fallback -----------------------------------------------------------------------------------------------


class SecondDuckDuckGo(DuckDuckGoEngine):
    """A second keyless engine (DuckDuckGo is the only real one), served DuckDuckGo's recorded pages."""

    id = "duckduckgo2"
    name = "DuckDuckGo (second)"


@pytest.fixture
def with_second(server, settings):
    server.record("duckduckgo")
    server.route("/duckduckgo2", (FIXTURES / "duckduckgo.html").read_bytes(), content_type="text/html")
    urls_ = {**settings.WEBTOOLS["ENGINE_URLS"], "duckduckgo2": f"{server.base}/duckduckgo2"}
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ENGINE_URLS": urls_}
    return WebSearchPlugin(engines=[*ENGINES, SecondDuckDuckGo()])


@pytest.mark.parametrize(
    "name,status,said",
    [
        ("brave_429.json", 429, "Brave's rate limit was reached."),
        ("brave.json", 503, "Brave search failed (HTTP 503)."),
    ],
)
def test_an_engine_that_fails_hands_the_search_to_the_next(server, plain, name, status, said):
    server.record("brave", status=status, name=name)
    store, opts = MemoryStore(), options(fallback_engines=["duckduckgo"])
    output = search(opts, http=plain, store=store)
    assert output["engine"] == "duckduckgo"
    assert urls(output)
    assert output["notes"][0].startswith(said) and output["notes"][0].endswith("DuckDuckGo answered instead.")
    # The failed engine cools down for every worker sharing the store: the next call skips it.
    hits = server.loopback.hits("/brave")
    assert search(opts, http=plain, store=store)["engine"] == "duckduckgo"
    assert server.loopback.hits("/brave") == hits


@pytest.mark.parametrize(
    "engine,status,body,said",
    [
        # Serper says a used-up account with HTTP 400; only the documented phrase is served (serper.py).
        ("serper", 400, b"Not enough credits", "The Serper account has used up its search quota"),
        ("tavily", 432, (FIXTURES / "tavily_432.json").read_bytes(), "Tavily's plan usage limit was reached."),
    ],
)
def test_a_quota_said_with_another_status_hands_the_search_to_the_next(server, plain, engine, status, body, said):
    server.route(f"/{engine}", body, status=status)
    output = search(options(engine=engine, fallback_engines=["duckduckgo"]), http=plain, store=MemoryStore())
    assert output["engine"] == "duckduckgo" and urls(output)
    assert output["notes"][0].startswith(said)
    assert server.loopback.hits(f"/{engine}") == 1


def test_a_timeout_hands_the_search_to_the_next_within_the_same_deadline(server, plain, monkeypatch):
    monkeypatch.setattr(shared, "TIMEOUT", 1.5)
    server.record("brave", delay=3.0)
    started = time.monotonic()
    output = search(options(fallback_engines=["duckduckgo"]), http=plain, store=MemoryStore())
    assert output["engine"] == "duckduckgo"
    assert time.monotonic() - started < 2.5


def test_a_block_page_hands_the_search_to_the_next(with_second, plain, server):
    server.record("duckduckgo", name="duckduckgo_block.html")
    opts = options(with_second, engine="duckduckgo", api_key="", fallback_engines=["duckduckgo2"])
    output = search(opts, http=plain, store=MemoryStore(), plugin=with_second)
    assert output["engine"] == "duckduckgo2"
    assert "DuckDuckGo blocked the search" in output["notes"][0]


def test_a_rejected_key_does_not_fall_back(server, plain):
    server.record("brave", status=422, name="brave_422_invalid_token.json")
    message = error(options(fallback_engines=["duckduckgo"]), http=plain, store=MemoryStore())
    assert message.startswith("The Brave API key was rejected.")
    assert server.loopback.hits("/duckduckgo") == 0


def test_when_every_engine_fails_the_error_names_each(server, plain):
    server.record("brave", status=429, name="brave_429.json")
    server.record("duckduckgo", name="duckduckgo_block.html")
    message = error(options(fallback_engines=["duckduckgo"]), http=plain, store=MemoryStore())
    assert message.startswith("Brave's rate limit was reached.")
    assert "DuckDuckGo blocked the search" in message


def test_a_users_engine_falls_back_to_the_operators_only_for_roles_that_may_use_it(server, plain):
    server.record("tavily", status=432, name="tavily_432.json")
    own = {"engine": "tavily", "api_key": USER_KEY}
    opts = options(admin_engine_roles=["staff"])
    output = search(opts, http=plain, store=MemoryStore(), settings=own, roles=("user", "staff"))
    assert output["engine"] == "brave"
    assert output["notes"][0].startswith("Tavily's plan usage limit was reached.")
    message = error(opts, http=plain, store=MemoryStore(), settings=own, roles=("user",))
    assert message.startswith("Tavily's plan usage limit was reached.")
    assert server.loopback.hits("/brave") == 1


def test_a_users_failing_key_does_not_cool_down_the_operators_engine(server, plain):
    store = MemoryStore()
    server.record("brave", status=429, name="brave_429.json")
    own = {"engine": "brave", "api_key": USER_KEY}
    error(options(admin_engine_roles=["staff"]), http=plain, store=store, settings=own)
    assert server.loopback.hits("/brave") == 1
    assert store.cooling("brave:user:1") and not store.cooling("brave:operator")


def test_fallback_engines_are_engine_ids_each_once_and_keyed_ones_need_their_own_key():
    # Keys kept per engine: tests/test_fallback_engines.py. Here the form alone, with none kept.
    plugin = WebSearchPlugin()
    data = {**plugin.default_options(), "engine": "brave", "api_key": "k" * 20}
    form = plugin.options_form(data={**data, "fallback_engines": "tavily"})
    assert not form.is_valid() and "Tavily needs its own API key" in form.errors["fallback_engines"][0]
    form = plugin.options_form(data={**data, "fallback_engines": "nosuch"})
    assert not form.is_valid() and "is not an engine id" in form.errors["fallback_engines"][0]
    form = plugin.options_form(data={**data, "fallback_engines": "duckduckgo\nbrave\nduckduckgo"})
    assert form.is_valid() and form.cleaned_data["fallback_engines"] == ["duckduckgo", "brave"]


# -- the shared cache ---------------------------------------------------------------------------------------


def test_the_shared_cache_serves_the_same_request_under_the_same_rules(server, plain):
    cache, store, opts = MemoryCache(), MemoryStore(), options(cache_ttl_seconds=60)
    first = search(opts, http=plain, store=store, cache=cache, user="1")
    second = search(opts, http=plain, store=store, cache=cache, user="2")
    assert first == second
    assert server.loopback.hits("/brave") == 1


@pytest.mark.parametrize(
    "other",
    [
        {"input": {"query": "django", "blocked_domains": ["python.org"]}},
        {"input": {"query": "django", "allowed_domains": ["djangoproject.com"]}},
        {"input": {"query": "django", "freshness": "week"}},
        {"settings": {"engine": "brave", "api_key": USER_KEY}},
    ],
)
def test_the_shared_cache_never_crosses_a_different_policy(server, plain, other):
    cache, store, opts = MemoryCache(), MemoryStore(), options(cache_ttl_seconds=60)
    search(opts, http=plain, store=store, cache=cache, user="1")
    search(opts, http=plain, store=store, cache=cache, user="2", **other)
    assert server.loopback.hits("/brave") == 2


def test_a_users_own_engine_is_cached_for_that_user_alone(server, plain):
    cache, store, opts = MemoryCache(), MemoryStore(), options(cache_ttl_seconds=60)
    own = {"engine": "tavily", "api_key": USER_KEY}
    search(opts, http=plain, store=store, cache=cache, user="1", settings=own)
    search(opts, http=plain, store=store, cache=cache, user="1", settings=own)
    search(opts, http=plain, store=store, cache=cache, user="2", settings=own)
    assert server.loopback.hits("/tavily") == 2


def test_the_shared_cache_is_off_by_default(server, plain):
    cache, store = MemoryCache(), MemoryStore()
    search(options(), http=plain, store=store, cache=cache)
    search(options(), http=plain, store=store, cache=cache)
    assert server.loopback.hits("/brave") == 2


def test_a_cached_answer_spends_no_quota(server, plain):
    cache, store = MemoryCache(), MemoryStore()
    opts = options(cache_ttl_seconds=60, user_daily_searches=1)
    for _ in range(3):
        assert search(opts, http=plain, store=store, cache=cache)["results"]
