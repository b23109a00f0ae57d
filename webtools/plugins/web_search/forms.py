"""The operator's options and the user's settings, as Django forms built from an engine list."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from webtools.net import InvalidURL, read_url
from webtools.runtime import CommaListField, LimitField, SecretField, cache_ttl_field, scoped
from webtools.runtime.domains import DomainListField

from . import rerank
from .engines.base import COUNTRY, SAFE_SEARCH, Engine

DEFAULT = "default"
SAFE_SEARCH_CHOICES = [("off", _("Off")), ("moderate", _("Moderate")), ("strict", _("Strict"))]
MAX_RESULTS = 20


class BaseURLField(forms.CharField):
    """An http(s) URL of a self-hosted engine. Unlike ``URLField`` it accepts single-label hosts such
    as ``http://searxng:8080``, the usual address of an instance on the operator's own network."""

    def to_python(self, value: Any) -> str:
        value = super().to_python(value)
        if not value:
            return ""
        try:
            url = read_url(value)  # the reading the client will connect with (webtools.net.urls)
        except InvalidURL as err:
            raise forms.ValidationError(
                _("Enter an http or https URL, such as https://search.example.com. %(reason)s"),
                code="invalid", params={"reason": str(err)},
            ) from err
        if "?" in value or "#" in value:
            raise forms.ValidationError(_("Enter the URL without a query or fragment."), code="invalid")
        return str(url).rstrip("/")


def may_use_operator_account(options: Mapping[str, Any], roles: Iterable[str]) -> bool:
    """Whether ``roles`` may spend the operator's account (a role in ``admin_engine_roles``): its
    engines, and its rerank service."""
    return bool(set(options.get("admin_engine_roles") or ()) & set(roles))


def _extra_fields(engines: Sequence[Engine]) -> dict[str, forms.Field]:
    fields: dict[str, forms.Field] = {}
    for engine in engines:
        for name, spec in engine.extra_fields.items():
            fields.setdefault(
                name,
                forms.CharField(label=spec.label, help_text=spec.help_text, required=False, max_length=200),
            )
    return fields


class OrderedChoices(forms.MultiWidget):
    """An ordered multiple choice without a script: one select per place (first, second, ...), each
    with every choice and a blank, and one more blank place than the value fills (at least three).

    Data that names the field itself (a JSON list from the API, or text typed one per line) is taken as
    it is; the selects' own names (``<name>_0``, ``<name>_1``, ...) give the chosen ids in place order,
    blanks left out."""

    PLACES = 3

    def __init__(self, choices, attrs=None):
        self.choices = [("", "—"), *choices]
        super().__init__([forms.Select(choices=self.choices) for _ in range(self.PLACES)], attrs)

    def decompress(self, value):
        if isinstance(value, str):
            value = [v.strip() for v in value.replace(",", "\n").splitlines() if v.strip()]
        return list(value or [])

    def get_context(self, name, value, attrs):
        values = value if isinstance(value, list) else self.decompress(value)
        known = {choice for choice, _label in self.choices}
        choices = self.choices + [(v, v) for v in values if v not in known]  # an id no longer installed stays
        self.widgets = [forms.Select(choices=choices) for _ in range(max(self.PLACES, len(values) + 1))]
        self.widgets_names = [f"_{i}" for i in range(len(self.widgets))]
        return super().get_context(name, values + [""] * (len(self.widgets) - len(values)), attrs)

    def value_from_datadict(self, data, files, name):
        if name in data:
            return data[name]
        places = sorted((int(key[len(name) + 1:]), data[key]) for key in data
                        if key.startswith(name + "_") and key[len(name) + 1:].isdigit())
        return [value for _index, value in places if value]

    def value_omitted_from_data(self, data, files, name):
        return name not in data and not any(key.startswith(name + "_") for key in data)


def key_link(name: str):
    """"Get a Brave API key", "Get an Exa API key": the article as the engine's name begins."""
    if str(name)[:1].lower() in "aeiou":
        return format_lazy(_("Get an {name} API key"), name=name)
    return format_lazy(_("Get a {name} API key"), name=name)


