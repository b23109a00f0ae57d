"""trafilatura's expressions of what it prunes from the page (its discard, hidden-element, comment, infinite-scroll,
share-button, teaser and caption expressions) read in Python, for ``trafilatura_reading._prune_unwanted_nodes``: the
same elements in the same order, cheaper than libxml2's evaluation, which handed each element walked to Python for
each regular expression test (lxml's EXSLT functions) and built a node set for each ``self::`` test. A test holds
each to trafilatura's own (tests/test_extract_shortcuts.py).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from lxml import etree

from .trafilatura_body import searched

#: An EXSLT regular expression test of attributes in trafilatura's expressions: ``re:test(@id|@class, 'nav|menu')``
#: (the attributes, the pattern, its flags).
REGEXP_TEST = re.compile(r"re:test\((@[\w-]+(?:\|@[\w-]+)*), '([^']*)'(?:, '([^']*)')?\)")


#: trafilatura 2.3.1's first discard expression (``OVERALL_DISCARD_XPATH[0]``: navigation, sharing, ads,
#: consent banners ...), its three patterns left out: ``prune_expression`` reads it in Python.
_DISCARD_EXPRESSION = """
        .//*[self::div or self::item or self::list or self::p or self::section or self::span][
        @data-lp-replacement-content or
        contains(translate(@role, 'N', 'n'), 'nav') or
        contains(@data-component, 'MostPopularStories') or
        re:test(@id|@class, '{}') or
        re:test(@id, '{}') or
        re:test(@class, '{}')]
        """
_DISCARD_TAGS = ("div", "item", "list", "p", "section", "span")


#: Its second (``OVERALL_DISCARD_XPATH[1]``: hidden elements, comments' titles and replies, messages),
#: likewise.
_HIDDEN_EXPRESSION = """
        .//*[@class='comments-title' or
        starts-with(@id|@class, 'reply-') or
        re:test(@id|@style, '{}') or
        contains(@style, 'display:none') or contains(@style, 'display: none') or
        re:test(@id, '{}') or
        re:test(@class, '{}') or @aria-hidden='true']
        """


#: The expression of comment sections and lists trafilatura prunes from the page before it reads it
#: (``REMOVE_COMMENTS_AND_LISTS_XPATH[0]``), likewise.
_COMMENTS_EXPRESSION = """
        .//*[self::div or self::list or self::section or self::details or self::ol or self::ul][
        re:test(@id, '{}') or
        re:test(@class, '{}')][
        not(self::ol or self::ul) or re:test(@id, '{}') or re:test(@class, '{}')]
        """
_COMMENTS_TAGS = ("div", "list", "section", "details", "ol", "ul")


#: The two expressions of what trafilatura prunes from the page first (``RAW_TREE_PRUNE_XPATH``): the containers
#: of an infinite scroll's next articles, and Elementor's share buttons; likewise.
_SCROLL_EXPRESSION = """
        .//*[self::div or self::section or self::aside][
        re:test(@id, '{}') or
        re:test(@class, '{}')][
        not(.//h1) or re:test(@id, '{}') or re:test(@class, '{}')]
        """
_SHARE_EXPRESSION = ".//*[self::div or self::section or self::aside][contains(@class, 'elementor-share-buttons')]"
_RAW_TAGS = ("div", "section", "aside")


#: Its expression of what its baseline removes before it reads the page's text (``settings.BASIC_CLEAN_XPATH``: asides,
#: footers, scripts, cookie banners ...), its two patterns left out: ``_basic_clean`` reads it in Python.
_BASIC_CLEAN_EXPRESSION = (
    ".//aside|.//div[contains(@class|@id, 'footer')]|.//fencedframe|.//footer|.//script|.//style|.//svg|.//template"
    "|.//*[re:test(@class, '{}', 'i') or re:test(@id, '{}', 'i')]"
)
_BASIC_CLEAN_TAGS = frozenset({"aside", "fencedframe", "footer", "script", "style", "svg", "template"})


#: Its expressions of teasers (``TEASER_DISCARD_XPATH[0]``) and of images' captions (``DISCARD_IMAGE_ELEMENTS[0]``),
#: without a regular expression: what they find is read in Python too (``_teasers``, ``_captions``).
_TEASER_EXPRESSION = """
    .//*[self::div or self::item or self::list or self::p or self::section or self::span][
    contains(translate(@id, 'T', 't'), 'teaser') or contains(translate(@class, 'T', 't'), 'teaser')]
    """
_CAPTION_EXPRESSION = """
    .//*[self::div or self::item or self::list or self::p or self::section or self::span][
    contains(@id, 'caption') or contains(@class, 'caption')]
    """


def first_of(names: list[str], one: str, other: str) -> str | None:
    """Which of the attributes ``one`` and ``other`` comes first in ``names`` (an element's, in its order):
    the one XPath's ``@one|@other`` gives a function. None when it has neither. Asked of the names by ``in``
    (an element names an attribute once): a generator walking them was a fifth of the time of the discard
    expressions read in Python."""
    if one in names:
        return one if other not in names or names.index(one) < names.index(other) else other
    return other if other in names else None


@lru_cache(maxsize=128)
def prune_expression(expression: etree.XPath) -> Callable[[etree._Element], list] | None:
    """trafilatura's two discard expressions read in Python, and its expressions of comment sections
    (``_comments``), of what it prunes from the page first (``_scroll``, ``_share``) and of teasers and images'
    captions (``_teasers``, ``_captions``), when ``expression`` is one of them (its patterns its own); else None.
    XPath handed each element walked to Python three times, for their three regular expressions (lxml's EXSLT
    functions, with or without the attribute): the discard expressions were trafilatura's costliest expressions,
    151 and 76 ms of our 3.5 s of CPU time on readability's 130 pages, 45 and 56 ms in Python (the second walks
    every element). The same elements, in the same order: XPath's ``@id|@class``
    is the first of them in the element's own order (``first_of``), an attribute it lacks is "", and
    ``re:test`` is Python's ``re.search``."""
    patterns = [match.group(2) for match in REGEXP_TEST.finditer(expression.path)]
    if len(patterns) == 4 and expression.path == _COMMENTS_EXPRESSION.format(*patterns):
        return _comments(*map(re.compile, patterns))
    if len(patterns) == 4 and expression.path == _SCROLL_EXPRESSION.format(*patterns):
        return _scroll(*map(re.compile, patterns))
    if expression.path == _SHARE_EXPRESSION:
        return _share
    if len(patterns) == 2 and expression.path == _BASIC_CLEAN_EXPRESSION.format(*patterns):
        return _basic_clean(*(re.compile(pattern, re.IGNORECASE) for pattern in patterns))
    if expression.path == _TEASER_EXPRESSION:
        return _teasers
    if expression.path == _CAPTION_EXPRESSION:
        return _captions
    if len(patterns) != 3:
        return None
    first, second, third = map(re.compile, patterns)
    if expression.path == _DISCARD_EXPRESSION.format(*patterns):
        def discarded(tree: etree._Element) -> list:
            found, by_id, by_class = [], searched(second), searched(third)  # each value searched once
            for element in tree.iterdescendants(*_DISCARD_TAGS):
                names = element.keys()
                if not names:
                    continue
                get = element.get
                either = first_of(names, "id", "class")
                if "data-lp-replacement-content" in names \
                        or "nav" in (get("role") or "").replace("N", "n") \
                        or "MostPopularStories" in (get("data-component") or "") \
                        or first.search(get(either) if either else "") \
                        or by_id(get("id") or "") or by_class(get("class") or ""):
                    found.append(element)
            return found
        return discarded
    if expression.path == _HIDDEN_EXPRESSION.format(*patterns):
        def hidden(tree: etree._Element) -> list:
            found, by_id, by_class = [], searched(second), searched(third)
            for element in tree.iterdescendants(etree.Element):
                names = element.keys()
                if not names:
                    continue
                get = element.get
                either = first_of(names, "id", "class")
                styled = first_of(names, "id", "style")
                style = get("style") or ""
                if get("class") == "comments-title" or (either is not None and get(either).startswith("reply-")) \
                        or first.search(get(styled) if styled else "") \
                        or "display:none" in style or "display: none" in style \
                        or by_id(get("id") or "") or by_class(get("class") or "") \
                        or get("aria-hidden") == "true":
                    found.append(element)
            return found
        return hidden
    return None


