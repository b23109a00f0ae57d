"""What a page says about itself: when it was published, who wrote it, and its language.

Only what the page states, in this order: JSON-LD (schema.org ``datePublished``, ``author``,
``inLanguage``), then ``<meta>`` tags (Open Graph ``article:published_time``, Dublin Core, ``author``,
citation and Parse.ly tags), then the markup (``<time datetime>``, ``rel="author"``, ``<html lang>``).
Nothing is guessed from the URL or the text: a wrong date is worse than none.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime
from email.utils import parsedate_to_datetime

import lxml.html
from lxml import etree

#: Expressions compiled once, here and in the modules beside this one, ``/descendant::`` where they said ``//`` (the
#: same elements in the same order, without the node set of every node that libxml2 builds for ``//``): a fifth to a
#: third less time on readability's pages.
JSON_LD_SCRIPTS = etree.XPath("/descendant::script[@type='application/ld+json']")
_MARKED_AUTHORS = etree.XPath("/descendant::*[@rel='author' or @itemprop='author']")
#: ``<time>`` elements (and others) marked as the publication date, in ``_time_element``'s order; they were compiled
#: for each page, with ``//``.
_DATED = tuple(map(etree.XPath, (
    "/descendant::*[@itemprop='datePublished'][@datetime or @content]",
    "/descendant::time[@pubdate][@datetime]",
    "/descendant::article/descendant::time[@datetime]",
)))
#: ``<meta>`` names and properties stating the publication date, by priority.
DATE_META = (
    "article:published_time", "og:article:published_time", "datepublished", "dc.date.issued",
    "dcterms.issued", "citation_publication_date", "citation_date", "parsely-pub-date", "sailthru.date",
    "pubdate", "publishdate", "publish-date", "publish_date", "date", "dc.date", "dcterms.date",
    "dc.date.created", "dcterms.created",
)
AUTHOR_META = (
    "author", "article:author", "parsely-author", "dc.creator", "dcterms.creator", "citation_author",
    "sailthru.author", "byl",
)
LANGUAGE_META = ("content-language", "language", "dc.language", "dcterms.language", "og:locale")

_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$")
_ISO_DATE = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})")
_SLASH_DATE = re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2})$")
_BY = re.compile(r"^\s*by\s+", re.IGNORECASE)
MAX_AUTHOR = 200
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


@dataclass(frozen=True)
class Metadata:
    published: str | None = None
    author: str | None = None
    language: str | None = None


def iso_date(value: str) -> str | None:
    """``value`` as ISO 8601: a date-time (with its offset when the page gives one) or a date. None for
    what is not a date this side of 1900-2100."""
    value = " ".join(str(value).split())
    if not value:
        return None
    parsed: datetime | date | None = None
    try:
        parsed = datetime.fromisoformat(value.replace(" ", "T", 1) if re.match(r"^\d{4}-\d\d-\d\d \d", value)
                                        else value)
    except ValueError:
        try:
            parsed = parsedate_to_datetime(value)  # RFC 2822, as some CMSs write it
        except (TypeError, ValueError, IndexError):
            match = _ISO_DATE.match(value) or _SLASH_DATE.match(value)
            if match:
                try:
                    parsed = date(*map(int, match.groups()))
                except ValueError:
                    return None
    if parsed is None or not 1900 <= parsed.year <= 2100:
        return None
    if isinstance(parsed, datetime):
        if len(value) <= 10 or (parsed.time() == datetime.min.time() and parsed.tzinfo is None):
            return parsed.date().isoformat()
        return parsed.isoformat()
    return parsed.isoformat()


def json_ld_items(doc: lxml.html.HtmlElement):
    for script in JSON_LD_SCRIPTS(doc):
        try:
            data = json.loads((script.text or "").strip().removeprefix("<![CDATA[").removesuffix("]]>"))
        except ValueError:
            continue
        stack = [data]
        while stack:
            item = stack.pop(0)
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                yield item
                if isinstance(item.get("@graph"), list):
                    stack.extend(item["@graph"])
                if isinstance(item.get("mainEntity"), dict):
                    stack.append(item["mainEntity"])


def _names(value) -> list[str]:
    """The author names in a JSON-LD ``author``: a string, a Person, or a list of them."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return _names(value.get("name"))
    if isinstance(value, list):
        return [name for item in value for name in _names(item)]
    return []


def _clean_author(value: str | None) -> str | None:
    if not value:
        return None
    value = _BY.sub("", " ".join(value.split())).strip(" ,;|")
    if not value or value.startswith(("http://", "https://", "@")) or len(value) > MAX_AUTHOR:
        return None
    return value


def _language(value: str | None) -> str | None:
    value = (value or "").strip().replace("_", "-").split(",")[0].strip()
    return value if _LANGUAGE.match(value) else None


def meta_values(doc: lxml.html.HtmlElement) -> dict[str, str]:
    """``<meta>`` values by lowercased name, property, itemprop or http-equiv; the first one wins."""
    values: dict[str, str] = {}
    for meta in doc.iter("meta"):
        content = (meta.get("content") or "").strip()
        if not content:
            continue
        for attr in ("property", "name", "itemprop", "http-equiv"):
            key = (meta.get(attr) or "").strip().lower()
            if key:
                values.setdefault(key, content)
    return values


def _time_element(doc: lxml.html.HtmlElement) -> str | None:
    """A ``<time>`` marked as the publication date, else the first ``<time datetime>`` of the article."""
    for expression in _DATED:
        for element in expression(doc):
            found = iso_date(element.get("datetime") or element.get("content") or "")
            if found:
                return found
    return None


def _markup_author(doc: lxml.html.HtmlElement) -> str | None:
    for element in _MARKED_AUTHORS(doc):
        named = element.xpath(".//*[@itemprop='name']")
        author = _clean_author((named[0] if named else element).text_content())
        if author and len(author.split()) <= 6:
            return author
    return None


def page_metadata(doc: lxml.html.HtmlElement, items: list[dict] | None = None) -> Metadata:
    """The publication date, author and language the page states (before it is cleaned). ``items``: the page's
    ``json_ld_items`` when the caller has read them already."""
    published = author = language = None
    for item in json_ld_items(doc) if items is None else items:
        if published is None and item.get("datePublished"):
            published = iso_date(str(item["datePublished"]))
        if author is None and item.get("author"):
            author = _clean_author(", ".join(dict.fromkeys(n.strip() for n in _names(item["author"]) if n.strip())))
        if language is None and isinstance(item.get("inLanguage"), str):
            language = _language(item["inLanguage"])
    meta = meta_values(doc)
    if published is None:
        published = next((d for key in DATE_META if key in meta and (d := iso_date(meta[key]))), None)
    if published is None:
        published = _time_element(doc)
    if author is None:
        author = next((a for key in AUTHOR_META if key in meta and (a := _clean_author(meta[key]))), None)
    if author is None:
        author = _markup_author(doc)
    if language is None:
        language = _language(doc.get("lang") or doc.get("xml:lang") or doc.get(_XML_LANG))
    if language is None:
        language = next((lang for key in LANGUAGE_META if key in meta and (lang := _language(meta[key]))), None)
    return Metadata(published, author, language)
