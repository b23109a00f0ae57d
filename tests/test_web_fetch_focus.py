"""web_fetch's ``query``: the passages of a long page that answer it (``focus.py``), end to end and by
property. How often the first part holds the answer on real pages is measured in ``bench/focus.py``."""
from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from tests.test_web_fetch import client, html, make_tool, server  # noqa: F401  (fixtures)
from webtools.plugins.web_fetch.focus import focus, passages
from webtools.plugins.web_fetch.tokens import estimate_tokens
from webtools.plugins.web_fetch.schema import MAX_QUERY
from webtools.runtime import Registry, Turn
from webtools.testing import tool_context_for_test

SKIPPED = re.compile(r"\[… ([\d,]+) characters skipped …\]")
FILLER = ("rivers", "granite", "lanterns", "orchards", "violins", "harbours", "glaciers", "meadows", "copper",
          "falcons", "marble", "tunnels", "saffron", "beacons", "canyons", "willows")


def filler(i: int) -> str:
    """A paragraph of its own words: ``i`` picks and orders them, so paragraphs differ."""
    words = [FILLER[(i * 7 + k * 3) % len(FILLER)] for k in range(40)]
    return f"Paragraph {i} is about " + " and ".join(" ".join(words[j:j + 4]) for j in range(0, 40, 4)) + "."


ANSWER = ("Snapshots older than ninety days are pruned every night at 02:00 UTC, unless a retention "
          "hold is set on the bucket.")


def long_page() -> str:
    """A documentation page of about 30,000 characters whose answer lies in its last fifth."""
    sections = []
    for s in range(12):
        body = "".join(f"<p>{filler(s * 10 + p)}</p>" for p in range(6))
        if s == 10:
            body = f"<h3>Retention of snapshots</h3><p>{filler(999)}</p><p>{ANSWER}</p>" + body
        sections.append(f"<h2>Chapter {s}</h2>{body}")
    return f"<html><head><title>Storage guide</title></head><body><article><h1>Storage guide</h1>" \
           f"{''.join(sections)}</article></body></html>"


def pieces(content: str) -> list[str]:
    return [part for part in content.split("\n\n") if part]


# -- the tool --------------------------------------------------------------------------------------


def test_a_query_brings_the_answer_deep_in_a_long_page_with_its_headings_and_ranges(client, server):
    server.route("/guide", html(long_page()))
    tool = make_tool(max_content_tokens=50_000, max_characters=200_000)
    ctx, _ = tool_context_for_test(fetch=client)
    whole = tool.handler({"url": server.url("/guide")}, ctx)["content"]
    assert whole.index(ANSWER) > 0.8 * len(whole)

    ordered = tool.handler({"url": server.url("/guide"), "max_content_tokens": 300}, ctx)
    assert ANSWER not in ordered["content"] and "ranges" not in ordered

    out = tool.handler({"url": server.url("/guide"), "query": "When are old snapshots pruned?",
                        "max_content_tokens": 300}, ctx)
    assert ANSWER in out["content"]
    assert estimate_tokens(out["content"]) <= 300
    assert "nextOffset" not in out and out["totalCharacters"] == len(whole)
    # The headings above it, in page order, then the answer; the text between is marked as skipped.
    content = out["content"]
    assert content.index("## Chapter 10") < content.index("### Retention of snapshots") < content.index(ANSWER)
    assert "## Chapter 9" not in content
    assert SKIPPED.search(content)
    # ``ranges`` are the characters of the page it holds, and ``offset`` reads on from any of them.
    ranges = out["ranges"]
    assert ranges == sorted(ranges) and all(whole[start:end] in content for start, end in ranges)
    holding = next(end for start, end in ranges if start <= whole.index(ANSWER) < end)
    after = tool.handler({"url": server.url("/guide"), "offset": holding, "max_content_tokens": 300}, ctx)
    assert after["offset"] == holding and whole[holding:].lstrip().startswith(after["content"].lstrip()[:200])


def test_a_short_page_comes_back_whole_with_a_query(client, server):
    from tests.test_web_fetch import ARTICLE

    server.route("/tides", html(ARTICLE))
    tool = make_tool()
    ctx, _ = tool_context_for_test(fetch=client)
    plain = tool.handler({"url": server.url("/tides")}, ctx)
    asked = tool.handler({"url": server.url("/tides"), "query": "neap tides"}, ctx)
    assert asked == plain and "ranges" not in asked


def test_a_query_the_page_has_no_word_of_reads_it_in_order(client, server):
    server.route("/guide", html(long_page()))
    tool = make_tool()
    ctx, _ = tool_context_for_test(fetch=client)
    plain = tool.handler({"url": server.url("/guide"), "max_content_tokens": 300}, ctx)
    asked = tool.handler({"url": server.url("/guide"), "query": "zeppelin quartz", "max_content_tokens": 300}, ctx)
    assert asked == plain and asked["nextOffset"] > 0


def test_with_an_offset_the_query_is_left_aside_and_the_page_read_in_order(client, server):
    server.route("/guide", html(long_page()))
    tool = make_tool()
    ctx, _ = tool_context_for_test(fetch=client)
    plain = tool.handler({"url": server.url("/guide"), "offset": 500, "max_content_tokens": 300}, ctx)
    asked = tool.handler({"url": server.url("/guide"), "offset": 500, "query": "snapshots pruned",
                          "max_content_tokens": 300}, ctx)
    assert asked == plain and asked["offset"] == 500 and "ranges" not in asked


