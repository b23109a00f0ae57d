"""The shell's side of the limits: start_turn hands every turn the shared store, web fetch's limits, and
the admin's usage page with totals and estimated cost."""
from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.servers import InFlight
from webtools.host import start_turn
from webtools.models import EnginePrice, PluginOptions, Usage
from webtools.runtime.cache import MemoryCache
from webtools.runtime.limits import MemoryStore
from webtools.stores import DjangoStore

from .test_web_fetch import call, client, html, make_tool, server  # noqa: F401
from .test_web_search import ADMIN_KEY, FIXTURES  # noqa: F401
from .test_web_search import server as engines  # noqa: F401

PAGE = (
    "<html><head><title>T</title></head><body><article><p>" + "Words of a page. " * 40 + "</p></article></body></html>"
)


# -- through start_turn: counts shared by every turn, in the database and the cache ----------------------


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("lena")


def save_search_options(**values):
    from webtools.host import get_plugin

    plugin = get_plugin("web_search")
    row = PluginOptions(plugin="web_search", values={
        **plugin.default_options(), "engine": "brave", "enabled_by_default": True, **values,
    })
    row.set_secrets({"api_key": ADMIN_KEY})
    row.save()


def test_turns_share_the_daily_quota_and_record_usage(user, engines, settings):
    save_search_options(user_daily_searches=3, user_searches_per_minute=0, max_uses=0)
    outcomes = []
    for _ in range(2):
        with start_turn(user, requested_tools=["web_search"]) as turn:
            outcomes += [turn.call("web_search", {"query": "django"}).is_error for _ in range(2)]
    assert outcomes == [False, False, False, True]
    assert isinstance(turn.limits, DjangoStore)
    row = Usage.objects.get(user=user, tool="web_search")
    assert (row.engine, row.operator_key, row.requests) == ("brave", True, 3)


def test_turns_share_the_per_minute_window(user, engines):
    save_search_options(user_searches_per_minute=2, max_uses=0)
    with start_turn(user, requested_tools=["web_search"]) as turn:
        assert not turn.call("web_search", {"query": "a"}).is_error
    with start_turn(user, requested_tools=["web_search"]) as turn:
        assert not turn.call("web_search", {"query": "b"}).is_error
        assert turn.call("web_search", {"query": "c"}).output["error"].startswith("Searches are limited to 2")


def test_a_cool_down_is_seen_by_the_next_turn(user, engines):
    engines.record("brave", status=429, name="brave_429.json")
    save_search_options(fallback_engines=["duckduckgo"])
    with start_turn(user, requested_tools=["web_search"]) as turn:
        assert turn.call("web_search", {"query": "a"}).output["engine"] == "duckduckgo"
    hits = engines.loopback.hits("/brave")
    with start_turn(user, requested_tools=["web_search"]) as turn:
        assert turn.call("web_search", {"query": "b"}).output["engine"] == "duckduckgo"
    assert engines.loopback.hits("/brave") == hits


def test_the_shared_cache_is_djangos_and_serves_another_users_turn(user, engines):
    save_search_options(cache_ttl_seconds=60)
    other = get_user_model().objects.create_user("omar")
    for who in (user, other):
        with start_turn(who, requested_tools=["web_search"]) as turn:
            assert turn.call("web_search", {"query": "django"}).output["results"]
    assert engines.loopback.hits("/brave") == 1


# -- web fetch ------------------------------------------------------------------------------------------


def fetch_ctx(client, store, cache=None, user="1"):  # noqa: F811
    from webtools.testing import tool_context_for_test

    ctx, _ = tool_context_for_test(fetch=client, user=user)
    ctx.limits, ctx.shared_cache = store, cache
    return ctx


def test_fetches_per_minute_count_downloads_per_user(client, server):  # noqa: F811
    server.route("/a", html(PAGE))
    server.route("/b", html(PAGE))
    tool, store = make_tool(user_fetches_per_minute=1), MemoryStore()
    call(client, server.url("/a"), tool=tool, ctx=fetch_ctx(client, store))
    with pytest.raises(Exception, match="Fetches are limited to 1 a minute"):
        call(client, server.url("/b"), tool=tool, ctx=fetch_ctx(client, store))
    call(client, server.url("/b"), tool=tool, ctx=fetch_ctx(client, store, user="2"))


