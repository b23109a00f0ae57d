"""Whose account a search spends: whose key is sent decides it, for cool-downs, the engine's line, the
daily quota, usage and the shared cache; a search that never left is never charged.

Engines are the recorded answers on a loopback server of tests/test_web_search.py.
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from webtools.host import start_turn
from webtools.models import PluginOptions
from webtools.plugins.web_search.forms import NO_SITE_ENGINE, from_server_address
from webtools.plugins.web_search.engines.duckduckgo import DuckDuckGoEngine
from webtools.runtime import limits
from webtools.runtime.cache import MemoryCache
from webtools.runtime.limits import MemoryStore

from .servers import InFlight, Reply
from .test_web_search import ADMIN_KEY, FIXTURES, USER_KEY, options, plain, server  # noqa: F401
from .test_web_search_limits import SEARCH, error, search

GOOGLE_OWN = {"engine": "google", "api_key": USER_KEY, "cx": "user-cx"}
DDG = {"engine": "duckduckgo"}


def google(**values) -> dict:
    return options(engine="google", cx="admin-cx", user_searches_per_minute=0, **values)


# -- a user's own key is the user's account ------------------------------------------------------------


def test_a_429_on_a_users_own_key_never_cools_down_the_operators_engine(server, plain):
    store, opts = MemoryStore(), google()
    answer = (FIXTURES / "google.json").read_bytes()

    def google_api(request):  # the user's key is out of quota, the operator's is not
        if request.headers.get("X-Goog-Api-Key") == USER_KEY:
            return Reply(429, {"Content-Type": "application/json"}, b'{"error": {"code": 429}}')
        return Reply(200, {"Content-Type": "application/json"}, answer)

    server.loopback.route("/google", google_api)
    # The user's search falls back to the operator's Google (the user's role may use it), which answers.
    assert search(opts, http=plain, store=store, settings=GOOGLE_OWN)["results"]
    assert store.cooling("google:user:1") and not store.cooling("google:operator")
    # Everyone on the operator's Google goes on at once.
    assert search(opts, http=plain, store=store, user="2")["results"]


def test_a_users_own_key_spends_neither_the_operators_quota_nor_usage_nor_cache(server, plain):
    store, cache = MemoryStore(), MemoryCache()
    opts = google(user_daily_searches=1, cache_ttl_seconds=600)
    for _ in range(3):  # the user's own key: never the operator's daily quota
        assert search(opts, http=plain, store=store, settings=GOOGLE_OWN, cache=cache)["results"]
    assert server.loopback.hits("/google") == 1  # then the user's own cache entry answered
    usage = {(u.user, u.operator_key): n for u, n in store.usage.items()}
    assert usage == {("1", False): 1}
    # The operator's account has its own cache entry: the same query asks the engine again.
    assert search(opts, http=plain, store=store, cache=cache)["results"]
    assert server.loopback.hits("/google") == 2
    assert {(u.user, u.operator_key): n for u, n in store.usage.items()} == {("1", False): 1, ("1", True): 1}


def test_a_users_own_key_holds_the_users_line_not_the_operators(server, plain):
    slow = InFlight(Reply(200, {"Content-Type": "application/json"}, (FIXTURES / "google.json").read_bytes()))
    server.loopback.route("/google", slow)
    store, opts = MemoryStore(), google(engine_concurrency=1)
    line = limits.Counter(limits.CONCURRENT, "engine:google:operator", ttl=20)
    token = store.reserve(line, 1)  # the operator's Google is busy with someone else's search
    assert search(opts, http=plain, store=store, settings=GOOGLE_OWN)["results"]
    store.release(line, token)


# -- the server's own address is the operator's account ----------------------------------------------------


def test_duckduckgo_as_a_users_engine_needs_a_role_that_may_use_the_operators_account(server, plain):
    store, opts = MemoryStore(), options(admin_engine_roles=["staff"])
    assert error(opts, http=plain, store=store, settings=DDG) == from_server_address(DuckDuckGoEngine())
    assert server.loopback.hits("/duckduckgo") == 0
    assert search(opts, http=plain, store=store, settings=DDG, roles=("user", "staff"))["engine"] == "duckduckgo"


def test_duckduckgo_as_a_users_engine_counts_against_the_daily_quota_and_the_operators_line(server, plain):
    store, opts = MemoryStore(), options(user_daily_searches=2, user_searches_per_minute=0)
    search(opts, http=plain, store=store, settings=DDG)
    search(opts, http=plain, store=store)  # the operator's Brave: the same quota
    assert error(opts, http=plain, store=store, settings=DDG).startswith("Today's limit of 2")
    assert [u.operator_key for u in store.usage] == [True, True]
    # One cool-down for DuckDuckGo, whoever asked.
    server.route("/duckduckgo", b"Too many requests", 429, "text/html")
    error(options(user_searches_per_minute=0), http=plain, store=store, settings=DDG, user="3")
    assert store.cooling("duckduckgo:operator")


# -- charged when sent ------------------------------------------------------------------------------------


def test_a_search_that_never_left_is_not_charged(server, plain):
    store = MemoryStore()
    opts = options(engine_concurrency=1, user_daily_searches=5, user_searches_per_minute=5)
    line = limits.Counter(limits.CONCURRENT, "engine:brave:operator", ttl=20)
    token = store.reserve(line, 1)  # another user's search holds Brave's only slot
    for _ in range(3):
        assert "Brave is busy" in error(opts, http=plain, store=store)
    assert server.loopback.hits("/brave") == 0
    day = limits.Counter(limits.DAY, "web_search:user:1")
    minute = limits.Counter(limits.MINUTE, "web_search:user:1")
    assert store.count(day) == 0 and store.count(minute) == 0
    store.release(line, token)
    search(opts, http=plain, store=store)
    assert store.count(day) == 1 and store.count(minute) == 1


def test_an_engine_in_cool_down_is_not_charged_and_a_fallback_that_answers_is_charged_once(server, plain):
    store = MemoryStore()
    opts = options(user_daily_searches=5, user_searches_per_minute=5, fallback_engines=["duckduckgo"])
    store.cool_down("brave:operator", 30)
    store.cool_down("duckduckgo:operator", 30)
    error(opts, http=plain, store=store)
    assert store.count(limits.Counter(limits.DAY, "web_search:user:1")) == 0
    store.cool_down("duckduckgo:operator", 0)
    assert search(opts, http=plain, store=store)["engine"] == "duckduckgo"
    assert store.count(limits.Counter(limits.DAY, "web_search:user:1")) == 1


# -- the operator chose no engine: users' own engines work ---------------------------------------------------


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("noor", password="pw-noor-123")


@pytest.fixture
def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def put(api, **body):
    return api.put(reverse("webtools:user-plugin-settings", args=["web_search"]), body, format="json")


def test_without_an_operators_engine_a_users_own_engine_and_key_search(server, api, user):
    assert not PluginOptions.objects.filter(plugin="web_search").exclude(values={}).exists()
    saved = put(api, engine="tavily", api_key=USER_KEY)
    assert saved.status_code == 200, saved.json()
    with start_turn(user, requested_tools=["web_search"]) as turn:
        result = turn.call("web_search", SEARCH)
    assert not result.is_error, result.output
    assert result.output["engine"] == "tavily" and server.loopback.hits("/tavily") == 1


def test_without_an_operators_engine_saving_the_sites_engine_is_refused_with_a_reason(server, api, user):
    refused = put(api, engine="default")
    assert refused.status_code == 400 and refused.json()["engine"] == [NO_SITE_ENGINE]
    with start_turn(user, requested_tools=["web_search"]) as turn:
        assert turn.call("web_search", SEARCH).output["error"] == NO_SITE_ENGINE


def test_saving_duckduckgo_without_a_role_for_the_servers_address_says_why(server, api, user):
    row = PluginOptions.objects.create(plugin="web_search", values={
        "engine": "brave", "admin_engine_roles": ["staff"], "user_engines": True, "max_results": 5,
        "safe_search": "moderate"})
    row.set_secrets({"api_key@brave": ADMIN_KEY})
    row.save()
    refused = put(api, engine="duckduckgo")
    assert refused.status_code == 400
    assert refused.json()["engine"] == [from_server_address(DuckDuckGoEngine())]
    google_own = put(api, engine="google", api_key=USER_KEY)
    assert google_own.status_code == 400 and "cx" in google_own.json()
    assert put(api, engine="tavily", api_key=USER_KEY).status_code == 200
