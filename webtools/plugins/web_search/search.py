"""What every engine shares: sending the request, mapping errors, cleaning and citing results.

Engines only build a request and read a response (``engines/base.py``); the HTTP client, the timeout,
cancellation, error messages, HTML stripping, URL and domain filtering, cutting and citing are here.
"""

from __future__ import annotations

import email.utils
import html
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from webtools.exceptions import TOO_MANY_REQUESTS, UNAVAILABLE, ToolCancelled, ToolError
from webtools.net.errors import InvalidURL
from webtools.net.urls import read_url
from webtools.runtime import domains, excerpt, json_input, masked_in_logs, redact

from .engines.base import NOT_NOW, QUOTA, RATE_LIMIT, Engine, ResponseError, Search, SearchResult

logger = logging.getLogger("webtools.web_search")

#: Seconds before a search gives up, combined with the turn's cancellation: one deadline for the call,
#: fallback engines and waits after ``Retry-After`` included.
TIMEOUT = 15.0
#: The share of the time left that an engine gets when fallback engines follow it.
ENGINE_SHARE = 2 / 3
#: Seconds an engine that failed is skipped by every worker, unless its ``Retry-After`` says otherwise.
COOL_DOWN = 30.0
#: The longest ``Retry-After`` honoured as a cool-down.
MAX_COOL_DOWN = 600.0
#: Retries of one engine after a 429 whose ``Retry-After`` fits within the call's deadline.
MAX_RETRIES = 2
#: The most of an engine's answer that is read; a results page is far smaller.
MAX_BYTES = 5_000_000
SNIPPET_CHARACTERS = 500
TITLE_CHARACTERS = 300
#: How much of an engine's error explanation is logged.
DETAIL_CHARACTERS = 300

