"""What a site asks of crawlers beyond robots.txt's rules: content signals (Content-Signal, the IETF
AI-preferences Content-Usage) and pay per crawl (HTTP 402), against real servers on 127.0.0.1."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st
from protego import Protego

from tests import test_web_fetch
from tests.servers import Reply
from tests.test_web_fetch import ARTICLE, call, html, make_tool
from webtools.plugins.web_fetch import robots
from webtools.plugins.web_fetch.tool import PAY_PER_CRAWL
from webtools.runtime import ToolError, limits
from webtools.testing import tool_context_for_test

client = test_web_fetch.client
server = test_web_fetch.server

CLOUDFLARE_MANAGED = """# As a condition of accessing this website, you agree to abide by the following content signals:
# ai-input: inputting content into one or more AI models (e.g., retrieval augmented generation).
User-Agent: *
Content-Signal: search=yes, ai-train=no, ai-input=no
Allow: /
"""


def against(text: str, target: str, token: str = "webtools") -> str | None:
    found = robots.RobotsRules.parse(text, token).signal_against(target)
    return found[0].describe(found[1]) if found else None


# -- reading the lines -----------------------------------------------------------------------------


def test_cloudflares_managed_robots_txt_asks_not_to_be_used_as_ai_input():
    assert against(CLOUDFLARE_MANAGED, "/any/page?x=1") == "Content-Signal: ai-input=no"


def test_signals_that_leave_ai_input_unset_or_yes_ask_nothing_of_us():
    assert against("User-Agent: *\nContent-Signal: search=yes, ai-train=no\n", "/") is None
    assert against("User-Agent: *\nContent-Signal: ai-input=yes\n", "/") is None
    assert against("User-Agent: *\nContent-Signal: ai-input=maybe\n", "/") is None


def test_the_ietf_content_usage_rule_is_read_with_its_path():
    text = "User-Agent: *\nAllow: /\nContent-Usage: / ai-use=n\nContent-Usage: /ai-ok/ ai-use=y;note=1\n"
    assert against(text, "/test") == "Content-Usage: ai-use=n"
    assert against(text, "/ai-ok/test") is None
    assert against("User-Agent: *\nContent-Usage: /\ttrain-ai=n\n", "/test") is None


def test_the_longest_matching_path_decides_and_a_tie_goes_to_no():
    text = "User-Agent: *\nContent-Signal: ai-input=no\nContent-Signal: /docs/ ai-input=yes\n"
    assert against(text, "/docs/tides") is None
    assert against(text, "/blog/tides") == "Content-Signal: ai-input=no"
    tie = "User-Agent: *\nContent-Signal: /a ai-input=yes\nContent-Signal: /a ai-input=no\n"
    assert against(tie, "/a") == "Content-Signal: ai-input=no"
    assert against("User-Agent: *\nContent-Signal: /*.pdf$ ai-input=no\n", "/x.pdf") is not None
    assert against("User-Agent: *\nContent-Signal: /*.pdf$ ai-input=no\n", "/x.pdf?v=2") is None


def test_signals_follow_the_group_that_applies_to_our_token():
    text = ("User-Agent: otherbot\nContent-Signal: ai-input=no\n\n"
            "User-Agent: *\nContent-Signal: ai-input=yes\n")
    assert against(text, "/") is None
    named = "User-Agent: *\nContent-Signal: ai-input=yes\n\nUser-Agent: webtools\nContent-Signal: ai-input=no\n"
    assert against(named, "/") == "Content-Signal: ai-input=no"
    assert against(named, "/", token="otherbot") is None


def test_a_signal_before_any_group_applies_to_every_crawler():
    text = "Content-Signal: ai-input=no\n\nUser-Agent: webtools\nDisallow: /private\n"
    assert against(text, "/") == "Content-Signal: ai-input=no"


def test_a_signal_line_is_a_rule_of_its_group_and_ends_its_list_of_user_agents():
    # aipref-attach makes Content-Usage an RFC 9309 rule: the next user-agent line starts a new group.
    text = "User-Agent: webtools\nContent-Signal: ai-input=yes\nUser-Agent: other\nDisallow: /\n"
    assert robots.is_allowed(text, "webtools", "/x") and not robots.is_allowed(text, "other", "/x")
    assert against(text, "/", token="other") is None


_target_chars = st.sampled_from(list("ab/.-_%?=") + ["%2F", "%62"])
_pattern_chars = st.one_of(_target_chars, st.sampled_from(["*", "$"]))


# A target holds no "*" or "$" here: protego reads them in a URL as it reads them in a rule.
@given(st.lists(_pattern_chars, min_size=1, max_size=8).map(lambda parts: "/" + "".join(parts)),
       st.lists(_target_chars, max_size=10).map(lambda parts: "/" + "".join(parts)))
def test_paths_match_as_protego_matches_robots_rules(pattern, target):
    # Differential: a signal's path matches exactly where protego (robots.txt's matcher) applies a
    # Disallow rule of the same pattern. "%" is escaped for both, as RobotsRules does.
    disallowed = not Protego.parse(f"User-agent: *\nDisallow: {pattern.replace('%', '%25')}").can_fetch(
        "http://example.com" + target.replace("%", "%25"), "x")
    assert robots.path_matches(pattern, target) == disallowed


@given(st.text(max_size=300))
def test_any_robots_txt_reads_without_error(text):
    rules = robots.RobotsRules.parse(text, "webtools")
    rules.signal_against("/")


# -- through the tool ------------------------------------------------------------------------------


def test_a_page_whose_site_says_ai_input_no_is_refused_without_being_requested(client, server):
    server.route("/robots.txt", Reply(200, {"Content-Type": "text/plain"}, CLOUDFLARE_MANAGED))
    server.route("/tides", html(ARTICLE))
    with pytest.raises(ToolError) as err:
        call(client, server.url("/tides"))
    assert str(err.value) == (f"{server.url('/tides')} was not read: its site asks that its pages not be used as "
                              "input to AI answers (Content-Signal: ai-input=no in its robots.txt).")
    assert server.hits("/tides") == 0


def test_an_operator_who_turns_content_signals_off_gets_the_page(client, server):
    server.route("/robots.txt", Reply(200, {"Content-Type": "text/plain"}, CLOUDFLARE_MANAGED))
    server.route("/tides", html(ARTICLE))
    assert "Two bulges of water" in call(client, server.url("/tides"), respect_content_signals=False)["content"]


def test_a_redirect_to_a_path_that_says_ai_use_n_is_refused_before_it_is_requested(client, server):
    server.route("/robots.txt", Reply(200, {}, "User-Agent: *\nContent-Usage: /members/ ai-use=n\n"))
    server.route("/start", Reply(302, {"Location": "/members/tides", "Content-Length": "0"}, b""))
    server.route("/members/tides", html(ARTICLE))
    with pytest.raises(ToolError, match=r"Content-Usage: ai-use=n in its robots.txt"):
        call(client, server.url("/start"))
    assert server.hits("/members/tides") == 0


def test_an_answer_whose_own_header_says_ai_input_no_is_not_used(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/tides", Reply(200, {"Content-Type": "text/html", "Content-Signal": "ai-input=no, search=yes"},
                                 ARTICLE))
    with pytest.raises(ToolError, match=r"\(Content-Signal: ai-input=no in its answer\)"):
        call(client, server.url("/tides"))


# -- pay per crawl ---------------------------------------------------------------------------------


def test_a_402_names_the_price_and_is_never_retried_or_paid(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/tides", Reply(402, {"crawler-price": "USD 0.01", "Content-Type": "text/plain"}, "Pay up"))
    tool = make_tool()
    ctx, _ = tool_context_for_test(fetch=client)
    with pytest.raises(ToolError) as err:
        tool.handler({"url": server.url("/tides")}, ctx)
    assert str(err.value) == (f"{server.url('/tides')} could not be read: the site asks crawlers to pay (HTTP 402 "
                              "Payment Required; it asks USD 0.01 for a crawl), and this tool does not pay for pages.")
    page_requests = [r for r in server.requests if r.path == "/tides"]
    assert len(page_requests) == 1
    assert not any(name.lower().startswith("crawler-") for name in page_requests[0].headers)
    # The operator's usage table counts the 402 apart from the pages read.
    assert ctx.limits.usage == {limits.Usage("test-user", "web_fetch", PAY_PER_CRAWL): 1}
    assert ctx.audit_details["crawler_price"] == "USD 0.01"


def test_a_402_without_a_readable_price_says_it_names_none(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/tides", Reply(402, {"crawler-price": "<script>alert(1)</script>"}, ""))
    with pytest.raises(ToolError, match=r"HTTP 402 Payment Required; it names no price"):
        call(client, server.url("/tides"))


def test_a_page_read_is_counted_as_a_plain_fetch(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/tides", html(ARTICLE))
    ctx, _ = tool_context_for_test(fetch=client)
    make_tool().handler({"url": server.url("/tides")}, ctx)
    assert ctx.limits.usage == {limits.Usage("test-user", "web_fetch", ""): 1}
