"""Block pages: a bot wall's answer is an error naming the wall, never the page's text.

The walls' pages here are written from the marks their vendors' pages carry (Cloudflare documents
``cf-mitigated: challenge``; the bodies hold the script and element names the walls use). The kept-out
check runs the detector over the readability corpus of real pages, none of which is a wall.
"""
from __future__ import annotations

import json

import pytest

from tests import test_web_fetch
from tests.corpora import READABILITY_PAGES, needs
from tests.servers import LoopbackServer, Reply
from tests.test_web_fetch import ARTICLE, call, html, make_tool
from webtools.net import HttpClient
from webtools.plugins.web_fetch import blocks
from webtools.runtime import ToolError
from webtools.testing import tool_context_for_test

client = test_web_fetch.client
server = test_web_fetch.server

CLOUDFLARE_CHALLENGE = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"></head><body><div class="main-wrapper" role="main">
<div class="main-content"><noscript><div class="h2"><span id="challenge-error-text">Enable JavaScript and
cookies to continue</span></div></noscript></div></div><script>(function(){window._cf_chl_opt={cvId: '3',
cZone: 'example.com', cType: 'managed'};var a = document.createElement('script');
a.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f1c';})();</script></body></html>"""

CLOUDFLARE_BLOCK = """<!DOCTYPE html><html><head><title>Attention Required! | Cloudflare</title></head><body>
<div id="cf-wrapper"><div id="cf-error-details" class="cf-error-details-wrapper"><h1>Sorry, you have been
blocked</h1><h2>You are unable to access example.com</h2></div></div></body></html>"""

AKAMAI = """<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY><H1>Access Denied</H1>
You don't have permission to access "http&#58;&#47;&#47;www&#46;example&#46;com&#47;" on this server.<P>
Reference&#32;&#35;18&#46;2f1c1002&#46;1700000000&#46;1a2b3c4d<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18
</BODY></HTML>""".replace("errors&#46;edgesuite&#46;net", "errors.edgesuite.net")

DATADOME = """<html><head><title>example.com</title></head><body><script data-cfasync="false">
var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'0C0A','t':'fe','host':'geo.captcha-delivery.com'}</script>
<script data-cfasync="false" src="https://ct.captcha-delivery.com/c.js"></script></body></html>"""

PERIMETERX = """<!DOCTYPE html><html lang="en"><head><title>Access to this page has been denied</title>
<script>window._pxAppId = 'PXabcdef12'; window._pxJsClientSrc = '/abcdef12/init.js';
window._pxHostUrl = '/abcdef12/xhr';</script></head><body><div class="px-captcha-container">
<p>Press &amp; Hold to confirm you are a human (and not a bot).</p><div id="px-captcha"></div></div>
<script src="https://captcha.px-cdn.net/PXabcdef12/captcha.js?a=c&m=0"></script></body></html>"""

RECAPTCHA = """<html><head><title>Security check</title>
<script src="https://www.google.com/recaptcha/api.js" async defer></script></head><body>
<h1>One more step</h1><p>Please verify you are a human to continue.</p>
<form method="post"><div class="g-recaptcha" data-sitekey="6Lc_aCMTAAAAABx7u2W0WPXnVbI_v6ZdbM6rYf16"></div>
</form></body></html>"""


# -- naming the wall -------------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "headers", "body", "wall"), [
    (403, {"cf-mitigated": "challenge", "Server": "cloudflare"}, CLOUDFLARE_CHALLENGE, "Cloudflare challenge"),
    (503, {"Server": "cloudflare"}, CLOUDFLARE_CHALLENGE, "Cloudflare challenge"),
    (403, {"Server": "cloudflare"}, CLOUDFLARE_BLOCK, "Cloudflare block"),
    (403, {"Server": "AkamaiGHost"}, AKAMAI, "Akamai"),
    (403, {}, AKAMAI, "Akamai"),
    (403, {"X-DataDome": "protected", "X-DataDome-CID": "AHrlqAAAAAMA"}, DATADOME, "DataDome"),
    (200, {}, DATADOME, "DataDome"),
    (403, {}, PERIMETERX, "PerimeterX"),
    (429, {}, RECAPTCHA, "CAPTCHA"),
])
def test_each_wall_is_named_by_its_marks(status, headers, body, wall):
    assert blocks.blocked_by(status, headers, body.encode()) == wall


def test_a_challenge_header_names_cloudflare_whatever_the_body():
    assert blocks.blocked_by(200, {"cf-mitigated": "challenge"}, b"") == "Cloudflare challenge"


def test_a_sites_own_error_pages_are_not_walls_whoever_serves_them():
    # A 404 or a 500 from behind Cloudflare or Akamai is the site's own answer.
    assert blocks.blocked_by(404, {"Server": "cloudflare"}, CLOUDFLARE_BLOCK.encode()) is None
    assert blocks.blocked_by(500, {"Server": "AkamaiGHost"}, AKAMAI.encode()) is None
    assert blocks.blocked_by(403, {"Server": "nginx"}, b"<h1>403 Forbidden</h1>") is None


