"""Rendering services: Firecrawl scrape and Jina Reader, for operators who prefer a service to a browser.

A service is handed one URL that has already passed the operator's domain lists, robots.txt and the
URL-provenance rule: the final URL of the guarded static download. It reads the page on its own
machines, scripts included, and answers Markdown, a title and the URL it says it read; the tool checks
that URL again (``WebFetch.check_hop``) before it uses the answer.

The endpoints are the operator's choice (``WEBTOOLS["RENDER_SERVICE_URLS"]`` replaces a public one), so
they are reached with the plain client. Every failure is a fixed message naming the service; a
service's error body is only logged, masked, and the key travels only in the ``Authorization`` header.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from webtools import net
from webtools.conf import get_setting
from webtools.exceptions import ToolCancelled, ToolError
from webtools.runtime import excerpt

logger = logging.getLogger("webtools.web_fetch")

#: The most of a service's answer that is read: Markdown of a page in JSON, never near this.
MAX_ANSWER_BYTES = 20_000_000
#: How much of a service's error body is logged.
DETAIL_CHARACTERS = 300


@dataclass(frozen=True)
class Request:
    """The HTTP request a service wants sent."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    json: Any = None


@dataclass(frozen=True)
class Scraped:
    """What a service read: its Markdown, the page's title, the URL it says it read ("" when it does
    not say) and the HTTP status the page answered it with, when it says."""

    markdown: str
    title: str | None = None
    url: str = ""
    status: int | None = None


class UnexpectedAnswer(Exception):
    """The service's answer is not in the shape its documentation gives."""


class Service:
    """A rendering service: identity in class attributes, ``request`` and ``parse`` for the rest."""

    #: Stable identifier stored in the options (``render_with``), such as ``"jina"``.
    id: str = ""
    #: The vendor's own spelling, used in every message.
    name: str = ""
    #: The public base URL; ``WEBTOOLS["RENDER_SERVICE_URLS"][id]`` replaces it.
    endpoint: str = ""
    #: Whether the service refuses requests without a key.
    needs_key: bool = False
    #: Where the operator gets a key, and one sentence on what a page costs (docs/fetch.md).
    key_url: str = ""
    pricing: str = ""

    def base_url(self) -> str:
        overrides = get_setting("RENDER_SERVICE_URLS") or {}
        return str(overrides.get(self.id) or self.endpoint).rstrip("/")

    def request(self, base: str, url: str, api_key: str) -> Request:
        """The request that reads ``url``."""
        raise NotImplementedError

    def parse(self, data: Any) -> Scraped:
        """What a 200 answer's JSON says; ``UnexpectedAnswer`` when it is not the documented shape."""
        raise NotImplementedError


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class Firecrawl(Service):
    """``POST /v2/scrape``: https://docs.firecrawl.dev/api-reference/endpoint/scrape"""

    id = "firecrawl"
    name = "Firecrawl"
    endpoint = "https://api.firecrawl.dev"
    needs_key = True
    key_url = "https://www.firecrawl.dev/app/api-keys"
    pricing = "One credit a page; free starting credits, then paid plans."

    def request(self, base: str, url: str, api_key: str) -> Request:
        return Request(
            "POST", f"{base}/v2/scrape",
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"},
            json={"url": url, "formats": ["markdown"], "onlyMainContent": True},
        )

    def parse(self, data: Any) -> Scraped:
        inner = data.get("data") if isinstance(data, dict) else None
        if not isinstance(inner, dict) or data.get("success") is False or not isinstance(inner.get("markdown"), str):
            raise UnexpectedAnswer()
        meta = inner.get("metadata") if isinstance(inner.get("metadata"), dict) else {}
        status = meta.get("statusCode")
        return Scraped(
            markdown=inner["markdown"],
            title=_text(meta.get("title")) or None,
            # ``url`` is where the page ended up after redirects; ``sourceURL`` the one asked for.
            url=_text(meta.get("url")) or _text(meta.get("sourceURL")),
            status=status if isinstance(status, int) and not isinstance(status, bool) else None,
        )


