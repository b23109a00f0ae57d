"""DuckDuckGo's HTML page, scraped: best effort, and rate limited when many users share one address.

The page has served result links both directly and wrapped as ``//duckduckgo.com/l/?uddg=<url>``, and
its ads link through ``duckduckgo.com/y.js``. A page without the results container is a block (a
CAPTCHA or "anomaly" page), never an empty result. A dated result carries its date as an unclassed
``<span>`` after the displayed URL (``&nbsp; &nbsp; 2026-02-06T16:34:00.0000000``), read as ``published``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import lxml.html
from lxml import etree

from webtools.net import InvalidURL, read_url

from .base import BLOCKED, FRESHNESS, SAFE_SEARCH, Engine, EngineBlocked, Request, Search, SearchResult

_DF = {"day": "d", "week": "w", "month": "m", "year": "y"}
_KP = {"strict": "1", "moderate": "-1", "off": "-2"}


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


_RESULTS_CONTAINER = f"//*[@id='links' or {_has_class('results')}]"
_RESULT = f".//div[{_has_class('result')}]"
_TITLE = f".//a[{_has_class('result__a')}]"
_SNIPPET = f".//*[{_has_class('result__snippet')}]"
_DATE = f".//*[{_has_class('result__extras__url')}]/span[not(@class)]"


_BASE = read_url("https://duckduckgo.com/")


class DuckDuckGoEngine(Engine):
    id = "duckduckgo"
    name = "DuckDuckGo"
    endpoint = "https://html.duckduckgo.com/html/"
    pricing = "Free and without a key, but best effort: DuckDuckGo rate-limits and blocks automated searches."
    operators = ("site:example.com", '"exact phrase"', "-term", "filetype:pdf")
    supports = frozenset({FRESHNESS, SAFE_SEARCH})
    max_count = 20

    @property
    def blocked(self) -> str:
        return (
            f"{self.name} blocked the search (it limits automated searches from one server). "
            "Try again later, or ask the operator to configure another engine."
        )

    def request(self, search: Search) -> Request:
        data: dict[str, Any] = {"q": search.query, "kp": _KP[search.safe_search]}
        if search.freshness:
            data["df"] = _DF[search.freshness]
        return Request("POST", search.endpoint, headers={"Accept": "text/html"}, data=data)

    def parse(self, body: str) -> list[SearchResult]:
        try:
            root = lxml.html.fromstring(body)
        except (etree.ParserError, ValueError) as err:
            raise EngineBlocked(self.blocked) from err
        containers = root.xpath(_RESULTS_CONTAINER)
        if not containers:
            raise EngineBlocked(self.blocked)
        results = []
        for node in containers[0].xpath(_RESULT):
            classes = (node.get("class") or "").split()
            if "result--ad" in classes or "result--no-result" in classes:
                continue
            links = node.xpath(_TITLE)
            if not links:
                continue
            url = self._unwrap(links[0].get("href") or "")
            if url is None:
                continue
            snippets = node.xpath(_SNIPPET)
            snippet = snippets[0].text_content() if snippets else ""
            dates = [span.text_content().strip() for span in node.xpath(_DATE)]
            results.append(SearchResult(links[0].text_content(), url, snippet, next(filter(None, dates), None)))
        return results

    def describe_error(self, status: int, body: str) -> str | None:
        return self.blocked

    def error_kind(self, status: int, body: str) -> str | None:
        return BLOCKED  # every error status is a block of this server's address

    @staticmethod
    def _unwrap(href: str) -> str | None:
        """The target of a result link (its canonical form, ``read_url``); None for an ad. A link that
        cannot be read is kept as it is: the shared cleaning drops it."""
        try:
            url = read_url(href, base=_BASE)
        except InvalidURL:
            return href.strip()
        if url.host == "duckduckgo.com" or url.host.endswith(".duckduckgo.com"):
            if url.path == "/y.js":
                return None
            if url.path == "/l/":
                target = parse_qs(url.target.partition("?")[2]).get("uddg")
                return target[0] if target else None
        return str(url)
