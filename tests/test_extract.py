"""HTML to Markdown: main content, cleaning, absolute links, images, titles, decoding."""
from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.corpora import EXTRACTION_DEV, READABILITY_PAGES, needs
from webtools.plugins.web_fetch.extract import decode, extract, sniff_charset
from webtools.plugins.web_fetch.extract.candidates import readability_clean, readability_original_clean
from webtools.plugins.web_fetch.extract.choice import _shingles, _text_words_and_shingles, blocks, words

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


def test_images_are_left_out_unless_asked_for_then_with_alt_text_and_url():
    _, text = extract(ARTICLE, "https://space.test/articles/sails")
    assert "A square sail unfurled in space" not in text and "sail.png" not in text
    assert "Engineers fold the sail like origami" in text
    _, with_urls = extract(ARTICLE, "https://space.test/articles/sails", include_image_urls=True)
    assert "![A square sail unfurled in space](https://space.test/img/sail.png)" in with_urls


def test_elements_hidden_by_class_are_dropped_unless_they_hold_the_page():
    html = _article("<div class='story hidden'><p>HIDDEN_COPY of the story for another layout, long enough to be "
                    "prose in any candidate's eyes.</p></div><p>Read more <span class='sr-only'>SR_ONLY</span></p>")
    _, text = extract(html, "https://tides.test/a")
    assert "Tidal forces stretch" in text and "HIDDEN_COPY" not in text and "SR_ONLY" not in text
    # A page that hides everything until a script shows it, or while a banner is open, keeps its text.
    for hiding in ("class='hidden'", "aria-hidden='true'"):
        html = (f"<html><body><div {hiding}><article><p>{PROSE}</p></article></div>"
                "<div class='banner'>We use cookies</div></body></html>")
        assert "Tidal forces stretch" in extract(html, "https://tides.test/b")[1]


def test_a_links_text_marked_aria_hidden_is_shown_and_kept():
    # A card's teaser in a second link to its story, kept out of screen readers' way (``aria-hidden``, out of
    # the tab order): what the page shows. Other elements marked ``aria-hidden`` are still left out.
    stories = "".join(
        f'<article class="river"><h2><a href="/news/{n}">Story {n} about the harbour</a></h2>'
        f'<p class="desc"><a href="/news/{n}" aria-hidden="true" tabindex="-1">TEASER_{n} the ferry runs again '
        f'after the storm, the council says.</a></p><div aria-hidden="true">ICON_{n}</div></article>'
        for n in range(1, 7))
    page = (f"<html><head><title>Harbour news</title></head><body><main><h1>Harbour</h1>{stories}</main>"
            "</body></html>")
    text = extract(page, "https://port.test/harbour").text
    assert all(f"TEASER_{n}" in text for n in range(1, 7))
    assert "ICON_" not in text


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


def test_chrome_holding_the_pages_main_is_unwrapped_not_removed():
    from webtools.plugins.web_fetch.extract.page import clean, parse

    # A menu left open in the markup: the parser puts the page's <main> in its <li>, inside <nav> and <header>.
    menu = "".join(f'<a href="/{name}">MENU_{name}</a>' for name in ("homes", "offices", "shops", "windows"))
    paragraphs = "".join(
        f"<p>MAIN_TEXT {n}: our crews clean the windows, gutters and frames of homes and offices every month, "
        f"with pure water and soft brushes that leave no streak on the glass and no mark on the paint.</p>"
        for n in range(1, 6))
    html = (f"<html><head><title>Window cleaning | Clean Co</title></head><body><header><div>SITE_LOGO</div><nav>"
            f"<ul><li>{menu}<li><a href='/services'>Services</a><main><h1>Window cleaning</h1>{paragraphs}</main>"
            "</li></ul></nav></header></body></html>")
    doc = parse(html)
    clean(doc)
    kept = doc.find("body").text_content()
    assert "MAIN_TEXT 1" in kept and "MAIN_TEXT 5" in kept
    text = extract(html, "https://clean.test/windows").text
    assert "MAIN_TEXT 1" in text and "MAIN_TEXT 5" in text
    assert "MENU_" not in text


def test_empty_page_returns_empty_text():
    assert extract("", "https://e.test/") == (None, "")
    assert extract("<html><head><title>T</title></head><body></body></html>", "https://e.test/") == ("T", "")


def test_hidden_elements_are_dropped():
    html = ("<html><body><article><p>Visible paragraph with enough words to count as the article text here."
            "</p><p hidden>HIDDEN_ONE</p><p style='display:none'>HIDDEN_TWO</p></article></body></html>")
    _, text = extract(html, "https://h.test/")
    assert "Visible paragraph" in text and "HIDDEN_ONE" not in text and "HIDDEN_TWO" not in text


def test_a_page_streamed_into_a_hidden_element_keeps_its_text():
    # A script moves the streamed content into place; without scripts it stays hidden, and is the page.
    rows = "".join(f"<li><a href='/sofa/{n}'>Corner sofa {n}</a> in grey velvet, STREAMED_{n}, 899.00 EUR</li>"
                   for n in range(12))
    html = (f"<html><body><div id='shell'><p>Loading the catalogue.</p></div>"
            f"<div hidden id='S:1'><h2>Sofas</h2><ul>{rows}</ul></div>"
            f"<p style='display:none'>HIDDEN_NOTE</p></body></html>")
    _, text = extract(html, "https://shop.test/sofas")
    assert "STREAMED_0" in text and "STREAMED_11" in text
    assert "HIDDEN_NOTE" not in text


def _streamed_service_page(sections: int) -> str:
    """A page as React's streaming server rendering sends it: the shell with a placeholder (a Suspense
    boundary's ``<template id="B:0">``) and a loading skeleton, then, at the end of the body, each part in a
    hidden ``<div id="S:n">`` that the page's script (``$RC``) moves into place. The first part holds the
    placeholder of the second (``P:1``)."""
    parts = "".join(f"<section><h2>Service {n}</h2><p>We plan, build and run STREAMED_{n} for teams of every "
                    f"size, with support around the clock and prices agreed up front.</p></section>"
                    for n in range(sections))
    return ("<html><body><header><a href='/'>Home</a></header><main><h1>Cloud hosting that scales</h1>"
            "<template id='B:0'></template><div class='skeleton'></div>"
            "<p>Trusted by four million builders.</p></main><footer>FOOTER_NOTE</footer>"
            f"<div hidden id='S:0'><div class='grid'>{parts}</div><template id='P:1'></template></div>"
            "<div hidden id='S:1'><p>LATE_PART: every plan includes backups, previews and rollbacks, kept for "
            "thirty days.</p></div>"
            "<script>$RC('B:0','S:0');$RS('S:1','P:1')</script></body></html>")


def test_a_page_streamed_by_react_reads_its_parts_where_its_script_puts_them():
    # Each hidden part is below the share of the page that keeps a hidden element; without being moved into
    # place they were dropped, and the page read as its banner.
    text = extract(_streamed_service_page(4), "https://cloud.test/").text
    assert all(f"STREAMED_{n}" in text for n in range(4)) and "LATE_PART" in text
    # In the browser's order: the parts where their placeholders are, before what follows them.
    assert text.index("Cloud hosting") < text.index("STREAMED_0") < text.index("STREAMED_3") \
        < text.index("LATE_PART") < text.index("Trusted by")


def test_streamed_parts_are_moved_into_their_placeholders_in_the_tree():
    from webtools.plugins.web_fetch.extract.page import parse

    doc = parse(_streamed_service_page(2))
    assert not doc.xpath("//template") and not doc.xpath("//*[@hidden]")
    main = doc.find(".//main")
    assert [el.tag for el in main] == ["h1", "div", "p", "div", "p"]  # grid, late part, skeleton, trusted
    assert "STREAMED_1" in main[1].text_content() and "LATE_PART" in main[2].text_content()
    assert doc.find(".//footer").tail is None and doc.find(".//script") is not None


def test_a_placeholder_without_its_part_and_a_part_without_its_placeholder_stay():
    from webtools.plugins.web_fetch.extract.page import parse

    html = ("<html><body><p>Before<template id='B:7'></template>after</p>"
            "<div hidden id='S:2'><p>ORPHAN_PART</p></div></body></html>")
    doc = parse(html)
    assert doc.find(".//template").get("id") == "B:7" and doc.find(".//template").tail == "after"
    assert doc.xpath("//div[@hidden]")[0].get("id") == "S:2"
    # Two parts of one id: the first is the one a script finds.
    doc = parse("<html><body><template id='B:1'></template><div hidden id='S:1'><p>FIRST</p></div>"
                "<div hidden id='S:1'><p>SECOND</p></div></body></html>")
    assert [el.get("id") for el in doc.iter("div")] == ["S:1"] and doc.find(".//p").text == "FIRST"
    # Markup no script writes, a part within its own placeholder or the reverse, is left as it is.
    for inner in ("<div hidden id='S:1'><div><template id='P:1'></template></div><p>KEPT_1</p></div>",
                  "<div hidden id='S:1'><template id='B:1'></template>KEPT_1</div>",
                  "<template id='B:1'><div hidden id='S:1'><p>KEPT_1</p></div></template>"):
        assert "KEPT_1" in parse(f"<html><body>{inner}</body></html>").text_content()


