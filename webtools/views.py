"""The settings page: each plugin's tool switches and settings form, saved through the API.

Part of the Django shell: imports nothing of webtools (the page reads the API).
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie


@login_required
@ensure_csrf_cookie
def settings_page(request):
    """The page is a shell; ``webtools/settings.js`` renders it from ``GET /api/plugins/settings``."""
    return render(request, "webtools/settings.html")
