"""Extraction's shortcuts (issue 26, speed) against the plain code they replace, on generated pages: each
shortcut must decide exactly as the plain reading does, only faster. The plain versions are written here,
as they were before the shortcut, and are the reference."""
from __future__ import annotations

import copy
import re
from collections import Counter
from itertools import chain

from hypothesis import example, given, settings
from hypothesis import strategies as st
from lxml import etree

from webtools.plugins.web_fetch.extract import choice, forum, hidden, listing, page, pagetype
from webtools.plugins.web_fetch.extract.page import WRAPPER_SHARE, parse, text_length

# Pieces of pages: hidden elements (by attribute, style and class), posts' classes and ids, cards,
# buttons and links, scripts, indentation and words.
_PIECES = st.sampled_from([
    "<div>", "</div>", "<div class='hidden'>", "<div class='card item-3'>", "<div class='card item-4 active'>",
    "<li class='post-content'>", "</li>", "<span aria-hidden='true'>", "</span>", "<p hidden>", "</p>",
    "<section style='display:none'>", "<section style='visibility: hidden'>", "</section>",
    "<div class='sr-only x'>", "<div id='post_message_12'>", "<div id='post_message_x'>",
    "<div data-role='commentContent'>", "<div class='message-body'>", "<a href='/p/1'>", "</a>",
    "<button>", "</button>", "<input type='submit' value='Add to cart'>", "<input type='submit' value='Go'>",
    "<script>var add = 'add to cart';</script>", "<style>p{}</style>", "\n    ", "  ", "Add to Cart",
    "add to", " cart", "Buy now", "words of a card", "one two three four five", "[x](y) z", "<b>", "</b>",
    "<h2>The headline here</h2>", "<ul>", "</ul>", "<li>", "<span class='date'>2024-01-02</span>",
    "<form>", "</form>", "<nav>menu</nav>", "<div role='tabpanel' hidden>", "<p id='a1' class='hidden'>",
    "<button aria-controls='a1'>", "<div class='related-posts'>", "<div id='Sidebar'>",
    "<div class='not-footer'>", "<div class='site-footer hidden'>", "<h1>The headline here</h1>",
    "<span aria-hidden='false'>", "<div role='tabpanel' aria-hidden='false' style='display: none'>",
    "<div class='rst-content'>", "<div class='x\ndocumentation'>", "<div class='md-contents'>",
])
PAGES = st.lists(_PIECES, max_size=40).map(lambda pieces: "<html><body>" + "".join(pieces) + "</body></html>")


def _plain_drop_asides(doc) -> None:
    """``drop_asides`` before its shortcut: the class attributes read afresh, nothing returned."""
    asides = [value.getparent() for value in chain(doc.xpath("//body//*/@class"), doc.xpath("//body//*/@id"))
              if hidden._names_aside(value)]
    if not asides:
        return
    total = text_length(doc)
    small = [element for element in asides
             if text_length(element) < WRAPPER_SHARE * total and not hidden._holds_content(element)]
    for element in small:
        if element.getparent() is not None:
            element.drop_tree()


def _plain_hidden_by_class(doc) -> list:
    names = frozenset(hidden.HIDDEN_CLASSES)
    return [value.getparent() for value in doc.xpath("//body//*/@class")
            if hidden._HIDDEN_CLASS_NAME.search(value) and not names.isdisjoint(hidden._XML_SPACE.split(value))]


def _plain_drop_hidden(doc) -> None:
    """``drop_hidden`` before its shortcuts: every marked element's visible text counted, the class
    attributes read again after the asides went, the page's text measured again."""
    marked = []
    shown, seen = hidden.disclosed(doc), []
    for element in doc.xpath("//*[@hidden or @aria-hidden or @style]"):
        style = element.get("style") or ""
        if shown(element):
            # Shown as a click shows it, once for each text.
            text = " ".join(element.text_content().split())
            if text not in seen:
                seen.append(text)
                hiding = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
                if hiding.search(style):
                    element.set("style", hiding.sub("", style))
                for name in ("hidden", "aria-hidden"):
                    if name in element.attrib:
                        del element.attrib[name]
            continue
        if hidden._INVISIBLE_STYLE.search(style):
            if element.getparent() is not None:
                element.drop_tree()
        elif element.get("hidden") is not None or hidden._HIDDEN_STYLE.search(style) \
                or element.get("aria-hidden") == "true":
            marked.append(element)
    _plain_drop_asides(doc)
    marked.extend(element for element in _plain_hidden_by_class(doc) if not shown(element))
    if not marked:
        return
    total = text_length(doc)
    for element in marked:
        if element.getparent() is not None and text_length(element) < WRAPPER_SHARE * total:
            element.drop_tree()


@given(PAGES)
@example("<html><body><div class='hidden'>" + "long text " * 30 + "</div>short</body></html>")
@settings(max_examples=300, deadline=None)
def test_hidden_elements_are_dropped_as_counting_every_one_drops_them(html):
    ours, plain = parse(html), parse(html)
    hidden.drop_hidden(ours)
    _plain_drop_hidden(plain)
    assert etree.tostring(ours) == etree.tostring(plain)


@given(PAGES)
@example("<html><body><div class='x rst-content'><div class='rst-contentx'></div></body></html>")
def test_a_documentation_page_is_told_by_its_classes_searched_joined_or_one_by_one(html):
    doc = parse(html)
    plain = any(pagetype._DOCS_CLASS.search(value) for value in doc.xpath("//body//@class"))
    assert pagetype.documentation_shape(doc) == plain


@given(PAGES)
@example("<html><body><div class='related-posts'>teaser <div id='Sidebar'>bio</div></div>"
         "<p>one two three four five</p> tail</body></html>")
@settings(max_examples=300, deadline=None)
def test_the_text_left_after_the_asides_is_the_text_measured_again(html):
    ours, plain = parse(html), parse(html)
    left = hidden.drop_asides(ours)
    _plain_drop_asides(plain)
    assert etree.tostring(ours) == etree.tostring(plain)
    assert left is None or left == text_length(ours)


def _plain_clean(doc) -> None:
    """``clean`` before its shortcut: every form's visible text counted."""
    forms = list(doc.iter("form"))
    if forms:
        body = doc.find("body")
        total = text_length(body if body is not None else doc)
        for form in forms:
            if form.getparent() is not None and text_length(form) >= WRAPPER_SHARE * total > 0:
                form.drop_tag()
    etree.strip_elements(doc, *page.REMOVED_TAGS, with_tail=False)


