"""web_search's optional reranking (``rerank.py``): off by default; Jina's and Cohere's recorded answers
reorder the results; every failure (no key, timeout, HTTP error, an answer not in the documented shape,
an unreachable service) leaves the engine's or the fused order, within the call's deadline, and never
reaches the model as an error; the key is kept per service, write-only, in the admin.

The engine (Brave) and the rerank services are loopback servers; ``WEBTOOLS["RERANK_URLS"]`` points the
services there. The services' answers are the recorded ones in ``tests/fixtures/search`` (SOURCES.md).
"""
from __future__ import annotations

import json
import logging
import time
from urllib.parse import parse_qs

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from tests.servers import Reply
from tests.test_web_search import FIXTURES, options, plain, server, tool  # noqa: F401  (fixtures)
from tests.test_web_search_limits import search
from webtools.host import load_options, scoped_fields
from webtools.models import PluginOptions
from webtools.plugins.web_search import WebSearchPlugin, rerank
from webtools.plugins.web_search import search as shared
from webtools.runtime import Turn, limits
from webtools.runtime.limits import MemoryStore

COHERE_KEY = "cohere-rerank-key-0123456789"
JINA_KEY = "jina-rerank-key-0123456789ab"
BRAVE = json.loads((FIXTURES / "brave.json").read_text())
COHERE_ANSWER = (FIXTURES / "cohere_rerank_recorded.json").read_text()
JINA_ANSWER = (FIXTURES / "jina_rerank_recorded.json").read_text()


def pages(query: str, count: int) -> list[str]:
    return [f"https://{query.replace(' ', '-')}-{i}.example/" for i in range(count)]


@pytest.fixture
def services(server, settings):  # noqa: F811
    """Brave answering each query with ``count`` results (``server.count``, 5 by default), and the rerank
    services' paths on the same loopback server."""
    template = BRAVE["web"]["results"][0]
    server.count = 5

    def brave(request):
        query = parse_qs(request.query)["q"][0]
        results = [{**template, "title": f"{query} {i}", "url": url, "description": f"snippet {i}"}
                   for i, url in enumerate(pages(query, server.count))]
        return Reply(200, {"Content-Type": "application/json"}, json.dumps({**BRAVE, "web": {"results": results}}))

    server.loopback.route("/brave", brave)
    settings.WEBTOOLS = {**settings.WEBTOOLS, "RERANK_URLS": {
        "jina": f"{server.base}/rerank/jina", "cohere": f"{server.base}/rerank/cohere"}}
    return server


def rerank_requests(server, service: str) -> list[dict]:  # noqa: F811
    return [r for r in server.requests if r["path"] == f"/rerank/{service}"]


def cohere(**values) -> dict:
    return options(rerank_with="cohere", rerank_api_key=COHERE_KEY, **values)


def run(opts: dict, input: dict, http, **kwargs):
    """One call in a turn: its result (with ``audit``, what the call's audit event said), its duration
    and the turn."""
    registry, _ = tool(opts)
    events: list[dict] = []
    with Turn(registry=registry, requested_tools=["web_search"], user="1", roles={"user"}, fetch=http, http=http,
              on_call=lambda result, event: events.append(event), **kwargs) as turn:
        started = time.monotonic()
        result = turn.call("web_search", input)
        elapsed = time.monotonic() - started
    result.audit = events[-1]
    return result, elapsed, turn


def urls(output: dict) -> list[str]:
    return [r["url"] for r in output["results"]]


# -- off by default -----------------------------------------------------------------------------------


def test_reranking_is_off_by_default_and_sends_nothing(services, plain):  # noqa: F811
    defaults = WebSearchPlugin().default_options()
    assert defaults["rerank_with"] == rerank.NONE
    opts = options()
    assert rerank.chosen(opts) is None and rerank.reserved(opts) == 0.0
    services.route("/rerank/cohere", COHERE_ANSWER)
    services.route("/rerank/jina", JINA_ANSWER)
    result, _, turn = run(opts, {"query": "django"}, plain)
    assert urls(result.output) == pages("django", 5)
    assert not rerank_requests(services, "cohere") and not rerank_requests(services, "jina")
    assert "reranked" not in result.audit
    assert [c.url for c in turn.citations] == pages("django", 5)


# -- the recorded answers reorder -------------------------------------------------------------------------


