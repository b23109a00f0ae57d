"""web_search's ``queries``: several queries at once, one merged list (``merge.py``), each query one search
for every limit; against a loopback engine answering each query with its own results."""
from __future__ import annotations

import json
import time
from urllib.parse import parse_qs

from hypothesis import given
from hypothesis import strategies as st

from tests.servers import Reply
from tests.test_web_search import FIXTURES, options, plain, server, tool  # noqa: F401  (fixtures)
from webtools.plugins.web_search.merge import K, fuse, same_page
from webtools.runtime import Turn
from webtools.runtime.cache import MemoryCache
from webtools.runtime.limits import DAY, MINUTE, Counter, MemoryStore

BRAVE = json.loads((FIXTURES / "brave.json").read_text())


def answering_by_query(server, pages: dict[str, list[str]], delay: float = 0.0):  # noqa: F811
    """Brave at ``/brave`` answering the query ``q`` with the results at ``pages[q]`` (their URLs), after
    ``delay`` seconds."""
    template = BRAVE["web"]["results"][0]

    def answer(request):
        time.sleep(delay)
        query = parse_qs(request.query)["q"][0]
        results = [{**template, "title": f"{query} {i}", "url": url} for i, url in enumerate(pages.get(query, []))]
        return Reply(200, {"Content-Type": "application/json"}, json.dumps({**BRAVE, "web": {"results": results}}))

    server.loopback.route("/brave", answer)


def search_turn(opts, http, **kwargs) -> Turn:
    registry, _ = tool(opts)
    return Turn(registry=registry, requested_tools=["web_search"], user="1", roles={"user"}, fetch=http, http=http,
                **kwargs)


def brave_requests(server) -> list[str]:  # noqa: F811
    return [r["query"]["q"][0] for r in server.requests if r["path"] == "/brave"]


# -- the tool ----------------------------------------------------------------------------------------


def test_three_queries_are_asked_at_once_merged_by_page_and_count_three_searches(server, plain):  # noqa: F811
    answering_by_query(server, {
        "django orm": ["https://docs.djangoproject.com/orm/", "https://a.example/x?utm_source=news"],
        "django models": ["http://docs.djangoproject.com/orm", "https://b.example/"],
        "django queryset": ["https://a.example/x", "https://docs.djangoproject.com/orm/?gclid=1"],
    }, delay=0.5)
    store = MemoryStore()
    with search_turn(options(max_uses=5), plain, limits=store) as turn:
        started = time.monotonic()
        result = turn.call("web_search", {"queries": ["django orm", "django models", "django queryset"]})
        elapsed = time.monotonic() - started
    assert not result.is_error, result.output
    assert elapsed < 1.2, elapsed  # three 0.5 s answers, side by side
    assert sorted(brave_requests(server)) == ["django models", "django orm", "django queryset"]
    output = result.output
    assert output["queries"] == ["django orm", "django models", "django queryset"]
    by_url = {r["url"]: r["queries"] for r in output["results"]}
    # One entry a page, whatever the scheme, trailing slash or tracking parameters; the best-ranked version.
    assert by_url == {
        "https://docs.djangoproject.com/orm/": ["django orm", "django models", "django queryset"],
        "https://a.example/x": ["django orm", "django queryset"],  # ranked first by "django queryset"
        "https://b.example/": ["django models"],
    }
    assert [r["url"] for r in output["results"]][0] == "https://docs.djangoproject.com/orm/"
    # Three searches for every limit: the per-minute and daily counters, the usage table, max_uses.
    assert store.count(Counter(MINUTE, "web_search:user:1")) == 3
    assert store.count(Counter(DAY, "web_search:user:1")) == 3
    assert sum(store.usage.values()) == 3
    assert [c.url for c in result.citations] == [r["url"] for r in output["results"]]


def test_when_max_uses_leaves_room_for_fewer_the_first_are_asked_and_the_rest_named(server, plain):  # noqa: F811
    answering_by_query(server, {q: [f"https://{q}.example/"] for q in ("one", "two", "three")})
    with search_turn(options(max_uses=3), plain) as turn:
        assert not turn.call("web_search", {"query": "one"}).is_error
        output = turn.call("web_search", {"queries": ["one", "two", "three"]}).output
        refused = turn.call("web_search", {"queries": ["one", "two"]}).output
    assert output["queries"] == ["one", "two"] and output["not_asked"] == ["three"]
    assert "1 of the queries were not asked" in output["notes"][-1]
    assert refused["error_code"] == "max_uses_exceeded"
    assert sorted(brave_requests(server)) == ["one", "one", "two"]


def test_when_the_per_minute_limit_leaves_room_for_fewer_the_first_are_asked(server, plain):  # noqa: F811
    answering_by_query(server, {q: [f"https://{q}.example/"] for q in ("one", "two", "three")})
    with search_turn(options(user_searches_per_minute=2), plain) as turn:
        output = turn.call("web_search", {"queries": ["one", "two", "three"]}).output
    assert output["queries"] == ["one", "two"] and output["not_asked"] == ["three"]
    assert "limited to 2 a minute" in output["notes"][-1]
    assert sorted(brave_requests(server)) == ["one", "two"]


