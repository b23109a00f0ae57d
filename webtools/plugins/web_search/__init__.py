"""The web search plugin: the ``web_search`` tool over the operator's engine or each user's own.

Owns the plugin (its options and user settings forms, built in ``forms``), the tool's input rules
(query, freshness, domains, location, language, safe search), one call's quotas, the shared cache, and
the output the model reads with its notes and citations. Who searches with what (the operator's engine
or the user's, the keys, the fallback engines) is decided in ``resolution``; the request to an engine and
the cleaning of its results in ``search``; the engines themselves in ``engines``; reranking in ``rerank``.

May import ``webtools.conf``, ``webtools.exceptions``, ``webtools.runtime`` and this plugin's modules;
nothing of webtools imports it: the app loads it from ``WEBTOOLS["PLUGINS"]``.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from webtools.conf import get_setting
from webtools.exceptions import INVALID_TOOL_INPUT, QUERY_TOO_LONG, TOO_MANY_REQUESTS, UNAVAILABLE, ToolError
from webtools.runtime import Deadline, Plugin, PluginSetup, Tool, ToolContext, domains, limits
from webtools.runtime.context import Citations
from webtools.runtime.cache import USE_CACHE, cache_key

from . import rerank
from . import search as shared
from .engines import ENGINES
from .engines.base import (
    ALLOWED_DOMAINS, BLOCKED_DOMAINS, COUNTRY, FRESHNESS, LANGUAGE, LOCATION, SAFE_SEARCH, Engine, Location, Search,
)
from .forms import (
    DEFAULT, build_options_form, build_user_settings_form, engine_fields, kept_for, may_use_operator_account,
    missing_fields, show_when,
)
from .merge import fuse
from .resolution import NOT_SET_UP, OPERATOR, EngineResolution, _Choice

logger = logging.getLogger("webtools.web_search")

TOOL_NAME = "web_search"
DESCRIPTION = "Search the web. Returns a title, URL, and snippet for each result."
TITLE = _("Web search")
#: What a successful call returns (``_output``); fields later versions add are allowed.
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "url": {"type": "string"},
                    "snippet": {"type": "string"},
                    "published": {"type": "string"},
                    "page_age": {"type": "string"},
                    "queries": {"type": "array", "items": {"type": "string"},
                                "description": "With queries: those that found this result."},
                },
                "required": ["title", "url", "snippet"],
            },
        },
        "engine": {"type": "string", "description": "The id of the engine that answered."},
        "queries": {"type": "array", "items": {"type": "string"}, "description": "With queries: those asked."},
        "not_asked": {"type": "array", "items": {"type": "string"},
                      "description": "With queries: those a limit left no room for."},
        "notes": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["results", "engine"],
}
HELP_TEXT = _(
    "The assistant may look things up with a search engine. The words it searches for are sent to that engine."
)
FRESHNESS_VALUES = ("day", "week", "month", "year")
#: Safe search levels from the least to the most strict: a call may ask for a stricter level than the
#: operator's, never a looser one.
SAFE_SEARCH_LEVELS = ("off", "moderate", "strict")
MAX_QUERY = 400
#: The most queries one call may ask at once (``queries``).
MAX_QUERIES = 5
MAX_PLACE = 100
_COUNTRY = re.compile(r"[A-Za-z]{2}\Z")
_LANGUAGE = re.compile(r"([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]{1,8})*\Z")

NO_ENGINE = "No search engine could take the search."
MAX_USES = "The search limit for this answer is reached. Answer with the results you have."
SECRET_QUERY = (
    "The query was not sent: it holds a long run of letters and digits that could be a key or token "
    "from the conversation. Search with ordinary words."
)
#: 40 or more key-like characters in a row: what API keys, tokens and base64 secrets look like.
_SECRET_RUN = re.compile(r"[A-Za-z0-9+/_=-]{40,}")


class _Plan:
    """One call's request and rules, shared by the engines it tries, and the quotas it spends once."""

    def __init__(self, options, ctx, input, *, query, freshness, allowed, blocked, count, location, country,
                 language, safe_search) -> None:
        self.options, self.ctx, self.input = options, ctx, input
        self.query, self.freshness, self.count = query, freshness, count
        self.allowed, self.blocked = allowed, blocked
        self.location, self.country, self.language, self.safe_search = location, country, language, safe_search
        spend = may_use_operator_account(options, ctx.roles)
        self.deadline = Deadline(shared.TIMEOUT - rerank.reserved(options, spend), ctx.signal)  # the rest: reranking
        self._minute: limits.Reservation | None = None
        self._daily: limits.Reservation | None = None
        self._sent = False

    def spend(self, choice: _Choice) -> None:
        """Reserve this call's counts before its first request: per minute for everyone, per day on the
        operator's account. A cached answer spends nothing; fallbacks within the call are not counted
        again. What is reserved is charged only once a request leaves (``sending``): ``settle`` gives it
        back otherwise."""
        user = self.ctx.user or "anonymous"
        if self._minute is None:
            per_minute = int(self.options.get("user_searches_per_minute") or 0)
            self._minute = limits.take(
                self.ctx.limits, limits.Counter(limits.MINUTE, f"{TOOL_NAME}:user:{user}"), per_minute,
                f"Searches are limited to {per_minute} a minute for each user; wait a minute, then search again.",
            )
        if self._daily is None and choice.owner == OPERATOR:
            per_day = int(self.options.get("user_daily_searches") or 0)
            message = f"Today's limit of {per_day} searches on this site's engine is reached; it resets at 00:00 UTC."
            if self.options.get("user_engines"):
                message += " Add your own engine in the web search settings to search more today."
            self._daily = limits.take(
                self.ctx.limits, limits.Counter(limits.DAY, f"{TOOL_NAME}:user:{user}"), per_day, message
            )

    def sending(self) -> None:
        """A request is being handed to an engine: the reserved counts are spent."""
        self._sent = True

    def settle(self) -> None:
        """At the call's end: when no request left (every engine busy, cooling down, out of time, or a
        refusal before sending), give back what ``spend`` reserved, so that a search never sent is
        never charged."""
        if not self._sent:
            for reservation in (self._minute, self._daily):
                if reservation is not None:
                    reservation.release()


