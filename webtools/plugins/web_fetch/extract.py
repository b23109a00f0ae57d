"""HTML to compact Markdown: the page's title and its main text, without navigation or scripts.

lxml parses and cleans the page, readability-lxml finds the main content (``summary(html_partial=True)``:
the full-document form has returned an empty body where the partial one found the article), and
markdownify writes Markdown. Two decisions keep the output close to the size of the article's text
(markdownify's defaults made it 1.16 times longer): links carry no title and vanish when they lead
nowhere (``#top``, ``javascript:``), and images keep only their alt text unless their URLs are asked for.

When readability finds too little (a page without an article, a list of links, an app shell), the whole
cleaned page is converted instead, so a page always returns its text.
"""
from __future__ import annotations

import codecs
import copy
import json
import re
from urllib.parse import urljoin

import lxml.html
from bs4 import BeautifulSoup
from lxml import etree
from markdownify import MarkdownConverter
from readability import Document

from webtools.runtime.budget import Deadline

#: Elements that are never content: scripts and styles, the page's chrome, embedded apps and forms.
REMOVED_TAGS = (
    "script", "style", "nav", "header", "footer", "noscript", "template", "iframe", "svg", "canvas",
    "form", "button",
)
#: Below this many characters of text, readability's answer is checked against the whole page.
MIN_ARTICLE_CHARACTERS = 500
#: When readability keeps less than this share of the page's text, and the page has much more, it
#: missed the content (an index page, a list of entries) and the cleaned page is used.
MIN_ARTICLE_SHARE = 0.2

#: Prose with a link every this many words or fewer is "thick with links" (see _Markdown).
DENSE_LINK_WORDS = 20
DENSE_MIN_LINKS = 2
_BLOCKS = frozenset({"p", "li", "td", "dd", "blockquote", "figcaption"})
_IMAGES_ONLY = re.compile(r"(?:!\[[^\]]*\]\s*)+")

_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE,
)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
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
_DEAD_LINK = re.compile(r"^\s*(?:#|javascript:|mailto:$|data:)", re.IGNORECASE)

