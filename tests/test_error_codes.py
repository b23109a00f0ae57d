"""Every error result of web_fetch and web_search carries a stable ``error_code`` (docs/runtime.md, "Error
codes"), set where the failure is understood; each code of the table is reached here the way a model
would reach it, through a ``Turn``, against real servers on 127.0.0.1 (engines answer recorded bodies)."""
from __future__ import annotations

import datetime as dt
import re
import socket
from pathlib import Path

import pytest

from tests.servers import LoopbackServer
from tests.test_web_fetch import client, html, make_tool  # noqa: F401  (fixtures)
from tests.test_web_search import options, plain, server  # noqa: F401  (fixtures)
from tests.test_web_search import tool as search_tool
from webtools.exceptions import ERROR_CODES, ToolError
from webtools.net import client_for
from webtools.runtime import Registry, Turn

RUNTIME_DOC = Path(__file__).resolve().parent.parent / "docs" / "runtime.md"


@pytest.fixture
def site():
    """The site web_fetch reads (``server`` is the search engine's)."""
    with LoopbackServer() as s:
        yield s


def fetch_turn(client, messages=(), **options) -> Turn:
    registry = Registry()
    registry.register(make_tool(**options), "web_fetch")
    return Turn(registry=registry, requested_tools=["web_fetch"], fetch=client, messages=list(messages))


def fetch_error(client, url, *, input=None, **options):
    """The code and message of fetching ``url`` (which the user wrote) with these options."""
    with fetch_turn(client, [f"Read {url}"], **options) as turn:
        result = turn.call("web_fetch", {"url": url, **(input or {})})
    assert result.is_error and set(result.output) == {"error", "error_code"}
    return result.output["error_code"], result.output["error"]


def search_error(opts, input, http, *, configured=True):
    registry, _ = search_tool(opts, configured=configured)
    with Turn(registry=registry, requested_tools=["web_search"], roles={"user"}, fetch=http, http=http) as turn:
        result = turn.call("web_search", input)
    assert result.is_error and set(result.output) == {"error", "error_code"}
    return result.output["error_code"], result.output["error"]


# -- web_fetch ---------------------------------------------------------------------------------------


def test_a_url_that_cannot_be_read_or_an_input_the_schema_refuses_is_invalid_tool_input(client, site):
    assert fetch_error(client, "ftp://example.com/file")[0] == "invalid_tool_input"
    with fetch_turn(client) as turn:
        assert turn.call("web_fetch", {"url": 42}).output["error_code"] == "invalid_tool_input"
        assert turn.call("web_fetch", "{not json").output["error_code"] == "invalid_tool_input"
    site.route("/short", html("<p>Short page.</p>"))
    code, message = fetch_error(client, site.url("/short"), input={"offset": 5_000})
    assert code == "invalid_tool_input" and "past the end" in message


def test_a_url_nobody_wrote_is_url_not_in_prior_context(client, site):
    site.route("/page", html("<p>Page.</p>"))
    with fetch_turn(client) as turn:
        assert turn.call("web_fetch", {"url": site.url("/page")}).output["error_code"] == "url_not_in_prior_context"
    assert site.hits("/page") == 0


def test_domain_lists_robots_txt_and_private_addresses_are_url_not_allowed(client, site):
    site.route("/page", html("<p>Page.</p>"))
    page = site.url("/page", host="site.test")
    assert fetch_error(client, page, deny_domains=["site.test"])[0] == "url_not_allowed"
    site.route("/robots.txt", (200, {"Content-Type": "text/plain"}, "User-agent: *\nDisallow: /\n"))
    code, message = fetch_error(client, page)
    assert code == "url_not_allowed" and "robots.txt" in message
    with client_for(False) as guarded:  # the real policy: 127.0.0.1 is private
        code, message = fetch_error(guarded, site.url("/page"))
    assert code == "url_not_allowed" and "not allowed" in message


def test_http_errors_and_unreachable_hosts_are_url_not_accessible(client, site):
    assert fetch_error(client, site.url("/missing"))[0] == "url_not_accessible"  # 404
    with socket.socket() as unused:  # a port nothing listens on: the connection is refused
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    code, message = fetch_error(client, f"http://127.0.0.1:{port}/page", respect_robots_txt=False)
    assert code == "url_not_accessible", message


def test_a_url_longer_than_the_schema_allows_is_url_too_long(client):
    url = "https://example.com/" + "a" * 2_100
    assert fetch_error(client, url)[0] == "url_too_long"