@given(PAGES)
@example("<html><body><form>" + "the whole page " * 20 + "</form><p>a footnote</p></body></html>")
@settings(max_examples=300, deadline=None)
def test_forms_are_unwrapped_or_removed_as_counting_every_one_does(html):
    ours, plain = parse(html), parse(html)
    page.clean(ours)
    _plain_clean(plain)
    assert etree.tostring(ours) == etree.tostring(plain)


@given(st.lists(st.one_of(_PIECES, st.sampled_from(["<!-- a comment -->", "<?pi x?>", "<svg><style>x</style></svg>"])),
                max_size=40), st.integers(0, 400))
@example(["a", "<!-- a comment -->", "b c", "<script>var x;</script>", "d"], 0)
@settings(max_examples=300, deadline=None)
def test_the_text_counted_up_to_a_length_is_the_text_counted_whole_or_more_than_it_says(pieces, most):
    doc = parse("<html><head><title>A title</title></head><body>" + "".join(pieces) + "</body></html>")
    for element in (doc, doc.find("body")):
        whole = text_length(element)
        counted = page.text_length_up_to(element, most)
        assert counted == whole or (counted is None and WRAPPER_SHARE * whole > most)


def _plain_word_spans(body):
    tokens, starts, spans = [], {}, {}
    for event, element in etree.iterwalk(body, events=("start", "end")):
        if event == "start":
            starts[element] = len(tokens)
            if element.text and isinstance(element.tag, str):
                tokens.extend(choice.words(element.text))
        else:
            spans[element] = (starts.pop(element), len(tokens))
            if element.tail and element is not body:
                tokens.extend(choice.words(element.tail))
    return tokens, spans


@given(PAGES)
@example("<html><body><h1>Head<b>line</b></h1>tail<div>a<span>b</span>c</div>d</body></html>")
@example("<html><body><div><h2>The headline here</h2><!-- a comment --> after [x](https://t.test/y z) "
         "<?pi no?>tail<p>One <b>two</b></p></div><p>three</p></body></html>")
@settings(deadline=None)
def test_the_words_after_a_heading_are_the_page_words_after_it(html):
    body = parse(html).find("body")
    tokens, spans = _plain_word_spans(body)
    # The reference: each element's span holds the words that element has, as asking it gives them.
    assert tokens == choice.words(" ".join(body.itertext()))
    for element in body.iter():
        start, end = spans[element]
        assert tokens[start:end] == choice.words(" ".join(element.itertext()))
    for heading in body.iterdescendants():
        after = spans[heading][1]
        following, ends = choice._words_after(heading, body)
        assert following == tokens[after:]
        ancestors = list(heading.iterancestors())
        assert ends == {a: spans[a][1] - after for a in ancestors[:ancestors.index(body) + 1]}


def _plain_bodies(doc) -> list:
    marked = [el for el in doc.xpath("//body//*[@itemprop]")
              if forum._is_body_prop(el) and forum._post_scope(el) is not None]
    marked = forum._outermost(marked)
    named = [el for el in doc.xpath("//body//*[@class or @id or @data-role]")
             if forum._BODY_CLASS.search(el.get("class") or "") or forum._BODY_ID.match(el.get("id") or "")
             or el.get("data-role") == "commentContent"]
    named = [el for el in forum._innermost(named) if not forum._in_signature(el)]
    if len(marked) >= forum.MIN_POSTS and not forum._names_more(named, marked):
        return marked
    return named if len(named) >= forum.MIN_POSTS else marked


@given(PAGES)
@settings(max_examples=300, deadline=None)
def test_posts_bodies_are_found_as_searching_every_class_finds_them(html):
    doc = parse(html)
    assert forum._bodies(doc) == _plain_bodies(doc)


def _plain_signature(element) -> tuple:
    classes = listing._DIGITS.sub("", element.get("class") or "").split()
    return element.tag, tuple(sorted(c for c in classes if c not in ("active", "first", "last", "odd", "even")))


def _plain_outside(container, body):
    """``forum._outside`` before its shortcut: each element's ancestors walked to tell whether it is in
    ``body``."""
    inside = []
    for element in container.iter():
        if element is body or not isinstance(element.tag, str):
            continue
        if any(a is body for a in element.iterancestors()):
            inside.append(element)
            continue
        yield element
    yield from inside


@given(PAGES, st.integers(min_value=0, max_value=60), st.integers(min_value=0, max_value=3))
@settings(max_examples=300, deadline=None)
def test_the_elements_around_a_post_are_those_found_by_walking_each_ones_ancestors(html, pick, up):
    doc = parse(html)
    elements = [el for el in doc.iter() if isinstance(el.tag, str)]
    body = elements[pick % len(elements)]
    container = body
    for _ in range(up):  # the container is the body or one of its ancestors
        container = container.getparent() if container.getparent() is not None else container
    assert list(forum._outside(container, body)) == list(_plain_outside(container, body))


@given(PAGES)
@settings(max_examples=300, deadline=None)
def test_cards_are_grouped_by_the_signature_read_afresh_for_each(html):
    known: dict = {}
    for element in parse(html).iter():
        if isinstance(element.tag, str):
            assert listing._signature(element, known) == _plain_signature(element)


def _plain_groups(root):
    """``listing._groups`` before its shortcut: every node of the page asked for its children's groups."""
    from collections import defaultdict

    known: dict = {}
    split = defaultdict(list)
    for parent in root.iter():
        if not isinstance(parent.tag, str):
            continue
        groups = defaultdict(list)
        for child in parent:
            if child.tag in listing.CARD_TAGS:
                groups[listing._signature(child, known)].append(child)
        for signature, items in groups.items():
            if len(items) >= listing.MIN_CARDS:
                yield parent, items
            if signature[1]:
                split[listing._signature(parent, known), signature].append((parent, items))
    for runs in split.values():
        if len(runs) < 2 or sum(len(items) for _, items in runs) < listing.MIN_SPLIT_CARDS:
            continue
        parents = {parent for parent, _ in runs}
        runs = [(parent, items) for parent, items in runs
                if not any(ancestor in parents for ancestor in parent.iterancestors())]
        if len(runs) < 2:
            continue
        items = [item for _, items in runs for item in items]
        if len(items) >= listing.MIN_SPLIT_CARDS:
            yield listing._holding(runs[0][0], runs[-1][0]), items


