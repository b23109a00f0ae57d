"""``use_cache: false``: when the operator's shared cache is on, both tools offer it, and it skips the kept
answer (the fresh one replaces it)."""
from __future__ import annotations

from tests.servers import LoopbackServer
from tests.test_web_fetch import client, html, make_tool  # noqa: F401  (fixtures)
from tests.test_web_search import options, plain, server, tool  # noqa: F401  (fixtures)
from webtools.runtime import Registry, Turn
from webtools.runtime.cache import MemoryCache


def test_web_fetch_offers_use_cache_with_the_shared_cache_and_false_downloads_again(client):  # noqa: F811
    assert "use_cache" not in make_tool().input_schema["properties"]
    tool = make_tool(cache_ttl_seconds=600)
    assert tool.input_schema["properties"]["use_cache"]["type"] == "boolean"
    registry = Registry()
    registry.register(tool, "web_fetch")
    cache = MemoryCache()
    with LoopbackServer() as site:
        site.route("/news", html("<p>Today's news.</p>"))
        url = site.url("/news")

        def fetch(**input):
            with Turn(registry=registry, requested_tools=["web_fetch"], fetch=client, messages=[url],
                      shared_cache=cache) as turn:
                return turn.call("web_fetch", {"url": url, **input}).output

        first = fetch()
        assert fetch()["retrieved_at"] == first["retrieved_at"] and site.hits("/news") == 1  # the kept copy
        assert "Today's news." in fetch(use_cache=False)["content"] and site.hits("/news") == 2
        fetch()
        assert site.hits("/news") == 2  # the fresh copy replaced the kept one


def test_web_search_offers_use_cache_with_the_shared_cache_and_false_asks_the_engine(server, plain):  # noqa: F811
    assert "use_cache" not in tool(options())[1].input_schema["properties"]
    registry, web_search = tool(options(cache_ttl_seconds=600))
    assert web_search.input_schema["properties"]["use_cache"]["type"] == "boolean"
    cache = MemoryCache()

    def search(**input):
        with Turn(registry=registry, requested_tools=["web_search"], roles={"user"}, fetch=plain, http=plain,
                  shared_cache=cache) as turn:
            return turn.call("web_search", {"query": "django", **input})

    asked = lambda: len([r for r in server.requests if r["path"] == "/brave"])  # noqa: E731
    assert not search().is_error and not search().is_error and asked() == 1
    assert not search(use_cache=False).is_error and asked() == 2
    assert not search(use_cache=True).is_error and asked() == 2
