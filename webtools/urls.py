"""URLs a host includes: ``path("", include("webtools.urls"))``.

``api/plugins/...`` is the settings API, ``api/schema/`` its OpenAPI schema, and
``webtools/settings/`` the settings page.
"""
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from . import views

app_name = "webtools"

urlpatterns = [
    path("api/", include("webtools.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("webtools/settings/", views.settings_page, name="settings"),
]
