"""The webtools AppConfig: loads the plugins listed in settings and registers the system checks.

Part of the Django shell. Imports the base, the runtime and ``checks``; plugins only by the dotted
paths in ``WEBTOOLS["PLUGINS"]``, never by name.
"""
from __future__ import annotations

from django.apps import AppConfig
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _

from .exceptions import WebtoolsConfigurationError


class WebtoolsConfig(AppConfig):
    name = "webtools"
    verbose_name = _("Web tools")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the checks)
        from .conf import get_setting
        from .runtime import Plugin

        self.plugins: dict[str, Plugin] = {}
        for path in get_setting("PLUGINS"):
            try:
                cls = import_string(path) if isinstance(path, str) else path
            except ImportError as err:
                raise WebtoolsConfigurationError(
                    f'WEBTOOLS["PLUGINS"] lists {path!r}, which cannot be imported.'
                ) from err
            plugin = cls() if isinstance(cls, type) else cls
            if not isinstance(plugin, Plugin) or not plugin.id:
                raise WebtoolsConfigurationError(f"{path!r} is not a webtools Plugin with an id.")
            if plugin.id in self.plugins:
                raise WebtoolsConfigurationError(f"Two plugins have the id {plugin.id!r}.")
            self.plugins[plugin.id] = plugin
