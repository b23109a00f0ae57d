"""URLs a host includes: ``path("", include("webtools.urls"))``.

``api/plugins/...`` is the settings API, ``api/schema/`` its OpenAPI schema, ``api/docs/`` its
readable reference, and ``webtools/settings/`` the settings page.

Part of the Django shell: imports ``api`` and ``views`` only.
"""
from django.urls import include, path

from . import views
from .api.docs import ReferenceView, SchemaView

app_name = "webtools"

urlpatterns = [
    path("api/", include("webtools.api.urls")),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/docs/", ReferenceView.as_view(), name="api-docs"),
    path("webtools/settings/", views.settings_page, name="settings"),
]
