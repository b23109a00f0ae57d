"""The seam between the database and the plain-Python runtime.

Everything a turn needs from the database (the plugins' options, the user's roles, tool switches and
plugin settings, decrypted secrets) is read here, once, at turn start. Below this module nothing
imports a model.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django import forms
from django.apps import apps
from django.http import QueryDict

from . import conf, crypto
from .exceptions import WebtoolsConfigurationError
from .runtime import Ingesters, Plugin, PluginSetup, Registry, Turn, secret_fields
from .signals import send_call_signals

logger = logging.getLogger("webtools.host")


def get_plugins() -> dict[str, Plugin]:
    """The plugins listed in ``WEBTOOLS["PLUGINS"]``, by id, in the listed order."""
    return apps.get_app_config("webtools").plugins


def get_plugin(plugin_id: str) -> Plugin | None:
    return get_plugins().get(plugin_id)


# -- settings forms with write-only secrets ---------------------------------------------------------


@dataclass
class ValidatedSettings:
    """A settings form run over stored and submitted data, split into plain values and secrets."""

    form: forms.Form
    values: dict[str, Any]
    secrets: dict[str, str]

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
) -> ValidatedSettings:
    """Validate ``data`` with ``form_class``, a blank secret keeping its stored value unless cleared.

    The plugin's own ``clean()`` sees the secret that will be in force, so "a keyed engine needs a key"
    holds whether the key was typed now or stored before.
    """
    stored_secrets = stored_secrets or {}
    clear = set(clear)
    # A QueryDict (the admin's POST) keeps its lists for multi-value widgets; JSON arrives as a dict.
    data = data.copy() if isinstance(data, QueryDict) else dict(data)
    typed = []
    for name in secret_fields(form_class):
        if name in clear:
            data[name] = ""
        elif not data.get(name):
            data[name] = stored_secrets.get(name, "")
        else:
            typed.append(name)
    form = form_class(data=data)
    values: dict[str, Any] = {}
    secrets: dict[str, str] = {}
    if form.is_valid() and typed:
        # Without a usable encryption key a new secret cannot be stored: say so on its field, not as a 500.
        problem = crypto.check_keys()
        if problem:
            for name in typed:
                form.add_error(name, f"This cannot be saved yet. {problem}")
    if form.is_valid():
        secret_names = set(secret_fields(form_class))
        for name, value in form.cleaned_data.items():
            if name in secret_names:
                if value:
                    secrets[name] = value
            else:
                values[name] = value
    return ValidatedSettings(form, values, secrets)


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

    @property
    def effective(self) -> dict[str, Any]:
        return {**self.values, **self.secrets}


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
        checked = validate_settings(plugin.options_form, defaults)
        if checked.is_valid():
            return LoadedOptions(checked.values, {}, True, {}, saved=False)
        return LoadedOptions(defaults, {}, False, checked.errors, saved=False)
    try:
        stored_secrets = row.get_secrets()
    except WebtoolsConfigurationError as err:
        return LoadedOptions(defaults, {}, False, {"__all__": [str(err)]})
    checked = validate_settings(plugin.options_form, {**defaults, **row.values}, stored_secrets)
    if checked.is_valid():
        return LoadedOptions(checked.values, checked.secrets, True, {})
    return LoadedOptions(defaults, {}, False, checked.errors)


def build_registry(options: Mapping[str, LoadedOptions] | None = None) -> tuple[Registry, Ingesters, dict]:
    """Let every listed plugin register its tools and ingesters under its current options."""
    registry, ingesters = Registry(), Ingesters()
    loaded: dict[str, LoadedOptions] = {}
    rows = _option_rows() if options is None else {}
    for plugin_id, plugin in get_plugins().items():
        opts = options[plugin_id] if options and plugin_id in options else load_options(plugin, rows.get(plugin_id))
        loaded[plugin_id] = opts
        plugin.setup(PluginSetup(plugin_id, opts.effective, registry, ingesters, configured=opts.configured))
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
    """The user's settings of each plugin, secrets decrypted; a row no key opens counts as empty."""
    from .models import UserPluginSettings

    if user is None or not getattr(user, "is_authenticated", False):
        return {}
    out = {}
    for row in UserPluginSettings.objects.filter(user=user):
        try:
            out[row.plugin] = row.effective()
        except WebtoolsConfigurationError:
            logger.warning("Settings of plugin %s for user %s cannot be decrypted; ignored.", row.plugin, user.pk)
            out[row.plugin] = dict(row.values)
    return out


# -- turns ------------------------------------------------------------------------------------------


def http_clients(user_agent: str):
    """The guarded client for untrusted URLs and the plain one for operator-set URLs."""
    from .net import client_for

    policy = conf.get_setting("ADDRESS_POLICY")
    if isinstance(policy, str):
        from django.utils.module_loading import import_string

        policy = import_string(policy)
    allow_private = bool(conf.get_setting("ALLOW_PRIVATE_NETWORKS"))
    guarded = client_for(allow_private, policy=policy, user_agent=user_agent)
    plain = client_for(True, user_agent=user_agent)
    return guarded, plain


def start_turn(
    user,
    *,
    conversation: str = "",
    requested_tools: Iterable[str] | None = None,
    supports_tools: bool = True,
    messages: Iterable[str] = (),
) -> Turn:
    """Start a turn for ``user``: the host's entry point.

    ``requested_tools`` given (even empty) means exactly those tools; absent means the user's enabled
    tools. ``messages`` is what the user wrote in this conversation (text): the URLs in it may be
    fetched (``turn.observe(text)`` adds more later). Raises ``webtools.exceptions.TurnError`` when
    the request names an unknown tool, or names tools for a model without tool support.
    """
    registry, ingesters, loaded = build_registry()
    settings_by_plugin = user_settings(user)
    secrets = [v for opts in loaded.values() for v in opts.secrets.values()]
    for plugin_id, values in settings_by_plugin.items():
        plugin = get_plugin(plugin_id)
        form = plugin.user_settings_form(loaded[plugin_id].effective) if plugin else None
        names = secret_fields(form) if form else []
        secrets += [values[name] for name in names if values.get(name)]
    agent = conf.user_agent()
    guarded, plain = http_clients(agent)
    return Turn(
        registry=registry,
        ingesters=ingesters,
        user=str(user.pk) if user is not None and user.pk is not None else "",
        conversation=str(conversation or ""),
        roles=user_roles(user),
        choices=tool_choices(user),
        requested_tools=requested_tools,
        supports_tools=supports_tools,
        fetch=guarded,
        http=plain,
        settings=settings_by_plugin,
        secrets=secrets,
        user_agent=agent,
        on_call=send_call_signals,
        messages=messages,
    )
