"""trafilatura's expressions of the article's container (``xpaths.BODY_XPATH``) read in Python, for its main
extractor within our call (``trafilatura_reading._faster_trafilatura``).

Its main extractor asks each expression in turn for the first element it finds (``next(...)`` over the result)
and reads that one. libxml2 walked the whole page for each, handing every element to Python for each of its
regular expressions (lxml's EXSLT ``re:test``): 3.5% of our extraction's time on readability's tuned pages.
Here each is read in Python and the walk stops at the first element found: the same element (the first in
document order), given as a list of one. A test holds each to trafilatura's own.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from lxml import etree

#: An EXSLT regular expression test of one attribute in trafilatura's expressions: ``re:test(@id, '...')``
#: (the attribute, the pattern, its flags).
_REGEXP_TEST = re.compile(r"re:test\((@[\w-]+), '([^']*)'(?:, '([^']*)')?\)")
#: The containers the expressions look for (``self::article or self::div or self::main or self::section``).
_TAGS = ("article", "div", "main", "section")

#: trafilatura 2.3.1's ``BODY_XPATH``, their patterns left out. Its first asks for the first such child of each
#: element (``[1]`` without parentheses): the first of those in document order is the first such element.
_ARTICLE_BODY = """
        .//*[self::article or self::div or self::main or self::section][
        @class='post' or @class='entry' or
        @itemprop='articleBody' or @id='articleContent' or
        re:test(@id, '{}') or
        re:test(@class, '{}')
        ][1]
        """
_FIRST_ARTICLE = "(.//article)[1]"
_STORY = """
        (.//*[self::article or self::div or self::main or self::section][
        @role='article' or
        @id='article' or @id='story' or
        @class='postarea' or @class='art-postcontent' or @class='text' or @class='cell' or @class='story' or
        re:test(@id, '{}') or
        re:test(@class, '{}', 'i') or
        re:test(@class, '{}')
        ])[1]
        """
_MAIN_CONTENT = """
        (.//*[self::article or self::div or self::main or self::section][
        @id='content' or @class='content' or
        re:test(@id, '{}') or
        re:test(@class, '{}') or
        contains(translate(@id, 'CM','cm'), 'main-content') or contains(translate(@class, 'CM','cm'), 'main-content') or
        contains(translate(@class, 'CP','cp'), 'page-content')
        ])[1]
        """
_MAIN = """
        (.//*[self::article or self::div or self::section][
        starts-with(@class, 'main') or starts-with(@id, 'main') or starts-with(@role, 'main')])[1]|(.//main)[1]
        """


def _first(tree: etree._Element, tags: tuple[str, ...], test: Callable[[etree._Element], bool]) -> list:
    """The first descendant of ``tree`` of one of ``tags`` that passes ``test``, as a list of one; else []."""
    for element in tree.iterdescendants(*tags):
        if test(element):
            return [element]
    return []


def searched(pattern: re.Pattern) -> Callable[[str], bool]:
    """Whether ``pattern`` finds anything in a value, each value searched once by the test made here (one per walk
    of a page: nothing of a page is kept past it). A page's elements share a few classes and ids, and
    trafilatura's patterns are long alternations: its discard expression's pattern of classes (559 characters)
    took 6 to 23 microseconds a search, and was searched again for each element of the same class."""
    verdicts: dict[str, bool] = {}

    def found(value: str) -> bool:
        verdict = verdicts.get(value)
        if verdict is None:
            verdict = verdicts[value] = pattern.search(value) is not None
        return verdict
    return found


def _article_body(by_id: re.Pattern, by_class: re.Pattern):
    def test(element) -> bool:
        get = element.get
        ident, names = get("id") or "", get("class") or ""
        return names == "post" or names == "entry" or get("itemprop") == "articleBody" \
            or ident == "articleContent" or bool(by_id.search(ident)) or bool(by_class.search(names))
    return lambda tree: _first(tree, _TAGS, test)


def _story(by_id: re.Pattern, fulltext: re.Pattern, by_class: re.Pattern):
    def test(element) -> bool:
        get = element.get
        ident, names = get("id") or "", get("class") or ""
        return get("role") == "article" or ident in ("article", "story") \
            or names in ("postarea", "art-postcontent", "text", "cell", "story") \
            or bool(by_id.search(ident)) or bool(fulltext.search(names)) or bool(by_class.search(names))
    return lambda tree: _first(tree, _TAGS, test)


def _main_content(by_id: re.Pattern, by_class: re.Pattern):
    def test(element) -> bool:
        get = element.get
        ident, names = get("id") or "", get("class") or ""
        return ident == "content" or names == "content" or bool(by_id.search(ident)) \
            or bool(by_class.search(names)) \
            or "main-content" in ident.replace("C", "c").replace("M", "m") \
            or "main-content" in names.replace("C", "c").replace("M", "m") \
            or "page-content" in names.replace("C", "c").replace("P", "p")
    return lambda tree: _first(tree, _TAGS, test)


def _main_test(element) -> bool:
    # The union's first: a <main> (``(.//main)[1]``), or a block whose class, id or role starts with "main".
    get = element.get
    return element.tag == "main" or (get("class") or "").startswith("main") \
        or (get("id") or "").startswith("main") or (get("role") or "").startswith("main")


def _any(element) -> bool:
    return True


def _main(tree: etree._Element) -> list:
    return _first(tree, _TAGS, _main_test)


@lru_cache(maxsize=16)  # trafilatura's own expressions, read once each
def body_expression(expression: etree.XPath) -> Callable[[etree._Element], list] | None:
    """trafilatura's ``expression``, one of its ``BODY_XPATH``, read in Python: the first element it finds, as a
    list of one (or none); None for any other expression."""
    matches = list(_REGEXP_TEST.finditer(expression.path))
    patterns = [match.group(2) for match in matches]
    compiled = [re.compile(match.group(2), re.IGNORECASE if "i" in (match.group(3) or "") else 0)
                for match in matches]
    path = expression.path
    if len(patterns) == 2 and path == _ARTICLE_BODY.format(*patterns):
        return _article_body(*compiled)
    if len(patterns) == 3 and path == _STORY.format(*patterns) and matches[1].group(3) == "i":
        return _story(*compiled)
    if len(patterns) == 2 and path == _MAIN_CONTENT.format(*patterns):
        return _main_content(*compiled)
    if path == _FIRST_ARTICLE:
        return lambda tree: _first(tree, ("article",), _any)
    if path == _MAIN:
        return _main
    return None
