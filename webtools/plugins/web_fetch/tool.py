"""The ``web_fetch`` tool: download a page or a file the model chose and return its text in parts."""
from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from webtools.net import (
    URL,
    AddressNotAllowed,
    BodyTooLarge,
    Cancelled,
    InvalidURL,
    NetError,
    TooManyRedirects,
    read_url,
)
from webtools.runtime import IngestInput, ToolCancelled, ToolContext, ToolError, domains

from . import robots
from .extract import decode, extract
from .tokens import characters_within

logger = logging.getLogger("webtools.web_fetch")

DESCRIPTION = (
    "Fetch a web page or document, such as a PDF, and return its main text. Long pages come in parts; "
    "call again with nextOffset for the next part."
)


def input_schema(max_content_tokens: int) -> dict:
    """The tool's input schema, telling the model the operator's cap on a part's tokens."""
    return {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The http or https URL to fetch."},
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "Character position to start from: the nextOffset of the previous part.",
            },
            "max_content_tokens": {
                "type": "integer",
                "minimum": 1,
                "description": f"The most tokens of text to return in this part, at most {max_content_tokens}; "
                "the rest comes with nextOffset.",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    }


HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml"})
XML_TYPES = frozenset({"text/xml", "application/xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown", "text/csv", "application/json"})
ACCEPT = (
    "text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.9,text/plain;q=0.8,application/json;q=0.8,"
    "application/xml;q=0.7,application/pdf;q=0.7,*/*;q=0.5"
)
ROBOTS_TIMEOUT = 10.0
NOT_FROM_CONVERSATION = "Fetch only URLs from the conversation or from search results."


@dataclass(frozen=True)
class FetchOptions:
    allow_domains: tuple[str, ...] = ()
    deny_domains: tuple[str, ...] = ()
    max_characters: int = 20_000
    max_bytes: int = 5_000_000
    max_file_bytes: int = 20_000_000
    timeout_seconds: float = 20
    respect_robots_txt: bool = True
    include_image_urls: bool = False
    only_conversation_urls: bool = True
    max_content_tokens: int = 5_000

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> FetchOptions:
        defaults = cls()
        return cls(**{
            name: tuple(value) if isinstance(value, (list, tuple)) else value
            for name in cls.__dataclass_fields__
            if (value := options.get(name, getattr(defaults, name))) is not None
        })


@dataclass(frozen=True)
class Page:
    """The extracted text of one URL, as the turn cache keeps it."""

    url: str
    title: str | None
    text: str


def page_kind(mime: str) -> str | None:
    """``html``, ``feed``, ``xml`` or ``text`` for a page type; None for a file type."""
    if mime in HTML_TYPES:
        return "html"
    if mime in FEED_TYPES:
        return "feed"
    if mime in XML_TYPES or mime.endswith("+xml"):
        return "xml"
    if mime in TEXT_TYPES or mime.endswith("+json"):
        return "text"
    return None


