"""A product page's facts: its price, availability and brand, its description and specifications as the
page declares them in schema.org JSON-LD (``Product``, its ``offers`` and ``additionalProperty``).

A shop's page shows its description and specifications in tabs, often hidden until clicked, and builds
its price with scripts; the JSON-LD holds them as data. They are given before the page's text, each only
when the text lacks it (a price the page shows as "$22.00" is the JSON-LD's "22"); a page that declares no
product in JSON-LD gives its price and availability in microdata or Open Graph metadata (``shown_offer``).
A product's rails of
other products ("Customers also bought", "Similar items") are left out of its text (``without_rails``),
and so are its customers' reviews, its dialogs and its fine print (``without_asides``).
"""
from __future__ import annotations

import re
from collections import Counter
from urllib.parse import unquote

import lxml.html
from lxml import etree

from .choice import blocks, count_words, words
from .listing import outside_blocks, outside_cards
from .markdown import as_text
from .metadata import json_ld_items, meta_values
from .page import similar

_PRODUCT_TYPES = frozenset({"Product", "ProductGroup", "IndividualProduct", "ProductModel", "Car", "Vehicle"})
#: A fact or a description is added when less than this share of its words is in the text already.
PRESENT = 0.6
MAX_DESCRIPTION = 5000


def _types(value) -> set[str]:
    values = value if isinstance(value, list) else [value]
    return {v.rsplit("/", 1)[-1] for v in values if isinstance(v, str)}


def _text(value) -> str:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return " ".join(str(value).split())
    if isinstance(value, dict):
        return _text(value.get("name"))
    if isinstance(value, list) and value:
        return _text(value[0])
    return ""


def product_item(doc, items: list[dict] | None = None) -> dict | None:
    """The page's one JSON-LD product, or None when it declares none or several. ``items``: the page's JSON-LD
    items (``json_ld_items``) when the caller has read them already."""
    found = [item for item in (json_ld_items(doc) if items is None else items)
             if _types(item.get("@type")) & _PRODUCT_TYPES]
    return found[0] if len(found) == 1 else None


def _offer(item: dict) -> dict:
    """The product's first offer: under ``offers`` (or ``Offers``, as a shop writes it), else its first variant's
    (a ``ProductGroup``'s ``hasVariant``: a shoe's colours and sizes, each with its offer)."""
    offers = next((value for key, value in item.items() if key.lower() == "offers"), None)
    if isinstance(offers, list):
        offers = next((o for o in offers if isinstance(o, dict)), None)
    if isinstance(offers, dict):
        return offers
    variants = item.get("hasVariant")
    variant = next((v for v in variants if isinstance(v, dict)), None) if isinstance(variants, list) else variants
    return _offer({k: v for k, v in variant.items() if k != "hasVariant"}) if isinstance(variant, dict) else {}


def _price(offer: dict) -> str:
    currency = _text(offer.get("priceCurrency"))
    price = _text(offer.get("price"))
    if not price and (offer.get("lowPrice") or offer.get("highPrice")):
        low, high = _text(offer.get("lowPrice")), _text(offer.get("highPrice"))
        price = f"{low} to {high}" if low and high and low != high else low or high
    if not price:
        spec = offer.get("priceSpecification")
        if isinstance(spec, list):
            spec = next((s for s in spec if isinstance(s, dict)), {})
        if isinstance(spec, dict):
            price, currency = _text(spec.get("price")), currency or _text(spec.get("priceCurrency"))
    return f"{price} {currency}".strip() if price else ""


#: Open Graph's and microdata's names of an offer's availability, as schema.org's (``_availability`` reads them).
_AVAILABILITY = {"instock": "InStock", "in stock": "InStock", "available": "InStock", "oos": "OutOfStock",
                 "outofstock": "OutOfStock", "out of stock": "OutOfStock", "outstock": "OutOfStock",
                 "soldout": "SoldOut", "preorder": "PreOrder", "pre-order": "PreOrder", "backorder": "BackOrder",
                 "discontinued": "Discontinued", "limitedavailability": "LimitedAvailability"}
_MICRODATA_OFFER = etree.XPath("/descendant::*[contains(@itemtype, 'schema.org/Product')]"
                               "/descendant::*[@itemprop='price' or @itemprop='lowPrice' or @itemprop='priceCurrency'"
                               " or @itemprop='availability']")
#: Open Graph's product metadata, as a JSON-LD offer's keys.
_OFFER_META = {"product:price:amount": "price", "og:price:amount": "price", "product:price:currency": "priceCurrency",
               "og:price:currency": "priceCurrency", "og:availability": "availability",
               "product:availability": "availability"}
