"""The parsed page: lxml tree, cleaning of what is never content, the title, and links made absolute."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import chain
from typing import NamedTuple
from urllib.parse import urljoin

import lxml.html
from lxml import etree

from .decode import decode

#: Elements that are never content: scripts and styles, the page's chrome, embedded apps and forms.
REMOVED_TAGS = (
    "script", "style", "nav", "header", "footer", "noscript", "template", "iframe", "svg", "canvas",
    "form", "button",
)
#: What is never text, even when nothing else is left.
BARE_REMOVED_TAGS = ("script", "style", "template", "svg", "canvas")
#: ASP.NET (and other form frameworks) put the whole page in one ``<form>``: a form holding at least this
#: share of the page's text is unwrapped, its content kept, instead of removed with the other forms.
WRAPPER_SHARE = 0.5
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
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
#: Hidden while keeping its place: a layout's hidden part, never a page waiting for a script to show it.
_INVISIBLE_STYLE = re.compile(r"visibility\s*:\s*hidden", re.IGNORECASE)
_TITLE_SEPARATOR = re.compile(r" [|\-\\/>»–—] ")
_SCHEMA_ORG = re.compile(r"^https?://schema\.org/?$")
_ARTICLE_TYPE = re.compile(
    r"^Article|AdvertiserContentArticle|NewsArticle|AnalysisNewsArticle|AskPublicNewsArticle|"
    r"BackgroundNewsArticle|OpinionNewsArticle|ReportageNewsArticle|ReviewNewsArticle|Report|"
    r"SatiricalArticle|ScholarlyArticle|MedicalScholarlyArticle|SocialMediaPosting|BlogPosting|"
    r"LiveBlogPosting|DiscussionForumPosting|TechArticle|APIReference$"
)
_META_PROPERTY = re.compile(
    r"\s*(article|dc|dcterm|og|twitter)\s*:\s*(author|creator|description|published_time|title|site_name)\s*",
    re.IGNORECASE,
)
_META_NAME = re.compile(
    r"^\s*(?:(dc|dcterm|og|twitter|parsely|weibo:(article|webpage))\s*[-.:]\s*)?"
    r"(author|creator|pub-date|description|title|site_name)\s*$",
    re.IGNORECASE,
)
_META_TITLE_KEYS = (
    "dc:title", "dcterm:title", "og:title", "weibo:article:title", "weibo:webpage:title", "title",
    "twitter:title", "parsely-title",
)


#: lxml.html's element classes (``FormElement`` for ``<form>``, ``HtmlElement`` for most), looked up in C.
#: lxml.html's own lookup is a Python method called each time lxml hands out an element, by our code and
#: by both extractors on their copies of the tree: 5% of extraction time.
ELEMENT_CLASSES = etree.ElementNamespaceClassLookup(etree.ElementDefaultClassLookup(
    element=lxml.html.HtmlElement, comment=lxml.html.HtmlComment, pi=lxml.html.HtmlProcessingInstruction,
    entity=lxml.html.HtmlEntity,
))
ELEMENT_CLASSES.get_namespace(None).update({
    "form": lxml.html.FormElement, "input": lxml.html.InputElement, "label": lxml.html.LabelElement,
    "select": lxml.html.SelectElement, "textarea": lxml.html.TextareaElement,
})


def parse(html: str | bytes) -> lxml.html.HtmlElement | None:
    if isinstance(html, bytes):
        html = decode(html, html=True)
    # lxml refuses a str that declares its own encoding; an XML declaration is meaningless once decoded.
    html = re.sub(r"^\s*<\?xml[^>]*\?>", "", html, count=1)
    if not html.strip():
        return None
    parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, default_doctype=False)
    parser.set_element_class_lookup(ELEMENT_CLASSES)
    try:
        doc = lxml.html.document_fromstring(html, parser=parser)
    except (etree.ParserError, ValueError):
        return None
    _gather_body(doc)
    place_streamed_segments(doc)
    return doc


def _gather_body(doc: lxml.html.HtmlElement) -> None:
    """Move what follows a stray ``</body>`` (libxml2 puts it beside the body, where no extractor looks)
    back into the body."""
    body = doc.find("body")
    if body is None:
        return
    following = list(body.itersiblings())
    if body.tail and body.tail.strip():
        if len(body):
            body[-1].tail = (body[-1].tail or "") + body.tail
        else:
            body.text = (body.text or "") + body.tail
    body.tail = None
    for element in following:
        body.append(element)


#: React's streaming server rendering (React 18 and later: Next.js's app router, Remix ...): a placeholder
#: ``<template id="B:1">`` (a Suspense boundary's) or ``<template id="P:1">`` (a segment's) where content
#: goes, the content itself sent later in a hidden ``<div id="S:1">``, ids in hexadecimal.
_STREAM_PLACEHOLDER = re.compile(r"[BP]:([0-9a-f]+)")
_STREAM_SEGMENT = re.compile(r"S:[0-9a-f]+")


def place_streamed_segments(doc: lxml.html.HtmlElement) -> None:
    """Put the content of a page streamed by React's server rendering where the browser shows it. The
    server sends a page's slower parts last, each in a hidden ``<div id="S:n">`` at the end of the body,
    and a script of the page (React's ``$RC``, ``$RS``) moves its content into its placeholder
    ``<template id="B:n">`` or ``<template id="P:n">`` (see ``_STREAM_PLACEHOLDER``). Read without the
    script, the content was hidden, cut into small parts below the share that keeps a hidden element (see
    ``drop_hidden``) and out of its place: a service page kept only its banner. A segment may hold the
    placeholder of another; each moves once. A placeholder without its segment stays as it is."""
    placeholders = [(template, match.group(1)) for template in doc.iter("template")
                    if (match := _STREAM_PLACEHOLDER.fullmatch(template.get("id") or ""))]
    if not placeholders:
        return
    segments: dict[str, lxml.html.HtmlElement] = {}
    for element in doc.iter("div"):
        if element.get("hidden") is not None and _STREAM_SEGMENT.fullmatch(element.get("id") or ""):
            segments.setdefault(element.get("id"), element)  # the first of an id, as a script finds it
    for template, number in placeholders:
        segment = segments.pop(f"S:{number}", None)
        if segment is None or template.getparent() is None or segment.getparent() is None:
            continue
        # What is within a <template> is not in the page (a script does not find it), and markup no script
        # writes, a part within its own placeholder, is left as it is.
        if next(template.iterancestors("template"), None) is not None \
                or next(segment.iterancestors("template"), None) is not None \
                or any(ancestor is segment for ancestor in template.iterancestors()):
            continue
        if segment.text:
            previous = template.getprevious()
            if previous is not None:
                previous.tail = (previous.tail or "") + segment.text
            else:
                parent = template.getparent()
                parent.text = (parent.text or "") + segment.text
        for child in list(segment):
            template.addprevious(child)  # with its tail
        template.drop_tree()  # its tail stays
        segment.drop_tree()


def words(text: str) -> int:
    return len(text.split())


def _html_title(doc: lxml.html.HtmlElement) -> str:
    for element in doc.iter("title"):
        title = " ".join(element.text_content().split())
        if title:
            return title
    return ""


def _short_title(doc: lxml.html.HtmlElement, original: str) -> str:
    """``<title>`` without the site's name, by Readability.js's rules (``_getArticleTitle``)."""
    title = original
    hierarchical = False
    separators = list(_TITLE_SEPARATOR.finditer(original))
    if separators:
        hierarchical = bool(re.search(r" [\\/>»] ", original))
        title = original[: separators[-1].start()]
        if words(title) < 3:
            title = re.sub(r"^[^|\-\\/>»–—]*[|\-\\/>»–—]", "", original)
    elif ": " in title:
        headings = [" ".join(h.text_content().split()) for h in doc.iter("h1", "h2")]
        if title not in headings:
            title = original[original.rfind(":") + 1:]
            if words(title) < 3:
                title = original[original.find(":") + 1:]
            elif words(original[: original.find(":")]) > 5:
                title = original
    elif len(title) > 150 or len(title) < 15:
        h1s = list(doc.iter("h1"))
        if len(h1s) == 1:
            title = h1s[0].text_content()
    title = " ".join(title.split())
    count = words(title)
    if count <= 4 and (not hierarchical or count != words(re.sub(r"[|\-\\/>»–—]+", "", original)) - 1):
        title = original
    return title


def _json_ld_title(doc: lxml.html.HtmlElement, short_title: str) -> str | None:
    for script in doc.xpath("//script[@type='application/ld+json']"):
        try:
            data = json.loads((script.text or "").strip().removeprefix("<![CDATA[").removesuffix("]]>"))
        except ValueError:
            continue
        if isinstance(data, list):
            data = next((item for item in data if isinstance(item, dict) and _ARTICLE_TYPE.search(
                str(item.get("@type", "")))), None)
        if not isinstance(data, dict) or not _SCHEMA_ORG.match(str(data.get("@context", ""))):
            continue
        if "@type" not in data and isinstance(data.get("@graph"), list):
            data = next((item for item in data["@graph"] if isinstance(item, dict) and _ARTICLE_TYPE.search(
                str(item.get("@type", "")))), None)
        if not isinstance(data, dict) or not _ARTICLE_TYPE.search(str(data.get("@type", ""))):
            continue
        name, headline = data.get("name"), data.get("headline")
        if isinstance(name, str) and isinstance(headline, str) and name != headline:
            if similar(headline, short_title) and not similar(name, short_title):
                return headline.strip()
            return name.strip()
        for value in (name, headline):
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def similar(a: str, b: str) -> bool:
    """Readability.js's ``_textSimilarity(a, b) > 0.75``: most of ``b``'s words are in ``a``."""
    tokens_a = set(re.findall(r"\w+", a.lower()))
    tokens_b = [t for t in re.findall(r"\w+", b.lower())]
    if not tokens_a or not tokens_b:
        return False
    unique_b = [t for t in tokens_b if t not in tokens_a]
    distance = len(" ".join(unique_b)) / max(len(" ".join(tokens_b)), 1)
    return 1 - distance > 0.75


def _meta_title(doc: lxml.html.HtmlElement) -> str | None:
    values: dict[str, str] = {}
    for meta in doc.iter("meta"):
        content = (meta.get("content") or "").strip()
        if not content:
            continue
        # Later declarations win, and a property attribute may list several names, as Readability.js reads.
        names = [m.group(0) for m in _META_PROPERTY.finditer(meta.get("property") or "")]
        if not names and _META_NAME.match(meta.get("name") or ""):
            names = [meta.get("name")]
        for name in names:
            values[re.sub(r"\s", "", name.lower()).replace(".", ":")] = content
    for key in _META_TITLE_KEYS:
        if values.get(key):
            return " ".join(values[key].split())
    return None


def page_title(doc: lxml.html.HtmlElement) -> str | None:
    """The article's title as Readability.js reads it: JSON-LD, then Open Graph and similar metadata,
    then ``<title>`` without the site's name. None when the page has none."""
    original = _html_title(doc)
    short = _short_title(doc, original) if original else ""
    return _json_ld_title(doc, short) or _meta_title(doc) or short or None


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
        elif element.get("hidden") is not None or _HIDDEN_STYLE.search(style) or element.get("aria-hidden") == "true":
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
    limit = WRAPPER_SHARE * (text_length(doc) if left is None else left)
    for element in marked:
        # Its text, whitespace, scripts and all, is at least its visible text (``text_length``), and most
        # hidden elements are far below the limit: that alone tells them, without counting.
        if element.getparent() is not None and (
                len(element.text_content()) < limit or text_length(element) < limit):
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


def _only_modal(element: lxml.html.HtmlElement) -> bool:
    """Whether ``element``, one of ``_MAYBE_HIDDEN``'s, is there for its ``aria-modal`` alone (for
    ``drop_dialogs``): nothing hides it."""
    return element.get("style") is None and element.get("hidden") is None and element.get("aria-hidden") is None


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
        names = element.keys()
        if names and ("hidden" in names or "aria-hidden" in names or "style" in names or "aria-modal" in names):
            maybe_hidden.append(element)
    # The body's own control is the expression's (``//body//@...``), its own class and id are not (``//body//*``).
    names = body.keys()
    if "hidden" in names or "aria-hidden" in names or "style" in names or "aria-modal" in names:
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
        if "hidden" in names or "aria-hidden" in names or "style" in names or "aria-modal" in names:
            maybe_hidden.append(element)
        if "aria-controls" in names or "data-target" in names or "data-bs-target" in names:
            controls.extend(element.get(name) for name in _CONTROL_NAMES if name in names)
    return read


#: The attributes by which a control (a tab, an accordion's button) names the element it shows: WAI-ARIA's,
#: and Bootstrap's.
_CONTROLS = etree.XPath("//body//@aria-controls|//body//@data-target|//body//@data-bs-target")
_CONTROL_NAMES = ("aria-controls", "data-target", "data-bs-target")


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
    (``text_length``) after, or None when it has no aside (then it was not measured)."""
    classes = _with_elements(_BODY_CLASSES(doc)) if classes is None else classes
    ids = _with_elements(_BODY_IDS(doc)) if ids is None else ids
    asides = [element for element, value in chain(classes, ids) if _names_aside(value)]
    if not asides:
        return None
    total = text_length(doc)
    lengths: dict = {}
    for element in asides:
        if element not in lengths:
            lengths[element] = text_length(element)
    small = {element: None for element in asides
             if lengths[element] < WRAPPER_SHARE * total and not _holds_content(element)}
    # Visible text adds up: the page loses what the outermost of the removed elements hold.
    removed = sum(lengths[element] for element in small
                  if not any(ancestor in small for ancestor in element.iterancestors()))
    for element in small:
        if element.getparent() is not None:
            element.drop_tree()
    return total - removed


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
    if not _ASIDE_NAME.search(value):
        return False
    names = _NAME_WORDS.split(value.lower())
    return not ASIDE_NAMES.isdisjoint(names) and "not" not in names


def _hidden_by_class(classes: list) -> list[lxml.html.HtmlElement]:
    """The elements with one of ``HIDDEN_CLASSES`` among their classes, in document order, of the body's
    class attributes ``classes``, each with its element (``_BODY_CLASSES``, ``_with_elements``)."""
    hidden = frozenset(HIDDEN_CLASSES)
    return [element for element, value in classes
            if _HIDDEN_CLASS_NAME.search(value) and not hidden.isdisjoint(_XML_SPACE.split(value))]


def clean(doc: lxml.html.HtmlElement) -> None:
    """Remove what is never content: scripts, styles, the page's chrome and its forms (a form wrapped
    around the whole page is unwrapped instead: see ``WRAPPER_SHARE``)."""
    forms = list(doc.iter("form"))
    if forms:
        body = doc.find("body")
        limit = WRAPPER_SHARE * text_length(body if body is not None else doc)
        for form in forms:
            # As in ``drop_hidden``: a form whose whole text is below the limit is not counted.
            if form.getparent() is not None and limit > 0 and len(form.text_content()) >= limit \
                    and text_length(form) >= limit:
                form.drop_tag()
    etree.strip_elements(doc, *REMOVED_TAGS, with_tail=False)


_NOT_TEXT = ("script", "style")


def text_length(element: lxml.html.HtmlElement) -> int:
    """Characters of visible text (spaces, scripts and styles left out).

    All the text, less what is in scripts and styles: asking XPath for the text nodes outside them took
    a tenth of extraction time, since it tests each node's ancestors and hands each one to Python."""
    if element.tag in _NOT_TEXT or next(element.iterancestors(*_NOT_TEXT), None) is not None:
        return 0
    length = _visible_length(element.text_content())
    for inner in element.iter(*_NOT_TEXT):
        if next(inner.iterancestors(*_NOT_TEXT), None) is None:  # not within another, already counted
            length -= _visible_length(inner.text_content())
    return length


