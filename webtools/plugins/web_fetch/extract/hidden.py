"""What a reader never sees, removed before the extractors read the page: hidden elements (by attribute,
style, ``aria-hidden`` or class), asides named by class or id, modal and closed dialogs; and what a control
on the page discloses, shown as a click would show it."""
from __future__ import annotations

import re
from collections.abc import Callable
from itertools import chain
from math import inf
from typing import NamedTuple

import lxml.html
from lxml import etree

from .page import WRAPPER_SHARE, text_length, text_length_up_to

#: Class names that hide an element by the conventions of common CSS frameworks (Bootstrap, Tailwind,
#: WordPress): a copy of the article for another layout, a collapsed teaser, text for screen readers only.
HIDDEN_CLASSES = (
    "hidden", "hide", "d-none", "is-hidden", "invisible", "visually-hidden", "sr-only", "screen-reader-text",
)
#: The class attributes in the body, read by ``_hidden_by_class``: XPath's own test of each class name
#: (``concat``, ``normalize-space``, eight times an element) was a tenth of extraction time.
_BODY_CLASSES = etree.XPath("//body//*/@class")
_HIDDEN_CLASS_NAME = re.compile("|".join(map(re.escape, HIDDEN_CLASSES)))
_XML_SPACE = re.compile(r"[ \t\r\n]+")  # what XPath's normalize-space() collapses
#: Words of a class or id that name what sits beside the content: a rail of related articles, a sidebar,
#: a footer (``related-posts``, ``sidebar-right``, ``site-footer``). Their teasers and an author's
#: biography read as prose, and an extractor keeps them. Measured on the tuned parts: dragnet 0.834 to
#: 0.840, cleaneval-dev 0.873 to 0.884, readability's pages unchanged, every wcxb type up (collections
#: 0.596 to 0.602). ``menu`` and ``nav`` cost service pages (a restaurant's menu, a tab's "filter-menu").
ASIDE_NAMES = frozenset({"related", "sidebar", "footer"})
_ASIDE_NAME = re.compile("|".join(ASIDE_NAMES), re.IGNORECASE)
#: A class or id's words: ``site-footer__inner`` is "site", "footer", "inner".
_NAME_WORDS = re.compile(r"[\s_\-]+")
_BODY_IDS = etree.XPath("//body//*/@id")
#: The elements that may be hidden by an attribute (those with ``aria-hidden`` other than "true" are let go
#: by ``drop_hidden``): ``/descendant::`` and no string comparison were half the time of
#: ``//*[@hidden or @aria-hidden='true' or @style]`` on readability's and CleanEval's pages.
_MAYBE_HIDDEN = etree.XPath("/descendant::*[@hidden or @aria-hidden or @style or @aria-modal]")
#: The attributes that may hide an element, and those ``_MAYBE_HIDDEN`` looks for (a modal too, for
#: ``drop_dialogs``).
_HIDING = frozenset({"hidden", "aria-hidden", "style"})
_MAYBE_HIDING = _HIDING | {"aria-modal"}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
#: ``aria-hidden`` hides an element from screen readers, not from the eye: on a link it marks a second link to
#: a page another link on it already gives (a card's picture, its teaser), which the page shows. Such links
#: stay. Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0): collections 0.6993 to 0.7071 (a news
#: site's topic page, whose stories' teasers are such links: 0.23 to 0.93), products 0.72078 to 0.72080, the
#: other types and the article sets unchanged.
ARIA_SHOWN_TAGS = frozenset({"a"})
#: Hidden while keeping its place: a layout's hidden part, never a page waiting for a script to show it.
_INVISIBLE_STYLE = re.compile(r"visibility\s*:\s*hidden", re.IGNORECASE)


def drop_dialogs(doc: lxml.html.HtmlElement, modals: list[lxml.html.HtmlElement]) -> None:
    """Remove the page's modal dialogs (``aria-modal="true"``) and its closed ``<dialog>`` elements (a
    browser shows a ``<dialog>`` only when ``open``), whatever share of its text they hold: a consent
    manager writes its settings (more text than a listing's cards) into the page as a modal. Measured on
    the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): listings +0.007, forums +0.005, service
    pages +0.0005, collections +0.0001, products -0.002 (one page, whose gold keeps a trade-in offer shown
    in a modal), documentation and the article sets unchanged. ``modals`` are the elements marked ``aria-modal`` that
    ``drop_hidden`` met: looked for on their own, they took a fiftieth of the extraction's time."""
    for element in chain(modals, [dialog for dialog in doc.iter("dialog") if dialog.get("open") is None]):
        if element.getparent() is not None and next(element.iterancestors("body"), None) is not None:
            element.drop_tree()


