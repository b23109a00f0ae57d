"""A URL's user info, query and fragment never reach an error, a signal or a log line.

A query may carry a share token or a session (``/doc?share=sharetok-…``); a search query may be a
private question. Messages, the audit signals, webtools' logs and urllib3's DEBUG request lines show
URLs without them (``webtools.net.displayed_urls``).
"""
from __future__ import annotations

import json
import logging

import pytest
from django.contrib.auth import get_user_model
from hypothesis import given, settings
from hypothesis import strategies as st

from webtools import signals
from webtools.host import start_turn
from webtools.net import AddressPolicy, HttpClient, displayed_urls
from webtools.runtime.provenance import canonical

from .servers import LoopbackServer, Reply

SHARE = "sharetok-5f3c9a7e41"


@pytest.fixture
def site():
    with LoopbackServer({
        "/doc": Reply(403, {"Content-Type": "text/plain"}, "Forbidden"),
        "/search": Reply(200, {"Content-Type": "application/json"}, "{}"),
    }) as server:
        yield server


@pytest.mark.django_db
def test_a_failed_fetch_names_its_url_without_the_query_in_the_error_the_signal_and_the_log(site, settings, caplog):
    settings.WEBTOOLS = {**settings.WEBTOOLS,
                         "ADDRESS_POLICY": AddressPolicy.with_overrides(allow=["127.0.0.1/32"])}
    heard = []

    def receive(sender, **kwargs):
        heard.append(kwargs)

    signals.tool_failed.connect(receive)
    url = site.url(f"/doc?share={SHARE}#part")
    try:
        with caplog.at_level(logging.DEBUG):
            with start_turn(get_user_model().objects.create_user("ana"), messages=[f"Read {url}"],
                            requested_tools=["web_fetch"]) as turn:
                result = turn.call("web_fetch", {"url": url})
    finally:
        signals.tool_failed.disconnect(receive)
    assert site.hits("/doc") == 1 and result.is_error
    message = result.output["error"]
    assert site.url("/doc") in message and "403" in message, message
    assert SHARE not in message and SHARE not in result.model_text
    assert [event["error"] for event in heard] == [message]
    assert SHARE not in caplog.text, [r.getMessage() for r in caplog.records if SHARE in r.getMessage()]


def test_urllib3s_request_lines_show_no_query(site, caplog):
    with caplog.at_level(logging.DEBUG, logger="urllib3.connectionpool"):
        with HttpClient(policy=None) as client:
            client.request("GET", site.url("/search?q=my+private+medical+question&key=abc"), max_bytes=1000,
                           timeout=5)
    lines = [r.getMessage() for r in caplog.records if r.name == "urllib3.connectionpool"]
    assert any("GET /search?…" in line for line in lines), lines
    assert "medical" not in caplog.text and "key=abc" not in caplog.text


HOST = st.from_regex(r"\A[a-z][a-z0-9-]{0,15}\.(com|org|example)\Z")
# Sentence punctuation right after a URL is read as the sentence's, not the URL's (as provenance reads
# it), so a generated part ends in a letter or digit.
PART = st.from_regex(r"\A[A-Za-z0-9._~!$&()*+,;=:%-]{0,11}[A-Za-z0-9]\Z")


@settings(max_examples=300, deadline=None)
@given(host=HOST, path=PART, query=PART, fragment=PART, user=st.from_regex(r"\A[a-z]{1,8}\Z"),
       before=st.sampled_from(["", "Fetching ", "see ("]), after=st.sampled_from(["", " failed.", ").", ", then"]))
def test_a_shown_url_keeps_host_and_path_and_loses_user_info_query_and_fragment(
    host, path, query, fragment, user, before, after
):
    url = f"https://{user}@{host}/{path}?q={query}#{fragment}"
    shown = displayed_urls(before + url + after)
    assert shown.startswith(before) and shown.endswith(after)
    inner = shown[len(before):len(shown) - len(after)]
    assert "?" not in inner and "#" not in inner and "@" not in inner
    # What is shown is the address urllib3 would reach, less the query: the same host and path.
    bare = canonical(f"https://{host}/{path}")
    assert bare is None or canonical(inner) == bare, (url, inner)


def test_text_without_a_url_is_left_as_it_is():
    for text in ("No URL here.", "a://b?c", "https://example.com/plain/path ok"):
        assert displayed_urls(text) == text
    assert json.loads(json.dumps(displayed_urls("x")))
