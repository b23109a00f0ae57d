"""readability-lxml's steps done cheaper (``extract.candidates._Readability``, issue 26's speed) against
readability's own code, which the vendored package keeps byte for byte: on generated pages and on the
corpus's, each shortcut must give exactly what readability's step gives."""
from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from lxml import etree

from tests.corpora import READABILITY_PAGES, needs
from webtools._vendor import readability
from webtools._vendor.readability import Document
from webtools.plugins.web_fetch.extract.candidates import CASELESS_PATTERNS, _collapsed_length, _Readability
from webtools.plugins.web_fetch.extract.page import clean, parse

# Classes and ids: the patterns' words in any case, pieces of them, separators, and the characters that
# match an ASCII letter case-insensitively without lower-casing to it (Kelvin sign, long s, dotless i).
_FEATURES = st.lists(st.sampled_from([
    "comment", "COMMENT", "Sidebar", "ad-break", "AD_BREAK", "main", "Article", "content", "post", "blog", "foot",
    "FOOTER", "meta", "tags", "dek", "Story lead", "story_-lead", "subtitle", "standfirst", "sub", "head", "er",
    "\u212a", "\u017f", "\u0131", "\u0130", "s", "k", "i", "é", " ", "-", "_", "\t", "\xa0", "x", "lin\u212aed",
    "\u017fidebar", "comb", "x",
]), max_size=8).map("".join)


@given(_FEATURES)
@example("\u017fidebar")  # the long s: readability's pattern (case-insensitive) finds "sidebar" here
@example("SIDEBAR Main")
def test_readabilitys_caseless_patterns_find_what_they_found(feature):
    for name in CASELESS_PATTERNS:
        fast = readability.readability.REGEXES[name]
        assert bool(fast.search(feature)) == bool(fast.original.search(feature)), name


class _PlainSanitize(_Readability):
    """Our readability with its ``sanitize`` as readability wrote it."""

    sanitize = Document.sanitize


def _sanitized(doc) -> tuple[str, str]:
    """The page sanitized as a whole (its paragraphs scored first) by ours and by readability's own."""
    results = []
    for reader in (_Readability(doc), _PlainSanitize(doc)):
        reader._html(True)
        results.append(reader.sanitize(reader.html, reader.score_paragraphs()))
    return results[0], results[1]


_PLAIN = "Plain words of a list item that is not a link. " * 6
#: A link cached by the list around it, whose block goes (a comment), then the div around both measured.
_STALE_LINK = (f"<html><body><div><ul><li>{_PLAIN}<a href='/x'>l<div class='comment'>{'c' * 60}</div></a>"
               "</li></ul></div></body></html>")

# Blocks that sanitize judges (tables, lists, divs, sections, asides) holding what it counts: paragraphs,
# images, items, links (some around a block that goes), embeds, inputs (hidden or not), commas, long and
# short text, headings, classes that weigh up or down, and the main and article frames.
_BLOCKS = st.lists(st.sampled_from([
    "<div>", "<div class='content'>", "<div class='comment'>", "</div>", "<p>", "</p>", "<section>", "</section>",
    "<aside>", "</aside>", "<table><tr><td>", "</td></tr></table>", "<ul>", "<li>", "</li>", "</ul>",
    "<a href='/x'>", "</a>", "<img src='i.png'>", "<div><img src='i.png'></div>", "<embed src='e'>",
    "<input type='hidden'>", "<input>", "<main>", "</main>", "<article>", "</article>", "<h2>Heading</h2>",
    "<h2 class='meta'>h</h2>", "a, b, c", "one,", "Short words.", " ", "\n  ", _PLAIN, "c" * 60,
    "<iframe src='https://vimeo.com/1'></iframe>", "<p>" + "A much longer paragraph of text. " * 40 + "</p>",
    "<form>f</form>", "<p>Sign up now</p>", "<header>h</header>",
]), max_size=40).map(lambda pieces: "<html><body>" + "".join(pieces) + "</body></html>")


@given(_BLOCKS)
@example(_STALE_LINK)
@example("<html><body><div>" + "," * 10 + "</div><div>" + "," * 9 + "</div></body></html>")  # ten commas keep
@example("<html><body><div><p>short</p><p>" + "Long text. " * 100 + "</p><div><img src='i.png'></div>"
         "<p>short</p><p>" + "Long text. " * 100 + "</p></div></body></html>")  # the nearest siblings only
@example("<html><body><div><embed src='e'><a href='/x'>link</a> " + "words " * 14 + "</div></body></html>")
@settings(max_examples=300, deadline=None)
def test_a_page_is_sanitized_as_readability_sanitizes_it(html):
    ours, readabilitys = _sanitized(parse(html))
    assert ours == readabilitys


@needs(READABILITY_PAGES)
def test_corpus_articles_are_sanitized_as_readability_sanitizes_them():
    for folder in sorted(p for p in READABILITY_PAGES.iterdir() if p.is_dir())[:40]:
        doc = parse((folder / "source.html").read_bytes())
        clean(doc)
        ours = _Readability(doc).summary(html_partial=True)
        assert ours == _PlainSanitize(doc).summary(html_partial=True), folder.name


