"""The settings page, and the sign-in and sign-out pages for hosts without their own.

The settings page is each plugin's tool switches and settings form, saved through the API. It serves
signed-in users, and sends the others to the host's ``LOGIN_URL``. A fresh ``startproject`` host has
no login page for ordinary users (the admin's admits staff only), so webtools brings one:
``webtools:login`` (Django's ``LoginView`` with webtools' template), which the README's settings block
names as ``LOGIN_URL`` unless the host has its own, and ``webtools:logout``.

Part of the Django shell: imports nothing of webtools (the page reads the API).
"""
from __future__ import annotations

from django.conf import global_settings
from django.conf import settings as django_settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie


@login_required
@ensure_csrf_cookie
def settings_page(request):
    """The page is a shell; ``webtools/settings.js`` renders it from ``GET /api/plugins/settings``."""
    return render(request, "webtools/settings.html")


class LoginView(auth_views.LoginView):
    """Sign-in for every active user, styled like the settings page. After signing in: the ``next``
    page, else the host's ``LOGIN_REDIRECT_URL`` when it set one, else the settings page (Django's
    default, ``/accounts/profile/``, is a page no fresh host has)."""

    template_name = "webtools/login.html"

    def get_default_redirect_url(self) -> str:
        if django_settings.LOGIN_REDIRECT_URL != global_settings.LOGIN_REDIRECT_URL:
            return super().get_default_redirect_url()
        return reverse("webtools:settings")


class LogoutView(auth_views.LogoutView):
    """Sign-out (a POST, as Django requires): then the host's ``LOGOUT_REDIRECT_URL`` when it set one,
    else a page that says so and links the sign-in page."""

    template_name = "webtools/logged_out.html"
