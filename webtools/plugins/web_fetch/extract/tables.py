"""A data table the extractors left out of the article they kept: put back where the page has it.

Both extractors drop a block whose words are mostly its links: a table of names, each a link (a list of prize
winners by year, a ranking, a schedule), is such a block, though it is what the page is about. A table with a
header row of ``<th>`` cells and rows of ``<td>`` cells (not a layout's table of boxes) whose words the text
lacks, and that follows a block the text kept (its heading, its introduction), is put back after that block.
Measured on the tuned parts (WCXB, Foley 2026, CC-BY-4.0), with ``markdown``'s merged cells under a header row:
listings 0.7663 to 0.7678 (a Wikipedia list of prize winners 0.33 to 0.86; a shop's comparison table of its
mounts, which its gold leaves out, 0.83 to 0.38), documentation, products and service pages down by less than
0.0001 (a page each, by 0.004 at most), dragnet up (one page, +0.016), the other sets unchanged.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from .choice import split_blocks, text_words, words

#: A table of data has a header row and at least this many rows of data below it.
MIN_ROWS = 5
#: A table is missed when the text holds less than this share of its words.
MISSED = 0.5
#: The anchor (the text right before the table) is read by its last words, at most this many.
ANCHOR_WORDS = 8


def _data_table(table) -> bool:
    """Whether ``table`` is a table of data: no table within it, a header row of two or more ``<th>`` cells
    and ``MIN_ROWS`` rows or more with a ``<td>``."""
    if table.find(".//table") is not None:
        return False
    rows = [row for row in table.iter("tr")]
    if not rows:
        return False
    header = [cell for cell in rows[0] if cell.tag in ("td", "th")]
    if len(header) < 2 or any(cell.tag != "th" for cell in header):
        return False
    return sum(1 for row in rows[1:] if row.find("td") is not None) >= MIN_ROWS


def _anchor(table) -> list[str]:
    """The last words (``ANCHOR_WORDS`` at most) of the nearest element with text before ``table`` in the
    page, not all of it links: its heading, or the paragraph that introduces it."""
    element = table
    while element is not None and element.tag != "body":
        for before in element.itersiblings(preceding=True):
            if not isinstance(before.tag, str):
                continue
            found = words(" ".join(before.itertext()))
            # A run of links (the table's own index, "1901 1910 1920 ...") is a menu, not the text before it.
            if found and len(found) > len(words(" ".join(" ".join(a.itertext()) for a in before.iter("a")))):
                return found[-ANCHOR_WORDS:]
        element = element.getparent()
    return []


def with_missed_tables(text: str, body, markdown_of: Callable) -> str:
    """``text`` with each table of data of the cleaned page ``body`` that it lacks (see ``MISSED``) put back
    after the block holding the words right before the table (``_anchor``); a table whose anchor the text
    lacks is not the article's, and stays out. ``markdown_of(table)``: the table's Markdown."""
    tables = [table for table in body.iter("table") if _data_table(table)]
    if not tables:
        return text
    kept = Counter(text_words(text))
    # Every block, those without words too (an image, a rule): the text comes back as it was, and more.
    parts = split_blocks(text)
    spaced = [f" {' '.join(words(part))} " for part in parts]
    added = False
    for table in tables:
        inner = words(table.text_content())
        if not inner or sum((Counter(inner) & kept).values()) >= MISSED * len(inner):
            continue
        anchor = _anchor(table)
        if not anchor:
            continue
        needle = f" {' '.join(anchor)} "
        at = next((i for i in range(len(spaced) - 1, -1, -1) if needle in spaced[i]), None)
        if at is None:
            continue
        markdown = markdown_of(table)
        if not markdown:
            continue
        parts.insert(at + 1, markdown)
        spaced.insert(at + 1, "")
        added = True
    return "\n\n".join(parts) if added else text
