"""Web Bot Auth: every request of a fetch signed with the operator's Ed25519 key (RFC 9421).

Signatures are made by the http-message-signatures library and checked here without it: the signature
base is rebuilt from RFC 9421 section 2.5 and verified with cryptography's Ed25519, and the key id is
checked against RFC 8037's own thumbprint example.
"""
from __future__ import annotations

import base64
import re

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from tests import test_web_fetch
from tests.servers import Reply, redirect
from tests.test_web_fetch import ARTICLE, html, make_tool
from webtools.plugins.web_fetch import WebFetchOptionsForm, WebFetchPlugin, botauth
from webtools.plugins.web_fetch.tool import FetchOptions
from webtools.testing import tool_context_for_test

client = test_web_fetch.client
server = test_web_fetch.server

#: RFC 8037 appendix A.1 and A.3: the example Ed25519 key and its JWK thumbprint.
RFC_D = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
RFC_X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
RFC_THUMBPRINT = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
AGENT = "https://bot.example.org"


def test_the_key_id_is_the_jwk_thumbprint_of_rfc_8037():
    key = botauth.read_key(RFC_D)
    assert botauth.public_jwk(key) == {"kty": "OKP", "crv": "Ed25519", "x": RFC_X}
    assert botauth.thumbprint(key) == RFC_THUMBPRINT
    assert f'"kid": "{RFC_THUMBPRINT}"' in botauth.key_directory(RFC_D)


@pytest.mark.parametrize("text", ["", "not base64 at all!", RFC_D[:-4], RFC_D + "AAAA"])
def test_a_key_that_is_not_a_32_byte_seed_is_refused_without_being_repeated(text):
    with pytest.raises(ValueError) as err:
        botauth.read_key(text)
    assert "Web Bot Auth key" in str(err.value) and (not text or text not in str(err.value))


def _verify(headers, authority: str) -> dict[str, str]:
    """Check a request's signature as a site would (RFC 9421 2.5 and 3.2); its parameters."""
    match = re.fullmatch(r'sig1=(\("@authority" "signature-agent"\)(.*))', headers["Signature-Input"])
    assert match, headers["Signature-Input"]
    params = dict(re.findall(r';(\w+)=("[^"]*"|\d+)', match.group(2)))
    base = (f'"@authority": {authority}\n"signature-agent": {headers["Signature-Agent"]}\n'
            f'"@signature-params": {match.group(1)}')
    signature = re.fullmatch(r"sig1=:([A-Za-z0-9+/=]+):", headers["Signature"]).group(1)
    public = Ed25519PublicKey.from_public_bytes(base64.urlsafe_b64decode(RFC_X + "="))
    public.verify(base64.b64decode(signature), base.encode())  # raises InvalidSignature
    return params


def test_every_hop_of_a_fetch_is_signed_for_its_own_authority(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/start", redirect(f"http://docs.tides.test:{server.port}/page"))
    server.route("/page", html(ARTICLE))
    tool = make_tool(bot_auth_key=RFC_D, bot_auth_agent=AGENT)
    ctx, _ = tool_context_for_test(fetch=client)
    tool.handler({"url": f"http://tides.test:{server.port}/start"}, ctx)
    signed = [(r.path, r.headers) for r in server.requests]
    assert [path for path, _ in signed] == ["/robots.txt", "/start", "/robots.txt", "/page"]
    for (path, headers), host in zip(signed, ["tides.test", "tides.test", "docs.tides.test", "docs.tides.test"]):
        assert headers["Host"] == f"{host}:{server.port}"
        assert headers["Signature-Agent"] == f'"{AGENT}"'
        params = _verify(headers, f"{host}:{server.port}")
        assert params["keyid"] == f'"{RFC_THUMBPRINT}"' and params["alg"] == '"ed25519"'
        assert params["tag"] == '"web-bot-auth"' and int(params["expires"]) - int(params["created"]) == 60
    nonces = {dict(re.findall(r';(\w+)=("[^"]*")', h["Signature-Input"]))["nonce"] for _, h in signed}
    assert len(nonces) == 4


def test_without_a_key_nothing_is_signed(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/page", html(ARTICLE))
    ctx, _ = tool_context_for_test(fetch=client)
    make_tool().handler({"url": server.url("/page")}, ctx)
    assert not any("Signature" in r.headers or "Signature-Agent" in r.headers for r in server.requests)


@pytest.mark.parametrize(("values", "field", "says"), [
    ({"bot_auth_key": RFC_D[:-1] + "!", "bot_auth_agent": AGENT}, "bot_auth_key", "base64url"),
    ({"bot_auth_key": RFC_D}, "bot_auth_agent", "key directory"),
    ({"bot_auth_key": RFC_D, "bot_auth_agent": "http://bot.example.org"}, "bot_auth_agent", "https"),
])
def test_the_options_refuse_a_key_that_cannot_sign(values, field, says):
    form = WebFetchOptionsForm(data={**WebFetchPlugin().default_options(), **values})
    assert not form.is_valid()
    assert says in " ".join(form.errors[field]) and RFC_D not in str(form.errors)


def test_the_key_never_shows_in_the_options_repr():
    assert RFC_D not in repr(FetchOptions(bot_auth_key=RFC_D, bot_auth_agent=AGENT))