_AMOUNT = re.compile(r"\d[\d.,]*")


def _value(element) -> str:
    """A microdata property's value: its ``content`` or ``href``, else its text."""
    return " ".join((element.get("content") or element.get("href") or element.text_content() or "").split())


def shown_offer(doc) -> dict | None:
    """The offer of a product page that declares no product in JSON-LD, as such an item (see ``product_markdown``):
    from its microdata (``itemprop`` ``price``, ``priceCurrency``, ``availability`` within a ``Product``), else its
    Open Graph metadata (``product:price:amount``, ``product:price:currency``, ``og:availability``). None when it gives
    neither a price nor an availability."""
    offer: dict[str, str] = {}
    for element in _MICRODATA_OFFER(doc):
        name = element.get("itemprop")
        offer.setdefault("price" if name == "lowPrice" else name, _value(element))
    if not offer.get("price"):
        metas = meta_values(doc)
        offer = {}
        for name, key in _OFFER_META.items():
            if metas.get(name):
                offer.setdefault(key, metas[name])
    amount = _AMOUNT.search(offer.get("price", ""))
    offer["price"] = amount.group() if amount else ""
    availability = offer.get("availability", "").rsplit("/", 1)[-1].strip().lower()
    offer["availability"] = _AVAILABILITY.get(availability, "")
    if not offer["price"] and not offer["availability"]:
        return None
    return {"offers": {key: value for key, value in offer.items() if value}}


#: A fraction that is only zeros ("22.0", "22.00"): a page shows that price as "$22" as often as "$22.00".
_ZERO_FRACTION = re.compile(r"(\d)[.,]0+\b")
#: URL-encoded text ("An%20elegant%20sofa"), as some shops write their description into JSON-LD.
_ENCODED = re.compile(r"%20|%2C|%2E", re.IGNORECASE)


def _price_words(offer: dict) -> str:
    """The offer's amounts alone (no currency, zero fractions left out), to look for in the text."""
    return _ZERO_FRACTION.sub(r"\1", _price(offer).removesuffix(_text(offer.get("priceCurrency"))))


def _description(item: dict) -> str:
    """The product's JSON-LD description as text: URL-encoded text decoded, HTML markup (``<strong>``,
    ``<br>``) read as the text it shows."""
    description = _text(item.get("description"))
    if _ENCODED.search(description) and " " not in description:
        description = unquote(description)
    if "<" in description and ">" in description:
        try:
            description = lxml.html.fragment_fromstring(description, create_parent="div").text_content()
        except (etree.ParserError, ValueError):
            pass
    return " ".join(description.split())[:MAX_DESCRIPTION]


def _availability(offer: dict) -> str:
    value = _text(offer.get("availability")).rsplit("/", 1)[-1]
    # schema.org's names: InStock, OutOfStock, PreOrder, ... as words.
    return "".join(f" {c.lower()}" if c.isupper() else c for c in value).strip()


def _present(fact: str, text_words: Counter) -> bool:
    tokens = words(fact)
    return bool(tokens) and sum((Counter(tokens) & text_words).values()) >= PRESENT * len(tokens)


def product_markdown(item: dict, text: str) -> str:
    """The facts of the JSON-LD product ``item`` that ``text`` (the page's Markdown) lacks, as Markdown:
    a line of price, availability and brand, the description, and the specifications as a list (what in
    them Markdown would read as a heading escaped)."""
    have = Counter(words(text))
    offer = _offer(item)
    price, availability, brand = _price(offer), _availability(offer), _text(item.get("brand"))
    facts = [(label, value) for label, value, shown in (
        ("Price", price, price and _present(_price_words(offer), have)),
        ("Availability", availability, availability and _present(availability, have)),
        ("Brand", brand, brand and _present(brand, have)),
    ) if value and not shown]
    parts = []
    line = " · ".join(f"{label}: {value}" for label, value in facts)
    if line:
        parts.append(line)
    description = _description(item)
    if description and not _present(description, have):
        parts.append(description)
    specs = []
    properties = item.get("additionalProperty")
    for prop in properties if isinstance(properties, list) else []:
        if isinstance(prop, dict):
            name, value = _text(prop.get("name")), _text(prop.get("value"))
            if name and value and not _present(f"{name} {value}", have):
                specs.append(f"- {name}: {value}")
    if specs:
        parts.append("\n".join(specs))
    return as_text("\n\n".join(parts))


