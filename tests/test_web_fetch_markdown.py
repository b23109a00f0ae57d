"""Markdown for agents: Markdown answers used as they are, and Markdown alternates of HTML pages."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from tests import test_web_fetch
from tests.servers import Reply
from tests.test_web_fetch import ARTICLE, call, html
from webtools.net import AddressPolicy, HttpClient, read_url
from webtools.plugins.web_fetch import agents
from webtools.plugins.web_fetch.tool import ACCEPT

client = test_web_fetch.client
server = test_web_fetch.server

DOC = """---
title: Front matter title
tags: [tides]
---
Intro line before the heading.

Tides of the North Sea
======================

The Moon pulls on the oceans facing it.

```python
# not a heading
```
"""


def markdown(body: str, **headers) -> Reply:
    return Reply(200, {"Content-Type": "text/markdown; charset=utf-8", **headers}, body)


# -- reading a Markdown answer ---------------------------------------------------------------------


def test_the_request_prefers_markdown(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/", html(ARTICLE))
    call(client, server.url("/"))
    accept = server.requests[-1].headers["Accept"]
    assert accept == ACCEPT and accept.startswith("text/markdown,text/html;q=0.9")


def test_a_markdown_answer_is_the_content_as_it_is_less_its_front_matter(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/tides", markdown(DOC, **{"x-markdown-tokens": "42"}))
    out = call(client, server.url("/tides"))
    assert out["title"] == "Tides of the North Sea"
    assert out["content"] == DOC.split("---\n", 2)[2].strip()
    assert "```python\n# not a heading\n```" in out["content"]  # no HTML extraction, no escaping


def test_a_markdown_answer_without_a_heading_has_no_title(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/notes", markdown("Just *a* line.\n\n    # indented code, not a heading\n"))
    out = call(client, server.url("/notes"))
    assert "title" not in out and out["content"].startswith("Just *a* line.")


@pytest.mark.parametrize(("text", "title"), [
    ("# Tides\n", "Tides"),
    ("## Tides ##\n\n# Later\n", "Tides"),
    ("#\n\n# Tides of  the   sea\n", "Tides of the sea"),
    ("```\n# code\n```\n# Tides\n", "Tides"),
    ("Tides\nof the sea\n---\n", "Tides of the sea"),
    ("---\n\nText\n", None),  # a thematic break, no heading
    ("#Tides\n", None),  # CommonMark needs the space
])
def test_the_title_is_the_first_heading_as_commonmark_reads_it(text, title):
    assert agents.first_heading(text) == title


# -- front matter ----------------------------------------------------------------------------------

_lines = st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30),
                  max_size=6)


@given(_lines, st.text(max_size=200), st.sampled_from([("---", "---"), ("---", "..."), ("+++", "+++")]))
def test_front_matter_is_dropped_up_to_its_closing_line(lines, body, fences):
    opening, closing = fences
    lines = [line for line in lines if line.rstrip(" \t") not in ("---", "...", "+++")]
    text = "\n".join([opening, *lines, closing]) + "\n" + body
    assert agents.drop_front_matter(text) == body


@given(st.text(max_size=300))
def test_text_that_does_not_open_with_a_fence_line_is_kept_whole(text):
    if text.startswith(("---", "+++", "\ufeff---", "\ufeff+++")):
        text = "x" + text
    assert agents.drop_front_matter(text) == text


@given(_lines)
def test_an_opening_fence_never_closed_drops_nothing(lines):
    lines = [line for line in lines if line.rstrip(" \t") not in ("---", "...")]
    text = "\n".join(["---", *lines])
    assert agents.drop_front_matter(text) == text


# -- Markdown alternates ---------------------------------------------------------------------------


def alternate_page(href: str, kind: str = "text/markdown") -> str:
    return ARTICLE.replace("</head>", f'<link rel="alternate" type="{kind}" href="{href}"></head>')


def test_an_html_page_linking_a_markdown_alternate_is_read_from_it(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/tides", html(alternate_page("/tides.md")))
    server.route("/tides.md", markdown("# Tides, in Markdown\n\nTwo bulges of water.\n"))
    out = call(client, server.url("/tides"))
    assert out["url"] == server.url("/tides") and out["title"] == "Tides, in Markdown"
    assert out["content"] == "# Tides, in Markdown\n\nTwo bulges of water."
    assert server.requests[-1].headers["Accept"].startswith("text/markdown")


def test_an_alternate_that_fails_leaves_the_html_reading(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/tides", html(alternate_page("/gone.md")))
    out = call(client, server.url("/tides"))
    assert out["title"] == "Tides and the Moon, explained simply" and "Two bulges of water result" in out["content"]
    assert server.hits("/gone.md") == 1


def test_an_alternate_closed_by_robots_txt_is_not_requested(client, server):
    server.route("/robots.txt", Reply(200, {}, "User-agent: *\nDisallow: /md/\n"))
    server.route("/tides", html(alternate_page("/md/tides.md")))
    server.route("/md/tides.md", markdown("# Not to be read\n"))
    out = call(client, server.url("/tides"))
    assert "Two bulges of water result" in out["content"]
    assert server.hits("/md/tides.md") == 0


def test_an_alternate_on_another_site_is_not_followed(client, server):
    # The test resolver gives every name this server's address: only the site check keeps it out.
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/tides", html(alternate_page(f"http://elsewhere.test:{server.port}/tides.md")))
    server.route("/tides.md", markdown("# Elsewhere\n"))
    out = call(client, server.url("/tides"))
    assert "Two bulges of water result" in out["content"] and server.hits("/tides.md") == 0


def test_an_alternate_on_a_private_address_is_refused_by_the_guard(server):
    # Only 127.0.0.1 stands in for the public web; the site's other name resolves to a refused address.
    def resolver(host, port):
        return ["127.0.0.1"] if host == "public.test" else ["10.0.0.7"]

    policy = AddressPolicy.with_overrides(allow=["127.0.0.1/32"])
    with HttpClient(policy=policy, resolver=resolver) as guarded:
        server.route("/robots.txt", Reply(404, {}, ""))
        server.route("/tides", html(alternate_page(f"http://docs.public.test:{server.port}/tides.md")))
        out = call(guarded, f"http://public.test:{server.port}/tides")
    assert "Two bulges of water result" in out["content"]
    assert [r.path for r in server.requests] == ["/robots.txt", "/tides"]


@pytest.mark.parametrize(("page", "base", "found"), [
    ('<link rel="alternate" type="text/markdown" href="/a.md">', "https://example.com/a", "https://example.com/a.md"),
    ("<LINK REL='Alternate Feed' TYPE='text/markdown; charset=utf-8' HREF='a.md'>", "https://example.com/d/",
     "https://example.com/d/a.md"),
    ('<link rel="alternate" type="text/markdown" href="https://docs.example.com/a.md">', "https://www.example.com/",
     "https://docs.example.com/a.md"),
    ('<link rel="alternate" type="text/markdown" href="https://example.org/a.md">', "https://example.com/", None),
    ('<link rel="alternate" type="text/markdown" href="http://example.com/a.md">', "https://example.com/", None),
    ('<link rel="alternate" type="text/html" href="/a.md">', "https://example.com/", None),
    ('<link rel="stylesheet" type="text/markdown" href="/a.md">', "https://example.com/", None),
    ('</head><body><link rel="alternate" type="text/markdown" href="/a.md">', "https://example.com/", None),
])
def test_the_alternate_is_a_markdown_link_in_the_head_on_the_same_site(page, base, found):
    data = f"<html><head><title>t</title>{page}</head><body>x</body></html>".encode()
    alternate = agents.markdown_alternate(data, read_url(base))
    assert (str(alternate) if alternate else None) == found