# What WHATWG's Encoding Standard reads for labels that Python maps to a different codec: browsers
# decode "iso-8859-1" and "ascii" pages as windows-1252, whose 0x80-0x9F are printable.
_ENCODING_ALIASES = {
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252",
    "us-ascii": "cp1252", "ascii": "cp1252", "x-user-defined": "cp1252",
    "gb2312": "gb18030", "gbk": "gb18030", "x-sjis": "shift_jis", "shift-jis": "shift_jis",
}


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _ENCODING_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def sniff_charset(data: bytes, *, html: bool = True) -> str | None:
    """The encoding a document declares in itself: a byte order mark, else its ``<meta charset>`` (HTML)
    or its XML declaration, within the first 4 KiB."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    head = data[:4096]
    match = (_META_CHARSET if html else _XML_ENCODING).search(head)
    if match is None and html:
        match = _XML_ENCODING.search(head)
    return _codec(match.group(1).decode("ascii", "ignore")) if match else None


def decode(data: bytes, charset: str | None = None, *, html: bool = False) -> str:
    """``data`` as text: the charset from Content-Type, else (HTML, XML) the document's own declaration,
    else UTF-8. Undecodable bytes become U+FFFD; this never raises."""
    codec = _codec(charset)
    if codec is None:
        codec = sniff_charset(data, html=html) or "utf-8"
    if codec == "utf-8" and data.startswith(codecs.BOM_UTF8):
        codec = "utf-8-sig"
    try:
        return data.decode(codec, errors="replace")
    except LookupError:  # pragma: no cover - _codec only returns known codecs
        return data.decode("utf-8", errors="replace")


# -- HTML -------------------------------------------------------------------------------------------


def _parse(html: str | bytes) -> lxml.html.HtmlElement | None:
    if isinstance(html, bytes):
        html = decode(html, html=True)
    # lxml refuses a str that declares its own encoding; an XML declaration is meaningless once decoded.
    html = re.sub(r"^\s*<\?xml[^>]*\?>", "", html, count=1)
    if not html.strip():
        return None
    parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, default_doctype=False)
    try:
        return lxml.html.document_fromstring(html, parser=parser)
    except (etree.ParserError, ValueError):
        return None


def _words(text: str) -> int:
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
        if _words(title) < 3:
            title = re.sub(r"^[^|\-\\/>»–—]*[|\-\\/>»–—]", "", original)
    elif ": " in title:
        headings = [" ".join(h.text_content().split()) for h in doc.iter("h1", "h2")]
        if title not in headings:
            title = original[original.rfind(":") + 1:]
            if _words(title) < 3:
                title = original[original.find(":") + 1:]
            elif _words(original[: original.find(":")]) > 5:
                title = original
    elif len(title) > 150 or len(title) < 15:
        h1s = list(doc.iter("h1"))
        if len(h1s) == 1:
            title = h1s[0].text_content()
    title = " ".join(title.split())
    count = _words(title)
    if count <= 4 and (not hierarchical or count != _words(re.sub(r"[|\-\\/>»–—]+", "", original)) - 1):
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
            if _similar(headline, short_title) and not _similar(name, short_title):
                return headline.strip()
            return name.strip()
        for value in (name, headline):
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def _similar(a: str, b: str) -> bool:
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
    """Remove what is never content, hidden elements included."""
    etree.strip_elements(doc, *REMOVED_TAGS, with_tail=False)
    for element in doc.xpath("//*[@hidden or @aria-hidden='true' or @style]"):
        style = element.get("style")
        if element.get("hidden") is not None or element.get("aria-hidden") == "true" or (
            style and _HIDDEN_STYLE.search(style)
        ):
            if element.getparent() is not None:
                element.drop_tree()


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


def absolutize(element: lxml.html.HtmlElement, base: str) -> None:
    """Make the links and images under ``element`` absolute against ``base``.

    Done on the extracted content only, not the whole page: most of a page's links are dropped with
    its chrome, and rewriting them all was a tenth of the extraction time."""
    try:
        element.make_links_absolute(base, resolve_base_href=False, handle_failures="discard")
    except ValueError:
        pass  # a malformed base URL: keep the links as the page wrote them
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


class _Readability(Document):
    """readability-lxml on a tree we already parsed and cleaned, copied for each of its passes (it
    mutates the tree it works on and retries on the result otherwise)."""

    def _parse(self, input):
        return copy.deepcopy(input)

    def get_link_density(self, elem):
        # readability measures text with two regular expressions per call, once per link and once for
        # the element: a third of all extraction time. Collapsing whitespace with split() gives the same
        # lengths (up to rare non-breaking-space runs) at a fraction of the cost.
        links = sum(_collapsed_length(a.text_content()) for a in elem.iterdescendants("a"))
        return links / max(_collapsed_length(elem.text_content()), 1)


def _collapsed_length(text: str) -> int:
    words = text.split()
    return sum(map(len, words)) + max(len(words) - 1, 0)


class _Markdown(MarkdownConverter):
    """markdownify with compact links and images."""

    def __init__(
        self, include_image_urls: bool = False, title: str | None = None, page_url: str = "", **options
    ):
        super().__init__(
            heading_style="atx",
            bullets="-",
            escape_asterisks=False,
            escape_underscores=False,
            newline_style="backslash",
            strip=["span"],
            **options,
        )
        self.include_image_urls = include_image_urls
        # An image whose alt text repeats the title says nothing; the headline is dropped once (below).
        self.skip_alt = (title or "").strip().lower()
        self.headline = title or ""
        self.page_url = page_url.split("#", 1)[0]
        self.given: set[str] = set()
        self._density: dict[int, bool] = {}

    def convert_a(self, el, text, parent_tags):
        href = (el.get("href") or "").strip()
        if "_noformat" in parent_tags or not self._leads_elsewhere(href):
            return text
        prefix, suffix, inner = _chomp(text)
        if not inner:
            return ""
        if not self.include_image_urls and _IMAGES_ONLY.fullmatch(inner):
            # A linked image (usually to its full-size file or to the article it illustrates): its alt
            # text says what it is; the URL is an image URL, left out unless asked for.
            return text
        if href in self.given or self._in_link_dense_text(el):
            return text
        self.given.add(href)
        if inner == href:
            return f"{prefix}<{href}>{suffix}"
        return f"{prefix}[{inner}]({href.replace(' ', '%20').replace(')', '%29')}){suffix}"

    def _in_link_dense_text(self, el) -> bool:
        """Whether the link sits in a paragraph, item or cell of 20 words or more with a link every
        ``DENSE_LINK_WORDS`` words or fewer (a wiki's prose, a reference list): there the URLs would
        outweigh the text, so links keep only their words."""
        block = el.parent
        while block is not None and block.name not in _BLOCKS:
            block = block.parent
        if block is None:
            return False
        key = id(block)
        if key not in self._density:
            words = len(block.get_text(" ", strip=True).split())
            links = sum(1 for a in block.find_all("a", href=True) if self._leads_elsewhere(a["href"].strip()))
            self._density[key] = links >= DENSE_MIN_LINKS and links * DENSE_LINK_WORDS >= words
        return self._density[key]

    def _leads_elsewhere(self, href: str) -> bool:
        """False for a link that leads nowhere to fetch: ``javascript:``, or a jump within the page (a
        footnote, "back to top"), which cleaning made absolute."""
        if not href or _DEAD_LINK.match(href):
            return False
        return not ("#" in href and href.split("#", 1)[0] == self.page_url)

    def convert_hN(self, n, el, text, parent_tags):
        if n <= 2 and self.headline and "_inline" not in parent_tags and _similar(self.headline, text):
            # The article's own headline: the output gives it as ``title`` already.
            self.headline = ""
            return ""
        return super().convert_hN(n, el, text, parent_tags)

    def convert_img(self, el, text, parent_tags):
        alt = " ".join((el.get("alt") or "").split())
        src = (el.get("src") or "").strip()
        if self.include_image_urls and src and not src.startswith("data:"):
            return f"![{alt}]({src.replace(' ', '%20').replace(')', '%29')})"
        if not alt or alt.lower() == self.skip_alt:
            return ""
        return f"![{alt}]"


def _chomp(text: str) -> tuple[str, str, str]:
    prefix = " " if text[:1] in (" ", "\n", "\t") else ""
    suffix = " " if text[-1:] in (" ", "\n", "\t") else ""
    return prefix, suffix, text.strip()


def to_markdown(
    html: str, *, include_image_urls: bool = False, title: str | None = None, page_url: str = ""
) -> str:
    """Markdown of an HTML fragment, with blank lines and spaces collapsed."""
    soup = BeautifulSoup(html, "lxml")
    converter = _Markdown(include_image_urls=include_image_urls, title=title, page_url=page_url)
    text = converter.convert_soup(soup)
    text = _TRAILING_SPACE.sub("\n", text)
    text = _BLANK_LINES.sub("\n\n", text)
    return text.strip()


def _text_length(element) -> int:
    return len(" ".join(element.text_content().split())) if element is not None else 0


def extract(
    html: str | bytes, url: str, *, include_image_urls: bool = False, deadline: Deadline | None = None
) -> tuple[str | None, str]:
    """The title and the main text of an HTML page as Markdown, links and images absolute against
    ``url`` (the final URL). A page with no text gives ``(title, "")``.

    ``deadline`` is the call's reading budget: extraction checks it between its stages and raises
    ``ReadingTooLong`` (or ``ToolCancelled``) when it has run out.
    """
    deadline = deadline or Deadline.never()
    deadline.check()
    doc = _parse(html)
    if doc is None:
        return None, ""
    title = page_title(doc)
    base = base_url(doc, url)
    clean(doc)
    body = doc.find("body")
    if body is None:
        body = doc
    page_chars = _text_length(body)
    if page_chars == 0:
        return title, ""
    deadline.check()
    article_html = ""
    try:
        article_html = _Readability(doc, url=url).summary(html_partial=True)
    except Exception:  # readability raises Unparseable (and worse) on odd trees; fall back below
        article_html = ""
    content = None
    if article_html:
        content = lxml.html.fragment_fromstring(article_html, create_parent="div")
    article_chars = _text_length(content)
    if article_chars == 0 or (
        article_chars < MIN_ARTICLE_CHARACTERS and article_chars < page_chars * MIN_ARTICLE_SHARE
    ):
        content = body
    deadline.check()
    absolutize(content, base)
    article_html = lxml.html.tostring(content, encoding="unicode")
    markdown = to_markdown(article_html, include_image_urls=include_image_urls, title=title, page_url=url)
    return title, markdown
