"""Bytes to text: the charset a server or a document declares, read as browsers read it."""
from __future__ import annotations

import codecs
import re

_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE,
)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""")

# What WHATWG's Encoding Standard reads for labels that Python maps to a different codec: browsers
# decode "iso-8859-1" and "ascii" pages as windows-1252, whose 0x80-0x9F are printable.
_ENCODING_ALIASES = {
    "iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252",
    "us-ascii": "cp1252", "ascii": "cp1252", "x-user-defined": "cp1252",
    "gb2312": "gb18030", "gbk": "gb18030", "x-sjis": "shift_jis", "shift-jis": "shift_jis",
}


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _ENCODING_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def sniff_charset(data: bytes, *, html: bool = True) -> str | None:
    """The encoding a document declares in itself: a byte order mark, else its ``<meta charset>`` (HTML)
    or its XML declaration, within the first 4 KiB."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    head = data[:4096]
    match = (_META_CHARSET if html else _XML_ENCODING).search(head)
    if match is None and html:
        match = _XML_ENCODING.search(head)
    return _codec(match.group(1).decode("ascii", "ignore")) if match else None


def _utf8(data: bytes) -> bool:
    """Whether ``data`` holds non-ASCII text that is valid UTF-8."""
    if data.isascii():
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decode(data: bytes, charset: str | None = None, *, html: bool = False) -> str:
    """``data`` as text: the charset from Content-Type, else (HTML, XML) the document's own declaration,
    else UTF-8. Undecodable bytes become U+FFFD; this never raises."""
    codec = _codec(charset)
    if codec is None:
        codec = sniff_charset(data, html=html) or "utf-8"
    if not codec.startswith("utf") and _utf8(data):
        # Text that decodes as UTF-8, with characters beyond ASCII, is UTF-8 whatever the page says: a
        # page re-encoded by a CMS or a proxy often keeps its old declaration, and other encodings' text
        # (GBK, Shift_JIS, windows-1252 with accents) almost never forms valid UTF-8 sequences.
        codec = "utf-8"
    if codec == "utf-8" and data.startswith(codecs.BOM_UTF8):
        codec = "utf-8-sig"
    try:
        return data.decode(codec, errors="replace")
    except LookupError:  # pragma: no cover - _codec only returns known codecs
        return data.decode("utf-8", errors="replace")
