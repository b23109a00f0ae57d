"""The settings API's routes (mounted under ``api/`` by ``webtools.urls``)."""
from django.urls import path

from . import views

urlpatterns = [
    path("plugins/settings", views.PluginSettingsListView.as_view(), name="plugin-settings"),
    path("plugins/<str:plugin_id>/tools/<str:tool_name>", views.ToolSwitchView.as_view(), name="tool-switch"),
    path("plugins/<str:plugin_id>/settings", views.UserPluginSettingsView.as_view(), name="user-plugin-settings"),
]