def test_cohere_recorded_answer_reorders_and_keeps_every_field(services, plain):  # noqa: F811
    services.route("/rerank/cohere", COHERE_ANSWER)
    off, _, _ = run(options(), {"query": "capital"}, plain)
    result, _, turn = run(cohere(), {"query": "capital"}, plain)
    assert not result.is_error, result.output
    engine_order = off.output["results"]
    # Cohere's answer ranks 3, 4, 0; the two it left out follow in the engine's order.
    assert result.output["results"] == [engine_order[i] for i in (3, 4, 0, 1, 2)]
    assert result.audit["reranked"] == "cohere"
    # Cited in the order the model reads them.
    assert [c.url for c in turn.citations] == urls(result.output)
    (sent,) = rerank_requests(services, "cohere")
    assert sent["method"] == "POST" and sent["headers"]["Authorization"] == f"Bearer {COHERE_KEY}"
    assert json.loads(sent["body"]) == {
        "model": "rerank-v3.5", "query": "capital", "top_n": 5,
        "documents": [f"capital {i}\nsnippet {i}" for i in range(5)],
    }


def test_jina_recorded_answer_reorders_with_the_operators_model(services, plain):  # noqa: F811
    services.count = 4
    services.route("/rerank/jina", JINA_ANSWER)
    opts = options(rerank_with="jina", rerank_api_key=JINA_KEY, rerank_model="jina-reranker-m0")
    result, _, _ = run(opts, {"query": "machine learning"}, plain)
    assert urls(result.output) == [pages("machine learning", 4)[i] for i in (0, 2, 1, 3)]
    assert result.audit["reranked"] == "jina"
    (sent,) = rerank_requests(services, "jina")
    assert sent["headers"]["Authorization"] == f"Bearer {JINA_KEY}"
    body = json.loads(sent["body"])
    assert (body["model"], body["top_n"], body["return_documents"]) == ("jina-reranker-m0", 4, False)