def _plain_link_density(elem) -> float:
    """Our ``get_link_density`` before its shortcuts: every link's text and the element's measured."""
    def length(text):
        return len(" ".join(text.split()))
    return sum(length(a.text_content()) for a in elem.iterdescendants("a")) / max(length(elem.text_content()), 1)


@given(_BLOCKS)
@example("<html><body><div><a href='/x'> </a><a href='/y'><a href='/z'>z</a></a>text</div></body></html>")
@settings(max_examples=200, deadline=None)
def test_link_density_is_every_links_length_over_the_elements(html):
    reader = _Readability(parse(html))
    reader._html(True)
    for scoring in (False, True):
        reader._link_lengths = {} if scoring else None  # as while readability scores paragraphs
        for elem in reader.html.iter():
            assert reader.get_link_density(elem) == _plain_link_density(elem)


_ARTICLES = st.lists(st.sampled_from([
    "<article>", "</article>", "<div>", "<div itemprop='articleBody'>", "<div class='post'>", "</div>", "<p>",
    "</p>", "<a href='/x'>a link of some words</a>", "<section>", "</section>",
    "A paragraph long enough to count, with a comma, and more words to make it longer still. " * 3,
]), max_size=40).map(lambda pieces: "<html><body>" + "".join(pieces) + "</body></html>")


@given(_ARTICLES)
@example("<html><body><div><article><p>" + "Nested article text, with commas, long. " * 10 + "</p></article>"
         "<p>" + "The best candidate's own text, with commas, long. " * 10 + "</p></div></body></html>")
@example("<html><body><div class='post'><article><p>One, two, three, and four words in a short paragraph."
         "</p></article></div></body></html>")  # an article within the best one, too short to be chosen
@settings(max_examples=300, deadline=None)
def test_the_best_candidate_is_the_one_readability_selects(html):
    reader = _Readability(parse(html))
    reader._html(True)
    candidates = reader.score_paragraphs()
    assert reader.select_best_candidate(candidates) is Document.select_best_candidate(reader, candidates)


# Elements with and without a class or an id (some empty, some unlikely, some saved by a word or by what
# they hold), comments, and code around some.
_CLASSED = st.lists(st.sampled_from([
    "<div class='sidebar'>", "<div id='comments'>", "<div class=''>", "<div id=''>", "<div class='' id=''>",
    "<div class='sidebar main'>", "<div>", "</div>", "<p class='footer'>", "</p>", "<pre>", "</pre>",
    "<code class='sidebar'>c</code>", "<article>", "</article>", "<span id='ad-break'>", "</span>",
    "<!-- a comment -->", "<section class='comment'><main>m</main></section>", "words", "<ul class='share'>",
    "<li class='meta'>", "</li>", "</ul>", "<a href='/x' class='COMMENT'>a</a>",
]), max_size=40).map(lambda pieces: "<html><body class='sidebar'>" + "".join(pieces) + "</body></html>")


class _PlainSteps(_Readability):
    """Our readability with readability's own ``remove_unlikely_candidates``, ``tags`` and
    ``reverse_tags``."""

    remove_unlikely_candidates = Document.remove_unlikely_candidates
    tags = Document.tags
    reverse_tags = Document.reverse_tags


@given(_CLASSED)
@example("<html><body><div class='sidebar'><div id='comments'>c</div></div></body></html>")
@settings(max_examples=300, deadline=None)
def test_unlikely_candidates_go_as_readability_removes_them(html):
    trees = []
    for reader in (_Readability(parse(html)), _PlainSteps(parse(html))):
        reader._html(True)
        reader.remove_unlikely_candidates()
        trees.append(etree.tostring(reader.html))
    assert trees[0] == trees[1]


@given(_BLOCKS)
@settings(max_examples=200, deadline=None)
def test_tags_are_found_as_readability_finds_them(html):
    reader = _Readability(parse(html))
    reader._html(True)
    for node in reader.html.iter():
        for names in (("p",), ("div", "p", "a"), ("table", "ul", "div", "aside", "header", "footer", "section")):
            assert list(reader.tags(node, *names)) == list(_PlainSteps.tags(reader, node, *names))
            assert list(reader.reverse_tags(node, *names)) == list(_PlainSteps.reverse_tags(reader, node, *names))


def test_tags_are_found_when_their_turn_comes_as_readability_finds_them():
    """Each tag's elements are gathered when the previous tag's are done, as readability's are, whatever
    the loop removed meanwhile."""
    html = "<html><body><div><p>a</p></div><p>b</p><div><p>c</p></div></body></html>"
    found = []
    for reader in (_Readability(parse(html)), _PlainSteps(parse(html))):
        reader._html(True)
        seen = []
        for elem in reader.tags(reader.html, "div", "p"):
            seen.append(etree.tostring(elem))
            if elem.tag == "div":
                elem.drop_tree()
        found.append(seen)
    assert found[0] == found[1]


@given(st.text(st.sampled_from("ab, \t\n\r\x0b\x0c\xa0\u2003\u3000\u200b")))
def test_collapsed_length_is_the_length_of_the_words_joined_by_a_space(text):
    words = text.split()
    assert _collapsed_length(text) == sum(map(len, words)) + max(len(words) - 1, 0)
