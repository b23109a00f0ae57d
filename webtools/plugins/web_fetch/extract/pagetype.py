"""What kind of page this is, from the page itself: what it declares, then the shape of its DOM.

The kinds (``TYPES``) are those of the Web Content eXtraction Benchmark: an article (news, a blog post),
a forum or Q&A thread, a product page, a listing (an index of articles, courses, events, results), a
collection (a shop's category of products), a service page (what a company or an institution offers, in
sections) and documentation. What each kind needs read differently is in its own module (``forum``,
``listing``, ``product``); ``extract()`` names the kind in its result, so the model knows what it reads.

Declarations read: schema.org JSON-LD ``@type`` (``@graph`` and ``mainEntity`` included), microdata
``itemtype`` and Open Graph ``og:type``. A declaration is a hint, not proof (many sites call every page
an ``article``): the DOM's shape decides where the two disagree.
"""
from __future__ import annotations

import re

from lxml import etree

from .metadata import json_ld_items

ARTICLE, FORUM, PRODUCT, LISTING, COLLECTION, SERVICE, DOCUMENTATION = (
    "article", "forum", "product", "listing", "collection", "service", "documentation")
#: Compiled once, with ``/descendant::`` for ``//`` (see ``metadata.JSON_LD_SCRIPTS``).
_OUTER_ITEMS = etree.XPath("/descendant::*[@itemtype][not(ancestor::*[@itemtype])]")
_PRODUCT_ITEMS = etree.XPath("/descendant::*[@itemtype][contains(@itemtype, 'schema.org/Product')]")
_PRICE_META = etree.XPath("/descendant::meta[@property='product:price:amount' or @property='og:price:amount']")
_BUTTONS = etree.XPath("/descendant::body/descendant::button|/descendant::body/descendant::input[@type='submit']"
                       "|/descendant::body/descendant::a")
TYPES = (ARTICLE, FORUM, PRODUCT, LISTING, COLLECTION, SERVICE, DOCUMENTATION)

#: A thread declares itself a QAPage or a DiscussionForumPosting, or one ``Question``: a service page's FAQ marks
#: each of its questions a ``Question`` (microdata, or JSON-LD items not within a FAQPage), several of them, and was
#: read as a thread of them, its sections left out. Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0):
#: service pages 0.8428 to 0.8452 (one page, a consultancy's data services 0.65 to 0.96), listings 0.7551 to 0.7551 (a
#: shop's category 0.946 to 0.942), forums unchanged (every thread there declaring a QAPage or a posting too); of all
#: the tuned pages of the ten sets, three change their declared kind (the third, a service page, scores the same), none
#: of the article sets'. One site gained: a rule on the schema's meaning more than on the measure.
_THREAD_TYPES = frozenset({"QAPage", "DiscussionForumPosting"})
_QUESTIONS = etree.XPath("/descendant::*[@itemtype][contains(@itemtype, 'schema.org/Question')]")
#: What a product on sale declares (its offers, its variants, its identifiers). A ``Product`` declaring none of them
#: on a page that is a run of headed sections (``service_sections``) is a service page's rating stars or its software:
#: the page is not read as a product's (trafilatura's full reading alone), but by its shape. Measured on the tuned
#: parts (WCXB, Foley 2026, CC-BY-4.0): service pages 0.8452 to 0.8486 (four pages of four sites, a marketing suite
#: 0.71 to 0.94, a CRM's 0.73 to 0.77, two consultancies' 0.86 to 0.94 and 0.77 to 0.87), products 0.7266 to 0.7245 (a
#: computer maker's two pages, 0.51 to 0.40 and 0.84 to 0.76). Without the sections, two shops' categories declaring
#: a rating fell (collections 0.687 to 0.676). Of all the tuned pages of the ten sets these six change their declared
#: kind (scanned), none of the article sets'; over all wcxb pages the net is up (+0.45 and -0.19 summed).
_SOLD = frozenset({"offers", "hasvariant", "sku", "mpn", "gtin", "gtin8", "gtin12", "gtin13", "gtin14", "productid",
                   "productgroupid", "model"})
