"""Merging two candidates' Markdown into one text, block by block, by agreement and text density.

A block is a paragraph, heading, list, table or code block of Markdown. The *base* candidate
(readability's, which keeps the article's structure) gives the order. A block is kept when:

- the other candidate has it too (at least ``COVERED`` of its 4-word shingles): two different methods
  agree that it is content;
- or it is prose: ``PROSE_WORDS`` words or more with at most ``MAX_LINK_SHARE`` of them in links;
- or it lies between kept blocks of its candidate and is not thick with links: an article's own
  subheadings, short paragraphs and lists sit between its paragraphs, while a page's boilerplate sits
  around them.

The other candidate's blocks kept by these rules that the base lacks are inserted after the base block
that holds the other's previous shared block, so they appear where that extractor found them; a
slideshow embedded in the article is not (``_embedded_gallery``).

Two candidates that share no 4-word shingle are two different texts: the one that follows the article's
headline is kept, alone (``nearest_after_headline``), instead of both.

Both extractors look for the article's body and miss what sits between its headline and its body: the
standfirst, a video's description above a video post, a byline line. ``with_lead`` adds it back from the
whole cleaned page (see there).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Set
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import chain, filterfalse, islice

from .page import similar

COVERED = 0.5
PROSE_WORDS = 15
MAX_LINK_SHARE = 0.3

_WORD = re.compile(r"\w+")
_LINK = re.compile(r"\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*\)")
_URL = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*\)|<https?://[^>\s]+>")
_FENCE = re.compile(r"^(`{3,}|~{3,})")
#: A list item's text, the item's mark left out (items at the start of a line, not nested ones).
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)]) +(.*)$", re.MULTILINE)
#: A block that is a heading, a list or a table in Markdown: not a lead's prose.
_NOT_PROSE_BLOCK = re.compile(r"#|[-*+] |\d+[.)] |\|")
#: How many of the article's first words ``with_lead`` looks for in the page.
LEAD_NEEDLE_WORDS = 8
#: A lead sits near its headline: with more words than this between them (a page's whole menu), none is
#: looked for. On the 1640 benchmark pages no lead was found with more than 150 words between.
LEAD_MAX_GAP_WORDS = 300
#: The headline's Markdown: a heading of level 1 or 2, as the writer drops it (``markdown._Writer``).
_HEADLINE = re.compile(r"#{1,2} ")
#: Where a URL (``_URL``) opens a parenthesis of its own: the only part of it that may hold a line break.
_NESTED_URL = re.compile(r"\]\([^()\s]*\(")


@dataclass
class Block:
    markdown: str
    tokens: list[str]
    shingles: frozenset
    link_share: float

    @property
    def words(self) -> int:
        return len(self.tokens)

    def prose(self) -> bool:
        return self.words >= PROSE_WORDS and self.link_share <= MAX_LINK_SHARE


def split_blocks(markdown: str) -> list[str]:
    """Blocks separated by blank lines, a fenced code block (blank lines and all) being one: it ends at a line of
    its fence's character, as many or more (CommonMark; the writer fences code holding backticks with more)."""
    blocks, current, fence = [], [], None
    for line in markdown.split("\n"):
        mark = _FENCE.match(line.lstrip())
        if mark and fence is None:
            fence = mark.group(1)
        elif mark and mark.group(1).startswith(fence) and line.strip() == mark.group(1):
            fence = None
        if not line.strip() and fence is None:
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _seen(markdown: str) -> str:
    """What a reader sees of Markdown: link and image URLs left out. A text without the two ways a URL
    starts (most blocks, most texts between tags) is left as it is without being searched."""
    if "](" not in markdown and "<http" not in markdown:
        return markdown
    return _URL.sub("]", markdown)


def words(markdown: str) -> list[str]:
    """The words a reader sees in Markdown (link and image URLs left out), lowercased."""
    return _WORD.findall(_seen(markdown).lower())


#: What ``text_words`` and ``blocks`` have read during the extraction running in this context
#: (``remembering_words``): each text's words, and each text's blocks.
_REMEMBERED: ContextVar[tuple[dict[str, tuple[str, ...]], dict[str, tuple[Block, ...]]] | None] = ContextVar(
    "remembered_words", default=None)