_STREAM_PIECES = st.sampled_from([
    "<div>", "</div>", "<p>", "</p>", "<span>", "</span>", "<template id='B:1'></template>",
    "<template id='P:2'></template>", "<template id='B:a'>", "</template>", "<div hidden id='S:1'>",
    "<div hidden id='S:2'>", "<div hidden id='S:a'>", "<div id='S:2'>", "alpha", "beta", "gamma ",
])


@given(st.lists(_STREAM_PIECES, max_size=30))
@settings(max_examples=300, deadline=None)
def test_placing_streamed_parts_never_raises_and_keeps_all_text_outside_templates(pieces):
    import lxml.html

    from webtools.plugins.web_fetch.extract.page import place_streamed_segments

    def outside_templates(doc):
        # Characters, not words: a part moved beside a text runs into it, as it does in the browser.
        return sorted("".join("".join(doc.xpath("//body//text()[not(ancestor::template)]")).split()))

    doc = lxml.html.document_fromstring("<html><body>" + "".join(pieces) + "</body></html>")
    before = outside_templates(doc)
    place_streamed_segments(doc)
    assert outside_templates(doc) == before


def test_charset_from_header_wins_then_meta_then_utf8():
    body = "<html><head><meta charset='windows-1251'></head><body>Привет</body></html>".encode("cp1251")
    assert "Привет" in decode(body, None, html=True)
    latin = "<p>café</p>".encode("latin-1")
    assert "café" in decode(latin, "ISO-8859-1", html=True)
    assert decode("naïve".encode(), None) == "naïve"
    assert decode(b"bad \xff byte", "utf-8") == "bad \ufffd byte"
    assert decode(b"x", "no-such-charset") == "x"


def test_valid_utf8_is_read_as_utf8_whatever_the_page_declares():
    # A page re-encoded to UTF-8 that kept its old declaration; real GBK bytes still read as GBK.
    page = "<html><head><meta charset='gb2312'></head><body><p>谷歌收购了公司</p></body></html>"
    assert "谷歌收购了公司" in decode(page.encode("utf-8"), None, html=True)
    assert "谷歌收购了公司" in decode(page.encode("gb18030"), None, html=True)
    assert "谷歌收购了公司" in decode(page.encode("utf-8"), "gbk", html=True)


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


# -- structure ---------------------------------------------------------------------------------------

PROSE = ("Tidal forces stretch the oceans along the line between the Earth and the Moon, so most coasts "
         "see two high tides a day. The Sun adds its own smaller bulge, which is why spring tides happen.")


def _article(inner: str) -> str:
    return (f"<html><head><title>Tides</title></head><body><nav><a href='/'>NAV_HOME</a></nav><main><article>"
            f"<h1>Tides</h1><p>{PROSE}</p>{inner}<p>{PROSE.replace('Tidal', 'Lunar')}</p></article></main>"
            "<footer>FOOTER_TEXT</footer></body></html>")


def test_headings_lists_and_block_quotes_survive_as_markdown():
    html = _article("<h2>Why two bulges</h2><p>The far side is pulled less than the centre of the Earth.</p>"
                    "<ol><li>First bulge faces the Moon</li><li>Second bulge faces away</li></ol>"
                    "<ul><li>Spring tides</li><li>Neap tides</li></ul>"
                    "<blockquote><p>The tide waits for no one, as the saying goes among sailors.</p></blockquote>")
    _, text = extract(html, "https://tides.test/a")
    assert "## Why two bulges" in text
    assert "1. First bulge faces the Moon\n2. Second bulge faces away" in text
    assert "- Spring tides\n- Neap tides" in text
    assert "> The tide waits for no one" in text
    assert "NAV_HOME" not in text and "FOOTER_TEXT" not in text


def test_a_simple_table_becomes_a_pipe_table():
    html = _article("<table><tr><th>Port</th><th>High tide</th></tr><tr><td>Brest</td><td>06:12</td></tr>"
                    "<tr><td>Dover</td><td>07:40</td></tr></table>")
    _, text = extract(html, "https://tides.test/a")
    assert "| Port | High tide |\n| --- | --- |\n| Brest | 06:12 |\n| Dover | 07:40 |" in text


def test_a_table_with_merged_or_block_cells_becomes_text_rows():
    html = _article("<table><tr><td colspan='2'>Tide table for the week</td></tr>"
                    "<tr><td>Brest</td><td>06:12</td></tr><tr><td>Dover</td><td>07:40</td></tr></table>")
    _, text = extract(html, "https://tides.test/a")
    assert "Brest · 06:12" in text and "Dover · 07:40" in text
    assert "| --- |" not in text


def test_a_table_with_a_header_row_and_merged_cells_becomes_a_pipe_table_with_each_row_whole():
    html = _article("<table><tr><th>Port</th><th>High tide</th><th>Coef.</th></tr>"
                    "<tr><td>Brest</td><td>06:12<br>18:31</td><td rowspan='2'>95</td></tr>"
                    "<tr><td>Dover</td><td>07:40</td></tr><tr><td colspan='2'>Calais</td><td>88</td></tr></table>")
    _, text = extract(html, "https://tides.test/a")
    assert ("| Port | High tide | Coef. |\n| --- | --- | --- |\n| Brest | 06:12 18:31 | 95 |\n| Dover | 07:40 | 95 |\n"
            "| Calais | Calais | 88 |") in text


def _winners_table(years: int) -> str:
    """A table of prize winners by year, every name a link (a link-dense block to both extractors)."""
    rows = "".join(f"<tr><th>{1900 + n}</th><td><a href='/w/physics{n}'>Physicist Number{n}</a></td>"
                   f"<td><a href='/w/chemistry{n}'>Chemist Number{n}</a></td></tr>" for n in range(years))
    return f"<table class='data'><tr><th>Year</th><th>Physics</th><th>Chemistry</th></tr>{rows}</table>"


def test_a_table_of_links_the_extractors_dropped_is_put_back_after_the_text_before_it():
    html = _article("<h2>List of winners</h2><div class='index'><a href='#1900'>1900</a> <a href='#1910'>1910</a></div>"
                    f"{_winners_table(20)}<h2>Selection</h2><p>{PROSE.replace('Tidal', 'Jury')}</p>")
    _, text = extract(html, "https://tides.test/a")
    assert "## List of winners\n\n| Year | Physics | Chemistry |\n| --- | --- | --- |\n" in text
    assert "| 1919 | [Physicist Number19](https://tides.test/w/physics19) |" in text
    assert text.index("| 1919 |") < text.index("## Selection")


def test_a_table_of_links_whose_preceding_text_was_left_out_stays_out():
    html = (f"<html><head><title>Tides</title></head><body><main><article><h1>Tides</h1><p>{PROSE}</p>"
            f"<p>{PROSE.replace('Tidal', 'Lunar')}</p></article></main><aside><p>Other winners</p>"
            f"{_winners_table(20)}</aside></body></html>")
    _, text = extract(html, "https://tides.test/a")
    assert "Physicist Number19" not in text


def test_code_blocks_are_fenced_with_the_language_the_page_gives():
    html = _article('<pre><code class="language-python">def tide(hours):\n    return hours % 12.42\n</code></pre>'
                    '<pre data-lang="bash">echo high\n</pre><pre>plain block\n</pre>')
    _, text = extract(html, "https://tides.test/a")
    assert "```python\ndef tide(hours):\n    return hours % 12.42\n```" in text
    assert "```bash\necho high\n```" in text
    assert "```\nplain block\n```" in text


def _trafilatura_markdown(html: str) -> str:
    """trafilatura's candidate text of ``html``, as Markdown."""
    from webtools.plugins.web_fetch.extract.markdown import element_markdown
    from webtools.plugins.web_fetch.extract.page import parse
    from webtools.plugins.web_fetch.extract.trafilatura_reading import trafilatura_article

    return element_markdown(trafilatura_article(parse(html), "https://tides.test/a"))


def test_trafilaturas_code_blocks_keep_their_language_and_inline_code_stays_inline():
    html = _article('<pre><code class="language-rust">fn main() {\n    tide();\n}</code></pre>'
                    "<p>Run <code>cargo run</code> at high water.</p>")
    text = _trafilatura_markdown(html)
    assert "```rust\nfn main() {\n    tide();\n}\n```" in text
    assert "Run `cargo run` at high water." in text