_CARD_PIECES = st.sampled_from(["<!-- a comment -->", "<br>", "<ul class='row'>", "</ul>",
                                "<li class='card'><a href='/x'>a card</a></li>" * 3])


@given(st.lists(st.one_of(_PIECES, _CARD_PIECES), max_size=40))
@example(["<ul class='row'>", "<li class='card'><a href='/x'>a card</a></li>" * 3, "</ul>"] * 4)
@settings(max_examples=300, deadline=None)
def test_cards_are_grouped_as_asking_every_node_groups_them(pieces):
    doc = parse("<html><body>" + "".join(pieces) + "</body></html>")
    assert list(listing._groups(doc)) == list(_plain_groups(doc))


@given(PAGES, st.sampled_from(["", "one two three four five", "words of a card"]))
@settings(max_examples=50, deadline=None)
def test_the_page_words_counted_once_are_the_page_words(html, text):
    from webtools.plugins.web_fetch.extract import _not_an_article, fuller_reading

    body = parse(html).find("body")
    count = len(choice.words(body.text_content()))
    options = {"include_image_urls": False, "title": None, "page_url": "https://t.test/"}
    for article, traf in (("", text), (text, "other words entirely here"), (text, text)):
        assert _not_an_article(article, traf, text, body, "The headline here", lambda: count) \
            == _not_an_article(article, traf, text, body, "The headline here")
    # The fuller reading parses the page again: on these small pages it never replaces the text.
    assert fuller_reading(html, "https://t.test/", options, text, copy.deepcopy(body), lambda: count) \
        == fuller_reading(html, "https://t.test/", options, text, copy.deepcopy(body))


# Blocks that lead a quote (long text ending with a colon, then a block holding a <blockquote>), and ones
# that nearly do: short, no colon, a colon then spaces, the quote not in the next block.
_QUOTES = st.lists(st.sampled_from([
    "<div>", "</div>", "<section>", "</section>", "<p>", "</p>", "<blockquote>q</blockquote>",
    "He said, at length and in more than twenty-five characters:", "short:", "no colon at all here, many words",
    ":  \n\t ", "<ul><li>x</li></ul>", "<span>", "</span>",
]), max_size=30).map(lambda pieces: "<html><body>" + "".join(pieces) + "</body></html>")


@given(_QUOTES)
@example("<html><body><div><div>He said, at length and in more than twenty-five characters:</div>"
         "<div><blockquote>q</blockquote></div></div></body></html>")
@example("<html><body><div><div>He said, at length and in more than twenty-five characters: \n\t</div>"
         "<section><p>x</p><blockquote>q</blockquote></section></div></body></html>")
@settings(max_examples=300, deadline=None)
def test_quote_leads_are_the_ones_readability_itself_keeps(html):
    from webtools._vendor.readability import Document

    from webtools.plugins.web_fetch.extract.candidates import _Readability

    reader = _Readability(parse(html))
    reader._html(True)
    ours = reader.get_preserved_elements(reader.html)
    assert reader._quote_leads is None
    # readability's own judgement of each block (its ``is_quote_lead``, not ours).
    node = reader.html
    theirs = [elem for elem in reader.tags(node, "ul") if reader.is_toc_list(elem)]
    theirs += [elem for elem in reader.tags(node, "div", "section") if Document.is_quote_lead(reader, elem)]
    assert list(ours) == list(dict.fromkeys(theirs))


@given(st.text(alphabet="](<>htps:/ \n()x.", max_size=40) | st.text(max_size=20))
@example("[a](https://t.test/x) and <https://t.test/y>")
@example("](x(y\nz))")
def test_what_a_reader_sees_is_the_text_without_its_urls_searched_or_not(markdown):
    assert choice._seen(markdown) == choice._URL.sub("]", markdown)


@given(st.text(alphabet="ab c[]()/:\n", max_size=60))
@example("[a b](https://t.test/c) c")
def test_the_remembered_words_of_a_text_are_its_words(markdown):
    assert list(choice.text_words(markdown)) == choice.words(markdown)  # outside an extraction
    with choice.remembering_words():
        first = choice.text_words(markdown)
        assert list(first) == choice.words(markdown)
        assert choice.text_words(markdown) is first  # asked again: remembered


@given(st.text(alphabet="ab c[]()/:\n#-|`", max_size=80))
@example("# Head\n\n- [a b](https://t.test/c) c\n\nfour words in prose")
@example("```\na\n\nb\n```\n\nc")
def test_the_remembered_blocks_of_a_text_are_its_blocks(markdown):
    assert choice.blocks(markdown) == choice._blocks(markdown)  # outside an extraction
    with choice.remembering_words():
        first = choice.blocks(markdown)
        assert first == choice._blocks(markdown)
        assert choice.blocks(markdown) is first  # asked again: remembered
    assert choice._REMEMBERED.get() is None  # and forgotten after it


@given(st.text(alphabet="ab c[]()/:\n#-|`", max_size=80))
@example("[a](https://t.test/x(y\n\nz)) b")  # a URL across a blank line: its words are read from the text
@example("```\na b\n\nc\n```\n\n[d](https://t.test/e) f")
def test_the_words_of_a_text_whose_blocks_were_read_are_its_words(markdown):
    with choice.remembering_words():
        choice.blocks(markdown)
        assert list(choice.text_words(markdown)) == choice.words(markdown)


_WORDS = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=30)


@given(_WORDS, _WORDS)
def test_the_overlap_with_a_text_counted_once_is_the_overlap_with_its_words(text, card):
    plain = sum((Counter(text) & Counter(card)).values())
    assert listing._overlap(text, card) == listing._overlap(Counter(text), card) == plain


_ARTICLE_WORDS = st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=90, max_size=160)


@given(_ARTICLE_WORDS, st.lists(_ARTICLE_WORDS | _WORDS, max_size=5))
def test_a_card_holding_the_article_is_found_as_counting_every_card_finds_it(text, cards):
    from types import SimpleNamespace

    plain = len(text) >= listing.ARTICLE_WORDS and any(
        sum((Counter(text) & Counter(card)).values()) >= listing.ONE_CARD * len(text) for card in cards)
    assert listing._one_card_article(SimpleNamespace(items=cards), text, lambda card: card) == plain


