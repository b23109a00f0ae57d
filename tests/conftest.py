"""Shared fixtures."""
from __future__ import annotations

import os

import pytest
from django.apps import apps
from hypothesis import settings

# Property tests search at random on a developer's machine, so each run may find a new case. CI
# (``.ci/run`` sets HYPOTHESIS_PROFILE=ci) runs the same examples every time: a red build then means
# the change broke something, never that the search happened upon an old, unrelated case today.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def _clock_from_the_start_of_a_minute(monkeypatch):
    """The per-minute limits count in fixed clock minutes, so a test whose calls straddle a minute
    boundary would see its count start again and fail one time in a few dozen. The stores' clock
    (``limits.wall_clock``) runs at the real pace, set back to half a second into the current minute."""
    import time

    from webtools.runtime import limits

    shift = time.time() % 60 - 0.5
    monkeypatch.setattr(limits, "wall_clock", lambda: time.time() - shift)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache: the limits' windows and the shared cache live there, and
    with Redis (CI's second pass) they would outlive the test."""
    from django.core.cache import caches

    for cache in caches.all():
        cache.clear()
    yield


@pytest.fixture(scope="module")
def browser():
    """A real headless Chromium, shared by a module's tests (see ``tests/browser.py``)."""
    from tests.browser import chromium

    yield from chromium()


@pytest.fixture
def use_plugins():
    """Replace the installed plugins for one test: ``use_plugins(DemoPlugin(), ...)``."""
    config = apps.get_app_config("webtools")
    saved = config.plugins

    def install(*plugins):
        config.plugins = {plugin.id: plugin for plugin in plugins}
        return config.plugins

    yield install
    config.plugins = saved


@pytest.fixture
def demo_plugins(use_plugins):
    from tests.plugins import DemoPlugin, QuietPlugin

    return use_plugins(DemoPlugin(), QuietPlugin())
