"""trafilatura's candidate for the main content: its fast reading of the page, as HTML for the Markdown
writer, and the steps of trafilatura done cheaper within our call (``_faster_trafilatura``).

trafilatura walks the page with rules about tags and link density: precise, but it often drops a section of
the article (a list, a table, a paragraph in an odd container) that readability's candidate
(``candidates``) keeps; ``choice`` merges the two.
"""
from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from copy import copy
from itertools import chain
from functools import lru_cache

import lxml.html
from lxml import etree

from webtools.net import displayed_urls

from .markdown import code_language
from .page import ELEMENT_CLASSES, absolutize
from . import trafilatura_copies
from .trafilatura_body import body_expression
from .trafilatura_prunes import REGEXP_TEST, prune_expression
from .trafilatura_copies import HANDED, Handed

logger = logging.getLogger("webtools.web_fetch")


def _html_parser() -> etree.HTMLParser:
    """lxml.html's parser (its own options) with our element class lookup (see ``page.ELEMENT_CLASSES``),
    for trafilatura's body parsed again from markup: the Markdown writer walks every element of it.
    (readability's article gains nothing from it: lxml.html moves it into a parent of its own.)"""
    parser = lxml.html.HTMLParser()
    parser.set_element_class_lookup(ELEMENT_CLASSES)
    return parser


#: trafilatura's XML (TEI-like) elements as HTML. ``list`` keeps whether it was ordered (``rend``).
_TEI_TAGS = {
    "item": "li", "quote": "blockquote", "lb": "br", "graphic": "img", "ref": "a", "row": "tr",
}
#: Where trafilatura's ``code`` of one line is inline code, not a code block (parents already renamed).
_INLINE_PARENTS = frozenset({
    "p", "li", "td", "th", "a", "strong", "em", "u", "sub", "sup", "h1", "h2", "h3", "h4", "h5", "h6",
})
#: Attributes a code block keeps: the language it declares (see ``markdown.code_language``).
_CODE_ATTRIBUTES = frozenset({"class", "data-lang", "data-language"})
_TEI_HI = {"#b": "strong", "#i": "em", "#t": "code", "#u": "u", "#sub": "sub", "#sup": "sup"}


def tei_to_html(body: etree._Element) -> lxml.html.HtmlElement:
    """trafilatura's extracted body (its XML) as an HTML ``<div>``."""
    for el in body.iter():
        tag = el.tag
        if not isinstance(tag, str):
            continue
        names = el.keys()  # most of its elements have no attribute: nothing to read or remove
        rend = (el.get("rend") or "") if names else ""
        new = tag
        if tag == "list":
            new = "ol" if rend == "ol" else "ul"
        elif tag == "head":
            new = rend if rend in ("h1", "h2", "h3", "h4", "h5", "h6") else "h3"
        elif tag == "hi":
            new = _TEI_HI.get(rend, "em")
        elif tag == "cell":
            new = "th" if el.get("role") == "head" else "td"
        elif tag == "ref":
            el.set("href", el.get("target") or "")  # kept below: not among the names read
            new = "a"
        elif tag == "code":
            # A block is ``code`` (holding the page's own ``code``, which says its language); one line
            # within a paragraph, an item or a cell is inline code.
            parent = el.getparent()
            parent_tag = parent.tag if parent is not None else ""
            one_line = "\n" not in "".join(el.itertext()).strip()
            inline = parent_tag == "pre" or (parent_tag in _INLINE_PARENTS and one_line)
            new = "code" if inline else "pre"
        elif tag in _TEI_TAGS:
            new = _TEI_TAGS[tag]
        if new != tag:
            el.tag = new
        if names:
            keep = {"href"} if new == "a" else {"src", "alt"} if new == "img" else (
                _CODE_ATTRIBUTES if new in ("pre", "code") else ())
            for name in names:
                if name not in keep:
                    del el.attrib[name]
    body.tag = "div"
    return lxml.html.fromstring(etree.tostring(body, encoding="unicode"), parser=_html_parser())