def test_the_shared_cache_answers_each_query(server, plain):  # noqa: F811
    answering_by_query(server, {q: [f"https://{q}.example/"] for q in ("one", "two", "three")})
    cache = MemoryCache()
    with search_turn(options(cache_ttl_seconds=600), plain, shared_cache=cache) as turn:
        first = turn.call("web_search", {"queries": ["one", "two"]}).output
        second = turn.call("web_search", {"queries": ["two", "three"]}).output
    assert sorted(brave_requests(server)) == ["one", "three", "two"]  # "two" came from the cache
    assert [r["url"] for r in first["results"]] == ["https://one.example/", "https://two.example/"]
    assert [r["url"] for r in second["results"]] == ["https://two.example/", "https://three.example/"]


def test_a_failed_query_is_a_note_and_all_failed_is_the_error(server, plain):  # noqa: F811
    def answer(request):
        query = parse_qs(request.query)["q"][0]
        if query == "bad":
            return Reply(500, {"Content-Type": "application/json"}, "{}")
        results = [{**BRAVE["web"]["results"][0], "url": "https://good.example/"}]
        return Reply(200, {"Content-Type": "application/json"}, json.dumps({**BRAVE, "web": {"results": results}}))

    server.loopback.route("/brave", answer)
    with search_turn(options(), plain) as turn:
        output = turn.call("web_search", {"queries": ["good", "bad"]}).output
    assert [r["url"] for r in output["results"]] == ["https://good.example/"]
    assert any(note.startswith("The search for 'bad' failed:") for note in output["notes"])


def test_query_and_queries_together_or_a_long_one_are_refused(server, plain):  # noqa: F811
    with search_turn(options(), plain) as turn:
        both = turn.call("web_search", {"query": "a", "queries": ["b", "c"]}).output
        neither = turn.call("web_search", {}).output
        long = turn.call("web_search", {"queries": ["b", "c" * 401]}).output
        one = turn.call("web_search", {"queries": ["b"]}).output
    assert both["error_code"] == neither["error_code"] == one["error_code"] == "invalid_tool_input"
    assert long["error_code"] == "query_too_long"
    assert brave_requests(server) == []


def test_the_schema_offers_queries_to_every_provider(server, plain):  # noqa: F811
    from webtools.mcp.server import tool_list

    with search_turn(options(), plain) as turn:
        schema = turn.anthropic_tools()[0]["input_schema"]["properties"]["queries"]
        assert turn.openai_tools()[0]["function"]["parameters"]["properties"]["queries"] == schema
        assert tool_list(turn)[0].input_schema["properties"]["queries"] == schema
    assert (schema["minItems"], schema["maxItems"], schema["items"]["maxLength"]) == (2, 5, 400)


# -- merge.py ----------------------------------------------------------------------------------------


def test_same_page_sets_aside_scheme_trailing_slash_and_tracking_but_not_what_names_the_page():
    key = same_page("https://Example.com/a/?utm_source=x&id=3&fbclid=y")
    assert key == same_page("http://example.com/a?id=3") == same_page("https://example.com:443/a/?id=3&gclid=z")
    assert key != same_page("https://example.com/a?id=4")
    assert key != same_page("https://www.example.com/a?id=3")
    assert same_page("https://example.com/") == same_page("http://example.com")


urls = st.sampled_from([
    "https://a.example/", "http://a.example", "https://a.example/?utm_medium=x", "https://b.example/p",
    "https://b.example/p/", "https://c.example/q?x=1", "https://c.example/q?x=2", "https://d.example/",
])
answer_lists = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "q4"]), st.lists(urls, max_size=8)),
                        min_size=1, max_size=5)


@given(answer_lists, st.integers(1, 20))
def test_fuse_gives_each_page_once_scored_by_reciprocal_rank_with_the_queries_that_found_it(answers, count):
    fused = fuse([(q, [{"url": u} for u in results]) for q, results in answers], count)
    keys = [same_page(r["url"]) for r in fused]
    assert len(keys) == len(set(keys)) and len(fused) <= count
    every = {same_page(u) for _, results in answers for u in results}
    assert len(fused) == min(count, len(every))

    def score(key):
        total = 0.0
        for _, results in answers:
            ranks = [i for i, u in enumerate(results, 1) if same_page(u) == key]
            total += 1 / (K + ranks[0]) if ranks else 0
        return total

    scores = [score(k) for k in keys]
    assert scores == sorted(scores, reverse=True)
    for result, key in zip(fused, keys):
        assert result["queries"] == list(dict.fromkeys(
            q for q, results in answers if any(same_page(u) == key for u in results)))


def test_fuse_of_one_list_keeps_its_order():
    results = [{"url": f"https://{n}.example/"} for n in "abcde"]
    assert [r["url"] for r in fuse([("q", results)], 10)] == [r["url"] for r in results]
