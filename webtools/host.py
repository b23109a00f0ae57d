"""The seam between the database and the plain-Python runtime.

Everything a turn needs from the database (the plugins' options, the user's roles, tool switches and
plugin settings, decrypted secrets) is read here, once, at turn start. Below this module nothing
imports a model.

Owns the plugins the app loaded (``get_plugins``), loading and validating options and settings
(secrets write-only), building the registry and starting a turn (``start_turn``). Part of the Django
shell: may import ``models``, ``stores``, ``signals``, the runtime, ``net`` and the base; the admin, API,
checks, MCP and commands import this; the models never do.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.apps import apps
from django.contrib.auth import get_user_model
from django.http import QueryDict

from . import conf, crypto
from .exceptions import WebtoolsConfigurationError
from .runtime import Ingesters, Plugin, PluginSetup, Registry, Tool, Turn, TurnState, scoped, secret_fields
from .signals import send_call_signals
from .stores import DjangoCache, DjangoStore

logger = logging.getLogger("webtools.host")


def get_plugins() -> dict[str, Plugin]:
    """The plugins listed in ``WEBTOOLS["PLUGINS"]``, by id, in the listed order."""
    return apps.get_app_config("webtools").plugins


def get_plugin(plugin_id: str) -> Plugin | None:
    return get_plugins().get(plugin_id)


# -- settings forms with write-only secrets ---------------------------------------------------------

ShowWhen = Mapping[str, tuple[str, tuple[str, ...]]]


def applies(name: str, values: Mapping[str, Any], show_when: ShowWhen) -> bool:
    """Whether field ``name`` applies under ``values`` (its show-when rule holds, or it has none)."""
    rule = show_when.get(name)
    return rule is None or str(values.get(rule[0]) or "") in rule[1]


def secret_key(name: str, values: Mapping[str, Any], show_when: ShowWhen) -> str:
    """Where a secret (or a plain value kept per scope) is stored: ``api_key@brave`` for one that depends
    on another field (one key per engine), the plain name otherwise."""
    rule = show_when.get(name)
    return scoped(name, values.get(rule[0]) or "") if rule else name


def kept_values(stored_values: Mapping[str, Any], names: Iterable[str], show_when: ShowWhen) -> dict[str, Any]:
    """The plain values of ``names`` kept per scope (``base_url@searxng``) in ``stored_values``; the one
    in force, stored under its plain name too, counts for the scope it was saved with."""
    names = {name for name in names if name in show_when}
    out = {key: value for key, value in stored_values.items() if "@" in key and key.partition("@")[0] in names}
    for name in names:
        if stored_values.get(name) and applies(name, stored_values, show_when):
            out[secret_key(name, stored_values, show_when)] = stored_values[name]
    return out


def scope_secrets(stored: Mapping[str, str], values: Mapping[str, Any], show_when: ShowWhen) -> dict[str, str]:
    """Stored secrets with each dependent secret under its scope: one saved before keys were kept per
    engine (a bare ``api_key``) belongs to the engine its row was saved with, or to none."""
    out: dict[str, str] = {}
    for name, value in stored.items():
        if "@" in name or name not in show_when:
            out[name] = value
        elif applies(name, values, show_when):
            out.setdefault(secret_key(name, values, show_when), value)
    return out


def secrets_in_force(stored: Mapping[str, str], values: Mapping[str, Any], show_when: ShowWhen) -> dict[str, str]:
    """The secrets that apply under ``values``, by field name: the chosen engine's key, never another's."""
    scoped = scope_secrets(stored, values, show_when)
    names = {key.partition("@")[0] for key in scoped}
    return {
        name: scoped[secret_key(name, values, show_when)]
        for name in names
        if applies(name, values, show_when) and secret_key(name, values, show_when) in scoped
    }


def secret_scopes(stored: Mapping[str, str], values: Mapping[str, Any], show_when: ShowWhen) -> dict[str, list[str]]:
    """For each dependent secret, the values of its controlling field that have one stored (engines)."""
    out: dict[str, list[str]] = {}
    for key in scope_secrets(stored, values, show_when):
        name, _, scope = key.partition("@")
        if name in show_when:
            out.setdefault(name, []).append(scope)
    return {name: sorted(scopes) for name, scopes in out.items()}


@dataclass
class ValidatedSettings:
    """A settings form run over stored and submitted data, split into plain values and secrets.

    ``values`` and ``secrets`` are what is in force (only fields that apply to the chosen values);
    ``stored_secrets`` is every secret to store, other engines' keys included, and ``kept_values`` every
    plain value kept per scope (``base_url@searxng``), other engines' included.
    """

    form: forms.Form
    values: dict[str, Any]
    secrets: dict[str, str]
    stored_secrets: dict[str, str] = field(default_factory=dict)
    kept_values: dict[str, Any] = field(default_factory=dict)

    @property
    def stored_values(self) -> dict[str, Any]:
        """The plain values to store: those in force and those kept per scope."""
        return {**self.values, **self.kept_values}

    @property
    def errors(self) -> dict[str, list[str]]:
        return {field: [str(e) for e in errs] for field, errs in self.form.errors.items()}

    def is_valid(self) -> bool:
        return self.form.is_valid()


def validate_settings(
    form_class: type[forms.Form],
    data: Mapping[str, Any],
    stored_secrets: Mapping[str, str] | None = None,
    clear: Iterable[str] = (),
    show_when: ShowWhen | None = None,
    stored_values: Mapping[str, Any] | None = None,
    kept: Iterable[str] = (),
    roles: Iterable[str] | None = None,
) -> ValidatedSettings:
    """Validate ``data`` with ``form_class``, a blank secret keeping its stored value unless cleared.

    The plugin's own ``clean()`` sees the secret that will be in force, so "a keyed engine needs a key"
    holds whether the key was typed now or stored before. Under ``show_when`` (the plugin's rules), a
    field that does not apply to the submitted values is ignored and not stored, and a dependent secret
    is kept per value of its controlling field: switching engine brings that engine's stored key or
    none. The plain fields named in ``kept`` (``Plugin.kept_per_scope``) are kept per value the same
    way, a blank one bringing back its stored value. ``stored_values`` are the values stored so far.

    The form's ``clean()`` may read three more attributes, set before it runs: ``kept``, every value and
    secret stored per scope (``api_key@brave``, ``base_url@searxng``), ``stored_values``, and ``roles``,
    the roles of the user whose settings these are (None for the operator's options).
    """
    show_when = show_when or {}
    stored_values = stored_values or {}
    stored = scope_secrets(stored_secrets or {}, stored_values, show_when)
    kept = [name for name in kept if name in show_when]
    stored_kept = kept_values(stored_values, kept, show_when)
    clear = set(clear)
    # A QueryDict (the admin's POST) keeps its lists for multi-value widgets; JSON arrives as a dict.
    data = data.copy() if isinstance(data, QueryDict) else dict(data)
    for name in form_class.base_fields:
        if not applies(name, data, show_when):
            data.pop(name, None)
    for name in kept:
        if applies(name, data, show_when) and not data.get(name):
            data[name] = stored_kept.get(secret_key(name, data, show_when), "")
    typed = []
    for name in secret_fields(form_class):
        if not applies(name, data, show_when):
            continue
        if name in clear:
            data[name] = ""
        elif not data.get(name):
            data[name] = stored.get(secret_key(name, data, show_when), "")
        else:
            typed.append(name)
    form = form_class(data=data)
    form.kept = {**stored_kept, **{key: value for key, value in stored.items() if "@" in key}}
    form.stored_values = dict(stored_values)
    form.roles = None if roles is None else frozenset(roles)
    values: dict[str, Any] = {}
    secrets: dict[str, str] = {}
    if form.is_valid() and typed:
        # Without a usable encryption key a new secret cannot be stored: say so on its field, not as a 500.
        problem = crypto.check_keys()
        if problem:
            for name in typed:
                form.add_error(name, f"This cannot be saved yet. {problem}")
    if not form.is_valid():
        return ValidatedSettings(form, values, secrets, dict(stored), stored_kept)
    secret_names = set(secret_fields(form_class))
    to_store, to_keep = dict(stored), dict(stored_kept)
    for name, value in form.cleaned_data.items():
        if not applies(name, form.cleaned_data, show_when):
            continue
        if name in secret_names:
            key = secret_key(name, form.cleaned_data, show_when)
            to_store.pop(key, None)
            if value:
                secrets[name] = to_store[key] = value
        else:
            values[name] = value
            if name in kept:
                key = secret_key(name, form.cleaned_data, show_when)
                to_keep.pop(key, None)
                if value:
                    to_keep[key] = value
    return ValidatedSettings(form, values, secrets, to_store, to_keep)


def scoped_fields(plugin: Plugin) -> tuple[str, list[str]] | None:
    """For a plugin that keeps values per scope (``Plugin.kept_per_scope``): the controlling field and
    the fields kept per value of it (web search: ``engine``; ``api_key``, ``base_url``, ``cx``); else None."""
    if not plugin.kept_per_scope or plugin.options_form is None:
        return None
    # The controller is that of the plain fields kept per scope; a secret kept per value of another field
    # (web search's reranker key, per reranker) is not on that page.
    controllers = {plugin.show_when[name][0] for name in plugin.kept_per_scope if name in plugin.show_when}
    if len(controllers) != 1:
        return None
    controller = controllers.pop()
    secrets = set(secret_fields(plugin.options_form))
    names = [
        name for name in plugin.options_form.base_fields
        if plugin.show_when.get(name, ("",))[0] == controller and (name in plugin.kept_per_scope or name in secrets)
    ]
    return controller, names


def validate_scope(
    plugin: Plugin, scope: str, data: Mapping[str, Any], stored_values: Mapping[str, Any],
    stored_secrets: Mapping[str, str],
) -> ValidatedSettings:
    """What ``data`` gives one scope (an engine's key, base URL and fields), validated by the plugin's
    form as if that scope were chosen, without changing what is in force: the result's ``stored_values``
    are ``stored_values`` with the scope's kept values, its ``stored_secrets`` every secret with the
    scope's. A blank field keeps what the scope had."""
    controller, names = scoped_fields(plugin)
    in_force = {key: value for key, value in stored_values.items() if key not in names}
    typed = {name: data.get(name) or "" for name in names}
    checked = validate_settings(
        plugin.options_form, {**plugin.default_options(), **in_force, controller: scope, **typed}, stored_secrets,
        show_when=plugin.show_when, stored_values=stored_values, kept=plugin.kept_per_scope,
    )
    return ValidatedSettings(checked.form, dict(stored_values), {}, checked.stored_secrets, checked.kept_values)


# -- options ----------------------------------------------------------------------------------------


@dataclass
class LoadedOptions:
    """A plugin's options as a turn uses them."""

    values: dict[str, Any]
    secrets: dict[str, str]
    configured: bool
    errors: dict[str, list[str]]
    #: Whether the operator ever saved these options (a row the admin created on first view is not).
    saved: bool = True
    #: Every plain value and secret kept per scope (``base_url@searxng``, ``api_key@brave``), those of
    #: scopes not in force included (``Plugin.kept_per_scope``).
    kept_values: dict[str, Any] = field(default_factory=dict)
    kept_secrets: dict[str, str] = field(default_factory=dict)

    @property
    def effective(self) -> dict[str, Any]:
        """What the plugin's ``setup`` and ``check`` get: the kept values and secrets under their scoped
        names, and those in force under their own."""
        return {**self.kept_values, **self.kept_secrets, **self.values, **self.secrets}


def load_options(plugin: Plugin, row=None) -> LoadedOptions:
    """The plugin's stored options, validated.

    Options never saved are the form's defaults: ``configured`` when those validate (web fetch works
    out of the box), not when the operator must choose something (web search's engine). Saved options
    that no longer validate fall back to the defaults with ``configured=False``; a system check
    reports why.
    """
    if plugin.options_form is None:
        return LoadedOptions({}, {}, True, {})
    if row is None:
        from .models import PluginOptions

        row = PluginOptions.objects.filter(plugin=plugin.id).first()
    defaults = plugin.default_options()
    if row is None or not (row.values or row.encrypted_secrets):
        checked = validate_settings(plugin.options_form, defaults, show_when=plugin.show_when)
        if checked.is_valid():
            return LoadedOptions(checked.values, {}, True, {}, saved=False)
        return LoadedOptions(defaults, {}, False, checked.errors, saved=False)
    try:
        stored_secrets = row.get_secrets()
    except WebtoolsConfigurationError as err:
        return LoadedOptions(defaults, {}, False, {"__all__": [str(err)]})
    return read_options(plugin, row.values, stored_secrets)


def read_options(plugin: Plugin, values: Mapping[str, Any], stored_secrets: Mapping[str, str]) -> LoadedOptions:
    """Saved option ``values`` and decrypted ``stored_secrets``, validated, as a turn uses them (plain
    Python: ``load_options`` reads them from the database)."""
    defaults = plugin.default_options()
    checked = validate_settings(
        plugin.options_form, {**defaults, **values}, stored_secrets, show_when=plugin.show_when,
        stored_values=values, kept=plugin.kept_per_scope,
    )
    if checked.is_valid():
        scoped_secrets = {key: value for key, value in checked.stored_secrets.items() if "@" in key}
        return LoadedOptions(
            checked.values, checked.secrets, True, {}, kept_values=checked.kept_values, kept_secrets=scoped_secrets
        )
    return LoadedOptions(defaults, {}, False, checked.errors)


def build_registry(options: Mapping[str, LoadedOptions] | None = None) -> tuple[Registry, Ingesters, dict]:
    """Let every listed plugin register its tools and ingesters under its current options."""
    registry, ingesters = Registry(), Ingesters()
    loaded: dict[str, LoadedOptions] = {}
    rows = _option_rows() if options is None else {}
    for plugin_id, plugin in get_plugins().items():
        opts = options[plugin_id] if options and plugin_id in options else load_options(plugin, rows.get(plugin_id))
        loaded[plugin_id] = opts
        plugin.setup(PluginSetup(plugin_id, opts.effective, registry, ingesters, configured=opts.configured,
                                 saved=opts.saved))
    return registry, ingesters, loaded


def _option_rows() -> dict:
    from .models import PluginOptions

    return {row.plugin: row for row in PluginOptions.objects.filter(plugin__in=list(get_plugins()))}


# -- users ------------------------------------------------------------------------------------------


def user_roles(user) -> frozenset[str]:
    """``user`` for any authenticated user, ``staff``, ``superuser``, and each of the user's groups."""
    if user is None or not getattr(user, "is_authenticated", False):
        return frozenset()
    roles = {"user"}
    if user.is_staff:
        roles.add("staff")
    if user.is_superuser:
        roles.add("superuser")
    roles.update(user.groups.values_list("name", flat=True))
    return frozenset(roles)


def tool_choices(user) -> dict[str, bool]:
    from .models import UserToolSetting

    if user is None or not getattr(user, "is_authenticated", False):
        return {}
    return dict(UserToolSetting.objects.filter(user=user).values_list("tool", "enabled"))


def user_settings(user) -> dict[str, dict[str, Any]]:
    """The user's settings of each plugin as a turn uses them: the values and secrets that apply to
    the user's choices (the chosen engine's key, never another's). A row no key opens counts as empty."""
    return {plugin_id: effective for plugin_id, (effective, _all) in _user_rows(user).items()}


def _user_rows(user) -> dict[str, tuple[dict[str, Any], list[str]]]:
    """Plugin id -> (settings in force, every stored secret of the row, for masking)."""
    from .models import UserPluginSettings

    if user is None or not getattr(user, "is_authenticated", False):
        return {}
    out = {}
    for row in UserPluginSettings.objects.filter(user=user):
        plugin = get_plugin(row.plugin)
        show_when = plugin.show_when if plugin else {}
        values = {k: v for k, v in row.values.items() if applies(k, row.values, show_when)}
        try:
            stored = row.get_secrets()
        except WebtoolsConfigurationError:
            logger.warning("Settings of plugin %s for user %s cannot be decrypted; ignored.", row.plugin, user.pk)
            stored = {}
        out[row.plugin] = ({**values, **secrets_in_force(stored, row.values, show_when)}, list(stored.values()))
    return out


def available_tools(user, registry: Registry | None = None) -> list[tuple[Tool, bool]]:
    """The tools ``user`` may have in a turn, each with whether it is on for them now: the tools on for
    them and those they may switch. A host offers these as per-chat switches and passes the chosen ones
    as ``start_turn(requested_tools=...)``; it never offers a tool outside this list."""
    if registry is None:
        registry = build_registry()[0]
    choices = tool_choices(user)
    out = []
    for tool in registry.tools():
        enabled = tool.is_enabled(choices.get(tool.name))
        if enabled or tool.user_toggle:
            out.append((tool, enabled))
    return out


# -- turns ------------------------------------------------------------------------------------------


def http_clients(user_agent: str):
    """The guarded client for untrusted URLs and the plain one for operator-set URLs."""
    from .net import client_for

    policy = conf.get_setting("ADDRESS_POLICY")
    if isinstance(policy, str):
        from django.utils.module_loading import import_string

        policy = import_string(policy)
    allowed = conf.get_setting("ALLOW_ADDRESSES") or []
    if allowed:
        from .net import DEFAULT_POLICY

        try:
            policy = (policy or DEFAULT_POLICY).with_allow_list(allowed)
        except ValueError as err:  # the system check webtools.E010 says so first
            raise WebtoolsConfigurationError(f'WEBTOOLS["ALLOW_ADDRESSES"]: {err}') from None
    allow_private = bool(conf.get_setting("ALLOW_PRIVATE_NETWORKS"))
    proxies = conf.get_setting("PROXIES") or {}
    guarded = client_for(allow_private, policy=policy, user_agent=user_agent, proxy=proxies.get("fetch"))
    plain = client_for(True, user_agent=user_agent, proxy=proxies.get("engines"))
    return guarded, plain


def start_turn(
    user,
    *,
    conversation: str = "",
    requested_tools: Iterable[str] | None = None,
    supports_tools: bool = True,
    messages: Iterable[str] = (),
    refresh_seconds: float | None = None,
    **carried: Any,
) -> Turn:
    """Start a turn for ``user``: the host's entry point.

    ``requested_tools`` given (even empty) means exactly those tools; absent means the user's enabled
    tools. ``messages`` is what the user wrote in this conversation (text): the URLs in it may be
    fetched (``turn.observe(text)`` adds more later). Raises ``webtools.exceptions.TurnError`` when
    the request names an unknown tool, or names tools for a model without tool support.

    ``carried`` is what a door that keeps a conversation across turns hands from one to the next:
    ``urls``, ``turn_cache`` and ``uses`` (see ``Turn``); the MCP door starts a turn per call this way,
    so every call reads the user's roles and the operator's options afresh.

    A turn that lasts reads the user's roles, settings and switches and the operator's options again
    before a call once ``refresh_seconds`` (default ``WEBTOOLS["TURN_REFRESH_SECONDS"]``, 120) have
    passed; 0 reads them before every call.
    """
    state, ingesters = turn_state(user)
    agent = conf.user_agent()
    guarded, plain = http_clients(agent)
    return Turn(
        registry=state.registry,
        ingesters=ingesters,
        user=str(user.pk) if user is not None and user.pk is not None else "",
        conversation=str(conversation or ""),
        roles=state.roles,
        choices=state.choices,
        requested_tools=requested_tools,
        supports_tools=supports_tools,
        fetch=guarded,
        http=plain,
        settings=state.settings,
        secrets=state.secrets,
        user_agent=agent,
        on_call=send_call_signals,
        messages=messages,
        limits=DjangoStore(),
        shared_cache=DjangoCache(),
        refresh=lambda: turn_state(user)[0],
        refresh_seconds=conf.get_setting("TURN_REFRESH_SECONDS") if refresh_seconds is None else refresh_seconds,
        **carried,
    )


def turn_state(user) -> tuple[TurnState, Ingesters]:
    """What a turn of ``user`` reads from the database: the registry under the operator's options, the
    user's roles, settings and tool switches, and every secret to mask (the operator's and the user's,
    other engines' included). ``start_turn`` reads it at the start and again when the turn refreshes."""
    if user is not None and getattr(user, "pk", None) is not None:
        # Read again: a long turn must see the groups and staff flag as they are now.
        fresh = get_user_model()._default_manager.filter(pk=user.pk).first()
        user = fresh if fresh is not None else user
    registry, ingesters, loaded = build_registry()
    rows = _user_rows(user)
    settings_by_plugin = {plugin_id: effective for plugin_id, (effective, _all) in rows.items()}
    secrets = [v for opts in loaded.values() for v in (*opts.secrets.values(), *opts.kept_secrets.values())]
    secrets += [v for _effective, stored in rows.values() for v in stored if v]
    state = TurnState(registry=registry, roles=user_roles(user), settings=settings_by_plugin,
                      choices=tool_choices(user), secrets=frozenset(secrets))
    return state, ingesters
