"""What every engine shares: sending the request, mapping errors, cleaning and citing results.

Engines only build a request and read a response (``engines/base.py``); the HTTP client, the timeout,
cancellation, error messages, HTML stripping, URL and domain filtering, cutting and citing are here.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Iterable, Sequence
from typing import Any

from webtools.exceptions import ToolCancelled, ToolError
from webtools.net.errors import InvalidURL
from webtools.net.urls import read_url
from webtools.runtime import domains, excerpt, redact

from .engines.base import Engine, ResponseError, Search, SearchResult

logger = logging.getLogger("webtools.web_search")

#: Seconds before a search gives up, combined with the turn's cancellation.
TIMEOUT = 15.0
#: The most of an engine's answer that is read; a results page is far smaller.
MAX_BYTES = 5_000_000
SNIPPET_CHARACTERS = 500
TITLE_CHARACTERS = 300
#: How much of an engine's error explanation is logged.
DETAIL_CHARACTERS = 300

_TAG = re.compile(r"<!--.*?-->|<[A-Za-z/!?][^<>]*>", re.S)
_SPACE = re.compile(r"\s+")


# -- text ---------------------------------------------------------------------------------------


def clean_text(text: str) -> str:
    """``text`` without HTML tags and entities, whitespace collapsed."""
    return _SPACE.sub(" ", html.unescape(_TAG.sub("", text or ""))).strip()


def cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis marking the cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


# -- the request ------------------------------------------------------------------------------------


def run(
    engine: Engine, search: Search, client: Any, ctx: Any, *, secrets: Sequence[str] = ()
) -> list[SearchResult]:
    """Send ``engine``'s request for ``search`` with ``client`` and return the engine's raw results.

    Every failure is a ``ToolError`` naming the engine, with ``secrets`` (the key) masked out.
    """
    from webtools import net

    secrets = [s for s in (search.api_key, *secrets) if s]
    name = engine.name
    request = engine.request(search)

    def fail(message: str, err: BaseException | None = None) -> ToolError:
        message = redact(message, secrets)
        logger.info("Search with %s failed: %s", name, message)
        return ToolError(message)

    try:
        response = client.request(
            request.method,
            request.url,
            headers=dict(request.headers),
            params=request.params,
            data=request.data,
            json=request.json,
            timeout=TIMEOUT,
            max_bytes=MAX_BYTES,
            cancel=ctx.signal,
        )
    except net.Cancelled as err:
        raise ToolCancelled() from err
    except net.FetchTimeout as err:
        raise fail(f"{name} did not answer within {TIMEOUT:g} seconds.") from err
    except net.AddressNotAllowed as err:
        raise fail(f"{name} could not be reached: {err}") from err
    except net.BodyTooLarge as err:
        raise fail(f"{name} sent an answer too large to read.") from err
    except net.RedirectNotAllowed as err:
        raise fail(
            f"{name} answered with a redirect, which is not followed; check the engine's address."
        ) from err
    except net.NetError as err:
        raise fail(f"{name} could not be reached: {err}") from err

    body = response.text()
    if response.status_code != 200:
        log_error_body(engine, response.status_code, body, secrets)
        raise fail(http_error(engine, response.status_code, body))
    try:
        return engine.parse(body)
    except ResponseError as err:
        raise fail(str(err)) from err


def http_error(engine: Engine, status: int, body: str) -> str:
    """The fixed message for an error response: chosen by the status and the error shapes the engine
    knows (``Engine.describe_error``), never copied from the body, which may echo the key it rejected."""
    name = engine.name
    message = engine.describe_error(status, body)
    if message is not None:
        return message
    if status in (401, 403):
        if engine.needs_key:
            return f"The {name} API key was rejected."
        return f"{name} refused the search (HTTP {status})."
    if status == 402:
        return f"{name} refused the search: the account's plan or credits do not cover it (HTTP 402)."
    if status == 429:
        return f"{name}'s rate limit was reached."
    return f"{name} search failed (HTTP {status})."


def log_error_body(engine: Engine, status: int, body: str, secrets: Sequence[str] = ()) -> None:
    """Log the engine's own explanation of an error (or the start of its body) for the operator, masked."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        parsed = None
    detail = engine.error_detail(parsed) if parsed is not None else None
    logger.info("%s answered HTTP %s: %s", engine.name, status, excerpt(detail or body, secrets, DETAIL_CHARACTERS))


# -- the results ----------------------------------------------------------------------------------


def clean_results(
    raw: Iterable[SearchResult],
    *,
    count: int,
    allowed_domains: Sequence[str] = (),
    blocked_domains: Sequence[str] = (),
) -> tuple[list[dict[str, str]], int]:
    """Cleaned results, at most ``count``: HTML stripped, snippets cut, URLs in their canonical form
    (``read_url``, the form web_fetch will fetch) with unreadable, non-http(s) and duplicate ones dropped,
    and the domain lists applied to the host the client would connect to, whatever the engine did
    with them. Also returns how many results the domain lists removed."""
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    filtered = 0
    for result in raw:
        try:
            canonical = read_url(result.url or "")
        except InvalidURL:
            continue
        url, host = str(canonical), canonical.host
        if url in seen:
            continue
        seen.add(url)
        if domains.host_matches(host, blocked_domains) or (
            allowed_domains and not domains.host_matches(host, allowed_domains)
        ):
            filtered += 1
            continue
        if len(out) >= count:
            break
        item = {
            "title": cut(clean_text(result.title), TITLE_CHARACTERS) or host,
            "url": url,
            "snippet": cut(clean_text(result.snippet), SNIPPET_CHARACTERS),
        }
        if result.published:
            item["published"] = cut(collapse(result.published), DETAIL_CHARACTERS)
        if result.page_age:
            item["page_age"] = cut(collapse(result.page_age), DETAIL_CHARACTERS)
        out.append(item)
    return out, filtered
