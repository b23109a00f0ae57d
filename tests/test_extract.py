"""HTML to Markdown: main content, cleaning, absolute links, images, titles, decoding."""
from __future__ import annotations

import json

import pytest

from tests.corpora import READABILITY_PAGES, needs
from webtools.plugins.web_fetch.extract import decode, extract, sniff_charset

CORPUS = READABILITY_PAGES

ARTICLE = """<!doctype html><html><head><title>How solar sails work in deep space | Space Weekly</title>
<script>var tracking = "SECRET_SCRIPT";</script><style>p { color: red }</style></head>
<body>
<nav><a href="/">Home</a> <a href="/news">NAV_LINK_NEWS</a></nav>
<header><p>SITE_HEADER banner</p></header>
<article>
<h1>Solar sails explained</h1>
<p>A solar sail is pushed by the pressure of sunlight. Photons carry momentum, and when they bounce off a
large, thin mirror they give a little of it to the spacecraft. The push is tiny but it never runs out.</p>
<p>See <a href="/missions/ikaros">the IKAROS mission</a> and <a href="#fn1">a footnote</a> for more. The
first sail to fly between planets was launched in 2010 and proved the idea works far from Earth.</p>
<p><img src="/img/sail.png" alt="A square sail unfurled in space"> Engineers fold the sail like origami so
that it fits inside a small rocket fairing and unfolds once the craft is in orbit around the Sun.</p>
<form><input name="q"><button>SUBMIT_BUTTON</button></form>
</article>
<footer>FOOTER_TEXT copyright</footer>
<noscript>NOSCRIPT_TEXT</noscript><iframe src="/ad">IFRAME_TEXT</iframe><svg><text>SVG_TEXT</text></svg>
</body></html>"""


def test_article_comes_back_as_markdown_with_its_title():
    title, text = extract(ARTICLE, "https://space.test/articles/sails")
    assert title == "How solar sails work in deep space"  # the site name is dropped
    assert "A solar sail is pushed by the pressure of sunlight." in text
    assert "[the IKAROS mission](https://space.test/missions/ikaros)" in text


@pytest.mark.parametrize("marker", [
    "SECRET_SCRIPT", "color: red", "NAV_LINK_NEWS", "SITE_HEADER", "SUBMIT_BUTTON", "FOOTER_TEXT",
    "NOSCRIPT_TEXT", "IFRAME_TEXT", "SVG_TEXT",
])
def test_chrome_scripts_and_forms_are_removed(marker):
    _, text = extract(ARTICLE, "https://space.test/articles/sails")
    assert marker not in text


def test_links_within_the_page_keep_only_their_text():
    _, text = extract(ARTICLE, "https://space.test/articles/sails")
    assert "a footnote" in text and "#fn1" not in text


def test_images_keep_alt_text_and_urls_only_when_asked():
    _, text = extract(ARTICLE, "https://space.test/articles/sails")
    assert "A square sail unfurled in space" in text and "sail.png" not in text
    _, with_urls = extract(ARTICLE, "https://space.test/articles/sails", include_image_urls=True)
    assert "![A square sail unfurled in space](https://space.test/img/sail.png)" in with_urls


def test_page_without_article_returns_its_text_without_navigation_and_with_absolute_links():
    html = """<html><head><title>Links</title></head><body><nav><a href="/x">NAV</a></nav>
    <ul><li><a href="one.html">First thing</a></li><li><a href="sub/two.html">Second thing</a></li></ul>
    <script>SCRIPT</script></body></html>"""
    title, text = extract(html, "https://links.test/dir/index.html")
    assert title == "Links"
    assert "[First thing](https://links.test/dir/one.html)" in text
    assert "[Second thing](https://links.test/dir/sub/two.html)" in text
    assert "NAV" not in text and "SCRIPT" not in text


def test_base_element_decides_where_relative_links_point():
    html = ('<html><head><base href="https://cdn.test/base/"></head><body><p>Read '
            '<a href="doc.html">the document</a> now, it explains everything you need.</p></body></html>')
    _, text = extract(html, "https://site.test/page")
    assert "(https://cdn.test/base/doc.html)" in text


def test_page_where_readability_finds_too_little_falls_back_to_the_cleaned_page():
    # Short blocks only: readability's scoring keeps (next to) nothing of this page.
    items = "".join(f"<div><span>Entry {i}: short</span></div>" for i in range(40))
    html = f"<html><head><title>Index</title></head><body><div id='list'>{items}</div></body></html>"
    _, text = extract(html, "https://index.test/")
    assert "Entry 0: short" in text and "Entry 39: short" in text


def test_empty_page_returns_empty_text():
    assert extract("", "https://e.test/") == (None, "")
    assert extract("<html><head><title>T</title></head><body></body></html>", "https://e.test/") == ("T", "")


def test_hidden_elements_are_dropped():
    html = ("<html><body><article><p>Visible paragraph with enough words to count as the article text here."
            "</p><p hidden>HIDDEN_ONE</p><p style='display:none'>HIDDEN_TWO</p></article></body></html>")
    _, text = extract(html, "https://h.test/")
    assert "Visible paragraph" in text and "HIDDEN_ONE" not in text and "HIDDEN_TWO" not in text


def test_charset_from_header_wins_then_meta_then_utf8():
    body = "<html><head><meta charset='windows-1251'></head><body>Привет</body></html>".encode("cp1251")
    assert "Привет" in decode(body, None, html=True)
    latin = "<p>café</p>".encode("latin-1")
    assert "café" in decode(latin, "ISO-8859-1", html=True)
    assert decode("naïve".encode(), None) == "naïve"
    assert decode(b"bad \xff byte", "utf-8") == "bad \ufffd byte"
    assert decode(b"x", "no-such-charset") == "x"


def test_meta_http_equiv_charset_is_read():
    head = b'<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
    assert sniff_charset(head) == "shift_jis"


needs_corpus = needs(CORPUS)


@needs_corpus
def test_real_page_from_the_corpus_gives_its_title_and_article():
    folder = CORPUS / "ars-1"
    meta = json.loads((folder / "expected-metadata.json").read_text())
    title, text = extract((folder / "source.html").read_bytes(), "https://arstechnica.com/x/")
    assert title == meta["title"]
    assert "Ammar Askar" in text and "Minecraft" in text
    assert len(text) < 10_000