_TAG = re.compile(r"<!--.*?-->|<[A-Za-z/!?][^<>]*>", re.S)
#: What could still open a tag once tags are stripped (``<scr<b>ipt>`` leaves ``<script>``).
_TAG_START = re.compile(r"<+(?=[A-Za-z/!?])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_SPACE = re.compile(r"\s+")


# -- text ---------------------------------------------------------------------------------------


def clean_text(text: str) -> str:
    """``text`` as plain words: entities decoded first and tags stripped after, so an encoded
    ``&lt;script&gt;`` is stripped as the tag it decodes to, never passed on as one; a ``<`` that could
    still open a tag dropped; control characters dropped and lone surrogates (which cannot be encoded)
    replaced; whitespace collapsed."""
    text = _SURROGATE.sub("\ufffd", _CONTROL.sub("", text or ""))
    return collapse(_TAG_START.sub("", _TAG.sub("", html.unescape(text))))


def cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis marking the cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


# -- the request ------------------------------------------------------------------------------------


class EngineDown(ToolError):
    """The engine cannot answer now (quota, rate limit, server error, timeout, block page: the kinds of
    ``engines.base.NOT_NOW``): the search may go to the next engine, and this one is skipped by every
    worker for ``cool_down`` seconds."""

    def __init__(self, message: str, cool_down: float = COOL_DOWN, code: str = UNAVAILABLE) -> None:
        super().__init__(message, code)
        self.cool_down = cool_down
        #: Seconds the engine asked to wait (``Retry-After``), when it said.
        self.retry_after: float | None = None


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (RFC 9110 10.2.3: seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def run(
    engine: Engine,
    search: Search,
    client: Any,
    ctx: Any,
    *,
    secrets: Sequence[str] = (),
    timeout: float | None = None,
) -> list[SearchResult]:
    """Send ``engine``'s request for ``search`` with ``client`` and return the engine's raw results.

    ``timeout`` (default ``TIMEOUT``) covers the request and any retry after a 429 whose
    ``Retry-After`` fits in it. Every failure is a ``ToolError`` naming the engine, with ``secrets``
    (the key) masked out; ``EngineDown`` when another engine may answer instead.
    """
    timeout = TIMEOUT if timeout is None else timeout
    give_up = time.monotonic() + timeout
    for attempt in range(MAX_RETRIES + 1):
        try:
            return _send(engine, search, client, ctx, secrets, max(0.05, give_up - time.monotonic()), timeout)
        except EngineDown as err:
            wait = err.retry_after
            if wait is None or attempt == MAX_RETRIES or wait >= give_up - time.monotonic() - 0.5:
                raise
            logger.info("%s asked to retry after %.1f seconds.", engine.name, wait)
            if ctx.signal.wait(wait):
                raise ToolCancelled() from err
    raise AssertionError("unreachable")


def _send(engine, search, client, ctx, secrets, timeout: float, budget: float) -> list[SearchResult]:
    from webtools import net

    secrets = [s for s in (search.api_key, *secrets) if s]
    name = engine.name
    request = engine.request(search)

    def fail(message: str, err: BaseException | None = None, down: bool = False, kind: str = "") -> ToolError:
        message = redact(message, secrets)
        logger.info("Search with %s failed: %s", name, message)
        # The engine's own rate limit or quota is the model's "too many requests"; any other failure
        # (a rejected key, an outage, a block page) leaves the search unavailable.
        code = TOO_MANY_REQUESTS if kind in (QUOTA, RATE_LIMIT) else UNAVAILABLE
        return EngineDown(message, code=code) if down else ToolError(message, code)

    try:
        # urllib3 logs each request line at DEBUG: a key that travels in the URL (SerpApi) is masked there.
        with masked_in_logs(secrets, "urllib3.connectionpool"):
            response = client.request(
                request.method,
                request.url,
                headers=dict(request.headers),
                params=request.params,
                data=request.data,
                json=request.json,
                timeout=timeout,
                max_bytes=MAX_BYTES,
                cancel=ctx.signal,
            )
    except net.Cancelled as err:
        raise ToolCancelled() from err
    except net.FetchTimeout as err:
        raise fail(f"{name} did not answer within {round(budget, 1):g} seconds.", down=True) from err
    except net.AddressNotAllowed as err:
        raise fail(f"{name} could not be reached: {err}") from err
    except net.BodyTooLarge as err:
        raise fail(f"{name} sent an answer too large to read.") from err
    except net.RedirectNotAllowed as err:
        raise fail(
            f"{name} answered with a redirect, which is not followed; check the engine's address."
        ) from err
    except net.ConnectionFailed as err:
        raise fail(f"{name} could not be reached: {err}", down=True) from err
    except net.NetError as err:
        raise fail(f"{name} could not be reached: {err}") from err

    body = response.text()
    status = response.status_code
    if status != 200:
        log_error_body(engine, status, body, secrets)
        kind = engine.kind_of(status, body)
        error = fail(http_error(engine, status, body, kind), down=kind in NOT_NOW, kind=kind)
        if isinstance(error, EngineDown):
            wait = retry_after(response.headers.get("Retry-After")) if status in (429, 503) else None
            error.retry_after = wait
            if wait is not None:
                error.cool_down = min(max(wait, 1.0), MAX_COOL_DOWN)
        raise error
    try:
        return engine.parse(body)
    except ResponseError as err:
        # A block page, or a quota an API reports with HTTP 200 (serpstack, Mojeek): the next engine is tried.
        raise fail(str(err), down=err.kind in NOT_NOW, kind=err.kind) from err


def http_error(engine: Engine, status: int, body: str, kind: str | None = None) -> str:
    """The fixed message for an error response: chosen by its kind (``Engine.kind_of``: the status and
    the error shapes the engine knows) or the engine's own ``describe_error``, never copied from the
    body, which may echo the key it rejected."""
    message = engine.describe_error(status, body)
    if message is not None:
        return message
    return engine.error_message(kind or engine.kind_of(status, body), status)


def log_error_body(engine: Engine, status: int, body: str, secrets: Sequence[str] = ()) -> None:
    """Log the engine's own explanation of an error (or the start of its body) for the operator, masked."""
    try:
        parsed = json_input.loads(body)
    except ValueError:
        parsed = None
    detail = engine.error_detail(parsed) if parsed is not None else None
    logger.info("%s answered HTTP %s: %s", engine.name, status, excerpt(detail or body, secrets, DETAIL_CHARACTERS))


def fan_out(asks: Sequence[Callable[[], dict]], *, concurrency: int = 0) -> list[dict | ToolError]:
    """Run ``asks`` (each one query's whole search) side by side, at most ``concurrency`` at once (0: all
    at once), and return each one's answer or ``ToolError`` in their order. The engine's own line
    (``engine_concurrency`` across workers) still holds each request."""
    if len(asks) == 1:
        return [_outcome(asks[0])]
    workers = min(len(asks), concurrency) if concurrency > 0 else len(asks)
    with ThreadPoolExecutor(workers, thread_name_prefix="webtools-search") as pool:
        return list(pool.map(_outcome, asks))


def _outcome(ask: Callable[[], dict]) -> dict | ToolError:
    try:
        return ask()
    except ToolError as err:
        return err


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
            item["published"] = cut(clean_text(result.published), DETAIL_CHARACTERS)
        if result.page_age:
            item["page_age"] = cut(clean_text(result.page_age), DETAIL_CHARACTERS)
        out.append(item)
    return out, filtered
