"""The API's OpenAPI schema and its readable reference (Swagger UI), independent of the host's settings.

The schema covers webtools' own endpoints only, its title and version come from the package, and its
views carry their schema class: the host needs neither ``SPECTACULAR_SETTINGS`` nor
``DEFAULT_SCHEMA_CLASS``, nor ``drf_spectacular`` in ``INSTALLED_APPS``. Swagger UI's files are served from
the host's static files (``drf_spectacular_sidecar``), never from a CDN.
"""
from __future__ import annotations

from django.shortcuts import render
from django.views import View
from drf_spectacular.views import SpectacularAPIView

import webtools

TITLE = "webtools settings API"


def only_webtools(endpoints: list, **kwargs) -> list:
    """drf-spectacular preprocessing hook: keep the settings API's endpoints, not the host's."""
    from .views import SettingsAPIView

    return [
        (path, regex, method, callback)
        for path, regex, method, callback in endpoints
        if issubclass(getattr(callback, "cls", object), SettingsAPIView)
    ]


class SchemaView(SpectacularAPIView):
    """The OpenAPI 3 schema of the settings API: YAML, or JSON with ?format=json."""

    custom_settings = {
        "TITLE": TITLE,
        "DESCRIPTION": (
            "Each user's tool switches and plugin settings. Every endpoint needs a signed-in user "
            "(session or DRF token); secret values are write-only and never returned."
        ),
        "VERSION": webtools.__version__,
        "PREPROCESSING_HOOKS": ["webtools.api.docs.only_webtools"],
    }


class ReferenceView(View):
    """The settings API reference: Swagger UI over ``SchemaView``'s schema."""

    def get(self, request):
        return render(request, "webtools/api_docs.html", {"title": TITLE})