# Pieces of trafilatura's converted trees: elements its discard expressions match (navigation, hidden,
# messages), nested in each other and in elements they do not, with text of several lengths.
_PRUNED_PIECES = st.sampled_from([
    "<div>", "</div>", "<div role='navigation'>", "<section class='message'>", "</section>",
    "<p id='hidden-note'>", "</p>", "<span style='display:none'>", "</span>", "<list class='nav'>", "</list>",
    "<item>", "</item>", "<div aria-hidden='true'>", "text", "a longer run of words in the page", "<hi>", "</hi>",
])


@given(st.lists(_PRUNED_PIECES, max_size=40))
@example(["<div role='navigation'>", "<div>", "<section class='message'>", "short", "</section>", "</div>",
          "</div>", "a longer run of words in the page"])
@settings(max_examples=300, deadline=None)
def test_trafilatura_prunes_the_outermost_matches_as_testing_each_ancestor_does(pieces):
    from trafilatura.htmlprocessing import prune_unwanted_nodes
    from trafilatura.xpaths import OVERALL_DISCARD_XPATH

    from webtools.plugins.web_fetch.extract.trafilatura_reading import _prune_unwanted_nodes

    html = "<html><body><div>" + "".join(pieces) + "</div></body></html>"
    ours, theirs = parse(html), parse(html)
    for with_backup in (True, False):
        _prune_unwanted_nodes(ours, OVERALL_DISCARD_XPATH, with_backup=with_backup)
        prune_unwanted_nodes(theirs, OVERALL_DISCARD_XPATH, with_backup=with_backup)
        assert etree.tostring(ours) == etree.tostring(theirs)


def test_trafilatura_prunes_faster_only_within_our_call_and_only_the_version_checked(monkeypatch):
    import sys

    import trafilatura
    from trafilatura import core, htmlprocessing, main_extractor, xpaths
    from trafilatura import settings as trafilatura_settings

    from webtools.plugins.web_fetch.extract import trafilatura_reading

    assert trafilatura.__version__ == trafilatura_reading.TRAFILATURA_CHECKED  # requirements.txt pins it
    calls = []
    real = trafilatura_reading._prune_unwanted_nodes
    monkeypatch.setattr(trafilatura_reading, "_prune_unwanted_nodes",
                        lambda *args, **kw: calls.append(1) or real(*args, **kw))
    html = ("<html><body><nav>Home</nav><article><p>" + "Tides rise and fall twice a day. " * 20
            + "</p></article></body></html>")
    article = trafilatura_reading.trafilatura_article(parse(html), "https://t.test/")
    assert "Tides rise" in etree.tostring(article, encoding=str)
    assert calls  # ours pruned
    assert main_extractor.prune_unwanted_nodes is htmlprocessing.prune_unwanted_nodes  # and trafilatura's is back
    assert core.prune_unwanted_nodes is htmlprocessing.prune_unwanted_nodes
    assert core._prepare_tree is not trafilatura_reading._prepare_tree
    assert core.extract_content is main_extractor.extract_content
    assert core.load_html is trafilatura.utils.load_html
    assert core.baseline is trafilatura.baseline  # the package's ``baseline`` is its function
    assert main_extractor.prune_unwanted_sections is not trafilatura_reading._prune_unwanted_sections
    assert main_extractor.BODY_XPATH is xpaths.BODY_XPATH
    assert sys.modules["trafilatura.baseline"].BASIC_CLEAN_XPATH is trafilatura_settings.BASIC_CLEAN_XPATH
    assert sys.modules["trafilatura.baseline"].remove_control_characters is trafilatura.utils.remove_control_characters
    assert trafilatura.utils.remove_control_characters is not trafilatura_reading._remove_control_characters
    calls.clear()
    monkeypatch.setattr(trafilatura, "__version__", "9.0")  # another trafilatura: its own code runs
    trafilatura_reading.trafilatura_article(parse(html), "https://t.test/")
    assert not calls


def test_extractions_in_threads_give_what_each_gives_alone_and_leave_trafilatura_as_installed():
    from concurrent.futures import ThreadPoolExecutor

    from trafilatura import htmlprocessing, main_extractor

    from webtools.plugins.web_fetch.extract import extract

    pages = [
        "<html><body><nav role='navigation'>Home News</nav><div class='content'>"
        + "".join(f"<p>Paragraph {n} of page {i}: tides rise and fall twice a day along the coast.</p>"
                  for n in range(3 + i % 5))
        + "<div class='message'>Sign up</div></div><footer>Footer</footer></body></html>"
        for i in range(24)
    ]
    alone = [extract(html, f"https://t.test/{i}") for i, html in enumerate(pages)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda item: extract(item[1], f"https://t.test/{item[0]}"), enumerate(pages)))
    assert together == alone
    assert main_extractor.prune_unwanted_nodes is htmlprocessing.prune_unwanted_nodes


# Elements with the attributes trafilatura's expressions test, in either order, with values that they match
# (navigation, comments, hidden, cookie banners, the article's container) and values that they do not.
_ATTRIBUTE_VALUES = st.sampled_from([
    "", "x", "hidden", "nav", "main-nav", "comments-title", "reply-1", "cookie-banner", "CookieBanner", "post",
    "entry", "content-main", "main", "story", "FullText", "disqus_thread", "comments", "mvp-post-add-box",
    "infinite-scroll", "share-buttons", "teaser", "display:none", "akismet", "message", "article-body", "footer",
    "MostPopularStories", "reply-x", "x hidden", "hide-print", "display: none", "true", "reader-comments",
    "comment-list", "Comments", "commentary", "post-comments", "comol", "mvp-post-add-box", "x infinitescroll",
    "elementor-share-buttons x", "HomeTeaser", "wp-caption", "Caption",
])
_TAGGED = st.tuples(
    st.sampled_from(["div", "section", "article", "main", "p", "span", "list", "item", "ul", "ol", "aside",
                     "details"]),
    st.lists(st.tuples(st.sampled_from(["id", "class", "style", "role", "aria-hidden", "data-component",
                                        "data-lp-replacement-content"]), _ATTRIBUTE_VALUES),
             max_size=3),
    st.sampled_from(["", "words", "<h1>Title</h1>"]),
)


