"""robots.txt: RFC 9309 group and rule matching, replaying Google's reference test suite."""
from __future__ import annotations

import json

import pytest

from tests.corpora import ROBOTS_CASES, needs
from webtools.plugins.web_fetch.robots import (
    RobotsRules,
    is_allowed,
    product_token,
    robots_url,
)
from webtools.net import read_url

CASES = ROBOTS_CASES


def _cases() -> list[dict]:
    if not CASES.exists():
        return []
    return json.loads(CASES.read_text(encoding="utf-8"))


needs_corpus = needs(CASES)


@needs_corpus
@pytest.mark.parametrize(
    "case", [c for c in _cases() if c["source_test_name"].split(".")[-1].startswith("ID_")],
    ids=lambda c: f"{c['id']}-{c['source_test_name'].split('.')[-1]}",
)
def test_every_rfc_case_of_the_reference_suite_is_right(case):
    assert is_allowed(case["robots_txt"], case["user_agent"], case["url"]) is case["allowed"]


@needs_corpus
def test_at_least_140_of_the_145_reference_cases_are_right():
    cases = _cases()
    right = sum(is_allowed(c["robots_txt"], c["user_agent"], c["url"]) is c["allowed"] for c in cases)
    assert len(cases) == 145
    assert right >= 140, f"{right}/145"


def test_longest_match_wins_and_allow_wins_a_tie():
    rules = RobotsRules.parse("User-agent: *\nDisallow: /private\nAllow: /private/ok\nAllow: /same\n"
                              "Disallow: /same\n", "webtools")
    assert not rules.allows("https://a.test/private/x")
    assert rules.allows("https://a.test/private/ok/1")
    assert rules.allows("https://a.test/same")


def test_group_naming_our_product_replaces_the_star_group():
    text = "User-agent: *\nDisallow: /\n\nUser-agent: WebTools\nDisallow: /no\n"
    assert is_allowed(text, "webtools", "https://a.test/yes")
    assert not is_allowed(text, "webtools", "https://a.test/no")
    assert not is_allowed(text, "otherbot", "https://a.test/yes")


def test_groups_naming_us_are_merged():
    text = ("User-agent: webtools\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\n"
            "User-agent: webtools\nDisallow: /b\n")
    assert not is_allowed(text, "webtools", "https://a.test/a")
    assert not is_allowed(text, "webtools", "https://a.test/b")
    assert is_allowed(text, "webtools", "https://a.test/c")


def test_wildcards_and_end_anchor():
    text = "User-agent: *\nDisallow: /*.pdf$\nDisallow: /search*q=\n"
    assert not is_allowed(text, "webtools", "https://a.test/files/x.pdf")
    assert is_allowed(text, "webtools", "https://a.test/files/x.pdf?download=1")
    assert not is_allowed(text, "webtools", "https://a.test/search?lang=en&q=x")


def test_product_token_is_the_first_word_of_the_user_agent():
    assert product_token("webtools (+https://example.com/bot)") == "webtools"
    assert product_token("My-Bot/2.1 (+https://example.com)") == "My-Bot"
    assert product_token("") == "webtools"


def test_rules_match_the_canonical_url_which_is_the_form_the_request_is_sent_in():
    assert str(read_url("https://a.test/foo/bar/ツ#frag")) == "https://a.test/foo/bar/%E3%83%84"
    assert str(read_url("https://a.test/a%2fb?q=1")) == "https://a.test/a%2Fb?q=1"
    rules = RobotsRules.parse("User-agent: *\nDisallow: /\nAllow: /foo/bar/ツ\n", "webtools")
    assert rules.allows(str(read_url("https://a.test/foo/bar/ツ")))


def test_robots_url_keeps_scheme_host_and_port_as_the_client_connects_to_them():
    assert robots_url(read_url("https://Example.com:8443/a/b?c")) == "https://example.com:8443/robots.txt"
    assert robots_url(read_url("https://%65xample.com:443/a")) == "https://example.com/robots.txt"
