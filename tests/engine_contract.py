"""The contract every search engine adapter is held to, as a mixin each engine's test module uses
(the way django-anymail tests every provider against one base)::

    class TestSerper(EngineContract):
        engine_id = "serper"
        plain_request = {"method": "POST", "url": ENDPOINT, "json": {"q": QUERY, "num": 5}}
        key_header = ("X-API-KEY", KEY)
        option_requests = {"count": {"json": {"num": 3}}, FRESHNESS: {"json": {"tbs": "qdr:d"}}, ...}
        recorded_count = 9
        recorded_first = ("Olivia Wilde embraces ...", "https://pagesix.com/...")

What the mixin checks, for every engine:

- identity: listed in ``ENGINES``, a name, a key page when it needs a key, a row in docs/engines.md;
- the exact request for a plain search, and for each option the engine declares in ``supports`` (plus
  the count) the exact change it makes; an option it does not declare changes nothing; a query with
  operators (``site:``) is sent verbatim; ``ENGINE_URLS`` overrides (or the base URL) are honoured;
- the key travels where the test module says (a header, or ``key_param`` for the APIs that take it only
  in the URL) and nowhere else;
- a REAL recorded answer, ``tests/fixtures/search/<id>_recorded.json`` (sources and licences in
  ``SOURCES.md``), parses to the stated count and first result, directly and over HTTP;
- 401/403, 429 with ``Retry-After``, used-up quota, 5xx and a block page, each served by a loopback
  server, become the right actionable message, with the key in no message, log record or (unless the
  API demands it) URL.

``error_answers`` overrides how an engine says one of those things (serpstack says them all with HTTP
200); ``error_messages`` overrides what the message must contain.
"""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from webtools.plugins.web_search import search as shared
from webtools.plugins.web_search.engines import ENGINES
from webtools.plugins.web_search.engines.base import (
    ALLOWED_DOMAINS,
    BLOCKED_DOMAINS,
    COUNTRY,
    FRESHNESS,
    LANGUAGE,
    LOCATION,
    PARAMETERS,
    SAFE_SEARCH,
    Engine,
    Location,
    Request,
    ResponseError,
    Search,
)
from webtools.exceptions import ToolError
from webtools.net import HttpClient
from webtools.testing import tool_context_for_test

from .servers import LoopbackServer, Reply

FIXTURES = Path(__file__).parent / "fixtures" / "search"
DOCS = Path(__file__).parent.parent / "docs" / "engines.md"
BY_ID = {engine.id: engine for engine in ENGINES}

KEY = "contract-key-0123456789abcdef"
QUERY = "django orm"
ENDPOINT = "https://engine.test/search"
BASE_URL = "https://search.example.org"
#: The value each optional parameter takes in the option tests.
OPTION_VALUES: dict[str, dict[str, Any]] = {
    "count": {"count": 3},
    FRESHNESS: {"freshness": "week"},
    # The plain search sends the default, moderate; off is the value every filtering engine sends differently.
    SAFE_SEARCH: {"safe_search": "off"},
    COUNTRY: {"country": "DE"},
    LANGUAGE: {"language": "de"},
    LOCATION: {"location": Location(region="Bavaria", city="Munich", timezone="Europe/Berlin")},
    ALLOWED_DOMAINS: {"allowed_domains": ("python.org", "djangoproject.com")},
    BLOCKED_DOMAINS: {"blocked_domains": ("spam.example",)},
}
PLAIN = {"query": QUERY, "count": 5, "endpoint": ENDPOINT, "api_key": KEY, "base_url": BASE_URL}

BLOCK_PAGE = (
    "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><h1>Checking your browser"
    "</h1><p>Enable JavaScript and cookies to continue.</p></body></html>"
)


def recorded_path(engine: Engine) -> Path:
    """The engine's real recorded answer."""
    suffix = ".html" if engine.id == "duckduckgo" else ".json"
    return FIXTURES / f"{engine.id}_recorded{suffix}"


def search(**values: Any) -> Search:
    return Search(**{**PLAIN, "extra": {"cx": "cx-0123"}, **values})


def shape(request: Request) -> dict[str, Any]:
    """Everything a request sends: method, URL, headers and params / form data / JSON body."""
    out: dict[str, Any] = {"method": request.method, "url": request.url, "headers": dict(request.headers)}
    for part in ("params", "data", "json"):
        value = getattr(request, part)
        if value is not None:
            out[part] = copy.deepcopy(dict(value) if isinstance(value, dict) else value)
    return out