@lru_cache(maxsize=128)  # trafilatura's own expressions, compiled once each
def _guarded(expression: etree.XPath) -> etree.XPath:
    """trafilatura's ``expression`` with each regular expression test of attributes that no empty value passes
    made only when the element has one of them: ``(@id and re:test(@id, '...'))``. libxml2 hands every test to
    Python (lxml's EXSLT functions), for each element walked, with or without the attribute (tested as ""):
    guarded, its expression of hidden and comment elements took a third less time on readability's pages, that
    of its cookie banners (``BASIC_CLEAN_XPATH``) two fifths less, those of comments and of the article's
    container a tenth less. The same elements
    are found, in the same order (``and`` is not evaluated further when its left side is false)."""
    def guard(match: re.Match) -> str:
        flags = re.IGNORECASE if "i" in (match.group(3) or "") else 0
        if re.search(match.group(2), "", flags):
            return match.group(0)
        return f"(({match.group(1)}) and {match.group(0)})"

    path = REGEXP_TEST.sub(guard, expression.path)
    return etree.XPath(path, namespaces={"re": "http://exslt.org/regular-expressions"}) \
        if path != expression.path else expression


#: trafilatura's own functions by name, kept when first replaced (``core._prepare_tree`` has no other module to
#: be taken back from); shared with ``trafilatura_copies``, whose replacements call them.
_TRAFILATURA_OWN = trafilatura_copies.OWN


#: The trafilatura whose ``prune_unwanted_nodes`` ``_prune_unwanted_nodes`` was written from and is tested
#: against (tests/test_extract_shortcuts.py); with any other, trafilatura's own runs.
TRAFILATURA_CHECKED = "2.3.1"


def _prune_unwanted_nodes(tree, nodelist, with_backup: bool = False):
    """trafilatura 2.3.1's ``htmlprocessing.prune_unwanted_nodes``, but for how it tells the outermost of the
    elements its expressions match: it asked of each match whether any of its ancestors is one, walking
    every ancestor of every match (a tenth of trafilatura's time on readability's and CleanEval's pages,
    whose layout tables nest 20 deep); here each element's ancestry is walked once, and what was found is
    remembered for the elements on the way; and its expressions are read in Python (``trafilatura_prunes``) or guarded
    (``_guarded``) where that finds the same elements cheaper. The same elements are removed, in the same
    order."""
    from trafilatura.htmlprocessing import delete_element

    nodelist = [prune_expression(expression) or _guarded(expression) for expression in nodelist]
    if tree is HANDED.get():  # our page, which trafilatura did not copy: pruned on a copy, when it is
        if not with_backup and not any(expression(tree) for expression in nodelist):
            return tree
        tree = copy(tree)
    if not with_backup:
        for expression in nodelist:
            for subtree in expression(tree):
                delete_element(subtree)  # the tail text is preserved
        return tree
    matches = dict.fromkeys(elem for expression in nodelist for elem in expression(tree))
    within: dict = {}  # an element -> whether it or one of its ancestors is a match

    def under_a_match(node) -> bool:
        path = []
        found = False
        while node is not None:
            known = within.get(node)
            if known is not None:
                found = known
                break
            if node in matches:
                found = True
                break
            path.append(node)
            node = node.getparent()
        within.update(dict.fromkeys(path, found))
        return found

    outer = [elem for elem in matches if not under_a_match(elem.getparent())]
    # As trafilatura: nothing is pruned when that would remove too much of the text.
    old_len = len(tree.text_content())
    if old_len - sum(len(elem.text_content()) for elem in outer) > old_len / 7:
        for elem in outer:
            delete_element(elem)
    return tree


#: The tags trafilatura deletes by link density, in its order, twice over (``_link_density_rounds``).
_LINK_DENSITY_TAGS = ("div", "list", "p")


