"""The ``web_fetch`` tool: download a page or a file the model chose and return its text in parts."""
from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from webtools.net import (
    URL, AddressNotAllowed, BodyTooLarge, Cancelled, FetchTimeout, InvalidURL, NetError, Response, displayed_urls,
    read_url,
)
from webtools.exceptions import (
    INVALID_TOOL_INPUT,
    UNSUPPORTED_CONTENT_TYPE,
    URL_NOT_ACCESSIBLE,
    URL_NOT_ALLOWED,
)
from webtools.runtime import (
    Deadline, IngestInput, ToolCancelled, ToolContext, ToolError, UnseenURL, domains, limits, workers,
)
from webtools.runtime.cache import cache_key as shared_key

from . import agents, blocks, botauth, robots
from .extract import decode, extract
from .feeds import feed_markdown
from .focus import focus
from .tokens import characters_within

logger = logging.getLogger("webtools.web_fetch")

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml"})
XML_TYPES = frozenset({"text/xml", "application/xml"})
TEXT_TYPES = frozenset({"text/plain", "text/csv", "application/json"})
#: Markdown first: a site that keeps its pages in Markdown for agents (Cloudflare's "Markdown for
#: Agents", docs sites) answers with the text itself, and no extraction is needed.
ACCEPT = (
    "text/markdown,text/html;q=0.9,application/xhtml+xml;q=0.9,text/plain;q=0.8,application/json;q=0.8,"
    "application/xml;q=0.7,application/pdf;q=0.7,*/*;q=0.5"
)
#: The ``engine`` of the usage rows that count answers asking to be paid (HTTP 402).
PAY_PER_CRAWL = "pay-per-crawl (HTTP 402)"
NOT_FROM_CONVERSATION = "Fetch only URLs from the conversation or from search results."
#: Without ``max_document_characters``, a document keeps at most this many parts of text.
DOCUMENT_PARTS = 10
MAX_USES = "The fetch limit for this answer is reached. Answer with the pages you have."


@dataclass(frozen=True)
class FetchOptions:
    allow_domains: tuple[str, ...] = ()
    deny_domains: tuple[str, ...] = ()
    max_characters: int = 20_000
    max_bytes: int = 5_000_000
    max_file_bytes: int = 20_000_000
    timeout_seconds: float = 20
    respect_robots_txt: bool = True
    respect_content_signals: bool = True
    include_image_urls: bool = False
    only_conversation_urls: bool = True
    max_content_tokens: int = 5_000
    max_pdf_pages: int = 50
    #: Characters kept from any document before it is cut into parts; None: ``DOCUMENT_PARTS`` parts.
    max_document_characters: int | None = None
    max_html_bytes: int = 3_000_000

    @property
    def document_characters(self) -> int:
        return self.max_document_characters or DOCUMENT_PARTS * self.max_characters
    render_javascript: str = "never"
    #: ``chromium`` (the browser on this server) or a service id of ``services.SERVICES``.
    render_with: str = "chromium"
    #: The chosen service's key; never in a repr, a log or an error.
    render_api_key: str = dataclasses.field(default="", repr=False)
    render_isolation: str = "netns"
    render_max_concurrent: int = 2
    render_memory_mb: int = 1024
    user_fetches_per_minute: int = 30
    user_concurrent_fetches: int = 4
    cache_ttl_seconds: int = 0
    #: Web Bot Auth: the operator's Ed25519 key (never in a repr, a log or an error) and Signature-Agent.
    bot_auth_key: str = dataclasses.field(default="", repr=False)
    bot_auth_agent: str = ""

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> FetchOptions:
        defaults = cls()
        return cls(**{
            name: tuple(value) if isinstance(value, (list, tuple)) else value
            for name in cls.__dataclass_fields__
            if (value := options.get(name, getattr(defaults, name))) is not None
        })


class PaymentRequired(ToolError):
    """The site answered 402 Payment Required: counted apart in the usage table."""

    code = URL_NOT_ACCESSIBLE


class Walled(Exception):
    """A bot wall answered instead of the page (``blocks.blocked_by`` names it)."""

    def __init__(self, wall: str):
        super().__init__(wall)
        self.wall = wall


