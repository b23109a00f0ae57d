"""Web Bot Auth: requests signed with the operator's Ed25519 key, so sites can tell this bot from others.

The IETF Web Bot Auth drafts (draft-meunier-web-bot-auth-architecture): each request carries an HTTP
Message Signature (RFC 9421, made by the ``http-message-signatures`` library) over ``@authority`` and the
``Signature-Agent`` header, which names where the operator publishes the public key (its key directory,
``/.well-known/http-message-signatures-directory``, a JWKS). The signature's parameters are ``created``,
``expires`` (a minute later), a random ``nonce``, ``keyid`` (the key's JWK SHA-256 thumbprint, RFC 7638),
``alg="ed25519"`` and ``tag="web-bot-auth"``. Each hop of a redirect is signed for its own authority.

The key is kept as the 32-byte Ed25519 private key in base64url (a JWK's ``d``), write-only in the web
fetch options; ``key_directory`` gives the JSON to publish.
"""
from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import json
import secrets
from typing import TYPE_CHECKING

import logging

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from http_message_signatures import HTTPMessageSigner, HTTPSignatureKeyResolver, algorithms

if TYPE_CHECKING:
    from webtools.net import URL

logger = logging.getLogger("webtools.web_fetch")

TAG = "web-bot-auth"
LABEL = "sig1"
LIFETIME = datetime.timedelta(seconds=60)
DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"
DIRECTORY_TYPE = "application/http-message-signatures-directory+json"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def read_key(text: str) -> Ed25519PrivateKey:
    """The private key of a base64url (or base64) 32-byte seed; ``ValueError`` saying what is wrong,
    never repeating the key."""
    text = (text or "").strip()
    try:
        seed = base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as err:
        raise ValueError("The Web Bot Auth key is not base64url text.") from err
    if len(seed) != 32:
        raise ValueError("The Web Bot Auth key must be an Ed25519 private key: 32 bytes, 43 characters of "
                         "base64url (the d of its JWK).")
    return Ed25519PrivateKey.from_private_bytes(seed)


def public_jwk(key: Ed25519PrivateKey) -> dict[str, str]:
    """The public key as a JWK (RFC 8037): what the key directory lists."""
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": _b64url(raw)}


def thumbprint(key: Ed25519PrivateKey) -> str:
    """The JWK SHA-256 thumbprint (RFC 7638): the required members in order, no spaces."""
    jwk = public_jwk(key)
    canonical = json.dumps({name: jwk[name] for name in ("crv", "kty", "x")}, separators=(",", ":"))
    return _b64url(hashlib.sha256(canonical.encode("ascii")).digest())


def key_directory(text: str) -> str:
    """The JSON to serve at ``DIRECTORY_PATH`` (as ``DIRECTORY_TYPE``) on the Signature-Agent's host."""
    key = read_key(text)
    return json.dumps({"keys": [{**public_jwk(key), "kid": thumbprint(key)}]}, indent=2)


def signer(key_text: str, agent: str):
    """``BotAuth(key, agent).headers`` for the client's ``sign``, or None when either is not set (or the
    key cannot sign: the form validates it, an old saved key may not)."""
    if not key_text or not agent:
        return None
    try:
        return BotAuth(key_text, agent).headers
    except ValueError as err:
        logger.warning("web_fetch does not sign its requests: %s", err)
        return None


class _OneKey(HTTPSignatureKeyResolver):
    def __init__(self, key: Ed25519PrivateKey):
        self._key = key

    def resolve_private_key(self, key_id: str) -> Ed25519PrivateKey:
        return self._key

    def resolve_public_key(self, key_id: str):
        return self._key.public_key()


class BotAuth:
    """Signs requests for one key and one Signature-Agent (an https URL of the key directory's host)."""

    def __init__(self, key_text: str, agent: str):
        self._key = read_key(key_text)
        self.key_id = thumbprint(self._key)
        self.agent = f'"{agent}"'  # an RFC 8941 string: the drafts' form of the header
        self._signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=_OneKey(self._key))

    def __repr__(self) -> str:
        return f"<BotAuth keyid={self.key_id}>"

    def headers(self, url: URL) -> dict[str, str]:
        """``Signature-Agent``, ``Signature-Input`` and ``Signature`` for a request to ``url``."""
        message = requests.Request("GET", str(url), headers={"Signature-Agent": self.agent}).prepare()
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        self._signer.sign(
            message, key_id=self.key_id, created=now, expires=now + LIFETIME, nonce=secrets.token_urlsafe(32),
            label=LABEL, tag=TAG, covered_component_ids=("@authority", "signature-agent"),
        )
        return {name: message.headers[name] for name in ("Signature-Agent", "Signature-Input", "Signature")}
