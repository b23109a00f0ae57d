"""URLs of the demo host: its own pages, the admin, and webtools mounted as a host would mount it."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import TemplateView

from . import chat

urlpatterns = [
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("chat/", chat.chat_page, name="chat"),
    path("chat/stream/", chat.chat_stream, name="chat-stream"),
    # Any user signs in here (the admin's login admits staff only) to reach the chat and the settings page.
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("webtools.urls")),
]
