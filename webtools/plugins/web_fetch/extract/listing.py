"""A listing's cards: the repeated items of an index, a catalogue, search results or a course list.

The article extractors keep the best-scored block, which on a listing is one card (or the intro without
the cards). Cards are found by their shape: three or more sibling elements of the same tag and classes,
each with a link and some words of its own, together holding most of the words of their parent.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from lxml import etree

from .choice import shingles, words
from .markdown import spaced_text
from .metadata import iso_date

MIN_CARDS = 4
#: What a card is made of: a box, an item; never paragraphs (an article's are a run of siblings), nor a
#: table's rows (a table is written as a table: a 3 MB one had become 20,000 list items, three times slower).
CARD_TAGS = frozenset({"div", "li", "article", "section", "dd", "figure", "a", "aside"})
#: A card says something besides its link: a title and a line, a price, a date.
MIN_CARD_WORDS = 4
_DIGITS = re.compile(r"\d+")
#: WordPress's classes for one post (``post_class()``: ``post-123 type-product category-news tag-chess
#: product_cat-shoes instock sale``): each card names its own terms and its stock, and a shop's or a blog's
#: cards would never share a signature. In a class attribute naming a post (``post-123``), the classes that
#: name its terms (``{taxonomy}-{term}``, the taxonomy's name ending in one of these words) and its state are
#: left out of the signature. Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0): collections 0.6901 to
#: 0.6944 (one page, a shop's grid of products 0.20 to 0.59), the other wcxb types and the four article sets
#: unchanged.
_WP_POST = re.compile(r"(?:^|\s)post-\d+(?:\s|$)")
_WP_TERM = re.compile(r"^[a-z_]*(?:cat|category|categories|tag|tags|slug|format|type|class|genre|topic)[-_]"
                      r"|^(?:instock|outofstock|onbackorder|sale|featured|sticky|has-post-thumbnail|purchasable"
                      r"|taxable|shipping-taxable|downloadable|virtual)$")


@dataclass
class Cards:
    parent: etree._Element
    items: list
    words: int
    #: Its words are all in its links (a feed of titled stories, or a rail of them beside an article).
    linked: bool = False
    #: A definition list's cards: each ``<dd>`` to the ``<dt>`` before it (see ``_term``).
    terms: dict = field(default_factory=dict)

    def whole(self, card) -> list:
        """The elements of one card: its term and itself, or itself."""
        term = self.terms.get(card)
        return [card] if term is None else [term, card]

    def text(self, card) -> str:
        return " ".join(element.text_content() for element in self.whole(card))

    def spaced(self, card) -> str:
        """The card's text as its Markdown spaces it (``markdown.spaced_text``): its words are compared with
        the text's, which is Markdown."""
        return " ".join(map(spaced_text, self.whole(card)))

    def link(self, card) -> str | None:
        """The card's link (``card_link``), its term's first."""
        return next(filter(None, map(card_link, self.whole(card))), None)

    def title_link(self, card) -> tuple[str | None, str]:
        """The card's own link and the words it is written on: its heading's link (``heading_link``), its
        term's first; else its first link (``link``) and ""."""
        for part in self.whole(card):
            found = heading_link(part)
            if found is not None:
                return found
        return self.link(card), ""


def _signature(element, known: dict[str, tuple]) -> tuple:
    """The element's tag and classes, without digits and the classes that mark one of a run. ``known``:
    the class attributes already read, to their classes (a page's elements share a few)."""
    attribute = element.get("class") or ""
    classes = known.get(attribute)
    if classes is None:
        names = _DIGITS.sub("", attribute).split()
        if _WP_POST.search(attribute):
            names = [name for name in names if not _WP_TERM.match(name)]
        classes = known[attribute] = tuple(
            sorted(c for c in names if c not in ("active", "first", "last", "odd", "even")))
    return element.tag, classes


