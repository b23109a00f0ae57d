"""Programs some tests need beside Python and make, such as ``redis-server``.

Where one is missing its tests skip, saying what to install, so ``make test`` passes on a fresh machine
with only Python 3.11 and make; CI installs them (``.ci/run``) and sets ``WEBTOOLS_REQUIRE_SERVICES``,
which makes a missing one an error, as ``WEBTOOLS_REQUIRE_BROWSER`` does for Chromium (``browser.py``).
"""
from __future__ import annotations

import os
import shutil

import pytest

REQUIRE = "WEBTOOLS_REQUIRE_SERVICES"


def program(name: str, install: str) -> str:
    """The path of the program ``name``; skips the test (fails it when ``REQUIRE`` is set) without it.
    ``install`` says how to get it, e.g. ``apt-get install redis-server``."""
    path = shutil.which(name)
    if path:
        return path
    if os.environ.get(REQUIRE):
        pytest.fail(f"{REQUIRE} is set but {name} is missing ({install}).")
    pytest.skip(f"{name} is not installed ({install})")