def _visible_length(text: str) -> int:
    return len("".join(text.split()))


def base_url(doc: lxml.html.HtmlElement, url: str) -> str:
    """What relative links of the page resolve against: its ``<base href>``, else ``url``."""
    for base in doc.iter("base"):
        href = (base.get("href") or "").strip()
        if href:
            try:
                return urljoin(url, href)
            except ValueError:
                break
    return url


#: The links resolved within one extraction (``remembering_links``): (base, link) to the absolute link.
_JOINED: ContextVar[dict[tuple[str, str], str | None] | None] = ContextVar("joined_links", default=None)


@contextmanager
def remembering_links() -> Iterator[None]:
    """Within it, ``absolutize`` remembers the links it resolved, and forgets them at the end (as
    ``choice.remembering_words`` does: nothing of a page is kept past its extraction). An extraction makes
    the same links absolute in both candidates, in the article's lead region and at times in the whole page:
    ``urljoin`` ran 4765 times instead of 8136 on readability's 130 pages, two thirds of its time."""
    token = _JOINED.set({})
    try:
        yield
    finally:
        _JOINED.reset(token)


def _joined(base: str, link: str, joined: dict) -> str | None:
    """``link`` resolved against ``base``, None when it cannot be; remembered in ``joined``."""
    key = (base, link)
    if key not in joined:
        try:
            joined[key] = urljoin(base, link)
        except ValueError:
            joined[key] = None
    return joined[key]


