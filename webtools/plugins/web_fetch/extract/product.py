"""A product page's facts: its price, availability and brand, its description and specifications as the
page declares them in schema.org JSON-LD (``Product``, its ``offers`` and ``additionalProperty``).

A shop's page shows its description and specifications in tabs, often hidden until clicked, and builds
its price with scripts; the JSON-LD holds them as data. They are given before the page's text, each only
when the text lacks it.
"""
from __future__ import annotations

from collections import Counter

from .choice import words
from .metadata import json_ld_items

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


def product_item(doc) -> dict | None:
    """The page's one JSON-LD product, or None when it declares none or several."""
    found = [item for item in json_ld_items(doc) if _types(item.get("@type")) & _PRODUCT_TYPES]
    return found[0] if len(found) == 1 else None


def _offer(item: dict) -> dict:
    offers = item.get("offers")
    if isinstance(offers, list):
        offers = next((o for o in offers if isinstance(o, dict)), None)
    return offers if isinstance(offers, dict) else {}


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


def _availability(offer: dict) -> str:
    value = _text(offer.get("availability")).rsplit("/", 1)[-1]
    # schema.org's names: InStock, OutOfStock, PreOrder, ... as words.
    return "".join(f" {c.lower()}" if c.isupper() else c for c in value).strip()


def _present(fact: str, text_words: Counter) -> bool:
    tokens = words(fact)
    return bool(tokens) and sum((Counter(tokens) & text_words).values()) >= PRESENT * len(tokens)


def product_markdown(item: dict, text: str) -> str:
    """The facts of the JSON-LD product ``item`` that ``text`` (the page's Markdown) lacks, as Markdown:
    a line of price, availability and brand, the description, and the specifications as a list."""
    have = Counter(words(text))
    offer = _offer(item)
    facts = [(label, value) for label, value in (
        ("Price", _price(offer)), ("Availability", _availability(offer)), ("Brand", _text(item.get("brand"))),
    ) if value]
    parts = []
    line = " · ".join(f"{label}: {value}" for label, value in facts)
    if line:
        parts.append(line)
    description = _text(item.get("description"))[:MAX_DESCRIPTION]
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
    return "\n\n".join(parts)
