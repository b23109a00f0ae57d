"""System checks: what an operator must fix before webtools can run safely.

| id | level | what |
|---|---|---|
| webtools.E001 | error | an encryption key is not a valid Fernet key, or none is set while DEBUG is off |
| webtools.W002 | warning | no encryption key while DEBUG is on, and a plugin has secrets (they cannot be saved) |
| webtools.W001 | warning | ALLOW_PRIVATE_NETWORKS is on while DEBUG is off |
| webtools.E002 | error | a plugin's saved options no longer validate |
| webtools.E003 | error | the tool registry cannot be built (two plugins register one tool name) |
| webtools.W015 | warning | saved options this host cannot honour (``Plugin.check``: a program or key they need) |
| webtools.W020 | warning | DEBUG is off and the limits' cache is per process or not atomic (locmem, db, file) |
| webtools.E004 | error | ``WEBTOOLS["PROXIES"]`` is not a dict of ``fetch`` and ``engines`` proxy URLs it can use |
| webtools.E010 | error | ``WEBTOOLS["ALLOW_ADDRESSES"]`` is not a list of IP addresses, CIDR networks and host names |
| webtools.W030 | warning | ``WEBTOOLS["PUBLIC_URL"]`` is still an example address (the README's ``chat.example.com``) |

Part of the Django shell: may import the host, ``models``, the runtime, ``net`` and the base (the host and
the models inside the checks, which run after the app registry is ready).
"""
from __future__ import annotations

from django.core.checks import Error, Tags, Warning, register
from django.db import DatabaseError

from . import crypto
from .conf import debug, get_setting
from .exceptions import WebtoolsConfigurationError


@register(Tags.security, deploy=False)
def check_encryption_keys(app_configs=None, **kwargs):
    """A bad key is always an error; a missing one matters as soon as a plugin has a secret to save."""
    problem = crypto.check_keys()
    if problem is None:
        return []
    if crypto.configured_keys():
        return [Error(problem, hint=crypto.KEYS_HINT, id="webtools.E001")]
    holders = _plugins_with_secrets()
    if not holders:
        return []
    if not debug():
        return [Error(problem, hint=crypto.KEYS_HINT, id="webtools.E001")]
    return [
        Warning(
            f"No encryption key is set, so the API keys of {', '.join(holders)} cannot be saved "
            "(the admin and the settings API refuse them).",
            hint=crypto.KEYS_HINT,
            id="webtools.W002",
        )
    ]


def _plugins_with_secrets() -> list[str]:
    """Names of the listed plugins whose options or user settings have a secret field."""
    from .host import get_plugins
    from .runtime import secret_fields

    names = []
    for plugin in get_plugins().values():
        forms = (plugin.options_form, plugin.user_settings_form(plugin.default_options()))
        if any(form is not None and secret_fields(form) for form in forms):
            names.append(str(plugin.name))
    return names


@register(Tags.security)
def check_private_networks(app_configs=None, **kwargs):
    if get_setting("ALLOW_PRIVATE_NETWORKS") and not debug():
        return [
            Warning(
                "ALLOW_PRIVATE_NETWORKS is on: URLs from users and the model can reach private networks, "
                "loopback and cloud metadata addresses from this server.",
                hint="Turn it off unless every user of this server may reach your internal network.",
                id="webtools.W001",
            )
        ]
    return []


#: RFC 2606's example domains: a PUBLIC_URL there is a placeholder nobody changed.
_EXAMPLE_DOMAINS = ("example.com", "example.org", "example.net")


@register()
def check_public_url(app_configs=None, **kwargs):
    """The User-Agent points site owners at ``PUBLIC_URL``; the README's example address tells them nothing."""
    from urllib.parse import urlsplit

    url = str(get_setting("PUBLIC_URL") or "")
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        host = ""
    if host and any(host == d or host.endswith("." + d) for d in _EXAMPLE_DOMAINS):
        return [
            Warning(
                f'WEBTOOLS["PUBLIC_URL"] is {url!r}, an example address: site owners who read the User-Agent '
                "cannot learn who your bot is.",
                hint="Set it to a page of yours that says what the bot is and how to reach you.",
                id="webtools.W030",
            )
        ]
    return []


@register(Tags.security)
def check_allow_addresses(app_configs=None, **kwargs):
    """Every entry of ``ALLOW_ADDRESSES`` can be read, all of the bad ones named at once."""
    from .net import AllowList

    entries = get_setting("ALLOW_ADDRESSES") or []
    hint = 'WEBTOOLS["ALLOW_ADDRESSES"] = ["10.20.0.0/16", "192.168.1.7", "wiki.intranet.example"]'
    if isinstance(entries, str) or not isinstance(entries, (list, tuple)):
        return [Error('WEBTOOLS["ALLOW_ADDRESSES"] must be a list.', hint=hint, id="webtools.E010")]
    try:
        AllowList(entries)
    except ValueError as err:
        return [Error(f'WEBTOOLS["ALLOW_ADDRESSES"]: {err}', hint=hint, id="webtools.E010")]
    return []


