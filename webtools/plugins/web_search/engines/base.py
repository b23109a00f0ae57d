"""The engine contract: an engine builds one HTTP request and reads one response, nothing more.

The shared code in ``webtools.plugins.web_search.search`` sends the request (client, timeout,
cancellation), maps HTTP and network errors to fixed messages (an error body is never shown), strips
HTML, drops bad and duplicate URLs, filters domains, cuts snippets and counts, and cites. An engine
file declares its identity in class attributes and implements ``request`` and ``parse`` (and, when its
API explains errors, ``describe_error`` and ``error_detail``). Everything else (the admin's choices,
the form rules, the messages) derives from the list in ``engines/__init__.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from rest_framework import serializers

from webtools.runtime import json_input

#: The optional search parameters an engine may support (``Engine.supports``); the plugin says in its
#: output when the chosen engine cannot apply one the call asked for (freshness, language, location),
#: or applies it itself after the answer (domains). An engine that lists a parameter passes it on in
#: ``request`` in its API's own terms (docs/engines.md has the table):
#:
#: - ``SAFE_SEARCH``: ``Search.safe_search``; ``COUNTRY``: ``Search.country``;
#: - ``LANGUAGE``: ``Search.language``, an ISO 639-1 code in lower case, "" when not asked for;
#: - ``LOCATION``: ``Search.location`` (``region``, ``city``, ``timezone``; any may be "").
FRESHNESS = "freshness"
SAFE_SEARCH = "safe_search"
COUNTRY = "country"
LANGUAGE = "language"
LOCATION = "location"
ALLOWED_DOMAINS = "allowed_domains"
BLOCKED_DOMAINS = "blocked_domains"
PARAMETERS = (FRESHNESS, SAFE_SEARCH, COUNTRY, LANGUAGE, LOCATION, ALLOWED_DOMAINS, BLOCKED_DOMAINS)

#: What an engine's failed answer means, whatever status it came with (``Engine.error_kind``): the message
#: follows from it, and so does what happens next. The kinds in ``NOT_NOW`` mean "this engine cannot
#: answer now": the search goes to the operator's next engine and this one cools down. A rejected key or
#: a bad request would fail the same way again, so it is said to the user instead.
KEY_REJECTED = "key_rejected"
QUOTA = "quota"
RATE_LIMIT = "rate_limit"
OUTAGE = "outage"
BLOCKED = "blocked"
REFUSED = "refused"
FAILED = "failed"
NOT_NOW = frozenset({QUOTA, RATE_LIMIT, OUTAGE, BLOCKED})


@dataclass(frozen=True)
class Location:
    """Where the user is, roughly, as the call gave it (the country travels in ``Search.country``):
    ``region`` and ``city`` as names (such as "Bavaria", "Munich"), ``timezone`` an IANA name (such as
    "Europe/Berlin"). Each may be ""."""

    region: str = ""
    city: str = ""
    timezone: str = ""

    def __bool__(self) -> bool:
        return bool(self.region or self.city or self.timezone)


#: How far back each ``freshness`` reaches, for APIs that take a start date instead of a period.
FRESHNESS_SPANS = {
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
    "month": timedelta(days=31),
    "year": timedelta(days=366),
}


@dataclass(frozen=True)
class Search:
    """One search as an engine sees it.

    ``endpoint`` is the engine's public endpoint, or the operator's replacement from
    ``WEBTOOLS["ENGINE_URLS"]``; engines that need a base URL build theirs from ``base_url``.
    ``freshness`` is ``day``, ``week``, ``month`` or ``year``; ``safe_search`` is ``off``,
    ``moderate`` or ``strict``; ``country`` an ISO 3166 alpha-2 code in capitals (the call's
    ``user_location.country``, else the operator's). ``language`` and ``location`` are the call's
    (see ``PARAMETERS``). ``extra`` holds the engine's own options (``Engine.extra_fields``), such as
    Google's ``cx``.
    """

    query: str
    count: int
    endpoint: str = ""
    api_key: str = ""
    base_url: str = ""
    freshness: str | None = None
    safe_search: str = "moderate"
    country: str = ""
    language: str = ""
    location: Location = field(default_factory=Location)
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    extra: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    """The HTTP request an engine wants sent: ``params`` go in the query string, ``data`` is a form
    body, ``json`` a JSON body."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, Any] | None = None
    data: Mapping[str, Any] | None = None
    json: Any = None


@dataclass(frozen=True)
class SearchResult:
    """One result as the engine gave it; the shared code cleans it.

    ``published`` is the page's date as the engine gives it (ISO 8601 where the API has it so);
    ``page_age`` the engine's own words for how old the page is, when it has them separately (Brave's
    ``age``: "2 days ago", "May 1, 2024"). Both are passed on to the model when present.
    """

    title: str
    url: str
    snippet: str = ""
    published: str | None = None
    page_age: str | None = None


@dataclass(frozen=True)
class ExtraField:
    """An option only one engine has (Google's ``cx``): required whenever that engine is used, shown
    only for it, in the operator's options and in the user's settings alike."""

    label: str
    help_text: str = ""


class ResponseError(Exception):
    """The engine's answer is not a results page. The message is for the model and names the engine;
    ``kind`` says what the answer means (an API that reports a used-up quota with HTTP 200 raises this
    with ``kind=QUOTA``, so the next engine is tried)."""

    kind = FAILED

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class EngineBlocked(ResponseError):
    """The engine answered with a block page (a CAPTCHA, "unusual traffic"): it refuses this server for
    now, so the search goes to the next engine and this one cools down."""

    kind = BLOCKED


class Engine:
    """Base class of a search engine adapter. Subclasses set the class attributes and implement
    ``request`` and ``parse``."""

    #: Stable identifier stored in options and user settings, such as ``"brave"``.
    id: str = ""
    #: The vendor's own spelling, used in every message: "The Brave API key was rejected."
    name: str = ""
    #: Whether the engine needs an API key.
    needs_key: bool = False
    #: Whether the engine needs a base URL (a self-hosted instance) instead of a public endpoint.
    needs_base_url: bool = False
    #: The public endpoint; ``WEBTOOLS["ENGINE_URLS"][id]`` replaces it.
    endpoint: str = ""
    #: Query operators the engine understands, listed in the tool's description.
    operators: tuple[str, ...] = ()
    #: The optional parameters of ``PARAMETERS`` this engine passes on to its API.
    supports: frozenset[str] = frozenset()
    #: The largest result count the API accepts in one request.
    max_count: int = 20
    #: Options of this engine alone, by field name.
    extra_fields: Mapping[str, ExtraField] = {}
    #: The page where an operator or user gets a key (listed in docs/engines.md).
    key_url: str = ""
    #: One sentence on what searching with the engine costs, shown beside the key field.
    pricing: str = ""
    #: The query parameter carrying the key, for the few APIs that accept it only in the URL (SerpApi's
    #: ``api_key``). Everywhere else the key travels in a header. Either way the shared code masks it in
    #: every message and log line.
    key_param: str = ""

    def request(self, search: Search) -> Request:
        """The HTTP request for ``search``."""
        raise NotImplementedError

    def parse(self, body: str) -> list[SearchResult]:
        """The results of a 200 response's body. Raises ``ResponseError`` when the body is not a
        results page; an empty list means the engine found nothing."""
        raise NotImplementedError

    def error_kind(self, status: int, body: str) -> str | None:
        """What an error answer means when its status alone says otherwise (Serper's HTTP 400 "Not
        enough credits" is a used-up quota, ``QUOTA``); None leaves it to the status (``kind_of``).
        Read only the documented part of an error shape: a status, a code, a fixed phrase."""
        return None

    def kind_of(self, status: int, body: str) -> str:
        """The kind of an error answer: the engine's ``error_kind``, else the status's usual meaning."""
        kind = self.error_kind(status, body)
        if kind is not None:
            return kind
        if status in (401, 403):
            return KEY_REJECTED if self.needs_key else REFUSED
        if status == 402:  # Payment Required: how most APIs say the credits are used up
            return QUOTA
        if status == 429:
            return RATE_LIMIT
        return OUTAGE if status >= 500 else FAILED

    def describe_error(self, status: int, body: str) -> str | None:
        """A fixed message for an error answer where the message of its kind (``error_message``) says
        too little (SearXNG's 403: the instance refuses JSON). Never copy text from ``body`` into it: an
        engine may echo the key it rejected, in any spelling."""
        return None

    def error_message(self, kind: str, status: int) -> str:
        """The fixed message of an error answer of ``kind``."""
        messages = {
            KEY_REJECTED: self.key_rejected_message,
            QUOTA: self.quota_message,
            RATE_LIMIT: self.rate_limit_message,
            BLOCKED: self.block_message,
        }
        if kind in messages:
            return messages[kind]()
        if kind == REFUSED:
            return f"{self.name} refused the search (HTTP {status})."
        return f"{self.name} search failed (HTTP {status})."

    def error_detail(self, body: Any) -> str | None:
        """The engine's own explanation in a JSON error body. It is logged for the operator, masked,
        and never shown to the user or the model."""
        return None

    # -- helpers for subclasses ------------------------------------------------------------------

    def load_json(self, body: str) -> Any:
        try:
            return json_input.loads(body)
        except ValueError as err:
            if body.lstrip()[:1] == "<":
                raise EngineBlocked(self.block_message()) from err
            raise ResponseError(f"{self.name} sent a response that is not JSON.") from err

    def block_message(self) -> str:
        """The message for a web page where results were expected: a CAPTCHA, a firewall's or a proxy's
        block page."""
        return (
            f"{self.name} sent a web page instead of search results: the search was blocked on the way "
            "(a firewall, proxy or the engine's bot protection). Try again later, or ask the operator to "
            "check the engine's address."
        )

    def quota_message(self) -> str:
        """The message for an answer saying the account's searches or credits are used up."""
        return (
            f"The {self.name} account has used up its search quota or credits; the operator must top it up "
            "or upgrade the plan."
        )

    def key_rejected_message(self) -> str:
        return f"The {self.name} API key was rejected."

    def rate_limit_message(self) -> str:
        return f"{self.name}'s rate limit was reached."

    def validate(self, serializer_class: type[serializers.Serializer], data: Any) -> dict:
        """``data`` checked against a DRF serializer; a mismatch is a ``ResponseError`` naming the engine."""
        serializer = serializer_class(data=data)
        if not isinstance(data, dict) or not serializer.is_valid():
            raise ResponseError(f"{self.name} sent a response in an unexpected format.")
        return serializer.validated_data

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id}>"