def _named(tags: tuple[str, ...], kept: Callable[[etree._Element], bool]):
    """The expressions of the shape ``.//*[self::tag or ...][re:test(@id, a) or re:test(@class, b)][kept or
    re:test(@id, c) or re:test(@class, d)]`` read in Python (see ``prune_expression``): the elements of ``tags``
    whose id or class matches the first two patterns and that ``kept`` lets go or the last two name again.
    trafilatura's comment sections and lists (``_COMMENTS_EXPRESSION``: 76 to 17 ms on readability's 130
    pages) and an infinite scroll's next articles (``_SCROLL_EXPRESSION``: 55 to 14 ms)."""
    def reading(by_id: re.Pattern, by_class: re.Pattern, again_by_id: re.Pattern, again_by_class: re.Pattern):
        def found(tree: etree._Element) -> list:
            out, named_by_id, named_by_class = [], searched(by_id), searched(by_class)
            for element in tree.iterdescendants(*tags):
                ident, names = element.get("id") or "", element.get("class") or ""
                if (named_by_id(ident) or named_by_class(names)) and (
                        kept(element) or again_by_id.search(ident) or again_by_class.search(names)):
                    out.append(element)
            return out
        return found
    return reading


#: ``_COMMENTS_EXPRESSION``'s: a list (``ol``, ``ul``) is one only when named again.
_comments = _named(_COMMENTS_TAGS, lambda element: element.tag not in ("ol", "ul"))
#: ``_SCROLL_EXPRESSION``'s: a box holding a headline (``<h1>``) is one only when named again.
_scroll = _named(_RAW_TAGS, lambda element: next(element.iterdescendants("h1"), None) is None)