#: The headings of a shop's rails of other products: what others viewed or bought, similar and related
#: items, what was recently viewed, more from the seller.
_RAIL_HEADING = re.compile(
    r"^(#{1,6}) +.*\b(?:similar (?:items|products)|related (?:items|products)|"
    r"(?:you|customers) (?:may|might|also|who)\b.*\b(?:like|love|viewed|bought|purchased)|"
    r"also (?:viewed|bought|purchased|liked?)|frequently bought together|"
    r"recently viewed|more (?:items )?from this (?:seller|shop|store|brand)|complete the (?:look|set)|explore related"
    r"|recommended for you|related to this (?:item|product)"
    r"|(?:customer )?reviews? for this (?:item|product)|customer reviews|top reviews|photos from reviews"
    r"|(?:shipping|delivery) (?:and|&) returns?)",
    re.IGNORECASE)
_HEADING = re.compile(r"(#{1,6}) ")


def without_rails(text: str) -> str:
    """``text`` (a product page's Markdown) without its rails of other products: a heading like
    ``_RAIL_HEADING``'s ("Customers also bought", "Similar items") and what follows it, up to the next
    heading of its level or higher. Measured on the tuned part of wcxb-dev: products 0.655 to 0.663, the
    other types unchanged. Also its customers' reviews' sections ("Reviews for this item", "Customer reviews",
    "Top reviews"), what the shop recommends ("Recommended for you", "Products related to this item",
    "Complete the set?") and its shipping and returns ("Shipping & Returns"), which the WCXB gold leaves out: tuned
    products (WCXB, Foley 2026, CC-BY-4.0) 0.7299 to 0.7312, measured on a branch that also left out the
    JSON-LD's price line (not merged: the issue asks for the price) (5 pages up, of 5 sites: a furniture shop, a
    marketplace, two clothes shops, a jeweller; one down by 0.002), the other types and the article sets
    unchanged."""
    kept, level = [], 0
    for block in blocks(text):
        heading = _HEADING.match(block.markdown)
        if level and heading and len(heading.group(1)) <= level:
            level = 0
        rail = _RAIL_HEADING.match(block.markdown)
        if rail and not level:
            level = len(rail.group(1))
        if not level:
            kept.append(block.markdown)
    return "\n\n".join(kept)


#: A product page's customer reviews: the elements whose class has the word "review" or "reviews"
#: (``customer-review``, ``product-reviews__list``) or that microdata marks as a review, holding less than
#: ``REVIEWS_SHARE`` of the page's text (more is a wrapper of the page) and not its headline. Their blocks
#: are left out of the text when at least ``REVIEWS_LEFT`` words remain (else the text was the reviews
#: alone, and is kept). Only reviews that come several together count: one alone is the page's own (a
#: magazine's review of a car, declared a product, lost its whole text on dragnet). Measured on the tuned
#: part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): products 0.662 to 0.681 (12 pages up, one down: an empty
#: "no reviews yet" box its gold keeps), the other types and the article sets unchanged. Reading ids too
#: (a course's ``review_module`` of testimonials, a game shop's critics' quotes) gained 0.013 only.
REVIEW_NAMES = frozenset({"review", "reviews"})
REVIEWS_SHARE = 0.5
REVIEWS_LEFT = 30
_NAME_WORDS = re.compile(r"[\s_\-]+")
_REVIEW = re.compile("review", re.IGNORECASE)
#: A product page's dialogs (``<dialog>``, WAI-ARIA's ``dialog``, ``alertdialog`` and ``aria-modal``): its
#: cookie settings, sign-in, cart and newsletter boxes, which a declared product's page keeps (its hidden
#: elements are not removed, for its tabs), are left out of its text as its reviews are, on the same terms.
#: Measured on the tuned part of wcxb-dev: products 0.681 to 0.687 (11 pages up, two down: a size guide and
#: a certificate its gold keeps), collections 0.641 to 0.641 (+0.0007), the other types and the article sets
#: unchanged. Removed from the page before trafilatura read it instead, they cost products 0.001. A dialog's
#: ``<h1>`` is its own title ("Your privacy settings"), not the page's headline, which it sits above: left out
#: with it, products rose from 0.7007 to 0.7014 (two pages: a shop's privacy settings), the other types unchanged.
DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
#: A product page's boxes that a script opens, named so by their class, id or ``data-testid`` (``notify-modal``,
#: ``geofencing-modal``, ``modal-popup``): "notify me", "where are we shipping to?", a countdown's offer, a cart's
#: summary; they are its dialogs too, but for those whose name says they hold the product's own data
#: (``OWN_DATA_NAMES``: a shop's ``product-details-modal`` and ``measurements-modal``). Measured on the tuned part
#: of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): products 0.7208 to 0.7236 (11 pages up, among them a shoe shop's
#: "notify me" and "where are we shipping to?" boxes, 0.56 to 0.67; three down by 0.001 or less), collections
#: 0.6943 to 0.6946, service pages 0.8317 to 0.8319, dragnet 0.8256 unchanged (one page down by 0.002), the other
#: types and the article sets unchanged. Without ``OWN_DATA_NAMES``, a furniture shop's details and measurements
#: went (0.71 to 0.41) and products rose to 0.7202 only.
MODAL_NAMES = frozenset({"modal", "popup"})
_MODAL = re.compile("modal|popup", re.IGNORECASE)
OWN_DATA_NAMES = frozenset({"product", "details", "measurements", "specifications", "specs", "size", "sizechart",
                            "description"})