class Jina(Service):
    """``GET /{url}`` with ``Accept: application/json``: https://jina.ai/reader"""

    id = "jina"
    name = "Jina Reader"
    endpoint = "https://r.jina.ai"
    needs_key = False
    key_url = "https://jina.ai/?sui=apikey"
    pricing = "Free without a key at a low rate limit; a key raises it and is billed by tokens read."

    def request(self, base: str, url: str, api_key: str) -> Request:
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return Request("GET", f"{base}/{url}", headers=headers)

    def parse(self, data: Any) -> Scraped:
        inner = data.get("data") if isinstance(data, dict) else None
        if not isinstance(inner, dict) or not isinstance(inner.get("content"), str):
            raise UnexpectedAnswer()
        return Scraped(markdown=inner["content"], title=_text(inner.get("title")) or None,
                       url=_text(inner.get("url")))


#: Every service, in the order the option lists them.
SERVICES: tuple[Service, ...] = (Firecrawl(), Jina())
BY_ID = {s.id: s for s in SERVICES}


def scrape(service: Service, url: str, *, client: Any, api_key: str = "", timeout: float,
           cancel: Any = None) -> Scraped:
    """Ask ``service`` to read ``url`` (already checked) with ``client``, within ``timeout`` seconds.

    Raises ``ToolError`` with a fixed message for every failure, ``ToolCancelled`` when the turn ends.
    """
    name = service.name
    request = service.request(service.base_url(), url, api_key)
    secrets = [api_key] if api_key else []

    def fail(message: str, detail: str = "") -> ToolError:
        logger.info("Rendering %s with %s failed: %s %s", net.displayed_urls(str(url)), name, message,
                    excerpt(detail, secrets, DETAIL_CHARACTERS))
        return ToolError(message)

    try:
        response = client.request(
            request.method, request.url, headers=dict(request.headers), json=request.json, timeout=timeout,
            max_bytes=MAX_ANSWER_BYTES, cancel=cancel,
        )
    except net.Cancelled as err:
        raise ToolCancelled() from err
    except net.FetchTimeout as err:
        raise fail(f"{name} did not answer within {round(timeout, 1):g} seconds; the page was not read.") from err
    except net.BodyTooLarge as err:
        raise fail(f"{name} sent an answer too large to read.") from err
    except net.RedirectNotAllowed as err:
        raise fail(f"{name} answered with a redirect, which is not followed; the operator should check "
                   "its address.") from err
    except net.NetError as err:
        raise fail(f"{name} could not be reached; the page was not read.", str(err)) from err
    status = response.status_code
    if status != 200:
        raise fail(error_message(service, status, bool(api_key)), f"HTTP {status}: {response.text()}")
    try:
        return service.parse(json.loads(response.text()))
    except (ValueError, RecursionError, UnexpectedAnswer) as err:
        raise fail(f"{name} sent an answer in an unexpected format.") from err


def error_message(service: Service, status: int, keyed: bool) -> str:
    """The fixed message for an error status: never text from the body, which may echo the key."""
    name = service.name
    if status in (401, 403):
        if keyed:
            return (f"{name} rejected the API key (HTTP {status}). The operator can replace it in the web "
                    "fetch options.")
        return (f"{name} refused the request without an API key (HTTP {status}). The operator can add one "
                "in the web fetch options.")
    if status == 402:
        return (f"{name} refused the request: the account's plan or credits do not cover it (HTTP 402). "
                "The operator can add credits or choose another renderer.")
    if status == 429:
        hint = "" if keyed or service.needs_key else " An API key raises the limit."
        return f"{name}'s rate limit was reached; try again in a minute.{hint}"
    if status >= 500:
        return f"{name} failed to read the page (HTTP {status}); try again later."
    return f"{name} could not read the page (HTTP {status})."