def test_concurrent_fetches_per_user_wait_in_line(client, server):  # noqa: F811
    slow = InFlight(html(PAGE))
    for n in range(4):
        server.route(f"/p{n}", slow)
    tool, store = make_tool(user_concurrent_fetches=1, respect_robots_txt=False), MemoryStore()
    threads = [
        threading.Thread(
            target=call, args=(client, server.url(f"/p{n}")), kwargs={"tool": tool, "ctx": fetch_ctx(client, store)}
        )
        for n in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert slow.most == 1 and server.hits() >= 4


def test_the_fetch_limit_per_answer(client, server):  # noqa: F811
    from webtools.runtime import Registry, Turn

    server.route("/a", html(PAGE))
    registry = Registry()
    registry.register(make_tool(max_uses=1), "web_fetch")
    with Turn(
        registry=registry, requested_tools=["web_fetch"], fetch=client, http=client, messages=[server.url("/a")]
    ) as turn:
        assert not turn.call("web_fetch", {"url": server.url("/a")}).is_error
        again = turn.call("web_fetch", {"url": server.url("/a")})
    assert again.output["error"].startswith("The fetch limit for this answer is reached.")


def test_fetched_texts_are_shared_only_when_the_cache_is_on(client, server):  # noqa: F811
    server.route("/a", html(PAGE))
    cache = MemoryCache()
    for ttl, expected in ((0, 2), (60, 3)):
        tool = make_tool(cache_ttl_seconds=ttl, respect_robots_txt=False)
        for user in ("1", "2"):
            output = call(client, server.url("/a"), tool=tool, ctx=fetch_ctx(client, MemoryStore(), cache, user))
            assert "Words of a page." in output["content"]
        assert server.hits("/a") == expected


def test_a_different_deny_list_is_a_different_cache_entry(client, server):  # noqa: F811
    server.route("/a", html(PAGE))
    cache = MemoryCache()
    call(client, server.url("/a"), tool=make_tool(cache_ttl_seconds=60, respect_robots_txt=False),
         ctx=fetch_ctx(client, MemoryStore(), cache))
    call(client, server.url("/a"), tool=make_tool(cache_ttl_seconds=60, respect_robots_txt=False,
                                                  deny_domains="example.org"),
         ctx=fetch_ctx(client, MemoryStore(), cache))
    assert server.hits("/a") == 2


# -- the admin's usage page ---------------------------------------------------------------------------------


def test_usage_page_shows_totals_and_estimated_cost(admin_client, django_user_model):
    ann = django_user_model.objects.create_user("ann")
    store = DjangoStore()
    from webtools.runtime.limits import Usage as Spent

    day = "2026-11-28"
    Usage.objects.create(user=ann, tool="web_search", engine="brave", day=day, operator_key=True, requests=1500)
    Usage.objects.create(user=ann, tool="web_search", engine="brave", day=day, operator_key=False, requests=7)
    store.record(Spent(str(ann.pk), "web_search", "duckduckgo", True))
    EnginePrice.objects.create(engine="brave", price_per_1000=Decimal("5.00"))
    response = admin_client.get(reverse("admin:webtools_usage_changelist"))
    assert response.status_code == 200
    totals = {(r["tool"], r["engine"]): r for r in response.context["usage_totals"]}
    brave = totals[("web_search", "brave")]
    assert (brave["total"], brave["operator"], brave["cost"]) == (1507, 1500, Decimal("7.50"))
    assert totals[("web_search", "duckduckgo")]["cost"] is None
    body = response.content.decode()
    assert "7.50" in body and "set a price" in body


def test_a_settings_read_is_a_constant_number_of_queries_whatever_the_usage(django_user_model):
    """bench/load.py measures a settings read under load; here the count must not grow with usage rows,
    daily counts or users (the limits add no query to it)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    user = django_user_model.objects.create_user("uma")
    api = APIClient()
    api.force_authenticate(user)
    url = reverse("webtools:plugin-settings")
    api.get(url)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert api.get(url).status_code == 200
        return len(captured)

    before = queries()
    store = DjangoStore()
    from webtools.runtime.limits import DAY, Counter
    from webtools.runtime.limits import Usage as Spent

    for n in range(30):
        other = django_user_model.objects.create_user(f"u{n}")
        store.record(Spent(str(other.pk), "web_search", "brave", True))
        store.reserve(Counter(DAY, f"web_search:user:{other.pk}"), 10)
    store.record(Spent(str(user.pk), "web_fetch"))
    assert queries() == before