def test_trafilaturas_code_block_in_a_definition_comes_back_with_its_lines():
    """trafilatura reads a code block inside a list item or a definition (Sphinx's documentation) as a quote,
    its lines joined into one."""
    # Pygments' markup: trafilatura reads a <pre> of many spans as a quote (one span, it reads as code)
    html = _article(
        "<dl class='py function'><dt id='tides.tide'>tides.tide(hours)</dt><dd>"
        "<p>The height of the tide after so many hours, from the harbour's own table of constants.</p>"
        "<p>For example:</p><div class='highlight-python3'><div class='highlight'><pre>"
        "<span class='nd'>@memo</span>\n<span class='k'>def</span> tide(hours):\n"
        "    <span class='k'>return</span> hours % 12.42\n\n<span class='gp'>&gt;&gt;&gt; </span>tide(30)\n"
        "<span class='go'>5.16</span>\n</pre></div></div>"
        "<p>The answer is in metres above chart datum.</p></dd></dl>")
    text = _trafilatura_markdown(html)
    assert "  ```\n  @memo\n  def tide(hours):\n      return hours % 12.42\n\n  >>> tide(30)\n  5.16\n  ```" in text
    assert "> @memo" not in text


def test_trafilaturas_quoted_synopsis_with_marked_words_comes_back_with_its_lines():
    """A ``<pre>`` whose placeholders are marked (``<em><code>``, as PostgreSQL's and man pages' synopses are)
    is a quote to trafilatura, its lines joined and its marks kept: it comes back as the page's block."""
    html = _article(
        "<h2>Synopsis</h2><pre class='synopsis'>\nTIDE [ AT <em class='replaceable'><code>harbour</code></em> ]\n"
        "    [ AFTER <em class='replaceable'><code>hours</code></em> [ HOURS ] ]\n</pre>"
        "<p>TIDE gives the height of the water at a harbour after so many hours.</p>")
    text = _trafilatura_markdown(html)
    assert "```\nTIDE [ AT harbour ]\n    [ AFTER hours [ HOURS ] ]\n```" in text
    assert "> TIDE" not in text


@pytest.mark.parametrize("line", ["<span class='line'>{}</span>", "<div class='token-line'>{}</div>", "<div>{}</div>"])
def test_code_whose_lines_are_elements_without_line_breaks_keeps_its_lines(line):
    """A highlighter's lines written one after the other, with no line break between them (a style sheet shows
    each as a block): Shiki's ``span.line``, Prism's ``token-line``, plain ``<div>`` rows."""
    rows = ["npm create tides@latest harbour", "cd harbour", "", "npm run tide -- --hours 12"]
    block = "".join(line.format(f"<span style='color:red'>{row}</span>" if row else "") for row in rows)
    _, text = extract(_article(f"<p>Start a new harbour project:</p><pre><code>{block}</code></pre>"),
                      "https://tides.test/a")
    assert "```\nnpm create tides@latest harbour\ncd harbour\n\nnpm run tide -- --hours 12\n```" in text


def test_code_lines_already_broken_are_left_as_they_are():
    block = "<span class='line'>cd harbour</span>\n<span class='line'>npm run tide</span>\n"
    _, text = extract(_article(f"<pre><code>{block}</code></pre>"), "https://tides.test/a")
    assert "```\ncd harbour\nnpm run tide\n```" in text


def test_share_buttons_cookie_banners_related_articles_and_comment_forms_are_dropped():
    related = "".join(f"<li><a href='/r{i}'>RELATED_{i} story about something else</a></li>" for i in range(6))
    html = _article("") .replace(
        "</article>",
        "</article><div class='share'><a href='https://x.test/share'>SHARE_ON_X</a></div>"
        "<div id='cookie-banner'><p>COOKIE_BANNER we use cookies</p><button>Accept</button></div>"
        f"<aside class='related'><h3>Related articles</h3><ul>{related}</ul></aside>"
        "<form id='comments'><textarea></textarea><p>COMMENT_FORM Leave a reply</p></form>")
    _, text = extract(html, "https://tides.test/a")
    assert "Tidal forces stretch" in text and "Lunar forces stretch" in text
    for marker in ("SHARE_ON_X", "COOKIE_BANNER", "RELATED_0", "COMMENT_FORM"):
        assert marker not in text


def _page_with_asides(article_class: str) -> str:
    story = "".join(f"<p>The lighthouse keeper climbed the stairs every evening PARAGRAPH_{n} to light the lamp, and "
                    "wrote the weather and the ships he saw into the log before he slept.</p>" for n in range(6))
    teasers = "".join(f"<div class='teaser'><a href='/s/{n}'>Another story</a><p>TEASER_{n} A keeper's daughter "
                      "remembers the winter storms on the island and the boat that brought their food.</p></div>"
                      for n in range(3))
    # Within the article's container, where readability takes them with the article.
    return f"""<html><head><title>The last lighthouse keeper</title></head><body>
<div class="{article_class}"><h1>The last lighthouse keeper</h1>{story}
<div class="related-posts"><h3>You may also like</h3>{teasers}</div>
<div id="author-sidebar"><h3>About the author</h3><p>AUTHOR_BIO She writes about the coast, its people and its
lighthouses, and lives by the sea with two dogs and a rowing boat.</p></div>
<div class="post-footer"><p>FOOTER_PROSE This magazine is made by a small team of writers and photographers who
love the sea and everything that lives by it.</p></div></div></body></html>"""


def test_related_rails_sidebars_and_footers_named_by_class_or_id_are_dropped():
    text = extract(_page_with_asides("entry-content"), "https://sea.test/keeper").text
    assert all(f"PARAGRAPH_{n}" in text for n in range(6))
    for marker in ("TEASER_0", "AUTHOR_BIO", "FOOTER_PROSE"):
        assert marker not in text


def test_an_aside_name_that_is_negated_or_holds_the_page_keeps_its_text():
    from webtools.plugins.web_fetch.extract.hidden import drop_asides
    from webtools.plugins.web_fetch.extract.page import parse

    for wrapper in ("wsite-not-footer", "content-sidebar-wrap"):
        doc = parse(_page_with_asides(wrapper))
        drop_asides(doc)
        text = doc.find("body").text_content()
        assert "PARAGRAPH_5" in text and "TEASER_0" not in text, wrapper


def test_a_content_column_named_after_the_sidebar_beside_it_keeps_the_article():
    # A CMS layout names the content column for its sidebar ("sidebar-first-only"): it holds the headline
    # and the article, and only the real sidebar goes. A rail of several small articles still goes.
    story = "".join(f"<p>The ferry leaves the harbour at seven PARAGRAPH_{n} and reaches the island by noon, "
                    "weather allowing, with the post, the bread and the doctor on Tuesdays.</p>" for n in range(8))
    rail = "".join(f"<article><h3><a href='/r/{n}'>Another crossing</a></h3><p>RAIL_{n} The winter timetable "
                   "and what the islanders think of it.</p></article>" for n in range(3))
    page = f"""<html><head><title>The island ferry</title></head><body>
<div class="col-12 sidebar-first-only"><h1>The island ferry</h1></div>
<section class="col-9 sidebar-first-only"><article>{story}</article></section>
<aside class="col-3 sidebar-first"><p>SIDEBAR_TEXT Opening hours of the harbour office, the tide tables and the
numbers to call when the crossing is cancelled.</p></aside>
<div class="related-posts">{rail}</div></body></html>"""
    from webtools.plugins.web_fetch.extract.hidden import drop_asides
    from webtools.plugins.web_fetch.extract.page import parse

    doc = parse(page)
    drop_asides(doc)
    kept = doc.find("body").text_content()
    assert "The island ferry" in kept and all(f"PARAGRAPH_{n}" in kept for n in range(8))
    assert "SIDEBAR_TEXT" not in kept and "RAIL_0" not in kept
    text = extract(page, "https://ferry.test/").text
    assert all(f"PARAGRAPH_{n}" in text for n in range(8)) and "SIDEBAR_TEXT" not in text


def test_merge_keeps_what_both_candidates_agree_on_and_prose_only_one_found():
    from webtools.plugins.web_fetch.extract.choice import merge

    shared = "The harbour master posts the tide tables every morning at the quay for all the boats."
    only_other = ("A second paragraph that only one extractor found, long enough to be prose and free of "
                  "links, which the merge must keep in its place.")
    base = f"[Home](https://t.test/) [News](https://t.test/n)\n\n{shared}\n\nShort line"
    other = f"{shared}\n\n{only_other}"
    merged = merge(base, other)
    assert merged.split("\n\n") == [shared, only_other]