class WebSearchPlugin(EngineResolution, Plugin):
    """Registers ``web_search``. ``engines`` defaults to ``engines.ENGINES``; everything (the option
    choices, form rules, ``show_when``, messages) derives from it, so a test engine passed in works."""

    id = "web_search"
    name = _("Web search")

    def __init__(self, engines: Sequence[Engine] | None = None) -> None:
        self.engines: tuple[Engine, ...] = tuple(ENGINES if engines is None else engines)
        ids = [e.id for e in self.engines]
        if len(set(ids)) != len(ids) or DEFAULT in ids:
            raise ValueError(f"Engine ids must be unique and not {DEFAULT!r}: {ids}")
        self.by_id = {e.id: e for e in self.engines}
        self.options_form = build_options_form(self.engines)
        self.show_when = show_when(self.engines)
        # One base URL and engine fields per engine, as one key per engine: each fallback engine has its own.
        self.kept_per_scope = frozenset(name for e in self.engines for name in engine_fields(e)) - {"api_key"}

    def check(self, options: Mapping[str, Any]) -> list[str]:
        """A listed fallback engine that lost what it needs (its key was removed since) is skipped."""
        problems = rerank.problems(options)
        for engine in self.fallbacks(options):
            missing = missing_fields(engine, kept_for(options, engine))
            if missing:
                problems.append(
                    f"The fallback engine {engine.name} has no {missing[0][1]} of its own any more, so searches "
                    f"skip it. Enter one for {engine.name} under Keys per engine in the web search options, or "
                    "remove it from the fallback engines."
                )
        return problems

    def user_settings_form(self, options: Mapping[str, Any]) -> type[forms.Form] | None:
        if not options.get("user_engines", True):
            return None
        return build_user_settings_form(self.engines, options)

    def test_input(self, tool_name: str) -> dict[str, Any] | None:
        return {"query": "Django web framework"} if tool_name == TOOL_NAME else None

    # -- the tool ------------------------------------------------------------------------------

    def setup(self, setup: PluginSetup) -> None:
        options = dict(setup.options)
        engine = self.by_id.get(options.get("engine") or "")
        # Options never saved (or saved without an engine): users who bring an engine and key of their
        # own search with it; everyone else is told the operator has not set web search up.
        users_only = engine is None and options.get("user_engines", True) and (setup.configured or not setup.saved)
        if not users_only and (not setup.configured or engine is None):
            setup.register_tool(
                Tool(
                    name=TOOL_NAME,
                    description=DESCRIPTION,
                    input_schema=self.input_schema(shared_max(options), bool(options.get("cache_ttl_seconds"))),
                    handler=_not_set_up,
                    default_enabled=False,
                    user_toggle=bool(options.get("user_toggle", True)),
                    untrusted=True,
                    title=TITLE,
                    help_text=HELP_TEXT,
                )
            )
            return

        def handler(input: dict, ctx: ToolContext) -> dict:
            return self.search(options, input, ctx)

        setup.register_tool(
            Tool(
                name=TOOL_NAME,
                description=self.description(engine) if engine else DESCRIPTION,
                input_schema=self.input_schema(shared_max(options), bool(options.get("cache_ttl_seconds"))),
                handler=handler,
                default_enabled=bool(options.get("enabled_by_default")),
                user_toggle=bool(options.get("user_toggle", True)),
                untrusted=True,
                title=TITLE,
                help_text=HELP_TEXT,
                max_uses=int(options.get("max_uses") or 0),
                max_uses_message=MAX_USES,
                output_schema=OUTPUT_SCHEMA,
                uses=_uses,
            )
        )

    @staticmethod
    def description(engine: Engine) -> str:
        """The seed's description followed by the operator's engine's operators (fixed at startup: a
        user who picks another engine sees the operator's list)."""
        if engine.operators:
            return f"{DESCRIPTION} Supported operators: {', '.join(engine.operators)}."
        return DESCRIPTION

    @staticmethod
    def input_schema(max_results: int, shared_cache: bool = False) -> dict:
        domains = {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 253},
            "maxItems": 50,
        }
        schema = {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY,
                    "description": "What to search for.",
                },
                "queries": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY},
                    "minItems": 2,
                    "maxItems": MAX_QUERIES,
                    "description": f"Instead of query: 2 to {MAX_QUERIES} different wordings or sides of one "
                    "question, searched at once. One list comes back, each result with the queries that found "
                    "it. Each query counts as one search.",
                },
                "freshness": {
                    "type": "string",
                    "enum": list(FRESHNESS_VALUES),
                    "description": "Only results published within the last day, week, month or year.",
                },
                "allowed_domains": {
                    **domains,
                    "description": "Only results from these domains (such as example.com) and their "
                    "subdomains.",
                },
                "blocked_domains": {
                    **domains,
                    "description": "No results from these domains or their subdomains.",
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": max_results,
                    "description": f"How many results to return, at most {max_results}.",
                },
                "user_location": {
                    "type": "object",
                    "description": "Where the user is, roughly, for local results.",
                    "properties": {
                        "type": {"type": "string", "enum": ["approximate"]},
                        "country": {"type": "string", "pattern": "^[A-Za-z]{2}$",
                                    "description": "Two-letter country code, such as US or DE."},
                        "region": {"type": "string", "maxLength": MAX_PLACE, "description": "Such as California."},
                        "city": {"type": "string", "maxLength": MAX_PLACE, "description": "Such as San Francisco."},
                        "timezone": {"type": "string", "maxLength": 64,
                                     "description": "IANA time zone, such as America/Los_Angeles."},
                    },
                    "additionalProperties": False,
                },
                "language": {
                    "type": "string",
                    "maxLength": 20,
                    "description": "Language of the results: an ISO 639-1 code such as en or de.",
                },
                "safesearch": {
                    "type": "string",
                    "enum": list(SAFE_SEARCH_LEVELS),
                    "description": "Filter adult content; may be stricter than the operator's level, never looser.",
                },
            },
            # query or queries: the tool checks (a top-level anyOf is refused by some providers).
            "additionalProperties": False,
        }
        if shared_cache:
            schema["properties"]["use_cache"] = USE_CACHE
        return schema

    def search(self, options: Mapping[str, Any], input: Mapping[str, Any], ctx: ToolContext) -> dict:
        """One ``web_search`` call under ``options`` (the operator's validated options)."""
        queries = _queries(input)
        freshness = input.get("freshness") or None
        if freshness is not None and freshness not in FRESHNESS_VALUES:
            raise ToolError(f"freshness must be one of {', '.join(FRESHNESS_VALUES)}.", INVALID_TOOL_INPUT)
        allowed = _domains(input.get("allowed_domains"), "allowed_domains")
        # The operator's blocked domains and the call's, each once.
        blocked = tuple(dict.fromkeys([*options.get("blocked_domains", ()),
                                       *_domains(input.get("blocked_domains"), "blocked_domains")]))
        limit = shared_max(options)
        count = min(int(input.get("max_results") or limit), limit)
        location, country = _location(input.get("user_location"))
        language = _language(input.get("language"))
        safe_search = _safe_search(options.get("safe_search") or "moderate", input.get("safesearch"))

        def plan_for(query: str, context: ToolContext) -> _Plan:
            return _Plan(
                options, context, input, query=query, freshness=freshness, allowed=allowed, blocked=blocked,
                count=count, location=location, country=country, language=language, safe_search=safe_search,
            )

        # Reranked results are cited in their new order (rerank.apply), so the search cites into a list of its own.
        inner = dataclasses.replace(ctx, citations=Citations()) if rerank.chosen(options) else ctx
        output = self._answer(plan_for(queries[0], inner)) if "queries" not in input else self._several(
            options, inner, queries, plan_for, count)
        return rerank.apply(output, queries, options, ctx, may_use_operator_account(options, ctx.roles))

    def _answer(self, plan: _Plan) -> dict:
        """One query's answer: the engines of the chain in turn, until one answers."""
        options, ctx = plan.options, plan.ctx
        failures: list[str] = []
        code = UNAVAILABLE
        chain = self.chain(options, ctx)
        try:
            for index, choice in enumerate(chain):
                try:
                    return self._search_with(plan, choice, failures, last=index == len(chain) - 1)
                except (shared.EngineDown, limits.Busy) as err:
                    failures.append(err.message)
                    code = err.code  # the last engine's failure is the call's
                    if isinstance(err, shared.EngineDown):
                        ctx.limits.cool_down(choice.cool_down_name, err.cool_down)
        finally:
            plan.settle()
        ctx.audit(engine=None)
        raise ToolError(" ".join(failures) if failures else NO_ENGINE, code)

    def _several(self, options, ctx: ToolContext, queries: list[str], plan_for, count: int) -> dict:
        """``queries`` asked at once, each as one search (the same engines, cache and limits), their
        results merged (``merge.fuse``). The first ones are asked when a limit leaves room for fewer."""
        granted = min(len(queries), ctx.uses_granted or len(queries))
        why_not = MAX_USES if granted < len(queries) else ""
        plans: list[_Plan] = []
        chain = self.chain(options, ctx)
        for query in queries[:granted]:
            # Each query has its own plan, and a context of its own: its citations and audit are
            # the merged answer's, below.
            plan = plan_for(query, dataclasses.replace(ctx, citations=Citations(), audit_details={}))
            try:
                if chain:
                    plan.spend(chain[0])  # in query order, so that the first ones get the quota
            except ToolError as err:
                if err.code != TOO_MANY_REQUESTS or not plans:
                    raise
                why_not = err.message
                break
            plans.append(plan)
        outcomes = shared.fan_out([functools.partial(self._answer, plan) for plan in plans],
                                  concurrency=int(options.get("engine_concurrency") or 0))
        answers = [(plan.query, out) for plan, out in zip(plans, outcomes) if isinstance(out, dict)]
        failed = [(plan.query, out) for plan, out in zip(plans, outcomes) if not isinstance(out, dict)]
        if not answers:
            raise failed[-1][1]
        results = fuse([(query, out["results"]) for query, out in answers], count)
        for result in results:
            ctx.cite(result["url"], result["title"])
        output: dict[str, Any] = {"results": results, "engine": answers[0][1]["engine"],
                                  "queries": [plan.query for plan in plans]}
        notes = list(dict.fromkeys(note for _, out in answers for note in out.get("notes", ())))
        notes += [f"The search for {query!r} failed: {err.message}" for query, err in failed]
        if len(plans) < len(queries):
            output["not_asked"] = queries[len(plans):]
            notes.append(f"{len(queries) - len(plans)} of the queries were not asked: {why_not}")
        if notes:
            output["notes"] = notes
        ctx.audit(engine=output["engine"], queries=len(plans), results=len(results))
        return output

    def _search_with(self, plan: _Plan, choice: _Choice, failures: list[str], *, last: bool) -> dict:
        """One engine's try: the shared cache, the quotas, the engine's line, the request."""
        options, ctx = plan.options, plan.ctx
        engine = choice.engine
        if ctx.limits.cooling(choice.cool_down_name):
            raise limits.Busy(f"{engine.name} failed moments ago and is skipped for a short while.", UNAVAILABLE)
        if plan.deadline.expired:
            raise limits.Busy(f"No time was left to ask {engine.name}.", UNAVAILABLE)
        ctx.audit(engine=engine.id)
        post_filtered = (plan.allowed and ALLOWED_DOMAINS not in engine.supports) or (
            plan.blocked and BLOCKED_DOMAINS not in engine.supports
        )
        # Domains the engine cannot filter are applied to its answer, so ask for a full page.
        wanted = engine.max_count if post_filtered else min(plan.count, engine.max_count)
        overrides = get_setting("ENGINE_URLS") or {}
        request = Search(
            query=plan.query,
            count=wanted,
            endpoint=overrides.get(engine.id) or engine.endpoint,
            api_key=choice.api_key,
            base_url=choice.base_url,
            freshness=plan.freshness,
            safe_search=plan.safe_search,
            country=plan.country or options.get("country") or "",
            language=plan.language,
            location=plan.location,
            allowed_domains=plan.allowed,
            blocked_domains=plan.blocked,
            extra=choice.extra,
        )
        ttl = int(options.get("cache_ttl_seconds") or 0)
        key = None
        if ttl and ctx.shared_cache is not None:
            # Everything that decides the answer, the key excepted: see runtime/cache.py.
            key = cache_key(
                TOOL_NAME, engine.id, choice.owner, request.endpoint, request.base_url, dict(request.extra),
                request.query, request.count, request.freshness, request.safe_search, request.country,
                request.language, dataclasses.astuple(request.location) if request.location else None,
                request.allowed_domains, request.blocked_domains, plan.count,
            )
            # use_cache: false asks for a fresh answer; it still replaces the kept one.
            hit = None if plan.input.get("use_cache") is False else ctx.shared_cache.get(key)
            if hit is not None:
                ctx.audit(cached=True)
                return self._output(plan, choice, hit, failures)
        plan.spend(choice)
        client = ctx.fetch if choice.guarded else ctx.http
        # Every key the options hold is masked in messages and logs, not only the one sent.
        secrets = [v for k, v in options.items() if k.partition("@")[0] == "api_key" and v] + [choice.api_key]
        line = limits.Counter(limits.CONCURRENT, f"engine:{choice.cool_down_name}", ttl=shared.TIMEOUT + 5)
        with limits.slot(
            ctx.limits, line, int(options.get("engine_concurrency") or 0),
            f"{engine.name} is busy with other searches.",
            wait=min(limits.QUEUE_SECONDS, plan.deadline.remaining() or 0.0), signal=ctx.signal,
        ):
            plan.sending()
            ctx.limits.record(limits.Usage(ctx.user, TOOL_NAME, engine.id, choice.owner == OPERATOR))
            left = plan.deadline.remaining() or 0.0
            # An engine followed by others gets a share of the time left, so they still have some.
            timeout = left if last else left * shared.ENGINE_SHARE
            raw = shared.run(engine, request, client, ctx, secrets=secrets, timeout=timeout)
        results, filtered = shared.clean_results(
            raw, count=plan.count, allowed_domains=plan.allowed, blocked_domains=plan.blocked
        )
        answer = {"results": results, "filtered": filtered if post_filtered else 0}
        if key is not None:
            ctx.shared_cache.set(key, answer, ttl)
        return self._output(plan, choice, answer, failures)

    @staticmethod
    def _output(plan: _Plan, choice: _Choice, answer: dict, failures: list[str]) -> dict:
        engine, ctx = choice.engine, plan.ctx
        results = answer["results"]
        ctx.audit(results=len(results))
        for result in results:
            ctx.cite(result["url"], result["title"])
        output: dict[str, Any] = {"results": results, "engine": engine.id}
        notes = [f"{message} {engine.name} answered instead." for message in failures]
        if plan.freshness and FRESHNESS not in engine.supports:
            notes.append(
                f"{engine.name} cannot limit results by date, so freshness was not applied; "
                "check the published dates."
            )
        ignored = [name for name, asked, parameter in (
            ("language", plan.language, LANGUAGE), ("user_location", bool(plan.location), LOCATION),
            ("user_location.country", plan.country, COUNTRY), ("safesearch", plan.input.get("safesearch"), SAFE_SEARCH),
        ) if asked and parameter not in engine.supports]
        if ignored:
            notes.append(f"{engine.name} does not take {', '.join(ignored)}, so the results are not adjusted to it.")
        if answer["filtered"]:
            notes.append(
                f"{engine.name} does not filter by domain, so {answer['filtered']} results from other domains "
                "were removed after the search."
            )
        if notes:
            output["notes"] = notes
        return output