def _term(item):
    """The ``<dt>`` right before a ``<dd>``, or None: a list of papers gives each one's link in its term and
    its title and authors in its description, and the pair is one card. Measured on the tuned part of
    wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): listings 0.724 to 0.732 (one page, a list of papers read as its
    terms alone: 0.21 to 0.78), the other types unchanged."""
    if item.tag != "dd":
        return None
    term = item.getprevious()
    while term is not None and not isinstance(term.tag, str):  # a comment between them
        term = term.getprevious()
    return term if term is not None and term.tag == "dt" else None


def heading_link(card) -> tuple[str, str] | None:
    """The address and the text of the first link within a heading of the card that leads to another page: a
    card's title links to the story, product or course it stands for; its first link is as often its category,
    its picture's or its author's."""
    for heading in card.iter(*_HEADINGS):
        a = _leading_away(heading)
        if a is not None:
            return (a.get("href") or "").strip(), " ".join(a.text_content().split())
    return None


def _leading_away(card):
    """The card's first ``<a>`` that leads to another page (not ``#…``, not ``javascript:``)."""
    for a in card.iter("a"):
        href = (a.get("href") or "").strip()
        if href and not href.startswith(("#", "javascript:")):
            return a
    return None


def card_link(card) -> str | None:
    """The address of the card's first link that leads to another page."""
    a = _leading_away(card)
    return None if a is None else (a.get("href") or "").strip()


#: Cards whose words are all their links are a menu, unless the median card's longest link has this many
#: words: a story's or an item's title, not a menu's label (a feed, whose title, writer, comments and tags
#: are each a link). Such cards are taken only where a page has no others, and win only over a text of
#: fewer than ``LINKED_TEXT_WORDS``. Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0):
#: listings 0.710 to 0.717, collections 0.643 to 0.655 (3 pages, none down), the other types and the
#: article sets unchanged; without those two limits, blogrolls and rails of stories beside short posts took
#: the place of four articles (dragnet 0.99 to 0.30 on one).
TITLE_WORDS = 6