def _tagged_page(elements) -> str:
    parts = []
    for tag, attributes, inner in elements:
        written = " ".join(f'{name}="{value}"' for name, value in dict(attributes).items())
        parts.append(f"<{tag} {written}>{inner}" if len(parts) % 3 else f"<{tag} {written}>{inner}</{tag}>")
    return "<html><body><div>" + "".join(parts) + "</div></body></html>"


@given(st.lists(_TAGGED, max_size=25))
@example([("div", [("class", "x"), ("id", "hidden")], "words"), ("section", [("id", "x"), ("class", "nav")], "")])
@settings(max_examples=300, deadline=None)
def test_trafilatura_expressions_guarded_find_what_they_find(elements):
    from trafilatura import settings as trafilatura_settings
    from trafilatura import xpaths

    from webtools.plugins.web_fetch.extract.trafilatura_reading import _guarded

    doc = parse(_tagged_page(elements))
    expressions = [trafilatura_settings.BASIC_CLEAN_XPATH, *xpaths.BODY_XPATH, *xpaths.OVERALL_DISCARD_XPATH,
                   *xpaths.RAW_TREE_PRUNE_XPATH, *xpaths.REMOVE_COMMENTS_AND_LISTS_XPATH,
                   *xpaths.REMOVE_COMMENTS_XPATH, *xpaths.TEASER_DISCARD_XPATH, *xpaths.COMMENTS_DISCARD_XPATH]
    for expression in expressions:
        assert _guarded(expression)(doc) == expression(doc), expression.path


def _plain_prepare_tree(tree, options, url):
    """trafilatura 2.3.1's ``core._prepare_tree``: the cleaned page copied whatever the mode."""
    from trafilatura import core

    cleaned = core.tree_cleaning(copy.copy(tree), options)
    backup = copy.copy(cleaned)
    return core.convert_tags(cleaned, options, url), backup


@given(st.lists(_TAGGED | _PIECES.map(lambda piece: ("", [], piece)), max_size=30), st.booleans())
@settings(max_examples=100, deadline=None)
def test_trafilatura_reads_a_page_without_the_copy_it_never_reads_as_with_it(elements, fast):
    from webtools.plugins.web_fetch.extract import trafilatura_reading

    html = _tagged_page([element for element in elements if element[0]]).replace(
        "</div></body>", "".join(element[2] for element in elements if not element[0]) + "</div></body>")
    html = html.replace("<div>", "<div>" + "<p>Tides rise and fall twice a day along the coast.</p>" * 3, 1)
    ours = trafilatura_reading.trafilatura_article(parse(html), "https://t.test/", fast=fast)
    real = trafilatura_reading._prepare_tree
    try:
        trafilatura_reading._prepare_tree = _plain_prepare_tree
        plain = trafilatura_reading.trafilatura_article(parse(html), "https://t.test/", fast=fast)
    finally:
        trafilatura_reading._prepare_tree = real
    assert (ours is None and plain is None) or etree.tostring(ours) == etree.tostring(plain)


def _plain_absolutize(element, base) -> None:
    """``absolutize``'s links before the shortcut: each one resolved afresh (images' lazy addresses aside)."""
    from urllib.parse import urljoin

    for el in element.iter("a", "img"):
        attr = page.LINK_ATTRIBUTES[el.tag]
        link = el.get(attr)
        if link is None:
            continue
        try:
            new = urljoin(base, link.strip())
        except ValueError:
            del el.attrib[attr]
            continue
        if new != link:
            el.set(attr, new)


_LINKS = st.lists(st.sampled_from(["a", "../b", "/c", " d ", "#e", "http://[x", "https://t.test/f", "", "?g", "//h/i"]),
                  max_size=8)


@given(_LINKS, st.sampled_from(["https://t.test/dir/page", "https://u.test/", "http://[bad"]))
@settings(max_examples=200, deadline=None)
def test_links_resolved_once_per_extraction_are_the_links_resolved_each_time(links, other_base):
    html = "<html><body>" + "".join(
        f'<div><a href="{link}">x</a><img src="{link}"></div>' for link in links) + "</body></html>"
    ours, plain = parse(html), parse(html)
    with page.remembering_links():
        for n, (mine, reference) in enumerate(zip(ours.iter("div"), plain.iter("div"))):
            base = "https://t.test/dir/page" if n % 2 else other_base
            page.absolutize(mine, base)
            page.absolutize(mine, base)  # again, as an extraction does to its lead region
            _plain_absolutize(reference, base)
            _plain_absolutize(reference, base)
    assert etree.tostring(ours) == etree.tostring(plain)


@given(st.lists(_TAGGED, max_size=25))
@example([("div", [("class", "x"), ("id", "cookie")], "words"), ("span", [("id", "x"), ("class", "cookie")], ""),
          ("p", [("role", "Navigation")], "")])
@example([("ul", [("id", "disqus_thread")], "words"), ("ol", [("class", "x"), ("id", "comol")], "")])
@example([("div", [("id", "infinite-scroll")], "<h1>Title</h1>"), ("aside", [("class", "infinitescroll")], "x")])
@example([("item", [("id", "HomeTeaser")], "x"), ("span", [("class", "wp-caption")], ""),
          ("list", [("id", "Caption"), ("class", "teaser")], "")])
@settings(max_examples=300, deadline=None)
def test_trafilatura_discard_expressions_read_in_python_find_what_they_find(elements):
    from trafilatura import xpaths

    from webtools.plugins.web_fetch.extract.trafilatura_prunes import prune_expression

    doc = parse(_tagged_page(elements))
    for expression in [*xpaths.OVERALL_DISCARD_XPATH, *xpaths.REMOVE_COMMENTS_AND_LISTS_XPATH,
                       *xpaths.RAW_TREE_PRUNE_XPATH, *xpaths.TEASER_DISCARD_XPATH, *xpaths.DISCARD_IMAGE_ELEMENTS]:
        assert prune_expression(expression)(doc) == expression(doc), expression.path


#: Elements of the tags trafilatura's baseline removes (``settings.BASIC_CLEAN_XPATH``), beside ``_TAGGED``'s.
_BASELINE_TAGGED = st.tuples(
    st.sampled_from(["aside", "footer", "script", "style", "svg", "template", "div", "span"]),
    st.lists(st.tuples(st.sampled_from(["id", "class"]), st.sampled_from(
        ["", "x", "site-footer", "footer x", "cookie-banner", "CookieBanner", "Cookie_Notice", "onetrust-x",
         "consent-manager", "cookies"])), max_size=2),
    st.sampled_from(["", "words", "<span class='cookie-bar'>x</span>"]),
)


