"""Reranking search results with a service the operator chooses (Jina, Cohere): optional, off by default.

After the engine has answered (and, with ``queries``, after the lists are fused), the results' titles
and snippets are sent with the query (the asked queries joined, for ``queries``) to the operator's
rerank service, which answers each result's index with a relevance score; the results come back in that
order, every field as it was. Nothing about the order is added to the output: the audit trail says which
service ordered them (``reranked``), the log why a rerank was skipped.

Reranking never fails a search. No key, a service cooling down after a failure, a timeout, an HTTP
error, an answer not in the documented shape: each leaves the order as it was (the engine's, or the
fused one), is logged with every rerank key masked, and the model sees the results as they are. The
service has its own share of the call's time (``SECONDS``, taken from the engines' deadline), so a slow
service never makes a search slower than a search without it.

The rerank service is the operator's account, whoever's engine answered: the tool reranks only for
users whose roles may spend the operator's account (``forms.may_use_operator_account``, the rule of
the operator's engines), and each request sent counts in the usage table as engine ``rerank:<service>``
on the operator's key, where an engine price of that name gives its cost. Other users' results keep
their order, and nothing is sent.

The endpoints are the operator's choice (``WEBTOOLS["RERANK_URLS"]`` replaces a public one), reached
with the plain client, as the engines are. The key travels only in the ``Authorization`` header; it is
kept per service (``rerank_api_key@cohere``), as the engines' keys are kept per engine.

May import ``webtools.conf``, ``webtools.exceptions``, ``webtools.net`` and ``webtools.runtime``; the
plugin's ``forms`` and the tool (``__init__``) import this.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from webtools import net
from webtools.conf import get_setting
from webtools.exceptions import ToolCancelled
from webtools.runtime import SecretField, ToolContext, excerpt, json_input, limits

logger = logging.getLogger("webtools.web_search")

#: The ``rerank_with`` value that turns reranking off (the default).
NONE = "none"
#: Seconds a rerank may take, kept back from the engines' share of the call's deadline.
SECONDS = 3.0
#: Seconds a service that failed (timeout, unreachable, 429, 5xx) is skipped by every worker.
COOL_DOWN = 30.0
#: The most of a service's answer that is read: a few scores, never near this.
MAX_BYTES = 1_000_000
#: How much of a service's error body is logged.
DETAIL_CHARACTERS = 300
#: What joins the asked queries into the one query a rerank is asked for (``queries``).
JOIN = "; "


@dataclass(frozen=True)
class Reranker:
    """A rerank service: ``POST`` the query and documents as JSON, read ``results[{index, relevance_score}]``."""

    #: Stable identifier stored in the options (``rerank_with``).
    id: str
    #: The vendor's own spelling, used in every message.
    name: str
    #: The public endpoint; ``WEBTOOLS["RERANK_URLS"][id]`` replaces it.
    endpoint: str
    #: The model asked for when the operator names none.
    default_model: str
    #: Where the operator gets a key, and one sentence on what a rerank costs (docs/engines.md).
    key_url: str
    pricing: str
    #: Fields of the body beyond model, query, documents and top_n, as (name, value) pairs.
    extra: tuple[tuple[str, Any], ...] = ()

    def url(self) -> str:
        return str((get_setting("RERANK_URLS") or {}).get(self.id) or self.endpoint)

    def body(self, model: str, query: str, documents: Sequence[str]) -> dict[str, Any]:
        return {"model": model or self.default_model, "query": query, "documents": list(documents),
                "top_n": len(documents), **dict(self.extra)}

    def headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
                "Accept": "application/json"}


#: https://jina.ai/reranker: ``return_documents: false`` leaves the texts sent out of the answer.
JINA = Reranker(
    "jina", "Jina Reranker", "https://api.jina.ai/v1/rerank", "jina-reranker-v2-base-multilingual",
    "https://jina.ai/?sui=apikey", "Billed by tokens read; new keys come with free tokens.",
    extra=(("return_documents", False),),
)
#: https://docs.cohere.com/reference/rerank (v2).
COHERE = Reranker(
    "cohere", "Cohere Rerank", "https://api.cohere.com/v2/rerank", "rerank-v3.5",
    "https://dashboard.cohere.com/api-keys", "Billed per search (up to 100 documents); a trial key is free "
    "at a low rate limit.",
)
#: Every service, in the order the option lists them.
RERANKERS: tuple[Reranker, ...] = (JINA, COHERE)
BY_ID = {reranker.id: reranker for reranker in RERANKERS}


class UnexpectedAnswer(Exception):
    """The service's answer is not in the documented shape."""


# -- the operator's options ------------------------------------------------------------------------


def option_fields() -> dict[str, forms.Field]:
    """The options form's fields for reranking: the service, its model and its key (write-only)."""
    return {
        "rerank_with": forms.ChoiceField(
            label=_("Reranker"), required=False, initial=NONE,
            choices=[(NONE, _("None (the engine's order)")), *((r.id, r.name) for r in RERANKERS)],
            help_text=_("A service that puts the results in order of relevance to the query before the model "
                        "reads them. The query and each result's title and snippet are sent to it. If it fails "
                        "or is slow, the results keep the engine's order."),
        ),
        "rerank_model": forms.CharField(
            label=_("Reranker model"), required=False, max_length=100,
            help_text=_model_help(),
        ),
        "rerank_api_key": SecretField(
            label=_("Reranker API key"),
            help_text=_("The key of the reranker chosen above; each reranker keeps its own."),
        ),
    }


def _model_help() -> str:
    defaults = ", ".join(f"{r.default_model} for {r.name}" for r in RERANKERS)
    return f"Blank: the reranker's own default ({defaults})."