def text_words(markdown: str) -> tuple[str, ...]:
    """``words(markdown)``, remembered within one extraction (``remembering_words``): it asks for the
    words of its two candidates, of its text and of the cleaned page in several of its checks (a tenth of
    its time on CleanEval's pages when each read them again). Outside one, read each time."""
    remembered = _REMEMBERED.get()
    if remembered is None:
        return tuple(words(markdown))
    found = remembered[0].get(markdown)
    if found is None:
        # Its blocks' words, when they were read: the same words (``_block_words``), not read again.
        known = remembered[1].get(markdown)
        tokens = None if known is None else _block_words(markdown, known)
        found = remembered[0][markdown] = tuple(words(markdown) if tokens is None else tokens)
    return found


@contextmanager
def remembering_words() -> Iterator[None]:
    """Within it, ``text_words`` and ``blocks`` remember what they read, and forget it all at the end:
    nothing of one page is kept past its extraction (a module-wide cache of the last sixteen texts held
    67 MiB after a 5 MB page), and extractions in other threads keep their own."""
    token = _REMEMBERED.set(({}, {}))
    try:
        yield
    finally:
        _REMEMBERED.reset(token)


def word_count(markdown: str) -> int:
    """``len(words(markdown))``, without listing the words: a text's runs of characters other than spaces that
    are all letters and digits (most of them) are one word each, and only the others are searched (joined with
    spaces: no word runs across a space). ``str.isalnum`` and the pattern's ``\\w`` take the same characters for
    letters and digits, the underscore aside (searched), and the text is lowercased first as ``words`` does (a
    capital I with a dot above is two characters in lowercase, one of them no letter). The cleaned page's words,
    counted for several checks, took 2.8% of our time on readability's tuned pages counted from their list, 1.3%
    so (sampled). Remembered words (``text_words``) are counted, not read again."""
    remembered = _REMEMBERED.get()
    if remembered is not None:
        found = remembered[0].get(markdown)
        if found is not None:
            return len(found)
    tokens = _seen(markdown).lower().split()
    others = list(filterfalse(str.isalnum, tokens))
    return len(tokens) - len(others) + len(_WORD.findall(" ".join(others)))


def agreement(article: str, traf: str) -> float:
    """How far the two candidates agree: the share of the shorter one's words (``text_words``) that are the
    other's too, as multisets. An article's text is the one both extractors find."""
    a, b = Counter(text_words(article)), Counter(text_words(traf))
    return (a & b).total() / max(min(a.total(), b.total()), 1)


def count_words(markdown: str, limit: int) -> int:
    """``len(words(markdown))``, counted no further than ``limit``: a merged article's words are counted
    only to tell a short one, and listing them all was as long as the rest of the check."""
    return sum(1 for _ in islice(_WORD.finditer(_seen(markdown)), limit))


def _shingles(tokens: list[str]) -> frozenset:
    """The text's runs of 4 words, each as one string (its words and spaces: words hold no space); a text
    of fewer words is one run. Strings, not tuples: their hash is kept, and they cost the collector
    nothing."""
    if len(tokens) < 4:
        return frozenset([" ".join(tokens)])
    return frozenset(map(" ".join, zip(tokens, tokens[1:], tokens[2:], tokens[3:])))


def shingles(tokens: list[str]) -> frozenset:
    """The 4-word shingles of ``tokens`` (see ``_shingles``)."""
    return _shingles(tokens)


def blocks(markdown: str) -> tuple[Block, ...]:
    """The blocks of ``markdown`` (``split_blocks``) that have words, each with its words, shingles and link
    share; remembered within one extraction (``remembering_words``), as ``text_words`` is: the check
    whether to run readability reads trafilatura's text's blocks, and the merge reads them again. Read
    only: every caller is given the same blocks."""
    remembered = _REMEMBERED.get()
    if remembered is None:
        return _blocks(markdown)
    found = remembered[1].get(markdown)
    if found is None:
        found = remembered[1][markdown] = _blocks(markdown)
    return found


def _blocks(markdown: str) -> tuple[Block, ...]:
    out = []
    for text in split_blocks(markdown):
        tokens = words(text)
        if not tokens:
            continue
        linked = sum(len(_WORD.findall(m.group(1))) for m in _LINK.finditer(text))
        out.append(Block(text, tokens, _shingles(tokens), min(linked / len(tokens), 1.0)))
    return tuple(out)