def test_a_file_no_reader_takes_is_unsupported_content_type(client, site):
    site.route("/clip.mp4", (200, {"Content-Type": "video/mp4"}, b"\x00\x00\x00\x18ftypmp42"))
    assert fetch_error(client, site.url("/clip.mp4"))[0] == "unsupported_content_type"


def test_the_per_minute_limit_is_too_many_requests(client, site):
    site.route("/a", html("<p>A.</p>"))
    site.route("/b", html("<p>B.</p>"))
    with fetch_turn(client, [f"Read {site.url('/a')} and {site.url('/b')}"], user_fetches_per_minute=1) as turn:
        assert not turn.call("web_fetch", {"url": site.url("/a")}).is_error
        assert turn.call("web_fetch", {"url": site.url("/b")}).output["error_code"] == "too_many_requests"


def test_calls_past_max_uses_are_max_uses_exceeded(client, site):
    site.route("/a", html("<p>A.</p>"))
    with fetch_turn(client, [f"Read {site.url('/a')}"], max_uses=1) as turn:
        assert not turn.call("web_fetch", {"url": site.url("/a")}).is_error
        assert turn.call("web_fetch", {"url": site.url("/a")}).output["error_code"] == "max_uses_exceeded"


def test_a_fetched_page_says_when_it_was_retrieved_in_utc(client, site):
    site.route("/a", html("<p>A.</p>"))
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    with fetch_turn(client, [f"Read {site.url('/a')}"]) as turn:
        first = turn.call("web_fetch", {"url": site.url("/a")}).output
        again = turn.call("web_fetch", {"url": site.url("/a")}).output
    retrieved = dt.datetime.fromisoformat(first["retrieved_at"])
    assert first["retrieved_at"].endswith("+00:00")
    assert before <= retrieved <= dt.datetime.now(dt.timezone.utc)
    assert again["retrieved_at"] == first["retrieved_at"]  # the turn cache's copy: the same download


# -- web_search --------------------------------------------------------------------------------------


def test_a_query_longer_than_allowed_is_query_too_long(server, plain):
    assert search_error(options(), {"query": "x" * 401}, plain)[0] == "query_too_long"


def test_a_bad_search_input_is_invalid_tool_input(server, plain):
    assert search_error(options(), {"query": "x", "freshness": "hour"}, plain)[0] == "invalid_tool_input"
    assert search_error(options(), {"query": "x", "language": "english!"}, plain)[0] == "invalid_tool_input"
    assert search_error(options(), {"query": "x" + "A1" * 30}, plain)[0] == "invalid_tool_input"  # key-like


def test_an_engines_rate_limit_and_our_quota_are_too_many_requests(server, plain):
    server.record("brave", status=429, name="brave_429.json")
    assert search_error(options(), {"query": "django"}, plain)[0] == "too_many_requests"
    server.record("brave")
    registry, _ = search_tool(options(user_searches_per_minute=1))
    with Turn(registry=registry, requested_tools=["web_search"], roles={"user"}, fetch=plain, http=plain) as turn:
        assert not turn.call("web_search", {"query": "django"}).is_error
        assert turn.call("web_search", {"query": "flask"}).output["error_code"] == "too_many_requests"


def test_no_engine_an_engine_down_or_a_rejected_key_is_unavailable(server, plain):
    assert search_error(options(), {"query": "django"}, plain, configured=False)[0] == "unavailable"
    server.record("brave", status=500)
    assert search_error(options(), {"query": "django"}, plain)[0] == "unavailable"
    server.record("brave", status=401)
    assert search_error(options(), {"query": "django"}, plain)[0] == "unavailable"


def test_searches_past_max_uses_are_max_uses_exceeded(server, plain):
    registry, _ = search_tool(options(max_uses=1))
    with Turn(registry=registry, requested_tools=["web_search"], roles={"user"}, fetch=plain, http=plain) as turn:
        assert not turn.call("web_search", {"query": "django"}).is_error
        assert turn.call("web_search", {"query": "django"}).output["error_code"] == "max_uses_exceeded"


# -- the vocabulary ----------------------------------------------------------------------------------


def test_an_unknown_code_is_refused_where_it_is_raised():
    assert ToolError("x").code == "unavailable"
    with pytest.raises(ValueError):
        ToolError("x", "not_a_code")


def test_docs_table_lists_every_code_and_no_other():
    text = RUNTIME_DOC.read_text()
    section = text.split("## Error codes", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M)) == ERROR_CODES