def show_when() -> dict[str, tuple[str, tuple[str, ...]]]:
    """The model and the key show for a service only; the key is kept per service (``rerank_api_key@jina``)."""
    ids = tuple(BY_ID)
    return {"rerank_model": ("rerank_with", ids), "rerank_api_key": ("rerank_with", ids)}


def usage_engine(reranker: Reranker) -> str:
    """The name a service's requests are counted under in the usage table, and priced by."""
    return f"rerank:{reranker.id}"


def chosen(options: Mapping[str, Any]) -> Reranker | None:
    """The operator's rerank service, or None when reranking is off."""
    return BY_ID.get(str(options.get("rerank_with") or NONE))


def reserved(options: Mapping[str, Any], may_spend: bool = True) -> float:
    """Seconds of a call kept back for reranking: ``SECONDS`` when a service is chosen and the caller
    may spend the operator's account, else 0."""
    return SECONDS if may_spend and chosen(options) else 0.0


def problems(options: Mapping[str, Any]) -> list[str]:
    """For the plugin's check: a chosen service without a key."""
    reranker = chosen(options)
    if reranker is None or options.get("rerank_api_key"):
        return []
    return [f"Search results are to be reranked with {reranker.name}, which needs an API key, and none is set: "
            "results keep the engine's order until one is entered in the web search options."]


# -- reranking ------------------------------------------------------------------------------------


def document(result: Mapping[str, Any]) -> str:
    """What the service reads of a result: its title and snippet."""
    return "\n".join(part for part in (result.get("title"), result.get("snippet")) if part)


def read_order(body: str, count: int) -> list[int]:
    """The indices of ``count`` documents, most relevant first, from a service's answer: its
    ``results`` sorted by ``relevance_score`` (the answer's order on a tie), then any it left out in
    their order. ``UnexpectedAnswer`` when the answer is not that shape, or names an index twice or one
    out of range."""
    try:
        data = json_input.loads(body)
    except ValueError as err:
        raise UnexpectedAnswer("not JSON") from err
    items = data.get("results") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise UnexpectedAnswer("no results")
    scores: dict[int, float] = {}  # in the answer's order
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < count or index in scores:
            raise UnexpectedAnswer("an index out of range or named twice")
        if type(score) not in (int, float) or not math.isfinite(score):
            raise UnexpectedAnswer("a relevance score that is not a number")
        scores[index] = float(score)
    ranked = sorted(scores, key=lambda index: -scores[index])  # stable: the answer's order on a tie
    return ranked + [index for index in range(count) if index not in scores]


def apply(output: dict, queries: Sequence[str], options: Mapping[str, Any], ctx: ToolContext,
          may_spend: bool = True) -> dict:
    """``output`` (the tool's answer to ``queries``, not yet cited) with its results in the operator's
    service's order, or as they were on any failure; its results cited in their final order. Reranking
    off: ``output`` unchanged (the tool has cited it). With ``queries``, the results are reranked against
    the queries the output says were asked, joined. ``may_spend``: whether the caller's roles may spend
    the operator's account; when not, nothing is sent and the order stays."""
    reranker = chosen(options)
    if reranker is None:
        return output
    if not may_spend:
        reranker = None
    results = output["results"]
    query = JOIN.join(output.get("queries") or queries)
    order = _order(reranker, query, results, options, ctx) if reranker and len(results) > 1 else None
    if order is not None:
        output = {**output, "results": [results[index] for index in order]}
    ctx.audit(reranked=reranker.id if reranker and order is not None else "")
    for result in output["results"]:
        ctx.cite(result["url"], result["title"])
    return output


def _order(reranker: Reranker, query: str, results: Sequence[Mapping[str, Any]], options: Mapping[str, Any],
           ctx: ToolContext) -> list[int] | None:
    """The service's order of ``results``, or None (logged, masked) when it cannot be had."""
    name, api_key = reranker.name, str(options.get("rerank_api_key") or "")
    # Every rerank key the options hold is masked, not only the one sent.
    secrets = [str(v) for k, v in options.items() if k.partition("@")[0] == "rerank_api_key" and v]

    def skip(why: str, detail: str = "", cool: bool = False) -> None:
        logger.info("Reranking with %s skipped: %s The results keep their order.%s", name, why,
                    f" {excerpt(detail, secrets, DETAIL_CHARACTERS)}" if detail else "")
        if cool:
            ctx.limits.cool_down(f"rerank:{reranker.id}", COOL_DOWN)

    if not api_key:
        return skip("no API key is set.")
    if ctx.limits.cooling(f"rerank:{reranker.id}"):
        return skip("it failed moments ago.")
    body = reranker.body(str(options.get("rerank_model") or ""), query, [document(r) for r in results])
    try:
        response = ctx.http.request("POST", reranker.url(), headers=reranker.headers(api_key), json=body,
                                    timeout=SECONDS, max_bytes=MAX_BYTES, cancel=ctx.signal)
        status, text = response.status_code, response.text()
    except net.Cancelled as err:
        raise ToolCancelled() from err
    except net.FetchTimeout:
        return skip(f"it did not answer within {SECONDS:g} seconds.", cool=True)
    except net.BodyTooLarge:
        return skip("its answer was too large to read.")
    except net.NetError as err:
        return skip("it could not be reached.", str(err), cool=True)
    ctx.limits.record(limits.Usage(ctx.user, "web_search", usage_engine(reranker), operator_key=True))
    if status != 200:
        return skip(f"it answered HTTP {status}.", text, cool=status == 429 or status >= 500)
    try:
        return read_order(text, len(results))
    except UnexpectedAnswer as err:
        return skip(f"its answer is not in the documented shape ({err}).")