def _prune_unwanted_sections(tree, potential_tags, options, keep_teasers: bool = False):
    """trafilatura 2.3.1's ``main_extractor.prune_unwanted_sections``, but for its two rounds of deletion by link
    density (``_link_density_rounds``). The same elements are removed, in the same order."""
    from trafilatura import main_extractor
    from trafilatura.htmlprocessing import delete_by_link_density, link_density_test_tables
    from trafilatura.xml import delete_element
    from trafilatura.xpaths import (
        DISCARD_IMAGE_ELEMENTS, OVERALL_DISCARD_XPATH, PRECISION_DISCARD_XPATH, TEASER_DISCARD_XPATH,
    )

    prune = main_extractor.prune_unwanted_nodes  # ours within ``_faster_trafilatura``
    favor_precision = options.focus == "precision"
    tree = prune(tree, OVERALL_DISCARD_XPATH, with_backup=True)
    if "graphic" not in potential_tags:
        tree = prune(tree, DISCARD_IMAGE_ELEMENTS)
    if options.focus != "recall":
        if not keep_teasers:
            tree = prune(tree, TEASER_DISCARD_XPATH)
        if favor_precision:
            tree = prune(tree, PRECISION_DISCARD_XPATH)
    _link_density_rounds(tree, favor_precision)
    if "table" in potential_tags or favor_precision:
        boilerplate_tables = [elem for elem in tree.iter("table") if link_density_test_tables(elem) is True]
        for elem in boilerplate_tables:
            delete_element(elem, keep_tail=False)
    if favor_precision:
        while len(tree) > 0 and (tree[-1].tag == "head"):
            delete_element(tree[-1], keep_tail=False)
        tree = delete_by_link_density(tree, "head", backtracking=False, favor_precision=True)
        tree = delete_by_link_density(tree, "quote", backtracking=False, favor_precision=True)
    etree.strip_tags(tree, "span", *(() if "ref" in potential_tags else ("ref",)))
    return tree


def _link_density_rounds(tree, favor_precision: bool) -> None:
    """trafilatura 2.3.1's two rounds of ``htmlprocessing.delete_by_link_density`` over the ``div`` (backtracking),
    ``list`` and ``p`` elements of ``tree``, but its second round tests again only the elements whose test a
    deletion since their first may have changed: the test reads an element's own subtree, tag, parent's tag and
    whether a sibling follows it, so a deletion changes it for the deleted element's ancestors and the node before
    it, no other (the deleted element, out of the tree, is not walked again; when it is the tree's root, deleting
    it again does nothing). The second round took two fifths of the link density's time (142 of 343 ms on readability's
    tuned pages) and removed nothing on them. With ``_link_density_test``, the link density took 0.19 s instead of
    0.30 on readability's 104 tuned pages (medians of 4, 4% of our extraction's time to 2.5%). The same elements are
    removed, in the same order (a test holds it to trafilatura's own)."""
    from trafilatura.utils import trim
    from trafilatura.xml import delete_element

    link_lengths: dict = {}  # see ``_link_density_test``
    len_threshold = 200 if favor_precision else 100
    depth_threshold = 1 if favor_precision else 3
    changed: list[tuple] = []  # for each deletion, the nodes whose test it may change
    first_tested: dict[str, int] = {}  # a tag -> how many deletions there were when its elements were first tested
    for second in (False, True):
        for tagname in _LINK_DENSITY_TAGS:
            if second:
                since = set(chain.from_iterable(changed[first_tested[tagname]:]))
                elements = [elem for elem in tree.iter(tagname) if elem in since] if since else []
            else:
                first_tested[tagname] = len(changed)
                elements = tree.iter(tagname)
            backtracking = tagname == "div"
            deletions = []
            for elem in elements:
                result, short_with_links = _link_density_test(elem, favor_precision, link_lengths)
                if result or (
                    backtracking and short_with_links and len(elem) >= depth_threshold
                    and len(trim(elem.text_content())) < len_threshold
                ):
                    parent = elem.getparent()
                    if tagname == "p" and parent is not None and parent.tag in ("item", "td", "th"):
                        continue
                    deletions.append(elem)
            for elem in dict.fromkeys(deletions):
                changed.append((*elem.iterancestors(), elem.getprevious()))
                for ancestor in changed[-1]:
                    # a link around it loses its text (kept, its length would only be longer: the test would
                    # then ask trafilatura's own, as an element whose first characters settle nothing)
                    link_lengths.pop(ancestor, None)
                delete_element(elem)


