"""URLs a host includes: ``path("", include("webtools.urls"))``."""
from django.urls import path

app_name = "webtools"

urlpatterns: list = []
