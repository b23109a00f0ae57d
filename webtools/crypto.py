"""Secrets at rest: Fernet tokens under ``WEBTOOLS["ENCRYPTION_KEYS"]``.

The first key encrypts; every key decrypts (``MultiFernet``), so an operator rotates by putting a new
key first, running ``manage.py webtools rotate-keys``, then dropping the old key.

Part of the base: imports only ``conf`` and ``exceptions``.
"""
from __future__ import annotations

import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from .conf import get_setting
from .exceptions import WebtoolsConfigurationError

KEYS_HINT = (
    'Set WEBTOOLS["ENCRYPTION_KEYS"] (env WEBTOOLS_ENCRYPTION_KEYS) to one or more Fernet keys, comma separated; '
    "make one with: python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'"
)


def configured_keys() -> list[str]:
    keys = get_setting("ENCRYPTION_KEYS")
    if isinstance(keys, str):
        keys = [k for k in keys.split(",")]
    return [k.strip() for k in keys or [] if k and k.strip()]


def _fernet() -> MultiFernet:
    keys = configured_keys()
    if not keys:
        raise WebtoolsConfigurationError("No encryption key is set. " + KEYS_HINT)
    try:
        return MultiFernet([Fernet(key) for key in keys])
    except (ValueError, TypeError) as err:
        raise WebtoolsConfigurationError("An encryption key is not a valid Fernet key. " + KEYS_HINT) from err


def check_keys() -> str | None:
    """None when the keys are usable, else what is wrong (for system checks)."""
    try:
        _fernet()
    except WebtoolsConfigurationError as err:
        return str(err)
    return None


def encrypt_json(value: dict[str, Any]) -> str:
    """A Fernet token holding ``value`` as JSON; empty string for an empty dict."""
    if not value:
        return ""
    return _fernet().encrypt(json.dumps(value).encode()).decode()


def decrypt_json(token: str) -> dict[str, Any]:
    """The dict inside a token from ``encrypt_json``; raises ``WebtoolsConfigurationError`` when no
    configured key opens it (the key that wrote it was removed)."""
    if not token:
        return {}
    try:
        return json.loads(_fernet().decrypt(token.encode()))
    except InvalidToken as err:
        raise WebtoolsConfigurationError(
            "A stored secret cannot be decrypted with the configured keys: the key that encrypted it "
            "was removed. Put it back in WEBTOOLS_ENCRYPTION_KEYS, or clear and re-enter the secret."
        ) from err


def rotate(token: str) -> str:
    """The same secret, encrypted with the first key."""
    if not token:
        return ""
    try:
        return _fernet().rotate(token.encode()).decode()
    except InvalidToken as err:
        raise WebtoolsConfigurationError("A stored secret cannot be decrypted with the configured keys.") from err