class Text(serializers.CharField):
    """A string field of an engine's answer: may be blank, never trimmed (the shared code cleans it)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_blank", True)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)


class OptionalText(Text):
    """A string field an engine may leave out or set to null."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("default", None)
        super().__init__(**kwargs)


def first_text(*values: Any) -> str:
    """The first non-empty string of ``values``."""
    for value in values:
        if isinstance(value, str) and value.strip():
            return value
    return ""


def bearer_post(search: Search, body: Mapping[str, Any]) -> Request:
    """A JSON POST of ``body`` to the engine's endpoint, authenticated with the key as a Bearer token, as
    most AI-oriented search APIs want."""
    return Request(
        "POST",
        search.endpoint,
        headers={"Authorization": f"Bearer {search.api_key}", "Content-Type": "application/json"},
        json=body,
    )


def json_text(body: str, *path: str | int) -> str:
    """The string at ``path`` in a JSON body (``json_text(body, "error", "message")``), or "" when the
    body is not JSON or holds no string there. For ``describe_error``, which gets the raw body."""
    try:
        value: Any = json_input.loads(body)
    except ValueError:
        return ""
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return ""
    return value if isinstance(value, str) else ""


def published_since(freshness: str) -> datetime:
    """The earliest publication time (UTC, to the minute) a search with ``freshness`` accepts."""
    return (datetime.now(timezone.utc) - FRESHNESS_SPANS[freshness]).replace(second=0, microsecond=0)