@given(st.lists(_TAGGED | _BASELINE_TAGGED, max_size=25))
@example([("div", [("id", "x"), ("class", "footer")], "words"), ("div", [("class", "x"), ("id", "footer")], ""),
          ("aside", [], "<span class='cookie-bar'>x</span>"), ("span", [("id", "CookieBanner")], "")])
@settings(max_examples=300, deadline=None)
def test_trafilaturas_baseline_cleaning_read_in_python_finds_what_it_finds(elements):
    from trafilatura import settings as trafilatura_settings

    from webtools.plugins.web_fetch.extract.trafilatura_prunes import prune_expression

    doc = parse(_tagged_page(elements))
    expression = trafilatura_settings.BASIC_CLEAN_XPATH
    assert prune_expression(expression)(doc) == expression(doc)


@given(st.sampled_from(["", "<meta name='x' style='display:none'>", "<title hidden>t</title>"]),
       st.sampled_from(["<body>", "<body style='color: red' class='a' id='b'>", "<body hidden aria-controls='a1'>"]),
       st.lists(_PIECES, max_size=40),
       st.sampled_from(["", "</body><p class='late'>after</p>", "</body></html><!-- x -->"]))
@example("<title hidden>t</title>", "<body hidden aria-controls='a1'>", ["<p id='a1' class='hidden'>", "x"], "")
@settings(max_examples=300, deadline=None)
def test_the_attributes_read_in_one_walk_are_those_the_expressions_find(head, body, pieces, end):
    html = f"<html><head>{head}</head>{body}" + "".join(pieces) + end
    doc = parse(html)
    read = hidden._read_attributes(doc)
    assert read is not None or doc.find("body") is None or doc.find("body").getnext() is not None
    if read is not None:
        assert read.maybe_hidden == hidden._MAYBE_HIDDEN(doc)
        assert sorted(read.controls) == sorted(hidden._CONTROLS(doc))
        assert read.classes == hidden._with_elements(hidden._BODY_CLASSES(doc))
        assert read.ids == hidden._with_elements(hidden._BODY_IDS(doc))


@given(st.lists(st.sampled_from(["id", "class", "style", "role", "x"]), unique=True),
       st.sampled_from([("id", "class"), ("id", "style"), ("class", "id")]))
@example(["class", "x", "id"], ("id", "class"))
def test_the_first_of_two_attributes_is_the_first_named(names, pair):
    from webtools.plugins.web_fetch.extract.trafilatura_prunes import first_of

    one, other = pair
    assert first_of(names, one, other) == next((name for name in names if name in pair), None)


# Pieces of trafilatura's converted trees for its deletion by link density: blocks and lists nested in each
# other, links of short and long text, paragraphs in items and cells, images, text of several lengths.
_LINK_DENSITY_PIECES = st.sampled_from([
    "<div>", "</div>", "<list>", "</list>", "<item>", "</item>", "<p>", "</p>", "<ref>", "</ref>",
    "<cell>", "</cell>", "<head>", "</head>", "<quote>", "</quote>", "<span>", "</span>", "<graphic/>",
    "<table><row><cell><ref>a link in a table</ref></cell></row></table>",
    "Home", "short", "a longer run of words in the page, about tides and the coast",
    "<ref>Latest news</ref>", "<ref>a link of some seventy characters about the tides along the coast here</ref>",
    "<ref>a much longer link whose text runs past a hundred characters, as a teaser's "
    "headline and its first sentence do in a rail</ref>",
])


@given(st.lists(_LINK_DENSITY_PIECES, max_size=50), st.sampled_from(["balanced", "precision", "recall"]),
       st.booleans(), st.booleans())
@example(["<div>", "<div>", "<p>", "<ref>Latest news</ref>", "</p>", "<div>", "<ref>Home</ref>", "</div>",
          "<list>", "<item>", "<ref>Home</ref>", "</item>", "</list>", "</div>", "a longer run of words in the page, "
          "about tides and the coast", "</div>"], "balanced", True, False)
@example(["<div>", "<ref>a link of some seventy characters about the tides along the coast here</ref>",
          "<ref>a link of some seventy characters about the tides along the coast here</ref>", "and more",
          "</div>", "<div>", "<ref>Home</ref>", "</div>"], "balanced", True, False)  # the first div goes once the
# second went: nothing follows it then
@settings(max_examples=400, deadline=None)
def test_trafilatura_deletes_by_link_density_as_its_two_full_rounds_do(pieces, focus, links, tables):
    from trafilatura import main_extractor
    from trafilatura.settings import Extractor

    from webtools.plugins.web_fetch.extract.trafilatura_reading import _prune_unwanted_sections

    options = Extractor(precision=focus == "precision", recall=focus == "recall")
    potential = {"p", "list", "item", "head", "div", *(["ref"] if links else []),
                 *(["table", "row", "cell"] if tables else [])}
    html = "<html><body><div>" + "".join(pieces) + "</div><p>after</p></body></html>"
    ours, theirs = parse(html), parse(html)
    _prune_unwanted_sections(ours.find("body")[0], set(potential), options)
    main_extractor.prune_unwanted_sections(theirs.find("body")[0], set(potential), options)
    assert etree.tostring(ours) == etree.tostring(theirs)


# Elements with the attributes trafilatura's expressions of the article's container test, with values that
# match one of them (exactly, by pattern, by case or by prefix) and values that do not.
_CONTAINER_VALUES = st.sampled_from([
    "", "x", "post", "entry", "articleBody", "articleContent", "article-body", "post-text", "article", "story",
    "postarea", "text", "cell", "primary", "x primary", "FullText", "fulltext-x", "article x", "single-post",
    "content", "content-main", "contentBody", "Main-Content", "MAIN-CONTENT", "x main-Content", "Page-Content",
    "PAGE-CONTENT", "main", "mainbar", "x main", "Main", "page-content", "story-body", "field-body",
])
_CONTAINER = st.tuples(
    st.sampled_from(["div", "section", "article", "main", "p", "span", "aside"]),
    st.lists(st.tuples(st.sampled_from(["id", "class", "role", "itemprop"]), _CONTAINER_VALUES), max_size=3),
    st.sampled_from(["", "words"]),
)


