"""Block pages: the answer a bot wall gives instead of the page (a challenge, a block notice, a CAPTCHA).

A block page read as the page would give the model "Just a moment..." or a paragraph about cookies as the
site's content. ``blocked_by`` names the wall from what its answers carry, so the tool can say that the
site refused automated access instead:

- Cloudflare: the ``cf-mitigated: challenge`` header (Cloudflare's documented mark of a challenge), or a
  refusal whose body holds its challenge platform (``/cdn-cgi/challenge-platform/``, ``_cf_chl_opt``) or
  its block page ("Attention Required! | Cloudflare", ``cf-error-details``).
- Akamai: a refusal from ``AkamaiGHost`` or naming ``errors.edgesuite.net`` (its "Access Denied" page).
- DataDome: a refusal carrying the ``x-datadome`` header, or any answer that loads its CAPTCHA from
  ``captcha-delivery.com``.
- PerimeterX (HUMAN): the ``px-captcha`` block element or its CAPTCHA script (``captcha.px-cdn.net``,
  ``_pxCaptcha``).
- A CAPTCHA: a refusal (403, 429, 503) showing a reCAPTCHA, hCaptcha or Turnstile widget; or a page whose
  text is short, that shows one and asks the reader to prove they are human.

A successful answer counts only by marks that appear on challenge pages alone: sites behind these walls
also load the walls' ordinary scripts (``_pxAppId``, DataDome's tag, Cloudflare's ``/cdn-cgi/`` paths) on
their real pages, and a sign-in form may hold a CAPTCHA.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

#: How much of a body is looked at: block pages are small, and their marks are near the top.
HEAD_BYTES = 64 * 1024
#: A page with more text than this is a page, whatever widget it shows.
SHORT_TEXT = 1500
REFUSALS = frozenset({401, 403, 405, 429, 503})

_CLOUDFLARE_CHALLENGE = re.compile(
    rb"/cdn-cgi/challenge-platform/|_cf_chl_opt|<title>\s*just a moment\.\.\.\s*</title>", re.I)
_CLOUDFLARE_BLOCK = re.compile(rb"attention required! \| cloudflare|cf-error-details|id=\"cf-wrapper\"", re.I)
_AKAMAI = re.compile(rb"errors\.edgesuite\.net|<title>\s*access denied\s*</title>", re.I)
_DATADOME = re.compile(rb"captcha-delivery\.com", re.I)
_PERIMETERX = re.compile(rb"id=[\"']px-captcha[\"']|captcha\.px-cdn\.net|_pxCaptcha", re.I)
_CAPTCHA_WIDGET = re.compile(
    rb"class=[\"'][^\"']*\b(?:g-recaptcha|h-captcha|cf-turnstile)\b|google\.com/recaptcha/|hcaptcha\.com/1/api"
    rb"|challenges\.cloudflare\.com/turnstile", re.I)
_PROVE_HUMAN = re.compile(
    rb"are you a (?:robot|human)|not a robot|verify (?:that )?you(?:'|&#39;|\xe2\x80\x99)?(?:re| are) (?:a )?human"
    rb"|unusual traffic|security check|captcha", re.I)


def blocked_by(status: int, headers: Mapping[str, str], body: bytes, text_length: int | None = None) -> str | None:
    """The wall that answered instead of the page, as the model is told of it ("Cloudflare challenge"),
    or None when the answer looks like the site's own.

    ``body`` is the start of the answer's body (``HEAD_BYTES`` are enough); ``text_length`` is the
    length of the text read from a successful page, when it was read."""
    head = body[:HEAD_BYTES]
    headers = {name.lower(): value for name, value in headers.items()}
    refused = status in REFUSALS  # a 404 or a 500 is the site's own answer, whoever serves it
    if (headers.get("cf-mitigated") or "").strip().lower() == "challenge":
        return "Cloudflare challenge"
    if _CLOUDFLARE_CHALLENGE.search(head) and (refused or b"_cf_chl_opt" in head):
        return "Cloudflare challenge"
    server = (headers.get("server") or "").lower()
    if refused and (_CLOUDFLARE_BLOCK.search(head) and "cloudflare" in server):
        return "Cloudflare block"
    if refused and ("akamaighost" in server or _AKAMAI.search(head) and b"edgesuite" in head):
        return "Akamai"
    if _DATADOME.search(head) or refused and any(name.startswith("x-datadome") for name in headers):
        return "DataDome"
    if _PERIMETERX.search(head):
        return "PerimeterX"
    if _CAPTCHA_WIDGET.search(head):
        if refused:
            return "CAPTCHA"
        if text_length is not None and text_length < SHORT_TEXT and _PROVE_HUMAN.search(head):
            return "CAPTCHA"
    return None


def message(url: str, wall: str) -> str:
    """What the model is told: the site refused, and by what, so it does not retry or quote the wall."""
    return f"{url} could not be read: the site blocked automated access ({wall})."


def is_challenge_title(title: str | None) -> bool:
    """Whether a page title is a wall's ("Just a moment...", "Attention Required! | Cloudflare"), as a
    rendering service reports the page it met."""
    words = " ".join((title or "").lower().split())
    return words.startswith(("just a moment", "attention required", "access denied", "verify you are human"))
