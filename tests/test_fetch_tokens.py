"""web_fetch's token cap: the operator's ``max_content_tokens`` bounds every part; the model may ask
for fewer, never more; parts and nextOffset still cover the whole text."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.servers import LoopbackServer, Reply
from tests.test_web_fetch import make_tool
from webtools.net import AddressPolicy, HttpClient
from webtools.plugins.web_fetch.tokens import characters_within, estimate_tokens
from webtools.testing import tool_context_for_test

ENGLISH = "\n".join(f"Line {i:04d} of a long document, with words enough to fill the part." for i in range(200))
JAPANESE = "\n".join(f"第{i}行：月は海を引き寄せ、潮の満ち引きが一日に二回起こります。" for i in range(200))


@pytest.fixture
def site():
    with LoopbackServer({
        "/en.txt": Reply(200, {"Content-Type": "text/plain; charset=utf-8"}, ENGLISH),
        "/ja.txt": Reply(200, {"Content-Type": "text/plain; charset=utf-8"}, JAPANESE),
    }) as server, HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"])) as client:
        yield server, client


def read_all(tool, ctx, url, **extra):
    parts, offset = [], 0
    while True:
        out = tool.handler({"url": url, "offset": offset, **extra}, ctx)
        parts.append(out["content"])
        if "nextOffset" not in out:
            return parts
        offset = out["nextOffset"]


def test_estimate_counts_four_ascii_characters_or_one_other_character_a_token():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    assert estimate_tokens("潮の満ち引き") == 6
    assert estimate_tokens("tide 潮") == 2 + 1


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300), start=st.integers(0, 50), tokens=st.integers(1, 80),
       limit=st.integers(1, 400))
def test_a_part_is_the_longest_that_fits_the_tokens(text, start, tokens, limit):
    count = characters_within(text, start, tokens, limit)
    window = text[start:start + limit]
    assert 1 <= count
    if not window:
        return
    assert count <= len(window)
    part = window[:count]
    assert estimate_tokens(part) <= tokens or count == 1
    if count < len(window):  # one character more would not fit
        assert estimate_tokens(window[:count + 1]) > tokens


@pytest.mark.parametrize("path, text", [("/en.txt", ENGLISH), ("/ja.txt", JAPANESE)])
def test_every_part_keeps_within_the_operators_cap_and_the_parts_make_the_whole(site, path, text):
    server, client = site
    tool = make_tool(max_content_tokens=300, respect_robots_txt=False)
    ctx, _ = tool_context_for_test(fetch=client)
    parts = read_all(tool, ctx, server.url(path))
    assert "".join(parts) == text and len(parts) > 3
    assert all(estimate_tokens(p) <= 300 for p in parts)
    # Most of each part's budget is used: a part is cut at a line break in its second half.
    assert all(estimate_tokens(p) > 150 for p in parts[:-1])


def test_the_model_may_ask_for_fewer_tokens_but_not_for_more(site):
    server, client = site
    tool = make_tool(max_content_tokens=300, respect_robots_txt=False)
    ctx, _ = tool_context_for_test(fetch=client)
    url = server.url("/en.txt")
    small = tool.handler({"url": url, "max_content_tokens": 100}, ctx)
    capped = tool.handler({"url": url, "max_content_tokens": 100_000}, ctx)
    default = tool.handler({"url": url}, ctx)
    assert 50 < estimate_tokens(small["content"]) <= 100
    assert capped == default and 150 < estimate_tokens(capped["content"]) <= 300
    parts = read_all(tool, ctx, url, max_content_tokens=100)
    assert "".join(parts) == ENGLISH and len(parts) > len(read_all(tool, ctx, url))


def test_characters_per_part_still_bound_a_part_under_a_large_token_cap(site):
    server, client = site
    tool = make_tool(max_content_tokens=100_000, max_characters=1000, respect_robots_txt=False)
    ctx, _ = tool_context_for_test(fetch=client)
    assert len(tool.handler({"url": server.url("/en.txt")}, ctx)["content"]) <= 1000


def test_the_schema_tells_the_model_the_cap():
    schema = make_tool(max_content_tokens=1234).input_schema
    assert "at most 1234" in schema["properties"]["max_content_tokens"]["description"]