def test_real_pages_carrying_a_walls_ordinary_scripts_are_not_walls():
    # Sites behind PerimeterX, DataDome and Cloudflare load their scripts on every real page.
    page = (ARTICLE.replace("</head>", "<script>window._pxAppId='PXabcdef12';</script>"
                            "<script src='https://js.datadome.co/tags.js'></script>"
                            "<script src='/cdn-cgi/scripts/5c5dd728/cloudflare-static/email-decode.min.js'>"
                            "</script></head>"))
    assert blocks.blocked_by(200, {"Server": "cloudflare"}, page.encode(), 2000) is None


def test_a_sign_in_form_with_a_captcha_on_a_page_with_text_is_not_a_wall():
    page = RECAPTCHA.replace("<h1>One more step</h1>", "<article>" + "Words of the page. " * 200 + "</article>")
    assert blocks.blocked_by(200, {}, page.encode(), 3800) is None
    assert blocks.blocked_by(200, {}, RECAPTCHA.encode(), 80) == "CAPTCHA"


@needs(READABILITY_PAGES)
def test_no_page_of_the_readability_corpus_is_taken_for_a_wall():
    pages = sorted(READABILITY_PAGES.glob("*/source.html"))
    assert len(pages) > 100
    walled = [path.parent.name for path in pages
              if blocks.blocked_by(200, {}, path.read_bytes(), 500) is not None]
    assert walled == []


# -- through the tool --------------------------------------------------------------------------------


def test_a_cloudflare_challenge_is_an_error_naming_it(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/", Reply(403, {"Content-Type": "text/html", "cf-mitigated": "challenge", "Server": "cloudflare"},
                            CLOUDFLARE_CHALLENGE))
    with pytest.raises(ToolError) as err:
        call(client, server.url("/"))
    assert str(err.value) == f"{server.url('/')} could not be read: the site blocked automated access " \
                             "(Cloudflare challenge)."
    assert server.hits("/") == 1


def test_a_captcha_answered_with_200_is_an_error_not_its_text(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/", html(RECAPTCHA))
    with pytest.raises(ToolError, match=r"blocked automated access \(CAPTCHA\)"):
        call(client, server.url("/"))


def test_a_refusal_that_is_no_wall_keeps_its_plain_message(client, server):
    server.route("/robots.txt", Reply(404, {}, ""))
    server.route("/", Reply(403, {"Content-Type": "text/html"}, "<h1>Forbidden</h1>"))
    with pytest.raises(ToolError, match=r"failed \(HTTP 403\)"):
        call(client, server.url("/"))


@pytest.fixture
def plain():
    with HttpClient(policy=None) as c:
        yield c


@pytest.fixture
def jina(settings):
    """A stand-in for the Jina Reader rendering service (the operator's endpoint, plain client)."""
    with LoopbackServer() as s:
        settings.WEBTOOLS = {**settings.WEBTOOLS, "RENDER_SERVICE_URLS": {"jina": s.url("/jina")}}
        yield s


def render_call(client, plain, url):
    ctx, _ = tool_context_for_test(fetch=client, http=plain)
    tool = make_tool(render_javascript="auto", render_with="jina", respect_robots_txt=False,
                     respect_content_signals=False)
    return tool.handler({"url": url}, ctx)


def test_with_auto_rendering_a_walled_page_is_rendered_once_and_its_text_returned(client, plain, server, jina):
    server.route("/", Reply(403, {"cf-mitigated": "challenge", "Content-Type": "text/html"}, CLOUDFLARE_CHALLENGE))
    jina.route("*", Reply(200, {"Content-Type": "application/json"}, json.dumps(
        {"data": {"url": server.url("/"), "title": "Tides", "content": "The Moon pulls on the oceans."}})))
    out = render_call(client, plain, server.url("/"))
    assert out["content"] == "The Moon pulls on the oceans." and out["rendered"] is True
    assert len(jina.requests) == 1 and server.hits("/") == 1


def test_with_auto_rendering_a_render_that_meets_the_wall_again_names_it(client, plain, server, jina):
    server.route("/", Reply(403, {"cf-mitigated": "challenge", "Content-Type": "text/html"}, CLOUDFLARE_CHALLENGE))
    jina.route("*", Reply(200, {"Content-Type": "application/json"}, json.dumps(
        {"data": {"url": server.url("/"), "title": "Just a moment...", "content": "Verifying you are human."}})))
    with pytest.raises(ToolError, match=r"blocked automated access \(Cloudflare challenge\)"):
        render_call(client, plain, server.url("/"))
    assert len(jina.requests) == 1
