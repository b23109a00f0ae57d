"""Who searches with what, and on whose account: the engine, key and base URL of one ``web_search``
call, and the engines it falls back to. The tool (``webtools.plugins.web_search``) asks ``chain``; the
plugin's ``check`` (run by a system check) asks ``fallbacks``.

Whose key is sent decides whose account a search spends (``_Choice.owner``), for everything that
counts: cool-downs, the engine's concurrency, the daily quota, usage and cost, and the shared cache.

1. User engine ``default``, or user engines off: the operator's engine, key and base URL, reached with
   the plain client (``ctx.http``): the operator chose those URLs. The operator's account.
2. Any other user engine with the user's own key (or, for SearXNG and YaCy, the user's own base URL):
   the user's account, with the user's values only; the operator's never fill a blank (a user's Google
   key with the operator's ``cx`` is refused: the user adds their own). A user's base URL is reached
   with the guarded client (``ctx.fetch``), so it cannot point at the server's private network.
3. Any other user engine without a key of the user's: the operator's account. For the operator's own
   engine the operator's values fill the blanks; an engine that needs no key and no address
   (DuckDuckGo) searches from the server's own address, which is the operator's to give too.

The operator's account serves only users holding a role in ``admin_engine_roles``, and their searches
on it count against the daily quota. The operator may choose no engine at all: users then search with
their own engines and keys only. After the first engine come the operator's fallback engines, each with
only what is kept for it (``forms.kept_for``).

May import ``webtools.exceptions``, ``webtools.runtime`` and this plugin's ``engines`` and ``forms``;
never the tool (``__init__``), which imports this.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from webtools.exceptions import ToolError
from webtools.runtime import ToolContext

from .engines.base import Engine
from .forms import (
    DEFAULT, NO_SITE_ENGINE, engine_fields, from_server_address, kept_for, may_use_operator_account, missing_fields,
    own_account,
)

NEEDS_OWN_ENGINE = "Add your own search engine in the web search settings to search the web."
NOT_AVAILABLE = "Web search isn't available to you."
NOT_SET_UP = "Web search is not set up yet: the operator has to choose a search engine first."


OPERATOR = "operator"


@dataclass(frozen=True)
class _Choice:
    """The engine a call uses, with its values and the client that reaches it.

    ``owner`` is whose account the request spends: ``operator`` (the operator's key or instance, or
    the server's own address for an engine without key or address, such as DuckDuckGo) or
    ``user:<id>`` (the user's own key or instance). Cool-downs, the engine's line, usage and the shared
    cache are per engine and owner; the daily quota counts only the operator's.
    """

    engine: Engine
    api_key: str
    base_url: str
    extra: dict[str, str]
    guarded: bool
    owner: str = OPERATOR

    @property
    def cool_down_name(self) -> str:
        return f"{self.engine.id}:{self.owner}"

    @classmethod
    def of(cls, engine: Engine, values: Mapping[str, Any], *, guarded: bool, owner: str) -> _Choice:
        """``engine`` with the values it needs from ``values`` (by field name) and nothing else."""
        return cls(
            engine,
            (values.get("api_key") or "") if engine.needs_key else "",
            (values.get("base_url") or "") if engine.needs_base_url else "",
            {name: values.get(name) or "" for name in engine.extra_fields},
            guarded=guarded,
            owner=owner,
        )


class EngineResolution:
    """The resolution half of ``WebSearchPlugin``: which engines a call tries, in order. Needs
    ``by_id``, the plugin's engines by id."""

    by_id: dict[str, Engine]

    def fallbacks(self, options: Mapping[str, Any]) -> list[Engine]:
        """The operator's fallback engines in order, the main engine left out."""
        ids = [i for i in options.get("fallback_engines") or () if i != options.get("engine")]
        return [self.by_id[i] for i in ids if i in self.by_id]

    def chain(self, options: Mapping[str, Any], ctx: ToolContext) -> list[_Choice]:
        """The engines a call tries, in order: the one ``resolve`` picks, then the operator's fallback
        engines; after a user's own engine, the operator's engine and its fallbacks only where the
        user's role may use the operator's account."""
        first = self.resolve(options, ctx)
        chain = [first]
        if first.owner != OPERATOR:
            if not may_use_operator_account(options, ctx.roles):
                return chain
            admin_engine = self.by_id.get(options.get("engine") or "")
            if admin_engine is not None:
                chain.append(_Choice.of(admin_engine, options, guarded=False, owner=OPERATOR))
        for engine in self.fallbacks(options):
            # Each fallback engine gets only what is kept for it: never the main engine's key, nor another's.
            values = kept_for(options, engine)
            if not missing_fields(engine, values):  # otherwise skipped; the system check says why
                chain.append(_Choice.of(engine, values, guarded=False, owner=OPERATOR))
        return chain

    def resolve(self, options: Mapping[str, Any], ctx: ToolContext) -> _Choice:
        """The engine for this call and whose account it spends (rules 1 to 3 of the module
        docstring), or a ToolError saying what the user must add."""
        user_engines = bool(options.get("user_engines"))
        settings = dict(ctx.settings or {}) if user_engines else {}
        may_use_admin = may_use_operator_account(options, ctx.roles)
        admin_engine = self.by_id.get(options.get("engine") or "")
        picked = settings.get("engine") or DEFAULT

        if picked == DEFAULT:
            if admin_engine is None:
                raise ToolError(NO_SITE_ENGINE if user_engines else NOT_SET_UP)
            if not may_use_admin:
                raise ToolError(NEEDS_OWN_ENGINE if user_engines else NOT_AVAILABLE)
            return _Choice.of(admin_engine, options, guarded=False, owner=OPERATOR)

        engine = self.by_id.get(picked)
        if engine is None:
            raise ToolError(
                "The search engine in your web search settings is no longer offered; pick another one."
            )
        values = {name: settings.get(name) or "" for name in engine_fields(engine)}
        if own_account(engine, values):
            missing = missing_fields(engine, values)
            if missing:
                raise ToolError(f"Add your {engine.name} {missing[0][1]} in the web search settings.")
            return _Choice.of(engine, values, guarded=engine.needs_base_url, owner=f"user:{ctx.user}")
        # Nothing of the user's own to search with: the operator's key or instance, or the server's address.
        needed = missing_fields(engine, {})
        if not may_use_admin:
            if not needed:
                raise ToolError(from_server_address(engine))
            raise ToolError(f"Add your {engine.name} {needed[0][1]} in the web search settings.")
        if engine is admin_engine:
            values = {name: values[name] or options.get(name) or "" for name in values}
        missing = missing_fields(engine, values)
        if missing:
            raise ToolError(f"Add your {engine.name} {missing[0][1]} in the web search settings.")
        return _Choice.of(engine, values, guarded=False, owner=OPERATOR)