def engine_field(engines: Sequence[Engine], choices: list, **kwargs: Any) -> forms.ChoiceField:
    """The engine choice, with each engine's key page and pricing note as ``choice_help`` (the settings
    page shows the chosen engine's). An engine that needs no key gets no "Get a ... API key" link."""
    field = forms.ChoiceField(label=_("Engine"), choices=choices, **kwargs)
    keyed = {e.id for e in engines if e.key_url and e.needs_key}
    field.choice_help = {
        e.id: {
            "note": e.pricing,
            "url": e.key_url if e.id in keyed else "",
            "link": key_link(e.name) if e.id in keyed else "",
        }
        for e in engines
        if e.pricing or e.id in keyed
    }
    return field


def show_when(engines: Sequence[Engine]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Which fields show for which engines, in the options form and the user settings form alike."""
    rules = {
        "api_key": ("engine", tuple(e.id for e in engines if e.needs_key)),
        "base_url": ("engine", tuple(e.id for e in engines if e.needs_base_url)),
        # An option the engine cannot pass on is not offered for it.
        "safe_search": ("engine", tuple(e.id for e in engines if SAFE_SEARCH in e.supports)),
        "country": ("engine", tuple(e.id for e in engines if COUNTRY in e.supports)),
    }
    for engine in engines:
        for name in engine.extra_fields:
            controller, ids = rules.get(name, ("engine", ()))
            rules[name] = (controller, (*ids, engine.id))
    return {**rules, **rerank.show_when()}


def missing_fields(engine: Engine, values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, what) for each value ``engine`` needs that ``values`` lacks."""
    missing = []
    if engine.needs_key and not values.get("api_key"):
        missing.append(("api_key", str(_("API key"))))
    if engine.needs_base_url and not values.get("base_url"):
        missing.append(("base_url", str(_("base URL"))))
    for name, spec in engine.extra_fields.items():
        if not values.get(name):
            missing.append((name, spec.label))
    return missing


def own_account(engine: Engine, values: Mapping[str, Any]) -> bool:
    """Whether ``values`` (a user's) hold what makes a search the user's own account: their key, or
    for an engine without one, the address of their own instance. An engine that needs neither searches
    from the server's own address: never the user's account (``resolution``)."""
    if engine.needs_key:
        return bool(values.get("api_key"))
    if engine.needs_base_url:
        return bool(values.get("base_url"))
    return False


NO_SITE_ENGINE = (
    "This site has no search engine of its own: pick an engine and add your own key in the web search "
    "settings to search the web."
)


def from_server_address(engine: Engine) -> str:
    """Why a user without a role may not search with an engine that needs no key (DuckDuckGo)."""
    return (
        f"{engine.name} searches from this site's own server address, which the operator gives only to some "
        "users: pick an engine with a key of your own in the web search settings."
    )


def engine_fields(engine: Engine) -> tuple[str, ...]:
    """The fields that give ``engine`` what it needs: its key, base URL and its own fields."""
    return ("api_key", "base_url", *engine.extra_fields)


def kept_for(options: Mapping[str, Any], engine: Engine) -> dict[str, str]:
    """``engine``'s own key, base URL and fields, as the options keep them per engine (``api_key@brave``,
    ``base_url@searxng``, ``cx@google``): never another engine's, nor those in force."""
    return {name: options.get(scoped(name, engine.id)) or "" for name in engine_fields(engine)}


def build_options_form(engines: Sequence[Engine]) -> type[forms.Form]:
    """The operator's options form for ``engines``."""
    by_id = {e.id: e for e in engines}
    with_key = ", ".join(e.name for e in engines if e.needs_key)
    with_base_url = ", ".join(e.name for e in engines if e.needs_base_url)

    fields: dict[str, Any] = {
        "engine": engine_field(
            engines,
            [("", "---------"), *((e.id, e.name) for e in engines)],
            help_text=_("The search engine used for everyone who may use the operator's engine."),
        ),
        "api_key": SecretField(
            label=_("API key"), help_text=format_lazy(_("Needed by {names}."), names=with_key)
        ),
        "base_url": BaseURLField(
            label=_("Base URL"),
            required=False,
            help_text=format_lazy(
                _(
                    "The address of your instance, needed by {names}. Reached without the private network "
                    "guard, so it may be on your own network."
                ),
                names=with_base_url,
            ),
        ),
        **_extra_fields(engines),
        "admin_engine_roles": CommaListField(
            label=_("Roles that may use this engine"),
            required=False,
            initial=lambda: ["user"],
            help_text=_(
                "Users holding one of these roles search with the engine and key above "
                "(user, staff, superuser or a group name). Others need their own engine."
            ),
        ),
        "enabled_by_default": forms.BooleanField(
            label=_("Enabled by default"),
            required=False,
            initial=False,
            help_text=_("Offer web_search to users who have not switched it on or off."),
        ),
        "user_toggle": forms.BooleanField(
            label=_("Users may switch it"),
            required=False,
            initial=True,
            help_text=_("Let users switch web_search on and off in their settings."),
        ),
        "user_engines": forms.BooleanField(
            label=_("Users may bring their own engine"),
            required=False,
            initial=True,
            help_text=_("Let users pick an engine and key of their own in their settings."),
        ),
        "max_results": forms.IntegerField(
            label=_("Results per search"),
            min_value=1,
            max_value=MAX_RESULTS,
            initial=5,
        ),
        "safe_search": forms.ChoiceField(
            label=_("Safe search"),
            # Not asked for an engine that cannot pass it on (show_when), so it may be absent: moderate.
            required=False,
            choices=SAFE_SEARCH_CHOICES,
            initial="moderate",
            help_text=_("Passed to engines that filter adult content."),
        ),
        "country": forms.CharField(
            label=_("Country"),
            required=False,
            max_length=2,
            help_text=_("Two-letter country code (such as US) for engines that localize results."),
        ),
        "blocked_domains": DomainListField(
            label=_("Blocked domains"),
            required=False,
            initial=list,
            help_text=_("Results from these domains and their subdomains are never returned."),
        ),
        # Limits (docs/operators.md, "Limits"): 0 means no limit.
        "max_uses": LimitField(
            label=_("Searches per answer"), initial=10,
            help_text=_("How many searches the model may make for one answer. 0: no limit."),
        ),
        "user_daily_searches": LimitField(
            label=_("Searches per user per day"), initial=200,
            help_text=_("On the engine and key above (UTC days). Users with their own engine and key are "
                        "not counted. 0: no limit."),
        ),
        "user_searches_per_minute": LimitField(
            label=_("Searches per user per minute"), initial=20,
            help_text=_("For every user, whoever's key. 0: no limit."),
        ),
        "engine_concurrency": LimitField(
            label=_("Requests at once per engine"), initial=4,
            help_text=_("Searches sent to one engine at the same time, across all workers (1 for Brave's "
                        "free plan); more wait a few seconds in line. 0: no limit."),
        ),
        "fallback_engines": CommaListField(
            label=_("Fallback engines"), required=False, initial=list,
            widget=OrderedChoices([(e.id, e.name) for e in engines]),
            help_text=_("Engines tried in this order when the engine above fails (quota, "
                        "rate limit, server error, timeout or block page). Each uses its own key, base URL "
                        "and fields, entered under “Keys per engine” (at the top of this page). The engine "
                        "above is skipped here."),
        ),
        "cache_ttl_seconds": cache_ttl_field("search results"),
        **rerank.option_fields(),
    }

    def clean_safe_search(self) -> str:
        return self.cleaned_data.get("safe_search") or "moderate"

    def clean_country(self) -> str:
        value = (self.cleaned_data.get("country") or "").strip()
        if value and not re.fullmatch(r"[A-Za-z]{2}", value):
            raise forms.ValidationError(_("Enter a two-letter country code such as US."), code="invalid")
        return value.upper()

    def clean_fallback_engines(self) -> list[str]:
        """Engine ids, each once. The engine above may stay listed (it is skipped while it is the engine
        above), so that choosing an engine to enter its key does not lose the list. A fallback engine
        uses only what is kept for it (``kept_for``): one added now must have it. One listed before that
        lost it stays listed: the search skips it and the system check ``webtools.W015`` says so."""
        primary = self.cleaned_data.get("engine")  # declared first, so already cleaned
        ids = list(dict.fromkeys(self.cleaned_data.get("fallback_engines") or []))
        # Set by the shell (host.validate_settings): what is kept per engine, and the list saved before.
        kept = getattr(self, "kept", None) or {}
        listed = set((getattr(self, "stored_values", None) or {}).get("fallback_engines") or ())
        problems = []  # every bad entry at once, not one per save
        unknown = [engine_id for engine_id in ids if engine_id not in by_id]
        if unknown:
            message = (_("%(ids)s is not an engine id; choose from %(choices)s.") if len(unknown) == 1
                       else _("%(ids)s are not engine ids; choose from %(choices)s."))
            problems.append(forms.ValidationError(message, code="invalid", params={
                "ids": ", ".join(f"“{engine_id}”" for engine_id in unknown), "choices": ", ".join(by_id)}))
        for engine_id in ids:
            engine = by_id.get(engine_id)
            missing = missing_fields(engine, kept_for(kept, engine)) if engine is not None else []
            if missing and engine_id != primary and engine_id not in listed:
                problems.append(forms.ValidationError(
                    _("%(engine)s needs its own %(what)s to be a fallback engine: enter it for %(engine)s under "
                      "“Keys per engine” (at the top of this page), then list it here."),
                    code="needs_key", params={"engine": engine.name, "what": missing[0][1]},
                ))
        if problems:
            raise forms.ValidationError(problems)
        return ids

    def clean(self) -> dict:
        cleaned = forms.Form.clean(self)
        engine = by_id.get(cleaned.get("engine") or "")
        if engine is not None:
            for name, what in missing_fields(engine, cleaned):
                if name not in self.errors:
                    self.add_error(
                        name,
                        _("Enter the %(what)s that %(engine)s needs.")
                        % {"engine": engine.name, "what": what},
                    )
        return cleaned

    attrs = {
        **fields,
        "clean_safe_search": clean_safe_search,
        "clean_country": clean_country,
        "clean_fallback_engines": clean_fallback_engines,
        "clean": clean,
        "engines": tuple(engines),
    }
    return type("WebSearchOptionsForm", (forms.Form,), attrs)


def build_user_settings_form(engines: Sequence[Engine], options: Mapping[str, Any]) -> type[forms.Form]:
    """The user's settings form: an engine of their own (or the operator's), a key and a base URL."""
    by_id = {e.id: e for e in engines}
    admin_engine = options.get("engine") or ""
    fields: dict[str, Any] = {
        "engine": engine_field(
            engines,
            [(DEFAULT, _("Default (the site's engine)")), *((e.id, e.name) for e in engines)],
            required=False,
            initial=DEFAULT,
        ),
        "api_key": SecretField(label=_("API key"), help_text=_("Your key for the engine you picked.")),
        "base_url": BaseURLField(
            label=_("Base URL"),
            required=False,
            help_text=_("The address of your instance, such as https://searx.example.org."),
        ),
        **_extra_fields(engines),
    }

    def clean(self) -> dict:
        """What the user picked must be able to search, said at save: their own key (the operator's
        values fill no blank beside it); the operator's engine only for a role that may use it; an
        engine without a key (the server's address) only for such a role. ``roles`` (set by the shell:
        ``host.validate_settings``) is None where the user is not known: those checks are left out."""
        cleaned = forms.Form.clean(self)
        engine_id = cleaned.get("engine") or DEFAULT
        cleaned["engine"] = engine_id
        roles = getattr(self, "roles", None)
        may_use_admin = roles is None or may_use_operator_account(options, roles)
        if engine_id == DEFAULT:
            if not admin_engine:
                self.add_error("engine", NO_SITE_ENGINE)
            elif not may_use_admin:
                self.add_error("engine", _("This site's engine is not open to you: pick an engine and add your "
                                           "own key."))
            return cleaned
        engine = by_id.get(engine_id)
        if engine is None:
            return cleaned
        own = own_account(engine, cleaned)
        if not own and not missing_fields(engine, {}) and not may_use_admin:
            self.add_error("engine", from_server_address(engine))
        # The operator's values fill the blanks only of a user without a key of their own on the
        # operator's engine, and only for a role that may use it.
        if own or engine.id != admin_engine or not may_use_admin:
            for name, what in missing_fields(engine, cleaned):
                if name not in self.errors:
                    self.add_error(
                        name, _("Add your %(engine)s %(what)s.") % {"engine": engine.name, "what": what}
                    )
        return cleaned

    return type("WebSearchUserSettingsForm", (forms.Form,), {**fields, "clean": clean})