#: A product page's fine print: the elements whose class or id has the word "disclaimer" or "disclaimers"
#: (``common-bottom-disclaimer``, ``pricing-disclaimer-text``), its legal notes on financing, testing
#: conditions and offers, left out of its text as its reviews are, on the same terms. Measured on the tuned
#: part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): products 0.695 to 0.698 (three pages up, one down by
#: 0.002), service pages 0.0002 lower (a software maker's offer declaring a product, whose gold keeps its
#: pricing note), the other types and the article sets unchanged. Footnotes are not fine print: an article's
#: notes are its own text (counted, they cost a passage's notes on dragnet and a shop's, and gained nothing).
FINE_PRINT_NAMES = frozenset({"disclaimer", "disclaimers"})
_FINE_PRINT = re.compile("disclaimer", re.IGNORECASE)


def _names(value: str, quick: re.Pattern, names: frozenset) -> bool:
    """Whether a class or id ``value`` has one of ``names`` among its words (split at spaces, ``-`` and
    ``_``); ``quick``, which any such value matches, tells most values without splitting them."""
    return quick.search(value) is not None and not names.isdisjoint(_NAME_WORDS.split(value.lower()))


def _fine_print(element) -> bool:
    return _names(f"{element.get('class') or ''} {element.get('id') or ''}", _FINE_PRINT, FINE_PRINT_NAMES)


def _review(element) -> bool:
    if _names(element.get("class") or "", _REVIEW, REVIEW_NAMES):
        return True
    return (element.get("itemprop") or "").lower() in REVIEW_NAMES \
        or (element.get("itemtype") or "").rstrip("/").endswith("/Review")


def _outermost_words(body, found: list, together: bool = False, headed: bool = False) -> list[str]:
    """The words of the outermost of the elements ``found`` that hold less than ``REVIEWS_SHARE`` of the
    ``body``'s text and, unless ``headed``, not its headline (an ``<h1>``); with ``together``, only of those
    that come with another of ``found`` (within them, or beside them)."""
    limit = REVIEWS_SHARE * len(body.text_content())
    small = {element for element in found
             if (headed or element.find(".//h1") is None) and len(element.text_content()) < limit}
    marked = set(found)
    outermost = [element for element in found
                 if element in small and not any(a in small for a in element.iterancestors())
                 and (not together or any(d in marked for d in element.iterdescendants())
                      or any(s in marked for s in element.itersiblings())
                      or any(s in marked for s in element.itersiblings(preceding=True)))]
    return words(" ".join(" ".join(element.itertext()) for element in outermost))


def _dialog(element) -> bool:
    """Whether ``element`` is one of the product page's dialogs: by its tag, its WAI-ARIA role or ``aria-modal`` (see
    ``DIALOG_ROLES``), or by its name (see ``MODAL_NAMES``) unless that names the product's own data."""
    if element.tag == "dialog" or element.get("role") in DIALOG_ROLES or element.get("aria-modal") == "true":
        return True
    value = f"{element.get('class') or ''} {element.get('id') or ''} {element.get('data-testid') or ''}"
    if _MODAL.search(value) is None:
        return False
    names = set(_NAME_WORDS.split(value.lower()))
    return not MODAL_NAMES.isdisjoint(names) and OWN_DATA_NAMES.isdisjoint(names)


def _dialogs(dialogs: list) -> list:
    """The product page's dialogs (see ``_dialog``) but those holding a table: a size guide or a chart of
    measurements is the product's own data in a box, where cookie, sign-in, cart and newsletter dialogs hold
    none. Kept, they raised the tuned products of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0) from 0.709 to 0.711
    (a sheet set's size guide, 0.72 to 0.87; one page down by 0.005), the other types and the article sets
    unchanged."""
    return [dialog for dialog in dialogs if dialog.find(".//table") is None]


