"""URLs of the demo host: its own pages, the admin, and webtools mounted as a host would mount it."""
from django.contrib import admin
from django.urls import include, path
from django.views.generic import TemplateView

from . import chat

urlpatterns = [
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("chat/", chat.chat_page, name="chat"),
    path("chat/stream/", chat.chat_stream, name="chat-stream"),
    path("admin/", admin.site.urls),
    path("", include("webtools.urls")),  # also webtools/login/, where any user signs in (LOGIN_URL)
]