#: The links the Markdown writer reads: a link's target and an image's address.
LINK_ATTRIBUTES = {"a": "href", "img": "src"}


def absolutize(element: lxml.html.HtmlElement, base: str) -> None:
    """Make the links and images under ``element`` absolute against ``base``; a link that cannot be
    resolved (a malformed URL) loses its address.

    Done on the extracted content only, not the whole page: most of a page's links are dropped with
    its chrome, and rewriting them all was a tenth of the extraction time. Only the attributes the
    Markdown writer reads are rewritten, as lxml's ``make_links_absolute`` (``handle_failures="discard"``)
    would: that one also visits every element for a dozen other attributes and the URLs in styles,
    and was a third of the time of a 5 MB page."""
    joined = _JOINED.get()
    joined = {} if joined is None else joined
    for el in element.iter(*LINK_ATTRIBUTES):
        attr = LINK_ATTRIBUTES[el.tag]
        link = el.get(attr)
        if link is None:
            continue
        new = _joined(base, link.strip(), joined)
        if new is None:
            del el.attrib[attr]
        elif new != link:
            el.set(attr, new)
    for img in element.iter("img"):
        # Lazy-loaded images keep their real address in a data attribute.
        if not img.get("src") or img.get("src", "").startswith("data:"):
            for attr in ("data-src", "data-original", "data-lazy-src"):
                if img.get(attr):
                    try:
                        img.set("src", urljoin(base, img.get(attr)))
                    except ValueError:
                        pass
                    break