PRODUCT_TYPES = frozenset({"Product", "ProductGroup", "IndividualProduct", "ProductModel", "Car", "Vehicle"})
_LISTING_TYPES = frozenset({"CollectionPage", "ItemList", "SearchResultsPage", "OfferCatalog"})
_DOCUMENTATION_TYPES = frozenset({"TechArticle", "APIReference"})
_ARTICLE_TYPES = frozenset({"Article", "NewsArticle", "BlogPosting", "Report", "ScholarlyArticle", "OpinionNewsArticle",
                            "ReportageNewsArticle", "AnalysisNewsArticle", "LiveBlogPosting"})
_PRICE = re.compile(r"(?:[$€£¥₹]\s?\d|\d(?:[.,]\d\d)?\s?(?:[$€£¥₹]|USD|EUR|GBP)\b)")
#: Documentation generators, by their ``<meta name="generator">`` or the classes of their page.
_DOCS_GENERATOR = re.compile(r"sphinx|mkdocs|docusaurus|gitbook|hugo-book|docfx|javadoc|doxygen|readthedocs|"
                             r"vuepress|vitepress|mintlify|nextra|starlight", re.IGNORECASE)
_DOCS_CLASS = re.compile(r"(?:^|\s)(?:rst-content|md-content|theme-doc-markdown|markdown-section|docs-content|"
                         r"documentation|doc-content|devsite-article-body|sl-markdown-content|nextra-content|"
                         r"vp-doc|api-reference)(?:\s|$)", re.IGNORECASE)


def _types(value) -> set[str]:
    if isinstance(value, str):
        return {value.rsplit("/", 1)[-1]}
    if isinstance(value, list):
        return {t.rsplit("/", 1)[-1] for t in value if isinstance(t, str)}
    return set()


def declared_types(doc, items: list[dict] | None = None) -> set[str]:
    """The schema.org types the page declares for itself in JSON-LD and microdata (item lists' elements
    and breadcrumbs left out: a category page lists products without being one). ``items``: the page's
    ``json_ld_items`` when the caller has read them already."""
    found: set[str] = set()
    for item in json_ld_items(doc) if items is None else items:
        found |= _types(item.get("@type"))
    for element in _OUTER_ITEMS(doc):
        found |= _types(element.get("itemtype").split())
    return found


def og_type(doc) -> str:
    for meta in doc.iter("meta"):
        if (meta.get("property") or meta.get("name") or "").strip().lower() == "og:type":
            return (meta.get("content") or "").strip().lower()
    return ""


def _questions(doc, items: list[dict]) -> int:
    """How many ``Question`` items the page declares, in JSON-LD (``items``) and in microdata."""
    return sum(1 for item in items if "Question" in _types(item.get("@type"))) + len(_QUESTIONS(doc))


def declared_kind(doc, types: set[str] | None = None, items: list[dict] | None = None) -> str | None:
    """The kind the page's declarations give, or None. Product declarations count only for a page that
    declares one product (a category page declares many), listings only without an article. ``types``:
    ``declared_types(doc)`` and ``items`` the page's ``json_ld_items`` when the caller has read them already."""
    if items is None:
        items = list(json_ld_items(doc))
    if types is None:
        types = declared_types(doc, items)
    og = og_type(doc)
    if types & _THREAD_TYPES or ("Question" in types and _questions(doc, items) == 1):
        return FORUM
    products = [item for item in items if _types(item.get("@type")) & PRODUCT_TYPES]
    if len(products) == 1 and not any(key.lower() in _SOLD for key in products[0]) \
            and len(doc.xpath(_HEADED_SECTIONS)) >= MIN_SECTIONS:
        products = []  # a service page's rating stars (see ``_SOLD``)
    products = len(products)
    microdata_products = len(_PRODUCT_ITEMS(doc))
    if (products == 1 or og in ("product", "og:product", "product.item")) and microdata_products <= 1:
        return PRODUCT
    if types & _DOCUMENTATION_TYPES:
        return DOCUMENTATION
    if types & _ARTICLE_TYPES:
        return ARTICLE
    if types & _LISTING_TYPES:
        return LISTING
    return None