def _link_density_test(element, favor_precision: bool, link_lengths: dict) -> tuple[bool, bool]:
    """trafilatura 2.3.1's ``htmlprocessing.link_density_test``, answered without the element's whole text when a
    part of it settles the answer: an element whose text is long enough (its ``limitlen``: 30 to 300 characters)
    is let go unless it has one long link or more than four links that make nearly all of it, and its first
    characters tell that it is (the text has at least as many characters as its pieces have other than spaces).
    trafilatura measured the whole text of every block, nested blocks again and again: most of the link density's
    time. Else trafilatura's own answers. ``link_lengths`` are the links' text lengths (trimmed) already measured,
    nested blocks asking of the same links."""
    from trafilatura.htmlprocessing import link_density_test
    from trafilatura.utils import LINK_FARM_RATIO, trim

    links = element.findall(".//ref")
    if not links or element.find(".//graphic") is not None:
        return False, False
    last = element.getnext() is None
    limitlen = (60 if last else 30) if element.tag == "p" else (300 if last else 100)
    # The links' length that the text's must exceed, that many times, for the links to make it.
    linked, ratio = 0, 1.0
    if len(links) == 1 or len(links) > 4:
        lengths = []
        for link in links:
            length = link_lengths.get(link)
            if length is None:
                length = link_lengths[link] = len(trim(link.text_content()))
            lengths.append(length)
        if len(links) > 4:
            linked, ratio = sum(lengths), LINK_FARM_RATIO  # ``collect_link_info``'s
        elif lengths[0] > (10 if favor_precision else 100):
            linked, ratio = lengths[0], 0.9
    seen = 0  # characters other than spaces so far: the text (its spaces collapsed) has at least as many
    for piece in element.itertext():
        seen += sum(map(len, piece.split()))
        if seen >= limitlen and not linked > seen * ratio:
            return False, False
    return link_density_test(element, favor_precision)


def _remove_control_characters(string: str) -> str:
    """trafilatura 2.3.1's ``utils.remove_control_characters`` (each character kept when it is printable or a
    space), without its walk of each character in Python when it keeps them all: the string's characters other
    than spaces are all printable. A text with a line break or a tab is not printable, and most texts between
    tags have one: its baseline's measure of the page's text, which asks of every block's text and tail, spent
    1% of our extraction's time on readability's pages there. The same string."""
    if string.isprintable() or "".join(string.split()).isprintable():
        return string
    return _TRAFILATURA_OWN["remove_control_characters"](string)


def _prepare_tree(tree, options, url):
    """trafilatura 2.3.1's ``core._prepare_tree`` (the page cleaned and its tags converted, and a copy of the
    cleaned page before conversion), without the copy when trafilatura never reads it: in its fast mode with
    comments left out, as we call it (the copy is read by its fallbacks, and by a forum's comments read as
    its posts). It took 20 to 30 ms of trafilatura's 1.5 s of CPU time on readability's 130 pages."""
    from trafilatura import core

    cleaned = core.tree_cleaning(copy(tree), options)
    backup = copy(cleaned) if not options.fast or options.comments else None
    converted = core.convert_tags(cleaned, options, url)
    if not options.comments and options.focus != "precision":  # else changed before its main extractor reads it
        trafilatura_copies.remember_preparation(
            converted, lambda: core.convert_tags(core.tree_cleaning(copy(tree), options), options, url))
    return converted, backup


@contextmanager
def _faster_trafilatura() -> Iterator[bool]:
    """Within it, trafilatura prunes with ``_prune_unwanted_nodes`` (its main extractor, and its pruning of the page
    before), prepares the page with ``_prepare_tree``, takes our page uncopied (``Handed``: it yields True), finds
    the article's container by its own expressions read in Python (``trafilatura_body``) and what its baseline
    removes (its cookie banners, asides, footers ...) by its own expression read in Python (``trafilatura_prunes``),
    and removes control characters as it does, cheaper
    (``_remove_control_characters``), its version checked (``TRAFILATURA_CHECKED``); after the last of the calls
    within it in the process (``_WITHIN``), with trafilatura's own again: a call in another thread that ended
    meanwhile must not put them back under ours, whose page trafilatura's own would prune and could not load.
    trafilatura run elsewhere in the process (the benchmark's peer) is as installed but while an extraction runs
    in another thread, and then gives the same result."""
    import trafilatura

    if trafilatura.__version__ != TRAFILATURA_CHECKED:
        yield False
        return
    with _WITHIN_LOCK:
        if not _WITHIN[0]:
            _patch_trafilatura(True)
        _WITHIN[0] += 1
    try:
        yield True
    finally:
        with _WITHIN_LOCK:
            _WITHIN[0] -= 1
            if not _WITHIN[0]:
                _patch_trafilatura(False)


#: How many calls are within ``_faster_trafilatura`` in the process, and the lock they count under.
_WITHIN = [0]
_WITHIN_LOCK = threading.Lock()