def test_queries_are_reranked_once_against_the_asked_queries_joined(services, plain):  # noqa: F811
    services.count = 3
    services.route("/rerank/cohere", Reply(200, {"Content-Type": "application/json"}, json.dumps(
        {"results": [{"index": 5, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]})))
    off, _, _ = run(options(), {"queries": ["one", "two"]}, plain)
    result, _, _ = run(cohere(), {"queries": ["one", "two"]}, plain)
    fused = off.output["results"]
    assert len(fused) == 5  # max_results: the fused list is cut before reranking
    (sent,) = rerank_requests(services, "cohere")
    body = json.loads(sent["body"])
    assert body["query"] == "one; two" and body["top_n"] == 5
    # Index 5 is out of range for five documents: not the documented shape, so the fused order stays.
    assert result.output["results"] == fused and result.output["queries"] == ["one", "two"]


def test_queries_reordered_by_the_service(services, plain):  # noqa: F811
    services.route("/rerank/cohere", COHERE_ANSWER)
    off, _, _ = run(options(), {"queries": ["one", "two"]}, plain)
    result, _, _ = run(cohere(), {"queries": ["one", "two"]}, plain)
    fused = off.output["results"]
    assert result.output["results"] == [fused[i] for i in (3, 4, 0, 1, 2)]
    assert all(r["queries"] for r in result.output["results"])  # each result keeps the queries that found it


# -- every failure keeps the order ----------------------------------------------------------------------

JSON = {"Content-Type": "application/json"}
FAILURES = {
    "unauthorized": Reply(401, JSON, '{"message": "invalid api token"}'),
    "rate limited": Reply(429, JSON, '{"message": "too many requests"}'),
    "server error": Reply(503, {"Content-Type": "text/html"}, "<html>Service Unavailable</html>"),
    "not JSON": Reply(200, {"Content-Type": "text/html"}, "<html>Just a moment...</html>"),
    "no results": Reply(200, JSON, '{"results": []}'),
    "not an object": Reply(200, JSON, "[1, 2, 3]"),
    "index named twice": Reply(200, JSON, json.dumps(
        {"results": [{"index": 1, "relevance_score": 0.9}, {"index": 1, "relevance_score": 0.5}]})),
    "index not a number": Reply(200, JSON, json.dumps({"results": [{"index": "1", "relevance_score": 0.9}]})),
    "score not a number": Reply(200, JSON, json.dumps({"results": [{"index": 1, "relevance_score": "high"}]})),
    "negative index": Reply(200, JSON, json.dumps({"results": [{"index": -1, "relevance_score": 0.9}]})),
    "too large": Reply(200, JSON, '{"results": [' + " " * rerank.MAX_BYTES + "]}"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_a_failing_service_leaves_the_engines_order(services, plain, case, caplog):  # noqa: F811
    caplog.set_level(logging.INFO, logger="webtools.web_search")
    services.route("/rerank/cohere", FAILURES[case])
    off, _, _ = run(options(), {"query": "capital"}, plain)
    result, elapsed, turn = run(cohere(), {"query": "capital"}, plain)
    assert not result.is_error and "error_code" not in result.output
    assert result.output["results"] == off.output["results"]
    assert "notes" not in result.output
    assert result.audit["reranked"] == ""
    assert [c.url for c in turn.citations] == urls(off.output)
    assert len(rerank_requests(services, "cohere")) == 1
    assert any("Reranking with Cohere Rerank skipped" in r.getMessage() for r in caplog.records)
    assert all(COHERE_KEY not in r.getMessage() for r in caplog.records)
    assert elapsed < shared.TIMEOUT


def test_a_missing_key_sends_nothing_and_leaves_the_order(services, plain):  # noqa: F811
    services.route("/rerank/jina", JINA_ANSWER)
    opts = options(rerank_with="jina")
    assert rerank.problems(opts) and "needs an API key" in WebSearchPlugin().check(opts)[0]
    result, _, _ = run(opts, {"query": "capital"}, plain)
    assert urls(result.output) == pages("capital", 5)
    assert not rerank_requests(services, "jina")


def test_a_slow_service_is_given_up_within_its_share_then_cooled_down(services, plain, monkeypatch):  # noqa: F811
    monkeypatch.setattr(rerank, "SECONDS", 0.5)
    services.route("/rerank/cohere", COHERE_ANSWER, delay=3.0)
    registry, _ = tool(cohere())
    with Turn(registry=registry, requested_tools=["web_search"], user="1", roles={"user"}, fetch=plain,
              http=plain) as turn:
        started = time.monotonic()
        first = turn.call("web_search", {"query": "capital"})
        elapsed = time.monotonic() - started
        second = turn.call("web_search", {"query": "capital"})
    assert elapsed < 2.0, elapsed
    assert urls(first.output) == urls(second.output) == pages("capital", 5)
    # The second search skipped the service that timed out moments ago.
    assert len(rerank_requests(services, "cohere")) == 1


def test_an_unreachable_service_leaves_the_order(services, plain, settings):  # noqa: F811
    settings.WEBTOOLS = {**settings.WEBTOOLS, "RERANK_URLS": {"cohere": "http://127.0.0.1:9/rerank"}}
    result, _, _ = run(cohere(), {"query": "capital"}, plain)
    assert not result.is_error and urls(result.output) == pages("capital", 5)


def test_the_engines_leave_the_rerank_its_share_of_the_deadline():
    assert rerank.reserved(options(rerank_with="cohere")) == rerank.SECONDS
    assert 0 < rerank.SECONDS < shared.TIMEOUT / 2


def test_one_result_is_not_sent(services, plain):  # noqa: F811
    services.count = 1
    services.route("/rerank/cohere", COHERE_ANSWER)
    result, _, turn = run(cohere(), {"query": "capital"}, plain)
    assert urls(result.output) == pages("capital", 1) and [c.url for c in turn.citations] == pages("capital", 1)
    assert not rerank_requests(services, "cohere")


# -- whose account pays ----------------------------------------------------------------------------------


def test_only_users_who_may_spend_the_operators_account_are_reranked(services, plain):  # noqa: F811
    """The rerank service is the operator's account: a user searching with their own key whose roles are
    not in ``admin_engine_roles`` gets the engine's order and no request is sent; a user who may spend it
    is reranked, and the request is counted in the usage table on the operator's key."""
    services.route("/rerank/cohere", COHERE_ANSWER)
    opts = cohere(user_engines=True, admin_engine_roles=["staff"])
    own = {"engine": "brave", "api_key": "users-own-brave-key-0123"}
    store = MemoryStore()
    output = search(opts, http=plain, store=store, settings=own, input={"query": "capital"})
    assert urls(output) == pages("capital", 5)
    assert not rerank_requests(services, "cohere")
    assert not [u for u in store.usage if u.engine.startswith("rerank:")]
    assert rerank.reserved(opts, may_spend=False) == 0.0  # and the engines keep the whole deadline

    output = search(opts, http=plain, store=store, settings=own, input={"query": "capital"}, roles=("user", "staff"))
    assert urls(output) != pages("capital", 5) and sorted(urls(output)) == pages("capital", 5)
    assert len(rerank_requests(services, "cohere")) == 1
    assert store.usage[limits.Usage("1", "web_search", "rerank:cohere", operator_key=True)] == 1


def test_a_rerank_service_can_be_priced_on_the_usage_page(admin_client):
    from webtools.admin_forms import EnginePriceForm

    form = EnginePriceForm(data={"engine": "rerank:jina", "price_per_1000": "2"})
    assert form.is_valid(), form.errors


# -- reading an answer ----------------------------------------------------------------------------------


def test_recorded_answers_read_as_documented():
    assert rerank.read_order(COHERE_ANSWER, 5) == [3, 4, 0, 1, 2]
    assert rerank.read_order(JINA_ANSWER, 4) == [0, 2, 1, 3]
    # Sorted by score whatever order the answer lists them in.
    listed = json.dumps({"results": [{"index": 0, "relevance_score": 0.1}, {"index": 1, "relevance_score": 0.7}]})
    assert rerank.read_order(listed, 3) == [1, 0, 2]


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 8) | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(
        st.sampled_from(["results", "index", "relevance_score", "document"]), children, max_size=4),
    max_leaves=30,
)


@given(data=_json, count=st.integers(1, 8))
def test_any_answer_reads_as_a_whole_order_or_is_refused(data, count):
    try:
        order = rerank.read_order(json.dumps(data), count)
    except rerank.UnexpectedAnswer:
        return
    assert sorted(order) == list(range(count))


# -- the admin: the key write-only, kept per service ------------------------------------------------------


@pytest.fixture
def admin_client(client, db):
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-123"))
    client.get(reverse("admin:webtools_pluginoptions_changelist"))
    return client


def save(admin_client, **values):
    row = PluginOptions.objects.get(plugin="web_search")
    data = {"engine": "brave", "api_key": "brave-key-0123456789", "admin_engine_roles": "user",
            "user_engines": "on", "max_results": "5", "safe_search": "moderate", **values}
    response = admin_client.post(reverse("admin:webtools_pluginoptions_change", args=[row.pk]), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    row.refresh_from_db()
    return row


def test_the_admin_keeps_each_services_key_write_only(admin_client):
    row = save(admin_client, rerank_with="cohere", rerank_model="rerank-v3.5", rerank_api_key=COHERE_KEY)
    assert row.get_secrets()["rerank_api_key@cohere"] == COHERE_KEY
    assert COHERE_KEY not in json.dumps(row.values)
    page = admin_client.get(reverse("admin:webtools_pluginoptions_change", args=[row.pk])).content.decode()
    assert "Reranker API key" in page and COHERE_KEY not in page
    assert "Kept for Cohere Rerank, hidden." in page
    # Another service with its own key; coming back with the key left blank brings Cohere's again.
    row = save(admin_client, rerank_with="jina", rerank_api_key=JINA_KEY)
    assert {k: v for k, v in row.get_secrets().items() if k.startswith("rerank")} == {
        "rerank_api_key@cohere": COHERE_KEY, "rerank_api_key@jina": JINA_KEY}
    row = save(admin_client, rerank_with="cohere")
    loaded = load_options(WebSearchPlugin(), row)
    assert loaded.configured and loaded.secrets["rerank_api_key"] == COHERE_KEY
    # The history names fields, never a value.
    from django.contrib.admin.models import LogEntry

    assert all(COHERE_KEY not in entry.change_message and JINA_KEY not in entry.change_message
               for entry in LogEntry.objects.all())


def test_keys_per_engine_stays_the_engines_own(admin_client):
    row = save(admin_client, rerank_with="cohere", rerank_api_key=COHERE_KEY)
    assert scoped_fields(WebSearchPlugin()) == ("engine", ["api_key", "base_url", "cx"])
    page = admin_client.get(reverse("admin:webtools_pluginoptions_scopes", args=[row.pk])).content.decode()
    assert 'name="api_key"' in page and "rerank_api_key" not in page and COHERE_KEY not in page


def test_a_reranker_without_a_key_saves_and_the_system_check_warns(admin_client):
    from django.core import checks

    save(admin_client, rerank_with="jina")
    warnings = [m.msg for m in checks.run_checks(databases=["default"]) if m.id == "webtools.W015"]
    assert warnings == [
        "Search results are to be reranked with Jina Reranker, which needs an API key, and none is set: results "
        "keep the engine's order until one is entered in the web search options."
    ]
    save(admin_client, rerank_with="jina", rerank_api_key=JINA_KEY)
    assert not [m for m in checks.run_checks(databases=["default"]) if m.id == "webtools.W015"]
