"""The parsed page: lxml tree, cleaning of what is never content, the title, and links made absolute."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from urllib.parse import urljoin

import lxml.html
from lxml import etree

from .decode import decode
from .metadata import JSON_LD_SCRIPTS

#: Elements that are never content: scripts and styles, the page's chrome, embedded apps and forms.
REMOVED_TAGS = (
    "script", "style", "nav", "header", "footer", "noscript", "template", "iframe", "svg", "canvas",
    "form", "button",
)
#: The chrome that ``clean`` removes but for one holding a ``<main>``, which it unwraps: a menu left unclosed in
#: the markup swallows the rest of the page, its ``<main>`` too, and cleaning left no text. Measured on the tuned
#: parts (WCXB, Foley 2026, CC-BY-4.0): collections 0.6946 to 0.7050 (a shop's page, 0.02 to 0.96), service
#: pages 0.8319 to 0.8321 (4281 up 0.17 to 0.23, one down 0.61 to 0.58), the other types unchanged; no page
#: of the article sets holds a ``<main>`` in its chrome.
CHROME_HOLDING_MAIN = ("header", "footer", "nav")
#: What is never text, even when nothing else is left.
BARE_REMOVED_TAGS = ("script", "style", "template", "svg", "canvas")
#: ASP.NET (and other form frameworks) put the whole page in one ``<form>``: a form holding at least this
#: share of the page's text is unwrapped, its content kept, instead of removed with the other forms.
WRAPPER_SHARE = 0.5
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
    break_code_lines(doc)
    return doc


#: The classes a highlighter gives each line of a code block (Shiki's ``line``, Prism's ``token-line``, others'
#: ``code-line``); a style sheet shows each on its own line, as a browser shows a ``<div>`` or ``<p>`` row.
_CODE_LINE_CLASSES = frozenset({"line", "token-line", "code-line"})
#: A code block's rows, and what may be a highlighter's line (its class is read in Python), searched by libxml2:
#: a documentation page has thousands of highlighted words in its blocks.
_CODE_ROWS = etree.XPath(".//*[self::div or self::p or contains(@class, 'line')]")


def break_code_lines(doc: lxml.html.HtmlElement) -> None:
    """Put a line break after each line of a ``<pre>`` whose lines are elements (see ``_CODE_LINE_CLASSES``) not
    followed by one: some sites write them one after the other, and every extractor reads a code block's text,
    so its lines ran together into one (``npm create vite@latest my-projectcd my-project``)."""
    for pre in doc.iter("pre"):
        lines: list = []
        for row in _CODE_ROWS(pre):
            if row.tag not in ("div", "p") and not _CODE_LINE_CLASSES.intersection(row.get("class", "").split()):
                continue
            if lines and any(ancestor is lines[-1] for ancestor in row.iterancestors()):
                continue  # a block inside a line: the line ends the row
            lines.append(row)
        for line in lines[:-1]:
            if not (line.tail or "").startswith("\n") and not line.text_content().endswith("\n"):
                line.tail = "\n" + (line.tail or "")


#: The elements of a page, counted by libxml2: counting them from ``doc.iter()`` made a Python object of each (0.6% of
#: our CPU time on readability's tuned pages, sampled; this count takes two fifths of its time). ``parse`` keeps no
#: comments nor processing instructions, which ``iter()`` would have counted too: the same count.
_ELEMENTS = etree.XPath("count(descendant-or-self::*)")


def element_count(doc: lxml.html.HtmlElement) -> int:
    """How many elements the parsed page ``doc`` has, its root among them."""
    return int(_ELEMENTS(doc))


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
    for script in JSON_LD_SCRIPTS(doc):
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


def clean(doc: lxml.html.HtmlElement) -> None:
    """Remove what is never content: scripts, styles, the page's chrome and its forms (a form wrapped
    around the whole page is unwrapped instead: see ``WRAPPER_SHARE``; so is chrome holding the page's
    ``<main>``: see ``CHROME_HOLDING_MAIN``)."""
    forms = list(doc.iter("form"))
    if forms:
        body = doc.find("body")
        # As in ``drop_hidden``: a form whose whole text is below the limit is not counted. Most pages' forms
        # (a search box, a comment form) are small: the page's text is counted only until it shows that
        # none of them can reach the limit (a tenth of a page's counting on readability's pages).
        sizes = [len(form.text_content()) for form in forms]
        total = text_length_up_to(body if body is not None else doc, max(sizes))
        limit = 0.0 if total is None else WRAPPER_SHARE * total
        for form, size in zip(forms, sizes):
            if form.getparent() is not None and limit > 0 and size >= limit and text_length(form) >= limit:
                form.drop_tag()
    # A <main> is never chrome: the header, footer or <nav> holding it (a page whose markup left a menu open,
    # its <main> parsed into it) is unwrapped, its content kept, instead of removed with the other chrome.
    for main in list(doc.iter("main")):
        for chrome in list(main.iterancestors(*CHROME_HOLDING_MAIN)):
            chrome.drop_tag()
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


def text_length_up_to(element: lxml.html.HtmlElement, most: int) -> int | None:
    """``text_length(element)``, or None once the count shows that ``WRAPPER_SHARE`` of it is above ``most``
    (the text read up to there). Its text nodes in order, those in scripts and styles left out; a page whose
    scripts or styles hold elements (never parsed HTML's) is counted whole."""
    if any(len(inner) for inner in element.iter(*_NOT_TEXT)) or element.tag in _NOT_TEXT \
            or next(element.iterancestors(*_NOT_TEXT), None) is not None:
        return text_length(element)
    length = 0
    for node in element.iter():
        if isinstance(node.tag, str) and node.tag not in _NOT_TEXT and node.text:
            length += _visible_length(node.text)
        if node.tail and node is not element:
            length += _visible_length(node.tail)
        if WRAPPER_SHARE * length > most:
            return None
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