def _block_words(markdown: str, blocks_: tuple[Block, ...]) -> list[str] | None:
    """``words(markdown)`` from its blocks' words (a word never runs across the blank line between two
    blocks): the same words in the same order, unless a link's URL runs across a blank line (then None:
    they are to be read from the text)."""
    # Only a parenthesis within a URL holds a line break: most texts have none, and are not searched.
    if _NESTED_URL.search(markdown) and any("\n" in m.group() for m in _URL.finditer(markdown)):
        return None
    return list(chain.from_iterable(block.tokens for block in blocks_))


def _text_words_and_shingles(markdown: str, blocks_: tuple[Block, ...]) -> tuple[list[str], Set]:
    """``words(markdown)`` and its shingles, from its blocks' (see ``_block_words``)."""
    tokens = _block_words(markdown, blocks_)
    if tokens is None:
        tokens = words(markdown)
        return tokens, _shingles(tokens)
    if len(tokens) < 4:
        return tokens, frozenset([" ".join(tokens)])
    # A block's own shingles, and those that run across its end into the next blocks.
    shingles = set().union(*(b.shingles for b in blocks_ if b.words >= 4))
    end = 0
    for block in blocks_:
        start, end = end, end + block.words
        for i in range(max(start, end - 3), min(end, len(tokens) - 3)):
            shingles.add(" ".join(tokens[i:i + 4]))
    return tokens, shingles


def _covered(block: Block, other: frozenset, other_text: str) -> bool:
    if block.words < 4:  # too short for shingles: the same words in a row
        return f" {next(iter(block.shingles))} " in other_text
    return len(block.shingles & other) >= COVERED * len(block.shingles)


def _interior(keep: list[bool], blocks_: tuple[Block, ...]) -> list[bool]:
    """Also keep the blocks between the first and the last kept one that are not thick with links."""
    kept = [i for i, k in enumerate(keep) if k]
    if not kept:
        return keep
    first, last = kept[0], kept[-1]
    return [k or (first < i < last and b.link_share <= MAX_LINK_SHARE) for i, (k, b) in enumerate(zip(keep, blocks_))]


def _embedded_gallery(block: Block, anchor: int, following: int | None, base_words: int) -> bool:
    """Whether ``block``, one the base lacks, is a gallery or slideshow embedded in the article: a list
    whose items each open with a heading (``- ## 1/50 Caption``), with more words than the whole base,
    between two of the base's blocks. A paragraph the base dropped is shorter than the article it sits in."""
    return anchor >= 0 and following is not None and _gallery_shape(block, base_words)


def _gallery_shape(block: Block, base_words: int) -> bool:
    """A list whose items each open with a heading, with more words than ``base_words``."""
    return block.words > base_words and bool(_LIST_ITEM.match(block.markdown)) and all(
        item.startswith("#") for item in _LIST_ITEM.findall(block.markdown))


def without_galleries(text: str, base: str) -> str:
    """``text`` (trafilatura's, used alone) without the galleries embedded in the article that ``base``
    (readability's) found: its blocks that ``base`` lacks, between two that it has, of a gallery's shape
    (see ``_embedded_gallery``). ``text`` as it is when it has none."""
    text_blocks, base_blocks = blocks(text), blocks(base)
    if not base_blocks:
        return text
    base_words, base_set = _text_words_and_shingles(base, base_blocks)
    base_text = _spaced(base_words)
    shared = {i for i, block in enumerate(text_blocks) if _covered(block, base_set, base_text)}
    if not shared:
        return text
    dropped = {i for i in range(min(shared) + 1, max(shared))
               if i not in shared and _gallery_shape(text_blocks[i], len(base_words))}
    if not dropped:
        return text
    return "\n\n".join(block.markdown for i, block in enumerate(text_blocks) if i not in dropped)


#: A block this long that the text has already given is a copy: a page's layout for another screen, a
#: slide of a carousel shown twice. Shorter blocks ("Add to cart", a size, a heading) repeat in content.
REPEAT_WORDS = 8


def without_repeats(text: str) -> str:
    """``text`` without the blocks of ``REPEAT_WORDS`` words or more whose words an earlier block gave
    already: a shop's page writes its description once for phones and once for larger screens, hiding
    one of them with CSS the extractor does not read."""
    seen: set[tuple[str, ...]] = set()
    kept = []
    for block in blocks(text):
        key = tuple(block.tokens)
        if block.words >= REPEAT_WORDS and key in seen:
            continue
        seen.add(key)
        kept.append(block.markdown)
    return "\n\n".join(kept)


