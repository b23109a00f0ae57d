"""webtools' own sign-in and sign-out pages (``webtools:login``, ``webtools:logout``), for hosts that
have no login page for ordinary users: the README's settings block names them as ``LOGIN_URL``."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(django_user_model):
    return django_user_model.objects.create_user("reader", password="pw-reader-123")  # not staff


def test_an_ordinary_user_signs_in_and_reaches_the_settings_page(reader):
    client = Client()
    target = reverse("webtools:settings")
    sent = client.get(target)
    assert sent.status_code == 302 and sent["Location"] == f"{reverse('webtools:login')}?next={target}"
    page = client.get(sent["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    # Styled like the settings page: its stylesheet, its card and field classes, the primary button.
    assert "webtools/settings.css" in html and 'class="wt-plugin wt-login"' in html
    assert 'name="username"' in html and 'name="password"' in html and 'class="wt-primary"' in html
    assert f'name="next" value="{target}"' in html
    signed_in = client.post(sent["Location"], {"username": "reader", "password": "pw-reader-123", "next": target})
    assert signed_in.status_code == 302 and signed_in["Location"] == target
    settings_page = client.get(target)
    assert settings_page.status_code == 200 and b"Signed in as <strong>reader</strong>" in settings_page.content


def test_a_wrong_password_is_said_on_the_page(reader):
    page = Client().post(reverse("webtools:login"), {"username": "reader", "password": "wrong"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'class="wt-form-error" role="alert"' in html and "correct username and password" in html
    assert 'value="wrong"' not in html  # the password is never echoed


def test_without_next_the_settings_page_unless_the_host_set_login_redirect_url(reader, settings):
    client = Client()
    settings.LOGIN_REDIRECT_URL = "home"  # the demo host's own
    done = client.post(reverse("webtools:login"), {"username": "reader", "password": "pw-reader-123"})
    assert done["Location"] == reverse("home")
    from django.conf import global_settings

    # Django's default, /accounts/profile/: no such page in a fresh host.
    settings.LOGIN_REDIRECT_URL = global_settings.LOGIN_REDIRECT_URL
    client = Client()
    done = client.post(reverse("webtools:login"), {"username": "reader", "password": "pw-reader-123"})
    assert done["Location"] == reverse("webtools:settings")


def test_the_next_page_must_be_on_this_site(reader):
    done = Client().post(reverse("webtools:login"), {"username": "reader", "password": "pw-reader-123",
                                                     "next": "https://evil.example/"})
    assert done.status_code == 302 and "evil.example" not in done["Location"]


def test_signing_out_from_the_settings_page(reader, settings):
    client = Client(enforce_csrf_checks=True)
    client.force_login(reader)
    page = client.get(reverse("webtools:settings"))
    html = page.content.decode()
    assert f'action="{reverse("webtools:logout")}"' in html and ">Sign out</button>" in html
    assert client.get(reverse("webtools:logout")).status_code == 405  # a link cannot sign anyone out
    assert client.post(reverse("webtools:logout")).status_code == 403  # nor a form without the CSRF token
    out = client.post(reverse("webtools:logout"), {"csrfmiddlewaretoken": client.cookies["csrftoken"].value})
    assert out.status_code == 200 and b"You have signed out." in out.content
    assert reverse("webtools:login").encode() in out.content
    assert client.get(reverse("webtools:settings")).status_code == 302
