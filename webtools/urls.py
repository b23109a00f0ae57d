"""URLs a host includes: ``path("", include("webtools.urls"))``.

``api/plugins/...`` is the settings API, ``api/schema/`` its OpenAPI schema, ``api/docs/`` its
readable reference, ``webtools/settings/`` the settings page, and ``webtools/login/`` and
``webtools/logout/`` sign users in and out (for hosts without a login page of their own: see
``webtools.views``).

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
    path("webtools/login/", views.LoginView.as_view(), name="login"),
    path("webtools/logout/", views.LogoutView.as_view(), name="logout"),
]