def merged(base: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``change`` applied: dicts merge key by key, a ``None`` value removes the key."""
    out = copy.deepcopy(base)
    for key, value in change.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


class EngineContract:
    """Set the class attributes below in a ``Test<Engine>`` class; every test here then runs for it."""

    #: The engine's id in ``ENGINES``.
    engine_id: str = ""
    #: ``shape()`` of the request for ``search()``: method, URL and params / data / json.
    plain_request: dict[str, Any] = {}
    #: The header carrying the key and its exact value; None for keyless engines and ``key_param`` ones.
    key_header: tuple[str, str] | None = None
    #: For "count" and each option in the engine's ``supports``: the change to ``plain_request`` made by
    #: the value in ``OPTION_VALUES`` (``merged`` semantics). A "count" of ``{}`` means the API has no
    #: count and the shared code cuts the answer.
    option_requests: dict[str, dict[str, Any]] = {}
    #: How many results the recorded answer holds, and the first one's (title, url). None when no real
    #: answer could be found (SOURCES.md then says so, and no fixture stands in for one).
    recorded_count: int | None = 0
    recorded_first: tuple[str, str] = ("", "")
    #: Case name -> (status, body) replacing the default answer for that case.
    error_answers: dict[str, tuple[int, str]] = {}
    #: Case name -> text the message must contain, replacing the default.
    error_messages: dict[str, str] = {}

    @property
    def engine(self) -> Engine:
        return BY_ID[self.engine_id]

    # -- identity ---------------------------------------------------------------------------------

    def test_engine_is_listed_and_declares_what_it_honours(self):
        engine = self.engine
        assert engine.name and engine.id == self.engine_id
        assert engine.supports <= set(PARAMETERS)
        assert 1 <= engine.max_count <= 100
        assert engine.needs_key == bool(self.key_header or engine.key_param)
        if engine.needs_key:
            assert engine.key_url.startswith("https://")
        assert not (engine.needs_base_url and engine.endpoint), "a self-hosted engine has no public endpoint"

    def test_docs_list_the_engine_with_its_key_page(self):
        docs = DOCS.read_text()
        assert f"\n| `{self.engine_id}` | {self.engine.name} |" in docs, "no row in docs/engines.md's engine table"
        prices = docs.split("## Prices, keys and what each honours", 1)[1].split("\n## ", 1)[0]
        (row,) = [line for line in prices.splitlines() if line.startswith(f"| {self.engine.name} |")]
        assert (self.engine.key_url or "none") in row

    # -- the request -------------------------------------------------------------------------------

    def request(self, **values: Any) -> Request:
        return self.engine.request(search(**values))

    def test_plain_search_sends_exactly_the_documented_request(self):
        assert shape(self.request()) == self.plain_request

    def test_key_travels_only_where_the_api_wants_it(self):
        request = self.request()
        sent = shape(request)
        headers_with_key = {name for name, value in request.headers.items() if KEY in value}
        if self.key_header:
            assert request.headers[self.key_header[0]] == self.key_header[1]
            assert headers_with_key == {self.key_header[0]}
            del sent["headers"][self.key_header[0]]
        elif self.engine.key_param:
            # By the API's design (SerpApi, serpstack, Mojeek); masked in every message instead.
            assert request.params[self.engine.key_param] == KEY and not headers_with_key
            del sent["params"][self.engine.key_param]
        assert KEY not in json.dumps(sent)

    def test_options_declared_are_exactly_the_options_with_requests(self):
        assert set(self.option_requests) == {"count", *self.engine.supports}

    @pytest.mark.parametrize("option", ["count", *PARAMETERS])
    def test_each_option_changes_the_request_as_documented_or_not_at_all(self, option):
        sent = shape(self.request(**OPTION_VALUES[option]))
        if option == "count" or option in self.engine.supports:
            assert sent == merged(self.plain_request, self.option_requests[option])
        else:
            assert sent == self.plain_request, f"{option} is not declared in supports but changes the request"

    def test_query_operators_are_sent_verbatim(self):
        query = 'site:docs.djangoproject.com "select_related" -flask'
        request = self.request(query=query)
        sent = json.dumps(shape(request), ensure_ascii=False) + json.dumps(dict(request.headers))
        assert json.dumps(query)[1:-1] in sent or query in self._decoded_url(request)

    @staticmethod
    def _decoded_url(request: Request) -> str:
        # An API that takes the query in the path (Serply) encodes it like a query string.
        encoded = urlsplit(request.url).path.rsplit("/", 1)[-1]
        return " ".join(value for values in parse_qs(encoded).values() for value in values)

    def test_engine_urls_override_and_base_url_are_honoured(self):
        engine = self.engine
        if engine.needs_base_url:
            assert self.request(base_url="http://127.0.0.1:9/yacy/").url.startswith("http://127.0.0.1:9/yacy/")
        else:
            assert self.request(endpoint="http://127.0.0.1:9/recorded").url.startswith(
                "http://127.0.0.1:9/recorded"
            )

    # -- the recorded answer -----------------------------------------------------------------------

    def recorded(self) -> str:
        return recorded_path(self.engine).read_text(encoding="utf-8")

    def test_recorded_answer_is_real_and_its_source_is_written_down(self):
        path = recorded_path(self.engine)
        sources = (FIXTURES / "SOURCES.md").read_text()
        if self.recorded_count is None:
            # No real answer could be found: the absence is written down, and nothing stands in for it.
            absent = sources.split("## No real answer found", 1)[1].split("##", 1)[0]
            assert f"- `{self.engine_id}`:" in absent and not path.exists()
        else:
            assert f"`{path.name}`" in sources, f"SOURCES.md does not say where {path.name} is from"

    def test_recorded_answer_parses_to_its_results(self):
        if self.recorded_count is None:
            assert not recorded_path(self.engine).exists()
            return
        raw = self.engine.parse(self.recorded())
        assert len(raw) == self.recorded_count
        assert (raw[0].title, raw[0].url) == self.recorded_first
        results, _ = shared.clean_results(raw, count=20)
        assert results and all(r["url"].startswith(("http://", "https://")) and r["title"] for r in results)

    @pytest.mark.parametrize("body", ["[]", '"results"', "null", '{"results": [', "Service unavailable"])
    def test_answer_that_is_not_a_results_object_is_an_error_naming_the_engine(self, body):
        with pytest.raises(ResponseError) as info:
            self.engine.parse(body)
        assert str(info.value).startswith(self.engine.name + " ")

    # -- over HTTP: the recorded answer and every kind of failure ----------------------------------

    def serve(self, status: int, body: str, headers: dict[str, str] | None = None):
        """Run one search against a loopback server answering ``status``/``body``: (outcome, server)."""
        content_type = "text/html; charset=utf-8" if body.lstrip().startswith("<") else "application/json"
        server = LoopbackServer({"*": Reply(status, {"Content-Type": content_type, **(headers or {})}, body)})
        server.start()
        try:
            values = {"base_url": server.origin} if self.engine.needs_base_url else {"endpoint": server.url("/s")}
            with HttpClient(policy=None) as client:
                ctx, _ = tool_context_for_test(http=client, fetch=client)
                try:
                    outcome: Any = shared.run(self.engine, search(**values), client, ctx)
                except ToolError as err:
                    outcome = err
        finally:
            server.stop()
        return outcome, server

    def test_recorded_answer_over_http_carries_the_key_where_declared(self):
        if self.recorded_count is None:
            return
        outcome, server = self.serve(200, self.recorded())
        assert not isinstance(outcome, ToolError), outcome
        expected = self.engine.parse(self.recorded())
        assert [(r.title, r.url) for r in outcome] == [(r.title, r.url) for r in expected]
        (got,) = server.requests
        if self.key_header:
            assert got.headers[self.key_header[0]] == self.key_header[1]
        if self.engine.key_param:
            assert parse_qs(got.query)[self.engine.key_param] == [KEY]
        else:
            assert KEY not in got.path + "?" + got.query

    def default_answers(self) -> dict[str, tuple[int, str]]:
        return {
            "unauthorized": (401, json.dumps({"error": "Invalid API key {key}", "message": "Invalid API key {key}"})),
            "forbidden": (403, json.dumps({"error": "Forbidden"})),
            "rate_limited": (429, json.dumps({"error": "Too many requests"})),
            "quota": (402, json.dumps({"error": "Payment required"})),
            "server_error": (503, "<html><body>Service Unavailable</body></html>"),
            "block_page": (200, BLOCK_PAGE),
        }

    def default_messages(self) -> dict[str, str]:
        engine = self.engine

        def refused(status: int) -> str:
            if engine.needs_key:
                return engine.key_rejected_message()
            return f"{engine.name} refused the search (HTTP {status})."

        return {
            "unauthorized": refused(401),
            "forbidden": refused(403),
            "rate_limited": engine.rate_limit_message(),
            "quota": engine.quota_message(),
            "server_error": f"{engine.name} search failed (HTTP 503).",
            "block_page": engine.block_message(),
        }

    @pytest.mark.parametrize(
        "case", ["unauthorized", "forbidden", "rate_limited", "quota", "server_error", "block_page"]
    )
    def test_failure_becomes_an_actionable_message_without_the_key(self, case, caplog):
        caplog.set_level(logging.DEBUG)
        status, body = {**self.default_answers(), **self.error_answers}[case]
        headers = {"Retry-After": "30"} if case == "rate_limited" else None
        outcome, server = self.serve(status, body.replace("{key}", KEY), headers)
        assert isinstance(outcome, ToolError), f"{case} answer was read as results: {outcome!r}"
        message = str(outcome)
        expected = {**self.default_messages(), **self.error_messages}[case]
        assert expected in message
        assert KEY not in message
        assert all(KEY not in record.getMessage() for record in caplog.records)
        if not self.engine.key_param:
            assert all(KEY not in r.path + "?" + r.query for r in server.requests)