def _share(tree: etree._Element) -> list:
    """``_SHARE_EXPRESSION`` read in Python (see ``prune_expression``): 44 to 7 ms on readability's 130 pages (libxml2
    builds a node set for each ``self::`` test of each element)."""
    return [element for element in tree.iterdescendants(*_RAW_TAGS)
            if "elementor-share-buttons" in (element.get("class") or "")]


def _teasers(tree: etree._Element) -> list:
    """``_TEASER_EXPRESSION`` read in Python (``translate(@id, 'T', 't')`` is the id with its capital Ts in lower
    case, "" without one): libxml2 built a node set for each of its six ``self::`` tests of each element. The two
    expressions took 0.30 s of CPU time on readability's 104 tuned pages as they are parsed, 0.07 s so; trafilatura
    asks them of each page it reads."""
    return [element for element in tree.iterdescendants(*_DISCARD_TAGS)
            if "teaser" in (element.get("id") or "").replace("T", "t")
            or "teaser" in (element.get("class") or "").replace("T", "t")]


def _captions(tree: etree._Element) -> list:
    """``_CAPTION_EXPRESSION`` read in Python (see ``_teasers``)."""
    return [element for element in tree.iterdescendants(*_DISCARD_TAGS)
            if "caption" in (element.get("id") or "") or "caption" in (element.get("class") or "")]


def _basic_clean(by_class: re.Pattern, by_id: re.Pattern) -> Callable[[etree._Element], list]:
    """``_BASIC_CLEAN_EXPRESSION`` read in Python: the elements of its tags, the ``<div>`` whose first of its class and
    id (``first_of``) says "footer", and those whose class or id names a cookie banner (each value searched once:
    ``searched``), in one walk, in the page's order. libxml2 walked the page nine times for its union and handed each
    element with a class or an id to Python for its two regular expressions: on readability's and CleanEval's 151 tuned
    pages as they are parsed, 0.55 s of CPU time, 0.25 s so. trafilatura asks it of a copy of the page on about half of
    them (its measure of the page's text, ``html2txt``, for its recall escalation) and in its baseline."""
    def cleaned(tree: etree._Element) -> list:
        found, class_named, id_named = [], searched(by_class), searched(by_id)
        for element in tree.iterdescendants(etree.Element):
            if element.tag in _BASIC_CLEAN_TAGS:
                found.append(element)
                continue
            names = element.keys()
            if not names:
                continue
            get = element.get
            either = first_of(names, "class", "id") if element.tag == "div" else None
            if (either is not None and "footer" in get(either)) \
                    or class_named(get("class") or "") or id_named(get("id") or ""):
                found.append(element)
        return found
    return cleaned