def _titled(items) -> bool:
    longest = sorted(max((len(a.text_content().split()) for a in item.iter("a")), default=0) for item in items)
    return longest[len(longest) // 2] >= TITLE_WORDS


#: Cards split among parents of one kind (a grid's rows, a list per category) count when they are this many:
#: fewer are as often a layout's boxes (its modules, its sections). Measured on the tuned part of wcxb-dev
#: (WCXB, Foley 2026, CC-BY-4.0): listings 0.732 to 0.738 (4 pages up, among them a wiki's category in
#: one list per letter 0.63 to 0.71 and a blog's stories 0.38 to 0.49; one down, 0.94 to 0.92), collections
#: 0.6549 to 0.6551. Counted from four, as a run of siblings is, listings fell to 0.730 and collections to 0.653
#: (a layout's five modules or eight sections, 0.83 to 0.43 on one page).
MIN_SPLIT_CARDS = 10


def _groups(root):
    """Each run of ``MIN_CARDS`` or more siblings of one signature (``_signature``), with their parent; and,
    split among several parents of one signature, the children of one signature that have classes (a grid's
    rows of cards, an awards page's list per category), with the smallest element holding them all."""
    known: dict[str, tuple] = {}
    split = defaultdict(list)
    for parent in root.iter(etree.Element):
        if not len(parent):
            continue  # most elements have no child: nothing to group, and no dictionary made for it
        groups = defaultdict(list)
        for child in parent:
            if child.tag in CARD_TAGS:
                groups[_signature(child, known)].append(child)
        for signature, items in groups.items():
            if len(items) >= MIN_CARDS:
                yield parent, _with_variants(parent, signature, items, groups)
            if signature[1]:
                split[_signature(parent, known), signature].append((parent, items))
    for runs in split.values():
        if len(runs) < 2 or sum(len(items) for _, items in runs) < MIN_SPLIT_CARDS:
            continue
        parents = {parent for parent, _ in runs}
        # Not the cards within a card of the same kind.
        runs = [(parent, items) for parent, items in runs
                if not any(ancestor in parents for ancestor in parent.iterancestors())]
        if len(runs) < 2:
            continue
        items = [item for _, items in runs for item in items]
        if len(items) >= MIN_SPLIT_CARDS:
            yield _holding(runs[0][0], runs[-1][0]), items


def _with_variants(parent, signature: tuple, items: list, groups: dict) -> list:
    """``items`` (the run of one signature among ``parent``'s children, grouped by signature in ``groups``)
    with the siblings of the same tag whose classes are theirs and more (``card card--featured``,
    ``listing feature pro``), in the page's order: a board's featured or sponsored items are its cards too.
    Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0), with ``IN_TEXT``: listings 0.7449
    to 0.7477 (a job board's featured jobs, a podcast's and a forum's lists: three pages up, none down),
    collections unchanged. The two together on the tuned parts: service pages 0.8321 to 0.8333 (5 up, 2 down
    by 0.015 and 0.007), dragnet 0.8261 to 0.8301 (18 up, 2 down by 0.018 and 0.012), cleaneval-dev 0.8800 to
    0.8838 (one page up), readability's pages, cleanportaleval and the other wcxb types unchanged."""
    classes = set(signature[1])
    if not classes or len(groups) < 2:
        return items
    variants = [other for other in groups if other[0] == signature[0] and classes < set(other[1])]
    if not variants:
        return items
    ours = {id(item) for other in (signature, *variants) for item in groups[other]}
    return [child for child in parent if id(child) in ours]


def _holding(first, last):
    """The smallest element holding both (the first comes first in the page)."""
    region = first
    while region is not None and region is not last and not any(a is region for a in last.iterancestors()):
        region = region.getparent()
    return region if region is not None else first


def priced_rails(root, priced) -> list[str]:
    """The words of ``root``'s runs of priced link cards (``priced(items)``): on a product's page, other products."""
    found = []
    for parent, items in _groups(root):
        cards = Cards(parent, items, 0)
        if sum(1 for item in items if cards.link(item) is not None) < 0.6 * len(items) or not priced(items):
            continue
        if any(item.find(".//h1") is not None for item in items):
            continue
        found.append(" ".join(map(cards.spaced, items)))
    return words(" ".join(found))


def find_cards(root) -> Cards | None:
    """The largest group of cards under ``root`` (a cleaned page), or None."""
    best: Cards | None = None
    #: The largest group of titled links, for a page that has no other cards.
    linked_best: Cards | None = None
    for parent, items in _groups(root):
        cards = Cards(parent, items, 0)
        if items[0].tag == "dd":
            cards.terms = {item: term for item in items if (term := _term(item)) is not None}
        # Most runs of siblings are not cards for want of links: told before their words are counted.
        if sum(1 for item in items if cards.link(item) is not None) < 0.6 * len(items):
            continue
        counts = [len(cards.text(item).split()) for item in items]
        if sum(c >= MIN_CARD_WORDS for c in counts) < 0.6 * len(items):
            continue
        link_words = sum(len(" ".join(a.text_content() for part in cards.whole(item) for a in part.iter("a")).split())
                         for item in items)
        cards.words = total = sum(counts)
        # A menu: nothing but its links, short labels (a feed's cards are links too, to a titled story).
        if link_words < 0.9 * total:
            if best is None or total > best.words:
                best = cards
        elif _titled(items) and (linked_best is None or total > linked_best.words):
            cards.linked = True
            linked_best = cards
    return best or linked_best


#: The cards replace the article's text when they hold this many times its words and hold most of it
#: (it was one card, or a part of the list).
CARDS_OVER_TEXT = 1.5
TEXT_IN_CARDS = 0.6
#: An article in a page of layout blocks: a text of this many words that one "card" holds is that card's
#: article, not one card of a list.
ARTICLE_WORDS = 100
ONE_CARD = 0.8


def _overlap(a: list[str] | Counter, b: list[str]) -> int:
    """How many of ``a``'s words are ``b``'s too (as multisets); ``a`` may be given counted already."""
    return sum(((a if isinstance(a, Counter) else Counter(a)) & Counter(b)).values())


#: Cards that hold this share of the merged text, and as many words as this share of it, are the text.
CARDS_ARE_TEXT = 0.6
#: ... and add at most this share to it (else they bring what the extractors rightly left out).
CARDS_ADD = 1.4


#: Cards that hold this many times the merged text's words are the page's content whatever the text is:
#: the extractors kept an introduction, or a block beside the list, and missed the list.
CARDS_DOMINATE = 10
#: Cards whose words are all their links take the place of a text of fewer words than this only (see
#: ``TITLE_WORDS``): the page's heading, a featured story's teaser.
LINKED_TEXT_WORDS = 50


#: A shop's grid (``MIN_SPLIT_CARDS`` cards or more, most showing a price) that holds this many times the
#: merged text's words is the page's content, whatever the text is: a category's description beside its grid.
#: Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): collections 0.655 to 0.664 (3 pages
#: up, 0.25 to 0.87 on one, none down), listings unchanged. Any shop's cards in place of a text they do not
#: hold (by their words alone, however few) would have cost more pages than they gained (a shop's guide beside
#: a rail of its products). From fewer than ``MIN_SPLIT_CARDS`` cards, a review's four priced picks replaced its
#: article (dragnet 0.98 to 0.28 on one page, 0.8243 to 0.8249 with the limit; wcxb unchanged).
SHOP_OVER_TEXT = 2


#: ``MIN_SPLIT_CARDS`` cards or more (not links alone) that hold as many words as the merged text and share less
#: than this share of their words with it are the page's content, the text kept before them as its intro: the
#: extractors kept a block beside the list (a category's buying guide, a sidebar's events and podcasts) and
#: missed the list. Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): listings 0.739 to
#: 0.745 (two pages up: a news site's stories 0.19 to 0.57, a wiki's list of comments 0.50 to 0.56), collections
#: 0.694 to 0.699 (two up: a fitness shop's offers 0.34 to 0.75, a tailor's products 0.50 to 0.54), forums 0.837
#: to 0.845 (a thread's posts read as cards beside its sidebar, 0.22 to 0.86), none down; the other types,
#: readability's pages, cleanportaleval and cleaneval-dev unchanged, dragnet 0.82563 to 0.82557 (one page up, two
#: down: a story's list of ten stories beside it).
#: From half the text's words, or from four cards, as many pages fell as rose (a shop's carousel of picks, or
#: its grid, which the annotators of a page of the same shop left out). Not when both extractors kept the same
#: text (``SAME_TEXT`` of the shorter one's words are the other's): that is an article they found, and the
#: cards a rail of other stories beside it (three of readability's articles fell from 0.92-1.00 to 0.33-0.43
#: without this condition; the wcxb-dev pages it gained on agreed at 0.23 to 0.93).
CARDS_APART = 0.2
SAME_TEXT = 0.97


#: Cards whose words are all their links (see ``TITLE_WORDS``) that the merged text holds this share of are judged
#: as other cards are: the extractors kept them, so they are the page's content, not a rail beside it, and
#: are given as a list of cards. Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): listings
#: 0.7447 to 0.7449 (five pages up, among them a store's list of podcasts 0.66 to 0.75 and a list of
#: publications 0.91 to 0.96; one down, a job board whose featured jobs were not cards, 0.999 to 0.81, which
#: ``_with_variants`` brings back to 0.92), collections unchanged.
IN_TEXT = 0.75


def cards_win(cards: Cards, card_words: list[str], text_words: list[str], words_of, shop: bool = False,
              agreed: float = 0.0) -> bool:
    """Whether the cards (their words ``card_words``) are the page's content rather than the merged
    article's text (``text_words``): measured on the tuned pages of the listings and collections.
    ``words_of(card)`` gives one card's words; ``shop``: most cards show a price (``pagetype.priced``);
    ``agreed``: the extractors' ``agreement``."""
    if cards.linked and _overlap(card_words, text_words) < IN_TEXT * len(card_words):
        # A feed's stories, all links: the page's content only where the extractors found next to nothing
        # (its heading, one story); beside an article, or a short post, they are a rail or a blogroll.
        return len(text_words) < LINKED_TEXT_WORDS and len(card_words) >= CARDS_DOMINATE * len(text_words)
    if len(cards.items) >= MIN_SPLIT_CARDS and len(card_words) >= len(text_words) and agreed < SAME_TEXT \
            and _overlap(card_words, text_words) < CARDS_APART * len(card_words):
        return True
    if len(card_words) < CARDS_OVER_TEXT * len(text_words):
        # The text is the cards already (the extractors took the list): they are given as a list.
        return (CARDS_ARE_TEXT * len(text_words) <= len(card_words) <= CARDS_ADD * len(text_words)
                and _overlap(text_words, card_words) >= CARDS_ARE_TEXT * len(text_words)
                and not _one_card_article(cards, text_words, words_of))
    shop = shop and len(cards.items) >= MIN_SPLIT_CARDS
    if len(card_words) >= (SHOP_OVER_TEXT if shop else CARDS_DOMINATE) * len(text_words):
        return True
    if _overlap(text_words, card_words) < TEXT_IN_CARDS * len(text_words):
        return False
    return not _one_card_article(cards, text_words, words_of)


def _one_card_article(cards: Cards, text_words: list[str], words_of) -> bool:
    """Whether the text is an article (``ARTICLE_WORDS`` or more) that one of the "cards" holds nearly
    all of: a page laid out in boxes of one kind (its menu, its article, its login box), not a list."""
    if len(text_words) < ARTICLE_WORDS:
        return False
    counted, need = Counter(text_words), ONE_CARD * len(text_words)  # once, not again for each card
    for card in cards.items:
        card_words = words_of(card)
        # A card shares at most its own words: most are too short to be counted against the text.
        if len(card_words) >= need and _overlap(counted, card_words) >= need:
            return True
    return False


#: A text of which no card holds this share is the list's pieces (its headings, a few words of each card), not an
#: article that one card holds: a dated page's cards are then its content (see ``in_pieces``).
PIECES = 0.1


def in_pieces(cards: Cards, text_words: list[str], words_of) -> bool:
    """Whether no card holds ``PIECES`` of the text's words (``words_of(card)``: one card's words): the extractors
    kept a few words of many cards (an awards page's categories without their winners), not one card's article.
    A dated text that follows the headline is the page's article, however short, unless it is in such pieces.
    Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0): listings 0.7551 to 0.7652 (two pages of two sites,
    an awards page whose categories' headings alone were kept, 0.18 to 0.95, and a news index 0.690 to 0.695; none
    down), the other types and the article sets unchanged: every other page whose cards lost by the date (an
    article whose comments or rails are cards, documentation and a service page in boxes of one kind) had one card
    holding 0.18 to 0.78 of its text; these two, 0.05 and 0.09."""
    counted, need = Counter(text_words), PIECES * len(text_words)
    return not any(_overlap(counted, words_of(card)) >= need for card in cards.items)


def dated_by_a_card(cards: Cards, published: str) -> bool:
    """Whether the page's date ``published`` (``metadata.Metadata.published``) is one card's: a ``<time>``
    (or an element with a ``datetime`` or ``content``) within the cards gives it. A listing declaring no
    date of its own is dated by its first card's ``<time>``, which says nothing of the page."""
    for card in cards.items:
        for element in card.xpath(".//*[@datetime]|self::*[@datetime]"):
            if iso_date(element.get("datetime") or "") == published:
                return True
    return False


# A block of the merged text is in the cards when it is in their words as ``text_content()`` gives them or
# as their Markdown spaces them (``Cards.spaced``): a card's badge, price and delivery are often boxes side by
# side, which ``text_content()`` runs together ("Members offer$12.50") and the Markdown does not, and the
# text's blocks of them ("Members offer", "$12.50") were kept before the list as its intro, the cards given
# twice; the extractors' Markdown runs some of them together in turn, so both are read. Only here: the cards'
# spaced words in ``cards_win`` moved two listings (0.93 to 0.72, 0.98 to 0.95) and a collection (0.75 to
# 0.58) across its limits. Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): listings
# 0.7477 to 0.7506 (five pages up, a shop's fitness equipment 0.60 to 0.70 and an events search 0.57 to 0.64;
# none down), collections 0.7160 to 0.7174 (two up, none down), service pages 0.8333 to 0.8339 (4 up, one down by
# 0.002), documentation 0.9353 to 0.9357, forums and dragnet up by less than 0.0001, products and the other
# article sets unchanged.


def _outside(blocks: list, card_words: list[str], spaced_words: list[str] = ()) -> list:
    """The blocks (``choice.Block``) of the merged text that are not in the cards (less than half of their
    4-word shingles are the cards'; a block of fewer words, when its words are not in a row in them).
    ``spaced_words``: the cards' words as their Markdown spaces them (``Cards.spaced``), a block being in the
    cards when it is in either (see the note above)."""
    card_shingles = shingles(card_words) | shingles(spaced_words)
    card_texts = [f" {' '.join(card_words)} ", f" {' '.join(spaced_words)} "]
    outside = []
    for block in blocks:
        if block.words < 4:
            row = f" {' '.join(block.tokens)} "
            inside = any(row in card_text for card_text in card_texts)
        else:
            inside = len(block.shingles & card_shingles) >= 0.5 * len(block.shingles)
        if not inside:
            outside.append(block)
    return outside


def outside_blocks(blocks: list, card_words: list[str]) -> list:
    """The blocks (``choice.Block``) that are not in the words ``card_words`` (see ``_outside``)."""
    return _outside(blocks, card_words)


def outside_cards(blocks: list, card_words: list[str]) -> list[str]:
    """The Markdown of the blocks (``choice.Block``) of a text that are not in the words ``card_words`` (see
    ``_outside``): a product's text without its reviews and dialogs."""
    return [block.markdown for block in _outside(blocks, card_words)]


def listing_intro(blocks: list, card_words: list[str], spaced_words: list[str]) -> list[str]:
    """The Markdown of the merged text's blocks that are not in the cards (``_outside``), less a run of filter
    labels (see ``LABELS``): a listing's heading and introduction, and what the page says besides its cards,
    kept before the list."""
    return [block.markdown for block in _without_labels(_outside(blocks, card_words, spaced_words))]


#: A run of this many blocks or more outside the cards, each of fewer than ``LABEL_WORDS`` words and no heading,
#: is a search's or a shop's filters and sorting ("Date", "Price", "Sort by"), not the listing's intro: left out.
#: Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): listings 0.7506 to 0.7508 (an events
#: search's filters, 0.635 to 0.639, and one more page up), collections 0.7174 to 0.7177 (two pages up by 0.01),
#: none down; products 0.7266 to 0.7265 (4 up, 5 down, by 0.017 at most: then also applied, unmeant, to a product's text
#: without its reviews, which ``outside_cards`` gives and the labels rule no longer touches),
#: service pages 0.8339 to 0.8339 (one up, one down), all wcxb pages up (+0.02 summed); the article sets unchanged.
LABELS = 4
LABEL_WORDS = 3


def _without_labels(blocks: list) -> list:
    """The blocks (``choice.Block``) without their runs of ``LABELS`` short blocks or more (see ``LABELS``)."""
    kept, run = [], []
    for block in blocks:
        if block.words < LABEL_WORDS and not block.markdown.startswith("#"):
            run.append(block)
            continue
        kept.extend(run if len(run) < LABELS else [])
        run = []
        kept.append(block)
    kept.extend(run if len(run) < LABELS else [])
    return kept


_LINKED = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def _once(parts: list[str]) -> list[str]:
    """The parts of one card without those that say again what an earlier part said (its words alike, links
    aside). A shop's card writes its product's name in its image's caption, its heading and its link, and its price
    once for each screen size or once as the price and once as the "from" price: a reader sees each once.
    Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0): collections 0.7196 to 0.7227 (three pages of three
    shops up, a coffee roaster's name thrice and price twice per card 0.30 to 0.55; none down), listings 0.7663 to
    0.7680 (6 pages up, one down by less than 0.001)."""
    seen, kept = set(), []
    for part in parts:
        key = " ".join(_LINKED.sub(r"\1", part).casefold().split())
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(part)
    return kept


#: A card holding a heading and this many words or more is a section of the page (a company's block on one of its
#: services, a heading and its paragraphs), not an item of a list: it is written as its Markdown, its heading and
#: its paragraphs kept, not folded into one line (see ``cards_markdown``).
SECTION_CARD_WORDS = 100


def cards_markdown(markdowns: list[str], links: list[tuple[str | None, str]]) -> str:
    """The cards' Markdown (``markdowns``, with their links and titles ``links``: see ``Cards.title_link``): each
    card one list item (``card_line``), but a card with a heading and ``SECTION_CARD_WORDS`` words or more written
    as it stands, apart from the list."""
    parts: list[str] = []
    run: list[str] = []
    for markdown, (link, title) in zip(markdowns, links):
        blocks = [block for block in markdown.split("\n\n") if block.strip()]
        if len(markdown.split()) >= SECTION_CARD_WORDS and any(block.startswith("#") for block in blocks):
            if run:
                parts.append("\n".join(run))
                run = []
            parts.append("\n\n".join(blocks))
        elif line := card_line(markdown, link, title):
            run.append(line)
    if run:
        parts.append("\n".join(run))
    return "\n\n".join(parts)


def card_line(markdown: str, link: str | None, label: str = "") -> str:
    """One card's Markdown as one list item: its blocks joined by `` · ``, headings' marks dropped, its
    link given, when no block has it, on the block written ``label`` (the card's title: see
    ``Cards.title_link``), else on its first block."""
    parts = [" ".join(block.lstrip("#").split()) for block in markdown.split("\n\n") if block.strip()]
    parts = _once([p.removeprefix("- ") for p in parts if p])
    if not parts:
        return ""
    if link and not any(f"]({link})" in part for part in parts):
        at = next((n for n, part in enumerate(parts) if label and part == label), 0)
        if "](" not in parts[at]:
            parts[at] = f"[{parts[at]}]({link})"
    return "- " + " · ".join(parts)


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: A link card: one ``<a>`` holding a heading and a description of this many words or more besides it (a service
#: page's tile leading to the page of one of its offers: "Audit", and two lines on what the audit does). Both
#: extractors read such a card as a link, by its link density: they left its description out, or the whole
#: grid of them, and ``find_cards`` took the grid for a menu (its words all in links). Opened before they read the
#: page (see ``open_link_cards``), the card's description is its text and the link stays on its heading.
#: Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0), the page opened on every page but a declared
#: product's: service pages 0.8339 to 0.8428 (12 pages up, of 12 sites: a consultancy's grid of services 0.39 to
#: 0.93, a therapy service's 0.70 to 0.97, an HR firm's 0.76 to 0.92; two down, by 0.020 and 0.011), listings
#: 0.7508 to 0.7551 (a company blog's front page, whose posts are such cards, 0.49 to 0.85; two down, a news
#: front page 0.895 to 0.871 and 0.968 to 0.966), collections 0.7177 to 0.7176 (two pages down by 0.002 at most),
#: forums, products and documentation unchanged; dragnet 0.8301 (one page up by 0.0003), readability's pages
#: 0.9615 (one page down, 0.146 to 0.142), cleanportaleval and cleaneval-dev unchanged.
#: Opened only on pages that declare nothing, the blog's front page (which declares an article) was not gained.
#: The link is kept on the heading, not dropped with the card's ``<a>``: without it service pages gained 0.001 less.
CARD_DESCRIPTION_WORDS = 5


def open_link_cards(root) -> None:
    """Turn each link card under ``root`` (see ``CARD_DESCRIPTION_WORDS``) into a box whose heading is the link:
    ``<a href><h3>Audit</h3><p>What the audit does</p></a>`` becomes ``<div><h3><a href>Audit</a></h3><p>...``."""
    for a in list(root.iter("a")):
        href = a.get("href")
        headings = list(a.iter(*_HEADINGS)) if href else []
        if not headings:
            continue
        words = len(a.text_content().split())
        if words - sum(len(h.text_content().split()) for h in headings) < CARD_DESCRIPTION_WORDS:
            continue
        heading = headings[0]
        if next(heading.iter("a"), None) is None:
            link = etree.SubElement(heading, "a", href=href)
            link.text, heading.text = heading.text, None
            for child in list(heading):
                if child is not link:
                    link.append(child)
        a.attrib.clear()
        a.tag = "div"