def _uses(input: Mapping[str, Any]) -> int:
    """The searches a call counts for ``max_uses``: one a query."""
    queries = input.get("queries")
    return len(queries) if isinstance(queries, list) and queries else 1


def _queries(input: Mapping[str, Any]) -> list[str]:
    """The call's queries: ``query``, or the distinct ``queries`` in their order; each checked."""
    if ("query" in input) == ("queries" in input):
        raise ToolError("Give either query or queries (2 to 5 queries), not both.", INVALID_TOOL_INPUT)
    raw = [input["query"]] if "query" in input else input["queries"]
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_QUERIES:
        raise ToolError(f"queries must be a list of 2 to {MAX_QUERIES} queries.", INVALID_TOOL_INPUT)
    queries = list(dict.fromkeys(str(query or "").strip() for query in raw))
    for query in queries:
        if not query:
            raise ToolError("The query is empty.", INVALID_TOOL_INPUT)
        if len(query) > MAX_QUERY:
            raise ToolError(f"The query is longer than {MAX_QUERY} characters.", QUERY_TOO_LONG)
        if _SECRET_RUN.search(query):
            raise ToolError(SECRET_QUERY, INVALID_TOOL_INPUT)
    return queries


def shared_max(options: Mapping[str, Any]) -> int:
    try:
        return max(1, min(int(options.get("max_results") or 5), 20))
    except (TypeError, ValueError):
        return 5