def _readability_runs(monkeypatch, html: str, **options) -> tuple[bool, str]:
    """Whether extracting ``html`` runs readability, and the text."""
    import webtools.plugins.web_fetch.extract as extraction

    calls = []
    real = extraction.readability_article
    monkeypatch.setattr(extraction, "readability_article", lambda *args: calls.append(args) or real(*args))
    text = extract(html, "https://tides.test/a", **options).text
    return bool(calls), text


_LONG = "".join(f"<p>{PROSE.replace('Tidal', f'Part {n}: tidal')}</p>" for n in range(3))


def test_readability_is_not_run_when_trafilaturas_text_is_the_whole_cleaned_page(monkeypatch):
    # Navigation and footer go with cleaning: the article is the page, and trafilatura's text all of it.
    runs, text = _readability_runs(monkeypatch, _article(_LONG))
    assert not runs
    assert "Part 2: tidal forces stretch" in text and "Lunar forces stretch" in text and "FOOTER" not in text


@pytest.mark.parametrize("inner, options", [
    # A table with merged cells: trafilatura fills them with empty ones (a pipe table with a blank cell).
    ("<table><tr><td colspan='2'>Tide table for the week</td></tr><tr><td>Brest</td><td>06:12</td></tr></table>",
     {}),
    ("<pre>echo high</pre>", {}),
    ("<p><img src='/sail.png' alt='A sail'></p>", {"include_image_urls": True}),  # trafilatura's has no images
    # An offer block (a price beside a buy button): the page may be a product's.
    ("<div class='offer'><span class='price'>$89.00</span> <button>Add to cart</button></div>", {}),
])
def test_readability_is_run_on_a_whole_page_with_a_table_a_code_block_an_offer_or_images_asked_for(
        monkeypatch, inner, options):
    runs, _ = _readability_runs(monkeypatch, _article(_LONG + inner), **options)
    assert runs


def test_readability_is_run_when_the_page_holds_more_than_trafilaturas_text(monkeypatch):
    column = "<div class='column'>" + "".join(
        f"<p><a href='/story/{n}'>Another story about the harbour number {n}</a> and a line about it</p>"
        for n in range(12)) + "</div>"
    html = _article(_LONG).replace("</main>", "</main>" + column)
    runs, text = _readability_runs(monkeypatch, html)
    assert runs and "Part 2: tidal forces stretch" in text


def _article_and_gallery() -> tuple[list[str], str]:
    """Four paragraphs of an article, and a slideshow of 30 captions each opening with a heading, in the
    Markdown the candidates give."""
    paragraphs = [f"The ferry company added a night crossing PARAGRAPH_{n} to the island this summer, and the "
                  "harbour built a second waiting room for the passengers." for n in range(4)]
    captions = "\n".join(f"- ## {n}/30 Harbour scene\n  A caption of the slideshow GALLERY_{n} about a boat, a "
                         "quay and the people who work on them every day of the year." for n in range(30))
    return paragraphs, captions


def test_merge_leaves_out_a_gallery_embedded_in_the_article_that_only_the_other_candidate_has():
    from webtools.plugins.web_fetch.extract.choice import merge

    paragraphs, captions = _article_and_gallery()
    base = "\n\n".join(paragraphs)
    other = "\n\n".join([*paragraphs[:2], captions, *paragraphs[2:]])
    merged = merge(base, other)
    assert "GALLERY_" not in merged and all(f"PARAGRAPH_{n}" in merged for n in range(4))
    # A list the base dropped that is shorter than the article, or whose items are not headed, is kept.
    short = "\n".join(captions.split("\n")[:4])
    assert "GALLERY_1" in merge(base, "\n\n".join([*paragraphs[:2], short, *paragraphs[2:]]))
    plain = captions.replace("- ## ", "- ")
    assert "GALLERY_1" in merge(base, "\n\n".join([*paragraphs[:2], plain, *paragraphs[2:]]))


def test_trafilaturas_text_used_alone_loses_a_gallery_embedded_in_readabilitys_article():
    from webtools.plugins.web_fetch.extract.choice import without_galleries

    paragraphs, captions = _article_and_gallery()
    article = "\n\n".join(paragraphs)
    traf = "\n\n".join([*paragraphs[:2], captions, *paragraphs[2:]])
    text = without_galleries(traf, article)
    assert "GALLERY_" not in text and text == article
    # Without a gallery (or after the article's last block: not embedded in it) the text is kept as it is.
    assert without_galleries(article, article) is article
    after = "\n\n".join([*paragraphs, captions])
    assert without_galleries(after, article) is after


MERGE_TIE = """
from webtools.plugins.web_fetch.extract.choice import merge
first = "alder birch cedar douglas elm fir ginkgo hazel"
second = "ivy juniper kauri larch maple nutmeg oak pine"
only_other = ("A paragraph that only one extractor found, long enough to be prose and free of links, "
              "placed after the text it follows in that extractor.")
print(repr(merge(f"{first}\\n\\n{second}", f"{first} {second}\\n\\n{only_other}")))
"""