#: A run of this many blocks or more, with this many words, that repeats an earlier run of the text block for block
#: is a copy of it (see ``without_copies``). Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0): service pages
#: 0.8486 to 0.8504 (four pages of four sites up, two down whose golds keep the copies), listings 0.7551 to 0.7561,
#: products +0.0001, the other types unchanged, cleaneval-dev -0.0001 (one page). Two blocks and 20 words dropped the
#: features plans share (a plan's name, then the same list as another's) and the rows of a table of pet insurance.
COPY_BLOCKS = 3
COPY_WORDS = 30
COPY_PLACES = 8


def without_copies(text: str) -> str:
    """``text`` without the runs of ``COPY_BLOCKS`` blocks or more (``COPY_WORDS`` words or more) that repeat an
    earlier run block for block: a page that draws a section once for each screen size and hides the others
    with its style sheet (a site builder's variants of its hero), a slider that repeats its slides for its
    loop, a tab bar for wide screens beside an accordion of the same panels for narrow ones. A reader sees one.
    A block repeated alone, or a few short ones, stays: each plan of a price table lists the features it shares
    with the others, between its own name and price."""
    # A copy holds blocks written alike, at least as many as a copy has (a block whose words are another's is
    # nearly always written as it is): most texts have none, and are not read further.
    counted = Counter(piece for piece in map(str.strip, text.split("\n\n")) if piece)
    if sum(count for count in counted.values() if count > 1) < 2 * COPY_BLOCKS:
        return text
    # Each block's words alone (``blocks`` also reads their shingles and links, a sixtieth of the extraction's time
    # on Readability's pages when this read the text's blocks so); a block without words is left as it is, unless
    # it lies within a copy.
    pieces = split_blocks(text)
    worded = [(n, tuple(words(piece))) for n, piece in enumerate(pieces)]
    worded = [(n, key) for n, key in worded if key]
    keys = [key for _, key in worded]
    where: dict[tuple[str, ...], list[int]] = {}  # each block's words -> where they came, in order
    copies: set[int] = set()
    i = 0
    while i < len(keys):
        run = 0
        # The latest few places only: a short block ("Learn more") can come hundreds of times.
        for start in where.get(keys[i], ())[-COPY_PLACES:]:
            length = 0
            while i + length < len(keys) and start + length < i and keys[start + length] == keys[i + length]:
                length += 1
            run = max(run, length)
        size = run if run >= COPY_BLOCKS and sum(len(key) for key in keys[i:i + run]) >= COPY_WORDS else 1
        if size > 1:
            # The copy's pieces, from its first block's to its last's.
            copies.update(range(worded[i][0], worded[i + size - 1][0] + 1))
        for j in range(i, i + size):
            where.setdefault(keys[j], []).append(j)
        i += size
    if not copies:
        return text
    return "\n\n".join(piece for n, piece in enumerate(pieces) if n not in copies)