def test_the_schema_offers_query_and_a_longer_one_is_refused_before_fetching():
    tool = make_tool()
    schema = tool.input_schema["properties"]["query"]
    assert schema["type"] == "string" and schema["maxLength"] == MAX_QUERY == 400
    assert "query" in tool.description
    registry = Registry()
    registry.register(tool, "web_fetch")
    turn = Turn(registry=registry, requested_tools=["web_fetch"])
    # The same schema in every format the tools are offered in.
    from webtools.mcp.server import tool_list

    assert turn.openai_tools()[0]["function"]["parameters"]["properties"]["query"] == schema
    assert turn.anthropic_tools()[0]["input_schema"]["properties"]["query"] == schema
    assert tool_list(turn)[0].input_schema["properties"]["query"] == schema
    result = turn.call("web_fetch", {"url": "https://example.com/", "query": "x" * 401})
    assert result.is_error and "query" in result.output["error"]


# -- focus.py --------------------------------------------------------------------------------------


DOC = """# Guide

Intro words about the guide.

## Install

Run the installer.

```
step one

step two
```

### Windows

Use the MSI package for Windows machines.

## Configure

Set the retention window in the config file.
"""


def test_passages_keep_fenced_code_whole_and_know_their_headings():
    found = passages(DOC)
    texts = [DOC[p.start:p.end] for p in found]
    assert texts == ["Intro words about the guide.", "Run the installer.", "```\nstep one\n\nstep two\n```",
                     "Use the MSI package for Windows machines.", "Set the retention window in the config file."]
    headings = [[DOC[s:e] for s, e in p.headings] for p in found]
    assert headings == [["# Guide"], ["# Guide", "## Install"], ["# Guide", "## Install"],
                        ["# Guide", "## Install", "### Windows"], ["# Guide", "## Configure"]]


def test_a_code_block_fenced_longer_holds_a_shorter_fence_and_stays_whole():
    # The writer fences code that holds a line of three backticks with four (CommonMark): that line does not end it.
    doc = "Intro words about the fences.\n\n````md\n```py\nx = 1\n\n```\n````\n\nThe end."
    assert [doc[p.start:p.end] for p in passages(doc)] == [
        "Intro words about the fences.", "````md\n```py\nx = 1\n\n```\n````", "The end."]


def test_focus_picks_the_passage_by_its_headings_words_too():
    focused = focus(DOC, "windows", tokens=50, max_characters=10_000)
    assert focused.content == (
        "# Guide\n\n[… 32 characters skipped …]\n\n## Install\n\n[… 50 characters skipped …]\n\n"
        "### Windows\n\nUse the MSI package for Windows machines.\n\n[… 61 characters skipped …]"
    )


def test_focus_stems_by_the_page_language():
    text = "## Einleitung\n\nDas Haus steht am See.\n\n## Anderes\n\n" + "\n\n".join(
        f"Absatz {i} spricht von Bergen und Wäldern." for i in range(40))
    focused = focus(text, "Häuser", tokens=40, max_characters=10_000, language="de")
    assert "Das Haus steht am See." in focused.content
    assert focus(text, "zeppelin", tokens=40, max_characters=10_000, language="de") is None


markdown_lines = st.lists(st.one_of(
    st.just(""), st.just("```"), st.just("~~~"),
    st.builds(lambda n, t: "#" * n + " " + t, st.integers(1, 7), st.text(min_size=0, max_size=20)),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300),
    st.sampled_from(["alpha beta gamma.", "beta delta. Epsilon!", "| a | b |", "- item alpha", "  ```python"]),
), max_size=60)


@given(markdown_lines, st.integers(100, 1_500))
@example(["alpha " * 400], 200)
def test_passages_are_ordered_disjoint_bounded_and_never_blank(lines, limit):
    text = "\n".join(lines)
    found = passages(text, limit)
    previous_end = 0
    for passage in found:
        assert previous_end <= passage.start < passage.end <= len(text)
        assert passage.end - passage.start <= limit
        assert text[passage.start:passage.end].strip()
        assert all(end <= passage.start for _, end in passage.headings)
        previous_end = passage.end


@given(markdown_lines, st.text(max_size=60), st.integers(1, 600), st.integers(50, 5_000))
@example(["alpha beta gamma."] * 200, "gamma", 50, 5_000)
def test_focus_stays_within_its_budget_and_says_truly_what_it_holds(lines, query, tokens, max_characters):
    text = "\n".join(lines).strip()
    focused = focus(text, query, tokens=tokens, max_characters=max_characters)
    if focused is None:
        return
    assert estimate_tokens(focused.content) <= tokens and len(focused.content) <= max_characters
    # The content is exactly the ranges' text, in order, with the skipped characters counted between.
    rebuilt, position = [], 0
    for start, end in focused.ranges:
        assert position <= start < end <= len(text)
        if start > position:
            rebuilt.append(f"[… {start - position:,} characters skipped …]")
        rebuilt.append(text[start:end])
        position = end
    if position < len(text):
        rebuilt.append(f"[… {len(text) - position:,} characters skipped …]")
    assert focused.content == "\n\n".join(rebuilt)
