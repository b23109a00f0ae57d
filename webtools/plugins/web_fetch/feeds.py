"""RSS and Atom feeds as Markdown: the feed's title, then each entry's title, link, date and summary."""
from __future__ import annotations

import re

from lxml import etree

from webtools.runtime.budget import Deadline

from .extract import to_markdown

_ATOM = "{http://www.w3.org/2005/Atom}"
_RSS1 = "{http://purl.org/rss/1.0/}"
#: Entries beyond this are left out: a feed is a list of pointers, and the model can fetch the entries.
MAX_ENTRIES = 100


#: A character reference, or one escaped once (``&amp;#xD800;``, which a summary's HTML turns into one).
_CHAR_REF = re.compile(r"&(?:amp;)?#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));")


def _xml_char(code: int) -> bool:
    """Whether XML 1.0 allows the character (its ``Char`` production)."""
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def _safe_references(text: str) -> str:
    """``text`` with character references to characters XML forbids (``&#xD800;``, ``&#0;``) replaced
    by U+FFFD. libxml2's recovering parser turns them into bytes that are not UTF-8, which lxml then
    fails to decode."""

    def replace(match: re.Match) -> str:
        code = int(match.group(1), 16) if match.group(1) else int(match.group(2))
        return match.group() if _xml_char(code) else "&#xFFFD;"

    return _CHAR_REF.sub(replace, text)


def _text(element, path: str, namespaces: dict | None = None) -> str:
    found = element.find(path, namespaces)
    if found is None:
        return ""
    return " ".join("".join(found.itertext()).split())


def _summary(raw: str, url: str) -> str:
    if "<" in raw:
        return to_markdown(raw, page_url=url)
    return " ".join(raw.split())


def feed_markdown(text: str, url: str, *, deadline: Deadline | None = None) -> tuple[str | None, str] | None:
    """``(title, markdown)`` of an RSS or Atom document; None when ``text`` is not a feed.

    ``deadline`` is checked for every entry; only the first ``MAX_ENTRIES`` entries are read, the rest
    counted.
    """
    deadline = deadline or Deadline.never()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True, huge_tree=False)
    try:
        root = etree.fromstring(_safe_references(text).encode("utf-8", "replace"), parser)
    except (etree.XMLSyntaxError, ValueError):
        return None
    if root is None:
        return None
    deadline.check()
    entries = []
    skipped = 0
    if root.tag == f"{_ATOM}feed":
        title = _text(root, f"{_ATOM}title")
        for entry in root.iter(f"{_ATOM}entry"):
            if len(entries) == MAX_ENTRIES:
                skipped += 1
                continue
            deadline.check()
            link = ""
            for candidate in entry.findall(f"{_ATOM}link"):
                if candidate.get("rel", "alternate") == "alternate":
                    link = candidate.get("href", "")
                    break
            body = entry.find(f"{_ATOM}summary")
            if body is None:
                body = entry.find(f"{_ATOM}content")
            raw = "".join(body.itertext()) if body is not None else ""
            date = _text(entry, f"{_ATOM}updated") or _text(entry, f"{_ATOM}published")
            entries.append((_text(entry, f"{_ATOM}title"), link, date, raw))
    elif root.tag in ("rss", f"{_RSS1}RDF", "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}RDF"):
        channel = root.find("channel")
        if channel is None:
            channel = root.find(f"{_RSS1}channel")
        title = _text(channel, "title") if channel is not None else ""
        if not title and channel is not None:
            title = _text(channel, f"{_RSS1}title")
        items = list(root.iter("item")) or list(root.iter(f"{_RSS1}item"))
        skipped = max(0, len(items) - MAX_ENTRIES)
        for item in items[:MAX_ENTRIES]:
            deadline.check()

            def get(name: str) -> str:
                return _text(item, name) or _text(item, _RSS1 + name)

            desc = item.find("description")
            raw = "".join(desc.itertext()) if desc is not None else get("description")
            entries.append((get("title"), get("link"), _text(item, "pubDate"), raw))
    else:
        return None
    lines = [f"# {title}" if title else ""]
    for entry_title, link, date, raw in entries:
        deadline.check()
        heading = f"[{entry_title or link}]({link})" if link else (entry_title or "(untitled)")
        lines.append(f"## {heading}")
        if date:
            lines.append(date)
        summary = _summary(raw, url) if raw.strip() else ""
        if summary:
            lines.append(summary)
    if skipped:
        lines.append(f"({skipped} more entries not shown.)")
    return title or None, "\n\n".join(line for line in lines if line).strip()