@given(st.lists(_CONTAINER, max_size=25))
@example([("div", [("class", "Main-Content")], ""), ("main", [], "words")])
@example([("section", [("role", "mainly")], ""), ("article", [("class", "x FullText")], "")])
@settings(max_examples=400, deadline=None)
def test_trafilatura_expressions_of_the_container_read_in_python_find_what_they_find_first(elements):
    from trafilatura import xpaths

    from webtools.plugins.web_fetch.extract.trafilatura_body import body_expression

    doc = parse(_tagged_page(elements))
    for expression in xpaths.BODY_XPATH:
        assert body_expression(expression) is not None, expression.path
        assert body_expression(expression)(doc) == expression(doc)[:1], expression.path


def _plain_names_aside(value: str) -> bool:
    """``hidden._names_aside`` before the shortcut: its pattern searched case-insensitively."""
    if not hidden._ASIDE_NAME.search(value):
        return False
    names = hidden._NAME_WORDS.split(value.lower())
    return not hidden.ASIDE_NAMES.isdisjoint(names) and "not" not in names


@given(st.lists(st.sampled_from(["related", "Sidebar", "FOOTER", "ſidebar", "K", "not", "-", "_", " ", "x", "é",
                                 "side", "bar", "foot", "er", "rel", "ated", "\u212a"]), max_size=8).map("".join))
@example("site-footer__inner")
@example("ſidebar x related")
def test_a_class_names_an_aside_as_searching_it_case_insensitively_says(value):
    assert hidden._names_aside(value) == _plain_names_aside(value)


@given(PAGES)
@settings(max_examples=200, deadline=None)
def test_asides_judged_once_per_value_are_the_asides_judged_for_each_element(html):
    ours, plain = parse(html), parse(html)
    hidden.drop_asides(ours)
    classes = hidden._with_elements(hidden._BODY_CLASSES(plain))
    ids = hidden._with_elements(hidden._BODY_IDS(plain))
    original = hidden._names_aside
    try:
        hidden._names_aside = _plain_names_aside
        hidden.drop_asides(plain, classes, ids)
    finally:
        hidden._names_aside = original
    assert etree.tostring(ours) == etree.tostring(plain)


_CONTROL_CHARACTERS = "ab \n\t\r\x0b\x1f\x00\x07\x85\xa0\u2028\u200b\u00ad\ufeff\ue000é"


@given(st.text(alphabet=st.sampled_from(_CONTROL_CHARACTERS), max_size=30) | st.text(max_size=30))
@example("a\n\tb")
@example("a\nb\x07")
@example("\u200b\n")
def test_control_characters_are_removed_as_trafilatura_removes_them(string):
    from trafilatura import utils

    from webtools.plugins.web_fetch.extract.trafilatura_reading import _remove_control_characters

    assert utils.remove_control_characters is not _remove_control_characters  # trafilatura's own, outside our call
    assert _remove_control_characters(string) == utils.remove_control_characters(string)


#: Texts of words, punctuation, spaces of every kind, underscores, Markdown links and letters whose lowercase
#: is no longer one letter (the capital I with a dot above).
_WORDY = st.lists(st.one_of(
    st.text(max_size=12), st.sampled_from([" ", "\n", "\u00a0", "\u2003", "_", "İstanbul", "ŞİŞLİ", "don't",
                                           "a_b", "[a link](https://x.org/a_b (c))", "<https://x.org>", "x](y",
                                           "Ⅻ", "½", "٣", "e\u0301", "ß", "ﬁ"])), max_size=40).map("".join)


@given(_WORDY)
@example("İstanbul, a_b [the link](https://x.org/a_b) -- ½ Ⅻ")
@settings(max_examples=500, deadline=None)
def test_words_counted_without_their_list_are_the_words_listed(text):
    assert choice.word_count(text) == len(choice.words(text))
    with choice.remembering_words():
        choice.text_words(text)
        assert choice.word_count(text) == len(choice.words(text))


def test_trafilatura_last_resort_reading_of_the_whole_page_keeps_its_lines():
    """trafilatura's baseline, when its extraction reads too little, gives the page's text runs in one paragraph
    joined by line breaks, which Markdown makes one line: they stay lines, the words as they were."""
    from webtools.plugins.web_fetch.extract.markdown import element_markdown
    from webtools.plugins.web_fetch.extract import trafilatura_copies, trafilatura_reading

    items = "".join(f"<li><a href='/p{i}'>Lamp model {i}</a> <span>${i}9.00</span></li>" for i in range(12))
    html = f"<html><head><title>Lamps</title></head><body><ul>{items}</ul></body></html>"
    article = trafilatura_reading.trafilatura_article(parse(html), "https://shop.test/")
    paragraph = article.find("p")
    assert [br.tail for br in paragraph.iter("br")][:3] == ["$09.00", "Lamp model 1", "$19.00"]
    assert element_markdown(article).splitlines()[:2] == ["Lamp model 0", "$09.00"]
    real = trafilatura_copies.baseline
    try:
        trafilatura_copies.baseline = lambda tree: trafilatura_copies.OWN["baseline"](tree)  # its own
        plain = trafilatura_reading.trafilatura_article(parse(html), "https://shop.test/")
    finally:
        trafilatura_copies.baseline = real
    assert not list(plain.iter("br"))
    assert " ".join(plain.itertext()).split() == " ".join(article.itertext()).split()


def test_trafilatura_steps_stay_ours_until_the_last_call_within_them_ends():
    """A call in another thread that ends while ours runs must not put trafilatura's own steps back under ours:
    its own load_html cannot read the page we hand it, and its own pruning would change our page."""
    import threading

    import trafilatura
    from trafilatura import core, htmlprocessing

    from webtools.plugins.web_fetch.extract import trafilatura_copies, trafilatura_reading

    html = "<html><body><article><p>" + "Tides rise and fall twice a day. " * 20 + "</p></article></body></html>"
    with trafilatura_reading._faster_trafilatura() as faster:
        assert faster
        other = []
        thread = threading.Thread(target=lambda: other.append(
            trafilatura_reading.trafilatura_article(parse(html), "https://t.test/")))
        thread.start()
        thread.join()
        assert "Tides rise" in etree.tostring(other[0], encoding=str)
        assert core.load_html is trafilatura_copies.load_html
        assert core.prune_unwanted_nodes is trafilatura_reading._prune_unwanted_nodes
        doc = parse(html)
        before = etree.tostring(doc)
        assert "Tides rise" in etree.tostring(trafilatura_reading.trafilatura_article(doc, "https://t.test/"),
                                              encoding=str)
        assert etree.tostring(doc) == before
    assert core.load_html is trafilatura.utils.load_html
    assert core.prune_unwanted_nodes is htmlprocessing.prune_unwanted_nodes