@register(Tags.security)
def check_proxies(app_configs=None, **kwargs):
    """Every outbound proxy URL can be used; the messages never repeat a URL (it may hold a password)."""
    from .net.proxy_upstream import UpstreamProxy

    proxies = get_setting("PROXIES") or {}
    hint = 'WEBTOOLS["PROXIES"] = {"fetch": "http://user:password@proxy:3128", "engines": "socks5://proxy:1080"}'
    if not isinstance(proxies, dict):
        return [Error('WEBTOOLS["PROXIES"] must be a dict.', hint=hint, id="webtools.E004")]
    errors = []
    for key in sorted(set(proxies) - {"fetch", "engines"}, key=str):
        errors.append(Error(f'WEBTOOLS["PROXIES"] has an unknown key {key!r}: only "fetch" and "engines" are read.',
                            hint=hint, id="webtools.E004"))
    for key in ("fetch", "engines"):
        if proxies.get(key):
            try:
                UpstreamProxy.read(proxies[key])
            except ValueError as err:
                errors.append(Error(f'WEBTOOLS["PROXIES"]["{key}"]: {err}', hint=hint, id="webtools.E004"))
    return errors


@register(Tags.database)
def check_plugin_options(app_configs=None, databases=None, **kwargs):
    """Saved options that no longer validate (a plugin's rules changed, a key was removed)."""
    if not databases:
        return []
    from .host import get_plugins, load_options
    from .models import PluginOptions

    errors = []
    try:
        rows = {row.plugin: row for row in PluginOptions.objects.all()}
    except DatabaseError:
        return []  # not migrated yet; migrate's own checks say so
    for plugin_id, plugin in get_plugins().items():
        row = rows.get(plugin_id)
        if row is None or plugin.options_form is None:
            continue
        loaded = load_options(plugin, row)
        if not loaded.saved:
            continue  # never saved: the plugin says "not set up yet" itself; nothing is broken
        for field, messages in loaded.errors.items():
            where = "" if field == "__all__" else f" {field}:"
            for message in messages:
                errors.append(
                    Error(
                        f"The options of {plugin.name} are invalid:{where} {message}",
                        hint="Correct them in the admin (Web tools › Plugin options).",
                        obj=plugin_id,
                        id="webtools.E002",
                    )
                )
    return errors


@register(Tags.database)
def check_plugin_environment(app_configs=None, databases=None, **kwargs):
    """Saved options that this host cannot honour (for example rendering without a browser)."""
    if not databases:
        return []
    from .host import get_plugins, load_options
    from .models import PluginOptions

    try:
        rows = {row.plugin: row for row in PluginOptions.objects.all()}
    except DatabaseError:
        return []
    warnings = []
    for plugin_id, plugin in get_plugins().items():
        row = rows.get(plugin_id)
        if row is None or plugin.options_form is None:
            continue
        loaded = load_options(plugin, row)
        if not loaded.saved or loaded.errors:
            continue
        for problem in plugin.check(loaded.effective):  # secrets included: whether a key is set
            warnings.append(Warning(problem, obj=plugin_id, id="webtools.W015",
                                    hint="Change the option in the admin (Web tools › Plugin options)."))
    return warnings


@register()
def check_registry(app_configs=None, databases=None, **kwargs):
    if not databases:
        return []
    from .host import build_registry

    try:
        build_registry()
    except WebtoolsConfigurationError as err:
        return [Error(str(err), id="webtools.E003")]
    except DatabaseError:
        return []
    return []


#: Cache backends whose counts are per process, or whose ``incr`` is not atomic across processes.
_UNSHARED_CACHES = {
    "django.core.cache.backends.locmem.LocMemCache": "keeps its counts in each worker process",
    "django.core.cache.backends.dummy.DummyCache": "keeps nothing",
    "django.core.cache.backends.db.DatabaseCache": "does not increment atomically",
    "django.core.cache.backends.filebased.FileBasedCache": "does not increment atomically",
}


@register(Tags.caches)
def check_limits_cache(app_configs=None, **kwargs):
    """The limits' per-minute windows, slots and cool-downs need one cache that every worker shares."""
    from django.conf import settings

    alias = get_setting("CACHE")
    backend = (getattr(settings, "CACHES", {}).get(alias) or {}).get("BACKEND", "")
    why = _UNSHARED_CACHES.get(backend)
    if why is None or debug():
        return []
    return [
        Warning(
            f"The cache {alias!r} ({backend.rsplit('.', 1)[-1]}) {why}, so with several workers the per-minute "
            "limits, concurrent-call limits and engine cool-downs do not hold.",
            hint="Use Redis (CACHE_URL=redis://...) or Memcached; see docs/deploy.md.",
            id="webtools.W020",
        )
    ]