def _domains(value: Any, field: str) -> tuple[str, ...]:
    if not value:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ToolError(f"{field} must be a list of domain names.", INVALID_TOOL_INPUT)
    out = []
    for entry in value:
        try:
            if not isinstance(entry, str):
                raise ValidationError("not text")
            # The model may narrow to a whole suffix ("only gov sites"); an operator's list may not.
            out.append(domains.normalize_domain(entry, allow_public_suffix=True))
        except ValidationError:
            raise ToolError(f"{field}: {str(entry)[:100]!r} is not a domain name such as example.com.",
                            INVALID_TOOL_INPUT) from None
    return tuple(dict.fromkeys(out))


def _location(value: Any) -> tuple[Location, str]:
    """The call's ``user_location`` as the engines' ``Location`` and a country code in capitals."""
    if not value:
        return Location(), ""
    if not isinstance(value, dict):
        raise ToolError("user_location must be an object with country, region, city and timezone.",
                        INVALID_TOOL_INPUT)
    parts = {}
    for name in ("country", "region", "city", "timezone"):
        text = " ".join(str(value.get(name) or "").split())[:MAX_PLACE]
        if _SECRET_RUN.search(text):
            raise ToolError(SECRET_QUERY, INVALID_TOOL_INPUT)
        parts[name] = text
    if parts["country"] and not _COUNTRY.match(parts["country"]):
        raise ToolError("user_location.country must be a two-letter country code such as US.", INVALID_TOOL_INPUT)
    return Location(parts["region"], parts["city"], parts["timezone"]), parts["country"].upper()


def _language(value: Any) -> str:
    """The call's ``language`` as an ISO 639 code in lower case (``de-DE`` gives ``de``), or ""."""
    if not value:
        return ""
    match = _LANGUAGE.match(str(value).strip())
    if not match:
        raise ToolError("language must be a language code such as en or de.", INVALID_TOOL_INPUT)
    return match.group(1).lower()


def _safe_search(operators: str, asked: Any) -> str:
    """The stricter of the operator's level and the call's."""
    levels = [level for level in (operators, asked) if level in SAFE_SEARCH_LEVELS]
    return max(levels, key=SAFE_SEARCH_LEVELS.index) if levels else "moderate"


def _not_set_up(input: dict, ctx: ToolContext) -> dict:
    raise ToolError(NOT_SET_UP, UNAVAILABLE)


__all__ = ["WebSearchPlugin"]