def test_merge_places_a_block_the_same_way_whatever_the_hash_seed():
    # The block before only_other shares as many shingles with each base block: a tie, once broken by
    # the order of a set's items, so the same page came out in different orders from one process to
    # the next.
    import os
    import subprocess
    import sys

    outputs = {
        subprocess.run([sys.executable, "-c", MERGE_TIE], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
        for seed in range(8)
    }
    assert len(outputs) == 1
    assert outputs.pop().strip().endswith("pine\\n\\nA paragraph that only one extractor found, long enough to be "
                                          "prose and free of links, placed after the text it follows in that "
                                          "extractor.'")


# -- the lead: what lies between the headline and the article's body --------------------------------

def _post(between: str, before: str = "") -> str:
    """A post as portals write it: headline, byline and share links, then ``between``, then the post's
    body in a container of its own, which is what both extractors take for the article."""
    body = "".join(f"<p>{PROSE.replace('Tidal', word)}</p>" for word in ("Tidal", "Lunar", "Solar"))
    return ("<html><head><title>Why the tides come twice a day | Ocean TV</title></head><body>"
            f"{before}<div id='content'><h1>Why the tides come twice a day</h1>"
            "<div class='byline'><a href='/author/ann'>Ann Lee</a> 10:44 AM on 04/06/2013</div>"
            "<ul class='share'><li><a href='/s?x'>Twitter</a></li><li><a href='/s?f'>Facebook</a></li></ul>"
            f"{between}<div class='post'><div class='entry-content'>{body}</div></div></div></body></html>")


VIDEO = ("<div class='video'><object type='application/x-shockwave-flash' data='/player.swf'>"
         "<param name='movie' value='/player.swf'><div class='caption-box'><p class='caption'>VIDEO_DESCRIPTION "
         "Ann Lee and the <a href='/people/harbour-master'>harbour master</a> explain on the quay why most "
         "coasts see two high tides a day.</p></div></object></div>")


@pytest.mark.parametrize("before", ["", "<div class='site'><h2>Ocean TV</h2><h1>Shows</h1></div>"])
def test_the_lead_between_the_headline_and_the_body_comes_first(before):
    # Both extractors take the post's body and miss the description of the video the post is about.
    # Headings before the headline (the site's name, a section's) are not the headline.
    title, text = extract(_post(VIDEO, before), "https://ocean.test/2013/04/06/tides/")
    blocks_ = text.split("\n\n")
    assert title == "Why the tides come twice a day"
    assert blocks_[0].startswith("VIDEO_DESCRIPTION Ann Lee and the [harbour master]"
                                 "(https://ocean.test/people/harbour-master) explain")
    assert blocks_[1].startswith("Tidal forces stretch")
    assert text.count("VIDEO_DESCRIPTION") == 1
    for chrome in ("Twitter", "10:44 AM", "Why the tides come twice a day"):
        assert chrome not in text


def test_no_lead_is_looked_for_far_from_the_headline():
    # A page whose headline sits above its whole menu: the region would be the page, written out for
    # nothing (18 s on a page nested 200 deep around 40,000 links).
    import lxml.html

    from webtools.plugins.web_fetch.extract.choice import LEAD_MAX_GAP_WORDS, lead_region

    def body(menu_words: int):
        menu = "".join(f"<li><a href='/m{i}'>item{i}</a></li>" for i in range(menu_words))
        return lxml.html.fromstring(f"<body><div><h1>Tides</h1><ul>{menu}</ul></div><p>{PROSE}</p></body>")

    assert lead_region(body(LEAD_MAX_GAP_WORDS), "Tides", PROSE) is not None
    assert lead_region(body(LEAD_MAX_GAP_WORDS + 1), "Tides", PROSE) is None


@pytest.mark.parametrize("between", [
    # An author's biography, then a date line: the bio is not right before the body.
    "<div class='author-box'><p>AUTHOR_BIO Ann Lee is the coast editor of Ocean TV and has written for many "
    "papers about harbours, boats, fishing and the weather of the northern seas.</p><p>posted 5 mins ago</p></div>",
    # A list of the site's top stories under a heading of its own.
    "<div class='top'><h2>Our top stories</h2><ul><li>AUTHOR_BIO The harbour master explains the spring tides "
    "of this month to the crews of the fishing boats at the quay</li></ul></div>",
])
def test_what_is_not_right_before_the_body_or_not_prose_is_not_a_lead(between):
    _, text = extract(_post(between), "https://ocean.test/2013/04/06/tides/")
    assert text.startswith("Tidal forces stretch") and "AUTHOR_BIO" not in text


def test_merge_of_two_different_texts_is_the_one_apart_chooses():
    from webtools.plugins.web_fetch.extract.choice import merge

    post = "Human bowling ball: this plays with your right brain in a big way, says the shop."
    bio = ("I live. I learn. I teach. And 140 characters on Twitter is limiting. Here I share and celebrate "
           "my creativity and the creativity of others.")
    offered = []
    assert merge(post, bio, apart=lambda candidates: offered.append(candidates) or candidates[0]) == post
    assert offered == [[post, bio]]
    # Without a choice, or when apart chooses none, both are kept as before (the other's first).
    assert merge(post, bio) == merge(post, bio, apart=lambda candidates: None) == f"{bio}\n\n{post}"
    # Candidates that share a shingle are merged without asking.
    assert merge(post, f"{post}\n\n{bio}", apart=lambda candidates: pytest.fail("asked")).startswith(post)


@pytest.mark.parametrize("tail", ["", "<h2>Human bowling ball</h2><p>COPY the headline again, then a bio.</p>"])
def test_of_two_different_texts_the_one_after_the_headline_is_chosen(tail):
    import lxml.html

    from webtools.plugins.web_fetch.extract.choice import nearest_after_headline

    body = lxml.html.fromstring(
        "<body><div id='side'><p>I live. I learn. I teach.</p></div><h2>Shop</h2><h1>Human bowling ball</h1>"
        f"<p>via shop.test</p><p>This plays with your right brain in a big way.</p>{tail}</body>")
    post, bio = "via [shop.test](http://shop.test/)\n\nThis plays with your right brain", "I live. I learn. I teach."
    assert nearest_after_headline(body, "Human bowling ball", [bio, post]) == post
    assert nearest_after_headline(body, "Another headline altogether", [bio, post]) is None
    assert nearest_after_headline(body, "Human bowling ball", [bio]) is None


@needs(EXTRACTION_DEV)
@pytest.mark.parametrize("page, post, column", [
    ("312", "This plays with your right brain in a big way", "I live. I learn. I teach."),
    ("109", "Repurposing food as art is creative", "I live. I learn. I teach."),
])
def test_a_short_post_beside_a_column_comes_back_without_the_column(page, post, column):
    # Real pages (dragnet's): readability finds the short post, trafilatura the author's column beside
    # it; they share no words, and merging gave both (or, where the post is under 15 words, the column).
    html = gzip.decompress((EXTRACTION_DEV / "dragnet" / f"{page}.html.gz").read_bytes())
    _, text = extract(html, "https://page.test/")
    assert post in text and column not in text


# -- the fallback ------------------------------------------------------------------------------------

def test_page_with_text_never_comes_back_empty():
    # Nothing here looks like an article to either extractor: the cleaned page is returned.
    html = "<html><body><div><span>Opening hours</span></div><div><span>Mon-Fri 9-17</span></div></body></html>"
    _, text = extract(html, "https://shop.test/")
    assert "Opening hours" in text and "Mon-Fri 9-17" in text


def test_page_wrapped_in_one_form_keeps_its_article_and_drops_the_small_forms_inside():
    # ASP.NET puts the whole page in one <form>: removing forms used to remove the article with it.
    html = (f"<html><head><title>Tides</title></head><body><form id='aspnetForm' method='post'>"
            f"<nav><a href='/'>NAV_HOME</a></nav><div id='content'><h1>Tides</h1><p>{PROSE}</p>"
            f"<p>{PROSE.replace('Tidal', 'Lunar')}</p></div>"
            "<div class='search'><form><input name='q'><p>SEARCH_FORM find a story</p></form></div>"
            "</form></body></html>")
    _, text = extract(html, "https://tides.test/a.aspx")
    assert "Tidal forces stretch" in text and "Lunar forces stretch" in text
    assert "SEARCH_FORM" not in text and "NAV_HOME" not in text


def test_text_after_a_stray_closing_body_tag_is_read():
    # libxml2 puts what follows "</body>" beside the body: a body of images only looked like a page
    # without text.
    html = (f"<html><head><title>Tides</title></head><body><img src='/logo.png' usemap='#menu'></body>"
            f"<div><h2>Tide tables</h2><p>{PROSE}</p><p>{PROSE.replace('Tidal', 'Lunar')}</p></div></html>")
    _, text = extract(html, "https://tides.test/a")
    assert "Tidal forces stretch" in text and "Lunar forces stretch" in text


def test_page_whose_only_text_cleaning_removes_still_comes_back_with_it():
    html = ("<html><head><title>App</title><script>var SECRET_SCRIPT = 1;</script></head><body>"
            "<noscript>This application needs JavaScript to show its timetable.</noscript>"
            "<div id='root'></div></body></html>")
    _, text = extract(html, "https://app.test/")
    assert "needs JavaScript" in text and "SECRET_SCRIPT" not in text


def test_a_shell_its_scripts_fill_comes_with_the_description_the_page_gives_of_itself():
    # A forum's thread served without its posts (its scripts load them): its header's links, and in its <head> the
    # first post as its description. The model reads the description, said to be one, before the shell's words.
    first_post = ("So I wanted to know what range people really get: I rode forty miles this week on one charge, "
                  "with a ten cell pack, and still had a fifth of it left &amp; more.")
    shell = ("<html><head><title>What is your range?</title><meta name='description' content='Short.'>"
             f"<meta property='og:description' content='{first_post}'><script>load()</script></head><body>"
             "<header><a href='/'>Boards</a> <a href='/calc'>calc</a> <a href='/donate'>donate now</a></header>"
             "<div id='main-outlet'></div></body></html>")
    _, text = extract(shell, "https://boards.test/t/range/1")
    assert text.startswith("*The page's description:* So I wanted to know what range people really get: I rode forty")
    assert "a fifth of it left & more." in text
    # A page with text of its own (twenty words or more) is as it was, and a short page with a tagline (a shorter
    # description) too.
    words = "We sell bicycles, mend them and rent them out by the day, from our shop by the river, open every day."
    page = shell.replace("<div id='main-outlet'></div>", f"<main><p>{words}</p></main>")
    assert "description" not in extract(page, "https://boards.test/")[1]
    tagline = shell.replace(first_post, "The boards of riders who build their own electric boards, since 2019.")
    assert extract(tagline, "https://boards.test/t/range/1")[1].split() == ["Boards", "calc", "donate", "now"]


@needs(EXTRACTION_DEV)
def test_sample_of_unseen_pages_never_comes_back_empty_and_stays_near_the_golds_size():
    manifest = json.loads((EXTRACTION_DEV / "manifest.json").read_text())
    out_words = gold_words = 0
    for entry in manifest[::75]:
        html = gzip.decompress((EXTRACTION_DEV / entry["html"]).read_bytes())
        gold = (EXTRACTION_DEV / entry["gold"]).read_bytes().decode("utf-8", "replace")
        _, text = extract(html, "https://page.test/")
        assert text.strip(), entry["html"]
        out_words += len(text.split())
        gold_words += len(gold.split())
    assert out_words < 1.3 * gold_words


# -- metadata ----------------------------------------------------------------------------------------

def _head(head: str, body: str = "") -> str:
    return f"<html><head><title>T</title>{head}</head><body>{body}<article><p>{PROSE}</p></article></body></html>"


def test_json_ld_gives_date_author_and_language():
    ld = json.dumps({"@context": "https://schema.org", "@graph": [
        {"@type": "WebSite", "name": "Ocean Notes"},
        {"@type": "NewsArticle", "headline": "Tides", "datePublished": "2024-03-05T08:30:00+01:00",
         "author": [{"@type": "Person", "name": "Ada Tide"}, {"@type": "Person", "name": "Ben Wave"}],
         "inLanguage": "en-GB"}]})
    result = extract(_head(f'<script type="application/ld+json">{ld}</script>'), "https://t.test/")
    assert result.published == "2024-03-05T08:30:00+01:00"
    assert result.author == "Ada Tide, Ben Wave"
    assert result.language == "en-GB"


@pytest.mark.parametrize("meta, published", [
    ('<meta property="article:published_time" content="2023-11-02T10:00:00Z">', "2023-11-02T10:00:00+00:00"),
    ('<meta name="date" content="2021-06-30">', "2021-06-30"),
    ('<meta name="citation_publication_date" content="2019/04/07">', "2019-04-07"),
    ('<meta name="DC.date.issued" content="Tue, 05 Mar 2024 10:00:00 GMT">', "2024-03-05T10:00:00+00:00"),
    ('<meta name="date" content="not a date">', None),
])
def test_meta_tags_give_the_date(meta, published):
    assert extract(_head(meta), "https://t.test/").published == published


def test_time_element_gives_the_date_when_nothing_else_does():
    html = _head("", "<article><p>Posted <time datetime='2022-02-14'>Feb 14</time></p></article>")
    assert extract(html, "https://t.test/").published == "2022-02-14"


def test_meta_author_and_byline_markup_give_the_author():
    assert extract(_head('<meta name="author" content="By Ada Tide">'), "https://t.test/").author == "Ada Tide"
    byline = _head("", "<p class='byline'>by <a rel='author' href='/ada'>Ada Tide</a></p>")
    assert extract(byline, "https://t.test/").author == "Ada Tide"


def test_html_lang_or_content_language_gives_the_language():
    page = _head("").replace("<html>", "<html lang='fr_CA'>")
    assert extract(page, "https://t.test/").language == "fr-CA"
    meta = _head('<meta http-equiv="Content-Language" content="de">')
    assert extract(meta, "https://t.test/").language == "de"


def test_page_that_states_nothing_has_no_metadata():
    result = extract(_head(""), "https://t.test/")
    assert (result.published, result.author, result.language) == (None, None, None)
    title, text = result  # still the (title, text) pair it always was
    assert title == "T" and PROSE[:20] in text


# Every kind of whitespace readability's three expressions treat apart (space, tab, line break, the
# others), runs around the 255 it caps, and text between them.
_RUNS = st.lists(st.one_of(
    st.text(alphabet=" \t\n\r\x0b\x0c\xa0\u2028\u3000", max_size=6),
    st.builds(lambda c, n: c * n, st.sampled_from(" \t\n\xa0"), st.integers(250, 260)),
    st.text(alphabet="ab,:.é", min_size=1, max_size=4),
), max_size=12).map("".join)


@given(_RUNS)
@example(" " * 255 + "\nx\t\t y \t z\t ")
@example("x\n" + " " * 254 + "x")
@example("x" + "\t" * 255 + "x")
def test_readability_clean_gives_what_readabilitys_own_gives(text):
    assert readability_clean(text) == readability_original_clean(text)


# Markdown as the candidates write it: words, links (with parentheses in their URLs, even across a blank
# line), code fences, short and long blocks between blank lines.
_MARKDOWN = st.lists(st.sampled_from([
    "word", "Two words", "ΣΑΣ", "a b c d e", "[link](https://t.test/a)", "[x](https://t.test/a(b)",
    "c)d)", "<https://t.test/>", "```", "~~~py", "\n", "\n\n", "\n \n", " ", "-", "é",
]), max_size=40).map(" ".join)


@given(_MARKDOWN)
@example("[x](https://t.test/a(b\n\nc)d) one two three four five")
@example("one two three\n\nfour five\n\nsix")
def test_a_texts_words_and_shingles_come_from_its_blocks_as_from_the_text(markdown):
    tokens, shingles = _text_words_and_shingles(markdown, blocks(markdown))
    assert tokens == words(markdown)
    assert shingles == _shingles(words(markdown))


def test_parsed_page_has_the_element_classes_lxml_html_gives():
    import lxml.html

    from webtools.plugins.web_fetch.extract.page import parse

    tags = sorted(lxml.html.HtmlElementClassLookup()._element_classes) + ["p", "a", "o:p", "svg"]
    html = "<html><body>" + "".join(f"<{tag}>x</{tag}>" for tag in tags) + "<!-- c --><?pi x?></body></html>"
    ours = [type(el) for el in parse(html).iter()]
    assert ours == [type(el) for el in lxml.html.document_fromstring(html).iter() if not isinstance(
        el, (lxml.html.HtmlComment, lxml.html.HtmlProcessingInstruction))]
    assert lxml.html.FormElement in ours and lxml.html.InputElement in ours


_HTML_PIECES = st.lists(st.sampled_from([
    "<div>", "</div>", "<p>", "</p>", "<form>", "</form>", "<span>", "</span>", "<script>var a = 1;</script>",
    "<style>p { x: y }</style>", "<noscript>ns</noscript>", "word", " two  words ", "\n\t", "é", "</body>",
    "after",
]), max_size=30).map(lambda pieces: "<html><body>" + "".join(pieces) + "</body></html>")


@given(_HTML_PIECES)
@example("<html><body><div>a <script>x</script> b<style>y</style>c</div> tail</body></html>")
def test_text_length_counts_what_xpath_finds_outside_scripts_and_styles(html):
    from webtools.plugins.web_fetch.extract.page import text_length, parse

    doc = parse(html)
    for element in doc.iter():
        texts = element.xpath(".//text()[not(ancestor::script or ancestor::style)]")
        assert text_length(element) == sum(len("".join(text.split())) for text in texts)


def test_text_length_counts_a_script_within_a_style_once():
    from lxml import etree

    from webtools.plugins.web_fetch.extract.page import text_length, parse

    doc = parse("<html><body><p>visible <style>css</style> text</p></body></html>")
    etree.SubElement(doc.find(".//style"), "script").text = "js"
    assert text_length(doc) == len("visibletext")


def _step_as_ours_and_as_readabilitys(html: str, step: str) -> tuple[bytes, bytes]:
    """The page's tree after one of readability's steps (a method of its ``Document``) as our
    ``_Readability`` takes it and as readability's own does, each on its own copy of the parsed page."""
    from lxml import etree
    from webtools._vendor.readability import Document

    from webtools.plugins.web_fetch.extract.candidates import _Readability
    from webtools.plugins.web_fetch.extract.page import parse

    doc = parse(html)
    ours, readabilitys = _Readability(doc), _Readability(doc)
    ours._html(True)
    readabilitys._html(True)
    getattr(ours, step)()
    getattr(Document, step)(readabilitys)
    return etree.tostring(ours.html), etree.tostring(readabilitys.html)


# Divs holding text, inline and block elements (and tags that only start like a block's: <pre>, <param>).
_DIVS = st.lists(st.sampled_from([
    "<div>", "</div>", "<div>text", "<p>", "</p>", "<span>", "</span>", "<a href='/x'>", "</a>", "<b>", "</b>",
    "<br>", "<img src='i.png'>", "<ul><li>i</li></ul>", "<pre>code</pre>", "<table><tr><td>c</td></tr></table>",
    "<dl><dt>t</dt></dl>", "<blockquote>q</blockquote>", "<section>", "</section>", "<object><param></object>",
    "<i title='<p>'>", "</i>", "<picture>x</picture>", "words", " tail ", "&lt;p&gt;",
]), max_size=30).map(lambda pieces: "<html><body>" + "".join(pieces) + "</body></html>")


@given(_DIVS)
@example("<html><body><div>a<div>b<span>c</span>d<p>e</p>f</div><b>g</b><br>h</div></body></html>")
@example("<html><body><div>x<span><picture>y</picture></span> z</div></body></html>")
def test_divs_become_paragraphs_as_readability_itself_makes_them(html):
    ours, readabilitys = _step_as_ours_and_as_readabilitys(html, "transform_misused_divs_into_paragraphs")
    assert ours == readabilitys


_CLASS_VALUES = st.lists(st.sampled_from([
    "hidden", "hide", "d-none", "sr-only", "hidden-xs", "unhidden", "x", " ", "\t", "\n", "\xa0", "\u2003",
]), max_size=5).map("".join)


@given(st.lists(_CLASS_VALUES, max_size=6))
@example(["a\thidden", "a\xa0hidden", "d-none-md", " sr-only\n"])
def test_elements_hidden_by_class_are_those_xpaths_class_test_finds(classes):
    from lxml import etree

    from webtools.plugins.web_fetch.extract.hidden import (
        _BODY_CLASSES, HIDDEN_CLASSES, _hidden_by_class, _with_elements,
    )
    from webtools.plugins.web_fetch.extract.page import parse

    inner = "".join(f'<div class="{value}"><span class="{value}">t</span></div>' for value in classes)
    doc = parse(f'<html><head><title class="hidden">t</title></head><body>{inner}</body></html>')
    xpath = etree.XPath("//body//*[" + " or ".join(
        f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')" for name in HIDDEN_CLASSES) + "]")
    assert _hidden_by_class(_with_elements(_BODY_CLASSES(doc))) == xpath(doc)


@needs_corpus
def test_paragraph_scores_with_link_lengths_read_once_are_readabilitys_own():
    from webtools._vendor.readability import Document

    from webtools.plugins.web_fetch.extract.candidates import _Readability
    from webtools.plugins.web_fetch.extract.page import clean, parse

    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir())[:20]:
        doc = parse((folder / "source.html").read_bytes())
        clean(doc)
        ours, readabilitys = _Readability(doc), _Readability(doc)
        ours._html(True)
        readabilitys._html(True)
        scores = [c["content_score"] for c in ours.score_paragraphs().values()]
        assert scores == [c["content_score"] for c in Document.score_paragraphs(readabilitys).values()]
        assert ours._link_lengths is None  # only while scoring: readability changes the tree afterwards


# Links as pages write them: relative, absolute, to another host, without a scheme, malformed, odd.
_HREFS = st.sampled_from([
    "/a", "b/c", "../d?e=f", "#top", "?q=1", "//other.test/x", "http://other.test/y", "https://t.test/z",
    "other.test/w", "mailto:x@t.test", "javascript:void(0)", "{template}", "http://[::1", "http://[x", " /s ",
    "", "a b", "é/ü", "data:,x", "ftp://t.test/f",
])
_BASES = st.sampled_from([
    "https://t.test/dir/page.html", "http://t.test", "https://t.test:8080/a/b/", "http://[bad", "", "t.test/x",
])


@given(st.lists(_HREFS, min_size=1, max_size=8), _BASES)
@example(["/a", "http://[::1", "{t}"], "http://[bad")
@example(["b/c", "../d?e=f", "#top"], "https://t.test/dir/page.html")
@settings(deadline=None)
def test_trafilaturas_links_are_resolved_against_the_page_as_readabilitys_are(hrefs, base):
    # The reference is urljoin against the page's address, what absolutize does to readability's links
    # (and a browser to relative ones): trafilatura itself resolves against the site's root, which made
    # b/c of /dir/page.html /b/c, a page that may not exist. A link that cannot be resolved loses its address.
    from urllib.parse import urljoin

    from webtools.plugins.web_fetch.extract.trafilatura_reading import trafilatura_article
    from webtools.plugins.web_fetch.extract.page import parse

    def resolved(href):
        try:
            return urljoin(base, href.strip())
        except ValueError:
            return None

    links = " ".join(f'<a href="{href}">link {n}</a>' for n, href in enumerate(hrefs))
    doc = parse(f"<html><body><article><p>{PROSE} {links} {PROSE}</p><p>{PROSE}</p></article></body></html>")
    article = trafilatura_article(doc, base)
    anchors = {a.text_content(): a.get("href") for a in article.iter("a")}
    assert len(anchors) == len(hrefs)
    for n, href in enumerate(hrefs):
        assert anchors[f"link {n}"] == resolved(href), (href, base)


def test_trafilaturas_relative_links_lead_where_a_browser_goes():
    from webtools.plugins.web_fetch.extract.trafilatura_reading import trafilatura_article
    from webtools.plugins.web_fetch.extract.page import parse

    doc = parse(f'<html><body><article><p>{PROSE} See <a href="plans/wall.html">the plans</a>, '
                f'<a href="../maps/bay.html">the map</a> and <a href="/tides">the tides</a>.</p>'
                f'<p>{PROSE}</p></article></body></html>')
    article = trafilatura_article(doc, "https://t.test/town/harbour/page.html")
    assert [a.get("href") for a in article.iter("a")] == [
        "https://t.test/town/harbour/plans/wall.html", "https://t.test/town/maps/bay.html", "https://t.test/tides"]


@pytest.mark.parametrize("base", ["https://t.test/dir/page.html", "https://t.test/dir/page.html?id=2#top"])
def test_trafilaturas_links_to_places_in_the_page_lead_nowhere(base):
    # trafilatura resolves a link against the site's root (https://t.test#notes): a link elsewhere, which
    # the Markdown writer kept and counted. Resolved against the page, it leads nowhere and keeps its text.
    from webtools.plugins.web_fetch.extract.trafilatura_reading import trafilatura_article
    from webtools.plugins.web_fetch.extract.markdown import element_markdown
    from webtools.plugins.web_fetch.extract.page import parse

    doc = parse(f'<html><body><article><p>{PROSE} See <a href="#notes">the notes</a> and '
                f'<a href="/tides/brest">the Brest tables</a>.</p><p>{PROSE}</p></article></body></html>')
    article = trafilatura_article(doc, base)
    assert [a.get("href") for a in article.iter("a")] == ["https://t.test/dir/page.html?id=2#notes"
                                                          if "?" in base else "https://t.test/dir/page.html#notes",
                                                          "https://t.test/tides/brest"]
    text = element_markdown(article, page_url=base)
    assert "See the notes and [the Brest tables](https://t.test/tides/brest)." in text


@given(st.text(alphabet=" \t\n\r\xa0\u3000x.é\x01", max_size=40))
@example("a  b\t\tc \t d\n  e  \n\n\t f")
def test_markdown_tidy_collapses_the_spaces_the_plain_look_behind_finds(text):
    import re

    from webtools.plugins.web_fetch.extract.markdown import _MULTI_SPACE, _tidy

    plain = re.compile(r"(?<=\S)[ \t]{2,}")  # the expression as first written: the reference
    assert _MULTI_SPACE.sub(" ", text) == plain.sub(" ", text)
    lines = "\n".join(line.strip() for line in plain.sub(" ", text).split("\n"))
    assert _tidy(text) == re.sub(r"\n[ \t]*(?:\n[ \t]*)+", "\n\n", lines).strip()


def test_readability_describes_nodes_for_its_debug_log_only_when_that_log_is_on(caplog):
    import logging

    from webtools._vendor import readability

    from webtools.plugins.web_fetch.extract.candidates import readability_article
    from webtools.plugins.web_fetch.extract.page import parse

    url = "https://t.test/a.html"
    doc = parse(f"<html><body><div><p>{PROSE}</p><p>{PROSE}</p></div></body></html>")
    readability.debug.uids, readability.debug.uids_document = {}, None
    assert PROSE[:30] in readability_article(doc, url, url).text_content()
    assert readability.debug.uids == {}  # no node described: none (nor its tree) kept alive
    with caplog.at_level(logging.DEBUG, logger="readability.readability"):
        readability_article(doc, url, url)
    assert "Branch 1" in caplog.text and "body#readabilityBody>div{01} link density" in caplog.text
    assert readability.debug.uids


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.text(alphabet=" \t\n\xa0x\u2028", max_size=12))
def test_markdown_collapses_whitespace_and_control_characters_as_the_expression_does(text):
    import re

    from webtools.plugins.web_fetch.extract.markdown import _collapse

    # Control characters (none is shown) are spaces too: the writer's marks are two of them.
    assert _collapse(text) == re.sub("[\\s\x00-\x08\x0e-\x1f\x7f]+", " ", text)


def test_the_only_printable_whitespace_is_the_space():
    # What _collapse's shortcut rests on, checked for every code point of this Python's Unicode.
    import re
    import sys

    space = re.compile(r"\s")
    for point in range(sys.maxunicode + 1):
        char = chr(point)
        assert bool(space.match(char)) == char.isspace()
        assert not (char.isspace() and char.isprintable()) or char == " "


@given(st.lists(st.sampled_from(["a", "b", "ab", "é", "1", "x_y"]), max_size=9))
def test_shingles_are_the_runs_of_four_words_each_as_one_string(tokens):
    runs = {tuple(s.split(" ")) for s in _shingles(tokens)}
    if len(tokens) < 4:
        assert runs == {tuple(tokens) or ("",)}
    else:
        assert runs == set(zip(tokens, tokens[1:], tokens[2:], tokens[3:]))


@given(_MARKDOWN, st.integers(0, 12))
@example("[x](https://t.test/a(b\n\nc)d) one two İx", 3)
def test_words_counted_up_to_a_limit_are_the_words_up_to_that_limit(markdown, limit):
    from webtools.plugins.web_fetch.extract.choice import count_words

    assert count_words(markdown, limit) == min(len(words(markdown)), limit)


# Elements with the classes and ids readability finds unlikely (or maybe a candidate after all), within
# code, around an article, on the body itself, empty ones.
_CANDIDATES = st.lists(st.sampled_from([
    "<div class='sidebar'>", "<div id='comments'>", "<div class='comment content'>", "<div class=''>",
    "<div id=''>", "<div class='' id='menu'>", "<section class='footer'>", "</section>", "<div>", "</div>",
    "<p class='remark'>", "</p>", "<pre><span class='extra'>x</span></pre>", "<code class='rss'>c</code>",
    "<article>", "</article>", "<span class='Twitter'>t</span>", "<main>m</main>", "words",
]), max_size=25).map(lambda pieces: "<html><body class='header'>" + "".join(pieces) + "</body></html>")


@given(_CANDIDATES)
@example("<html><body><div class='sidebar'><div class='pager'>x</div><article>a</article></div></body></html>")
def test_unlikely_candidates_are_removed_as_readability_itself_removes_them(html):
    ours, readabilitys = _step_as_ours_and_as_readabilitys(html, "remove_unlikely_candidates")
    assert ours == readabilitys


#: readability-lxml 0.9's files as its wheel's RECORD lists them (SHA-256, urlsafe base64 without padding).
READABILITY_0_9_RECORD = {
    "__init__.py": "gJkLuSKHxcjW9csU92VAfGN4MOQ5CTAtIu-xBWJtC1k",
    "browser.py": "wUokLlGmb03uO_mUB55k4b4Y2cGCwLqjiq_Dr3h1d70",
    "cleaners.py": "CXW4VWIj0fpjCTM6-Zjmd-FhWKWe4svvsfpg2XbNaqE",
    "debug.py": "0dnRdQfDbbE4XRwAwawM2Km8sLSJS_I85sYWL6gEblc",
    "encoding.py": "xZtOSeicnLu77AZHtdsEiJ-ToswWGnGEksPOvrDsRkk",
    "htmls.py": "OaahShbyWtVaxa4J14c7TiQNUPjPKKPkTRPP0-x2ClY",
    "readability.py": "7C5eBzhG9vluT8-h4FWXjhhcvcENZwGHuQtHkLNEIz4",
}


def test_vendored_readability_is_readability_lxml_0_9_byte_for_byte():
    """webtools/_vendor/readability is carried, not installed (its README.md says why): a change to it
    would silently fork the extractor's readability from the release its tests were written against."""
    import base64
    import hashlib
    from pathlib import Path

    from webtools._vendor import readability

    folder = Path(readability.__file__).parent
    carried = {path.name for path in folder.glob("*.py")}
    assert carried == set(READABILITY_0_9_RECORD)
    for name, digest in READABILITY_0_9_RECORD.items():
        sha = base64.urlsafe_b64encode(hashlib.sha256((folder / name).read_bytes()).digest()).rstrip(b"=")
        assert sha.decode() == digest, name


def test_text_styled_visibility_hidden_is_dropped_however_much_of_the_page_it_holds():
    hidden = "".join(f"<p>HIDDEN_{n} This paragraph is laid out but never shown to a reader of the page.</p>"
                     for n in range(6))
    html = (f"<html><body><article><p>Visible paragraph with enough words to count as the article text here, "
            f"and a second sentence.</p><div style='visibility: hidden'>{hidden}</div></article></body></html>")
    _, text = extract(html, "https://h.test/")
    assert "Visible paragraph" in text and "HIDDEN_" not in text


def test_a_modal_dialog_and_a_closed_dialog_are_dropped_however_much_of_the_page_they_hold():
    # A consent manager's settings, written into the page by its script: a modal dialog (aria-modal) with more
    # text than the page's own; and a <dialog> without "open", which a browser does not show.
    purposes = "".join(f"<p>CONSENT_{n} These cookies let us and our partners measure visits and show you "
                       f"adverts that match your interests; you may object to each purpose below.</p>"
                       for n in range(10))
    html = (f"<html><head><title>Sheet pan chicken</title></head><body><main><h1>Sheet pan chicken</h1>"
            f"<p>RECIPE_BODY Heat the oven to 220 degrees, toss the chicken thighs with lemon, thyme and oil, and "
            f"roast them on one tray with the potatoes for forty minutes.</p></main>"
            f"<div id='consent-sdk'><div role='dialog' aria-modal='true' style='height: 100%'>{purposes}</div></div>"
            f"<dialog><p>NEWSLETTER_BOX Sign up for our newsletter and get a recipe every day.</p></dialog>"
            f"</body></html>")
    _, text = extract(html, "https://recipes.test/sheet-pan-chicken")
    assert "RECIPE_BODY" in text
    assert "CONSENT_" not in text and "NEWSLETTER_BOX" not in text
    # An open <dialog> is shown, and a dialog that is not modal lies on the page: both stay.
    from webtools.plugins.web_fetch.extract.hidden import drop_dialogs, drop_hidden
    from webtools.plugins.web_fetch.extract.page import parse

    doc = parse(html.replace("<dialog>", "<dialog open>").replace("aria-modal='true'", ""))
    drop_dialogs(doc, drop_hidden(doc))
    assert "NEWSLETTER_BOX" in doc.text_content() and "CONSENT_9" in doc.text_content()
    doc = parse(html)
    drop_dialogs(doc, drop_hidden(doc))
    assert "NEWSLETTER_BOX" not in doc.text_content() and "CONSENT_" not in doc.text_content()


def test_extraction_keeps_nothing_of_a_large_page_once_it_returns():
    # A server's process reads page after page: what one extraction counted is not held after it.
    import gc
    import tracemalloc

    from tests.documents import table_page

    # The first extraction in a process imports and sets up what every later one uses: done on another,
    # smaller page first, so that only what this page leaves is counted.
    extract(table_page(20_000), "https://example.test/small")
    page = table_page(150_000)
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        result = extract(page, "https://example.test/table")
        assert "Cell alpha" in result.text
        del result
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 256 * 1024, f"{kept / 2**20:.1f} MiB kept after extraction"


_CODE_LINE = st.text(alphabet="abcxyz019 ()=:<>&#*-_+.'\"", max_size=16)


@given(code=st.lists(_CODE_LINE, min_size=1, max_size=5).map("\n".join).filter(lambda code: code.strip()),
       depth=st.integers(1, 3), ordered=st.booleans(), first=st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_code_block_in_a_list_item_stays_in_it_as_commonmark_reads_it(code, depth, ordered, first):
    """The Markdown is read back by a CommonMark parser (markdown-it-py): the block is a fence within the
    innermost list item, holding the code as the page wrote it."""
    import html as html_module

    from markdown_it import MarkdownIt

    from webtools.plugins.web_fetch.extract import to_markdown

    block = f"<pre>{html_module.escape(code)}</pre>"
    item = block if first else f"<p>Run this</p>{block}"
    tag = "ol" if ordered else "ul"
    fragment = item
    for level in range(depth):
        fragment = f"<{tag}><li>{'' if level == 0 else 'level '}{fragment}</li></{tag}>"
    text = to_markdown(fragment)
    tokens = MarkdownIt("commonmark").parse(text)
    fences = [token for token in tokens if token.type == "fence"]
    assert len(fences) == 1, text
    assert fences[0].content == code.strip("\n") + "\n", text
    opened = sum(1 for token in tokens[:tokens.index(fences[0])] if token.type == "list_item_open")
    closed = sum(1 for token in tokens[:tokens.index(fences[0])] if token.type == "list_item_close")
    assert opened - closed == depth, text


_TEXT_LINE = st.text(alphabet="ab#=>-+*1.) \t\x02", max_size=10)


@given(lines=st.lists(_TEXT_LINE, min_size=1, max_size=4), where=st.sampled_from(["p", "li", "blockquote", "td"]),
       heading=st.integers(0, 6))
@settings(max_examples=300, deadline=None)
def test_only_the_pages_headings_are_headings_as_commonmark_reads_them(lines, where, heading):
    """A line of the page's text that opens as a heading does ("# 1 tip"), or underlines the line above with "="
    or "-", is escaped: read back by a CommonMark parser (markdown-it-py), the Markdown's only headings are the
    page's ``<h1>`` to ``<h6>``; and ``focus`` cuts the text into sections at those alone."""
    import html as html_module

    from markdown_it import MarkdownIt

    from webtools.plugins.web_fetch.extract import to_markdown
    from webtools.plugins.web_fetch.focus import passages

    text = "<br>".join(html_module.escape(line) for line in lines)
    body = {"p": f"<p>{text}</p>", "li": f"<ul><li>{text}</li></ul>", "blockquote": f"<blockquote><p>{text}</p>"
            "</blockquote>", "td": f"<table><tr><td>{text}</td></tr></table>"}[where]
    page = (f"<h{heading}>The page's heading</h{heading}>" if heading else "") + body + "<p>After.</p>"
    markdown = to_markdown(page)
    tokens = MarkdownIt("commonmark").parse(markdown)
    headings = [tokens[n + 1].content for n, token in enumerate(tokens) if token.type == "heading_open"]
    assert headings == (["The page's heading"] if heading else []), markdown
    read = {markdown[start:end] for passage in passages(markdown) for start, end in passage.headings}
    assert read == ({"#" * heading + " The page's heading"} if heading else set()), markdown
