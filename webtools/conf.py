"""The one reader of ``django.conf.settings``: every webtools setting, its default, and its error.

A host project configures webtools with one dict::

    WEBTOOLS = {
        "PLUGINS": [...],                 # dotted paths of Plugin classes
        "ENCRYPTION_KEYS": ["..."],       # Fernet keys; the first encrypts, all decrypt
        "ALLOW_PRIVATE_NETWORKS": False,  # True turns the SSRF guard off
        "ALLOW_ADDRESSES": ["10.20.0.0/16", "wiki.intranet.example"],  # private addresses let through
        "APP_NAME": "webtools",           # product token in the User-Agent and robots.txt
        "PUBLIC_URL": "",                 # where operators of fetched sites can read about the bot
        "CACHE": "default",               # Django cache alias of the limits' counters and the shared cache
        "PROXIES": {"fetch": "...", "engines": "..."},  # outbound proxies (docs/deploy.md)
        "MCP": {...},                     # the MCP door's options (docs/mcp.md); ``mcp_setting`` reads them
    }

Part of the base (docs/architecture.md): imports nothing of webtools, and every part may import it.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

DEFAULTS: dict[str, Any] = {
    "PLUGINS": [
        "webtools.plugins.web_search.WebSearchPlugin",
        "webtools.plugins.web_fetch.WebFetchPlugin",
        "webtools.plugins.pdf.PdfPlugin",
    ],
    "ENCRYPTION_KEYS": [],
    "ALLOW_PRIVATE_NETWORKS": False,
    "APP_NAME": "webtools",
    "PUBLIC_URL": "",
    # An ``webtools.net.AddressPolicy`` (or its dotted path) replacing the default table; for tests
    # that let loopback servers stand in for public hosts. Never set in production.
    "ADDRESS_POLICY": None,
    # Private addresses the tools may reach in production: IP addresses, networks in CIDR notation and
    # exact host names, checked after resolution (``webtools.net.AllowList``; docs/security.md).
    "ALLOW_ADDRESSES": [],
    # Engine id -> endpoint URL replacing the engine's public endpoint, for a proxy or a recorded
    # engine in tests. Admin-set URLs: reached with the plain client.
    "ENGINE_URLS": {},
    # Rendering service id (``firecrawl``, ``jina``) -> base URL replacing the service's public one, for a
    # proxy, a self-hosted instance or a recorded service in tests. Admin-set URLs: the plain client.
    "RENDER_SERVICE_URLS": {},
    # Rerank service id (``jina``, ``cohere``) -> endpoint URL replacing the service's public one, for a
    # proxy or a recorded service in tests. Admin-set URLs: the plain client.
    "RERANK_URLS": {},
    # The alias in CACHES that keeps per-minute windows, slots, cool-downs and the shared cache of
    # results. Redis (or Memcached) when several workers serve: see docs/deploy.md.
    "CACHE": "default",
    # Outbound proxies: "fetch" carries every request for a URL from a user or the model (pages,
    # robots.txt, the renderer's traffic), "engines" every request to an operator-set endpoint (search
    # engines, rendering services). http://, https:// or socks5:// URLs, credentials in the user info.
    "PROXIES": {},
    # The MCP door (docs/mcp.md); a host's ``WEBTOOLS["MCP"]`` overrides any of them.
    "MCP": {
        # Ask the person at the client before fetching a URL the session has not seen (elicitation);
        # False: such a URL is refused, as on every other door.
        "CONFIRM_URLS": True,
        # Open streamable HTTP sessions per user; a new one closes that user's oldest idle session, or
        # is answered 429 when all of them are busy.
        "SESSIONS_PER_USER": 8,
        # Seconds a session lives however busy it is (its idle timeout ends it sooner).
        "SESSION_MAX_AGE": 8 * 60 * 60,
        # Seconds of the window in which a tool's ``max_uses`` counts a user's calls, across sessions.
        "USES_WINDOW": 10 * 60,
        # Seconds a stateless (2026-07-28) conversation's URLs and turn cache are kept in Django's cache
        # after its last call.
        "CONVERSATION_TTL": 30 * 60,
    },
    # Seconds after which a turn reads the user's roles, settings and tool switches and the operator's
    # options again before its next call (0: before every call), so a long turn (an MCP session, an
    # agent's long loop) never keeps a role or a key the operator took away.
    "TURN_REFRESH_SECONDS": 120,
}

_MISSING = object()


def get_setting(name: str, default: Any = _MISSING) -> Any:
    """Return ``settings.WEBTOOLS[name]``, else the documented default.

    Raises ``ImproperlyConfigured`` naming the key to set when a setting has no default.
    """
    user = getattr(settings, "WEBTOOLS", {}) or {}
    if not isinstance(user, dict):
        raise ImproperlyConfigured("settings.WEBTOOLS must be a dict.")
    if name in user:
        return user[name]
    if default is not _MISSING:
        return default
    if name in DEFAULTS:
        return DEFAULTS[name]
    raise ImproperlyConfigured(f'Set settings.WEBTOOLS["{name}"].')


def mcp_setting(name: str) -> Any:
    """``settings.WEBTOOLS["MCP"][name]``, else its default in ``DEFAULTS["MCP"]``."""
    value = get_setting("MCP", {})
    if not isinstance(value, dict):
        raise ImproperlyConfigured('settings.WEBTOOLS["MCP"] must be a dict.')
    return value.get(name, DEFAULTS["MCP"][name])


def debug() -> bool:
    """Django's ``DEBUG``: the checks are stricter without it."""
    return bool(settings.DEBUG)


def user_agent() -> str:
    """``<app name> (+<public URL>)``, the User-Agent of every request webtools makes."""
    name = get_setting("APP_NAME")
    url = get_setting("PUBLIC_URL")
    return f"{name} (+{url})" if url else str(name)