def merge(base: str, other: str, apart: Callable[[list[str]], str | None] | None = None) -> str:
    """One Markdown text from two candidates' (see the module's docstring). When they share no 4-word
    shingle (the extractors found two different texts: a short post and a column beside it) and the merge
    is not empty, ``apart([base, other])`` may choose one of them instead (``nearest_after_headline``)."""
    base_blocks, other_blocks = blocks(base), blocks(other)
    if not other_blocks:
        return "\n\n".join(b.markdown for b in base_blocks)
    if not base_blocks:
        return "\n\n".join(b.markdown for b in other_blocks)
    # Shingles over the whole text, across block boundaries: the two may cut blocks differently.
    base_words, base_set = _text_words_and_shingles(base, base_blocks)
    other_words, other_set = _text_words_and_shingles(other, other_blocks)
    base_text, other_text = _spaced(base_words), _spaced(other_words)
    keep = _interior([_covered(b, other_set, other_text) or b.prose() for b in base_blocks], base_blocks)
    shared = [_covered(b, base_set, base_text) for b in other_blocks]
    # Each shingle's first base block: filled from the last block back, so that earlier ones overwrite.
    owner: dict[str, int] = {}
    for i in range(len(base_blocks) - 1, -1, -1):
        owner.update(dict.fromkeys(base_blocks[i].shingles, i))
    # Where each of the other's blocks would go: after the base block holding its last shared block.
    anchors, anchor = [], -1
    for block, is_shared in zip(other_blocks, shared):
        if is_shared:
            owners = Counter(map(owner.get, block.shingles))
            del owners[None]  # its shingles no base block holds
            if owners:
                # The base block holding most of it; of two holding as much, the later one (never the
                # order the set's shingles came in, which changes with the hash seed).
                anchor = max(owners.items(), key=lambda item: (item[1], item[0]))[0]
        anchors.append(anchor)
    following: list[int | None] = [None] * len(other_blocks)
    for i in range(len(other_blocks) - 2, -1, -1):
        following[i] = anchors[i + 1] if shared[i + 1] else following[i + 1]
    inserts: dict[int, list[str]] = {}
    for i, block in enumerate(other_blocks):
        if shared[i]:
            continue
        # A short block the base lacks is kept only in a gap of the base's text: between two shared
        # blocks that follow each other in the base (readability drops short lists and captions).
        gap = anchors[i] >= 0 and following[i] is not None and following[i] - anchors[i] <= 1
        if _embedded_gallery(block, anchors[i], following[i], len(base_words)):
            continue
        if block.prose() or (gap and block.link_share <= MAX_LINK_SHARE):
            inserts.setdefault(anchors[i], []).append(block.markdown)
    out = list(inserts.get(-1, ()))
    for i, block in enumerate(base_blocks):
        if keep[i]:
            out.append(block.markdown)
        out.extend(inserts.get(i, ()))
    if out and apart is not None and base_set.isdisjoint(other_set):
        return apart([base, other]) or "\n\n".join(out)
    return "\n\n".join(out)


def _first_words(text: str) -> str:
    """The first ``LEAD_NEEDLE_WORDS`` words of ``text``, spaced as ``_spaced`` writes them."""
    return f" {' '.join(words(text[:2000])[:LEAD_NEEDLE_WORDS])} "


def _spaced(tokens: list[str]) -> str:
    return f" {' '.join(tokens)} "


def _find_words(tokens: list[str], needle: str) -> int:
    """The index in ``tokens`` where the words of ``needle`` (spaced as ``_first_words`` gives them) come
    in a row, first; -1 when they do not."""
    spaced = _spaced(tokens)
    at = spaced.find(needle)
    return -1 if at < 0 else spaced.count(" ", 0, at)


def _words_after(heading, body) -> tuple[list[str], dict]:
    """The words of ``body``'s text after ``heading`` (an element in it), in document order, and where
    each of the heading's ancestors up to ``body`` ends among them (its number of words after the heading).

    Read from the heading on, one level up at a time (its tail and following siblings, then its parent's),
    each level's texts searched at once. Each element's own words, from the page's start, had been read
    walking every element in Python (a twentieth of extraction time on dragnet's pages); and asking each
    ancestor for its words had read the same text again for each (18 s on a page nested 200 deep around
    40,000 links)."""
    tokens: list[str] = []
    ends: dict = {}
    node = heading
    while node is not body:
        pieces = [node.tail or ""]
        for sibling in node.itersiblings():
            if isinstance(sibling.tag, str):  # a comment's text is not the page's, its tail is
                pieces.extend(sibling.itertext())
            pieces.append(sibling.tail or "")
        # Words never run across the space between two texts; nor does a link's URL ("](" or "<http"
        # within one text).
        text = " ".join(pieces)
        if "](" in text or "<http" in text:
            text = " ".join(map(_seen, pieces))
        tokens.extend(_WORD.findall(text.lower()))
        node = node.getparent()
        ends[node] = len(tokens)
    return tokens, ends


def _after_headline(body, title: str | None) -> tuple[object, list[str], dict] | None:
    """The headline (see ``_headline``), the page's words after it and where its ancestors end among
    them (``_words_after``); None when the page has no headline like ``title``."""
    heading = _headline(body, title)
    if heading is None:
        return None
    return heading, *_words_after(heading, body)


