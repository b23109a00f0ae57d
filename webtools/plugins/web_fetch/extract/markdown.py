"""Markdown from HTML: markdownify, with compact links and images and code blocks that keep their language."""
from __future__ import annotations

import re

from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

from .page import similar

#: Prose with a link every this many words or fewer is "thick with links" (see _Markdown).
DENSE_LINK_WORDS = 20
DENSE_MIN_LINKS = 2
_BLOCKS = frozenset({"p", "li", "td", "dd", "blockquote", "figcaption"})
_IMAGES_ONLY = re.compile(r"(?:!\[[^\]]*\]\s*)+")

_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_DEAD_LINK = re.compile(r"^\s*(?:#|javascript:|mailto:$|data:)", re.IGNORECASE)
#: Cell content that makes a table a layout grid, not data: it becomes text rows, not a pipe table.
_BLOCK_IN_CELL = ("table", "p", "div", "ul", "ol", "dl", "pre", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6")
_LANGUAGE_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|brush:?)-?\s*([A-Za-z0-9_+#.-]+)")
_TABLE_TAGS = frozenset({"td", "th", "tr", "thead", "tbody", "tfoot", "table"})


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
            code_language_callback=code_language,
            **options,
        )
        self.include_image_urls = include_image_urls
        # An image whose alt text repeats the title says nothing; the headline is dropped once (below).
        self.skip_alt = (title or "").strip().lower()
        self.headline = title or ""
        self.page_url = page_url.split("#", 1)[0]
        self.given: set[str] = set()
        self._density: dict[int, bool] = {}
        self._simple: dict[int, bool] = {}

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
        if n <= 2 and self.headline and "_inline" not in parent_tags and similar(self.headline, text):
            # The article's own headline: the output gives it as ``title`` already.
            self.headline = ""
            return ""
        return super().convert_hN(n, el, text, parent_tags)

    # Tables: a pipe table when every row is cells of inline text; a layout grid or a table with merged
    # or nested cells is written as text rows instead (a pipe table of it would be unreadable).

    def _simple_table(self, el) -> bool:
        table = el if el.name == "table" else el.find_parent("table")
        if table is None:
            return True
        key = id(table)
        if key not in self._simple:
            cells = table.find_all(["td", "th"])
            self._simple[key] = bool(cells) and not any(
                cell.get("colspan", "1") not in ("", "1") or cell.get("rowspan", "1") not in ("", "1")
                or cell.find(_BLOCK_IN_CELL) is not None
                for cell in cells
            ) and len({len(row.find_all(["td", "th"], recursive=False)) for row in table.find_all("tr")}) == 1
        return self._simple[key]

    def convert_table(self, el, text, parent_tags):
        if self._simple_table(el):
            return super().convert_table(el, text, parent_tags)
        return "\n\n" + text.strip() + "\n\n"

    def convert_tr(self, el, text, parent_tags):
        if self._simple_table(el):
            return super().convert_tr(el, text, parent_tags)
        return "\n\n" + text.strip().removesuffix("·").strip() + "\n\n"

    def convert_td(self, el, text, parent_tags):
        if self._simple_table(el):
            return super().convert_td(el, text, parent_tags)
        text = text.strip()
        if not text:
            return ""
        # Inline cells of a row stay on one line; cells holding paragraphs stay paragraphs.
        return f"\n\n{text}\n\n" if "\n" in text else f"{text} · "

    convert_th = convert_td

    def convert_img(self, el, text, parent_tags):
        alt = " ".join((el.get("alt") or "").split())
        src = (el.get("src") or "").strip()
        if self.include_image_urls and src and not src.startswith("data:"):
            return f"![{alt}]({src.replace(' ', '%20').replace(')', '%29')})"
        if not alt or alt.lower() == self.skip_alt:
            return ""
        return f"![{alt}]"


def code_language(pre) -> str:
    """The language a code block declares: ``class="language-python"`` (and ``lang-``, ``brush:``,
    ``highlight-source-``) or ``data-lang`` on the ``<pre>`` or its ``<code>``, else none."""
    for el in (pre, pre.find("code")):
        if el is None:
            continue
        for attr in ("data-lang", "data-language"):
            value = (el.get(attr) or "").strip()
            if re.fullmatch(r"[A-Za-z0-9_+#.-]{1,30}", value):
                return value.lower()
        classes = el.get("class") or []
        match = _LANGUAGE_CLASS.search(" ".join(classes) if isinstance(classes, list) else classes)
        if match:
            return match.group(1).lower()
    return ""


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