@dataclass(frozen=True)
class Page:
    """The extracted text of one URL, as the turn cache keeps it."""

    url: str
    title: str | None
    text: str
    rendered: bool = False
    #: What an HTML page states about itself (see ``extract.Extraction``), each None when it does not.
    published: str | None = None
    author: str | None = None
    language: str | None = None
    #: The kind of an HTML page (``extract.pagetype.TYPES``: "article", "forum", "product", ...).
    type: str | None = None
    #: When it was downloaded (UTC, ISO 8601): a page from the shared cache keeps its first download's time.
    retrieved_at: str | None = None


def page_kind(mime: str) -> str | None:
    """``html``, ``markdown``, ``feed``, ``xml`` or ``text`` for a page type; None for a file type."""
    if mime in HTML_TYPES:
        return "html"
    if mime in agents.MARKDOWN_TYPES:
        return "markdown"
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
        self.sign = botauth.signer(options.bot_auth_key, options.bot_auth_agent)

    def __call__(self, input: dict, ctx: ToolContext) -> dict:
        # One deadline for the whole call: waiting for a slot, every hop and its robots.txt, the
        # rendering and the reading each take what is left of it.
        deadline = Deadline(self.options.timeout_seconds, ctx.signal)
        offset = int(input.get("offset") or 0)
        try:
            # The one reading of the URL: the cache key, the domain lists, robots.txt and the
            # connection all use it (webtools.net.urls).
            url = read_url(str(input.get("url", "")))
        except InvalidURL as err:
            raise ToolError(str(err), err.code) from err
        seen = ctx.conversation_urls
        if self.options.only_conversation_urls and seen is not None and str(url) not in seen:
            # The model may have composed this URL, with conversation data in it, because a page told
            # it to (docs/security.md): only URLs someone else wrote are fetched.
            ctx.audit(host=url.host, refused="provenance")
            raise UnseenURL(NOT_FROM_CONVERSATION, str(url))
        cache_key = ("page", str(url))
        page = ctx.turn_cache.get(cache_key)
        ctx.audit(host=url.host, cached=page is not None)
        if page is None:
            page = self.shared_or_download(url, ctx, deadline, fresh=input.get("use_cache") is False)
            ctx.turn_cache[cache_key] = page
        total = len(page.text)
        if offset > 0 and offset >= total:
            raise ToolError(
                f"The offset {offset} is past the end of the text, which has {total} characters "
                f"(totalCharacters: {total}).", INVALID_TOOL_INPUT,
            )
        # The model may ask for a smaller part than the operator's cap, never a larger one.
        tokens = min(int(input.get("max_content_tokens") or self.options.max_content_tokens),
                     self.options.max_content_tokens)
        output: dict[str, Any] = {"url": page.url}
        if page.title:
            output["title"] = page.title
        for key in ("type", "published", "author", "language"):
            if getattr(page, key):
                output[key] = getattr(page, key)
        output.update(self.part(page, offset, tokens, str(input.get("query") or "").strip()))
        output["totalCharacters"] = total
        if page.retrieved_at:
            output["retrieved_at"] = page.retrieved_at
        if self.options.render_javascript != "never":
            output["rendered"] = page.rendered
        ctx.cite(page.url, page.title)
        return output

    def part(self, page: Page, offset: int, tokens: int, query: str = "") -> dict[str, Any]:
        """The part of the page's text to return: ``content``, ``offset`` and ``nextOffset`` when read in
        order; with a query, on the first part of a page longer than a part, the passages that answer it
        (``focus``), with the ``ranges`` of the text they hold instead of ``nextOffset``."""
        text = page.text
        limit = characters_within(text, offset, tokens, self.options.max_characters)
        if query and offset == 0 and limit < len(text):
            focused = focus(text, query, tokens=tokens, max_characters=self.options.max_characters,
                            language=page.language)
            if focused is not None:
                return {"content": focused.content, "offset": offset,
                        "ranges": [list(span) for span in focused.ranges]}
        part = split_part(text, offset, limit)
        output: dict[str, Any] = {"content": part, "offset": offset}
        if offset + len(part) < len(text):
            output["nextOffset"] = offset + len(part)
        return output

    # -- download -----------------------------------------------------------------------------------

    def shared_or_download(self, url: URL, ctx: ToolContext, deadline: Deadline | None = None, *,
                           fresh: bool = False) -> Page:
        """The page from the shared cache (unless ``fresh``: the model asked for ``use_cache: false``), or
        downloaded within the user's limits (and then shared)."""
        options = self.options
        deadline = deadline or Deadline(options.timeout_seconds, ctx.signal)
        key = None
        if options.cache_ttl_seconds and ctx.shared_cache is not None:
            # Every option that changes which URLs may be read, or the text read from them.
            key = shared_key(
                "web_fetch", str(url), options.allow_domains, options.deny_domains, options.respect_robots_txt,
                options.include_image_urls, options.max_bytes, options.max_file_bytes, options.max_pdf_pages,
                options.document_characters, options.max_html_bytes, options.render_javascript,
                options.render_with, ctx.user_agent, options.respect_content_signals,
            )
            hit = None if fresh else ctx.shared_cache.get(key)
            if hit is not None:
                ctx.audit(shared_cache=True)
                return Page(*hit)
        user = ctx.user or "anonymous"
        per_minute = options.user_fetches_per_minute
        limits.take(
            ctx.limits, limits.Counter(limits.MINUTE, f"web_fetch:user:{user}"), per_minute,
            f"Fetches are limited to {per_minute} a minute for each user; wait a minute, then fetch again.",
        )
        at_once = options.user_concurrent_fetches
        with limits.slot(
            ctx.limits, limits.Counter(limits.CONCURRENT, f"web_fetch:user:{user}", ttl=options.timeout_seconds + 60),
            at_once, f"You have {at_once} fetches running, the most at once; fetch again when one has finished.",
            wait=min(limits.QUEUE_SECONDS, deadline.remaining() - 1), signal=ctx.signal,
        ):
            engine = ""
            try:
                page = self.download(url, ctx, deadline)
                page = dataclasses.replace(page, retrieved_at=dt.datetime.now(dt.timezone.utc).isoformat(
                    timespec="seconds"))
            except PaymentRequired:
                engine = PAY_PER_CRAWL
                raise
            finally:
                ctx.limits.record(limits.Usage(ctx.user, "web_fetch", engine))
        if key is not None:
            ctx.shared_cache.set(key, list(dataclasses.astuple(page)), options.cache_ttl_seconds)
        return page

    def download(self, url: URL, ctx: ToolContext, deadline: Deadline | None = None) -> Page:
        options = self.options
        # One budget for the whole call: what the download leaves of it is the reading's.
        deadline = deadline or Deadline(options.timeout_seconds, ctx.signal)
        headers = {"User-Agent": ctx.user_agent, "Accept": ACCEPT}
        try:
            with ctx.fetch.follow(
                "GET", url, max_redirects=5, check_hop=lambda hop: self.check_hop(hop, ctx, deadline),
                headers=headers, timeout=robots.time_left(deadline, options.timeout_seconds), cancel=ctx.signal,
                sign=self.sign,
            ) as response:
                final, status, answer = response.url, response.status_code, response.headers
                ctx.audit(host=response.canonical.host, status=status, content_type=response.content_type)
                self.check_answer(response, ctx)
                mime = response.content_type
                kind = page_kind(mime) if mime else "sniff"
                if kind is None:
                    if not ctx.ingesters.accepts(mime):
                        raise ToolError(f"{final} is a {mime} file, which this tool cannot read.",
                                        UNSUPPORTED_CONTENT_TYPE)
                    data = response.read(options.max_file_bytes, on_too_large="error")
                    name = posixpath.basename(unquote(response.canonical.path)) or None
                else:
                    data = response.read(options.max_bytes, on_too_large="truncate")
                charset = response.charset
                alternate = agents.markdown_alternate(data, response.canonical) if kind in ("html", "sniff") else None
        except Walled as walled:
            return self._past_the_wall(final, walled.wall, ctx, deadline)
        except ToolError:
            raise
        except Cancelled as err:
            raise ToolCancelled() from err
        except AddressNotAllowed as err:
            raise ToolError(str(err), err.code) from err
        except BodyTooLarge as err:
            raise ToolError(
                f"{err} The file is too large for this tool (the limit is {options.max_file_bytes} bytes).", err.code
            ) from err
        except FetchTimeout as err:
            # The client counted down what was left of the call; the model is told the call's timeout.
            what = str(err).partition(" did not finish within ")[0]
            raise ToolError(f"{what} did not finish within {options.timeout_seconds:g} seconds.", err.code) from err
        except NetError as err:
            raise ToolError(str(err), err.code) from err  # the guarded client's messages are written for the model
        # Read with the connection closed: reading runs in a worker under what is left of the deadline.
        if kind is None:
            return self._file(data, final, name, mime, ctx, deadline)
        if alternate is not None and (page := self._markdown_alternate(alternate, final, ctx, deadline)):
            return page
        page = self._page(data, kind, charset, final, deadline)
        is_html = kind == "html" or (kind == "sniff" and _sniff(data) == "html")
        if is_html and (wall := blocks.blocked_by(status, answer, data, len(page.text))):
            return self._past_the_wall(final, wall, ctx, deadline)
        if options.render_javascript != "never" and is_html:
            page = self._render(page, decode(data, charset, html=True), ctx, deadline)
        return page

    def check_answer(self, response: Response, ctx: ToolContext) -> None:
        """Before the body is read: a 402 (never paid, never retried), a bot wall (``Walled``), another
        failure, or an answer whose own content signal asks not to be used in AI answers."""
        status, answer = response.status_code, response.headers
        if status == 402:
            price = robots.crawler_price(answer)
            ctx.audit(crawler_price=price)
            raise PaymentRequired(robots.payment_required(response.url, price))
        if status >= 300 or answer.get("cf-mitigated"):
            # Only a refusal's body is looked at: an error page's may be slow, and it says nothing.
            body = response.read(blocks.HEAD_BYTES, on_too_large="truncate") if status in blocks.REFUSALS else b""
            wall = blocks.blocked_by(status, answer, body)
            if wall is not None:
                raise Walled(wall)
            if status >= 300:
                raise ToolError(f"Fetching {response.url} failed (HTTP {status}).", URL_NOT_ACCESSIBLE)
        if self.options.respect_content_signals and (against := robots.header_signal_against(answer)):
            raise ToolError(robots.signal_refusal(response.canonical, *against, "answer"), URL_NOT_ALLOWED)

    def _past_the_wall(self, url: str, wall: str, ctx: ToolContext, deadline: Deadline) -> Page:
        """A bot wall answered instead of the page: the page rendered once, when the options render
        pages, if the browser (or the service) is let through; else an error naming the wall."""
        ctx.audit(blocked=wall)
        if self.options.render_javascript != "never":
            page = self._render(Page(url, None, ""), "", ctx, deadline, wall=wall)
            if page.rendered:
                return page
        raise ToolError(blocks.message(url, wall), URL_NOT_ACCESSIBLE)

    def _markdown_alternate(self, alternate: URL, url: str, ctx: ToolContext, deadline: Deadline) -> Page | None:
        """The page read from the Markdown alternate it links, through the same checks as any hop; None
        when that cannot be read, and the HTML is read instead."""
        try:
            with ctx.fetch.follow(
                "GET", alternate, max_redirects=5, check_hop=lambda hop: self.check_hop(hop, ctx, deadline),
                headers={"User-Agent": ctx.user_agent, "Accept": agents.MARKDOWN_ACCEPT},
                timeout=robots.time_left(deadline, self.options.timeout_seconds), cancel=ctx.signal,
                sign=self.sign,
            ) as response:
                if response.status_code >= 300 or response.content_type not in agents.MARKDOWN_TYPES | {"text/plain"}:
                    return None
                data = response.read(self.options.max_bytes, on_too_large="truncate")
                charset = response.charset
        except Cancelled as err:
            raise ToolCancelled() from err
        except (ToolError, NetError) as err:
            logger.info("web_fetch read %s instead of its Markdown alternate: %s", url, err)
            return None
        ctx.audit(markdown_alternate=True)
        title, text = agents.read_markdown(decode(data, charset))
        return self._kept(url, title, text)

    def check_hop(self, url: URL, ctx: ToolContext, deadline: Deadline | None = None) -> None:
        """Every hop, before connecting, on the URL the client will connect to: the operator's domain
        lists, then the site's robots.txt (read within what is left of ``deadline``)."""
        why = domains.refusal(url.host, self.options.allow_domains, self.options.deny_domains)
        if why:
            raise ToolError(f"The address {url} is not allowed: {why}.", URL_NOT_ALLOWED)
        if self.options.respect_robots_txt:
            rules = self.robots(url, ctx, deadline)
            if not rules.allows(str(url)):  # the canonical target: what the server will be asked for
                # A site that cannot be reached is not accessible; a robots.txt that says no, or cannot
                # be read (RFC 9309: a full disallow), does not allow the URL.
                raise ToolError(rules.refusal(url), URL_NOT_ACCESSIBLE if rules.unreached else URL_NOT_ALLOWED)
        if self.options.respect_content_signals and (
            against := self.robots(url, ctx, deadline).signal_against(url.target)
        ):
            ctx.audit(refused="content_signal")
            raise ToolError(robots.signal_refusal(url, *against, "robots.txt"), URL_NOT_ALLOWED)

    def robots(self, url: URL, ctx: ToolContext, deadline: Deadline | None = None) -> robots.RobotsRules:
        """The robots.txt rules of ``url``'s origin for our product token, read once a turn."""
        key = ("robots", url.origin)
        rules = ctx.turn_cache.get(key)
        if rules is None:
            rules = robots.fetch_rules(ctx.fetch, url, ctx.user_agent,
                                       deadline or Deadline(self.options.timeout_seconds, ctx.signal),
                                       self.options.timeout_seconds, sign=self.sign)
            ctx.turn_cache[key] = rules
        return rules

    # -- rendering ----------------------------------------------------------------------------------

    def _render(self, page: Page, html: str, ctx: ToolContext, deadline: Deadline, wall: str | None = None) -> Page:
        """The page rendered by the browser when the options ask for it (``always``), or when the static
        reading found too little on a page that shows the marks of a script-built one (``auto``), or
        when a bot ``wall`` answered the static request (then a render still walled raises)."""
        from . import render

        options = self.options
        if options.render_javascript == "auto" and not wall and not render.needs_javascript(html, page.text):
            return page
        timeout = deadline.remaining()
        if timeout is not None:
            timeout -= min(3.0, timeout / 4)  # what the rendered page's extraction keeps for itself
        if timeout is not None and timeout < 1:
            if options.render_javascript == "always":
                raise ToolError("The page took too long to render.", URL_NOT_ACCESSIBLE)
            return page
        if options.render_with != "chromium":
            shown = self._render_with_service(page, ctx, timeout or options.timeout_seconds, deadline, wall)
            if options.render_javascript == "auto" and len(shown.text) <= len(page.text):
                return page
            ctx.audit(rendered=True, renderer=options.render_with)
            return shown
        try:
            renderer = render.renderer_for(
                ctx.fetch, isolation=options.render_isolation, max_concurrent=options.render_max_concurrent,
                memory_cap_mb=options.render_memory_mb,
            )
            rendered = renderer.render(
                page.url, timeout=timeout or options.timeout_seconds, user_agent=ctx.user_agent,
                check_navigation=lambda url: self.check_hop(read_url(url), ctx, deadline),
                refuse_host=lambda host: domains.refusal(host, options.allow_domains, options.deny_domains),
                cancel=ctx.signal,
            )
        except render.RendererUnavailable as err:
            logger.warning("web_fetch could not render %s with JavaScript: %s", displayed_urls(page.url),
                           displayed_urls(str(err)))
            return page
        except render.RenderFailed as err:
            # A refused navigation, or a page that needed too much memory, crashed the browser or started
            # a download: the model is told which.
            ctx.audit(render_failed=type(err).__name__)
            raise ToolError(str(err), err.code) from err
        except TimeoutError as err:
            if ctx.signal.is_set():
                raise ToolCancelled() from err
            if options.render_javascript == "always":
                raise ToolError("The page took too long to render.", URL_NOT_ACCESSIBLE) from err
            return page
        shown = self._page(rendered.html.encode("utf-8"), "html", "utf-8", rendered.url, deadline)
        if wall:
            status = rendered.status or 200
            # The browser met the wall too: a refusal, or a wall's page after its scripts ran.
            if status >= 400 or blocks.blocked_by(status, {}, rendered.html.encode("utf-8"), len(shown.text)):
                raise ToolError(blocks.message(page.url, wall), URL_NOT_ACCESSIBLE)
        if options.render_javascript == "auto" and len(shown.text) <= len(page.text):
            return page
        ctx.audit(rendered=True)
        return dataclasses.replace(shown, title=shown.title or page.title, rendered=True)

    def _render_with_service(self, page: Page, ctx: ToolContext, timeout: float, deadline: Deadline,
                             wall: str | None = None) -> Page:
        """The page as the operator's rendering service reads it. ``page.url`` is the final URL of the
        static download, so it has passed the domain lists, robots.txt and provenance; a different URL
        the service reports having read is checked the same way before its text is used."""
        from . import services

        service = services.BY_ID.get(self.options.render_with)
        if service is None:
            raise ToolError("The renderer in the web fetch options is unknown; the operator should choose "
                            "another.")
        key = self.options.render_api_key
        if service.needs_key and not key:
            raise ToolError(f"This page needs {service.name} to render it, and the operator has not set its "
                            "API key in the web fetch options.")
        # The service's address is the operator's choice: the plain client reaches it.
        scraped = services.scrape(service, page.url, client=ctx.http, api_key=key, timeout=timeout,
                                  cancel=ctx.signal)
        url = page.url
        if scraped.url:
            try:
                reported = read_url(scraped.url)
            except InvalidURL as err:
                raise ToolError(f"{service.name} read the page from an address this tool cannot check, so "
                                "its text is not used.", URL_NOT_ACCESSIBLE) from err
            if str(reported) != page.url:
                self.check_hop(reported, ctx, deadline)
                url = str(reported)
        if wall and ((scraped.status or 200) >= 400 or blocks.is_challenge_title(scraped.title)):
            raise ToolError(blocks.message(url, wall), URL_NOT_ACCESSIBLE)
        if scraped.status is not None and scraped.status >= 400:
            raise ToolError(f"Fetching {url} failed (HTTP {scraped.status}).", URL_NOT_ACCESSIBLE)
        shown = self._kept(url, scraped.title or page.title, scraped.markdown)
        return dataclasses.replace(shown, rendered=True)

    # -- content ------------------------------------------------------------------------------------

    def _page(self, data: bytes, kind: str, charset: str | None, url: str, deadline: Deadline) -> Page:
        if kind == "sniff":
            kind = _sniff(data)
        if kind == "markdown":
            title, text = agents.read_markdown(decode(data, charset))
            return self._kept(url, title, text)
        if kind == "html":
            limit = self.options.max_html_bytes
            notes = []
            if len(data) > limit:
                data = cut_markup(data, limit)
                notes.append(f"[The page is larger than {limit} bytes: only its first {limit} bytes were read.]")
            found = workers.call(
                extract, decode(data, charset, html=True), url, deadline=deadline,
                include_image_urls=self.options.include_image_urls,
            )
            return dataclasses.replace(self._kept(url, found.title, found.text, notes), published=found.published,
                                       author=found.author, language=found.language, type=found.type)
        text = decode(data, charset, html=kind in ("xml", "feed"))
        if kind in ("xml", "feed"):
            feed = workers.call(feed_markdown, text, url, deadline=deadline)
            if feed is not None:
                return self._kept(url, feed[0], feed[1])
        return self._kept(url, None, text)

    def _file(self, data: bytes, url: str, name: str | None, mime: str, ctx: ToolContext, deadline: Deadline) -> Page:
        text = ctx.ingesters.ingest(IngestInput(
            data, mime, name or "", deadline=deadline, max_pages=self.options.max_pdf_pages,
            max_characters=self.options.document_characters,
        ))
        return self._kept(url, name, text or "")

    def _kept(self, url: str, title: str | None, text: str, notes: list[str] | None = None) -> Page:
        """The page with at most ``document_characters`` of its text, and notes on what was left out."""
        notes = list(notes or ())
        text = text.strip()
        limit = self.options.document_characters
        if len(text) > limit:
            text = split_part(text, 0, limit).rstrip()
            notes.append(f"[The text is longer: only its first {len(text)} characters are kept.]")
        if notes:
            text = "\n\n".join([text, *notes]) if text else "\n\n".join(notes)
        return Page(url, title, text)


def cut_markup(data: bytes, limit: int) -> bytes:
    """The first ``limit`` bytes of an HTML page, ending before the tag the limit falls in."""
    if len(data) <= limit:
        return data
    cut = data.rfind(b"<", 0, limit)
    return data[:cut] if cut > 0 else data[:limit]


def _sniff(data: bytes) -> str:
    """A page sent without a Content-Type: HTML when it starts like HTML, else text."""
    head = data[:512].lstrip().lower()
    if re.match(rb"(?:\xef\xbb\xbf)?<(?:!doctype html|html|head|body|\?xml)", head):
        return "html"
    if b"\x00" in data[:1024]:
        raise ToolError("The server sent no content type, and the body is not text.", UNSUPPORTED_CONTENT_TYPE)
    return "text"