#: The buttons of one product's page; a category page has one on each card.
_BUY = re.compile(r"add to (?:cart|bag|basket|trolley)|buy now|in den warenkorb|ajouter au panier", re.IGNORECASE)
MAX_BUY_BUTTONS = 3


def product_shape(doc) -> bool:
    """Whether the page shows one product's offer block: Open Graph's price metadata, or one to
    ``MAX_BUY_BUTTONS`` "add to cart" buttons, by the words they show or by the name they give a screen reader
    (``aria-label``: a button drawn as an icon, or a shop's shortcut to its cart button). Read by their names
    too, the tuned products of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0) rose from 0.698 to 0.701 (one page, a
    shop's page of one product that was read as an article: 0.43 to 0.64), the other types and the article
    sets unchanged."""
    if _PRICE_META(doc):
        return True
    buttons = 0
    for element in _BUTTONS(doc):
        if _BUY.search(element.get("value") or "" if element.tag == "input" else element.text_content()) \
                or _BUY.search(element.get("aria-label") or ""):
            buttons += 1
            if buttons > MAX_BUY_BUTTONS:
                return False
    return buttons > 0


def documentation_shape(doc) -> bool:
    """Whether the page is made by a documentation generator (its ``generator`` meta or its classes)."""
    for meta in doc.iter("meta"):
        if (meta.get("name") or "").lower() == "generator" and _DOCS_GENERATOR.search(meta.get("content") or ""):
            return True
    # One search of the class attributes joined by line breaks: a name is whole between two spaces or
    # the value's ends, and a line break is a space; searching each value was a fiftieth of extraction time.
    return _DOCS_CLASS.search("\n".join(doc.xpath("//body//@class"))) is not None


def priced(elements) -> bool:
    """Whether most of ``elements`` (a listing's cards) show a price: a shop's collection."""
    elements = list(elements)
    return sum(1 for el in elements if _PRICE.search(el.text_content())) >= 0.5 * len(elements)


#: A service page is a run of sections, each with its heading.
MIN_SECTIONS = 3
_HEADED_SECTIONS = "//body//section[.//h1 or .//h2 or .//h3][not(ancestor::article)]"


def service_sections(doc) -> tuple[object, list] | None:
    """A service page's run of headed ``<section>``s (those not within an ``<article>``), when it has
    ``MIN_SECTIONS`` or more: the smallest element holding them all (the page's offer, section by section,
    without what lies around it) and the outermost sections, in page order. None for fewer."""
    sections = doc.xpath(_HEADED_SECTIONS)
    if len(sections) < MIN_SECTIONS:
        return None
    region, last = sections[0], sections[-1]
    # Sections come in document order: an element holding the first and the last holds every one.
    while region is not None and not any(ancestor is region for ancestor in last.iterancestors()):
        region = region.getparent()
    found = set(sections)
    outermost = [section for section in sections if not any(a in found for a in section.iterancestors())]
    return region, outermost


def fallback_kind(doc, offer: bool = False) -> str:
    """The kind of a page that declares none and shows neither posts nor cards: documentation when a
    documentation generator made it, a product when it showed an offer block (``offer``: see
    ``product_shape``, read before cleaning removes its buttons), a service page when it is a run of
    headed ``<section>``s, else an article."""
    if documentation_shape(doc):
        return DOCUMENTATION
    if offer:
        return PRODUCT
    sections = doc.xpath(_HEADED_SECTIONS)
    if len(sections) >= MIN_SECTIONS and not doc.xpath("//body//article"):
        return SERVICE
    return ARTICLE