def _patch_trafilatura(ours: bool) -> None:
    """trafilatura's steps as ``_faster_trafilatura`` says, ours or (``ours`` false) its own again."""
    from trafilatura import core, htmlprocessing, main_extractor, settings, utils, xpaths

    baseline = sys.modules["trafilatura.baseline"]  # the package's ``baseline`` is its function
    own = _TRAFILATURA_OWN
    for name, module in (("prune_unwanted_sections", main_extractor), ("_prepare_tree", core),
                         ("load_html", core), ("extract_content", core), ("remove_control_characters", utils),
                         ("baseline", core)):
        own.setdefault(name, getattr(module, name))
    # the ones they imported
    main_extractor.prune_unwanted_nodes = core.prune_unwanted_nodes = \
        _prune_unwanted_nodes if ours else htmlprocessing.prune_unwanted_nodes
    main_extractor.prune_unwanted_sections = _prune_unwanted_sections if ours else own["prune_unwanted_sections"]
    core._prepare_tree = _prepare_tree if ours else own["_prepare_tree"]
    core.load_html = trafilatura_copies.load_html if ours else own["load_html"]
    core.extract_content = trafilatura_copies.extract_content if ours else own["extract_content"]
    core.baseline = trafilatura_copies.baseline if ours else own["baseline"]
    utils.remove_control_characters = baseline.remove_control_characters = \
        _remove_control_characters if ours else own["remove_control_characters"]
    main_extractor.BODY_XPATH = [body_expression(expression) or _guarded(expression)
                                 for expression in xpaths.BODY_XPATH] if ours else xpaths.BODY_XPATH
    clean = settings.BASIC_CLEAN_XPATH
    baseline.BASIC_CLEAN_XPATH = (prune_expression(clean) or _guarded(clean)) if ours else clean


def restore_code_blocks(article: lxml.html.HtmlElement, doc: lxml.html.HtmlElement) -> None:
    """Each quotation of ``article`` (trafilatura's) whose text is a ``<pre>`` block's of the page, its spaces
    collapsed, becomes that block again: trafilatura reads a code block inside a list item or a definition
    (Sphinx's documentation gives each function's examples in its ``<dd>``) as a quotation, its lines joined
    into one, and the model would read code without its line breaks and indentation."""
    quotes = list(article.iter("blockquote"))
    if not quotes:
        return
    blocks = {}
    for pre in doc.iter("pre"):
        blocks.setdefault(" ".join(pre.text_content().split()), pre)
    for quote in quotes:
        text = " ".join(quote.text_content().split())
        pre = blocks.get(text) if text else None
        if pre is None:
            continue
        block = quote.makeelement("pre")
        block.text = pre.text_content()
        language = code_language(pre)
        if language:
            block.set("class", f"language-{language}")
        block.tail = quote.tail
        quote.getparent().replace(quote, block)


def trafilatura_article(doc: lxml.html.HtmlElement, base: str, fast: bool = True) -> lxml.html.HtmlElement | None:
    """trafilatura's main text (its fast mode: readability and jusText, its own fallbacks, are what the
    other candidate and the merge do), links absolute against ``base``; None when it finds nothing."""
    from trafilatura import bare_extraction

    try:
        # output_format="xml": the body only. The default ("python") also writes it out as text, a
        # deep copy and a walk of the tree that were a sixth of trafilatura's time here. No url: the
        # links are resolved below, only those it keeps (resolving every link of the page was a sixth of its time).
        with _faster_trafilatura() as faster:
            token, preparing = HANDED.set(doc if faster else None), trafilatura_copies.preparing()
            try:
                result = bare_extraction(
                    Handed(doc) if faster else doc, url=None, fast=fast, include_comments=False,
                    include_tables=True, include_images=False, include_formatting=True, include_links=True,
                    with_metadata=False, output_format="xml",
                )
            finally:
                HANDED.reset(token)
                trafilatura_copies.done(preparing)
    except Exception:  # trafilatura guards itself, but a candidate must never break extraction
        logger.debug("trafilatura failed on %s", displayed_urls(str(base)), exc_info=True)
        return None
    if result is None or result.body is None or not len(result.body):
        return None
    article = tei_to_html(result.body)
    restore_code_blocks(article, doc)
    # As readability's candidate is, and as a browser does: against the page's address (its folder),
    # not against the site's root as trafilatura resolves them (``b/c`` of /dir/page.html is /dir/b/c,
    # not /b/c; ``#notes`` is a place in this page, not https://site#notes).
    absolutize(article, base)
    return article
