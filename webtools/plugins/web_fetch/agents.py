"""What sites publish for agents: Markdown answers, and Markdown alternates linked from HTML pages.

A site that answers ``Accept: text/markdown`` with Markdown (Cloudflare's "Markdown for Agents", static
site generators serving their sources) has already written the text the model needs: it is used as it
is, without HTML extraction, less its front matter (YAML between ``---`` lines, TOML between ``+++``
lines), with the title of its first heading as CommonMark reads it (markdown-it-py). An HTML page that
links ``<link rel="alternate" type="text/markdown" href="...">`` on its own site is read from there.
"""
from __future__ import annotations

import re

from lxml import etree, html as lxml_html
from markdown_it import MarkdownIt

from webtools.net import URL, InvalidURL, read_url

MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
#: What a Markdown alternate is asked for with.
MARKDOWN_ACCEPT = "text/markdown,text/x-markdown;q=0.9,text/plain;q=0.5"
#: The title is the first heading in this much of the text: a title is at the top, and reading a
#: long document's blocks costs about a millisecond a kilobyte.
TITLE_CHARACTERS = 16 * 1024
#: The ``<head>`` that holds the link is looked for in this much of the page.
HEAD_BYTES = 256 * 1024
MAX_TITLE = 300

_FRONT_MATTER = re.compile(r"\A\ufeff?(---|\+\+\+)[ \t]*\r?\n")
_HEAD_END = re.compile(rb"</head\s*>|<body[\s>]", re.I)
_markdown = MarkdownIt("commonmark")


def drop_front_matter(text: str) -> str:
    """``text`` without a leading front matter block: a first line ``---`` (YAML) or ``+++`` (TOML), up
    to the next line holding the same fence (or ``...`` for YAML). Without a closing line, nothing is
    dropped: the text only starts with a thematic break."""
    opening = _FRONT_MATTER.match(text)
    if opening is None:
        return text
    fence = opening.group(1)
    closings = (fence, "...") if fence == "---" else (fence,)
    position = opening.end()
    while position < len(text):
        end = text.find("\n", position)
        line_end = len(text) if end == -1 else end + 1
        if text[position:line_end].rstrip("\r\n").rstrip(" \t") in closings:
            return text[line_end:]
        position = line_end
    return text


def first_heading(text: str) -> str | None:
    """The text of the first heading (ATX ``#`` or setext) with any text, as CommonMark reads it."""
    tokens = _markdown.parse(text[:TITLE_CHARACTERS])
    for index, token in enumerate(tokens[:-1]):
        if token.type == "heading_open":
            title = " ".join(tokens[index + 1].content.split())
            if title:
                return title[:MAX_TITLE]
    return None


def read_markdown(text: str) -> tuple[str | None, str]:
    """A Markdown answer's title and its text as the model gets it."""
    text = drop_front_matter(text)
    return first_heading(text), text


def markdown_alternate(data: bytes, page: URL) -> URL | None:
    """The Markdown alternate an HTML page links in its ``<head>``, when it is on the page's site (the
    same scheme and host, or hosts under the same registrable domain); None otherwise."""
    end = _HEAD_END.search(data, 0, HEAD_BYTES)
    head = data[: end.start() if end else HEAD_BYTES]
    if b"text/markdown" not in head.lower():
        return None
    try:
        root = lxml_html.fromstring(head)
    except (etree.ParserError, ValueError):
        return None
    for link in root.iter("link"):
        rels = (link.get("rel") or "").lower().split()
        kind = (link.get("type") or "").split(";", 1)[0].strip().lower()
        href = (link.get("href") or "").strip()
        if "alternate" not in rels or kind not in MARKDOWN_TYPES or not href:
            continue
        try:
            target = read_url(href, base=page)
        except InvalidURL:
            continue
        if same_site(target, page) and str(target) != str(page):
            return target
    return None


def same_site(a: URL, b: URL) -> bool:
    """Whether two URLs are on one site: one scheme, and one host or one registrable domain."""
    from webtools.runtime.domains import registrable_domain

    if a.scheme != b.scheme:
        return False
    if a.host == b.host:
        return True
    if a.is_ip or b.is_ip:
        return False
    site = registrable_domain(a.host)
    return site is not None and site == registrable_domain(b.host)