@given(st.lists(_TAGGED | _PIECES.map(lambda piece: ("", [], piece)), max_size=30), st.booleans())
@example([("div", [("id", "comments")], "words"), ("section", [("class", "x infinitescroll")], "")], True)
@settings(max_examples=150, deadline=None)
def test_trafilatura_reads_our_page_uncopied_as_its_copy_and_leaves_it_as_it_was(elements, fast):
    from webtools.plugins.web_fetch.extract import trafilatura_copies, trafilatura_reading

    html = _tagged_page([element for element in elements if element[0]]).replace(
        "</div></body>", "".join(element[2] for element in elements if not element[0]) + "</div></body>")
    html = html.replace("<div>", "<div>" + "<p>Tides rise and fall twice a day along the coast.</p>" * 3, 1)
    doc = parse(html)
    before = etree.tostring(doc)
    ours = trafilatura_reading.trafilatura_article(doc, "https://t.test/", fast=fast)
    assert etree.tostring(doc) == before
    real = trafilatura_copies.load_html, trafilatura_copies.remember_preparation
    try:
        # trafilatura's own: the page it is given copied first, and its main extractor's copy always made
        trafilatura_copies.load_html = lambda content, *args, **kwargs: copy.copy(content.doc)
        trafilatura_copies.remember_preparation = lambda prepared, again: None
        plain = trafilatura_reading.trafilatura_article(parse(html), "https://t.test/", fast=fast)
    finally:
        trafilatura_copies.load_html, trafilatura_copies.remember_preparation = real
    assert (ours is None and plain is None) or etree.tostring(ours) == etree.tostring(plain)


@given(st.lists(_TAGGED | _PIECES.map(lambda piece: ("", [], piece)), max_size=30), st.booleans())
@example([("p", [], "words"), ("", [], "<b>"), ("", [], "one two three four five")], True)
@settings(max_examples=150, deadline=None)
def test_trafilatura_main_extractor_prepares_the_page_again_as_it_copies_it(elements, recall):
    from trafilatura import core, main_extractor
    from trafilatura.settings import Extractor

    from webtools.plugins.web_fetch.extract import trafilatura_copies

    html = _tagged_page([element for element in elements if element[0]]).replace(
        "</div></body>", "".join(element[2] for element in elements if not element[0]) + "</div></body>")
    options = Extractor(output_format="xml", fast=True, comments=False, tables=True, formatting=True, links=True,
                        recall=recall)
    tree = parse(html)

    def prepared():
        return core.convert_tags(core.tree_cleaning(copy.copy(tree), options), options, None)

    token = trafilatura_copies.preparing()
    try:
        page = prepared()
        trafilatura_copies.remember_preparation(page, prepared)
        body, text = trafilatura_copies.extract_content(page, options)
    finally:
        trafilatura_copies.done(token)
    their_body, their_text = main_extractor.extract_content(prepared(), options)
    assert (etree.tostring(body), text) == (etree.tostring(their_body), their_text)


_DESCENDANT_PIECES = st.sampled_from([
    "<div>", "</div>", "<section itemtype='https://schema.org/Product'>", "</section>", "<span itemprop='author'>",
    "</span>", "<a rel='author' href='/a'>", "</a>", "<div itemtype='https://schema.org/Offer' itemprop='x'>",
    "<script type='application/ld+json'>{}</script>", "<meta property='og:price:amount' content='1'>",
    "<button>Buy</button>", "<input type='submit' value='Go'>", "<p class='x' id='y' data-role='z'>", "</p>",
    "<body>", "</body>", "words",
])


@given(st.lists(_DESCENDANT_PIECES, max_size=30), st.booleans())
@example(["<section itemtype='https://schema.org/Product'>", "<div itemtype='https://schema.org/Offer' itemprop='x'>",
          "<a rel='author' href='/a'>", "<button>Buy</button>"], True)
@settings(max_examples=200, deadline=None)
def test_expressions_reading_descendants_find_what_their_double_slash_found(pieces, in_head):
    from webtools.plugins.web_fetch.extract import metadata

    parts = "".join(pieces)
    doc = parse(f"<html><head>{parts if in_head else ''}</head><body>{parts}</body></html>")
    pairs = [
        (metadata.JSON_LD_SCRIPTS, "//script[@type='application/ld+json']"),
        (metadata._MARKED_AUTHORS, "//*[@rel='author' or @itemprop='author']"),
        (pagetype._OUTER_ITEMS, "//*[@itemtype][not(ancestor::*[@itemtype])]"),
        (pagetype._PRODUCT_ITEMS, "//*[@itemtype][contains(@itemtype, 'schema.org/Product')]"),
        (pagetype._PRICE_META, "//meta[@property='product:price:amount' or @property='og:price:amount']"),
        (pagetype._BUTTONS, "//body//button|//body//input[@type='submit']|//body//a"),
        (forum._NAMED, "//body//*[@class or @id or @data-role]"), (forum._PROPS, "//body//*[@itemprop]"),
    ]
    for element in (doc, doc.find("body")):
        if element is None:  # a stray <body> in the head can leave the page none
            continue
        for ours, theirs in pairs:
            assert ours(element) == element.xpath(theirs), theirs


@given(st.lists(_PIECES | st.sampled_from(["<!-- a comment -->", "<?php echo 1 ?>", "&nbsp;", "&unknown;", "</body>"]),
                max_size=40))
@example(["<!-- a comment -->", "<?php echo 1 ?>", "&unknown;"])
@settings(max_examples=200, deadline=None)
def test_the_elements_counted_by_libxml2_are_those_iter_walks(pieces):
    doc = parse("<html><body>" + "".join(pieces) + "</body></html>")
    assert page.element_count(doc) == sum(1 for _ in doc.iter())