def drop_hidden(doc: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """Remove what a reader never sees: elements styled ``visibility: hidden``; and elements hidden by the
    ``hidden`` attribute or ``display: none``, marked ``aria-hidden`` or hidden by class (see
    ``HIDDEN_CLASSES``) unless they hold at least ``WRAPPER_SHARE`` of the page's text (pages hide their
    content until a script shows it, mark it ``aria-hidden`` while a cookie banner is open, or stream it
    into a hidden element that a script moves into place). What a control on the page discloses (a tab's
    panel, an accordion's answer: see ``disclosed``) is not hidden from a reader, who opens it with a
    click, and stays, shown (see ``_show``). Also the page's asides (``drop_asides``). Done before either
    extractor reads the page. Returns the elements marked ``aria-modal="true"`` it met, for ``drop_dialogs``."""
    marked, modals = [], []
    read = _read_attributes(doc)
    shown, seen = disclosed(doc, None if read is None else read.controls), set()
    dropped = False
    for element in _MAYBE_HIDDEN(doc) if read is None else read.maybe_hidden:
        modal = element.get("aria-modal")
        if modal is not None:
            if modal == "true":
                modals.append(element)
            if _only_modal(element):
                continue
        style = element.get("style") or ""
        if shown(element):
            _show(element, seen)
            continue
        if _INVISIBLE_STYLE.search(style):
            if element.getparent() is not None:
                element.drop_tree()
                dropped = True
        elif element.get("hidden") is not None or _HIDDEN_STYLE.search(style) \
                or (element.get("aria-hidden") == "true" and element.tag not in ARIA_SHOWN_TAGS):
            marked.append(element)
    # The class attributes, read once for both: an element of an aside that ``drop_asides`` removes is
    # removed with it, whatever happens to it afterwards. Those read before are the page's when nothing went.
    if read is None or dropped:
        classes, ids = _with_elements(_BODY_CLASSES(doc)), None
    else:
        classes, ids = read.classes, read.ids
    left = drop_asides(doc, classes, ids)
    marked.extend(element for element in _hidden_by_class(classes) if not shown(element))
    if not marked:
        return modals
    # Each one's text, whitespace, scripts and all, read once: removing one only shortens the others'.
    lengths = [len(element.text_content()) for element in marked]
    if left is None:
        # When even the longest is below the limit, the page's text is counted only until it shows that
        # (``text_length_up_to``: None then).
        left = text_length_up_to(doc, max(lengths))
    limit = inf if left is None else WRAPPER_SHARE * left
    for element, length in zip(marked, lengths):
        # Its text as read is at least its visible text now (``text_length``), and most hidden elements are
        # far below the limit: that alone tells them, without counting.
        if element.getparent() is not None and (length < limit or text_length(element) < limit):
            element.drop_tree()
    return modals


def _show(element: lxml.html.HtmlElement, seen: set[str]) -> None:
    """Show what a control discloses (see ``disclosed``) as a click would: without the style, the ``hidden``
    and the ``aria-hidden`` that hide it; unless it says what another it showed said (``seen``: their texts),
    as the tabs a page fills with the same words before its scripts run. trafilatura removes hidden elements
    itself: it kept none of what the tabs and accordions held. Measured on the tuned part of wcxb-dev (WCXB,
    Foley 2026, CC-BY-4.0): products 0.701 to 0.709 (four pages up, among them a shop's specifications in
    tabs, 0.16 to 0.75; one down, a phone's answers in an accordion that the gold leaves out), documentation
    0.9353 to 0.9354, service pages 0.8212 to 0.8212 (+0.00003; each panel shown, a page whose eight tabs say
    the same words fell 0.11), collections 0.6434 to 0.6433 (three pages up, two down: a shop's category whose
    cards the text held less of once a panel of advice came with it), listings, forums and the article sets
    unchanged."""
    text = " ".join(element.text_content().split())
    if text in seen:
        return
    seen.add(text)
    style = element.get("style")
    if style and _HIDDEN_STYLE.search(style):
        element.set("style", _HIDDEN_STYLE.sub("", style))
    for name in ("hidden", "aria-hidden"):
        element.attrib.pop(name, None)


def show_disclosed(doc: lxml.html.HtmlElement) -> None:
    """Show what a control on the page discloses (see ``disclosed`` and ``_show``), on a page whose hidden
    elements stay (a product's: see ``extract``)."""
    shown, seen = disclosed(doc), set()
    for element in _MAYBE_HIDDEN(doc):
        if shown(element) and not _only_modal(element):
            _show(element, seen)


#: A heading's buttons: WAI-ARIA's accordion pattern wraps each panel's button in a heading.
_HEADING_BUTTONS = etree.XPath("/descendant::body/descendant::button[ancestor::h1 or ancestor::h2 or ancestor::h3"
                               " or ancestor::h4 or ancestor::h5 or ancestor::h6]")


def open_heading_buttons(doc: lxml.html.HtmlElement) -> None:
    """Unwrap each ``<button>`` within a heading, its words left in the heading: an accordion's button
    (WAI-ARIA's pattern wraps it in a heading) is its panel's title, a question whose answer the panel
    holds, or the title of an article whose teaser it shows. Cleaning removes buttons (a form's, a menu's),
    and with them these titles, the answers and teasers left without them. Measured on the tuned parts (WCXB,
    Foley 2026, CC-BY-4.0): collections 0.7176 to 0.7196 (10 pages up, among them an outdoor shop's categories,
    whose advice articles' titles are accordion buttons, 0.56 to 0.63, and a computer maker's questions; one down,
    0.008), service pages 0.8486 to 0.8496 (9 up, of 9 sites: FAQs whose questions were lost; 3 down, a utility's
    FAQ whose gold keeps the answers without the questions 0.038), products 0.7272 to 0.7267 (4 down, a phone
    maker's page 0.041: its heading buttons name the models of a menu), listings unchanged."""
    for button in _HEADING_BUTTONS(doc):
        button.drop_tag()


def _only_modal(element: lxml.html.HtmlElement) -> bool:
    """Whether ``element``, one of ``_MAYBE_HIDDEN``'s, is there for its ``aria-modal`` alone (for
    ``drop_dialogs``): nothing hides it."""
    return _HIDING.isdisjoint(element.keys())


class _Attributes(NamedTuple):
    maybe_hidden: list
    controls: list
    classes: list
    ids: list


def _read_attributes(doc: lxml.html.HtmlElement) -> _Attributes | None:
    """What ``_MAYBE_HIDDEN``, ``_CONTROLS``, ``_BODY_CLASSES`` and ``_BODY_IDS`` find in ``doc``, in one walk of
    its elements: libxml2 walked the page four times for them (150 ms of CPU time on readability's 130 pages, 4%
    of our extraction; this walk 85 ms). The same, in the same order, classes and ids with their elements
    (``_with_elements``); None when the page's body is not its root's last child and the first body in it
    (then the expressions are asked)."""
    body = doc.find("body")
    if body is None or body.getnext() is not None or doc.getparent() is not None:
        return None
    read = _Attributes([], [], [], [])
    maybe_hidden, controls, classes, ids = read
    for element in doc.iter(etree.Element):  # the root, the head: what precedes the body
        if element.tag == "body":
            if element is not body:
                return None
            break
        if not _MAYBE_HIDING.isdisjoint(element.keys()):
            maybe_hidden.append(element)
    # The body's own control is the expression's (``//body//@...``), its own class and id are not (``//body//*``).
    names = body.keys()
    if not _MAYBE_HIDING.isdisjoint(names):
        maybe_hidden.append(body)
    controls.extend(body.get(name) for name in _CONTROL_NAMES if name in names)
    for element in body.iterdescendants(etree.Element):
        names = element.keys()
        if not names:
            continue
        if "class" in names:
            classes.append((element, element.get("class")))
        if "id" in names:
            ids.append((element, element.get("id")))
        if not _MAYBE_HIDING.isdisjoint(names):
            maybe_hidden.append(element)
        if not _CONTROLLING.isdisjoint(names):
            controls.extend(element.get(name) for name in _CONTROL_NAMES if name in names)
    return read


#: The attributes by which a control (a tab, an accordion's button) names the element it shows: WAI-ARIA's,
#: and Bootstrap's.
_CONTROLS = etree.XPath("//body//@aria-controls|//body//@data-target|//body//@data-bs-target")
_CONTROL_NAMES = ("aria-controls", "data-target", "data-bs-target")
_CONTROLLING = frozenset(_CONTROL_NAMES)


def disclosed(doc: lxml.html.HtmlElement,
              controls: list[str] | None = None) -> Callable[[lxml.html.HtmlElement], bool]:
    """A test of whether an element is content that a control on the page shows when clicked, hidden
    until then: a tab's panel (``role="tabpanel"``), an accordion's body (``role="region"`` labelled by
    its button, WAI-ARIA's accordion pattern), or the element a control names (``aria-controls``, or
    Bootstrap's ``data-target`` and ``data-bs-target``). Service pages keep their offer in tabs and their
    answers in accordions; a copy of the page for another layout, a menu or a dialog is none of these.
    On the tuned part of wcxb-dev (WCXB, CC-BY-4.0) keeping them raised service pages from 0.794 to 0.803
    and documentation from 0.918 to 0.930, products and collections a little, the other types and the
    article sets unchanged (keeping every hidden element instead cost readability's pages 0.008 and
    listings 0.012). ``controls`` are the values of those attributes in the body (``_CONTROLS``) when already
    read."""
    controls = _CONTROLS(doc) if controls is None else controls
    controlled = {name.lstrip("#") for value in controls for name in value.split()}

    def shown(element: lxml.html.HtmlElement) -> bool:
        role = element.get("role")
        if role == "tabpanel" or (role == "region" and element.get("aria-labelledby")):
            return True
        return element.get("id") in controlled
    return shown


def _with_elements(values: list) -> list[tuple[lxml.html.HtmlElement, str]]:
    """XPath's values of attributes, each with the element holding it."""
    return [(value.getparent(), value) for value in values]


def drop_asides(doc: lxml.html.HtmlElement, classes: list | None = None, ids: list | None = None) -> int | None:
    """Remove the elements in the body whose class or id names an aside (``ASIDE_NAMES``, not negated as
    in ``not-footer``) and that hold less than ``WRAPPER_SHARE`` of the page's text (a layout's
    ``content-sidebar-wrap`` holds the article). Sizes are taken before any is removed. ``classes`` are
    the body's class attributes and ``ids`` its ids, each with its element (``_BODY_CLASSES`` and ``_BODY_IDS``,
    ``_with_elements``), when already read. Returns the page's text length
    (``text_length``) after, or None when it was not measured (no aside, or each far below the limit)."""
    classes = _with_elements(_BODY_CLASSES(doc)) if classes is None else classes
    ids = _with_elements(_BODY_IDS(doc)) if ids is None else ids
    verdicts: dict[str, bool] = {}  # a value -> whether it names an aside: a page's elements share a few
    asides = []
    for element, value in chain(classes, ids):
        named = verdicts.get(value)
        if named is None:
            named = verdicts[value] = _names_aside(value)
        if named:
            asides.append(element)
    if not asides:
        return None
    lengths: dict = {}
    for element in asides:
        if element not in lengths:
            lengths[element] = text_length(element)
    # The page's text counted only until it shows that every aside is below the limit.
    total = text_length_up_to(doc, max(lengths.values()))
    limit = inf if total is None else WRAPPER_SHARE * total
    small = {element: None for element in asides
             if lengths[element] < limit and not _holds_content(element)}
    # Visible text adds up: the page loses what the outermost of the removed elements hold.
    removed = sum(lengths[element] for element in small
                  if not any(ancestor in small for ancestor in element.iterancestors()))
    for element in small:
        if element.getparent() is not None:
            element.drop_tree()
    return None if total is None else total - removed


def _holds_content(element: lxml.html.HtmlElement) -> bool:
    """Whether an element whose class names an aside holds the page's content instead: its headline
    (``<h1>``), its ``<main>``, or one ``<article>`` with most of the element's text. Layouts name the
    content column after the sidebar beside it (Drupal's ``sidebar-first-only``, ``has-sidebar``); a rail
    of related articles holds several small ones."""
    if next(element.iterdescendants("h1", "main"), None) is not None or element.find(".//*[@role='main']") is not None:
        return True
    articles = list(element.iterdescendants("article"))
    return bool(articles) and max(map(text_length, articles)) >= WRAPPER_SHARE * text_length(element)


def _names_aside(value: str) -> bool:
    lowered = value.lower()
    # ``_ASIDE_NAME``, searched case-insensitively: in an ASCII value, the lower-cased value holds one of the
    # names as it is (Python's case-insensitive search, eight times slower, tried every character).
    if not (any(name in lowered for name in ASIDE_NAMES) if value.isascii() else _ASIDE_NAME.search(value)):
        return False
    names = _NAME_WORDS.split(lowered)
    return not ASIDE_NAMES.isdisjoint(names) and "not" not in names


def _hidden_by_class(classes: list) -> list[lxml.html.HtmlElement]:
    """The elements with one of ``HIDDEN_CLASSES`` among their classes, in document order, of the body's
    class attributes ``classes``, each with its element (``_BODY_CLASSES``, ``_with_elements``)."""
    hidden = frozenset(HIDDEN_CLASSES)
    return [element for element, value in classes
            if _HIDDEN_CLASS_NAME.search(value) and not hidden.isdisjoint(_XML_SPACE.split(value))]