def split_part(text: str, offset: int, limit: int) -> str:
    """The part of ``text`` from ``offset``: ``limit`` characters, ending after the last line break in
    its second half when there is one, so a part rarely stops mid-paragraph."""
    part = text[offset:offset + limit]
    if offset + limit >= len(text):
        return part
    cut = part.rfind("\n", limit // 2)
    return part[: cut + 1] if cut != -1 else part


class WebFetch:
    """The handler: ``WebFetch(options)(input, ctx)``."""

    def __init__(self, options: FetchOptions):
        self.options = options

    def __call__(self, input: dict, ctx: ToolContext) -> dict:
        offset = int(input.get("offset") or 0)
        try:
            # The one reading of the URL: the cache key, the domain lists, robots.txt and the
            # connection all use it (webtools.net.urls).
            url = read_url(str(input.get("url", "")))
        except InvalidURL as err:
            raise ToolError(str(err)) from err
        seen = ctx.conversation_urls
        if self.options.only_conversation_urls and seen is not None and str(url) not in seen:
            # The model may have composed this URL, with conversation data in it, because a page told
            # it to (docs/security.md): only URLs someone else wrote are fetched.
            ctx.audit(host=url.host, refused="provenance")
            raise ToolError(NOT_FROM_CONVERSATION)
        cache_key = ("page", str(url))
        page = ctx.turn_cache.get(cache_key)
        ctx.audit(host=url.host, cached=page is not None)
        if page is None:
            page = self.download(url, ctx)
            ctx.turn_cache[cache_key] = page
        total = len(page.text)
        if offset > 0 and offset >= total:
            raise ToolError(
                f"The offset {offset} is past the end of the text, which has {total} characters "
                f"(totalCharacters: {total})."
            )
        # The model may ask for a smaller part than the operator's cap, never a larger one.
        tokens = min(int(input.get("max_content_tokens") or self.options.max_content_tokens),
                     self.options.max_content_tokens)
        limit = characters_within(page.text, offset, tokens, self.options.max_characters)
        part = split_part(page.text, offset, limit)
        output: dict[str, Any] = {"url": page.url}
        if page.title:
            output["title"] = page.title
        output["content"] = part
        output["offset"] = offset
        if offset + len(part) < total:
            output["nextOffset"] = offset + len(part)
        output["totalCharacters"] = total
        ctx.cite(page.url, page.title)
        return output

    # -- download -----------------------------------------------------------------------------------

    def download(self, url: URL, ctx: ToolContext) -> Page:
        options = self.options
        headers = {"User-Agent": ctx.user_agent, "Accept": ACCEPT}
        try:
            with ctx.fetch.follow(
                "GET", url, max_redirects=5, check_hop=lambda hop: self.check_hop(hop, ctx),
                headers=headers, timeout=options.timeout_seconds, cancel=ctx.signal,
            ) as response:
                final = response.url
                ctx.audit(
                    host=response.canonical.host, status=response.status_code, content_type=response.content_type
                )
                if response.status_code >= 300:
                    raise ToolError(f"Fetching {final} failed (HTTP {response.status_code}).")
                mime = response.content_type
                kind = page_kind(mime) if mime else "sniff"
                if kind is None:
                    return self._file(response, final, mime, ctx)
                data = response.read(options.max_bytes, on_too_large="truncate")
                return self._page(data, kind, response.charset, final)
        except ToolError:
            raise
        except Cancelled as err:
            raise ToolCancelled() from err
        except AddressNotAllowed as err:
            raise ToolError(str(err)) from err
        except BodyTooLarge as err:
            raise ToolError(
                f"{err} The file is too large for this tool (the limit is {options.max_file_bytes} bytes)."
            ) from err
        except NetError as err:
            raise ToolError(str(err)) from err  # the guarded client's messages are written for the model

    def check_hop(self, url: URL, ctx: ToolContext) -> None:
        """Every hop, before connecting, on the URL the client will connect to: the operator's domain
        lists, then the site's robots.txt."""
        why = domains.refusal(url.host, self.options.allow_domains, self.options.deny_domains)
        if why:
            raise ToolError(f"The address {url} is not allowed: {why}.")
        if self.options.respect_robots_txt and not self.robots_allow(url, ctx):
            raise ToolError(f"The robots.txt of {url.origin} does not allow fetching {url}.")

    def robots_allow(self, url: URL, ctx: ToolContext) -> bool:
        key = ("robots", url.origin)
        rules = ctx.turn_cache.get(key)
        if rules is None:
            rules = self._robots_rules(url, ctx)
            ctx.turn_cache[key] = rules
        return rules.allows(str(url))  # the canonical target is what the server will be asked for

    def _robots_rules(self, url: URL, ctx: ToolContext) -> robots.RobotsRules:
        token = robots.product_token(ctx.user_agent)
        try:
            with ctx.fetch.follow(
                "GET", robots.robots_url(url), max_redirects=5, headers={"User-Agent": ctx.user_agent},
                timeout=min(ROBOTS_TIMEOUT, self.options.timeout_seconds), cancel=ctx.signal,
            ) as response:
                status = response.status_code
                if 400 <= status < 500:
                    return robots.ALLOW_ALL  # RFC 9309 2.3.1.3: "unavailable", crawl freely
                if status >= 300:
                    return robots.DISALLOW_ALL  # 2.3.1.4: "unreachable", 5xx included
                data = response.read(robots.MAX_ROBOTS_BYTES, on_too_large="truncate")
        except Cancelled as err:
            raise ToolCancelled() from err
        except TooManyRedirects:
            return robots.ALLOW_ALL  # 2.3.1.2: past five redirects robots.txt may count as unavailable
        except AddressNotAllowed as err:
            if err.url and read_url(err.url).origin == url.origin:
                # The site itself is private: say so, not that its robots.txt could not be read.
                raise ToolError(str(err.for_url(url))) from err
            return robots.DISALLOW_ALL  # its robots.txt redirects somewhere private: unreachable
        except NetError:
            return robots.DISALLOW_ALL
        return robots.RobotsRules.parse(decode(data, response.charset), token)

    # -- content ------------------------------------------------------------------------------------

    def _page(self, data: bytes, kind: str, charset: str | None, url: str) -> Page:
        if kind == "sniff":
            kind = _sniff(data)
        if kind == "html":
            title, text = extract(decode(data, charset, html=True), url,
                                  include_image_urls=self.options.include_image_urls)
            return Page(url, title, text)
        text = decode(data, charset, html=kind in ("xml", "feed"))
        if kind in ("xml", "feed"):
            from .feeds import feed_markdown

            feed = feed_markdown(text, url)
            if feed is not None:
                return Page(url, feed[0], feed[1])
        return Page(url, None, text.strip())

    def _file(self, response, url: str, mime: str, ctx: ToolContext) -> Page:
        if not ctx.ingesters.accepts(mime):
            raise ToolError(f"{url} is a {mime} file, which this tool cannot read.")
        data = response.read(self.options.max_file_bytes, on_too_large="error")
        name = posixpath.basename(unquote(response.canonical.path)) or None
        text = ctx.ingesters.ingest(IngestInput(data, mime, name or ""))
        return Page(url, name, (text or "").strip())


def _sniff(data: bytes) -> str:
    """A page sent without a Content-Type: HTML when it starts like HTML, else text."""
    head = data[:512].lstrip().lower()
    if re.match(rb"(?:\xef\xbb\xbf)?<(?:!doctype html|html|head|body|\?xml)", head):
        return "html"
    if b"\x00" in data[:1024]:
        raise ToolError("The server sent no content type, and the body is not text.")
    return "text"
