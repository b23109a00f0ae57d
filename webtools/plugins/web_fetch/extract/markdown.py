"""Markdown from HTML, written straight from the lxml tree: compact links and images, lists, block quotes,
pipe tables when simple, fenced code blocks that keep their language.

markdownify on BeautifulSoup did this before; it re-parsed every candidate and searched the tree for
each table row, so a 0.7 MB table took 24 seconds. This writer walks the tree once.
"""
from __future__ import annotations

import re

import lxml.html
from lxml import etree

from .page import similar

#: Prose with a link every this many words or fewer is "thick with links": its links keep only their
#: words, since their URLs would outweigh the text (a wiki's prose, a reference list).
DENSE_LINK_WORDS = 20
DENSE_MIN_LINKS = 2
_DENSITY_BLOCKS = frozenset({"p", "li", "td", "th", "dd", "blockquote", "figcaption"})
_DEAD_LINK = re.compile(r"^\s*(?:#|javascript:|mailto:$|data:)", re.IGNORECASE)
#: Cell content that makes a table a layout grid, not data: it becomes text rows, not a pipe table.
_BLOCK_IN_CELL = frozenset({
    "table", "p", "div", "ul", "ol", "dl", "pre", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6",
})
_LANGUAGE_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|brush:?)-?\s*([A-Za-z0-9_+#.-]+)")

_BLOCK_TAGS = frozenset({
    "p", "div", "section", "article", "main", "aside", "header", "footer", "nav", "figure", "figcaption",
    "address", "dl", "dt", "dd", "center", "form", "fieldset", "details", "summary", "body", "html", "tr",
    "thead", "tbody", "tfoot", "caption", "hgroup", "menu", "legend", "dialog", "noscript", "hr",
})
_SKIPPED = frozenset({"script", "style", "template", "head", "title", "meta", "link", "select", "option"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_EMPHASIS = {"b": "**", "strong": "**", "i": "*", "em": "*"}
#: A run of whitespace, and of the control characters the page's text may hold (none is shown): the writer marks its
#: own Markdown with two of them (``_INDENT``, ``_HEADING_MARK``), which the page's text then cannot forge.
_SPACE = re.compile("[\\s\x00-\x08\x0e-\x1f\x7f]+")
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")
#: What may stand before a code block on its line: a list item's indentation and marker.
_LIST_PREFIX = re.compile("[\x01 ]*(?:(?:[-*]|\\d+\\.) )?")
#: Where a line other than the first begins, unless it is blank.
_LINE_START = re.compile(r"(?<=\n)(?=[^\n])")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
#: Two or more spaces or tabs after a visible character. Written to start with a space or tab (re then
#: skips to one): as ``(?<=\S)[ \t]{2,}`` it tried the look-behind at every character, and was most of
#: the writer's clean-up time.
_MULTI_SPACE = re.compile(r"[ \t](?<=\S[ \t])[ \t]+")
#: Indentation of list items' continuation lines, kept apart from the page's own spaces until the end.
_INDENT = "\x01"
#: What may open a line before its text: indentation, block quotes' and list items' markers, as CommonMark reads them.
_LINE_OPENING = "(?:[\x01 \t]|>|(?:[-*+]|\\d{1,9}[.)])(?=[ \t]))*"
#: The writer's heading marks, written so until the end, that the page's text cannot forge (see ``_SPACE``).
_HEADING_MARK = "\x02"
#: A line of the page's text that Markdown would read as more than text: one that opens as a code fence does (a
#: seller's divider, "~~~~~~~~"; "```" typed in a comment: the rest of the page would be code, and our blocks, see
#: ``choice.split_blocks``, one), or as a heading does ("# 1 tip"; a hashtag's "#" alone before a link), or that
#: underlines the line above with "=" or "-" alone (making that line a heading). It is escaped with a backslash: a
#: reader of the Markdown, and ``focus`` cutting the text into sections at its headings, takes it as text. Only text
#: can match: the writer's headings are ``_HEADING_MARK`` and its code blocks placeholders until the end. Searched
#: from each line break (the text is given one before its first line), which re finds fast, not from each character.
_MARKUP_LIKE = re.compile(f"\n({_LINE_OPENING})(?=```|~~~|#{{1,6}}(?:[ \t]|$)|(=+|-+)[ \t]*$)", re.MULTILINE)
#: Backticks in a row, as many as open a code fence: a code block holding them is fenced by more (CommonMark),
#: or its own line of three would end it.
_BACKTICK_RUN = re.compile("`{3,}")


def code_language(pre) -> str:
    """The language a code block declares: ``class="language-python"`` (and ``lang-``, ``brush:``,
    ``highlight-source-``) or ``data-lang`` on the ``<pre>`` or its ``<code>``, else none."""
    code = next((child for child in pre if child.tag == "code"), None)
    for el in (pre, code):
        if el is None:
            continue
        for attr in ("data-lang", "data-language"):
            value = (el.get(attr) or "").strip()
            if re.fullmatch(r"[A-Za-z0-9_+#.-]{1,30}", value):
                return value.lower()
        match = _LANGUAGE_CLASS.search(el.get("class") or "")
        if match:
            return match.group(1).lower()
    return ""


def _collapse(text: str) -> str:
    """Each run of whitespace as one space. Every whitespace character but the space is unprintable, so
    printable text without two spaces in a row is left as it is (half of the texts, read faster)."""
    if text.isprintable() and "  " not in text:
        return text
    return _SPACE.sub(" ", text)


def _tag(el) -> str:
    tag = el.tag  # lxml builds the string again at each reading
    return tag.lower() if isinstance(tag, str) else ""


class _Writer:
    def __init__(self, include_image_urls: bool, title: str | None, page_url: str):
        self.include_image_urls = include_image_urls
        # The headline is dropped once.
        self.headline = title or ""
        self.page_url = page_url.split("#", 1)[0]
        self.given: set[str] = set()
        self.verbatim: list[str] = []  # code blocks, kept out of whitespace clean-up until the end
        self._density: dict[object, bool] = {}
        self._simple: dict[object, bool] = {}

    # -- walking ----------------------------------------------------------------------------------

    def children(self, el, inline: bool) -> str:
        # Each text and tail read once: lxml builds the string again at each reading.
        text = el.text
        parts = [_collapse(text)] if text else []
        for child in el:
            parts.append(self.element(child, inline))
            tail = child.tail
            if tail:
                parts.append(_collapse(tail))
        return "".join(parts)

    def element(self, el, inline: bool) -> str:
        tag = _tag(el)
        if not tag or tag in _SKIPPED:
            return ""
        if tag in _HEADINGS:
            return self.heading(el, _HEADINGS[tag], inline)
        if tag == "a":
            return self.link(el)
        if tag == "img":
            return self.image(el)
        if tag == "br":
            return " " if inline else "\n"
        if tag in _EMPHASIS:
            prefix, suffix, inner = _chomp(self.children(el, True))
            mark = _EMPHASIS[tag]
            return f"{prefix}{mark}{inner}{mark}{suffix}" if inner else prefix or suffix
        if tag == "code":
            prefix, suffix, inner = _chomp(self.children(el, True))
            return f"{prefix}`{inner}`{suffix}" if inner else ""
        if inline:
            return self.children(el, True) + (" " if tag in _BLOCK_TAGS or tag in ("li", "td", "th") else "")
        if tag == "pre":
            return self.pre(el)
        if tag in ("ul", "ol"):
            return self.listing(el, ordered=tag == "ol")
        if tag == "li":  # an item outside a list
            return f"\n\n- {self.children(el, False).strip()}\n\n"
        if tag == "blockquote":
            inner = _tidy(self.children(el, False))
            return "\n\n" + "\n".join(f"> {line}".rstrip() for line in inner.split("\n")) + "\n\n" if inner else ""
        if tag == "table":
            return self.table(el)
        if tag in ("td", "th"):
            return self.children(el, False) + " "
        if tag == "hr":
            return "\n\n"
        if tag in _BLOCK_TAGS:
            return "\n\n" + self.children(el, False) + "\n\n"
        return self.children(el, False)

    # -- blocks -----------------------------------------------------------------------------------

    def heading(self, el, level: int, inline: bool) -> str:
        text = " ".join(self.children(el, True).split())
        if not text:
            return ""
        if inline:
            return f" {text} "
        if level <= 2 and self.headline and similar(self.headline, text):
            # The article's own headline: the output gives it as ``title`` already.
            self.headline = ""
            return ""
        return f"\n\n{_HEADING_MARK * level} {text}\n\n"

    def pre(self, el) -> str:
        text = el.text_content().strip("\n")
        if not text.strip():
            return ""
        fence = "`" * max(3, 1 + max(map(len, _BACKTICK_RUN.findall(text)), default=0))
        self.verbatim.append(f"{fence}{code_language(el)}\n{text}\n{fence}")
        return f"\n\n\x00{len(self.verbatim) - 1}\x00\n\n"

    def listing(self, el, ordered: bool) -> str:
        lines = []
        number = 1
        for item in el:
            if _tag(item) != "li":
                if _tag(item) in ("ul", "ol"):  # a list nested without its <li>
                    nested = self.listing(item, _tag(item) == "ol").strip()
                    lines.append(_INDENT * 2 + nested.replace("\n", "\n" + _INDENT * 2))
                continue
            text = _tidy(self.children(item, False)).replace("\n\n", "\n")
            if not text:
                continue
            marker = f"{number}. " if ordered else "- "
            number += 1
            lines.append(marker + text.replace("\n", "\n" + _INDENT * len(marker)))
        return "\n\n" + "\n".join(lines) + "\n\n" if lines else ""

    def table(self, el) -> str:
        rows = [row for row in el.iter("tr") if _owner_table(row) is el]
        if not rows:
            return "\n\n" + self.children(el, False) + "\n\n"
        grid = self.grid(rows) if self.simple_table(el, rows, spans=True) else None
        if grid is not None:
            lines = []
            for n, cells in enumerate(grid):
                lines.append("| " + " | ".join(cells) + " |")
                if n == 0:
                    lines.append("| " + " | ".join("---" for _ in cells) + " |")
            return "\n\n" + "\n".join(lines) + "\n\n"
        out = []
        for row in rows:
            cells = [_tidy(self.children(cell, False)) for cell in row if _tag(cell) in ("td", "th")]
            cells = [cell for cell in cells if cell]
            if any("\n" in cell for cell in cells):
                out.append("\n\n".join(cells))  # a layout grid: cells hold paragraphs
            elif cells:
                out.append(" · ".join(cells))
        return "\n\n" + "\n\n".join(out) + "\n\n"

    def simple_table(self, table, rows, spans: bool = False) -> bool:
        """A pipe table only when every row has the same cells of inline text, none merged; with ``spans``,
        merged cells are let through when the first row is a header of ``<th>`` cells (``grid`` then gives
        every row its cells, a merged one in each row it spans, or None)."""
        widths = set()
        if spans and (not len(rows[0]) or any(_tag(cell) not in ("th", "") for cell in rows[0])):
            spans = False
        for row in rows:
            cells = [cell for cell in row if _tag(cell) in ("td", "th")]
            widths.add(len(cells))
            for cell in cells:
                if not spans and any(cell.get(span, "1").strip() not in ("", "1") for span in ("colspan", "rowspan")):
                    return False
                if any(_tag(d) in _BLOCK_IN_CELL for d in cell.iterdescendants()):
                    return False
        return spans or (len(widths) == 1 and widths != {0})

    def grid(self, rows) -> list[list[str]] | None:
        """The rows' cells as pipe-table cells, a merged cell (``rowspan``, ``colspan``) given in each row and
        column it spans, its text without links after the first; None when the rows are then not all as wide."""
        grid: list[list[str]] = []
        below: dict[int, tuple[int, str]] = {}  # column: (rows still spanned, text)
        for row in rows:
            cells, column = [], 0
            for cell in (c for c in row if _tag(c) in ("td", "th")):
                while column in below:
                    column = self._spanned(below, column, cells)
                text = " ".join(self.children(cell, True).split()).replace("|", "\\|")
                plain = " ".join(cell.text_content().split()).replace("|", "\\|")
                down, across = (min(_span(cell, name), len(rows)) for name in ("rowspan", "colspan"))
                for n in range(across):
                    cells.append(text if n == 0 else plain)
                    if down > 1:
                        below[column] = (down - 1, plain)
                    column += 1
            while column in below:
                column = self._spanned(below, column, cells)
            grid.append(cells)
        return grid if grid and len({len(cells) for cells in grid}) == 1 and grid[0] else None

    @staticmethod
    def _spanned(below: dict, column: int, cells: list) -> int:
        """Give ``cells`` the text of the cell above that spans ``column``; the next column."""
        left, text = below.pop(column)
        cells.append(text)
        if left > 1:
            below[column] = (left - 1, text)
        return column + 1

    # -- inline -----------------------------------------------------------------------------------

    def link(self, el) -> str:
        text = self.children(el, True)
        href = (el.get("href") or "").strip()
        if not self._leads_elsewhere(href):
            return text
        prefix, suffix, inner = _chomp(text)
        if not inner:
            return prefix or suffix
        if href in self.given or self._in_link_dense_text(el):
            return text
        self.given.add(href)
        if inner == href:
            return f"{prefix}<{href}>{suffix}"
        return f"{prefix}[{inner}]({href.replace(' ', '%20').replace(')', '%29')}){suffix}"

    def _in_link_dense_text(self, el) -> bool:
        """Whether the link sits in a paragraph, item or cell of 20 words or more with a link every
        ``DENSE_LINK_WORDS`` words or fewer."""
        block = next((a for a in el.iterancestors() if _tag(a) in _DENSITY_BLOCKS), None)
        if block is None:
            return False
        if block not in self._density:
            words = len(block.text_content().split())
            links = sum(1 for a in block.iter("a") if self._leads_elsewhere((a.get("href") or "").strip()))
            self._density[block] = links >= DENSE_MIN_LINKS and links * DENSE_LINK_WORDS >= words
        return self._density[block]

    def _leads_elsewhere(self, href: str) -> bool:
        """False for a link that leads nowhere to fetch: ``javascript:``, or a jump within the page (a
        footnote, "back to top"), which cleaning made absolute."""
        if not href or _DEAD_LINK.match(href):
            return False
        return not ("#" in href and href.split("#", 1)[0] == self.page_url)

    def image(self, el) -> str:
        alt = " ".join((el.get("alt") or "").split())
        src = (el.get("src") or "").strip()
        if self.include_image_urls and src and not src.startswith("data:"):
            return f"![{alt}]({src.replace(' ', '%20').replace(')', '%29')})"
        # Without URLs an image is left out: its alt text is what a screen reader says in its place, not
        # text the page shows (its caption, which it shows, stays), and the main texts people mark by
        # hand leave it out too. Measured on the four data sets of bench/extract.py: alt texts cost F1
        # on every one.
        return ""


def _span(cell, name: str) -> int:
    """A cell's ``rowspan`` or ``colspan``: 1 when missing or not a positive number."""
    value = (cell.get(name) or "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 1


def _owner_table(row):
    return next((a for a in row.iterancestors() if _tag(a) == "table"), None)


def _chomp(text: str) -> tuple[str, str, str]:
    prefix = " " if text[:1] in (" ", "\n", "\t") else ""
    suffix = " " if text[-1:] in (" ", "\n", "\t") else ""
    return prefix, suffix, text.strip()


def _tidy(text: str) -> str:
    """Spaces collapsed within lines, lines trimmed, at most one blank line between blocks."""
    lines = text.split("\n")
    if "  " in text or "\t" in text:  # only the lines that have some: most of a text's spaces are single
        lines = [_MULTI_SPACE.sub(" ", line) if "  " in line or "\t" in line else line for line in lines]
    text = "\n".join([line.strip() for line in lines])
    return _BLANK_LINES.sub("\n\n", text).strip()


def element_markdown(
    element, *, include_image_urls: bool = False, title: str | None = None, page_url: str = ""
) -> str:
    """Markdown of an lxml element."""
    writer = _Writer(include_image_urls, title, page_url)
    text = _MARKUP_LIKE.sub(_escaped, "\n" + _tidy(writer.element(element, False)))[1:].replace(_HEADING_MARK, "#")
    # Code blocks come back as the page wrote them.
    text = _PLACEHOLDER.sub(lambda m: _code_block(writer.verbatim[int(m.group(1))], text, m.start()), text)
    return text.replace(_INDENT, " ")


def as_text(text: str) -> str:
    """``text`` (the page's words read elsewhere than from its HTML: a product's JSON-LD description) to stand
    in the Markdown: its lines that Markdown would read as a heading or a code fence escaped, as the writer
    escapes the page's text (``_MARKUP_LIKE``)."""
    return _MARKUP_LIKE.sub(_escaped, "\n" + text)[1:]


def _escaped(line) -> str:
    """A line break and the opening of the line after it, with a backslash before its markup-like text; an
    underline-like line under a blank one (a thematic break, which Markdown reads as no heading) as it is."""
    if line.group(2) is not None and line.string[line.start() - 1:line.start()] in ("", "\n"):
        return line.group(0)
    return line.group(0) + "\\"


#: Where the Markdown ends a line, a list item or a table cell: words on either side are apart, however the
#: page's markup joins them (``<h3>Title</h3><p>Line</p>`` is "Title Line", not "TitleLine").
_BREAKS = _BLOCK_TAGS | _HEADINGS.keys() | {"ul", "ol", "li", "table", "td", "th", "pre", "blockquote", "br"}


def spaced_text(element) -> str:
    """The element's text as its Markdown spaces its words (``text_content()`` joins a heading's last word to
    the next paragraph's first): a space around each block, none between inline elements, nothing of the
    elements the Markdown skips. Counted without writing the Markdown."""
    parts: list[str] = []

    def walk(el) -> None:
        tag = _tag(el)
        if tag and tag not in _SKIPPED:
            apart = tag in _BREAKS
            if apart:
                parts.append(" ")
            if el.text:
                parts.append(el.text)
            for child in el:
                walk(child)
                if child.tail:
                    parts.append(child.tail)
            if apart:
                parts.append(" ")

    walk(element)
    return "".join(parts)


def _code_block(block: str, text: str, start: int) -> str:
    """A code block put back at ``start`` of ``text``: within a list item (after its marker or indentation),
    each of its lines after the first indented as far, so that it stays in the item (CommonMark)."""
    prefix = text[text.rfind("\n", 0, start) + 1:start]
    if not prefix or not _LIST_PREFIX.fullmatch(prefix):
        return block
    return _LINE_START.sub(" " * len(prefix), block)


def to_markdown(
    html: str, *, include_image_urls: bool = False, title: str | None = None, page_url: str = ""
) -> str:
    """Markdown of an HTML fragment, with blank lines and spaces collapsed."""
    if not html.strip():
        return ""
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (etree.ParserError, ValueError):
        return ""
    return element_markdown(root, include_image_urls=include_image_urls, title=title, page_url=page_url)