def aside_words(doc) -> list[str]:
    """The words of a product page's customer reviews (see ``REVIEW_NAMES``), of its dialogs (see
    ``_dialog``) and of its fine print (see ``FINE_PRINT_NAMES``), in page order within each."""
    body = doc.find("body")
    if body is None:
        return []
    # Customers' reviews come several together (in a box of them, or side by side); one review alone is
    # the page's own (a magazine's review of a car).
    reviews, fine_print, dialogs = [], [], []
    for element in body.iter():
        if isinstance(element.tag, str):
            if _review(element):
                reviews.append(element)
            if _fine_print(element):
                fine_print.append(element)
            if _dialog(element):
                dialogs.append(element)
    return (_outermost_words(body, reviews, together=True) + _outermost_words(body, _dialogs(dialogs), headed=True)
            + _outermost_words(body, fine_print))


def without_asides(text: str, asides: list[str]) -> str:
    """``text`` (a product page's Markdown) without the blocks that are its reviews and dialogs (the words
    ``asides``, from ``aside_words``), unless fewer than ``REVIEWS_LEFT`` words would remain."""
    if not asides:
        return text
    left = "\n\n".join(outside_cards(blocks(text), asides))
    return left if count_words(left, REVIEWS_LEFT) >= REVIEWS_LEFT else text


#: A run of the text's blocks that are in the page's cards of other products is left out when one of its blocks has
#: this many words (a card's title): a run of short blocks alone (a price, a rating) may be this product's own.
OTHER_PRODUCT_WORDS = 8
#: A block of more words is not a part of one card but a list of them: a shop's category read as one product's page,
#: whose cards are its content (a list of dresses, 0.99 of its words in the gold, was left out).
MAX_CARD_WORDS = 80


def without_other_products(text: str, other: list[str]) -> str:
    """``text`` (a product page's Markdown) without its runs of blocks, not headings, that are in the words ``other``
    (the page's runs of priced link cards, ``listing.priced_rails``) and hold a block of ``OTHER_PRODUCT_WORDS`` and
    none of more than ``MAX_CARD_WORDS``; unless fewer than ``REVIEWS_LEFT`` words would remain."""
    if not other:
        return text
    found = blocks(text)
    outside = set(map(id, outside_blocks(found, other)))
    kept, run = [], []
    for block in [*found, None]:
        if block is not None and id(block) not in outside and not _HEADING.match(block.markdown):
            run.append(block)
            continue
        if not any(b.words >= OTHER_PRODUCT_WORDS for b in run) \
                or any(b.words > MAX_CARD_WORDS for b in run):
            kept.extend(b.markdown for b in run)
        run = []
        if block is not None:
            kept.append(block.markdown)
    left = "\n\n".join(kept)
    return left if count_words(left, REVIEWS_LEFT) >= REVIEWS_LEFT else text


def with_name(body, title: str | None, text: str) -> str:
    """``text`` with the page's name first, as a heading: its first ``<h1>`` like its ``title`` (the Markdown
    writer drops it, as an article's headline, since the output gives the title), unless the text's first
    block holds its words. A shop's title is the product's name and the shop's ("Trail shoe X2 | Shoe
    Shop"); its heading names the product, and is its text, as a service's or a category's is. Measured on the
    tuned parts (WCXB, Foley 2026, CC-BY-4.0), on pages read as anything but an article or documentation:
    products 0.710 to 0.719 (26 pages up, 22 down by 0.023 or less: pages whose gold leaves the name out),
    collections 0.690 to 0.691, listings 0.739 to 0.740, documentation 0.9354 to 0.9352, service pages
    0.8315 to 0.8314, forums unchanged; all wcxb-dev pages 0.790 to 0.791; dragnet 0.8255 to 0.8256,
    readability's pages 0.9616 to 0.9615, cleanportaleval and cleaneval-dev unchanged. On documentation
    pages too, it cost them 0.0004."""
    if not title:
        return text
    heading = next((h for h in body.iter("h1") if similar(title, h.text_content())), None)
    if heading is None:
        return text
    name = " ".join(heading.text_content().split())
    first = blocks(text)[:1]
    if first and Counter(words(name)) <= Counter(words(first[0].markdown)):
        return text
    return f"# {name}\n\n{text}" if text else f"# {name}"
