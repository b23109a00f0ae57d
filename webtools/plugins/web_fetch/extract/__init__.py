"""HTML to compact Markdown: the page's title, its main text and what it says about itself.

One entry point, ``extract()``, in stages (one module each):

1. ``decode``: bytes to text by the declared charset; ``page``: lxml parses, the title is read.
2. ``metadata``: the publication date, author and language the page states.
3. ``candidates``: trafilatura's main text (on the page without hidden elements) and readability-lxml's
   (on the page without scripts, navigation and forms too).
4. ``choice``: the two merged block by block, by agreement and text density; then the article's lead
   (what lies between its headline and its body, which both extractors miss) from the whole page.
   When readability's text is a small part of trafilatura's (it found one block of many), trafilatura's
   is used instead of the merge.
5. When the merge is empty, or readability found nothing and trafilatura little (a page without an
   article: an index, a list of links), the whole cleaned page is used instead; when cleaning left no
   text, trafilatura's candidate (or its full reading when longer), else the page's bare text. A page
   with text never comes back empty.
   A service page (a run of headed sections) whose text kept a part of each section is given every
   section (``_every_section``); a page read as an article whose text kept a small part of its one
   ``<main>`` is given that ``<main>`` (``_main_region``).
6. ``markdown``: writes each candidate as compact Markdown (links without titles, images only
   when their URLs are asked for, pipe tables when simple, fenced code with its language).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cache

import lxml.html
from lxml import etree

from webtools.net import InvalidURL, read_url
from webtools.runtime.budget import Deadline

from .candidates import readability_article
from .trafilatura_reading import trafilatura_article
from .choice import (
    agreement, blocks, count_words, follows_headline, lead_region, merge, nearest_after_headline, remembering_words,
    shingles, text_words, with_lead, without_copies, without_galleries, without_repeats, word_count, words,
)
from .decode import decode, sniff_charset
from .markdown import as_text, element_markdown, to_markdown
from .metadata import Metadata, json_ld_items, meta_values, page_metadata
from .forum import byline, drop_repeated_quotes, only_comments, post_element, thread_posts, thread_share
from .listing import (
    cards_markdown, cards_win, dated_by_a_card, find_cards, in_pieces, listing_intro, open_link_cards, priced_rails,
)
from .pagetype import (
    ARTICLE, COLLECTION, DOCUMENTATION, FORUM, LISTING, PRODUCT, PRODUCT_TYPES, SERVICE, declared_kind, declared_types,
    fallback_kind, og_type, priced, product_shape, service_sections,
)
from .product import (aside_words, product_item, product_markdown, shown_offer, with_name, without_asides,
                      without_other_products, without_rails)
from .tables import with_missed_tables
from .hidden import drop_dialogs, drop_hidden, open_heading_buttons, show_disclosed
from .page import (
    BARE_REMOVED_TAGS, absolutize, base_url, clean, element_count, page_title, parse, remembering_links,
)

__all__ = ["Extraction", "decode", "extract", "sniff_charset", "to_markdown"]

#: When readability finds nothing and trafilatura fewer words than this, the page has no article (an
#: index, a list of links: trafilatura then gives its whole text without links) and the cleaned page
#: is used. Measured: falling back more often (on short merges, or on short pages) scored lower on
#: every data set, since a short post is more often right than the page around it.
MIN_ARTICLE_WORDS = 80


#: Pages larger than this (elements) are not given to trafilatura, and larger than the next not to
#: readability either: on a 5 MB table (290,000 elements) they took 8.5 s and 3.3 s, and such a page is
#: a document of its own, not an article in chrome. The largest of the 1640 benchmark pages has 10,500.
MAX_TRAFILATURA_ELEMENTS = 30_000
#: A page that does not declare itself a forum is read as a thread only when its posts hold this share of
#: its text: a blog's comments or a column of messages beside an article do not.
MIN_THREAD_SHARE = 0.15
#: A page that declares nothing, whose extractors agree on less than this share of their words and whose
#: merged text holds less than ``ARTICLE_SHARE`` of its words, has no article: the whole cleaned page is
#: its content (see ``_not_an_article``). Measured on the tuned halves of wcxb-dev, dragnet and
#: readability's pages: F1 rose on every page type (service 0.72 to 0.77, collection 0.55 to 0.62) and on
#: dragnet (0.803 to 0.813), readability's unchanged.
#: Not on a page showing one product's offer block (``pagetype.product_shape``), whose text stays: the whole page
#: brought the shop's menus, rails and footer with the product. Measured on the tuned parts (WCXB, Foley 2026,
#: CC-BY-4.0), where it applied to three pages: products 0.7236 to 0.7251 (a tumbler's page 0.40 to 0.80, a game
#: store's 0.66 to 0.39, whose extractors kept too little of it), dragnet 0.8256 to 0.8262 (one page, 0.30 to
#: 0.90), the other types and the article sets unchanged.
AGREEMENT = 0.8
ARTICLE_SHARE = 0.4
#: A page that declares nothing, read as an article or a service page, whose text holds less than
#: ``THIN_SHARE`` of its cleaned words, in a page with less than ``THIN_LINK_SHARE`` of its words in links
#: (not a portal's front page), is read again by trafilatura's full reading (its own readability and
#: jusText fallbacks), which replaces the text when it gives ``FULLER`` times its words and at least
#: ``FULLER_WORDS`` (see ``fuller_reading``). Measured on the tuned parts: service pages 0.759 to 0.785, forums
#: 0.750 to 0.768, products 0.640 to 0.647 (wcxb's word F1); one dragnet page of 368 lost, the other
#: article sets unchanged. It runs on one page in thirty.
THIN_SHARE = 0.3
THIN_LINK_SHARE = 0.3
FULLER = 1.5
FULLER_WORDS = 150
MAX_READABILITY_ELEMENTS = 100_000
#: A page that declares nothing, read as an article that Open Graph does not call an article or a blog post,
#: whose one ``<main>`` (or ``role="main"``) holds ``MAIN_SHARE`` of the cleaned page's words and every
#: ``<h1>`` of it, and whose text holds less than ``MAIN_MISSED`` of the words of that ``<main>`` (and of an
#: ``<article>`` holding its ``<h1>``), is that ``<main>``: its author marked the page's content, and the
#: extractors kept one block of it (a service page's intro without its tiles of offers, a shop's category
#: text without its products). Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0): service pages
#: 0.822 to 0.832 (8 pages up, one down), collections 0.655 to 0.688 (11 up, 3 down), listings 0.724 to
#: 0.735, products 0.709 to 0.710, forums and documentation unchanged; all wcxb-dev pages 0.780 to 0.789;
#: readability's pages, cleanportaleval and cleaneval-dev unchanged, dragnet 0.824 to 0.825 (two pages up).
#: Without the conditions on Open Graph and the ``<h1>`` inside ``<main>``, collections and listings gained
#: 0.003 and 0.009 more, but a story whose headline sits above its ``<main>`` (readability's pages 0.962 to
#: 0.959) and a blog's posts declaring ``og:type`` article lost (dragnet 0.824 to 0.822). The ``<article>``
#: condition (a post beside a blogroll in its ``<main>``) cost a forum's thread (forums 0.845 to 0.838) and a
#: dragnet page (+0.0003).
#: Nor on a page whose microdata declares a product (``itemtype`` Product, on a page that declares several
#: items or none in JSON-LD, so not read as a product's): its ``<main>`` holds the reviews, tags and rails
#: around the product that the extractors rightly left out. Measured on the tuned parts (WCXB, Foley 2026,
#: CC-BY-4.0): products 0.7185 to 0.7208 (two game store pages, 0.49 to 0.60 and 0.69 to 0.79), the other
#: types and the article sets unchanged. The page's declared types are read once, before cleaning, so a product
#: declared in JSON-LD counts too (the 2344 bench pages' outputs unchanged).
MAIN_SHARE = 0.8
MAIN_MISSED = 0.7
#: A service page's text that holds less than ``SECTIONS_MISSED`` of the words of its run of headed
#: sections, whose words are theirs (``IN_SECTIONS``), and that holds ``SECTION_TOUCHED`` of the words of
#: each section of ``SECTION_WORDS`` or more, kept a part of each section: every section is the text (see
#: ``_every_section``). Measured on the tuned part of wcxb-dev (WCXB, CC-BY-4.0): service pages 0.803 to
#: 0.813 (9 pages changed, 8 up), documentation 0.930 to 0.934, collections 0.628 to 0.630, products 0.648
#: to 0.647 (one page of a shop declaring nothing), forums, listings and the article sets unchanged (it
#: applied to none of their pages).
#: Without the test of each section, collections fell 0.007 and products 0.002: a shop's sections of
#: related products and reviews, which the extractors rightly left out whole.
SECTIONS_MISSED = 0.8
IN_SECTIONS = 0.95
SECTION_WORDS = 20
SECTION_TOUCHED = 0.25
#: trafilatura reads the page with its chrome: on a page whose menus are many and long (a mega menu of products, each
#: with a line on it) it can keep a menu as the text. When ``IN_MENUS`` of its text's 4-word shingles are the
#: shingles of the page's ``<nav>``s, it read a menu, and its text is not a candidate (readability's, read on the page
#: without its ``<nav>``s, is). Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0): service pages 0.8554 to
#: 0.8606 (an API tool's home page, 0.22 to 0.90; one other page where it applied unchanged). Its words alone (not
#: their runs) matched the texts of two pages whose words their menus share (a database tool's home page 0.96 to
#: 0.94); the words missing from the cleaned page lost a dragnet article (0.86 to nearly nothing), held by a
#: ``<header>`` left open in the markup, which cleaning removes.
IN_MENUS = 0.5
#: When readability's text has less than ``MISSED`` of trafilatura's words, and trafilatura's has at least
#: ``MISSED_WORDS``, readability found one block of a page whose content is in many (a service page's
#: sections, a documentation page's short paragraphs and lists, a collection's intro) and the merge, whose
#: order and short blocks it gives, kept too little: trafilatura's text alone is used. Measured on the
#: tuned parts of wcxb-dev (its word F1): collection 0.570 to 0.590, documentation 0.906 to 0.918, listing
#: 0.664 to 0.674, service 0.781 to 0.788, forum and product unchanged; on the article sets within 0.005
#: (dragnet up, cleaneval-dev down). Merging with trafilatura's text as the base instead gained half.
MISSED = 0.25
MISSED_WORDS = 50
#: When trafilatura's text holds ``WHOLE_PAGE`` of the cleaned page's words (and ``MIN_ARTICLE_WORDS`` or
#: more), ``PROSE_SHARE`` of them in prose blocks (``choice.Block.prose``), readability is not run: it would
#: keep a part of the same cleaned page, and the merge adds little to such a text (its prose blocks are kept
#: whatever the other extractor says). trafilatura's text is the merged text. Not on a page with a code block
#: or a table of data (see ``_holds_the_page``), nor on one showing an offer block. Measured on the tuned
#: parts: readability is then not run on 28% of readability's pages and 25% of cleaneval-dev's (old pages
#: that are nearly all article); F1 unchanged on readability's pages (0.962), dragnet (0.824),
#: cleanportaleval (0.970) and every wcxb-dev type (WCXB, CC-BY-4.0), cleaneval-dev 0.881 to 0.880; pages per
#: second beside trafilatura on readability's and cleaneval-dev's pages 1.01-1.05 to 1.09-1.11 times its own.
WHOLE_PAGE = 0.93
PROSE_SHARE = 0.7
#: On a page that declares nothing but shows one product's offer block (``pagetype.product_shape``), any
#: readability text shorter than trafilatura's is such a block (the description, without the offer and the
#: specifications around it): trafilatura's text is used. Measured on the tuned parts of wcxb-dev: products
#: 0.652 to 0.655, collections 0.628 to 0.629, the other types unchanged; no page of the article sets but two of
#: dragnet's shows an offer block, both unchanged.


class Extraction(tuple):
    """``(title, text)``, as ``extract()`` has always returned, with what the page says about itself as
    attributes: ``published`` (ISO 8601), ``author`` and ``language``, each None when it does not say,
    and ``type``, the kind of page (one of ``pagetype.TYPES``: "article", "forum", "product", ...)."""

    def __new__(cls, title: str | None, text: str, metadata: Metadata | None = None, type: str = ARTICLE):
        self = super().__new__(cls, (title, text))
        metadata = metadata or Metadata()
        self.published = metadata.published
        self.author = metadata.author
        self.language = metadata.language
        self.type = type
        return self

    def __getnewargs__(self):
        # Extraction runs in worker processes (webtools.runtime.workers): the result crosses by pickle.
        return self[0], self[1], Metadata(self.published, self.author, self.language), self.type

    @property
    def title(self) -> str | None:
        return self[0]

    @property
    def text(self) -> str:
        return self[1]


def _markdown(element: lxml.html.HtmlElement | None, **options) -> str:
    return "" if element is None else element_markdown(element, **options)


def _absolute_markdown(element, base: str, options: dict) -> str:
    """The Markdown of ``element`` of the page, its links made absolute first."""
    absolutize(element, base)
    return _markdown(element, **options)


def _front_page(url: str) -> bool:
    """Whether ``url`` is a site's front page: its path is ``/``. Its index, whatever one article it declares
    (github.blog's ``TechArticle`` "Home" was read as documentation, its cards left out). Of the tuned pages of
    the ten sets, two front pages declare an article or documentation (WCXB, Foley 2026, CC-BY-4.0): listings,
    github.blog 0.447 to 0.488, stackoverflow.blog unchanged."""
    try:
        return read_url(url).path in ("", "/")
    except InvalidURL:
        return False


def _bare_text(html: str | bytes, base: str, options: dict) -> str:
    """The page's text with only scripts and styles removed: the last resort when cleaning removed every
    word (a page whose only text is hidden, or in ``<noscript>``, which says it needs JavaScript)."""
    doc = parse(html)
    etree.strip_elements(doc, *BARE_REMOVED_TAGS, with_tail=False)
    absolutize(doc, base)
    return _markdown(doc.find("body"), **options)


def _thread(posts, base: str, options: dict) -> str:
    """A thread's posts as Markdown: each post's author and date on a line, then its text."""
    parts = []
    earlier: list[str] = []  # the text of each post before this one
    for post in posts:
        element = post_element(post, options.get("title"))
        drop_repeated_quotes(element, earlier)
        earlier.append(" ".join(post.body.text_content().split()))
        absolutize(element, base)
        text = _markdown(element, **{**options, "title": None})
        if text:
            parts.extend(filter(None, [byline(post), text]))
    return "\n\n".join(parts)


def _not_an_article(article: str, traf: str, text: str, body, title: str | None,
                    page_words: Callable[[], int] | None = None) -> bool:
    """Whether the merged ``text`` is a part of a page that has no article: the two extractors disagree
    (less than ``AGREEMENT`` of the shorter one's words are the other's) and the text holds less than
    ``ARTICLE_SHARE`` of the cleaned page's words. A service page, a product's or a shop's page has its
    content in many blocks, and each extractor keeps a different one of them; an article's text is the one
    both find. ``page_words()``, when given, is ``len(words(body.text_content()))``, counted once."""
    if agreement(article, traf) >= AGREEMENT:
        return False
    page_words = page_words or (lambda: word_count(body.text_content()))
    if len(text_words(text)) >= ARTICLE_SHARE * page_words():
        return False
    return not follows_headline(body, title, text)


def _readability_missed(article: str, traf: str, offer: bool = False) -> bool:
    """Whether readability's ``article`` is a small part of trafilatura's ``traf`` (see ``MISSED``), or on a
    page showing an offer block (``offer``), any part shorter than it."""
    if offer:
        return len(text_words(article)) < len(text_words(traf))
    if count_words(traf, MISSED_WORDS) < MISSED_WORDS:
        return False
    return len(text_words(article)) < MISSED * len(text_words(traf))


def _holds_the_page(traf: str, body, page_words: Callable[[], int]) -> bool:
    """Whether trafilatura's text ``traf`` is the page's article and holds nearly all of the cleaned page
    ``body`` (``page_words()`` words): see ``WHOLE_PAGE``. Then readability is not run."""
    if count_words(traf, MIN_ARTICLE_WORDS) < MIN_ARTICLE_WORDS:
        return False
    traf_blocks = blocks(traf)  # read first: the merge reads them too, and the words come from them
    if len(text_words(traf)) < WHOLE_PAGE * page_words():
        return False
    prose = sum(block.words for block in traf_blocks if block.prose())
    if prose < PROSE_SHARE * sum(block.words for block in traf_blocks):
        return False
    # trafilatura writes code blocks and tables its own way (a block's language, a table's merged cells
    # lost) and drops a small table now and then; the merge gets them from readability's text. A page with
    # a code block, or with a table of data (not one a layout puts the page in) that has merged cells or
    # that trafilatura's text lacks, is read by both.
    half = page_words() // 2
    have = None
    for element in body.iter("pre", "table"):
        if element.tag == "pre":
            return False
        if element.find(".//table") is not None or count_words(element.text_content(), half) >= half:
            continue  # a layout's table
        if any(cell.get(span, "1").strip() not in ("", "1") for cell in element.iter("td", "th")
               for span in ("colspan", "rowspan")):
            return False
        if have is None:
            have = Counter(text_words(traf))
        inner = words(element.text_content())
        if sum((Counter(inner) & have).values()) < 0.5 * len(inner):
            return False
    return True


def _every_section(doc, text: str, base: str, options: dict) -> str | None:
    """The Markdown of a service page's sections (``pagetype.service_sections``) when ``text`` is a part of
    each of them that misses much of them: its words are theirs (``IN_SECTIONS``), it has less than
    ``SECTIONS_MISSED`` of their words, and ``SECTION_TOUCHED`` or more of each section's words (of
    sections of ``SECTION_WORDS`` or more). The extractors scored each section's blocks apart and kept
    some of each; a section they left out whole (a shop's related products, reviews) they left out on
    purpose, and the text stays. Else None."""
    found = service_sections(doc)
    if found is None:
        return None
    region, sections = found
    # Texts joined with spaces: a heading's last word and the next paragraph's first are two words.
    section_words = Counter(words(" ".join(region.itertext())))
    kept = Counter(text_words(text))
    if kept.total() >= SECTIONS_MISSED * section_words.total() \
            or (kept & section_words).total() < IN_SECTIONS * kept.total():
        return None
    for section in sections:
        own = Counter(words(" ".join(section.itertext())))
        if own.total() >= SECTION_WORDS and (own & kept).total() < SECTION_TOUCHED * own.total():
            return None
    absolutize(region, base)
    return _markdown(region, **options)


def _in_the_menus(doc, traf: str) -> bool:
    """Whether ``IN_MENUS`` of the 4-word shingles of trafilatura's text ``traf`` are those of the page's ``<nav>``s
    (not one holding the ``<main>``, which cleaning keeps): it read a menu (see ``IN_MENUS``)."""
    if not traf:
        return False
    navs = [nav for nav in doc.xpath("//body//nav") if next(nav.iter("main"), None) is None]
    if not navs:
        return False
    own = shingles(list(text_words(traf)))
    menus = shingles(words(" ".join(" ".join(nav.itertext()) for nav in navs)))
    return len(own & menus) >= IN_MENUS * len(own)


def _main_region(body, text: str, page_words: Callable[[], int]):
    """The cleaned page ``body``'s one ``<main>`` (or ``role="main"``) when it holds every ``<h1>`` of the page and
    ``MAIN_SHARE`` of its words (``page_words()``), and ``text`` less than ``MAIN_MISSED`` of the ``<main>``'s
    words and of the words of any ``<article>`` holding an ``<h1>``: see ``MAIN_MISSED``. Else None."""
    mains = body.xpath(".//main|.//*[@role='main']")
    mains = [m for m in mains if not any(a in mains for a in m.iterancestors())]
    if len(mains) != 1:
        return None
    main = mains[0]
    if any(main not in h1.iterancestors() for h1 in body.iter("h1")):
        return None
    main_words = word_count(main.text_content())
    count = len(text_words(text))
    if main_words < MAIN_SHARE * page_words() or count >= MAIN_MISSED * main_words:
        return None
    # The text that holds most of an <article> the headline is in is that article (a post beside its blogroll).
    for h1 in main.iter("h1"):
        articles = list(h1.iterancestors("article"))
        if articles and count >= MAIN_MISSED * len(text_words(articles[-1].text_content())):
            return None
    return main


def fuller_reading(html: str | bytes, base: str, options: dict, text: str, body,
                   page_words: Callable[[], int] | None = None) -> str | None:
    """trafilatura's full reading of the page (without hidden elements) when ``text``, the page's
    extraction, is thin and the page is not a column of links, and that reading gives much more (see
    ``THIN_SHARE``); else None. Service pages keep their content in many small blocks that the fast
    readings and the merge miss, and trafilatura's fallbacks find. ``page_words()``, when given, is
    ``len(words(body.text_content()))``, counted once."""
    page_words = (page_words or (lambda: word_count(body.text_content())))()
    count = len(text_words(text))
    if count >= THIN_SHARE * page_words:
        return None
    link_words = sum(len(words(a.text_content())) for a in body.iter("a"))
    if link_words >= THIN_LINK_SHARE * page_words:
        return None
    fuller = _full_reading(html, base, options)
    return fuller if count_words(fuller, FULLER_WORDS) >= FULLER_WORDS and len(words(fuller)) >= FULLER * count \
        else None


def _full_reading(html: str | bytes, base: str, options: dict) -> str:
    """trafilatura's full reading (its own readability and jusText fallbacks) of the page without hidden
    elements, parsed again; "" for a page too large for it."""
    doc = parse(html)
    if doc is None or element_count(doc) > MAX_TRAFILATURA_ELEMENTS:
        return ""
    drop_hidden(doc)
    return _markdown(trafilatura_article(doc, base, fast=False), **options)


def extract(
    html: str | bytes, url: str, *, include_image_urls: bool = False, deadline: Deadline | None = None
) -> Extraction:
    """The title and the main text of an HTML page as Markdown, links and images absolute against
    ``url`` (the final URL), with the page's publication date, author and language as attributes of
    the result. A page with no text gives ``(title, "")``; a page with text never comes back empty.

    ``deadline`` is the call's reading budget: extraction checks it between its stages and raises
    ``ReadingTooLong`` (or ``ToolCancelled``) when it has run out.
    """
    # Each text's words read once, each link resolved once, and forgotten with the page.
    with remembering_words(), remembering_links():
        return _extract(html, url, include_image_urls, deadline or Deadline.never())


#: A page whose text has fewer words than this, and whose description (``<meta name="description">``, Open Graph's or
#: Twitter's) has as many or more, is a shell its scripts fill (a forum served without its posts, an app's landing
#: page): the description comes first, said to be one, so that the model reads what the page says it holds. A shorter
#: description is a tagline ("The print magazine of ..."), which a short page's text goes without: with it, one
#: dragnet page (its gold six words) fell 0.45.
SHELL_WORDS = 20
_DESCRIPTIONS = ("og:description", "description", "twitter:description")


def _with_description(doc, text: str) -> str:
    """``text``, after the page's description when the text is a shell's (``SHELL_WORDS``)."""
    if count_words(text, SHELL_WORDS) >= SHELL_WORDS:
        return text
    values = meta_values(doc)
    description = max((" ".join(values.get(name, "").split()) for name in _DESCRIPTIONS), key=word_count)
    if word_count(description) < SHELL_WORDS:
        return text
    return "\n\n".join(filter(None, [f"*The page's description:* {as_text(description)}", text]))


def _extract(html: str | bytes, url: str, include_image_urls: bool, deadline: Deadline) -> Extraction:
    deadline.check()
    doc = parse(html)
    if doc is None:
        return Extraction(None, "")
    title = page_title(doc)
    # The page's JSON-LD, parsed once for its metadata, its declared types and kind and its product (nothing changes
    # the page in between): each parsed it again, and read the page's scripts for it.
    items = list(json_ld_items(doc))
    metadata = page_metadata(doc, items)
    base = base_url(doc, url)
    options = {"include_image_urls": include_image_urls, "title": title, "page_url": url}
    deadline.check()
    size = element_count(doc)
    types = declared_types(doc, items)
    declared = declared_kind(doc, types, items)
    if declared in (ARTICLE, DOCUMENTATION) and _front_page(url):
        declared = None  # a site's front page is its index, whatever one article it declares
    # A product's description and specifications are in tabs that the page hides until clicked.
    item = product_item(doc, items) if declared == PRODUCT else None
    if declared != PRODUCT:
        modals = drop_hidden(doc)
    else:
        modals = []
        show_disclosed(doc)
    open_heading_buttons(doc)
    posts = thread_posts(doc) if declared != ARTICLE else []
    if posts and (declared == FORUM or (not only_comments(posts) and thread_share(posts, doc) >= MIN_THREAD_SHARE)):
        return Extraction(title, _thread(posts, base, options), metadata, FORUM)
    # Only named as the page's kind: read as a product's, such pages scored lower. Read before cleaning
    # removes the buttons (reading the thread changes nothing).
    offer = declared is None and product_shape(doc)
    # A modal dialog or a closed <dialog> (a consent manager's settings, a newsletter or sign-in box) is never
    # the page's content, however much text it has; a shop's are left out of its text later, with its
    # reviews (see ``aside_words``: removed before trafilatura reads the page, they cost products).
    if declared != PRODUCT and not offer:
        drop_dialogs(doc, modals)
    if declared != PRODUCT:
        # A link card's description is the card's text, not a link's (see ``listing.CARD_DESCRIPTION_WORDS``). A
        # product's page is read by trafilatura's full reading, its link cards its shop's other products.
        open_link_cards(doc)
    # A product's reviews and dialogs, read before trafilatura (which reads the page whole: without them it
    # keeps less of the rest) to be left out of its text.
    # A page that declares products in microdata but is read as an article (a game store's page: the game and its
    # add-ons, several items, with a button for each) leaves out its customers' reviews, its dialogs and its fine print
    # too (see ``without_asides``). Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0): products 0.7251 to
    # 0.7266 (three game store pages up, one 0.63 to 0.75, none down), the other types and the article sets unchanged
    # (no page of theirs changed).
    marked = declared is None and not offer and bool(types & PRODUCT_TYPES)
    shown = shown_offer(doc) if item is None and (declared == PRODUCT or offer) else None
    asides = aside_words(doc) if declared == PRODUCT or offer or marked else []
    # trafilatura reads the page with its chrome (its own cleaning uses the chrome it removes).
    traf = _markdown(trafilatura_article(doc, base, fast=declared != PRODUCT), **options) \
        if size <= MAX_TRAFILATURA_ELEMENTS else ""
    deadline.check()
    if declared != PRODUCT and _in_the_menus(doc, traf):
        traf = ""  # trafilatura read a menu (see ``IN_MENUS``)
    clean(doc)
    body = doc.find("body")
    if body is None:
        body = doc
    body_text = body.text_content()
    if not body_text.strip():
        # Cleaning left nothing: trafilatura may have read what it removed, else the page's bare text. Its
        # fast reading kept a block of a page whose body is all in its <header> or <nav>: its full reading
        # (its fallbacks) when longer. Tuned wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): listings 0.713 to 0.717,
        # service pages 0.814 to 0.815 (one page each), the other types and the article sets unchanged.
        if declared != PRODUCT:
            full = _full_reading(html, base, options)
            traf = full if len(words(full)) > len(words(traf)) else traf
        text = traf or _bare_text(html, base, options)
        return Extraction(title, _with_description(doc, text), metadata, declared or ARTICLE)
    article = ""
    # The cleaned page's words, counted once for the checks below (its text no longer changes).
    page_words = cache(lambda: word_count(body_text))
    # On a product page trafilatura's full reading (its own fallbacks) keeps the short blocks of its
    # specifications, which readability and the merge drop: it alone is the text when it has one.
    product = declared == PRODUCT and count_words(traf, 1) > 0
    # trafilatura's text has no images: with their URLs asked for, readability's gives them.
    whole = not product and not offer and not include_image_urls and _holds_the_page(traf, body, page_words)
    if size <= MAX_READABILITY_ELEMENTS and not product and not whole:
        article = _markdown(readability_article(doc, url, base), **options)
        # Its blocks before its words: the merge reads the blocks, and ``text_words`` takes the words from them.
        blocks(article)
    deadline.check()
    if whole:
        # readability would keep a part of what trafilatura has: taken as agreeing with it.
        text = article = traf
    elif product:
        text = traf
    elif _readability_missed(article, traf, offer):
        text = without_galleries(traf, article)
    else:
        # Two different texts: the one that follows the headline, not both.
        text = merge(article, traf, apart=lambda candidates: nearest_after_headline(body, title, candidates))
    count = count_words(text, MIN_ARTICLE_WORDS)
    deadline.check()
    if count == 0 or (count < MIN_ARTICLE_WORDS and not text_words(article) and not product):
        absolutize(body, base)
        text = _markdown(body, **options)
    else:
        region = lead_region(body, title, text)
        if region is not None:
            # The article's surroundings, headline kept, to find its lead (see ``choice.with_lead``).
            absolutize(region, base)
            text = with_lead(text, _markdown(region, **{**options, "title": None}), title)
    kind = declared
    if declared in (None, LISTING, ARTICLE):
        cards = find_cards(body)
        if cards is not None:
            # The cards' words, as their Markdown would give them (Markdown is written only for cards that win).
            card_words = words(" ".join(map(cards.text, cards.items)))
            # A dated text that follows the headline is the article, however short, not one card; unless
            # the date is one card's (a topic page dated by its first story's <time>). Measured on the tuned
            # part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): collections 0.632 to 0.641 (one page, 0.13 to
            # 0.95), the other types and the article sets unchanged. Nor when the text is in pieces of many
            # cards (``listing.in_pieces``): the extractors kept their headings, not one card's article.
            shop = priced(cards.items)

            def card_words_of(card):
                return words(cards.text(card))
            if cards_win(cards, card_words, text_words(text), card_words_of, shop, agreement(article, traf)) \
                    and not (metadata.published and not dated_by_a_card(cards, metadata.published)
                             and follows_headline(body, title, text)
                             and not in_pieces(cards, text_words(text), card_words_of)):
                absolutize(cards.parent, base)
                listed = cards_markdown(
                    ["\n\n".join(_markdown(part, **options) for part in cards.whole(card)) for card in cards.items],
                    [cards.title_link(card) for card in cards.items])
                intro = listing_intro(blocks(text), card_words, words(" ".join(map(cards.spaced, cards.items))))
                text = "\n\n".join([*intro, listed])
                kind = COLLECTION if shop else LISTING
    if item is not None:
        text = "\n\n".join(filter(None, [product_markdown(item, text), text]))
    kind = kind or fallback_kind(doc, offer)
    if shown is not None and kind == PRODUCT:
        text = "\n\n".join(filter(None, [product_markdown(shown, text), text]))
    # A page with an author that Open Graph calls an article is one, however short.
    signed = metadata.author is not None and og_type(doc) == "article"
    if declared is None and kind in (ARTICLE, SERVICE) and not signed \
            and _not_an_article(article, traf, text, body, title, page_words):
        # A service page's content is its run of sections, without the banners and boxes around it.
        found = service_sections(doc) if kind == SERVICE else None
        whole = body if found is None else found[0]
        absolutize(whole, base)
        text = _markdown(whole, **options)
    if declared is None and kind == ARTICLE and og_type(doc) not in ("article", "blog") \
            and not types & PRODUCT_TYPES:
        main = _main_region(body, text, page_words)
        if main is not None:
            absolutize(main, base)
            text = _markdown(main, **options)
    if declared is None and kind in (ARTICLE, SERVICE):
        deadline.check()
        text = fuller_reading(html, base, options, text, body, page_words) or text
    if kind != PRODUCT:
        # A table of names, each a link, is dropped by both extractors for its links (see ``tables``).
        text = with_missed_tables(text, body, lambda table: _absolute_markdown(table, base, options))
    if kind not in (ARTICLE, DOCUMENTATION):
        # A product's, a service's or a shop's heading is its name, which its title shares with the site's.
        text = with_name(body, title, text)
    if kind == PRODUCT:
        # A shop writes its description once for phones and once for larger screens, and shows other
        # products after it; its customers' reviews are theirs, not the shop's, and its dialogs are chrome. Its runs of
        # priced link cards are other products (other sellers' offers, "similar items" whose heading was lost).
        text = without_other_products(without_asides(without_rails(without_repeats(text)), asides),
                                      priced_rails(body, priced))
    elif marked and kind == ARTICLE:
        text = without_asides(text, asides)
    if kind == SERVICE:
        text = _every_section(doc, text, base, options) or text
    if kind != FORUM:
        # A section drawn once for each screen size, a slider's looped slides: a reader sees one.
        text = without_copies(text)
    return Extraction(title, _with_description(doc, text), metadata, kind)
