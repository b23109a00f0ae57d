"""Hostile documents of issue 9, made in the test: a page that is one huge table, a feed whose entries
each carry such a table. (The PDF whose pages share one huge content stream is in ``tests.pdfs``.)"""
from __future__ import annotations

import html

ROW = "<tr><td>Cell alpha</td><td>12345</td><td><a href='/x'>link</a></td><td>Some longer text here</td></tr>\n"


def table_page(size: int) -> str:
    """An HTML page that is one big table, about ``size`` bytes long: issue 9's 4.5 MB one took 15 s."""
    rows = ROW * (size // len(ROW))
    return f"<html><head><title>Big table</title></head><body><table>{rows}</table></body></html>"


def table_feed(entries: int = 60, entry_size: int = 40_000) -> str:
    """An RSS feed whose every entry's description is an escaped ``entry_size``-byte table."""
    summary = html.escape(table_page(entry_size))
    items = "".join(
        f"<item><title>Entry {n}</title><link>http://feed.test/{n}</link><description>{summary}</description></item>"
        for n in range(entries)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>Huge</title>{items}</channel></rss>'