def lead_region(body, title: str | None, text: str):
    """Where ``with_lead`` looks for the lead, or None when it would find none: the smallest element
    around the headline (a level 1 or 2 heading like ``title``) that also holds the first words of
    ``text`` after it. None when the page has no such headline, or fewer than ``PROSE_WORDS`` words lie
    between it and the article (no room for a prose block), or more than ``LEAD_MAX_GAP_WORDS``: the
    Markdown of the region is written only then."""
    needle = _first_words(text)
    found = _after_headline(body, title) if needle.strip() else None
    if found is None:
        return None
    heading, following, ends = found
    gap = _find_words(following, needle)  # the words between the headline and the needle
    if not PROSE_WORDS <= gap <= LEAD_MAX_GAP_WORDS:
        return None
    # Every ancestor of the headline starts before the needle: the first that ends after it holds both.
    last = gap + len(needle.split())
    for ancestor in heading.iterancestors():
        end = ends.get(ancestor)
        if end is None:  # above the body
            return None
        if last <= end:
            return ancestor
    return None


def _headline(body, title: str | None):
    """The article's headline: the first level 1 or 2 heading like ``title`` (as the Markdown writer
    finds it to drop it), or None."""
    if not title:
        return None
    return next((heading for heading in body.iter("h1", "h2") if similar(title, heading.text_content())), None)


def nearest_after_headline(body, title: str | None, candidates: list[str]) -> str | None:
    """Of candidates that are different texts (see ``merge``), the one whose first words come first
    after the article's headline in the cleaned page ``body``: an article follows its headline, a
    sidebar's biography or a menu does not. None when the page has no headline like ``title`` or no
    candidate's first words follow it."""
    headline = _after_headline(body, title)
    if headline is None:
        return None
    following = headline[1]
    positions = [(_find_words(following, _first_words(_without_headline(text, title))), i)
                 for i, text in enumerate(candidates)]
    positions = [(position, i) for position, i in positions if position >= 0]
    return candidates[min(positions)[1]] if positions else None


#: The text an article's headline heads starts within this many words after it (a byline, a date, a
#: standfirst between them).
HEADED_WITHIN = 60


def follows_headline(body, title: str | None, text: str) -> bool:
    """Whether ``text``'s first words come right after the article's headline in the cleaned page
    ``body`` (within ``HEADED_WITHIN`` words): then it is the article that headline heads."""
    headline = _after_headline(body, title)
    if headline is None:
        return False
    needle = _first_words(_without_headline(text, title))
    return bool(needle.strip()) and 0 <= _find_words(headline[1][:HEADED_WITHIN + 20], needle) <= HEADED_WITHIN


def _without_headline(text: str, title: str) -> str:
    """``text`` without the blocks that open it and repeat the headline (a heading, a link to the page
    itself): its own first words come after them, and are what follows the headline in the page."""
    parts = split_blocks(text)
    start = 0
    while start < len(parts) and similar(title, _seen(parts[start]).lstrip("#")):
        start += 1
    return "\n\n".join(parts[start:]) if start < len(parts) else text


def with_lead(text: str, page: str, title: str | None) -> str:
    """``text`` (the merged article) with its lead before it: the prose blocks of ``page`` (Markdown of
    the article's surroundings, its headline kept) that come after the headline (a level 1 or 2 heading
    like ``title``) and right before the block where ``text``'s first words are.

    Only the blocks right before the article's first words count, each prose (``Block.prose``: not a
    list, a heading or a table, not thick with links): a byline, a date, share buttons or a heading
    between them ends the lead, so an author's biography, a list of top stories or a sidebar placed
    between the headline and the article in the page's source is left out. ``text`` is returned as it
    is when the page has no such headline, or the article's first words are not found after it."""
    if not title:
        return text
    needle = _first_words(text)
    page_blocks = split_blocks(page)
    headline = next((i for i, block in enumerate(page_blocks)
                     if _HEADLINE.match(block) and similar(title, block.lstrip("#"))), None)
    if headline is None or not needle.strip():
        return text
    following = page_blocks[headline + 1:]
    tokens = [words(block) for block in following]
    before = _find_words(list(chain.from_iterable(tokens)), needle)
    if before < 0:
        return text
    # The block the needle starts in: the one holding the word after the ``before`` words ahead of it.
    start = 0
    while start < len(tokens) and before >= len(tokens[start]):
        before -= len(tokens[start])
        start += 1
    lead: list[str] = []
    for markdown in reversed(following[:start]):
        block = next(iter(blocks(markdown)), None)
        if block is None or not block.prose() or _NOT_PROSE_BLOCK.match(markdown):
            break
        lead.append(markdown)
    return "\n\n".join([*reversed(lead), text]) if lead else text
